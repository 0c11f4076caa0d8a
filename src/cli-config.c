/*
 * cli-config.c: the programs' side of the configuration file (its rules
 * are lib/settings.c's): --profile read before anything asks for a
 * setting, the file loaded once, and --show-config.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli-int.h"

const char *cli_profile;	/* --profile NAME (the table's value) */
int cli_show_config_flag;	/* --show-config */

static int loaded;		/* cli_settings() has run */
static const char *loaded_profile;	/* the --profile it found */

/*
 * The entry of table for the long option text ("--name" or "--name=..."),
 * or NULL.
 */
static const struct cli_option *
long_entry(const struct cli_option *table, const char *text)
{
	size_t n = strcspn(text + 2, "=");

	for (; table->name != NULL; table++)
		if (strlen(table->name) == n &&
		    strncmp(table->name, text + 2, n) == 0)
			return table;
	return NULL;
}

/* 1 when the entry t is --help or --version (which read no setting). */
static int
is_info(const struct cli_option *t)
{
	return t != NULL && (strcmp(t->name, "help") == 0 ||
	    strcmp(t->name, "version") == 0);
}

/* The entry of table for the short option letter c, or NULL. */
static const struct cli_option *
short_entry(const struct cli_option *table, int c)
{
	for (; table->name != NULL; table++)
		if (table->letter == c)
			return table;
	return NULL;
}

/*
 * The argument of --profile in argv, read as getopt will read it (an
 * option's argument is skipped, "--" ends the options), before getopt
 * does: the file must be read before the first setting is.  *info is set
 * when --help or --version is given.  Returns it, or NULL when none is
 * given.
 */
static const char *
profile_arg(const struct cli_option *table, int argc, char *argv[],
    int *info)
{
	const char *found = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct cli_option *t;

		if (a[0] != '-' || a[1] == '\0')
			continue;
		if (strcmp(a, "--") == 0)
			break;
		if (a[1] == '-') {
			t = long_entry(table, a);
			*info |= is_info(t);
			if (t != NULL && t->arg != NULL &&
			    strchr(a, '=') == NULL && i + 1 < argc)
				i++;
			if (t != NULL && strcmp(t->name, "profile") == 0)
				found = strchr(a, '=') != NULL ?
				    strchr(a, '=') + 1 : argv[i];
			continue;
		}
		for (a++; *a != '\0'; a++) {
			t = short_entry(table, *a);
			*info |= is_info(t);
			if (t != NULL && t->arg != NULL) {
				if (a[1] == '\0')
					i++;
				break;
			}
		}
	}
	return found;
}

/* See cli.h.  Returns nothing; exits 78 (or 70) when the file is refused. */
void
cli_settings(const struct cli_option *table, int argc, char *argv[])
{
	const struct cli_option *t;
	struct saop_err e;
	int info = 0;

	if (loaded)
		return;
	for (t = table; t->name != NULL; t++)
		if (strcmp(t->name, "profile") == 0)
			break;
	if (t->name == NULL)	/* a program without settings */
		return;
	loaded = 1;
	loaded_profile = profile_arg(table, argc, argv, &info);
	if (info)		/* --help, --version: no file needed */
		return;
	if (loaded_profile != NULL && *loaded_profile == '\0')
		cli_usage_error("--profile: a name is needed");
	if (saop_settings_load(NULL, loaded_profile, &e) != 0)
		cli_die(&e);
}

/* See cli.h: exits 64 when getopt took a --profile the scan did not. */
void
cli_settings_check(void)
{
	if (cli_profile != NULL && (loaded_profile == NULL ||
	    strcmp(cli_profile, loaded_profile) != 0))
		cli_usage_error("--profile: write the option whole "
		    "(--profile NAME)");
}

/* Print "# " and where from says a setting came from, then LF. */
static void
print_from(const struct saop_setting_from *from, const char *option,
    const char *builtin)
{
	if (option != NULL)
		printf("\t# %s\n", option);
	else if (from->env != NULL)
		printf("\t# environment %s\n", from->env);
	else if (from->file != NULL)
		printf("\t# %s:%ld%s%s%s%s\n", from->file, from->line,
		    from->profile != NULL ? " [profile " : " (default "
		    "section", from->profile != NULL ? from->profile : "",
		    from->profile != NULL ? "]" : ")",
		    from->cmd ? ", api_key_cmd's output" : "");
	else
		printf("\t# %s\n", builtin);
}

/*
 * The header lines of text (one a line) as "Name: ***", the values
 * (which may be secrets) left out, on one line.
 */
static void
print_header_names(const char *text)
{
	const char *p = text;

	while (*p != '\0') {
		size_t n = strcspn(p, ":\n");

		if (n > 0)
			printf("%s%.*s: ***", p == text ? "" : "; ", (int)n, p);
		p += strcspn(p, "\n");
		if (*p == '\n')
			p++;
	}
}

/*
 * See cli.h: each key of the file, its value in force (the key and the
 * headers' values masked) and where it came from: an option of o, the
 * environment, the file's line, or built in.  Exits 0.
 */
void
cli_show_config(const struct cli *o, const struct saop_llm_config *cfg)
{
	static const char *const providers[] = { "openai", "anthropic",
	    "openai-responses", "gemini" };
	struct saop_setting_from from;
	const char *k, *v;
	size_t i, h;

	for (i = 0; (k = saop_setting_key(i)) != NULL; i++) {
		struct saop_err e;
		const char *opt = NULL, *builtin = "not set";
		char num[32];

		v = saop_setting(k, &from);
		printf("%s = ", k);
		if (strcmp(k, "api_key") == 0) {
			if (saop_settings_api_key(&v, &from, &e) != 0)
				v = NULL;
			if (cfg->key != NULL)
				printf("*** (%zu bytes)", strlen(cfg->key));
			builtin = cfg->key != NULL ? "environment: the "
			    "provider's own variable (saop(7))" : "not set";
		} else if (strcmp(k, "headers") == 0) {
			if (v != NULL)
				print_header_names(v);
			if (o->nheaders > 0)
				opt = "--header";
			for (h = 0; h < o->nheaders; h++) {
				if (v != NULL || h > 0)
					fputs("; ", stdout);
				print_header_names(o->headers[h]);
			}
		} else if (strcmp(k, "provider") == 0) {
			printf("%s", v != NULL ? v : providers[cfg->provider]);
			builtin = "built in";
		} else if (strcmp(k, "api_base") == 0) {
			printf("%s", cfg->base);
			builtin = "built in: the provider's";
		} else if (strcmp(k, "timeout_ms") == 0) {
			snprintf(num, sizeof(num), "%ld", cfg->timeout_ms);
			printf("%s", num);
			if (o->timeout_ms > 0)
				opt = "--timeout";
			builtin = "built in";
		} else if (strcmp(k, "max_cost") == 0) {
			if (o->max_cost != NULL) {
				printf("%s", o->max_cost);
				opt = "--max-cost";
			} else if (v != NULL)
				printf("%s", v);
		} else if (strcmp(k, "db") == 0) {
			printf("%s", saop_config_db(o->db));
			if (o->db != NULL)
				opt = "--db";
			builtin = "built in";
		} else if (v != NULL)
			printf("%s", v);
		print_from(&from, opt, builtin);
	}
	exit(cli_exit(0));
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

/* See cli-int.h.  Returns the amount. */
double
cli_usd(const char *name, const char *arg)
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
	b->max_usd = v != NULL ? cli_usd(name, v) : -1;
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
