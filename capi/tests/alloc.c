/*
 * The allocator guarantee through the C face: this program defines malloc, calloc,
 * realloc and free itself (no LD_PRELOAD: the executable's definitions interpose on libc's for
 * the whole process, the library's Rust code and glibc's own calls included) over a static
 * arena. calloc zeroes with cachecopy_fill(..., CACHECOPY_AUTO) and realloc moves with
 * cachecopy_copy(..., CACHECOPY_AUTO), and every entry into the allocator while one of those
 * calls runs is counted: the count must be 0, from the process's very first cachecopy call
 * (made inside calloc: it detects the CPU and reads the environment) on, in several threads.
 * .ci/run runs it with CACHECOPY_TUNE unset, set and unparsable.
 */
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <cachecopy/cachecopy.h>

/* ------------------------------------------------------------------ the allocator */

#define ARENA (512u << 20)
#define HDR 16u
static unsigned char arena[ARENA] __attribute__((aligned(64)));
static atomic_size_t arena_top;
static atomic_ulong reentries, routed, fills, copies;
static _Thread_local int inside; /* this thread is in the allocator's cachecopy call */
static atomic_int first_call_done;
static atomic_int first_call_inside = -1;

/* A bump allocation of n bytes aligned to align (a power of two >= 16), with its size in the
 * 16 bytes before it. No lock: one atomic add. free does nothing. */
static void *bump(size_t n, size_t align)
{
    size_t need = n + HDR + align, at, p;
    if (inside)
        atomic_fetch_add(&reentries, 1);
    if (n > ARENA)
        return NULL;
    at = atomic_fetch_add(&arena_top, need);
    if (at + need > ARENA)
        return NULL;
    p = ((size_t)(arena + at) + HDR + align - 1) & ~(align - 1);
    memcpy((unsigned char *)p - HDR, &n, sizeof n);
    return (void *)p;
}

static size_t size_of_block(const void *p)
{
    size_t n;
    memcpy(&n, (const unsigned char *)p - HDR, sizeof n);
    return n;
}

static void note_first(void)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&first_call_done, &expected, 1))
        atomic_store(&first_call_inside, inside);
}

void *malloc(size_t n)
{
    return bump(n, 16);
}

void free(void *p)
{
    (void)p;
    if (inside)
        atomic_fetch_add(&reentries, 1);
}

void *calloc(size_t count, size_t size)
{
    size_t n;
    void *p;
    if (size && count > SIZE_MAX / size)
        return NULL;
    n = count * size;
    p = bump(n, 16);
    if (p) {
        int rc;
        inside = 1;
        note_first();
        /* The arena may be reused memory in a real allocator: zero it for real. */
        rc = cachecopy_fill(p, 0, n, CACHECOPY_AUTO);
        inside = 0;
        atomic_fetch_add(&routed, 1);
        atomic_fetch_add(&fills, 1);
        if (rc != 0)
            abort();
    }
    return p;
}

void *realloc(void *old, size_t n)
{
    void *p;
    size_t keep;
    if (!old)
        return malloc(n);
    p = bump(n, 16);
    if (!p)
        return NULL;
    keep = size_of_block(old) < n ? size_of_block(old) : n;
    inside = 1;
    note_first();
    if (cachecopy_copy(p, old, keep, CACHECOPY_AUTO) != 0)
        abort();
    inside = 0;
    atomic_fetch_add(&routed, 1);
    atomic_fetch_add(&copies, 1);
    return p;
}

void *aligned_alloc(size_t align, size_t n)
{
    return bump(n, align < 16 ? 16 : align);
}

void *memalign(size_t align, size_t n)
{
    return aligned_alloc(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = aligned_alloc(align, n);
    if (!p)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}

size_t malloc_usable_size(void *p)
{
    return p ? size_of_block(p) : 0;
}

/* ------------------------------------------------------------------ the workload */

static int zeroed(const unsigned char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Zeroed and growing blocks of every size class up to 8 MiB (past the AUTO threshold). */
static unsigned long work(unsigned seed)
{
    unsigned long bad = 0;
    size_t n;
    for (n = 1; n <= (8u << 20); n = n * 3 / 2 + 1) {
        unsigned char *p = calloc(1, n), *q;
        size_t grown = n + n / 3 + 5;
        if (!p || !zeroed(p, n)) {
            bad++;
            continue;
        }
        fill_pattern(p, n, seed);
        q = realloc(p, grown);
        if (!q) {
            bad++;
            continue;
        }
        {
            size_t i;
            for (i = 0; i < n; i++)
                if (q[i] != pattern(i, seed)) {
                    bad++;
                    break;
                }
        }
        free(q);
    }
    return bad;
}

static void *thread_main(void *arg)
{
    return (void *)(uintptr_t)work((unsigned)(uintptr_t)arg);
}

int main(void)
{
    /* The process's first cachecopy call is inside this calloc (nothing called the library
     * before; glibc's start-up allocations go through malloc, which does not route). */
    unsigned char *first = calloc(100, 3);
    pthread_t t[3];
    unsigned long bad;
    int i;

    CHECK(first && zeroed(first, 300), "the first calloc zeroes");
    CHECK(atomic_load(&first_call_inside) == 1,
          "the process's first cachecopy call ran inside the allocator");
    CHECK(atomic_load(&reentries) == 0, "the first call re-entered the allocator %lu times",
          atomic_load(&reentries));

    bad = work(1);
    CHECK(bad == 0, "%lu blocks were not zeroed or not moved", bad);
    for (i = 0; i < 3; i++)
        CHECK(pthread_create(&t[i], NULL, thread_main, (void *)(uintptr_t)(i + 2)) == 0,
              "pthread_create");
    for (i = 0; i < 3; i++) {
        void *r = NULL;
        pthread_join(t[i], &r);
        CHECK((uintptr_t)r == 0, "thread %d: %lu bad blocks", i, (unsigned long)(uintptr_t)r);
    }
    CHECK(atomic_load(&fills) > 100 && atomic_load(&copies) > 100,
          "the allocator routed %lu fills and %lu copies through cachecopy",
          atomic_load(&fills), atomic_load(&copies));
    CHECK(atomic_load(&reentries) == 0, "%lu re-entries into the allocator during cachecopy calls",
          atomic_load(&reentries));
    printf("allocator: %lu cachecopy calls (%lu fills, %lu copies), %lu re-entries, backend %s, "
           "arena %zu MiB used\n",
           atomic_load(&routed), atomic_load(&fills), atomic_load(&copies),
           atomic_load(&reentries), cachecopy_backend(), atomic_load(&arena_top) >> 20);
    return check_summary("capi_alloc");
}
