//! Moves whose ranges overlap (`copy_within`, `move_raw`, `Batch::copy_within`): every distance
//! from -256 to 256 bytes and at line and page multiples, lengths across every size class and
//! past the streaming cut-over, both directions, every mode and engine, against
//! `slice::copy_within` (`ptr::copy`) on a copy of the whole buffer, inside guard pages.

#[macro_use]
mod common;

use cachecopy::{batch, copy_within, move_raw, Mode};
use common::moves::{check, distances, lengths, noise};
use common::{engines, miri, Guarded};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Every distance at every length, every mode, every engine whose code differs.
#[test]
fn every_distance_every_length() {
    let (dists, lens) = (distances(), lengths());
    let max = lens.iter().max().unwrap() + dists.iter().map(|d| d.unsigned_abs()).max().unwrap();
    let data = noise(max, 1);
    let mut g = Guarded::new(max);
    for engine in engines() {
        for mode in Mode::ALL {
            for &len in &lens {
                // Under Miri, each length at a few distances in turn (all of them in total).
                let pick: Vec<isize> = if miri() {
                    let i = lens.iter().position(|&l| l == len).unwrap();
                    dists.iter().copied().skip(i % 6).step_by(6).collect()
                } else {
                    dists.clone()
                };
                for dist in pick {
                    check(&mut g, &data, engine, mode, len, dist);
                }
            }
        }
    }
}

/// The dispatching entry points at every length to 1 KiB, every distance in -256..=256, every
/// mode, inside guard pages: `move_raw` (and `copy_within`, `Batch::copy_within` up to 128 bytes)
/// reach the call site's classes (`kernel::small`, to 64 bytes on SSE2 and NEON, 32 on words)
/// and the tail jump into the active engine's move kernel past them, which
/// `every_distance_every_length` (through `copy_within_with_engine`, the table at every size)
/// does not.
#[test]
fn inline_and_tail_jump_every_length_every_distance() {
    let (lens, dists, modes): (Vec<usize>, Vec<isize>, &[Mode]) = if miri() {
        (
            vec![0, 1, 2, 5, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 129],
            vec![-65, -33, -16, -7, -1, 1, 2, 8, 31, 64],
            &[Mode::Temporal, Mode::Auto],
        )
    } else {
        ((0..=1024).collect(), (-256..=256).collect(), &Mode::ALL)
    };
    let max = lens.iter().max().unwrap() + dists.iter().map(|d| d.unsigned_abs()).max().unwrap();
    let data = noise(max, 6);
    let mut g = Guarded::new(max);
    for (i, &len) in lens.iter().enumerate() {
        // Under Miri each length at two of the distances in turn (all of them in total).
        let pick: Vec<isize> = if miri() {
            dists.iter().copied().skip(i % 5).step_by(5).collect()
        } else {
            dists.clone()
        };
        for dist in pick {
            let n = len + dist.unsigned_abs();
            let src = if dist < 0 { dist.unsigned_abs() } else { 0 };
            let dest = src.wrapping_add_signed(dist);
            let mut want = data[..n].to_vec();
            want.copy_within(src..src + len, dest);
            for &mode in modes {
                for at_end in [false, true] {
                    let buf = if at_end { g.at_end(n) } else { g.at_start(n) };
                    buf.copy_from_slice(&data[..n]);
                    let p = buf.as_mut_ptr();
                    // SAFETY: both ranges inside `buf`; overlap is allowed.
                    unsafe { move_raw(p.add(dest), p.add(src), len, mode) };
                    assert!(
                        *buf == want[..],
                        "move_raw {mode:?} len {len} by {dist} (high guard: {at_end})"
                    );
                    if len > 128 {
                        continue;
                    }
                    buf.copy_from_slice(&data[..n]);
                    copy_within(buf, src..src + len, dest, mode);
                    assert!(*buf == want[..], "copy_within {mode:?} len {len} by {dist}");
                    buf.copy_from_slice(&data[..n]);
                    batch(mode, |bt| bt.copy_within(buf, src..src + len, dest));
                    assert!(
                        *buf == want[..],
                        "Batch::copy_within {mode:?} len {len} by {dist}"
                    );
                }
            }
        }
    }
}

/// Large moves, past the streaming cut-over and past `Auto`'s threshold (on the active engine,
/// where `Auto` streams), by short, line, page and large distances, both directions.
#[test]
fn large_moves() {
    if miri() {
        return; // the sweep above runs every shape at 1100 bytes under Miri
    }
    let auto = cachecopy::tune::Plan::current().tuning().nt.min(64 << 20) + 4096 + 17;
    let dists = [1isize, 63, 64, 4096, 4097, 1 << 16, 3 << 20];
    let big = auto + (3 << 20);
    let data = noise(big, 2);
    let mut g = Guarded::new(big);
    for engine in engines() {
        for mode in Mode::ALL {
            for len in [(64 << 10) + 5, (1 << 20) - 33] {
                for &d in &dists {
                    check(&mut g, &data, engine, mode, len, d);
                    check(&mut g, &data, engine, mode, len, -d);
                }
            }
        }
    }
    let active = cachecopy::tune::Plan::current().tuning().engine;
    for mode in [Mode::Auto, Mode::NonTemporal, Mode::Temporal] {
        for &d in &dists {
            check(&mut g, &data, active, mode, auto, d);
            check(&mut g, &data, active, mode, auto, -d);
        }
    }
}

/// `copy_within` and `move_raw` on the active engine, and `Batch::copy_within` in every mode,
/// agree with `slice::copy_within`.
#[test]
fn entry_points_agree() {
    // The inline sizes (to 64 bytes) and their edges, a dispatched one, a streamed one.
    let (lens, dists): (&[usize], &[isize]) = if miri() {
        (&[0, 1, 17, 33, 64, 65, 1100], &[-3, 33])
    } else {
        (
            &[
                0, 1, 2, 5, 15, 16, 17, 31, 32, 33, 40, 63, 64, 65, 1100, 70_000,
            ],
            &[-4097, -33, -3, -1, 1, 3, 33, 4097],
        )
    };
    for &len in lens {
        for &dist in dists {
            let n = len + dist.unsigned_abs();
            let src = if dist < 0 { dist.unsigned_abs() } else { 0 };
            let dest = src.wrapping_add_signed(dist);
            let data = noise(n, 3);
            let mut want = data.clone();
            want.copy_within(src..src + len, dest);
            for mode in Mode::ALL {
                let mut a = data.clone();
                copy_within(&mut a, src..src + len, dest, mode);
                assert_eq!(a, want, "copy_within {mode:?} len {len} by {dist}");
                let mut b = data.clone();
                let p = b.as_mut_ptr();
                // SAFETY: both ranges inside `b`.
                unsafe { move_raw(p.add(dest), p.add(src), len, mode) };
                assert_eq!(b, want, "move_raw {mode:?} len {len} by {dist}");
                let (mut c, mut d) = (data.clone(), data.clone());
                batch(mode, |bt| {
                    bt.copy_within(&mut c, src..src + len, dest);
                    bt.copy_within(&mut d, src..src + len, dest);
                });
                assert!(
                    c == want && d == want,
                    "Batch::copy_within {mode:?} len {len}"
                );
            }
        }
    }
}

/// Every bad range panics where `slice::copy_within` does, and nothing is written then; every
/// good one moves as it does.
#[test]
fn bad_ranges_panic_like_slice_copy_within() {
    use std::ops::Bound::{self, Excluded, Included, Unbounded};
    // The expected panics would print thousands of messages: silence this test's thread only.
    let hook = std::sync::Arc::new(std::panic::take_hook());
    let prev = hook.clone();
    std::panic::set_hook(Box::new(move |info| {
        let me = std::thread::current();
        if me.name() != Some("bad_ranges_panic_like_slice_copy_within") {
            prev(info)
        }
    }));
    let len = 10usize;
    let values: &[usize] = if miri() {
        &[0, 11, usize::MAX]
    } else {
        &[0, 1, 5, 9, 10, 11, usize::MAX]
    };
    let modes: &[Mode] = if miri() {
        &[Mode::Temporal]
    } else {
        &Mode::ALL
    };
    let bounds = |v: usize| [Included(v), Excluded(v)];
    let mut starts: Vec<Bound<usize>> = vec![Unbounded];
    let mut ends: Vec<Bound<usize>> = vec![Unbounded];
    for &v in values {
        starts.extend(bounds(v));
        ends.extend(bounds(v));
    }
    let data = noise(len, 4);
    for &s in &starts {
        for &e in &ends {
            for &dest in values {
                let mut want = data.clone();
                let std_ok =
                    catch_unwind(AssertUnwindSafe(|| want.copy_within((s, e), dest))).is_ok();
                for &mode in modes {
                    let mut got = data.clone();
                    let ok = catch_unwind(AssertUnwindSafe(|| {
                        copy_within(&mut got, (s, e), dest, mode)
                    }))
                    .is_ok();
                    assert_eq!(ok, std_ok, "{s:?}..{e:?} to {dest}: std ok {std_ok}");
                    if ok {
                        assert_eq!(got, want, "{s:?}..{e:?} to {dest} {mode:?}");
                    } else {
                        assert_eq!(
                            got, data,
                            "{s:?}..{e:?} to {dest}: written before the panic"
                        );
                    }
                }
            }
        }
    }
}

#[test]
#[should_panic(expected = "cachecopy::copy_within: dest is out of bounds")]
fn dest_past_the_end_panics() {
    copy_within(&mut [0u8; 8], 2..6, 5, Mode::Temporal);
}

#[test]
#[should_panic(expected = "cachecopy::copy_within: source range ends past the buffer (9 > 8)")]
fn source_past_the_end_panics() {
    copy_within(&mut [0u8; 8], 2..9, 0, Mode::NonTemporal);
}

#[test]
#[should_panic(expected = "cachecopy::copy_within: source range starts after its end (5 > 4)")]
fn reversed_source_panics() {
    #[allow(clippy::reversed_empty_ranges)]
    copy_within(&mut [0u8; 8], 5..4, 0, Mode::Auto);
}

#[test]
#[should_panic(expected = "cachecopy::Batch::copy_within: dest is out of bounds")]
fn batch_bad_dest_panics() {
    let mut buf = [0u8; 8];
    batch(Mode::NonTemporal, |b| b.copy_within(&mut buf, 0..4, 6));
}

/// Random buffers, ranges, destinations, modes and engines against `slice::copy_within`.
#[test]
fn prop_copy_within_matches_slice() {
    quick!().quickcheck(move_case as fn(u16, u16, u16, u16, u8, u8) -> bool);
}

fn move_case(n: u16, a: u16, b: u16, dest: u16, m: u8, e: u8) -> bool {
    let n = n as usize % if miri() { 1500 } else { 6000 };
    let (a, b) = (a as usize % (n + 1), b as usize % (n + 1));
    let (start, end) = (a.min(b), a.max(b));
    let dest = dest as usize % (n - (end - start) + 1);
    let engines = engines();
    let engine = engines[e as usize % engines.len()];
    let mode = Mode::ALL[m as usize % 4];
    let data = noise(n, n as u64 ^ (a as u64) << 16);
    let mut want = data.clone();
    want.copy_within(start..end, dest);
    let mut got = data;
    cachecopy::raw::copy_within_with_engine(engine, &mut got, start..end, dest, mode).unwrap();
    got == want
}
