/*
 * cli-opt.c: a saop program's options (see cli.h): its table read by
 * getopt, the common options and the suspend options handled once, the
 * usage line and --help made from the table.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli-int.h"

static const struct cli_option *options;	/* the program's table */
static const char *operands_text = "";
static const char *summary_text = "";
static const char *exits_text =
    "Exit status: 0 all records OK, 1 some flagged, 3 some need a person;";
static const char **headers_made;	/* --header's list, freed at exit */

/* At exit: free --header's list.  Returns nothing. */
static void
free_headers(void)
{
	free(headers_made);
	headers_made = NULL;
}

/*
 * Keep the program's name, option table and help texts for later messages
 * and start the run (cli_begin(): close_stdout() at exit, which runs
 * before free_headers()) (see cli.h).
 */
void
cli_init(const char *name, const struct cli_option *table,
    const char *operands, const char *summary)
{
	options = table;
	operands_text = operands;
	summary_text = summary;
	atexit(free_headers);
	cli_begin(name);
}

/* Keep text for the end of --help (see cli.h).  Returns nothing. */
void
cli_help_exits(const char *text)
{
	exits_text = text;
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

	col = fprintf(f, "usage: %s [-", cli_name());
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
		fprintf(f, "       %s %.*s\n", cli_name(), nl != NULL ?
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
	printf("\n%s\nsee %s(1) for the rest.\n", exits_text, cli_name());
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
		printf("%s (saop) %s\n", cli_name(), SAOP_VERSION);
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
		cli_usd("--max-cost", arg);
		o->max_cost = arg;
		return 1;
	default:
		return 0;
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
 * An option getopt refused (ch '?': unknown, ':': its argument missing;
 * text: the word of argv it was in): say which, print the usage line, and
 * exit 64.
 */
static _Noreturn void
bad_option(int ch, const char *text)
{
	if (optopt != 0 && optopt <= CHAR_MAX)
		fprintf(stderr, ch == ':' ? "%s: -%c needs an argument\n" :
		    "%s: -%c is not an option of this cli_name()ram\n", cli_name(), optopt);
	else
		fprintf(stderr, ch == ':' ? "%s: %s needs an argument\n" :
		    "%s: %s is not an option of this cli_name()ram\n", cli_name(), text);
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
		cli_output_open(o->output);
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

/* Print the usage line and "Try --help" on stderr; exit status. */
_Noreturn void
cli_usage(int status)
{
	print_usage(stderr);
	fprintf(stderr, "Try '%s --help' for more.\n", cli_name());
	exit(status);
}
