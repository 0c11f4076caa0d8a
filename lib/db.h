/*
 * db.h: the storage seam, shared by lib/ only.  Every query of the state
 * database is an operation here (lib/db.c), run on a connection of one
 * backend: SQLite (lib/db-sqlite.c, a file) or PostgreSQL (lib/db-pg.c,
 * libpq loaded with dlopen() when a postgres:// URI is first used).  The
 * protocol files (prune.c, report.c, resume.c, suspend.c, validate.c)
 * call the operations and never learn which backend answers.
 */
#ifndef SAOP_DB_H
#define SAOP_DB_H

#include "saop-private.h"

/* A value bound to a statement, or read from a result row. */
enum saop__db_type {
	SAOP__DB_NULL, SAOP__DB_INT, SAOP__DB_TEXT, SAOP__DB_BLOB
};
struct saop__db_val {
	enum saop__db_type type;
	long long i;		/* SAOP__DB_INT */
	const char *p;		/* TEXT (NUL-terminated) and BLOB */
	size_t n;		/* bytes at p */
};

/* One result row: n values (borrowed: valid during the row callback). */
struct saop__db_row {
	int n;
	const struct saop__db_val *v;
};

/* The SQL dialect a connection speaks. */
enum saop__db_dialect { SAOP__DB_SQLITE, SAOP__DB_PG };

struct saop__db;

/*
 * A backend: what lib/db.c asks of it.  Every call returning int returns
 * 0 or a negative -SAOP_E code with e filled ("state database: ...", the
 * password never in it).
 *   open     connect to target (a path, or a URI); *db new
 *   close    disconnect and free; NULL is a no-op
 *   begin    start a write transaction (SQLite: BEGIN IMMEDIATE)
 *   commit, rollback
 *   run      run sql (placeholders ?1..?9, bound to p[0..np)) and call
 *            row(arg, r) for each result row; a non-zero return of row
 *            stops and is returned.  *changes (when not NULL): rows
 *            changed by an INSERT, UPDATE or DELETE
 *   retry    1 when the last failure was transient (SQLite BUSY or
 *            LOCKED, PostgreSQL serialization failure or deadlock): the
 *            whole transaction may run again
 *   read_blob write raw_content of tool_outputs row id to put(arg, p, n)
 *            in pieces; 1 when there is no such row
 *   version  the applied schema version (0: none), or a negative code
 *   set_version  record version v as applied (inside the transaction)
 *   lock_schema / unlock_schema  hold off other processes migrating
 *   lock_key take a lock on key until the transaction ends (PostgreSQL:
 *            an advisory lock; SQLite's write transaction holds them all)
 *   durable  with on set, commits are synced to disk before they return
 *   script   run a script of several statements, no parameters (a
 *            migration)
 *   lost     1 when the connection is gone, or left inside a transaction
 *            it could not end: the store closes it and connects again on
 *            its next use
 */
struct saop__db_backend {
	const char *name;
	enum saop__db_dialect dialect;
	int (*open)(const char *target, struct saop__db **db,
	    struct saop_err *e);
	void (*close)(struct saop__db *db);
	int (*begin)(struct saop__db *db, struct saop_err *e);
	int (*commit)(struct saop__db *db, struct saop_err *e);
	void (*rollback)(struct saop__db *db);
	int (*run)(struct saop__db *db, const char *sql,
	    const struct saop__db_val *p, int np,
	    int (*row)(void *arg, const struct saop__db_row *r), void *arg,
	    long long *changes, struct saop_err *e);
	int (*retry)(struct saop__db *db);
	int (*read_blob)(struct saop__db *db, long long id,
	    int (*put)(void *arg, const void *p, size_t n), void *arg,
	    struct saop_err *e);
	int (*version)(struct saop__db *db, struct saop_err *e);
	int (*set_version)(struct saop__db *db, int v, const char *name,
	    struct saop_err *e);
	int (*lock_schema)(struct saop__db *db, struct saop_err *e);
	void (*unlock_schema)(struct saop__db *db);
	int (*lock_key)(struct saop__db *db, const char *key,
	    struct saop_err *e);
	void (*durable)(struct saop__db *db, int on);
	int (*script)(struct saop__db *db, const char *sql,
	    struct saop_err *e);
	int (*lost)(struct saop__db *db);
};

/* Every connection starts with its backend. */
struct saop__db {
	const struct saop__db_backend *be;
};

extern const struct saop__db_backend saop__db_sqlite;
extern const struct saop__db_backend saop__db_pg;
/* The PostgreSQL migrations (migrations/postgresql/), NULL-ended. */
extern const struct saop__blob saop__migrations_pg[];

/*
 * ---- lib/db.c: choosing a backend, showing a target ----
 */

/* 1 when target names a PostgreSQL database (postgres:// or postgresql://,
 * or libpq's "key=value" form starting with "host=", "dbname=", etc.). */
int saop__db_is_pg(const char *target);
/*
 * target as messages may show it: the password of a URI or of a
 * "password=" keyword replaced by "***".  Returns a new string (free()),
 * or NULL out of memory.
 */
char *saop__db_shown(const char *target);
/* Connect to target with the backend it names.  Returns 0 or -SAOP_E. */
int saop__db_open(const char *target, struct saop__db **db,
    struct saop_err *e);
/* Disconnect; NULL is a no-op. */
void saop__db_close(struct saop__db *db);
/* The migrations of db's dialect, NULL-ended. */
const struct saop__blob *saop__db_migrations(const struct saop__db *db);

/* Value makers for the p[] of a run. */
struct saop__db_val saop__db_int(long long i);
struct saop__db_val saop__db_text(const char *s);	/* NULL: NULL */
struct saop__db_val saop__db_blob(const void *p, size_t n);
/* Column i of r: as an integer (NULL and text that is no number: 0), or
 * as text (NULL for NULL; borrowed). */
long long saop__db_col_int(const struct saop__db_row *r, int i);
const char *saop__db_col_text(const struct saop__db_row *r, int i);

/*
 * ---- lib/db.c: the operations (each inside saop__store_tx() unless it
 * says otherwise); each returns 0 or a negative -SAOP_E code with e
 * filled ----
 */

/* events and tasks (store.c). */
int saop__db_event_add(struct saop__db *db, const char *time,
    const char *task_id, long turn, const char *event, const char *data,
    struct saop_err *e);
int saop__db_task_status(struct saop__db *db, const char *task_id,
    const char *status, const char *reason, const char *now,
    struct saop_err *e);

/* A raw tool output to keep (prune.c). */
struct saop__db_output {
	const char *task_id, *tool_name, *tool_call_id;
	const char *raw;
	size_t len;
	long age;
	const char *captured_at, *stored_at;
	long long hash;
};
/* Find an equal output of the task (same bytes), else insert it: *id, and
 * *reused set when it was found. */
int saop__db_output_put(struct saop__db *db,
    const struct saop__db_output *o, long long *id, int *reused,
    struct saop_err *e);
/* Outside a transaction: write output id to put(); 1 when there is none. */
int saop__db_output_read(struct saop__db *db, long long id,
    int (*put)(void *arg, const void *p, size_t n), void *arg,
    struct saop_err *e);
/* Outside a transaction: tool's latest output (of task, when not NULL) in
 * *id; 1 when there is none. */
int saop__db_output_latest(struct saop__db *db, const char *tool,
    const char *task, long long *id, struct saop_err *e);
/* Outside a transaction: each stored output (of task, when not NULL) by
 * id: id, task_id, tool_name, tool_call_id, byte_size, turn_age,
 * captured_at, stored_at as text. */
int saop__db_output_each(struct saop__db *db, const char *task,
    int (*row)(void *arg, const struct saop__db_row *r), void *arg,
    struct saop_err *e);

/* A partial_completion_log row (resume.c); a negative count is NULL. */
struct saop__db_resume_row {
	const char *task_id;
	long turn;
	long long truncation_index, initial_length;
	int attempts;
	const char *status, *timestamp;
	long long sent_bytes, received_bytes, prompt_tokens,
	    completion_tokens;
};
int saop__db_resume_log(struct saop__db *db,
    const struct saop__db_resume_row *r, struct saop_err *e);

/*
 * agent_turn_states (suspend.c): a saved turn per key (task, turn,
 * stage) and the claim of the process working on it.  read: the key's
 * row (claim_host, claim_pid, claim_start, claim_until,
 * turn_state_json), locked on PostgreSQL until the transaction ends;
 * save: upsert (claimed by c, or by nobody when c is NULL); claim: set
 * the claim; release: drop c's claim; delete, clear (a task's rows);
 * renew: push c's leases to c->until (the renewer's own connection,
 * outside a transaction); each: every row (task_id, turn, stage,
 * turn_state_json, saved_at, claim_host, claim_pid, claim_start,
 * claim_until), oldest first.
 */
struct saop__db_claim {
	const char *host;
	long pid;
	const char *start;
	long long until;	/* the lease's end, ms since the epoch */
};
int saop__db_turn_read(struct saop__db *db, const struct saop_turn_key *k,
    int (*row)(void *arg, const struct saop__db_row *r), void *arg,
    struct saop_err *e);
int saop__db_turn_save(struct saop__db *db, const struct saop_turn_key *k,
    const char *json, const char *now, const struct saop__db_claim *c,
    struct saop_err *e);
int saop__db_turn_claim(struct saop__db *db, const struct saop_turn_key *k,
    const struct saop__db_claim *c, struct saop_err *e);
int saop__db_turn_release(struct saop__db *db, const struct saop_turn_key *k,
    const struct saop__db_claim *c, long long *changed, struct saop_err *e);
int saop__db_turn_delete(struct saop__db *db, const struct saop_turn_key *k,
    long long *deleted, struct saop_err *e);
int saop__db_turn_clear(struct saop__db *db, const char *task_id,
    long long *deleted, struct saop_err *e);
int saop__db_turn_renew(struct saop__db *db, const struct saop__db_claim *c,
    struct saop_err *e);
int saop__db_turn_each(struct saop__db *db, const char *task_id,
    int (*row)(void *arg, const struct saop__db_row *r), void *arg,
    struct saop_err *e);

/* The report's reads (report.c). */
enum saop__db_report_part {
	SAOP__REPORT_STATUS,	/* task_id, status, reason */
	SAOP__REPORT_TURNS,	/* task_id, distinct turns with a trace */
	SAOP__REPORT_RESUMES,	/* task_id, resolved, exhausted, attempts,
				 * sent, received, prompt, completion */
	SAOP__REPORT_EVENTS,	/* task_id, event, count, sums of byte_size,
				 * sent_bytes, received_bytes, prompt_tokens,
				 * completion_tokens, per the data's status */
	SAOP__REPORT_SUSPEND,	/* task_id, losses, restored, ms down */
	SAOP__REPORT_DETECTED,	/* task_id, turns found truncated */
	SAOP__REPORT_SAVED,	/* task_id, saved turns */
	SAOP__REPORT_PARTS
};
int saop__db_report(struct saop__db *db, enum saop__db_report_part part,
    const char *task, int (*row)(void *arg, const struct saop__db_row *r),
    void *arg, struct saop_err *e);

/* Copy every table of from into to (inside to's transaction), ids kept;
 * the rows copied, or -SAOP_EDATA when to holds rows already. */
long long saop__db_copy(struct saop__db *from, struct saop__db *to,
    struct saop_err *e);

/*
 * The store's transaction: run fn(db, arg, e) inside a write transaction
 * of s's database (connecting it first), retrying the whole transaction a
 * bounded number of times while the backend says the failure was
 * transient.  With durable set, the commit is synced.  Returns 0, fn's
 * negative code, or -SAOP_EDB with e filled.
 */
int saop__store_tx(struct saop_store *s, int durable,
    int (*fn)(struct saop__db *db, void *arg, struct saop_err *e), void *arg,
    struct saop_err *e);
/* The database s was made for, as given (a URI with its password: never
 * to be shown; borrowed).  For a second connection (suspend.c's lease
 * renewer). */
const char *saop__store_target(const struct saop_store *s);
/* s's connection, connecting it first: 0 with *db borrowed, or -SAOP_E. */
int saop__store_conn(struct saop_store *s, struct saop__db **db,
    struct saop_err *e);

#endif
