//! A gather into a frame with cursors: a header and a payload in pieces, as `sendmsg` hands them
//! over, copied into one transmit frame with one call, streamed past the cache; then the same
//! frame with its checksum computed in the same pass, and scattered back into buffers.
//!
//! `cargo run --release --example gather`
//!
//! A cursor (`cachecopy::iter`, Linux's `iov_iter`) walks a list of segments. The mode is a
//! marker type (`policy::NonTemporal`: fixed at compile time, no branch on it at all) or a
//! `Mode` value (one branch per call, never one per segment).

use cachecopy::iter::{copy_from_iter_full, copy_to_iter, Dest, IoVec, IoVecMut, Source};
use cachecopy::net::{csum_and_copy, csum_fold, csum_partial};
use cachecopy::policy::NonTemporal;
use cachecopy::Mode;

const HEADER: usize = 42; // Ethernet + IPv4 + UDP
const PAYLOAD: usize = 1472;

fn main() {
    // What the application hands over: a header it built and a payload in three pieces.
    let header = [0x45u8; HEADER];
    let payload: Vec<u8> = (0..PAYLOAD).map(|i| (i % 251) as u8).collect();
    let (a, rest) = payload.split_at(100);
    let (b, c) = rest.split_at(900);
    let segs = [
        IoVec::new(&header),
        IoVec::new(a),
        IoVec::new(b),
        IoVec::new(c),
    ];

    // One call gathers all four segments into the frame. The lines two segments share are
    // assembled in registers and streamed whole, so every line is written once.
    let mut frame = vec![0u8; HEADER + PAYLOAD];
    let mut msg = Source::iovec(&segs);
    copy_from_iter_full(&mut frame, &mut msg, NonTemporal).expect("the frame holds the message");
    assert_eq!(
        msg.count(),
        0,
        "the cursor advanced past everything it copied"
    );
    assert_eq!(frame[..HEADER], header);
    assert_eq!(frame[HEADER..], payload[..]);

    // The cursor can step back and copy again; `_full` fills the whole destination or, when
    // the cursor holds too few bytes, copies nothing and leaves the cursor where it was.
    msg.revert(PAYLOAD);
    let mut too_large = vec![0u8; PAYLOAD + 1];
    assert!(copy_from_iter_full(&mut too_large, &mut msg, NonTemporal).is_err());
    assert_eq!(msg.count(), PAYLOAD);

    // Without checksum offload: copy the payload and sum it in one pass over the source.
    let mut wire = vec![0u8; PAYLOAD];
    let sum = csum_and_copy(&mut wire, &payload, Mode::NonTemporal);
    assert_eq!(wire, payload);
    assert_eq!(csum_fold(sum), csum_fold(csum_partial(&payload, 0)));
    println!("payload checksum {:#06x}", csum_fold(sum));

    // The receive side: scatter the frame into a small header buffer and a larger body.
    let (mut head, mut body) = (vec![0u8; 64], vec![0u8; 4096]);
    let mut bufs = [IoVecMut::new(&mut head), IoVecMut::new(&mut body)];
    let mut dst = Dest::iovec(&mut bufs);
    assert_eq!(copy_to_iter(&frame, &mut dst, Mode::Temporal), frame.len());
    assert_eq!(head[..], frame[..64]);
    assert_eq!(body[..frame.len() - 64], frame[64..]);
    println!(
        "gathered {} bytes from 4 segments and scattered them into 2",
        frame.len()
    );
}
