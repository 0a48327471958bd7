/* <sys/socket.h> declares accept4 only with _GNU_SOURCE. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include "csystem.h"

int signet_listen_ipv4(const void *address, int backlog) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
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

unsigned short signet_bound_port(int fd) {
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    return getsockname(fd, (struct sockaddr *)&a, &len) == 0 ? ntohs(a.sin_port) : 0;
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
