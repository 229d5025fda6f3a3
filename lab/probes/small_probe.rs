//! Small copies and fills: two questions about a CPU the project has no run of, answered in a
//! few seconds on the CPU at hand (lab/findings/small-calls.md, "Cold inline classes" and "64-byte
//! registers", says what each answer means and keeps the runs).
//!
//! `cargo run --release -p cachecopy-probes --example small_probe [-- --quick]`
//!
//! **A. Cold small calls.** The report's small calls have seen the inline classes (no call) lose to glibc
//! into cold destinations at 1-64 B on a CPU where a second benchmark saw them win. The two differ in how each call's destination arrives and in what runs
//! between the calls. Each row here is one way a destination arrives, every call a line no cache
//! holds (each variant has pages of its own, interleaved page by page with the others' over one
//! mapping so that every variant's walk spans all of it; every line is flushed once after the
//! mapping is made, and no line is written twice):
//! - `table 4K`: the report's method for small calls: the destinations precomputed in a table of pointers
//!   (as a descriptor ring holds buffer addresses), a scattered walk over 4 KiB pages, so nearly
//!   every call also misses the TLB;
//! - `walk 4K`: the same walk computed in the timed loop, no table (the second benchmark's);
//! - `table 2M`: `table 4K` on transparent huge pages: the line is cold, its translation is
//!   not (the kernel's direct map, DPDK's huge pages); the header says how much the kernel gave;
//! - `2M + work`: `table 2M` with a stack's other stores between the calls: after each copy a
//!   16-byte descriptor written to a small ring that stays in L1.
//!
//! Columns: glibc `memcpy` / `memset` called through a pointer the compiler cannot see through
//! (as through the PLT), then each variant's ratio: `inline`: `copy_raw` / `fill_raw` in
//! `Temporal` at the call site (the inline classes, no call); `called`: the same inline classes
//! behind a call (an `extern "C"` function reached through a pointer, as glibc is); `ymm`: the
//! AVX2 and AVX-512 tables' classes at these sizes (two 32-byte registers at 32-64 B, as glibc),
//! behind the same kind of call; `reload`: glibc again, through the report's loop of small calls, which
//! reads the function pointer, the source and the length back from the stack before every call
//! (table rows only). Reading it: `called` near 1.00x where `inline` is below says the loss
//! comes from the loop of calls without a call in it, not from the stores (at 8-32 B they are
//! glibc's own); `inline` near 1.00x in `table 2M` or `2M + work` where it is below in
//! `table 4K` says the report's method measures something a stack does not do; `reload` away
//! from 1.00x says the report's glibc loop is not the plain loop of calls it means to be; `inline`
//! and `called` both below everywhere say the inline stores themselves lose (`ymm` then says
//! whether 32-byte registers would not). About 0.7 GB of memory.
//!
//! **B. The table classes at 65-512 B: 64-byte against 32-byte registers** (the `zmm` column on
//! AVX-512 CPUs only). Each shape is an `extern "C"` function called through a pointer, as glibc
//! is: `zmm` the classes of 64-byte registers (two at 65-128 B, the AVX-512 kernel's former
//! shape; four at 129-256, eight at 257-512, as now), `ymm` those of 32-byte ones
//! (four, eight, then glibc's loop: one unaligned register, aligned blocks of four, the last
//! four); `lib` is the library as an application calls it, `copy_raw` / `fill_raw` in `Temporal`
//! at the call site (into the active engine's table past 64 B), timed as the report's small calls are.
//! Hot: the same buffer every call, at destination offsets 0, 5 and 24; cold: every destination
//! line flushed before the sample (its translation stays warm). The rule it checks: AVX-512
//! runs the classes up to 128 B on 32-byte registers and from 129 B on 64-byte ones
//! (`kernel::temporal`); `ymm` at or above `zmm` at 96-128 B and below it at 192-256 B keeps it.
//!
//! Every variant has its own buffers; the variants of one cell run interleaved in a fresh order
//! every round; figures are medians of ns per call, ratios glibc's time ÷ the variant's, paired
//! per round (above 1.00x: faster than glibc).

#[cfg(target_arch = "x86_64")]
fn main() {
    probe::main();
}

#[cfg(not(target_arch = "x86_64"))]
fn main() {
    println!("small_probe: its questions are about x86_64 CPUs (Intel's store pipeline, AVX-512); nothing to do here");
}

#[cfg(target_arch = "x86_64")]
mod probe {
    use core::arch::x86_64::*;
    use std::ffi::c_void;
    use std::hint::black_box;
    use std::time::Instant;

    use cachecopy::Mode;
    use cachecopy_arena::map::{Mapping, Pages};
    use cachecopy_arena::opaque;

    use cachecopy_arena::peer::{MemcpyFn as CopyFn, MemsetFn as FillFn};

    /// Consecutive visits of a walk land far apart (an odd multiplier permutes `0..2^k`).
    const SCATTER: u64 = 0x9e37_79b9_7f4a_7c15;
    /// A cold slot: 128 bytes, the line pair x86's spatial prefetcher completes, so writing one
    /// slot never pulls in a line of another.
    const SLOT: usize = 128;
    /// Part A's sizes.
    const A_SIZES: [usize; 3] = [8, 32, 64];
    /// Part B's sizes: two per class.
    const B_SIZES: [usize; 6] = [96, 128, 192, 256, 384, 512];
    /// Part B's hot destination offsets.
    const OFFSETS: [usize; 3] = [0, 5, 24];
    /// How far into its page every source starts (the report's skew for small calls).
    const SRC_SKEW: usize = 2048 + 64;
    const BYTE: u8 = 0x5a;

    /// A fresh mapping on `pages`, every page written, then (when `flush`) every line written
    /// back and evicted, so that no cache holds any of it.
    fn map(len: usize, pages: Pages, flush: bool) -> Mapping {
        let m = Mapping::new(len, pages);
        if flush {
            flush_lines(m.as_ptr(), m.len());
        }
        m
    }

    /// Writes back and evicts every line of `p..p + len` (`clflush`, every x86_64 CPU has it).
    fn flush_lines(p: *mut u8, len: usize) {
        let start = p as usize & !63;
        for line in (start..p as usize + len).step_by(64) {
            // SAFETY: `line` lies in (or starts the line of) a mapped, writable range.
            unsafe { _mm_clflush(line as *const u8) };
        }
        // SAFETY: baseline.
        unsafe { _mm_mfence() };
    }

    /// One variant's cold lines: `2^k` slots of [`SLOT`] bytes in every `lanes`-th page of an
    /// arena from page `lane` on (the variants share the arena's address range, as the
    /// report's small-call variants share its arena, but no page), visited in a scattered order, each
    /// once. Whole pages per variant keep every variant's lines spread over every cache set.
    #[derive(Clone, Copy)]
    struct Walk {
        base: *mut u8,
        mask: u64,
        lanes: usize,
        cursor: u64,
    }

    /// Slots per 4 KiB page.
    const PER_PAGE: usize = 4096 / SLOT;

    impl Walk {
        /// Variant `lane` of `lanes` in `arena`, `slots` (a power of two, at least a page's) slots
        /// each.
        fn new(arena: &Mapping, lane: usize, lanes: usize, slots: usize) -> Walk {
            assert!(slots.is_power_of_two() && slots >= PER_PAGE);
            assert!(slots * lanes * SLOT <= arena.len());
            Walk {
                // SAFETY: `lane * 4096 < arena.len()`.
                base: unsafe { arena.as_ptr().add(lane * 4096) },
                mask: slots as u64 - 1,
                lanes,
                cursor: 0,
            }
        }

        /// The destination of visit `k`.
        #[inline(always)]
        fn at(base: *mut u8, mask: u64, lanes: usize, k: u64) -> *mut u8 {
            let slot = (k.wrapping_mul(SCATTER) & mask) as usize;
            let (page, within) = (slot / PER_PAGE, slot % PER_PAGE);
            // SAFETY: `slot <= mask`, so the page lies in the arena (`new`).
            unsafe { base.add(page * lanes * 4096 + within * SLOT) }
        }

        /// Fills `out` with the next `n` destinations.
        fn fill(&mut self, out: &mut Vec<*mut u8>, n: usize) {
            out.clear();
            for _ in 0..n {
                self.cursor += 1;
                out.push(Walk::at(self.base, self.mask, self.lanes, self.cursor));
            }
        }

        /// Whether `n` more visits would come back to a slot already written.
        fn wraps(&self, n: usize) -> bool {
            self.cursor + n as u64 > self.mask + 1
        }
    }

    /// A loop of `n` calls, one per destination; ns per call. One function per variant (a
    /// macro): each loop starts at a function boundary of its own.
    macro_rules! timed {
        ($name:ident($($arg:ident: $ty:ty),*) |$d:ident, $n:ident, $s:ident| $body:expr) => {
            #[inline(never)]
            fn $name(dsts: &[*mut u8], $s: *const u8, len: usize $(, $arg: $ty)*) -> f64 {
                let _ = $s;
                let t = Instant::now();
                for &$d in dsts {
                    let $n = opaque(len);
                    $body;
                    opaque($d as usize);
                }
                t.elapsed().as_nanos() as f64 / dsts.len().max(1) as f64
            }
        };
    }

    /// As [`timed`], with a 16-byte descriptor written to a ring that stays in L1 after each
    /// call (`2M + work`).
    macro_rules! timed_work {
        ($name:ident($($arg:ident: $ty:ty),*) |$d:ident, $n:ident, $s:ident| $body:expr) => {
            #[inline(never)]
            fn $name(
                dsts: &[*mut u8],
                $s: *const u8,
                len: usize,
                ring: *mut [u64; 2]
                $(, $arg: $ty)*
            ) -> f64 {
                let _ = $s;
                let t = Instant::now();
                for (i, &$d) in dsts.iter().enumerate() {
                    let $n = opaque(len);
                    $body;
                    // SAFETY: the ring holds 16 descriptors.
                    unsafe { ring.add(i & 15).write_volatile([$n as u64, $d as u64]) };
                }
                t.elapsed().as_nanos() as f64 / dsts.len().max(1) as f64
            }
        };
    }

    /// As [`timed`], the walk computed in the loop (`walk 4K`); advances `w`.
    macro_rules! timed_walk {
        ($name:ident($($arg:ident: $ty:ty),*) |$d:ident, $n:ident, $s:ident| $body:expr) => {
            #[inline(never)]
            fn $name(w: &mut Walk, calls: usize, $s: *const u8, len: usize $(, $arg: $ty)*)
                -> f64
            {
                let _ = $s;
                let (base, mask, lanes, start) = (w.base, w.mask, w.lanes, w.cursor);
                let t = Instant::now();
                for k in 1..=calls as u64 {
                    let $d = Walk::at(base, mask, lanes, start + k);
                    let $n = opaque(len);
                    $body;
                    opaque($d as usize);
                }
                let ns = t.elapsed().as_nanos() as f64 / calls.max(1) as f64;
                w.cursor = start + calls as u64;
                ns
            }
        };
    }

    /// As [`timed`] for a call through a pointer, with the pointer, the source and the length
    /// read from the caller's stack before every call, as the report's small-call `memcpy`
    /// and `memset` loops do (their closures capture them by reference, and the compiler cannot
    /// keep them in registers across a call it cannot see into).
    macro_rules! timed_reload {
        ($name:ident($fty:ty) |$f:ident, $d:ident, $n:ident, $s:ident| $body:expr) => {
            #[inline(never)]
            fn $name(dsts: &[*mut u8], src: *const u8, len: usize, f: $fty) -> f64 {
                let (fs, ss, ls) = (f, src, len);
                let (fr, sr, lr) = (black_box(&fs), black_box(&ss), black_box(&ls));
                let t = Instant::now();
                for &$d in dsts {
                    // SAFETY: reads of live locals, through references.
                    let ($f, $s, $n) = unsafe {
                        (
                            core::ptr::read_volatile(fr),
                            core::ptr::read_volatile(sr),
                            opaque(core::ptr::read_volatile(lr)),
                        )
                    };
                    let _ = $s;
                    $body;
                    opaque($d as usize);
                }
                t.elapsed().as_nanos() as f64 / dsts.len().max(1) as f64
            }
        };
    }

    /// Part A's four variants of one timing loop (`$timed`): a copy and a fill through a
    /// pointer (glibc's, `called`, `ymm`), then the inline classes at the call site.
    macro_rules! variants {
        ($timed:ident: $call_copy:ident, $call_fill:ident, $copy:ident, $fill:ident) => {
            $timed!($call_copy(f: CopyFn) |d, n, src| unsafe { f(d.cast(), src.cast(), n) });
            $timed!($call_fill(f: FillFn) |d, n, src| unsafe {
                f(d.cast(), opaque(BYTE as usize) as i32, n)
            });
            $timed!($copy() |d, n, src| unsafe {
                cachecopy::copy_raw(d, src, n, Mode::Temporal)
            });
            $timed!($fill() |d, n, src| unsafe {
                cachecopy::fill_raw(d, opaque(BYTE as usize) as u8, n, Mode::Temporal)
            });
        };
    }

    // SAFETY (every body below): each destination holds `len` writable bytes (a slot or a hot
    // buffer sized for it), the source `len` readable bytes, in distinct buffers.
    variants!(timed: t_call_copy, t_call_fill, t_inline_copy, t_inline_fill);
    variants!(timed_work: w_call_copy, w_call_fill, w_inline_copy, w_inline_fill);
    variants!(timed_walk: k_call_copy, k_call_fill, k_inline_copy, k_inline_fill);
    timed_reload!(
        r_call_copy(CopyFn) | f,
        d,
        n,
        src | unsafe { f(d.cast(), src.cast(), n) }
    );
    timed_reload!(
        r_call_fill(FillFn) | f,
        d,
        n,
        src | unsafe { f(d.cast(), opaque(BYTE as usize) as i32, n) }
    );

    /// The inline classes behind a call (`called`), with no frame of its own: `memcpy`'s
    /// return value is kept by a tail call past 64 bytes, which part A never takes (a call
    /// that must keep `d` across the table's call saves a register on every call, a store and
    /// a load that glibc's `memcpy` does not have).
    unsafe extern "C" fn called_copy(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
        if n > 64 {
            // Through a pointer read at run time, so that the compiler cannot see that the
            // callee returns `d` and keep `d` in a saved register around a call instead.
            // SAFETY: `BIG_COPY` is `lib_copy`; the caller's contract (`memcpy`'s).
            return unsafe { core::ptr::read_volatile(&BIG_COPY)(d, s, n) };
        }
        // SAFETY: as above; `n <= 64`: the inline classes only.
        unsafe { cachecopy::copy_raw(d.cast(), s.cast(), n, Mode::Temporal) };
        d
    }

    unsafe extern "C" fn called_fill(d: *mut c_void, c: i32, n: usize) -> *mut c_void {
        if n > 64 {
            // SAFETY: as in `called_copy`.
            return unsafe { core::ptr::read_volatile(&BIG_FILL)(d, c, n) };
        }
        // SAFETY: as above.
        unsafe { cachecopy::fill_raw(d.cast(), c as u8, n, Mode::Temporal) };
        d
    }

    static BIG_COPY: CopyFn = lib_copy;
    static BIG_FILL: FillFn = lib_fill;

    #[inline(never)]
    unsafe extern "C" fn lib_copy(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
        // SAFETY: the caller's contract.
        unsafe { cachecopy::copy_raw(d.cast(), s.cast(), n, Mode::Temporal) };
        d
    }

    #[inline(never)]
    unsafe extern "C" fn lib_fill(d: *mut c_void, c: i32, n: usize) -> *mut c_void {
        // SAFETY: the caller's contract.
        unsafe { cachecopy::fill_raw(d.cast(), c as u8, n, Mode::Temporal) };
        d
    }

    /// Where a shape's bytes come from: memory, or one byte in every lane.
    trait Src: Copy {
        unsafe fn q(self, off: usize) -> u64;
        unsafe fn x(self, off: usize) -> __m128i;
        unsafe fn y(self, off: usize) -> __m256i;
        unsafe fn z(self, off: usize) -> __m512i;
    }

    #[derive(Clone, Copy)]
    struct Mem(*const u8);

    #[derive(Clone, Copy)]
    struct Byte(u8);

    impl Src for Mem {
        #[inline(always)]
        unsafe fn q(self, off: usize) -> u64 {
            // SAFETY: the shape reads inside its source (caller).
            unsafe { self.0.add(off).cast::<u64>().read_unaligned() }
        }
        #[inline(always)]
        unsafe fn x(self, off: usize) -> __m128i {
            // SAFETY: as above.
            unsafe { _mm_loadu_si128(self.0.add(off).cast()) }
        }
        #[inline(always)]
        unsafe fn y(self, off: usize) -> __m256i {
            // SAFETY: the shape reads inside its source (caller), AVX present.
            unsafe { _mm256_loadu_si256(self.0.add(off).cast()) }
        }
        #[inline(always)]
        unsafe fn z(self, off: usize) -> __m512i {
            // SAFETY: as above, AVX-512F present.
            unsafe { _mm512_loadu_si512(self.0.add(off).cast()) }
        }
    }

    impl Src for Byte {
        #[inline(always)]
        unsafe fn q(self, _off: usize) -> u64 {
            u64::from(self.0) * 0x0101_0101_0101_0101
        }
        #[inline(always)]
        unsafe fn x(self, _off: usize) -> __m128i {
            // SAFETY: SSE2 is baseline.
            unsafe { _mm_set1_epi8(self.0 as i8) }
        }
        #[inline(always)]
        unsafe fn y(self, _off: usize) -> __m256i {
            // SAFETY: AVX present (caller).
            unsafe { _mm256_set1_epi8(self.0 as i8) }
        }
        #[inline(always)]
        unsafe fn z(self, _off: usize) -> __m512i {
            // SAFETY: AVX-512F present (caller).
            unsafe { _mm512_set1_epi8(self.0 as i8) }
        }
    }

    /// The class of `W`-byte registers for `K*W < n <= 2K*W` (`K` = 1, 2, 4): `K` registers from
    /// the start and `K` from the end, all loaded first, stored in address order.
    macro_rules! ends {
        ($s:ident, $d:ident, $n:ident, $load:ident, $store:ident, $w:literal, 1) => {{
            let (a, b) = ($s.$load(0), $s.$load($n - $w));
            $store($d.cast(), a);
            $store($d.add($n - $w).cast(), b);
        }};
        ($s:ident, $d:ident, $n:ident, $load:ident, $store:ident, $w:literal, 2) => {{
            let (a, b) = ($s.$load(0), $s.$load($w));
            let (c, e) = ($s.$load($n - 2 * $w), $s.$load($n - $w));
            $store($d.cast(), a);
            $store($d.add($w).cast(), b);
            $store($d.add($n - 2 * $w).cast(), c);
            $store($d.add($n - $w).cast(), e);
        }};
        ($s:ident, $d:ident, $n:ident, $load:ident, $store:ident, $w:literal, 4) => {{
            let (a, b, c, e) = (
                $s.$load(0),
                $s.$load($w),
                $s.$load(2 * $w),
                $s.$load(3 * $w),
            );
            let (f, g) = ($s.$load($n - 4 * $w), $s.$load($n - 3 * $w));
            let (h, i) = ($s.$load($n - 2 * $w), $s.$load($n - $w));
            $store($d.cast(), a);
            $store($d.add($w).cast(), b);
            $store($d.add(2 * $w).cast(), c);
            $store($d.add(3 * $w).cast(), e);
            $store($d.add($n - 4 * $w).cast(), f);
            $store($d.add($n - 3 * $w).cast(), g);
            $store($d.add($n - 2 * $w).cast(), h);
            $store($d.add($n - $w).cast(), i);
        }};
    }

    /// 64-byte registers: two at 65-128 B, four at 129-256, eight at 257-512. Inlined into
    /// its `extern "C"` caller, which carries the target features.
    #[inline(always)]
    unsafe fn zmm<S: Src>(d: *mut u8, s: S, n: usize) {
        // SAFETY: every register lies in `0..n` for its class; AVX-512F present (caller).
        unsafe {
            if n <= 128 {
                ends!(s, d, n, z, _mm512_storeu_si512, 64, 1)
            } else if n <= 256 {
                ends!(s, d, n, z, _mm512_storeu_si512, 64, 2)
            } else {
                ends!(s, d, n, z, _mm512_storeu_si512, 64, 4)
            }
            _mm256_zeroupper();
        }
    }

    /// 32-byte registers: four at 65-128 B, eight at 129-256, then glibc's loop (the first
    /// register unaligned, aligned blocks of four, the last four). Inlined as [`zmm`].
    #[inline(always)]
    unsafe fn ymm<S: Src>(d: *mut u8, s: S, n: usize) {
        // SAFETY: every register lies in `0..n`; the loop stores below `n - 128`; AVX present.
        unsafe {
            if n <= 128 {
                ends!(s, d, n, y, _mm256_storeu_si256, 32, 2)
            } else if n <= 256 {
                ends!(s, d, n, y, _mm256_storeu_si256, 32, 4)
            } else {
                let first = s.y(0);
                let last = n - 128;
                let (t0, t1, t2, t3) = (s.y(last), s.y(last + 32), s.y(last + 64), s.y(last + 96));
                let mut off = 32 - (d as usize & 31);
                while off < last {
                    let (a, b, c, e) = (s.y(off), s.y(off + 32), s.y(off + 64), s.y(off + 96));
                    _mm256_store_si256(d.add(off).cast(), a);
                    _mm256_store_si256(d.add(off + 32).cast(), b);
                    _mm256_store_si256(d.add(off + 64).cast(), c);
                    _mm256_store_si256(d.add(off + 96).cast(), e);
                    off += 128;
                }
                _mm256_storeu_si256(d.cast(), first);
                _mm256_storeu_si256(d.add(last).cast(), t0);
                _mm256_storeu_si256(d.add(last + 32).cast(), t1);
                _mm256_storeu_si256(d.add(last + 64).cast(), t2);
                _mm256_storeu_si256(d.add(last + 96).cast(), t3);
            }
            _mm256_zeroupper();
        }
    }

    /// The `memcpy`- and `memset`-shaped entries `$copy` and `$fill` over the 65-512 B kernel
    /// `$kernel`, compiled with `$feature`; the probe calls them only where that feature runs.
    macro_rules! entries {
        ($feature:literal, $copy:ident, $fill:ident, $kernel:ident) => {
            #[target_feature(enable = $feature)]
            unsafe extern "C" fn $copy(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
                // SAFETY: `memcpy`'s contract, 65 <= n <= 512; called only where the feature
                // runs.
                unsafe { $kernel(d.cast(), Mem(s.cast()), n) };
                d
            }

            #[target_feature(enable = $feature)]
            unsafe extern "C" fn $fill(d: *mut c_void, c: i32, n: usize) -> *mut c_void {
                // SAFETY: as above.
                unsafe { $kernel(d.cast(), Byte(c as u8), n) };
                d
            }
        };
    }

    entries!("avx512f,avx512bw", zmm_copy, zmm_fill, zmm);
    entries!("avx2", ymm_copy, ymm_fill, ymm);

    /// The classes of the AVX2 and AVX-512 tables (and glibc's) at 8-64 B: two 8-byte words
    /// below 16 B, two 16-byte registers below 32, two 32-byte ones up to 64.
    #[inline(always)]
    unsafe fn ymm_small<S: Src>(d: *mut u8, s: S, n: usize) {
        // SAFETY: `8 <= n <= 64`; each pair lies in `0..n`; AVX present (caller).
        unsafe {
            if n >= 32 {
                let (a, b) = (s.y(0), s.y(n - 32));
                _mm256_storeu_si256(d.cast(), a);
                _mm256_storeu_si256(d.add(n - 32).cast(), b);
                _mm256_zeroupper();
            } else if n >= 16 {
                let (a, b) = (s.x(0), s.x(n - 16));
                _mm_storeu_si128(d.cast(), a);
                _mm_storeu_si128(d.add(n - 16).cast(), b);
            } else {
                let (a, b) = (s.q(0), s.q(n - 8));
                d.cast::<u64>().write_unaligned(a);
                d.add(n - 8).cast::<u64>().write_unaligned(b);
            }
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe extern "C" fn ymm_small_copy(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
        // SAFETY: `memcpy`'s contract, 8 <= n <= 64; called only where AVX2 runs.
        unsafe { ymm_small(d.cast(), Mem(s.cast()), n) };
        d
    }

    #[target_feature(enable = "avx2")]
    unsafe extern "C" fn ymm_small_fill(d: *mut c_void, c: i32, n: usize) -> *mut c_void {
        // SAFETY: as above.
        unsafe { ymm_small(d.cast(), Byte(c as u8), n) };
        d
    }

    /// A fresh order of `0..n` for round `r` (a small LCG shuffle).
    fn order(n: usize, r: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        let mut x = (r as u64 + 1).wrapping_mul(SCATTER) | 1;
        for i in (1..n).rev() {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            v.swap(i, (x >> 33) as usize % (i + 1));
        }
        v
    }

    fn median(v: &mut [f64]) -> f64 {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 {
            f64::NAN
        } else if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }

    /// Per variant, rounds of ns per call: the baseline's median and each variant's paired
    /// ratio (baseline ÷ variant per round, median).
    fn summarize(ns: &[Vec<f64>]) -> (f64, Vec<f64>) {
        let base = median(&mut ns[0].clone());
        let ratios = ns[1..]
            .iter()
            .map(|v| {
                let mut r: Vec<f64> = ns[0].iter().zip(v).map(|(b, x)| b / x).collect();
                median(&mut r)
            })
            .collect();
        (base, ratios)
    }

    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Method {
        Table4k,
        Walk4k,
        Table2m,
        Work2m,
    }

    impl Method {
        const ALL: [Method; 4] = [
            Method::Table4k,
            Method::Walk4k,
            Method::Table2m,
            Method::Work2m,
        ];
        fn name(self) -> &'static str {
            match self {
                Method::Table4k => "table 4K",
                Method::Walk4k => "walk 4K",
                Method::Table2m => "table 2M",
                Method::Work2m => "2M + work",
            }
        }
    }

    /// One variant of part A: a call through a pointer (`Some`) or the inline classes (`None`).
    #[derive(Clone, Copy)]
    enum Call {
        Copy(Option<CopyFn>),
        Fill(Option<FillFn>),
        /// glibc through the report's small-call loop (operands reloaded before every call).
        CopyReload(CopyFn),
        FillReload(FillFn),
    }

    struct Budget {
        rounds: usize,
        cold_calls: usize,
        hot_calls: usize,
        b_cold_calls: usize,
    }

    pub fn main() {
        let quick = std::env::args().any(|a| a == "--quick");
        let b = if quick {
            Budget {
                rounds: 7,
                cold_calls: 1000,
                hot_calls: 4000,
                b_cold_calls: 200,
            }
        } else {
            Budget {
                rounds: 19,
                cold_calls: 2000,
                hot_calls: 20_000,
                b_cold_calls: 500,
            }
        };
        let cpu = cachecopy::tune::cpu();
        println!(
            "small_probe: {} {} ({}), engine: {}",
            cpu.vendor(),
            cpu.brand(),
            if quick { "quick" } else { "full" },
            cachecopy::tune::Plan::current().tuning().engine
        );
        part_a(&b);
        part_b(&b);
    }

    /// Every variant's source and hot destination, page-aligned (a page for the source, whose
    /// bytes start at [`SRC_SKEW`], then two for the destination): variant `i`'s at
    /// `16 KiB * i`.
    fn buffers(variants: usize) -> Mapping {
        let m = map(variants * (16 << 10), Pages::Base, false);
        // SAFETY: inside the mapping.
        unsafe { core::ptr::write_bytes(m.as_ptr(), BYTE, m.len()) };
        m
    }

    fn part_a(b: &Budget) {
        let memcpy: CopyFn = libc::memcpy;
        let memset: FillFn = libc::memset;
        let calls = [
            Call::Copy(Some(memcpy)),
            Call::Copy(None),
            Call::Copy(Some(called_copy)),
            Call::Copy(Some(ymm_small_copy)),
            Call::CopyReload(memcpy),
            Call::Fill(Some(memset)),
            Call::Fill(None),
            Call::Fill(Some(called_fill)),
            Call::Fill(Some(ymm_small_fill)),
            Call::FillReload(memset),
        ];
        let v = calls.len();
        // Slots each variant needs in each arena: two methods, every size, every round (round 0
        // warms up), no slot written twice. The variants' slots interleave, so every variant's
        // walk spans the whole arena: on 4 KiB pages nearly every call misses the TLB, as in
        // the report's 512 MiB arena.
        let slots = (2 * A_SIZES.len() * (b.rounds + 1) * b.cold_calls).next_power_of_two();
        let t0 = Instant::now();
        let map4k = map(v * slots * SLOT, Pages::Base, true);
        let map2m = map(v * slots * SLOT, Pages::Huge, true);
        println!(
            "\nA. Cold small calls: ns per call, median of {} interleaved rounds of {} calls, each \
             into a line no cache holds; ratio = glibc's time ÷ the variant's, paired per round; \
             arenas: 4K {} MiB ({} KiB on huge pages), 2M {} MiB ({} KiB on huge pages), mapped \
             and flushed in {:.1} s",
            b.rounds,
            b.cold_calls,
            map4k.len() >> 20,
            map4k.huge_kib(),
            map2m.len() >> 20,
            map2m.huge_kib(),
            t0.elapsed().as_secs_f64()
        );
        let mut w4k: Vec<Walk> = (0..v).map(|i| Walk::new(&map4k, i, v, slots)).collect();
        let mut w2m: Vec<Walk> = (0..v).map(|i| Walk::new(&map2m, i, v, slots)).collect();
        let bufs = buffers(v);
        let mut rings = vec![[[0u64; 2]; 16]; v];
        let mut dsts: Vec<*mut u8> = Vec::with_capacity(b.cold_calls);
        println!(
            "   {:<10} {:>5} {:>10} {:>7} {:>7} {:>7} | {:>10} {:>7} {:>7} {:>7}",
            "method",
            "size",
            "memcpy ns",
            "inline",
            "called",
            "ymm",
            "memset ns",
            "inline",
            "called",
            "ymm"
        );
        for m in Method::ALL {
            for &len in &A_SIZES {
                let mut ns = vec![Vec::with_capacity(b.rounds); v];
                for round in 0..=b.rounds {
                    for i in order(v, round) {
                        // SAFETY: inside the variant's 16 KiB.
                        let src = unsafe { bufs.as_ptr().add(i * (16 << 10) + SRC_SKEW) };
                        let ring = rings[i].as_mut_ptr();
                        let w = match m {
                            Method::Table4k | Method::Walk4k => &mut w4k[i],
                            Method::Table2m | Method::Work2m => &mut w2m[i],
                        };
                        if w.wraps(b.cold_calls) {
                            eprintln!("small_probe: a walk came back to written slots");
                        }
                        if m != Method::Walk4k {
                            w.fill(&mut dsts, b.cold_calls);
                        }
                        let t = run_a(m, calls[i], &dsts, w, b.cold_calls, src, len, ring);
                        if round > 0 {
                            ns[i].push(t);
                        }
                    }
                }
                let (copy_ns, cr) = summarize(&ns[..5]);
                let (fill_ns, fr) = summarize(&ns[5..]);
                let cells = |r: &[f64]| -> String {
                    r.iter()
                        .map(|x| {
                            if x.is_nan() {
                                format!("{:>7}", "-")
                            } else {
                                format!("{x:>6.2}x")
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                println!(
                    "   {:<10} {:>5} {:>10.1} {} | {:>10.1} {}",
                    m.name(),
                    len,
                    copy_ns,
                    cells(&cr),
                    fill_ns,
                    cells(&fr)
                );
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn run_a(
        m: Method,
        call: Call,
        dsts: &[*mut u8],
        w: &mut Walk,
        calls: usize,
        src: *const u8,
        len: usize,
        ring: *mut [u64; 2],
    ) -> f64 {
        match (m, call) {
            (Method::Walk4k, Call::Copy(Some(f))) => k_call_copy(w, calls, src, len, black_box(f)),
            (Method::Walk4k, Call::Copy(None)) => k_inline_copy(w, calls, src, len),
            (Method::Walk4k, Call::Fill(Some(f))) => k_call_fill(w, calls, src, len, black_box(f)),
            (Method::Walk4k, Call::Fill(None)) => k_inline_fill(w, calls, src, len),
            (Method::Work2m, Call::Copy(Some(f))) => {
                w_call_copy(dsts, src, len, ring, black_box(f))
            }
            (Method::Work2m, Call::Copy(None)) => w_inline_copy(dsts, src, len, ring),
            (Method::Work2m, Call::Fill(Some(f))) => {
                w_call_fill(dsts, src, len, ring, black_box(f))
            }
            (Method::Work2m, Call::Fill(None)) => w_inline_fill(dsts, src, len, ring),
            (_, Call::Copy(Some(f))) => t_call_copy(dsts, src, len, black_box(f)),
            (_, Call::Copy(None)) => t_inline_copy(dsts, src, len),
            (_, Call::Fill(Some(f))) => t_call_fill(dsts, src, len, black_box(f)),
            (_, Call::Fill(None)) => t_inline_fill(dsts, src, len),
            (Method::Table4k | Method::Table2m, Call::CopyReload(f)) => {
                r_call_copy(dsts, src, len, black_box(f))
            }
            (Method::Table4k | Method::Table2m, Call::FillReload(f)) => {
                r_call_fill(dsts, src, len, black_box(f))
            }
            (_, Call::CopyReload(_) | Call::FillReload(_)) => f64::NAN,
        }
    }

    fn part_b(b: &Budget) {
        let avx512 = is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw");
        if !is_x86_feature_detected!("avx2") {
            println!("\nB. skipped: no AVX2 here");
            return;
        }
        let memcpy: CopyFn = libc::memcpy;
        let memset: FillFn = libc::memset;
        // Per op: glibc, zmm (AVX-512 CPUs only), ymm, then the library at the call site
        // (`None`: `copy_raw` / `fill_raw` inlined into the timing loop, as the report's small
        // calls time it).
        let copies: [Option<CopyFn>; 4] = [
            Some(memcpy),
            avx512.then_some(zmm_copy as CopyFn),
            Some(ymm_copy),
            None,
        ];
        let fills: [Option<FillFn>; 4] = [
            Some(memset),
            avx512.then_some(zmm_fill as FillFn),
            Some(ymm_fill),
            None,
        ];
        let v = copies.len() + fills.len();
        // Cold: a region per variant of `slots` slots of the largest size, reused, the lines of
        // a sample's destinations flushed before it.
        let stride = (B_SIZES[B_SIZES.len() - 1] + 64).next_multiple_of(SLOT);
        let slots = (4 * b.b_cold_calls).next_power_of_two();
        let region = slots * stride;
        let cold = map(v * region, Pages::Base, false);
        let bufs = buffers(v);
        println!(
            "\nB. Table classes, 64-byte (zmm) against 32-byte (ymm) registers{}: ns per call \
             (glibc), median of {} interleaved rounds of {} calls hot (one buffer), {} cold (lines \
             flushed before each sample); ratio = glibc's time ÷ the variant's; lib = copy_raw / \
             fill_raw Temporal",
            if avx512 {
                ""
            } else {
                " (no AVX-512 here: zmm left out)"
            },
            b.rounds,
            b.hot_calls,
            b.b_cold_calls
        );
        println!(
            "   {:>5} {:<7} {:>10} {:>6} {:>6} {:>6} | {:>10} {:>6} {:>6} {:>6}",
            "size", "dest", "memcpy ns", "zmm", "ymm", "lib", "memset ns", "zmm", "ymm", "lib"
        );
        let cols: Vec<(bool, usize)> = OFFSETS
            .iter()
            .map(|&o| (true, o))
            .chain([(false, 0), (false, 5)])
            .collect();
        let mut dsts: Vec<*mut u8> = Vec::with_capacity(b.hot_calls);
        let mut cursor = 0u64;
        for &len in &B_SIZES {
            for &(hot, off) in &cols {
                let mut ns = vec![Vec::with_capacity(b.rounds); v];
                for round in 0..=b.rounds {
                    for i in order(v, round) {
                        dsts.clear();
                        if hot {
                            // SAFETY: inside the variant's 16 KiB (`len + off <= 8 KiB`).
                            let d = unsafe { bufs.as_ptr().add(i * (16 << 10) + (8 << 10) + off) };
                            dsts.resize(b.hot_calls, d);
                        } else {
                            for _ in 0..b.b_cold_calls {
                                cursor += 1;
                                let slot = (cursor.wrapping_mul(SCATTER) as usize) & (slots - 1);
                                // SAFETY: inside the variant's region (`off + len <= stride`).
                                let d =
                                    unsafe { cold.as_ptr().add(i * region + slot * stride + off) };
                                flush_lines(d, len);
                                dsts.push(d);
                            }
                        }
                        // SAFETY: inside the variant's 16 KiB.
                        let src = unsafe { bufs.as_ptr().add(i * (16 << 10) + SRC_SKEW) };
                        let t = match i {
                            1 if !avx512 => f64::NAN,
                            5 if !avx512 => f64::NAN,
                            3 => t_inline_copy(&dsts, src, len),
                            7 => t_inline_fill(&dsts, src, len),
                            _ if i < 4 => copies[i]
                                .map_or(f64::NAN, |f| t_call_copy(&dsts, src, len, black_box(f))),
                            _ => fills[i - 4]
                                .map_or(f64::NAN, |f| t_call_fill(&dsts, src, len, black_box(f))),
                        };
                        if round > 0 {
                            ns[i].push(t);
                        }
                    }
                }
                let (copy_ns, cr) = summarize(&ns[..copies.len()]);
                let (fill_ns, fr) = summarize(&ns[copies.len()..]);
                let cell = |x: f64| {
                    if x.is_nan() {
                        "     -".to_string()
                    } else {
                        format!("{x:>5.2}x")
                    }
                };
                println!(
                    "   {:>5} {:<7} {:>10.2} {} {} {} | {:>10.2} {} {} {}",
                    len,
                    format!("{} +{off}", if hot { "hot" } else { "cold" }),
                    copy_ns,
                    cell(cr[0]),
                    cell(cr[1]),
                    cell(cr[2]),
                    fill_ns,
                    cell(fr[0]),
                    cell(fr[1]),
                    cell(fr[2])
                );
            }
        }
    }
}
