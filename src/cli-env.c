/*
 * cli-env.c: the environment of the programs (see cli.h): every getenv()
 * of src/ is here, and the settings only the programs know ($SAOP_SCHEMA,
 * $SAOP_SCHEMA_MODE, $SAOP_MAX_CORRECTION_RETRIES, with the file's).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

/*
 * The value of the environment variable name (read here alone among the
 * programs' files), or NULL when unset or empty.
 */
static const char *
env_value(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* See cli.h: the variable a user names on the command line (saop-mock
 * --key-env VAR), or NULL when unset or empty. */
const char *
cli_env_named(const char *name)
{
	return env_value(name);
}

/*
 * The setting key ($SAOP_..., else the configuration file), or NULL when
 * unset or empty; name (when not NULL) says where it was set.
 */
static const char *
setting_value(const char *key, char *name, size_t size)
{
	struct saop_setting_from f;
	const char *v = saop_setting(key, &f);

	if (name != NULL && f.file != NULL)
		snprintf(name, size, "%s, line %ld: %s", f.file, f.line, key);
	else if (name != NULL)
		snprintf(name, size, "%s", f.env != NULL ? f.env : key);
	return v != NULL && *v != '\0' ? v : NULL;
}

/* See cli.h: $SAOP_SCHEMA (or the file's schema), or NULL. */
const char *
cli_env_schema(void)
{
	return setting_value("schema", NULL, 0);
}

/* See cli.h: $SAOP_SCHEMA_MODE (or the file's schema_mode), or NULL. */
const char *
cli_env_schema_mode(void)
{
	return setting_value("schema_mode", NULL, 0);
}

/*
 * See cli.h: $SAOP_MAX_COST (or the file's max_cost), or NULL; name says
 * where it was set.
 */
const char *
cli_env_max_cost(char *name, size_t size)
{
	return setting_value("max_cost", name, size);
}

/*
 * See cli.h: $SAOP_MAX_CORRECTION_RETRIES (or the file's
 * max_correction_retries), else def (exits 64).
 */
int
cli_env_correction_retries(int def)
{
	char name[300];
	const char *v = setting_value("max_correction_retries", name,
	    sizeof(name));

	return v != NULL ? (int)cli_count(name, v, 100) : def;
}
