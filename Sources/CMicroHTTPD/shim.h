#ifndef SIGNET_CMICROHTTPD_SHIM_H
#define SIGNET_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
#endif
