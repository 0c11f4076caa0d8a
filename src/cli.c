/* cli.c: the plumbing every saop program shares (see cli.h). */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char *prog = "saop";
static const char *synopsis_text = "";
static const char *summary_text = "";
static const char *own_help_text = "";
static struct saop_store *store;
static int write_error_said;	/* a write error on stdout was reported */

static const char common_help[] =
"  -h, --help          print this help and exit\n"
"  -V, --version       print the version and exit\n"
"  -q, --quiet         write no records; only the exit status tells\n"
"  -v, --verbose       say more on stderr (twice: more still)\n"
"  -r, --raw-input     read all of the input as the raw text of one record\n"
"  -R, --raw-output    write only the result text, not records\n"
"      --task ID       task id for records without one ($SAOP_TASK_ID)\n"
"      --db PATH       state database ($SAOP_DB, .saop/state.sqlite)\n"
"      --log FILE      also append every event to FILE as NDJSON\n"
"      --dry-run       print the model request instead of sending it\n"
"      --max-record N  longest record line or raw input, in bytes\n";

/*
 * At exit: close the store, then stdout, which must have been written out;
 * else say "write error" (not for a closed pipe, nor twice) and _exit 74.
 */
static void
close_stdout(void)
{
	int bad;

	saop_store_close(store);
	store = NULL;
	bad = ferror(stdout) != 0;
	if (fclose(stdout) != 0 && errno != EBADF)
		bad = 1;
	if (bad) {
		/* A closed pipe (head, grep -q) is not worth a message. */
		if (errno != EPIPE && !write_error_said)
			fprintf(stderr, "%s: write error: %s\n", prog,
			    strerror(errno));
		_exit(EX_IOERR);
	}
}

/* The suspend monitor's lines (saop_suspend_set_notice()): on stderr. */
static void
notice(const char *line)
{
	cli_warn("%s", line);
}

/*
 * No core dump: the environment (and so the memory) of every saop
 * program may hold an API key.  Also keeps other processes of the user
 * from attaching to it.
 */
static void
no_core(void)
{
	struct rlimit rl = { 0, 0 };

	setrlimit(RLIMIT_CORE, &rl);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/*
 * Keep the program's name and help texts for later messages and install
 * close_stdout() (see cli.h).  Records go out in 64 KB blocks when stdout
 * is not a terminal.
 */
void
cli_init(const char *name, const char *synopsis, const char *summary,
    const char *own_help)
{
	prog = name;
	synopsis_text = synopsis;
	summary_text = summary;
	own_help_text = own_help ? own_help : "";
	no_core();
	saop_suspend_set_notice(notice);
	atexit(close_stdout);
	/* Records out in 64 KB blocks, not stdio's 4 KB: the reader flushes
	 * before it waits for input, so a record is never held back. */
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, 64 * 1024);
}

/* The program's name, as given to cli_init() ("saop" before it). */
const char *
cli_name(void)
{
	return prog;
}

/*
 * -h: print the usage line, the summary, the options (the program's own,
 * then the common ones) and the exit statuses on stdout; exit 0.
 */
static _Noreturn void
help(void)
{
	printf("usage: %s %s\n\n%s\n\nOptions:\n%s%s\n"
	    "Exit status: 0 all records OK, 1 some flagged, 3 some need a "
	    "person;\nsee %s(1) for the rest.\n", prog, synopsis_text,
	    summary_text, own_help_text, common_help, prog);
	exit(EX_OK);
}

/*
 * Handle a common option (see cli.h); exits 0 after -h or -V, 64 for an
 * empty --task or a bad --max-record.  Returns 1 when ch was a common
 * option, else 0.
 */
int
cli_common_opt(struct cli *o, int ch, const char *arg)
{
	switch (ch) {
	case 'h':
		help();
	case 'V':
		printf("%s (saop) %s\n", prog, SAOP_VERSION);
		exit(EX_OK);
	case 'q':
		o->quiet = 1;
		return 1;
	case 'v':
		o->verbose++;
		return 1;
	case 'r':
		o->raw_in = 1;
		return 1;
	case 'R':
		o->raw_out = 1;
		return 1;
	case CLI_OPT_TASK:
		if (*arg == '\0')
			cli_usage_error("--task: the id is empty");
		o->task = arg;
		return 1;
	case CLI_OPT_DB:
		o->db = arg;
		return 1;
	case CLI_OPT_LOG:
		o->log = arg;
		return 1;
	case CLI_OPT_DRY_RUN:
		o->dry_run = 1;
		return 1;
	case CLI_OPT_MAX_RECORD:
		o->max_record = (size_t)cli_count("--max-record", arg,
		    LONG_MAX);
		if (o->max_record == 0)
			cli_usage_error("--max-record: must be at least 1");
		return 1;
	default:
		return 0;
	}
}

/* See cli.h.  Returns optind. */
int
cli_getopt(struct cli *o, int argc, char *argv[],
    const struct option *longopts,
    int (*own)(void *arg, int ch, const char *optarg), void *arg)
{
	int ch;

	while ((ch = getopt_long(argc, argv, CLI_SHORTOPTS, longopts,
	    NULL)) != -1)
		if ((own == NULL || !own(arg, ch, optarg)) &&
		    !cli_common_opt(o, ch, optarg))
			cli_usage(EX_USAGE);
	return optind;
}

/* Print the usage line and "Try --help" on stderr; exit status. */
_Noreturn void
cli_usage(int status)
{
	fprintf(stderr, "usage: %s %s\nTry '%s --help' for more.\n", prog,
	    synopsis_text, prog);
	exit(status);
}

/*
 * Print "name: " and the message fmt formats, then "Try --help", on stderr;
 * exit 64.
 */
_Noreturn void
cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more.\n", prog);
	exit(EX_USAGE);
}

/* Print "name: " and the message fmt formats on stderr, LF-terminated. */
void
cli_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Print e on stderr as "name: line L, byte B: field: msg", each part only
 * when e has it.
 */
void
cli_warn_err(const struct saop_err *e)
{
	fprintf(stderr, "%s: ", prog);
	if (e->line > 0) {
		fprintf(stderr, "line %ld", e->line);
		if (e->has_offset)
			fprintf(stderr, ", byte %lld", e->offset);
		fputs(": ", stderr);
	} else if (e->has_offset) {
		fprintf(stderr, "byte %lld: ", e->offset);
	}
	if (e->field[0] != '\0')
		fprintf(stderr, "%s: ", e->field);
	fprintf(stderr, "%s\n", e->msg[0] ? e->msg : "unknown error");
}

/*
 * Print e (cli_warn_err()) and exit with the status its code stands for; a
 * write error on stdout is then not said again at exit.
 */
_Noreturn void
cli_die(const struct saop_err *e)
{
	if (ferror(stdout))
		write_error_said = 1;
	cli_warn_err(e);
	exit(saop_err_exit_status(e->code));
}

/*
 * The worse of two statuses (see cli.h).  Returns 3 over 1 over 0; any
 * other (a sysexits code) over those, a over b when both are.
 */
int
cli_worse(int a, int b)
{
	/* Order: 0 < 1 < 3; anything else (a sysexits code) wins. */
	static const int rank[] = { 0, 1, -1, 2 };
	int ra = a >= 0 && a <= 3 ? rank[a] : 9;
	int rb = b >= 0 && b <= 3 ? rank[b] : 9;

	return rb > ra ? b : a;
}

/*
 * The exit status a record state stands for.  Returns CLI_OK for OK (or
 * none), CLI_ESCALATE for USER_ESCALATION, EX_TEMPFAIL for
 * PAUSED_FOR_INTERVENTION, else CLI_FLAGGED.
 */
int
cli_state_status(const char *state)
{
	switch (saop_state_of(state)) {
	case SAOP_STATE_NONE:	/* none, or a word of the caller's own */
	case SAOP_STATE_OK:
		return CLI_OK;
	case SAOP_STATE_USER_ESCALATION:
		return CLI_ESCALATE;
	case SAOP_STATE_PAUSED_FOR_INTERVENTION:
		return EX_TEMPFAIL;
	default:		/* TRUNCATED, INVALID, RESUME_EXHAUSTED */
		return CLI_FLAGGED;
	}
}

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
	if ((env = getenv("SAOP_TASK_ID")) != NULL && *env != '\0')
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
	if (json_object_get(rec, "task_id") == NULL)
		json_object_set_new(rec, "task_id",
		    json_string(cli_task_id(o)));
}

/*
 * -r: all of standard input as the raw of a new record (see cli.h).  Exits
 * 65 when the input is not UTF-8 or is too long, 70 out of memory, 74 on a
 * read error.  Returns the record (new reference).
 */
json_t *
cli_raw_record(const struct cli *o)
{
	struct saop_err e;
	json_t *rec, *s;
	char *buf;
	size_t len, at;

	if (saop_read_all(stdin, &buf, &len, o->max_record, &e) != 0)
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
	s = json_stringn(buf, len);
	free(buf);
	if (s == NULL) {
		saop_err_clear(&e);
		e.code = SAOP_ENOMEM;
		snprintf(e.msg, sizeof(e.msg), "out of memory");
		cli_die(&e);
	}
	if ((rec = json_object()) == NULL ||
	    json_object_set_new(rec, "raw", s) != 0) {
		saop_err_clear(&e);
		e.code = SAOP_ENOMEM;
		snprintf(e.msg, sizeof(e.msg), "out of memory");
		cli_die(&e);
	}
	return rec;
}

/*
 * Open the records of path (or with -r read the one raw record) into r;
 * exits with the error when path cannot be opened.
 */
void
cli_records_open(struct cli_records *r, const struct cli *o, const char *path)
{
	struct saop_err e;

	memset(r, 0, sizeof(*r));
	if (o->raw_in)
		r->raw = cli_raw_record(o);
	else if ((r->in = saop_reader_open(path, o->max_record, &e)) == NULL)
		cli_die(&e);
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

/* Close r's input and drop a -r record not handed out; r is zeroed. */
void
cli_records_close(struct cli_records *r)
{
	saop_reader_close(r->in);
	json_decref(r->raw);
	memset(r, 0, sizeof(*r));
}

/*
 * The run's state database (see cli.h): made on the first call, closed at
 * exit.  Exits 70 out of memory.  Returns it (borrowed).
 */
struct saop_store *
cli_store(const struct cli *o)
{
	struct saop_err e;

	if (store != NULL)
		return store;
	if ((store = saop_store_new(o->db, &e)) == NULL ||
	    (o->log != NULL && saop_store_set_log(store, o->log, &e) != 0))
		cli_die(&e);
	return store;
}

/*
 * Set rec.error from e: {program, message, line, byte, field, status}, each
 * of line, byte and field only when e has it.  Returns 0, or -1 out of
 * memory.
 */
int
cli_record_error(json_t *rec, const struct saop_err *e)
{
	return saop_record_set_error(rec, prog, e) == 0 ? 0 : -1;
}

/*
 * 1 when e is a failed model call (network, rate limit, refusal, bad
 * request, prefill, protocol, configuration): the run makes no more calls.
 * Else 0.
 */
int
cli_call_failed(const struct saop_err *e)
{
	switch (e->code) {
	case SAOP_ENETWORK:
	case SAOP_ERATELIMIT:
	case SAOP_EREFUSED:
	case SAOP_EBADREQ:
	case SAOP_EPREFILL:
	case SAOP_EPROTO:
	case SAOP_ECONFIG:
		return 1;
	default:
		return 0;
	}
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

/* See cli.h: exit 70, saying "out of memory". */
_Noreturn void
cli_die_nomem(void)
{
	struct saop_err e;

	saop_err_clear(&e);
	e.code = SAOP_ENOMEM;
	snprintf(e.msg, sizeof(e.msg), "out of memory");
	cli_die(&e);
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
 * Hold SIGINT and SIGTERM back (on 1) or let them through again (on 0):
 * a record written is then forgotten before the process can die of one.
 */
static void
hold_signals(int on)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(on ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
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
	int rc, status = CLI_OK, stopped = 0;

	saop_err_clear(&stop);
	cli_records_open(&recs, o, l->path);
	cli_progress_input(recs.in, l->path);
	if (recs.in != NULL && !o->quiet && !o->raw_out && !l->no_write)
		saop_reader_pass(recs.in, stdout);
	for (;;) {
		if (recs.in == NULL) {
			if ((rec = recs.raw) == NULL)
				break;
			recs.raw = NULL;
			l->line = 1;
		} else if ((rc = saop_reader_next(recs.in, &rec, &e)) <= 0) {
			if (rc == 0)
				break;
			if (e.code != SAOP_EDATA && e.code != SAOP_ELIMIT)
				cli_die(&e);
			/* Not a record: named, handed on, and on. */
			cli_warn_err(&e);
			status = cli_worse(status, EX_DATAERR);
			continue;
		} else {
			l->line = saop_reader_line(recs.in);
		}
		if ((rc = l->record(l, rec, &e)) < 0) {
			rc = cli_state_status(json_string_value(
			    json_object_get(rec, "state")));
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
		if (saop_store_error(store, &e))
			rc = cli_worse(rc, record_trouble(l, rec, &e));
		status = cli_worse(status, rc);
		if (l->written != NULL)
			hold_signals(1);
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
			hold_signals(0);
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

/*
 * Parse arg as a decimal count from 0 to max for option name; exits 64
 * naming the option when it is not one.  Returns the count.
 */
long
cli_count(const char *name, const char *arg, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || v < 0 || v > max)
		cli_usage_error("%s: '%s' is not a whole number from 0 to %ld",
		    name, arg, max);
	return v;
}

/*
 * On a terminal (and without -q), show "N records, R/s" on stderr at most
 * once a second, and once more with final set, ending the line.
 */
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
 * On a terminal, now and then (once a second) and at the end, show
 * "name: N records, R/s" on stderr, with ", P%, ETA M:SS" when the input
 * is a file of known size.
 */
void
cli_progress(const struct cli *o, unsigned long done, int final)
{
	static struct timeval start, last;
	static int on = -1;
	struct timeval now;
	unsigned long long got;
	double secs;

	if (on == -1) {
		on = !o->quiet && isatty(STDERR_FILENO);
		gettimeofday(&start, NULL);
		last = start;
	}
	if (!on)
		return;
	gettimeofday(&now, NULL);
	if (!final && now.tv_sec == last.tv_sec)
		return;
	last = now;
	secs = (double)(now.tv_sec - start.tv_sec) +
	    (double)(now.tv_usec - start.tv_usec) / 1e6;
	fprintf(stderr, "\r%s: %lu records, %.0f/s", prog, done,
	    secs > 0 ? (double)done / secs : 0.0);
	if (!final && progress_in != NULL && progress_size > 0 &&
	    (got = saop_reader_consumed(progress_in)) > 0 &&
	    got <= progress_size) {
		double left = secs * (double)(progress_size - got) /
		    (double)got;

		fprintf(stderr, ", %.0f%%, ETA %lu:%02lu   ",
		    100.0 * (double)got / (double)progress_size,
		    (unsigned long)left / 60, (unsigned long)left % 60);
	}
	if (final)
		fputs("                          \n", stderr);
}
