/*
 * libcachecopy_preload through its exported symbols, as a program calls them (docs/preload.md).
 * Run as `LD_PRELOAD=.../libcachecopy_preload.so ./preload [huge]` (preload/tests/run.sh runs
 * every variant): each function is looked up with dlsym(RTLD_DEFAULT) and must come from the
 * preloaded library (dladdr), then:
 *
 * - every length 0..=1100 and 9 large odd ones (past the streaming thresholds), at 7 source and
 *   destination offsets, each buffer flush against a PROT_NONE guard page (its start at the
 *   lower one or its end at the upper one), for memcpy, mempcpy, memmove (disjoint), memset
 *   (int bytes outside 0..255), bzero and the four _chk forms with a large enough object: the
 *   destination against a byte loop, the bytes beside it unchanged, the source unchanged, the
 *   return value;
 * - overlapping moves (memmove and memcpy, which moves as glibc's does) at 16 distances x 17
 *   lengths, down and up, in one guarded buffer flush against either guard page;
 * - the _chk forms past their object: the process aborts with glibc's message (a child each);
 * - four threads at once, a child after fork, a vfork child, a signal handler interrupting
 *   copies 20000 times a second, and the calls a .preinit_array makes before the C library has
 *   started;
 * - `huge`: memcpy, memmove (overlapping) and memset of 4 GiB + a few bytes.
 *
 * Built with -fno-builtin and -fno-tree-loop-distribute-patterns, so the reference loops stay
 * loops and every call here reaches the library.
 */
#define _GNU_SOURCE
#include "check.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>

typedef void *(*cpy_fn)(void *, const void *, size_t);
typedef void *(*set_fn)(void *, int, size_t);
typedef void (*bzero_fn)(void *, size_t);
typedef void *(*cpy_chk_fn)(void *, const void *, size_t, size_t);
typedef void *(*set_chk_fn)(void *, int, size_t, size_t);

/* The nine exported functions: X(name, its type, the suffix of the variables that hold it). In
 * the order the re-entry build looks them up, memcpy last: any memcpy the lookups themselves
 * make takes the plain loop until the others are found. */
#define EXPORTS(X)                               \
    X(mempcpy, cpy_fn, mempcpy)                  \
    X(memmove, cpy_fn, memmove)                  \
    X(memset, set_fn, memset)                    \
    X(bzero, bzero_fn, bzero)                    \
    X(__memcpy_chk, cpy_chk_fn, memcpy_chk)      \
    X(__mempcpy_chk, cpy_chk_fn, mempcpy_chk)    \
    X(__memmove_chk, cpy_chk_fn, memmove_chk)    \
    X(__memset_chk, set_chk_fn, memset_chk)      \
    X(memcpy, cpy_fn, memcpy)

/* The functions the tests call (f_memcpy, ...). */
#define DECLARE_F(name, type, var) static type f_##var;
EXPORTS(DECLARE_F)

static const char *lib_name(void *f)
{
    Dl_info info;
    return dladdr(f, &info) && info.dli_fname ? info.dli_fname : "?";
}

#ifndef REENTRY
static void *resolve(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    CHECK(f != NULL && strstr(lib_name(f), "cachecopy_preload") != NULL,
          "%s comes from %s, not the preload (is LD_PRELOAD set?)", name, f ? lib_name(f) : "nowhere");
    if (f == NULL)
        exit(check_summary("preload"));
    return f;
}

static void resolve_all(void)
{
#define RESOLVE(name, type, var) f_##var = (type)resolve(#name);
    EXPORTS(RESOLVE)
}
#else
/*
 * The re-entry build (-DREENTRY): this executable defines the nine functions itself. It comes
 * first in the lookup order, so a call the preloaded library made to `memcpy` (or any of them)
 * from inside its own code would land here, not in the library: each wrapper counts how deep
 * this thread is in them, forwards to the library's definition (dlsym(RTLD_NEXT)) and counts a
 * call that arrives while another is running on the same thread. Every test below then runs
 * through the wrappers, and the run must end with calls counted and no re-entry.
 */
#define DECLARE_N(name, type, var) static type n_##var;
EXPORTS(DECLARE_N)
static __thread int depth;
static unsigned long wrapped, reentries, from_inside;
/* The preloaded library's executable segment: a wrapper called from there is a call the library
 * made itself (at any time: its constructor included). */
static uintptr_t lib_lo, lib_hi;

static int find_lib(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, "cachecopy_preload") == NULL)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            lib_lo = info->dlpi_addr + ph->p_vaddr;
            lib_hi = lib_lo + ph->p_memsz;
        }
    }
    return 1;
}

/* Before the constructor below has looked the library up: plain loops. */
static void *plain_move(void *d, const void *s, size_t n)
{
    unsigned char *dd = d;
    const unsigned char *ss = s;
    if (dd > ss && dd < ss + n)
        while (n--)
            dd[n] = ss[n];
    else
        for (size_t i = 0; i < n; i++)
            dd[i] = ss[i];
    return d;
}

static void *plain_set(void *d, int c, size_t n)
{
    unsigned char *dd = d;
    for (size_t i = 0; i < n; i++)
        dd[i] = (unsigned char)c;
    return d;
}

#define ENTER()                                                                         \
    do {                                                                                \
        uintptr_t ra = (uintptr_t)__builtin_return_address(0);                          \
        if (ra >= lib_lo && ra < lib_hi)                                                \
            __atomic_fetch_add(&from_inside, 1, __ATOMIC_RELAXED);                      \
        if (depth++ > 0)                                                                \
            __atomic_fetch_add(&reentries, 1, __ATOMIC_RELAXED);                        \
        __atomic_fetch_add(&wrapped, 1, __ATOMIC_RELAXED);                              \
    } while (0)
#define LEAVE() depth--

/* A wrapper: `before` until the constructor has looked the library's `n_##var` up, then the
 * library's, counted. The fortified forms have no plain loop: nothing calls them that early. */
#define WRAP(name, var, params, args, before) \
    void *name params                          \
    {                                          \
        if (!n_##var)                          \
            before;                            \
        ENTER();                               \
        void *r = n_##var args;                \
        LEAVE();                               \
        return r;                              \
    }
#define CPY_PARAMS (void *d, const void *s, size_t n)
#define CHK_PARAMS (void *d, const void *s, size_t n, size_t dl)
WRAP(memcpy, memcpy, CPY_PARAMS, (d, s, n), return plain_move(d, s, n))
WRAP(mempcpy, mempcpy, CPY_PARAMS, (d, s, n), return (unsigned char *)plain_move(d, s, n) + n)
WRAP(memmove, memmove, CPY_PARAMS, (d, s, n), return plain_move(d, s, n))
WRAP(memset, memset, (void *d, int c, size_t n), (d, c, n), return plain_set(d, c, n))
WRAP(__memcpy_chk, memcpy_chk, CHK_PARAMS, (d, s, n, dl), abort())
WRAP(__mempcpy_chk, mempcpy_chk, CHK_PARAMS, (d, s, n, dl), abort())
WRAP(__memmove_chk, memmove_chk, CHK_PARAMS, (d, s, n, dl), abort())
WRAP(__memset_chk, memset_chk, (void *d, int c, size_t n, size_t dl), (d, c, n, dl), abort())
void bzero(void *d, size_t n)
{
    if (!n_bzero) {
        plain_set(d, 0, n);
        return;
    }
    ENTER();
    n_bzero(d, n);
    LEAVE();
}

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (f == NULL || strstr(lib_name(f), "cachecopy_preload") == NULL) {
        fprintf(stderr, "reentry: the next %s is in %s, not the preload (is LD_PRELOAD set?)\n", name,
                f ? lib_name(f) : "nowhere");
        exit(2);
    }
    return f;
}

/* From the .preinit_array below, before any constructor (the library's included) runs. */
static void resolve_next(void)
{
    dl_iterate_phdr(find_lib, NULL);
    if (lib_lo == 0) {
        fprintf(stderr, "reentry: libcachecopy_preload is not loaded (is LD_PRELOAD set?)\n");
        exit(2);
    }
#define RESOLVE_NEXT(name, type, var) n_##var = (type)next(#name);
    EXPORTS(RESOLVE_NEXT)
}

/* The tests call the wrappers. */
static void resolve_all(void)
{
#define WRAPPER(name, type, var) f_##var = name;
    EXPORTS(WRAPPER)
}
#endif

/* ---------------------------------------------------------------- references (plain loops) */

static void ref_move(unsigned char *d, const unsigned char *s, size_t n)
{
    size_t i;
    if (d > s && d < s + n)
        for (i = n; i-- > 0;)
            d[i] = s[i];
    else
        for (i = 0; i < n; i++)
            d[i] = s[i];
}

static int same(const unsigned char *a, const unsigned char *b, size_t n, size_t *at)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (a[i] != b[i]) {
            *at = i;
            return 0;
        }
    return 1;
}

static int all_are(const unsigned char *p, size_t n, unsigned char v, size_t *at)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != v) {
            *at = i;
            return 0;
        }
    return 1;
}

/* ---------------------------------------------------------------- every length, guarded */

enum op { OP_MEMCPY, OP_MEMPCPY, OP_MEMMOVE, OP_MEMSET, OP_BZERO, OP_MEMCPY_CHK, OP_MEMPCPY_CHK,
          OP_MEMMOVE_CHK, OP_MEMSET_CHK, OP_COUNT };
static const char *const op_name[OP_COUNT] = {"memcpy", "mempcpy", "memmove", "memset", "bzero",
    "__memcpy_chk", "__mempcpy_chk", "__memmove_chk", "__memset_chk"};

#define MARGIN 64
#define CANARY 0xa7

/* One call of `op` on `len` bytes: the destination at `doff` from the lower guard page (high:
 * its end at the upper one), the source likewise; checked against the reference. */
static void one_case(struct guarded *dg, struct guarded *sg, enum op op, size_t len, size_t doff,
                     size_t soff, int high, unsigned seed)
{
    size_t span = (size_t)(dg->hi - dg->lo), at = 0;
    unsigned char *d = high ? dg->hi - doff - len : dg->lo + doff;
    const unsigned char *s = high ? sg->hi - soff - len : sg->lo + soff;
    unsigned char *lo = d - (d - dg->lo < MARGIN ? (size_t)(d - dg->lo) : MARGIN);
    unsigned char *hi = d + len + ((size_t)(dg->hi - d) - len < MARGIN ? (size_t)(dg->hi - d) - len : MARGIN);
    int byte = (int)(seed * 37u + len) - 300; /* outside 0..255 too: memset converts it */
    void *ret = NULL, *want_ret = d;
    (void)span;
    fill_pattern((unsigned char *)s, len, seed);
    for (unsigned char *p = lo; p < hi; p++)
        *p = CANARY;
    switch (op) {
    case OP_MEMCPY: ret = f_memcpy(d, s, len); break;
    case OP_MEMPCPY: ret = f_mempcpy(d, s, len); want_ret = d + len; break;
    case OP_MEMMOVE: ret = f_memmove(d, s, len); break;
    case OP_MEMSET: ret = f_memset(d, byte, len); break;
    case OP_BZERO: f_bzero(d, len); ret = d; break;
    case OP_MEMCPY_CHK: ret = f_memcpy_chk(d, s, len, len + soff); break;
    case OP_MEMPCPY_CHK: ret = f_mempcpy_chk(d, s, len, len); want_ret = d + len; break;
    case OP_MEMMOVE_CHK: ret = f_memmove_chk(d, s, len, (size_t)-1); break;
    case OP_MEMSET_CHK: ret = f_memset_chk(d, byte, len, len); break;
    default: break;
    }
    CHECK(ret == want_ret, "%s len %zu: returned %p, want %p", op_name[op], len, ret, want_ret);
    if (op == OP_MEMSET || op == OP_MEMSET_CHK || op == OP_BZERO) {
        unsigned char v = op == OP_BZERO ? 0 : (unsigned char)byte;
        CHECK(all_are(d, len, v, &at), "%s len %zu doff %zu high %d: byte %zu is %#x, want %#x",
              op_name[op], len, doff, high, at, d[at], v);
    } else {
        CHECK(same(d, s, len, &at), "%s len %zu doff %zu soff %zu high %d: byte %zu differs",
              op_name[op], len, doff, soff, high, at);
        for (size_t i = 0; i < len; i++)
            if (s[i] != pattern(i, seed)) {
                CHECK(0, "%s len %zu: source byte %zu changed", op_name[op], len, i);
                break;
            }
    }
    CHECK(all_are(lo, (size_t)(d - lo), CANARY, &at), "%s len %zu doff %zu high %d: byte %zu before the destination changed",
          op_name[op], len, doff, high, (size_t)(d - lo) - at);
    CHECK(all_are(d + len, (size_t)(hi - d - len), CANARY, &at), "%s len %zu doff %zu high %d: byte %zu after the destination changed",
          op_name[op], len, doff, high, at);
}

static void lengths(void)
{
    static const size_t offs[] = {0, 1, 3, 7, 15, 31, 63};
    static const size_t big[] = {2047, 4097, 65537, (1u << 20) + 7, (2u << 20) - 1, (2u << 20) + 3,
                                 (4u << 20) + 13, (8u << 20) + 1};
    const size_t n_offs = sizeof offs / sizeof offs[0];
    size_t maxlen = big[sizeof big / sizeof big[0] - 1];
    struct guarded dg = guarded_new(maxlen + 2 * MARGIN + 64), sg = guarded_new(maxlen + 64);
    unsigned seed = 1;
    for (int op = 0; op < OP_COUNT; op++) {
        for (size_t len = 0; len <= 1100; len++)
            for (size_t k = 0; k < n_offs; k++) {
                size_t doff = offs[k], soff = offs[(k + len) % n_offs];
                one_case(&dg, &sg, (enum op)op, len, doff, soff, (int)(len & 1), seed++);
            }
        for (size_t b = 0; b < sizeof big / sizeof big[0]; b++)
            for (int high = 0; high < 2; high++)
                one_case(&dg, &sg, (enum op)op, big[b], offs[b % n_offs], offs[(b + 3) % n_offs], high, seed++);
    }
    guarded_free(&dg);
    guarded_free(&sg);
}

/* ---------------------------------------------------------------- overlapping moves */

static void overlaps(void)
{
    static const size_t dist[] = {1, 2, 3, 7, 8, 15, 16, 31, 33, 63, 64, 65, 255, 4095, 4097, 100003};
    static const size_t lens[] = {0, 1, 2, 15, 16, 33, 64, 65, 127, 256, 1000, 1024, 4096, 8193,
                                  65536, 262147, (3u << 20) + 5};
    size_t maxn = (3u << 20) + 5 + 100003 + 2 * MARGIN;
    struct guarded g = guarded_new(maxn);
    unsigned char *model = malloc(maxn);
    size_t at;
    for (size_t a = 0; a < sizeof dist / sizeof dist[0]; a++)
        for (size_t b = 0; b < sizeof lens / sizeof lens[0]; b++) {
            if (lens[b] > 65536 && a % 4 != 0)
                continue; /* the long ones at four distances only: each costs milliseconds */
            for (int up = 0; up < 2; up++)
                for (int high = 0; high < 2; high++)
                    for (int via_memcpy = 0; via_memcpy < 2; via_memcpy++) {
                        size_t d = dist[a], n = lens[b], need = n + d;
                        /* The moved span flush against a guard page, canaries on its other side. */
                        unsigned char *base = high ? g.hi - need : g.lo;
                        unsigned char *lo = high ? base - MARGIN : base;
                        size_t len = need + MARGIN;
                        unsigned char *src = up ? base : base + d, *dst = up ? base + d : base;
                        fill_pattern(lo, len, (unsigned)(a * 131 + b));
                        for (size_t i = 0; i < len; i++)
                            model[i] = lo[i];
                        ref_move(model + (dst - lo), model + (src - lo), n);
                        void *r = (via_memcpy ? f_memcpy : f_memmove)(dst, src, n);
                        CHECK(r == dst, "overlap return");
                        CHECK(same(lo, model, len, &at),
                              "%s by %zu %s, %zu bytes, %s guard: byte %zu of the span differs",
                              via_memcpy ? "memcpy" : "memmove", d, up ? "up" : "down", n,
                              high ? "upper" : "lower", at);
                    }
        }
    free(model);
    guarded_free(&g);
}

/* ---------------------------------------------------------------- fortified calls past the object */

static void chk_aborts(void)
{
    for (int which = 0; which < 4; which++) {
        int fds[2];
        if (pipe(fds) != 0) {
            perror("pipe");
            exit(2);
        }
        pid_t pid = fork();
        if (pid == 0) {
            unsigned char buf[64], src[64];
            dup2(fds[1], 2);
            switch (which) {
            case 0: f_memcpy_chk(buf, src, 33, 32); break;
            case 1: f_mempcpy_chk(buf, src, 64, 63); break;
            case 2: f_memmove_chk(buf, buf + 1, 2, 1); break;
            default: f_memset_chk(buf, 0, 1, 0); break;
            }
            _exit(0); /* not reached when the check works */
        }
        close(fds[1]);
        char msg[256] = {0};
        ssize_t got = 0, r;
        while ((r = read(fds[0], msg + got, sizeof msg - 1 - (size_t)got)) > 0)
            got += r;
        close(fds[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "_chk %d past its object: status %#x, want SIGABRT", which, status);
        CHECK(strstr(msg, "buffer overflow detected") != NULL, "_chk %d: message \"%s\"", which, msg);
    }
}

/* ---------------------------------------------------------------- threads, fork, vfork, signals */

/* A battery of copies, moves and fills on `buf` (2 * 80000 bytes), checked; returns the number
 * of wrong bytes. */
static int battery(unsigned char *buf, unsigned seed, int rounds)
{
    int bad = 0;
    unsigned char *a = buf, *b = buf + 80000;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int r = 0; r < rounds; r++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = (size_t)(x >> 33) % (r % 8 == 0 ? 70000 : 300), off = (size_t)(x >> 20) % 64;
        size_t up = 1 + (off & 7);
        for (size_t i = 0; i < n; i++)
            a[off + i] = (unsigned char)(i * 7 + r);
        f_memcpy(b, a + off, n);
        for (size_t i = 0; i < n; i++)
            bad += b[i] != (unsigned char)(i * 7 + r);
        f_memmove(b + up, b, n);
        for (size_t i = 0; i < n; i++)
            bad += b[up + i] != (unsigned char)(i * 7 + r);
        f_memset(a + off, r, n);
        for (size_t i = 0; i < n; i++)
            bad += a[off + i] != (unsigned char)r;
    }
    return bad;
}

static void *thread_main(void *arg)
{
    unsigned char *buf = malloc(160000);
    intptr_t bad = battery(buf, (unsigned)(uintptr_t)arg, 3000);
    free(buf);
    return (void *)bad;
}

static void threads(void)
{
    pthread_t t[4];
    for (intptr_t i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, thread_main, (void *)i);
    for (int i = 0; i < 4; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        CHECK(bad == NULL, "thread %d: %ld wrong bytes", i, (long)(intptr_t)bad);
    }
}

static unsigned char fork_buf[160000];

static void forks(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(battery(fork_buf, 11, 500) == 0 ? 0 : 1);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork child: status %#x", status);

    /* vfork: the child shares this memory until it exits; it copies into its own part. */
    static unsigned char vbuf[2][8192];
    for (int i = 0; i < 8192; i++)
        vbuf[0][i] = (unsigned char)(i * 3);
    pid = vfork();
    if (pid == 0) {
        f_memcpy(vbuf[1], vbuf[0], 8192);
        f_memmove(vbuf[1] + 1, vbuf[1], 5000);
        f_memset(vbuf[1] + 6000, 9, 2000);
        _exit(0);
    }
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "vfork child: status %#x", status);
    int ok = vbuf[1][0] == 0 && vbuf[1][5000] == (unsigned char)(4999 * 3) && vbuf[1][6000] == 9 &&
             vbuf[1][8191] == (unsigned char)(8191 * 3);
    CHECK(ok, "vfork child's copies");
}

static volatile sig_atomic_t handled, handler_bad;
static unsigned char sig_buf[160000];

static void on_alarm(int sig)
{
    (void)sig;
#ifdef REENTRY
    /* The handler may interrupt a wrapper: its own calls start a new nesting. */
    int saved = depth;
    depth = 0;
#endif
    handled++;
    handler_bad += battery(sig_buf, (unsigned)handled, 2);
#ifdef REENTRY
    depth = saved;
#endif
}

static void signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
    unsigned char *buf = malloc(160000);
    int bad = 0;
    for (int i = 0; i < 40 && handled < 2000; i++)
        bad += battery(buf, (unsigned)i, 200);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    free(buf);
    CHECK(handled > 100, "only %d signals arrived", (int)handled);
    CHECK(bad == 0 && handler_bad == 0, "under signals: %d wrong bytes, %d in the handler", bad, (int)handler_bad);
}

/* ---------------------------------------------------------------- before the C library starts */

/* A .preinit_array function runs before every constructor, libc's included (environ is still
 * NULL): it calls the functions by name, through the PLT. */
static unsigned char pre_a[5000], pre_b[5000];
static volatile size_t pre_n = 4999;
static int pre_ok = -1;

static void preinit(int argc, char **argv, char **envp)
{
    (void)argc, (void)argv, (void)envp;
    size_t n = pre_n;
    for (size_t i = 0; i < n; i++)
        pre_a[i] = (unsigned char)(i * 13);
    memcpy(pre_b, pre_a, n);
    int ok = pre_b[0] == 0 && pre_b[n - 1] == (unsigned char)((n - 1) * 13);
    memmove(pre_b + 1, pre_b, n - 1);
    ok &= pre_b[1] == 0 && pre_b[n - 1] == (unsigned char)((n - 2) * 13);
    memset(pre_b, 0x33, n);
    ok &= pre_b[0] == 0x33 && pre_b[n - 1] == 0x33;
    pre_ok = ok;
#ifdef REENTRY
    resolve_next();
#endif
}
__attribute__((section(".preinit_array"), used)) static void (*preinit_entry)(int, char **, char **) = preinit;

/* ---------------------------------------------------------------- past 4 GiB */

static unsigned char *big_map(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap (huge)");
        exit(2);
    }
    madvise(p, len, MADV_HUGEPAGE);
    return p;
}

/* Every page's first 8 bytes hold its index, the first and last 64 KiB a pattern. */
static void mark(unsigned char *p, size_t n)
{
    for (size_t pg = 0; pg * 4096 + 8 <= n; pg++) {
        uint64_t v = pg ^ 0x5555555555555555ull;
        for (int k = 0; k < 8; k++)
            p[pg * 4096 + k] = (unsigned char)(v >> (8 * k));
    }
    for (size_t i = 0; i < 65536 && i < n; i++) {
        p[i] ^= pattern(i, 7);
        p[n - 1 - i] ^= pattern(n - 1 - i, 7);
    }
}

static void huge(void)
{
    const size_t n = (4ull << 30) + 4099;
    unsigned char *s = big_map(n), *d = big_map(n + 8192);
    size_t at;
    mark(s, n);
    d[0] = 1;
    d[n + 8191] = 0xcc;
    CHECK(f_memcpy(d, s, n) == d, "huge memcpy return");
    CHECK(memcmp(d, s, n) == 0, "memcpy of %zu bytes differs", n);
    CHECK(d[n + 8191] == 0xcc && all_are(d + n, 8191, 0, &at), "memcpy of %zu bytes wrote past its end", n);
    /* Overlapping, up by 8 KiB + 1 inside d, its last byte just before the canary. */
    size_t shift = 8193, m = n - 2;
    CHECK(f_memmove(d + shift, d, m) == d + shift, "huge memmove return");
    CHECK(memcmp(d + shift, s, m) == 0, "memmove of %zu bytes up by %zu differs", m, shift);
    CHECK(d[n + 8191] == 0xcc, "memmove wrote past its end");
    unsigned char before[2] = {s[2], s[n - 2]};
    CHECK(f_memset(s + 3, 0x5a, n - 5) == s + 3, "huge memset return");
    CHECK(all_are(s + 3, n - 5, 0x5a, &at), "memset of %zu bytes: byte %zu", n - 5, at);
    CHECK(s[2] == before[0] && s[n - 2] == before[1], "memset of %zu bytes wrote beside its range", n - 5);
    munmap(s, n);
    munmap(d, n + 8192);
}

int main(int argc, char **argv)
{
    resolve_all();
    if (argc > 1 && strcmp(argv[1], "huge") == 0) {
        huge();
        return check_summary("preload_huge");
    }
    CHECK(pre_ok == 1, "the .preinit_array's copies (before the C library started): %d", pre_ok);
    lengths();
    overlaps();
    chk_aborts();
    threads();
    forks();
    signals();
#ifdef REENTRY
    CHECK(wrapped > 100000, "only %lu calls went through the wrappers", wrapped);
    CHECK(reentries == 0, "the library called an exported function from inside one %lu times", reentries);
    CHECK(from_inside == 0, "the library called an exported function %lu times", from_inside);
    printf("reentry: %lu calls through the library, %lu re-entries, %lu calls from inside it\n",
           wrapped, reentries, from_inside);
    return check_summary("preload_reentry");
#endif
    return check_summary("preload");
}
