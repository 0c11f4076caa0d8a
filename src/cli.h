/*
 * cli.h: what every saop program shares: the common options of DESIGN.md,
 * usage and --help, --version, error messages, exit statuses, the state
 * database and the task id.
 */
#ifndef SAOP_CLI_H
#define SAOP_CLI_H

#include <getopt.h>
#include <limits.h>
#include <stdnoreturn.h>
#include <sysexits.h>

#include "saop.h"

/* Exit statuses of a record's verdict; the worst wins (cli_worse). */
#define CLI_OK		0	/* every record OK */
#define CLI_FLAGGED	1	/* some record flagged and passed on */
#define CLI_ESCALATE	3	/* some record needs a person */

/* The common options. */
struct cli {
	int quiet;		/* -q */
	int verbose;		/* -v, counted */
	int raw_in;		/* -r */
	int raw_out;		/* -R */
	int dry_run;		/* --dry-run */
	const char *task;	/* --task, else $SAOP_TASK_ID */
	const char *db;		/* --db, else $SAOP_DB */
	const char *log;	/* --log FILE */
	size_t max_record;	/* --max-record BYTES, 0: the default */
};

/* Long-only common options; a tool's own start at CLI_OPT_FIRST_OWN. */
enum {
	CLI_OPT_TASK = CHAR_MAX + 1,
	CLI_OPT_DB,
	CLI_OPT_LOG,
	CLI_OPT_DRY_RUN,
	CLI_OPT_MAX_RECORD,
	CLI_OPT_FIRST_OWN
};

#define CLI_SHORTOPTS "hqRrVv"
#define CLI_LONGOPTS \
	{ "help", no_argument, NULL, 'h' }, \
	{ "version", no_argument, NULL, 'V' }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "verbose", no_argument, NULL, 'v' }, \
	{ "raw-input", no_argument, NULL, 'r' }, \
	{ "raw-output", no_argument, NULL, 'R' }, \
	{ "task", required_argument, NULL, CLI_OPT_TASK }, \
	{ "db", required_argument, NULL, CLI_OPT_DB }, \
	{ "log", required_argument, NULL, CLI_OPT_LOG }, \
	{ "dry-run", no_argument, NULL, CLI_OPT_DRY_RUN }, \
	{ "max-record", required_argument, NULL, CLI_OPT_MAX_RECORD }

/*
 * Name the program (e.g. "saop-detect"), its synopsis (the part after the
 * name), one line saying what it does, and the help text of its own
 * options (lines of "  -x, --long  what", may be ""); installs the
 * close-stdout check at exit.
 */
void cli_init(const char *name, const char *synopsis, const char *summary,
    const char *own_help);

/* The program's name, as given to cli_init(). */
const char *cli_name(void);

/*
 * Handle a common option: set o, or for -h / -V print and exit 0.
 * Returns 1 when ch was a common option, 0 when it is not.
 */
int cli_common_opt(struct cli *o, int ch, const char *arg);

/*
 * Read the options of argv (longopts: CLI_LONGOPTS and the program's
 * own): each of the program's own goes to own(arg, ch, optarg), which
 * returns 1 when it took it (and may exit on a bad value); a common one
 * sets o (-h and -V print and exit); anything else is a usage error.
 * Returns optind: the index of the first operand.
 */
int cli_getopt(struct cli *o, int argc, char *argv[],
    const struct option *longopts,
    int (*own)(void *arg, int ch, const char *optarg), void *arg);

/* Print the usage line (and "try --help") on stderr and exit status. */
void cli_usage(int status) __attribute__((__noreturn__));

/* Print "name: msg" on stderr and exit 64. */
void cli_usage_error(const char *fmt, ...)
    __attribute__((__noreturn__, format(printf, 1, 2)));

/* Print e as "name: line L, byte B: msg" and exit its status. */
void cli_die(const struct saop_err *e) __attribute__((__noreturn__));

/* Print "name: out of memory" and exit 70: nothing can go on. */
_Noreturn void cli_die_nomem(void);

/* Print e as cli_die() does, without exiting. */
void cli_warn_err(const struct saop_err *e);

/* Print "name: msg" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The worse of two statuses: 3 over 1 over 0. */
int cli_worse(int a, int b);

/* The exit status a record state stands for. */
int cli_state_status(const char *state);

/*
 * The task id for a record without one: --task, $SAOP_TASK_ID, else one
 * made once per run ("t-" time and pid).  Borrowed: valid until exit.
 */
const char *cli_task_id(const struct cli *o);

/* Set rec.task_id to cli_task_id() when rec has none (any kept). */
void cli_record_task(const struct cli *o, json_t *rec);

/*
 * The state database of the run (--db, --log), made on first call but
 * opened only when something is written to it or read from it: a program
 * that has nothing to store never touches the file, and a failure to
 * open it is the failure of the write that needed it.  Closed at exit;
 * exits 70 out of memory.
 */
struct saop_store *cli_store(const struct cli *o);

/*
 * Parse a non-negative decimal count for option name; exits 64 naming the
 * option when arg is not one or is above max.
 */
long cli_count(const char *name, const char *arg, long max);

/*
 * -r: all of standard input (at most --max-record bytes) as the raw of
 * one new record {"raw": ...}; exits 65 when it is not UTF-8 text.
 */
json_t *cli_raw_record(const struct cli *o);

/*
 * The records a program reads: the lines of path ("-": standard input),
 * or with -r all of standard input as one record (cli_raw_record()).
 */
struct cli_records {
	struct saop_reader *in;	/* NULL with -r */
	json_t *raw;		/* -r: the record not yet handed out */
	long line;		/* line of the record last handed out */
};

/* Open them; exits with the error when path cannot be opened. */
void cli_records_open(struct cli_records *r, const struct cli *o,
    const char *path);

/*
 * The next record (new reference), or NULL at the end; exits with the
 * error, naming the line, when a line is not a record.
 */
json_t *cli_records_next(struct cli_records *r);

/* Close r's input and drop a -r record not handed out; r is zeroed. */
void cli_records_close(struct cli_records *r);

/*
 * On a terminal (never otherwise), show "N records, R/s" on stderr once a
 * second, with the share done and an ETA when the input is a file of known
 * size (cli_progress_input()); final: the last line, ended.
 */
void cli_progress(const struct cli *o, unsigned long done, int final);

/*
 * Measure the ETA of cli_progress() by r's bytes read against the size of
 * path ("-" or NULL: standard input) when it is a regular file; NULL r
 * stops it.
 */
void cli_progress_input(const struct saop_reader *r, const char *path);

/*
 * The record loop every program runs.  The program fills o, path,
 * record (and raw_out, arg); cli_run() does the rest, one rule for all:
 * read each record (lines of path, or -r's one record), call record(),
 * add the record's error, write it (or with -R its
 * result text), count progress, and return the worst exit status.
 *
 * One record's trouble never costs another record.  A line that is not a
 * record is named on stderr and handed on unchanged (status 65).  When
 * record() fails, the record is still written, with "error" (program,
 * message, line, byte, field, status) beside the state it has; a failed
 * model call (network, refusal, protocol, configuration) also sets
 * no_call, so that the records after it pass on without a call, and its
 * status is the run's.  An event that could not be logged (kept in the
 * store) adds an error to the record and makes the status 74.
 */
struct cli_loop {
	const struct cli *o;
	const char *path;	/* input file; "-" standard input */
	/*
	 * The work on one record (modified in place): returns its status
	 * (CLI_OK, CLI_FLAGGED, CLI_ESCALATE), or -1 with e filled (the
	 * record may have been changed before the failure).
	 */
	int (*record)(struct cli_loop *l, json_t *rec, struct saop_err *e);
	/* -R: write rec's result text; NULL writes nothing. */
	void (*raw_out)(const struct cli_loop *l, const json_t *rec);
	/*
	 * When not NULL: stdout is flushed after every record, and then
	 * written(l, rec, e) runs (SIGINT and SIGTERM held back from the
	 * write to its end): what must happen only once the record is out,
	 * such as forgetting a saved turn.  Returns 0, or -1 with e.
	 */
	int (*written)(struct cli_loop *l, json_t *rec, struct saop_err *e);
	void *arg;		/* the program's own */
	int no_write;		/* no records out (--dry-run prints requests) */
	/* Kept by cli_run(), read by record(): */
	long line;		/* the line of the record at hand (from 1) */
	int no_call;		/* a model call failed: make no more */
};

/* Run the loop; returns the exit status of the run. */
int cli_run(struct cli_loop *l);

/*
 * A raw_out for programs whose result is the record's raw text (-R):
 * write it, and an LF when it does not end in one.
 */
void cli_raw_out(const struct cli_loop *l, const json_t *rec);

/*
 * Set rec.error from e: {program, message, line, byte, field, status}.
 * Returns 0, or -1 out of memory.
 */
int cli_record_error(json_t *rec, const struct saop_err *e);

/* 1 when e is a failed model call: the run makes no more calls. */
int cli_call_failed(const struct saop_err *e);

/*
 * Write s to f as one field of a line: control characters (and DEL) as
 * \xHH, a backslash as \\, all else as it is; NULL as "-".
 */
void cli_put_field(FILE *f, const char *s);

#endif /* SAOP_CLI_H */
