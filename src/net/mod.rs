//! Network helpers: the RFC 1071 Internet checksum fused with every copy mode, and frames with
//! headroom and tailroom.
//!
//! A stack without checksum offload must read every payload byte to sum it; copying and summing
//! in one pass reads it once, and [`Mode::NonTemporal`](crate::Mode::NonTemporal) still keeps
//! the destination out of the cache (Linux only uses no-cache transmit copies when the NIC sums,
//! netdev 2011, "net: Allow no-cache copy from user on transmit"). Frames reserve room in front
//! and behind so a driver can add its header and padding without copying the payload (the asix
//! driver's case, netdev 2012; lab/findings/performance.md, "Network helpers").
//!
//! [`csum_and_copy_from_iter`] and [`csum_and_copy_to_iter`] are the same fused copy as steps of
//! the cursor engine; `lab/probes/udp_tx.rs` puts it together (iovecs → checksum-and-copy →
//! UDP/IPv4 frames): `cargo run --release -p cachecopy-probes --example udp_tx`. [`layout`] holds the transmit frame
//! layout (header, payload, ring slot) every frame in the project is built to.
//!
//! ```
//! use cachecopy::net::{csum_and_copy, csum_fold};
//! use cachecopy::Mode;
//!
//! let payload = vec![0x5au8; 1400];
//! let mut wire = vec![0u8; 1400];
//! let sum = csum_and_copy(&mut wire, &payload, Mode::NonTemporal);
//! assert_eq!(wire, payload);
//! assert_eq!(sum, cachecopy::net::csum_partial(&payload, 0));
//! let _check: u16 = csum_fold(sum);
//! ```

mod csum;
#[cfg(feature = "alloc")]
mod frame;
pub(crate) mod iter;

pub mod layout;

pub use csum::{
    csum_add, csum_and_copy, csum_and_copy_raw, csum_and_copy_with, csum_block_add, csum_fold,
    csum_partial, csum_partial_with, csum_tcpudp_magic, csum_tcpudp_nofold,
};
#[cfg(feature = "alloc")]
pub use frame::{frame_reallocations, Frame, FrameError};
pub(crate) use iter::{
    check_frame_head, csum_and_copy_from_iter_unfenced, csum_and_copy_to_iter_unfenced,
    csum_frame_from_iter_unfenced,
};
pub use iter::{csum_and_copy_from_iter, csum_and_copy_to_iter, csum_frame_from_iter};
