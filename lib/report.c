/* report.c: what happened to each task, summed from state.sqlite and records. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

/*
 * The report is a JSON object {"tasks": {ID: TASK...}} while it is being
 * filled; saop_report_finish() turns it into {"tasks": [TASK...],
 * "overall": TOTALS}.  Every count of a TASK is an integer, and every sum
 * of money (USD) a real, so that the totals are plain sums (see
 * sum_into()).
 */

/* Per-row callback of each_row(): fold one result row into rep. */
typedef int (*row_fn)(json_t *rep, const struct saop__db_row *st);

/* What read_all() works on: the report and the task it is limited to. */
struct report_ctx {
	json_t *rep;
	const char *task;	/* NULL: every task */
};

/*
 * A new, zeroed TASK object for id.  Returns a new reference, or NULL out
 * of memory.
 */
static json_t *
task_new(const char *id)
{
	return json_pack("{s:s, s:n, s:n, s:I, s:I, s:{}, "
	    "s:{s:I, s:I, s:I, s:I}, s:{}, s:I, s:I, "
	    "s:{s:I, s:I, s:I, s:I}, s:{s:I, s:I}, "
	    "s:{s:{s:I, s:I, s:I, s:I}, s:{s:I, s:I, s:I, s:I}}, s:I, "
	    "s:{s:I, s:I}, s:{s:f, s:f, s:f, s:I}}",
	    "task_id", id, "status", "reason",
	    "turns", (json_int_t)0, "records", (json_int_t)0, "states",
	    "truncations", "resumed", (json_int_t)0, "exhausted",
	    (json_int_t)0, "detected", (json_int_t)0, "attempts", (json_int_t)0,
	    "repairs", "corrections", (json_int_t)0, "escalations",
	    (json_int_t)0,
	    "suspensions", "count", (json_int_t)0, "restored", (json_int_t)0,
	    "downtime_ms", (json_int_t)0, "saved_turns", (json_int_t)0,
	    "pruned", "outputs", (json_int_t)0, "bytes", (json_int_t)0,
	    "recovery", "resume", "sent_bytes", (json_int_t)0,
	    "received_bytes", (json_int_t)0, "prompt_tokens", (json_int_t)0,
	    "completion_tokens", (json_int_t)0,
	    "correction", "sent_bytes", (json_int_t)0, "received_bytes",
	    (json_int_t)0, "prompt_tokens", (json_int_t)0,
	    "completion_tokens", (json_int_t)0,
	    "recovery_tokens", (json_int_t)0,
	    "usage", "prompt_tokens", (json_int_t)0, "completion_tokens",
	    (json_int_t)0, "money", "answer", 0.0, "recovery", 0.0, "total",
	    0.0, "unpriced", (json_int_t)0);
}

/*
 * The TASK object of id in rep (made when missing).  Returns it
 * (borrowed: valid while rep is), or NULL out of memory.
 */
static json_t *
task_of(json_t *rep, const char *id)
{
	json_t *tasks = json_object_get(rep, "tasks"), *t;

	if (id == NULL)
		id = "";
	if ((t = json_object_get(tasks, id)) != NULL)
		return t;
	if ((t = task_new(id)) == NULL ||
	    json_object_set_new(tasks, id, t) != 0)
		return NULL;
	return t;
}

/*
 * a + b, held at the largest (or smallest) 64-bit integer instead of
 * overflowing (signed overflow is undefined): a sum of counts from a
 * database anybody could write stays a number.  Returns the sum.
 */
static json_int_t
sat_add(json_int_t a, json_int_t b)
{
	json_int_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? LLONG_MAX : LLONG_MIN;
	return r;
}

/*
 * Add n to the integer at obj.key (a missing member counts 0).  Returns 0,
 * or -1 out of memory.
 */
static int
add(json_t *obj, const char *key, json_int_t n)
{
	json_t *v = json_object_get(obj, key);

	return json_object_set_new(obj, key, json_integer(sat_add(n,
	    json_is_integer(v) ? json_integer_value(v) : 0)));
}

/*
 * Add usd to the real at obj.key (a missing member counts 0).  Returns 0,
 * or -1 out of memory.
 */
static int
add_usd(json_t *obj, const char *key, double usd)
{
	return json_object_set_new(obj, key, json_real(usd +
	    json_number_value(json_object_get(obj, key))));
}

/*
 * Count the record cost rc (its "cost": answer, recovery; borrowed, may be
 * NULL) into money: each part's USD added, a part that is null (a call not
 * priced) counted in unpriced.  Returns 0, or -1 out of memory.
 */
static int
add_money(json_t *money, const json_t *rc)
{
	static const char *const part[] = { "answer", "recovery" };
	size_t i;
	int bad = 0;

	for (i = 0; i < 2; i++) {
		const json_t *v = json_object_get(rc, part[i]);

		if (json_is_number(v) && json_number_value(v) >= 0)
			bad |= add_usd(money, part[i], json_number_value(v)) |
			    add_usd(money, "total", json_number_value(v));
		else if (json_is_null(v))
			bad |= add(money, "unpriced", 1);
	}
	return bad;
}

/* Column col of st as a 64-bit integer (NULL reads 0). */
static json_int_t
col_int(const struct saop__db_row *st, int col)
{
	return (json_int_t)saop__db_col_int(st, col);
}

/* The TASK object of the row's first column (the task id), or NULL. */
static json_t *
row_task(json_t *rep, const struct saop__db_row *st)
{
	return task_of(rep, saop__db_col_text(st, 0));
}

/* Row: task_id, status, reason of tasks.  Returns 0, or -1 (memory). */
static int
row_status(json_t *rep, const struct saop__db_row *st)
{
	json_t *t = row_task(rep, st);
	const char *status = saop__db_col_text(st, 1);
	const char *reason = saop__db_col_text(st, 2);

	if (t == NULL ||
	    json_object_set_new(t, "status", status ? json_string(status) :
	    json_null()) != 0 ||
	    json_object_set_new(t, "reason", reason ? json_string(reason) :
	    json_null()) != 0)
		return -1;
	return 0;
}

/* Row: task_id, distinct turns with a trace.  Returns 0, or -1. */
static int
row_turns(json_t *rep, const struct saop__db_row *st)
{
	json_t *t = row_task(rep, st);

	return t == NULL ? -1 : add(t, "turns", col_int(st, 1));
}

/*
 * Row: task_id, resolved, exhausted, attempts, sent_bytes, received_bytes,
 * prompt_tokens, completion_tokens of partial_completion_log.  Returns 0,
 * or -1.
 */
static int
row_resumes(json_t *rep, const struct saop__db_row *st)
{
	json_t *t = row_task(rep, st), *tr, *cost;

	if (t == NULL)
		return -1;
	tr = json_object_get(t, "truncations");
	cost = json_object_get(json_object_get(t, "recovery"), "resume");
	return add(tr, "resumed", col_int(st, 1)) |
	    add(tr, "exhausted", col_int(st, 2)) |
	    add(tr, "attempts", col_int(st, 3)) |
	    add(cost, "sent_bytes", col_int(st, 4)) |
	    add(cost, "received_bytes", col_int(st, 5)) |
	    add(cost, "prompt_tokens", col_int(st, 6)) |
	    add(cost, "completion_tokens", col_int(st, 7));
}

/*
 * Add the cost sums of an events row st (columns 4 to 7) to cost.  Returns
 * 0, or -1 out of memory.
 */
static int
add_cost(json_t *cost, const struct saop__db_row *st)
{
	return add(cost, "sent_bytes", col_int(st, 4)) |
	    add(cost, "received_bytes", col_int(st, 5)) |
	    add(cost, "prompt_tokens", col_int(st, 6)) |
	    add(cost, "completion_tokens", col_int(st, 7));
}

/*
 * Row: task_id, event, count, and the sums of the data's byte_size,
 * sent_bytes, received_bytes, prompt_tokens, completion_tokens, for one
 * data status.  Returns 0, or -1.
 */
static int
row_events(json_t *rep, const struct saop__db_row *st)
{
	json_t *t = row_task(rep, st), *cost, *pr;
	const char *ev = saop__db_col_text(st, 1);
	const char *status = saop__db_col_text(st, 8);
	json_int_t n = col_int(st, 2);
	int rc = 0;

	if (t == NULL)
		return -1;
	if (ev == NULL)
		return 0;
	/*
	 * A resume that a failed call ended (SUSPENDED: a refusal, a lost
	 * network) writes no partial_completion_log row; its RESUME_FAILED
	 * says what its calls cost.
	 */
	if (strcmp(ev, SAOP_EVENT_RESUME_FAILED) == 0 && status != NULL &&
	    strcmp(status, saop_resume_status_name(SAOP_RESUME_SUSPENDED)) ==
	    0)
		return add_cost(json_object_get(json_object_get(t,
		    "recovery"), "resume"), st);
	cost = json_object_get(json_object_get(t, "recovery"), "correction");
	if (strcmp(ev, SAOP_EVENT_MALFORMED_RESPONSE) == 0)
		rc = add(t, "corrections", n);
	else if (strcmp(ev, SAOP_EVENT_MAX_RETRIES_EXCEEDED) == 0)
		rc = add(t, "escalations", n);
	else if (strcmp(ev, SAOP_EVENT_TOOL_OUTPUT_PRUNED) == 0) {
		pr = json_object_get(t, "pruned");
		rc = add(pr, "outputs", n) | add(pr, "bytes", col_int(st, 3));
	}
	/* What the correction turns cost: saop-validate logs each answer. */
	if (strcmp(ev, SAOP_EVENT_CORRECTION_ANSWERED) == 0)
		rc |= add_cost(cost, st);
	return rc;
}

/*
 * Row: task_id, losses, losses followed by a restore, milliseconds down.
 * Returns 0, or -1.
 */
static int
row_suspend(json_t *rep, const struct saop__db_row *st)
{
	json_t *t = row_task(rep, st), *s;

	if (t == NULL)
		return -1;
	s = json_object_get(t, "suspensions");
	return add(s, "count", col_int(st, 1)) |
	    add(s, "restored", col_int(st, 2)) |
	    add(s, "downtime_ms", col_int(st, 3));
}

/* Row: task_id, turns found truncated.  Returns 0, or -1. */
static int
row_detected(json_t *rep, const struct saop__db_row *st)
{
	json_t *t = row_task(rep, st);

	return t == NULL ? -1 :
	    add(json_object_get(t, "truncations"), "detected",
	    col_int(st, 1));
}

/* Row: task_id, saved turns (agent_turn_states).  Returns 0, or -1. */
static int
row_saved(json_t *rep, const struct saop__db_row *st)
{
	json_t *t = row_task(rep, st);

	return t == NULL ? -1 :
	    add(json_object_get(t, "suspensions"), "saved_turns",
	    col_int(st, 1));
}

/* The function folding the rows of each part of the report (lib/db.c
 * holds the queries). */
static const row_fn parts[SAOP__REPORT_PARTS] = {
	[SAOP__REPORT_STATUS] = row_status,
	[SAOP__REPORT_TURNS] = row_turns,
	[SAOP__REPORT_RESUMES] = row_resumes,
	[SAOP__REPORT_EVENTS] = row_events,
	[SAOP__REPORT_SUSPEND] = row_suspend,
	[SAOP__REPORT_DETECTED] = row_detected,
	[SAOP__REPORT_SAVED] = row_saved,
};

/* What each_row() folds into: the report and the part's function. */
struct fold {
	json_t *rep;
	row_fn fn;
};

/* saop__db_report() callback: fold one row.  Returns 0, or -SAOP_ENOMEM. */
static int
each_row(void *arg, const struct saop__db_row *r)
{
	const struct fold *f = arg;

	return f->fn(f->rep, r) != 0 ? -SAOP_ENOMEM : 0;
}

/*
 * Transaction body: every part of the report into arg (a struct
 * report_ctx), read in one transaction (one snapshot).  Returns 0, or a
 * negative code with e filled.
 */
static int
read_all(struct saop__db *db, void *arg, struct saop_err *e)
{
	const struct report_ctx *c = arg;
	struct fold f;
	int i;

	f.rep = c->rep;
	for (i = 0; i < SAOP__REPORT_PARTS; i++) {
		int rc;

		f.fn = parts[i];
		rc = saop__db_report(db, (enum saop__db_report_part)i, c->task,
		    each_row, &f, e);
		if (rc == -SAOP_ENOMEM)
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		if (rc != 0)
			return rc;
	}
	return 0;
}

/*
 * See saop.h: a new report of s (of task, when not NULL).  Returns 0 with
 * *report new, or a negative code with e filled and *report NULL.
 */
int
saop_report_new(struct saop_store *s, const char *task, json_t **report,
    struct saop_err *e)
{
	struct report_ctx c;
	int rc;

	*report = NULL;
	saop_err_clear(e);
	if ((c.rep = json_pack("{s:{}}", "tasks")) == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	c.task = task;
	if (s != NULL && (rc = saop__store_tx(s, 0, read_all, &c, e)) != 0) {
		json_decref(c.rep);
		return rc;
	}
	*report = c.rep;
	return 0;
}

/*
 * See saop.h: count record rec (borrowed) in report.  Returns 0, or
 * -SAOP_ENOMEM.
 */
int
saop_report_add_record(json_t *report, const json_t *rec, const char *task,
    struct saop_err *e)
{
	const char *state = saop_record_state_word(rec);
	char buf[32];
	const char *id = saop_record_task_id(rec, buf);
	json_t *t, *rep, *k;
	size_t i;
	int rc;

	if (id == NULL)
		id = "";
	if (task != NULL && strcmp(task, id) != 0)
		return 0;
	if ((t = task_of(report, id)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	rc = add(t, "records", 1) |
	    add(json_object_get(t, "states"), state ? state : "NONE", 1);
	rep = json_object_get(saop_record_validate(rec), "repairs");
	json_array_foreach(rep, i, k)
		if (json_is_string(k))
			rc |= add(json_object_get(t, "repairs"),
			    json_string_value(k), 1);
	/* saop-suspend's calls: their usage is on the record only (a
	 * refused answer's too). */
	rep = saop_record_usage(rec);
	for (i = 0; i < 2; i++) {
		static const char *const n[] = { "prompt_tokens",
		    "completion_tokens" };

		k = json_object_get(rep, n[i]);
		if (json_is_integer(k) && json_integer_value(k) > 0)
			rc |= add(json_object_get(t, "usage"), n[i],
			    json_integer_value(k));
	}
	/* What the calls cost in money, the answer and its recovery. */
	rc |= add_money(json_object_get(t, "money"), saop_record_cost(rec));
	if (rc != 0)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	return 0;
}

/*
 * Add every integer (and real: money) of from to the same member of into,
 * recursing into objects; a member into lacks is made.  Returns 0, or -1
 * out of memory.
 */
static int
sum_into(json_t *into, const json_t *from)
{
	const char *key;
	json_t *v, *sub;
	int rc = 0;

	json_object_foreach((json_t *)from, key, v) {
		if (json_is_integer(v))
			rc |= add(into, key, json_integer_value(v));
		else if (json_is_real(v))
			rc |= add_usd(into, key, json_real_value(v));
		else if (json_is_object(v)) {
			if ((sub = json_object_get(into, key)) == NULL) {
				if ((sub = json_object()) == NULL ||
				    json_object_set_new(into, key, sub) != 0)
					return -1;
			}
			rc |= sum_into(sub, v);
		}
	}
	return rc;
}

/*
 * Settle one TASK: turns are the records read when there were any (every
 * turn passed through the pipeline), else the turns with a trace in the
 * database; recovery_tokens sums the tokens of both costs.  Returns 0, or
 * -1 out of memory.
 */
static int
settle(json_t *t)
{
	json_t *rec = json_object_get(t, "recovery");
	json_int_t records = json_integer_value(json_object_get(t, "records"));
	json_int_t tokens = 0;
	const char *key;
	json_t *cost;

	if (records > json_integer_value(json_object_get(t, "turns")) &&
	    json_object_set_new(t, "turns", json_integer(records)) != 0)
		return -1;
	json_object_foreach(rec, key, cost)
		tokens = sat_add(tokens, sat_add(json_integer_value(
		    json_object_get(cost, "prompt_tokens")), json_integer_value(
		    json_object_get(cost, "completion_tokens"))));
	return json_object_set_new(t, "recovery_tokens", json_integer(tokens));
}

/* qsort() order of task ids: strcmp() of the strings pointed at. */
static int
by_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The n keys of object tasks, sorted (a stable report whatever order the
 * rows came in).  Returns a new array (free(); the keys borrowed from
 * tasks), or NULL out of memory.
 */
static const char **
sorted_ids(json_t *tasks, size_t n)
{
	const char **ids, *id;
	json_t *t;
	size_t i = 0;

	if ((ids = calloc(n + 1, sizeof(*ids))) == NULL)
		return NULL;
	json_object_foreach(tasks, id, t)
		ids[i++] = id;
	qsort(ids, i, sizeof(*ids), by_id);
	return ids;
}

/*
 * See saop.h: turn report into its final shape, tasks sorted by id, with
 * the overall sums.  Returns 0, or -SAOP_ENOMEM (report unusable then).
 */
int
saop_report_finish(json_t *report, struct saop_err *e)
{
	json_t *tasks = json_object_get(report, "tasks"), *list, *all;
	const char **ids;
	size_t n = json_object_size(tasks);
	int rc = 0;

	if ((list = json_array()) == NULL || (all = task_new("")) == NULL) {
		json_decref(list);
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	json_object_del(all, "task_id");
	json_object_del(all, "status");
	json_object_del(all, "reason");
	if ((ids = sorted_ids(tasks, n)) == NULL)
		rc = -1;
	else {
		size_t i;

		for (i = 0; i < n && rc == 0; i++) {
			json_t *t = json_object_get(tasks, ids[i]);

			rc = settle(t) | sum_into(all, t) |
			    json_array_append(list, t);
		}
		free(ids);
	}
	rc |= add(all, "tasks", (json_int_t)json_array_size(list));
	if (rc != 0 || json_object_set_new(report, "tasks", list) != 0) {
		json_decref(all);
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	if (json_object_set_new(report, "overall", all) != 0)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	return 0;
}
