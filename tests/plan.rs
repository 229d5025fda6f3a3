//! Every field of the per-CPU plan, in one test binary, with no environment: each test builds
//! the plans it needs ([`Plan::new`] from a record), runs them directly ([`Plan::copy`],
//! [`Plan::fill`], [`Plan::copy_within`]) against the reference, and checks that a plan this CPU
//! cannot run is refused. The published plan is touched only by the tests that take [`PUBLISH`].
//!
//! - `engine` (`temporal`, `stream`, `edges`): every engine this CPU runs, every table;
//! - `nt`, `fill_nt`: `Auto` at lengths around the thresholds;
//! - `rep_movsb`, `fill_rep`: the string move and store from 0 bytes on every backend, the
//!   4K-aliasing placements, and never;
//! - `small`: every small-fill variant at every length and page offset beside guard pages, or
//!   refused;
//! - `pages`: every page count, copies and disjoint moves, beside guard pages;
//! - `wide_copy`: the AVX-512 loop from 0 bytes on the 256-bit backend, or refused;
//! - `flush`: every flush instruction this CPU runs, `FlushCache` copies and fills;
//! - `entry_copy`, and the C entries of every plan variant (`raw::c_entries`: each temporal
//!   backend and edge store, with and without the string-move, string-store and wide variants,
//!   every small-copy and small-fill variant this CPU runs), every length to 1100 bytes and
//!   beyond beside guard pages, overlapping moves both ways;
//! - `frame`: transmit frames built with each order of the header's fetches, alone and in a
//!   batch, against the reference;
//! - the line: every field read back, bad fields refused;
//! - publishing: plans swapped while other threads copy, every byte right.
//!
//! The AVX-512 parts also run under Bochs (`.ci/run`): the ignored tests whose names end in
//! `avx512` assert that the CPU runs them and print markers.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cachecopy::iter::{copy_from_iter, IoVec, Source};
use cachecopy::net::{csum_and_copy, csum_fold, csum_frame_from_iter};
use cachecopy::raw::{c_entries, CEntries};
use cachecopy::tune::{
    self, Backend, Edges, Engine, EntryCopy, FlushOp, FrameBuild, Plan, Small, Tuning,
};
use cachecopy::Mode;
use common::*;

/// Held by the tests that publish a plan or read the published one.
static PUBLISH: Mutex<()> = Mutex::new(());

/// The rule's record for this CPU (no environment).
fn rule() -> Tuning {
    *Plan::rule().tuning()
}

/// The rule's record with `change` applied, built.
fn plan(change: impl FnOnce(&mut Tuning)) -> Result<Plan, tune::Unsupported> {
    let mut t = rule();
    change(&mut t);
    Plan::new(t)
}

/// Whether this CPU runs `b`.
fn runs(b: Backend) -> bool {
    Backend::supported().contains(&b)
}

#[test]
fn the_rule_builds_and_its_line_builds_it_again() {
    let p = Plan::rule();
    let line = p.tuning().to_string();
    let again = rule().with_line(&line).unwrap();
    assert_eq!(&again, p.tuning(), "{line}");
    assert_eq!(Plan::new(again).unwrap().tuning(), p.tuning());
    // Without CACHECOPY_TUNE, the published plan is the rule's.
    if std::env::var_os("CACHECOPY_TUNE").is_none() && !miri() {
        let _held = PUBLISH.lock().unwrap_or_else(|e| e.into_inner());
        assert_eq!(Plan::current().tuning(), p.tuning());
    }
}

#[test]
fn every_engine_runs_every_table() {
    for &e in Engine::supported() {
        let p = plan(|t| t.engine = e).unwrap();
        assert_eq!(p.tuning().engine, e);
        table_all_lengths(p);
        if !miri() {
            table_offsets(p);
            table_large(p);
            table_fill(p);
        }
        table_guard_pages(p);
    }
    // Engines this CPU does not run are refused.
    for b in ALL_BACKENDS.into_iter().filter(|&b| !runs(b)) {
        assert!(plan(|t| t.engine = Engine::uniform(b)).is_err(), "{b}");
        let mixed = Engine::new(Backend::Generic, b, Edges::Overlap);
        assert!(plan(|t| t.engine = mixed).is_err(), "{b}");
    }
}

#[test]
fn auto_copies_and_fills_at_every_threshold() {
    let values = [0, 1, 1023, 1024, 4097, 1 << 20, usize::MAX];
    let lens: Vec<usize> = if miri() {
        vec![0, 1, 1023, 1024, 1100]
    } else {
        vec![
            0,
            1,
            64,
            65,
            1023,
            1024,
            1025,
            4096,
            4097,
            65_537,
            (1 << 20) + 3,
        ]
    };
    let src = pattern(*lens.iter().max().unwrap() + 64, 5);
    let mut dst = Vec::new();
    for (i, &nt) in values.iter().enumerate() {
        let fill_nt = values[(i + 3) % values.len()];
        let p = plan(|t| (t.nt, t.fill_nt) = (nt, fill_nt)).unwrap();
        assert_eq!((p.tuning().nt, p.tuning().fill_nt), (nt, fill_nt));
        for &len in &lens {
            for (so, d_o) in [(0, 0), (3, 61)] {
                check_copy(p, Mode::Auto, so, d_o, len, &src, &mut dst);
            }
            check_fill(p, Mode::Auto, 5, len, 0x5a, &mut dst);
            // Moves near and far resolve `Auto` on the distance too.
            let mut buf = pattern(2 * len + 64, len as u8);
            let mut want = buf.clone();
            p.copy_within(&mut buf, ..len, len / 2 + 1, Mode::Auto);
            want.copy_within(..len, len / 2 + 1);
            assert!(buf == want, "move {len} nt {nt}");
        }
    }
}

/// The string move (`rep_movsb`) from 0 bytes on every backend: every table, and a source and
/// destination placed at chosen distances modulo 4 KiB (the close ones keep the vector loop:
/// 4K aliasing); then never.
#[test]
fn string_moves_on_every_backend() {
    for &b in Backend::supported() {
        let p = plan(|t| (t.engine, t.rep_movsb) = (Engine::uniform(b), 0)).unwrap();
        assert_eq!(p.tuning().rep_movsb, 0);
        table_all_lengths(p);
        if !miri() {
            table_offsets(p);
            table_large(p);
        }
        table_guard_pages(p);
        let lens: &[usize] = if miri() {
            &[65, 300]
        } else {
            &[65, 127, 300, 4095, 4096, 70_001]
        };
        let gaps = [
            0usize,
            64,
            255,
            256,
            1024,
            2048,
            4096 - 256,
            4096 - 64,
            4095,
        ];
        for gap in gaps {
            for &len in lens {
                for d_o in [0usize, 1, 33, 63] {
                    let src_at = 8192 + d_o;
                    let dst_at = src_at + len.next_multiple_of(4096) + 4096 + gap;
                    let mut buf = pattern(dst_at + len + 64, (gap + len) as u8);
                    let before = buf.clone();
                    let (lo, hi) = buf.split_at_mut(dst_at);
                    p.copy(&mut hi[..len], &lo[src_at..src_at + len], Mode::Temporal);
                    let what = format!("{b} gap {gap} len {len} +{d_o}");
                    assert_eq!(
                        buf[dst_at..dst_at + len],
                        before[src_at..src_at + len],
                        "{what}"
                    );
                    assert_eq!(buf[..dst_at], before[..dst_at], "{what}: below changed");
                    assert_eq!(buf[dst_at + len..], before[dst_at + len..], "{what}: above");
                }
            }
        }
        // And never: the vector loop at every size.
        let p = plan(|t| (t.engine, t.rep_movsb) = (Engine::uniform(b), usize::MAX)).unwrap();
        let large = scaled((3 << 20) + 5, (16 << 10) + 5);
        let src = pattern(large + 64, 9);
        let mut dst = Vec::new();
        for len in [4095, large] {
            check_copy(p, Mode::Temporal, 3, 7, len, &src, &mut dst);
        }
    }
}

/// The string store (`fill_rep`) from 0 bytes on every backend: the fill tables and guard
/// pages, so the 64-byte alignment head and the string body meet every offset and length.
#[test]
fn string_stores_on_every_backend() {
    let mut lens: Vec<usize> = (0..=300).collect();
    lens.extend(boundary_lengths());
    lens.extend([4095, 4096, 4097, 65537]);
    for &b in Backend::supported() {
        let p = plan(|t| (t.engine, t.fill_rep) = (Engine::uniform(b), 0)).unwrap();
        table_fill(p);
        table_fill_guard_pages(p, &lens);
        let p = plan(|t| (t.engine, t.fill_rep) = (Engine::uniform(b), usize::MAX)).unwrap();
        let mut dst = Vec::new();
        for len in [4095, scaled((3 << 20) + 5, (64 << 10) + 5)] {
            check_fill(p, Mode::Temporal, 7, len, 0xa5, &mut dst);
        }
    }
}

/// Lengths around `groups` whole groups of `pages` pages: a group short by a byte, exact, and
/// with a partial line, a whole line, a page and a bit more after it.
fn page_lengths(pages: usize) -> Vec<usize> {
    let g = pages * 4096;
    let mut v = vec![];
    for groups in [1, 2] {
        for extra in [0, 1, 63, 64, 65, 4095, 4097, 3 * 4096 + 65] {
            v.push(groups * g + extra);
        }
        v.push(groups * g - 1);
    }
    v
}

/// Streamed copies and disjoint moves reading 1, 2, 4 or 8 source pages at once, on every
/// engine, the buffers flush against guard pages; other counts are refused.
#[test]
fn every_page_count_streams_exactly() {
    let counts: &[usize] = if miri() { &[1, 4] } else { &[1, 2, 4, 8] };
    for &pages in counts {
        for &e in Engine::supported() {
            let p = plan(|t| (t.engine, t.pages) = (e, pages)).unwrap();
            let lens = page_lengths(pages);
            let lens = if miri() { &lens[..2] } else { &lens[..] };
            for &len in lens {
                let want = pattern(len, len as u8);
                for (s_end, off) in [(true, None), (false, Some(1)), (true, Some(63))] {
                    for moves in [false, true] {
                        streamed(&p, &want, s_end, off, moves);
                    }
                }
            }
        }
    }
    for bad in [0, 3, 5, 16] {
        assert!(plan(|t| t.pages = bad).is_err(), "pages={bad}");
    }
}

/// Copies `want` with `p`'s `NonTemporal` from a source flush against one of its guard pages
/// into a destination `off` bytes into a region of canaries, or flush against that region's
/// high guard page (`off == None`); or (`moves`) moves it within one buffer whose end is flush
/// against a guard page, from its start to `off` bytes past it (disjoint ranges, the move that
/// streams by pages); checks every byte of the region.
fn streamed(p: &Plan, want: &[u8], s_end: bool, off: Option<usize>, moves: bool) {
    let len = want.len();
    let what = format!("{p:?} len {len} off {off:?} src at end {s_end} move {moves}");
    if moves {
        let gap = off.unwrap_or(0);
        let room = 2 * len + gap + 64;
        let mut g = Guarded::new(room);
        let region = g.at(s_end, room);
        region.fill(CANARY);
        region[..len].copy_from_slice(want);
        let to = len + gap;
        p.copy_within(region, ..len, to, Mode::NonTemporal);
        assert!(region[to..to + len] == *want, "{what}");
        assert!(region[..len] == *want, "{what}: the source changed");
        assert!(
            all_bytes(&region[len..to], CANARY) && all_bytes(&region[to + len..], CANARY),
            "{what}: a byte outside the destination changed"
        );
        return;
    }
    let mut s = Guarded::new(len);
    let src = s.at(s_end, len);
    src.copy_from_slice(want);
    let room = len + 128;
    let mut d = Guarded::new(room);
    let region = d.at_end(room);
    region.fill(CANARY);
    let at = off.unwrap_or(room - len);
    let (before, rest) = region.split_at_mut(at);
    let (dst, after) = rest.split_at_mut(len);
    p.copy(dst, src, Mode::NonTemporal);
    assert!(dst == want, "{what}");
    assert!(
        all_bytes(before, CANARY) && all_bytes(after, CANARY),
        "{what}: a byte outside the destination changed"
    );
}

/// The record with masked fills, where this CPU runs them.
fn masked() -> Result<Plan, tune::Unsupported> {
    plan(|t| t.small = Small::MaskedFills)
}

/// Every fill of 0..=130 bytes at every offset within 64 bytes of either guard page through
/// `p` (a masked-off byte on a `PROT_NONE` page must neither fault nor be written), and copies
/// and moves the same way (they keep the plain classes), beside canaries.
fn small_sweep(p: &Plan) {
    let lens = cases(0..=130, [0, 1, 3, 4, 15, 16, 31, 32, 63, 64, 65]);
    let gaps = cases(0..64, [0, 1, 63]);
    let room = 130 + 64;
    let (mut s, mut d) = (Guarded::new(room), Guarded::new(room));
    for &len in &lens {
        let want = pattern(len, len as u8);
        for &gap in &gaps {
            for d_end in [false, true] {
                let buf = d.at(d_end, len + gap);
                buf.fill(CANARY);
                let (pad, dst) = if d_end {
                    let (dst, pad) = buf.split_at_mut(len);
                    (pad, dst)
                } else {
                    buf.split_at_mut(gap)
                };
                let byte = 0x5a ^ len as u8;
                for mode in Mode::ALL {
                    p.fill(dst, byte, mode);
                    assert!(all_bytes(dst, byte), "fill {len} B gap {gap} {mode}");
                }
                assert!(
                    all_bytes(pad, CANARY),
                    "fill {len} B gap {gap}: the gap changed"
                );
                let sbuf = s.at(!d_end, len + gap);
                let src = if d_end {
                    &mut sbuf[gap..]
                } else {
                    &mut sbuf[..len]
                };
                src.copy_from_slice(&want);
                p.copy(dst, src, Mode::Temporal);
                assert!(dst == &want[..], "copy {len} B gap {gap}");
            }
        }
    }
    let max = if miri() { 20 } else { 64 };
    let mut g = Guarded::new(3 * max);
    for len in 0..=max {
        for dist in 0..=max {
            for up in [false, true] {
                let n = len + dist;
                let buf = g.at_end(n);
                let init = pattern(n, dist as u8);
                buf.copy_from_slice(&init);
                let (from, to) = if up { (0, dist) } else { (dist, 0) };
                p.copy_within(buf, from..from + len, to, Mode::Temporal);
                let mut want = init.clone();
                want.copy_within(from..from + len, to);
                assert_eq!(buf, &want[..], "move {len} B by {dist}, up {up}");
            }
        }
    }
}

/// Whether this CPU runs the small-fill variant `s` (a model of the requirements, not the
/// library's check).
fn runs_small(s: Small) -> bool {
    match s {
        Small::MaskedFills => runs_masked_small(),
        Small::AvxPairs => cfg!(all(target_arch = "x86_64", not(miri))) && runs(Backend::Avx2),
        _ => true,
    }
}

#[test]
fn small_fills_of_every_variant() {
    for s in [Small::Plain, Small::MaskedFills, Small::AvxPairs] {
        match plan(|t| t.small = s) {
            Ok(p) => {
                assert!(runs_small(s), "{s} built here");
                assert_eq!(p.tuning().small, s);
                small_sweep(&p);
            }
            Err(e) => {
                assert!(!runs_small(s), "{s} refused here: {e}");
                assert!(rule().with_line(&format!("small={s}")).is_err());
            }
        }
    }
}

#[test]
#[ignore = "asserts AVX-512 with BMI2; .ci/run runs it under Bochs"]
fn small_masked_avx512() {
    let p = masked().expect("this CPU runs the masked class");
    small_sweep(&p);
    // Through the published entry points too.
    let _held = PUBLISH.lock().unwrap_or_else(|e| e.into_inner());
    let before = Plan::current();
    tune::publish(common::keep(p));
    small_sweep(Plan::current());
    tune::publish(before);
    println!("cachecopy: AVX512 MASKED SMALL CLASSES EXERCISED");
}

/// The 256-bit backend's copies with the AVX-512 loop from 0 bytes, every copy table.
fn wide_sweep(p: Plan, light: bool) {
    if !light {
        table_all_lengths(p);
        table_offsets(p);
    }
    table_large(p);
    table_guard_pages(p);
}

/// The plan with `wide_copy=0` on the 256-bit backend.
fn wide() -> Result<Plan, tune::Unsupported> {
    plan(|t| (t.engine.temporal, t.wide_copy) = (Backend::Avx2, 0))
}

#[test]
fn wide_copies_or_refused() {
    if !runs(Backend::Avx2) {
        return;
    }
    match wide() {
        Ok(p) => {
            assert!(runs(Backend::Avx512));
            wide_sweep(p, miri());
        }
        Err(_) => assert!(!runs(Backend::Avx512)),
    }
}

#[test]
#[ignore = "asserts AVX-512; .ci/run runs it under Bochs"]
fn wide_copies_avx512() {
    let p = wide().expect("this CPU runs AVX-512");
    assert_eq!(p.tuning().engine.temporal, Backend::Avx2);
    wide_sweep(p, true);
    println!("cachecopy: AVX512 WIDE COPIES EXERCISED");
}

/// The lengths the C entries are run at: every one to `top`, then a few around the streaming
/// bounds and past them (`light`: to 130 and three large ones).
fn entry_lengths(light: bool) -> Vec<usize> {
    if miri() {
        return vec![0, 1, 3, 4, 15, 16, 31, 32, 33, 63, 64, 65, 129, 257];
    }
    let top = if light { 130 } else { 1100 };
    let mut v: Vec<usize> = (0..=top).collect();
    if !miri() {
        v.extend([4095, 4096, 64 << 10, (1 << 20) + 7]);
        if !light {
            v.extend([1500, 2049, 8 << 10, (9 << 20) + 3]);
        }
    }
    v
}

/// `e`'s `memmove` and `memset` at every length of [`entry_lengths`], each buffer flush against a
/// `PROT_NONE` guard page at either end and a few bytes from it (a masked window that reaches
/// the guard must neither fault nor write), against a reference, the bytes beside the
/// destination unchanged, the return value the destination; then overlapping moves in both
/// directions at distances from 1 byte to past a register.
fn entries_sweep(e: CEntries, light: bool) {
    let lens = entry_lengths(light);
    let max = *lens.iter().max().unwrap();
    let gaps: &[usize] = if light || miri() {
        &[0, 1, 63]
    } else {
        &[0, 1, 5, 33, 63]
    };
    let (mut s, mut d) = (Guarded::new(max + 64), Guarded::new(max + 64));
    for &len in &lens {
        let want = pattern(len, len as u8);
        let gaps = if len > 4096 { &gaps[..1] } else { gaps };
        for &gap in gaps {
            for (s_end, d_end) in [(false, false), (true, true), (false, true), (true, false)] {
                let sbuf = s.at(s_end, len + gap);
                let src = if s_end {
                    &mut sbuf[..len]
                } else {
                    &mut sbuf[gap..]
                };
                src.copy_from_slice(&want);
                let (sp, dbuf) = (src.as_ptr(), d.at(d_end, len + gap));
                dbuf.fill(CANARY);
                let (dst, pad) = if d_end {
                    let (dst, pad) = dbuf.split_at_mut(len);
                    (dst, pad)
                } else {
                    let (pad, dst) = dbuf.split_at_mut(gap);
                    (dst, pad)
                };
                let dp = dst.as_mut_ptr();
                // SAFETY: `sp` readable and `dp` writable for `len` bytes, disjoint.
                let r = unsafe { (e.memmove)(dp.cast(), sp.cast(), len) };
                assert_eq!(r, dp.cast(), "memmove {len} B gap {gap}: the return value");
                assert!(
                    dst == &want[..],
                    "memmove {len} B gap {gap} {s_end} {d_end}"
                );
                assert!(
                    all_bytes(pad, CANARY),
                    "memmove {len} B gap {gap}: beside it"
                );
                let byte = 0x5a ^ len as u8;
                // SAFETY: `dp` writable for `len` bytes; the int's high bits are ignored.
                let r = unsafe { (e.memset)(dp.cast(), 0x7700 | i32::from(byte), len) };
                assert_eq!(r, dp.cast(), "memset {len} B gap {gap}: the return value");
                assert!(all_bytes(dst, byte), "memset {len} B gap {gap} {d_end}");
                assert!(
                    all_bytes(pad, CANARY),
                    "memset {len} B gap {gap}: beside it"
                );
            }
        }
    }
    let (lens, dists): (&[usize], &[usize]) = if light || miri() {
        (&[0, 1, 17, 64, 65, 130], &[1, 7, 32, 64])
    } else {
        (
            &[
                0, 1, 3, 8, 17, 31, 32, 33, 63, 64, 65, 100, 128, 129, 256, 257, 1000, 1024, 5000,
            ],
            &[1, 2, 7, 16, 31, 32, 33, 63, 64, 65, 200, 1000],
        )
    };
    let mut g = Guarded::new(2 * 5000 + 2000);
    for &len in lens {
        for &dist in dists {
            for up in [false, true] {
                let n = len + dist;
                let buf = g.at_end(n);
                let init = pattern(n, dist as u8);
                buf.copy_from_slice(&init);
                let (from, to) = if up { (0, dist) } else { (dist, 0) };
                let p = buf.as_mut_ptr();
                // SAFETY: both ranges inside `buf`; overlap is allowed.
                let r = unsafe { (e.memmove)(p.add(to).cast(), p.add(from).cast(), len) };
                assert_eq!(r, p.wrapping_add(to).cast());
                let mut want = init.clone();
                want.copy_within(from..from + len, to);
                assert!(buf == &want[..], "memmove {len} B by {dist}, up {up}");
            }
        }
    }
}

/// Every variant of the C entries this CPU runs: the temporal backend of every engine (each
/// edge store), with the string-move and string-store variants from 0 bytes and without, the
/// wide loop where the CPU runs AVX-512, every small-fill and small-copy variant the CPU runs;
/// the variants it does not run are refused by the plan.
#[test]
fn c_entries_of_every_variant() {
    let mut temporal: Vec<(Backend, Edges)> = vec![];
    for e in Engine::supported() {
        if !temporal.contains(&(e.temporal, e.edges)) {
            temporal.push((e.temporal, e.edges));
        }
    }
    for &(b, edges) in &temporal {
        for sized in [false, true] {
            let p = plan(|t| {
                t.engine = Engine::new(b, t.engine.stream, edges);
                t.engine.stream = b;
                (t.rep_movsb, t.fill_rep) = if sized {
                    (0, 0)
                } else {
                    (usize::MAX, usize::MAX)
                };
                t.wide_copy = usize::MAX;
                (t.small, t.entry_copy) = (Small::Plain, EntryCopy::Plain);
            })
            .unwrap();
            entries_sweep(c_entries(&p), miri());
        }
    }
    for s in [Small::MaskedFills, Small::AvxPairs] {
        match plan(|t| t.small = s) {
            Ok(p) => entries_sweep(c_entries(&p), miri()),
            Err(_) => assert!(!runs_small(s), "{s} refused here"),
        }
    }
    match plan(|t| t.entry_copy = EntryCopy::Masked) {
        Ok(p) => entries_sweep(c_entries(&p), miri()),
        Err(e) => {
            assert!(!runs_masked_small(), "entry_copy=masked refused here: {e}");
            assert!(rule().with_line("entry_copy=masked").is_err());
        }
    }
    if let Ok(p) = wide() {
        entries_sweep(c_entries(&p), miri());
    }
}

/// Each choice of a plan picks its own entries: plans that differ in the temporal backend, a
/// sized variant or a small-fill variant get different functions, plans that differ only in
/// what the entries read at run time (the thresholds) the same ones.
#[test]
fn c_entries_follow_the_plan() {
    let base = plan(|t| {
        (t.rep_movsb, t.fill_rep, t.wide_copy) = (usize::MAX, usize::MAX, usize::MAX);
        (t.small, t.entry_copy) = (Small::Plain, EntryCopy::Plain);
    })
    .unwrap();
    let e = c_entries(&base);
    let f = |e: CEntries| (e.memmove as usize, e.memset as usize);
    let same = c_entries(&plan(|t| *t = *base.tuning()).unwrap());
    assert_eq!(f(same), f(e));
    let other_nt = plan(|t| (*t, t.nt, t.fill_nt) = (*base.tuning(), 4096, 1 << 30)).unwrap();
    assert_eq!(
        f(c_entries(&other_nt)),
        f(e),
        "the thresholds are read at run time"
    );
    let movsb = plan(|t| (*t, t.rep_movsb) = (*base.tuning(), 0)).unwrap();
    assert_ne!(f(c_entries(&movsb)).0, f(e).0, "rep_movsb: the sized copy");
    assert_eq!(f(c_entries(&movsb)).1, f(e).1);
    let stosb = plan(|t| (*t, t.fill_rep) = (*base.tuning(), 0)).unwrap();
    assert_ne!(f(c_entries(&stosb)).1, f(e).1, "fill_rep: the sized fill");
    if let Ok(p) = plan(|t| (*t, t.small) = (*base.tuning(), Small::AvxPairs)) {
        assert_ne!(f(c_entries(&p)).1, f(e).1, "small=avx-pairs");
    }
    for b in Backend::supported() {
        let p = plan(|t| {
            *t = *base.tuning();
            t.engine = Engine::new(*b, *b, t.engine.edges);
        })
        .unwrap();
        assert_eq!(
            f(c_entries(&p)) == f(e),
            *b == base.tuning().engine.temporal,
            "temporal={b}"
        );
    }
}

/// The entries of the published plan, with `Auto` streaming from 4 KiB: every length through
/// the bound (the entries read the published plan's bound from `STREAM_MIN` up).
#[test]
fn c_entries_of_the_published_plan_stream_from_its_bound() {
    let _held = PUBLISH.lock().unwrap_or_else(|e| e.into_inner());
    let before = Plan::current();
    // `update` keeps the plans it makes reachable (a list it never frees): no leak for Miri.
    let p = tune::update(|t| (t.nt, t.fill_nt) = (4096, 4096)).unwrap();
    assert!(std::ptr::eq(p, Plan::current()));
    let e = c_entries(Plan::current());
    entries_sweep(e, miri());
    tune::publish(before);
}

#[test]
#[ignore = "asserts AVX-512 with BMI2; .ci/run runs it under Bochs"]
fn c_entries_masked_avx512() {
    let p = plan(|t| (t.entry_copy, t.small) = (EntryCopy::Masked, Small::MaskedFills))
        .expect("this CPU runs the masked class");
    entries_sweep(c_entries(&p), true);
    let p = plan(|t| {
        (t.entry_copy, t.small) = (EntryCopy::Masked, Small::MaskedFills);
        t.engine = Engine::new(Backend::Avx512, Backend::Avx512, Edges::Masked);
    })
    .unwrap();
    entries_sweep(c_entries(&p), true);
    println!("cachecopy: AVX512 MASKED C ENTRIES EXERCISED");
}

#[test]
fn every_flush_instruction_this_cpu_runs() {
    let cpu = tune::cpu();
    let lens = [
        0,
        1,
        63,
        64,
        65,
        1023,
        1024,
        1025,
        4097,
        scaled(70_001, 5000),
    ];
    let src = pattern(70_001 + 64, 11);
    let mut dst = Vec::new();
    for op in cpu.flush_ops() {
        let p = plan(|t| t.flush = op).unwrap();
        assert_eq!(p.tuning().flush, op);
        for len in lens {
            check_copy(p, Mode::FlushCache, 1, 5, len, &src, &mut dst);
            check_fill(p, Mode::FlushCache, 5, len, 0x3c, &mut dst);
        }
    }
    let runs_op = |op: FlushOp| cpu.flush_ops().any(|o| o == op);
    for op in [FlushOp::Clwb, FlushOp::Clflushopt, FlushOp::DcCvap] {
        if !runs_op(op) {
            assert!(plan(|t| t.flush = op).is_err(), "{op}");
        }
    }
}

/// The header a frame test writes: it checks it was given `head` zeroed bytes, then writes a
/// pattern of the payload's length and sum.
fn frame_header(hdr: &mut [u8], head: usize, len: usize, sum: u32) {
    assert_eq!(hdr.len(), head);
    assert!(hdr.iter().all(|&b| b == 0), "the header bytes start zeroed");
    for (i, b) in hdr.iter_mut().enumerate() {
        *b = (len as u32 ^ sum ^ (i as u32 * 0x9d)) as u8 | 1;
    }
}

/// Frames built through the published entry points (`csum_frame_from_iter` and a batch's):
/// headers inside one line, ending on one, crossing one (the payload 65 to 105 bytes past a
/// line: the frames `frame=header-down` changes) and spanning several, at every line
/// alignment, from `udp_tx`'s iovecs and others, in every mode; the payload, its sum and the
/// header against the reference, and nothing outside the frame written.
fn frame_sweep() {
    let heads: &[usize] = if miri() {
        &[0, 14, 42, 65]
    } else {
        &[0, 1, 14, 42, 63, 64, 65, 100, 118, 192]
    };
    let starts: Vec<usize> = if miri() {
        vec![0, 24, 63]
    } else {
        (0..64).collect()
    };
    let layouts: &[&[usize]] = if miri() {
        &[&[13, 1, 100]]
    } else {
        &[&[1200, 13, 1, 258], &[22, 1], &[3, 0, 64, 7, 300]]
    };
    for (li, lens) in layouts.iter().enumerate() {
        let total: usize = lens.iter().sum();
        let data: Vec<u8> = (0..total).map(|i| (i * 7 + li * 13 + 5) as u8).collect();
        let mut segs = Vec::new();
        let mut at = 0;
        for &n in lens.iter() {
            segs.push(IoVec::new(&data[at..at + n]));
            at += n;
        }
        let mut buf = vec![0u8; 64 + 192 + total + 64];
        for (mi, mode) in Mode::ALL.into_iter().enumerate() {
            for &head in heads {
                for &start in &starts {
                    // Every head and start meets every mode for some layout.
                    if (start + head + li) % Mode::ALL.len() != mi % Mode::ALL.len() {
                        continue;
                    }
                    for batched in [false, true] {
                        let what = format!("{lens:?} {mode:?} head {head} at {start} {batched}");
                        buf.fill(0xee);
                        let end = start + head + total;
                        let frame = &mut buf[start..end];
                        let mut src = Source::iovec(&segs);
                        let cb = |h: &mut [u8], n: usize, s: u32| frame_header(h, head, n, s);
                        let (n, sum) = if batched {
                            cachecopy::batch(mode, |b| {
                                b.csum_frame_from_iter(frame, head, &mut src, cb)
                            })
                        } else {
                            csum_frame_from_iter(frame, head, &mut src, mode, cb)
                        };
                        assert_eq!(n, total, "{what}");
                        assert_eq!(csum_fold(sum), reference_sum(&data), "{what}");
                        let mut want = vec![0u8; head];
                        frame_header(&mut want, head, total, sum);
                        assert_eq!(&buf[start..start + head], &want[..], "{what}");
                        assert_eq!(&buf[start + head..end], &data[..], "{what}");
                        assert!(
                            buf[..start].iter().chain(&buf[end..]).all(|&b| b == 0xee),
                            "{what}: wrote outside the frame"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn frames_with_every_header_order() {
    let _held = PUBLISH.lock().unwrap_or_else(|e| e.into_inner());
    let before = Plan::current();
    for order in [FrameBuild::Plain, FrameBuild::HeaderDown] {
        let p = plan(|t| t.frame = order).expect("every CPU runs both orders");
        assert_eq!(p.tuning().frame, order);
        tune::publish(common::keep(p));
        frame_sweep();
    }
    tune::publish(before);
}

#[test]
fn every_field_of_the_line_reads_back_and_bad_ones_are_refused() {
    let t = rule();
    for (line, check) in [
        (
            "nt=16M",
            (|t: &Tuning| t.nt == 16 << 20) as fn(&Tuning) -> bool,
        ),
        ("fill_nt=2K", |t| t.fill_nt == 2048),
        ("rep_movsb=never", |t| t.rep_movsb == usize::MAX),
        ("fill_rep=1g", |t| t.fill_rep == 1 << 30),
        (" nt = 1000 , ,fill_nt=7", |t| {
            t.nt == 1000 && t.fill_nt == 7
        }),
        ("pages=8", |t| t.pages == 8),
        ("small=plain", |t| t.small == Small::Plain),
        ("wide_copy=never", |t| t.wide_copy == usize::MAX),
        ("entry_copy=plain", |t| t.entry_copy == EntryCopy::Plain),
        ("frame=header-down", |t| t.frame == FrameBuild::HeaderDown),
        ("frame=PLAIN", |t| t.frame == FrameBuild::Plain),
        ("body=generic", |t| {
            (t.engine.temporal, t.engine.stream) == (Backend::Generic, Backend::Generic)
        }),
        ("temporal=generic,edges=overlap", |t| {
            t.engine.temporal == Backend::Generic
        }),
    ] {
        let got = t.with_line(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(check(&got), "{line}: {got}");
        // Its own line builds the same record again.
        assert_eq!(t.with_line(&got.to_string()).unwrap(), got, "{line}");
    }
    for (line, field) in [
        ("nt=lots", "nt=lots"),
        ("nt=16M,speed=max", "speed=max"),
        ("pages=3", "pages=3"),
        ("frame=down", "frame=down"),
        ("nt", "nt"),
        ("body=sse9", "body=sse9"),
        ("nt=99999999999999999999999", "nt=99999999999999999999999"),
        ("calibrate", "calibrate"),
    ] {
        let e = t.with_line(line).unwrap_err();
        assert_eq!(e.field(), field, "{line}: {e}");
        assert!(
            e.to_string().contains("expected") || line == "calibrate",
            "{e}"
        );
    }
    for b in ALL_BACKENDS.into_iter().filter(|&b| !runs(b)) {
        assert!(t.with_line(&format!("body={b}")).is_err(), "{b}");
    }
}

/// Plans published one after another while other threads copy, fill, sum and gather through
/// the published entry points: whatever plan a call starts with, it finishes on it, and every
/// byte is right.
#[test]
fn calls_in_flight_finish_on_their_plan() {
    let _held = PUBLISH.lock().unwrap_or_else(|e| e.into_inner());
    let before = Plan::current();
    let values = [0, 1, 1024, 4097, 1 << 30, usize::MAX];
    let plans: Vec<&'static Plan> = values
        .iter()
        .flat_map(|&v| {
            [
                plan(|t| t.nt = v),
                plan(|t| t.fill_nt = v),
                plan(|t| (t.fill_rep, t.rep_movsb) = (v, v)),
            ]
        })
        .map(|p| common::keep(p.unwrap()))
        .collect();
    let lens: &[usize] = if miri() {
        &[1, 40, 1100]
    } else {
        &[0, 1, 31, 33, 1023, 1024, 1025, 4096, 4097, 65_537, 300_001]
    };
    let rounds = if miri() { 2 } else { 30 };
    let stop = Arc::new(AtomicBool::new(false));
    let publisher = {
        let (stop, plans) = (stop.clone(), plans.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) || n < plans.len() {
                tune::publish(plans[n % plans.len()]);
                n += 1;
                if miri() {
                    std::thread::yield_now();
                }
            }
        })
    };
    let workers: Vec<_> = (0..if miri() { 2 } else { 3 })
        .map(|w| {
            let lens = lens.to_vec();
            std::thread::spawn(move || {
                for round in 0..rounds {
                    for &len in &lens {
                        let mode = Mode::ALL[(round + w + len) % 4];
                        let src = pattern(len, (round * 7 + w) as u8);
                        let what = format!("worker {w} round {round} {mode} len {len}");
                        let mut dst = vec![0u8; len];
                        cachecopy::copy(&mut dst, &src, mode);
                        assert!(dst == src, "copy {what}");
                        let byte = (round + len) as u8 | 1;
                        cachecopy::fill(&mut dst, byte, mode);
                        assert!(all_bytes(&dst, byte), "fill {what}");
                        let sum = csum_and_copy(&mut dst, &src, mode);
                        assert!(dst == src, "csum_and_copy {what}");
                        assert_eq!(csum_fold(sum), reference_sum(&src), "sum {what}");
                        let (a, c) = (len / 3, len / 3 + len / 7);
                        let segs = [
                            IoVec::new(&src[..a]),
                            IoVec::new(&src[a..c]),
                            IoVec::new(&src[c..]),
                        ];
                        dst.fill(0);
                        let n = copy_from_iter(&mut dst, &mut Source::iovec(&segs), mode);
                        assert_eq!(n, len, "gather {what}");
                        assert!(dst == src, "gather {what}");
                        let mut buf = pattern(len + 100, w as u8);
                        let mut want = buf.clone();
                        cachecopy::copy_within(&mut buf, ..len, 100, mode);
                        want.copy_within(..len, 100);
                        assert!(buf == want, "move {what}");
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    publisher.join().unwrap();
    tune::publish(before);
    assert!(std::ptr::eq(Plan::current(), before));
}
