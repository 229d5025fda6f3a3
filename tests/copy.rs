//! Every backend this CPU runs x every mode, against the reference (`copy_from_slice`/`fill`).

#[macro_use]
mod common;
use cachecopy::raw::{copy_with, copy_with_flush};
use cachecopy::tune::{Backend, Edges, Engine, FlushOp};
use cachecopy::{copy, fill, Mode};
use common::*;

/// One test a table of the rig, each run on every engine this CPU offers. A macro, not a
/// function taking the table: the tables take `impl Into<Engine>`, which no `fn` pointer names.
macro_rules! on_every_engine {
    ($($test:ident: $table:ident;)+) => {$(
        #[test]
        fn $test() {
            for b in engines() {
                $table(b);
            }
        }
    )+};
}

on_every_engine! {
    every_length_every_backend: table_all_lengths;
    all_offset_pairs_at_boundaries: table_offsets;
    large_sizes: table_large;
    fill_every_backend: table_fill;
    guard_pages: table_guard_pages;
}

#[test]
fn dispatch_picks_the_best_supported() {
    let s = Backend::supported();
    assert!(!s.is_empty());
    assert_eq!(s[0], Backend::Generic);
    // Not the widest backend: the engine the CPU's rule picks (lab/findings/engine.md), or the one the
    // environment forces over it (CI runs this suite once per engine the CPU runs).
    let (_, why) = Engine::rule(&cachecopy::tune::cpu());
    let want = engine_in_force();
    assert_eq!(
        cachecopy::tune::Plan::current().tuning().engine,
        want,
        "rule: {why}"
    );
    assert_eq!(
        cachecopy::tune::Plan::current().tuning().engine.stream,
        want.stream
    );
    assert!(s.contains(&cachecopy::tune::Plan::current().tuning().engine.temporal));
    assert!(s.contains(&cachecopy::tune::Plan::current().tuning().engine.stream));
    // The vector backends the CPU runs, as std_detect finds them, in a build that has them.
    #[cfg(all(target_arch = "x86_64", not(miri), not(cachecopy_integer_only)))]
    {
        assert!(s.contains(&Backend::Sse2));
        assert_eq!(
            s.contains(&Backend::Avx2),
            std::is_x86_feature_detected!("avx2")
        );
        assert_eq!(
            s.contains(&Backend::Avx512),
            std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
        );
        assert!(!s.contains(&Backend::Neon));
    }
}

/// Every engine this CPU runs, mixed ones included: each job's entry points come from the
/// backend the engine names (a table composed wrongly would still copy correctly, so the
/// composition itself is checked through `engine()`-independent results: every mode, lengths
/// on both sides of the streaming cut-over, odd offsets, canaries).
#[test]
fn every_engine_copies_and_fills() {
    let lens: &[usize] = if miri() {
        &[0, 33, 1100]
    } else {
        &[0, 1, 31, 63, 64, 100, 1023, 1024, 1514, 4099, 70_000]
    };
    let src = pattern(70_000 + 64, 9);
    let mut dst = Vec::new();
    let all = Engine::supported();
    for &b in Backend::supported() {
        assert!(all.contains(&Engine::uniform(b)), "{b} alone is an engine");
    }
    for &e in all {
        for mode in Mode::ALL {
            for &len in lens {
                for (so, d_o) in [(0, 0), (3, 42), (61, 24)] {
                    check_copy(e, mode, so, d_o, len, &src, &mut dst);
                    check_fill(e, mode, d_o, len, 0x3c, &mut dst);
                }
            }
        }
    }
}

#[test]
fn engine_fields_normalise_and_print() {
    let e = Engine::new(Backend::Avx2, Backend::Sse2, Edges::Masked);
    assert_eq!(e.edges, Edges::Overlap, "no masks without AVX-512");
    assert_eq!(Engine::from(Backend::Avx512).edges, Edges::Masked);
    assert_eq!(
        Engine::new(Backend::Avx2, Backend::Avx512, Edges::Overlap).to_string(),
        "temporal avx2, stream avx512, edges overlap"
    );
    assert_eq!(Edges::from_name("MASKED"), Some(Edges::Masked));
    assert_eq!(Edges::from_name("ragged"), None);
}

#[test]
fn unsupported_engine_is_an_error_and_writes_nothing() {
    let missing = [Backend::Avx512, Backend::Neon, Backend::Avx2, Backend::Sse2]
        .into_iter()
        .find(|b| !Backend::supported().contains(b))
        .unwrap();
    let mut dst = [9u8; 4096];
    for e in [
        Engine::new(missing, Backend::Generic, Edges::Overlap),
        Engine::new(Backend::Generic, missing, Edges::Overlap),
    ] {
        assert!(
            cachecopy::raw::copy_with_engine(e, &mut dst, &[1u8; 4096], Mode::NonTemporal).is_err()
        );
        assert!(cachecopy::raw::fill_with_engine(e, &mut dst, 1, Mode::Temporal).is_err());
        assert!(cachecopy::raw::batch_with(e, Mode::NonTemporal, |_| ()).is_err());
    }
    assert!(all_bytes(&dst, 9));
}

#[test]
fn unsupported_backend_is_an_error_and_writes_nothing() {
    let all = [
        Backend::Generic,
        Backend::Sse2,
        Backend::Avx2,
        Backend::Avx512,
        Backend::Neon,
    ];
    for b in all
        .into_iter()
        .filter(|b| !Backend::supported().contains(b))
    {
        let mut dst = [0u8; 100];
        let err = copy_with(b, &mut dst, &[1; 100], Mode::Temporal).unwrap_err();
        assert!(err.to_string().contains(b.name()), "{err}");
        assert_eq!(dst, [0; 100]);
        assert!(cachecopy::raw::fill_with(b, &mut dst, 9, Mode::Temporal).is_err());
        assert_eq!(dst, [0; 100]);
    }
}

#[test]
#[should_panic(expected = "source length (3) does not match destination length (4)")]
fn length_mismatch_panics() {
    copy(&mut [0u8; 4], &[1, 2, 3], Mode::Temporal);
}

#[test]
fn backend_names_round_trip() {
    for b in ALL_BACKENDS {
        assert_eq!(Backend::from_name(b.name()), Some(b));
    }
    assert_eq!(Backend::from_name("AVX2"), Some(Backend::Avx2));
    assert_eq!(Backend::from_name("sse4"), None);
}

/// `FlushCache` forced through every flush instruction this CPU executes, on every backend;
/// the ones it lacks are refused.
#[test]
fn flush_cache_through_each_instruction() {
    let cpu = cachecopy::tune::cpu();
    let ops: Vec<FlushOp> = cpu.flush_ops().collect();
    assert_eq!(
        ops[0], cpu.flush,
        "the preferred instruction is the one used"
    );
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        let f = cpu.features;
        assert_eq!(ops.contains(&FlushOp::Clwb), f.clwb);
        assert_eq!(ops.contains(&FlushOp::Clflushopt), f.clflushopt);
        assert!(ops.contains(&FlushOp::Clflush));
        assert!(!ops.contains(&FlushOp::DcCvap));
    }
    let src = pattern(70_000, 9);
    for &b in Backend::supported() {
        for &op in &ops {
            // Under Miri (which interprets every byte) to 4097: lines over two pages.
            let lens: &[usize] = if miri() {
                &[0, 1, 63, 64, 65, 1000, 1024, 4097]
            } else {
                &[0, 1, 63, 64, 65, 1000, 1024, 4097, 70_000]
            };
            for &len in lens {
                for off in [0, 1, 63] {
                    let mut dst = vec![0u8; len + off];
                    copy_with_flush(b, op, &mut dst[off..], &src[..len]).unwrap();
                    assert_eq!(&dst[off..], &src[..len], "{b:?} {op:?} {len} {off}");
                    cachecopy::raw::fill_with_flush(b, op, &mut dst[off..], 0x77).unwrap();
                    assert!(all_bytes(&dst[off..], 0x77));
                }
            }
        }
    }
    for op in [
        FlushOp::Clwb,
        FlushOp::Clflushopt,
        FlushOp::Clflush,
        FlushOp::DcCvap,
        FlushOp::DcCvac,
    ] {
        if !ops.contains(&op) {
            let mut dst = [0u8; 8];
            assert!(copy_with_flush(Backend::Generic, op, &mut dst, &[1; 8]).is_err());
            assert_eq!(dst, [0; 8]);
        }
    }
}

#[test]
fn thresholds_are_sane_and_publishable() {
    let t = cachecopy::tune::Plan::current().tuning().nt;
    let c = cachecopy::tune::cpu().caches;
    assert!(t >= 1 << 20, "{t}");
    if let Some(l3) = c.l3 {
        assert!(
            t <= l3 + c.l2.unwrap_or(0),
            "threshold {t} above the caches"
        );
    }
    // Auto stays exact on both sides of any threshold.
    let src = pattern(10_000, 4);
    let before = cachecopy::tune::Plan::current();
    for th in [0, 1, 5000, usize::MAX] {
        cachecopy::tune::update(|t| t.nt = th).unwrap();
        let mut dst = vec![0u8; 10_000];
        copy(&mut dst, &src, Mode::Auto);
        assert_eq!(dst, src);
        assert_eq!(cachecopy::tune::Plan::current().tuning().nt, th);
    }
    cachecopy::tune::publish(before);
}

#[test]
fn zero_and_fill_public_api() {
    let mut v = vec![1u8; 5000];
    cachecopy::zero(&mut v, Mode::Auto);
    assert!(all_bytes(&v, 0));
    fill(&mut v[3..], 0xEE, Mode::NonTemporal);
    assert_eq!(&v[..3], &[0, 0, 0]);
    assert!(all_bytes(&v[3..], 0xEE));
}

/// The public `fill`/`zero` store up to 32 bytes inline, without dispatch: every mode, every
/// length around that cut at every offset, next to canaries and flush against guard pages.
#[test]
fn public_fill_inline_sizes() {
    let mut buf = vec![CANARY; 256];
    for mode in Mode::ALL {
        let lens: Vec<usize> = if miri() {
            (0..=40).step_by(3).collect()
        } else {
            (0..=80).collect()
        };
        for &len in &lens {
            for d_o in if miri() {
                vec![0, 7, 13]
            } else {
                (0..16).collect()
            } {
                let byte = (len as u8) ^ 0x3c;
                fill(&mut buf[d_o..d_o + len], byte, mode);
                assert!(
                    all_bytes(&buf[d_o..d_o + len], byte),
                    "{mode:?} {len} +{d_o}"
                );
                assert!(
                    buf[..d_o]
                        .iter()
                        .chain(&buf[d_o + len..])
                        .all(|&b| b == CANARY),
                    "{mode:?} {len} +{d_o}: byte outside changed"
                );
                cachecopy::zero(&mut buf[d_o..d_o + len], mode);
                assert!(all_bytes(&buf[d_o..d_o + len], 0), "{mode:?} zero {len}");
                buf.fill(CANARY);
            }
        }
    }
    let mut g = Guarded::new(4096);
    for mode in Mode::ALL {
        for len in 0..=80 {
            fill(g.at_start(len), 0x11, mode);
            assert!(all_bytes(g.at_start(len), 0x11));
            fill(g.at_end(len), 0x22, mode);
            assert!(all_bytes(g.at_end(len), 0x22));
        }
    }
}

/// Random (backend, mode, offsets, length) against the reference.
#[test]
fn prop_copy_matches_reference() {
    quick!().quickcheck(copy_case as fn(u8, u8, u8, u8, u16, u8) -> bool);
}

fn copy_case(b: u8, m: u8, so: u8, d_o: u8, len: u16, seed: u8) -> bool {
    let backends = Backend::supported();
    let backend = backends[b as usize % backends.len()];
    let mode = Mode::ALL[m as usize % 4];
    let (so, d_o, len) = (so as usize % 64, d_o as usize % 64, len as usize % 6000);
    let src = pattern(so + len, seed);
    let mut dst = Vec::new();
    check_copy(backend, mode, so, d_o, len, &src, &mut dst);
    let byte = seed;
    check_fill(backend, mode, d_o, len, byte, &mut dst);
    true
}

/// `memmove_raw` and `memset_raw` return their destination, as C's `memmove` and `memset` do,
/// on every path: the inline classes, the table's temporal entry, streaming and the flush
/// modes, overlapping moves both ways; and they write what `move_raw` and `fill_raw` write.
#[test]
fn c_shaped_calls_return_their_destination() {
    for mode in Mode::ALL {
        // Under Miri (each byte interpreted) the lengths stop at the small and medium classes.
        let lens: &[usize] = if miri() {
            &[0, 1, 17, 64, 65, 1000]
        } else {
            &[0, 1, 17, 64, 65, 1000, 1024, 5000, 3 << 20]
        };
        for &len in lens {
            let want = pattern(len + 64, len as u8);
            for shift in [0usize, 9, 64] {
                let mut buf = want.clone();
                let p = buf.as_mut_ptr();
                // SAFETY: both ranges inside `buf` (`len + 64` bytes); overlap is allowed.
                let r = unsafe { cachecopy::raw::memmove_raw(p.add(shift), p, len, mode) };
                assert_eq!(r, p.wrapping_add(shift), "{mode:?} len {len} shift {shift}");
                let mut exp = want.clone();
                exp.copy_within(0..len, shift);
                assert!(buf == exp, "{mode:?} len {len}: moved wrong bytes");
            }
            let mut buf = vec![CANARY; len + 2];
            let p = buf.as_mut_ptr();
            // SAFETY: `p + 1` is valid for `len` bytes.
            let r = unsafe { cachecopy::raw::memset_raw(p.add(1), 0x3c, len, mode) };
            assert_eq!(r, p.wrapping_add(1), "{mode:?} len {len}");
            assert!(
                all_bytes(&buf[1..=len], 0x3c),
                "{mode:?} len {len}: filled wrong"
            );
            assert!(
                buf[0] == CANARY && buf[len + 1] == CANARY,
                "{mode:?} len {len}: overran"
            );
        }
    }
}
