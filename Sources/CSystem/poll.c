/* <poll.h> declares ppoll only with _GNU_SOURCE; glibc has had it since 2.4. */
#define _GNU_SOURCE
#include <poll.h>
#include <time.h>
#include "csystem.h"

int signet_poll_ns(void *fds, unsigned long count, long long nanoseconds) {
    if (nanoseconds < 0) return ppoll((struct pollfd *)fds, (nfds_t)count, NULL, NULL);
    struct timespec timeout = { (time_t)(nanoseconds / 1000000000LL), (long)(nanoseconds % 1000000000LL) };
    return ppoll((struct pollfd *)fds, (nfds_t)count, &timeout, NULL);
}
