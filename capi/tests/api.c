/*
 * The C API against libc's memcpy/memset and flat models, through the installed
 * header and library (pkg-config). Built twice by .ci/run: linked dynamically (api-dynamic)
 * and statically (api-static).
 *
 * - copies (fenced, unfenced + fence, and with the checksum) and fills (fenced, unfenced):
 *   every mode x every length 0..=1024 and large odd sizes x several source and destination
 *   offsets, each buffer flush against a PROT_NONE guard page (its start at the lower one, or
 *   its end at the upper one), every byte of both regions compared: the destination range
 *   against memcpy/memset, the bytes around it unchanged, the source unchanged; once with the
 *   default CACHECOPY_AUTO threshold and once with threshold 0 (every AUTO call streams);
 * - iovec gathers and scatters over random segment lists against a flat model;
 * - checksums against a reference RFC 1071 sum;
 * - moves (cachecopy_move, cachecopy_move_unfenced + fence): overlapping ranges in one guarded
 *   buffer, every mode, both directions, distances from 1 byte to past a page, lengths across
 *   the size classes and past the streaming cut-over, against memmove on a model of the buffer;
 * - bad modes and NULLs: -EINVAL (or 0) and nothing written.
 */
#include "check.h"

#include <errno.h>
#include <cachecopy/cachecopy.h>

static const cachecopy_mode MODES[] = {CACHECOPY_TEMPORAL, CACHECOPY_NONTEMPORAL,
                                       CACHECOPY_FLUSHCACHE, CACHECOPY_AUTO};
static const char *const MODE_NAMES[] = {"TEMPORAL", "NONTEMPORAL", "FLUSHCACHE", "AUTO"};
#define NMODES 4

enum op { OP_COPY, OP_COPY_UNFENCED, OP_CSUM, OP_FILL, OP_FILL_UNFENCED, NOPS };
static const char *const OP_NAMES[] = {"copy", "copy_unfenced", "csum_and_copy", "fill",
                                       "fill_unfenced"};

#define CANARY 0xA5
#define SRC_SEED 7u

/* The destination buffer placed against a guard page: flush low (start at lo + off) or flush
 * high (end at hi - off). */
static unsigned char *place(const struct guarded *g, size_t len, size_t off, int high)
{
    return high ? g->hi - len - off : g->lo + off;
}

/* One case: op x mode x len, dst at doff (flush low or high), src at soff (the other side). */
static void one_case(struct guarded *dg, struct guarded *sg, unsigned char *model, enum op op,
                     int m, size_t len, size_t doff, size_t soff, int dhigh)
{
    size_t region = (size_t)(dg->hi - dg->lo);
    size_t sregion = (size_t)(sg->hi - sg->lo);
    unsigned char *dst = place(dg, len, doff, dhigh);
    const unsigned char *src = place(sg, len, soff, !dhigh);
    int byte = (int)(0x1100 + len * 37 + doff) - (int)(len & 1) * 0x2000; /* any int, as memset */
    uint32_t sum = 0;
    int rc = 0;
    size_t i;

    memset(dg->lo, CANARY, region);
    memcpy(model, dg->lo, region);
    switch (op) {
    case OP_COPY: rc = cachecopy_copy(dst, src, len, MODES[m]); break;
    case OP_COPY_UNFENCED: rc = cachecopy_copy_unfenced(dst, src, len, MODES[m]); break;
    case OP_CSUM: sum = cachecopy_csum_and_copy(dst, src, len, MODES[m]); break;
    case OP_FILL: rc = cachecopy_fill(dst, byte, len, MODES[m]); break;
    case OP_FILL_UNFENCED: rc = cachecopy_fill_unfenced(dst, byte, len, MODES[m]); break;
    default: break;
    }
    if (op == OP_COPY_UNFENCED || op == OP_FILL_UNFENCED)
        cachecopy_fence();
    /* The model: the fill byte, or the source's bytes, where the destination is. */
    if (op == OP_FILL || op == OP_FILL_UNFENCED)
        memset(model + (dst - dg->lo), byte, len);
    else
        memcpy(model + (dst - dg->lo), src, len);
    CHECK(rc == 0, "%s %s len %zu: rc %d", OP_NAMES[op], MODE_NAMES[m], len, rc);
    if (memcmp(dg->lo, model, region) != 0) {
        for (i = 0; i < region && dg->lo[i] == model[i]; i++)
            ;
        CHECK(0, "%s %s len %zu dst+%zu %s src+%zu: byte %zd from dst is %02x, want %02x",
              OP_NAMES[op], MODE_NAMES[m], len, doff, dhigh ? "(flush high)" : "(flush low)",
              soff, (ptrdiff_t)(dg->lo + i - dst), dg->lo[i], model[i]);
    } else {
        checks_passed++;
    }
    if (op == OP_CSUM)
        CHECK(cachecopy_csum_fold(sum) == ref_fold(ref_csum(src, len)),
              "csum_and_copy %s len %zu src+%zu: folded %04x, reference %04x", MODE_NAMES[m],
              len, soff, cachecopy_csum_fold(sum), ref_fold(ref_csum(src, len)));
    /* The source is never written. */
    for (i = 0; i < sregion; i += 61)
        if (sg->lo[i] != pattern(i, SRC_SEED))
            break;
    CHECK(i >= sregion, "%s %s len %zu: the source changed at %zu", OP_NAMES[op], MODE_NAMES[m],
          len, i);
}

static const size_t DOFFS[] = {0, 1, 3, 13, 64};
static const size_t SOFFS[] = {0, 1, 7, 33};
#define NDOFF (sizeof DOFFS / sizeof DOFFS[0])
#define NSOFF (sizeof SOFFS / sizeof SOFFS[0])

static void table(size_t len_lo, size_t len_hi, const size_t *lens, size_t nlens, int every_off)
{
    size_t maxlen = lens ? 0 : len_hi, k;
    for (k = 0; lens && k < nlens; k++)
        if (lens[k] > maxlen)
            maxlen = lens[k];
    {
        struct guarded dg = guarded_new(maxlen + 64), sg = guarded_new(maxlen + 64);
        unsigned char *model = malloc((size_t)(dg.hi - dg.lo));
        size_t n = lens ? nlens : len_hi - len_lo + 1, idx;
        if (!model)
            exit(2);
        fill_pattern(sg.lo, (size_t)(sg.hi - sg.lo), SRC_SEED);
        for (idx = 0; idx < n; idx++) {
            size_t len = lens ? lens[idx] : len_lo + idx, di, si;
            int m, op, high;
            for (op = 0; op < NOPS; op++)
                for (m = 0; m < NMODES; m++)
                    for (high = 0; high < 2; high++)
                        for (di = 0; di < NDOFF; di++)
                            for (si = 0; si < NSOFF; si++) {
                                if (!every_off && di != si % NDOFF && di + 1 != NDOFF)
                                    continue;
                                one_case(&dg, &sg, model, (enum op)op, m, len, DOFFS[di],
                                         SOFFS[si], high);
                            }
        }
        free(model);
        guarded_free(&dg);
        guarded_free(&sg);
    }
}

static const size_t LARGE[] = {1025,       4095,           4097,        65537,
                               (1u << 20) - 3, (1u << 20) + 13, (3u << 20) + 7};

static void copies_and_fills(void)
{
    size_t saved = cachecopy_nt_threshold(), saved_fill = cachecopy_fill_nt_threshold();
    int pass;
    for (pass = 0; pass < 2; pass++) {
        if (pass == 1) { /* every AUTO call streams */
            cachecopy_set_nt_threshold(0);
            cachecopy_set_fill_nt_threshold(0);
        }
        table(0, 1024, NULL, 0, 1);
        table(0, 0, LARGE, sizeof LARGE / sizeof LARGE[0], 0);
    }
    cachecopy_set_nt_threshold(saved);
    cachecopy_set_fill_nt_threshold(saved_fill);
    CHECK(cachecopy_nt_threshold() == saved, "threshold restored");
    CHECK(cachecopy_fill_nt_threshold() == saved_fill, "fill threshold restored");
}

/* ------------------------------------------------------------------ iovecs */

#define MAXSEG 24

/* Random segments carved from one guarded region, with canary gaps between them. */
static size_t make_segs(struct guarded *g, struct iovec *iov, size_t *cnt, size_t maxlen)
{
    size_t n = rng() % (MAXSEG + 1), i, at = rng() % 8, total = 0;
    for (i = 0; i < n; i++) {
        size_t len = rng() % 4 == 0 ? 0 : rng() % (maxlen + 1);
        if (at + len + 8 > (size_t)(g->hi - g->lo))
            len = 0;
        iov[i].iov_base = len || rng() % 2 ? g->lo + at : NULL; /* NULL with length 0 is fine */
        iov[i].iov_len = len;
        at += len + rng() % 8;
        total += len;
    }
    *cnt = n;
    return total;
}

static void iovecs(void)
{
    struct guarded seg = guarded_new(MAXSEG * 1200 + 4096), flat = guarded_new(MAXSEG * 1200 + 4096);
    size_t region = (size_t)(seg.hi - seg.lo); /* both are whole pages of the same size */
    unsigned char *model = malloc(region), *src_flat = malloc(region);
    int round;
    if (!model || !src_flat)
        exit(2);
    for (round = 0; round < 4000; round++) {
        struct iovec iov[MAXSEG];
        size_t cnt, i, at, maxseg = round % 3 == 0 ? 1100 : 70;
        size_t total = make_segs(&seg, iov, &cnt, maxseg);
        size_t len = rng() % 3 == 0 ? total : rng() % (total + 100);
        size_t want = len < total ? len : total, got;
        int m = (int)(rng() % NMODES);

        /* Gather: dst (flat, flush high) from the segments. */
        fill_pattern(seg.lo, region, (unsigned)round);
        memset(flat.lo, CANARY, region);
        {
            unsigned char *dst = flat.hi - len;
            memcpy(model, flat.lo, region);
            for (i = 0, at = 0; i < cnt && at < want; i++) {
                size_t take = iov[i].iov_len < want - at ? iov[i].iov_len : want - at;
                memcpy(model + (dst - flat.lo) + at, iov[i].iov_base, take);
                at += take;
            }
            got = cachecopy_copy_from_iov(dst, len, iov, cnt, MODES[m]);
            CHECK(got == want, "copy_from_iov %s: %zu segments, total %zu, len %zu: got %zu",
                  MODE_NAMES[m], cnt, total, len, got);
            CHECK(memcmp(flat.lo, model, region) == 0,
                  "copy_from_iov %s round %d: bytes differ from the flat model", MODE_NAMES[m],
                  round);
        }

        /* Scatter: src (flat, flush low) into the segments; the gaps keep their bytes. */
        fill_pattern(flat.lo, region, (unsigned)round + 99);
        memcpy(src_flat, flat.lo, region);
        memcpy(model, seg.lo, region);
        for (i = 0, at = 0; i < cnt && at < want; i++) {
            size_t take = iov[i].iov_len < want - at ? iov[i].iov_len : want - at;
            memcpy(model + ((unsigned char *)iov[i].iov_base - seg.lo), flat.lo + at, take);
            at += take;
        }
        got = cachecopy_copy_to_iov(iov, cnt, flat.lo, len, MODES[m]);
        CHECK(got == want, "copy_to_iov %s: %zu segments, total %zu, len %zu: got %zu",
              MODE_NAMES[m], cnt, total, len, got);
        CHECK(memcmp(seg.lo, model, region) == 0,
              "copy_to_iov %s round %d: bytes differ from the flat model", MODE_NAMES[m], round);
        CHECK(memcmp(flat.lo, src_flat, region) == 0, "copy_to_iov wrote its source");
    }
    free(model);
    free(src_flat);
    guarded_free(&seg);
    guarded_free(&flat);
}

/* ------------------------------------------------------------------ checksums */

static void checksums(void)
{
    struct guarded s = guarded_new(70000), d = guarded_new(70000);
    size_t len, k;
    uint32_t sums[] = {0, 1, 0xffff, 0x10000, 0x1fffe, 0xfffeffffu, 0xffffffffu, 0x12345678};
    fill_pattern(s.lo, 70000, 3);
    for (k = 0; k < sizeof sums / sizeof sums[0]; k++)
        CHECK(cachecopy_csum_fold(sums[k]) == ref_fold(sums[k]), "csum_fold(%08x) = %04x",
              sums[k], cachecopy_csum_fold(sums[k]));
    for (k = 0; k < 100000; k++) {
        uint32_t x = rng() ^ (rng() << 16);
        if (cachecopy_csum_fold(x) != ref_fold(x)) {
            CHECK(0, "csum_fold(%08x)", x);
            break;
        }
    }
    checks_passed++;
    for (len = 0; len <= 4096; len += (len < 300 ? 1 : 61))
        for (k = 0; k < 4; k++) {
            const unsigned char *src = s.hi - len - k;
            uint32_t sum = cachecopy_csum_and_copy(d.lo + k, src, len, MODES[k]);
            CHECK(cachecopy_csum_fold(sum) == ref_fold(ref_csum(src, len)) &&
                      memcmp(d.lo + k, src, len) == 0,
                  "csum_and_copy len %zu mode %zu", len, k);
        }
    /* RFC 1071 §3's example and a header that verifies to zero. */
    {
        unsigned char rfc[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}, out[8];
        unsigned char ip[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
        unsigned char ipout[20];
        uint16_t check = cachecopy_csum_fold(cachecopy_csum_and_copy(out, rfc, 8, CACHECOPY_AUTO));
        unsigned char be[2];
        memcpy(be, &check, 2);
        CHECK(be[0] == 0x22 && be[1] == 0x0d, "RFC 1071 example: %02x %02x", be[0], be[1]);
        CHECK(cachecopy_csum_fold(cachecopy_csum_and_copy(ipout, ip, 20, CACHECOPY_TEMPORAL)) == 0,
              "an IPv4 header with its checksum verifies to 0");
    }
    guarded_free(&s);
    guarded_free(&d);
}

/* ------------------------------------------------------------------ moves */

/* Moves `len` bytes by `dist` inside a buffer of exactly len + |dist| bytes flush against the
 * low or the high guard page, against memmove on a model of the whole buffer. */
static void moves(void)
{
    static const size_t lens[] = {0, 1, 2, 7, 16, 31, 64, 100, 255, 513, 1023, 1024, 1025, 3000,
                                  4099, 70001};
    static const long dists[] = {1, 2, 3, 15, 17, 31, 63, 64, 65, 200, 4095, 4096, 4097, 70000};
    size_t maxn = 70001 + 70000, li, di;
    struct guarded g = guarded_new(maxn);
    unsigned char *model = malloc(maxn), *data = malloc(maxn);
    int m, high, unfenced, sign;
    if (!model || !data)
        exit(2);
    fill_pattern(data, maxn, 11);
    for (li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (di = 0; di < sizeof dists / sizeof dists[0]; di++)
            for (sign = -1; sign <= 1; sign += 2)
                for (m = 0; m < NMODES; m++)
                    for (high = 0; high < 2; high++)
                        for (unfenced = 0; unfenced < 2; unfenced++) {
                            size_t len = lens[li], d = (size_t)dists[di], n = len + d;
                            size_t so = sign < 0 ? d : 0, doff = sign < 0 ? 0 : d;
                            unsigned char *buf = high ? g.hi - n : g.lo;
                            int rc;
                            memcpy(buf, data, n);
                            memcpy(model, data, n);
                            memmove(model + doff, model + so, len);
                            if (unfenced) {
                                rc = cachecopy_move_unfenced(buf + doff, buf + so, len, MODES[m]);
                                cachecopy_fence();
                            } else {
                                rc = cachecopy_move(buf + doff, buf + so, len, MODES[m]);
                            }
                            CHECK(rc == 0, "move rc %d", rc);
                            CHECK(memcmp(buf, model, n) == 0,
                                  "move%s %s len %zu by %s%zu (flush %s): differs from memmove",
                                  unfenced ? "_unfenced" : "", MODE_NAMES[m], len,
                                  sign < 0 ? "-" : "+", d, high ? "high" : "low");
                        }
    free(model);
    free(data);
    guarded_free(&g);
}

/* ------------------------------------------------------------------ refusals */

static void refusals(void)
{
    unsigned char dst[512], src[512], before[512];
    const int bad[] = {4, 5, 100, -1, 0x7fffffff, (int)0x80000000u};
    size_t b;
    int m;
    struct iovec iov = {dst, sizeof dst};
    struct iovec nulliov = {NULL, 16};
    memset(src, 0x11, sizeof src);
    memset(dst, CANARY, sizeof dst);
    memcpy(before, dst, sizeof dst);
    for (b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        cachecopy_mode mode = (cachecopy_mode)bad[b];
        CHECK(cachecopy_copy(dst, src, sizeof dst, mode) == -EINVAL, "copy mode %d", bad[b]);
        CHECK(cachecopy_copy_unfenced(dst, src, sizeof dst, mode) == -EINVAL, "mode %d", bad[b]);
        CHECK(cachecopy_fill(dst, 1, sizeof dst, mode) == -EINVAL, "fill mode %d", bad[b]);
        CHECK(cachecopy_fill_unfenced(dst, 1, sizeof dst, mode) == -EINVAL, "mode %d", bad[b]);
        CHECK(cachecopy_copy(dst, src, 0, mode) == -EINVAL, "len 0, mode %d", bad[b]);
        CHECK(cachecopy_move(dst, src, sizeof dst, mode) == -EINVAL, "move mode %d", bad[b]);
        CHECK(cachecopy_move_unfenced(dst, dst + 1, 9, mode) == -EINVAL, "mode %d", bad[b]);
        CHECK(cachecopy_csum_and_copy(dst, src, sizeof dst, mode) == 0, "csum mode %d", bad[b]);
        CHECK(cachecopy_copy_from_iov(dst, sizeof dst, &iov, 1, mode) == 0, "mode %d", bad[b]);
        CHECK(cachecopy_copy_to_iov(&iov, 1, src, sizeof src, mode) == 0, "mode %d", bad[b]);
    }
    for (m = 0; m < NMODES; m++) {
        CHECK(cachecopy_copy(NULL, src, 1, MODES[m]) == -EINVAL, "NULL dst");
        CHECK(cachecopy_copy(dst, NULL, 1, MODES[m]) == -EINVAL, "NULL src");
        CHECK(cachecopy_copy_unfenced(NULL, src, 1, MODES[m]) == -EINVAL, "NULL dst");
        CHECK(cachecopy_fill(NULL, 0, 1, MODES[m]) == -EINVAL, "NULL fill");
        CHECK(cachecopy_fill_unfenced(NULL, 0, 1, MODES[m]) == -EINVAL, "NULL fill");
        CHECK(cachecopy_copy(dst, src, (size_t)PTRDIFF_MAX + 1, MODES[m]) == -EINVAL, "huge");
        CHECK(cachecopy_fill(dst, 0, SIZE_MAX, MODES[m]) == -EINVAL, "huge fill");
        CHECK(cachecopy_move(NULL, src, 1, MODES[m]) == -EINVAL, "NULL move dst");
        CHECK(cachecopy_move(dst, NULL, 1, MODES[m]) == -EINVAL, "NULL move src");
        CHECK(cachecopy_move_unfenced(NULL, dst, 1, MODES[m]) == -EINVAL, "NULL move dst");
        CHECK(cachecopy_move(dst, dst + 1, (size_t)PTRDIFF_MAX + 1, MODES[m]) == -EINVAL, "huge");
        CHECK(cachecopy_move(NULL, NULL, 0, MODES[m]) == 0, "NULL move, len 0");
        CHECK(cachecopy_csum_and_copy(NULL, src, 1, MODES[m]) == 0, "NULL csum dst");
        CHECK(cachecopy_copy(NULL, NULL, 0, MODES[m]) == 0, "NULL, len 0");
        CHECK(cachecopy_fill(NULL, 0, 0, MODES[m]) == 0, "NULL, len 0");
        CHECK(cachecopy_csum_and_copy(NULL, NULL, 0, MODES[m]) == 0, "NULL, len 0");
        CHECK(cachecopy_copy_from_iov(NULL, 10, &iov, 1, MODES[m]) == 0, "NULL dst, len > 0");
        CHECK(cachecopy_copy_from_iov(dst, sizeof dst, NULL, 3, MODES[m]) == 0, "NULL iov");
        CHECK(cachecopy_copy_from_iov(NULL, 0, NULL, 0, MODES[m]) == 0, "NULL, 0");
        CHECK(cachecopy_copy_to_iov(NULL, 2, src, 10, MODES[m]) == 0, "NULL iov");
        CHECK(cachecopy_copy_to_iov(&iov, 1, NULL, 10, MODES[m]) == 0, "NULL src");
        CHECK(cachecopy_copy_to_iov(&nulliov, 1, src, 10, MODES[m]) == 0, "NULL iov_base");
        CHECK(cachecopy_copy_from_iov(dst, 16, &nulliov, 1, MODES[m]) == 0, "NULL iov_base");
    }
    cachecopy_fence();
    CHECK(memcmp(dst, before, sizeof dst) == 0, "a refused call wrote");
}

int main(void)
{
    const char *backend = cachecopy_backend();
    printf("libcachecopy %s, backend %s, nt threshold %zu, fill nt threshold %zu\n",
           cachecopy_version(), backend, cachecopy_nt_threshold(), cachecopy_fill_nt_threshold());
    CHECK(backend && strlen(backend) > 0 && strcmp(backend, "unknown") != 0, "backend name");
    refusals();
    checksums();
    iovecs();
    moves();
    copies_and_fills();
    return check_summary("capi_api");
}
