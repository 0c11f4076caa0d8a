/*
 * settings.c: the one owner of where a setting comes from: the
 * environment ($SAOP_...), else the configuration file's profile section,
 * else its default section (read with inih once, by saop_settings_load()),
 * else nothing (the reader's built-in default).  config.c and llm-config.c
 * read their settings through it; the file's rules (its place, its
 * sections, its keys, who may read it) are here alone.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "saop-private.h"

/* The keys of the file and the variables that set them first. */
static const struct {
	const char *key;
	const char *env;
} keys[] = {
	{ "provider", "SAOP_PROVIDER" },
	{ "api_base", "SAOP_API_BASE" },
	{ "api_key", "SAOP_API_KEY" },
	{ "api_key_cmd", NULL },
	{ "model", "SAOP_MODEL" },
	{ "auth_header", "SAOP_AUTH_HEADER" },
	{ "headers", "SAOP_HEADERS" },
	{ "timeout_ms", "SAOP_TIMEOUT_MS" },
	{ "vertex_project", "SAOP_VERTEX_PROJECT" },
	{ "vertex_location", "SAOP_VERTEX_LOCATION" },
	{ "db", "SAOP_DB" },
	{ "max_auto_resume", "SAOP_MAX_AUTO_RESUME" },
	{ "network_poll_interval_ms", "SAOP_NETWORK_POLL_INTERVAL_MS" },
	{ "max_wait", "SAOP_MAX_WAIT" },
	{ "schema", "SAOP_SCHEMA" },
	{ "schema_mode", "SAOP_SCHEMA_MODE" },
	{ "max_correction_retries", "SAOP_MAX_CORRECTION_RETRIES" },
	{ "max_cost", "SAOP_MAX_COST" },
	{ "prices", "SAOP_PRICES" },
};
#define NKEYS	(sizeof(keys) / sizeof(keys[0]))

/* One key of the file: its section (0 default, 1 the profile). */
struct entry {
	char *value;
	long line;
};

/* The file as read: the values of the default section and the profile. */
static struct {
	char *path;			/* the file read, or NULL */
	char *profile;			/* the profile in force, or NULL */
	struct entry e[2][NKEYS];	/* [0] default, [1] profile */
	int have_profile;		/* the profile's section was seen */
	int key_run;			/* api_key_cmd has been run */
	char *key_out;			/* its output */
	struct saop_setting_from key_from;
	const char *key_cmd;		/* the command run (in e[][]) */
} file;

/* Held while api_key_cmd is run again and key_out replaced. */
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;

/* The parse under way: where inih is and the first problem. */
struct parse {
	FILE *f;
	long line;		/* the line inih last read */
	long newlines;		/* LFs read so far */
	int too_long;		/* that line did not fit inih's buffer */
	int holds_key;		/* an api_key was seen */
	char msg[300];
};

/* The index of key in keys[], or -1 when it is not one. */
static int
key_index(const char *key)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].key, key) == 0)
			return (int)i;
	return -1;
}

/* See saop-private.h: s overwritten with NULs, the compiler kept from
 * dropping the stores. */
void
saop__wipe(char *s)
{
	volatile char *p = s;

	while (p != NULL && *p != '\0')
		*p++ = '\0';
}

/* See saop.h.  Returns the i-th key, or NULL past the last. */
const char *
saop_setting_key(size_t i)
{
	return i < NKEYS ? keys[i].key : NULL;
}

/*
 * inih's reader: fgets() that counts lines and marks a line longer than
 * inih's buffer (whose rest inih would read as a line of its own): that
 * line comes out as "[", an error inih reports at it.  Returns str, or
 * NULL at the end.
 */
static char *
reader(char *str, int num, void *arg)
{
	struct parse *p = arg;
	size_t n;

	if (p->too_long || fgets(str, num, p->f) == NULL)
		return NULL;
	p->line = p->newlines + 1;
	n = strlen(str);
	if (n > 0 && str[n - 1] == '\n')
		p->newlines++;
	else if (!feof(p->f)) {
		p->too_long = 1;
		snprintf(p->msg, sizeof(p->msg), "a line of more than %d "
		    "bytes", num - 3);
		strcpy(str, "[");
	}
	return str;
}

/*
 * inih's handler: keep name = value of section in file.e when section is
 * the default ("" or "default") or the profile in force; any other
 * "profile NAME" is skipped, another section or an unknown key refused.
 * headers take one line each (a multi-line value); another key given
 * twice is refused.  Returns 1, or 0 with p->msg set.
 */
static int
handler(void *arg, const char *section, const char *name, const char *value)
{
	struct parse *p = arg;
	struct entry *en;
	int k = key_index(name), s;
	char *v;

	if (*section == '\0' || strcmp(section, "default") == 0)
		s = 0;
	else if (strncmp(section, "profile ", 8) == 0 &&
	    section[8] != '\0')
		s = file.profile != NULL &&
		    strcmp(section + 8, file.profile) == 0 ? 1 : -1;
	else {
		snprintf(p->msg, sizeof(p->msg), "[%.64s] is not a section "
		    "(a default section, or [profile NAME])", section);
		return 0;
	}
	if (k < 0) {
		snprintf(p->msg, sizeof(p->msg), "'%.64s' is not a key of "
		    "the file (saop(7), CONFIGURATION)", name);
		return 0;
	}
	if (strcmp(name, "api_key") == 0)
		p->holds_key = 1;
	if (s < 0)
		return 1;
	if (s == 1)
		file.have_profile = 1;
	en = &file.e[s][k];
	if (en->value != NULL && strcmp(name, "headers") != 0) {
		snprintf(p->msg, sizeof(p->msg), "'%s' given twice in its "
		    "section (line %ld; a value goes on one line)", name,
		    en->line);
		return 0;
	}
	if (en->value == NULL)
		v = strdup(value);
	else if ((v = malloc(strlen(en->value) + strlen(value) + 2)) != NULL)
		sprintf(v, "%s\n%s", en->value, value);
	if (v == NULL) {
		strcpy(p->msg, "out of memory");
		return 0;
	}
	free(en->value);
	en->value = v;
	if (en->line == 0)
		en->line = p->line;
	return 1;
}

/*
 * The default file: $XDG_CONFIG_HOME/saop/config, else
 * $HOME/.config/saop/config.  Returns a new string, or NULL with neither
 * set (or on ENOMEM, *nomem set).
 */
static char *
default_path(int *nomem)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	char *s;
	size_t n;

	*nomem = 0;
	if (x == NULL || *x != '/')	/* relative: ignored, as XDG says */
		x = NULL;
	if (x == NULL && (h == NULL || *h == '\0'))
		return NULL;
	n = strlen(x != NULL ? x : h) + 32;
	if ((s = malloc(n)) == NULL) {
		*nomem = 1;
		return NULL;
	}
	snprintf(s, n, "%s%s/saop/config", x != NULL ? x : h,
	    x != NULL ? "" : "/.config");
	return s;
}

/* See saop.h: forget the file, wiping the key it gave. */
void
saop_settings_free(void)
{
	size_t s, i;

	for (s = 0; s < 2; s++)
		for (i = 0; i < NKEYS; i++) {
			char *v = file.e[s][i].value;

			if (v != NULL && strcmp(keys[i].key, "api_key") == 0)
				saop__wipe(v);
			free(v);
		}
	if (file.key_out != NULL)
		saop__wipe(file.key_out);
	free(file.key_out);
	free(file.path);
	free(file.profile);
	memset(&file, 0, sizeof(file));
}

/*
 * Refuse fd's file (path) as ssh refuses its own: one owned by another
 * user (not root), or that others may write (they would choose the
 * endpoint the key goes to, or the command run for it), or, when it holds
 * a key, that others may read.  Returns 0, or -SAOP_ECONFIG.
 */
static int
check_mode(const struct stat *st, const char *path, int holds_key,
    struct saop_err *e)
{
	if (st->st_uid != geteuid() && st->st_uid != 0)
		return saop__fail(e, SAOP_ECONFIG, 0, "%s: owned by another "
		    "user (uid %ld): not read", path, (long)st->st_uid);
	if ((st->st_mode & 022) != 0)
		return saop__fail(e, SAOP_ECONFIG, 0, "%s: others may write "
		    "it (mode %03o): not read; chmod go-w %s", path,
		    (unsigned)(st->st_mode & 0777), path);
	if (holds_key && (st->st_mode & 077) != 0)
		return saop__fail(e, SAOP_ECONFIG, 0, "%s: holds an api_key "
		    "and others may read it (mode %03o): not read; chmod 600 "
		    "%s", path, (unsigned)(st->st_mode & 0777), path);
	return 0;
}

/*
 * See saop.h: read path (NULL: the default file, which may be missing)
 * with profile (NULL: $SAOP_PROFILE) in force.  Returns 0, or
 * -SAOP_ECONFIG naming the file and line, or -SAOP_ENOMEM.
 */
int
saop_settings_load(const char *path, const char *profile,
    struct saop_err *e)
{
	struct parse p = { 0 };
	struct stat st;
	int nomem, rc, fd;
	char *own = NULL;

	saop_settings_free();
	if (profile == NULL && (profile = getenv("SAOP_PROFILE")) != NULL &&
	    *profile == '\0')
		profile = NULL;
	if (profile != NULL && (file.profile = strdup(profile)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	if (path == NULL && (path = own = default_path(&nomem)) == NULL &&
	    nomem)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	fd = path != NULL ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd == -1 && (path == NULL || (errno == ENOENT && own != NULL))) {
		rc = profile == NULL ? 0 : saop__fail(e, SAOP_ECONFIG, 0,
		    "profile '%.64s': no configuration file (%s)", profile,
		    path != NULL ? path : "neither XDG_CONFIG_HOME nor HOME "
		    "is set");
		free(own);
		return rc;
	}
	if (fd == -1 || fstat(fd, &st) != 0 ||
	    (p.f = fdopen(fd, "r")) == NULL) {
		rc = saop__fail(e, SAOP_ECONFIG, errno, "%s: %s", path,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		free(own);
		return rc;
	}
	if ((file.path = strdup(path)) == NULL) {
		fclose(p.f);
		free(own);
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	free(own);
	rc = ini_parse_stream(reader, &p, handler, &p);
	fclose(p.f);
	if (rc != 0) {
		if (rc > 0)
			saop__fail(e, SAOP_ECONFIG, 0, "%s, line %d: %s",
			    file.path, rc, p.msg[0] != '\0' ? p.msg :
			    "not 'key = value' nor '[section]'");
		else
			saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	} else if ((rc = check_mode(&st, file.path, p.holds_key, e)) == 0 &&
	    profile != NULL && !file.have_profile)
		rc = saop__fail(e, SAOP_ECONFIG, 0, "profile '%.64s' is not "
		    "in %s (no [profile %.64s] with a key)", profile,
		    file.path, profile);
	if (rc != 0) {
		rc = e->code;
		saop_settings_free();
		return -rc;
	}
	return 0;
}

/*
 * The value of key from the file: the profile's, else the default
 * section's, with where it was in *from (when not NULL).  Returns it
 * borrowed, or NULL.
 */
static const char *
from_file(int k, struct saop_setting_from *from)
{
	int s;

	for (s = 1; s >= 0; s--)
		if (file.e[s][k].value != NULL) {
			if (from != NULL) {
				from->file = file.path;
				from->line = file.e[s][k].line;
				from->profile = s == 1 ? file.profile : NULL;
			}
			return file.e[s][k].value;
		}
	return NULL;
}

/*
 * See saop.h: key's value from the environment, else the file's profile,
 * else its default section.  Returns it borrowed, or NULL (*from zeroed).
 */
const char *
saop_setting(const char *key, struct saop_setting_from *from)
{
	int k = key_index(key);
	const char *v;

	if (from != NULL)
		memset(from, 0, sizeof(*from));
	if (k < 0)
		return NULL;
	if (keys[k].env != NULL && (v = getenv(keys[k].env)) != NULL &&
	    *v != '\0') {
		if (from != NULL)
			from->env = keys[k].env;
		return v;
	}
	return from_file(k, from);
}

/* See saop-private.h: saop_setting() without where. */
const char *
saop__setting(const char *key)
{
	return saop_setting(key, NULL);
}

/*
 * See saop-private.h: how a message names where key was set: its
 * variable, or "FILE, line N: key", into buf.  Returns buf.
 */
const char *
saop__setting_name(const char *key, char *buf, size_t size)
{
	struct saop_setting_from f;

	saop_setting(key, &f);
	if (f.file != NULL)
		snprintf(buf, size, "%s, line %ld: %s", f.file, f.line, key);
	else
		snprintf(buf, size, "%s", f.env != NULL ? f.env :
		    keys[key_index(key)].env);
	return buf;
}

/*
 * Run cmd (sh -c, its standard input /dev/null) and keep its output,
 * without its final line breaks, in file.key_out: run once per process.  Returns 0, or -SAOP_ECONFIG that
 * never shows the output.
 */
static int
run_key_cmd(const char *cmd, const struct saop_setting_from *from,
    struct saop_err *e)
{
	char buf[4096];
	size_t n = 0, r;
	FILE *f;
	int st;

	file.key_run = 1;
	/* Not the records: its input is /dev/null (a line of its own, so
	 * that a comment at the end of cmd ends there). */
	if (snprintf(buf, sizeof(buf), "exec </dev/null\n%s", cmd) >=
	    (int)sizeof(buf))
		return saop__fail(e, SAOP_ECONFIG, 0, "%s, line %ld: "
		    "api_key_cmd too long", from->file, from->line);
	if ((f = popen(buf, "r")) == NULL)
		return saop__fail(e, SAOP_ECONFIG, errno, "%s, line %ld: "
		    "api_key_cmd: %s", from->file, from->line,
		    strerror(errno));
	while (n < sizeof(buf) - 1 &&
	    (r = fread(buf + n, 1, sizeof(buf) - 1 - n, f)) > 0)
		n += r;
	while (fread(buf, 1, 1, f) > 0)	/* more than a key: drained */
		n = sizeof(buf);
	st = pclose(f);
	while (n > 0 && n < sizeof(buf) && (buf[n - 1] == '\n' ||
	    buf[n - 1] == '\r'))
		n--;
	buf[n < sizeof(buf) ? n : 0] = '\0';
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || n == 0 ||
	    n >= sizeof(buf) - 1 || strpbrk(buf, "\r\n") != NULL) {
		saop__wipe(buf);
		return saop__fail(e, SAOP_ECONFIG, 0, "%s, line %ld: "
		    "api_key_cmd %s", from->file, from->line,
		    st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ?
		    "failed" : n == 0 ? "wrote no key" :
		    "wrote more than one line");
	}
	file.key_out = strdup(buf);
	saop__wipe(buf);
	if (file.key_out == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	file.key_from = *from;
	file.key_cmd = cmd;
	return 0;
}

/*
 * See saop-private.h: api_key_cmd run once more when its output in force
 * is still stale (another thread may have run it already), under
 * key_lock.  Returns 0 with *key a new copy (wipe, free()), or
 * -SAOP_ECONFIG (no command gave the key, or it failed again) or
 * -SAOP_ENOMEM.
 */
int
saop__settings_key_again(const char *stale, char **key, struct saop_err *e)
{
	struct saop_setting_from from;
	char *old;
	int rc = 0;

	*key = NULL;
	pthread_mutex_lock(&key_lock);
	if (file.key_out == NULL || file.key_cmd == NULL) {
		rc = saop__fail(e, SAOP_ECONFIG, 0, "no api_key_cmd gave "
		    "the key");
		goto out;
	}
	if (stale != NULL && strcmp(stale, file.key_out) == 0) {
		old = file.key_out;
		file.key_out = NULL;
		from = file.key_from;
		if ((rc = run_key_cmd(file.key_cmd, &from, e)) != 0) {
			file.key_out = old;	/* the last that worked */
			goto out;
		}
		saop__wipe(old);
		free(old);
	}
	if ((*key = strdup(file.key_out)) == NULL)
		rc = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
out:
	pthread_mutex_unlock(&key_lock);
	return rc;
}

/*
 * See saop.h: $SAOP_API_KEY, else the file's api_key or api_key_cmd (the
 * profile's before the default section's; the command run once per
 * process).  Returns 0 with *key borrowed (NULL: none), or
 * -SAOP_ECONFIG / -SAOP_ENOMEM.
 */
int
saop_settings_api_key(const char **key, struct saop_setting_from *from,
    struct saop_err *e)
{
	int k = key_index("api_key"), c = key_index("api_key_cmd"), s, rc;
	struct saop_setting_from f = { 0 };

	*key = getenv("SAOP_API_KEY");
	if (*key != NULL && **key != '\0') {
		f.env = "SAOP_API_KEY";
		goto found;
	}
	*key = NULL;
	for (s = 1; s >= 0; s--) {
		if (file.e[s][k].value != NULL) {
			*key = file.e[s][k].value;
			f.line = file.e[s][k].line;
			break;
		}
		if (file.e[s][c].value != NULL) {
			f.file = file.path;
			f.line = file.e[s][c].line;
			f.profile = s == 1 ? file.profile : NULL;
			if (file.key_run && file.key_out == NULL)
				return saop__fail(e, SAOP_ECONFIG, 0, "%s, "
				    "line %ld: api_key_cmd failed", f.file,
				    f.line);
			if (!file.key_run &&
			    (rc = run_key_cmd(file.e[s][c].value, &f, e)) != 0)
				return rc;
			*key = file.key_out;
			f = file.key_from;
			f.cmd = 1;
			goto found;
		}
	}
	if (*key != NULL) {
		f.file = file.path;
		f.profile = s == 1 ? file.profile : NULL;
	}
found:
	if (from != NULL)
		*from = f;
	return 0;
}
