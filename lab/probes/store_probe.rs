//! Which store should write a partial cache line? A probe of the store kinds a copy can use for
//! the ragged ends of a streamed destination, into lines in every state a transmit ring leaves
//! them in, and of whole transmit frames built with each kind.
//!
//! `cargo run --release -p cachecopy-probes --example store_probe [-- --quick] [--tables ABCDE]` (the tables to
//! run: all by default)
//!
//! Store kinds, each writing exactly the bytes of a partial line and nothing else:
//! - `masked`: one AVX-512 byte-masked store (`vmovdqu8 zmm{k}`), what the AVX-512 backend's
//!   small-size path does (AVX-512 BW CPUs only);
//! - `ov32`: two overlapping unmasked stores of the widest of 32/16/8/4/2/1 bytes that fits
//!   (AVX2 `vmovdqu ymm`), what the AVX2 backend does;
//! - `ov16`: the same ladder capped at 16 bytes (SSE2 `movdqu xmm`);
//! - `movnti`: ordinary stores up to 8-byte alignment, 8-byte `movnti` words, ordinary stores
//!   for the rest (the shape of Linux's `__copy_user_nocache`).
//!
//! Line states: `hot` (a 128 KiB ring, in the L2 of every CPU measured), `cold 4K` (a ring
//! larger than the last-level cache on 4 KiB pages, `MADV_NOHUGEPAGE`) and `cold 2M` (the same
//! on transparent huge pages, `MADV_HUGEPAGE`; the table says whether the kernel gave them).
//!
//! Table A writes the two partial lines of a frame per 1536-byte slot: bytes 42..64 (22 B, the
//! payload's head behind a 42-byte Ethernet + IPv4 + UDP header) and bytes 1472..1514 (42 B, its
//! tail), nothing else. Table B builds whole frames: the 42-byte header and the 1472-byte payload
//! at offset 42, the 22 whole lines between streamed with 64-byte `movntdq` lines, the partial
//! lines with each kind, one `sfence` per 64 frames; beside them the limit, a plain loop
//! streaming all 24 lines of each slot from a prebuilt frame image, and glibc `memcpy` of
//! header and payload. Every variant has its own ring; rounds interleave the variants; figures
//! are medians of ns per slot, and ratios are paired per round.
//!
//! Table D builds the same frames with hand-written store streams, one change at a time, to test
//! why partial lines cost what they do: the width of the streaming stores (16, 32 or 64 bytes:
//! how many stores queue behind one that waits), the shape (two copies, whose first and last
//! lines get ordinary stores, or a gather, whose first line is streamed whole and only the last
//! gets ordinary stores), and where the ordinary stores go (where the copies put them; or both
//! lines prefetched when the frame starts and written after its streamed lines; or prefetched a
//! frame ahead). Each variant has a 16 MiB ring of its own, every line of which is flushed out
//! of the caches (untimed) before each timed pass, so every line is as a ring last written long
//! ago leaves it.
//!
//! Table E builds frames with the payload at offset 64 (its 1472 bytes are lines 1-23 of the
//! slot, all streamed whole, 32 bytes a store) behind a 42-byte header at 22..64, to test what
//! the header's line costs and which store may write it after the stream: no header; the
//! header written after the stream with 8-byte stores that stay in its bytes, its line
//! prefetched a frame ahead, when the frame starts, or not at all; the same with one byte-masked 64-byte store at 22, the shape of
//! an AVX-512 `memset` or `memcpy` of 42 bytes, whose register reaches line 1, just streamed;
//! and that masked store placed at the line's start, its register inside line 0. Hot (128 KiB)
//! and cold (16 MiB, flushed before each pass) rings, one `sfence` per 64 frames.
//!
//! Table C runs whole copies through the library on every engine the CPU offers (each register
//! set alone, AVX-512 with either edge store), `Temporal` and `NonTemporal`, from 64 bytes to
//! 1 MiB, into a cold destination 24 bytes past a slot's start (scattered over an arena larger
//! than the last-level cache), beside glibc `memcpy`: ns per copy and the ratio to glibc.

#[cfg(target_arch = "x86_64")]
fn main() {
    probe::main();
}

#[cfg(not(target_arch = "x86_64"))]
fn main() {
    println!(
        "store_probe: the store kinds it compares are x86_64 instructions; nothing to do here"
    );
}

#[cfg(target_arch = "x86_64")]
mod probe {
    use core::arch::x86_64::*;
    use std::hint::black_box;
    use std::time::Instant;

    use cachecopy::net::layout::{HEADER as HDR, PAYLOAD, SLOT};
    use cachecopy_arena::frame::BATCH;

    const FRAME: usize = HDR + PAYLOAD;

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Kind {
        Masked,
        Ov32,
        Ov16,
        Movnti,
    }

    impl Kind {
        fn name(self) -> &'static str {
            match self {
                Kind::Masked => "masked",
                Kind::Ov32 => "ov32",
                Kind::Ov16 => "ov16",
                Kind::Movnti => "movnti",
            }
        }
    }

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum State {
        Hot,
        Cold4k,
        Cold2m,
    }

    impl State {
        fn name(self) -> &'static str {
            match self {
                State::Hot => "hot",
                State::Cold4k => "cold 4K",
                State::Cold2m => "cold 2M",
            }
        }
    }

    /// An anonymous mapping of `len` bytes with the page policy of `state`, every page written.
    //
    // The library's calibration maps its memory the same way (`src/calibrate/arena.rs`, `Map`),
    // and this twin is kept on purpose: an example sees only the public API, and cachecopy
    // exports no mapping type (a copy library has no business owning an `mmap` wrapper; its
    // calibration maps privately so that it never calls the global allocator). What a ring adds
    // is its own anyway: 2 MiB rounding, the huge-page advice and the pre-faulting.
    struct Ring {
        p: *mut u8,
        len: usize,
        huge_kib: usize,
    }

    impl Ring {
        fn new(len: usize, state: State) -> Ring {
            let len = len.next_multiple_of(2 << 20);
            // SAFETY: a fresh private anonymous mapping; checked for failure.
            let p = unsafe {
                libc::mmap(
                    core::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert!(p != libc::MAP_FAILED, "mmap of {len} bytes failed");
            let advice = if state == State::Cold2m {
                libc::MADV_HUGEPAGE
            } else {
                libc::MADV_NOHUGEPAGE
            };
            // SAFETY: the range is the mapping just made. Advice only; failure is reported below
            // through the huge-page count.
            unsafe { libc::madvise(p, len, advice) };
            let p = p.cast::<u8>();
            for off in (0..len).step_by(4096) {
                // SAFETY: inside the mapping.
                unsafe { p.add(off).write_volatile(1) };
            }
            let huge_kib = anon_huge_kib(p as usize);
            Ring { p, len, huge_kib }
        }

        fn slots(&self) -> usize {
            self.len / SLOT
        }
    }

    impl Drop for Ring {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`.
            unsafe { libc::munmap(self.p.cast(), self.len) };
        }
    }

    /// The `AnonHugePages` of the mapping starting at `start` (from /proc/self/smaps), in KiB.
    fn anon_huge_kib(start: usize) -> usize {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let mut inside = false;
        for line in smaps.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = first.split_once('-') {
                if let (Ok(a), Ok(_)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    inside = a == start;
                    continue;
                }
            }
            if inside {
                if let Some(v) = line.strip_prefix("AnonHugePages:") {
                    return v.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
                }
            }
        }
        0
    }

    /// Writes `src[..n]` to `dst` with kind `k`, `n < 64`, touching no other byte.
    #[inline(always)]
    unsafe fn partial(k: Kind, dst: *mut u8, src: *const u8, n: usize) {
        // SAFETY: (whole body) every store lies in `dst..dst + n`, every load in `src..src + n`;
        // AVX-512 and AVX2 kinds are only run when the CPU reports them (`main`).
        unsafe {
            match k {
                Kind::Masked => masked(dst, src, n),
                Kind::Ov32 => ladder::<32>(dst, src, n),
                Kind::Ov16 => ladder::<16>(dst, src, n),
                Kind::Movnti => movnti(dst, src, n),
            }
        }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn masked(dst: *mut u8, src: *const u8, n: usize) {
        let m: __mmask64 = (1u64 << n) - 1;
        // SAFETY: masked-off lanes are neither read nor written.
        unsafe {
            let v = _mm512_maskz_loadu_epi8(m, src.cast());
            _mm512_mask_storeu_epi8(dst.cast(), m, v);
        }
    }

    /// Two overlapping moves of the widest power of two `<= min(n, MAX)`.
    #[inline(always)]
    unsafe fn ladder<const MAX: usize>(dst: *mut u8, src: *const u8, n: usize) {
        // SAFETY: each pair is used only when `n` is at least its width and at most twice it;
        // `ymm` only when `MAX == 32` (AVX2 checked by the caller).
        unsafe {
            if MAX >= 32 && n >= 32 {
                pair32(dst, src, n)
            } else if n >= 16 {
                if n > 32 {
                    // MAX == 16 and 32 < n < 64: four overlapping xmm moves cover it.
                    for off in [0, 16, n - 32, n - 16] {
                        let v = _mm_loadu_si128(src.add(off).cast());
                        _mm_storeu_si128(dst.add(off).cast(), v);
                    }
                } else {
                    let a = _mm_loadu_si128(src.cast());
                    let b = _mm_loadu_si128(src.add(n - 16).cast());
                    _mm_storeu_si128(dst.cast(), a);
                    _mm_storeu_si128(dst.add(n - 16).cast(), b);
                }
            } else if n >= 8 {
                let (a, b) = (
                    src.cast::<u64>().read_unaligned(),
                    src.add(n - 8).cast::<u64>().read_unaligned(),
                );
                dst.cast::<u64>().write_unaligned(a);
                dst.add(n - 8).cast::<u64>().write_unaligned(b);
            } else {
                core::ptr::copy_nonoverlapping(src, dst, n);
            }
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn pair32(dst: *mut u8, src: *const u8, n: usize) {
        // SAFETY: `32 <= n <= 64` (caller): both moves inside.
        unsafe {
            let a = _mm256_loadu_si256(src.cast());
            let b = _mm256_loadu_si256(src.add(n - 32).cast());
            _mm256_storeu_si256(dst.cast(), a);
            _mm256_storeu_si256(dst.add(n - 32).cast(), b);
        }
    }

    #[inline(always)]
    unsafe fn movnti(dst: *mut u8, src: *const u8, n: usize) {
        // SAFETY: ordinary byte moves to 8-byte alignment, `movnti` words inside `0..n`, the
        // rest ordinary; the frame loop fences.
        unsafe {
            let head = ((dst as usize).wrapping_neg() & 7).min(n);
            core::ptr::copy_nonoverlapping(src, dst, head);
            let mut off = head;
            while off + 8 <= n {
                let w = src.add(off).cast::<i64>().read_unaligned();
                _mm_stream_si64(dst.add(off).cast(), w);
                off += 8;
            }
            core::ptr::copy_nonoverlapping(src.add(off), dst.add(off), n - off);
        }
    }

    /// Streams `lines` whole lines from `src` to line-aligned `dst` with 16-byte `movntdq`
    /// (SSE2: every x86_64 CPU; the write-combining buffer assembles the line).
    #[inline(always)]
    unsafe fn stream_lines(dst: *mut u8, src: *const u8, lines: usize) {
        // SAFETY: `lines * 64` bytes inside both buffers (caller); `dst` 16-aligned.
        unsafe {
            for i in 0..lines * 4 {
                let v = _mm_loadu_si128(src.add(16 * i).cast());
                _mm_stream_si128(dst.add(16 * i).cast(), v);
            }
        }
    }

    /// A variant of table B.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Build {
        /// Header and payload with partial lines of this kind, body streamed.
        Edges(Kind),
        /// The 24 lines of the slot streamed from a prebuilt image.
        Limit,
        /// glibc `memcpy` of header and payload.
        Glibc,
    }

    impl Build {
        fn name(self) -> String {
            match self {
                Build::Edges(k) => format!("edges {}", k.name()),
                Build::Limit => "limit (24 lines streamed)".into(),
                Build::Glibc => "glibc memcpy".into(),
            }
        }
    }

    /// The fence of a batch: one `sfence` after every `BATCH` slots, as a transmit batch ends.
    #[inline(always)]
    fn batch_fence(slot: usize) {
        if slot % BATCH == BATCH - 1 {
            // SAFETY: `sfence` is baseline.
            unsafe { _mm_sfence() };
        }
    }

    /// Writes only the two partial lines of every slot (table A).
    fn edges_only(k: Kind, ring: &Ring, src: &[u8]) {
        let tail_at = HDR + PAYLOAD - (FRAME % 64);
        for s in 0..ring.slots() {
            // SAFETY: both pieces lie inside slot `s` of the ring and inside `src`.
            unsafe {
                let d = ring.p.add(s * SLOT);
                partial(k, d.add(HDR), src.as_ptr(), 64 - HDR);
                partial(k, d.add(tail_at), src.as_ptr().add(64), FRAME % 64);
            }
            batch_fence(s);
        }
        // SAFETY: `sfence` is baseline.
        unsafe { _mm_sfence() };
    }

    type Memcpy =
        unsafe extern "C" fn(*mut libc::c_void, *const libc::c_void, usize) -> *mut libc::c_void;

    /// Builds a frame in every slot (table B).
    fn frames(b: Build, ring: &Ring, hdr: &[u8], payload: &[u8], image: &[u8], memcpy: Memcpy) {
        for s in 0..ring.slots() {
            // SAFETY: every move lies inside slot `s` (`FRAME <= SLOT`) and its source.
            unsafe {
                let d = ring.p.add(s * SLOT);
                match b {
                    Build::Limit => stream_lines(d, image.as_ptr(), SLOT / 64),
                    Build::Glibc => {
                        memcpy(d.cast(), hdr.as_ptr().cast(), HDR);
                        memcpy(d.add(HDR).cast(), payload.as_ptr().cast(), PAYLOAD);
                    }
                    Build::Edges(k) => {
                        // Line 0: the header and the payload's first 22 bytes, both partial
                        // stores of kind `k` (as two separate copies write it).
                        partial(k, d, hdr.as_ptr(), HDR);
                        partial(k, d.add(HDR), payload.as_ptr(), 64 - HDR);
                        stream_lines(d.add(64), payload.as_ptr().add(64 - HDR), 22);
                        let tail = FRAME % 64;
                        partial(
                            k,
                            d.add(FRAME - tail),
                            payload.as_ptr().add(PAYLOAD - tail),
                            tail,
                        );
                    }
                }
            }
            batch_fence(s);
        }
        // SAFETY: `sfence` is baseline.
        unsafe { _mm_sfence() };
        black_box(ring.p);
    }

    /// When table D's ordinary stores are made.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum When {
        /// Where two copies (or a gather) make them: line 0 first, the tail line last.
        InPlace,
        /// Both lines prefetched when the frame starts, written after its streamed lines.
        Last,
        /// As `Last`, the lines prefetched a frame ahead (while the previous slot is written).
        Ahead,
    }

    /// A variant of table D.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Stream {
        /// 24 lines streamed with 16-byte stores (the limit of tables B and of the report).
        Limit,
        /// Header and payload as two copies write them: line 0 (header and the payload's first
        /// 22 bytes) and the tail line with ordinary stores, the 22 lines between streamed `w`
        /// bytes at a time.
        Copies(usize, When),
        /// As a gather writes them: line 0 streamed whole with the 22 lines after it, the tail
        /// line with ordinary stores.
        Gather(usize, When),
    }

    impl Stream {
        fn name(self) -> String {
            let when = |w: When| match w {
                When::InPlace => "",
                When::Last => " late",
                When::Ahead => " ahead",
            };
            match self {
                Stream::Limit => "limit".into(),
                Stream::Copies(w, at) => format!("copies{w}{}", when(at)),
                Stream::Gather(w, at) => format!("gather{w}{}", when(at)),
            }
        }
    }

    #[inline(always)]
    unsafe fn prefetch(p: *const u8) {
        // SAFETY: a prefetch never faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) }
    }

    /// Streams `lines` whole lines with stores of `w` bytes (32: AVX2, 64: AVX-512F, checked by
    /// the caller).
    #[inline(always)]
    unsafe fn stream_w(w: usize, dst: *mut u8, src: *const u8, lines: usize) {
        // SAFETY: forwarded contract.
        unsafe {
            match w {
                16 => stream_lines(dst, src, lines),
                32 => stream32(dst, src, lines),
                _ => stream64(dst, src, lines),
            }
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn stream32(dst: *mut u8, src: *const u8, lines: usize) {
        // SAFETY: `lines * 64` bytes inside both buffers (caller); `dst` 32-aligned.
        unsafe {
            for i in 0..lines * 2 {
                let v = _mm256_loadu_si256(src.add(32 * i).cast());
                _mm256_stream_si256(dst.add(32 * i).cast(), v);
            }
        }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn stream64(dst: *mut u8, src: *const u8, lines: usize) {
        // SAFETY: `lines * 64` bytes inside both buffers (caller); `dst` 64-aligned.
        unsafe {
            for i in 0..lines {
                let v = _mm512_loadu_si512(src.add(64 * i).cast());
                _mm512_stream_si512(dst.add(64 * i).cast(), v);
            }
        }
    }

    /// Builds a frame in every slot of `ring` the way `v` says (table D), one sfence per 64.
    fn frames_d(v: Stream, ring: &Ring, hdr: &[u8], payload: &[u8], image: &[u8]) {
        let tail = FRAME % 64;
        let tail_at = FRAME - tail;
        for s in 0..ring.slots() {
            // SAFETY: every move lies inside slot `s` (`FRAME <= SLOT`) and its source; a
            // prefetch of the next slot (which may be past the ring) never faults.
            unsafe {
                let d = ring.p.add(s * SLOT);
                match v {
                    Stream::Limit => stream_lines(d, image.as_ptr(), SLOT / 64),
                    Stream::Copies(w, when) => {
                        let k = if w == 16 { Kind::Ov16 } else { Kind::Ov32 };
                        let head = |d: *mut u8| {
                            partial(k, d, hdr.as_ptr(), HDR);
                            partial(k, d.add(HDR), payload.as_ptr(), 64 - HDR);
                        };
                        match when {
                            When::InPlace => head(d),
                            When::Last => {
                                prefetch(d);
                                prefetch(d.add(tail_at));
                            }
                            When::Ahead => {
                                let next = d.wrapping_add(SLOT);
                                prefetch(next);
                                prefetch(next.wrapping_add(tail_at));
                            }
                        }
                        stream_w(w, d.add(64), payload.as_ptr().add(64 - HDR), 22);
                        if when != When::InPlace {
                            head(d);
                        }
                        partial(
                            k,
                            d.add(tail_at),
                            payload.as_ptr().add(PAYLOAD - tail),
                            tail,
                        );
                    }
                    Stream::Gather(w, when) => {
                        let k = if w == 16 { Kind::Ov16 } else { Kind::Ov32 };
                        match when {
                            When::InPlace => {}
                            When::Last => prefetch(d.add(tail_at)),
                            When::Ahead => prefetch(d.wrapping_add(SLOT + tail_at)),
                        }
                        stream_w(w, d, image.as_ptr(), 23);
                        partial(
                            k,
                            d.add(tail_at),
                            payload.as_ptr().add(PAYLOAD - tail),
                            tail,
                        );
                    }
                }
            }
            batch_fence(s);
        }
        // SAFETY: `sfence` is baseline.
        unsafe { _mm_sfence() };
        black_box(ring.p);
    }

    /// Writes every line of `ring` back and out of the caches (`clflush`, baseline), then waits.
    fn flush_ring(ring: &Ring) {
        for off in (0..ring.len).step_by(64) {
            // SAFETY: inside the mapping.
            unsafe { _mm_clflush(ring.p.add(off)) };
        }
        // SAFETY: `mfence` is baseline.
        unsafe { _mm_mfence() };
    }

    /// Table D: frames built by hand-written store streams, one change at a time.
    fn streams_table(rounds: usize, avx2: bool, avx512: bool) {
        let hdr: Vec<u8> = (0..HDR).map(|i| i as u8 ^ 0x3c).collect();
        let payload: Vec<u8> = (0..PAYLOAD).map(|i| (i * 11 + 7) as u8).collect();
        let mut image = vec![0u8; SLOT];
        image[..HDR].copy_from_slice(&hdr);
        image[HDR..FRAME].copy_from_slice(&payload);
        let mut widths = vec![16];
        if avx2 {
            widths.push(32);
        }
        if avx512 {
            widths.push(64);
        }
        let mut vs = vec![Stream::Limit];
        for &w in &widths {
            for when in [When::InPlace, When::Last, When::Ahead] {
                vs.push(Stream::Copies(w, when));
            }
        }
        for &w in &widths {
            for when in [When::InPlace, When::Last] {
                vs.push(Stream::Gather(w, when));
            }
        }
        println!(
            "\nD. The frame's store stream, one change at a time: 16 MiB rings, every line flushed before each pass; copiesW: line 0 and the tail line ordinary, 22 lines streamed W bytes at a time; gatherW: 23 lines streamed, the tail ordinary; late: the ordinary lines prefetched when the frame starts and written after its streamed lines; ahead: prefetched a frame ahead; ns per slot, median, ÷ the limit (paired)"
        );
        let rings: Vec<Ring> = vs
            .iter()
            .map(|_| Ring::new(16 << 20, State::Cold4k))
            .collect();
        let mut t = vec![Vec::new(); vs.len()];
        for round in 0..rounds {
            for i in cachecopy_arena::rotated_order(vs.len(), round) {
                flush_ring(&rings[i]);
                let start = Instant::now();
                frames_d(vs[i], &rings[i], &hdr, &payload, &image);
                t[i].push(start.elapsed().as_nanos() as f64 / rings[i].slots() as f64);
            }
        }
        for (i, ring) in rings.iter().enumerate() {
            for s in [0, ring.slots() / 2, ring.slots() - 1] {
                // SAFETY: slot `s` of the ring, fenced above.
                let got = unsafe { core::slice::from_raw_parts(ring.p.add(s * SLOT), FRAME) };
                assert_eq!(got, &image[..FRAME], "{:?}: a frame came out wrong", vs[i]);
            }
        }
        let base = t[0].clone();
        for (v, col) in vs.iter().zip(t.iter_mut()) {
            let mut r: Vec<f64> = col.iter().zip(&base).map(|(a, b)| a / b).collect();
            println!(
                "   {:<16} {:>8.1} {:>6.2}x",
                v.name(),
                median(col),
                median(&mut r)
            );
        }
    }

    /// One ring per variant for lines in `state` (128 KiB hot, `cold_len` cold), then `rounds`
    /// rounds of `run` on each variant's ring in turn: the rings, and ns per slot per variant
    /// per round (tables A and B).
    fn per_slot<V: Copy>(
        variants: &[V],
        state: State,
        cold_len: usize,
        rounds: usize,
        mut run: impl FnMut(V, &Ring),
    ) -> (Vec<Ring>, Vec<Vec<f64>>) {
        let len = if state == State::Hot {
            128 << 10
        } else {
            cold_len
        };
        let rings: Vec<Ring> = variants.iter().map(|_| Ring::new(len, state)).collect();
        let mut t = vec![Vec::new(); variants.len()];
        for _ in 0..rounds {
            for (i, (&v, ring)) in variants.iter().zip(&rings).enumerate() {
                let start = Instant::now();
                run(v, ring);
                t[i].push(start.elapsed().as_nanos() as f64 / ring.slots() as f64);
            }
        }
        (rings, t)
    }

    fn median(v: &mut [f64]) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    pub fn main() {
        let args: Vec<String> = std::env::args().collect();
        let quick = args.iter().any(|a| a == "--quick");
        let tables = args
            .iter()
            .position(|a| a == "--tables")
            .and_then(|i| args.get(i + 1))
            .map_or("ABCDE".to_string(), |t| t.to_uppercase());
        let table = |c: char| tables.contains(c);
        let cpu = cachecopy::tune::cpu();
        let avx512 = std::is_x86_feature_detected!("avx512bw");
        let avx2 = std::is_x86_feature_detected!("avx2");
        let llc = cpu.caches.l3.or(cpu.caches.l2).unwrap_or(32 << 20);
        let cold_len = (2 * llc).clamp(64 << 20, if quick { 64 << 20 } else { 256 << 20 });
        let rounds = if quick { 3 } else { 9 };
        println!(
            "store_probe: {} {} ({:?})",
            cpu.vendor(),
            cpu.brand(),
            cpu.caches
        );
        println!(
            "rings: hot 128 KiB, cold {} MiB each (2 x the {} MiB last-level cache, 64-256 MiB); {rounds} rounds, interleaved, ns per 1536-byte slot, median (ratio to the first column, paired)",
            cold_len >> 20,
            llc >> 20
        );
        let kinds: Vec<Kind> = [Kind::Masked, Kind::Ov32, Kind::Ov16, Kind::Movnti]
            .into_iter()
            .filter(|k| match k {
                Kind::Masked => avx512,
                Kind::Ov32 => avx2,
                _ => true,
            })
            .collect();
        let src: Vec<u8> = (0..2048).map(|i| (i * 7 + 3) as u8).collect();
        let states = [State::Hot, State::Cold4k, State::Cold2m];

        if table('A') {
            println!("\nA. The two partial lines of each frame slot only (22 B at 42, 42 B at 1472), one sfence per 64 slots");
            print!("{:<10} {:>6}", "lines", "huge");
            for k in &kinds {
                print!(" {:>16}", k.name());
            }
            println!();
            for state in states {
                let (rings, mut t) = per_slot(&kinds, state, cold_len, rounds, |k, ring| {
                    edges_only(k, ring, &src)
                });
                print_row(state.name(), rings[0].huge_kib, &mut t);
            }
        }

        if table('B') {
            println!("\nB. Whole frames: 42 B header + 1472 B payload at offset 42, 22 lines streamed between the partial ones, one sfence per 64 frames");
            let hdr: Vec<u8> = (0..HDR).map(|i| i as u8 ^ 0x5a).collect();
            let payload: Vec<u8> = (0..PAYLOAD).map(|i| (i * 13 + 1) as u8).collect();
            let mut image = vec![0u8; SLOT];
            image[..HDR].copy_from_slice(&hdr);
            image[HDR..FRAME].copy_from_slice(&payload);
            let memcpy: Memcpy = black_box(libc::memcpy as Memcpy);
            let mut builds = vec![Build::Limit, Build::Glibc];
            builds.extend(kinds.iter().map(|&k| Build::Edges(k)));
            print!("{:<10} {:>6}", "ring", "huge");
            for b in &builds {
                print!(
                    " {:>16}",
                    b.name().replace("limit (24 lines streamed)", "limit")
                );
            }
            println!();
            for state in states {
                let (rings, mut t) = per_slot(&builds, state, cold_len, rounds, |b, ring| {
                    frames(b, ring, &hdr, &payload, &image, memcpy)
                });
                // Every frame intact: the probe measures correct stores only.
                for ring in &rings[..] {
                    for s in [0, ring.slots() / 2, ring.slots() - 1] {
                        // SAFETY: slot `s` of the ring, fenced above.
                        let got =
                            unsafe { core::slice::from_raw_parts(ring.p.add(s * SLOT), FRAME) };
                        assert_eq!(got, &image[..FRAME], "a frame came out wrong");
                    }
                }
                print_row(state.name(), rings[0].huge_kib, &mut t);
            }
        }
        if table('A') || table('B') {
            println!("\nhuge: KiB of the first ring the kernel backed with transparent huge pages (cold 2M asks for them; 0 means the kernel gave none)");
        }
        if table('D') {
            streams_table(rounds, avx2, avx512);
        }
        if table('C') {
            engines_table(llc, rounds);
        }
        if table('E') && avx2 {
            header_line_table(rounds, avx512);
        }
    }

    /// How table E writes a frame's header line (see the module docs).
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Header {
        /// The payload only.
        None,
        /// 8-byte stores inside the header's bytes, the line prefetched a frame ahead.
        Exact,
        /// The same stores, the line prefetched when the frame starts.
        ExactStart,
        /// The same stores, nothing prefetched.
        ExactCold,
        /// One masked 64-byte store at the header's start (reaching the next line).
        MaskedPast,
        /// One masked 64-byte store at the line's start.
        MaskedInside,
    }

    impl Header {
        fn name(self) -> &'static str {
            match self {
                Header::None => "payload only",
                Header::Exact => "exact stores",
                Header::ExactStart => "exact, pf at start",
                Header::ExactCold => "exact, no prefetch",
                Header::MaskedPast => "masked at 22",
                Header::MaskedInside => "masked at 0",
            }
        }
    }

    /// Table E: frames with the payload at 64, the header's line written four ways.
    fn header_line_table(rounds: usize, avx512: bool) {
        const AT: usize = 64;
        const H: usize = AT - HDR;
        let hdr: Vec<u8> = (0..HDR).map(|i| i as u8 ^ 0x3c).collect();
        let payload: Vec<u8> = (0..PAYLOAD).map(|i| (i * 11 + 7) as u8).collect();
        let mut vs = vec![
            Header::None,
            Header::Exact,
            Header::ExactStart,
            Header::ExactCold,
        ];
        if avx512 {
            vs.extend([Header::MaskedPast, Header::MaskedInside]);
        }
        println!(
            "\nE. The header's line behind a payload at offset 64 (lines 1-23 streamed, 32 bytes a store; the 42 B header at 22..64): none, exact 8-byte stores (its line prefetched a frame ahead, when the frame starts, or not at all), one masked 64-byte store at 22 (reaching line 1, as an AVX-512 memset of 42 B does), one masked store at the line's start; written after the frame's streaming stores, one sfence per 64 frames; ns per slot, median, ÷ the first column (paired)"
        );
        print!("{:<10}", "ring");
        for v in &vs {
            print!(" {:>20}", v.name());
        }
        println!();
        for (state, len) in [(State::Hot, 128 << 10), (State::Cold4k, 16 << 20)] {
            let rings: Vec<Ring> = vs.iter().map(|_| Ring::new(len, state)).collect();
            let mut t = vec![Vec::new(); vs.len()];
            for round in 0..rounds {
                for i in cachecopy_arena::rotated_order(vs.len(), round) {
                    if state != State::Hot {
                        flush_ring(&rings[i]);
                    }
                    let start = Instant::now();
                    // SAFETY: AVX2 present (checked by the caller), AVX-512 BW for the masked
                    // variants (only listed then); every store lies in the ring's slots.
                    unsafe { frames_e(vs[i], &rings[i], &hdr, &payload) };
                    t[i].push(start.elapsed().as_nanos() as f64 / rings[i].slots() as f64);
                }
            }
            for (v, ring) in vs.iter().zip(&rings) {
                for s in [0, ring.slots() / 2, ring.slots() - 1] {
                    // SAFETY: slot `s` of the ring, fenced by `frames_e`.
                    let got = unsafe { core::slice::from_raw_parts(ring.p.add(s * SLOT), SLOT) };
                    assert_eq!(&got[AT..], &payload[..], "{v:?}: the payload");
                    if *v != Header::None {
                        assert_eq!(&got[H..AT], &hdr[..], "{v:?}: the header");
                    }
                }
            }
            let base = t[0].clone();
            print!("{:<10}", state.name());
            for col in t.iter_mut() {
                let mut r: Vec<f64> = col.iter().zip(&base).map(|(a, b)| a / b).collect();
                let m = median(col);
                print!(" {:>12.1} {:>6.2}x", m, median(&mut r));
            }
            println!();
        }
    }

    /// Every slot of `ring`: the payload streamed to 64..1536, then the header written at
    /// 22..64 as `how` says; one `sfence` per 64 slots.
    ///
    /// # Safety
    /// AVX2 present; AVX-512 BW for the masked variants.
    #[target_feature(enable = "avx2,avx512f,avx512bw")]
    unsafe fn frames_e_512(how: Header, ring: &Ring, hdr: &[u8], payload: &[u8]) {
        // SAFETY: forwarded contract.
        unsafe { frames_e_body(how, ring, hdr, payload) }
    }

    /// As [`frames_e_512`], AVX2 only (no masked variant).
    ///
    /// # Safety
    /// AVX2 present; `how` not masked.
    #[target_feature(enable = "avx2")]
    unsafe fn frames_e_256(how: Header, ring: &Ring, hdr: &[u8], payload: &[u8]) {
        // SAFETY: forwarded contract.
        unsafe { frames_e_body(how, ring, hdr, payload) }
    }

    /// # Safety
    /// As [`frames_e_512`].
    unsafe fn frames_e(how: Header, ring: &Ring, hdr: &[u8], payload: &[u8]) {
        // SAFETY: forwarded contract; the masked variants exist only with AVX-512 BW.
        unsafe {
            if std::is_x86_feature_detected!("avx512bw") {
                frames_e_512(how, ring, hdr, payload)
            } else {
                frames_e_256(how, ring, hdr, payload)
            }
        }
    }

    /// # Safety
    /// As [`frames_e_512`]; inlined into a function with the features enabled.
    #[inline(always)]
    unsafe fn frames_e_body(how: Header, ring: &Ring, hdr: &[u8], payload: &[u8]) {
        const AT: usize = 64;
        const H: usize = AT - HDR;
        let slots = ring.slots();
        // SAFETY (whole body): every address lies in slot `s` of the ring; streamed addresses
        // are 32-aligned (slots are line-aligned, `AT` a line); the masked stores write only the
        // header's 42 bytes (their other lanes are masked off and neither fault nor write).
        unsafe {
            for s in 0..slots {
                let slot = ring.p.add(s * SLOT);
                if how == Header::Exact {
                    let next = ring.p.add(((s + 1) % slots) * SLOT);
                    _mm_prefetch::<_MM_HINT_T0>(next.cast());
                }
                if how == Header::ExactStart {
                    _mm_prefetch::<_MM_HINT_T0>(slot.cast());
                }
                let mut off = 0;
                while off < PAYLOAD {
                    let v = _mm256_loadu_si256(payload.as_ptr().add(off).cast());
                    _mm256_stream_si256(slot.add(AT + off).cast(), v);
                    off += 32;
                }
                match how {
                    Header::None => {}
                    Header::Exact | Header::ExactStart | Header::ExactCold => {
                        for i in [0, 8, 16, 24, 32, HDR - 8] {
                            let w = hdr.as_ptr().add(i).cast::<u64>().read_unaligned();
                            slot.add(H + i).cast::<u64>().write_unaligned(w);
                        }
                    }
                    Header::MaskedPast => {
                        let k: __mmask64 = (1u64 << HDR) - 1;
                        let v = _mm512_maskz_loadu_epi8(k, hdr.as_ptr().cast());
                        _mm512_mask_storeu_epi8(slot.add(H).cast(), k, v);
                    }
                    Header::MaskedInside => {
                        let k: __mmask64 = ((1u64 << HDR) - 1) << H;
                        let v = _mm512_maskz_loadu_epi8(k, hdr.as_ptr().wrapping_sub(H).cast());
                        _mm512_mask_storeu_epi8(slot.cast(), k, v);
                    }
                }
                if s % 64 == 63 || s + 1 == slots {
                    _mm_sfence();
                }
            }
        }
    }

    /// Table C: whole copies per engine and mode, cold destination at a 24-byte offset.
    fn engines_table(llc: usize, rounds: usize) {
        use cachecopy::tune::Engine;
        use cachecopy::Mode;
        use cachecopy_arena::{Arena, Dest};
        const OFFSET: usize = 24;
        let engines: Vec<Engine> = Engine::candidates().collect();
        let sizes = [64usize, 256, 1024, 4096, 64 << 10, 1 << 20];
        let src: Vec<u8> = (0..(1 << 20) + 64).map(|i| (i * 5 + 1) as u8).collect();
        let mut arena = Arena::new(Some(llc), (1 << 20) + OFFSET);
        println!(
            "\nC. Whole copies through cachecopy, cold destination {OFFSET} bytes past a slot's start ({} MiB arena); ns per copy, median, and ÷ glibc memcpy (paired); engine in use: {}",
            arena.len() >> 20,
            cachecopy::tune::Plan::current().tuning().engine
        );
        print!("{:<8} {:>9}", "size", "glibc");
        for e in &engines {
            for m in ["T", "NT"] {
                let name = format!(
                    "{}{} {m}",
                    e.stream,
                    if e.edges == cachecopy::tune::Edges::Masked {
                        "m"
                    } else {
                        ""
                    }
                );
                print!(" {name:>16}");
            }
        }
        println!();
        let memcpy: Memcpy = black_box(libc::memcpy as Memcpy);
        for &size in &sizes {
            let runs = ((8 << 20) / size).clamp(16, 4096);
            let n = 1 + 2 * engines.len();
            let mut t = vec![Vec::new(); n];
            for round in 0..rounds {
                let mut order: Vec<usize> = (0..n).collect();
                order.rotate_left(round % n);
                for v in order {
                    let start = Instant::now();
                    for _ in 0..runs {
                        let d = &mut arena.dest(Dest::Cold, size + OFFSET)[OFFSET..];
                        if v == 0 {
                            // SAFETY: two live buffers of `size` bytes that do not overlap.
                            unsafe { memcpy(d.as_mut_ptr().cast(), src.as_ptr().cast(), size) };
                        } else {
                            let e = engines[(v - 1) / 2];
                            let mode = if (v - 1) % 2 == 0 {
                                Mode::Temporal
                            } else {
                                Mode::NonTemporal
                            };
                            cachecopy::raw::copy_with_engine(e, d, &src[..size], mode)
                                .expect("supported");
                        }
                    }
                    t[v].push(start.elapsed().as_nanos() as f64 / runs as f64);
                }
            }
            let base = t[0].clone();
            print!("{:<8} {:>9.1}", size, median(&mut t[0].clone()));
            for col in t.iter_mut().skip(1) {
                let mut r: Vec<f64> = col.iter().zip(&base).map(|(a, b)| a / b).collect();
                print!(" {:>8.1} {:>6.2}x", median(col), median(&mut r));
            }
            println!();
        }
    }

    fn print_row(name: &str, huge_kib: usize, t: &mut [Vec<f64>]) {
        let base: Vec<f64> = t[0].clone();
        print!(
            "{name:<10} {:>6}",
            if huge_kib > 0 {
                format!("{}M", huge_kib >> 10)
            } else {
                "0".into()
            }
        );
        for col in t.iter_mut() {
            let mut r: Vec<f64> = col.iter().zip(&base).map(|(a, b)| a / b).collect();
            let m = median(col);
            print!(" {:>8.1} {:>6.2}x", m, median(&mut r));
        }
        println!();
    }
}
