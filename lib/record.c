/* record.c: NDJSON turn records in and out. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saop-private.h"

struct saop_reader {
	FILE *f;
	int owned;		/* f was opened here and is closed here */
	size_t max_line;
	long line;		/* line of the record last returned */
	long next_line;		/* line the next read starts on */
	char *buf;
	size_t cap;
	/* Input read ahead with read(2): whatever the pipe holds, so a
	 * record is handed on as soon as its line is there. */
	char *in;
	size_t in_pos, in_len;
	int eof;
};

#define READ_AHEAD	(128 * 1024)

struct saop_reader *
saop_reader_open(const char *path, size_t max_line, struct saop_err *e)
{
	struct saop_reader *r;

	saop_err_clear(e);
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
		return NULL;
	}
	r->max_line = max_line ? max_line : SAOP_MAX_RECORD_BYTES;
	r->next_line = 1;
	if (path == NULL || strcmp(path, "-") == 0) {
		r->f = stdin;
	} else if ((r->f = fopen(path, "rb")) == NULL) {
		saop__fail(e, SAOP_ENOINPUT, errno, "%s: %s", path,
		    strerror(errno));
		free(r);
		return NULL;
	} else {
		r->owned = 1;
	}
	return r;
}

/* Refill r->in; 1, 0 at end of input, or a negative code. */
static int
fill(struct saop_reader *r, struct saop_err *e)
{
	struct pollfd pfd;
	ssize_t n;

	if (r->eof)
		return 0;
	if (r->in == NULL && (r->in = malloc(READ_AHEAD)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
	/*
	 * About to wait for input that is not there yet: hand on what was
	 * written so far, so that a record fed in alone comes out at once
	 * (a program driving the pipe a turn at a time), while input that
	 * streams in fast is still written in blocks.
	 */
	pfd.fd = fileno(r->f);
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 0) == 0)
		fflush(NULL);
	do
		n = read(fileno(r->f), r->in, READ_AHEAD);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return saop__fail(e, SAOP_EIO, errno, "line %ld: read error: %s",
		    r->next_line, strerror(errno));
	r->in_pos = 0;
	r->in_len = (size_t)n;
	if (n == 0)
		r->eof = 1;
	return n > 0;
}

/*
 * Read one line (without its LF) into r->buf; *len its length.  Returns 1,
 * 0 at EOF with nothing read, or a negative code.  A line longer than the
 * limit is consumed to its end before SAOP_ELIMIT is returned, so the
 * caller could go on.
 */
static int
read_line(struct saop_reader *r, size_t *len, struct saop_err *e)
{
	const char *p, *nl = NULL;
	size_t n = 0, take;
	int rc, over = 0;

	while (nl == NULL) {
		if (r->in_pos == r->in_len) {
			if ((rc = fill(r, e)) < 0)
				return rc;
			if (rc == 0)
				break;
		}
		p = r->in + r->in_pos;
		nl = memchr(p, '\n', r->in_len - r->in_pos);
		take = nl != NULL ? (size_t)(nl - p) : r->in_len - r->in_pos;
		r->in_pos += take + (nl != NULL);
		if (over || take > r->max_line - n) {
			over = 1;
			continue;
		}
		if (n + take + 1 > r->cap) {
			size_t ncap = r->cap ? r->cap : 4096;
			char *nb;

			while (ncap < n + take + 1)
				ncap *= 2;
			if ((nb = realloc(r->buf, ncap)) == NULL)
				return saop__fail(e, SAOP_ENOMEM, errno,
				    "out of memory reading line %ld",
				    r->next_line);
			r->buf = nb;
			r->cap = ncap;
		}
		memcpy(r->buf + n, p, take);
		n += take;
	}
	if (nl == NULL && n == 0 && !over)
		return 0;
	r->line = r->next_line++;
	if (over)
		return saop__fail_at(e, SAOP_ELIMIT, r->line,
		    (long long)r->max_line,
		    "record longer than %zu bytes (raise it with --max-record)",
		    r->max_line);
	r->buf[n] = '\0';
	*len = n;
	return 1;
}

static int
blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

/*
 * The error for a line jansson refused.  jansson's position is where it
 * stopped reading, a byte or more past the fault; the scanner names the
 * first byte that cannot be JSON (offsets from 0, as in detect.error).
 */
static int
bad_line(struct saop_reader *r, size_t len, const json_error_t *je,
    struct saop_err *e)
{
	struct saop_detect_result d;
	int rc;

	memset(&d, 0, sizeof(d));
	if (saop_detect_buffer(r->buf, len, SAOP_MAX_DEPTH, &d) < 0)
		return saop__fail_at(e, SAOP_EDATA, r->line, je->position,
		    "not a JSON record: %s", je->text);
	if (d.verdict == SAOP_INVALID)
		rc = saop__fail_at(e, SAOP_EDATA, r->line,
		    (long long)d.error_offset, "not a JSON record: %s",
		    d.error);
	else if (d.verdict == SAOP_TRUNCATED)
		rc = saop__fail_at(e, SAOP_EDATA, r->line, (long long)len,
		    "not a JSON record: the line ends inside the JSON, "
		    "expecting %s", d.expected != NULL ? d.expected :
		    "more");
	else	/* Valid JSON that jansson cannot hold (too deep, say). */
		rc = saop__fail_at(e, SAOP_EDATA, r->line, je->position,
		    "not a JSON record: %s", je->text);
	saop_detect_result_free(&d);
	return rc;
}

int
saop_reader_next(struct saop_reader *r, json_t **rec, struct saop_err *e)
{
	json_error_t je;
	json_t *v;
	size_t len = 0;
	int rc;

	*rec = NULL;
	saop_err_clear(e);
	do {
		if ((rc = read_line(r, &len, e)) <= 0)
			return rc;
	} while (blank(r->buf, len));
	/* The fast path builds the same tree; whatever it does not take
	 * (bad JSON included) jansson judges, and names the place. */
	if ((v = saop__json_fast(r->buf, len)) != NULL)
		goto parsed;
	v = json_loadb(r->buf, len, JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL,
	    &je);
	if (v == NULL)
		return bad_line(r, len, &je, e);
	/* JSON_DISABLE_EOF_CHECK stops at the value's end: the rest of the
	 * line may hold only white space. */
	if ((size_t)je.position < len && !blank(r->buf + je.position,
	    len - (size_t)je.position)) {
		size_t at = (size_t)je.position;

		while (at < len && strchr(" \t\r", r->buf[at]) != NULL)
			at++;
		json_decref(v);
		return saop__fail_at(e, SAOP_EDATA, r->line, (long long)at,
		    "not a JSON record: text after the object");
	}
parsed:
	if (!json_is_object(v)) {
		json_decref(v);
		return saop__fail_at(e, SAOP_EDATA, r->line, 0,
		    "not a JSON record: a record is a JSON object, one per line");
	}
	*rec = v;
	return 1;
}

long
saop_reader_line(const struct saop_reader *r)
{
	return r->line;
}

void
saop_reader_close(struct saop_reader *r)
{
	if (r == NULL)
		return;
	if (r->owned)
		fclose(r->f);
	free(r->in);
	free(r->buf);
	free(r);
}

int
saop_read_all(FILE *f, char **buf, size_t *len, size_t max,
    struct saop_err *e)
{
	size_t n = 0, cap = 0, got;
	char *b = NULL, *nb;

	*buf = NULL;
	*len = 0;
	if (max == 0)
		max = SAOP_MAX_RECORD_BYTES;
	for (;;) {
		if (cap - n < 65536 + 1) {
			size_t ncap = cap ? cap * 2 : 65536 + 1;

			if ((nb = realloc(b, ncap)) == NULL) {
				free(b);
				return saop__fail(e, SAOP_ENOMEM, errno,
				    "out of memory reading input");
			}
			b = nb;
			cap = ncap;
		}
		got = fread(b + n, 1, cap - n - 1, f);
		n += got;
		if (n > max) {
			free(b);
			return saop__fail_at(e, SAOP_ELIMIT, 1, (long long)max,
			    "input longer than %zu bytes (raise it with --max-record)",
			    max);
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(b);
		return saop__fail(e, SAOP_EIO, errno, "read error: %s",
		    strerror(errno));
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

int
saop_record_write(FILE *f, const json_t *rec, struct saop_err *e)
{
	if (json_dumpf(rec, f, JSON_COMPACT) != 0 || putc('\n', f) == EOF)
		return saop__fail(e, SAOP_EIO, errno, "write error: %s",
		    strerror(errno));
	return 0;
}

const char *
saop_record_raw(const json_t *rec, size_t *len)
{
	const json_t *raw = json_object_get(rec, "raw");

	if (!json_is_string(raw)) {
		if (len)
			*len = 0;
		return NULL;
	}
	if (len)
		*len = json_string_length(raw);
	return json_string_value(raw);
}

int
saop_record_set_state(json_t *rec, const char *state)
{
	return json_object_set_new(rec, "state", json_string(state)) == 0 ?
	    0 : -SAOP_ENOMEM;
}
