/*
 * mock-lines.c: saop-mock's files of a JSON value a line (see
 * mock-lines.h): the --script and the --oracle's answers are read here,
 * and refused here with their file and line.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cli.h"
#include "mock-lines.h"

/* See mock-lines.h.  Does not return. */
_Noreturn void
mock_line_error(const char *path, long line, const char *member,
    const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: line %ld: ", cli_name(), path, line);
	if (member != NULL)
		fprintf(stderr, "member \"%s\": ", member);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EX_DATAERR);
}

/* See mock-lines.h.  Returns the values read (new). */
json_t *
mock_read_lines(const char *path, size_t flags,
    void (*each)(void *arg, json_t *v, long line), void *arg, long *lines)
{
	FILE *f = fopen(path, "r");
	json_t *all;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	long line = 0;

	if (f == NULL) {
		cli_warn("%s: %s", path, strerror(errno));
		exit(EX_NOINPUT);
	}
	if ((all = json_array()) == NULL)
		cli_die_nomem();
	while ((n = getline(&buf, &cap, f)) != -1) {
		const char *p = buf;
		json_error_t je;
		json_t *v;

		line++;
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		v = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES | flags,
		    &je);
		if (v == NULL)
			mock_line_error(path, line, NULL, "not JSON: %s "
			    "(column %d)", je.text, je.column);
		if (json_array_append_new(all, v) != 0)
			cli_die_nomem();
		each(arg, v, line);
	}
	if (ferror(f)) {
		cli_warn("%s: %s", path, strerror(errno));
		exit(EX_NOINPUT);
	}
	free(buf);
	fclose(f);
	*lines = line;
	return all;
}
