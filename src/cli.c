/*
 * cli.c: the plumbing every saop program shares (see cli.h): options,
 * the record loop, -o, output, signals; the environment is cli-env.c's,
 * the exit status cli-status.c's.
 */
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
static const struct cli_option *options;	/* the program's table */
static const char *operands_text = "";
static const char *summary_text = "";
static const char *exits_text =
    "Exit status: 0 all records OK, 1 some flagged, 3 some need a person;";
static struct saop_store *store;
static int write_error_said;	/* a write error on stdout was reported */
static char *out_target;	/* -o FILE */
static char *out_temp;		/* the temporary file beside it */
static volatile sig_atomic_t out_armed;	/* out_temp is there to remove */
static int out_settled = -1;	/* the status cli_exit() was given */
static const char **headers_made;	/* --header's list, freed at exit */

static void hold_signals(int on);

/*
 * The end of the work, before exit() runs any library's cleanup (OpenSSL's
 * among them, which libpq's and libcurl's connections must not outlive):
 * the records written out, the lease renewer stopped, the store closed.
 * Called again at exit, where it finds nothing left to do.  Returns
 * nothing.
 */
static void
end_work(void)
{
	fflush(stdout);
	saop_turn_claims_end();
	saop_store_close(store);
	store = NULL;
}

/*
 * At exit: end the work (end_work()), then close stdout, which must have
 * been written out; else say "write error" (not for a closed pipe, nor
 * twice) and _exit 74.
 * With -o, the temporary file becomes the target only after cli_exit()
 * with a status below 64 and a clean close; else it is removed.
 */
static void
close_stdout(void)
{
	int bad;

	end_work();
	free(headers_made);
	headers_made = NULL;
	bad = ferror(stdout) != 0;
	if (fclose(stdout) != 0 && errno != EBADF)
		bad = 1;
	if (out_temp != NULL) {
		/* The target only from a run that went through, whole. */
		int keep = !bad && out_settled >= 0 && out_settled < 64;
		int err = errno;

		/* A signal now comes after the file is settled. */
		hold_signals(1);
		out_armed = 0;
		if (!keep || rename(out_temp, out_target) != 0) {
			if (keep)
				fprintf(stderr, "%s: cannot write %s: %s\n",
				    prog, out_target, strerror(errno));
			unlink(out_temp);
			if (keep)
				_exit(EX_CANTCREAT);
		}
		free(out_temp);
		free(out_target);
		out_temp = out_target = NULL;
		hold_signals(0);
		errno = err;
	}
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
 * Keep the program's name, option table and help texts for later messages
 * and install close_stdout() (see cli.h).
 */
void
cli_init(const char *name, const struct cli_option *table,
    const char *operands, const char *summary)
{
	prog = name;
	options = table;
	operands_text = operands;
	summary_text = summary;
	no_core();
	saop_suspend_set_notice(notice);
	atexit(close_stdout);
}

/* Keep text for the end of --help (see cli.h).  Returns nothing. */
void
cli_help_exits(const char *text)
{
	exits_text = text;
}

/* The program's name, as given to cli_init() ("saop" before it). */
const char *
cli_name(void)
{
	return prog;
}

/*
 * Print the usage line(s) on f, made from the option table: the letters
 * without an argument in one cluster, then each other option in brackets,
 * then the operands; each further line of the operands is another form.
 */
static void
print_usage(FILE *f)
{
	const struct cli_option *t;
	const char *p, *nl;
	int col, c;

	col = fprintf(f, "usage: %s [-", prog);
	/* The letters as a page's SYNOPSIS has them: a, A, b, B... */
	for (c = 'a'; c <= 'z'; c++)
		for (t = options; t->name != NULL; t++)
			if (t->arg == NULL && (t->letter == c - 'a' + 'A' ||
			    t->letter == c))
				col += fprintf(f, "%c", t->letter);
	col += fprintf(f, "]");
	for (t = options; t->name != NULL; t++) {
		char item[96];

		if (t->letter != 0 && t->arg == NULL)
			continue;
		if (t->letter != 0)
			snprintf(item, sizeof(item), "[-%c %s]", t->letter,
			    t->arg);
		else if (t->arg != NULL)
			snprintf(item, sizeof(item), "[--%s %s]", t->name,
			    t->arg);
		else
			snprintf(item, sizeof(item), "[--%s]", t->name);
		if (col + 1 + (int)strlen(item) > 78)
			col = fprintf(f, "\n      ") - 1;
		col += fprintf(f, " %s", item);
	}
	p = operands_text;
	nl = strchr(p, '\n');
	fprintf(f, "%s%.*s\n", *p != '\0' ? " " : "", nl != NULL ?
	    (int)(nl - p) : (int)strlen(p), p);
	while (nl != NULL) {
		p = nl + 1;
		nl = strchr(p, '\n');
		fprintf(f, "       %s %.*s\n", prog, nl != NULL ?
		    (int)(nl - p) : (int)strlen(p), p);
	}
}

/*
 * Print text on stdout from column at (where the cursor is), broken at
 * spaces so that no line passes column 79, each further line indented to
 * at; ends the line.
 */
static void
print_wrapped(const char *text, int at)
{
	const char *p = text;

	while ((int)strlen(p) > 79 - at) {
		const char *cut = p + (79 - at);

		while (cut > p && *cut != ' ')
			cut--;
		if (cut == p)	/* one word longer than the line */
			break;
		printf("%.*s\n%*s", (int)(cut - p), p, at, "");
		p = cut + 1;
	}
	printf("%s\n", p);
}

/*
 * -h: print the usage lines, the summary, the options of the table (one
 * line each) and the exit statuses on stdout; exit 0.
 */
static _Noreturn void
help(void)
{
	const struct cli_option *t;

	print_usage(stdout);
	printf("\n%s\n\nOptions:\n", summary_text);
	for (t = options; t->name != NULL; t++) {
		char left[64];

		if (t->letter != 0)
			snprintf(left, sizeof(left), "-%c, --%s%s%s",
			    t->letter, t->name, t->arg ? " " : "",
			    t->arg ? t->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", t->name,
			    t->arg ? " " : "", t->arg ? t->arg : "");
		if (strlen(left) > 24)
			printf("  %s\n%28s", left, "");
		else
			printf("  %-24s  ", left);
		print_wrapped(t->help, 28);
	}
	printf("\n%s\nsee %s(1) for the rest.\n", exits_text, prog);
	exit(EX_OK);
}

/*
 * Parse "SECONDS" (a decimal, fractions allowed) of option name into
 * milliseconds; exits 64 when it is not a positive number of at most a
 * day.  Returns the milliseconds (at least 1).
 */
static long
seconds_ms(const char *name, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !(v > 0) ||
	    v > 86400)
		cli_usage_error("%s: '%s' is not a number of seconds above 0 "
		    "(at most 86400)", name, arg);
	return v * 1000 < 1 ? 1 : (long)(v * 1000);
}

/*
 * Parse "USD" (a decimal amount, 0 or more, as 0.50 or 2) of name (an
 * option, or where a setting was set); exits 64 when it is not one.
 * Returns the amount.
 */
static double
usd_arg(const char *name, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !(v >= 0) ||
	    v > 1e12)
		cli_usage_error("%s: '%s' is not an amount of USD (0 or more, "
		    "as 0.50)", name, arg);
	return v;
}

/*
 * Handle a common option (see cli.h); exits 0 after -h or -V, 64 for an
 * empty --task, a bad --max-record, timeout or --max-cost, 70 out of
 * memory.  Returns
 * 1 when ch was a common option, else 0.
 */
int
cli_common_opt(struct cli *o, int ch, const char *arg)
{
	const char **h;

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
	case 'R':
		o->raw_in = 1;
		return 1;
	case 'r':
		o->raw_out = 1;
		return 1;
	case 'o':
		if (*arg == '\0')
			cli_usage_error("-o: the file name is empty");
		o->output = arg;
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
	case CLI_OPT_HEADER:
		if ((h = realloc(o->headers, (o->nheaders + 1) *
		    sizeof(*h))) == NULL)
			cli_die_nomem();
		h[o->nheaders++] = arg;
		o->headers = headers_made = h;
		return 1;
	case CLI_OPT_TIMEOUT:
		o->timeout_ms = seconds_ms("--timeout", arg);
		return 1;
	case CLI_OPT_CONNECT_TIMEOUT:
		o->connect_timeout_ms = seconds_ms("--connect-timeout", arg);
		return 1;
	case 'm':
		if (*arg == '\0')
			cli_usage_error("-m: the model name is empty");
		o->model = arg;
		return 1;
	case CLI_OPT_MAX_COST:
		usd_arg("--max-cost", arg);
		o->max_cost = arg;
		return 1;
	default:
		return 0;
	}
}

/* See cli.h: the budget of o (and the settings) into b.  Returns nothing. */
void
cli_budget(const struct cli *o, const struct saop_llm_config *cfg,
    struct saop_budget *b)
{
	char name[300];
	const char *v = o->max_cost;
	struct saop_err e;

	if (saop_prices_check(&e) != 0)
		cli_die(&e);
	memset(b, 0, sizeof(*b));
	snprintf(name, sizeof(name), "--max-cost");
	if (v == NULL)
		v = cli_env_max_cost(name, sizeof(name));
	b->max_usd = v != NULL ? usd_arg(name, v) : -1;
	b->provider = cfg->provider;
	b->model = cfg->model;
	b->worst = -1;
}

/* See cli.h: the warning of a model without price, once.  Returns
 * nothing. */
void
cli_budget_warn(const struct saop_budget *b)
{
	static int warned;

	if (b->unpriced && !warned) {
		warned = 1;
		cli_warn("--max-cost: a model with no price in the price table "
		    "was called: its calls are not limited");
	}
}

/* See cli.h: --max-resumes N, --no-wait into so; 1 when ch was one. */
int
cli_suspend_opt(struct saop_suspend_opts *so, int ch, const char *val)
{
	switch (ch) {
	case CLI_OPT_MAX_RESUMES:
		so->max_resumes = (int)cli_count("--max-resumes", val, 1000);
		return 1;
	case CLI_OPT_NO_WAIT:
		so->no_wait = 1;
		return 1;
	default:
		return 0;
	}
}

/*
 * SIGINT, SIGTERM, SIGHUP with -o: remove the temporary file (its path
 * made before the handler could run; unlink() is async-signal-safe),
 * then die of the signal as if unhandled.
 */
static void
on_fatal_signal(int sig)
{
	if (out_armed) {
		out_armed = 0;
		unlink(out_temp);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Catch the signals that end a run (not those the caller ignores, as a
 * shell does for a job in the background) with on_fatal_signal().
 * Returns nothing.
 */
static void
catch_fatal_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

/*
 * -o FILE: send standard output to a new temporary file in FILE's
 * directory (renamed over FILE at the end, see close_stdout(); removed
 * when a signal ends the run).  Exits 73 when it cannot be made, 70 out
 * of memory.
 */
static void
output_open(const char *target)
{
	const char *slash = strrchr(target, '/');
	size_t dir = slash != NULL ? (size_t)(slash - target) + 1 : 0;
	mode_t mask;
	int fd;

	if ((out_target = strdup(target)) == NULL ||
	    (out_temp = malloc(strlen(target) + 16)) == NULL)
		cli_die_nomem();
	/* ".name.XXXXXX" beside the target: the same file system. */
	sprintf(out_temp, "%.*s.%s.XXXXXX", (int)dir, target, target + dir);
	catch_fatal_signals();
	hold_signals(1);
	if ((fd = mkstemp(out_temp)) != -1)
		out_armed = 1;
	hold_signals(0);
	if (fd == -1) {
		int err = errno;

		free(out_temp);
		out_temp = NULL;
		cli_warn("cannot write %s: %s", target, strerror(err));
		exit(EX_CANTCREAT);
	}
	/* As a file made by the shell's > would be. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0 ||
	    fflush(stdout) != 0 || dup2(fd, STDOUT_FILENO) == -1) {
		cli_warn("cannot write %s: %s", target, strerror(errno));
		unlink(out_temp);
		exit(EX_CANTCREAT);
	}
	close(fd);
}

/*
 * An option getopt refused (ch '?': unknown, ':': its argument missing;
 * text: the word of argv it was in): say which, print the usage line, and
 * exit 64.
 */
static _Noreturn void
bad_option(int ch, const char *text)
{
	if (optopt != 0 && optopt <= CHAR_MAX)
		fprintf(stderr, ch == ':' ? "%s: -%c needs an argument\n" :
		    "%s: -%c is not an option of this program\n", prog, optopt);
	else
		fprintf(stderr, ch == ':' ? "%s: %s needs an argument\n" :
		    "%s: %s is not an option of this program\n", prog, text);
	cli_usage(EX_USAGE);
}

/* getopt's value of a table entry without an id: this plus its place. */
#define OPT_BY_PLACE	0x10000

/* See cli.h.  Returns optind. */
int
cli_getopt(struct cli *o, int argc, char *argv[],
    int (*own)(void *arg, int ch, const char *optarg), void *arg)
{
	const struct cli_option *t;
	struct option *longopts;
	char shortopts[128];
	size_t n = 0, k = 0;
	int ch;

	cli_settings(options, argc, argv);
	for (t = options; t->name != NULL; t++)
		n++;
	if ((longopts = calloc(n + 1, sizeof(*longopts))) == NULL)
		cli_die_nomem();
	/* ':' first: a missing argument is told apart from an unknown one. */
	shortopts[k++] = ':';
	for (n = 0, t = options; t->name != NULL; t++, n++) {
		longopts[n].name = t->name;
		longopts[n].has_arg = t->arg != NULL ? required_argument :
		    no_argument;
		/* An entry without an id is known by its place. */
		longopts[n].val = t->id != 0 ? t->id : OPT_BY_PLACE + (int)n;
		if (t->letter != 0 && k + 3 < sizeof(shortopts)) {
			shortopts[k++] = (char)t->letter;
			if (t->arg != NULL)
				shortopts[k++] = ':';
		}
	}
	shortopts[k] = '\0';
	opterr = 0;
	while ((ch = getopt_long(argc, argv, shortopts, longopts,
	    NULL)) != -1) {
		if (ch == '?' || ch == ':')
			bad_option(ch, argv[optind - 1]);
		if (ch >= OPT_BY_PLACE) {
			t = &options[ch - OPT_BY_PLACE];
			if (t->flag != NULL)
				*t->flag = 1;
			else if (t->value != NULL)
				*t->value = optarg;
			else if (t->count != NULL) {
				char name[64];

				snprintf(name, sizeof(name), "--%s", t->name);
				*t->count = cli_count(name, optarg, t->max);
			}
			continue;
		}
		if ((own == NULL || !own(arg, ch, optarg)) &&
		    !cli_common_opt(o, ch, optarg)) {
			/* In the table but handled by no one: a bug. */
			cli_warn("option %s not handled", argv[optind - 1]);
			exit(EX_SOFTWARE);
		}
	}
	free(longopts);
	cli_settings_check();
	if (o->output != NULL)
		output_open(o->output);
	/* Records out in 64 KB blocks when stdout is not a terminal, not
	 * stdio's 4 KB: the reader flushes before it waits for input, so a
	 * record is never held back. */
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, 64 * 1024);
	return optind;
}

/* See cli.h: exits 64 naming the first operand too many. */
void
cli_operands(int argc, char *argv[], int first, int max)
{
	if (argc - first > max) {
		if (max == 0)
			cli_usage_error("takes no file here ('%s' given)",
			    argv[first]);
		cli_usage_error("one input file at most: '%s' is one too "
		    "many (%d given)", argv[first + max], argc - first);
	}
}

/* See cli.h.  Returns status. */
int
cli_exit(int status)
{
	out_settled = status;
	end_work();
	return status;
}

/* See cli.h: the environment, then the options over it. */
void
cli_llm_config(const struct cli *o, struct saop_llm_config *cfg)
{
	struct saop_err e;
	size_t i;

	if (saop_llm_config_from_env(cfg, &e) != 0)
		cli_die(&e);
	if (o->model != NULL) {
		free(cfg->model);
		if ((cfg->model = strdup(o->model)) == NULL)
			cli_die_nomem();
	}
	for (i = 0; i < o->nheaders; i++)
		if (saop_llm_config_add_header(cfg, o->headers[i], &e) != 0) {
			if (e.code == SAOP_ENOMEM)
				cli_die(&e);
			cli_usage_error("--header: %s", e.msg);
		}
	if (o->timeout_ms > 0) {
		cfg->timeout_ms = o->timeout_ms;
		if (cfg->connect_timeout_ms > cfg->timeout_ms)
			cfg->connect_timeout_ms = cfg->timeout_ms;
	}
	if (o->connect_timeout_ms > 0)
		cfg->connect_timeout_ms = o->connect_timeout_ms;
	if (cli_show_config_flag)
		cli_show_config(o, cfg);
}

/* Print the usage line and "Try --help" on stderr; exit status. */
_Noreturn void
cli_usage(int status)
{
	print_usage(stderr);
	fprintf(stderr, "Try '%s --help' for more.\n", prog);
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
	end_work();
	exit(saop_err_exit_status(e->code));
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
		if (saop_store_error(store, &e))
			rc = cli_worse(rc, record_trouble(l, rec, &e));
		if (on && rc == CLI_FLAGGED)
			rc = CLI_OK;	/* the last stage reports it */
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

/* Set by on_signal(): stop waiting, the turn stays saved. */
static volatile sig_atomic_t stop_flag;
/* 1 while the suspend policy waits for the network, 0 while it calls. */
static volatile sig_atomic_t waiting_flag;

/*
 * SIGINT, SIGTERM: while waiting, stop the wait (the turn is saved); at
 * any other time die of the signal as if it were not caught, -o's
 * temporary file removed first (on_fatal_signal()).
 */
static void
on_signal(int sig)
{
	stop_flag = 1;
	if (!waiting_flag)
		on_fatal_signal(sig);
}

/* See cli.h: the handlers in, o's flags pointed at theirs. */
void
cli_catch_signals(struct saop_suspend_opts *o)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: wake the sleep */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	o->stop = &stop_flag;
	o->waiting = &waiting_flag;
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
	n = snprintf(line, sizeof(line), "%s: %lu records, %.0f/s", prog,
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
