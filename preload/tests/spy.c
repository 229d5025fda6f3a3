/*
 * libspy.so: memcpy, memmove and memset that count their calls (spy_counts: 0 memcpy, 1 memmove,
 * 2 memset) and forward to the C library's. Preloaded after libcachecopy_preload, it is what
 * that library finds as the next definition for its `off` groups, so preload/tests/safety.c can
 * see that every call went there. Plain loops until its own lookups are done (the C library's
 * functions, found with dlsym(RTLD_NEXT) on first use).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

typedef void *(*cpy_fn)(void *, const void *, size_t);
typedef void *(*set_fn)(void *, int, size_t);

static unsigned long counts[3];
static cpy_fn next_memcpy, next_memmove;
static set_fn next_memset;

unsigned long spy_counts(int g)
{
    return g >= 0 && g < 3 ? __atomic_load_n(&counts[g], __ATOMIC_RELAXED) : 0;
}

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

__attribute__((constructor)) static void spy_constructor(void)
{
    next_memmove = (cpy_fn)dlsym(RTLD_NEXT, "memmove");
    next_memset = (set_fn)dlsym(RTLD_NEXT, "memset");
    next_memcpy = (cpy_fn)dlsym(RTLD_NEXT, "memcpy");
}

void *memcpy(void *d, const void *s, size_t n)
{
    __atomic_fetch_add(&counts[0], 1, __ATOMIC_RELAXED);
    return next_memcpy ? next_memcpy(d, s, n) : plain_move(d, s, n);
}

void *memmove(void *d, const void *s, size_t n)
{
    __atomic_fetch_add(&counts[1], 1, __ATOMIC_RELAXED);
    return next_memmove ? next_memmove(d, s, n) : plain_move(d, s, n);
}

void *memset(void *d, int c, size_t n)
{
    __atomic_fetch_add(&counts[2], 1, __ATOMIC_RELAXED);
    if (next_memset)
        return next_memset(d, c, n);
    unsigned char *dd = d;
    for (size_t i = 0; i < n; i++)
        dd[i] = (unsigned char)c;
    return d;
}
