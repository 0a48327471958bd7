#ifndef SIGNET_CSYSTEM_H
#define SIGNET_CSYSTEM_H

/* Calls of the C library that the toolchain's Glibc module leaves out, wrapped once. This header
 * includes no system header, so the types it uses stay those of the Glibc module. */

/* ppoll(2): waits on `count` entries of a `struct pollfd` array for at most `nanoseconds`
 * (negative: no limit), where poll(2) counts whole milliseconds. Returns what ppoll returns. */
int signet_poll_ns(void *fds, unsigned long count, long long nanoseconds);

#endif
