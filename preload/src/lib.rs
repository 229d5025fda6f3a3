//! libcachecopy_preload: an `LD_PRELOAD` library whose `memcpy`, `mempcpy`, `memmove`,
//! `memset`, `bzero` and fortified `__memcpy_chk`, `__mempcpy_chk`, `__memmove_chk`,
//! `__memset_chk` are cachecopy's, for programs that cannot change (docs/preload.md).
//!
//! ```sh
//! cargo cbuild -p cachecopy-preload --release --library-type cdylib
//! LD_PRELOAD=$PWD/target/x86_64-unknown-linux-gnu/release/libcachecopy_preload.so some-program
//! ```
//!
//! Each function runs [`cachecopy::move_raw`] or [`cachecopy::fill_raw`] (the crate's inline
//! small classes, then its engines) in the mode `CACHECOPY_PRELOAD` gives its group ([`config`];
//! `Auto` by default, `off` for glibc's own), and the crate reads `CACHECOPY_TUNE` and its other
//! variables as in any program. `memcpy` is a move: glibc's x86_64 and aarch64 `memcpy` handle
//! overlapping ranges as `memmove` does, so a program that (wrongly) relies on it keeps working.
//!
//! What a library inside every process must keep, and how:
//! - **Secure mode** (`getauxval(AT_SECURE)`: set-user-ID, set-group-ID, file capabilities): the
//!   environment belongs to a less privileged user, so no `CACHECOPY_*` variable is read, the
//!   crate's included (it checks the same), and no statistics are kept or written: every group
//!   runs `Auto` on the engine the crate's rules pick. Nothing is ever opened by a name from the
//!   environment there; the one file this library opens (the statistics file, outside secure
//!   mode) is opened with `O_NOFOLLOW | O_CLOEXEC`.
//! - **Before this library is relocated** (an IFUNC resolver of a library the loader relocates
//!   before this one): nothing reached through the GOT or a relocated pointer exists yet, so a
//!   call checks `relocated()` first and copies with [`fallback`]'s plain copy, which needs
//!   neither.
//! - **Before any constructor** (a `.preinit_array`, the executable's IFUNC resolvers, another
//!   library's constructor): every group starts uninitialised; the first call initialises it if
//!   the C library has set up the environment, and otherwise is done with the plain copy, so
//!   that no setting is read before it exists.
//! - **`off` runs nothing of cachecopy's**: initialisation reads `CACHECOPY_PRELOAD` first and
//!   detects the CPU (which reads the crate's variables) only if some group is not `off`. An
//!   `off` group calls the next definition (glibc's), which the constructor looks up: calls
//!   before that, or when there is none (said once on stderr, and the statistics name the group
//!   `plain`), take the plain copy, never the crate.
//! - **errno** is what the caller left: initialisation, the constructor and the destructor save
//!   and restore it (`KeepErrno`); the copies themselves never touch it.
//! - **Every thread, fork, vfork, signal handlers**: the call path is atomics and the crate's
//!   lock-free dispatch; no lock, no allocation, no thread-local. Initialisation is idempotent
//!   (racing threads compute the same settings) and guarded by the initialising process's pid,
//!   so a call that arrives during it on the same process (a signal handler, a recursion that the
//!   build check says cannot exist) takes the fallback instead of waiting or recursing, and a
//!   child forked mid-initialisation starts its own.
//! - **Never `memcpy` from inside**: `.ci/run` disassembles the built library (x86_64 and
//!   aarch64) and fails on any call from this library's or the crate's code, or anything it
//!   calls, to the functions exported here, and on any allocator, lock (pthread's or Rust's) or
//!   thread-local access on the call path (`preload/check_calls.py`); the C test interposes them
//!   in the executable, where such a call would land, and counts re-entries
//!   (`preload/tests/preload.c`).
#![deny(unsafe_op_in_unsafe_fn, missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

use core::ffi::{c_char, c_int, c_void, CStr};
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU64, AtomicU8, Ordering};

use cachecopy::Mode;

pub mod config;
pub mod fallback;
pub mod line;

use config::{Choice, COPY, GROUPS, MOVE, SET};
use line::Line;

/// A group's state, one byte read by every call: `0..=3` a [`Mode`] by its discriminant (the
/// fast path), `+ COUNTING` the same with statistics, `OFF` (`+ COUNTING`) glibc's, or
/// `UNINIT`.
const COUNTING: u8 = 4;
const OFF: u8 = 8;
const UNINIT: u8 = 0xff;
const _: () = assert!(
    Mode::Temporal as u8 == 0
        && Mode::NonTemporal as u8 == 1
        && Mode::FlushCache as u8 == 2
        && Mode::Auto as u8 == 3
);

/// Every group's state, in one line read by every call and written only by initialisation.
#[repr(align(64))]
struct States([AtomicU8; 3]);
static STATE: States = States([const { AtomicU8::new(UNINIT) }; 3]);

/// Calls and bytes per group, counted only with `CACHECOPY_PRELOAD_STATS`, and the calls the
/// plain copy served ([`fallback`], index [`PLAIN`]), always counted (on lines of their own, away
/// from [`STATE`]).
#[repr(align(64))]
struct Counts {
    calls: [AtomicU64; 4],
    bytes: [AtomicU64; 4],
}
static COUNTS: Counts = Counts {
    calls: [const { AtomicU64::new(0) }; 4],
    bytes: [const { AtomicU64::new(0) }; 4],
};
/// The row of [`COUNTS`] for the calls the plain copy served.
const PLAIN: usize = 3;

/// The pid of the process initialising, or 0.
static INIT_OWNER: AtomicI32 = AtomicI32::new(0);

/// glibc's `memcpy`, `memmove` and `memset` for `off` groups (null until the constructor).
static NEXT: [AtomicPtr<c_void>; 3] = [const { AtomicPtr::new(core::ptr::null_mut()) }; 3];
/// The `off` groups whose next definition the constructor did not find.
static NO_NEXT: [AtomicBool; 3] = [const { AtomicBool::new(false) }; 3];
/// Whether initialisation detected the CPU (some group runs cachecopy).
static DETECTED: AtomicBool = AtomicBool::new(false);
/// Whether initialisation turned the statistics on (`CACHECOPY_PRELOAD_STATS` set, and not in
/// secure mode).
static STATS: AtomicBool = AtomicBool::new(false);

/// A static that holds its own address once the dynamic loader has relocated this library (the
/// pointer needs a relative relocation, applied before any other of this library's). Before,
/// it holds what the linker wrote (zero or the link-time address), never the run-time one.
struct SelfPointer(*const SelfPointer);
// SAFETY: never written after relocation, and only compared.
unsafe impl Sync for SelfPointer {}
static RELOCATED: SelfPointer = SelfPointer(core::ptr::addr_of!(RELOCATED));

/// Whether the dynamic loader has relocated this library: whether calls through the GOT (to the
/// C library) and the pointers in its tables (the crate's dispatch) work yet. False in an IFUNC
/// resolver of a library relocated before this one (the loader relocates the last-loaded
/// first) that calls `memcpy`: the loader binds it here, before this library's turn. Both
/// addresses are PC-relative, so this is safe to call at any time.
#[inline(always)]
fn relocated() -> bool {
    // SAFETY: reads this library's own static, addressed PC-relative; volatile, so that the
    // compiler cannot assume the value the initialiser gives.
    let p = unsafe { core::ptr::addr_of!(RELOCATED.0).read_volatile() };
    core::ptr::eq(p, core::ptr::addr_of!(RELOCATED))
}

/// Restores `errno` to its value at construction when dropped: what initialisation, the
/// constructor and the destructor run may set it (a failed `write(2)` of a warning, `dlsym`,
/// the crate's sysfs reads on aarch64), and the caller's `errno` is not theirs to change.
/// Only once [`relocated`] (`__errno_location` is a call through the GOT).
struct KeepErrno(c_int);

impl KeepErrno {
    fn new() -> KeepErrno {
        // SAFETY: `__errno_location` returns this thread's `errno`, valid for the thread's life.
        KeepErrno(unsafe { *libc::__errno_location() })
    }
}

impl Drop for KeepErrno {
    fn drop(&mut self) {
        // SAFETY: as in `new`.
        unsafe { *libc::__errno_location() = self.0 };
    }
}

extern "C" {
    /// The process environment; null until the C library has started.
    static environ: *const *const c_char;
    /// glibc's reaction to a fortified call past its object: "*** buffer overflow detected
    /// ***: terminated" and `abort()`.
    fn __chk_fail() -> !;
}

// ---------------------------------------------------------------- the call path

/// The longest call the crate's inline classes serve at the call site (four 16-byte registers
/// on x86_64 and aarch64: lab/findings/small-calls.md). Only the shape of the code depends on it: the
/// exported function tests it together with the state, one branch for the calls most programs
/// make.
const INLINE: usize = 64;
const AUTO: u8 = Mode::Auto as u8;

/// A move of `n` bytes (the `memcpy` and `memmove` groups); returns `d`.
///
/// In `Auto` the whole call is the crate's C-shaped move ([`cachecopy::memmove_raw`]): its
/// inline classes up to [`INLINE`] bytes, past them a jump into the kernel, which returns `d`
/// itself, so the exported function keeps nothing across a call. Any other state goes to
/// [`moves_out`].
///
/// # Safety
/// `s` readable and `d` writable for `n` bytes; they may overlap.
#[inline(always)]
unsafe fn moves(g: usize, d: *mut u8, s: *const u8, n: usize) -> *mut u8 {
    let st = STATE.0[g].load(Ordering::Acquire);
    if (n <= INLINE) & (st == AUTO) {
        // SAFETY: the caller's contract.
        return unsafe { cachecopy::raw::memmove_raw(d, s, n, Mode::Auto) };
    }
    if st == AUTO {
        // SAFETY: the caller's contract.
        return unsafe { cachecopy::raw::memmove_raw(d, s, n, Mode::Auto) };
    }
    // SAFETY: the caller's contract.
    unsafe { moves_out(d, s, n, st, g) }
}

/// [`moves`] in any state but `Auto`. `extern "C"`: it cannot unwind, so the exported
/// function needs no landing pad around it and tail-calls it.
///
/// # Safety
/// As [`moves`].
#[inline(never)]
unsafe extern "C" fn moves_out(d: *mut u8, s: *const u8, n: usize, st: u8, g: usize) -> *mut u8 {
    // SAFETY: the caller's contract; in the first branch `st` is a mode's discriminant.
    unsafe {
        if st < COUNTING {
            return cachecopy::raw::memmove_raw(d, s, n, Mode::ALL[st as usize]);
        }
        slow(g, d, s, 0, n, st);
    }
    // Opaque, so that the caller does not keep its own copy of `d` in a saved register across
    // the call (it would, knowing the result is the argument) and can tail-call this instead.
    core::hint::black_box(d)
}

/// A fill of `n` bytes (the `memset` group); returns `d`. In `Auto` the crate's C-shaped fill
/// ([`cachecopy::memset_raw`]), as [`moves`].
///
/// # Safety
/// `d` writable for `n` bytes.
#[inline(always)]
unsafe fn fills(d: *mut u8, byte: u8, n: usize) -> *mut u8 {
    let st = STATE.0[SET].load(Ordering::Acquire);
    if st == AUTO {
        // SAFETY: the caller's contract.
        return unsafe { cachecopy::raw::memset_raw(d, byte, n, Mode::Auto) };
    }
    // SAFETY: the caller's contract.
    unsafe { fills_out(d, byte, n, st) }
}

/// [`fills`] in any state but `Auto` (`extern "C"`: see [`moves_out`]).
///
/// # Safety
/// As [`fills`].
#[inline(never)]
unsafe extern "C" fn fills_out(d: *mut u8, byte: u8, n: usize, st: u8) -> *mut u8 {
    // SAFETY: the caller's contract; in the first branch `st` is a mode's discriminant.
    unsafe {
        if st < COUNTING {
            return cachecopy::raw::memset_raw(d, byte, n, Mode::ALL[st as usize]);
        }
        slow(SET, d, core::ptr::null(), byte, n, st);
    }
    // Opaque: see `moves_out`.
    core::hint::black_box(d)
}

/// Every state but a plain mode: initialisation, statistics, `off`.
///
/// # Safety
/// `d` writable for `n` bytes; for the move groups `s` readable for `n` bytes.
#[cold]
#[inline(never)]
unsafe fn slow(g: usize, d: *mut u8, s: *const u8, byte: u8, n: usize, mut st: u8) {
    if st == UNINIT {
        if !init() {
            // SAFETY: the caller's contract.
            unsafe { plain(g, d, s, byte, n) };
            return;
        }
        st = STATE.0[g].load(Ordering::Acquire);
    }
    if st & COUNTING != 0 {
        COUNTS.calls[g].fetch_add(1, Ordering::Relaxed);
        COUNTS.bytes[g].fetch_add(n as u64, Ordering::Relaxed);
    }
    let mode = Mode::ALL[(st & 3) as usize];
    if st & OFF != 0 {
        let next = NEXT[g].load(Ordering::Acquire);
        if !next.is_null() {
            // SAFETY: `next` is the next definition of this group's function (`dlsym`), called
            // with the caller's arguments.
            unsafe {
                if g == SET {
                    let f: unsafe extern "C" fn(*mut c_void, c_int, usize) -> *mut c_void =
                        core::mem::transmute(next);
                    f(d.cast(), c_int::from(byte), n);
                } else {
                    let f: unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> *mut c_void =
                        core::mem::transmute(next);
                    f(d.cast(), s.cast(), n);
                }
            }
            return;
        }
        // Before the constructor has looked the next definition up, or without one: not the
        // crate (`off` runs none of its code), the plain copy.
        // SAFETY: the caller's contract.
        unsafe { plain(g, d, s, byte, n) };
        return;
    }
    // SAFETY: the caller's contract.
    unsafe {
        if g == SET {
            cachecopy::fill_raw(d, byte, n, mode)
        } else {
            cachecopy::move_raw(d, s, n, mode)
        }
    }
}

/// The plain copy ([`fallback`]) for group `g`, counted in the [`PLAIN`] row. Needs nothing
/// relocated: it runs before this library is.
///
/// # Safety
/// As [`slow`].
#[inline(always)]
unsafe fn plain(g: usize, d: *mut u8, s: *const u8, byte: u8, n: usize) {
    COUNTS.calls[PLAIN].fetch_add(1, Ordering::Relaxed);
    COUNTS.bytes[PLAIN].fetch_add(n as u64, Ordering::Relaxed);
    // SAFETY: the caller's contract.
    unsafe {
        if g == SET {
            fallback::set_bytes(d, byte, n)
        } else {
            fallback::move_bytes(d, s, n)
        }
    }
}

// ---------------------------------------------------------------- initialisation

/// What the environment asks for: each group's choice, the first bad item of
/// `CACHECOPY_PRELOAD`, and whether to count. In secure mode nothing is read: the defaults.
struct Settings {
    choice: [Choice; 3],
    bad: Option<&'static [u8]>,
    counting: bool,
}

/// Reads the [`Settings`]: `CACHECOPY_PRELOAD` before anything else (no detection, nothing of
/// the crate's), then `CACHECOPY_PRELOAD_STATS`. No allocation, no lock.
fn settings() -> Settings {
    let parsed = config::parse(env(c"CACHECOPY_PRELOAD"));
    Settings {
        choice: parsed.choice,
        bad: parsed.bad,
        counting: env(c"CACHECOPY_PRELOAD_STATS").is_some_and(|v| !v.is_empty()),
    }
}

/// Reads the settings and publishes every group's state, once this library is relocated and
/// the C library has set up the environment (false before, and while this process is
/// initialising elsewhere: the caller then takes the plain copy). The CPU is detected (and the
/// crate's variables read) only if some group runs cachecopy. Idempotent; no lock, no
/// allocation; `errno` unchanged.
fn init() -> bool {
    if !relocated() {
        return false;
    }
    // SAFETY: reads the C library's pointer; null until it has started.
    if unsafe { core::ptr::addr_of!(environ).read_volatile() }.is_null() {
        return false;
    }
    // SAFETY: `getpid` has no preconditions.
    let me = unsafe { libc::getpid() };
    let owner = INIT_OWNER.load(Ordering::Acquire);
    // Another pid is a parent's that forked mid-initialisation (or a vfork partner sharing this
    // memory): its work is not ours to wait for.
    if owner == me
        || INIT_OWNER
            .compare_exchange(owner, me, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
    {
        return false;
    }
    let keep = KeepErrno::new();
    let set = settings();
    if let Some(bad) = set.bad {
        warn_once(bad);
    }
    // Detection before the states below, so that every fast-path call after them finds the
    // detected tables; none when every group is `off`.
    if set.choice.iter().any(|&c| c != Choice::Off) {
        let _ = cachecopy::tune::Plan::current().tuning().engine;
        DETECTED.store(true, Ordering::Release);
    }
    STATS.store(set.counting, Ordering::Relaxed);
    for (g, choice) in set.choice.into_iter().enumerate() {
        let st = match choice {
            Choice::Mode(m) => m as u8,
            Choice::Off => OFF,
        } | if set.counting { COUNTING } else { 0 };
        STATE.0[g].store(st, Ordering::Release);
    }
    drop(keep);
    INIT_OWNER.store(0, Ordering::Release);
    true
}

/// Whether the process runs in secure mode (`AT_SECURE`: set-user-ID, set-group-ID, file
/// capabilities), where its environment is a less privileged user's. `getauxval` reads the
/// loader's copy of the auxiliary vector: no allocation, no lock (callers keep `errno`).
fn secure() -> bool {
    // SAFETY: `getauxval` has no preconditions.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// The value of `name` in the environment (`getenv`: no allocation, no lock); `None` in secure
/// mode, whatever the environment holds.
fn env(name: &CStr) -> Option<&'static [u8]> {
    if secure() {
        return None;
    }
    // SAFETY: `name` is NUL-terminated; `getenv` returns null or a NUL-terminated string in
    // the environment, which lives as long as the process unless the program replaces it (the
    // value is used at once).
    unsafe {
        let p = libc::getenv(name.as_ptr());
        (!p.is_null()).then(|| CStr::from_ptr(p).to_bytes())
    }
}

/// Reports the first ignored item of `CACHECOPY_PRELOAD`, once per process.
fn warn_once(bad: &[u8]) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if WARNED.swap(true, Ordering::Relaxed) {
        return;
    }
    let mut buf = line::Buf::uninit();
    Line::new(&mut buf)
        .push(b"cachecopy-preload: CACHECOPY_PRELOAD: ignored `")
        .push(bad)
        .push(b"` (items: MODE or GROUP=MODE; GROUP memcpy, memmove, memset or all; MODE auto, temporal, nontemporal, flushcache or off)\n")
        .write_to(2);
}

/// The constructor: reads the settings, looks up the next definition (glibc's) of each `off`
/// group (`dlsym` may take the loader's lock, which is why this is not done on the call path;
/// none is said once on stderr), then initialises unless an earlier call has.
#[cfg(cargo_c)]
extern "C" fn constructor(_argc: c_int, _argv: *const *const c_char, _envp: *const *const c_char) {
    if !relocated() {
        return; // the loader runs constructors after relocation; kept for the reader
    }
    let _keep = KeepErrno::new();
    let set = settings();
    let mut missing = [false; 3];
    for (g, name) in [(COPY, c"memcpy"), (MOVE, c"memmove"), (SET, c"memset")] {
        if set.choice[g] != Choice::Off {
            continue;
        }
        // SAFETY: a NUL-terminated name; RTLD_NEXT finds the definition after this library's.
        let f = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
        if f.is_null() {
            missing[g] = true;
            NO_NEXT[g].store(true, Ordering::Relaxed);
            // SAFETY: clears the failed lookup's message, which is not the program's to read.
            unsafe { libc::dlerror() };
        }
        NEXT[g].store(f, Ordering::Release);
    }
    if missing.contains(&true) {
        warn_no_next(missing);
    }
    // The last group's state is published last: set, every group's is.
    if STATE.0[SET].load(Ordering::Acquire) == UNINIT {
        init();
    }
}

/// Says once on stderr which `off` groups have no next definition (a preload list that puts
/// the C library before this one, say), so their calls run the plain copy.
#[cfg(cargo_c)]
fn warn_no_next(missing: [bool; 3]) {
    let mut buf = line::Buf::uninit();
    let mut l = Line::new(&mut buf);
    l.push(b"cachecopy-preload: CACHECOPY_PRELOAD=off but no next definition of");
    for (g, name) in GROUPS.iter().enumerate() {
        if missing[g] {
            l.push(b" ").push(name.as_bytes());
        }
    }
    l.push(b" (dlsym RTLD_NEXT): its calls run this library's plain copy, not cachecopy\n")
        .write_to(2);
}

#[cfg(cargo_c)]
#[used]
#[link_section = ".init_array"]
static CONSTRUCTOR: extern "C" fn(c_int, *const *const c_char, *const *const c_char) = constructor;

/// At exit, with the statistics on (`CACHECOPY_PRELOAD_STATS`, never in secure mode): one line
/// of statistics (see [`stats_line`]) appended to the file it names, or written to stderr for
/// `stderr`. The file is opened with `O_NOFOLLOW` (a symbolic link there is refused) and
/// `O_CLOEXEC`.
#[cfg(cargo_c)]
extern "C" fn destructor() {
    if !relocated() || !STATS.load(Ordering::Relaxed) {
        return;
    }
    let _keep = KeepErrno::new();
    let Some(dest) = env(c"CACHECOPY_PRELOAD_STATS").filter(|v| !v.is_empty()) else {
        return;
    };
    let mut buf = line::Buf::uninit();
    let mut line = Line::new(&mut buf);
    stats_line(&mut line);
    if dest == b"stderr" {
        line.write_to(2);
        return;
    }
    // SAFETY: the value is NUL-terminated in the environment (`env` cut it before the NUL).
    let path = unsafe { CStr::from_ptr(dest.as_ptr().cast()) };
    // SAFETY: `open` with a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            0o644,
        )
    };
    if fd >= 0 {
        line.write_to(fd);
        // SAFETY: our own descriptor.
        unsafe { libc::close(fd) };
    }
}

#[cfg(cargo_c)]
#[used]
#[link_section = ".fini_array"]
static DESTRUCTOR: extern "C" fn() = destructor;

/// Writes `cachecopy-preload: pid 12 /usr/bin/prog: memcpy Auto 120 calls 5000 bytes, memmove
/// ..., memset ...; plain copy 3 calls 900 bytes; engine avx512/avx512/overlap` into `l`: what
/// each group ran and counted in this process (`off`: the next definition; `plain`: `off`
/// without one, so the plain copy), the calls the plain copy served (before relocation, before
/// the environment or the constructor, during initialisation, `plain` groups), and the engine
/// (`not detected` when every group is `off`: nothing of cachecopy's ran).
pub fn stats_line(l: &mut Line<'_>) {
    // SAFETY: `getpid` has no preconditions.
    let pid = unsafe { libc::getpid() };
    l.push(b"cachecopy-preload: pid ")
        .num(pid as u64)
        .push(b" ")
        .link(c"/proc/self/exe")
        .push(b":");
    for (g, name) in GROUPS.iter().enumerate() {
        let st = STATE.0[g].load(Ordering::Acquire);
        l.push(if g == 0 { b" " } else { b", " })
            .push(name.as_bytes())
            .push(b" ")
            .push(match st {
                UNINIT => b"uninitialised",
                _ if st & OFF != 0 && NO_NEXT[g].load(Ordering::Relaxed) => b"plain",
                _ if st & OFF != 0 => b"off",
                _ => Mode::ALL[(st & 3) as usize].name().as_bytes(),
            })
            .push(b" ")
            .num(COUNTS.calls[g].load(Ordering::Relaxed))
            .push(b" calls ")
            .num(COUNTS.bytes[g].load(Ordering::Relaxed))
            .push(b" bytes");
    }
    l.push(b"; plain copy ")
        .num(COUNTS.calls[PLAIN].load(Ordering::Relaxed))
        .push(b" calls ")
        .num(COUNTS.bytes[PLAIN].load(Ordering::Relaxed))
        .push(b" bytes; engine ");
    if DETECTED.load(Ordering::Acquire) {
        let e = cachecopy::tune::Plan::current().tuning().engine;
        l.push(e.temporal.name().as_bytes())
            .push(b"/")
            .push(e.stream.name().as_bytes())
            .push(b"/")
            .push(e.edges.name().as_bytes());
    } else {
        l.push(b"not detected");
    }
    l.push(b"\n");
}

// ---------------------------------------------------------------- the exported functions
//
// Exported under their C names only in cargo-c's build (`--cfg cargo_c`); elsewhere they are
// ordinary Rust functions, so that `cargo test` and clippy see them without replacing the test
// binaries' own memcpy.

/// `memcpy`: copies `n` bytes from `src` to `dst` and returns `dst`. Overlapping ranges are moved
/// as `memmove` would (see the crate documentation).
///
/// # Safety
/// `src` readable and `dst` writable for `n` bytes.
#[cfg_attr(cargo_c, no_mangle)]
pub unsafe extern "C" fn memcpy(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { moves(COPY, dst.cast(), src.cast(), n).cast() }
}

/// `mempcpy`: `memcpy`, returning `dst + n`.
///
/// # Safety
/// As [`memcpy`].
#[cfg_attr(cargo_c, no_mangle)]
pub unsafe extern "C" fn mempcpy(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { moves(COPY, dst.cast(), src.cast(), n) };
    dst.cast::<u8>().wrapping_add(n).cast()
}

/// `memmove`: moves `n` bytes from `src` to `dst` (the ranges may overlap) and returns `dst`.
///
/// # Safety
/// `src` readable and `dst` writable for `n` bytes.
#[cfg_attr(cargo_c, no_mangle)]
pub unsafe extern "C" fn memmove(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { moves(MOVE, dst.cast(), src.cast(), n).cast() }
}

/// `memset`: sets `n` bytes at `dst` to `(unsigned char)c` and returns `dst`.
///
/// # Safety
/// `dst` writable for `n` bytes.
#[cfg_attr(cargo_c, no_mangle)]
pub unsafe extern "C" fn memset(dst: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { fills(dst.cast(), c as u8, n).cast() }
}

/// `bzero`: zeroes `n` bytes at `dst`.
///
/// # Safety
/// `dst` writable for `n` bytes.
#[cfg_attr(cargo_c, no_mangle)]
pub unsafe extern "C" fn bzero(dst: *mut c_void, n: usize) {
    // SAFETY: the caller's contract.
    unsafe { fills(dst.cast(), 0, n) };
}

/// The `_FORTIFY_SOURCE` entries, each `$name(dst, $arg, n, dstlen)`: aborts as glibc's does
/// (`__chk_fail`) when `n > dstlen`, the size of the destination object the compiler knew, and
/// else runs `$body`, its plain entry's work.
macro_rules! fortified {
    ($($(#[$doc:meta])* fn $name:ident($dst:ident, $arg:ident: $ty:ty, $n:ident) $body:block)+) => {$(
        $(#[$doc])*
        #[cfg_attr(cargo_c, no_mangle)]
        pub unsafe extern "C" fn $name(
            $dst: *mut c_void,
            $arg: $ty,
            $n: usize,
            dstlen: usize,
        ) -> *mut c_void {
            if $n > dstlen {
                // SAFETY: glibc's, no preconditions; it does not return.
                unsafe { __chk_fail() }
            }
            $body
        }
    )+};
}

fortified! {
    /// `__memcpy_chk`, what `_FORTIFY_SOURCE` makes of a `memcpy` into an object of known size
    /// `dstlen`: aborts as glibc's does (`__chk_fail`) when `n > dstlen`, else [`memcpy`].
    ///
    /// # Safety
    /// As [`memcpy`].
    fn __memcpy_chk(dst, src: *const c_void, n) {
        // SAFETY: the caller's contract.
        unsafe { moves(COPY, dst.cast(), src.cast(), n).cast() }
    }

    /// `__mempcpy_chk`: [`__memcpy_chk`] returning `dst + n`.
    ///
    /// # Safety
    /// As [`memcpy`].
    fn __mempcpy_chk(dst, src: *const c_void, n) {
        // SAFETY: the caller's contract.
        unsafe { moves(COPY, dst.cast(), src.cast(), n) };
        dst.cast::<u8>().wrapping_add(n).cast()
    }

    /// `__memmove_chk`: aborts when `n > dstlen`, else [`memmove`].
    ///
    /// # Safety
    /// As [`memmove`].
    fn __memmove_chk(dst, src: *const c_void, n) {
        // SAFETY: the caller's contract.
        unsafe { moves(MOVE, dst.cast(), src.cast(), n).cast() }
    }

    /// `__memset_chk`: aborts when `n > dstlen`, else [`memset`].
    ///
    /// # Safety
    /// As [`memset`].
    fn __memset_chk(dst, c: c_int, n) {
        // SAFETY: the caller's contract.
        unsafe { fills(dst.cast(), c as u8, n).cast() }
    }
}
