//! Frames: push/put/pull/trim without moving the payload, copy-on-write for shared frames, and
//! the asix transmit fixup (4-byte header in front, 0 or 4 bytes of padding behind).
#![cfg(feature = "alloc")]

use cachecopy::net::{Frame, FrameError};
use cachecopy::Mode;

fn payload(len: usize, seed: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + seed) as u8).collect()
}

/// What asix_tx_fixup does to every frame: the packet length (and its complement) as a 4-byte
/// little-endian header in front, and 4 bytes of padding when the result would be a multiple of
/// the 512-byte USB packet. Returns whether the frame moved.
fn asix_fixup(f: &mut Frame) -> bool {
    let before = f.reallocations();
    let len = f.len() as u32;
    let padlen = if (f.len() + 4).is_multiple_of(512) {
        4
    } else {
        0
    };
    let header = (((len ^ 0xffff) << 16) + len).to_le_bytes();
    f.push(4).unwrap().copy_from_slice(&header);
    if padlen != 0 {
        f.put(padlen).unwrap().copy_from_slice(&[0xff, 0xff, 0, 0]);
    }
    f.reallocations() != before
}

/// How many frames the million-frame runs make: a million natively, 600 under Miri (the same
/// sequence's start: lengths over the whole range and both padding sizes, three times each).
const FRAMES: usize = if cfg!(miri) { 600 } else { 1_000_000 };

fn lengths() -> impl Iterator<Item = usize> {
    // 1 million frame lengths over 60..=1514, hitting 508 and 1020 (padding) regularly.
    (0..FRAMES).map(|i| {
        if i % 97 == 0 {
            508 + 512 * (i % 2)
        } else {
            60 + (i * 7919) % 1455
        }
    })
}

/// The million-frame runs' frames: each length of [`lengths`] with its frame, the first `len`
/// bytes of `src` copied (`Temporal`) with `room` bytes free in front and behind.
fn copied_frames(src: &[u8], room: usize) -> impl Iterator<Item = (usize, Frame)> + '_ {
    lengths().map(move |len| {
        (
            len,
            Frame::copy_from(room, &src[..len], room, Mode::Temporal),
        )
    })
}

#[test]
fn asix_million_frames_no_copies_with_room() {
    let src = payload(1514, 1);
    let (mut copies, mut padded) = (0u64, 0u64);
    for (len, mut f) in copied_frames(&src, 4) {
        let data_at = f.data().as_ptr();
        copies += asix_fixup(&mut f) as u64;
        padded += (f.len() == len + 8) as u64;
        // The payload did not move: it is still where it was copied, behind the header.
        assert_eq!(f[4..].as_ptr(), data_at);
        assert_eq!(&f[4..4 + len], &src[..len]);
        assert_eq!(u16::from_le_bytes([f[0], f[1]]) as usize, len);
    }
    assert_eq!(copies, 0);
    assert!(
        padded > FRAMES as u64 / 100,
        "padding path taken {padded} times"
    );
}

#[test]
fn asix_million_frames_without_room_copy_once_each() {
    let src = payload(1514, 2);
    let (mut copies, mut frames) = (0u64, 0u64);
    for (len, mut f) in copied_frames(&src, 0) {
        asix_fixup(&mut f);
        // One reallocation per frame (the push), with fresh room behind for the padding.
        copies += f.reallocations() as u64;
        frames += 1;
        assert_eq!(&f[4..4 + len], &src[..len]);
    }
    assert_eq!(copies, frames);
}

#[test]
fn shared_frames_copy_on_write_once() {
    let src = payload(300, 3);
    let mut a = Frame::copy_from(16, &src, 16, Mode::Temporal);
    let b = a.clone();
    assert!(a.is_shared() && b.is_shared());
    // Reading and dropping bytes from a view never writes the buffer: no copy.
    a.pull(10).unwrap();
    a.trim(10).unwrap();
    assert_eq!(a.reallocations(), 0);
    assert_eq!(&a[..], &src[10..290]);
    // The first write copies, once, and keeps the room.
    a.push(4).unwrap().copy_from_slice(b"HDR!");
    assert_eq!(a.reallocations(), 1);
    assert!(!a.is_shared() && !b.is_shared());
    a.put(2).unwrap().copy_from_slice(b"!!");
    a.data_mut()[4] = 0;
    assert_eq!(a.reallocations(), 1);
    assert_eq!(&b[..], &src[..]);
    assert_eq!(&a[..4], b"HDR!");
    assert_eq!(&a[5..a.len() - 2], &src[11..290]);
    // data_mut on a shared frame copies too.
    let mut c = b.clone();
    c.data_mut()[0] ^= 0xff;
    assert_eq!(c.reallocations(), 1);
    assert_eq!(b[0], src[0]);
    // A clone dropped before the write: unique again, no copy.
    let mut d = Frame::copy_from(8, &src, 0, Mode::Temporal);
    drop(d.clone());
    d.push(8).unwrap();
    assert_eq!(d.reallocations(), 0);
}

#[test]
fn too_little_room_reallocates_with_fresh_room() {
    let src = payload(100, 4);
    let mut f = Frame::copy_from(2, &src, 0, Mode::NonTemporal);
    f.push(14).unwrap();
    assert_eq!(f.reallocations(), 1);
    assert!(f.headroom() >= 32, "fresh headroom {}", f.headroom());
    // The next headers fit without another move.
    f.push(20).unwrap();
    f.push(8).unwrap();
    f.put(4).unwrap();
    assert_eq!(f.reallocations(), 1);
    assert_eq!(&f[42..142], &src[..]);
    assert_eq!(f.len(), 146);
}

#[test]
fn pull_and_trim_round_trip_through_the_room() {
    let src = payload(64, 5);
    let mut f = Frame::copy_from(0, &src, 0, Mode::Temporal);
    assert_eq!(f.pull(14).unwrap(), &src[..14]);
    assert_eq!(f.headroom(), 14);
    f.trim(4).unwrap();
    assert_eq!(f.tailroom(), 4);
    // Pushing back what was pulled reuses the same bytes: no copy.
    assert_eq!(f.push(14).unwrap(), &src[..14]);
    f.put(4).unwrap();
    assert_eq!(&f[..], &src[..]);
    assert_eq!(f.reallocations(), 0);
}

#[test]
fn bad_input_is_an_error_and_changes_nothing() {
    let src = payload(10, 6);
    let mut f = Frame::copy_from(4, &src, 4, Mode::Temporal);
    assert_eq!(
        f.pull(11),
        Err(FrameError::TooShort {
            requested: 11,
            len: 10
        })
    );
    assert_eq!(
        f.trim(11),
        Err(FrameError::TooShort {
            requested: 11,
            len: 10
        })
    );
    assert!(matches!(
        f.push(usize::MAX),
        Err(FrameError::TooLarge { .. })
    ));
    assert!(matches!(
        f.put(usize::MAX - 8),
        Err(FrameError::TooLarge { .. })
    ));
    assert!(matches!(
        f.push(isize::MAX as usize),
        Err(FrameError::TooLarge { .. })
    ));
    assert_eq!(&f[..], &src[..]);
    assert_eq!((f.headroom(), f.tailroom(), f.reallocations()), (4, 4, 0));
    let msg = f.pull(11).unwrap_err().to_string();
    assert!(msg.contains("11") && msg.contains("10"), "{msg}");
}

#[test]
fn csum_copy_from_sums_the_payload() {
    for mode in Mode::ALL {
        for len in [0, 1, 63, 1472, 9000] {
            let src = payload(len, 7);
            let (f, sum) = Frame::csum_copy_from(42, &src, 4, mode);
            assert_eq!(&f[..], &src[..]);
            assert_eq!(sum, cachecopy::net::csum_partial(&src, 0));
            assert_eq!((f.headroom(), f.tailroom()), (42, 4));
        }
    }
}
