/*
 * libcachecopy_preload where it must be safe in every process (docs/preload.md, "Safe in every
 * process"): its early callers, errno, `off`. Linked with libearly.so (preload/tests/early.c:
 * an IFUNC resolver and a constructor that copy before the library is ready, and a logging
 * getenv) and run by preload/tests/run.sh under LD_PRELOAD as
 *
 *   safety            the library serves memcpy & co. (dladdr)
 *   safety spy        `off` with libspy.so preloaded after the library: every call main makes
 *                     must reach libspy's functions, the next definitions (spy_counts)
 *   safety nonext LIB `off` with the C library preloaded before LIB, so that LIB finds no next
 *                     definition: its functions, called through dlopen(LIB, RTLD_NOLOAD), must
 *                     still copy, and the failed lookup must leave no dlerror() message
 *
 * In every mode: errno at main's entry is what libearly's constructor left (the library's
 * constructor ran in between), a sentinel errno survives main's first memcpy, the resolver's
 * and the constructor's copies were right and left errno alone, and a battery of copies of
 * every length to 300 bytes and a few large ones is checked. It prints the getenv log
 * ("getenv: PHASE NAME", phases as in early.h), which run.sh checks per variant.
 *
 * Built with -fno-builtin and -fno-tree-loop-distribute-patterns (every copy is a call).
 */
#define _GNU_SOURCE
#include "check.h"

#include <dlfcn.h>
#include <errno.h>

#include "early.h"

typedef void *(*cpy_fn)(void *, const void *, size_t);
typedef void *(*set_fn)(void *, int, size_t);
typedef void (*bzero_fn)(void *, size_t);

static cpy_fn f_memcpy, f_mempcpy, f_memmove;
static set_fn f_memset;
static bzero_fn f_bzero;

static const char *lib_of(void *f)
{
    Dl_info info;
    return f && dladdr(f, &info) && info.dli_fname ? info.dli_fname : "nowhere";
}

/* The calls the battery makes, by the group each lands in (memcpy, memmove, memset). */
static unsigned long made[3];

/* Every length 0..300 at a few offsets, then a few large ones: memcpy, mempcpy, memmove up and
 * down, memset, bzero, each checked against a byte loop. */
static void battery(void)
{
    static const size_t big[] = {4097, 65537, (1u << 20) + 3, (5u << 20) + 1};
    size_t cap = (5u << 20) + 64;
    unsigned char *a = malloc(cap), *b = malloc(cap);
    if (!a || !b) {
        perror("malloc");
        exit(2);
    }
    size_t lens[300 + sizeof big / sizeof big[0]], nl = 0;
    for (size_t n = 0; n < 300; n++)
        lens[nl++] = n;
    for (size_t k = 0; k < sizeof big / sizeof big[0]; k++)
        lens[nl++] = big[k];
    for (size_t k = 0; k < nl; k++) {
        size_t n = lens[k], off = k % 7, bad = 0;
        for (size_t i = 0; i < n + 8; i++)
            a[i] = (unsigned char)(i * 13 + k);
        CHECK(f_memcpy(b + off, a, n) == b + off, "memcpy %zu return", n);
        for (size_t i = 0; i < n; i++)
            bad += b[off + i] != (unsigned char)(i * 13 + k);
        CHECK(f_mempcpy(b, a + 1, n) == b + n, "mempcpy %zu return", n);
        for (size_t i = 0; i < n; i++)
            bad += b[i] != (unsigned char)((i + 1) * 13 + k);
        CHECK(f_memmove(b + 3, b, n) == b + 3, "memmove %zu return", n);
        for (size_t i = 0; i < n; i++)
            bad += b[3 + i] != (unsigned char)((i + 1) * 13 + k);
        CHECK(f_memmove(b, b + 3, n) == b, "memmove down %zu return", n);
        for (size_t i = 0; i < n; i++)
            bad += b[i] != (unsigned char)((i + 1) * 13 + k);
        CHECK(f_memset(a + off, (int)k - 128, n) == a + off, "memset %zu return", n);
        for (size_t i = 0; i < n; i++)
            bad += a[off + i] != (unsigned char)((int)k - 128);
        f_bzero(a, n);
        for (size_t i = 0; i < n; i++)
            bad += a[i] != 0;
        CHECK(bad == 0, "length %zu: %zu wrong bytes", n, bad);
        made[0] += 2, made[1] += 2, made[2] += 2;
    }
    free(a);
    free(b);
}

static void early_checks(void)
{
    struct early_report r;
    early_get(&r);
    CHECK(early_call() == 42, "the IFUNC");
    CHECK(r.resolver_ran && r.resolver_env == 0,
          "the resolver ran (%d) while the loader relocated, before the C library started (environ set: %d)",
          r.resolver_ran, r.resolver_env);
    CHECK(r.resolver_ok == 1, "the resolver's copies (before the library was relocated)");
    CHECK(r.resolver_errno == 4711, "errno after the resolver's copies: %d, want 4711", r.resolver_errno);
    CHECK(r.ctor_ran && r.ctor_ok == 1, "the early constructor's copies");
    CHECK(r.ctor_errno == 4242, "errno after the early constructor's copies (the first after the environment exists%s): %d, want 4242",
          r.ctor_stderr_closed ? ", the standard error closed" : "", r.ctor_errno);
    printf("safety: resolver copies %s, constructor copies %s (stderr %s), errno kept\n",
           r.resolver_ok ? "right" : "WRONG", r.ctor_ok ? "right" : "WRONG",
           r.ctor_stderr_closed ? "closed" : "open");
}

static void print_log(void)
{
    const char *name;
    int when;
    for (int i = 0; early_log(i, &name, &when); i++)
        printf("getenv: %d %s\n", when, name);
}

int main(int argc, char **argv)
{
    /* First: what the constructors before main left, then a sentinel across the first call. */
    int at_entry = errno;
    const char *dlerr = dlerror();
    errno = 777;
    static unsigned char s[1000], d[1000];
    for (int i = 0; i < 1000; i++)
        s[i] = (unsigned char)i;
    memcpy(d, s, sizeof d);
    int after_first = errno;
    printf("safety: errno %d at main's entry (libearly left %d), %d after main's first memcpy (777 before)\n",
           at_entry, EARLY_ERRNO_AT_END, after_first);
    CHECK(at_entry == EARLY_ERRNO_AT_END, "errno at main's entry: %d, want %d (the library's constructor changed it)",
          at_entry, EARLY_ERRNO_AT_END);
    CHECK(after_first == 777, "errno after main's first memcpy: %d, want 777", after_first);
    CHECK(dlerr == NULL, "a dlerror() message was left for the program: %s", dlerr);
    CHECK(d[999] == (unsigned char)999, "main's first memcpy");

    const char *mode = argc > 1 ? argv[1] : "";
    void *h = RTLD_DEFAULT;
    if (strcmp(mode, "nonext") == 0) {
        if (argc < 3) {
            fprintf(stderr, "usage: safety nonext LIB\n");
            return 2;
        }
        h = dlopen(argv[2], RTLD_LAZY | RTLD_NOLOAD);
        if (h == NULL) {
            fprintf(stderr, "safety: %s is not loaded (is it in LD_PRELOAD?)\n", argv[2]);
            return 2;
        }
    }
    f_memcpy = (cpy_fn)dlsym(h, "memcpy");
    f_mempcpy = (cpy_fn)dlsym(h, "mempcpy");
    f_memmove = (cpy_fn)dlsym(h, "memmove");
    f_memset = (set_fn)dlsym(h, "memset");
    f_bzero = (bzero_fn)dlsym(h, "bzero");
    void *fs[] = {(void *)f_memcpy, (void *)f_mempcpy, (void *)f_memmove, (void *)f_memset, (void *)f_bzero};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if (strstr(lib_of(fs[i]), "cachecopy_preload") == NULL) {
            fprintf(stderr, "safety: function %zu comes from %s, not the preload (is LD_PRELOAD set?)\n", i,
                    lib_of(fs[i]));
            return 2;
        }

    early_checks();

    unsigned long (*spy_counts)(int) = NULL;
    if (strcmp(mode, "spy") == 0) {
        spy_counts = (unsigned long (*)(int))dlsym(RTLD_DEFAULT, "spy_counts");
        if (spy_counts == NULL) {
            fprintf(stderr, "safety: libspy.so is not loaded\n");
            return 2;
        }
    }
    unsigned long before[3] = {0, 0, 0};
    for (int g = 0; spy_counts && g < 3; g++)
        before[g] = spy_counts(g);
    battery();
    if (spy_counts) {
        static const char *const group[3] = {"memcpy", "memmove", "memset"};
        for (int g = 0; g < 3; g++) {
            unsigned long got = spy_counts(g) - before[g];
            CHECK(got == made[g], "the next %s saw %lu of the %lu calls made", group[g], got, made[g]);
        }
        printf("safety: every call reached the next definitions (%lu, %lu, %lu)\n", made[0], made[1], made[2]);
    }
    print_log();
    return check_summary("safety");
}
