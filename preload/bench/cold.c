/*
 * Large copies into a cold destination through each library's exported memcpy, as a program
 * calls it (docs/preload.md, "Figures"): glibc's through this program's own PLT; the preload's
 * and, when given, AOCL-LibMem's through a pointer from dlopen(RTLD_LOCAL), so neither replaces
 * any symbol of this process. Every size from 16 KiB to 256 MiB is copied from a hot source into
 * a different slot of an arena larger than the last-level cache each time (slots visited in a
 * scattered order), each variant with its own source and arena; interleaved rounds in a fresh
 * order each round, medians, ratios to glibc paired per round. Run it without LD_PRELOAD.
 *
 *   cc -O2 preload/bench/cold.c -ldl -o cold
 *   ./cold LIBCACHECOPY_PRELOAD.so [LIBAOCL_LIBMEM.so] [--quick]
 *
 * GLIBC_TUNABLES=glibc.cpu.x86_non_temporal_threshold=... changes glibc's variant only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../../capi/bench/measure.h"

#define MIB ((size_t)1 << 20)
typedef void *(*cpy_fn)(void *, const void *, size_t);

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 33;
}

#define MAXV 3
struct variant {
    const char *name;
    cpy_fn f;
    unsigned char *src, *arena;
    size_t slot; /* next slot: a scattered walk */
};

static cpy_fn load(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        exit(2);
    }
    cpy_fn f = (cpy_fn)dlsym(h, "memcpy");
    if (f == NULL) {
        fprintf(stderr, "%s has no memcpy\n", path);
        exit(2);
    }
    return f;
}

static void *glibc_memcpy(void *d, const void *s, size_t n)
{
    return memcpy(d, s, n); /* the PLT call a program makes (not inlined: n is not constant) */
}

int main(int argc, char **argv)
{
    int quick = 0, nv = 0;
    const char *paths[2] = {0};
    int np = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (np < 2)
            paths[np++] = argv[i];
    }
    if (np == 0) {
        fprintf(stderr, "usage: %s LIBCACHECOPY_PRELOAD.so [LIBAOCL_LIBMEM.so] [--quick]\n", argv[0]);
        return 2;
    }
    static const size_t sizes[] = {16 << 10, 256 << 10, 1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB};
    size_t nsizes = sizeof sizes / sizeof sizes[0];
    size_t arena_len = quick ? 64 * MIB : 1024 * MIB, maxsize = quick ? 16 * MIB : 256 * MIB;
    int rounds = quick ? 3 : 15;
    struct variant v[MAXV];
    v[nv++] = (struct variant){"glibc", glibc_memcpy, 0, 0, 0};
    v[nv++] = (struct variant){"preload", load(paths[0]), 0, 0, 0};
    if (np > 1)
        v[nv++] = (struct variant){"AOCL-LibMem", load(paths[1]), 0, 0, 0};
    for (int i = 0; i < nv; i++) {
        v[i].src = buffer(maxsize, 0x11 + i);
        v[i].arena = buffer(arena_len, 0);
    }
    const char *tun = getenv("GLIBC_TUNABLES");
    printf("cold-destination copies through memcpy: %d rounds, arena %zu MiB per variant%s%s\n",
           rounds, arena_len >> 20, tun ? ", GLIBC_TUNABLES=" : "", tun ? tun : "");
    printf("%-9s %-12s %10s %8s  (GB/s median; ratio to glibc median of per-round ratios)\n", "size",
           "variant", "GB/s", "ratio");
    for (size_t si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        if (n > maxsize)
            break;
        size_t slots = arena_len / n;
        /* Calls per sample: at least 64 MiB copied, at least 4 calls. */
        size_t calls = (64 * MIB) / n < 4 ? 4 : (64 * MIB) / n;
        if (quick)
            calls = 2;
        double gbs[MAXV][64], ratio[MAXV][64];
        for (int r = 0; r < rounds; r++) {
            double t[MAXV];
            int order[MAXV];
            for (int i = 0; i < nv; i++)
                order[i] = i;
            for (int i = nv - 1; i > 0; i--) {
                int j = (int)(next() % (uint64_t)(i + 1)), x = order[i];
                order[i] = order[j];
                order[j] = x;
            }
            for (int k = 0; k < nv; k++) {
                struct variant *w = &v[order[k]];
                double t0 = now_ns();
                for (size_t c = 0; c < calls; c++) {
                    /* A scattered walk over the slots: each destination left the cache long ago. */
                    w->slot = (w->slot + 1 + slots / 2 + (next() % 3)) % slots;
                    w->f(w->arena + w->slot * n, w->src, n);
                }
                t[order[k]] = now_ns() - t0;
            }
            for (int i = 0; i < nv; i++) {
                gbs[i][r] = (double)(n * calls) / t[i];
                ratio[i][r] = t[0] / t[i];
            }
        }
        for (int i = 0; i < nv; i++) {
            char label[32];
            snprintf(label, sizeof label, n >= MIB ? "%zu MiB" : "%zu KiB", n >= MIB ? n >> 20 : n >> 10);
            printf("%-9s %-12s %10.2f %7.2fx\n", label, v[i].name, median(gbs[i], (size_t)rounds),
                   median(ratio[i], (size_t)rounds));
        }
    }
    /* The copies must be right: the last slot each variant wrote holds its source. */
    for (int i = 0; i < nv; i++) {
        size_t n = quick ? 16 * MIB : 256 * MIB, s = v[i].slot;
        if (memcmp(v[i].arena + s * n, v[i].src, n) != 0) {
            fprintf(stderr, "%s: the last copy differs from its source\n", v[i].name);
            return 1;
        }
    }
    return 0;
}
