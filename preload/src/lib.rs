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
use core::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};

use cachecopy::Mode;

pub mod config;
pub mod fallback;
pub mod line;

use config::{Choice, COPY, GROUPS, MOVE, SET};
use line::Line;

/// A group's state, one byte written by initialisation and read by the statistics (the calls
/// read their group's binding, [`SLOTS`], instead): `0..=3` a [`Mode`] by its discriminant,
/// `+ COUNTING` the same with statistics, `OFF` (`+ COUNTING`) glibc's, or `UNINIT`.
const COUNTING: u8 = 4;
const OFF: u8 = 8;
const UNINIT: u8 = 0xff;
/// `Auto`'s state, which binds the crate's C entries.
const AUTO: u8 = Mode::Auto as u8;
const _: () = assert!(
    Mode::Temporal as u8 == 0
        && Mode::NonTemporal as u8 == 1
        && Mode::FlushCache as u8 == 2
        && Mode::Auto as u8 == 3
);

/// Every group's state, written only by initialisation.
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

/// A function of the `memcpy` and `memmove` groups: C's `memmove`.
type MoveFn = cachecopy::raw::MemmoveFn;
/// A function of the `memset` group: C's `memset`.
type SetFn = cachecopy::raw::MemsetFn;

/// The function each group's exports jump to, one word per group, bound once by
/// initialisation: the crate's C entries of the published plan (`Auto`), a function per other
/// mode, a counting one (statistics), or the next definition (`off`). Each word holds the
/// function's address minus that of the group's bootstrap function ([`boot_copy`],
/// [`boot_move`], [`boot_set`]), so that the zero it holds until then, in a static that needs
/// no relocation, names the bootstrap function, and an exported function reads it correctly
/// before this library is relocated. An exported function is one load of its word, the address
/// of its bootstrap function (PC-relative), one add and one jump: no state byte, no compare.
#[repr(align(64))]
struct Slots([AtomicUsize; 3]);
static SLOTS: Slots = Slots([const { AtomicUsize::new(0) }; 3]);

/// The bootstrap function of the move group `g` ([`COPY`] or [`MOVE`]), as an address.
#[inline(always)]
fn boot_of(g: usize) -> usize {
    if g == COPY {
        boot_copy as MoveFn as usize
    } else {
        boot_move as MoveFn as usize
    }
}

/// The function the move group `g` is bound to (its bootstrap function until initialisation).
/// A relaxed load: the word only ever names code, and what that code reads it reads with its
/// own ordering (the crate's plan with acquire).
#[inline(always)]
fn bound_move(g: usize) -> MoveFn {
    let f = boot_of(g).wrapping_add(SLOTS.0[g].load(Ordering::Relaxed));
    // SAFETY: the word is 0 (the bootstrap function) or was set by `bind_move` from a function
    // of this type.
    unsafe { core::mem::transmute::<usize, MoveFn>(f) }
}

/// The function the `memset` group is bound to, as [`bound_move`].
#[inline(always)]
fn bound_set() -> SetFn {
    let f = (boot_set as SetFn as usize).wrapping_add(SLOTS.0[SET].load(Ordering::Relaxed));
    // SAFETY: as in `bound_move`.
    unsafe { core::mem::transmute::<usize, SetFn>(f) }
}

/// Binds the move group `g` to `f`.
fn bind_move(g: usize, f: MoveFn) {
    SLOTS.0[g].store((f as usize).wrapping_sub(boot_of(g)), Ordering::Release);
}

/// Binds the `memset` group to `f`.
fn bind_set(f: SetFn) {
    SLOTS.0[SET].store(
        (f as usize).wrapping_sub(boot_set as SetFn as usize),
        Ordering::Release,
    );
}

/// Binds group `g` to its plain copy unless it is bound already: an `off` group whose next
/// definition the constructor has not found (yet). Never over a binding the constructor made.
fn bind_plain(g: usize) {
    let f = match g {
        COPY => plain_copy as MoveFn as usize,
        MOVE => plain_move as MoveFn as usize,
        _ => plain_set as SetFn as usize,
    };
    let base = if g == SET {
        boot_set as SetFn as usize
    } else {
        boot_of(g)
    };
    let _ =
        SLOTS.0[g].compare_exchange(0, f.wrapping_sub(base), Ordering::AcqRel, Ordering::Relaxed);
}

/// Binds group `g` to its next definition `next` (non-null: `dlsym`'s).
fn bind_next(g: usize, next: *mut c_void) {
    // SAFETY: `next` is the next definition of this group's C function, of this type.
    unsafe {
        if g == SET {
            bind_set(core::mem::transmute::<*mut c_void, SetFn>(next));
        } else {
            bind_move(g, core::mem::transmute::<*mut c_void, MoveFn>(next));
        }
    }
}

/// The bootstrap function of the `memcpy` group: initialises (if it can) and goes on through
/// the group's binding, or copies with the plain copy ([`fallback`]) while it cannot (before
/// this library is relocated, before the C library has set up the environment, while this
/// process initialises). Needs nothing relocated until `init` says so.
///
/// # Safety
/// `s` readable and `d` writable for `n` bytes; they may overlap.
unsafe extern "C" fn boot_copy(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { boot_moves(COPY, d, s, n) }
}

/// The bootstrap function of the `memmove` group, as [`boot_copy`].
///
/// # Safety
/// As [`boot_copy`].
unsafe extern "C" fn boot_move(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { boot_moves(MOVE, d, s, n) }
}

/// [`boot_copy`] and [`boot_move`] for group `g`.
///
/// # Safety
/// As [`boot_copy`].
#[inline(always)]
unsafe fn boot_moves(g: usize, d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
    // Bound meanwhile (another thread initialised), or bound now: through the binding.
    if SLOTS.0[g].load(Ordering::Acquire) != 0
        || (init() && SLOTS.0[g].load(Ordering::Acquire) != 0)
    {
        // SAFETY: the caller's contract; the binding is not this function (non-zero word).
        return unsafe { bound_move(g)(d, s, n) };
    }
    // SAFETY: the caller's contract.
    unsafe { plain(g, d.cast(), s.cast(), 0, n) };
    d
}

/// The bootstrap function of the `memset` group, as [`boot_copy`].
///
/// # Safety
/// `d` writable for `n` bytes.
unsafe extern "C" fn boot_set(d: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    if SLOTS.0[SET].load(Ordering::Acquire) != 0
        || (init() && SLOTS.0[SET].load(Ordering::Acquire) != 0)
    {
        // SAFETY: the caller's contract; the binding is not this function.
        return unsafe { bound_set()(d, c, n) };
    }
    // SAFETY: the caller's contract.
    unsafe { plain(SET, d.cast(), core::ptr::null(), c as u8, n) };
    d
}

/// A move group bound to the mode `M` (by its discriminant; `Auto` is bound to the crate's C
/// entries instead).
///
/// # Safety
/// As [`boot_copy`].
unsafe extern "C" fn mode_move<const M: u8>(
    d: *mut c_void,
    s: *const c_void,
    n: usize,
) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { cachecopy::raw::memmove_raw(d.cast(), s.cast(), n, Mode::ALL[M as usize]).cast() }
}

/// The `memset` group bound to the mode `M`, as [`mode_move`].
///
/// # Safety
/// As [`boot_set`].
unsafe extern "C" fn mode_set<const M: u8>(d: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { cachecopy::raw::memset_raw(d.cast(), c as u8, n, Mode::ALL[M as usize]).cast() }
}

/// The `memcpy` group with statistics: counted, then its mode or its `off` choice.
///
/// # Safety
/// As [`boot_copy`].
unsafe extern "C" fn count_copy(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { counted(COPY, d.cast(), s.cast(), 0, n) };
    d
}

/// The `memmove` group with statistics, as [`count_copy`].
///
/// # Safety
/// As [`boot_copy`].
unsafe extern "C" fn count_move(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { counted(MOVE, d.cast(), s.cast(), 0, n) };
    d
}

/// The `memset` group with statistics, as [`count_copy`].
///
/// # Safety
/// As [`boot_set`].
unsafe extern "C" fn count_set(d: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { counted(SET, d.cast(), core::ptr::null(), c as u8, n) };
    d
}

/// The `memcpy` group's plain copy: an `off` group without a next definition (yet).
///
/// # Safety
/// As [`boot_copy`].
unsafe extern "C" fn plain_copy(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { plain(COPY, d.cast(), s.cast(), 0, n) };
    d
}

/// The `memmove` group's plain copy, as [`plain_copy`].
///
/// # Safety
/// As [`boot_copy`].
unsafe extern "C" fn plain_move(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { plain(MOVE, d.cast(), s.cast(), 0, n) };
    d
}

/// The `memset` group's plain copy, as [`plain_copy`].
///
/// # Safety
/// As [`boot_set`].
unsafe extern "C" fn plain_set(d: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { plain(SET, d.cast(), core::ptr::null(), c as u8, n) };
    d
}

/// What each counting group runs after counting (the function its mode binds without
/// statistics: the crate's C entries for `Auto`), so that the statistics count the calls of the
/// path they describe; null until bound (then the crate's call in the group's mode).
static INNER: [AtomicPtr<c_void>; 3] = [const { AtomicPtr::new(core::ptr::null_mut()) }; 3];

/// A counted call of group `g` (statistics on): counts it, then runs the group's mode (through
/// [`INNER`]), or for `off` its next definition (the plain copy while there is none).
///
/// # Safety
/// `d` writable for `n` bytes; for the move groups `s` readable for `n` bytes.
#[inline(never)]
unsafe fn counted(g: usize, d: *mut u8, s: *const u8, byte: u8, n: usize) {
    let st = STATE.0[g].load(Ordering::Acquire);
    COUNTS.calls[g].fetch_add(1, Ordering::Relaxed);
    COUNTS.bytes[g].fetch_add(n as u64, Ordering::Relaxed);
    if st & OFF != 0 {
        let next = NEXT[g].load(Ordering::Acquire);
        if !next.is_null() {
            // SAFETY: `next` is the next definition of this group's function (`dlsym`), called
            // with the caller's arguments.
            unsafe {
                if g == SET {
                    let f = core::mem::transmute::<*mut c_void, SetFn>(next);
                    f(d.cast(), c_int::from(byte), n);
                } else {
                    let f = core::mem::transmute::<*mut c_void, MoveFn>(next);
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
    let inner = INNER[g].load(Ordering::Acquire);
    if !inner.is_null() {
        // SAFETY: the caller's contract; `inner` is a function of the group's type
        // (`bind_all`).
        unsafe {
            if g == SET {
                core::mem::transmute::<*mut c_void, SetFn>(inner)(d.cast(), c_int::from(byte), n);
            } else {
                core::mem::transmute::<*mut c_void, MoveFn>(inner)(d.cast(), s.cast(), n);
            }
        }
        return;
    }
    let mode = Mode::ALL[(st & 3) as usize];
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
/// As [`counted`].
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

/// Binds every group to what its state says (`st`: the states just published, with the
/// settings' choices): the crate's C entries of the published plan for `Auto`, the mode's
/// function, the counting one, or for `off` the next definition (the plain copy while the
/// constructor has not found it; the constructor binds it when it does).
fn bind_all(st: [u8; 3]) {
    let entries = if st.iter().any(|&s| s & OFF == 0 && s & 3 == AUTO) {
        Some(cachecopy::raw::c_entries(cachecopy::tune::Plan::current()))
    } else {
        None
    };
    for (g, &s) in st.iter().enumerate() {
        if s & OFF != 0 {
            if s & COUNTING != 0 {
                bind_counting(g);
                continue;
            }
            let next = NEXT[g].load(Ordering::SeqCst);
            if next.is_null() {
                bind_plain(g);
            } else {
                bind_next(g, next);
            }
            continue;
        }
        let mode = s & 3;
        if g == SET {
            let f: SetFn = match (mode, entries) {
                (AUTO, Some(e)) => e.memset,
                (0, _) => mode_set::<0>,
                (1, _) => mode_set::<1>,
                (2, _) => mode_set::<2>,
                _ => mode_set::<3>,
            };
            if s & COUNTING != 0 {
                INNER[g].store(f as *mut c_void, Ordering::Release);
                bind_counting(g);
            } else {
                bind_set(f);
            }
        } else {
            let f: MoveFn = match (mode, entries) {
                (AUTO, Some(e)) => e.memmove,
                (0, _) => mode_move::<0>,
                (1, _) => mode_move::<1>,
                (2, _) => mode_move::<2>,
                _ => mode_move::<3>,
            };
            if s & COUNTING != 0 {
                INNER[g].store(f as *mut c_void, Ordering::Release);
                bind_counting(g);
            } else {
                bind_move(g, f);
            }
        }
    }
}

/// Binds group `g` to its counting function.
fn bind_counting(g: usize) {
    match g {
        COPY => bind_move(g, count_copy),
        MOVE => bind_move(g, count_move),
        _ => bind_set(count_set),
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

/// Reads the settings, publishes every group's state and binds every group, once this library is relocated and
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
    let mut states = [UNINIT; 3];
    for (g, choice) in set.choice.into_iter().enumerate() {
        let st = match choice {
            Choice::Mode(m) => m as u8,
            Choice::Off => OFF,
        } | if set.counting { COUNTING } else { 0 };
        // Sequentially consistent, as the constructor's store of the next definition and its
        // load of this state: of an `off` group's binding here and the constructor's, at least
        // one sees the next definition (`bind_all`, `constructor`).
        STATE.0[g].store(st, Ordering::SeqCst);
        states[g] = st;
    }
    bind_all(states);
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
        NEXT[g].store(f, Ordering::SeqCst);
        // An `off` group initialised before this lookup ran the plain copy: from now on its next
        // definition (an initialisation racing this one binds it too, or binds the plain copy
        // only where nothing is bound: `bind_plain`).
        if !f.is_null() && STATE.0[g].load(Ordering::SeqCst) == OFF {
            bind_next(g, f);
        }
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
    unsafe { bound_move(COPY)(dst, src, n) }
}

/// `mempcpy`: `memcpy`, returning `dst + n`.
///
/// # Safety
/// As [`memcpy`].
#[cfg_attr(cargo_c, no_mangle)]
pub unsafe extern "C" fn mempcpy(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { bound_move(COPY)(dst, src, n) };
    dst.cast::<u8>().wrapping_add(n).cast()
}

/// `memmove`: moves `n` bytes from `src` to `dst` (the ranges may overlap) and returns `dst`.
///
/// # Safety
/// `src` readable and `dst` writable for `n` bytes.
#[cfg_attr(cargo_c, no_mangle)]
pub unsafe extern "C" fn memmove(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { bound_move(MOVE)(dst, src, n) }
}

/// `memset`: sets `n` bytes at `dst` to `(unsigned char)c` and returns `dst`.
///
/// # Safety
/// `dst` writable for `n` bytes.
#[cfg_attr(cargo_c, no_mangle)]
pub unsafe extern "C" fn memset(dst: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { bound_set()(dst, c, n) }
}

/// `bzero`: zeroes `n` bytes at `dst`.
///
/// # Safety
/// `dst` writable for `n` bytes.
#[cfg_attr(cargo_c, no_mangle)]
pub unsafe extern "C" fn bzero(dst: *mut c_void, n: usize) {
    // SAFETY: the caller's contract.
    unsafe { bound_set()(dst, 0, n) };
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
        unsafe { bound_move(COPY)(dst, src, n) }
    }

    /// `__mempcpy_chk`: [`__memcpy_chk`] returning `dst + n`.
    ///
    /// # Safety
    /// As [`memcpy`].
    fn __mempcpy_chk(dst, src: *const c_void, n) {
        // SAFETY: the caller's contract.
        unsafe { bound_move(COPY)(dst, src, n) };
        dst.cast::<u8>().wrapping_add(n).cast()
    }

    /// `__memmove_chk`: aborts when `n > dstlen`, else [`memmove`].
    ///
    /// # Safety
    /// As [`memmove`].
    fn __memmove_chk(dst, src: *const c_void, n) {
        // SAFETY: the caller's contract.
        unsafe { bound_move(MOVE)(dst, src, n) }
    }

    /// `__memset_chk`: aborts when `n > dstlen`, else [`memset`].
    ///
    /// # Safety
    /// As [`memset`].
    fn __memset_chk(dst, c: c_int, n) {
        // SAFETY: the caller's contract.
        unsafe { bound_set()(dst, c, n) }
    }
}
