/* saop-mock: a stand-in model for tests, its answers and faults scripted. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cli.h"
#include "mock.h"
#include "mock-oracle.h"
#include "mock-replay.h"

enum {
	OPT_EXHAUSTED = CLI_OPT_FIRST_OWN,
	OPT_LOG
};

const char *script_path;		/* --script */
const char *oracle_path;		/* --oracle */
static const char *manner_arg;		/* --manner */
static long max_chars = -1;		/* --max-chars, -1: not given */
int no_usage;				/* --no-usage */
const char *replay_path;		/* --replay */
static const char *match_arg;		/* --match */
int by_model;				/* --match model */
static const char *exhausted_arg;	/* --exhausted */
static const char *port_file;		/* --port-file */
static const char *host = "127.0.0.1";	/* --host */
static const char *log_path;		/* --log */
const char *key_header;			/* --key-header */
static const char *key_env;		/* --key-env */
const char *want_key;			/* its variable's value */
static long port;			/* --port */
long max_requests;			/* --max-requests, 0: none */
static long max_seconds;		/* --max-seconds, 0: none */
static const char *tls_cert_path;	/* --tls-cert */
static const char *tls_key_path;	/* --tls-key */
char *tls_cert;				/* its PEM text, or NULL */
char *tls_key;				/* its PEM text, or NULL */
int exhausted_status;			/* --exhausted, 0: last repeats */
struct cli cli_opts;
static volatile sig_atomic_t got_signal;

/* The options of saop-mock: getopt, --help, usage, completion, page. */
static const struct cli_option options[] = {
	CLI_VALUE("script", "FILE", &script_path,
	    "the replies, one JSON object a line, served in order"),
	CLI_VALUE("oracle", "FILE", &oracle_path,
	    "the whole intended answers, carried on from what a request "
	    "shows"),
	CLI_VALUE("manner", "MANNER", &manner_arg,
	    "how --oracle carries on (honest, repeat:K, restart, blank, "
	    "fence...)"),
	CLI_COUNT("max-chars", "N", &max_chars, 1000000000,
	    "--oracle answers at most N characters a call (default 400, "
	    "0: all)"),
	CLI_FLAG("no-usage", &no_usage, "report no token usage"),
	CLI_VALUE("replay", "DIR", &replay_path,
	    "answer with the recorded answers of DIR (or one file), raw"),
	CLI_VALUE("match", "WHAT", &match_arg,
	    "with --replay: order (default, by name) or model (the "
	    "request's)"),
	CLI_OPT("exhausted", 0, OPT_EXHAUSTED, "STATUS",
	    "after the last reply answer this HTTP status (default: the "
	    "last reply again)"),
	CLI_COUNT("port", "N", &port, 65535,
	    "listen on port N (default 0: any free port)"),
	CLI_VALUE("port-file", "FILE", &port_file,
	    "once listening, write the port to FILE (whole, by rename)"),
	CLI_VALUE("host", "ADDRESS", &host,
	    "listen on ADDRESS (default 127.0.0.1)"),
	CLI_OPT("log", 0, OPT_LOG, "FILE",
	    "append one JSON line per request to FILE (never the key)"),
	CLI_VALUE("key-header", "NAME", &key_header,
	    "a header that carries the key (as $SAOP_AUTH_HEADER): not "
	    "logged"),
	CLI_VALUE("key-env", "VAR", &key_env,
	    "answer 401 to a request whose key is not $VAR's"),
	CLI_COUNT("max-requests", "N", &max_requests, LONG_MAX,
	    "end once N requests are answered (0: no limit)"),
	CLI_COUNT("max-seconds", "N", &max_seconds, 31536000,
	    "end after N seconds (0: no limit)"),
	CLI_VALUE("tls-cert", "FILE", &tls_cert_path,
	    "serve HTTPS with the PEM certificate (chain) of FILE"),
	CLI_VALUE("tls-key", "FILE", &tls_key_path,
	    "the PEM private key of --tls-cert"),
	CLI_OPTS_BASIC,
	CLI_OPTS_END
};

/* SIGTERM, SIGINT: end the run (the main loop wakes). */
static void
on_signal(int sig)
{
	int err = errno;

	got_signal = sig;
	if (write(wake[1], "s", 1) < 0) {
		/* The pipe is full: the loop is awake already. */
	}
	errno = err;
}

/* Write port to port_file, whole: a temporary file renamed over it. */
static void
write_port_file(unsigned port_no)
{
	char *tmp;
	FILE *f;

	if (asprintf(&tmp, "%s.%ld.t", port_file, (long)getpid()) < 0)
		cli_die_nomem();
	if ((f = fopen(tmp, "w")) == NULL ||
	    fprintf(f, "%u\n", port_no) < 0 || fclose(f) != 0 ||
	    rename(tmp, port_file) != 0) {
		cli_warn("cannot write %s: %s", port_file, strerror(errno));
		unlink(tmp);
		exit(EX_CANTCREAT);
	}
	free(tmp);
}

/*
 * The whole text of the file path (an option's, named opt), NUL-ended
 * (malloc).  Exits 66 when it cannot be read.
 */
static char *
read_pem(const char *opt, const char *path)
{
	FILE *f = fopen(path, "r");
	struct saop_err e;
	char *buf = NULL;
	size_t len;

	if (f == NULL) {
		cli_warn("--%s %s: %s", opt, path, strerror(errno));
		exit(EX_NOINPUT);
	}
	if (saop_read_all(f, &buf, &len, 0, &e) != 0) {
		cli_warn("--%s %s: %s", opt, path, e.msg);
		exit(EX_NOINPUT);
	}
	fclose(f);
	return buf;
}

/* saop-mock's own option: --exhausted, --log.  Returns 1 (taken). */
static int
own_opt(void *arg, int ch, const char *optarg)
{
	if (ch == OPT_EXHAUSTED)
		exhausted_arg = optarg;
	else if (ch == OPT_LOG)
		log_path = optarg;
	else
		return 0;
	return 1;
}

/*
 * Serve the script until a signal, --max-requests or --max-seconds.
 * Exits 0; 1 when --max-seconds came before --max-requests requests.
 */
int
main(int argc, char *argv[])
{
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *di;
	struct sigaction sa;
	struct timespec t0, now;
	int first, status = 0;

	cli_init("saop-mock", options, "",
	    "Answer as a model would, in the four wire formats saop speaks\n"
	    "(OpenAI chat completions and Responses, Anthropic Messages,\n"
	    "Gemini), from a script of replies: text, finish reasons, tool\n"
	    "calls, refusals, HTTP errors, delays and dropped connections;\n"
	    "or, with --oracle, as a model that knows the whole answers and\n"
	    "carries on from what a request shows it wrote, or with recorded\n"
	    "answers, raw (--replay).");
	cli_help_exits("Exit status: 0 stopped (signal, --max-requests, "
	    "--max-seconds), 1 --max-seconds\nbefore --max-requests, "
	    "65 a bad script, oracle file or recording;");
	first = cli_getopt(&cli_opts, argc, argv, own_opt, NULL);
	cli_operands(argc, argv, first, 0);
	if ((script_path != NULL) + (oracle_path != NULL) +
	    (replay_path != NULL) != 1)
		cli_usage_error(script_path == NULL && oracle_path == NULL &&
		    replay_path == NULL ? "one of --script FILE, --oracle "
		    "FILE and --replay DIR is needed" : "--script, --oracle "
		    "and --replay: one of them only");
	if (oracle_path == NULL && (manner_arg != NULL || max_chars >= 0))
		cli_usage_error("--manner and --max-chars are --oracle's");
	if (oracle_path != NULL && exhausted_arg != NULL)
		cli_usage_error("--exhausted is --script's");
	if (oracle_path != NULL && oracle_defaults(manner_arg,
	    max_chars >= 0 ? max_chars : 400) != 0)
		cli_usage_error("--manner %s: not honest, repeat:K, restart, "
		    "restart-string, restart-noquote, blank, fence, prose nor "
		    "whole", manner_arg);
	if (match_arg != NULL) {
		if (replay_path == NULL)
			cli_usage_error("--match is for --replay");
		if (strcmp(match_arg, "model") == 0)
			by_model = 1;
		else if (strcmp(match_arg, "order") != 0)
			cli_usage_error("--match: \"%s\" is neither \"order\" "
			    "nor \"model\"", match_arg);
	}
	if (exhausted_arg != NULL) {
		exhausted_status = (int)cli_count("--exhausted", exhausted_arg,
		    599);
		if (exhausted_status < 400)
			cli_usage_error("--exhausted: %d is not an error "
			    "status (400 to 599)", exhausted_status);
	}
	if (key_env != NULL && (want_key = cli_env_named(key_env)) == NULL)
		cli_usage_error("--key-env: $%s is not set", key_env);
	if ((tls_cert_path != NULL) != (tls_key_path != NULL))
		cli_usage_error("--tls-cert and --tls-key go together");
	if (tls_cert_path != NULL) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			cli_warn("--tls-cert: this libmicrohttpd was built "
			    "without TLS (GnuTLS): cannot serve HTTPS");
			exit(EX_UNAVAILABLE);
		}
		tls_cert = read_pem("tls-cert", tls_cert_path);
		tls_key = read_pem("tls-key", tls_key_path);
	}
	if (replay_path != NULL)
		replay_load(replay_path);
	else if (oracle_path != NULL)
		oracle_load(oracle_path);
	else
		script_load(script_path);
	if (log_path != NULL && (log_file = fopen(log_path, "a")) == NULL) {
		cli_warn("cannot write %s: %s", log_path, strerror(errno));
		exit(EX_CANTCREAT);
	}
	if (pipe(wake) != 0) {
		cli_warn("pipe: %s", strerror(errno));
		exit(EX_OSERR);
	}
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	d = mock_start(host, port);
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	if (port_file != NULL)
		write_port_file(di != NULL ? di->port : (unsigned)port);
	if (cli_opts.verbose > 0)
		cli_warn("listening on %s port %u", host, di != NULL ?
		    di->port : (unsigned)port);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!got_signal) {
		struct pollfd pf = { wake[0], POLLIN, 0 };
		long ms = -1;
		char c;

		if (max_seconds > 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			ms = max_seconds * 1000 - ((now.tv_sec - t0.tv_sec) *
			    1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
			if (ms <= 0) {
				if (max_requests > 0)
					status = 1;
				break;
			}
		}
		if (poll(&pf, 1, ms > INT_MAX ? INT_MAX : (int)ms) > 0 &&
		    read(wake[0], &c, 1) == 1 && c == 'r')
			break;
	}
	MHD_stop_daemon(d);
	if (status != 0 && !cli_opts.quiet)
		cli_warn("%ld seconds passed with %ld of %ld requests answered",
		    max_seconds, requests_answered, max_requests);
	if (log_file != NULL)
		fclose(log_file);
	script_free();
	oracle_free();
	replay_free();
	free(tls_cert);
	free(tls_key);
	return cli_exit(status);
}

