//! Moves whose ranges overlap (`cachecopy::copy_within`) against glibc `memmove`
//! (`slice::copy_within`): small moves into a hot buffer (1 B .. 4 KiB, by a third of the length
//! plus one byte) and large moves into cold buffers (64 KiB .. 64 MiB, by one page), down
//! (destination below the source) and up. Every backend's Temporal move (`copy_within_with_engine`)
//! and the public `copy_within` (inline below 129 bytes, dispatched above) in Temporal,
//! NonTemporal and Auto. Prints the ratios to memmove.
//!
//! `cargo bench --bench moves -- --warm-up-time 0.5 --measurement-time 2 --noplot`
//! (`CACHECOPY_BENCH_QUICK=1` takes four hot and two cold sizes.)

#[path = "util/mod.rs"]
mod util;

use std::hint::black_box;

use cachecopy::raw::copy_within_with_engine;
use cachecopy::tune::{Backend, Engine};
use cachecopy::{copy_within, Mode};
use criterion::Criterion;
use util::{print_ratios, timed, Dest};

/// One move of `len` bytes by `dist`, down or up, in `buf` (`len + dist` bytes or more).
/// What runs a move: `None` for memmove; else the engine (or the public entry) and the mode.
type How = Option<(Option<Engine>, Mode)>;

/// `how`: `None` for memmove, an engine for `copy_within_with_engine`, no engine for the
/// public `copy_within` (its inline path for small moves, dispatch above).
fn moved(buf: &mut [u8], len: usize, dist: usize, down: bool, how: How) {
    let (src, dest) = if down { (dist, 0) } else { (0, dist) };
    let src = black_box(src);
    match how {
        None => buf.copy_within(src..src + len, dest),
        Some((None, m)) => copy_within(buf, src..src + len, dest, m),
        Some((Some(e), m)) => copy_within_with_engine(e, buf, src..src + len, dest, m).unwrap(),
    }
    black_box(buf);
}

fn bench(c: &mut Criterion) {
    let quick = std::env::var_os("CACHECOPY_BENCH_QUICK").is_some();
    let hot: Vec<usize> = if quick {
        vec![1, 16, 256, 4096]
    } else {
        (0..=12).map(|k| 1 << k).collect()
    };
    let cold: Vec<usize> = if quick {
        vec![64 << 10, 16 << 20]
    } else {
        vec![64 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
    };
    let mut variants: Vec<(String, How)> = vec![("memmove".into(), None)];
    for &b in Backend::supported() {
        variants.push((
            format!("{}-t", b.name()),
            Some((Some(b.into()), Mode::Temporal)),
        ));
    }
    for (name, mode) in [
        ("t", Mode::Temporal),
        ("nt", Mode::NonTemporal),
        ("auto", Mode::Auto),
    ] {
        variants.push((format!("copy_within-{name}"), Some((None, mode))));
    }
    let mut arena = util::arena(cold.last().unwrap() + 4096);
    let page = 4096;
    for down in [true, false] {
        let group = if down { "move-down" } else { "move-up" };
        for (dest, sizes) in [(Dest::Hot, &hot), (Dest::Cold, &cold)] {
            for &len in sizes {
                let dist = if dest == Dest::Hot { len / 3 + 1 } else { page };
                let mut g = util::group(c, group, dest, len);
                for (name, how) in &variants {
                    g.bench_function(name, |b| {
                        timed(b, (group, len, dest, name), || {
                            moved(arena.dest(dest, len + dist), len, dist, down, *how)
                        })
                    });
                }
                g.finish();
            }
        }
    }
}

fn main() {
    util::run(bench);
    println!(
        "\nengine: {}",
        cachecopy::tune::Plan::current().tuning().engine
    );
    print_ratios("move-down", "memmove");
    print_ratios("move-up", "memmove");
}
