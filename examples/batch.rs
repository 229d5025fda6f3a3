//! A batch of streamed copies with one fence: transmit frames built into the slots of a ring,
//! as a network stack or an AF_XDP producer builds them.
//!
//! `cargo run --release --example batch`
//!
//! A streamed (`NonTemporal`) copy ends with a store fence, so that its bytes are visible to
//! whoever reads them next; the fence costs about as much as a copy of a kilobyte or two. A
//! batch runs many copies and fences once, when the closure returns. Every destination stays
//! borrowed until then, so nothing can read a slot before its stores are complete.

use cachecopy::iter::{IoVec, Source};
use cachecopy::{batch, Mode};

const SLOT: usize = 2048;
const SLOTS: usize = 64;
const HEADER: usize = 42;
const PAYLOAD: usize = 1472;

fn main() {
    let mut ring = vec![0u8; SLOT * SLOTS];
    let payloads: Vec<Vec<u8>> = (0..SLOTS).map(|i| vec![i as u8; PAYLOAD]).collect();

    // Build every frame with one fence for the whole ring.
    batch(Mode::NonTemporal, |b| {
        for (i, slot) in ring.chunks_exact_mut(SLOT).enumerate() {
            let header = [0x80 | i as u8; HEADER];
            let (frame, _) = slot.split_at_mut(HEADER + PAYLOAD);
            // A header and its payload gathered into the slot in one step (one partial line
            // at each end of the frame, none where the two meet).
            let segs = [IoVec::new(&header), IoVec::new(&payloads[i])];
            let copied = b.copy_from_iter(frame, &mut Source::iovec(&segs));
            assert_eq!(copied, HEADER + PAYLOAD);
        }
    }); // the one fence: every frame is complete from here on

    // Plain copies and fills batch the same way: clear the slots' tails, copy one payload more.
    batch(Mode::NonTemporal, |b| {
        for slot in ring.chunks_exact_mut(SLOT) {
            b.zero(&mut slot[HEADER + PAYLOAD..]);
        }
    });

    // The consumer's side: check every frame.
    for (i, slot) in ring.chunks_exact(SLOT).enumerate() {
        assert!(slot[..HEADER].iter().all(|&x| x == 0x80 | i as u8));
        assert_eq!(slot[HEADER..HEADER + PAYLOAD], payloads[i][..]);
        assert!(slot[HEADER + PAYLOAD..].iter().all(|&x| x == 0));
    }
    println!(
        "{SLOTS} frames of {} bytes built with one fence, every byte checked",
        HEADER + PAYLOAD
    );
}
