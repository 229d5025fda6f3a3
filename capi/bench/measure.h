/*
 * What the C benchmarks share (capi/bench/bench.c, preload/bench/cold.c): the clock, buffers
 * with every page present before any timing, and the median of a run's samples.
 */
#ifndef CACHECOPY_BENCH_MEASURE_H
#define CACHECOPY_BENCH_MEASURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static inline double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* A page-aligned buffer of `len` bytes of `byte`, every page written (no page fault in a timed
 * run); exits on failure. */
static inline unsigned char *buffer(size_t len, int byte)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    memset(p, byte, len);
    return p;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of `v` (sorted in place). */
static inline double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
