#ifndef SIGNET_CMICROHTTPD_SHIM_H
#define SIGNET_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/* libmicrohttpd's start and info calls are variadic, which Swift cannot call: they are wrapped
 * here once, with every option spelled out. */
struct signet_mhd_settings {
    unsigned int threads;
    unsigned int connection_limit;
    unsigned int per_ip_limit;
    unsigned int idle_timeout_s;
    size_t memory_limit;
};

static inline struct MHD_Daemon *signet_mhd_start(const struct signet_mhd_settings *s, MHD_AccessHandlerCallback handler,
                                                  MHD_RequestCompletedCallback completed,
                                                  MHD_NotifyConnectionCallback notify, void *cls) {
    /* No listening socket of its own: connections arrive through signet_mhd_add (see
     * Acceptor.swift for why). */
    unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_SUPPRESS_DATE_NO_CLOCK
        | MHD_USE_NO_LISTEN_SOCKET;
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, cls,
                            MHD_OPTION_THREAD_POOL_SIZE, s->threads,
                            MHD_OPTION_CONNECTION_LIMIT, s->connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->per_ip_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, s->idle_timeout_s,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, s->memory_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, cls,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, cls,
                            MHD_OPTION_END);
}

/* Hands an accepted connection to the daemon's pool; libmicrohttpd closes it when it refuses it
 * (its connection or per-IP limit). */
static inline int signet_mhd_add(struct MHD_Daemon *d, int fd, const void *address, unsigned int length) {
    return MHD_add_connection(d, fd, (const struct sockaddr *)address, (socklen_t)length) == MHD_YES;
}

static inline int signet_mhd_connection_fd(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/* The client's IP address as text into buf (at least INET6_ADDRSTRLEN bytes). */
static inline void signet_mhd_client_ip(struct MHD_Connection *c, char *buf, socklen_t len) {
    buf[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr) return;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET) inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, len);
    else if (sa->sa_family == AF_INET6) inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, len);
}

static inline enum MHD_ResponseMemoryMode signet_mhd_must_copy(void) { return MHD_RESPMEM_MUST_COPY; }
static inline int signet_mhd_notify_started(enum MHD_ConnectionNotificationCode code) { return code == MHD_CONNECTION_NOTIFY_STARTED; }
static inline enum MHD_Result signet_mhd_yes(void) { return MHD_YES; }
static inline enum MHD_Result signet_mhd_no(void) { return MHD_NO; }
#endif
