use cachecopy::Mode;
use std::time::Instant;
fn main() {
    for size in [64usize << 20, 256 << 20] {
        let mut bufs: Vec<Vec<u8>> = (0..4).map(|i| vec![i as u8 + 1; size]).collect();
        let mut r = vec![vec![]; 2];
        for round in 0..9 {
            for k in 0..2 {
                let v = (round + k) % 2;
                let (a, b) = bufs.split_at_mut(2);
                let (src, dst) = if round % 2 == 0 {
                    (&a[0], &mut b[0])
                } else {
                    (&a[1], &mut b[1])
                };
                let t = Instant::now();
                if v == 0 {
                    dst.copy_from_slice(std::hint::black_box(src))
                } else {
                    cachecopy::copy(dst, src, Mode::NonTemporal)
                }
                r[v].push(t.elapsed().as_nanos() as f64);
                // evict: touch the other pair
                let (x, y) = if round % 2 == 0 {
                    (&mut a[1], &b[1])
                } else {
                    (&mut a[0], &b[0])
                };
                std::hint::black_box(x[0] ^ y[size - 1]);
            }
        }
        let mut q: Vec<f64> = r[0].iter().zip(&r[1]).map(|(g, n)| g / n).collect();
        q.sort_by(f64::total_cmp);
        println!(
            "{} MiB: NT / glibc speed {:.3} (min {:.3} max {:.3})",
            size >> 20,
            q[4],
            q[0],
            q[8]
        );
    }
}
