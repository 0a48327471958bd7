#ifndef SIGNET_CPOSTGRES_SHIM_H
#define SIGNET_CPOSTGRES_SHIM_H
#include <libpq-fe.h>
#include <postgres_ext.h>

/* Enum values and field codes as plain ints, so Swift needs no guesses about their import. */
static inline int signet_pq_connection_ok(const PGconn *c) { return PQstatus(c) == CONNECTION_OK; }
static inline int signet_pq_result_ok(const PGresult *r) {
    ExecStatusType s = PQresultStatus(r);
    return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}
static inline const char *signet_pq_sqlstate(const PGresult *r) { return PQresultErrorField(r, PG_DIAG_SQLSTATE); }
#endif
