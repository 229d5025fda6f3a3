//! Arbitrary backend, mode, offsets, lengths, splits and bytes: the fused checksum-and-copy and
//! `csum_partial` versus the project's RFC 1071 reference (`testutil::ones_sum`, which the unit
//! tests hold against the plain word loop), with canaries around the destination, and
//! `csum_block_add` joins at arbitrary (odd) split points; the public calls' inline short path
//! (below 512 bytes) the same way; the splits as the segments of a `csum_and_copy_from_iter`
//! gather (the streaming line writer, lines shared by short segments), and as a frame's payload
//! behind a header (`csum_frame_from_iter`).
#![no_main]

use arbitrary::Arbitrary;
use cachecopy::iter::{IoVec, Source};
use cachecopy::net::{
    csum_and_copy, csum_and_copy_from_iter, csum_and_copy_with, csum_block_add, csum_fold,
    csum_frame_from_iter, csum_partial, csum_partial_with,
};
use libfuzzer_sys::fuzz_target;

mod common;
use common::{canaries_intact, ones_sum, repeated, Placement};

#[derive(Arbitrary, Debug)]
struct Case {
    at: Placement,
    initial: u32,
    splits: Vec<u16>,
    bytes: Vec<u8>,
}

const CANARY: u8 = 0x5C;

fuzz_target!(|c: Case| {
    let (backend, mode, so, d_o, len) = c.at.pick();
    let src = repeated(&c.bytes, so + len, 0xff);
    let src = &src[so..];
    let want = ones_sum(src);

    let mut dst = vec![CANARY; d_o + len + 64];
    let got = csum_and_copy_with(backend, &mut dst[d_o..d_o + len], src, mode).unwrap();
    assert_eq!(got, want, "{backend} {mode:?} so {so} do {d_o} len {len}");
    assert_eq!(&dst[d_o..d_o + len], src);
    assert!(canaries_intact(&dst, d_o, len, CANARY));

    assert_eq!(csum_partial_with(backend, src, 0).unwrap(), want);
    // `initial` is folded in with end-around carry.
    let with_initial = csum_partial_with(backend, src, c.initial).unwrap();
    assert_eq!(csum_fold(with_initial), csum_fold(csum_block_add(c.initial, want, 0)));

    // The public calls (inline below 512 bytes, the active table above).
    assert_eq!(csum_partial(src, 0), want);
    assert_eq!(csum_fold(csum_partial(src, c.initial)), csum_fold(with_initial));
    dst.fill(CANARY);
    assert_eq!(csum_and_copy(&mut dst[d_o..d_o + len], src, mode), want, "{mode:?} {len}");
    assert_eq!(&dst[d_o..d_o + len], src);
    assert!(canaries_intact(&dst, d_o, len, CANARY));

    // Any split into blocks, joined with csum_block_add, gives the whole.
    let mut at = 0;
    let mut sum = 0;
    let mut segs = Vec::new();
    for s in c.splits.iter().map(|&s| s as usize % (len + 1)) {
        let end = s.max(at);
        sum = csum_block_add(sum, csum_partial(&src[at..end], 0), at);
        segs.push(IoVec::new(&src[at..end]));
        at = end;
    }
    sum = csum_block_add(sum, csum_partial(&src[at..], 0), at);
    segs.push(IoVec::new(&src[at..]));
    assert_eq!(sum, want);

    // The same blocks as the segments of a gather.
    dst.fill(CANARY);
    let (n, sum) = csum_and_copy_from_iter(&mut dst[d_o..d_o + len], &mut Source::iovec(&segs), mode);
    assert_eq!((n, sum), (len, want), "{mode:?} gather {len}");
    assert_eq!(&dst[d_o..d_o + len], src);
    assert!(canaries_intact(&dst, d_o, len, CANARY));

    // The same gather as a frame's payload behind a header of up to 300 bytes that the
    // callback writes from the payload's length and sum (the header's lines prefetched,
    // written after the payload streams).
    let head = c.initial as usize % 301;
    let end = d_o + head + len;
    let mut fb = vec![CANARY; end + 64];
    let (n, sum) = csum_frame_from_iter(
        &mut fb[d_o..end],
        head,
        &mut Source::iovec(&segs),
        mode,
        |h, n, s| {
            assert!(h.len() == head && h.iter().all(|&b| b == 0));
            h.fill((n as u32 ^ s) as u8 | 1);
        },
    );
    assert_eq!((n, sum), (len, want), "{mode:?} frame {head} + {len}");
    assert!(fb[d_o..d_o + head].iter().all(|&b| b == (len as u32 ^ want) as u8 | 1));
    assert_eq!(&fb[d_o + head..end], src);
    assert!(canaries_intact(&fb, d_o, end - d_o, CANARY));
});
