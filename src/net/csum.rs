//! RFC 1071 Internet checksum: partial sums, folding, and the fused checksum-and-copy.
//!
//! Conventions are Linux's: a partial sum (`__wsum`) is a `u32` one's-complement sum of the data
//! read as native-endian 16-bit words, words counted from the start of each block. Because the
//! one's-complement sum is byte-order independent (RFC 1071 §2(B)), [`csum_fold`]'s result written
//! with `u16::to_ne_bytes` is the checksum field in network order on every target. The partial
//! sums this crate returns are always folded to at most `0xffff` (zero only for all-zero data), so
//! every backend returns the same value; any `u32` is accepted as input.

use crate::copy::len_mismatch;
use crate::dispatch::engine::Backend;
use crate::dispatch::plan;
use crate::dispatch::store::csum_copy_on;
use crate::dispatch::supported::Unsupported;
use crate::mode::Mode;

use crate::kernel::sum::{block_add, fold16, header, short, Discard, Plain, SHORT};

/// One's-complement addition of two partial sums (end-around carry).
///
/// ```
/// assert_eq!(cachecopy::net::csum_add(0xffff_ffff, 1), 1);
/// ```
#[inline]
pub fn csum_add(a: u32, b: u32) -> u32 {
    let (s, carry) = a.overflowing_add(b);
    s + carry as u32
}

/// Adds `sum2`, the partial sum of a block that starts `offset` bytes into the data `sum`
/// covers. A block at an odd offset has its words' bytes swapped relative to the whole (Linux's
/// `csum_block_add`).
///
/// ```
/// use cachecopy::net::{csum_block_add, csum_partial};
/// let data = b"an odd split of a datagram";
/// let whole = csum_partial(data, 0);
/// let (a, b) = data.split_at(7);
/// let joined = csum_block_add(csum_partial(a, 0), csum_partial(b, 0), 7);
/// assert_eq!(cachecopy::net::csum_fold(joined), cachecopy::net::csum_fold(whole));
/// ```
#[inline]
pub fn csum_block_add(sum: u32, sum2: u32, offset: usize) -> u32 {
    fold16(block_add(sum as u64, sum2 as u64, offset))
}

/// Folds a partial sum to the 16-bit checksum: the one's complement of the 16-bit
/// one's-complement sum. Write it into a header with `to_ne_bytes()`; data that contains a
/// correct checksum folds to `0`.
///
/// ```
/// use cachecopy::net::{csum_fold, csum_partial};
/// // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2, checksum 220d.
/// let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
/// let check = csum_fold(csum_partial(&data, 0));
/// assert_eq!(check.to_ne_bytes(), [0x22, 0x0d]);
/// ```
#[inline]
pub fn csum_fold(sum: u32) -> u16 {
    !(fold16(sum as u64) as u16)
}

/// The RFC 1071 partial sum of `data`, added to `initial` (on the active backend).
///
/// ```
/// use cachecopy::net::{csum_fold, csum_partial};
/// // An IPv4 header with its checksum (b1 e6) in place verifies to zero.
/// let hdr = [
///     0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61,
///     0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
/// ];
/// assert_eq!(csum_fold(csum_partial(&hdr, 0)), 0);
/// ```
#[inline]
pub fn csum_partial(data: &[u8], initial: u32) -> u32 {
    // SAFETY: (every arm) a live slice of that length; `Discard` writes nothing.
    unsafe {
        match data.len() {
            // The IPv4 and IPv6 headers: straight-line adds, no length ladder.
            20 => fold16(header::<20>(data.as_ptr(), initial as u64)),
            40 => fold16(header::<40>(data.as_ptr(), initial as u64)),
            // Other headers and small datagrams: summed here, in general-purpose registers,
            // with no table, no vector setup and no call.
            n if n < SHORT => fold16(short(data.as_ptr(), Discard, n, initial as u64)),
            _ => csum_partial_table(data, initial),
        }
    }
}

/// [`csum_partial`] from [`SHORT`] bytes, on the active table. Out of line so that the short
/// paths save no register: with it inline, `initial`, live across the table's call, made every
/// short sum push and pop three.
#[inline(never)]
fn csum_partial_table(data: &[u8], initial: u32) -> u32 {
    // SAFETY: a live slice; the active table runs on this CPU.
    let s = unsafe { (plan::active().kernels.csum)(data.as_ptr(), data.len()) };
    fold16(csum_add(initial, s) as u64)
}

/// [`csum_partial`] on exactly `backend` (tests, benchmarks, comparisons).
///
/// # Errors
/// [`Unsupported`] when this CPU cannot run `backend`.
pub fn csum_partial_with(backend: Backend, data: &[u8], initial: u32) -> Result<u32, Unsupported> {
    let k = backend.kernels(plan::active())?;
    // SAFETY: a live slice; `k` runs on this CPU.
    let s = unsafe { (k.csum)(data.as_ptr(), data.len()) };
    Ok(fold16(csum_add(initial, s) as u64))
}

/// Copies `src` into `dst` with the cache policy `mode` and returns the partial sum of the
/// bytes (as [`csum_partial`]`(src, 0)`), loading each source byte once.
///
/// [`Mode::NonTemporal`] streams the destination while summing: the right transmit copy for a
/// stack without checksum offload.
///
/// # Panics
/// When the lengths differ; nothing is written then.
///
/// ```
/// use cachecopy::{net, Mode};
/// let mut dst = [0u8; 5];
/// let sum = net::csum_and_copy(&mut dst, b"hello", Mode::Temporal);
/// assert_eq!(&dst, b"hello");
/// assert_eq!(sum, net::csum_partial(b"hello", 0));
/// ```
#[inline]
#[track_caller]
pub fn csum_and_copy(dst: &mut [u8], src: &[u8], mode: Mode) -> u32 {
    if dst.len() != src.len() {
        len_mismatch("net::csum_and_copy", dst.len(), src.len());
    }
    // SAFETY: two live slices of equal length; `&mut` cannot overlap `&`.
    unsafe { csum_and_copy_raw(dst.as_mut_ptr(), src.as_ptr(), src.len(), mode) }
}

/// [`csum_and_copy`] on raw pointers.
///
/// # Safety
/// As [`copy_raw`](crate::copy_raw): `src` readable and `dst` writable for `len` bytes, each in
/// one allocated object, not overlapping, `dst` not accessed by other threads during the call;
/// with `len == 0` any pointers are allowed.
#[inline]
pub unsafe fn csum_and_copy_raw(dst: *mut u8, src: *const u8, len: usize, mode: Mode) -> u32 {
    // Below `SHORT` every mode but FlushCache stores temporally (`Mode::resolve`): copy and sum
    // here, with no table, as `csum_partial` does.
    if len < SHORT && !matches!(mode, Mode::FlushCache) {
        // SAFETY: forwarded contract (`Plain` stores to `dst..dst + len`).
        return unsafe { fold16(short(src, Plain::new(dst), len, 0)) };
    }
    let p = plan::active();
    let store = mode.resolve(len, &p.copy_below, p.tuning.flush);
    // SAFETY: forwarded contract; the plan's kernels run on this CPU.
    unsafe { csum_copy_on(&p.kernels, dst, src, len, store) }
}

/// [`csum_and_copy`] on exactly `backend`.
///
/// # Errors
/// [`Unsupported`] when this CPU cannot run `backend`; nothing is written then.
///
/// # Panics
/// When the lengths differ.
#[track_caller]
pub fn csum_and_copy_with(
    backend: Backend,
    dst: &mut [u8],
    src: &[u8],
    mode: Mode,
) -> Result<u32, Unsupported> {
    if dst.len() != src.len() {
        len_mismatch("net::csum_and_copy_with", dst.len(), src.len());
    }
    let k = backend.kernels(plan::active())?;
    let len = src.len();
    let p = plan::active();
    let store = mode.resolve(len, &p.copy_below, p.tuning.flush);
    // SAFETY: two live, non-overlapping slices of equal length; `k` runs on this CPU.
    Ok(unsafe { csum_copy_on(k, dst.as_mut_ptr(), src.as_ptr(), len, store) })
}

/// The partial sum of the TCP/UDP IPv4 pseudo-header (source, destination, zero, protocol,
/// length) added to `sum` (Linux's `csum_tcpudp_nofold`). Addresses are in network order.
#[inline]
pub fn csum_tcpudp_nofold(saddr: [u8; 4], daddr: [u8; 4], len: u16, proto: u8, sum: u32) -> u32 {
    let l = len.to_be_bytes();
    let words = [
        [saddr[0], saddr[1]],
        [saddr[2], saddr[3]],
        [daddr[0], daddr[1]],
        [daddr[2], daddr[3]],
        [0, proto],
        l,
    ];
    let s = words
        .iter()
        .fold(sum as u64, |s, w| s + u16::from_ne_bytes(*w) as u64);
    fold16(s)
}

/// The TCP/UDP checksum over the IPv4 pseudo-header and `sum`, the partial sum of the transport
/// header and payload (Linux's `csum_tcpudp_magic`). UDP sends a computed `0` as `0xffff`
/// (RFC 768).
///
/// ```
/// use cachecopy::net::{csum_partial, csum_tcpudp_magic};
/// // UDP 192.168.0.1:1024 -> 192.168.0.199:53, payload "hi", checksum field 0 while summing.
/// let mut udp = [0x04, 0x00, 0x00, 0x35, 0x00, 0x0a, 0x00, 0x00, b'h', b'i'];
/// let (s, d) = ([192, 168, 0, 1], [192, 168, 0, 199]);
/// let check = csum_tcpudp_magic(s, d, 10, 17, csum_partial(&udp, 0));
/// udp[6..8].copy_from_slice(&check.to_ne_bytes());
/// assert_eq!(csum_tcpudp_magic(s, d, 10, 17, csum_partial(&udp, 0)), 0);
/// ```
#[inline]
pub fn csum_tcpudp_magic(saddr: [u8; 4], daddr: [u8; 4], len: u16, proto: u8, sum: u32) -> u16 {
    csum_fold(csum_tcpudp_nofold(saddr, daddr, len, proto, sum))
}
