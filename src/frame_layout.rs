//! The transmit frame layout's three constants, public as `cachecopy::net::layout` (whose docs
//! say what a frame is).
//!
//! A leaf at the bottom of the layers, so the calibration (below dispatch) and `net` (above it)
//! read one definition without an arrow climbing from one layer to the other; the benches'
//! arena crate, which does not depend on this crate, compiles this same file
//! (`benches/arena/src/frame.rs`), so a frame means the same bytes in the report, the benches
//! and the examples. For that reason this file uses nothing and links nothing: only constants.

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
