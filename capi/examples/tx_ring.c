/*
 * Transmit frames built with libcachecopy's C batch: the unfenced copies plus one
 * cachecopy_fence() per 64 frames.
 *
 * A ring of 1536-byte slots, as an AF_XDP UMEM or a NIC's transmit ring holds them. Each frame
 * is a 42-byte Ethernet + IPv4 + UDP header (built on the stack, IPv4 checksum from
 * cachecopy_csum_and_copy) copied to the slot's start, and a 1472-byte payload copied to slot
 * offset 42, both with cachecopy_copy_unfenced. After every 64 frames one cachecopy_fence()
 * completes their streaming stores, and only then does the producer index move (a release
 * store: what a doorbell or a ring's producer pointer is). At the end the "device" side checks
 * every frame of the ring.
 *
 *   cc tx_ring.c $(pkg-config --cflags --libs cachecopy) -o tx_ring
 *   ./tx_ring [frames] [temporal|nontemporal|flushcache|auto]
 */
#include <cachecopy/cachecopy.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT 1536
#define HDR 42
#define PAYLOAD 1472
#define SLOTS 4096 /* 6 MiB of ring */
#define BATCH 64

static _Atomic uint32_t producer; /* frames published: the device may read slots below it */

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

/* Ethernet + IPv4 + UDP for frame `seq` (ports and IP id from it). */
static void build_header(unsigned char h[HDR], uint32_t seq)
{
    static const unsigned char macs[12] = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1};
    unsigned char ip[20] = {0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2};
    uint16_t check;
    memcpy(h, macs, 12);
    put16(h + 12, 0x0800);
    put16(ip + 2, 20 + 8 + PAYLOAD);
    put16(ip + 4, seq & 0xffff);
    /* The IPv4 checksum: the folded, complemented RFC 1071 sum of the header, stored as the
     * sum's own byte order (the sum is over native-order words). */
    check = cachecopy_csum_fold(cachecopy_csum_and_copy(h + 14, ip, 20, CACHECOPY_TEMPORAL));
    memcpy(h + 14 + 10, &check, 2);
    put16(h + 34, 40000 + (seq % 1000));
    put16(h + 36, 9);
    put16(h + 38, 8 + PAYLOAD);
    put16(h + 40, 0); /* no UDP checksum (optional over IPv4) */
}

static cachecopy_mode parse_mode(const char *s)
{
    if (!strcmp(s, "temporal"))
        return CACHECOPY_TEMPORAL;
    if (!strcmp(s, "flushcache"))
        return CACHECOPY_FLUSHCACHE;
    if (!strcmp(s, "auto"))
        return CACHECOPY_AUTO;
    return CACHECOPY_NONTEMPORAL;
}

int main(int argc, char **argv)
{
    uint32_t frames = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 100000;
    cachecopy_mode mode = argc > 2 ? parse_mode(argv[2]) : CACHECOPY_NONTEMPORAL;
    unsigned char *ring = aligned_alloc(4096, (size_t)SLOTS * SLOT);
    unsigned char *payloads = malloc(PAYLOAD * 16);
    uint32_t seq, bad = 0, i;

    if (!ring || !payloads)
        return 2;
    for (i = 0; i < PAYLOAD * 16; i++)
        payloads[i] = (unsigned char)(i * 131 + 7);

    for (seq = 0; seq < frames; seq++) {
        unsigned char hdr[HDR];
        unsigned char *slot = ring + (size_t)(seq % SLOTS) * SLOT;
        build_header(hdr, seq);
        /* Unfenced: nothing may read these slots until the fence below. */
        if (cachecopy_copy_unfenced(slot, hdr, HDR, mode) != 0 ||
            cachecopy_copy_unfenced(slot + HDR, payloads + (seq % 16) * PAYLOAD, PAYLOAD, mode) != 0)
            return 2;
        if ((seq + 1) % BATCH == 0 || seq + 1 == frames) {
            cachecopy_fence(); /* the batch's stores are complete ... */
            atomic_store_explicit(&producer, seq + 1, memory_order_release); /* ... then publish */
        }
    }

    /* The device side: every frame of the last ring's worth, header and payload. */
    {
        uint32_t published = atomic_load_explicit(&producer, memory_order_acquire);
        uint32_t first = published > SLOTS ? published - SLOTS : 0;
        for (seq = first; seq < published; seq++) {
            unsigned char want[HDR];
            const unsigned char *slot = ring + (size_t)(seq % SLOTS) * SLOT;
            build_header(want, seq);
            if (memcmp(slot, want, HDR) != 0 ||
                memcmp(slot + HDR, payloads + (seq % 16) * PAYLOAD, PAYLOAD) != 0)
                bad++;
            /* The IPv4 header verifies: its sum with the checksum in place folds to 0. */
            {
                unsigned char ip[20];
                if (cachecopy_csum_fold(cachecopy_csum_and_copy(ip, slot + 14, 20,
                                                                CACHECOPY_TEMPORAL)) != 0)
                    bad++;
            }
        }
        printf("tx_ring: %u frames of %d bytes in %u-byte slots (%d per fence), backend %s: "
               "%u checked, %u bad\n",
               frames, HDR + PAYLOAD, SLOT, BATCH, cachecopy_backend(), published - first, bad);
    }
    free(ring);
    free(payloads);
    return bad != 0;
}
