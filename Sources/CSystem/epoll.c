/* epoll(7) and eventfd(2) for the HTTP workers, wrapped so that Swift never lays out the packed
 * struct epoll_event itself. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "csystem.h"

int signet_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int signet_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int signet_epoll_watch(int ep, int op, int fd, int events, unsigned long long token) {
    struct epoll_event e = { .events = ((events & 1) ? EPOLLIN | EPOLLRDHUP : 0) | ((events & 2) ? EPOLLOUT : 0), .data.u64 = token };
    return epoll_ctl(ep, op == 0 ? EPOLL_CTL_ADD : op == 1 ? EPOLL_CTL_MOD : EPOLL_CTL_DEL, fd, &e);
}

int signet_epoll_wait(int ep, unsigned long long *tokens, unsigned *flags, int max, int timeout_ms) {
    struct epoll_event e[64];
    if (max > 64) max = 64;
    int n = epoll_wait(ep, e, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        tokens[i] = e[i].data.u64;
        flags[i] = ((e[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ? 1u : 0u) | ((e[i].events & EPOLLOUT) ? 2u : 0u);
    }
    return n;
}

void signet_eventfd_signal(int fd) {
    uint64_t one = 1;
    while (write(fd, &one, sizeof one) < 0 && errno == EINTR) {}
}

void signet_eventfd_drain(int fd) {
    uint64_t count;
    while (read(fd, &count, sizeof count) < 0 && errno == EINTR) {}
}
