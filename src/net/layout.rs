//! The transmit frame layout: an Ethernet + IPv4 + UDP header, a full-MTU UDP payload right
//! behind it, and the ring slot that holds one such frame.
//!
//! A stack writes the header at the start of a slot and the payload at offset [`HEADER`] (42),
//! so the payload's first and last cache lines are partial and its first line also holds header
//! bytes: the case a copy's ragged ends cost most in. Use these to build transmit rings (as
//! AF_XDP and NIC rings are laid out) and to size payload copies.
//!
//! One definition for every frame the project builds: the calibration measures its engine check
//! on these frames, and the benches' arena crate, which does not depend on this crate, compiles
//! this same file (`benches/arena/src/frame.rs`), so a frame means the same bytes in the report,
//! the benches and the examples. For that reason this file uses nothing and links nothing: only
//! constants.

/// Header bytes in front of the payload: Ethernet (14) + IPv4 without options (20) + UDP (8).
pub const HEADER: usize = 42;

/// Payload bytes per frame: the UDP payload of a 1500-byte MTU (1500 less the IPv4 and UDP
/// headers).
pub const PAYLOAD: usize = 1472;

/// Bytes per transmit ring slot: one frame ([`HEADER`] + [`PAYLOAD`] = 1514 bytes) rounded up to
/// whole 64-byte cache lines (24 lines), so consecutive slots share no line.
pub const SLOT: usize = 1536;

const _: () =
    assert!(HEADER + PAYLOAD <= SLOT && SLOT.is_multiple_of(64) && SLOT - (HEADER + PAYLOAD) < 64);
