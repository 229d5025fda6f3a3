//! Sizes and addresses past 4 GiB: nothing in a kernel may hold a length, an offset or an
//! address in 32 bits.
//!
//! - `four_gib_and_67_bytes_per_mode`: one copy and one fill of 4 GiB + 67 bytes per mode on the
//!   dispatched backend, at odd offsets, checked against the reference in full (the source for
//!   copies, the byte for fills) and against canaries beyond both ends. About 8 GiB of memory
//!   and the longest run of the suite (lab/findings/testing-guarantees.md has its time), so it runs only with `CACHECOPY_TEST_HUGE=1` (a step of
//!   its own in `.ci/run`); never under Miri.
//! - `every_backend_across_the_4gib_boundary`: on every supported backend and mode, 1 MiB (and
//!   odd-sized) ranges placed across offset 2^32 of one 4 GiB + 8 MiB mapping and across an
//!   address that is a multiple of 2^32, as destination, as source and as both; only the pages
//!   touched cost memory (a few MiB).

use cachecopy::tune::Backend;
use cachecopy::Mode;

mod common;
use common::{all_bytes, miri, pattern, CANARY};

const GIB4: usize = 1 << 32;

/// An anonymous private mapping, pages committed only when touched.
struct Map {
    base: *mut u8,
    len: usize,
}

impl Map {
    /// `populate`: fault every page in at once (`MAP_POPULATE`, ~4 s for 4 GiB here), rather
    /// than one fault per page inside the kernels (~20 s when the machine is busy);
    /// transparent huge pages were slower still (compaction stalls, 43 s).
    fn new(len: usize, populate: bool) -> Map {
        // SAFETY: a fresh anonymous mapping, checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE
                    | libc::MAP_ANONYMOUS
                    | libc::MAP_NORESERVE
                    | if populate { libc::MAP_POPULATE } else { 0 },
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED, "mmap of {len} bytes failed");
        Map {
            base: base.cast(),
            len,
        }
    }

    /// `len` bytes from offset `at`. Takes `&self` so disjoint ranges can be held together:
    /// the callers only ask for ranges that do not overlap while both are alive.
    #[allow(clippy::mut_from_ref)]
    fn range(&self, at: usize, len: usize) -> &mut [u8] {
        assert!(at.checked_add(len).is_some_and(|e| e <= self.len));
        // SAFETY: inside the mapping, which lives as long as `self`; callers keep live ranges
        // disjoint (see above).
        unsafe { std::slice::from_raw_parts_mut(self.base.add(at), len) }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no range of it outlives `self`.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// Whether the full-size test runs: with `CACHECOPY_TEST_HUGE=1` (it needs 8 GiB and a long
/// run; `.ci/run` runs it in a step of its own), never under Miri.
fn huge_enabled() -> bool {
    !miri() && std::env::var_os("CACHECOPY_TEST_HUGE").is_some_and(|v| v == "1")
}

/// Each 8-byte word holds a mix of its index, so a byte copied to the wrong place (off by a
/// multiple of 2^32 included) differs.
fn write_pattern(buf: &mut [u8]) {
    let mut words = buf.chunks_exact_mut(8);
    for (i, w) in (&mut words).enumerate() {
        let x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64 >> 29);
        w.copy_from_slice(&x.to_ne_bytes());
    }
    for (i, b) in words.into_remainder().iter_mut().enumerate() {
        *b = 0xA0 | i as u8;
    }
}

#[test]
fn four_gib_and_67_bytes_per_mode() {
    if !huge_enabled() {
        println!("four_gib_and_67_bytes_per_mode: skipped (CACHECOPY_TEST_HUGE=1 runs it)");
        return;
    }
    let len = GIB4 + 67;
    // Odd offsets, and room for 64 canary bytes past the end of the destination.
    let (so, d_o) = (5, 3);
    let src_map = Map::new(so + len, true);
    let dst_map = Map::new(d_o + len + 64, true);
    let src = src_map.range(so, len);
    write_pattern(src);
    let src: &[u8] = src;
    dst_map.range(0, d_o).fill(CANARY);
    dst_map.range(d_o + len, 64).fill(CANARY);
    let canaries_intact = |what: &str| {
        assert!(
            all_bytes(dst_map.range(0, d_o), CANARY)
                && all_bytes(dst_map.range(d_o + len, 64), CANARY),
            "{what}: a byte outside the destination changed"
        );
    };
    for (i, mode) in Mode::ALL.into_iter().enumerate() {
        let dst = dst_map.range(d_o, len);
        // A different byte per mode, so every fill changes every byte.
        let byte = 0x11 * (i as u8 + 1);
        cachecopy::fill(dst, byte, mode);
        // Compared a MiB at a time against a block of the byte (memcmp speed).
        let block = vec![byte; 1 << 20];
        if let Some(i) = dst.chunks(block.len()).position(|c| *c != block[..c.len()]) {
            let at = i * block.len()
                + dst[i * block.len()..]
                    .iter()
                    .position(|&b| b != byte)
                    .unwrap();
            panic!("fill {mode} of {len}: first wrong byte at {at:#x}");
        }
        canaries_intact(&format!("fill {mode}"));

        cachecopy::copy(dst, src, mode);
        if dst != src {
            let at = dst.iter().zip(src).position(|(a, b)| a != b).unwrap();
            panic!("copy {mode} of {len}: first wrong byte at {at:#x}");
        }
        canaries_intact(&format!("copy {mode}"));
    }
}

#[test]
fn every_backend_across_the_4gib_boundary() {
    if miri() {
        return; // Miri cannot mmap.
    }
    let map = Map::new(GIB4 + (8 << 20), false);
    let addr = map.base as usize;
    // Offset 2^32 from the start of the mapping, and the first address that is a multiple of
    // 2^32 at least 4 MiB into it (a 4 GiB + 8 MiB mapping always holds one before its last
    // 4 MiB).
    let by_offset = GIB4;
    let by_address = (addr + (4 << 20)).next_multiple_of(GIB4) - addr;
    assert!(by_address + (4 << 20) <= map.len);
    // (length, bytes before the boundary): the boundary in the middle, one byte in, one byte
    // before the end, at a line and page split.
    let cases = [
        (1 << 20, 1 << 19),
        ((1 << 20) + 67, 1),
        ((1 << 20) + 67, (1 << 20) + 66),
        (4097, 4033),
        (1500, 61),
    ];
    let max = (1 << 20) + 67;
    let heap_src = pattern(max, 9);
    let mut heap_dst = vec![0u8; max + 128];
    let mut checked = 0;
    for &backend in Backend::supported() {
        for (m, mode) in Mode::ALL.into_iter().enumerate() {
            for &(len, before) in &cases {
                for (p, other) in [(by_offset, by_address), (by_address, by_offset)] {
                    let at = p - before;
                    // Destination across the boundary, source on the heap.
                    check(
                        backend,
                        mode,
                        map.range(at - 64, len + 128),
                        &heap_src[..len],
                    );
                    // Source across it, destination on the heap.
                    let src = map.range(at, len);
                    src.copy_from_slice(&heap_src[..len]);
                    src.rotate_left(m + 1);
                    check(backend, mode, &mut heap_dst[..len + 128], src);
                    // Both, when the two boundaries are far enough apart.
                    if p.abs_diff(other) >= 4 << 20 {
                        let dst = map.range(other - before - 64, len + 128);
                        check(backend, mode, dst, map.range(at, len));
                    }
                    // Fill across the boundary.
                    let dst = map.range(at - 64, len + 128);
                    dst.fill(CANARY);
                    let byte = (len + m) as u8 | 1;
                    cachecopy::raw::fill_with(backend, &mut dst[64..64 + len], byte, mode).unwrap();
                    assert!(
                        all_bytes(&dst[64..64 + len], byte),
                        "{backend} {mode} fill {len} across {p:#x}"
                    );
                    assert!(
                        canaries_intact(dst, len),
                        "{backend} {mode} fill {len} across {p:#x}: outside changed"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, Backend::supported().len() * 4 * cases.len() * 2);
}

/// Copies `src` into the middle of `room` (64 canary bytes before, the rest after) with
/// exactly `backend` and `mode`, and checks the copy and the canaries.
fn check(backend: Backend, mode: Mode, room: &mut [u8], src: &[u8]) {
    let len = src.len();
    room.fill(CANARY);
    cachecopy::raw::copy_with(backend, &mut room[64..64 + len], src, mode).unwrap();
    assert!(
        room[64..64 + len] == *src,
        "{backend} {mode} copy {len}: bytes differ"
    );
    assert!(
        canaries_intact(room, len),
        "{backend} {mode} copy {len}: outside changed"
    );
}

/// Every byte of `room` outside `64..64 + len` (where [`check`] and the fills write) is still
/// [`CANARY`].
fn canaries_intact(room: &[u8], len: usize) -> bool {
    room[..64]
        .iter()
        .chain(&room[64 + len..])
        .all(|&b| b == CANARY)
}
