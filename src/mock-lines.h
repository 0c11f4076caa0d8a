/*
 * mock-lines.h: the files saop-mock reads a JSON value a line of (the
 * --script's replies, the --oracle's answers): read once, refused as a
 * whole with the file and line named before anything listens.
 */
#ifndef SAOP_MOCK_LINES_H
#define SAOP_MOCK_LINES_H

#include <stddef.h>

#include <jansson.h>

/*
 * Say "saop-mock: PATH: line L: member M: msg" on stderr (the member only
 * when not NULL) and exit 65.
 */
_Noreturn void mock_line_error(const char *path, long line,
    const char *member, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * Read the file at path, one JSON value a line (parsed with jansson's
 * flags, duplicate keys refused), blank lines and lines starting with '#'
 * skipped: each value is appended to the array returned (new: the owner
 * of the values and their strings) and handed to each(arg, value, line).
 * *lines is set to the count of lines read.  Exits 66 naming path when it
 * cannot be read, 65 naming the line when one is not JSON, 70 out of
 * memory.
 */
json_t *mock_read_lines(const char *path, size_t flags,
    void (*each)(void *arg, json_t *v, long line), void *arg, long *lines);

#endif
