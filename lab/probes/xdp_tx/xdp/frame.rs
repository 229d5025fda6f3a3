//! Ethernet + IPv4 + UDP frames built straight into a UMEM chunk, and the payloads they carry.
//!
//! The payload is gathered from the caller's scattered pieces with one fused checksum-and-copy
//! (`cachecopy::net::csum_and_copy_from_iter`) in the requested cache mode; the headers are
//! written in front of it afterwards with ordinary stores, and the UDP checksum is the payload's
//! partial sum plus the UDP header and the IPv4 pseudo-header. No checksum offload: the
//! receiving stack verifies every byte and drops a datagram whose sum is wrong.

use std::fmt;

use cachecopy::iter::{IoVec, Source};
use cachecopy::net::{
    csum_add, csum_and_copy_from_iter, csum_fold, csum_partial, csum_tcpudp_magic,
};
use cachecopy::Mode;

pub const ETH_HLEN: usize = 14;
pub const IP_HLEN: usize = 20;
pub const UDP_HLEN: usize = 8;
/// Every header in front of the payload.
pub const HEADERS: usize = ETH_HLEN + IP_HLEN + UDP_HLEN;
const IPPROTO_UDP: u8 = 17;

/// One UDP flow: the addresses in every frame's headers, and the link's MTU.
#[derive(Clone, Debug)]
pub struct Flow {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    /// The largest IPv4 packet the link carries (headers included, Ethernet header excluded).
    pub mtu: usize,
}

/// A frame that must not be built. Checked before a byte is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// IPv4 + UDP headers + payload exceed the link MTU (or IPv4's 65535): the receiver's link
    /// would drop it.
    ExceedsMtu { payload: usize, max_payload: usize },
    /// The whole frame does not fit one UMEM chunk (aligned mode: one descriptor per chunk; the
    /// kernel would count the descriptor invalid and never complete it).
    FrameTooLarge { frame: usize, chunk: usize },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::ExceedsMtu {
                payload,
                max_payload,
            } => write!(
                f,
                "a {payload}-byte UDP payload exceeds the MTU (at most {max_payload} bytes fit)"
            ),
            FrameError::FrameTooLarge { frame, chunk } => write!(
                f,
                "a {frame}-byte frame does not fit a {chunk}-byte UMEM chunk"
            ),
        }
    }
}

impl std::error::Error for FrameError {}

/// The frame length for a `payload`-byte datagram on `flow`, if it may be built into a
/// `chunk`-byte chunk.
pub fn frame_len(flow: &Flow, payload: usize, chunk: usize) -> Result<usize, FrameError> {
    let mtu = flow.mtu.min(u16::MAX as usize);
    let max_payload = mtu.saturating_sub(IP_HLEN + UDP_HLEN);
    if payload > max_payload {
        return Err(FrameError::ExceedsMtu {
            payload,
            max_payload,
        });
    }
    let frame = HEADERS + payload;
    if frame > chunk {
        return Err(FrameError::FrameTooLarge { frame, chunk });
    }
    Ok(frame)
}

/// Per-frame header fields and fault injection.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameOpts {
    pub ip_id: u16,
    /// Write a wrong (but nonzero, so not "no checksum") UDP checksum: the receiving stack must
    /// drop the datagram, and the run must report it missing.
    pub corrupt_udp_checksum: bool,
}

/// Builds one frame into `chunk` with everything `src` holds as the payload; returns the frame
/// length. On error nothing is written and `src` is untouched.
pub fn build(
    chunk: &mut [u8],
    flow: &Flow,
    src: &mut Source<'_>,
    opts: FrameOpts,
    mode: Mode,
) -> Result<usize, FrameError> {
    build_with(chunk, flow, src, opts, |rest, src| {
        csum_and_copy_from_iter(rest, src, mode)
    })
}

/// [`build`] with the payload copied by `copy` (which returns the bytes copied and their
/// partial sum): a plain `csum_and_copy_from_iter`, or a batch's, whose destination stays
/// borrowed until the batch has fenced. The headers are separate bytes of the chunk, written
/// with ordinary stores after the payload.
pub fn build_with<'c>(
    chunk: &'c mut [u8],
    flow: &Flow,
    src: &mut Source<'_>,
    opts: FrameOpts,
    copy: impl FnOnce(&'c mut [u8], &mut Source<'_>) -> (usize, u32),
) -> Result<usize, FrameError> {
    let payload = src.count();
    let len = frame_len(flow, payload, chunk.len())?;
    let (hdr, rest) = chunk[..len].split_at_mut(HEADERS);

    // The payload: gathered from the pieces, summed while copying.
    let (n, payload_sum) = copy(rest, src);
    assert_eq!(n, payload, "the cursor held {payload} bytes");

    let (eth, ip_udp) = hdr.split_at_mut(ETH_HLEN);
    let (ip, udp) = ip_udp.split_at_mut(IP_HLEN);
    eth[0..6].copy_from_slice(&flow.dst_mac);
    eth[6..12].copy_from_slice(&flow.src_mac);
    eth[12..14].copy_from_slice(&0x0800u16.to_be_bytes());

    let udp_len = (UDP_HLEN + payload) as u16;
    udp[0..2].copy_from_slice(&flow.sport.to_be_bytes());
    udp[2..4].copy_from_slice(&flow.dport.to_be_bytes());
    udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    udp[6..8].copy_from_slice(&[0, 0]);
    // The UDP header is 8 bytes (even), so the payload's sum joins it without a byte swap.
    let sum = csum_add(payload_sum, csum_partial(udp, 0));
    let mut check = match csum_tcpudp_magic(flow.src_ip, flow.dst_ip, udp_len, IPPROTO_UDP, sum) {
        0 => 0xffff, // RFC 768: a computed zero is sent as all ones
        c => c,
    };
    if opts.corrupt_udp_checksum {
        // Any other value but 0 (no checksum) and its one's-complement twin is wrong.
        check = match check ^ 0x5a5a {
            0 | 0xffff => 0x1234,
            c => c,
        };
    }
    udp[6..8].copy_from_slice(&check.to_ne_bytes());

    let total = (IP_HLEN + UDP_HLEN + payload) as u16;
    ip[0] = 0x45; // IPv4, 5 words of header
    ip[1] = 0;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[4..6].copy_from_slice(&opts.ip_id.to_be_bytes());
    ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // don't fragment
    ip[8] = 64;
    ip[9] = IPPROTO_UDP;
    ip[10..12].copy_from_slice(&[0, 0]);
    ip[12..16].copy_from_slice(&flow.src_ip);
    ip[16..20].copy_from_slice(&flow.dst_ip);
    let check = csum_fold(csum_partial(ip, 0));
    ip[10..12].copy_from_slice(&check.to_ne_bytes());
    Ok(len)
}

/// What a parsed frame says, for checking frames without a kernel.
#[derive(Debug, PartialEq, Eq)]
pub struct Parsed<'a> {
    pub dst_mac: [u8; 6],
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    pub dport: u16,
    pub ip_checksum_ok: bool,
    pub udp_checksum_ok: bool,
    pub payload: &'a [u8],
}

/// Parses a frame written by [`build`] and verifies both checksums as a receiver would.
pub fn parse(frame: &[u8]) -> Option<Parsed<'_>> {
    if frame.len() < HEADERS || frame[12..14] != [0x08, 0x00] || frame[ETH_HLEN] != 0x45 {
        return None;
    }
    let ip = &frame[ETH_HLEN..ETH_HLEN + IP_HLEN];
    let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    if total != frame.len() - ETH_HLEN || ip[9] != IPPROTO_UDP {
        return None;
    }
    let udp = &frame[ETH_HLEN + IP_HLEN..];
    let udp_len = u16::from_be_bytes([udp[4], udp[5]]);
    if udp_len as usize != udp.len() {
        return None;
    }
    let src_ip: [u8; 4] = ip[12..16].try_into().ok()?;
    let dst_ip: [u8; 4] = ip[16..20].try_into().ok()?;
    let udp_sum = csum_tcpudp_magic(src_ip, dst_ip, udp_len, IPPROTO_UDP, csum_partial(udp, 0));
    Some(Parsed {
        dst_mac: frame[0..6].try_into().ok()?,
        src_ip,
        dst_ip,
        dport: u16::from_be_bytes([udp[2], udp[3]]),
        ip_checksum_ok: csum_fold(csum_partial(ip, 0)) == 0,
        udp_checksum_ok: udp[6..8] != [0, 0] && udp_sum == 0,
        payload: &udp[UDP_HLEN..],
    })
}

/// The payloads of a run: datagram `seq` is its sequence number (8 bytes, big-endian) and then
/// a stretch of a fixed pseudo-random pattern at an offset that depends on `seq`, so the
/// receiver can rebuild and compare every byte. The sender gathers each payload from four
/// pieces (the sequence number and three cuts of the pattern whose lengths vary with `seq`, so
/// the segment boundaries land at every parity and line offset).
pub struct Payloads {
    pattern: Vec<u8>,
    max: usize,
    spread: usize,
}

/// Why a received datagram is not the one its sequence number names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    TooShort {
        len: usize,
    },
    SeqOutOfRange {
        seq: u64,
    },
    Length {
        seq: u64,
        len: usize,
        expected: usize,
    },
    Byte {
        seq: u64,
        offset: usize,
        got: u8,
        expected: u8,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::TooShort { len } => write!(f, "{len}-byte datagram has no sequence number"),
            Mismatch::SeqOutOfRange { seq } => write!(f, "sequence number {seq} was never sent"),
            Mismatch::Length { seq, len, expected } => {
                write!(f, "datagram {seq}: {len} bytes, expected {expected}")
            }
            Mismatch::Byte {
                seq,
                offset,
                got,
                expected,
            } => write!(
                f,
                "datagram {seq}: byte {offset} is {got:#04x}, expected {expected:#04x}"
            ),
        }
    }
}

const SEQ_LEN: usize = 8;
const PATTERN_LEN: usize = 1 << 17;

impl Payloads {
    /// Payload lengths from `max - spread + 1` to `max` bytes (`spread` >= 1; `max` >= 8).
    pub fn new(max: usize, spread: usize) -> Self {
        assert!(max >= SEQ_LEN && spread >= 1 && spread <= max - SEQ_LEN + 1);
        assert!(
            max < PATTERN_LEN / 2,
            "payloads up to {} bytes",
            PATTERN_LEN / 2
        );
        // xorshift: no short period a misplaced copy could hide in. All eight bytes of each
        // step are used (the tests run this under Miri, which interprets every step).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut pattern = vec![0u8; PATTERN_LEN];
        for word in pattern.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            word.copy_from_slice(&x.to_le_bytes());
        }
        Payloads {
            pattern,
            max,
            spread,
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    pub fn len_of(&self, seq: u64) -> usize {
        self.max - (seq.wrapping_mul(97) % self.spread as u64) as usize
    }

    fn body(&self, seq: u64) -> &[u8] {
        let off = (seq.wrapping_mul(4099) % (PATTERN_LEN / 2) as u64) as usize;
        &self.pattern[off..off + self.len_of(seq) - SEQ_LEN]
    }

    /// The sequence-number piece of datagram `seq`.
    pub fn head(seq: u64) -> [u8; SEQ_LEN] {
        seq.to_be_bytes()
    }

    /// The four pieces of datagram `seq`; `head` must be [`Self::head`]`(seq)`.
    pub fn pieces<'a>(&'a self, seq: u64, head: &'a [u8; SEQ_LEN]) -> [IoVec<'a>; 4] {
        let body = self.body(seq);
        let a = ((seq % 61) as usize * 7 + 1).min(body.len());
        let b = (a + (seq % 13) as usize * 41 + 3).min(body.len());
        [
            IoVec::new(head),
            IoVec::new(&body[..a]),
            IoVec::new(&body[a..b]),
            IoVec::new(&body[b..]),
        ]
    }

    /// Datagram `seq` in one piece.
    pub fn expected(&self, seq: u64) -> Vec<u8> {
        let mut v = Self::head(seq).to_vec();
        v.extend_from_slice(self.body(seq));
        v
    }

    /// Checks every byte of a received datagram; returns its sequence number.
    pub fn verify(&self, datagram: &[u8], sent: u64) -> Result<u64, Mismatch> {
        let Some(head) = datagram.get(..SEQ_LEN) else {
            return Err(Mismatch::TooShort {
                len: datagram.len(),
            });
        };
        let seq = u64::from_be_bytes(head.try_into().expect("8 bytes"));
        if seq >= sent {
            return Err(Mismatch::SeqOutOfRange { seq });
        }
        let expected = self.len_of(seq);
        if datagram.len() != expected {
            return Err(Mismatch::Length {
                seq,
                len: datagram.len(),
                expected,
            });
        }
        let body = self.body(seq);
        if datagram[SEQ_LEN..] == *body {
            return Ok(seq);
        }
        if let Some(i) = (0..body.len()).find(|&i| datagram[SEQ_LEN + i] != body[i]) {
            return Err(Mismatch::Byte {
                seq,
                offset: SEQ_LEN + i,
                got: datagram[SEQ_LEN + i],
                expected: body[i],
            });
        }
        Ok(seq)
    }
}
