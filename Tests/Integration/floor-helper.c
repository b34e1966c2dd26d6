/* The floor of a pam_mpin.so login, for pam-bench.sh (`pam_floor_spawn_ms`): a helper that
 * speaks the frame protocol of Sources/CPAMProtocol/mpin_pam_protocol.h and answers at once.
 * It reads the START frame from its socket (fd 0) and sends RESULT PAM_SUCCESS: what is left is
 * what the module costs by itself (its checks of the helper's path, the socket pair, fork and
 * exec, the frames) plus starting the smallest possible process. Built static by the bench
 * only, never installed. */
#include <security/_pam_types.h>
#include <stdint.h>
#include <unistd.h>

#include "mpin_pam_protocol.h"

static int read_exactly(unsigned char *buffer, size_t count) {
    size_t got = 0;
    while (got < count) {
        ssize_t n = read(0, buffer + got, count - got);
        if (n <= 0) return 0;
        got += (size_t)n;
    }
    return 1;
}

int main(void) {
    unsigned char header[MPIN_PAM_HEADER_SIZE];
    static unsigned char payload[MPIN_PAM_MAX_PAYLOAD];
    if (!read_exactly(header, sizeof header) || header[0] != MPIN_PAM_FRAME_START) return 1;
    uint32_t length = (uint32_t)header[1] << 24 | (uint32_t)header[2] << 16 | (uint32_t)header[3] << 8 | header[4];
    if (length > MPIN_PAM_MAX_PAYLOAD || !read_exactly(payload, length)) return 1;
    const unsigned char result[] = {MPIN_PAM_FRAME_RESULT, 0, 0, 0, 1, PAM_SUCCESS};
    return write(0, result, sizeof result) == (ssize_t)sizeof result ? 0 : 1;
}
