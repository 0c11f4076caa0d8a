/*
 * cli-int.h: what the files of the command-line layer share among
 * themselves and no program sees (the programs' header is cli.h).  The
 * arrows run one way: cli-opt.c and cli-loop.c use cli.c and
 * cli-config.c, never back.
 */
#ifndef SAOP_CLI_INT_H
#define SAOP_CLI_INT_H

/*
 * cli.c: the start of the run (cli_init() calls it last): keep name for
 * every message, no core dump, close_stdout() at exit.
 */
void cli_begin(const char *name);

/*
 * cli.c: -o FILE: standard output sent to a temporary file beside it,
 * renamed over it at a clean exit.  Exits 73 when it cannot be made.
 */
void cli_output_open(const char *target);

/*
 * cli.c: hold SIGINT and SIGTERM back (on 1) or let them through again
 * (on 0), around a record written and forgotten.
 */
void cli_hold_signals(int on);

/*
 * cli-config.c: arg (of name: an option, or where a setting was set) as
 * an amount of USD, 0 or more (0.50, 2); exits 64 naming it when it is
 * not one.
 */
double cli_usd(const char *name, const char *arg);

/* cli.c: the state database cli_store() made, or NULL before it. */
struct saop_store *cli_store_made(void);

#endif
