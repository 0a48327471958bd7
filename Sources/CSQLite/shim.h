#ifndef SIGNET_CSQLITE_SHIM_H
#define SIGNET_CSQLITE_SHIM_H
#include <sqlite3.h>
/* SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import. */
static inline sqlite3_destructor_type signet_sqlite_transient(void) { return SQLITE_TRANSIENT; }
/* sqlite3_config is variadic, which Swift cannot call: memory statistics off. */
static inline int signet_sqlite_memstatus_off(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }
/* sqlite3_db_config is variadic too: a connection that leaves the WAL as it is when it closes. */
static inline int signet_sqlite_no_checkpoint_on_close(sqlite3 *db) { return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0); }
#endif
