#!/usr/bin/env python3
"""Proves that libcachecopy_preload never calls the functions it exports, and that its call path
neither allocates, locks nor touches thread-local storage (docs/preload.md).

Usage: preload/check_calls.py LIBRARY [OBJDUMP]
(OBJDUMP: `aarch64-linux-gnu-objdump` for an aarch64 build; its `nm` is found beside it.)

A call from inside the library to `memcpy` (or `memset`, ...) lands in the library's own
`memcpy`: compilers emit such calls for loops and large struct moves, and inside the very
function it would recurse. This script disassembles the built library (x86_64 or aarch64),
builds the call graph of every function reachable from

  - the exported functions (memcpy, ..., __memset_chk), and
  - every function of this library and of cachecopy (by name: the kernels the dispatch tables
    point at, trait methods called through vtables, the constructor and destructor),

following direct calls and jumps, calls through the GOT and every function whose address code
takes (x86_64: lea/mov of a .text address; aarch64: adr, or adrp and the add or load that
completes the address, followed in instruction order within a function: function pointers
handed to formatting or tables), and fails when any reachable instruction calls, jumps to or
loads the address of one of the exported functions, their PLT stubs or their GOT slots. Panic entry points are not followed (a panic in an
`extern "C"` function aborts the process; reaching one is a bug, not a copy): they are listed.

The same graph without the constructor and destructor (which run once, outside any call, and
may look symbols up with the loader's lock) is the call path: nothing reachable from it may call
the allocator (`malloc` and friends, Rust's `__rust_alloc` family), a lock or thread-local
key function of libpthread, Rust's own locks (std's futex-based `Mutex`, `RwLock`, `Once`,
`OnceLock`, `LazyLock`, `Condvar`, thread parking: by name, and libc's `syscall`, through which
they wait and wake), `__tls_get_addr`, or reach thread-local storage (`%fs` on x86_64,
`tpidr_el0` on aarch64).
"""
import bisect
import re
import subprocess
import sys

BANNED = {
    "memcpy", "mempcpy", "memmove", "memset", "bzero",
    "__memcpy_chk", "__mempcpy_chk", "__memmove_chk", "__memset_chk",
}
# Not on the call path: the allocator, locks, thread-local storage.
FORBIDDEN = {
    "malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign",
    "valloc", "pvalloc", "__tls_get_addr", "pthread_mutex_lock", "pthread_mutex_trylock",
    "pthread_mutex_timedlock", "pthread_rwlock_rdlock", "pthread_rwlock_wrlock",
    "pthread_rwlock_tryrdlock", "pthread_rwlock_trywrlock", "pthread_spin_lock",
    "pthread_cond_wait", "pthread_key_create", "pthread_getspecific", "pthread_setspecific",
    "pthread_once", "sem_wait", "flock", "lockf", "dlsym", "dlopen", "dladdr",
    # Rust's futex-based locks wait and wake through libc's syscall(SYS_futex, ...).
    "syscall",
}
FORBIDDEN_RUST = re.compile(r"__rust_(alloc|dealloc|realloc|alloc_zeroed)\b|__rdl_|__rg_")
# Rust std's own locks, by (demangled) name: the futex or pthread implementations under
# std::sys::sync (mutex, rwlock, once, condvar, thread parking), the public types' out-of-line
# paths (std::sync::Mutex, RwLock, Once, OnceLock, LazyLock, ReentrantLock, Condvar, Barrier,
# channels; a guard's drop unlocks) and the futex wrappers. An uncontended lock is inlined
# (one atomic), but its contended path is always one of these calls.
FORBIDDEN_LOCKS = re.compile(
    r"std::sys::sync::|std::sys::pal::\w+::futex|std::sys::futex|\bfutex_(wait|wake)"
    r"|std::sync::(poison|nonpoison|once|once_lock|lazy_lock|reentrant_lock|barrier|condvar"
    r"|mpmc|mpsc)\b|std::sync::(Mutex|RwLock|Once|OnceLock|LazyLock|ReentrantLock|Condvar)\b"
    r"|std::thread::(park|sleep)|std::sys::backtrace::lock|std::sys::thread_parking"
)
# Run once, outside any call: not the call path.
ONCE = re.compile(r"^cachecopy_preload::(constructor|destructor)$")
# Our code by name: the crates `cachecopy` and `cachecopy_preload` (legacy and v0 mangling,
# demangled).
OURS = re.compile(r"cachecopy")
# The measurement `CACHECOPY_TUNE=calibrate` runs inside detection: its record moves are
# `memcpy` calls. It is reached only from the preload's initialisation, which holds the
# initialising pid, so those calls land in the preload's fallback copy, not back in
# initialisation (preload/tests/preload.c runs it); listed, not followed.
EXEMPT = re.compile(r"^cachecopy::tune::calibrate::")
# Where a panic starts: never followed (see the docstring).
PANIC = re.compile(
    r"^(core::panicking::|std::panicking::|rust_begin_unwind|core::option::(expect|unwrap)_failed"
    r"|core::result::unwrap_failed|core::slice::index::|core::str::slice_error_fail"
    r"|alloc::raw_vec::handle_error|alloc::alloc::handle_alloc_error|core::cell::panic_"
    r"|std::process::abort|core::panic::)"
)


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def main():
    lib = sys.argv[1]
    objdump = sys.argv[2] if len(sys.argv) > 2 else "objdump"
    nm = objdump[: -len("objdump")] + "nm" if objdump.endswith("objdump") else "nm"
    head = run(objdump, "-f", lib)
    if "architecture: aarch64" in head:
        arch = "aarch64"
    elif "x86-64" in head:
        arch = "x86_64"
    else:
        sys.exit(f"check_calls: {lib}: neither x86_64 nor aarch64:\n{head}")

    # Exported functions (dynamic symbol table, defined).
    exported = {}
    for line in run(nm, "-D", "--defined-only", lib).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "Tt":
            exported[parts[2].split("@")[0]] = int(parts[0], 16)
    missing = BANNED - exported.keys()
    if missing:
        sys.exit(f"check_calls: {lib} does not export {sorted(missing)}")

    # GOT slots: address -> ("sym", name) or ("addr", target) for relative relocations.
    slots = {}
    for line in run(objdump, "-R", lib).splitlines():
        m = re.match(r"^([0-9a-f]+) R_(?:X86_64|AARCH64)_(\w+)\s+(\S+)", line)
        if not m:
            continue
        addr, kind, what = int(m.group(1), 16), m.group(2), m.group(3)
        if kind in ("GLOB_DAT", "JUMP_SLOT", "64", "ABS64"):
            slots[addr] = ("sym", what.split("@")[0].split("+")[0])
        elif kind == "RELATIVE":
            slots[addr] = ("addr", int(what.split("+")[-1], 16))

    # Functions and their instructions.
    funcs = []  # (start, name)
    body = {}  # start -> list of instruction texts
    cur = None
    head = re.compile(r"^([0-9a-f]+) <(.*)>:$")
    insn = re.compile(r"^\s+([0-9a-f]+):\s+(.*)$")
    for line in run(objdump, "-d", "-C", "--no-show-raw-insn", lib).splitlines():
        m = head.match(line)
        if m:
            cur = int(m.group(1), 16)
            funcs.append((cur, m.group(2)))
            body[cur] = []
            continue
        m = insn.match(line)
        if m and cur is not None:
            body[cur].append(m.group(2))
    funcs.sort()
    starts = [s for s, _ in funcs]
    names = dict(funcs)
    plt = {s: n[: -len("@plt")] for s, n in funcs if n.endswith("@plt")}

    def func_at(addr):
        i = bisect.bisect_right(starts, addr) - 1
        return starts[i] if i >= 0 else None

    # Code sections: a target outside them (a RIP-relative data address) is no edge.
    code = []
    lines = run(objdump, "-h", lib).splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and i + 1 < len(lines) and "CODE" in lines[i + 1]:
            vma, size = int(m.group(3), 16), int(m.group(2), 16)
            code.append((vma, vma + size))

    def in_code(a):
        return any(lo <= a < hi for lo, hi in code)

    # Edges and banned references per function.
    edges, bad, forbidden, locks = {}, {}, {}, set()
    if arch == "x86_64":
        direct = re.compile(r"^(?:call|jmp|j[a-z]+)\s+([0-9a-f]+) <")
        tls = re.compile(r"%fs:")
    else:
        # b, bl, b.cond, cbz/cbnz REG, tbz/tbnz REG, #BIT, and adr REG, ADDR: a code address.
        direct = re.compile(
            r"^(?:bl?|b\.\w+|cbn?z\s+\w+,|tbn?z\s+\w+,\s*#\w+,|adr\s+\w+,)\s*([0-9a-f]+) <"
        )
        tls = re.compile(r"\btpidr_el0\b")
    comment = re.compile(r"#\s*([0-9a-f]+)")
    # aarch64: `adrp xN, PAGE` then `add xM, xN, #OFF` or a load/store `[xN, #OFF]` is the
    # address PAGE + OFF (objdump prints no comment for it).
    adrp = re.compile(r"^adrp\s+x(\d+),\s*([0-9a-f]+)")
    add_lo = re.compile(r"^add\s+x\d+,\s*x(\d+),\s*#(0x[0-9a-f]+|\d+)$")
    mem_lo = re.compile(r"\[x(\d+)(?:,\s*#(0x[0-9a-f]+|\d+))?\]")
    dest = re.compile(r"^(?!st|cmp|cmn|tst|cb|tb|b\b|b\.|bl\b|br\b|blr\b|ret|prf)\S+\s+[xw](\d+)\b")
    for start, insns in body.items():
        out, refs, forb = set(), [], []
        pages = {}
        for text in insns:
            text = text.strip()
            if tls.search(text):
                forb.append(f"{text}   [thread-local storage]")
            targets = []
            m = direct.match(text)
            if m:
                targets.append(int(m.group(1), 16))
            addrs = []
            if arch == "x86_64":
                m = comment.search(text)
                if m:
                    addrs.append(int(m.group(1), 16))
            else:
                m = add_lo.match(text) or (None if text.startswith("adrp") else mem_lo.search(text))
                if m and int(m.group(1)) in pages:
                    addrs.append(pages[int(m.group(1))] + int(m.group(2) or "0", 0))
                m = adrp.match(text)
                if m:
                    pages[int(m.group(1))] = int(m.group(2), 16)
                else:
                    m = dest.match(text)
                    if m:
                        pages.pop(int(m.group(1)), None)
            for a in addrs:
                if a in slots:
                    kind, what = slots[a]
                    if kind == "sym":
                        if what in BANNED:
                            refs.append(f"{text}   [GOT slot of {what}]")
                        elif what in FORBIDDEN:
                            forb.append(f"{text}   [GOT slot of {what}]")
                        elif what in exported:
                            targets.append(exported[what])
                    else:
                        targets.append(what)
                else:
                    targets.append(a)
            for t in targets:
                if t in plt and plt[t] in BANNED:
                    refs.append(f"{text}   [PLT stub of {plt[t]}]")
                    continue
                if t in plt and plt[t] in FORBIDDEN:
                    forb.append(f"{text}   [PLT stub of {plt[t]}]")
                    continue
                if not in_code(t):
                    continue
                f = func_at(t)
                if f is None or f == start:
                    continue
                if names[f] in BANNED:
                    refs.append(f"{text}   [{names[f]} itself]")
                    continue
                if FORBIDDEN_RUST.search(names[f]):
                    forb.append(f"{text}   [{names[f]}]")
                if FORBIDDEN_LOCKS.search(names[f]):
                    forb.append(f"{text}   [{names[f]}: a Rust lock]")
                    locks.add(start)
                out.add(f)
        edges[start] = out
        if refs:
            bad[start] = refs
        if forb:
            forbidden[start] = forb

    roots = {a for a in (exported[n] for n in BANNED)}
    roots |= {
        s for s, n in funcs if OURS.search(n) and not n.endswith("@plt") and not EXEMPT.search(n)
    }

    def walk(roots, stop):
        """Every function `roots` reach through `edges`, with the one each was first reached
        from (`parent`); a function `stop` is true of is not entered."""
        seen, todo, parent = set(roots), list(roots), {r: None for r in roots}
        while todo:
            f = todo.pop()
            for g in edges.get(f, ()):
                if not stop(g) and g not in seen:
                    seen.add(g)
                    parent[g] = f
                    todo.append(g)
        return seen, parent

    def report(seen, parent, found, label):
        """Prints every function of `seen` with findings in `found`, the chain that reaches it
        and its findings; whether there was one."""
        for f in sorted(seen & found.keys()):
            chain, g = [], f
            while g is not None:
                chain.append(names[g])
                g = parent[g]
            print(f"{label}: {names[f]} (reached from {' <- '.join(chain[1:]) or 'a root'}):")
            for r in found[f]:
                print(f"    {r}")
        return bool(seen & found.keys())

    seen, parent = walk(roots, lambda g: PANIC.search(names[g]) or EXEMPT.search(names[g]))
    called = {g for f in seen for g in edges.get(f, ())}
    panics = {g for g in called if PANIC.search(names[g])}
    exempt = {g for g in called if EXEMPT.search(names[g]) and not PANIC.search(names[g])}

    print(f"check_calls: {lib} ({arch}): {len(funcs)} functions, {len(roots)} roots "
          f"(the exported functions, cachecopy's and the preload's own), {len(seen)} reachable")
    print(f"check_calls: panic entry points reachable (not followed; a panic aborts): "
          f"{len(panics)}: " + ", ".join(sorted({names[p] for p in panics})))
    print(f"check_calls: calibration entry points reachable (not followed; their calls take the "
          f"fallback): " + ", ".join(sorted({names[p] for p in exempt})))
    if report(seen, parent, bad, "FAIL"):
        sys.exit("check_calls: the library calls a function it exports (it would recurse)")
    # The call path: the same walk without the constructor and destructor.
    path_roots = {r for r in roots if not ONCE.search(names[r])}
    seen2, parent2 = walk(
        path_roots,
        lambda g: PANIC.search(names[g]) or EXEMPT.search(names[g]) or ONCE.search(names[g]),
    )
    if report(seen2, parent2, forbidden, "FAIL (call path)"):
        sys.exit("check_calls: the call path allocates, locks or uses thread-local storage")
    total_forb = sum(len(r) for r in forbidden.values())
    print(f"check_calls: call path: {len(seen2)} functions, no allocator, lock (pthread's or "
          f"Rust's), thread-local key, dlsym or thread-local access ({total_forb} such references "
          f"elsewhere in the object, {len(locks)} functions calling a Rust lock)")
    if total_forb == 0:
        sys.exit("check_calls: found no allocator or TLS reference anywhere: the check is broken")
    if not locks:
        sys.exit("check_calls: found no call to a Rust lock anywhere (std's panic and backtrace "
                 "code has them): the lock patterns are broken")
    # The patterns must be able to fail: the standard library's code in the same object (not
    # reachable from ours) calls memcpy and memset through the same GOT slots.
    total = sum(len(r) for r in bad.values())
    print(f"check_calls: {total} such references in {len(bad)} unreachable functions "
          f"(the standard library's, the calibration's): the patterns find them")
    if total == 0:
        sys.exit("check_calls: found no reference to memcpy or memset anywhere: the check is broken")
    print("check_calls: no reachable call, jump or address load of "
          + ", ".join(sorted(BANNED)) + ": passed")


if __name__ == "__main__":
    main()
