#ifndef SIGNET_CPOSTGRES_SHIM_H
#define SIGNET_CPOSTGRES_SHIM_H
#include <libpq-fe.h>
#endif
