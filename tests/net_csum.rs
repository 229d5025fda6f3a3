//! The Internet checksum and the fused checksum-and-copy against a byte-at-a-time reference, on
//! every backend this CPU runs, in every mode.

use cachecopy::net::{
    csum_add, csum_and_copy, csum_and_copy_with, csum_block_add, csum_fold, csum_partial,
    csum_partial_with, csum_tcpudp_magic, csum_tcpudp_nofold,
};
use cachecopy::tune::Backend;
use cachecopy::Mode;

#[path = "../src/testutil.rs"]
#[allow(dead_code)]
mod testutil;
use testutil::all_bytes;

/// RFC 1071 the plain way (`testutil::ones_sum`): native-endian 16-bit words, an odd last byte
/// padded with zero, folded with end-around carry to 1..=0xffff (0 only for all-zero data).
fn reference(data: &[u8]) -> u32 {
    testutil::ones_sum(data)
}

/// The lengths of the full tables: every one to 4096 natively; under Miri (which interprets
/// every byte) every one to 80 (each edge and register-loop shape of the 8- and 16-byte
/// backends Miri runs) and both sides of each power of two from 128 to 1024, of the 1 KiB
/// streaming cut-over and of two streaming lines past it (2048 and 4096, more of the same
/// loop, are left to the native run).
fn table_lengths() -> Vec<usize> {
    if cfg!(miri) {
        let mut v: Vec<usize> = (0..=80).collect();
        for b in [128usize, 256, 512, 1024, 1024 + 64, 1024 + 128] {
            v.extend([b - 1, b, b + 1]);
        }
        v.retain(|&l| l <= 4096);
        v
    } else {
        (0..=4096).collect()
    }
}

/// Repeats every 4999 bytes (an odd period, longer than every table buffer, so a repeat also
/// shifts the word parity); the repeats are copies (Miri interprets a loop per byte).
fn pattern(len: usize, seed: usize) -> Vec<u8> {
    testutil::periodic(len, 4999, |i| {
        (i.wrapping_mul(131).wrapping_add(seed * 7 + (i >> 8)) ^ (i >> 3)) as u8
    })
}

#[test]
fn rfc1071_worked_example() {
    // §3: 00 01 f2 03 f4 f5 f6 f7 -> one's-complement sum ddf2 (in big-endian words).
    let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
    for &b in Backend::supported() {
        let s = csum_partial_with(b, &data, 0).unwrap();
        assert_eq!((s as u16).to_ne_bytes(), [0xdd, 0xf2], "{b}");
        assert_eq!(csum_fold(s).to_ne_bytes(), [0x22, 0x0d], "{b}");
    }
}

#[test]
fn ipv4_header_verifies_to_zero() {
    // A captured header: 192.168.0.1 -> 192.168.0.199, UDP, checksum b861.
    let mut hdr = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];
    assert_eq!(csum_fold(csum_partial(&hdr, 0)), 0);
    hdr[10..12].copy_from_slice(&[0, 0]);
    assert_eq!(csum_fold(csum_partial(&hdr, 0)).to_ne_bytes(), [0xb8, 0x61]);
    hdr[15] ^= 1;
    hdr[10..12].copy_from_slice(&[0xb8, 0x61]);
    assert_ne!(csum_fold(csum_partial(&hdr, 0)), 0);
}

#[test]
fn udp_with_pseudo_header() {
    // 10.0.0.1:4660 -> 10.0.0.2:22136, payload "abcd", checksum field zero; the checksum was
    // worked by hand: pseudo 0a00+0001+0a00+0002+0011+000c, header 1234+5678+000c, data
    // 6162+6364: 1420 + 68b8 + c4c6 = 1_419e -> 419f, complement be60.
    let mut udp = [
        0x12, 0x34, 0x56, 0x78, 0x00, 0x0c, 0x00, 0x00, b'a', b'b', b'c', b'd',
    ];
    let (s, d) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let check = csum_tcpudp_magic(s, d, 12, 17, csum_partial(&udp, 0));
    assert_eq!(check.to_ne_bytes(), [0xbe, 0x60]);
    udp[6..8].copy_from_slice(&check.to_ne_bytes());
    assert_eq!(csum_tcpudp_magic(s, d, 12, 17, csum_partial(&udp, 0)), 0);
    // nofold keeps the pseudo-header sum composable.
    let pseudo = csum_tcpudp_nofold(s, d, 12, 17, 0);
    assert_eq!(csum_fold(csum_add(pseudo, csum_partial(&udp, 0))), 0);
}

#[test]
fn partial_matches_reference_every_backend_offset_length() {
    let buf = pattern(4096 + 64, 1);
    for &b in Backend::supported() {
        let offsets: &[usize] = if cfg!(miri) {
            &[0, 1, 3, 33]
        } else {
            &[0, 1, 2, 3, 5, 8, 31, 33]
        };
        for &off in offsets {
            for len in table_lengths() {
                let data = &buf[off..off + len];
                let want = reference(data);
                assert_eq!(
                    csum_partial_with(b, data, 0).unwrap(),
                    want,
                    "{b} {off} {len}"
                );
            }
        }
    }
}

/// The lengths of the every-alignment tables: natively every one to 4096; under Miri the short
/// path's shapes (to 72: every 32/16/8-byte step, each 1-7-byte tail below and above 8 bytes,
/// the 64-byte loop) and both sides of the short path's end (`csum_partial` takes the vector
/// loop from 512 bytes).
fn alignment_lengths() -> Vec<usize> {
    if cfg!(miri) {
        (0..=72).chain([127, 128, 129, 511, 512, 513]).collect()
    } else {
        (0..=4096).collect()
    }
}

/// The start alignments of those tables: every one of a 64-byte line natively.
fn alignments() -> Vec<usize> {
    if cfg!(miri) {
        vec![0, 1, 7, 62]
    } else {
        (0..64).collect()
    }
}

/// `csum_partial` and every backend's table sum `data` to `want` (`what` names the case).
fn every_sum_is(data: &[u8], want: u32, what: std::fmt::Arguments<'_>) {
    assert_eq!(csum_partial(data, 0), want, "{what}");
    for &b in Backend::supported() {
        assert_eq!(csum_partial_with(b, data, 0).unwrap(), want, "{b} {what}");
    }
}

#[test]
fn partial_every_alignment_and_length() {
    // The public call (its inline short path below 512 bytes, the active table above) and every
    // backend's table (which takes the same short path), against the reference.
    let buf = pattern(4096 + 64, 4);
    for off in alignments() {
        for len in alignment_lengths() {
            let data = &buf[off..off + len];
            let want = reference(data);
            every_sum_is(data, want, format_args!("{off} {len}"));
            // A running sum joins as `csum_add` would.
            let initial = 0xfffe_0001 ^ len as u32;
            assert_eq!(
                csum_fold(csum_partial(data, initial)),
                csum_fold(csum_add(initial, want)),
                "initial {off} {len}"
            );
        }
    }
}

#[test]
fn header_lengths_carry_heavy() {
    // 20 and 40 bytes take their own straight-line paths at the call site (IPv4 and IPv6
    // headers); every byte 0xff makes every add carry. Against the reference and against the
    // table's path for the same bytes, with initial sums that carry too.
    let patterns: [Box<dyn Fn(usize) -> u8>; 4] = [
        Box::new(|_| 0xff),
        Box::new(|_| 0),
        Box::new(|i| if i % 2 == 0 { 0xff } else { 0 }),
        Box::new(|i| (i * 151 + 7) as u8),
    ];
    let initials = [0, 1, 0xffff, 0x1_0000, 0xffff_fffe, 0xffff_ffff];
    for pat in &patterns {
        let buf: Vec<u8> = (0..128).map(pat).collect();
        for len in [20, 40] {
            for off in alignments() {
                let data = &buf[off..off + len];
                let want = reference(data);
                assert_eq!(csum_partial(data, 0), want, "{len} at {off}");
                for &init in &initials {
                    let got = csum_partial(data, init);
                    assert!(got <= 0xffff, "{len} at {off}, initial {init:#x}: {got:#x}");
                    assert_eq!(
                        got,
                        csum_partial_with(Backend::Generic, data, init).unwrap(),
                        "{len} at {off}, initial {init:#x}"
                    );
                    assert_eq!(
                        csum_fold(got),
                        csum_fold(csum_add(init, want)),
                        "{len} at {off}, initial {init:#x}"
                    );
                }
            }
        }
    }
}

#[test]
fn carry_heavy_every_backend_length_and_start() {
    // Bytes that make nearly every add carry, through the short path's carry chains (each
    // 32-, 16- and 8-byte step, each tail, the 64-byte loop), the cut-over to the register loop
    // at 512 bytes and the loop with its merged, once-reduced accumulators: all ones; ones
    // with a zero every 7th byte (an odd period: the zero walks through every lane and word
    // parity); ones but for the top of every fourth word. On the public call (inline short
    // path, the active table from 512 bytes) and on every backend's table, at odd and even
    // starts, with initial sums that carry.
    // Under Miri: each step and tail of the short path once, its loop, the cut-over.
    let lens: Vec<usize> = if cfg!(miri) {
        (0..=9)
            .chain([15, 16, 23, 31, 39, 47, 55, 60, 63, 64, 71, 127, 512, 577])
            .collect()
    } else {
        (0..=1100)
            .chain([2047, 2048, 2049, 4097, 65535, 65536 + 7])
            .collect()
    };
    let starts: &[usize] = if cfg!(miri) {
        &[0, 1]
    } else {
        &[0, 1, 2, 7, 31, 33, 63]
    };
    let patterns: &[fn(usize) -> u8] = &[
        |_| 0xff,
        |i| if i % 7 == 3 { 0 } else { 0xff },
        |i| if i % 32 == 31 { 0x7f } else { 0xff },
    ][..if cfg!(miri) { 1 } else { 3 }];
    let initials: &[u32] = if cfg!(miri) {
        &[0xffff_ffff]
    } else {
        &[0, 1, 0xffff_fffe, 0xffff_ffff]
    };
    let longest = lens.iter().copied().max().unwrap_or(0);
    for (pi, pat) in patterns.iter().enumerate() {
        let buf: Vec<u8> = (0..longest + 64).map(pat).collect();
        for &off in starts {
            for &len in &lens {
                // Past 4 KiB (more of the same loop) two starts suffice.
                if len > 4096 && off > 1 {
                    continue;
                }
                let data = &buf[off..off + len];
                let want = reference(data);
                every_sum_is(data, want, format_args!("pattern {pi}, {off}+{len}"));
                for &init in initials {
                    let expect = csum_fold(csum_add(init, want));
                    let got = csum_partial(data, init);
                    assert!(
                        got <= 0xffff,
                        "pattern {pi}, {off}+{len}, {init:#x}: {got:#x}"
                    );
                    assert_eq!(
                        csum_fold(got),
                        expect,
                        "pattern {pi}, {off}+{len}, {init:#x}"
                    );
                    for &b in Backend::supported() {
                        let got = csum_partial_with(b, data, init).unwrap();
                        assert!(got <= 0xffff, "{b} {off}+{len}, {init:#x}: {got:#x}");
                        assert_eq!(csum_fold(got), expect, "{b} pattern {pi}, {off}+{len}");
                    }
                }
            }
        }
    }
}

#[test]
fn fused_every_alignment_mode_and_length() {
    // The public fused call (inline below 512 bytes but for FlushCache), source at every
    // alignment, the destination at another one; canaries on both sides.
    let src_buf = pattern(1100 + 64, 6);
    let mut dst_buf = vec![0u8; 1100 + 128];
    let lens: Vec<usize> = alignment_lengths()
        .into_iter()
        .filter(|&l| l <= if cfg!(miri) { 513 } else { 1100 })
        .collect();
    for (mi, mode) in Mode::ALL.into_iter().enumerate() {
        for so in alignments() {
            let d_o = (so * 7 + 42 + mi) % 64;
            for &len in &lens {
                let src = &src_buf[so..so + len];
                let dst_buf = &mut dst_buf[..d_o + len + 64];
                dst_buf.fill(0xee);
                let got = csum_and_copy(&mut dst_buf[d_o..d_o + len], src, mode);
                assert_eq!(got, reference(src), "{mode:?} {so} {d_o} {len}");
                assert_eq!(&dst_buf[d_o..d_o + len], src, "{mode:?} {so} {d_o} {len}");
                assert!(
                    all_bytes(&dst_buf[..d_o], 0xee) && all_bytes(&dst_buf[d_o + len..], 0xee),
                    "{mode:?} {so} {d_o} {len}: wrote outside the destination"
                );
            }
        }
    }
}

#[test]
fn fused_matches_reference_every_backend_mode_offset_length() {
    let src_buf = pattern(4096 + 64, 2);
    let mut dst_buf = vec![0u8; 4096 + 128];
    for &b in Backend::supported() {
        for (mi, mode) in Mode::ALL.into_iter().enumerate() {
            let pairs: &[(usize, usize)] = if cfg!(miri) {
                &[(0, 0), (1, 0), (3, 7), (33, 17)]
            } else {
                &[(0, 0), (1, 0), (0, 1), (3, 7), (2, 63), (33, 17)]
            };
            for (pi, &(so, d_o)) in pairs.iter().enumerate() {
                for (li, len) in table_lengths().into_iter().enumerate() {
                    // Under Miri each length meets one offset pair per mode, in turn: every
                    // pair meets every mode at a quarter of the lengths, spread over the table.
                    if cfg!(miri) && (li + pi) % pairs.len() != mi % pairs.len() {
                        continue;
                    }
                    let src = &src_buf[so..so + len];
                    // Under Miri the canaries span 64 bytes past the end, not the whole rest.
                    let end = if cfg!(miri) {
                        d_o + len + 64
                    } else {
                        dst_buf.len()
                    };
                    let dst_buf = &mut dst_buf[..end];
                    dst_buf.fill(0xee);
                    let got =
                        csum_and_copy_with(b, &mut dst_buf[d_o..d_o + len], src, mode).unwrap();
                    assert_eq!(got, reference(src), "{b} {mode:?} {so} {d_o} {len}");
                    assert_eq!(
                        &dst_buf[d_o..d_o + len],
                        src,
                        "{b} {mode:?} {so} {d_o} {len}"
                    );
                    assert!(
                        all_bytes(&dst_buf[..d_o], 0xee) && all_bytes(&dst_buf[d_o + len..], 0xee),
                        "{b} {mode:?} {so} {d_o} {len}: wrote outside the destination"
                    );
                }
            }
        }
    }
}

#[test]
fn large_and_extreme_sums() {
    // All 0xff words sum to 0xffff (negative zero), never to 0; all zero stays 0.
    // Under Miri, 64 KiB + 3 (past the 16-bit word count a 32-bit accumulator could carry
    // without folding) stands in for the MiB sizes.
    let lens: &[usize] = if cfg!(miri) {
        &[0, 1, 2, 3, 100, (1 << 16) + 3]
    } else {
        &[0, 1, 2, 3, 100, 1 << 16, (1 << 20) + 3]
    };
    for &len in lens {
        let ones = vec![0xffu8; len];
        let zeros = vec![0u8; len];
        let mut dst = vec![0u8; len];
        let want = reference(&ones);
        for &b in Backend::supported() {
            // The plain sum: the register loop's lanes at their largest, reduced with plain adds.
            assert_eq!(csum_partial_with(b, &ones, 0).unwrap(), want, "{b} {len}");
            assert_eq!(csum_partial_with(b, &zeros, 0).unwrap(), 0, "{b} {len}");
            for mode in Mode::ALL {
                let s = csum_and_copy_with(b, &mut dst, &ones, mode).unwrap();
                assert_eq!(s, want, "{b} {mode:?} {len}");
                let z = csum_and_copy_with(b, &mut dst, &zeros, mode).unwrap();
                assert_eq!(z, 0, "{b} {mode:?} {len}");
            }
        }
    }
    let big = pattern(if cfg!(miri) { (1 << 16) + 5 } else { 3 << 20 }, 5);
    for &b in Backend::supported() {
        assert_eq!(
            csum_partial_with(b, &big[1..], 0).unwrap(),
            reference(&big[1..])
        );
    }
}

#[test]
fn blocks_at_odd_offsets_combine() {
    let data = pattern(3000, 9);
    let whole = csum_partial(&data, 0);
    for cut in [0, 1, 2, 7, 63, 64, 65, 1499, 1500, 2999, 3000] {
        let (a, b) = data.split_at(cut);
        let joined = csum_block_add(csum_partial(a, 0), csum_partial(b, 0), cut);
        assert_eq!(joined, whole, "cut {cut}");
        // Three blocks, the middle one odd-sized.
        if cut + 333 <= data.len() {
            let (b1, b2) = b.split_at(333);
            let s = csum_block_add(csum_partial(a, 0), csum_partial(b1, 0), cut);
            let s = csum_block_add(s, csum_partial(b2, 0), cut + 333);
            assert_eq!(s, whole, "cut {cut} + 333");
        }
    }
    // `initial` is a running sum of earlier even-length data.
    let (a, b) = data.split_at(1000);
    assert_eq!(csum_partial(b, csum_partial(a, 0)), whole);
}

#[test]
fn mismatched_lengths_panic_without_writing() {
    let mut dst = [1u8; 4];
    let r = std::panic::catch_unwind(move || {
        csum_and_copy(&mut dst, &[2u8; 5], Mode::Temporal);
    });
    let msg = r.unwrap_err();
    let msg = msg.downcast_ref::<String>().unwrap();
    assert!(msg.contains("(5)") && msg.contains("(4)"), "{msg}");
}

#[cfg(unix)]
mod guard {
    //! Buffers that start right after and end right before PROT_NONE pages: any read or write
    //! past either end faults.
    use super::*;

    #[cfg(not(miri))]
    struct Guarded {
        base: *mut u8,
        total: usize,
        page: usize,
    }

    /// Under Miri (no `mprotect`): an allocation of exactly the usable size, whose bounds Miri
    /// checks byte for byte; 512-byte "pages".
    #[cfg(miri)]
    struct Guarded(Vec<u8>);

    #[cfg(miri)]
    impl Guarded {
        fn new(pages: usize) -> Guarded {
            let v = vec![0u8; pages * 512];
            assert_eq!(v.capacity(), pages * 512);
            Guarded(v)
        }
        fn get(&self) -> &[u8] {
            &self.0
        }
        fn usable(&mut self) -> &mut [u8] {
            &mut self.0
        }
    }

    #[cfg(not(miri))]
    impl Guarded {
        /// `pages` usable pages between two inaccessible ones.
        fn new(pages: usize) -> Guarded {
            // SAFETY: plain anonymous mappings and mprotect of pages we own.
            unsafe {
                let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
                let total = (pages + 2) * page;
                let base = libc::mmap(
                    core::ptr::null_mut(),
                    total,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                assert_ne!(base, libc::MAP_FAILED);
                let base = base.cast::<u8>();
                assert_eq!(libc::mprotect(base.cast(), page, libc::PROT_NONE), 0);
                assert_eq!(
                    libc::mprotect(base.add(total - page).cast(), page, libc::PROT_NONE),
                    0
                );
                Guarded { base, total, page }
            }
        }
        fn get(&self) -> &[u8] {
            // SAFETY: the pages between the guards are mapped and owned by `self`.
            unsafe {
                core::slice::from_raw_parts(self.base.add(self.page), self.total - 2 * self.page)
            }
        }
        fn usable(&mut self) -> &mut [u8] {
            // SAFETY: the pages between the guards are mapped read-write and owned by `self`.
            unsafe {
                core::slice::from_raw_parts_mut(
                    self.base.add(self.page),
                    self.total - 2 * self.page,
                )
            }
        }
    }

    #[cfg(not(miri))]
    impl Drop for Guarded {
        fn drop(&mut self) {
            // SAFETY: unmapping our own mapping.
            unsafe { libc::munmap(self.base.cast(), self.total) };
        }
    }

    #[test]
    fn never_touches_past_either_buffer() {
        let mut src_map = Guarded::new(2);
        let mut dst_map = Guarded::new(2);
        let n = src_map.usable().len();
        let fill = pattern(n, 3);
        src_map.usable().copy_from_slice(&fill);
        let lens: Vec<usize> = if cfg!(miri) {
            (0..=40)
                .chain([63, 64, 65, 127, 128, 129, 255, 511, n])
                .collect()
        } else {
            (0..=300)
                .chain([1023, 1024, 1025, 2047, 4095, 4096, 4097, 8000, n])
                .collect()
        };
        for &b in Backend::supported() {
            for mode in Mode::ALL {
                for &len in &lens {
                    // Flush against the start guard, then against the end guard, both buffers
                    // (under Miri both at the same end: each guard is still met by both).
                    let placements = [(0, 0), (n - len, n - len), (0, n - len), (n - len, 0)];
                    for &(s_at, d_at) in &placements[..if cfg!(miri) { 2 } else { 4 }] {
                        let src = &src_map.get()[s_at..s_at + len];
                        let want = reference(src);
                        assert_eq!(csum_partial_with(b, src, 0).unwrap(), want);
                        let dst = &mut dst_map.usable()[d_at..d_at + len];
                        let got = csum_and_copy_with(b, dst, src, mode).unwrap();
                        assert_eq!(got, want, "{b} {mode:?} {len} {s_at} {d_at}");
                        assert_eq!(dst, src);
                        // The public calls' inline short path, against the same guards.
                        assert_eq!(csum_partial(src, 0), want, "{len} {s_at}");
                        dst.fill(0);
                        let got = csum_and_copy(dst, src, mode);
                        assert_eq!(got, want, "{mode:?} {len} {s_at} {d_at}");
                        assert_eq!(dst, src);
                    }
                }
            }
        }
    }
}

mod cursors {
    //! The fused steps on the cursor engine: segments of every parity, empty segments, short
    //! destinations, a discarding destination; every mode.
    use super::*;
    use cachecopy::iter::{Dest, IoVec, IoVecMut, Source};
    use cachecopy::net::{csum_and_copy_from_iter, csum_and_copy_to_iter};

    fn layouts() -> Vec<Vec<usize>> {
        vec![
            vec![],
            vec![0],
            vec![1],
            vec![1, 1, 1],
            vec![3, 0, 5, 7],
            vec![13, 1200, 1, 258],
            // udp_tx's message: a straddled line after 1200, then 13 + 1 + 258 sharing lines.
            vec![1200, 13, 1, 258],
            vec![1, 13, 1, 13, 258, 1, 1200, 13],
            vec![1499, 1, 2048, 0, 3],
            vec![64, 4096, 63, 1025],
        ]
    }

    /// Every mode natively; under Miri (which interprets each byte) one per layout, in turn, so
    /// each mode still meets layouts of every kind.
    fn modes_for(layout: usize) -> Vec<Mode> {
        if cfg!(miri) {
            vec![Mode::ALL[layout % Mode::ALL.len()]]
        } else {
            Mode::ALL.to_vec()
        }
    }

    #[test]
    fn from_iter_matches_reference() {
        for (li, lens) in layouts().into_iter().enumerate() {
            let total: usize = lens.iter().sum();
            let data = pattern(total, lens.len());
            let mut segs = Vec::new();
            let mut at = 0;
            for &n in &lens {
                segs.push(IoVec::new(&data[at..at + n]));
                at += n;
            }
            for mode in modes_for(li) {
                for room in [total, total / 2, total.saturating_sub(1)] {
                    let mut src = Source::iovec(&segs);
                    let mut dst = vec![0xeeu8; room + 1];
                    let (n, sum) = csum_and_copy_from_iter(&mut dst[1..], &mut src, mode);
                    assert_eq!(n, room, "{lens:?} {mode:?}");
                    assert_eq!(&dst[1..], &data[..room], "{lens:?} {mode:?}");
                    assert_eq!(dst[0], 0xee);
                    assert_eq!(sum, reference(&data[..room]), "{lens:?} {mode:?} {room}");
                    assert_eq!(src.count(), total - room);
                }
            }
        }
    }

    #[test]
    fn to_iter_matches_reference() {
        for (li, lens) in layouts().into_iter().enumerate() {
            let total: usize = lens.iter().sum();
            let data = pattern(total + 5, 7);
            for mode in modes_for(li) {
                for len in [total, total + 5, total / 3] {
                    let mut bufs: Vec<Vec<u8>> = lens.iter().map(|&n| vec![0u8; n]).collect();
                    let mut segs: Vec<IoVecMut> =
                        bufs.iter_mut().map(|b| IoVecMut::new(b)).collect();
                    let mut dst = Dest::iovec(&mut segs);
                    let (n, sum) = csum_and_copy_to_iter(&data[..len], &mut dst, mode);
                    assert_eq!(n, len.min(total), "{lens:?} {mode:?}");
                    assert_eq!(sum, reference(&data[..n]), "{lens:?} {mode:?} {len}");
                    assert_eq!(bufs.concat()[..n], data[..n]);
                }
            }
            // A discarding destination takes the bytes without copying; they are still summed.
            let mut sink = Dest::discard(total);
            let (n, sum) = csum_and_copy_to_iter(&data, &mut sink, Mode::Temporal);
            assert_eq!((n, sum), (total, reference(&data[..total])));
        }
    }

    /// A little xorshift, so the random mixes are the same every run.
    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn from_iter_segment_mixes_every_mode_and_start() {
        // Random mixes of 1-, 13-, 258- and 1200-byte segments and random short ones, gathered
        // to a destination starting at every line alignment (the line writer's shapes: lines
        // shared by two, three or more segments, segments inside one line, whole lines), in
        // every mode, checked against the reference and for bytes written outside.
        let (mixes, starts): (usize, Vec<usize>) = if cfg!(miri) {
            (3, vec![0, 1, 42, 63])
        } else {
            (200, (0..64).collect())
        };
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for mix in 0..mixes {
            let nsegs = 1 + (xorshift(&mut rng) % if cfg!(miri) { 5 } else { 12 }) as usize;
            let lens: Vec<usize> = (0..nsegs)
                .map(|_| match xorshift(&mut rng) % 6 {
                    0 => 1,
                    1 => 13,
                    2 => 258,
                    3 if !cfg!(miri) => 1200,
                    _ => (xorshift(&mut rng) % 130) as usize,
                })
                .collect();
            let total: usize = lens.iter().sum();
            let data = pattern(total, mix);
            let mut segs = Vec::new();
            let mut at = 0;
            for &n in &lens {
                segs.push(IoVec::new(&data[at..at + n]));
                at += n;
            }
            let want = reference(&data);
            let mut buf = vec![0u8; total + 128];
            for (mi, mode) in Mode::ALL.into_iter().enumerate() {
                for &start in &starts {
                    // Natively every start meets every mode for a quarter of the mixes.
                    if !cfg!(miri) && (start + mix) % 4 != mi {
                        continue;
                    }
                    buf.fill(0xee);
                    let mut src = Source::iovec(&segs);
                    let (n, sum) =
                        csum_and_copy_from_iter(&mut buf[start..start + total], &mut src, mode);
                    let what = format!("{lens:?} {mode:?} at {start}");
                    assert_eq!((n, sum), (total, want), "{what}");
                    assert_eq!(&buf[start..start + total], &data[..], "{what}");
                    assert!(
                        all_bytes(&buf[..start], 0xee) && all_bytes(&buf[start + total..], 0xee),
                        "{what}: wrote outside the destination"
                    );
                }
            }
        }
    }

    /// What `csum_frame_from_iter`'s header callback writes in these tests: it checks it was
    /// given `head` zeroed bytes, then writes a pattern of the payload length and sum.
    fn header_of(hdr: &mut [u8], head: usize, len: usize, sum: u32) {
        assert_eq!(hdr.len(), head);
        assert!(all_bytes(hdr, 0), "the header bytes start zeroed");
        for (i, b) in hdr.iter_mut().enumerate() {
            *b = (len as u32 ^ sum ^ (i as u32 * 0x9d)) as u8 | 1;
        }
    }

    #[test]
    fn frame_from_iter_every_head_start_and_mode() {
        // Header lengths around the line (none, inside the first line, ending on it, one past
        // it, several lines), frames at every line alignment (Miri: four), payloads that end in
        // the header's last line, in the next, and far behind, from several segment layouts,
        // in every mode, alone and in a batch; against the reference, and no byte outside the
        // frame or behind the payload written.
        use cachecopy::net::csum_frame_from_iter;
        let heads: &[usize] = if cfg!(miri) {
            &[0, 14, 42, 64, 65]
        } else {
            &[0, 1, 14, 42, 63, 64, 65, 118, 192, 300]
        };
        let starts: Vec<usize> = if cfg!(miri) {
            vec![0, 1, 22, 63]
        } else {
            (0..64).collect()
        };
        let layouts: &[&[usize]] = if cfg!(miri) {
            &[&[], &[5], &[13, 1, 100]]
        } else {
            &[
                &[],
                &[1],
                &[21],
                &[22, 1],
                &[1200, 13, 1, 258],
                &[3, 0, 64, 7, 300],
            ]
        };
        for (li, lens) in layouts.iter().enumerate() {
            let total: usize = lens.iter().sum();
            let data = pattern(total, li + 3);
            let mut segs = Vec::new();
            let mut at = 0;
            for &n in lens.iter() {
                segs.push(IoVec::new(&data[at..at + n]));
                at += n;
            }
            let mut buf = vec![0u8; 300 + total + 192];
            for (mi, mode) in Mode::ALL.into_iter().enumerate() {
                for &head in heads {
                    for &start in &starts {
                        // Every start and head meets every mode for a quarter of the layouts.
                        if (start + head + li) % 4 != mi {
                            continue;
                        }
                        // Room for the whole payload, and for all of it but 7 bytes.
                        for room in [total, total.saturating_sub(7)] {
                            let end = start + head + room;
                            let what =
                                format!("{lens:?} {mode:?} head {head} at {start} room {room}");
                            for batched in [false, true] {
                                buf.fill(0xee);
                                let mut src = Source::iovec(&segs);
                                let frame = &mut buf[start..end + 3];
                                let cb = |h: &mut [u8], n: usize, s: u32| header_of(h, head, n, s);
                                let (n, sum) = if batched {
                                    cachecopy::batch(mode, |b| {
                                        b.csum_frame_from_iter(
                                            &mut frame[..head + room],
                                            head,
                                            &mut src,
                                            cb,
                                        )
                                    })
                                } else {
                                    csum_frame_from_iter(
                                        &mut frame[..head + room],
                                        head,
                                        &mut src,
                                        mode,
                                        cb,
                                    )
                                };
                                assert_eq!(n, room, "{what}");
                                assert_eq!(sum, reference(&data[..room]), "{what}");
                                assert_eq!(src.count(), total - room, "{what}");
                                let mut want = vec![0u8; head];
                                header_of(&mut want, head, room, sum);
                                assert_eq!(&buf[start..start + head], &want[..], "{what}");
                                assert_eq!(&buf[start + head..end], &data[..room], "{what}");
                                assert!(
                                    all_bytes(&buf[..start], 0xee) && all_bytes(&buf[end..], 0xee),
                                    "{what}: wrote outside the frame"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn frame_from_iter_rejects_a_bad_head_before_writing() {
        use cachecopy::net::csum_frame_from_iter;
        let data = [7u8; 300];
        let segs = [IoVec::new(&data)];
        for (len, head) in [(0, 1), (10, 11), (400, 4000)] {
            let mut frame = vec![0xeeu8; len];
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut src = Source::iovec(&segs);
                csum_frame_from_iter(&mut frame, head, &mut src, Mode::NonTemporal, |_, _, _| {
                    panic!("no header for a rejected frame")
                })
            }));
            let msg = r.expect_err("a bad head panics");
            let msg = msg.downcast_ref::<String>().expect("a formatted message");
            assert!(msg.contains("csum_frame_from_iter: header of"), "{msg}");
            assert!(all_bytes(&frame, 0xee), "nothing written");
        }
    }

    #[test]
    fn running_sum_across_calls() {
        let data = pattern(3001, 11);
        let segs = [IoVec::new(&data[..1001]), IoVec::new(&data[1001..])];
        let mut src = Source::iovec(&segs);
        let (mut a, mut b) = (vec![0u8; 777], vec![0u8; 3001 - 777]);
        let (n1, s1) = csum_and_copy_from_iter(&mut a, &mut src, Mode::NonTemporal);
        let (n2, s2) = csum_and_copy_from_iter(&mut b, &mut src, Mode::NonTemporal);
        assert_eq!((n1, n2), (777, 3001 - 777));
        assert_eq!(csum_block_add(s1, s2, n1), reference(&data));
    }
}
