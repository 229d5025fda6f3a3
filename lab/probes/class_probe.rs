//! Shapes of the small classes (0-64 B at the call site), side by side: calls that repeat one
//! size (the report's loop of small calls) and calls whose size changes every call (the
//! report's sequences of calls of changing size), so that a class shape is judged on both at once (lab/findings/small-calls.md, "Fixed
//! sizes and mixes", keeps the runs).
//!
//! `cargo run --release -p cachecopy-probes --example class_probe [-- fixed|mix|mode|rep] [--rounds N]`
//!
//! Copies:
//! - `glibc`: `memcpy` through a pointer the compiler cannot see through (as through the PLT);
//! - `lib`: `copy_raw` in `Temporal`, the library as it is;
//! - `ladder`: the classes before sizes that change every call were considered: `<= 32`, then
//!   `>= 16` (two 16-byte registers), `>= 8`, `>= 4`, `>= 2` (two scalars each), one byte; four
//!   registers above 32;
//! - `ge16`: the library's classes in the tree before: `>= 16` first (then `<= 32`), then
//!   `>= 4` (four 4-byte words), then `!= 0` (three bytes);
//! - `pairs`: `ge16` with its 4-15 B class split into an 8-byte pair and a 4-byte pair (one
//!   compare more, two stores fewer);
//! - `pairs-up`: the same leaves as `pairs`, the compares from the smallest size up.
//!
//! Fills:
//! - `glibc`: `memset` through a pointer;
//! - `lib`: `fill_raw` in `Temporal` (on a CPU whose record chose masked fills, the masked store
//!   behind its page test);
//! - `ladder`: the ladder above on a splatted byte;
//! - `plain`: the library's plain classes (its tree: `<= 32` first, then `>= 16`, then the
//!   short classes from the smallest up);
//! - `masked`: the masked store alone, no page test (x86_64 with AVX-512 BW and BMI2 only).
//!
//! `mode` (not run by default): what the mode costs a call at the call site, in the report's
//! loop of small calls. Past the inline classes, a prototype of the table's entry (an `extern "C"` kernel behind
//! a published pointer, 96 and 192 B) called as `Temporal` does, and as `Auto` may: behind a
//! compare of the length with a bound loaded from memory, behind a compare with the constant
//! `STREAM_MIN` first, or through an entry of its own. At 16-32 B, the inline pair of registers
//! with the mode a constant, the mode read from memory and unused (what reading it costs), and
//! read and tested: for `FlushCache` after the stores, with a per-mode bound loaded in place of
//! the length's constant, or before the stores.
//!
//! `rep` (not run by default): `Temporal` copies and fills of 1-32 KiB with the string
//! instruction (`rep movsb`, `rep stosb`; the thresholds set to 1 KiB) against the vector loop
//! (thresholds `never`), switched per sample: into one hot destination, and into a new slot of a
//! 256 MiB walk every call (cold), the source at the destination's page offset or 2112 bytes
//! from it; the vector loop's time ÷ the string instruction's (above 1: the string wins).
//!
//! Every variant is prototyped here, inlined at its own call site past one `len > 64` test
//! (longer calls go to `copy_raw`/`fill_raw`), each timed in a function of its own.
//! `fixed`: the same destination every call at offsets 0, 5 and 24, the source 2112 bytes into
//! its page, the length opaque at every call; ns per call. `mix`: Fleetbench's fleet-wide
//! distribution and sizes uniform in 0-64 and 0-16 B (`cachecopy_arena::mix`), in a 1 MiB set
//! read into the cache before every sample and an 8 MiB one. Every variant has its own buffers;
//! the variants of one cell run interleaved in a fresh order every round; medians over rounds,
//! ratios glibc's time ÷ the variant's per round, then their median.

#[cfg(target_arch = "x86_64")]
fn main() {
    probe::main();
}

#[cfg(not(target_arch = "x86_64"))]
fn main() {
    println!("class_probe: its prototypes are x86_64 code; nothing to do here");
}

#[cfg(target_arch = "x86_64")]
mod probe {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_set1_epi8, _mm_storeu_si128};
    use std::hint::black_box;
    use std::time::Instant;

    use cachecopy::Mode;
    use cachecopy_arena::mix::{Call, Op, Sequence, Sizes};
    use cachecopy_arena::{each_dest, opaque};

    use cachecopy_arena::peer::{MemcpyFn, MemsetFn};

    // ------------------------------------------------------------------ prototype classes
    // Each `unsafe fn` below: `d..d + n` writable and (copies) `s..s + n` readable, `n <= 64`.

    #[inline(always)]
    unsafe fn ld<T: Copy>(s: *const u8, o: usize) -> T {
        // SAFETY: the caller keeps `o + size_of::<T>() <= n`.
        unsafe { s.add(o).cast::<T>().read_unaligned() }
    }

    #[inline(always)]
    unsafe fn st<T: Copy>(d: *mut u8, o: usize, v: T) {
        // SAFETY: as `ld`.
        unsafe { d.add(o).cast::<T>().write_unaligned(v) }
    }

    #[inline(always)]
    unsafe fn ld16(s: *const u8, o: usize) -> __m128i {
        // SAFETY: as `ld`; SSE2 is in every x86_64 target.
        unsafe { _mm_loadu_si128(s.add(o).cast()) }
    }

    #[inline(always)]
    unsafe fn st16(d: *mut u8, o: usize, v: __m128i) {
        // SAFETY: as `ld`.
        unsafe { _mm_storeu_si128(d.add(o).cast(), v) }
    }

    /// Where the bytes come from: a source buffer or one repeated byte.
    trait Src: Copy {
        unsafe fn get<T: Copy>(self, o: usize) -> T;
        unsafe fn get16(self, o: usize) -> __m128i;
    }

    impl Src for *const u8 {
        #[inline(always)]
        unsafe fn get<T: Copy>(self, o: usize) -> T {
            // SAFETY: forwarded.
            unsafe { ld(self, o) }
        }
        #[inline(always)]
        unsafe fn get16(self, o: usize) -> __m128i {
            // SAFETY: forwarded.
            unsafe { ld16(self, o) }
        }
    }

    /// A byte repeated: every load is the splat (computed where it is used, as the library's
    /// classes do).
    #[derive(Clone, Copy)]
    struct Byte(u8);

    impl Src for Byte {
        #[inline(always)]
        unsafe fn get<T: Copy>(self, _: usize) -> T {
            let v = u64::from(self.0) * 0x0101_0101_0101_0101;
            // SAFETY: `T` is at most 8 bytes (the scalars here); the low bytes of the splat.
            unsafe { core::mem::transmute_copy(&v) }
        }
        #[inline(always)]
        unsafe fn get16(self, _: usize) -> __m128i {
            // SAFETY: SSE2 is in every x86_64 target.
            unsafe { _mm_set1_epi8(self.0 as i8) }
        }
    }

    #[inline(always)]
    unsafe fn pair16<S: Src>(d: *mut u8, s: S, n: usize) {
        // SAFETY: 16 <= n (callers).
        unsafe {
            let (a, e) = (s.get16(0), s.get16(n - 16));
            st16(d, 0, a);
            st16(d, n - 16, e);
        }
    }

    #[inline(always)]
    unsafe fn four16<S: Src>(d: *mut u8, s: S, n: usize) {
        // SAFETY: 32 < n <= 64 (callers).
        unsafe {
            let (a, b, c, e) = (s.get16(0), s.get16(16), s.get16(n - 32), s.get16(n - 16));
            st16(d, 0, a);
            st16(d, 16, b);
            st16(d, n - 32, c);
            st16(d, n - 16, e);
        }
    }

    #[inline(always)]
    unsafe fn pair<T: Copy, S: Src>(d: *mut u8, s: S, n: usize) {
        let w = size_of::<T>();
        // SAFETY: w <= n (callers).
        unsafe {
            let (a, e): (T, T) = (s.get(0), s.get(n - w));
            st(d, 0, a);
            st(d, n - w, e);
        }
    }

    #[inline(always)]
    unsafe fn words4<S: Src>(d: *mut u8, s: S, n: usize) {
        let k = n / 8 * 4;
        // SAFETY: 4 <= n < 16 (callers), so every window lies in 0..n.
        unsafe {
            let (a, b, c, e): (u32, u32, u32, u32) =
                (s.get(0), s.get(k), s.get(n - 4 - k), s.get(n - 4));
            st(d, 0, a);
            st(d, k, b);
            st(d, n - 4 - k, c);
            st(d, n - 4, e);
        }
    }

    #[inline(always)]
    unsafe fn bytes3<S: Src>(d: *mut u8, s: S, n: usize) {
        // SAFETY: 1 <= n <= 3 (callers).
        unsafe {
            let (a, b, c): (u8, u8, u8) = (s.get(0), s.get(n / 2), s.get(n - 1));
            st(d, 0, a);
            st(d, n / 2, b);
            st(d, n - 1, c);
        }
    }

    /// The ladder.
    #[inline(always)]
    unsafe fn ladder<S: Src>(d: *mut u8, s: S, n: usize) {
        // SAFETY: each class where its width fits.
        unsafe {
            if n <= 32 {
                if n >= 16 {
                    pair16(d, s, n)
                } else if n >= 8 {
                    pair::<u64, S>(d, s, n)
                } else if n >= 4 {
                    pair::<u32, S>(d, s, n)
                } else if n >= 2 {
                    pair::<u16, S>(d, s, n)
                } else if n == 1 {
                    st::<u8>(d, 0, s.get(0))
                }
            } else {
                four16(d, s, n)
            }
        }
    }

    /// The library's plain classes.
    #[inline(always)]
    unsafe fn plain<S: Src>(d: *mut u8, s: S, n: usize) {
        // SAFETY: as `ladder`.
        unsafe {
            if n <= 32 {
                if n >= 16 {
                    pair16(d, s, n)
                } else if n == 0 {
                } else if n < 4 {
                    bytes3(d, s, n)
                } else {
                    words4(d, s, n)
                }
            } else {
                four16(d, s, n)
            }
        }
    }

    /// The same classes, `>= 16` first.
    #[inline(always)]
    unsafe fn ge16<S: Src>(d: *mut u8, s: S, n: usize) {
        // SAFETY: as `ladder`.
        unsafe {
            if n >= 16 {
                if n <= 32 {
                    pair16(d, s, n)
                } else {
                    four16(d, s, n)
                }
            } else if n >= 4 {
                words4(d, s, n)
            } else if n != 0 {
                bytes3(d, s, n)
            }
        }
    }

    /// The library's tree, 4-15 B as two pairs.
    #[inline(always)]
    unsafe fn pairs<S: Src>(d: *mut u8, s: S, n: usize) {
        // SAFETY: as `ladder`.
        unsafe {
            if n >= 16 {
                if n <= 32 {
                    pair16(d, s, n)
                } else {
                    four16(d, s, n)
                }
            } else if n >= 8 {
                pair::<u64, S>(d, s, n)
            } else if n >= 4 {
                pair::<u32, S>(d, s, n)
            } else if n != 0 {
                bytes3(d, s, n)
            }
        }
    }

    /// `pairs`' leaves, the smallest sizes first.
    #[inline(always)]
    unsafe fn pairs_up<S: Src>(d: *mut u8, s: S, n: usize) {
        // SAFETY: as `ladder`.
        unsafe {
            if n == 0 {
            } else if n < 4 {
                bytes3(d, s, n)
            } else if n < 8 {
                pair::<u32, S>(d, s, n)
            } else if n < 16 {
                pair::<u64, S>(d, s, n)
            } else if n <= 32 {
                pair16(d, s, n)
            } else {
                four16(d, s, n)
            }
        }
    }

    /// One masked store of `n <= 64` bytes, no page test.
    ///
    /// # Safety
    /// The CPU runs AVX-512 F and BW and BMI2; the 64-byte window at `d` lies in mapped memory.
    #[inline(always)]
    unsafe fn masked(d: *mut u8, b: u8, n: usize) {
        // SAFETY: the caller's; `bzhi` keeps the low `n` bits, so only `d..d + n` is written.
        unsafe {
            std::arch::asm!(
                "vpbroadcastb zmm16, {b:e}",
                "mov {m}, -1",
                "bzhi {m}, {m}, {n}",
                "kmovq k1, {m}",
                "vmovdqu8 zmmword ptr [{d}] {{k1}}, zmm16",
                b = in(reg) u32::from(b),
                m = out(reg) _,
                n = in(reg) n,
                d = in(reg) d,
                out("zmm16") _,
                out("k1") _,
                options(nostack),
            );
        }
    }

    // ------------------------------------------------------------------ variants

    const COPIES: [&str; 6] = ["glibc", "lib", "ladder", "ge16", "pairs", "pairs-up"];
    const FILLS: [&str; 5] = ["glibc", "lib", "ladder", "plain", "masked"];

    fn runs_masked() -> bool {
        std::is_x86_feature_detected!("avx512bw") && std::is_x86_feature_detected!("bmi2")
    }

    /// Times `f` once per call of `calls`; ns per call.
    #[inline(never)]
    fn each_mix(calls: &[Call], mut f: impl FnMut(&Call)) -> f64 {
        let t = Instant::now();
        for c in calls {
            f(c);
        }
        t.elapsed().as_nanos() as f64 / calls.len().max(1) as f64
    }

    /// Copy variant `v` from `src` into every entry of `dsts`, `len` bytes each.
    ///
    /// # Safety
    /// Every destination valid for `len` bytes, the source too, apart from each other.
    unsafe fn copy_fixed(v: usize, dsts: &[*mut u8], src: *const u8, len: usize) -> f64 {
        // SAFETY (every arm): the caller's contract; the prototypes past `len > 64` only.
        unsafe {
            macro_rules! go {
                ($f:ident) => {
                    each_dest(dsts, |d| {
                        let n = opaque(len);
                        if n > 64 {
                            cachecopy::copy_raw(d, src, n, Mode::Temporal)
                        } else {
                            $f(d, src, n)
                        }
                    })
                };
            }
            match COPIES[v] {
                "glibc" => {
                    let f: MemcpyFn = black_box(libc::memcpy as MemcpyFn);
                    each_dest(dsts, |d| {
                        f(d.cast(), src.cast(), opaque(len));
                    })
                }
                "lib" => each_dest(dsts, |d| {
                    cachecopy::copy_raw(d, src, opaque(len), Mode::Temporal)
                }),
                "ladder" => go!(ladder),
                "ge16" => go!(ge16),
                "pairs" => go!(pairs),
                _ => go!(pairs_up),
            }
        }
    }

    /// Copy variant `v` over `calls` in the buffer at `base`.
    ///
    /// # Safety
    /// Every call's ranges lie in the buffer, apart from each other.
    unsafe fn copy_mix(v: usize, base: *mut u8, calls: &[Call]) -> f64 {
        let d = |c: &Call| base.wrapping_add(c.dst as usize);
        let s = |c: &Call| base.wrapping_add(c.src as usize).cast_const();
        // SAFETY (every arm): the caller's contract.
        unsafe {
            macro_rules! go {
                ($f:ident) => {
                    each_mix(calls, |c| {
                        let n = c.len as usize;
                        if n > 64 {
                            cachecopy::copy_raw(d(c), s(c), n, Mode::Temporal)
                        } else {
                            $f(d(c), s(c), n)
                        }
                    })
                };
            }
            match COPIES[v] {
                "glibc" => {
                    let f: MemcpyFn = black_box(libc::memcpy as MemcpyFn);
                    each_mix(calls, |c| {
                        f(d(c).cast(), s(c).cast(), c.len as usize);
                    })
                }
                "lib" => each_mix(calls, |c| {
                    cachecopy::copy_raw(d(c), s(c), c.len as usize, Mode::Temporal)
                }),
                "ladder" => go!(ladder),
                "ge16" => go!(ge16),
                "pairs" => go!(pairs),
                _ => go!(pairs_up),
            }
        }
    }

    /// Fill variant `v` of every entry of `dsts`, `len` bytes each.
    ///
    /// # Safety
    /// Every destination valid for `len` bytes, inside a page with 64 bytes to spare after it
    /// (`masked`).
    unsafe fn fill_fixed(v: usize, dsts: &[*mut u8], len: usize) -> f64 {
        // SAFETY (every arm): the caller's contract; `masked` only where the CPU runs it.
        unsafe {
            macro_rules! go {
                ($f:expr) => {
                    each_dest(dsts, |d| {
                        let (b, n) = (opaque(0x5a) as u8, opaque(len));
                        if n > 64 {
                            cachecopy::fill_raw(d, b, n, Mode::Temporal)
                        } else {
                            $f(d, b, n)
                        }
                    })
                };
            }
            match FILLS[v] {
                "glibc" => {
                    let f: MemsetFn = black_box(libc::memset as MemsetFn);
                    each_dest(dsts, |d| {
                        f(d.cast(), opaque(0x5a) as i32, opaque(len));
                    })
                }
                "lib" => each_dest(dsts, |d| {
                    cachecopy::fill_raw(d, opaque(0x5a) as u8, opaque(len), Mode::Temporal)
                }),
                "ladder" => go!(|d, b, n| ladder(d, Byte(b), n)),
                "plain" => go!(|d, b, n| plain(d, Byte(b), n)),
                _ => go!(|d, b, n| masked(d, b, n)),
            }
        }
    }

    /// Fill variant `v` over `calls` in the buffer at `base` (mapped 64 bytes past its end).
    ///
    /// # Safety
    /// Every call's range lies in the buffer.
    unsafe fn fill_mix(v: usize, base: *mut u8, calls: &[Call]) -> f64 {
        let d = |c: &Call| base.wrapping_add(c.dst as usize);
        let b = opaque(0x5a) as u8;
        // SAFETY (every arm): the caller's contract; `masked` only where the CPU runs it.
        unsafe {
            macro_rules! go {
                ($f:expr) => {
                    each_mix(calls, |c| {
                        let n = c.len as usize;
                        if n > 64 {
                            cachecopy::fill_raw(d(c), b, n, Mode::Temporal)
                        } else {
                            $f(d(c), b, n)
                        }
                    })
                };
            }
            match FILLS[v] {
                "glibc" => {
                    let f: MemsetFn = black_box(libc::memset as MemsetFn);
                    each_mix(calls, |c| {
                        f(d(c).cast(), i32::from(b), c.len as usize);
                    })
                }
                "lib" => each_mix(calls, |c| {
                    cachecopy::fill_raw(d(c), b, c.len as usize, Mode::Temporal)
                }),
                "ladder" => go!(|d, b, n| ladder(d, Byte(b), n)),
                "plain" => go!(|d, b, n| plain(d, Byte(b), n)),
                _ => go!(|d, b, n| masked(d, b, n)),
            }
        }
    }

    // ------------------------------------------------------------------ harness

    /// `bytes` of fresh memory, its pages touched, 64 bytes of room past the end.
    fn buffer(bytes: usize) -> Vec<u8> {
        vec![0x3c; bytes + 4096]
    }

    /// Page-aligned start of `v`.
    fn page(v: &mut [u8]) -> *mut u8 {
        let p = v.as_mut_ptr();
        p.wrapping_add(p.align_offset(4096))
    }

    /// Round `r`'s order of `k` variants: rotated and, every other round, reversed.
    fn order(k: usize, r: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..k).map(|i| (i + r * 3) % k).collect();
        if r % 2 == 1 {
            v.reverse();
        }
        v
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    /// Median ns of each variant and median of glibc's time ÷ each, from per-round times.
    fn summary(ns: &[Vec<f64>]) -> Vec<(f64, f64)> {
        ns.iter()
            .map(|v| {
                let r = ns[0].iter().zip(v).map(|(g, x)| g / x).collect();
                (median(v.clone()), median(r))
            })
            .collect()
    }

    fn header(names: &[&str]) {
        for n in names {
            print!(" {n:>15}");
        }
        println!();
    }

    fn row(cells: &[(f64, f64)]) {
        for &(ns, r) in cells {
            print!(" {ns:>6.3} {r:>6.2}x");
        }
        println!();
    }

    fn fixed(rounds: usize, masks: bool) {
        const SIZES: [usize; 10] = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64];
        const CALLS: usize = 20_000;
        for (what, names) in [("copies", &COPIES[..]), ("fills", &FILLS[..])] {
            let nv = if what == "fills" && !masks {
                names.len() - 1
            } else {
                names.len()
            };
            let mut bufs: Vec<(Vec<u8>, Vec<u8>)> =
                (0..nv).map(|_| (buffer(8192), buffer(4096))).collect();
            println!(
                "{what}, the same size every call (report section 8's loop): ns per call, then \
                 glibc's time ÷ the variant's"
            );
            print!("{:>4} {:>3}", "size", "off");
            header(&names[..nv]);
            for len in SIZES {
                for off in [0, 5, 24] {
                    let mut ns = vec![Vec::new(); nv];
                    for r in 0..=rounds {
                        for i in order(nv, r) {
                            let (s, d) = &mut bufs[i];
                            let src = page(s).wrapping_add(2112).cast_const();
                            let dsts = vec![page(d).wrapping_add(off); CALLS];
                            // SAFETY: a page of its own per variant for each destination
                            // (64 bytes to spare at offset 24 + 64 B), the source 2112 + 64
                            // bytes into two pages of its own.
                            let t = unsafe {
                                if what == "copies" {
                                    copy_fixed(i, &dsts, src, len)
                                } else {
                                    fill_fixed(i, &dsts, len)
                                }
                            };
                            if r > 0 {
                                ns[i].push(t);
                            }
                        }
                    }
                    print!("{len:>4} {off:>3}");
                    row(&summary(&ns));
                }
            }
        }
    }

    fn mix(rounds: usize, masks: bool) {
        const CALLS: usize = 8192;
        for (op, what, names) in [
            (Op::Copy, "copies", &COPIES[..]),
            (Op::Fill, "fills", &FILLS[..]),
        ] {
            let nv = if op == Op::Fill && !masks {
                names.len() - 1
            } else {
                names.len()
            };
            println!(
                "{what}, a new size every call (report section 8f's sequences): ns per call, \
                 then glibc's time ÷ the variant's"
            );
            print!("{:>4} {:>8}", "set", "sizes");
            header(&names[..nv]);
            for (set, region) in [("1M", 1usize << 20), ("8M", 8 << 20)] {
                let mut bufs: Vec<Vec<u8>> = (0..nv).map(|_| buffer(region)).collect();
                for (k, sizes) in [Sizes::Fleet, Sizes::Uniform(0, 64), Sizes::Uniform(0, 16)]
                    .into_iter()
                    .enumerate()
                {
                    let seq = Sequence::new(op, sizes, region, (rounds + 1) * CALLS, k as u64);
                    let mut ns = vec![Vec::new(); nv];
                    for r in 0..=rounds {
                        let calls = &seq.calls[r * CALLS..(r + 1) * CALLS];
                        for i in order(nv, r) {
                            let base = page(&mut bufs[i]);
                            if set == "1M" {
                                // Read into the cache before every sample.
                                let mut sum = 0u8;
                                for l in (0..region).step_by(64) {
                                    // SAFETY: inside the buffer.
                                    sum = sum.wrapping_add(unsafe { *base.add(l) });
                                }
                                black_box(sum);
                            }
                            // SAFETY: `Sequence` keeps every call inside `region` bytes, which
                            // the buffer holds past `base` with 64 bytes to spare.
                            let t = unsafe {
                                if op == Op::Copy {
                                    copy_mix(i, base, calls)
                                } else {
                                    fill_mix(i, base, calls)
                                }
                            };
                            if r > 0 {
                                ns[i].push(t);
                            }
                        }
                    }
                    print!("{set:>4} {:>8}", sizes.to_string());
                    row(&summary(&ns));
                }
            }
        }
    }

    // ------------------------------------------------------------------ the mode's cost

    type Kernel = unsafe extern "C" fn(*mut u8, *const u8, usize);

    /// A table entry: two or four 32-byte registers from each end (no loop is reached here).
    #[target_feature(enable = "avx2")]
    unsafe extern "C" fn kernel(d: *mut u8, s: *const u8, n: usize) {
        use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_storeu_si256};
        // SAFETY: 64 < n <= 256 (the callers), so every register lies in 0..n.
        unsafe {
            let ld = |o: usize| _mm256_loadu_si256(s.add(o).cast::<__m256i>());
            let st = |o: usize, v| _mm256_storeu_si256(d.add(o).cast::<__m256i>(), v);
            if n > 128 {
                let v = [
                    ld(0),
                    ld(32),
                    ld(64),
                    ld(96),
                    ld(n - 128),
                    ld(n - 96),
                    ld(n - 64),
                    ld(n - 32),
                ];
                for (k, v) in v.into_iter().enumerate() {
                    st(
                        if k < 4 {
                            32 * k
                        } else {
                            n - 128 + 32 * (k - 4)
                        },
                        v,
                    );
                }
            } else {
                let v = [ld(0), ld(32), ld(n - 64), ld(n - 32)];
                st(0, v[0]);
                st(32, v[1]);
                st(n - 64, v[2]);
                st(n - 32, v[3]);
            }
        }
    }

    /// The same with a bound tested where a loop class would be (never reached here).
    #[target_feature(enable = "avx2")]
    unsafe extern "C" fn kernel_own(d: *mut u8, s: *const u8, n: usize) {
        if n > 512 && n >= BOUND.load(Ordering::Relaxed) {
            return;
        }
        // SAFETY: forwarded; the features are this function's.
        unsafe { kernel(d, s, n) }
    }

    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
    static ENTRY: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());
    static ENTRY_OWN: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());
    static BOUND: AtomicUsize = AtomicUsize::new(usize::MAX);
    static MODES: [u8; 4] = [0, 1, 2, 3];
    static INLINE_BELOW: [usize; 4] = [65, 65, 0, 65];

    /// The published entry `e`, called.
    #[inline(always)]
    unsafe fn call(e: &AtomicPtr<()>, d: *mut u8, s: *const u8, n: usize) {
        // SAFETY: the entries are `Kernel`s, set before any call; the caller's ranges.
        unsafe {
            let f: Kernel = core::mem::transmute(e.load(Ordering::Relaxed));
            f(d, s, n)
        }
    }

    #[inline(never)]
    fn out_of_line(d: *mut u8) {
        black_box(d);
    }

    /// The mode read from memory at every call, as a policy's field.
    #[inline(always)]
    fn read_mode() -> u8 {
        let p: *const u8 = &MODES[3];
        // SAFETY: `p` points into `MODES` (its address only made opaque).
        unsafe { *p.with_addr(opaque(p.addr())) }
    }

    fn mode(rounds: usize) {
        if !std::is_x86_feature_detected!("avx2") {
            println!("mode: needs AVX2 for its prototype kernel");
            return;
        }
        ENTRY.store(kernel as *mut (), Ordering::Relaxed);
        ENTRY_OWN.store(kernel_own as *mut (), Ordering::Relaxed);
        BOUND.store(black_box(1 << 20), Ordering::Relaxed);
        const CALLS: usize = 20_000;
        let past = ["T", "A bound loaded", "A < STREAM_MIN first", "A own entry"];
        let inline = [
            "const",
            "rt read only",
            "rt FC after",
            "rt bound table",
            "rt FC first",
        ];
        for (title, names, sizes) in [
            (
                "past the inline classes (a table entry behind a pointer)",
                &past[..],
                &[96usize, 192][..],
            ),
            (
                "the inline pair of registers",
                &inline[..],
                &[16, 24, 32][..],
            ),
        ] {
            println!("the mode's cost, {title}: ns per call, then the first column's time ÷ the variant's");
            print!("{:>4} {:>3}", "size", "off");
            header(names);
            let mut bufs: Vec<(Vec<u8>, Vec<u8>)> = (0..names.len())
                .map(|_| (buffer(8192), buffer(4096)))
                .collect();
            for &len in sizes {
                for off in [0, 5, 24] {
                    let mut ns = vec![Vec::new(); names.len()];
                    for r in 0..=rounds {
                        for i in order(names.len(), r) {
                            let (s, d) = &mut bufs[i];
                            let src = page(s).wrapping_add(2112).cast_const();
                            let dsts = vec![page(d).wrapping_add(off); CALLS];
                            // SAFETY: each destination in a page of its own with room past
                            // `len`, the source 2112 bytes into two pages of its own.
                            let t = unsafe {
                                if len > 64 {
                                    match i {
                                        0 => {
                                            each_dest(&dsts, |d| call(&ENTRY, d, src, opaque(len)))
                                        }
                                        1 => each_dest(&dsts, |d| {
                                            let n = opaque(len);
                                            if n < BOUND.load(Ordering::Relaxed) {
                                                call(&ENTRY, d, src, n)
                                            } else {
                                                out_of_line(d)
                                            }
                                        }),
                                        2 => each_dest(&dsts, |d| {
                                            let n = opaque(len);
                                            if n < 1024 || n < BOUND.load(Ordering::Relaxed) {
                                                call(&ENTRY, d, src, n)
                                            } else {
                                                out_of_line(d)
                                            }
                                        }),
                                        _ => each_dest(&dsts, |d| {
                                            call(&ENTRY_OWN, d, src, opaque(len))
                                        }),
                                    }
                                } else {
                                    match i {
                                        0 => each_dest(&dsts, |d| {
                                            let n = opaque(len);
                                            if n <= 64 {
                                                pair16(d, src, n)
                                            } else {
                                                out_of_line(d)
                                            }
                                        }),
                                        1 => each_dest(&dsts, |d| {
                                            let n = opaque(len);
                                            opaque(usize::from(read_mode()));
                                            if n <= 64 {
                                                pair16(d, src, n)
                                            } else {
                                                out_of_line(d)
                                            }
                                        }),
                                        2 => each_dest(&dsts, |d| {
                                            let (n, m) = (opaque(len), read_mode());
                                            if n <= 64 {
                                                pair16(d, src, n);
                                                if m == 2 {
                                                    out_of_line(d)
                                                }
                                            } else {
                                                out_of_line(d)
                                            }
                                        }),
                                        3 => each_dest(&dsts, |d| {
                                            let (n, m) = (opaque(len), read_mode());
                                            if n < INLINE_BELOW[usize::from(m & 3)] {
                                                pair16(d, src, n)
                                            } else {
                                                out_of_line(d)
                                            }
                                        }),
                                        _ => each_dest(&dsts, |d| {
                                            let (n, m) = (opaque(len), read_mode());
                                            if n <= 64 && m != 2 {
                                                pair16(d, src, n)
                                            } else {
                                                out_of_line(d)
                                            }
                                        }),
                                    }
                                }
                            };
                            if r > 0 {
                                ns[i].push(t);
                            }
                        }
                    }
                    print!("{len:>4} {off:>3}");
                    row(&summary(&ns));
                }
            }
        }
    }

    // ------------------------------------------------------------------ string instructions

    fn rep(rounds: usize) {
        const SIZES: [usize; 7] = [1024, 2048, 3072, 4096, 8192, 16384, 32768];
        let arena = 256usize << 20;
        let mut a = buffer(arena);
        let base = page(&mut a);
        let mut s = buffer(65536);
        let src = page(&mut s).cast_const();
        println!(
            "string instruction against the vector loop: the loop's time ÷ the string's (above 1: the \
             string wins), median of {rounds} rounds"
        );
        for (fill, dest, skew) in [
            (false, "hot", 0usize),
            (false, "hot", 2112),
            (false, "cold", 0),
            (false, "cold", 2112),
            (true, "hot", 0),
            (true, "cold", 0),
        ] {
            print!(
                "{} {dest:>4} {}:",
                if fill { "fill" } else { "copy" },
                if fill {
                    "        ".to_string()
                } else {
                    format!("src+{skew:<4}")
                }
            );
            for n in SIZES {
                let calls = if dest == "hot" {
                    (4 << 20) / n
                } else {
                    (16 << 20) / n
                };
                let stride = n.next_multiple_of(4096);
                let slots = arena / stride;
                let mut cursor = 0usize;
                let mut r = Vec::new();
                for _ in 0..rounds {
                    let mut t = [0f64; 2];
                    for (k, threshold) in [(0, usize::MAX), (1, 1024)] {
                        let mut tuning = *cachecopy::tune::Plan::current().tuning();
                        if fill {
                            tuning.fill_rep = threshold;
                        } else {
                            tuning.rep_movsb = threshold;
                        }
                        let plan = cachecopy::tune::Plan::new(tuning).expect("a threshold");
                        let t0 = Instant::now();
                        for _ in 0..calls {
                            let d = if dest == "hot" {
                                base
                            } else {
                                cursor = (cursor + 7919) % slots;
                                base.wrapping_add(cursor * stride)
                            };
                            // SAFETY: `d` is a slot of `n` bytes in the arena; the source holds
                            // `skew + n` bytes; the two are apart.
                            let d = unsafe { core::slice::from_raw_parts_mut(d, n) };
                            if fill {
                                plan.fill(d, 0x5a, Mode::Temporal)
                            } else {
                                // SAFETY: as above.
                                let s = unsafe {
                                    core::slice::from_raw_parts(src.wrapping_add(skew), n)
                                };
                                plan.copy(d, s, Mode::Temporal)
                            }
                        }
                        t[k] = t0.elapsed().as_nanos() as f64 / calls as f64;
                    }
                    r.push(t[0] / t[1]);
                }
                print!(" {}K {:.2}x", n / 1024, median(r));
            }
            println!();
        }
    }

    pub fn main() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let rounds = args
            .iter()
            .position(|a| a == "--rounds")
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(15);
        let what = args.first().map(String::as_str).unwrap_or("both");
        let masks = runs_masked();
        println!(
            "class_probe: engine {}, small={}, {rounds} rounds{}",
            cachecopy::tune::Plan::current().tuning().engine,
            cachecopy::tune::Plan::current().tuning().small,
            if masks {
                ""
            } else {
                " (no masked store: this CPU lacks AVX-512 BW or BMI2)"
            }
        );
        if what == "mode" {
            return mode(rounds);
        }
        if what == "rep" {
            return rep(rounds.min(9));
        }
        if what != "mix" {
            fixed(rounds, masks);
        }
        if what != "fixed" {
            mix(rounds, masks);
        }
    }
}
