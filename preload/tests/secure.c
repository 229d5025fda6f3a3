/*
 * The set-user-ID helper of preload/tests/secure.sh: installed set-user-ID root and run by an
 * unprivileged user with libcachecopy_preload in /etc/ld.so.preload (a private mount namespace)
 * and CACHECOPY_* variables set, it is a process in secure mode (AT_SECURE) under the library.
 * It prints what secure.sh checks:
 *
 *   secure: at_secure 1 uid 65534 euid 0 memcpy from /tmp/.../libcachecopy_preload.so
 *   getenv: NAME          (each CACHECOPY_* name anything in the process asked for)
 *
 * getenv is this program's own, exported (-rdynamic), so the library's calls, and cachecopy's,
 * land here and are logged: in secure mode there must be none. It also copies with every
 * function, checked, so the library serves calls in this process.
 *
 * Built with -fno-builtin and -fno-tree-loop-distribute-patterns (every copy is a call).
 */
#define _GNU_SOURCE
#include "check.h"

#include <dlfcn.h>
#include <sys/auxv.h>

extern char **environ;

#define LOG_MAX 64
static const char *logged[LOG_MAX];
static int nlogged;

char *getenv(const char *name)
{
    static const char prefix[] = "CACHECOPY_";
    size_t n = 0, i;
    while (name[n])
        n++;
    for (i = 0; prefix[i] && name[i] == prefix[i]; i++)
        ;
    if (prefix[i] == 0) {
        int k = __atomic_fetch_add(&nlogged, 1, __ATOMIC_RELAXED);
        if (k < LOG_MAX)
            logged[k] = name; /* the callers' names are string constants */
    }
    if (environ == NULL)
        return NULL;
    for (char **e = environ; *e; e++) {
        for (i = 0; i < n && (*e)[i] == name[i]; i++)
            ;
        if (i == n && (*e)[n] == '=')
            return *e + n + 1;
    }
    return NULL;
}

int main(void)
{
    Dl_info info;
    void *f = dlsym(RTLD_DEFAULT, "memcpy");
    const char *from = f && dladdr(f, &info) && info.dli_fname ? info.dli_fname : "nowhere";
    printf("secure: at_secure %lu uid %d euid %d memcpy from %s\n", getauxval(AT_SECURE), (int)getuid(),
           (int)geteuid(), from);

    size_t cap = (2u << 20) + 64;
    unsigned char *a = malloc(cap), *b = malloc(cap);
    if (!a || !b)
        return 2;
    for (size_t n = 0; n < cap - 64; n = n < 600 ? n + 1 : n * 3 + 1) {
        size_t bad = 0;
        for (size_t i = 0; i < n + 8; i++)
            a[i] = (unsigned char)(i * 11 + n);
        CHECK(memcpy(b, a, n) == b, "memcpy %zu", n);
        CHECK(memmove(b + 5, b, n) == b + 5, "memmove %zu", n);
        for (size_t i = 0; i < n; i++)
            bad += b[5 + i] != (unsigned char)(i * 11 + n);
        CHECK(memset(a, 0x3c, n) == a, "memset %zu", n);
        for (size_t i = 0; i < n; i++)
            bad += a[i] != 0x3c;
        CHECK(bad == 0, "length %zu: %zu wrong bytes", n, bad);
    }
    free(a);
    free(b);
    for (int k = 0; k < nlogged && k < LOG_MAX; k++)
        printf("getenv: %s\n", logged[k]);
    return check_summary("secure");
}
