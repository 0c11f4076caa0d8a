/*
 * db-sqlite.c: the SQLite backend of the storage seam (lib/db.h): one
 * file, made 0600 in a 0700 directory, WAL mode, BEGIN IMMEDIATE, the
 * schema version in PRAGMA user_version.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db.h"
#include "db-sqlite.h"

#define BUSY_TIMEOUT_MS	5000
#define CACHE		24	/* prepared statements kept per connection */
/*
 * While a durable transaction is stored, the WAL is checkpointed after
 * CKPT_KIB instead of 1000 pages (4 MB): each checkpoint syncs the WAL
 * and the database, so with the default every prune batch (a commit of
 * megabytes) was followed by a checkpoint and synced three times instead
 * of once.  Durability does not change: a commit syncs the WAL
 * (synchronous=FULL) either way.
 */
#define CKPT_KIB	((long long)64 << 10)

struct lite {
	struct saop__db base;
	sqlite3 *h;
	int last;		/* the last failing result code */
	long long ckpt;		/* wal_autocheckpoint to put back, or -1 */
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} cache[CACHE];
	int next;		/* the cache slot to reuse next */
};

/* The messages of the faults of a database a user can fix (the path). */
#define NOT_SQLITE "%s is not a saop state database (it is not SQLite); " \
	"move it away, or give another path with --db or SAOP_DB"
#define READ_ONLY "cannot write %s: read-only%s%s; make %s writable " \
	"(chmod u+w), or give another state database with --db or SAOP_DB"

/*
 * Fill e with code: "cannot write PATH: read-only", naming the directory
 * instead when the file is writable or missing (SQLite's WAL makes files
 * beside it).  Returns -code.
 */
static int
read_only(struct saop_err *e, int code, const char *path, int why)
{
	char dir[512];
	const char *slash = strrchr(path, '/');

	if (access(path, F_OK) == 0 && access(path, W_OK) != 0)
		return saop__fail(e, code, why, READ_ONLY, path, "", "", path);
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 :
		    (int)(slash - path), path);
	return saop__fail(e, code, why, READ_ONLY, path, " directory ", dir,
	    dir);
}

/*
 * Say why path could not be opened (why: the errno of open(2) or
 * access(2)) in words that name the way on: a directory, a read-only file
 * or directory.  Returns -SAOP_EIO with e filled.
 */
static int
open_failed(const char *path, int why, struct saop_err *e)
{
	if (why == EISDIR)
		return saop__fail(e, SAOP_EIO, why, "%s is a directory, not "
		    "a saop state database; give the database file's path "
		    "(e.g. --db %s/state.sqlite)", path, path);
	if (why != EACCES && why != EROFS && why != EPERM)
		return saop__fail(e, SAOP_EIO, why, "cannot open the state "
		    "database %s: %s", path, strerror(why));
	return read_only(e, SAOP_EIO, path, why);
}

/*
 * Fill e with SAOP_EDB: "state database: what: SQLite's message", or for
 * the faults a user can fix (not SQLite, read-only) words that say how.
 * Returns -SAOP_EDB.
 */
static int
fail(struct lite *l, const char *what, struct saop_err *e)
{
	const char *path = sqlite3_db_filename(l->h, "main");

	l->last = sqlite3_extended_errcode(l->h);
	if (path != NULL && *path != '\0' && (l->last & 0xff) == SQLITE_NOTADB)
		return saop__fail(e, SAOP_EDB, 0, NOT_SQLITE, path);
	if (path != NULL && *path != '\0' && (l->last & 0xff) ==
	    SQLITE_READONLY)
		return read_only(e, SAOP_EDB, path, 0);
	return saop__fail(e, SAOP_EDB, 0, "state database: %s: %s", what,
	    sqlite3_errmsg(l->h));
}

/*
 * Make the directory that will hold path, mode 0700, if it is missing.
 * Returns 0, or -SAOP_ENOMEM or -SAOP_EIO with e filled.
 */
static int
make_parent(const char *path, struct saop_err *e)
{
	char *dir, *slash;
	int rc = 0;

	if ((dir = strdup(path)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			int why = errno;

			if (why == ENOENT)
				rc = saop__fail(e, SAOP_EIO, why, "cannot create "
				    "the state database %s: the directory above "
				    "%s does not exist; make it (mkdir -p), or "
				    "give another path with --db or SAOP_DB",
				    path, dir);
			else if (why == EACCES || why == EROFS)
				rc = read_only(e, SAOP_EIO, dir, why);
			else
				rc = saop__fail(e, SAOP_EIO, why, "cannot "
				    "create the directory %s of the state "
				    "database: %s", dir, strerror(why));
		}
	}
	free(dir);
	return rc;
}

/* 1 when the SQLite result code rc (extended or not) is BUSY or LOCKED. */
static int
busy(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* Close the connection of db (a struct lite) and free it. */
static void
lite_close(struct saop__db *db)
{
	struct lite *l = (struct lite *)db;
	int i;

	for (i = 0; i < CACHE; i++)
		sqlite3_finalize(l->cache[i].st);
	sqlite3_close(l->h);
	free(l);
}

/*
 * Open the file at path (see db.h): its directory (0700) and the file
 * (0600) made when missing, WAL mode, a busy timeout.  Returns 0 with
 * *db new, or -SAOP_EDB / -SAOP_EIO / -SAOP_ENOMEM with e filled.
 */
static int
lite_open(const char *path, struct saop__db **db, struct saop_err *e)
{
	struct timespec pause = { 0, 20000000L };
	struct stat st;
	struct lite *l;
	int tries, rc;

	if ((rc = make_parent(path, e)) != 0)
		return rc;	/* -SAOP_ENOMEM too, as e says */
	/* No symbolic link is followed, nobody else's file used. */
	if ((rc = saop__store_check_dir(path, e)) != 0)
		return rc;
	if (lstat(path, &st) == 0 && (S_ISLNK(st.st_mode) ||
	    (S_ISREG(st.st_mode) && st.st_uid != geteuid()))) {
		if (S_ISLNK(st.st_mode))
			return saop__store_open_failed("state database", path,
			    ELOOP, e);
		return saop__fail(e, SAOP_EIO, 0, "state database: %s belongs "
		    "to uid %ld, not to you (uid %ld): refused", path,
		    (long)st.st_uid, (long)geteuid());
	}
	if ((rc = saop__store_check_companions(path, e)) != 0)
		return rc;
	/*
	 * Create a missing file ourselves so that it is 0600 from the start.
	 * An existing one is not opened here: closing a descriptor of it
	 * would drop the POSIX locks another connection of this process
	 * holds on it (the lease renewer's, say), and another process could
	 * then checkpoint and delete the WAL under it.
	 */
	if (access(path, F_OK) != 0) {
		int fd;

		if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		    0600)) == -1)
			return open_failed(path, errno, e);
		close(fd);
	} else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		return open_failed(path, EISDIR, e);
	} else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		return saop__fail(e, SAOP_EDB, 0, "%s is not a saop state "
		    "database (it is not a regular file); give another path "
		    "with --db or SAOP_DB", path);
	} else if (access(path, R_OK) != 0)
		/* A read-only file may still serve reads (--get). */
		return open_failed(path, errno, e);
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
	l->base.be = &saop__db_sqlite;
	l->ckpt = -1;
	if (sqlite3_open_v2(path, &l->h, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW,
	    NULL) != SQLITE_OK) {
		rc = saop__fail(e, SAOP_EDB, 0,
		    "state database: cannot open %s: %s", path,
		    l->h ? sqlite3_errmsg(l->h) : "out of memory");
		lite_close(&l->base);
		return rc;
	}
	sqlite3_busy_timeout(l->h, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(l->h, 1);
	for (tries = 0; tries < 50; tries++) {
		rc = sqlite3_exec(l->h, "PRAGMA journal_mode=WAL", NULL, NULL,
		    NULL);
		if (rc == SQLITE_OK || !busy(rc))
			break;
		nanosleep(&pause, NULL);
	}
	if (rc != SQLITE_OK) {
		rc = fail(l, "setting WAL mode", e);
		lite_close(&l->base);
		return rc;
	}
	sqlite3_exec(l->h, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON",
	    NULL, NULL, NULL);
	*db = &l->base;
	return 0;
}

/* Run sql (no parameters, no rows).  Returns 0 or -SAOP_EDB. */
static int
exec(struct lite *l, const char *sql, const char *what, struct saop_err *e)
{
	if (sqlite3_exec(l->h, sql, NULL, NULL, NULL) != SQLITE_OK)
		return fail(l, what, e);
	return 0;
}

/* BEGIN IMMEDIATE: the write lock now, or BUSY.  Returns 0 or -SAOP_EDB. */
static int
lite_begin(struct saop__db *db, struct saop_err *e)
{
	return exec((struct lite *)db, "BEGIN IMMEDIATE", "begin", e);
}

/* COMMIT.  Returns 0 or -SAOP_EDB. */
static int
lite_commit(struct saop__db *db, struct saop_err *e)
{
	return exec((struct lite *)db, "COMMIT", "commit", e);
}

/* ROLLBACK, whatever state the transaction is in. */
static void
lite_rollback(struct saop__db *db)
{
	sqlite3_exec(((struct lite *)db)->h, "ROLLBACK", NULL, NULL, NULL);
}

/* 1 when the last failure was BUSY or LOCKED (worth another try). */
static int
lite_retry(struct saop__db *db)
{
	return busy(((struct lite *)db)->last);
}

/*
 * The prepared statement of sql, from the cache (the SQL of db.c is
 * mostly static text: its address, then its text, is the key) or
 * prepared now.  Returns it
 * (borrowed: owned by the cache), or NULL with e filled.
 */
static sqlite3_stmt *
prepare(struct lite *l, const char *sql, struct saop_err *e)
{
	sqlite3_stmt *st;
	int i;

	for (i = 0; i < CACHE; i++)
		if (l->cache[i].sql == sql && l->cache[i].st != NULL &&
		    strcmp(sqlite3_sql(l->cache[i].st), sql) == 0)
			return l->cache[i].st;
	if (sqlite3_prepare_v3(l->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &st,
	    NULL) != SQLITE_OK) {
		fail(l, "preparing a query", e);
		return NULL;
	}
	/* Never evict a statement still stepping (a row callback's caller's). */
	for (i = l->next; l->cache[i].st != NULL &&
	    sqlite3_stmt_busy(l->cache[i].st); i = (i + 1) % CACHE)
		if ((i + 1) % CACHE == l->next) {
			sqlite3_finalize(st);
			saop__fail(e, SAOP_EINTERNAL, 0,
			    "state database: %d queries at once", CACHE);
			return NULL;
		}
	l->next = (i + 1) % CACHE;
	sqlite3_finalize(l->cache[i].st);
	l->cache[i].sql = sql;
	l->cache[i].st = st;
	return st;
}

/* Bind the n values of p to st.  Returns SQLITE_OK or SQLite's code. */
static int
bind(sqlite3_stmt *st, const struct saop__db_val *p, int n)
{
	int i, rc = SQLITE_OK;

	for (i = 0; i < n && rc == SQLITE_OK; i++)
		switch (p[i].type) {
		case SAOP__DB_NULL:
			rc = sqlite3_bind_null(st, i + 1);
			break;
		case SAOP__DB_INT:
			rc = sqlite3_bind_int64(st, i + 1, p[i].i);
			break;
		case SAOP__DB_TEXT:
			rc = sqlite3_bind_text64(st, i + 1, p[i].p, p[i].n,
			    SQLITE_STATIC, SQLITE_UTF8);
			break;
		case SAOP__DB_BLOB:
			rc = sqlite3_bind_blob64(st, i + 1, p[i].p, p[i].n,
			    SQLITE_STATIC);
			break;
		}
	return rc;
}

#define MAX_COLS	16

/* Read the current row of st into v (at most MAX_COLS columns); returns
 * the number of columns read. */
static int
read_row(sqlite3_stmt *st, struct saop__db_val *v)
{
	int i, n = sqlite3_column_count(st);

	if (n > MAX_COLS)
		n = MAX_COLS;
	for (i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		switch (sqlite3_column_type(st, i)) {
		case SQLITE_INTEGER:
		case SQLITE_FLOAT:
			v[i].type = SAOP__DB_INT;
			v[i].i = sqlite3_column_int64(st, i);
			break;
		case SQLITE_TEXT:
			v[i].type = SAOP__DB_TEXT;
			v[i].p = (const char *)sqlite3_column_text(st, i);
			v[i].n = (size_t)sqlite3_column_bytes(st, i);
			break;
		case SQLITE_BLOB:
			v[i].type = SAOP__DB_BLOB;
			v[i].p = sqlite3_column_blob(st, i);
			v[i].n = (size_t)sqlite3_column_bytes(st, i);
			if (v[i].p == NULL)
				v[i].p = "";
			break;
		default:
			v[i].type = SAOP__DB_NULL;
		}
	}
	return n;
}

/* Run sql with p bound, rows to row() (see db.h).  Returns 0, row's
 * non-zero return, or -SAOP_EDB. */
static int
lite_run(struct saop__db *db, const char *sql, const struct saop__db_val *p,
    int np, int (*row)(void *arg, const struct saop__db_row *r), void *arg,
    long long *changes, struct saop_err *e)
{
	struct lite *l = (struct lite *)db;
	struct saop__db_val v[MAX_COLS];
	struct saop__db_row r = { 0, v };
	sqlite3_stmt *st;
	int rc, out = 0;

	if ((st = prepare(l, sql, e)) == NULL)
		return -SAOP_EDB;
	if (bind(st, p, np) != SQLITE_OK) {
		sqlite3_reset(st);
		return fail(l, "binding a value", e);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (row == NULL)
			continue;
		r.n = read_row(st, v);
		if ((out = row(arg, &r)) != 0)
			break;
	}
	if (out == 0 && rc != SQLITE_DONE)
		out = fail(l, "a statement", e);
	else if (changes != NULL)
		*changes = sqlite3_changes(l->h);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return out;
}

/*
 * Write raw_content of tool_outputs row id to put() in 64 KiB pieces
 * (incremental blob I/O: memory stays flat however large).  Returns 0, 1
 * when there is no such row, put()'s negative code, or -SAOP_EDB.
 */
static int
lite_read_blob(struct saop__db *db, long long id,
    int (*put)(void *arg, const void *p, size_t n), void *arg,
    struct saop_err *e)
{
	struct lite *l = (struct lite *)db;
	sqlite3_blob *blob;
	char buf[65536];
	int size, at, n, rc;

	rc = sqlite3_blob_open(l->h, "main", "tool_outputs", "raw_content",
	    (sqlite3_int64)id, 0, &blob);
	if (rc != SQLITE_OK) {
		if (rc == SQLITE_ERROR &&
		    strstr(sqlite3_errmsg(l->h), "no such rowid") != NULL)
			return 1;
		/* A database without the table yet has no rows either. */
		if (rc == SQLITE_ERROR &&
		    strstr(sqlite3_errmsg(l->h), "no such table") != NULL)
			return 1;
		return fail(l, "reading a tool output", e);
	}
	size = sqlite3_blob_bytes(blob);
	for (at = 0, rc = 0; at < size && rc == 0; at += n) {
		n = size - at < (int)sizeof(buf) ? size - at : (int)sizeof(buf);
		if (sqlite3_blob_read(blob, buf, n, at) != SQLITE_OK)
			rc = fail(l, "reading a tool output", e);
		else
			rc = put(arg, buf, (size_t)n);
	}
	sqlite3_blob_close(blob);
	return rc;
}

/* The schema version (PRAGMA user_version).  Returns it, or -SAOP_EDB. */
static int
lite_version(struct saop__db *db, struct saop_err *e)
{
	struct lite *l = (struct lite *)db;
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_prepare_v2(l->h, "PRAGMA user_version", -1, &st, NULL) !=
	    SQLITE_OK)
		return fail(l, "reading the schema version", e);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (v < 0)
		return fail(l, "reading the schema version", e);
	return v;
}

/* Set PRAGMA user_version to v.  Returns 0 or -SAOP_EDB. */
static int
lite_set_version(struct saop__db *db, int v, const char *name,
    struct saop_err *e)
{
	char sql[64];

	(void)name;
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", v);
	return exec((struct lite *)db, sql, "setting the schema version", e);
}

/* No lock needed: migrations run in BEGIN IMMEDIATE transactions, and
 * each reads the version again inside.  Returns 0. */
static int
lite_lock_schema(struct saop__db *db, struct saop_err *e)
{
	(void)db;
	(void)e;
	return 0;
}

/* Nothing to release (see lite_lock_schema()). */
static void
lite_unlock_schema(struct saop__db *db)
{
	(void)db;
}

/* SQLite's write transaction already excludes every other writer: no lock
 * to take.  Returns 0. */
static int
lite_lock_key(struct saop__db *db, const char *key, struct saop_err *e)
{
	(void)db;
	(void)key;
	(void)e;
	return 0;
}

/* One integer PRAGMA of l, or -1. */
static long long
pragma_int(struct lite *l, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_prepare_v2(l->h, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* With on set, synchronous=FULL and the WAL checkpointed after CKPT_KIB;
 * else both put back. */
static void
lite_durable(struct saop__db *db, int on)
{
	struct lite *l = (struct lite *)db;
	long long page, have, want;

	if (!on) {
		sqlite3_exec(l->h, "PRAGMA synchronous=NORMAL", NULL, NULL,
		    NULL);
		if (l->ckpt > 0)
			sqlite3_wal_autocheckpoint(l->h, (int)l->ckpt);
		l->ckpt = -1;
		return;
	}
	sqlite3_exec(l->h, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
	page = pragma_int(l, "PRAGMA page_size");
	have = pragma_int(l, "PRAGMA wal_autocheckpoint");
	if (page <= 0 || have <= 0)
		return;
	want = CKPT_KIB * 1024 / page;
	if (have < want && sqlite3_wal_autocheckpoint(l->h, (int)want) ==
	    SQLITE_OK)
		l->ckpt = have;
}

/* Run a script of several statements (a migration).  Returns 0 or
 * -SAOP_EDB. */
static int
lite_script(struct saop__db *db, const char *sql, struct saop_err *e)
{
	return exec((struct lite *)db, sql, "migration", e);
}

/*
 * A SQLite file is never lost, but a connection left inside a transaction
 * it could not end (its ROLLBACK failed too: out of memory) is as good as
 * lost: it holds the write lock and would take the next statement into
 * the stale transaction.  Closing it rolls the transaction back.  Returns
 * 1 for such a connection, else 0.
 */
static int
lite_lost(struct saop__db *db)
{
	return !sqlite3_get_autocommit(((struct lite *)db)->h);
}

/* See saop-private.h (the unit tests' look at the file). */
sqlite3 *
saop__store_db(struct saop_store *s)
{
	struct saop__db *db;

	if (saop__store_conn(s, &db, NULL) != 0 || db->be != &saop__db_sqlite)
		return NULL;
	return ((struct lite *)db)->h;
}

const struct saop__db_backend saop__db_sqlite = {
	"sqlite", SAOP__DB_SQLITE, lite_open, lite_close, lite_begin,
	lite_commit, lite_rollback, lite_run, lite_retry, lite_read_blob,
	lite_version, lite_set_version, lite_lock_schema, lite_unlock_schema,
	lite_lock_key, lite_durable, lite_script, lite_lost
};
