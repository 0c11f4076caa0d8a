/*
 * cli.c: a saop program's life (see cli.h): its name in every message, the
 * messages and the exits they end in, the state database, -o's file and
 * the end of standard output, the signals.  The options and --help are
 * cli-opt.c's, the record loop cli-loop.c's, the configuration
 * cli-config.c's, the environment cli-env.c's, the exit status
 * cli-status.c's.
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
#include <unistd.h>

#include "cli.h"
#include "cli-int.h"

static const char *prog = "saop";
static struct saop_store *store;
static int write_error_said;	/* a write error on stdout was reported */
static char *out_target;	/* -o FILE */
static char *out_temp;		/* the temporary file beside it */
static volatile sig_atomic_t out_armed;	/* out_temp is there to remove */
static int out_settled = -1;	/* the status cli_exit() was given */

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
	bad = ferror(stdout) != 0;
	if (fclose(stdout) != 0 && errno != EBADF)
		bad = 1;
	if (out_temp != NULL) {
		/* The target only from a run that went through, whole. */
		int keep = !bad && out_settled >= 0 && out_settled < 64;
		int err = errno;

		/* A signal now comes after the file is settled. */
		cli_hold_signals(1);
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
		cli_hold_signals(0);
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
 * The start of a run (cli_init()'s, see cli-int.h): keep the program's
 * name for every message, no core dump, the suspend monitor's notices on
 * stderr, close_stdout() at exit.  Returns nothing.
 */
void
cli_begin(const char *name)
{
	prog = name;
	no_core();
	saop_suspend_set_notice(notice);
	atexit(close_stdout);
}

/* The program's name, as given to cli_init() ("saop" before it). */
const char *
cli_name(void)
{
	return prog;
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
 * Hold SIGINT and SIGTERM back (on 1) or let them through again (on 0):
 * a record written is then forgotten before the process can die of one.
 */
void
cli_hold_signals(int on)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(on ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/*
 * -o FILE: send standard output to a new temporary file in FILE's
 * directory (renamed over FILE at the end, see close_stdout(); removed
 * when a signal ends the run).  Exits 73 when it cannot be made, 70 out
 * of memory.  Returns nothing.
 */
void
cli_output_open(const char *target)
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
	cli_hold_signals(1);
	if ((fd = mkstemp(out_temp)) != -1)
		out_armed = 1;
	cli_hold_signals(0);
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

/* See cli.h.  Returns status. */
int
cli_exit(int status)
{
	out_settled = status;
	end_work();
	return status;
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

/* The state database cli_store() made, or NULL before it (cli-int.h). */
struct saop_store *
cli_store_made(void)
{
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
