/*
 * Shared pieces of the C tests: counters with the closing "N passed, N failed" line, buffers
 * flush against PROT_NONE guard pages, a deterministic byte pattern and a reference RFC 1071
 * sum. Header-only (static functions), so every test is one translation unit.
 */
#ifndef CACHECOPY_TEST_CHECK_H
#define CACHECOPY_TEST_CHECK_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned long checks_passed, checks_failed;

/* One named check; prints the first 20 failures in full. */
#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (cond) {                                                                       \
            checks_passed++;                                                              \
        } else {                                                                          \
            if (++checks_failed <= 20) {                                                  \
                fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);           \
                fprintf(stderr, __VA_ARGS__);                                             \
                fputc('\n', stderr);                                                      \
            }                                                                             \
        }                                                                                 \
    } while (0)

/* Prints the closing line, "NAME: N passed, N failed" (NAME one word, as CI reads it), and
 * returns the exit status: non-zero on a failure or when nothing was checked. */
static inline int check_summary(const char *name)
{
    printf("%s: %lu passed, %lu failed\n", name, checks_passed, checks_failed);
    return checks_failed == 0 && checks_passed > 0 ? 0 : 1;
}

/* A readable and writable region between two PROT_NONE pages: [lo, hi). */
struct guarded {
    unsigned char *map, *lo, *hi;
    size_t map_len;
};

static inline size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static inline struct guarded guarded_new(size_t len)
{
    struct guarded g;
    size_t pg = page_size();
    size_t body = (len + pg - 1) / pg * pg;
    if (body == 0)
        body = pg;
    g.map_len = body + 2 * pg;
    g.map = mmap(NULL, g.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g.map == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    if (mprotect(g.map, pg, PROT_NONE) != 0 || mprotect(g.map + pg + body, pg, PROT_NONE) != 0) {
        perror("mprotect");
        exit(2);
    }
    g.lo = g.map + pg;
    g.hi = g.lo + body;
    return g;
}

static inline void guarded_free(struct guarded *g)
{
    munmap(g->map, g->map_len);
}

/* Byte i of the pattern with seed s: every position and seed differs. */
static inline unsigned char pattern(size_t i, unsigned s)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + s * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (unsigned char)(x ^ (x >> 8));
}

static inline void fill_pattern(unsigned char *p, size_t len, unsigned seed)
{
    size_t i;
    for (i = 0; i < len; i++)
        p[i] = pattern(i, seed);
}

/* Reference RFC 1071 partial sum: 16-bit words in native byte order (loaded with memcpy), an
 * odd last byte as if followed by a zero byte, 64-bit accumulator, folded to 32 bits. */
static inline uint32_t ref_csum(const unsigned char *p, size_t len)
{
    uint64_t sum = 0;
    size_t i;
    for (i = 0; i + 1 < len; i += 2) {
        uint16_t w;
        memcpy(&w, p + i, 2);
        sum += w;
    }
    if (len & 1) {
        unsigned char last[2] = {p[len - 1], 0};
        uint16_t w;
        memcpy(&w, last, 2);
        sum += w;
    }
    while (sum >> 32)
        sum = (sum & 0xffffffffu) + (sum >> 32);
    return (uint32_t)sum;
}

/* Fold to 16 bits and complement, as csum_fold. */
static inline uint16_t ref_fold(uint32_t sum)
{
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* A small deterministic generator for the iovec shapes. */
static uint64_t rng_state = 0x243F6A8885A308D3ull;
static inline uint32_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

#endif
