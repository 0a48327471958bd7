/* <sys/socket.h> declares accept4 only with _GNU_SOURCE. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include "csystem.h"

int signet_listen_ipv4(const void *address, int backlog) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0
        || bind(fd, (const struct sockaddr *)address, sizeof(struct sockaddr_in)) != 0 || listen(fd, backlog) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int signet_adopt_listener(int fd) {
    int value = 0;
    socklen_t len = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &len) != 0) return -1;
    if (value != SOCK_STREAM) { errno = EPROTOTYPE; return -1; }
    len = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &len) != 0) return -1;
    if (value != AF_INET && value != AF_INET6) { errno = EAFNOSUPPORT; return -1; }
    len = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &len) != 0) return -1;
    if (value != 1) { errno = EINVAL; return -1; }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return -1;
    return 0;
}

unsigned short signet_bound_port(int fd) {
    struct sockaddr_storage a;
    socklen_t len = sizeof a;
    if (getsockname(fd, (struct sockaddr *)&a, &len) != 0) return 0;
    if (a.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
    return a.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&a)->sin_port) : 0;
}

int signet_bound_address(int fd, void *address) {
    socklen_t len = sizeof(struct sockaddr_storage);
    return getsockname(fd, (struct sockaddr *)address, &len);
}

unsigned short signet_peer_port(int fd) {
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    return getpeername(fd, (struct sockaddr *)&a, &len) == 0 && a.sin_family == AF_INET ? ntohs(a.sin_port) : 0;
}

int signet_accept(int fd, void *address, unsigned int *length) {
    socklen_t len = sizeof(struct sockaddr_storage);
    int c = accept4(fd, (struct sockaddr *)address, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    *length = (unsigned int)len;
    if (c >= 0) {
        /* An answer goes out in one write; never hold it back for an acknowledgement (Nagle). */
        int on = 1;
        (void)setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    }
    return c;
}
