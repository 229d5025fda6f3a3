/*
 * libcachecopy from C against glibc: do the C entry points run as fast as the Rust
 * ones? The same experiments as `cachecopy report` (copy bandwidth and frames), measured the same way:
 * interleaved rounds (a fresh order each round, so no variant always runs first), medians,
 * ratios paired per round.
 *
 * 1. Frames: a 42-byte Ethernet/IPv4/UDP header at slot offset 0 and a 1472-byte payload at
 *    offset 42 in 1536-byte slots of a ring larger than the last-level cache (the report's
 *    rule: 4 x LLC clamped to 96..512 MiB), each variant on its own ring:
 *    - glibc memcpy (header and payload);
 *    - cachecopy CACHECOPY_TEMPORAL (fenced calls);
 *    - cachecopy CACHECOPY_NONTEMPORAL unfenced, one cachecopy_fence per 64 frames;
 *    - the same, payload only (the report's "NonTemporal batched" frame);
 *    - a plain SSE2 streaming loop writing the same 24 lines per slot (header and payload
 *      together, no tail handling), one sfence per 64 frames: the limit.
 * 2. Copies of 4 KiB, 1 MiB and 64 MiB into a cold destination (a different slot of an arena
 *    of 4 x LLC clamped to 192..512 MiB each time, visited in a scattered order, as the
 *    report's cachecopy-arena does), GB/s and the ratio to glibc memcpy.
 *
 *   cc -O2 bench.c $(pkg-config --cflags --libs cachecopy) -o bench && ./bench [--quick]
 *
 * --quick: small rings and few rounds, to prove the program works (CI); its figures mean
 * nothing. Figures with their CPU and date go to lab/findings/capi.md.
 */
#define _GNU_SOURCE
#include <cachecopy/cachecopy.h>

#include <emmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "measure.h"

#define MIB ((size_t)1 << 20)
#define SLOT 1536
#define HDR 42
#define PAYLOAD 1472
#define BATCH 64

/* A permutation of 0..n for round r: Fisher-Yates over SplitMix64 seeded with the round. */
static void round_order(size_t *order, size_t n, size_t r)
{
    uint64_t state = ((uint64_t)r + 1) * 0x9e3779b97f4a7c15ull;
    size_t i;
    for (i = 0; i < n; i++)
        order[i] = i;
    for (i = n; i > 1; i--) {
        uint64_t z;
        size_t j, t;
        state += 0x9e3779b97f4a7c15ull;
        z = state;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        j = (size_t)(z % i);
        t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

static size_t llc_bytes(void)
{
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? (size_t)l3 : 32 * MIB;
}

static size_t clamp(size_t x, size_t lo, size_t hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* ------------------------------------------------------------------ frames */

enum fvar { F_MEMCPY, F_TEMPORAL, F_NT_BATCHED, F_NT_PAYLOAD, F_STREAM, NFVAR };
static const char *const FNAMES[] = {"glibc memcpy", "cachecopy TEMPORAL",
                                     "cachecopy NONTEMPORAL, 64/fence",
                                     "  (payload only, as the report)",
                                     "SSE2 stream loop, 64/fence (limit)"};

static unsigned char hdr[HDR], payload[PAYLOAD] __attribute__((aligned(64)));
static unsigned char line_src[SLOT] __attribute__((aligned(64)));

/* `frames` frames of variant v into consecutive slots of `ring` from slot *next. */
static void run_frames(enum fvar v, unsigned char *ring, size_t slots, size_t *next,
                       size_t frames)
{
    size_t f, s = *next;
    for (f = 0; f < frames; f++) {
        unsigned char *slot = ring + s * SLOT;
        switch (v) {
        case F_MEMCPY:
            memcpy(slot, hdr, HDR);
            memcpy(slot + HDR, payload, PAYLOAD);
            break;
        case F_TEMPORAL:
            cachecopy_copy(slot, hdr, HDR, CACHECOPY_TEMPORAL);
            cachecopy_copy(slot + HDR, payload, PAYLOAD, CACHECOPY_TEMPORAL);
            break;
        case F_NT_BATCHED:
            cachecopy_copy_unfenced(slot, hdr, HDR, CACHECOPY_NONTEMPORAL);
            cachecopy_copy_unfenced(slot + HDR, payload, PAYLOAD, CACHECOPY_NONTEMPORAL);
            break;
        case F_NT_PAYLOAD:
            cachecopy_copy_unfenced(slot, payload, PAYLOAD, CACHECOPY_NONTEMPORAL);
            break;
        case F_STREAM: {
            /* HDR + PAYLOAD = 1514 bytes: 24 whole lines of the slot, streamed. */
            const __m128i *in = (const __m128i *)line_src;
            __m128i *out = (__m128i *)slot;
            int i;
            for (i = 0; i < SLOT / 16; i += 4) {
                __m128i a = _mm_load_si128(in + i), b = _mm_load_si128(in + i + 1);
                __m128i c = _mm_load_si128(in + i + 2), d = _mm_load_si128(in + i + 3);
                _mm_stream_si128(out + i, a);
                _mm_stream_si128(out + i + 1, b);
                _mm_stream_si128(out + i + 2, c);
                _mm_stream_si128(out + i + 3, d);
            }
            break;
        }
        default:
            break;
        }
        if ((f + 1) % BATCH == 0) {
            if (v == F_NT_BATCHED || v == F_NT_PAYLOAD)
                cachecopy_fence();
            else if (v == F_STREAM)
                _mm_sfence();
        }
        if (++s == slots)
            s = 0;
    }
    *next = s;
}

static void frames_section(int quick)
{
    size_t ring_bytes = quick ? 4 * MIB : clamp(4 * llc_bytes(), 96 * MIB, 512 * MIB);
    size_t slots = ring_bytes / (BATCH * SLOT) * BATCH;
    size_t per_sample = quick ? 4 * BATCH : 2048, rounds = quick ? 3 : 41;
    unsigned char *rings[NFVAR];
    size_t next[NFVAR] = {0}, order[NFVAR], r, v;
    double *ns = calloc(NFVAR * rounds, sizeof *ns), *ratio = calloc(NFVAR * rounds, sizeof *ns);

    for (v = 0; v < HDR; v++)
        hdr[v] = (unsigned char)(v * 3 + 1);
    for (v = 0; v < PAYLOAD; v++)
        payload[v] = (unsigned char)(v * 7 + 5);
    memcpy(line_src, hdr, HDR);
    memcpy(line_src + HDR, payload, PAYLOAD);
    for (v = 0; v < NFVAR; v++) {
        rings[v] = buffer(slots * SLOT, 0x11);
        run_frames((enum fvar)v, rings[v], slots, &next[v], slots); /* its own state, once */
    }
    _mm_sfence();
    for (r = 0; r < rounds; r++) {
        round_order(order, NFVAR, r);
        for (v = 0; v < NFVAR; v++) {
            size_t i = order[v];
            double t0 = now_ns();
            run_frames((enum fvar)i, rings[i], slots, &next[i], per_sample);
            ns[i * rounds + r] = (now_ns() - t0) / (double)per_sample;
        }
        for (v = 0; v < NFVAR; v++)
            ratio[v * rounds + r] = ns[v * rounds + r] / ns[F_TEMPORAL * rounds + r];
    }
    printf("1. Frames: %d B header + %d B payload at offset %d in %d B slots, a %zu MiB ring "
           "per variant (LLC %zu MiB), %zu frames x %zu interleaved rounds; medians\n",
           HDR, PAYLOAD, HDR, SLOT, ring_bytes >> 20, llc_bytes() >> 20, per_sample, rounds);
    printf("   %-36s %10s %12s %12s\n", "variant", "ns/frame", "/ TEMPORAL", "/ memcpy");
    for (v = 0; v < NFVAR; v++) {
        /* Copies: median() sorts in place, and the rows stay paired for the other variants. */
        double vm[64], own[64];
        size_t k;
        for (k = 0; k < rounds; k++) {
            own[k] = ns[v * rounds + k];
            vm[k] = own[k] / ns[F_MEMCPY * rounds + k];
        }
        if (getenv("BENCH_VERBOSE")) {
            printf("   %-36s", "");
            for (k = 0; k < rounds; k++)
                printf(" %.0f", own[k]);
            printf("\n");
        }
        printf("   %-36s %10.1f %12.3f %12.3f\n", FNAMES[v], median(own, rounds),
               median(ratio + v * rounds, rounds), median(vm, rounds));
    }
    for (v = 0; v < NFVAR; v++)
        munmap(rings[v], slots * SLOT);
    free(ns);
    free(ratio);
}

/* ------------------------------------------------------------------ cold copies */

enum cop { C_MEMCPY, C_TEMPORAL, C_NONTEMPORAL, C_AUTO, NCOP };
static const char *const CNAMES[] = {"glibc memcpy", "TEMPORAL", "NONTEMPORAL", "AUTO"};

struct arena {
    unsigned char *buf;
    size_t len;
    uint64_t cursor;
    size_t size, stride, mask; /* the layout of the last size asked for */
};

/* The next cold destination of `size` bytes: slot cursor x golden mod 2^k, 128-byte aligned
 * (cachecopy-arena's walk; the layout is kept, so a timed loop pays no division). */
static unsigned char *cold(struct arena *a, size_t size)
{
    if (a->size != size) {
        size_t slots, pow = 1;
        a->size = size;
        a->stride = (size + 127) / 128 * 128;
        slots = a->len / a->stride;
        while (pow * 2 <= slots)
            pow *= 2;
        a->mask = pow - 1;
    }
    a->cursor++;
    return a->buf + (size_t)((a->cursor * 0x9e3779b97f4a7c15ull) & a->mask) * a->stride;
}

static void copy_op(enum cop op, unsigned char *dst, const unsigned char *src, size_t n)
{
    switch (op) {
    case C_MEMCPY:
        memcpy(dst, src, n);
        break;
    case C_TEMPORAL:
        cachecopy_copy(dst, src, n, CACHECOPY_TEMPORAL);
        break;
    case C_NONTEMPORAL:
        cachecopy_copy(dst, src, n, CACHECOPY_NONTEMPORAL);
        break;
    default:
        cachecopy_copy(dst, src, n, CACHECOPY_AUTO);
        break;
    }
}

static void copies_section(int quick)
{
    const size_t sizes[] = {4096, MIB, 64 * MIB};
    size_t largest = quick ? 4 * MIB : 64 * MIB, si, rounds = quick ? 3 : 15;
    struct arena a = {0};
    unsigned char *src = buffer(largest, 0x5a);
    a.len = clamp(4 * llc_bytes(), 192 * MIB, 512 * MIB);
    if (quick)
        a.len = 16 * MIB;
    if (a.len < 2 * largest)
        a.len = 2 * largest;
    a.buf = buffer(a.len, 0x11);
    printf("2. Copies into a cold destination (a %zu MiB arena, scattered slots), GB/s, median "
           "of %zu interleaved rounds of ~4 MiB of traffic each; ratio to glibc memcpy paired "
           "per round\n",
           a.len >> 20, rounds);
    printf("   %-8s", "size");
    for (si = 0; si < NCOP; si++)
        printf(" %14s", CNAMES[si]);
    printf("   (ratios:");
    for (si = 1; si < NCOP; si++)
        printf(" %s", CNAMES[si]);
    printf(")\n");
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = quick && sizes[si] > largest ? largest : sizes[si];
        size_t runs = clamp((4 * MIB + n - 1) / n, 1, 1 << 16), r, k, o, order[NCOP];
        double gbs[NCOP][64], rat[NCOP][64];
        for (o = 0; o < NCOP; o++)
            copy_op((enum cop)o, cold(&a, n), src, n); /* warm-up: code, dispatch */
        for (r = 0; r < rounds; r++) {
            round_order(order, NCOP, r);
            for (o = 0; o < NCOP; o++) {
                size_t i = order[o];
                double t0 = now_ns();
                for (k = 0; k < runs; k++)
                    copy_op((enum cop)i, cold(&a, n), src, n);
                gbs[i][r] = (double)(n * runs) / (now_ns() - t0);
            }
            for (o = 0; o < NCOP; o++)
                rat[o][r] = gbs[o][r] / gbs[C_MEMCPY][r];
        }
        printf("   %-8s", n >= MIB ? (n == MIB ? "1 MiB" : n == 4 * MIB ? "4 MiB" : "64 MiB")
                                  : "4 KiB");
        for (o = 0; o < NCOP; o++)
            printf(" %14.2f", median(gbs[o], rounds));
        printf("   ");
        for (o = 1; o < NCOP; o++)
            printf(" %6.2fx", median(rat[o], rounds));
        printf("\n");
    }
    munmap(a.buf, a.len);
    munmap(src, largest);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    printf("libcachecopy %s bench: backend %s, nt threshold %zu%s\n", cachecopy_version(),
           cachecopy_backend(), cachecopy_nt_threshold(),
           quick ? " (--quick: a smoke run, the figures mean nothing)" : "");
    frames_section(quick);
    copies_section(quick);
    return 0;
}
