//! Streamed copies that read the source several pages at a time (`cachecopy::set_stream_pages`,
//! the `pages=` field of the tuning line): every engine this CPU runs, every page count, lengths
//! on both sides of whole groups of pages, misaligned ends, the buffers flush against guard
//! pages, through copies and disjoint moves; the bytes beside the destination unchanged.

mod common;

use cachecopy::{Engine, Mode};
use common::{all_bytes, pattern, Guarded, CANARY};

const PAGE: usize = 4096;

/// Lengths around `groups` whole groups of `pages` pages: a group short by a byte, exact, and
/// with a partial line, a whole line, a page and a bit more after it.
fn lengths(pages: usize) -> Vec<usize> {
    let g = pages * PAGE;
    let mut v = vec![];
    for groups in [1, 2] {
        for extra in [0, 1, 63, 64, 65, PAGE - 1, PAGE + 1, 3 * PAGE + 65] {
            v.push(groups * g + extra);
        }
        v.push(groups * g - 1);
    }
    v
}

/// Copies (or moves, `moves`) `want` with `engine` from a source flush against one of its guard
/// pages into a destination `off` bytes into a region of canaries, or flush against that
/// region's high guard page (`off == None`), and checks every byte of the region.
fn check(engine: Engine, want: &[u8], s_end: bool, off: Option<usize>, moves: bool) {
    let len = want.len();
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
    let what = format!(
        "{engine} pages={} len {len} dst+{at} src {} {}",
        cachecopy::stream_pages(),
        if s_end { "at end" } else { "at start" },
        if moves { "move" } else { "copy" }
    );
    if moves {
        // SAFETY: two distinct mappings of at least `len` bytes each.
        unsafe { cachecopy::move_raw(dst.as_mut_ptr(), src.as_ptr(), len, Mode::NonTemporal) };
    } else {
        cachecopy::copy_with_engine(engine, dst, src, Mode::NonTemporal).unwrap();
    }
    if dst != want {
        let i = (0..len).find(|&i| dst[i] != want[i]).unwrap();
        panic!("{what}: first wrong byte at {i}");
    }
    assert!(
        all_bytes(before, CANARY) && all_bytes(after, CANARY),
        "{what}: a byte outside the destination changed"
    );
}

#[test]
fn every_engine_streams_every_page_count_exactly() {
    let rule = cachecopy::stream_pages();
    assert!([1, 2, 4, 8].contains(&rule), "rule pages={rule}");
    assert_eq!(cachecopy::tuning().pages, rule);
    for pages in [1, 2, 4, 8] {
        cachecopy::set_stream_pages(pages);
        assert_eq!(cachecopy::stream_pages(), pages);
        assert_eq!(cachecopy::tuning().pages, pages);
        for len in lengths(pages) {
            let want = pattern(len, len as u8);
            for &engine in Engine::supported() {
                for (s_end, off) in [(true, None), (false, Some(1)), (true, Some(63))] {
                    check(engine, &want, s_end, off, false);
                }
            }
            check(cachecopy::engine(), &want, true, None, true);
            check(cachecopy::engine(), &want, false, Some(33), true);
        }
    }
    cachecopy::set_stream_pages(rule);
    assert!(cachecopy::tuning()
        .to_string()
        .contains(&format!("pages={rule}")));
}

#[test]
#[should_panic(expected = "set_stream_pages: 3 is not 1, 2, 4 or 8")]
fn other_page_counts_panic() {
    cachecopy::set_stream_pages(3);
}
