//! Allocator-grade guarantee: no data-path call allocates, on its first call or later ones,
//! whatever the `CACHECOPY_*` environment says (set, unset, unparsable), however many threads
//! race detection.
//!
//! This binary's `#[global_allocator]` aborts with a message on any allocation while a no-alloc
//! window is open, and on any re-entry while it is itself inside a cachecopy call (its
//! `alloc_zeroed` and `realloc` can be routed through `fill_raw` and `copy_raw`, the way an
//! allocator built on cachecopy would). `harness = false`: the parent (`main` without
//! arguments) runs one child process of this binary per (scenario, environment), since
//! detection happens once per process, and checks each child's exit status and stderr.
//!
//! Scenarios:
//! - `allocator`: the allocator routes `alloc_zeroed` and `realloc` through cachecopy from the
//!   process's first allocation on, so detection and the environment reading run inside the
//!   allocator; the child then makes zeroed and growing vectors around every threshold.
//! - `race:<op>`: four threads wait at a gate with every buffer allocated; the window opens,
//!   each thread's first call is `<op>` (or a different op per thread, for `mixed`), then every
//!   data-path call in every mode on the dispatched backend and on each supported one; the
//!   window closes and the results are checked against references.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

use cachecopy::iter::{copy_from_iter, copy_to_iter, Dest, IoVec, IoVecMut, Source};
use cachecopy::net::{
    csum_and_copy, csum_and_copy_from_iter, csum_and_copy_to_iter, csum_and_copy_with,
    csum_block_add, csum_fold, csum_frame_from_iter, csum_partial,
};
use cachecopy::{Backend, FlushOp, Mode};

mod common;

// ---------------------------------------------------------------- the allocator

/// Open while no thread may allocate (or free).
static FORBID: AtomicBool = AtomicBool::new(false);
/// Whether `alloc_zeroed` and `realloc` go through cachecopy: 0 not yet read, 1 yes, 2 no
/// (`NO_ALLOC_ROUTE=1` in the environment, read with `getenv`, which does not allocate).
static ROUTE: AtomicU8 = AtomicU8::new(0);
/// Calls the allocator made into cachecopy (proves the `allocator` scenario exercised it).
static ROUTED: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread is inside the allocator's own cachecopy call. A `const` `Cell<bool>` needs
    /// no destructor, so reading it never allocates.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

struct Strict;

#[global_allocator]
static GLOBAL: Strict = Strict;

/// Writes `msg` to stderr without allocating and aborts.
fn die(msg: &str) -> ! {
    // SAFETY: writes `msg.len()` bytes of a live string to fd 2; abort never returns.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::abort()
    }
}

fn route() -> bool {
    match ROUTE.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            // SAFETY: a NUL-terminated name; the result is only compared, never kept.
            let on = unsafe {
                let p = libc::getenv(c"NO_ALLOC_ROUTE".as_ptr());
                !p.is_null() && *p == b'1' as libc::c_char
            };
            ROUTE.store(if on { 1 } else { 2 }, Ordering::Relaxed);
            on
        }
    }
}

impl Strict {
    fn check(&self, what: &str) {
        if INSIDE.with(Cell::get) {
            die(what_msg(what, true));
        }
        if FORBID.load(Ordering::SeqCst) {
            die(what_msg(what, false));
        }
    }

    /// Runs `f` (a cachecopy call) marked as inside the allocator.
    fn inside(&self, f: impl FnOnce()) {
        INSIDE.with(|c| c.set(true));
        f();
        INSIDE.with(|c| c.set(false));
        ROUTED.fetch_add(1, Ordering::Relaxed);
    }
}

fn what_msg(what: &str, reentry: bool) -> &'static str {
    match (what, reentry) {
        ("alloc", true) => {
            "\nNO_ALLOC FAILURE: allocator re-entered (alloc) from inside cachecopy\n"
        }
        ("dealloc", true) => {
            "\nNO_ALLOC FAILURE: allocator re-entered (dealloc) from inside cachecopy\n"
        }
        (_, true) => "\nNO_ALLOC FAILURE: allocator re-entered from inside cachecopy\n",
        ("dealloc", false) => "\nNO_ALLOC FAILURE: memory freed inside the no-alloc window\n",
        (_, false) => "\nNO_ALLOC FAILURE: allocation inside the no-alloc window\n",
    }
}

// SAFETY: every path hands out what `System` hands out, for the same layouts; the routed
// paths write exactly the bytes `alloc_zeroed` and `realloc` promise.
unsafe impl GlobalAlloc for Strict {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.check("alloc");
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.check("alloc");
        if !route() {
            // SAFETY: forwarded contract.
            return unsafe { System.alloc_zeroed(layout) };
        }
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            // SAFETY: `p` is a fresh block of `layout.size()` bytes, ours alone.
            self.inside(|| unsafe { cachecopy::fill_raw(p, 0, layout.size(), Mode::Auto) });
        }
        p
    }

    unsafe fn realloc(&self, old: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.check("alloc");
        if !route() {
            // SAFETY: forwarded contract.
            return unsafe { System.realloc(old, layout, new_size) };
        }
        // SAFETY: `realloc`'s contract makes this layout valid (size fits `isize` at `align`).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a nonzero size (realloc's contract).
        let p = unsafe { System.alloc(new_layout) };
        if !p.is_null() {
            let keep = layout.size().min(new_size);
            // SAFETY: `old` holds `layout.size()` readable bytes, `p` is a fresh block of
            // `new_size`: two disjoint blocks, `keep` bytes each way.
            self.inside(|| unsafe { cachecopy::copy_raw(p, old, keep, Mode::Auto) });
            // SAFETY: `old` was allocated by us with `layout` and is not used again.
            unsafe { System.dealloc(old, layout) };
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        self.check("dealloc");
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(p, layout) }
    }
}

// ---------------------------------------------------------------- the parent

const VARS: [&str; 5] = [
    "CACHECOPY_NT_THRESHOLD",
    "CACHECOPY_FILL_NT_THRESHOLD",
    "CACHECOPY_FILL_REP_THRESHOLD",
    "CACHECOPY_REP_MOVSB_THRESHOLD",
    "CACHECOPY_BACKEND",
];

const OPS: [&str; 8] = [
    "copy",
    "fill",
    "csum",
    "iter_from",
    "iter_to",
    "csum_iter",
    "move",
    "frame",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if cfg!(miri) {
        println!("no_alloc: skipped under Miri (it cannot start processes)");
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1]);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        println!("no_alloc: test");
        return;
    }
    parent();
}

/// One environment for a child: `(variable, value)` pairs, the value as raw bytes.
type Env = Vec<(&'static str, Vec<u8>)>;

fn environments() -> Vec<Env> {
    let one = |k: &'static str, v: &[u8]| vec![(k, v.to_vec())];
    let mut envs: Vec<Env> = vec![Vec::new()];
    for var in &VARS[..4] {
        for v in [
            &b"0"[..],
            b"4096",
            b" 65536 ",
            &usize::MAX.to_string().into_bytes(),
            b"12abc",
            b"-1",
            b"99999999999999999999999999",
            b"",
            b"\xff\xfe",
        ] {
            envs.push(one(var, v));
        }
    }
    let mut backends: Vec<Vec<u8>> = ["nope", "", "\u{e9}", "AVX2", "generic"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    backends.push(b"\xc3".to_vec());
    for b in common::ALL_BACKENDS {
        backends.push(b.name().as_bytes().to_vec());
    }
    for v in backends {
        envs.push(one("CACHECOPY_BACKEND", &v));
    }
    // A calibration at detection (timed copies on mmap'd buffers, inside the first call).
    envs.push(one("CACHECOPY_NT_THRESHOLD", b"calibrate"));
    // A CACHECOPY_TUNE line, parsed in place at detection; its one bad field is the warning.
    envs.push(one(
        "CACHECOPY_TUNE",
        b"nt=16M,fill_nt=16M,bad=1,rep_movsb=never,fill_rep=2K",
    ));
    // The engine's fields: in the line (with one bad field), and in `CACHECOPY_ENGINE`, valid
    // and not (composed tables are chosen at detection, inside the first call).
    envs.push(one(
        "CACHECOPY_TUNE",
        b"nt=4M,temporal=generic,stream=sse9,edges=overlap",
    ));
    envs.push(one("CACHECOPY_ENGINE", b"temporal=generic,edges=masked"));
    envs.push(one("CACHECOPY_ENGINE", b"body=nope,,edges"));
    // Every variable bad at once (one warning, whichever comes first), and every one valid.
    envs.push(VARS.iter().map(|&k| (k, b"x".to_vec())).collect());
    envs.push(vec![
        (VARS[0], b"1".to_vec()),
        (VARS[1], b"2".to_vec()),
        (VARS[2], b"3".to_vec()),
        (VARS[3], b"5".to_vec()),
        (VARS[4], Backend::Generic.name().as_bytes().to_vec()),
    ]);
    envs
}

/// Whether `env` holds a value cachecopy must refuse (and say so on stderr).
fn has_bad_value(env: &Env) -> bool {
    env.iter().any(|(k, v)| {
        let text = std::str::from_utf8(v).map(str::trim);
        if *k == "CACHECOPY_ENGINE" {
            // Every field a backend this CPU runs or an edge store, or not.
            return !text.is_ok_and(|t| {
                t.split(',').filter(|f| !f.trim().is_empty()).all(|f| {
                    f.split_once('=').is_some_and(|(k, v)| match k.trim() {
                        "edges" => ["masked", "overlap"].contains(&v.trim()),
                        "temporal" | "stream" | "body" => Backend::supported()
                            .iter()
                            .any(|b| b.name().eq_ignore_ascii_case(v.trim())),
                        _ => false,
                    })
                })
            });
        }
        if *k == "CACHECOPY_BACKEND" {
            !text.is_ok_and(|t| {
                Backend::supported()
                    .iter()
                    .any(|b| b.name().eq_ignore_ascii_case(t))
            })
        } else if *k == "CACHECOPY_NT_THRESHOLD" && text == Ok("calibrate") {
            false
        } else {
            !text.is_ok_and(|t| t.parse::<usize>().is_ok())
        }
    })
}

fn run_child(scenario: &str, env: &Env) -> (bool, String) {
    let mut cmd = common::run_target_binary(std::env::current_exe().unwrap());
    cmd.args(["--child", scenario]);
    for k in VARS {
        cmd.env_remove(k);
    }
    cmd.env_remove("NO_ALLOC_ROUTE");
    for (k, v) in env {
        cmd.env(k, OsStr::from_bytes(v));
    }
    if scenario == "allocator" {
        cmd.env("NO_ALLOC_ROUTE", "1");
    }
    if common::emulated() {
        // The lock check's trace (see `lock`): QEMU user mode has no seccomp.
        cmd.env("QEMU_STRACE", "1");
    }
    let out = cmd.output().unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn parent() {
    let mut scenarios = vec!["allocator".to_string(), "race:mixed".to_string()];
    scenarios.extend(OPS.iter().map(|op| format!("race:{op}")));
    // With `CACHECOPY_TUNE` set by the caller (`.ci/run` runs this suite once per engine the CPU
    // runs, forced so), every scenario runs in that environment alone: the variables' own
    // variants test how detection reads them, which the run without it covers.
    let envs = if std::env::var_os("CACHECOPY_TUNE").is_some() {
        vec![Vec::new()]
    } else {
        environments()
    };
    let mut runs = 0;
    for env in &envs {
        let bad = has_bad_value(env);
        // Every scenario with no environment; the allocator and mixed race with each.
        let which = if env.is_empty() {
            &scenarios[..]
        } else {
            &scenarios[..2]
        };
        for s in which {
            let (ok, out) = run_child(s, env);
            let shown: Vec<_> = env
                .iter()
                .map(|(k, v)| format!("{k}={:?}", String::from_utf8_lossy(v)))
                .collect();
            assert!(
                ok && out.contains("no_alloc child: ok"),
                "child {s} with {shown:?} failed:\n{}",
                tail(&out)
            );
            if s.starts_with("race:") {
                if let Err(e) = lock::check_output(&out) {
                    panic!("child {s} with {shown:?}: {e}\n{}", tail(&out));
                }
            }
            assert_eq!(
                out.matches("cachecopy: ignoring").count(),
                usize::from(bad),
                "child {s} with {shown:?}: expected {} warning line(s):\n{out}",
                usize::from(bad)
            );
            runs += 1;
        }
    }
    // Each check can fail: an allocation, and a lock the racing threads wait on, added to the
    // path inside the window.
    for (mutant, check) in [
        ("mutant:alloc", "NO_ALLOC FAILURE"),
        ("mutant:mutex", "NO_LOCK FAILURE"),
    ] {
        let (ok, out) = run_child(mutant, &Vec::new());
        let traced = lock::check_output(&out).err().unwrap_or_default();
        assert!(
            (!ok && out.contains(check)) || traced.contains(check),
            "child {mutant} was not caught ({check} expected):\n{}",
            tail(&out)
        );
        println!("no_alloc: {mutant} caught: {check}");
    }
    println!("no_alloc: {runs} child processes, 0 allocations and 0 waits in any window: ok");
}

/// The end of a child's output (a traced child's can be megabytes).
fn tail(out: &str) -> &str {
    let mut at = out.len().saturating_sub(8000);
    while !out.is_char_boundary(at) {
        at += 1;
    }
    &out[at..]
}

// ---------------------------------------------------------------- the children

fn child(scenario: &str) {
    match scenario {
        "allocator" => allocator(),
        "mutant:alloc" => race("mixed", Mutant::Alloc),
        "mutant:mutex" => race("mixed", Mutant::Mutex),
        s => race(
            s.strip_prefix("race:").expect("unknown scenario"),
            Mutant::None,
        ),
    }
    check_environment_applied();
    println!("no_alloc child: ok");
}

/// The thresholds and backend the environment asked for (when valid) are the ones in force.
fn check_environment_applied() {
    let get = |k: &str| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
    };
    if let Some(n) = get(VARS[0]) {
        assert_eq!(cachecopy::nt_threshold(), n);
    }
    if let Some(n) = get(VARS[1]).or(get(VARS[0])) {
        assert_eq!(cachecopy::fill_nt_threshold(), n);
    }
    if let Some(n) = get(VARS[2]) {
        assert_eq!(cachecopy::fill_rep_threshold(), n);
    }
    if let Some(n) = get(VARS[3]) {
        assert_eq!(cachecopy::rep_movsb_threshold(), n);
    }
    // The engine: the rule's, or what the variables force over it (a name this CPU cannot run
    // is ignored, and the rule's choice is not the widest backend on every CPU: Zen 4 with
    // AVX-512 runs AVX2, lab/findings/engine.md). A calibration asked for by
    // `CACHECOPY_NT_THRESHOLD=calibrate` takes another engine where its check measured one
    // faster (lab/findings/engine.md): then the engine in force is the record's, one this CPU runs.
    let calibrated = std::env::var("CACHECOPY_NT_THRESHOLD")
        .is_ok_and(|v| v.trim().eq_ignore_ascii_case("calibrate"));
    if calibrated {
        assert_eq!(cachecopy::engine(), cachecopy::tuning().engine);
        assert!(cachecopy::Engine::supported().contains(&cachecopy::engine()));
    } else {
        assert_eq!(cachecopy::engine(), common::engine_in_force());
    }
}

/// The allocator itself is the first caller; then zeroed and growing vectors of every size
/// class, below and above every threshold, each checked.
fn allocator() {
    assert!(route(), "NO_ALLOC_ROUTE not seen");
    for len in [1usize, 33, 1000, 5000, 300_000, 3 << 20, 40 << 20] {
        let v = vec![0u8; len];
        assert!(common::all_bytes(&v, 0), "zeroed {len}");
        drop(v);
        let mut v = common::pattern(len, len as u8);
        let want = v.clone();
        v.reserve_exact(len + 4096); // realloc: copies `len` bytes through cachecopy
        assert!(v == want, "grown {len}");
    }
    assert!(
        ROUTED.load(Ordering::Relaxed) >= 14,
        "the allocator never called cachecopy"
    );
}

/// The length classes: inline fill, short, streaming-sized, past several line sizes.
const LENS: [usize; 4] = [31, 700, 4097, 200_003];
const THREADS: usize = 4;

static READY: AtomicUsize = AtomicUsize::new(0);
static GO: AtomicBool = AtomicBool::new(false);
static DONE: AtomicUsize = AtomicUsize::new(0);

fn spin_until(f: impl Fn() -> bool) {
    while !f() {
        std::thread::yield_now();
    }
}

/// One operation's inputs, outputs and reference, allocated before the window.
struct Case {
    src: Vec<u8>,
    /// `[pass][mode]` destinations.
    dst: Vec<Vec<Vec<u8>>>,
    /// `[pass][mode]` returned counts and sums.
    got: Vec<Vec<(usize, u32)>>,
}

/// A thread's cases, handed to the main thread for checking: the racing threads never return
/// (see `lock::park`), so the main thread reads their results once `DONE` says they are final.
struct Shared(*const Vec<Vec<Case>>);
// SAFETY: the pointee is written only by its thread before its `DONE` increment (SeqCst) and
// read only by the main thread after observing `DONE == THREADS`.
unsafe impl Send for Shared {}

fn race(first: &str, mutant: Mutant) {
    assert!(
        first == "mixed" || OPS.contains(&first),
        "unknown op {first}"
    );
    let flush_ops: Vec<FlushOp> = cachecopy::cpu().flush_ops().collect();
    lock::install_handler();
    let (tx, rx) = std::sync::mpsc::channel::<Shared>();
    for t in 0..THREADS {
        let flush_ops = flush_ops.clone();
        let first = first.to_string();
        let tx = tx.clone();
        // Never joined: the thread parks for good after its window (`lock::park`).
        std::thread::spawn(move || {
            let order: Vec<usize> = {
                let lead = if first == "mixed" {
                    t % OPS.len()
                } else {
                    OPS.iter().position(|&o| o == first).unwrap()
                };
                std::iter::once(lead)
                    .chain((0..OPS.len()).filter(|&o| o != lead))
                    .collect()
            };
            let mut cases: Vec<Vec<Case>> = LENS
                .iter()
                .enumerate()
                .map(|(li, &len)| {
                    (0..OPS.len())
                        .map(|o| Case {
                            src: common::pattern(len, (t * 31 + li * 7 + o) as u8),
                            dst: vec![vec![vec![0u8; len]; 4]; 2],
                            got: vec![vec![(0, 0); 4]; 2],
                        })
                        .collect()
                })
                .collect();
            tx.send(Shared(&cases)).unwrap();
            drop(tx);
            READY.fetch_add(1, Ordering::SeqCst);
            spin_until(|| GO.load(Ordering::SeqCst));
            // ---- window: nothing below may allocate, lock or wait ----
            lock::arm(t);
            for pass in 0..2 {
                for &o in &order {
                    for lens in cases.iter_mut() {
                        run(o, pass, t, &mut lens[o], &flush_ops, mutant);
                    }
                }
            }
            DONE.fetch_add(1, Ordering::SeqCst);
            lock::park()
        });
    }
    drop(tx);
    let shared: Vec<Shared> = rx.iter().collect();
    assert_eq!(shared.len(), THREADS);
    spin_until(|| READY.load(Ordering::SeqCst) == THREADS);
    // The `Mutex` mutant is held here until every racing thread is inside its `lock` and a
    // while after, so they wait on it whatever the scheduler does (two threads that happen not
    // to overlap would never contend, and a loaded machine makes that likely).
    let held = (mutant == Mutant::Mutex).then(|| MUTANT_LOCK.lock().unwrap());
    FORBID.store(true, Ordering::SeqCst);
    GO.store(true, Ordering::SeqCst);
    if let Some(held) = held {
        spin_until(|| AT_MUTANT_LOCK.load(Ordering::SeqCst) >= THREADS);
        std::thread::sleep(std::time::Duration::from_millis(100));
        drop(held);
    }
    spin_until(|| DONE.load(Ordering::SeqCst) == THREADS);
    FORBID.store(false, Ordering::SeqCst);
    // ---- window closed ----
    lock::report();
    for s in &shared {
        // SAFETY: see `Shared`: the thread is done with its cases and parks without touching
        // them again (nor freeing them: it never returns).
        let cases = unsafe { &*s.0 };
        for (li, lens) in cases.iter().enumerate() {
            for (o, case) in lens.iter().enumerate() {
                verify(OPS[o], LENS[li], case);
            }
        }
    }
}

/// A deliberate fault on the racing threads' path, to show each check can fail: the parent
/// runs one child with each and expects it to die with the check's message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mutant {
    None,
    /// One small allocation per data-path call.
    Alloc,
    /// Every data-path call made holding one `Mutex` shared by the racing threads (held for
    /// the whole call, so the threads contend and wait on it).
    Mutex,
}

static MUTANT_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
/// Calls that reached `MUTANT_LOCK.lock()`.
static AT_MUTANT_LOCK: AtomicUsize = AtomicUsize::new(0);

/// Three uneven segment lengths covering `len`.
fn splits(len: usize) -> (usize, usize) {
    (len / 3 + 1, len / 3 + len / 5)
}

/// Operation `o` in every mode; pass 0 on the dispatched backend, pass 1 on the supported
/// backends in turn (the `_with` forms; the cursors and flush forms where they exist). Inside
/// the window: no formatting, no collections, only cachecopy calls and slicing.
fn run(o: usize, pass: usize, t: usize, case: &mut Case, flush_ops: &[FlushOp], mutant: Mutant) {
    let backends = Backend::supported();
    for (m, mode) in Mode::ALL.into_iter().enumerate() {
        let _guard = match mutant {
            Mutant::None => None,
            Mutant::Alloc => {
                std::hint::black_box(Box::new(m));
                None
            }
            Mutant::Mutex => {
                AT_MUTANT_LOCK.fetch_add(1, Ordering::SeqCst);
                Some(MUTANT_LOCK.lock().unwrap())
            }
        };
        let backend = backends[(t + m) % backends.len()];
        let src = &case.src[..];
        let dst = &mut case.dst[pass][m][..];
        let len = src.len();
        let got = &mut case.got[pass][m];
        match (OPS[o], pass) {
            ("copy", 0) => {
                cachecopy::copy(dst, src, mode);
                *got = (len, 0);
            }
            ("copy", _) if mode == Mode::FlushCache => {
                let op = flush_ops[t % flush_ops.len()];
                cachecopy::copy_with_flush(backend, op, dst, src).unwrap();
                *got = (len, 0);
            }
            ("copy", _) => {
                cachecopy::copy_with(backend, dst, src, mode).unwrap();
                *got = (len, 0);
            }
            ("fill", 0) => {
                // SAFETY: a live, exclusive slice: the allocator's call.
                unsafe { cachecopy::fill_raw(dst.as_mut_ptr(), src[0], len, mode) };
                *got = (len, 0);
            }
            ("fill", _) if mode == Mode::FlushCache => {
                let op = flush_ops[t % flush_ops.len()];
                cachecopy::fill_with_flush(backend, op, dst, src[0]).unwrap();
                *got = (len, 0);
            }
            ("fill", _) => {
                cachecopy::fill_with(backend, dst, src[0], mode).unwrap();
                *got = (len, 0);
            }
            ("csum", 0) => *got = (len, csum_and_copy(dst, src, mode)),
            ("csum", _) => *got = (len, csum_and_copy_with(backend, dst, src, mode).unwrap()),
            ("iter_from", _) => {
                let (a, b) = splits(len);
                let segs = [
                    IoVec::new(&src[..a]),
                    IoVec::new(&src[a..a + b]),
                    IoVec::new(&src[a + b..]),
                ];
                let mut cur = Source::iovec(&segs);
                *got = (copy_from_iter(dst, &mut cur, mode), cur.count() as u32);
            }
            ("iter_to", _) => {
                let (a, b) = splits(len);
                let (x, rest) = dst.split_at_mut(a);
                let (y, z) = rest.split_at_mut(b);
                let mut segs = [IoVecMut::new(x), IoVecMut::new(y), IoVecMut::new(z)];
                let mut cur = Dest::iovec(&mut segs);
                *got = (copy_to_iter(src, &mut cur, mode), cur.count() as u32);
            }
            ("csum_iter", 0) => {
                let (a, b) = splits(len);
                let segs = [
                    IoVec::new(&src[..a]),
                    IoVec::new(&src[a..a + b]),
                    IoVec::new(&src[a + b..]),
                ];
                *got = csum_and_copy_from_iter(dst, &mut Source::iovec(&segs), mode);
            }
            ("csum_iter", _) => {
                let (a, b) = splits(len);
                let (x, rest) = dst.split_at_mut(a);
                let (y, z) = rest.split_at_mut(b);
                let mut segs = [IoVecMut::new(x), IoVecMut::new(y), IoVecMut::new(z)];
                *got = csum_and_copy_to_iter(src, &mut Dest::iovec(&mut segs), mode);
            }
            ("move", _) => {
                // The source lands `d` bytes off its place, then an overlapping move puts it
                // back (down on pass 0 through `copy_within`, up on pass 1 with a backend) and
                // a copy fills the rest: `dst == src` when every step is right.
                let d = len / 3 + 1;
                if pass == 0 {
                    cachecopy::copy(&mut dst[d..], &src[..len - d], Mode::Temporal);
                    cachecopy::copy_within(dst, d.., 0, mode);
                    cachecopy::copy(&mut dst[len - d..], &src[len - d..], Mode::Temporal);
                } else {
                    cachecopy::copy(&mut dst[..len - d], &src[d..], Mode::Temporal);
                    let e = backend.into();
                    cachecopy::copy_within_with_engine(e, dst, ..len - d, d, mode).unwrap();
                    cachecopy::copy(&mut dst[..d], &src[..d], Mode::Temporal);
                }
                *got = (len, 0);
            }
            ("frame", _) => {
                // A 14-byte header (the source's first bytes, written by the callback) and the
                // rest gathered behind it: alone on pass 0, in a batch on pass 1.
                let h = 14;
                let (a, b) = splits(len - h);
                let segs = [
                    IoVec::new(&src[h..h + a]),
                    IoVec::new(&src[h + a..h + a + b]),
                    IoVec::new(&src[h + a + b..]),
                ];
                let head = &src[..h];
                let cb = |hd: &mut [u8], _: usize, _: u32| hd.copy_from_slice(head);
                let mut cur = Source::iovec(&segs);
                let (n, sum) = if pass == 0 {
                    csum_frame_from_iter(dst, h, &mut cur, mode, cb)
                } else {
                    cachecopy::batch(mode, |bt| bt.csum_frame_from_iter(dst, h, &mut cur, cb))
                };
                *got = (h + n, csum_block_add(csum_partial(head, 0), sum, h));
            }
            _ => unreachable!(),
        }
    }
    // Later calls of the rest of the face: getters, setters (to the value in force), sums.
    cachecopy::set_nt_threshold(cachecopy::nt_threshold());
    cachecopy::set_fill_nt_threshold(cachecopy::fill_nt_threshold());
    cachecopy::set_fill_rep_threshold(cachecopy::fill_rep_threshold());
    let _ = (Backend::active(), csum_partial(&case.src, 0));
}

fn verify(op: &str, len: usize, case: &Case) {
    for pass in 0..2 {
        for (m, mode) in Mode::ALL.into_iter().enumerate() {
            let (dst, got) = (&case.dst[pass][m], case.got[pass][m]);
            let what = format!("{op} pass {pass} {mode} len {len}");
            if op == "fill" {
                assert!(common::all_bytes(dst, case.src[0]), "{what}");
            } else {
                assert!(*dst == case.src, "{what}: bytes differ");
            }
            assert_eq!(got.0, len, "{what}: count");
            match op {
                "csum" | "csum_iter" | "frame" => {
                    assert_eq!(
                        csum_fold(got.1),
                        common::reference_sum(&case.src),
                        "{what}: sum"
                    )
                }
                "iter_from" | "iter_to" => assert_eq!(got.1, 0, "{what}: cursor not at end"),
                _ => {}
            }
        }
    }
}

// ---------------------------------------------------------------- the lock check

/// No racing thread may lock (wait) inside its window: from `arm` (its first data-path call
/// follows) to `park`, the thread may not make a `futex` call, a sleep, a poll, or a
/// `sched_yield` (a spin lock's back-off). An uncontended lock is an atomic and invisible here;
/// what the check sees is every wait, which is what an allocator calling cachecopy cannot have
/// (it may hold its own lock, or be running in a signal handler).
///
/// Natively, `arm` installs a seccomp filter on the calling thread only (no `TSYNC`) that traps
/// those system calls (`SECCOMP_RET_TRAP`); the `SIGSYS` handler writes `NO_LOCK FAILURE` with
/// the call's number and aborts. A racing thread never leaves its window: after its last call it
/// parks in `sigsuspend` until the process exits, and the main thread checks its results.
/// QEMU user mode refuses seccomp (`EINVAL`), so under an emulator the parent runs each child
/// with `QEMU_STRACE=1` instead: `report` prints the armed threads' ids, and the parent fails on
/// any of those calls made by one of them after its arming mark (a `getppid`), and unless it saw
/// each armed thread's mark.
mod lock {
    use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

    /// How the current child checks: 0 not armed, 1 seccomp, 2 tracing (QEMU).
    pub static MODE: AtomicU8 = AtomicU8::new(0);
    static TIDS: [AtomicI32; super::THREADS] = [const { AtomicI32::new(0) }; super::THREADS];

    /// The system calls a wait goes through, by name (for the QEMU trace) and number.
    pub const NAMES: &[&str] = &[
        "futex",
        "futex_waitv",
        "nanosleep",
        "clock_nanosleep",
        "ppoll",
        "pselect6",
        "epoll_pwait",
        "epoll_pwait2",
        "sched_yield",
        #[cfg(target_arch = "x86_64")]
        "poll",
        #[cfg(target_arch = "x86_64")]
        "select",
        #[cfg(target_arch = "x86_64")]
        "epoll_wait",
        #[cfg(target_arch = "x86_64")]
        "pause",
    ];
    const NUMBERS: &[libc::c_long] = &[
        libc::SYS_futex,
        449, // futex_waitv (the same number on every architecture since 5.16)
        libc::SYS_nanosleep,
        libc::SYS_clock_nanosleep,
        libc::SYS_ppoll,
        libc::SYS_pselect6,
        libc::SYS_epoll_pwait,
        441, // epoll_pwait2
        libc::SYS_sched_yield,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_poll,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_select,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_epoll_wait,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_pause,
    ];
    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 0xc000_003e;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 0xc000_00b7;

    extern "C" fn on_sigsys(
        _sig: libc::c_int,
        info: *mut libc::siginfo_t,
        _ctx: *mut libc::c_void,
    ) {
        // siginfo for SIGSYS: signo, errno, code (3 ints, padded to 16 bytes), then
        // `_call_addr` (a pointer) and `_syscall` (an int) at offset 24.
        // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
        let nr = unsafe {
            info.cast::<u8>()
                .add(24)
                .cast::<libc::c_int>()
                .read_unaligned()
        };
        let mut msg =
            *b"\nNO_LOCK FAILURE: waiting system call inside the no-alloc window: number     \n";
        let mut n = nr.unsigned_abs();
        let end = msg.len() - 2;
        for i in 0..4 {
            msg[end - i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
        // SAFETY: async-signal-safe calls only; abort never returns.
        unsafe {
            libc::write(2, msg.as_ptr().cast(), msg.len());
            libc::abort();
        }
    }

    /// Under an emulator (read before the window: `common::emulated` allocates).
    static EMULATED: AtomicU8 = AtomicU8::new(0);

    /// The `SIGSYS` handler, and whether this is an emulator (before any thread is armed).
    pub fn install_handler() {
        EMULATED.store(u8::from(super::common::emulated()), Ordering::SeqCst);
        // SAFETY: a zeroed sigaction with an SA_SIGINFO handler that only writes and aborts.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigsys as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            assert_eq!(libc::sigaction(libc::SIGSYS, &sa, std::ptr::null_mut()), 0);
        }
    }

    /// Arms the check on the calling thread (the `t`-th racing one). No allocation.
    pub fn arm(t: usize) {
        const LD: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
        const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
        const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
        let stmt = |code, k| libc::sock_filter {
            code,
            jt: 0,
            jf: 0,
            k,
        };
        let jeq = |k, jt, jf| libc::sock_filter {
            code: JEQ,
            jt,
            jf,
            k,
        };
        // [0] load arch; [1] other arch: allow; [2] load nr; [3..3+n] each listed nr: trap;
        // [3+n] allow; [4+n] trap.
        let mut prog = [stmt(0, 0); 32];
        let n = NUMBERS.len();
        prog[0] = stmt(LD, 4); // seccomp_data.arch
        prog[1] = jeq(AUDIT_ARCH, 0, (n + 1) as u8);
        prog[2] = stmt(LD, 0); // seccomp_data.nr
        for (i, &nr) in NUMBERS.iter().enumerate() {
            prog[3 + i] = jeq(nr as u32, (n - i) as u8, 0);
        }
        prog[3 + n] = stmt(RET, libc::SECCOMP_RET_ALLOW);
        prog[4 + n] = stmt(RET, libc::SECCOMP_RET_TRAP);
        let fprog = libc::sock_fprog {
            len: (5 + n) as u16,
            filter: prog.as_mut_ptr(),
        };
        // SAFETY: `fprog` points at `5 + n` initialised instructions that outlive the call
        // (the kernel copies them); no_new_privs is per thread and only restricts.
        let ok = unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                && libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                    &fprog as *const libc::sock_fprog,
                ) == 0
        };
        if ok {
            MODE.store(1, Ordering::SeqCst);
        } else if EMULATED.load(Ordering::SeqCst) == 1 {
            // SAFETY: gettid has no preconditions.
            TIDS[t].store(unsafe { libc::gettid() }, Ordering::SeqCst);
            MODE.store(2, Ordering::SeqCst);
            // The trace's mark of the arming (std calls gettid at thread start; nothing in this
            // process calls getppid).
            // SAFETY: getppid has no preconditions.
            unsafe { libc::getppid() };
        } else {
            super::die("\nNO_LOCK FAILURE: cannot install the seccomp filter (lock check)\n");
        }
    }

    /// The armed thread's end: it never returns, so it never runs thread exit (which may lock).
    pub fn park() -> ! {
        loop {
            // SAFETY: an empty mask on the stack; sigsuspend returns only after a handler ran.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigsuspend(&set);
            }
        }
    }

    /// After the window: how the check ran, for the parent.
    pub fn report() {
        match MODE.load(Ordering::SeqCst) {
            1 => println!("no_alloc lock check: seccomp"),
            2 => {
                let tids: Vec<String> = TIDS
                    .iter()
                    .map(|t| t.load(Ordering::SeqCst).to_string())
                    .collect();
                println!("no_alloc lock check: traced tids {}", tids.join(" "));
            }
            _ => panic!("lock check never armed"),
        }
    }

    /// The parent's half: the lock check ran in this child's output, and (traced) found no wait.
    pub fn check_output(out: &str) -> Result<(), String> {
        if out.contains("no_alloc lock check: seccomp") {
            return Ok(());
        }
        let Some(line) = out
            .lines()
            .find_map(|l| l.strip_prefix("no_alloc lock check: traced tids "))
        else {
            return Err("the lock check did not run".into());
        };
        // QEMU's trace lines start "<tid> <call>(", not always after a newline.
        let find = |from: usize, what: &str| {
            out[from..]
                .match_indices(what)
                .map(|(i, _)| from + i)
                .find(|&i| i == 0 || !out.as_bytes()[i - 1].is_ascii_digit())
        };
        for tid in line.split_whitespace() {
            let Some(armed) = find(0, &format!("{tid} getppid(")) else {
                return Err(format!(
                    "no trace of armed thread {tid} (QEMU_STRACE not in effect?)"
                ));
            };
            for name in NAMES {
                if find(armed, &format!("{tid} {name}(")).is_some() {
                    return Err(format!(
                        "NO_LOCK FAILURE: armed thread {tid} called {name} inside the window"
                    ));
                }
            }
        }
        Ok(())
    }
}
