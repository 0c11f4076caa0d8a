/*
 * suspend-saved.c: saop-suspend's saved turns as its commands see them
 * (the store keeps them, lib/suspend.c): read into rows, listed
 * (--list, --list --json), deleted (--clear); --resume goes through the
 * same rows (saop-suspend.c).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "suspend-saved.h"

/* Collects the saved turns for --resume and --list. */
struct saved {
	json_t *rows;		/* [{task, state, saved_at}] */
};

/* saop_turn_state_each() callback: keep one row. */
static int
collect(void *arg, const struct saop_turn_row *row)
{
	struct saved *s = arg;
	json_t *r;

	r = json_pack("{s:s, s:I, s:s, s:s, s:s?, s:I, s:I, s:b, s:b}",
	    "task", row->key.task_id, "turn", (json_int_t)row->key.turn,
	    "stage", row->key.stage, "saved_at", row->saved_at, "host",
	    row->claim_host, "pid", (json_int_t)row->claim_pid, "until",
	    (json_int_t)row->claim_until, "live", row->claim_live, "mine",
	    row->claim_mine);
	if (r == NULL)
		return -1;
	if (row->state != NULL)
		json_object_set(r, "state", row->state);
	else
		json_object_set_new(r, "error", json_string(row->error));
	return json_array_append_new(s->rows, r) != 0 ? -1 : 0;
}

/* See suspend-saved.h.  Returns the rows (new). */
json_t *
saved_turns(const struct cli *o, const char *task)
{
	struct saved s;
	struct saop_err e;
	int rc;

	if ((s.rows = json_array()) == NULL)
		cli_die_nomem();
	if ((rc = saop_turn_state_each(cli_store(o), task, collect, &s,
	    &e)) < 0)
		cli_die(&e);
	if (rc != 0)
		cli_die_nomem();
	return s.rows;
}

/* See suspend-saved.h. */
struct saop_turn_key
saved_key(const json_t *row)
{
	struct saop_turn_key k;

	k.task_id = json_string_value(json_object_get(row, "task"));
	k.turn = (long)json_integer_value(json_object_get(row, "turn"));
	k.stage = json_string_value(json_object_get(row, "stage"));
	return k;
}

/* See suspend-saved.h.  Returns 65. */
int
saved_bad(const json_t *row)
{
	struct saop_err e;

	saop_err_clear(&e);
	e.code = SAOP_EDATA;
	snprintf(e.msg, sizeof(e.msg), "%s (skipped; saop-suspend --clear "
	    "removes it)", json_string_value(json_object_get(row, "error")));
	cli_warn_err(&e);
	return EX_DATAERR;
}

/*
 * --list --json: rows as one JSON array of {task, turn (null: none),
 * stage, saved_at, received (null: the row cannot be read, named in
 * error), claim (null, or {pid, host, live})}.  Returns 0, or -1 out of
 * memory.
 */
static int
list_json(const json_t *rows)
{
	json_t *out = json_array(), *row;
	size_t i;
	int bad = out == NULL;

	json_array_foreach(rows, i, row) {
		json_t *o, *st = json_object_get(row, "state");
		json_int_t turn;

		if (bad)
			break;
		turn = json_integer_value(json_object_get(row, "turn"));
		o = json_pack("{s:O, s:o, s:O, s:O, s:o, s:o}",
		    "task", json_object_get(row, "task"),
		    "turn", turn >= 0 ? json_integer(turn) : json_null(),
		    "stage", json_object_get(row, "stage"),
		    "saved_at", json_object_get(row, "saved_at"),
		    "received", st != NULL ? json_copy(json_object_get(st,
		    "received")) : json_null(),
		    "claim", json_string_value(json_object_get(row,
		    "host")) == NULL ? json_null() : json_pack("{s:O, s:O, "
		    "s:O}", "pid", json_object_get(row, "pid"), "host",
		    json_object_get(row, "host"), "live", json_object_get(row,
		    "live")));
		if (o == NULL || (st == NULL && json_object_set(o, "error",
		    json_object_get(row, "error")) != 0))
			bad = 1;
		if (o != NULL && json_array_append_new(out, o) != 0)
			bad = 1;
	}
	if (!bad && (json_dumpf(out, stdout, JSON_COMPACT) != 0 ||
	    putchar('\n') == EOF))
		bad = 1;
	json_decref(out);
	return bad ? -1 : 0;
}

/*
 * --list: a header, then one line per saved turn (task, turn, stage,
 * saved_at, bytes received, claim), control characters escaped; with
 * --json the same as one JSON array (list_json()).  An unreadable row is
 * listed, named on stderr, and makes the status 65.  Returns it.
 */
int
saved_list(const struct cli *o, int json)
{
	json_t *rows = saved_turns(o, NULL), *row;
	int status = CLI_OK;
	size_t i;

	json_array_foreach(rows, i, row)
		if (json_object_get(row, "state") == NULL)
			status = cli_worse(status, saved_bad(row));
	if (json) {
		if (list_json(rows) != 0)
			cli_die_nomem();
		json_decref(rows);
		return status;
	}
	printf("TASK\tTURN\tSTAGE\tSAVED_AT\tRECEIVED\tCLAIM\n");
	json_array_foreach(rows, i, row) {
		json_t *st = json_object_get(row, "state");

		cli_put_field(stdout, json_string_value(json_object_get(row,
		    "task")));
		printf("\t");
		if (json_integer_value(json_object_get(row, "turn")) >= 0)
			printf("%" JSON_INTEGER_FORMAT, json_integer_value(
			    json_object_get(row, "turn")));
		else
			printf("-");
		printf("\t");
		cli_put_field(stdout, json_string_value(json_object_get(row,
		    "stage")));
		printf("\t%s\t", json_string_value(json_object_get(row,
		    "saved_at")));
		if (st != NULL)
			printf("%" JSON_INTEGER_FORMAT, json_integer_value(
			    json_object_get(st, "received")));
		else
			printf("unreadable");
		printf("\t");
		if (json_string_value(json_object_get(row, "host")) == NULL)
			printf("-");
		else {
			printf("pid %" JSON_INTEGER_FORMAT "@",
			    json_integer_value(json_object_get(row, "pid")));
			cli_put_field(stdout, json_string_value(
			    json_object_get(row, "host")));
			printf(json_is_true(json_object_get(row, "live")) ?
			    " (working)" : " (gone: free to resume)");
		}
		printf("\n");
	}
	json_decref(rows);
	return status;
}

/* --clear TASK: 0 when deleted, 1 when TASK had no saved turn. */
int
saved_clear(const struct cli *o, const char *task)
{
	struct saop_err e;
	int rc;

	if ((rc = saop_turn_state_clear(cli_store(o), task, &e)) < 0)
		cli_die(&e);
	if (rc == 0) {
		if (!o->quiet)
			cli_warn("no saved turn for task %s", task);
		return CLI_FLAGGED;
	}
	return CLI_OK;
}
