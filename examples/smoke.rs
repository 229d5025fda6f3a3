fn main() {
    let c = cachecopy::cpu();
    println!("{c:#?}\n{} {}", c.vendor(), c.brand());
    println!(
        "supported {:?} active {:?} nt {}",
        cachecopy::Backend::supported(),
        cachecopy::Backend::active(),
        cachecopy::nt_threshold()
    );
    for &b in cachecopy::Backend::supported() {
        for mode in [
            cachecopy::Mode::Temporal,
            cachecopy::Mode::NonTemporal,
            cachecopy::Mode::FlushCache,
            cachecopy::Mode::Auto,
        ] {
            for len in 0..5000usize {
                for (so, d_o) in [(0usize, 0usize), (1, 3), (7, 63), (33, 0)] {
                    let src: Vec<u8> = (0..len + so).map(|i| (i * 7 + 3) as u8).collect();
                    let mut dst = vec![0xEEu8; len + d_o + 64];
                    cachecopy::copy_with(b, &mut dst[d_o..d_o + len], &src[so..so + len], mode)
                        .unwrap();
                    assert_eq!(
                        &dst[d_o..d_o + len],
                        &src[so..so + len],
                        "{b:?} {mode:?} {len} {so} {d_o}"
                    );
                    assert!(dst[..d_o]
                        .iter()
                        .chain(&dst[d_o + len..])
                        .all(|&x| x == 0xEE));
                    cachecopy::fill_with(b, &mut dst[d_o..d_o + len], 0x5A, mode).unwrap();
                    assert!(dst[d_o..d_o + len].iter().all(|&x| x == 0x5A));
                    assert!(dst[..d_o]
                        .iter()
                        .chain(&dst[d_o + len..])
                        .all(|&x| x == 0xEE));
                }
            }
        }
    }
    println!("ok");
}
