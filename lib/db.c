/*
 * db.c: the storage seam: which backend a target names, how a target is
 * shown (password masked), and every query the protocols make, in the
 * SQL both dialects read or, where they differ, in each one's.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db.h"

/*
 * 1 when target names a PostgreSQL database: a postgres:// or
 * postgresql:// URI.  Anything else is a SQLite file path.
 */
int
saop__db_is_pg(const char *target)
{
	return target != NULL && (strncasecmp(target, "postgresql://", 13) ==
	    0 || strncasecmp(target, "postgres://", 11) == 0);
}

/*
 * target as it may be shown: in a URI the password of its userinfo
 * ("user:secret@") and any password= parameter become "***".  Returns a
 * new string (free()), or NULL out of memory.
 */
char *
saop__db_shown(const char *target)
{
	const char *scheme, *auth, *at, *colon, *q, *end;
	struct saop__buf b;
	char *out;

	if (!saop__db_is_pg(target))
		return strdup(target);
	saop__buf_init(&b);
	scheme = strstr(target, "://") + 3;
	/* The authority ends at the first '/', '?' or '#'. */
	auth = scheme;
	end = auth + strcspn(auth, "/?#");
	at = NULL;
	for (q = auth; q < end; q++)
		if (*q == '@')
			at = q;		/* the last '@' ends the userinfo */
	colon = at != NULL ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
	if (colon != NULL) {
		if (saop__buf_append(&b, target, (size_t)(colon + 1 -
		    target)) != 0 || saop__buf_append(&b, "***", 3) != 0)
			goto nomem;
		q = at;
	} else
		q = target;
	/* The rest, with each password=VALUE parameter masked. */
	while (*q != '\0') {
		const char *p = strcasestr(q, "password=");

		if (p == NULL || (p != target && p[-1] != '?' && p[-1] != '&')) {
			size_t n = p == NULL ? strlen(q) : (size_t)(p + 9 - q);

			if (saop__buf_append(&b, q, n) != 0)
				goto nomem;
			q += n;
			continue;
		}
		if (saop__buf_append(&b, q, (size_t)(p + 9 - q)) != 0 ||
		    saop__buf_append(&b, "***", 3) != 0)
			goto nomem;
		q = p + 9 + strcspn(p + 9, "&#");
	}
	if ((out = saop__buf_steal(&b, NULL)) != NULL)
		return out;
nomem:
	saop__buf_free(&b);
	return NULL;
}

/*
 * Connect to target with the backend it names (see db.h).  Returns 0 with
 * *db new, or a negative code with e filled.
 */
int
saop__db_open(const char *target, struct saop__db **db, struct saop_err *e)
{
	*db = NULL;
	if (saop__db_is_pg(target))
		return saop__db_pg.open(target, db, e);
	return saop__db_sqlite.open(target, db, e);
}

/* Disconnect db and free it; NULL is a no-op. */
void
saop__db_close(struct saop__db *db)
{
	if (db != NULL)
		db->be->close(db);
}

/* The migrations of db's dialect (borrowed, NULL-ended). */
const struct saop__blob *
saop__db_migrations(const struct saop__db *db)
{
	return db->be->dialect == SAOP__DB_PG ? saop__migrations_pg :
	    saop__migrations;
}

/* A bound integer. */
struct saop__db_val
saop__db_int(long long i)
{
	struct saop__db_val v = { SAOP__DB_INT, i, NULL, 0 };

	return v;
}

/* A bound string (NUL-terminated; NULL binds NULL). */
struct saop__db_val
saop__db_text(const char *s)
{
	struct saop__db_val v = { SAOP__DB_TEXT, 0, s, s ? strlen(s) : 0 };

	if (s == NULL)
		v.type = SAOP__DB_NULL;
	return v;
}

/* Bound bytes (n of them at p). */
struct saop__db_val
saop__db_blob(const void *p, size_t n)
{
	struct saop__db_val v = { SAOP__DB_BLOB, 0, p, n };

	return v;
}

/* A bound count: NULL when n is negative (not reported). */
static struct saop__db_val
count_val(long long n)
{
	struct saop__db_val v = { SAOP__DB_NULL, 0, NULL, 0 };

	return n < 0 ? v : saop__db_int(n);
}

/* Column i of r as an integer: NULL, a BLOB or text that is no number
 * read 0. */
long long
saop__db_col_int(const struct saop__db_row *r, int i)
{
	if (i >= r->n)
		return 0;
	if (r->v[i].type == SAOP__DB_INT)
		return r->v[i].i;
	if (r->v[i].type == SAOP__DB_TEXT)
		return strtoll(r->v[i].p, NULL, 10);
	return 0;
}

/* Column i of r as text (borrowed), or NULL for NULL. */
const char *
saop__db_col_text(const struct saop__db_row *r, int i)
{
	if (i >= r->n || r->v[i].type == SAOP__DB_NULL)
		return NULL;
	return r->v[i].p;
}

/* Run sql on db with n values of p and no rows wanted.  Returns 0 or a
 * negative code. */
static int
run(struct saop__db *db, const char *sql, const struct saop__db_val *p,
    int n, long long *changes, struct saop_err *e)
{
	return db->be->run(db, sql, p, n, NULL, NULL, changes, e);
}

/* ---- events and tasks ---- */

/* Insert one row into events (turn < 0: NULL).  Returns 0 or -SAOP_EDB. */
int
saop__db_event_add(struct saop__db *db, const char *time,
    const char *task_id, long turn, const char *event, const char *data,
    struct saop_err *e)
{
	struct saop__db_val p[5];

	p[0] = saop__db_text(time);
	p[1] = saop__db_text(task_id);
	p[2] = count_val(turn);
	p[3] = saop__db_text(event);
	p[4] = saop__db_text(data);
	return run(db, "INSERT INTO events (time, task_id, turn, event, data)"
	    " VALUES (?1, ?2, ?3, ?4, ?5)", p, 5, NULL, e);
}

/*
 * Insert or update task_id's tasks row.  DONE replaces only IN_PROGRESS:
 * a task paused or escalated meanwhile (by another stage) keeps that
 * status.  Returns 0 or -SAOP_EDB.
 */
int
saop__db_task_status(struct saop__db *db, const char *task_id,
    const char *status, const char *reason, const char *now,
    struct saop_err *e)
{
	struct saop__db_val p[4];

	p[0] = saop__db_text(task_id);
	p[1] = saop__db_text(status);
	p[2] = saop__db_text(reason);
	p[3] = saop__db_text(now);
	return run(db, "INSERT INTO tasks (task_id, status, reason,"
	    " updated_at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (task_id)"
	    " DO UPDATE SET status = excluded.status, reason = excluded.reason,"
	    " updated_at = excluded.updated_at WHERE excluded.status <> 'DONE'"
	    " OR tasks.status = 'IN_PROGRESS'", p, 4, NULL, e);
}

/* ---- tool outputs ---- */

/* Row of RETURNING id: keep it in the long long arg.  Returns 0. */
static int
id_row(void *arg, const struct saop__db_row *r)
{
	*(long long *)arg = saop__db_col_int(r, 0);
	return 0;
}

/*
 * Find an output of o's task with o's bytes, else insert o.  The task's
 * key is locked first, so that two PostgreSQL sessions storing the same
 * bytes at once keep one row, as SQLite's one writer does.  Returns 0
 * with *id and *reused set, or a negative code.
 */
int
saop__db_output_put(struct saop__db *db, const struct saop__db_output *o,
    long long *id, int *reused, struct saop_err *e)
{
	struct saop__db_val p[9];
	int rc;

	*id = 0;
	*reused = 0;
	if ((rc = db->be->lock_key(db, o->task_id, e)) != 0)
		return rc;
	p[0] = saop__db_text(o->task_id);
	p[1] = saop__db_int(o->hash);
	p[2] = saop__db_int((long long)o->len);
	p[3] = saop__db_blob(o->raw, o->len);
	/* Equal hashes are compared byte for byte (the hash need not be
	 * unique), and only then: the bytes are not sent to a server for
	 * an output no row has the hash of. */
	*id = -1;
	rc = db->be->run(db, "SELECT count(*) - 1 FROM tool_outputs WHERE"
	    " task_id = ?1 AND content_hash = ?2 AND byte_size = ?3", p, 3,
	    id_row, id, NULL, e);
	if (rc == 0 && *id >= 0) {
		*id = -1;
		rc = db->be->run(db, "SELECT id FROM tool_outputs WHERE"
		    " task_id = ?1 AND content_hash = ?2 AND byte_size = ?3 AND"
		    " raw_content = ?4 ORDER BY id LIMIT 1", p, 4, id_row, id,
		    NULL, e);
	}
	if (rc < 0)
		return rc;
	if (*id >= 0) {
		*reused = 1;
		return 0;
	}
	p[1] = saop__db_text(o->tool_name);
	p[2] = saop__db_text(o->tool_call_id);
	p[3] = saop__db_int((long long)o->len);
	p[4] = saop__db_int(o->age);
	p[5] = saop__db_text(o->captured_at);
	p[6] = saop__db_text(o->stored_at);
	p[7] = saop__db_int(o->hash);
	p[8] = saop__db_blob(o->raw, o->len);
	rc = db->be->run(db, "INSERT INTO tool_outputs (task_id, tool_name,"
	    " tool_call_id, byte_size, turn_age, captured_at, stored_at,"
	    " content_hash, raw_content) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
	    " ?8, ?9) RETURNING id", p, 9, id_row, id, NULL, e);
	return rc < 0 ? rc : 0;
}

/* Write tool output id to put() in pieces.  Returns 0, 1 when there is no
 * such row, or a negative code. */
int
saop__db_output_read(struct saop__db *db, long long id,
    int (*put)(void *arg, const void *p, size_t n), void *arg,
    struct saop_err *e)
{
	return db->be->read_blob(db, id, put, arg, e);
}

/* tool's latest output (of task, when not NULL) in *id.  Returns 0, 1 when
 * there is none, or a negative code. */
int
saop__db_output_latest(struct saop__db *db, const char *tool,
    const char *task, long long *id, struct saop_err *e)
{
	struct saop__db_val p[2];
	int rc;

	*id = -1;
	p[0] = saop__db_text(tool);
	p[1] = saop__db_text(task);
	/* CAST: PostgreSQL wants to know the type of a NULL parameter. */
	rc = db->be->run(db, "SELECT id FROM tool_outputs WHERE tool_name = ?1"
	    " AND (CAST(?2 AS TEXT) IS NULL OR task_id = ?2)"
	    " ORDER BY captured_at DESC, id DESC LIMIT 1", p, 2, id_row, id,
	    NULL, e);
	if (rc < 0)
		return rc;
	return *id < 0 ? 1 : 0;
}

/* Each stored output (of task, when not NULL) to row(), by id.  Returns 0,
 * row's non-zero return, or a negative code. */
int
saop__db_output_each(struct saop__db *db, const char *task,
    int (*row)(void *arg, const struct saop__db_row *r), void *arg,
    struct saop_err *e)
{
	struct saop__db_val p = saop__db_text(task);

	return db->be->run(db, "SELECT CAST(id AS TEXT), task_id, tool_name,"
	    " tool_call_id, CAST(byte_size AS TEXT), CAST(turn_age AS TEXT),"
	    " captured_at, stored_at FROM tool_outputs"
	    " WHERE CAST(?1 AS TEXT) IS NULL OR task_id = ?1 ORDER BY id",
	    &p, 1, row, arg, NULL, e);
}

/* ---- partial_completion_log ---- */

/* Insert one partial_completion_log row.  Returns 0 or -SAOP_EDB. */
int
saop__db_resume_log(struct saop__db *db,
    const struct saop__db_resume_row *r, struct saop_err *e)
{
	struct saop__db_val p[11];

	p[0] = saop__db_text(r->task_id);
	p[1] = saop__db_int(r->turn);
	p[2] = saop__db_int(r->truncation_index);
	p[3] = saop__db_int(r->initial_length);
	p[4] = saop__db_int(r->attempts);
	p[5] = saop__db_text(r->status);
	p[6] = saop__db_text(r->timestamp);
	p[7] = count_val(r->sent_bytes);
	p[8] = count_val(r->received_bytes);
	p[9] = count_val(r->prompt_tokens);
	p[10] = count_val(r->completion_tokens);
	return run(db, "INSERT INTO partial_completion_log (task_id,"
	    " turn_number, truncation_index, initial_chunk_length,"
	    " resume_attempts, final_status, timestamp, sent_bytes,"
	    " received_bytes, prompt_tokens, completion_tokens) VALUES (?1, ?2,"
	    " ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)", p, 11, NULL, e);
}

/* ---- agent_turn_states: saved turns and their claims ---- */

/* Bind key k to p[0..2]. */
static void
bind_key(struct saop__db_val *p, const struct saop_turn_key *k)
{
	p[0] = saop__db_text(k->task_id);
	p[1] = saop__db_int(k->turn);
	p[2] = saop__db_text(k->stage);
}

/* Bind claim c (NULL: no claim, four NULLs) to p[0..3]. */
static void
bind_claim(struct saop__db_val *p, const struct saop__db_claim *c)
{
	p[0] = saop__db_text(c ? c->host : NULL);
	p[1] = c ? saop__db_int(c->pid) : saop__db_text(NULL);
	p[2] = saop__db_text(c ? c->start : NULL);
	p[3] = c ? saop__db_int(c->until) : saop__db_text(NULL);
}

/*
 * k's row to row(): claim_host, claim_pid, claim_start, claim_until,
 * turn_state_json; none when there is no row.  On PostgreSQL the row is
 * locked until the transaction ends (FOR UPDATE): two sessions claiming
 * it at once see each other's claim, as SQLite's one writer does.
 * Returns 0, row's non-zero return, or a negative code.
 */
int
saop__db_turn_read(struct saop__db *db, const struct saop_turn_key *k,
    int (*row)(void *arg, const struct saop__db_row *r), void *arg,
    struct saop_err *e)
{
	struct saop__db_val p[3];

	bind_key(p, k);
	return db->be->run(db, db->be->dialect == SAOP__DB_PG ?
	    "SELECT claim_host, claim_pid, claim_start, claim_until,"
	    " turn_state_json FROM agent_turn_states WHERE task_id = ?1 AND"
	    " turn = ?2 AND stage = ?3 FOR UPDATE" :
	    "SELECT claim_host, claim_pid, claim_start, claim_until,"
	    " turn_state_json FROM agent_turn_states WHERE task_id = ?1 AND"
	    " turn = ?2 AND stage = ?3", p, 3, row, arg, NULL, e);
}

/* Insert or replace k's row: its state text, saved_at now, claimed by c
 * (NULL: by nobody).  Returns 0 or -SAOP_EDB. */
int
saop__db_turn_save(struct saop__db *db, const struct saop_turn_key *k,
    const char *json, const char *now, const struct saop__db_claim *c,
    struct saop_err *e)
{
	struct saop__db_val p[9];

	bind_key(p, k);
	p[3] = saop__db_text(json);
	p[4] = saop__db_text(now);
	bind_claim(p + 5, c);
	return run(db, "INSERT INTO agent_turn_states (task_id, turn, stage,"
	    " turn_state_json, saved_at, claim_host, claim_pid, claim_start,"
	    " claim_until) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
	    " ON CONFLICT (task_id, turn, stage) DO UPDATE SET"
	    " turn_state_json = excluded.turn_state_json, saved_at ="
	    " excluded.saved_at, claim_host = excluded.claim_host, claim_pid"
	    " = excluded.claim_pid, claim_start = excluded.claim_start,"
	    " claim_until = excluded.claim_until", p, 9, NULL, e);
}

/* Set the claim of k's row to c.  Returns 0 or -SAOP_EDB. */
int
saop__db_turn_claim(struct saop__db *db, const struct saop_turn_key *k,
    const struct saop__db_claim *c, struct saop_err *e)
{
	struct saop__db_val p[7];

	bind_key(p, k);
	bind_claim(p + 3, c);
	return run(db, "UPDATE agent_turn_states SET claim_host = ?4,"
	    " claim_pid = ?5, claim_start = ?6, claim_until = ?7 WHERE"
	    " task_id = ?1 AND turn = ?2 AND stage = ?3", p, 7, NULL, e);
}

/* Drop claim c (host, pid, start) of k's row; *changed: rows changed.
 * Returns 0 or -SAOP_EDB. */
int
saop__db_turn_release(struct saop__db *db, const struct saop_turn_key *k,
    const struct saop__db_claim *c, long long *changed, struct saop_err *e)
{
	struct saop__db_val p[7];

	bind_key(p, k);
	bind_claim(p + 3, c);
	return run(db, "UPDATE agent_turn_states SET claim_host = NULL,"
	    " claim_pid = NULL, claim_start = NULL, claim_until = NULL WHERE"
	    " task_id = ?1 AND turn = ?2 AND stage = ?3 AND claim_host = ?4"
	    " AND claim_pid = ?5 AND claim_start = ?6", p, 6, changed, e);
}

/* Delete k's row; *deleted: rows gone.  Returns 0 or -SAOP_EDB. */
int
saop__db_turn_delete(struct saop__db *db, const struct saop_turn_key *k,
    long long *deleted, struct saop_err *e)
{
	struct saop__db_val p[3];

	bind_key(p, k);
	return run(db, "DELETE FROM agent_turn_states WHERE task_id = ?1 AND"
	    " turn = ?2 AND stage = ?3", p, 3, deleted, e);
}

/* Delete every row of task_id; *deleted: how many.  Returns 0 or
 * -SAOP_EDB. */
int
saop__db_turn_clear(struct saop__db *db, const char *task_id,
    long long *deleted, struct saop_err *e)
{
	struct saop__db_val p = saop__db_text(task_id);

	return run(db, "DELETE FROM agent_turn_states WHERE task_id = ?1", &p,
	    1, deleted, e);
}

/* Push the end of every lease of claim c (host, pid, start) to
 * c->until.  Returns 0 or -SAOP_EDB. */
int
saop__db_turn_renew(struct saop__db *db, const struct saop__db_claim *c,
    struct saop_err *e)
{
	struct saop__db_val p[4];

	p[0] = saop__db_int(c->until);
	p[1] = saop__db_text(c->host);
	p[2] = saop__db_int(c->pid);
	p[3] = saop__db_text(c->start);
	return run(db, "UPDATE agent_turn_states SET claim_until = ?1 WHERE"
	    " claim_host = ?2 AND claim_pid = ?3 AND claim_start = ?4", p, 4,
	    NULL, e);
}

/*
 * Each saved turn (of task_id, when not NULL) to row(), oldest first:
 * task_id, turn, stage, turn_state_json, saved_at, claim_host, claim_pid,
 * claim_start, claim_until.  Returns 0, row's non-zero return, or a
 * negative code.
 */
int
saop__db_turn_each(struct saop__db *db, const char *task_id,
    int (*row)(void *arg, const struct saop__db_row *r), void *arg,
    struct saop_err *e)
{
	struct saop__db_val p = saop__db_text(task_id);

	return db->be->run(db, "SELECT task_id, turn, stage, turn_state_json,"
	    " saved_at, claim_host, claim_pid, claim_start, claim_until"
	    " FROM agent_turn_states WHERE CAST(?1 AS TEXT) IS NULL OR"
	    " task_id = ?1 ORDER BY saved_at, task_id, turn, stage", &p, 1,
	    row, arg, NULL, e);
}

/* ---- the report ---- */

/*
 * The report's queries, each limited to task ?1 unless it is NULL, in
 * SQLite's SQL and in PostgreSQL's where they differ (SQLite's total(),
 * json_extract() and julianday() are spelled otherwise there).  A lost
 * network is down from its NETWORK_LOST to the task's next
 * NETWORK_RESTORED (or, when none came yet, to now).
 */
#define ONE_TASK	" (CAST(?1 AS TEXT) IS NULL OR task_id = ?1)"
#define PG_NUM(k)	" coalesce(sum(CASE WHEN jsonb_typeof(data::jsonb -> '" \
	k "') = 'number' THEN (data::jsonb ->> '" k "')::numeric END), 0)"
static const char *const report_sql[SAOP__REPORT_PARTS][2] = {
	[SAOP__REPORT_STATUS] = {
	    "SELECT task_id, status, reason FROM tasks WHERE" ONE_TASK,
	    NULL },
	[SAOP__REPORT_TURNS] = {
	    "SELECT task_id, count(*) FROM (SELECT task_id, turn FROM events"
	    " WHERE turn >= 0 UNION SELECT task_id, turn_number"
	    " FROM partial_completion_log) AS t"
	    " WHERE" ONE_TASK " GROUP BY task_id", NULL },
	[SAOP__REPORT_RESUMES] = {
	    "SELECT task_id, total(final_status = 'RESOLVED'),"
	    " total(final_status = 'EXHAUSTED'), total(resume_attempts),"
	    " total(sent_bytes), total(received_bytes), total(prompt_tokens),"
	    " total(completion_tokens) FROM partial_completion_log"
	    " WHERE" ONE_TASK " GROUP BY task_id",
	    "SELECT task_id, count(*) FILTER (WHERE final_status = 'RESOLVED'),"
	    " count(*) FILTER (WHERE final_status = 'EXHAUSTED'),"
	    " coalesce(sum(resume_attempts), 0), coalesce(sum(sent_bytes), 0),"
	    " coalesce(sum(received_bytes), 0), coalesce(sum(prompt_tokens), 0),"
	    " coalesce(sum(completion_tokens), 0) FROM partial_completion_log"
	    " WHERE" ONE_TASK " GROUP BY task_id" },
	[SAOP__REPORT_EVENTS] = {
	    "SELECT task_id, event, count(*),"
	    " total(json_extract(data, '$.byte_size')),"
	    " total(json_extract(data, '$.sent_bytes')),"
	    " total(json_extract(data, '$.received_bytes')),"
	    " total(json_extract(data, '$.prompt_tokens')),"
	    " total(json_extract(data, '$.completion_tokens')),"
	    " CAST(json_extract(data, '$.status') AS TEXT) AS st"
	    " FROM events WHERE json_valid(data) AND" ONE_TASK
	    " GROUP BY task_id, event, st",
	    "SELECT task_id, event, count(*),"
	    PG_NUM("byte_size") "," PG_NUM("sent_bytes") ","
	    PG_NUM("received_bytes") "," PG_NUM("prompt_tokens") ","
	    PG_NUM("completion_tokens") ", data::jsonb ->> 'status' AS st"
	    " FROM events WHERE" ONE_TASK " GROUP BY task_id, event, st" },
	[SAOP__REPORT_SUSPEND] = {
	    "SELECT task_id, count(*), count(back), total(round((julianday("
	    " coalesce(back, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))"
	    " - julianday(time)) * 86400000.0)) FROM (SELECT task_id, time,"
	    " (SELECT min(r.time) FROM events r WHERE r.task_id = l.task_id"
	    " AND r.id > l.id AND r.event = '" SAOP_EVENT_NETWORK_RESTORED
	    "') AS back FROM events l WHERE l.event = '"
	    SAOP_EVENT_NETWORK_LOST "'"
	    " AND (?1 IS NULL OR l.task_id = ?1)) GROUP BY task_id",
	    "SELECT task_id, count(*), count(back), coalesce(sum(round("
	    " extract(epoch FROM (coalesce(back::timestamptz, now())"
	    " - time::timestamptz)) * 1000)), 0) FROM (SELECT task_id, time,"
	    " (SELECT min(r.time) FROM events r WHERE r.task_id = l.task_id"
	    " AND r.id > l.id AND r.event = '" SAOP_EVENT_NETWORK_RESTORED
	    "') AS back FROM events l WHERE l.event = '"
	    SAOP_EVENT_NETWORK_LOST "'"
	    " AND (CAST(?1 AS TEXT) IS NULL OR l.task_id = ?1)) AS d"
	    " GROUP BY task_id" },
	[SAOP__REPORT_DETECTED] = {
	    "SELECT task_id, count(*) FROM (SELECT task_id, turn FROM events"
	    " WHERE event = '" SAOP_EVENT_PARTIAL_COMPLETION_DETECTED "' UNION"
	    " SELECT task_id, turn_number FROM partial_completion_log) AS t"
	    " WHERE" ONE_TASK " GROUP BY task_id", NULL },
	[SAOP__REPORT_SAVED] = {
	    "SELECT task_id, count(*) FROM agent_turn_states"
	    " WHERE" ONE_TASK " GROUP BY task_id", NULL },
};

/* Run the report's part on db (see db.h).  Returns 0, row's non-zero
 * return, or a negative code. */
int
saop__db_report(struct saop__db *db, enum saop__db_report_part part,
    const char *task, int (*row)(void *arg, const struct saop__db_row *r),
    void *arg, struct saop_err *e)
{
	struct saop__db_val p = saop__db_text(task);
	const char *sql = report_sql[part][0];

	if (db->be->dialect == SAOP__DB_PG && report_sql[part][1] != NULL)
		sql = report_sql[part][1];
	return db->be->run(db, sql, &p, 1, row, arg, NULL, e);
}

/* ---- copying a whole database (saop-report --copy-to) ---- */

/* The tables a copy moves, their columns, and whether "id" is an
 * identity column (PostgreSQL's counter then set past the copied ids). */
static const struct {
	const char *table, *cols;
	int nparams, has_id;
} tables[] = {
	{ "tasks", "task_id, status, reason, updated_at", 4, 0 },
	{ "events", "id, time, task_id, turn, event, data", 6, 1 },
	{ "partial_completion_log", "id, task_id, turn_number,"
	  " truncation_index, initial_chunk_length, resume_attempts,"
	  " final_status, timestamp, sent_bytes, received_bytes,"
	  " prompt_tokens, completion_tokens", 12, 1 },
	{ "tool_outputs", "id, task_id, tool_name, tool_call_id, byte_size,"
	  " turn_age, captured_at, stored_at, content_hash, raw_content", 10, 1 },
	{ "agent_turn_states", "task_id, turn, stage, turn_state_json,"
	  " saved_at, claim_host, claim_pid, claim_start, claim_until", 9, 0 },
};

struct copy_arg {
	struct saop__db *to;
	const char *insert;
	long long rows;
	struct saop_err *e;
};

/* Row of a source table: insert it into the destination.  Returns 0 or
 * the insert's negative code. */
static int
copy_row(void *arg, const struct saop__db_row *r)
{
	struct copy_arg *a = arg;
	int rc;

	rc = a->to->be->run(a->to, a->insert, r->v, r->n, NULL, NULL, NULL,
	    a->e);
	if (rc == 0)
		a->rows++;
	return rc;
}

/* Row of a count: keep it in the long long arg.  Returns 0. */
static int
count_row(void *arg, const struct saop__db_row *r)
{
	*(long long *)arg = saop__db_col_int(r, 0);
	return 0;
}

/*
 * Copy every row of from's tables into to, ids kept, inside to's
 * transaction (see saop_store_copy()).  Returns the rows copied, or a
 * negative code with e filled: -SAOP_EDATA when to holds rows already.
 */
long long
saop__db_copy(struct saop__db *from, struct saop__db *to,
    struct saop_err *e)
{
	struct copy_arg a = { to, NULL, 0, e };
	char sql[512];
	size_t t;
	int i, rc;

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		long long have = 0;

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s",
		    tables[t].table);
		if ((rc = to->be->run(to, sql, NULL, 0, count_row, &have, NULL,
		    e)) != 0)
			return rc;
		if (have > 0)
			return saop__fail(e, SAOP_EDATA, 0, "the destination "
			    "is not empty: %s holds %lld rows", tables[t].table,
			    have);
	}
	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		char insert[512];
		int n;

		n = snprintf(insert, sizeof(insert), "INSERT INTO %s (%s)"
		    " VALUES (", tables[t].table, tables[t].cols);
		for (i = 1; i <= tables[t].nparams; i++)
			n += snprintf(insert + n, sizeof(insert) - (size_t)n,
			    "%s?%d", i > 1 ? ", " : "", i);
		snprintf(insert + n, sizeof(insert) - (size_t)n, ")");
		a.insert = insert;
		snprintf(sql, sizeof(sql), "SELECT %s FROM %s%s", tables[t].cols,
		    tables[t].table, tables[t].has_id ? " ORDER BY id" : "");
		if ((rc = from->be->run(from, sql, NULL, 0, copy_row, &a, NULL,
		    e)) != 0)
			return rc;
		if (tables[t].has_id && to->be->dialect == SAOP__DB_PG) {
			snprintf(sql, sizeof(sql), "SELECT setval("
			    "pg_get_serial_sequence('%s', 'id'),"
			    " coalesce(max(id), 0) + 1, false) FROM %s",
			    tables[t].table, tables[t].table);
			if ((rc = to->be->run(to, sql, NULL, 0, NULL, NULL, NULL,
			    e)) != 0)
				return rc;
		}
	}
	return a.rows;
}
