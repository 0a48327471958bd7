#ifndef SIGNET_CSYSTEM_H
#define SIGNET_CSYSTEM_H

/* Calls of the C library that the toolchain's Glibc module leaves out, wrapped once. This header
 * includes no system header, so the types it uses stay those of the Glibc module. */

/* ppoll(2): waits on `count` entries of a `struct pollfd` array for at most `nanoseconds`
 * (negative: no limit), where poll(2) counts whole milliseconds. Returns what ppoll returns. */
int signet_poll_ns(void *fds, unsigned long count, long long nanoseconds);

/* The socket address of `host`, a numeric IPv4 or IPv6 address (inet_pton(3)), and `port`, into
 * `address` (room for a struct sockaddr_storage) and its size into `length`: returns AF_INET or
 * AF_INET6, or -1 when `host` is neither. */
int signet_ip_address(const char *host, unsigned short port, void *address, unsigned int *length);

/* A listening TCP socket on `address` (`length` bytes: a struct sockaddr_in or sockaddr_in6) with
 * SO_REUSEADDR (a restart binds while the last run's connections are in TIME_WAIT), non-blocking
 * and close-on-exec; an IPv6 socket with IPV6_V6ONLY off, so `::` takes IPv4 clients too
 * (as mapped addresses), whatever net.ipv6.bindv6only says. -1 and errno when it cannot be bound. */
int signet_listen(const void *address, unsigned int length, int backlog);

/* Takes on a listening socket another process made (systemd's socket activation): 0 when `fd`
 * is a listening TCP socket of IPv4 or IPv6, made non-blocking and close-on-exec; -1 and errno
 * otherwise (EBADF, ENOTSOCK; EPROTOTYPE not a stream, EAFNOSUPPORT not IP, EINVAL not listening). */
int signet_adopt_listener(int fd);

/* The local port of an IPv4 or IPv6 socket: the one a listening socket is bound to, or a
 * connection's own end (0 when it cannot be read). */
unsigned short signet_bound_port(int fd);

/* The local address of a socket into `address` (room for a struct sockaddr_storage); what
 * getsockname returns. */
int signet_bound_address(int fd, void *address);

/* The port of a connected IPv4 socket's peer (0 when it has none or is not IPv4). */
unsigned short signet_peer_port(int fd);

/* One connection from a listening socket, non-blocking and close-on-exec, its peer's address in
 * `address` (room for a struct sockaddr_storage, 128 bytes) and its size in `length`; -1 and
 * errno otherwise. TCP_NODELAY is set on it. */
int signet_accept(int fd, void *address, unsigned int *length);

/* Names the calling thread as `ps -L`, `top -H` and `perf` show it: at most 15 bytes, or Linux
 * refuses the name whole (ERANGE). Returns what pthread_setname_np returns. */
int signet_name_thread(const char *name);

/* An epoll instance, close-on-exec; -1 and errno when none can be made. */
int signet_epoll_create(void);

/* A non-blocking, close-on-exec eventfd: a worker's doorbell. */
int signet_eventfd(void);

/* Adds (op 0), changes (1) or removes (2) `fd` in epoll `ep`, watching it for `events`: 1 input
 * and the peer's end of it, 2 room to write (errors and a full hang-up are always reported);
 * `token` comes back with its events. */
int signet_epoll_watch(int ep, int op, int fd, int events, unsigned long long token);

/* Waits up to `timeout_ms` (-1: no limit) for at most `max` (at most 64) events: each one's token
 * in `tokens`, and in `flags` 1 for input or hang-up and 2 for room to write. Returns what
 * epoll_wait returns. */
int signet_epoll_wait(int ep, unsigned long long *tokens, unsigned *flags, int max, int timeout_ms);

/* Rings an eventfd (adds 1), and empties one. */
void signet_eventfd_signal(int fd);
void signet_eventfd_drain(int fd);

#endif
