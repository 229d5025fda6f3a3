use cachecopy::Mode;
use cachecopy_arena::{Arena, Buf};
use std::time::Instant;
fn main() {
    let sizes = [4096usize, 16 << 10, 256 << 10, 4 << 20];
    let src = Buf::new(8 << 20, 3);
    let mut arena = Arena::with_len(512 << 20);
    for &size in &sizes {
        let mut r = vec![vec![]; 3];
        let runs = ((32 << 20) / size).max(1);
        for round in 0..15 {
            for k in 0..3 {
                let v = (round + k) % 3;

                let t = Instant::now();
                for _ in 0..runs {
                    let d = arena.cold(size);
                    if v == 0 {
                        d.copy_from_slice(std::hint::black_box(&src.as_slice()[..size]))
                    } else if v == 1 {
                        cachecopy::copy(d, &src.as_slice()[..size], Mode::Temporal)
                    } else {
                        unsafe {
                            std::arch::asm!("rep movsb", inout("rdi") d.as_mut_ptr() => _, inout("rsi") src.as_slice().as_ptr() => _, inout("rcx") size => _, options(nostack, preserves_flags));
                        }
                    }
                }
                r[v].push(t.elapsed().as_nanos() as f64);
            }
        }
        let ratio = |a: &Vec<f64>, b: &Vec<f64>| {
            let mut q: Vec<f64> = a.iter().zip(b).map(|(x, y)| y / x).collect();
            q.sort_by(f64::total_cmp);
            q[q.len() / 2]
        };
        println!(
            "{size:>8}: cachecopy/glibc {:.3}  bare rep movsb/glibc {:.3}",
            ratio(&r[1], &r[0]),
            ratio(&r[2], &r[0])
        );
    }
}
