/*
 * db-sqlite.h: the one door through the store's seam, for the unit tests
 * only: they read and change a store's SQLite file behind its back.  No
 * file of lib/ outside the seam (lib/store*, lib/db*) includes it.
 */
#ifndef SAOP_DB_SQLITE_H
#define SAOP_DB_SQLITE_H

#include <sqlite3.h>

struct saop_store;

/* The SQLite handle of s, or NULL when s is not connected or not on
 * SQLite (lib/db-sqlite.c). */
sqlite3 *saop__store_db(struct saop_store *s);

#endif /* SAOP_DB_SQLITE_H */
