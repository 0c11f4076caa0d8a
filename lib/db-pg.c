/*
 * db-pg.c: the PostgreSQL backend of the storage seam (lib/db.h), over
 * libpq loaded with dlopen() the first time a postgres:// URI is opened:
 * a program on SQLite never maps it.  The target is handed to libpq as it
 * is, so everything libpq reads (the URI, PG* variables, ~/.pgpass,
 * service files) works; messages show it with its password masked.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>

#include <libpq-fe.h>

#include "db.h"

#define BYTEA_OID	17
#define MAX_PARAMS	16
/* The classid of saop's advisory locks ("saop" in ASCII, 0x73616f70
 * would not fit an int4 comfortably: its low bits). */
#define LOCK_CLASS	7312
#define LOCK_SCHEMA	0

/* ---- libpq, loaded on first use ---- */

struct pq_fns {
	PGconn *(*connectdb_params)(const char *const *, const char *const *,
	    int);
	ConnStatusType (*status)(const PGconn *);
	char *(*error_message)(const PGconn *);
	void (*finish)(PGconn *);
	PGresult *(*exec)(PGconn *, const char *);
	PGresult *(*exec_params)(PGconn *, const char *, int, const Oid *,
	    const char *const *, const int *, const int *, int);
	ExecStatusType (*result_status)(const PGresult *);
	char *(*result_error_field)(const PGresult *, int);
	char *(*result_error_message)(const PGresult *);
	void (*clear)(PGresult *);
	int (*ntuples)(const PGresult *);
	int (*nfields)(const PGresult *);
	char *(*getvalue)(const PGresult *, int, int);
	int (*getlength)(const PGresult *, int, int);
	int (*getisnull)(const PGresult *, int, int);
	Oid (*ftype)(const PGresult *, int);
	char *(*cmd_tuples)(PGresult *);
	char *(*cmd_status)(PGresult *);
	unsigned char *(*unescape_bytea)(const unsigned char *, size_t *);
	void (*freemem)(void *);
	PQnoticeProcessor (*set_notice_processor)(PGconn *, PQnoticeProcessor,
	    void *);
};
static struct pq_fns P;

static const struct {
	const char *name;
	size_t off;
} pq_syms[] = {
	{ "PQconnectdbParams", offsetof(struct pq_fns, connectdb_params) },
	{ "PQstatus", offsetof(struct pq_fns, status) },
	{ "PQerrorMessage", offsetof(struct pq_fns, error_message) },
	{ "PQfinish", offsetof(struct pq_fns, finish) },
	{ "PQexec", offsetof(struct pq_fns, exec) },
	{ "PQexecParams", offsetof(struct pq_fns, exec_params) },
	{ "PQresultStatus", offsetof(struct pq_fns, result_status) },
	{ "PQresultErrorField", offsetof(struct pq_fns, result_error_field) },
	{ "PQresultErrorMessage",
	    offsetof(struct pq_fns, result_error_message) },
	{ "PQclear", offsetof(struct pq_fns, clear) },
	{ "PQntuples", offsetof(struct pq_fns, ntuples) },
	{ "PQnfields", offsetof(struct pq_fns, nfields) },
	{ "PQgetvalue", offsetof(struct pq_fns, getvalue) },
	{ "PQgetlength", offsetof(struct pq_fns, getlength) },
	{ "PQgetisnull", offsetof(struct pq_fns, getisnull) },
	{ "PQftype", offsetof(struct pq_fns, ftype) },
	{ "PQcmdTuples", offsetof(struct pq_fns, cmd_tuples) },
	{ "PQcmdStatus", offsetof(struct pq_fns, cmd_status) },
	{ "PQunescapeBytea", offsetof(struct pq_fns, unescape_bytea) },
	{ "PQfreemem", offsetof(struct pq_fns, freemem) },
	{ "PQsetNoticeProcessor",
	    offsetof(struct pq_fns, set_notice_processor) },
};

static pthread_once_t pq_once = PTHREAD_ONCE_INIT;
static char pq_init_err[256];	/* why libpq is not usable, or "" */

/*
 * Load libpq and look up the functions in P; run once (pthread_once).
 * Returns nothing: on failure pq_init_err says why.
 */
static void
pq_init(void)
{
	void *h, *f;
	size_t i;

	if ((h = dlopen(SAOP_LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		const char *why = dlerror();

		snprintf(pq_init_err, sizeof(pq_init_err),
		    "cannot load libpq (apt-get install libpq5): %s",
		    why != NULL ? why : SAOP_LIBPQ_SONAME);
		return;
	}
	for (i = 0; i < sizeof(pq_syms) / sizeof(pq_syms[0]); i++) {
		if ((f = dlsym(h, pq_syms[i].name)) == NULL) {
			snprintf(pq_init_err, sizeof(pq_init_err),
			    "%s: no %s", SAOP_LIBPQ_SONAME, pq_syms[i].name);
			return;
		}
		/* POSIX: a function pointer is as wide as void *. */
		memcpy((char *)&P + pq_syms[i].off, &f, sizeof(f));
	}
}

/* ---- a connection ---- */

struct pg {
	struct saop__db base;
	PGconn *c;
	char *shown;		/* the target, password masked */
	int retry;		/* the last failure was transient */
};

/* libpq's notices ("relation exists, skipping"...): the library never
 * prints, so they are dropped. */
static void
quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* Copy the first line of msg (libpq's messages end in a newline and may
 * go on with DETAIL lines that quote row values) to buf. */
static void
first_line(char *buf, size_t size, const char *msg)
{
	size_t n;

	if (msg == NULL)
		msg = "";
	n = strcspn(msg, "\n");
	snprintf(buf, size, "%.*s", (int)n, msg);
}

/* Disconnect db (a struct pg) and free it. */
static void
pg_close(struct saop__db *db)
{
	struct pg *g = (struct pg *)db;

	if (g->c != NULL)
		P.finish(g->c);
	free(g->shown);
	free(g);
}

/*
 * Connect to the URI target (see db.h): libpq reads it, the PG*
 * variables and ~/.pgpass; the client encoding is UTF-8 and the session
 * does not wait for its commits to reach the disk unless a transaction is
 * durable.  Returns 0 with *db new, or -SAOP_EDB / -SAOP_ENOMEM.
 */
static int
pg_open(const char *target, struct saop__db **db, struct saop_err *e)
{
	static const char *const keys[] = { "dbname", "client_encoding",
	    "fallback_application_name", NULL };
	const char *vals[4];
	struct pg *g;
	PGresult *r;

	pthread_once(&pq_once, pq_init);
	if (pq_init_err[0] != '\0')
		return saop__fail(e, SAOP_EDB, 0, "state database: %s",
		    pq_init_err);
	if ((g = calloc(1, sizeof(*g))) == NULL ||
	    (g->shown = saop__db_shown(target)) == NULL) {
		free(g);
		return saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
	}
	g->base.be = &saop__db_pg;
	vals[0] = target;
	vals[1] = "UTF8";
	vals[2] = "saop";
	vals[3] = NULL;
	g->c = P.connectdb_params(keys, vals, 1);
	if (g->c == NULL || P.status(g->c) != CONNECTION_OK) {
		char msg[512];
		int rc;

		first_line(msg, sizeof(msg), g->c ? P.error_message(g->c) :
		    "out of memory");
		rc = saop__fail(e, SAOP_EDB, 0,
		    "state database: cannot connect to %s: %s", g->shown, msg);
		pg_close(&g->base);
		return rc;
	}
	P.set_notice_processor(g->c, quiet, NULL);
	r = P.exec(g->c, "SET synchronous_commit = off");
	P.clear(r);
	*db = &g->base;
	return 0;
}

/*
 * Fill e from the failed result r (or the connection's message when r is
 * NULL), noting whether the failure is transient: a serialization
 * failure, a deadlock, a lock not available.  Returns -SAOP_EDB.
 */
static int
fail(struct pg *g, PGresult *r, const char *what, struct saop_err *e)
{
	const char *state = r ? P.result_error_field(r, PG_DIAG_SQLSTATE) :
	    NULL;
	char msg[512];

	g->retry = state != NULL && (strcmp(state, "40001") == 0 ||
	    strcmp(state, "40P01") == 0 || strcmp(state, "55P03") == 0);
	first_line(msg, sizeof(msg), r ? P.result_error_message(r) :
	    P.error_message(g->c));
	if (P.status(g->c) != CONNECTION_OK)
		return saop__fail(e, SAOP_EDB, 0,
		    "state database: connection to %s lost: %s", g->shown,
		    msg[0] ? msg : "no answer");
	return saop__fail(e, SAOP_EDB, 0, "state database: %s: %s", what,
	    msg);
}

/* Run sql (no parameters, no rows; several statements allowed).  Returns
 * 0 or -SAOP_EDB. */
static int
exec(struct pg *g, const char *sql, const char *what, struct saop_err *e)
{
	PGresult *r = P.exec(g->c, sql);
	int rc = 0;

	if (r == NULL || (P.result_status(r) != PGRES_COMMAND_OK &&
	    P.result_status(r) != PGRES_TUPLES_OK))
		rc = fail(g, r, what, e);
	P.clear(r);
	return rc;
}

/* BEGIN (read committed).  Returns 0 or -SAOP_EDB. */
static int
pg_begin(struct saop__db *db, struct saop_err *e)
{
	return exec((struct pg *)db, "BEGIN", "begin", e);
}

/* COMMIT: a failed one (a serialization failure at commit) is an error. */
static int
pg_commit(struct saop__db *db, struct saop_err *e)
{
	struct pg *g = (struct pg *)db;
	PGresult *r = P.exec(g->c, "COMMIT");
	int rc = 0;

	/* A COMMIT of a failed transaction answers ROLLBACK, not an error. */
	if (r == NULL || P.result_status(r) != PGRES_COMMAND_OK)
		rc = fail(g, r, "commit", e);
	else if (strcmp(P.cmd_status(r), "ROLLBACK") == 0)
		rc = saop__fail(e, SAOP_EDB, 0, "state database: commit: "
		    "the transaction was rolled back");
	P.clear(r);
	return rc;
}

/* ROLLBACK, whatever state the transaction is in. */
static void
pg_rollback(struct saop__db *db)
{
	struct pg *g = (struct pg *)db;

	if (P.status(g->c) == CONNECTION_OK)
		P.clear(P.exec(g->c, "ROLLBACK"));
}

/* 1 when the last failure was transient. */
static int
pg_retry(struct saop__db *db)
{
	return ((struct pg *)db)->retry;
}

/*
 * sql with SQLite's ?N placeholders turned into PostgreSQL's $N (outside
 * quoted text).  Returns a new string (free()), or NULL out of memory.
 */
static char *
dollars(const char *sql)
{
	char *s = strdup(sql), *q;
	int quoted = 0;

	if (s == NULL)
		return NULL;
	for (q = s; *q != '\0'; q++) {
		if (*q == '\'')
			quoted = !quoted;
		else if (*q == '?' && !quoted && q[1] >= '0' && q[1] <= '9')
			*q = '$';
	}
	return s;
}

/*
 * Call row() for each row of r (text format: integers stay text, which
 * saop__db_col_int() reads; a bytea is decoded by libpq).  Returns 0, row's
 * non-zero return, or -SAOP_ENOMEM.
 */
static int
each_row(PGresult *r, int (*row)(void *arg, const struct saop__db_row *r),
    void *arg, struct saop_err *e)
{
	struct saop__db_val v[MAX_PARAMS];
	unsigned char *dec[MAX_PARAMS];
	struct saop__db_row w = { 0, v };
	int i, j, n = P.nfields(r), out = 0;

	if (n > MAX_PARAMS)
		n = MAX_PARAMS;
	w.n = n;
	for (i = 0; i < P.ntuples(r) && out == 0; i++) {
		memset(dec, 0, sizeof(dec));
		for (j = 0; j < n; j++) {
			memset(&v[j], 0, sizeof(v[j]));
			if (P.getisnull(r, i, j)) {
				v[j].type = SAOP__DB_NULL;
				continue;
			}
			v[j].type = SAOP__DB_TEXT;
			v[j].p = P.getvalue(r, i, j);
			v[j].n = (size_t)P.getlength(r, i, j);
			if (P.ftype(r, j) == BYTEA_OID) {
				v[j].type = SAOP__DB_BLOB;
				if ((dec[j] = P.unescape_bytea((const unsigned
				    char *)v[j].p, &v[j].n)) == NULL)
					out = saop__fail(e, SAOP_ENOMEM, 0,
					    "state database: a bytea value");
				v[j].p = (const char *)dec[j];
			}
		}
		if (out == 0)
			out = row(arg, &w);
		for (j = 0; j < n; j++)
			if (dec[j] != NULL)
				P.freemem(dec[j]);
	}
	return out;
}

/* Run sql with p bound, rows to row() (see db.h).  Returns 0, row's
 * non-zero return, or a negative code. */
static int
pg_run(struct saop__db *db, const char *sql, const struct saop__db_val *p,
    int np, int (*row)(void *arg, const struct saop__db_row *r), void *arg,
    long long *changes, struct saop_err *e)
{
	struct pg *g = (struct pg *)db;
	const char *vals[MAX_PARAMS];
	char nums[MAX_PARAMS][24];
	int lens[MAX_PARAMS], fmts[MAX_PARAMS];
	Oid types[MAX_PARAMS];
	PGresult *r;
	char *q;
	int i, out;

	if (np > MAX_PARAMS)
		return saop__fail(e, SAOP_EINTERNAL, 0, "%d parameters", np);
	for (i = 0; i < np; i++) {
		types[i] = 0;
		fmts[i] = 0;
		lens[i] = 0;
		switch (p[i].type) {
		case SAOP__DB_NULL:
			vals[i] = NULL;
			break;
		case SAOP__DB_INT:
			snprintf(nums[i], sizeof(nums[i]), "%lld", p[i].i);
			vals[i] = nums[i];
			break;
		case SAOP__DB_TEXT:
			vals[i] = p[i].p;
			break;
		case SAOP__DB_BLOB:
			/* Bytes as they are: the binary format of bytea. */
			vals[i] = p[i].n > 0 ? p[i].p : "";
			lens[i] = (int)p[i].n;
			fmts[i] = 1;
			types[i] = BYTEA_OID;
			break;
		}
	}
	if ((q = dollars(sql)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
	g->retry = 0;
	r = P.exec_params(g->c, q, np, types, vals, lens, fmts, 0);
	free(q);
	if (r == NULL || (P.result_status(r) != PGRES_COMMAND_OK &&
	    P.result_status(r) != PGRES_TUPLES_OK)) {
		out = fail(g, r, "query", e);
		P.clear(r);
		return out;
	}
	if (changes != NULL)
		*changes = strtoll(P.cmd_tuples(r), NULL, 10);
	out = row != NULL ? each_row(r, row, arg, e) : 0;
	P.clear(r);
	return out;
}

/*
 * Write raw_content of tool_outputs row id to put(), in the binary format
 * (the bytes as they are).  Returns 0, 1 when there is no such row,
 * put()'s negative code, or -SAOP_EDB.
 */
static int
pg_read_blob(struct saop__db *db, long long id,
    int (*put)(void *arg, const void *p, size_t n), void *arg,
    struct saop_err *e)
{
	struct pg *g = (struct pg *)db;
	const char *vals[1];
	char num[24];
	PGresult *r;
	int rc;

	snprintf(num, sizeof(num), "%lld", id);
	vals[0] = num;
	r = P.exec_params(g->c, "SELECT raw_content FROM tool_outputs"
	    " WHERE id = $1", 1, NULL, vals, NULL, NULL, 1);
	if (r == NULL || P.result_status(r) != PGRES_TUPLES_OK) {
		rc = fail(g, r, "reading a tool output", e);
		P.clear(r);
		return rc;
	}
	if (P.ntuples(r) == 0)
		rc = 1;
	else
		rc = put(arg, P.getvalue(r, 0, 0),
		    (size_t)P.getlength(r, 0, 0));
	P.clear(r);
	return rc;
}

/* Row of the version query: keep the number in the int arg. */
static int
version_row(void *arg, const struct saop__db_row *r)
{
	*(int *)arg = (int)saop__db_col_int(r, 0);
	return 0;
}

/* The applied schema version: the highest of saop_schema_version (0 while
 * it does not exist).  Returns it, or -SAOP_EDB. */
static int
pg_version(struct saop__db *db, struct saop_err *e)
{
	int v = -1, rc;

	rc = pg_run(db, "SELECT CASE WHEN to_regclass('saop_schema_version')"
	    " IS NULL THEN 1 ELSE 0 END", NULL, 0, version_row, &v, NULL, e);
	if (rc != 0)
		return rc;
	if (v == 1)
		return 0;
	rc = pg_run(db, "SELECT coalesce(max(version), 0)"
	    " FROM saop_schema_version", NULL, 0, version_row, &v, NULL, e);
	return rc != 0 ? rc : v;
}

/* Record migration v (name) as applied.  Returns 0 or -SAOP_EDB. */
static int
pg_set_version(struct saop__db *db, int v, const char *name,
    struct saop_err *e)
{
	struct saop__db_val p[3];
	char now[32];
	int rc;

	if ((rc = exec((struct pg *)db, "CREATE TABLE IF NOT EXISTS"
	    " saop_schema_version (version INTEGER PRIMARY KEY,"
	    " name TEXT NOT NULL, applied_at TEXT NOT NULL)",
	    "recording the schema version", e)) != 0)
		return rc;
	saop_now_iso8601(now);
	p[0] = saop__db_int(v);
	p[1] = saop__db_text(name);
	p[2] = saop__db_text(now);
	return pg_run(db, "INSERT INTO saop_schema_version (version, name,"
	    " applied_at) VALUES (?1, ?2, ?3)", p, 3, NULL, NULL, NULL, e);
}

/* Take the session's advisory lock on the schema: two processes starting
 * on an empty database migrate it once.  Returns 0 or -SAOP_EDB. */
static int
pg_lock_schema(struct saop__db *db, struct saop_err *e)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "SELECT pg_advisory_lock(%d, %d)",
	    LOCK_CLASS, LOCK_SCHEMA);
	return exec((struct pg *)db, sql, "locking the schema", e);
}

/* Release the schema lock (a lost connection released it already). */
static void
pg_unlock_schema(struct saop__db *db)
{
	struct pg *g = (struct pg *)db;
	char sql[64];

	snprintf(sql, sizeof(sql), "SELECT pg_advisory_unlock(%d, %d)",
	    LOCK_CLASS, LOCK_SCHEMA);
	if (P.status(g->c) == CONNECTION_OK)
		P.clear(P.exec(g->c, sql));
}

/* Lock key until the transaction ends (an advisory transaction lock on
 * its hash).  Returns 0 or -SAOP_EDB. */
static int
pg_lock_key(struct saop__db *db, const char *key, struct saop_err *e)
{
	struct saop__db_val p = saop__db_text(key ? key : "");

	return pg_run(db, "SELECT pg_advisory_xact_lock(7312, hashtext(?1))",
	    &p, 1, NULL, NULL, NULL, e);
}

/* With on set, commits wait for the server's disk (synchronous_commit). */
static void
pg_durable(struct saop__db *db, int on)
{
	struct pg *g = (struct pg *)db;

	if (P.status(g->c) == CONNECTION_OK)
		P.clear(P.exec(g->c, on ? "SET synchronous_commit = on" :
		    "SET synchronous_commit = off"));
}

/* Run a script of several statements (a migration).  Returns 0 or
 * -SAOP_EDB. */
static int
pg_script(struct saop__db *db, const char *sql, struct saop_err *e)
{
	return exec((struct pg *)db, sql, "migration", e);
}

/* 1 when db's connection is gone (the next use must connect again). */
static int
pg_lost(struct saop__db *db)
{
	return P.status(((struct pg *)db)->c) != CONNECTION_OK;
}

const struct saop__db_backend saop__db_pg = {
	"postgresql", SAOP__DB_PG, pg_open, pg_close, pg_begin, pg_commit,
	pg_rollback, pg_run, pg_retry, pg_read_blob, pg_version,
	pg_set_version, pg_lock_schema, pg_unlock_schema, pg_lock_key,
	pg_durable, pg_script, pg_lost
};
