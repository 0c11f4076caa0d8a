/*
 * saop-prune.c: keep old, large tool outputs in state.sqlite, pass
 * summaries on.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Entries are stored in batches of this many raw bytes or entries, one
 * transaction (one fsync) each, and written out after its commit. */
#define BATCH_BYTES	((size_t)8 << 20)
#define BATCH_ENTRIES	64

enum {
	OPT_THRESHOLD = CLI_OPT_FIRST_OWN,
	OPT_KEEP,
	OPT_GET
};

static struct cli opt;
static struct saop_prune_stats stats;
static long cur_line;

/*
 * The library's on_output callback, for -v and --dry-run: say on stderr
 * what was (or would be) pruned, naming the line at hand.
 */
static void
told(void *arg, const struct saop_prune_item *it)
{
	(void)arg;
	if (!opt.dry_run && opt.verbose == 0)
		return;
	fprintf(stderr, "%s: ", cli_name());
	if (cur_line > 0)
		fprintf(stderr, "line %ld: ", cur_line);
	/* The place, tool name and call id are the input's text: control
	 * characters shown escaped, never sent to the terminal. */
	cli_put_field(stderr, it->field[0] ? it->field : "/");
	fputs(" (tool ", stderr);
	cli_put_field(stderr, it->tool_name);
	fputs(", call ", stderr);
	cli_put_field(stderr, it->tool_call_id);
	fprintf(stderr, "): %zu bytes, turn age %ld: ", it->byte_size,
	    it->turn_age);
	if (opt.dry_run)
		fprintf(stderr, "would be pruned\n");
	else
		fprintf(stderr, "%s id %lld\n", it->reused ?
		    "already stored as" : "stored as", it->id);
}

/*
 * Handle the result of a prune call in --entries and -R: bad input ends
 * the run (65).  A store that failed leaves what is not yet committed
 * unpruned: report it once, prune no more, and end with 74 after passing
 * everything on.
 */
static void
settle(int rc, const struct saop_err *e, int *status, int *store_failed)
{
	if (rc == 0)
		return;
	if (e->code == SAOP_EDB || e->code == SAOP_EIO) {
		cli_warn_err(e);
		cli_warn("passing the rest of the input on unpruned");
		*status = EX_IOERR;
		*store_failed = 1;
		return;
	}
	cli_die(e);
}

/*
 * Write v as one record line on stdout, unless -q; exits with the error
 * when it cannot be written.
 */
static void
write_json(const json_t *v)
{
	struct saop_err e;

	if (opt.quiet)
		return;
	if (saop_record_write(stdout, v, &e) != 0)
		cli_die(&e);
}

/* Exit 65 with SAOP_EDATA naming line and field, as the library does. */
static noreturn void
data_error(long line, const char *field, const char *msg)
{
	struct saop_err e;

	saop_err_clear(&e);
	e.code = SAOP_EDATA;
	e.line = line;
	snprintf(e.field, sizeof(e.field), "%s", field);
	snprintf(e.msg, sizeof(e.msg), "%s", msg);
	cli_die(&e);
}

/* -r: write rec's request messages (pruned) as one line, when it has any. */
static void
raw_out(const struct cli_loop *l, const json_t *rec)
{
	const json_t *msgs;

	(void)l;
	msgs = json_object_get(saop_record_request(rec), "messages");
	if (msgs != NULL)
		write_json(msgs);
}

/*
 * cli_run()'s work on one record: prune its request's messages.  A store
 * that cannot be written leaves the record unpruned (nothing is replaced
 * that is not stored) and fails it; the next record tries again.  Returns
 * CLI_OK, or -1 with e filled (a request that is not an object, a failed
 * prune).
 */
static int
prune_one(struct cli_loop *l, json_t *rec, struct saop_err *e)
{
	struct saop_prune_opts *po = l->arg;
	json_t *req, *msgs;
	unsigned long before = stats.pruned;
	static char buf[32];	/* po->task_id's, until the next record */

	cur_line = l->line;
	req = saop_record_request(rec);
	if (req == NULL && saop_record_has(rec, SAOP_RECORD_REQUEST)) {
		saop_err_clear(e);
		e->code = SAOP_EDATA;
		snprintf(e->field, sizeof(e->field), "/request");
		snprintf(e->msg, sizeof(e->msg), "not an object");
		return -1;
	}
	if ((msgs = json_object_get(req, "messages")) == NULL)
		return CLI_OK;
	po->line = l->line;
	po->turn = saop_record_turn(rec);
	if ((po->task_id = saop_record_task_id(rec, buf)) == NULL)
		po->task_id = cli_task_id(&opt);
	if (saop_prune_messages(msgs, po, &stats, e) != 0)
		return -1;
	if (stats.pruned > before)
		cli_record_task(&opt, rec);
	return CLI_OK;
}

/*
 * -R: all of path ("-": standard input) is one chat request or one messages
 * array; prune it and write it (with -r its messages) back as one line.
 * Exits with the error for input that cannot be read or is not such JSON.
 * Returns CLI_OK, or EX_IOERR when the store failed.
 */
static int
prune_raw(const char *path, struct saop_prune_opts *po)
{
	struct saop_err e;
	json_error_t je;
	json_t *v, *msgs;
	FILE *f = stdin;
	char *buf;
	size_t len;
	int rc, status = CLI_OK, failed = 0;

	if (strcmp(path, "-") != 0 && (f = fopen(path, "rb")) == NULL) {
		saop_err_clear(&e);
		e.code = SAOP_ENOINPUT;
		snprintf(e.msg, sizeof(e.msg), "%s: %s", path, strerror(errno));
		cli_die(&e);
	}
	rc = saop_read_all(f, &buf, &len, opt.max_record, &e);
	if (f != stdin)
		fclose(f);
	if (rc != 0)
		cli_die(&e);
	v = json_loadb(buf, len, JSON_ALLOW_NUL, &je);
	free(buf);
	if (v == NULL) {
		saop_err_clear(&e);
		e.code = SAOP_EDATA;
		e.line = je.line > 0 ? je.line : 1;
		e.offset = je.position;
		e.has_offset = 1;
		snprintf(e.msg, sizeof(e.msg), "not JSON: %s", je.text);
		cli_die(&e);
	}
	if (json_is_array(v)) {
		msgs = v;
		po->field = "";
	} else if (json_is_object(v) &&
	    json_is_array(json_object_get(v, "messages"))) {
		msgs = json_object_get(v, "messages");
		po->field = "/messages";
	} else {
		json_decref(v);		/* data_error() exits: nothing held */
		data_error(1, "", "-R reads a chat request (an object with"
		    " messages) or a messages array");
	}
	po->task_id = cli_task_id(&opt);
	rc = saop_prune_messages(msgs, po, &stats, &e);
	settle(rc, &e, &status, &failed);
	write_json(opt.raw_out ? msgs : v);
	json_decref(v);
	return status;
}

/* Copy the lines waiting in f to standard output and empty f. */
static void
pass_on(FILE *f)
{
	char buf[65536];
	size_t n;

	if (f == NULL)
		return;
	rewind(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (fwrite(buf, 1, n, stdout) != n)
			break;
	rewind(f);
	if (ftruncate(fileno(f), 0) != 0)
		cli_warn("a line that is not an entry may be repeated");
}

/*
 * Prune the n entries in batch (unless the store failed before), write them
 * out and free them; *n becomes 0.  A store that fails sets *failed and
 * *status to 74.
 */
static void
flush_entries(json_t **batch, long *lines, size_t *n,
    struct saop_prune_opts *po, int *status, int *failed)
{
	struct saop_err e;
	size_t i;

	if (*n == 0)
		return;
	if (!*failed) {
		int rc;

		cur_line = 0;
		rc = saop_prune_entries(batch, lines, *n, po, &stats, &e);
		settle(rc, &e, status, failed);
	}
	for (i = 0; i < *n; i++) {
		write_json(batch[i]);
		json_decref(batch[i]);
	}
	*n = 0;
}

/*
 * --entries: prune the NDJSON tool-output entries of path, streamed in
 * small batches; a line that is not an entry, or an entry that is wrong, is
 * passed on in its place.  Returns the worst status met: CLI_OK, an entry's
 * error status (65 for bad input), 74 when the store failed.
 */
static int
prune_entries(const char *path, struct saop_prune_opts *po)
{
	struct saop_prune_opts check = *po;
	struct saop_prune_stats scratch;
	struct saop_reader *in;
	struct saop_err e;
	json_t *batch[BATCH_ENTRIES], *en;
	long lines[BATCH_ENTRIES];
	size_t n = 0, bytes = 0;
	unsigned long done = 0;
	int rc, status = CLI_OK, failed = 0;
	FILE *bad = NULL;

	/* Each entry is checked alone as it comes (a dry run stores
	 * nothing); one that is wrong is passed on with its error, in its
	 * place, after the entries before it. */
	check.dry_run = 1;
	check.on_output = NULL;
	if ((in = saop_reader_open(path, opt.max_record, &e)) == NULL)
		cli_die(&e);
	cli_flush_on_wait(in);
	/* Lines that are not entries wait in a file (however long they
	 * are) until the entries read before them are written. */
	if (!opt.quiet && (bad = tmpfile()) != NULL)
		saop_reader_pass(in, bad);
	while ((rc = saop_reader_next(in, &en, &e)) != 0) {
		long line = saop_reader_line(in);

		if (rc < 0) {
			if (e.code != SAOP_EDATA && e.code != SAOP_ELIMIT)
				cli_die(&e);
			flush_entries(batch, lines, &n, po, &status, &failed);
			bytes = 0;
			cli_warn_err(&e);
			status = cli_worse(status, EX_DATAERR);
			pass_on(bad);
			continue;
		}
		check.line = line;
		memset(&scratch, 0, sizeof(scratch));
		if (saop_prune_entries(&en, &line, 1, &check, &scratch,
		    &e) != 0) {
			flush_entries(batch, lines, &n, po, &status, &failed);
			bytes = 0;
			cli_warn_err(&e);
			status = cli_worse(status,
			    saop_err_exit_status(e.code));
			if (cli_record_error(en, &e) != 0)
				abort();
			write_json(en);
			json_decref(en);
			continue;
		}
		batch[n] = en;
		lines[n++] = line;
		bytes += json_string_length(json_object_get(en,
		    "raw_content"));
		if (n == BATCH_ENTRIES || bytes >= BATCH_BYTES) {
			flush_entries(batch, lines, &n, po, &status, &failed);
			bytes = 0;
		}
		cli_progress(&opt, ++done, 0);
	}
	flush_entries(batch, lines, &n, po, &status, &failed);
	cli_progress(&opt, done, 1);
	saop_reader_close(in);
	if (bad != NULL)
		fclose(bad);
	return status;
}

/*
 * --get ID, --get-latest TOOL: write the stored raw output, byte for byte,
 * on stdout; exits with the error when the store fails.  Returns CLI_OK, or
 * CLI_FLAGGED when there is no such output.
 */
static int
get(long long id, const char *tool)
{
	struct saop_store *s = cli_store(&opt);
	struct saop_err e;
	int rc;

	if (tool != NULL) {
		if ((rc = saop_tool_output_latest(s, tool, opt.task, &id,
		    &e)) < 0)
			cli_die(&e);
		if (rc == 1) {
			cli_warn("no stored output of tool '%s'", tool);
			return CLI_FLAGGED;
		}
	}
	if ((rc = saop_tool_output_get(s, id, stdout, &e)) < 0)
		cli_die(&e);
	if (rc == 1) {
		cli_warn("no stored output with id %lld", id);
		return CLI_FLAGGED;
	}
	return CLI_OK;
}

/*
 * saop-prune: parse the options, then run the one mode they ask for (--get,
 * --get-latest, --list, --entries, -R, or records through cli_run()).
 * Returns the exit status of the run.
 */
/* What the options ask for. */
struct prune_run {
	struct saop_prune_opts po;
	int entries, list;	/* --entries, --list */
	long long get_id;	/* --get */
	const char *tool;	/* --get-latest */
};

/* The run's options (the table below sets some of them itself). */
static struct prune_run run_opts;

static const struct cli_option options[] = {
	CLI_OPT("threshold", 0, OPT_THRESHOLD, "BYTES",
	    "prune outputs larger than BYTES (51200)"),
	CLI_COUNT("min-age", "TURNS", &run_opts.po.min_age, LONG_MAX,
	    "... whose turn age is at least TURNS (2)"),
	CLI_OPT("keep", 0, OPT_KEEP, "CHARS", "characters of the output kept (500)"),
	CLI_FLAG("entries", &run_opts.entries,
	    "read and write NDJSON tool-output entries"),
	CLI_OPT("get", 0, OPT_GET, "ID",
	    "write stored output ID back, byte for byte"),
	CLI_VALUE("get-latest", "TOOL", &run_opts.tool,
	    "write the latest stored output of TOOL"),
	CLI_FLAG("list", &run_opts.list,
	    "list the stored outputs (of the task given)"),
	CLI_OPT("dry-run", 0, CLI_OPT_DRY_RUN, NULL,
	    "say what would be pruned; store and change nothing"),
	CLI_OPTS_COMMON,
	CLI_OPTS_RECORDS,
	CLI_OPTS_END
};


/*
 * The program's own options, for cli_getopt(): 1 when ch was one of
 * them (set in the run arg), else 0.
 */
static int
own_opt(void *arg, int ch, const char *val)
{
	struct prune_run *r = arg;

	switch (ch) {
	case OPT_THRESHOLD:
		r->po.threshold = (size_t)cli_count("--threshold", val,
		    LONG_MAX);
		return 1;
	case OPT_KEEP:
		r->po.keep = (size_t)cli_count("--keep", val, LONG_MAX);
		return 1;
	case OPT_GET:
		if ((r->get_id = cli_count("--get", val, LONG_MAX)) == 0)
			cli_usage_error("--get: ids start at 1");
		return 1;
	default:
		return 0;
	}
}

/* --list [TASK]: the stored outputs, a line each.  Returns 0 (or exits). */
static int
list_outputs(const char *task)
{
	struct saop_err e;

	if (saop_tool_output_list(cli_store(&opt), task, stdout, &e) != 0)
		cli_die(&e);
	return CLI_OK;
}

static int
run(int argc, char *argv[])
{
	struct cli_loop loop = { 0 };
	const char *path;
	int status, first;

	cli_init("saop-prune", options, "[file ...]\n"
	    "--get id | --get-latest tool | --list [task]",
	    "Store old, large tool outputs of the conversation in state.sqlite"
	    " and replace\nthem by a summary.");
	saop_prune_opts_init(&run_opts.po);
	first = cli_getopt(&opt, argc, argv, own_opt, &run_opts);
	if (run_opts.tool != NULL && *run_opts.tool == '\0')
		cli_usage_error("--get-latest: no tool name");
	if ((run_opts.get_id != 0) + (run_opts.tool != NULL) + run_opts.list + run_opts.entries +
	    opt.raw_in > 1)
		cli_usage_error("--get, --get-latest, --list, --entries and -R"
		    " go alone");
	if (run_opts.entries && opt.raw_out)
		cli_usage_error("-r does not apply to --entries");
	cli_operands(argc, argv, first, run_opts.get_id || run_opts.tool ? 0 :
	    run_opts.list || run_opts.entries || opt.raw_in ? 1 : CLI_FILES);
	path = first < argc ? argv[first] : "-";
	if (run_opts.get_id != 0 || run_opts.tool != NULL)
		return get(run_opts.get_id, run_opts.tool);
	if (run_opts.list)
		return list_outputs(first < argc ? argv[first] : NULL);
	run_opts.po.dry_run = opt.dry_run;
	run_opts.po.task_id = cli_task_id(&opt);
	run_opts.po.field = "/request/messages";
	/* Made now, opened only when an output is to be stored. */
	run_opts.po.store = cli_store(&opt);
	run_opts.po.on_output = told;
	if (run_opts.entries) {
		status = prune_entries(path, &run_opts.po);
	} else if (opt.raw_in) {
		status = prune_raw(path, &run_opts.po);
	} else {
		loop.o = &opt;
		cli_loop_inputs(&loop, argc, argv, first);
		loop.record = prune_one;
		loop.judged_later = 1;
		loop.raw_out = raw_out;
		loop.arg = &run_opts.po;
		status = cli_run(&loop);
	}
	if (opt.verbose > 0)
		cli_warn("%lu outputs, %lu pruned (%lu stored), %lu already "
		    "pruned; %llu bytes of output became %llu", stats.outputs,
		    stats.pruned, stats.stored, stats.already, stats.bytes_in,
		    stats.bytes_out);
	return status;
}

/* saop-prune: run(), its status settled (cli_exit()).  Returns it. */
int
main(int argc, char *argv[])
{
	return cli_exit(run(argc, argv));
}
