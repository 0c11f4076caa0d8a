/*
 * config.c: the library's one reader of its settings, apart from the
 * model's (llm-config.c): the state database ($SAOP_DB), the suspension
 * policy ($SAOP_MAX_AUTO_RESUME, $SAOP_NETWORK_POLL_INTERVAL_MS,
 * $SAOP_MAX_WAIT, each also a key of the configuration file, through
 * settings.c; $SAOP_CLAIM_LEASE_MS), and the conventions of other tools
 * it follows (the proxies libcurl takes, $PATH as the shell reads it).
 * Every other file asks here; saop(7)'s ENVIRONMENT lists them.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"

/* The state database when neither the caller nor $SAOP_DB names one. */
#define DEFAULT_DB	".saop/state.sqlite"

/* The value of the environment variable name, or NULL when unset or empty. */
static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* The first of the environment variables names that is set, or NULL. */
static const char *
env_first(const char *const *names)
{
	const char *v = NULL;

	for (; *names != NULL && v == NULL; names++)
		v = env(*names);
	return v;
}

/*
 * See saop.h: given, else $SAOP_DB, else .saop/state.sqlite.  Returns a
 * borrowed string.
 */
const char *
saop_config_db(const char *given)
{
	const char *v;

	if (given != NULL && *given != '\0')
		return given;
	return (v = saop__setting("db")) != NULL && *v != '\0' ? v :
	    DEFAULT_DB;
}

/* See saop.h: given or $SAOP_DB, not empty.  Returns 1, else 0. */
int
saop_config_db_named(const char *given)
{
	return (given != NULL && *given != '\0') || env("SAOP_DB") != NULL;
}

/*
 * Parse DURATION into ms (see saop.h): a number with ms, s, m, h or no
 * unit (seconds), or "inf".  Returns 0, or -1.
 */
int
saop_duration_parse(const char *text, long long *ms)
{
	static const struct {
		const char *unit;
		long long ms;
	} units[] = { { "", 1000 }, { "ms", 1 }, { "s", 1000 },
	    { "m", 60000 }, { "h", 3600000 } };
	char *end;
	double v;
	size_t i;

	if (strcmp(text, "inf") == 0 || strcmp(text, "infinity") == 0) {
		*ms = -1;
		return 0;
	}
	if (*text < '0' || *text > '9')
		return -1;
	errno = 0;
	v = strtod(text, &end);
	if (errno != 0 || end == text)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0) {
			if (v * (double)units[i].ms > 9e15)
				return -1;
			*ms = (long long)(v * (double)units[i].ms);
			return 0;
		}
	return -1;
}

/*
 * The whole number of the setting key, from min to max; def when it is
 * unset or empty.  Returns 0 with *out set, or SAOP_ECONFIG naming its
 * variable or the file's line.
 */
static int
env_count(const char *key, long def, long min, long max, long *out,
    struct saop_err *e)
{
	const char *v = saop__setting(key);
	char *end;
	long n;

	*out = def;
	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < min || n > max) {
		char name[300];

		return saop__fail(e, SAOP_ECONFIG, 0, "%s: '%.64s' is not a "
		    "whole number from %ld to %ld", saop__setting_name(key,
		    name, sizeof(name)), v, min, max);
	}
	*out = n;
	return 0;
}

/*
 * Set o's resumptions, poll interval and longest wait from the
 * environment (see saop.h).  Returns 0, or SAOP_ECONFIG naming the
 * variable.
 */
int
saop_suspend_opts_from_env(struct saop_suspend_opts *o, struct saop_err *e)
{
	const char *v;
	long n;
	int rc;

	if ((rc = env_count("max_auto_resume", SAOP_MAX_AUTO_RESUME, 0,
	    1000, &n, e)) != 0)
		return rc;
	o->max_resumes = (int)n;
	if ((rc = env_count("network_poll_interval_ms",
	    SAOP_NETWORK_POLL_INTERVAL_MS, 1, 86400000L, &o->poll_ms, e)) != 0)
		return rc;
	o->max_wait_ms = SAOP_MAX_WAIT_MS;
	/* A wait asked for (environment or file) is the wait, for every
	 * endpoint. */
	v = saop__setting("max_wait");
	o->first_contact_ms = v != NULL && *v != '\0' ? 0 :
	    SAOP_FIRST_CONTACT_MS;
	if (v != NULL && *v != '\0' &&
	    saop_duration_parse(v, &o->max_wait_ms) != 0) {
		char name[300];

		return saop__fail(e, SAOP_ECONFIG, 0, "%s: '%.100s' is not a "
		    "duration (90s, 30m, 2h, inf)", saop__setting_name(
		    "max_wait", name, sizeof(name)), v);
	}
	return 0;
}

/*
 * See saop-private.h: $SAOP_CLAIM_LEASE_MS (100 and up), else
 * SAOP_CLAIM_LEASE_MS.  Returns the lease in ms.
 */
long long
saop__config_lease_ms(void)
{
	const char *v = env("SAOP_CLAIM_LEASE_MS");
	long long n;
	char *end;

	if (v == NULL)
		return SAOP_CLAIM_LEASE_MS;
	n = strtoll(v, &end, 10);
	return *end == '\0' && n >= 100 ? n : SAOP_CLAIM_LEASE_MS;
}

/*
 * See saop-private.h: the proxy libcurl takes for an https (https 1) or
 * http URL.  Returns the borrowed URL, or NULL for none.
 */
const char *
saop__config_proxy(int https)
{
	static const char *const https_env[] = { "https_proxy", "HTTPS_PROXY",
	    "all_proxy", "ALL_PROXY", NULL };
	static const char *const http_env[] = { "http_proxy", "all_proxy",
	    "ALL_PROXY", NULL };

	return env_first(https ? https_env : http_env);
}

/*
 * See saop-private.h: the hosts reached without a proxy.  Returns the
 * borrowed list, or NULL for none.
 */
const char *
saop__config_no_proxy(void)
{
	static const char *const names[] = { "no_proxy", "NO_PROXY", NULL };

	return env_first(names);
}

/*
 * See saop-private.h: where the shell looks for a program.  Returns
 * $PATH, or the shell's default when it is unset or empty.
 */
const char *
saop__config_path(void)
{
	const char *v = env("PATH");

	return v != NULL ? v : "/usr/bin:/bin";
}
