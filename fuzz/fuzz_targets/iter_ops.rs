//! Cursor operation sequences versus a flat `Vec<u8>` model: gathers, scatters, zeroing,
//! cursor-to-cursor copies, `_full` forms, advance/revert/truncate/reexpand/save/restore, in
//! every mode, over iovec and bvec layouts with empty segments.
#![no_main]

use arbitrary::Arbitrary;
use cachecopy::iter::{
    copy_from_iter, copy_from_iter_full, copy_iter, copy_to_iter, copy_to_iter_full, zero_iter,
    BioVec, Dest, IoVec, IoVecMut, Source,
};
use cachecopy::Mode;
use libfuzzer_sys::fuzz_target;

mod common;
use common::carve_mut;

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Op {
    Gather { len: u16, off: u8, mode: u8 },
    GatherFull { len: u16, mode: u8 },
    Scatter { len: u16, mode: u8 },
    ScatterFull { len: u16, mode: u8 },
    Zero { len: u16, mode: u8 },
    CursorToCursor { len: u16, mode: u8 },
    Advance { src: bool, n: u16 },
    Revert { src: bool, n: u16 },
    Truncate { src: bool, n: u16 },
    Reexpand { src: bool, n: u16 },
    Save,
    Restore,
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// Source segment lengths (scaled) and gaps; destination likewise.
    src_segs: Vec<(u8, u8)>,
    dst_segs: Vec<(u8, u8)>,
    scale: u8,
    bvec: bool,
    ops: Vec<Op>,
}

fn mode(m: u8) -> Mode {
    [Mode::Temporal, Mode::NonTemporal, Mode::FlushCache, Mode::Auto][m as usize % 4]
}

fn carve(segs: &[(u8, u8)], scale: usize) -> (Vec<(usize, usize)>, usize) {
    let mut at = 0;
    let v = segs
        .iter()
        .take(64)
        .map(|&(len, gap)| {
            at += gap as usize % 70;
            let s = (at, len as usize * scale);
            at += len as usize * scale;
            s
        })
        .collect();
    (v, at + 70)
}

/// The largest backing store `carve` can ask for: 64 segments of 255 * 24 bytes and 69-byte
/// gaps, plus the 70-byte tail.
const MAX_BACK: usize = 64 * (255 * 24 + 69) + 70;

/// The source bytes (`i * 31 + 7`) and the scatter payload (`i * 13 + 5`), computed once: built
/// per input they cost more than the cursor operations under test.
fn patterns() -> &'static (Vec<u8>, Vec<u8>) {
    static P: std::sync::OnceLock<(Vec<u8>, Vec<u8>)> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        (
            (0..MAX_BACK).map(|i| (i * 31 + 7) as u8).collect(),
            (0..70000).map(|i| (i * 13 + 5) as u8).collect(),
        )
    })
}

/// Calls `f(backing_index, j)` for the `n` flat positions from `pos` of the segments `segs`
/// (`(start, len)` in the backing store): the model's view of a scatter, without a per-byte
/// index table.
fn for_each_flat(segs: &[(usize, usize)], pos: usize, n: usize, mut f: impl FnMut(usize, usize)) {
    let (mut skip, mut j) = (pos, 0);
    for &(s, l) in segs {
        if j == n {
            break;
        }
        if skip >= l {
            skip -= l;
            continue;
        }
        let take = (l - skip).min(n - j);
        for k in 0..take {
            f(s + skip + k, j + k);
        }
        j += take;
        skip = 0;
    }
    assert_eq!(j, n, "model range past the segments");
}

/// Model cursor: position and count over a flat index space.
#[derive(Clone, Copy, Debug)]
struct M {
    pos: usize,
    count: usize,
    total: usize,
}

impl M {
    /// `n` bytes consumed: the position moves on, the count down.
    fn advance(&mut self, n: usize) {
        self.pos += n;
        self.count -= n;
    }

    /// `n` bytes given back: the position moves back, the count up.
    fn revert(&mut self, n: usize) {
        self.pos -= n;
        self.count += n;
    }
}

fuzz_target!(|input: Input| {
    let scale = 1 + input.scale as usize % 24;
    let (ss, ssize) = carve(&input.src_segs, scale);
    let (ds, dsize) = carve(&input.dst_segs, scale);
    let (pattern, payload) = patterns();
    let sback = &pattern[..ssize];
    let mut sflat = Vec::with_capacity(ssize);
    for &(s, l) in &ss {
        sflat.extend_from_slice(&sback[s..s + l]);
    }
    let iov: Vec<IoVec<'_>> = ss.iter().map(|&(s, l)| IoVec::new(&sback[s..s + l])).collect();
    let bv: Vec<BioVec<'_>> = ss
        .iter()
        .map(|&(s, l)| BioVec::new(&sback[s & !4095..], s & 4095, l))
        .collect();
    let mut src = if input.bvec { Source::bvec(&bv) } else { Source::iovec(&iov) };

    let mut dback = vec![0xEEu8; dsize];
    let mut model = dback.clone();
    let dtotal: usize = ds.iter().map(|&(_, l)| l).sum();
    let mut dsegs: Vec<IoVecMut<'_>> =
        carve_mut(&mut dback, &ds).into_iter().map(IoVecMut::new).collect();
    let mut dst = Dest::iovec(&mut dsegs);

    let mut sm = M { pos: 0, count: sflat.len(), total: sflat.len() };
    let mut dm = M { pos: 0, count: dtotal, total: dtotal };
    let mut saved = None;

    for op in input.ops.iter().take(64) {
        match *op {
            Op::Gather { len, off, mode: m } => {
                let (len, off) = (len as usize, off as usize % 64);
                let mut out = vec![0xA5u8; off + len + 64];
                let n = copy_from_iter(&mut out[off..off + len], &mut src, mode(m));
                assert_eq!(n, len.min(sm.count));
                assert_eq!(&out[off..off + n], &sflat[sm.pos..sm.pos + n]);
                assert!(out[..off].iter().chain(&out[off + n..]).all(|&b| b == 0xA5));
                sm.advance(n);
            }
            Op::GatherFull { len, mode: m } => {
                let len = len as usize;
                let mut out = vec![0u8; len];
                let r = copy_from_iter_full(&mut out, &mut src, mode(m));
                assert_eq!(r.is_ok(), len <= sm.count);
                if r.is_ok() {
                    assert_eq!(&out[..], &sflat[sm.pos..sm.pos + len]);
                    sm.advance(len);
                } else {
                    assert!(out.iter().all(|&b| b == 0));
                }
            }
            Op::Scatter { len, mode: m } | Op::ScatterFull { len, mode: m } => {
                let data = &payload[..len as usize];
                let full = matches!(op, Op::ScatterFull { .. });
                let n = if full {
                    match copy_to_iter_full(data, &mut dst, mode(m)) {
                        Ok(()) => data.len(),
                        Err(_) => {
                            assert!(data.len() > dm.count);
                            0
                        }
                    }
                } else {
                    copy_to_iter(data, &mut dst, mode(m))
                };
                if !full {
                    assert_eq!(n, data.len().min(dm.count));
                }
                for_each_flat(&ds, dm.pos, n, |b, j| model[b] = data[j]);
                dm.advance(n);
            }
            Op::Zero { len, mode: m } => {
                let n = zero_iter(&mut dst, len as usize, mode(m));
                assert_eq!(n, (len as usize).min(dm.count));
                for_each_flat(&ds, dm.pos, n, |b, _| model[b] = 0);
                dm.advance(n);
            }
            Op::CursorToCursor { len, mode: m } => {
                let n = copy_iter(&mut dst, &mut src, len as usize, mode(m));
                assert_eq!(n, (len as usize).min(dm.count).min(sm.count));
                let from = &sflat[sm.pos..sm.pos + n];
                for_each_flat(&ds, dm.pos, n, |b, j| model[b] = from[j]);
                dm.advance(n);
                sm.advance(n);
            }
            Op::Advance { src: s, n } => {
                let m = if s { &mut sm } else { &mut dm };
                let n = n as usize % (m.count + 1);
                if s { src.advance(n) } else { dst.advance(n) }
                m.advance(n);
            }
            Op::Revert { src: s, n } => {
                let m = if s { &mut sm } else { &mut dm };
                let n = n as usize % (m.pos + 1);
                if s { src.revert(n) } else { dst.revert(n) }
                m.revert(n);
            }
            Op::Truncate { src: s, n } => {
                let m = if s { &mut sm } else { &mut dm };
                if s { src.truncate(n as usize) } else { dst.truncate(n as usize) }
                m.count = m.count.min(n as usize);
            }
            Op::Reexpand { src: s, n } => {
                let m = if s { &mut sm } else { &mut dm };
                let n = n as usize % (m.total - m.pos + 1);
                if s { src.reexpand(n) } else { dst.reexpand(n) }
                m.count = n;
            }
            Op::Save => saved = Some((src.save_state(), dst.save_state(), sm, dm)),
            Op::Restore => {
                if let Some((a, b, x, y)) = saved {
                    src.restore(a);
                    dst.restore(b);
                    sm = x;
                    dm = y;
                }
            }
        }
        assert_eq!((src.count(), dst.count()), (sm.count, dm.count));
    }
    drop(dsegs);
    assert!(dback == model);
});
