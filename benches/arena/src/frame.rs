//! Transmit frames as a network stack builds them, and the two references every frame
//! measurement prints beside cachecopy: glibc's `memcpy` of the same bytes and the physical
//! limit, a plain loop of the ideal stores.
//!
//! A frame is a [`HEADER`]-byte Ethernet + IPv4 + UDP header at the start of a [`SLOT`]-byte ring
//! slot and a [`PAYLOAD`]-byte payload right behind it, at offset 42: its first and last lines
//! are partial, and the first one holds bytes of both pieces ([`Shape::Header`]). The second
//! shape, a line-aligned payload with no header ([`Shape::Aligned`]), is the easy case kept for
//! comparison. The report, `benches/net.rs` and the examples all use these, and the layout
//! constants are the library's own (`cachecopy::net::layout`), so a frame means the same bytes
//! everywhere.
//!
//! Like the rest of this crate it does not depend on cachecopy.

use std::hint::black_box;

// The frame layout is the library's public one (`cachecopy::net::layout`), compiled here from
// its file rather than through a dependency: this crate stays independent of the code it
// measures, and the layout stays defined once.
#[path = "../../../src/net/layout.rs"]
mod layout;
pub use layout::{HEADER, PAYLOAD, SLOT};
/// Frames per batch (one fence each), as `sendmmsg` users and AF_XDP rings batch them.
pub const BATCH: usize = 64;

/// Where a frame's pieces sit in its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A 42-byte header at offset 0, the payload at offset 42: as a stack builds a frame.
    Header,
    /// The payload alone at offset 0 (line-aligned, no header): the easy case.
    Aligned,
}

impl Shape {
    /// Both, the real one first.
    pub const ALL: [Shape; 2] = [Shape::Header, Shape::Aligned];

    /// Header bytes before the payload (0 or [`HEADER`]).
    pub fn header(self) -> usize {
        match self {
            Shape::Header => HEADER,
            Shape::Aligned => 0,
        }
    }

    /// Bytes of the frame: header and payload.
    pub fn bytes(self) -> usize {
        self.header() + PAYLOAD
    }

    /// Whole lines the limit loop streams per frame: the frame rounded up to lines (24 for
    /// [`Shape::Header`], whose last line is padded; 23 for [`Shape::Aligned`]).
    pub fn lines(self) -> usize {
        self.bytes().div_ceil(64)
    }

    /// `"hdr 42 + payload"` or `"aligned payload"`.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Header => "42 B header + payload at 42",
            Shape::Aligned => "aligned payload, no header",
        }
    }

    /// The same frame as a [`Place`]: the payload at offset [`Shape::header`].
    pub fn place(self) -> Place {
        Place::at(self.header())
    }

    /// The frame image: `hdr` then `payload`, padded with zeros to whole lines.
    pub fn image(self, hdr: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; self.lines() * 64];
        v[..self.header()].copy_from_slice(&hdr[..self.header()]);
        v[self.header()..self.bytes()].copy_from_slice(&payload[..PAYLOAD]);
        v
    }
}

/// The payload offsets every frame sweep measures (`udp_tx`, the report's frames at every payload offset): no header
/// (0), Ethernet (14), Ethernet + IPv4 + UDP (42), Ethernet + IPv4 + TCP (54), a payload on a
/// line (64), TCP with the timestamp option (66), a payload on the third line (128).
pub const OFFSETS: [usize; 7] = [0, 14, 42, 54, 64, 66, 128];

/// Where a frame sits in its slot when its payload starts at offset `at`: the header is the
/// [`HEADER`] bytes right in front of the payload (only the `at` bytes there are when `at` is
/// smaller: an Ethernet header at 14, none at 0), and the bytes of the slot before the header
/// are headroom the frame does not touch (an AF_XDP headroom, `skb_reserve`). The payload is
/// [`PAYLOAD`] bytes, or what fits the slot: from offset 64 on it runs to the slot's end, so
/// the next slot's first line follows the frame's last one in memory.
///
/// [`Shape::Header`] is `Place::at(42)`, [`Shape::Aligned`] `Place::at(0)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Place {
    at: usize,
}

impl Place {
    /// The payload at offset `at` of the slot.
    ///
    /// # Panics
    /// When `at` leaves less than a line of payload in the slot.
    pub fn at(at: usize) -> Place {
        assert!(
            at + 64 <= SLOT,
            "Place::at({at}): no room for a payload in a {SLOT} B slot"
        );
        Place { at }
    }

    /// Every offset of [`OFFSETS`].
    pub fn all() -> impl Iterator<Item = Place> {
        OFFSETS.into_iter().map(Place::at)
    }

    /// The payload's offset in the slot.
    pub fn offset(self) -> usize {
        self.at
    }

    /// Header bytes in front of the payload: [`HEADER`], or `at` when fewer.
    pub fn header(self) -> usize {
        self.at.min(HEADER)
    }

    /// Where the frame (its header) starts in the slot.
    pub fn start(self) -> usize {
        self.at - self.header()
    }

    /// Payload bytes: [`PAYLOAD`], or what fits the slot.
    pub fn payload(self) -> usize {
        PAYLOAD.min(SLOT - self.at)
    }

    /// Where the frame ends in the slot.
    pub fn end(self) -> usize {
        self.at + self.payload()
    }

    /// Header and payload bytes.
    pub fn bytes(self) -> usize {
        self.end() - self.start()
    }

    /// The first byte of the first line the frame touches (a multiple of 64).
    pub fn first_line(self) -> usize {
        self.start() & !63
    }

    /// The whole lines the frame touches, from [`Place::first_line`]: what the limit streams.
    pub fn lines(self) -> usize {
        (self.end() - self.first_line()).div_ceil(64)
    }

    /// The image the limit streams at [`Place::first_line`]: zeros (headroom and padding),
    /// `hdr`'s first [`Place::header`] bytes (an Ethernet header is the first 14 of an Ethernet + IPv4 + UDP one), then the payload's first [`Place::payload`] bytes
    /// of `payload`.
    pub fn image(self, hdr: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; self.lines() * 64];
        let base = self.first_line();
        v[self.start() - base..self.at - base].copy_from_slice(&hdr[..self.header()]);
        v[self.at - base..self.end() - base].copy_from_slice(&payload[..self.payload()]);
        v
    }

    /// `"payload at 42 (42 B header)"`.
    pub fn name(self) -> String {
        format!("payload at {} ({} B header)", self.at, self.header())
    }
}

/// The limit: streams the whole lines of `image` into line-aligned `dst` with a plain loop of
/// the widest streaming store the CPU has (AVX-512 `vmovntdq zmm`, one store per line; else AVX
/// `vmovntdq ymm`; else SSE2 `movntdq`), the stores an ideal frame copy would make. Elsewhere
/// an ordinary copy (the limit is only defined where streaming stores exist). Call [`fence`]
/// before the bytes are read by another agent.
///
/// Not the 16-byte loop every x86_64 CPU runs: it leaves each line to the write-combining
/// buffer to assemble from four stores, and on the Intel Xeon VM (family 6 model 167) that
/// loop's time per frame changed severalfold from one run to the next while the wider loops
/// held steady in the same runs; on the Zen 4 VM it ran slower than the frames it was the
/// limit of (lab/machines/intel-xeon-f6m167.md, lab/findings/engine.md "The frame's store stream").
///
/// # Panics
/// When `dst` is not 64-byte aligned, or the lengths differ or are not whole lines.
pub fn stream_lines(dst: &mut [u8], image: &[u8]) {
    assert_eq!(dst.len(), image.len(), "stream_lines: lengths differ");
    assert_eq!(dst.len() % 64, 0, "stream_lines: not whole lines");
    assert_eq!(
        dst.as_ptr() as usize % 64,
        0,
        "stream_lines: destination not line-aligned"
    );
    #[cfg(target_arch = "x86_64")]
    {
        let (d, s, n) = (dst.as_mut_ptr(), image.as_ptr(), dst.len());
        // SAFETY: each loop runs only where `std_detect` found its instructions; every move
        // lies in both slices (equal lengths, whole lines) and every destination address is
        // aligned to the store's width (the slice is 64-aligned).
        unsafe {
            if std::is_x86_feature_detected!("avx512f") {
                stream_zmm(d, s, n);
            } else if std::is_x86_feature_detected!("avx") {
                stream_ymm(d, s, n);
            } else {
                stream_xmm(d, s, n);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(image);
}

/// The loop of the `stream_*` functions: `$n` bytes from `$s` to `$d`, one `$load` and one
/// streaming `$store` of `$w` bytes at a time.
#[cfg(target_arch = "x86_64")]
macro_rules! stream_loop {
    ($d:ident, $s:ident, $n:ident, $w:literal, $load:ident, $store:ident) => {
        for off in (0..$n).step_by($w) {
            // SAFETY: inside both buffers and aligned (the caller's contract); the instructions
            // run on this CPU (the function's target feature, or SSE2, baseline on x86_64).
            unsafe { $store($d.add(off).cast(), $load($s.add(off).cast())) };
        }
    };
}

/// `n` bytes (whole lines) from `s` streamed to 64-aligned `d`, 64 bytes a store.
///
/// # Safety
/// AVX-512F present; `s` readable and `d` writable for `n` bytes, `d` 64-aligned.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn stream_zmm(d: *mut u8, s: *const u8, n: usize) {
    use std::arch::x86_64::{_mm512_loadu_si512, _mm512_stream_si512};
    stream_loop!(d, s, n, 64, _mm512_loadu_si512, _mm512_stream_si512);
}

/// As [`stream_zmm`], 32 bytes a store.
///
/// # Safety
/// AVX present; as [`stream_zmm`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn stream_ymm(d: *mut u8, s: *const u8, n: usize) {
    use std::arch::x86_64::{_mm256_loadu_si256, _mm256_stream_si256};
    stream_loop!(d, s, n, 32, _mm256_loadu_si256, _mm256_stream_si256);
}

/// As [`stream_zmm`], 16 bytes a store (SSE2, every x86_64 CPU).
///
/// # Safety
/// As [`stream_zmm`], SSE2 only.
#[cfg(target_arch = "x86_64")]
unsafe fn stream_xmm(d: *mut u8, s: *const u8, n: usize) {
    use std::arch::x86_64::{_mm_loadu_si128, _mm_stream_si128};
    stream_loop!(d, s, n, 16, _mm_loadu_si128, _mm_stream_si128);
}

/// Orders the streaming stores of [`stream_lines`] before later stores (`sfence`).
pub fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` is baseline on x86_64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

extern "C" {
    #[link_name = "memcpy"]
    fn c_memcpy(dst: *mut u8, src: *const u8, len: usize) -> *mut u8;
}

/// glibc's `memcpy` (the C library's, whichever it is), called for real: through a pointer the
/// compiler cannot see through, so it is neither inlined nor replaced by its own copy.
///
/// # Panics
/// When the lengths differ.
pub fn memcpy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "memcpy: lengths differ");
    let f: unsafe extern "C" fn(*mut u8, *const u8, usize) -> *mut u8 = black_box(c_memcpy);
    // SAFETY: two live slices of equal length; `&mut` and `&` cannot overlap.
    unsafe { f(dst.as_mut_ptr(), src.as_ptr(), src.len()) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Buf;

    #[test]
    fn shapes_images_and_the_references_write_the_frame() {
        let hdr: Vec<u8> = (0..HEADER as u8).collect();
        let payload: Vec<u8> = (0..PAYLOAD).map(|i| (i * 7) as u8).collect();
        assert_eq!(Shape::Header.lines(), 24);
        assert_eq!(Shape::Aligned.lines(), 23);
        for shape in Shape::ALL {
            let image = shape.image(&hdr, &payload);
            assert_eq!(image[shape.header()..shape.bytes()], payload[..]);
            let mut ring = Buf::new(2 * SLOT, 0xee);
            let slot = &mut ring.as_mut_slice()[SLOT..SLOT + image.len()];
            stream_lines(slot, &image);
            fence();
            assert_eq!(slot, &image[..]);
            let mut out = vec![0u8; PAYLOAD];
            memcpy(&mut out, &payload);
            assert_eq!(out, payload);
        }
    }

    #[test]
    fn places_hold_the_frame_inside_its_slot() {
        let hdr: Vec<u8> = (0..HEADER as u8).collect();
        let payload: Vec<u8> = (0..PAYLOAD).map(|i| (i * 7) as u8).collect();
        for p in Place::all() {
            assert!(p.start() <= p.offset() && p.end() <= SLOT, "{p:?}");
            assert_eq!(p.offset() - p.start(), p.header());
            assert_eq!(p.bytes(), p.header() + p.payload());
            let image = p.image(&hdr, &payload);
            assert_eq!(image.len(), p.lines() * 64);
            assert!(p.first_line() + image.len() <= SLOT, "{p:?}");
            let at = p.offset() - p.first_line();
            assert_eq!(image[at..at + p.payload()], payload[..p.payload()]);
            assert_eq!(image[at - p.header()..at], hdr[..p.header()]);
        }
        assert_eq!((Place::at(64).end(), Place::at(66).end()), (SLOT, SLOT));
        assert_eq!((Place::at(0).header(), Place::at(14).header()), (0, 14));
        assert_eq!(
            (Place::at(128).start(), Place::at(128).payload()),
            (86, SLOT - 128)
        );
        assert_eq!(Shape::Header.place(), Place::at(42));
        assert_eq!(Shape::Aligned.place(), Place::at(0));
        assert_eq!(Place::at(42).bytes(), Shape::Header.bytes());
        assert_eq!(Place::at(42).lines(), Shape::Header.lines());
        assert_eq!(Place::at(0).lines(), Shape::Aligned.lines());
    }

    #[test]
    #[should_panic(expected = "not line-aligned")]
    fn the_limit_loop_refuses_a_misaligned_destination() {
        let mut ring = Buf::new(4096, 0);
        stream_lines(&mut ring.as_mut_slice()[8..72], &[0u8; 64]);
    }
}
