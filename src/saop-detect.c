/*
 * saop-detect: tell complete, truncated and invalid JSON apart in the raw
 * output of each record (or, with -R, in all of the input, streamed).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli.h"

enum {
	OPT_MAX_DEPTH = CLI_OPT_FIRST_OWN
};

static int close_opt;		/* --close */
static size_t max_depth;	/* --max-depth, 0: the default */

/* The options of saop-detect: getopt, --help, usage, completion, page. */
static const struct cli_option options[] = {
	CLI_FLAG("close", &close_opt,
	    "append the closing suffix to raw of truncated records"),
	CLI_OPT("max-depth", 0, OPT_MAX_DEPTH, "N",
	    "deepest nesting followed (default 100000)"),
	CLI_OPTS_COMMON,
	CLI_OPTS_RECORDS,
	CLI_OPTS_END
};


/* Exit 74, saying "write error" and why (errno). */
static _Noreturn void
die_write(void)
{
	struct saop_err e;

	saop_err_clear(&e);
	e.code = SAOP_EIO;
	e.sys_errno = errno;
	snprintf(e.msg, sizeof(e.msg), "write error: %s", strerror(errno));
	cli_die(&e);
}

/* malloc() that exits 70 when out of memory. */
static void *
xmalloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL)
		cli_die_nomem();
	return p;
}

/* json_dumps() that exits 70 when out of memory. */
static char *
xdumps(const json_t *j, size_t flags)
{
	char *s = json_dumps(j, flags);

	if (s == NULL)
		cli_die_nomem();
	return s;
}

/* Write the n bytes at p to stdout; exits 74 when they cannot be written. */
static void
put(const void *p, size_t n)
{
	if (n > 0 && fwrite(p, 1, n, stdout) != n)
		die_write();
}

/*
 * Write the key of member m of the record streamed out (-R), with what
 * comes before it: {"m": for the first, else ,"m":.
 */
static void
put_key(enum saop_record_member m, int first)
{
	const char *k = saop_record_member_name(m);

	put(first ? "{\"" : ",\"", 2);
	put(k, strlen(k));
	put("\":", 2);
}

/*
 * With --db, $SAOP_DB or --log, record PARTIAL_COMPLETION_DETECTED for
 * rec (NULL with -R: the run's task) with detect's length, truncation
 * index, last valid token and expected.  A failure to store it is kept for
 * saop_store_error(); exits 70 out of memory.
 */
static void
detect_event(const struct cli *o, const json_t *rec, const json_t *detect)
{
	struct saop_err e;
	json_t *data;

	if (!saop_config_db_named(o->db) && o->log == NULL)
		return;
	data = json_pack("{s:O,s:O,s:O,s:O}",
	    "length", json_object_get(detect, "length"),
	    "truncation_index", json_object_get(detect, "truncation_index"),
	    "last_valid_token", json_object_get(detect, "last_valid_token"),
	    "expected", json_object_get(detect, "expected"));
	if (data == NULL)
		cli_die_nomem();
	/* A failure is kept in the store: cli_run() puts it on the record,
	 * which is written all the same. */
	if (rec != NULL)
		saop_record_event(cli_store(o), rec, cli_task_id(o),
		    SAOP_EVENT_PARTIAL_COMPLETION_DETECTED, data);
	else
		saop_event(cli_store(o), cli_task_id(o), -1,
		    SAOP_EVENT_PARTIAL_COMPLETION_DETECTED, data, &e);
	json_decref(data);
}

/*
 * The detect object of res.  Returns a new reference; exits 70 when out of
 * memory.
 */
static json_t *
detect_json(const struct saop_detect_result *res)
{
	json_t *j;

	if ((j = saop_detect_result_json(res)) == NULL)
		cli_die_nomem();
	return j;
}

/*
 * cli_run()'s work on one record: judge its raw, add detect and state (with
 * --close, close a truncated raw) and record the event.  Returns the
 * status of the state it is given (cli_status(): CLI_OK for complete JSON,
 * CLI_FLAGGED for truncated or invalid), CLI_ESCALATE for a turn the model
 * refused without raw (handed on as it came: its state and error say what
 * happened), or -1 with e filled when rec has no string raw otherwise.
 */
static int
detect_record(struct cli_loop *l, json_t *rec, struct saop_err *e)
{
	const struct cli *o = l->o;
	struct saop_detect_result res;
	const char *raw;
	json_t *detect;
	size_t len;
	enum saop_verdict v;

	if ((raw = saop_record_raw(rec, &len)) == NULL) {
		const char *why = saop_record_finish_reason(rec);

		/* A refusal has no answer to judge: a person decides. */
		if (why != NULL && strcmp(why, "refusal") == 0)
			return cli_status(SAOP_STATE_USER_ESCALATION);
		saop_err_clear(e);
		e->code = SAOP_EDATA;
		snprintf(e->field, sizeof(e->field), "/raw");
		snprintf(e->msg, sizeof(e->msg), "the record has no string "
		    "\"raw\" to judge");
		return -1;
	}
	if (saop_record_detect(rec, raw, len, max_depth, &res) != 0)
		cli_die_nomem();
	detect = detect_json(&res);
	if (close_opt && res.verdict == SAOP_TRUNCATED && res.has_close) {
		size_t clen, js = (size_t)res.json_start;
		char *closed;

		/* The JSON up to the close point (its wrapper dropped), then
		 * the closing. */
		len = (size_t)res.close_index - js;
		clen = strlen(res.closing);
		closed = xmalloc(len + clen + 1);
		memcpy(closed, raw + js, len);
		memcpy(closed + len, res.closing, clen + 1);
		if (saop_record_set_raw(rec, closed, len + clen) != 0 ||
		    json_object_set(detect, "closed",
		    json_object_get(detect, "closing")) != 0)
			cli_die_nomem();
		free(closed);
	}
	if (saop_record_set_detect(rec, detect) != 0 ||
	    saop_record_set_state(rec, saop_state_of(saop_verdict_state(
	    res.verdict))) != 0)
		cli_die_nomem();
	if ((v = res.verdict) == SAOP_TRUNCATED)
		detect_event(o, rec, detect);
	saop_detect_result_free(&res);
	return cli_status(saop_state_of(saop_verdict_state(v)));
}

/* -r: write rec's raw text (closed with --close), LF-terminated. */
static void
raw_out(const struct cli_loop *l, const json_t *rec)
{
	const char *raw;
	size_t len;

	(void)l;
	if ((raw = saop_record_raw(rec, &len)) != NULL) {
		put(raw, len);
		put("\n", 1);
	}
}

/* saop_escaper's write(): put() the n bytes at p (exits 74 on failure). */
static int
esc_write(const char *p, size_t n, void *arg)
{
	(void)arg;
	put(p, n);
	return 0;
}

/* The input kept by run_raw() under --close (its close point is known
 * only at the end). */
struct kept {
	unsigned char *buf;
	size_t len, cap;
};

/* Append p[0..n) to k; exits 65 past max bytes (0: the default record
 * limit), 70 when out of memory. */
static void
keep_input(struct kept *k, const unsigned char *p, size_t n, size_t max)
{
	struct saop_err e;
	unsigned char *nb;

	if (max == 0)
		max = SAOP_MAX_RECORD_BYTES;
	if (k->len + n > max) {
		saop_err_clear(&e);
		e.code = SAOP_ELIMIT;
		snprintf(e.msg, sizeof(e.msg), "--close: the input is longer "
		    "than %zu bytes (--max-record)", max);
		cli_die(&e);
	}
	if (k->len + n > k->cap) {
		k->cap = (k->len + n) * 2;
		if ((nb = realloc(k->buf, k->cap)) == NULL)
			cli_die_nomem();
		k->buf = nb;
	}
	memcpy(k->buf + k->len, p, n);
	k->len += n;
}

/* What run_raw() has seen of the input: only white space so far, the
 * start of bare JSON (streamed), or a text that may be wrapped (kept). */
enum { SHAPE_UNKNOWN, SHAPE_BARE, SHAPE_WRAPPED };

/*
 * The shape of the input from its chunk p[0..n) at offset off (all before
 * it white space): its first byte that is not white space (or a BOM)
 * starting a JSON value means bare, any other wrapped.  Returns
 * SHAPE_UNKNOWN when the chunk holds no such byte.
 */
static int
shape_of(const unsigned char *p, size_t n, size_t off)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (off + i < 3 && p[i] == (unsigned char)"\xef\xbb\xbf"[off + i])
			continue;
		if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' ||
		    p[i] == '\r')
			continue;
		return p[i] != '\0' && strchr("{[\"-0123456789tfn",
		    p[i]) != NULL ? SHAPE_BARE : SHAPE_WRAPPED;
	}
	return SHAPE_UNKNOWN;
}

/* Write p[0..n) of the input: escaped into the record (record), or as it
 * is (-R), or nothing (-q). */
static void
out_input(const struct cli *o, struct saop_escaper *x, int record,
    const unsigned char *p, size_t n)
{
	if (record)
		(void)saop_escaper_feed(x, p, n);
	else if (o->raw_out && !o->quiet)
		put(p, n);
}

/*
 * -R: judge all of path (NULL or "-": standard input) as one raw output,
 * read in large blocks and streamed out as one record (with -r as the raw
 * text; with --close kept, and written up to the close point and the
 * closing).  Exits with the error when the input cannot be opened or read.
 * Returns the status of its state (cli_status(): CLI_OK for complete JSON,
 * CLI_FLAGGED for truncated or invalid), or EX_IOERR when the event could
 * not be logged.
 */
static int
run_raw(const struct cli *o, const char *path)
{
	struct kept kept = { NULL, 0, 0 };
	/* Large reads, straight into the buffer (no stdio copy).  256 KB
	 * stays in the L2 cache while it is scanned; 64 KB to 1 MB measured
	 * alike through a 1 MB pipe. */
	static unsigned char buf[1 << 18];
	struct saop_escaper *x = NULL;
	struct saop_detector *d;
	struct saop_detect_result res;
	struct saop_err e;
	FILE *f = stdin;
	json_t *detect, *tid, *err;
	char *s;
	ssize_t n;
	enum saop_verdict v;
	int record = !o->quiet && !o->raw_out, logged;
	int fd, shape = SHAPE_UNKNOWN;

	if (path != NULL && strcmp(path, "-") != 0 &&
	    (f = fopen(path, "rb")) == NULL) {
		saop_err_clear(&e);
		e.code = SAOP_ENOINPUT;
		e.sys_errno = errno;
		snprintf(e.msg, sizeof(e.msg), "%s: %s", path,
		    strerror(errno));
		cli_die(&e);
	}
#ifdef F_SETPIPE_SZ
	/* A larger pipe means fewer, longer reads; failing is harmless. */
	(void)fcntl(fileno(f), F_SETPIPE_SZ, 1 << 20);
#endif
	if ((d = saop_detector_new(max_depth)) == NULL)
		cli_die_nomem();
	/* A record: the raw input goes out as a JSON string as it streams
	 * by (invalid UTF-8 as U+FFFD, counted in detect.replaced). */
	if (record && (x = saop_escaper_new(esc_write, NULL)) == NULL)
		cli_die_nomem();
	if (record) {
		if ((tid = json_string(cli_task_id(o))) == NULL)
			cli_die_nomem();
		s = xdumps(tid, JSON_ENCODE_ANY);
		put_key(SAOP_RECORD_TASK_ID, 1);
		put(s, strlen(s));
		put_key(SAOP_RECORD_RAW, 0);
		put("\"", 1);
		free(s);
		json_decref(tid);
	}
	fd = fileno(f);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (saop_detector_feed(d, (const char *)buf, (size_t)n) < 0)
			cli_die_nomem();
		if (shape == SHAPE_UNKNOWN)
			shape = shape_of(buf, (size_t)n, kept.len);
		if (close_opt || shape != SHAPE_BARE) {
			keep_input(&kept, buf, (size_t)n, o->max_record);
			continue;
		}
		if (kept.len > 0) {
			/* The white space read before the shape was known. */
			out_input(o, x, record, kept.buf, kept.len);
			kept.len = 0;
		}
		out_input(o, x, record, buf, (size_t)n);
	}
	if (n < 0) {
		saop_err_clear(&e);
		e.code = SAOP_EIO;
		e.sys_errno = errno;
		snprintf(e.msg, sizeof(e.msg), "read error: %s",
		    strerror(errno));
		cli_die(&e);
	}
	if (f != stdin)
		fclose(f);
	if (saop_detector_finish(d, &res) != 0)
		cli_die_nomem();
	saop_detector_free(d);
	if (shape == SHAPE_WRAPPED) {
		/* Not bare JSON: the text, kept, by the wrapper rule. */
		saop_detect_result_free(&res);
		if (saop_detect_text((const char *)kept.buf, kept.len,
		    max_depth, &res) != 0)
			cli_die_nomem();
	}
	detect = detect_json(&res);
	if (close_opt) {
		/* --close: the input was kept, not streamed; it goes out up
		 * to the close point, then the closing (a wrapped JSON
		 * without its wrapper). */
		size_t from = 0, upto = kept.len, clen = 0;

		if (res.verdict == SAOP_TRUNCATED && res.has_close) {
			from = (size_t)res.json_start;
			upto = (size_t)res.close_index;
			clen = strlen(res.closing);
			if (json_object_set(detect, "closed",
			    json_object_get(detect, "closing")) != 0)
				cli_die_nomem();
		}
		out_input(o, x, record, kept.buf + from, upto - from);
		out_input(o, x, record, (const unsigned char *)res.closing,
		    clen);
	} else if (kept.len > 0) {
		out_input(o, x, record, kept.buf, kept.len);
	}
	free(kept.buf);
	if ((v = res.verdict) == SAOP_TRUNCATED)
		detect_event(o, NULL, detect);
	/* An event that could not be logged: said, and on the record. */
	if ((logged = !saop_store_error(cli_store(o), &e)) == 0)
		cli_warn_err(&e);
	if (record) {
		(void)saop_escaper_end(x);
		if (saop_escaper_replaced(x) > 0 &&
		    json_object_set_new(detect, "replaced",
		    json_integer((json_int_t)saop_escaper_replaced(x))) != 0)
			cli_die_nomem();
		saop_escaper_free(x);
		s = xdumps(detect, JSON_COMPACT);
		put("\"", 1);
		put_key(SAOP_RECORD_DETECT, 0);
		put(s, strlen(s));
		free(s);
		put_key(SAOP_RECORD_STATE, 0);
		put("\"", 1);
		put(saop_verdict_state(res.verdict),
		    strlen(saop_verdict_state(res.verdict)));
		put("\"", 1);
		if (!logged) {
			if ((err = json_object()) == NULL ||
			    cli_record_error(err, &e) != 0)
				cli_die_nomem();
			s = xdumps(saop_record_error(err), JSON_COMPACT);
			put_key(SAOP_RECORD_ERROR, 0);
			put(s, strlen(s));
			free(s);
			json_decref(err);
		}
		put("}\n", 2);
	}
	json_decref(detect);
	if (!logged) {
		saop_detect_result_free(&res);
		return EX_IOERR;
	}
	saop_detect_result_free(&res);
	return cli_status(saop_state_of(saop_verdict_state(v)));
}

/*
 * The program's own options, for cli_getopt(): 1 when ch was one of
 * them, else 0; exits 64 on a bad value.
 */
static int
own_opt(void *arg, int ch, const char *val)
{
	(void)arg;
	switch (ch) {
	case OPT_MAX_DEPTH:
		max_depth = (size_t)cli_count("--max-depth", val, 1L << 30);
		if (max_depth == 0)
			cli_usage_error("--max-depth: must be at least 1");
		return 1;
	default:
		return 0;
	}
}

/*
 * saop-detect: parse the options, then judge each record (cli_run()) or
 * with -R the whole input (run_raw()).  Returns the exit status of the run.
 */
static int
run(int argc, char *argv[])
{
	struct cli opt = { 0 };
	struct cli_loop loop = { 0 };
	int first;

	cli_init("saop-detect", options, "[file ...]",
	    "Say whether the raw output of each record is complete JSON, "
	    "truncated (and\nwhere), or invalid (and why); add \"detect\" and "
	    "\"state\" to each record.");
	first = cli_getopt(&opt, argc, argv, own_opt, NULL);
	cli_operands(argc, argv, first, CLI_FILES);
	if (opt.raw_in) {
		int status;

		/* Each file one record, as cli_run() reads them. */
		if (first >= argc)
			return run_raw(&opt, NULL);
		for (status = CLI_OK; first < argc; first++)
			status = cli_worse(status, run_raw(&opt, argv[first]));
		return status;
	}
	loop.o = &opt;
	cli_loop_inputs(&loop, argc, argv, first);
	loop.record = detect_record;
	loop.judged_later = 1;	/* saop-resume, saop-validate */
	loop.raw_out = raw_out;
	return cli_run(&loop);
}

/* saop-detect: run(), its status settled (cli_exit()).  Returns it. */
int
main(int argc, char *argv[])
{
	return cli_exit(run(argc, argv));
}
