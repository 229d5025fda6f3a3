//! Shared test rig: guard-page buffers, patterns and the reference tables every backend runs.
#![allow(dead_code)]

use cachecopy::tune::{Backend, Edges, Engine};
use cachecopy::Mode;

pub mod moves;

#[path = "../../src/testutil.rs"]
mod testutil;
#[allow(unused_imports)] // each test binary uses some of them
pub use testutil::{all_bytes, pattern, periodic};

/// Pages of read-write memory between two `PROT_NONE` guard pages: touching a byte just before
/// or after the region faults, so a vector head or tail that strays outside is caught.
#[cfg(not(miri))]
pub struct Guarded {
    base: *mut u8,
    total: usize,
    page: usize,
    len: usize,
}

#[cfg(not(miri))]
impl Guarded {
    /// Room for at least `len` bytes (rounded up to whole pages).
    pub fn new(len: usize) -> Guarded {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let inner = len.div_ceil(page).max(1) * page;
        let total = inner + 2 * page;
        const PROT: libc::c_int = libc::PROT_READ | libc::PROT_WRITE;
        const FLAGS: libc::c_int = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // SAFETY: anonymous private mapping, checked below.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), total, PROT, FLAGS, -1, 0) };
        assert_ne!(base, libc::MAP_FAILED, "mmap failed");
        let base = base.cast::<u8>();
        // SAFETY: both guard pages lie inside the mapping just made.
        unsafe {
            assert_eq!(libc::mprotect(base.cast(), page, libc::PROT_NONE), 0);
            assert_eq!(
                libc::mprotect(base.add(page + inner).cast(), page, libc::PROT_NONE),
                0
            );
        }
        Guarded {
            base,
            total,
            page,
            len: inner,
        }
    }

    /// `len` bytes starting exactly at the first usable byte (just after the low guard page).
    pub fn at_start(&mut self, len: usize) -> &mut [u8] {
        assert!(len <= self.len);
        // SAFETY: inside the read-write part of the mapping, borrowed mutably from `self`.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(self.page), len) }
    }

    /// `len` bytes ending exactly at the last usable byte (just before the high guard page).
    pub fn at_end(&mut self, len: usize) -> &mut [u8] {
        assert!(len <= self.len);
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(self.page + self.len - len), len) }
    }
}

#[cfg(not(miri))]
impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`.
        unsafe { libc::munmap(self.base.cast(), self.total) };
    }
}

/// Under Miri (no `mprotect`): an allocation of exactly `len` bytes, whose bounds Miri checks
/// byte for byte, so a stray head or tail is reported as undefined behaviour instead of a
/// fault. `at_start` and `at_end` are flush against its two ends.
#[cfg(miri)]
pub struct Guarded {
    buf: Vec<u8>,
}

#[cfg(miri)]
impl Guarded {
    /// Exactly `len` bytes.
    pub fn new(len: usize) -> Guarded {
        // `vec!` of a byte: one allocation of exactly `len`, set by one `memset`.
        let buf = vec![0u8; len];
        assert_eq!(buf.capacity(), len, "not an exact-size allocation");
        Guarded { buf }
    }

    /// `len` bytes from the allocation's first byte.
    pub fn at_start(&mut self, len: usize) -> &mut [u8] {
        &mut self.buf[..len]
    }

    /// `len` bytes ending at the allocation's last byte.
    pub fn at_end(&mut self, len: usize) -> &mut [u8] {
        let n = self.buf.len();
        &mut self.buf[n - len..]
    }
}

impl Guarded {
    /// `len` bytes flush against the high guard (`end`) or the low one.
    pub fn at(&mut self, end: bool, len: usize) -> &mut [u8] {
        if end {
            self.at_end(len)
        } else {
            self.at_start(len)
        }
    }
}

/// A guarded copy's two buffers of `want.len()` bytes: the source, holding `want`, flush against
/// the high guard of `s` (`s_end`) or its low one, and the destination likewise in `d`.
pub fn guarded_pair<'a>(
    s: &'a mut Guarded,
    d: &'a mut Guarded,
    (s_end, d_end): (bool, bool),
    want: &[u8],
) -> (&'a [u8], &'a mut [u8]) {
    let src = s.at(s_end, want.len());
    src.copy_from_slice(want);
    (src, d.at(d_end, want.len()))
}

pub const CANARY: u8 = 0xC5;

/// Every backend, supported on this CPU or not (`Backend::supported` lists those that are).
pub const ALL_BACKENDS: [Backend; 5] = {
    use Backend::*;
    [Generic, Sse2, Avx2, Avx512, Neon]
};

/// What a table runs: exactly one engine's own loops (`raw::copy_with_engine`, no variant), or
/// a plan (`Plan::copy`: the inline classes, then the plan's kernels with its variants).
#[derive(Clone, Copy, Debug)]
pub enum Runner {
    Engine(Engine),
    Plan(&'static cachecopy::tune::Plan),
}

impl From<Backend> for Runner {
    fn from(b: Backend) -> Runner {
        Runner::Engine(b.into())
    }
}

impl From<Engine> for Runner {
    fn from(e: Engine) -> Runner {
        Runner::Engine(e)
    }
}

impl From<cachecopy::tune::Plan> for Runner {
    /// The plan, kept for the rest of the test process (tables hold it across many calls).
    fn from(p: cachecopy::tune::Plan) -> Runner {
        Runner::Plan(keep(p))
    }
}

/// Keeps `p` for the rest of the test process, as a published plan is kept: never freed, and
/// listed in a static, so that it stays reachable and the leak checkers (LeakSanitizer, Miri)
/// see what the library does with published plans rather than a lost allocation.
pub fn keep(p: cachecopy::tune::Plan) -> &'static cachecopy::tune::Plan {
    static KEPT: std::sync::Mutex<Vec<&'static cachecopy::tune::Plan>> =
        std::sync::Mutex::new(Vec::new());
    let p: &'static cachecopy::tune::Plan = Box::leak(Box::new(p));
    KEPT.lock().unwrap_or_else(|e| e.into_inner()).push(p);
    p
}

impl Runner {
    /// Copies `src` into `dst` in `mode`.
    pub fn copy(&self, dst: &mut [u8], src: &[u8], mode: Mode) {
        match self {
            Runner::Engine(e) => cachecopy::raw::copy_with_engine(*e, dst, src, mode).unwrap(),
            Runner::Plan(p) => p.copy(dst, src, mode),
        }
    }

    /// Fills `dst` with `byte` in `mode`.
    pub fn fill(&self, dst: &mut [u8], byte: u8, mode: Mode) {
        match self {
            Runner::Engine(e) => cachecopy::raw::fill_with_engine(*e, dst, byte, mode).unwrap(),
            Runner::Plan(p) => p.fill(dst, byte, mode),
        }
    }
}

/// Copies `len` bytes from source offset `so` to destination offset `d_o` with exactly
/// `backend` and `mode`, and checks the copy and the canaries on both sides of it.
pub fn check_copy(
    runner: impl Into<Runner>,
    mode: Mode,
    so: usize,
    d_o: usize,
    len: usize,
    src: &[u8],
    dst: &mut Vec<u8>,
) {
    let backend: Runner = runner.into();
    let room = d_o + len + 64;
    // `vec!` of a byte is one `memset` (`resize` is a loop per byte under Miri).
    *dst = vec![CANARY; room];
    backend.copy(&mut dst[d_o..d_o + len], &src[so..so + len], mode);
    if dst[d_o..d_o + len] != src[so..so + len] {
        let at = (0..len).find(|&i| dst[d_o + i] != src[so + i]).unwrap();
        panic!("{backend:?} {mode:?} src+{so} dst+{d_o} len {len}: first wrong byte at {at}");
    }
    assert!(
        all_bytes(&dst[..d_o], CANARY) && all_bytes(&dst[d_o + len..], CANARY),
        "{backend:?} {mode:?} src+{so} dst+{d_o} len {len}: byte outside the destination changed"
    );
}

/// Fills `len` bytes at `d_o` and checks the fill and the canaries.
pub fn check_fill(
    runner: impl Into<Runner>,
    mode: Mode,
    d_o: usize,
    len: usize,
    byte: u8,
    dst: &mut Vec<u8>,
) {
    let backend: Runner = runner.into();
    *dst = vec![CANARY; d_o + len + 64];
    backend.fill(&mut dst[d_o..d_o + len], byte, mode);
    let fill = &dst[d_o..d_o + len];
    let bad = if all_bytes(fill, byte) {
        None
    } else {
        fill.iter().position(|&b| b != byte)
    };
    assert!(
        bad.is_none(),
        "{backend:?} {mode:?} fill dst+{d_o} len {len}: byte {bad:?} wrong"
    );
    assert!(
        all_bytes(&dst[..d_o], CANARY) && all_bytes(&dst[d_o + len..], CANARY),
        "{backend:?} {mode:?} fill dst+{d_o} len {len}: byte outside the destination changed"
    );
}

/// Lengths next to every size-class boundary of every kernel: scalar pairs (2..16), register
/// pairs and quads (16..512 for 8..64-byte registers), the streaming cut-over (1 KiB) and
/// whole/partial lines around it.
pub fn boundary_lengths() -> Vec<usize> {
    let mut v = Vec::new();
    for b in [1usize, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048] {
        v.extend([b - 1, b, b + 1]);
    }
    v.extend([1023 + 64, 1024 + 63, 1024 + 65, 1024 + 127, 1024 + 129]);
    v.sort_unstable();
    v.dedup();
    v
}

/// Scale of the tables: full natively, reduced under Miri (which interprets every instruction).
pub fn miri() -> bool {
    cfg!(miri)
}

/// `native`, or the smaller `under_miri` under Miri (which interprets every instruction).
pub fn scaled<T>(native: T, under_miri: T) -> T {
    if miri() {
        under_miri
    } else {
        native
    }
}

/// The cases a table runs: `all` natively, the few `under_miri` under Miri (which interprets
/// every instruction).
pub fn cases<T>(
    all: impl IntoIterator<Item = T>,
    under_miri: impl IntoIterator<Item = T>,
) -> Vec<T> {
    if miri() {
        under_miri.into_iter().collect()
    } else {
        all.into_iter().collect()
    }
}

/// A command running `exe` (a binary built for the test target) through cargo's target runner
/// when cargo used one (QEMU for the aarch64 suite), since a foreign binary cannot be executed
/// directly.
pub fn run_target_binary(exe: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let runner = std::env::vars().find(|(k, v)| {
        k.starts_with("CARGO_TARGET_") && k.ends_with("_RUNNER") && !v.trim().is_empty()
    });
    match runner {
        Some((_, r)) => {
            let mut words = r.split_whitespace();
            let mut cmd = std::process::Command::new(words.next().unwrap());
            cmd.args(words).arg(exe);
            cmd
        }
        None => std::process::Command::new(exe),
    }
}

/// Whether the tests run under a user-mode emulator (cargo's target runner, QEMU for aarch64):
/// there the 64 x 64 offset grid is thinned to every third offset (still every residue mod 3
/// and both ends), since TCG translates every instruction.
pub fn emulated() -> bool {
    // `vars_os`: a child may run with non-UTF-8 values (`vars` panics on them).
    std::env::vars_os().any(|(k, v)| {
        let k = k.to_string_lossy();
        k.starts_with("CARGO_TARGET_")
            && k.ends_with("_RUNNER")
            && !v.to_string_lossy().trim().is_empty()
    })
}

/// The engine the environment puts in force over this CPU's rule, as the documentation of
/// `cachecopy::tune` states it (a model written from it, not the library's parser): the rule
/// ([`Engine::rule`]), then the engine fields of `CACHECOPY_TUNE` (`temporal`, `stream`, `body`
/// for both, `edges`), in order. A value this CPU cannot run, a line that is not UTF-8 and an
/// unknown field are ignored. What the tests assert the plan's engine is, whatever CI forces
/// (`.ci/run` runs the suites once per engine through `CACHECOPY_TUNE`).
pub fn engine_in_force() -> Engine {
    /// A backend this CPU runs, by name.
    fn runs(v: &str) -> Option<Backend> {
        Backend::from_name(v.trim()).filter(|b| Backend::supported().contains(b))
    }
    let rule = Engine::rule(&cachecopy::tune::cpu()).0;
    let (mut t, mut s, mut e) = (rule.temporal, rule.stream, rule.edges);
    if let Some(line) = std::env::var_os("CACHECOPY_TUNE") {
        let line = line.to_string_lossy();
        for field in line.split(',') {
            let Some((k, v)) = field.split_once('=') else {
                continue;
            };
            match (k.trim(), runs(v), Edges::from_name(v.trim())) {
                ("temporal", Some(b), _) => t = b,
                ("stream", Some(b), _) => s = b,
                ("body", Some(b), _) => (t, s) = (b, b),
                ("edges", _, Some(x)) => e = x,
                _ => {}
            }
        }
    }
    Engine::new(t, s, e)
}

/// Whether `CACHECOPY_TUNE` sets the field `field` (`rep_movsb`, `fill_rep`, ...), so that a
/// test of its built-in value ([`cachecopy::tune::Tuning::rule`]) does not apply.
pub fn tuned(field: &str) -> bool {
    std::env::var("CACHECOPY_TUNE").is_ok_and(|line| {
        line.split(',')
            .any(|f| f.split_once('=').is_some_and(|(k, _)| k.trim() == field))
    })
}

/// The engines whose code differs: every supported backend's own table (`copy_with` of it)
/// and, on AVX-512, its overlapping-edge twin. Mixed engines only point into these.
pub fn engines() -> Vec<Engine> {
    let mut v: Vec<Engine> = Backend::supported()
        .iter()
        .map(|&b| Engine::from(b))
        .collect();
    for &e in Engine::supported() {
        if e.temporal == e.stream && !v.contains(&e) {
            v.push(e);
        }
    }
    v
}

/// Every length 0..=1024 at several offset pairs.
pub fn table_all_lengths(runner: impl Into<Runner>) {
    let backend: Runner = runner.into();
    let max = if miri() { 40 } else { 1024 };
    let pairs: &[(usize, usize)] = if miri() {
        &[(1, 3)]
    } else {
        &[
            (0, 0),
            (1, 0),
            (0, 1),
            (3, 61),
            (63, 1),
            (17, 33),
            (32, 32),
            (5, 5),
        ]
    };
    let src = pattern(max + 64, 1);
    let mut dst = Vec::new();
    for mode in Mode::ALL {
        for &(so, d_o) in pairs {
            for len in 0..=max {
                check_copy(backend, mode, so, d_o, len, &src, &mut dst);
            }
        }
    }
}

/// All 64 x 64 (source, destination) offset pairs at every boundary length.
pub fn table_offsets(runner: impl Into<Runner>) {
    let backend: Runner = runner.into();
    let lens = if miri() {
        vec![7, 16, 33, 129]
    } else {
        boundary_lengths()
    };
    let step = if miri() {
        21
    } else if emulated() {
        3
    } else {
        1
    };
    let src = pattern(2200 + 64, 2);
    let mut dst = Vec::new();
    for mode in Mode::ALL {
        for &len in &lens {
            for so in (0..64).step_by(step).chain([63]) {
                for d_o in (0..64).step_by(step).chain([63]) {
                    check_copy(backend, mode, so, d_o, len, &src, &mut dst);
                }
            }
        }
    }
}

/// Around 4 KiB, 64 KiB, 1 MiB and a few odd multi-MiB sizes.
pub fn table_large(runner: impl Into<Runner>) {
    let backend: Runner = runner.into();
    let mut lens = vec![
        4095,
        4096,
        4097,
        65535,
        65536,
        65537,
        (1 << 20) - 1,
        1 << 20,
        (1 << 20) + 1,
    ];
    lens.extend([(3 << 20) + 17, (5 << 20) - 3]);
    // Multi-MiB streamed bodies with odd tails past whole 16 KiB blocks.
    if !emulated() {
        lens.extend([(8 << 20) + 64 * 3 + 5, (8 << 20) + 16384 + 4095]);
    }
    if miri() {
        lens = vec![1100];
    }
    let src = pattern(*lens.iter().max().unwrap() + 64, 3);
    let mut dst = Vec::new();
    for mode in Mode::ALL {
        for &len in &lens {
            for (so, d_o) in [(0, 0), (1, 63), (33, 7)] {
                check_copy(backend, mode, so, d_o, len, &src, &mut dst);
            }
        }
    }
}

/// Fill: offsets 0..=63 at every length 0..=1024 (and boundaries and multi-MiB sizes).
pub fn table_fill(runner: impl Into<Runner>) {
    let backend: Runner = runner.into();
    let (max, step) = if miri() { (40, 29) } else { (1024, 1) };
    let mut dst = Vec::new();
    for mode in Mode::ALL {
        for d_o in (0..64).step_by(step) {
            for len in 0..=max {
                // Zero at every other (offset, length): zeroing has paths of its own (aarch64
                // `dc zva`), so both kinds of byte meet every length and every offset.
                let byte = if (d_o + len) % 2 == 0 {
                    0
                } else {
                    (len as u8) | 1
                };
                check_fill(backend, mode, d_o, len, byte, &mut dst);
            }
        }
        if !miri() {
            for &len in boundary_lengths()
                .iter()
                .chain(&[4095, 65537, (3 << 20) + 5])
            {
                for d_o in [0, 1, 31, 63] {
                    check_fill(backend, mode, d_o, len, 0, &mut dst);
                }
            }
        }
    }
}

/// Fills only, every mode, destination flush against `PROT_NONE` pages on either side.
pub fn table_fill_guard_pages(runner: impl Into<Runner>, lens: &[usize]) {
    let backend: Runner = runner.into();
    if miri() {
        return; // as in `table_guard_pages`.
    }
    let mut d = Guarded::new(*lens.iter().max().unwrap());
    for mode in Mode::ALL {
        for &len in lens {
            for d_end in [false, true] {
                let dst = d.at(d_end, len);
                for byte in [0xc3, 0] {
                    backend.fill(dst, byte, mode);
                    assert!(
                        all_bytes(dst, byte),
                        "{backend:?} {mode:?} guarded fill {byte:#x} len {len} at end {d_end}"
                    );
                }
            }
        }
    }
}

/// Source and destination flush against `PROT_NONE` pages on both sides.
pub fn table_guard_pages(runner: impl Into<Runner>) {
    let backend: Runner = runner.into();
    // Under Miri (exact-size allocations for guard pages, see `Guarded`): the short lengths to
    // 20, every size-class boundary to the streaming cut-over's (2 KiB's are the same loop and
    // tail shapes) and one length past a page.
    let mut lens: Vec<usize> = (0..=if miri() { 20 } else { 300 }).collect();
    lens.extend(
        boundary_lengths()
            .into_iter()
            .filter(|&l| !miri() || l < 2000),
    );
    if miri() {
        lens.push(4097);
    } else {
        lens.extend([4095, 4096, 4097, 8191, 12289]);
    }
    let max = *lens.iter().max().unwrap();
    let mut s = Guarded::new(max);
    let mut d = Guarded::new(max);
    for mode in Mode::ALL {
        for &len in &lens {
            let want = pattern(len, len as u8);
            // Under Miri both buffers at both ends (each guard met), not the mixed pairs too.
            let placements: &[(bool, bool)] = if miri() {
                &[(false, false), (true, true)]
            } else {
                &[(false, false), (true, true), (false, true), (true, false)]
            };
            for &placement in placements {
                let (src, dst) = guarded_pair(&mut s, &mut d, placement, &want);
                dst.fill(0);
                backend.copy(dst, src, mode);
                assert!(
                    dst == want.as_slice(),
                    "{backend:?} {mode:?} guarded copy len {len}"
                );
                for byte in [0x3c, 0] {
                    backend.fill(dst, byte, mode);
                    assert!(
                        all_bytes(dst, byte),
                        "{backend:?} {mode:?} guarded fill {byte:#x} len {len}"
                    );
                }
            }
        }
    }
}

/// The RFC 1071 checksum the plain way, complemented: the reference the fast sums are held
/// to (`testutil::ones_sum`).
pub fn reference_sum(data: &[u8]) -> u16 {
    !(testutil::ones_sum(data) as u16)
}

/// The `QuickCheck` runner of this build: QuickCheck's own (100 cases, or `QUICKCHECK_TESTS`)
/// natively; 12 cases under Miri, which forwards no environment variable to the program and
/// interprets every byte. A macro, so a test binary that never uses it (the report's) needs no
/// `quickcheck`.
#[allow(unused_macros)]
macro_rules! quick {
    () => {
        if $crate::common::miri() {
            quickcheck::QuickCheck::new().tests(12)
        } else {
            quickcheck::QuickCheck::new()
        }
    };
}

/// Whether this CPU runs the masked small class (`Small::MaskedFills`):
/// AVX-512 F and BW (the AVX-512 backend, which a word-only build does not have) and BMI2, on
/// x86_64, not under Miri.
pub fn runs_masked_small() -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        Backend::supported().contains(&Backend::Avx512)
            && std::arch::is_x86_feature_detected!("bmi2")
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    {
        false
    }
}
