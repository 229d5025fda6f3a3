use std::hint::black_box;
use std::time::Instant;
fn main() {
    let src = vec![1u8; 4096];
    let mut dst = vec![0u8; 4096 + 64];
    for &len in &[8usize, 16, 33, 64, 100, 256, 1024, 4096] {
        let mut best = [f64::MAX; 2];
        for _round in 0..15 {
            for which in 0..2 {
                let n = 200_000;
                let t = Instant::now();
                for i in 0..n {
                    let o = i & 31;
                    let d = black_box(&mut dst[o..o + len]);
                    if which == 0 {
                        d.copy_from_slice(black_box(&src[..len]))
                    } else {
                        cachecopy::copy(d, black_box(&src[..len]), cachecopy::Mode::Temporal)
                    }
                }
                let e = t.elapsed().as_secs_f64() / n as f64 * 1e9;
                best[which] = best[which].min(e);
            }
        }
        println!(
            "len {len:5}: memcpy {:.2} ns, ours {:.2} ns, ours/memcpy speed {:.2}x",
            best[0],
            best[1],
            best[0] / best[1]
        );
    }
}
