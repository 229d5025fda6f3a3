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

    /// The frame image: `hdr` then `payload`, padded with zeros to whole lines.
    pub fn image(self, hdr: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; self.lines() * 64];
        v[..self.header()].copy_from_slice(&hdr[..self.header()]);
        v[self.header()..self.bytes()].copy_from_slice(&payload[..PAYLOAD]);
        v
    }
}

/// The limit: streams the whole lines of `image` into line-aligned `dst` with a plain loop of
/// 16-byte streaming stores (SSE2 `movntdq`, every x86_64 CPU; the write-combining buffer
/// assembles each line), the stores an ideal frame copy would make. Elsewhere an ordinary copy
/// (the limit is only defined where streaming stores exist). Call [`fence`] before the bytes
/// are read by another agent.
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
    // SAFETY: SSE2 is baseline on x86_64; every 16-byte move lies in both slices (equal lengths,
    // a multiple of 16), and every destination address is 16-aligned (the slice is 64-aligned).
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let (d, s) = (dst.as_mut_ptr(), image.as_ptr());
        for off in (0..dst.len()).step_by(16) {
            let v = _mm_loadu_si128(s.add(off).cast::<__m128i>());
            _mm_stream_si128(d.add(off).cast::<__m128i>(), v);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(image);
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
    #[should_panic(expected = "not line-aligned")]
    fn the_limit_loop_refuses_a_misaligned_destination() {
        let mut ring = Buf::new(4096, 0);
        stream_lines(&mut ring.as_mut_slice()[8..72], &[0u8; 64]);
    }
}
