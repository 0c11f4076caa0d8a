/* saop-report: what happened to each task, from state.sqlite (and records). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/*
 * The sums live in libsaop (lib/report.c): SQLite stays behind the
 * library, which owns the schema and its migrations, and the JSON report
 * is one value that --json prints as it is and the text form reads.
 */


/* --json, --copy-to */
static int json_opt;
static const char *copy_to;

/* The options of saop-report: getopt, --help, usage, completion, page. */
static const struct cli_option options[] = {
	CLI_VALUE("copy-to", "DB", &copy_to,
	    "copy every row of the state database into DB (a postgresql:// "
	    "URI, or a file) instead of reporting"),
	CLI_FLAG("json", &json_opt,
	    "one JSON object (tasks and overall) instead of text"),
	CLI_OPTS_COMMON,
	CLI_OPTS_END
};

/* The integer at path a.b (or a when b is NULL) of obj; 0 when missing. */
static long long
num(const json_t *obj, const char *a, const char *b)
{
	const json_t *v = json_object_get(obj, a);

	if (b != NULL)
		v = json_object_get(v, b);
	return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

/* Print the members of counts ("kind N, ...") or "-" when it has none. */
static void
print_counts(const json_t *counts)
{
	const char *key;
	json_t *v;
	int first = 1;

	json_object_foreach((json_t *)counts, key, v) {
		printf("%s", first ? "" : ", ");
		cli_put_field(stdout, key);
		printf(" %lld", (long long)json_integer_value(v));
		first = 0;
	}
	if (first)
		putchar('-');
}

/* Print the cost object c as "sent S B, received R B, P+C tokens". */
static void
print_cost(const json_t *c)
{
	printf("sent %lld B, received %lld B, %lld+%lld tokens",
	    num(c, "sent_bytes", NULL), num(c, "received_bytes", NULL),
	    num(c, "prompt_tokens", NULL), num(c, "completion_tokens", NULL));
}

/* 1 when the cost object c has any non-zero count, else 0. */
static int
logged(const json_t *c)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)c, key, v)
		if (json_integer_value(v) != 0)
			return 1;
	return 0;
}

/*
 * Print the money object m (the records' cost) as "$TOTAL ($A answer, $R
 * recovery)", with the number of parts whose cost is not known; with
 * one, the sums are "at least" theirs (what is known, not the cost).
 */
static void
print_money(const json_t *m)
{
	long long unpriced = num(m, "unpriced", NULL);

	printf("  money            %s$%.6f ($%.6f answer, $%.6f recovery)",
	    unpriced > 0 ? "at least " : "",
	    json_number_value(json_object_get(m, "total")),
	    json_number_value(json_object_get(m, "answer")),
	    json_number_value(json_object_get(m, "recovery")));
	if (unpriced > 0)
		printf(", %lld cost%s not known", unpriced,
		    unpriced == 1 ? "" : "s");
	putchar('\n');
}

/* Print one TASK (or the overall sums) t as indented lines. */
static void
print_task(const json_t *t)
{
	const json_t *rec = json_object_get(t, "recovery");
	long long repairs = 0;
	const char *key;
	json_t *v;

	json_object_foreach(json_object_get(t, "repairs"), key, v)
		repairs += json_integer_value(v);
	printf("  turns            %lld", num(t, "turns", NULL));
	if (json_object_size(json_object_get(t, "states")) > 0) {
		printf(" (");
		print_counts(json_object_get(t, "states"));
		putchar(')');
	}
	printf("\n  truncations      %lld detected, %lld resumed, "
	    "%lld exhausted (%lld resume calls)\n",
	    num(t, "truncations", "detected"), num(t, "truncations", "resumed"),
	    num(t, "truncations", "exhausted"),
	    num(t, "truncations", "attempts"));
	printf("  local repairs    %lld (", repairs);
	print_counts(json_object_get(t, "repairs"));
	printf(")\n  correction turns %lld\n  escalations      %lld\n",
	    num(t, "corrections", NULL), num(t, "escalations", NULL));
	printf("  suspensions      %lld, %lld restored, %.1f s down, "
	    "%lld turns still saved\n", num(t, "suspensions", "count"),
	    num(t, "suspensions", "restored"),
	    (double)num(t, "suspensions", "downtime_ms") / 1000.0,
	    num(t, "suspensions", "saved_turns"));
	printf("  pruned           %lld outputs, %lld bytes\n",
	    num(t, "pruned", "outputs"), num(t, "pruned", "bytes"));
	printf("  resume cost      ");
	print_cost(json_object_get(rec, "resume"));
	printf("\n  correction cost  ");
	if (num(t, "corrections", NULL) > 0 && !logged(json_object_get(rec,
	    "correction")))
		printf("not in state.sqlite (no cost logged with the "
		    "correction turns)");
	else
		print_cost(json_object_get(rec, "correction"));
	printf("\n  recovery tokens  %lld\n", num(t, "recovery_tokens", NULL));
	printf("  answer tokens    %lld+%lld (the records' usage)\n",
	    num(t, "usage", "prompt_tokens"),
	    num(t, "usage", "completion_tokens"));
	print_money(json_object_get(t, "money"));
}

/* Print report (finished) as text: each task, then the overall sums. */
static void
print_text(const json_t *report)
{
	const json_t *t, *all = json_object_get(report, "overall");
	size_t i;

	json_array_foreach(json_object_get(report, "tasks"), i, t) {
		const char *status = json_string_value(json_object_get(t,
		    "status"));
		const char *reason = json_string_value(json_object_get(t,
		    "reason"));

		/* Task ids and reasons are anybody's text: control
		 * characters shown escaped, never sent to the terminal. */
		printf("task ");
		cli_put_field(stdout, json_string_value(json_object_get(t,
		    "task_id")));
		printf(": ");
		cli_put_field(stdout, status ? status : "-");
		if (reason != NULL) {
			printf(" (");
			cli_put_field(stdout, reason);
			printf(")");
		}
		printf("\n");
		print_task(t);
	}
	printf("overall: %lld task%s\n", num(all, "tasks", NULL),
	    num(all, "tasks", NULL) == 1 ? "" : "s");
	print_task(all);
}

/*
 * Count the records of path ("-": standard input) into report; lines that
 * are not records are named on stderr and skipped.  Returns CLI_OK, or
 * EX_DATAERR when a line was not a record.
 */
static int
read_records(const struct cli *o, const char *path, json_t *report)
{
	struct saop_reader *in;
	struct saop_err e;
	json_t *rec;
	int rc, status = CLI_OK;

	if ((in = saop_reader_open(path, o->max_record, &e)) == NULL)
		cli_die(&e);
	while ((rc = saop_reader_next(in, &rec, &e)) != 0) {
		if (rc < 0) {
			if (e.code != SAOP_EDATA && e.code != SAOP_ELIMIT)
				cli_die(&e);
			cli_warn_err(&e);
			status = EX_DATAERR;
			continue;
		}
		rc = saop_report_add_record(report, rec, o->task, &e);
		json_decref(rec);
		if (rc != 0)
			cli_die(&e);
	}
	saop_reader_close(in);
	return status;
}

/*
 * The database the run reads (saop_config_db(): --db, $SAOP_DB, else
 * .saop/state.sqlite); NULL when that file does not exist (a report never
 * makes one).  A server's URI is taken as it is.
 */
static const char *
db_path(const struct cli *o)
{
	const char *p = saop_config_db(o->db);

	return saop_store_is_server(p) || access(p, F_OK) == 0 ? p : NULL;
}

/*
 * --copy-to to: copy every row of the database db (NULL: missing) into
 * to, telling how many on stderr (unless --quiet).  Returns the exit
 * status: 0, or exits through cli_die() (74 the database, 65 a
 * destination that is not empty).
 */
static int
copy(const struct cli *o, const char *db, const char *to, int files)
{
	struct saop_store *from, *dest;
	struct saop_err e;
	long long n;

	if (files)
		cli_usage_error("--copy-to takes no record files");
	if (db == NULL) {
		cli_warn("no state database to copy");
		return EX_NOINPUT;
	}
	if ((from = saop_store_open(db, &e)) == NULL ||
	    (dest = saop_store_open(to, &e)) == NULL)
		cli_die(&e);
	if ((n = saop_store_copy(from, dest, &e)) < 0)
		cli_die(&e);
	if (!o->quiet)
		fprintf(stderr, "saop-report: copied %lld rows from %s to %s\n",
		    n, saop_store_path(from), saop_store_path(dest));
	saop_store_close(from);
	saop_store_close(dest);
	return CLI_OK;
}

/*
 * saop-report [--json] [--task id] [--db path] [file ...]: read the state
 * database (and the records of the files), print the report.  Returns 0,
 * or 65 when a line of a file was not a record.
 */
static int
run(int argc, char *argv[])
{
	struct cli opt = { 0 };
	struct saop_store *s = NULL;
	struct saop_err e;
	const char *db;
	json_t *report;
	int first, json, status = CLI_OK;

	cli_init("saop-report", options, "[file ...]\n--copy-to db",
	    "Print, per task and overall, what the pipeline did: turns, "
	    "truncations,\nrepairs, correction turns, escalations, "
	    "suspensions, pruning and the cost\nof recovery, from the state "
	    "database and the records given (their turns, final\nstates and "
	    "local repairs by kind).");
	first = cli_getopt(&opt, argc, argv, NULL, NULL);
	json = json_opt;
	db = db_path(&opt);
	if (copy_to != NULL)
		return copy(&opt, db, copy_to, first < argc);
	if (db == NULL && first == argc) {
		cli_warn("no state database at %s, and no records given",
		    saop_config_db(opt.db));
		return EX_NOINPUT;
	}
	if (db != NULL && (s = saop_store_open(db, &e)) == NULL)
		cli_die(&e);
	if (saop_report_new(s, opt.task, &report, &e) != 0)
		cli_die(&e);
	saop_store_close(s);
	for (; first < argc; first++)
		status = cli_worse(status, read_records(&opt, argv[first],
		    report));
	if (saop_report_finish(report, &e) != 0)
		cli_die(&e);
	if (opt.quiet)
		;
	else if (json) {
		if (json_dumpf(report, stdout, JSON_COMPACT) != 0)
			cli_warn("write error");
		putchar('\n');
	} else
		print_text(report);
	json_decref(report);
	return status;
}

/* saop-report: run(), its status settled (cli_exit()).  Returns it. */
int
main(int argc, char *argv[])
{
	return cli_exit(run(argc, argv));
}
