/* <sys/socket.h> declares accept4 only with _GNU_SOURCE. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <string.h>
#include <unistd.h>
#include "csystem.h"

int signet_ip_address(const char *host, unsigned short port, void *address, unsigned int *length) {
    memset(address, 0, sizeof(struct sockaddr_storage));
    struct sockaddr_in *v4 = address;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        *length = sizeof *v4;
        return AF_INET;
    }
    memset(address, 0, sizeof(struct sockaddr_storage));
    struct sockaddr_in6 *v6 = address;
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        *length = sizeof *v6;
        return AF_INET6;
    }
    return -1;
}

int signet_listen(const void *address, unsigned int length, int backlog) {
    int family = ((const struct sockaddr *)address)->sa_family;
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    int on = 1, off = 0;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0
        || (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off) != 0)
        || bind(fd, (const struct sockaddr *)address, length) != 0 || listen(fd, backlog) != 0) {
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
