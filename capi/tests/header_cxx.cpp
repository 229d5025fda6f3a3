// The installed header from C++ (g++ -std=c++11 -Wall -Wextra -Werror): extern "C" linkage,
// the enum usable as C++ code uses it.
#include <cachecopy/cachecopy.h>

#include <cstdio>
#include <cstring>

int main()
{
    char src[32] = "libcachecopy from C++", dst[32];
    const cachecopy_mode modes[] = {CACHECOPY_TEMPORAL, CACHECOPY_NONTEMPORAL,
                                    CACHECOPY_FLUSHCACHE, CACHECOPY_AUTO};
    int bad = 0;
    for (cachecopy_mode m : modes) {
        std::memset(dst, 0, sizeof dst);
        bad |= cachecopy_copy(dst, src, sizeof src, m);
        bad |= std::memcmp(dst, src, sizeof src) != 0;
    }
    bad |= cachecopy_move(dst, dst + 2, 8, CACHECOPY_AUTO);
    bad |= std::memcmp(dst, src + 2, 8) != 0;
    bad |= cachecopy_move_unfenced(dst + 1, dst, 8, CACHECOPY_FLUSHCACHE);
    bad |= cachecopy_fill_unfenced(dst, 0, sizeof dst, CACHECOPY_AUTO);
    cachecopy_fence();
    std::printf("header (C++): %s on %s, %s\n", cachecopy_version(), cachecopy_backend(),
                bad ? "FAILED" : "ok");
    return bad;
}
