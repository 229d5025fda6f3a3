//! The four cache modes on one buffer: the same copy, fill and move, each mode saying where the
//! written bytes should end up.
//!
//! `cargo run --release --example modes`
//!
//! - `Temporal` (`memcpy`): the bytes stay in the cache, for data read again soon.
//! - `NonTemporal`: whole destination lines stream past the cache, for data the CPU will not
//!   read again soon (a transmit buffer, a large move); below 1 KiB it is a `Temporal` copy.
//! - `FlushCache`: on return every written byte is in memory (persistent memory, DMA).
//! - `Auto`: `NonTemporal` from a size threshold up, `Temporal` below: when you do not know.
//!
//! Every mode writes the same bytes; only where they end up differs, so the program checks the
//! bytes of every operation in every mode.

use cachecopy::{copy, copy_within, fill, zero, Mode};

fn main() {
    // A source of 4 MiB, past the streaming threshold of most CPUs' `Auto` when it is copied
    // whole, and small pieces of it well below.
    let src: Vec<u8> = (0..4 << 20).map(|i: usize| (i * 31 + 7) as u8).collect();
    let mut buf = vec![0u8; src.len()];

    for mode in Mode::ALL {
        // A large copy: streamed in `NonTemporal`, `FlushCache` and (past the threshold) `Auto`.
        copy(&mut buf, &src, mode);
        assert_eq!(buf, src);

        // A small copy into the middle: every mode stores this few bytes with ordinary stores.
        copy(&mut buf[1000..1064], &src[..64], mode);
        assert_eq!(buf[1000..1064], src[..64]);

        // Fills and zeroing take the same modes.
        fill(&mut buf[..1 << 20], 0xa5, mode);
        assert!(buf[..1 << 20].iter().all(|&b| b == 0xa5));
        zero(&mut buf[1 << 20..], mode);
        assert!(buf[1 << 20..].iter().all(|&b| b == 0));

        // A move within the buffer, the ranges overlapping (`slice::copy_within` with a mode):
        // compacting a log, sliding a receive buffer's live bytes to its front.
        buf.copy_from_slice(&src);
        copy_within(&mut buf, 4096.., 0, mode);
        assert_eq!(buf[..src.len() - 4096], src[4096..]);

        println!(
            "{:<11} copy, fill, zero and move: every byte checked",
            mode.name()
        );
    }

    // The mode can also be a value chosen at run time, per socket, per queue or per file.
    let mode: Mode = "NonTemporal".parse().expect("a mode's name");
    copy(&mut buf, &src, mode);
    assert_eq!(buf, src);
}
