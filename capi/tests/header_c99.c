/* The installed header as strict C99: built with -std=c99 -Wall -Wextra -Werror -pedantic, and
 * included twice (the include guard). Calls every function once, so a declaration that does not
 * match its definition's linkage fails to link. */
#include <cachecopy/cachecopy.h>
#include <cachecopy/cachecopy.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    char src[64] = "libcachecopy from C99", dst[64];
    struct iovec iov[2];
    cachecopy_mode mode = CACHECOPY_AUTO;
    size_t t = cachecopy_nt_threshold(), ft = cachecopy_fill_nt_threshold();
    uint32_t sum;
    int bad = 0;

    iov[0].iov_base = dst;
    iov[0].iov_len = 8;
    iov[1].iov_base = dst + 8;
    iov[1].iov_len = 56;
    bad |= cachecopy_copy(dst, src, sizeof src, mode);
    bad |= cachecopy_fill(dst, 0, sizeof dst, CACHECOPY_TEMPORAL);
    bad |= cachecopy_copy_unfenced(dst, src, sizeof src, CACHECOPY_NONTEMPORAL);
    bad |= cachecopy_fill_unfenced(dst + 32, 'x', 1, CACHECOPY_FLUSHCACHE);
    cachecopy_fence();
    bad |= cachecopy_copy_from_iov(dst, sizeof dst, iov, 2, mode) != sizeof dst;
    bad |= cachecopy_copy_to_iov(iov, 2, src, sizeof src, mode) != sizeof src;
    sum = cachecopy_csum_and_copy(dst, src, sizeof src, mode);
    (void)cachecopy_csum_fold(sum);
    cachecopy_set_nt_threshold(t);
    cachecopy_set_fill_nt_threshold(ft);
    bad |= memcmp(dst, src, sizeof src) != 0;
    /* Overlapping moves up one byte and back down: the first 20 bytes end where they began. */
    bad |= cachecopy_move(dst + 1, dst, 20, CACHECOPY_TEMPORAL);
    bad |= cachecopy_move_unfenced(dst, dst + 1, 20, CACHECOPY_NONTEMPORAL);
    cachecopy_fence();
    bad |= memcmp(dst, src, 20) != 0;
    printf("header (C99): %s on %s, %s\n", cachecopy_version(), cachecopy_backend(),
           bad ? "FAILED" : "ok");
    return bad;
}
