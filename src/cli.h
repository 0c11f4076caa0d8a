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
	int raw_in;		/* -R, --raw-input (jq's letter) */
	int raw_out;		/* -r, --raw-output (jq's letter) */
	int dry_run;		/* --dry-run */
	const char *task;	/* --task, else $SAOP_TASK_ID */
	const char *db;		/* --db, else $SAOP_DB */
	const char *log;	/* --log FILE */
	const char *output;	/* -o FILE: written whole or not at all */
	size_t max_record;	/* --max-record BYTES, 0: the default */
	const char **headers;	/* --header 'Name: value', in order */
	size_t nheaders;
	long timeout_ms;	/* --timeout SECONDS; 0: $SAOP_TIMEOUT_MS */
	long connect_timeout_ms;	/* --connect-timeout SECONDS; 0: default */
	const char *model;	/* -m, --model: over $SAOP_MODEL */
	const char *max_cost;	/* --max-cost USD: over $SAOP_MAX_COST */
};

/* Long-only common options; a tool's own start at CLI_OPT_FIRST_OWN. */
enum {
	CLI_OPT_TASK = CHAR_MAX + 1,
	CLI_OPT_DB,
	CLI_OPT_LOG,
	CLI_OPT_DRY_RUN,
	CLI_OPT_MAX_RECORD,
	CLI_OPT_HEADER,
	CLI_OPT_TIMEOUT,
	CLI_OPT_CONNECT_TIMEOUT,
	CLI_OPT_MAX_COST,
	CLI_OPT_MAX_RESUMES,	/* the suspend options: cli_suspend_opt() */
	CLI_OPT_NO_WAIT,
	CLI_OPT_FIRST_OWN
};

/*
 * One option of a program: the one table it is written in gives getopt
 * its long and short forms, --help its line, the usage line its
 * bracket, and (through --help) the completion scripts and the test that
 * holds the man page's SYNOPSIS to them.  Adding an option is adding an
 * entry: one with flag, value or count set is handled by cli_getopt()
 * itself (CLI_FLAG, CLI_VALUE, CLI_COUNT below); one with an id goes to
 * the program's own_opt().
 */
struct cli_option {
	const char *name;	/* long name, without "--" */
	int letter;		/* short letter, or 0 for a long-only one */
	int id;			/* what own_opt() sees: the letter, or an enum
				 * value from CLI_OPT_FIRST_OWN; 0 with one of
				 * the three below */
	const char *arg;	/* the argument's name ("FILE"), NULL: none */
	const char *help;	/* one line for --help */
	int *flag;		/* set to 1 by the option */
	const char **value;	/* set to the option's argument */
	long *count;		/* set to its argument, a count 0..max */
	long max;
};

/* An entry for own_opt() (or a common one): its id is what it sees. */
#define CLI_OPT(NAME, LETTER, ID, ARG, HELP) \
	{ (NAME), (LETTER), (ID), (ARG), (HELP), NULL, NULL, NULL, 0 }
/* --NAME sets *FLAG to 1. */
#define CLI_FLAG(NAME, FLAG, HELP) \
	{ (NAME), 0, 0, NULL, (HELP), (FLAG), NULL, NULL, 0 }
/* --NAME ARG sets *VALUE to the argument. */
#define CLI_VALUE(NAME, ARG, VALUE, HELP) \
	{ (NAME), 0, 0, (ARG), (HELP), NULL, (VALUE), NULL, 0 }
/* --NAME N sets *COUNT to N, a whole number from 0 to MAX (else 64). */
#define CLI_COUNT(NAME, ARG, COUNT, MAX, HELP) \
	{ (NAME), 0, 0, (ARG), (HELP), NULL, NULL, (COUNT), (MAX) }

/* Of a program whose model calls go under the suspend policy
 * (cli_suspend_opt() takes them). */
#define CLI_OPTS_SUSPEND \
	CLI_OPT("max-resumes", 0, CLI_OPT_MAX_RESUMES, "N", "resumptions after a lost network ($SAOP_MAX_AUTO_RESUME, 3)"), \
	CLI_OPT("no-wait", 0, CLI_OPT_NO_WAIT, NULL, "on a lost network save the turn and exit 75")

/* The end of a table. */
#define CLI_OPTS_END { NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, 0 }

/* Every program's, saop-mock's too: help, version, quiet, verbose. */
#define CLI_OPTS_BASIC \
	CLI_OPT("help", 'h', 'h', NULL, "print this help and exit"), \
	CLI_OPT("version", 'V', 'V', NULL, "print the version and exit"), \
	CLI_OPT("quiet", 'q', 'q', NULL, "write nothing; only the exit status tells"), \
	CLI_OPT("verbose", 'v', 'v', NULL, "say more on stderr (twice: more still)")

/* Every record program's: the basic ones, --task, --db... */
#define CLI_OPTS_COMMON \
	CLI_OPTS_BASIC, \
	CLI_OPT("task", 0, CLI_OPT_TASK, "ID", "task id for records without one ($SAOP_TASK_ID)"), \
	CLI_OPT("db", 0, CLI_OPT_DB, "PATH|URI", "state database: a file or a postgresql:// URI ($SAOP_DB, .saop/state.sqlite)"), \
	CLI_OPT("max-record", 0, CLI_OPT_MAX_RECORD, "BYTES", "longest record line or raw input"), \
	CLI_OPT("output", 'o', 'o', "FILE", "write to FILE, whole or not at all (as make wants)"), \
	CLI_VALUE("profile", "NAME", &cli_profile, "settings of the configuration file's [profile NAME] ($SAOP_PROFILE)")

/* Of a program that reads and writes records. */
#define CLI_OPTS_RECORDS \
	CLI_OPT("raw-input", 'R', 'R', NULL, "read all of the input as the raw text of one record"), \
	CLI_OPT("raw-output", 'r', 'r', NULL, "write only the result text, not records"), \
	CLI_OPT("log", 0, CLI_OPT_LOG, "FILE", "also append every event to FILE as NDJSON")

/* Of a program that calls a model. */
#define CLI_OPTS_MODEL \
	CLI_OPT("model", 'm', 'm', "MODEL", "the model for requests that name none ($SAOP_MODEL)"), \
	CLI_OPT("dry-run", 0, CLI_OPT_DRY_RUN, NULL, "print the model request instead of sending it"), \
	CLI_OPT("header", 0, CLI_OPT_HEADER, "'NAME: VALUE'", "add a header to each model call (repeatable)"), \
	CLI_OPT("timeout", 0, CLI_OPT_TIMEOUT, "SECONDS", "limit of a whole model call ($SAOP_TIMEOUT_MS)"), \
	CLI_OPT("connect-timeout", 0, CLI_OPT_CONNECT_TIMEOUT, "SECONDS", "limit of connecting to the model"), \
	CLI_OPT("max-cost", 0, CLI_OPT_MAX_COST, "USD", "stop a record's recovery before a call that could take its cost past USD ($SAOP_MAX_COST)"), \
	CLI_FLAG("show-config", &cli_show_config_flag, "print the settings in force and where each came from; exit")

/*
 * The configuration file (src/cli-config.c; its rules are lib/settings.c's):
 * --profile's argument and --show-config, set by cli_getopt().
 */
extern const char *cli_profile;
extern int cli_show_config_flag;

/*
 * Read the configuration file, with the profile of --profile (found in
 * argv by table before getopt reads it) or $SAOP_PROFILE, once: a program
 * whose table has no --profile reads none.  cli_getopt() calls it; a
 * program that reads a setting before it calls it first.  Exits 78 naming
 * the file (and line) when it is refused, 64 on an empty --profile.
 */
void cli_settings(const struct cli_option *table, int argc, char *argv[]);

/* After getopt: exits 64 when it took a --profile cli_settings() missed. */
void cli_settings_check(void);

/*
 * --show-config: print each setting in force (cfg's, o's options over it)
 * with where it came from, the key and header values masked; exit 0.
 */
_Noreturn void cli_show_config(const struct cli *o,
    const struct saop_llm_config *cfg);

/*
 * Name the program (e.g. "saop-detect"), its option table (ended by
 * CLI_OPTS_END; borrowed for the run), its operands ("[file]"; each
 * further line, after an LF, another form of the command), and what it
 * does; installs the close-stdout check at exit.
 */
void cli_init(const char *name, const struct cli_option *table,
    const char *operands, const char *summary);

/*
 * The exit statuses --help ends with, for a program whose statuses are
 * not a record program's (0 all records OK, 1 some flagged...): text, one
 * or more lines without the final LF (borrowed for the run).
 */
void cli_help_exits(const char *text);

/* The program's name, as given to cli_init(). */
const char *cli_name(void);

/*
 * Handle a common option: set o, or for -h / -V print and exit 0.
 * Returns 1 when ch was a common option, 0 when it is not.
 */
int cli_common_opt(struct cli *o, int ch, const char *arg);

/*
 * The suspend options (CLI_OPT_MAX_RESUMES, CLI_OPT_NO_WAIT) into so:
 * the one handler of saop-suspend, saop-resume and saop-validate.
 * Returns 1 when ch was one of them, else 0; exits 64 on a bad count.
 */
int cli_suspend_opt(struct saop_suspend_opts *so, int ch, const char *val);

/*
 * The budget of a record's recovery into b: --max-cost, else
 * $SAOP_MAX_COST (or the file's max_cost), else none (max_usd -1); the
 * provider and the default model of cfg.  Exits 64 on a value that is
 * not an amount of USD, 78 when $SAOP_PRICES (or the file's prices) is
 * not a price table.
 */
void cli_budget(const struct cli *o, const struct saop_llm_config *cfg,
    struct saop_budget *b);

/*
 * After a record: when b let a call of a model without price through,
 * say once per process that the model is not limited.
 */
void cli_budget_warn(const struct saop_budget *b);

/*
 * Read the options of argv by the table given to cli_init(): each of the
 * program's own goes to own(arg, ch, optarg), which returns 1 when it took
 * it (and may exit on a bad value); a common one sets o (-h and -V print
 * and exit); anything else is a usage error.  Then, with -o, standard
 * output goes to a temporary file beside the target (see cli_exit()).
 * Returns optind: the index of the first operand.
 */
int cli_getopt(struct cli *o, int argc, char *argv[],
    int (*own)(void *arg, int ch, const char *optarg), void *arg);

/*
 * Exits 64 saying what is wrong when more than max operands are left
 * after the options (argv[first...]); CLI_FILES: any number of input
 * files (cli_loop_inputs()).
 */
#define CLI_FILES	INT_MAX
void cli_operands(int argc, char *argv[], int first, int max);

/*
 * The end of a run with status: with -o, the output is renamed over its
 * target when status is below 64 (0, 1, 3: every record went through)
 * and standard output was written whole; else the target is left as it
 * was.  The records are flushed and the store closed (its lease renewer
 * stopped) here, while every library is still whole, not in exit()'s
 * cleanups.  Returns status (74 when the output could not be written).
 */
int cli_exit(int status);

/*
 * cfg from the environment (saop_llm_config_from_env()), then o's
 * --model, --header, --timeout and --connect-timeout over it; exits on a
 * bad header (64) or out of memory (70).
 */
void cli_llm_config(const struct cli *o, struct saop_llm_config *cfg);

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

/*
 * The exit status of one record, the one mapping every program takes: a
 * protocol's outcome is the state it leaves its record in (saop-detect's
 * verdict, saop-resume's and saop-validate's outcome.state), and that
 * state stands for CLI_OK (OK, or none), CLI_FLAGGED (TRUNCATED, INVALID,
 * RESUME_EXHAUSTED), CLI_ESCALATE (USER_ESCALATION) or EX_TEMPFAIL
 * (PAUSED_FOR_INTERVENTION).
 */
int cli_status(enum saop_state s);

/* cli_status() of the state named by the word state (NULL: none). */
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
 * Before r waits for input that is not there yet, flush every stream the
 * program wrote to (a record fed in alone comes out at once, while input
 * that streams in fast is still written in blocks).
 */
void cli_flush_on_wait(struct saop_reader *r);

/*
 * What only the programs read from the environment (src/cli.c alone
 * reads it for them; the library's settings are lib/config.c's, the
 * model's lib/llm-config.c's): the user's schema ($SAOP_SCHEMA) and
 * where saop-suspend puts it ($SAOP_SCHEMA_MODE), each NULL when unset
 * or empty; the correction turns of saop-validate
 * ($SAOP_MAX_CORRECTION_RETRIES, 0 to 100, def when unset or empty;
 * exits 64 naming the variable when it is not a count).
 */
/* The value of the environment variable name that the user named (an
 * option's VAR), or NULL when unset or empty: the environment is read in
 * src/cli.c alone among the programs' files. */
const char *cli_env_named(const char *name);
const char *cli_env_schema(void);
const char *cli_env_schema_mode(void);
int cli_env_correction_retries(int def);
const char *cli_env_max_cost(char *name, size_t size);

/*
 * Catch SIGINT and SIGTERM for the suspend policy of o: while o waits for
 * the network a signal stops the wait (o->stop; the turn stays saved,
 * the call is suspended); at any other time the process dies of it as if
 * it were not caught.  Returns nothing.
 */
void cli_catch_signals(struct saop_suspend_opts *o);

/*
 * -R: all of path (NULL or "-": standard input; at most --max-record
 * bytes) as the raw of one new record {"raw": ...}, as jq -R . FILE reads
 * FILE; exits 66 naming path when it cannot be opened, 65 when it is not
 * UTF-8 text.
 */
json_t *cli_raw_record(const struct cli *o, const char *path);

/*
 * The records a program reads: the lines of path ("-": standard input),
 * or with -R all of path as one record (cli_raw_record()).
 */
struct cli_records {
	struct saop_reader *in;	/* NULL with -R */
	json_t *raw;		/* -R: the record not yet handed out */
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

/* Close r's input and drop a -R record not handed out; r is zeroed. */
void cli_records_close(struct cli_records *r);

/*
 * Progress of long work, as curl's meter: once the run has lasted a
 * second, "name: N records, R/s" (with the share done and an ETA when the
 * input is a file of known size, cli_progress_input()) on stderr, one
 * line redrawn in place; only when stderr is a terminal and standard
 * output is not (never among records on the same screen), never with -q.
 * final: clear the line.
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
 * read each record (lines of path, or -R's one record), call record(),
 * add the record's error, write it (or with -r its
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
	char *const *more;	/* further input files, read after path in
				   turn as cat(1) reads them (each one -R
				   record); NULL-ended; NULL: none */
	/*
	 * The work on one record (modified in place): returns its status
	 * (CLI_OK, CLI_FLAGGED, CLI_ESCALATE), or -1 with e filled (the
	 * record may have been changed before the failure).
	 */
	int (*record)(struct cli_loop *l, json_t *rec, struct saop_err *e);
	/* -r: write rec's result text; NULL writes nothing. */
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
	/*
	 * 1 for a stage whose flagged records saop-validate judges again
	 * downstream: with the records going on through a pipe, a record
	 * flagged (CLI_FLAGGED) counts CLI_OK unless $SAOP_STRICT is set
	 * (cli_run(); saop(7), EXIT STATUS).
	 */
	int judged_later;
	/* Kept by cli_run(), read by record(): */
	long line;		/* the line of the record at hand (from 1) */
	int no_call;		/* a model call failed: make no more */
};

/* Run the loop; returns the exit status of the run. */
int cli_run(struct cli_loop *l);

/*
 * The inputs of l: the operands argv[first...] (cli_operands() bounds
 * them), path the first of them and more the rest, else standard input.
 */
void cli_loop_inputs(struct cli_loop *l, int argc, char *argv[], int first);

/*
 * A raw_out for programs whose result is the record's raw text (-r):
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
