//! The AVX-512 backend's own suite, run twice:
//! - natively by `cargo test` on a CPU with AVX-512 (`avx512_backend_tables_native`; on a CPU
//!   without it that test says so and checks that dispatch did not pick AVX-512);
//! - under Bochs by `.ci/run` on an emulated Skylake-X:
//!   `TEST_ARGS="--test-threads=1 --nocapture --ignored avx512" test-avx512.sh`. The ignored test
//!   fails unless the CPU reports AVX-512 and dispatch runs the rule's engine for it, and prints
//!   a marker `.ci/run` looks for, so a green Bochs run that never ran AVX-512 code cannot pass.

mod common;
use cachecopy::tune::{Backend, Engine};
use common::*;

#[test]
fn avx512_backend_tables_native() {
    let cpu_has_it = cachecopy::tune::cpu().features.avx512bw;
    if !cpu_has_it || cfg!(cachecopy_integer_only) {
        // No AVX-512 here, or a word-only build that compiles no vector backend.
        assert_ne!(
            cachecopy::tune::Plan::current().tuning().engine.stream,
            Backend::Avx512
        );
        assert!(!Backend::supported().contains(&Backend::Avx512));
        println!("cachecopy: no AVX-512 backend in this run; the Bochs run covers it");
        return;
    }
    // The tables name the backend, so they run whatever engine the rule picked for this CPU
    // (AVX2 on Zen 4 with AVX-512: lab/findings/engine.md).
    avx512_tables();
}

#[test]
#[ignore = "asserts AVX-512; .ci/run runs it under Bochs"]
fn avx512_backend_tables() {
    assert!(
        Backend::supported().contains(&Backend::Avx512),
        "AVX-512 backend not supported here: {:?}",
        cachecopy::tune::cpu().features
    );
    // Dispatch runs what the rule decides for the emulated CPU, whichever backend that is, or
    // what the environment forces over it.
    let (_, why) = Engine::rule(&cachecopy::tune::cpu());
    assert_eq!(
        cachecopy::tune::Plan::current().tuning().engine,
        engine_in_force(),
        "rule: {why}"
    );
    avx512_tables();
    println!("cachecopy: AVX512 BACKEND EXERCISED");
}

/// Every AVX-512 table, named explicitly (`copy_with`, `fill_with_engine`, ...), so it does not
/// depend on which engine dispatch picked.
fn avx512_tables() {
    let b = Backend::Avx512;
    table_all_lengths(b);
    table_offsets(b);
    table_large(b);
    table_fill(b);
    table_guard_pages(b);
    // Temporal fills through `rep stosb`, behind the AVX-512 64-byte alignment head: a plan of
    // this backend with the string store from 0 bytes.
    let mut t = *cachecopy::tune::Plan::rule().tuning();
    (t.engine, t.fill_rep) = (Engine::from(b), 0);
    let strings = cachecopy::tune::Plan::new(t).unwrap();
    let mut dst = Vec::new();
    for d_o in 0..64 {
        for len in (120..=300).chain([4095, 65537]) {
            check_fill(
                strings,
                cachecopy::Mode::Temporal,
                d_o,
                len,
                (d_o as u8) | 0x80,
                &mut dst,
            );
        }
    }
    table_fill_guard_pages(strings, &[129, 200, 4097]);
    // The overlapping-edge engine (Intel's default, `Engine::rule`) has classes of its own up to
    // 128 bytes (the 32-byte half's: no masked store); every length to 1 KiB, guard pages on
    // both sides, and fills at every length to 300 at a few offsets (reduced for Bochs).
    let overlap = Engine::new(b, b, cachecopy::tune::Edges::Overlap);
    table_all_lengths(overlap);
    table_guard_pages(overlap);
    for d_o in [0, 5, 33, 63] {
        for len in 0..=300 {
            check_fill(
                overlap,
                cachecopy::Mode::Temporal,
                d_o,
                len,
                len as u8 | 1,
                &mut dst,
            );
        }
    }
    table_fill_guard_pages(overlap, &[64, 65, 100, 128, 129, 4097]);
    // Overlapping moves, with masked and with overlapping edges: distances around a register,
    // a line and a page; lengths across the masked, pair, quad, eight-register and loop shapes
    // and the streamed body (reduced: Bochs emulates every instruction).
    for e in [
        Engine::from(b),
        Engine::new(b, b, cachecopy::tune::Edges::Overlap),
    ] {
        common::moves::table(
            e,
            &[1, 2, 31, 63, 64, 65, 127, 128, 200, 4096],
            &[
                0, 1, 17, 63, 64, 65, 127, 129, 255, 257, 511, 513, 1100, 1291, 4097,
            ],
        );
    }
}
