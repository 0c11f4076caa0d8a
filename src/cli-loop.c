/*
 * cli-loop.c: the record loop every saop program runs (see cli.h): the
 * inputs one after another, a record's trouble settled on it, records
 * written and forgotten, -R's raw record, the task id, the progress line.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli-int.h"

/*
 * The task id for a record without one (see cli.h).  Returns --task,
 * $SAOP_TASK_ID, else the id made on the first call (borrowed: valid until
 * exit).
 */
const char *
cli_task_id(const struct cli *o)
{
	static char made[64];
	const char *env;

	if (o->task != NULL)
		return o->task;
	if ((env = cli_env_named("SAOP_TASK_ID")) != NULL)
		return env;
	if (made[0] == '\0') {
		struct timeval tv;

		gettimeofday(&tv, NULL);
		snprintf(made, sizeof(made), "t-%lld-%ld",
		    (long long)tv.tv_sec, (long)getpid());
	}
	return made;
}

/*
 * Set rec.task_id to cli_task_id() when rec has none; one it has, of any
 * type, is kept.
 */
void
cli_record_task(const struct cli *o, json_t *rec)
{
	/* A task id of the caller's, even a number, is the caller's. */
	if (!saop_record_has(rec, SAOP_RECORD_TASK_ID))
		(void)saop_record_set_task_id(rec, cli_task_id(o));
}

/*
 * -R: all of path (NULL or "-": standard input) as the raw of a new record
 * (see cli.h).  Exits 66 naming path when it cannot be opened, 65 when the
 * input is not UTF-8 or is too long, 70 out of memory, 74 on a read error.
 * Returns the record (new reference).
 */
json_t *
cli_raw_record(const struct cli *o, const char *path)
{
	struct saop_err e;
	struct stat st;
	FILE *f = stdin;
	json_t *rec;
	char *buf;
	size_t len, at;
	int rc;

	if (path != NULL && strcmp(path, "-") != 0) {
		int err = 0;

		if ((f = fopen(path, "rb")) == NULL)
			err = errno;
		else if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
			err = EISDIR;
		if (err != 0) {
			saop_err_clear(&e);
			e.code = SAOP_ENOINPUT;
			snprintf(e.msg, sizeof(e.msg), "%s: %s", path,
			    strerror(err));
			cli_die(&e);
		}
	}
	rc = saop_read_all(f, &buf, &len, o->max_record, &e);
	if (f != stdin)
		fclose(f);
	if (rc != 0)
		cli_die(&e);
	if ((at = saop_utf8_valid(buf, len)) < len) {
		saop_err_clear(&e);
		e.code = SAOP_EDATA;
		e.line = 1;
		e.offset = (long long)at;
		e.has_offset = 1;
		snprintf(e.msg, sizeof(e.msg), "the input is not UTF-8 text");
		cli_die(&e);
	}
	/* UTF-8, as seen above: the one failure left is memory. */
	if ((rec = json_object()) == NULL ||
	    saop_record_set_raw(rec, buf, len) != 0) {
		free(buf);
		saop_err_clear(&e);
		e.code = SAOP_ENOMEM;
		snprintf(e.msg, sizeof(e.msg), "out of memory");
		cli_die(&e);
	}
	free(buf);
	return rec;
}

/* Hand on every stream the program wrote to (the reader's wait hook). */
static void
flush_all(void *arg)
{
	(void)arg;
	fflush(NULL);
}

/* See cli.h: r flushes the program's streams before it waits.  Returns
 * nothing. */
void
cli_flush_on_wait(struct saop_reader *r)
{
	saop_reader_on_wait(r, flush_all, NULL);
}

/*
 * Open the records of path (or with -R read the one raw record) into r;
 * exits with the error when path cannot be opened.
 */
void
cli_records_open(struct cli_records *r, const struct cli *o, const char *path)
{
	struct saop_err e;

	memset(r, 0, sizeof(*r));
	if (o->raw_in)
		r->raw = cli_raw_record(o, path);
	else if ((r->in = saop_reader_open(path, o->max_record, &e)) == NULL)
		cli_die(&e);
	else
		cli_flush_on_wait(r->in);
}

/*
 * The next record of r (see cli.h); exits with the error when a line is not
 * a record.  Returns a new reference, or NULL at the end.
 */
json_t *
cli_records_next(struct cli_records *r)
{
	struct saop_err e;
	json_t *rec;

	if (r->in == NULL) {
		rec = r->raw;
		r->raw = NULL;
		r->line = 1;
		return rec;
	}
	if (saop_reader_next(r->in, &rec, &e) < 0)
		cli_die(&e);
	r->line = saop_reader_line(r->in);
	return rec;
}

/* Close r's input and drop a -R record not handed out; r is zeroed. */
void
cli_records_close(struct cli_records *r)
{
	saop_reader_close(r->in);
	json_decref(r->raw);
	memset(r, 0, sizeof(*r));
}

/*
 * 1 when e is a failed model call, by the one list of them
 * (saop_suspend_classify(): network, rate limit, refusal, bad request,
 * prefill, protocol, configuration): the run makes no more calls.  Else 0.
 */
int
cli_call_failed(const struct saop_err *e)
{
	return saop_suspend_classify(e) != SAOP_SUSPEND_NONE;
}

/* See cli.h.  Returns nothing: writes rec's raw text with an LF. */
void
cli_raw_out(const struct cli_loop *l, const json_t *rec)
{
	const char *raw;
	size_t len;

	(void)l;
	if ((raw = saop_record_raw(rec, &len)) != NULL) {
		fwrite(raw, 1, len, stdout);
		if (len == 0 || raw[len - 1] != '\n')
			putchar('\n');
	}
}

/*
 * Settle one record's trouble e: name it on stderr (with the record's
 * line), put it on the record.  Returns the exit status it stands for.
 */
static int
record_trouble(struct cli_loop *l, json_t *rec, struct saop_err *e)
{
	if (e->line == 0 && !l->o->raw_in)
		e->line = l->line;
	cli_warn_err(e);
	if (cli_record_error(rec, e) != 0)
		cli_die_nomem();
	return saop_err_exit_status(e->code);
}

/*
 * Write s as one field of a line (see cli.h): control characters as
 * \xHH, a backslash doubled.  Returns nothing.
 */
void
cli_put_field(FILE *f, const char *s)
{
	if (s == NULL) {
		fputs("-", f);
		return;
	}
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else if (c == '\\')
			fputs("\\\\", f);
		else
			putc(c, f);
	}
}

/*
 * 1 when l's records go on to another program through a pipe (stdout a
 * pipe or socket, records written, l->judged_later) and $SAOP_STRICT is
 * unset or 0: a flagged record is then the last stage's to report.
 */
static int
handed_on(const struct cli_loop *l)
{
	const char *strict = cli_env_named("SAOP_STRICT");
	struct stat st;

	if (!l->judged_later || l->o->quiet || l->o->raw_out || l->no_write ||
	    (strict != NULL && strcmp(strict, "0") != 0))
		return 0;
	return fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) ||
	    S_ISSOCK(st.st_mode));
}

/*
 * Open path as l's input in recs: lines handed on to standard output as
 * they are when records are written, its size for cli_progress().
 */
static void
open_input(const struct cli_loop *l, struct cli_records *recs,
    const char *path)
{
	const struct cli *o = l->o;

	cli_records_open(recs, o, path);
	cli_progress_input(recs->in, path);
	if (recs->in != NULL && !o->quiet && !o->raw_out && !l->no_write)
		saop_reader_pass(recs->in, stdout);
}

/*
 * At the end of an input: close it and open l's next file, if any.
 * Returns 1 when there is one, else 0.
 */
static int
next_input(struct cli_loop *l, struct cli_records *recs)
{
	if (l->more == NULL || *l->more == NULL)
		return 0;
	cli_progress_input(NULL, NULL);
	cli_records_close(recs);
	open_input(l, recs, *l->more++);
	return 1;
}

/* See cli.h.  Returns nothing. */
void
cli_loop_inputs(struct cli_loop *l, int argc, char *argv[], int first)
{
	l->path = first < argc ? argv[first] : "-";
	l->more = first < argc ? argv + first + 1 : NULL;
}

/*
 * The record loop every program runs (see cli.h for its rules).  Returns
 * the exit status of the run: the worst of the records' statuses, 65 when a
 * line was not a record, and the status of the first failed model call.
 */
int
cli_run(struct cli_loop *l)
{
	const struct cli *o = l->o;
	struct cli_records recs;
	struct saop_err e, stop;
	json_t *rec;
	unsigned long n = 0;
	int rc, status = CLI_OK, stopped = 0, on = handed_on(l);

	saop_err_clear(&stop);
	open_input(l, &recs, l->path);
	for (;;) {
		if (recs.in == NULL) {
			if ((rec = recs.raw) == NULL && next_input(l, &recs))
				continue;
			if (rec == NULL)
				break;
			recs.raw = NULL;
			l->line = 1;
		} else if ((rc = saop_reader_next(recs.in, &rec, &e)) <= 0) {
			if (rc == 0 && next_input(l, &recs))
				continue;
			if (rc == 0)
				break;
			if (e.code != SAOP_EDATA && e.code != SAOP_ELIMIT &&
			    (e.code != SAOP_ENOMEM || e.line == 0))
				cli_die(&e);
			/* Not a record (or no memory to read it as one):
			 * named, handed on, and on. */
			cli_warn_err(&e);
			status = cli_worse(status, e.code == SAOP_ENOMEM ?
			    EX_SOFTWARE : EX_DATAERR);
			continue;
		} else {
			l->line = saop_reader_line(recs.in);
		}
		if ((rc = l->record(l, rec, &e)) < 0) {
			rc = cli_state_status(saop_record_state_word(rec));
			if (cli_call_failed(&e)) {
				/* The rest pass on without a call. */
				l->no_call = 1;
				if (!stopped)
					stop = e;
				stopped = 1;
				record_trouble(l, rec, &e);
			} else {
				rc = cli_worse(rc, record_trouble(l, rec, &e));
			}
		}
		if (saop_store_error(cli_store_made(), &e))
			rc = cli_worse(rc, record_trouble(l, rec, &e));
		if (on && rc == CLI_FLAGGED)
			rc = CLI_OK;	/* the last stage reports it */
		status = cli_worse(status, rc);
		if (l->written != NULL)
			cli_hold_signals(1);
		if (o->quiet || l->no_write)
			;
		else if (o->raw_out && l->raw_out != NULL)
			l->raw_out(l, rec);
		else if (!o->raw_out && saop_record_write(stdout, rec, &e) != 0)
			cli_die(&e);
		if (l->written != NULL) {
			/* Out, then forget: flushed before written() runs. */
			if (fflush(stdout) != 0) {
				saop_err_clear(&e);
				e.code = SAOP_EIO;
				snprintf(e.msg, sizeof(e.msg), "write error: %s",
				    strerror(errno));
				cli_die(&e);
			}
			if (l->written(l, rec, &e) != 0)
				status = cli_worse(status, record_trouble(l,
				    rec, &e));
			cli_hold_signals(0);
		}
		json_decref(rec);
		cli_progress(o, ++n, 0);
	}
	cli_progress(o, n, 1);
	cli_progress_input(NULL, NULL);
	cli_records_close(&recs);
	if (stopped)
		status = cli_worse(saop_err_exit_status(stop.code), status);
	return status;
}

/* What cli_progress() measures the ETA by: the reader and its input size. */
static const struct saop_reader *progress_in;
static unsigned long long progress_size;

/* See cli.h: where the ETA of the progress line is measured from. */
void
cli_progress_input(const struct saop_reader *r, const char *path)
{
	struct stat st;
	int ok;

	progress_in = r;
	progress_size = 0;
	if (r == NULL)
		return;
	ok = path == NULL || strcmp(path, "-") == 0 ?
	    fstat(STDIN_FILENO, &st) == 0 : stat(path, &st) == 0;
	/* Only a regular file has a size known beforehand. */
	if (ok && S_ISREG(st.st_mode) && st.st_size > 0)
		progress_size = (unsigned long long)st.st_size;
}

/*
 * Long work on a terminal (see cli.h): from one second into the run, at
 * most once a second, redraw "name: N records, R/s" (", P%, ETA M:SS"
 * when the input is a file of known size) on stderr; final clears it.
 */
void
cli_progress(const struct cli *o, unsigned long done, int final)
{
	static struct timeval start, last;
	static int on = -1, shown;	/* shown: width of the line drawn */
	struct timeval now;
	unsigned long long got;
	double secs;
	char line[160];
	int n;

	if (on == -1) {
		/* As curl: no meter when the output is the same screen. */
		on = !o->quiet && isatty(STDERR_FILENO) &&
		    !isatty(STDOUT_FILENO);
		gettimeofday(&start, NULL);
		last = start;
	}
	if (!on)
		return;
	if (final) {
		if (shown > 0)
			fprintf(stderr, "\r%*s\r", shown, "");
		shown = 0;
		return;
	}
	gettimeofday(&now, NULL);
	/* Nothing in the first second, then at most once a second. */
	secs = (double)(now.tv_sec - start.tv_sec) +
	    (double)(now.tv_usec - start.tv_usec) / 1e6;
	if (secs < 1.0 || (shown > 0 && now.tv_sec == last.tv_sec))
		return;
	last = now;
	n = snprintf(line, sizeof(line), "%s: %lu records, %.0f/s", cli_name(),
	    done, secs > 0 ? (double)done / secs : 0.0);
	if (progress_in != NULL && progress_size > 0 &&
	    (got = saop_reader_consumed(progress_in)) > 0 &&
	    got <= progress_size && n > 0 && (size_t)n < sizeof(line)) {
		double left = secs * (double)(progress_size - got) /
		    (double)got;

		n += snprintf(line + n, sizeof(line) - (size_t)n,
		    ", %.0f%%, ETA %lu:%02lu",
		    100.0 * (double)got / (double)progress_size,
		    (unsigned long)left / 60, (unsigned long)left % 60);
	}
	if (n < 0 || (size_t)n >= sizeof(line))
		n = (int)strlen(line);
	/* Pad over a longer line drawn before. */
	fprintf(stderr, "\r%s%*s", line, shown > n ? shown - n : 0, "");
	if (n > shown)
		shown = n;
}
