/*
 * libearly.so: the callers that reach libcachecopy_preload before it is ready, for
 * preload/tests/safety.c (docs/preload.md, "Tests"). The test program links it (NEEDED), so the
 * loader puts it after the preloaded library in the lookup order and relocates it before it
 * (the loader relocates the last-loaded object first):
 *
 * - an IFUNC resolver that copies with memcpy, memmove and memset: it runs while the loader
 *   relocates this library, so its calls, bound to the preloaded library's functions, arrive
 *   before that library is relocated (its GOT is still empty: a call through it, or a read of
 *   `environ` through it, crashes);
 * - a constructor that copies: the C library's constructor has run (the environment exists),
 *   the preloaded library's has not (it is initialised after the libraries it does not depend
 *   on), so its first call initialises the library on the call path. errno is set to a
 *   sentinel before that call and must be unchanged after it; with EARLY_CLOSE_STDERR set, the
 *   standard error is closed around it, so that a warning written there fails (EBADF) and would
 *   change errno if the library did not restore it. At its end errno is set to another sentinel,
 *   which the program's main must still find (the preloaded library's constructor runs in
 *   between);
 * - getenv: this library's comes before the C library's in the lookup order, so the preloaded
 *   library's (and cachecopy's) getenv calls land here. Each name starting with CACHECOPY_ is
 *   logged with the phase it was asked in (0 relocation, 1 this constructor, 2 later), which
 *   shows which variables were read, and when.
 *
 * Built with -fno-builtin and -fno-tree-loop-distribute-patterns: every copy here is a call, and
 * no loop becomes one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "early.h"

extern char **environ;

static int phase;

/* ---------------------------------------------------------------- getenv, logged */

#define LOG_MAX 64
static const char *log_name[LOG_MAX];
static int log_phase[LOG_MAX];
static int log_n;

static int starts_with(const char *s, const char *prefix)
{
    while (*prefix)
        if (*s++ != *prefix++)
            return 0;
    return 1;
}

char *getenv(const char *name)
{
    if (starts_with(name, "CACHECOPY_")) {
        int i = __atomic_fetch_add(&log_n, 1, __ATOMIC_RELAXED);
        if (i < LOG_MAX) {
            log_name[i] = name; /* the callers' names are string constants */
            log_phase[i] = phase;
        }
    }
    if (environ == NULL)
        return NULL;
    size_t n = 0;
    while (name[n])
        n++;
    for (char **e = environ; *e; e++) {
        size_t i = 0;
        while (i < n && (*e)[i] == name[i])
            i++;
        if (i == n && (*e)[n] == '=')
            return *e + n + 1;
    }
    return NULL;
}

/* ---------------------------------------------------------------- copies, checked */

/* memcpy, memmove (overlapping, up by one) and memset over `len` bytes of a and b; 1 if every
 * byte is right. */
static int copies(unsigned char *a, unsigned char *b, size_t len, unsigned seed)
{
    int ok = 1;
    for (size_t i = 0; i < len; i++)
        a[i] = (unsigned char)(i * 7 + seed);
    ok &= memcpy(b, a, len) == b;
    for (size_t i = 0; i < len; i++)
        ok &= b[i] == (unsigned char)(i * 7 + seed);
    ok &= memmove(b + 1, b, len - 1) == b + 1;
    for (size_t i = 1; i < len; i++)
        ok &= b[i] == (unsigned char)((i - 1) * 7 + seed);
    ok &= memset(a, 0x5a, len) == a;
    for (size_t i = 0; i < len; i++)
        ok &= a[i] == 0x5a;
    return ok;
}

static struct early_report report;

/* ---------------------------------------------------------------- the IFUNC resolver */

static unsigned char r_a[4096], r_b[4096];

static int early_impl(void)
{
    return 42;
}

static int (*early_resolver(void))(void)
{
    report.resolver_ran = 1;
    report.resolver_env = environ != NULL;
    errno = 4711;
    report.resolver_ok = copies(r_a, r_b, sizeof r_a, 3);
    report.resolver_errno = errno;
    return early_impl;
}

/* Local, so the call below is an IRELATIVE relocation of this library: resolved while the
 * loader relocates it. */
static int early_ifunc(void) __attribute__((ifunc("early_resolver")));

int early_call(void)
{
    return early_ifunc();
}

/* ---------------------------------------------------------------- the constructor */

static unsigned char c_a[5000], c_b[5000];

__attribute__((constructor)) static void early_constructor(void)
{
    phase = 1;
    report.ctor_ran = 1;
    int saved = -1;
    if (getenv("EARLY_CLOSE_STDERR") != NULL) {
        saved = dup(2);
        close(2);
    }
    errno = 4242;
    report.ctor_ok = copies(c_a, c_b, sizeof c_a, 5);
    report.ctor_errno = errno;
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
    report.ctor_stderr_closed = saved >= 0;
    phase = 2;
    errno = EARLY_ERRNO_AT_END;
}

/* ---------------------------------------------------------------- what the program asks */

void early_get(struct early_report *r)
{
    r->resolver_ran = report.resolver_ran;
    r->resolver_env = report.resolver_env;
    r->resolver_ok = report.resolver_ok;
    r->resolver_errno = report.resolver_errno;
    r->ctor_ran = report.ctor_ran;
    r->ctor_ok = report.ctor_ok;
    r->ctor_errno = report.ctor_errno;
    r->ctor_stderr_closed = report.ctor_stderr_closed;
}

int early_log(int i, const char **name, int *when)
{
    int n = __atomic_load_n(&log_n, __ATOMIC_RELAXED);
    if (i >= n || i >= LOG_MAX)
        return 0;
    *name = log_name[i];
    *when = log_phase[i];
    return 1;
}
