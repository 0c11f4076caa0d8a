/* record.c: NDJSON turn records in and out. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "saop-private.h"

struct saop_reader {
	FILE *f;
	int owned;		/* f was opened here and is closed here */
	size_t max_line;
	long line;		/* line of the record last returned */
	long next_line;		/* line the next read starts on */
	unsigned long long consumed;	/* bytes of the lines read so far */
	char *buf;
	size_t cap;
	/* Input read ahead with read(2): whatever the pipe holds, so a
	 * record is handed on as soon as its line is there. */
	char *in;
	size_t in_pos, in_len;
	int eof;
	FILE *pass;		/* lines that are not records go here */
	void (*wait)(void *);	/* before a read that would wait */
	void *wait_arg;
};

#define READ_AHEAD	(128 * 1024)

/*
 * See saop.h.  A directory is refused as input.  Returns a new reader
 * (saop_reader_close()), or NULL with e filled (SAOP_ENOMEM,
 * SAOP_ENOINPUT).
 */
struct saop_reader *
saop_reader_open(const char *path, size_t max_line, struct saop_err *e)
{
	struct saop_reader *r;
	struct stat st;

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
	if (fstat(fileno(r->f), &st) == 0 && S_ISDIR(st.st_mode)) {
		saop__fail(e, SAOP_ENOINPUT, EISDIR, "%s: %s", path,
		    strerror(EISDIR));
		saop_reader_close(r);
		return NULL;
	}
	return r;
}

/*
 * Refill r->in with what the input holds now, calling r's wait hook (else
 * flushing its pass stream) first when the read would wait.  Returns 1, 0 at end of input, or
 * -SAOP_ENOMEM or -SAOP_EIO with e filled.
 */
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
	if (poll(&pfd, 1, 0) == 0) {
		if (r->wait != NULL)
			r->wait(r->wait_arg);
		else if (r->pass != NULL)
			fflush(r->pass);
	}
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

/* Copy the n bytes at p of a line that is not a record to r->pass. */
static void
pass_bytes(struct saop_reader *r, const void *p, size_t n)
{
	if (n > 0)
		fwrite(p, 1, n, r->pass);
}

/*
 * Read one line (without its LF) into r->buf; *len its length.  Returns 1,
 * 0 at EOF with nothing read, or a negative code with e filled.  A line
 * longer than the limit is consumed to its end before SAOP_ELIMIT is
 * returned, so the caller could go on.
 */
static int
read_line(struct saop_reader *r, size_t *len, struct saop_err *e)
{
	const char *nl = NULL;
	size_t n = 0;
	int rc, over = 0;

	while (nl == NULL) {
		const char *p;
		size_t take;

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
		r->consumed += take + (nl != NULL);
		if (over || take > r->max_line - n) {
			/* Too long to hold: handed on as it streams by. */
			if (r->pass != NULL) {
				if (!over)
					pass_bytes(r, r->buf, n);
				pass_bytes(r, p, take);
			}
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
	if (over && r->pass != NULL)
		pass_bytes(r, "\n", 1);
	if (over)
		return saop__fail_at(e, SAOP_ELIMIT, r->line,
		    (long long)r->max_line,
		    "record longer than %zu bytes (raise it with --max-record)",
		    r->max_line);
	r->buf[n] = '\0';
	*len = n;
	return 1;
}

/* 1 when the n bytes at s are only spaces, tabs and CRs (or none); else 0. */
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
 * Returns -SAOP_EDATA with e filled.
 */
static int
bad_line(const char *buf, size_t len, long line, const json_error_t *je,
    struct saop_err *e)
{
	struct saop_detect_result d;
	int rc;

	memset(&d, 0, sizeof(d));
	if (saop_detect_buffer(buf, len, SAOP_MAX_DEPTH, &d) < 0)
		return saop__fail_at(e, SAOP_EDATA, line, je->position,
		    "not a JSON record: %s", je->text);
	if (d.verdict == SAOP_INVALID)
		rc = saop__fail_at(e, SAOP_EDATA, line,
		    (long long)d.error_offset, "not a JSON record: %s",
		    d.error);
	else if (d.verdict == SAOP_TRUNCATED)
		rc = saop__fail_at(e, SAOP_EDATA, line, (long long)len,
		    "not a JSON record: the line ends inside the JSON, "
		    "expecting %s", d.expected != NULL ? d.expected :
		    "more");
	else	/* Valid JSON that jansson cannot hold (too deep, say). */
		rc = saop__fail_at(e, SAOP_EDATA, line, je->position,
		    "not a JSON record: %s", je->text);
	saop_detect_result_free(&d);
	return rc;
}

/*
 * Values jansson cannot hold.  jansson refuses some valid JSON (an integer
 * beyond 64 bits, a real beyond double, nesting past 2048, a NUL in a
 * key); a record is never refused for that.  Its members are built one by
 * one, and a value jansson cannot build is kept as its own text, in a
 * string that starts with a mark no input can guess (a NUL, a name and a
 * nonce made once per process); saop_record_write() writes that text
 * back byte for byte.  A program reading such a member sees a string,
 * and saop_record_verbatim() tells it why.
 */
#define VERBATIM_DEPTH	32	/* containers opened member by member */

static char vmark[48];		/* "\0saop-verbatim:<16 hex>:" */
static size_t vmark_len;
static char vmark_json[64];	/* the same as jansson writes it */
static size_t vmark_json_len;
static int verbatim_made;	/* some record holds a verbatim value */

/* Make the mark once: a NUL, a name and 64 random bits. */
static void
vmark_init(void)
{
	unsigned long long nonce = 0;
	FILE *f;

	if (vmark_len != 0)
		return;
	if ((f = fopen("/dev/urandom", "rb")) != NULL) {
		if (fread(&nonce, sizeof(nonce), 1, f) != 1)
			nonce = 0;
		fclose(f);
	}
	nonce ^= (unsigned long long)getpid() << 32 ^ (unsigned long long)
	    (uintptr_t)&nonce ^ (unsigned long long)time(NULL);
	vmark[0] = '\0';
	vmark_len = 1 + (size_t)snprintf(vmark + 1, sizeof(vmark) - 1,
	    "saop-verbatim:%016llx:", nonce);
	vmark_json_len = (size_t)snprintf(vmark_json, sizeof(vmark_json),
	    "\"\\u0000%s", vmark + 1);
}

/* Skip JSON white space from p.  Returns the first other byte, or end. */
static const char *
ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' ||
	    *p == '\r'))
		p++;
	return p;
}

/*
 * The end of the JSON value at p, in text the scanner has judged valid:
 * strings by their closing quote, containers by counting brackets outside
 * strings (no recursion), scalars by the next delimiter.  Returns the byte
 * after the value (at most end).
 */
static const char *
value_end(const char *p, const char *end)
{
	size_t depth = 0;

	do {
		if (*p == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\')
					p++;
			p++;
		} else if (*p == '{' || *p == '[') {
			depth++;
			p++;
		} else if (*p == '}' || *p == ']') {
			depth--;
			p++;
		} else if (depth > 0) {
			p++;
		} else {
			while (p < end && strchr(",]} \t\r\n", *p) == NULL)
				p++;
		}
	} while (depth > 0 && p < end);
	return p < end ? p : end;
}

/*
 * A string holding the mark and the text [p, p+n): the value verbatim.
 * Returns a new reference, or NULL out of memory.
 */
static json_t *
verbatim(const char *p, size_t n)
{
	json_t *v;
	char *b;

	if ((b = malloc(vmark_len + n)) == NULL)
		return NULL;
	memcpy(b, vmark, vmark_len);
	memcpy(b + vmark_len, p, n);
	v = json_stringn(b, vmark_len + n);
	free(b);
	if (v != NULL)
		verbatim_made = 1;
	return v;
}

static json_t *lenient(const char *p, size_t n, int level);

/*
 * The container at [p, p+n) (valid JSON) built member by member, each
 * member by lenient().  Returns new reference, or NULL out of memory.
 */
static json_t *
lenient_container(const char *p, size_t n, int level)
{
	const char *end = p + n, *q, *ke;
	json_error_t je;
	json_t *c, *k, *v;
	int object = *p == '{';

	if ((c = object ? json_object() : json_array()) == NULL)
		return NULL;
	for (q = ws(p + 1, end); q < end && *q != '}' && *q != ']';
	    q = ws(q + 1, end)) {
		k = NULL;
		if (object) {
			ke = value_end(q, end);
			k = json_loadb(q, (size_t)(ke - q), JSON_DECODE_ANY |
			    JSON_ALLOW_NUL, &je);
			if (k == NULL)
				goto fail;
			q = ws(ws(ke, end) + 1, end);	/* past the colon */
		}
		ke = value_end(q, end);
		if ((v = lenient(q, (size_t)(ke - q), level + 1)) == NULL)
			goto fail;
		if (object ? json_object_setn_new(c, json_string_value(k),
		    json_string_length(k), v) : json_array_append_new(c, v))
			goto fail;
		json_decref(k);
		q = ws(ke, end);
		if (q >= end || *q != ',')
			break;
	}
	return c;
fail:
	json_decref(k);
	json_decref(c);
	return NULL;
}

/*
 * The value at [p, p+n) (valid JSON): as jansson builds it, else (a
 * container not too deep) member by member, else verbatim.  Returns new
 * reference, or NULL out of memory.
 */
static json_t *
lenient(const char *p, size_t n, int level)
{
	json_error_t je;
	json_t *v;

	if ((v = json_loadb(p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je)) !=
	    NULL)
		return v;
	if (level < VERBATIM_DEPTH && (*p == '{' || *p == '['))
		return lenient_container(p, n, level);
	return verbatim(p, n);
}

/*
 * The value at [p, p+n) (valid JSON, white space around allowed), a value
 * jansson cannot hold (an integer beyond 64 bits) kept verbatim as the
 * record reader keeps it.  Returns new reference, or NULL out of memory.
 */
json_t *
saop__record_lenient(const char *p, size_t n)
{
	const char *end = p + n;

	vmark_init();
	p = ws(p, end);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' ||
	    end[-1] == '\n' || end[-1] == '\r'))
		end--;
	return lenient(p, (size_t)(end - p), 0);
}

/*
 * See saop.h.  Returns 1 when v is a string that starts with this process's
 * mark, else 0.
 */
int
saop_record_verbatim(const json_t *v)
{
	return json_is_string(v) && vmark_len != 0 &&
	    json_string_length(v) >= vmark_len &&
	    memcmp(json_string_value(v), vmark, vmark_len) == 0;
}

/*
 * Hand the line that is not a record on, when r passes such lines.  Returns
 * rc, the error the caller reports for it.
 */
static int
pass_line(struct saop_reader *r, size_t len, int rc)
{
	if (r->pass != NULL) {
		pass_bytes(r, r->buf, len);
		pass_bytes(r, "\n", 1);
	}
	return rc;
}

/*
 * Parse buf (len bytes, one line without its LF, not blank) as a record:
 * the fast parser first, then jansson, then member by member for valid
 * JSON jansson cannot hold.  Errors name line (0: none) and the byte.
 * Returns 1 with *rec new, or -SAOP_EDATA / -SAOP_ENOMEM with e filled.
 */
static int
parse_record(const char *buf, size_t len, long line, json_t **rec,
    struct saop_err *e)
{
	struct saop_detect_result d;
	json_error_t je;
	json_t *v;
	const char *p;

	*rec = NULL;
	/* The fast path builds the same tree; whatever it does not take
	 * (bad JSON included) jansson judges, and names the place. */
	switch (saop__json_parse(buf, len, JSON_DISABLE_EOF_CHECK |
	    JSON_ALLOW_NUL, &v, &je)) {
	case 1:
		goto parsed;
	case 0:
		break;
	default:
		saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
		e->line = line;
		return -SAOP_ENOMEM;
	}
	if (v == NULL) {
		/* Valid JSON that jansson cannot build is taken member by
		 * member; anything else is named where the scanner says. */
		memset(&d, 0, sizeof(d));
		p = ws(buf, buf + len);
		if (*p == '{' && saop_detect_buffer(buf, len,
		    SAOP_MAX_DEPTH, &d) == 0 && d.verdict == SAOP_COMPLETE) {
			saop_detect_result_free(&d);
			vmark_init();
			v = lenient_container(p, len - (size_t)(p - buf), 0);
			if (v == NULL) {
				saop__fail(e, SAOP_ENOMEM, errno,
				    "out of memory");
				e->line = line;
				return -SAOP_ENOMEM;
			}
			*rec = v;
			return 1;
		}
		saop_detect_result_free(&d);
		return bad_line(buf, len, line, &je, e);
	}
	/* JSON_DISABLE_EOF_CHECK stops at the value's end: the rest of the
	 * line may hold only white space. */
	if ((size_t)je.position < len && !blank(buf + je.position,
	    len - (size_t)je.position)) {
		size_t at = (size_t)je.position;

		while (at < len && strchr(" \t\r", buf[at]) != NULL)
			at++;
		json_decref(v);
		return saop__fail_at(e, SAOP_EDATA, line, (long long)at,
		    "not a JSON record: text after the object");
	}
parsed:
	if (!json_is_object(v)) {
		json_decref(v);
		return saop__fail_at(e, SAOP_EDATA, line,
		    (long long)(ws(buf, buf + len) - buf),
		    "not a JSON record: a record is a JSON object, one per "
		    "line");
	}
	*rec = v;
	return 1;
}

/*
 * Read the next record (see saop.h): blank lines skipped, then
 * parse_record().  Returns 1 with *rec new, 0 at the end, or a negative
 * code with e filled.
 */
int
saop_reader_next(struct saop_reader *r, json_t **rec, struct saop_err *e)
{
	size_t len = 0;
	int rc;

	*rec = NULL;
	saop_err_clear(e);
	do {
		if ((rc = read_line(r, &len, e)) <= 0)
			return rc;
	} while (blank(r->buf, len));
	rc = parse_record(r->buf, len, r->line, rec, e);
	/* A line read whole but not parsed for want of memory is handed on
	 * as one that is not a record: nothing is lost, the reader goes on. */
	return rc == -SAOP_EDATA || rc == -SAOP_ENOMEM ? pass_line(r, len, rc) :
	    rc;
}

/*
 * Parse text (len bytes) as one record, as the reader does a line (see
 * saop-private.h).  Returns 1 with *rec new, or -SAOP_EDATA (the byte
 * named) / -SAOP_ENOMEM with e filled.
 */
int
saop__record_parse(const char *text, size_t len, json_t **rec,
    struct saop_err *e)
{
	saop_err_clear(e);
	*rec = NULL;
	if (blank(text, len))
		return saop__fail_at(e, SAOP_EDATA, 0, 0,
		    "not a JSON record: empty");
	return parse_record(text, len, 0, rec, e);
}

/*
 * rec as saop_record_write() writes it, without the LF (see
 * saop-private.h).  Returns the new text (free()) with its length in
 * *len, or NULL with e filled (SAOP_ENOMEM).
 */
char *
saop__record_text(const json_t *rec, size_t *len, struct saop_err *e)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f;
	int rc;

	*len = 0;
	if ((f = open_memstream(&text, &n)) == NULL) {
		saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
		return NULL;
	}
	rc = saop_record_write(f, rec, e);
	/* glibc's fclose() may lose the buffer for want of memory, and
	 * still return 0. */
	if ((fclose(f) != 0 || text == NULL) && rc == 0)
		rc = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	if (rc != 0) {
		/* A memory stream fails for want of memory only. */
		if (e->code != SAOP_ENOMEM)
			saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
		free(text);
		return NULL;
	}
	if (n > 0 && text[n - 1] == '\n')
		text[--n] = '\0';
	*len = n;
	return text;
}

/* Hand lines that are not records on to out (NULL: drop them; see saop.h). */
void
saop_reader_pass(struct saop_reader *r, FILE *out)
{
	r->pass = out;
}

/* See saop.h: wait(arg) before a read that would wait.  Returns nothing. */
void
saop_reader_on_wait(struct saop_reader *r, void (*wait)(void *arg),
    void *arg)
{
	r->wait = wait;
	r->wait_arg = arg;
}

/* The bytes of input taken by the lines read so far (see saop.h). */
unsigned long long
saop_reader_consumed(const struct saop_reader *r)
{
	return r->consumed;
}

/*
 * See saop.h.  Returns the line number of the record last returned, from 1
 * (0 before the first).
 */
long
saop_reader_line(const struct saop_reader *r)
{
	return r->line;
}

/* Close r's input when it opened it, and free r; NULL is a no-op. */
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

/*
 * Read all of f into a new buffer (see saop.h).  Returns 0 with *buf and
 * *len set, or -SAOP_ENOMEM, -SAOP_ELIMIT or -SAOP_EIO with e filled and
 * *buf NULL.
 */
int
saop_read_all(FILE *f, char **buf, size_t *len, size_t max,
    struct saop_err *e)
{
	struct saop__buf b;

	*buf = NULL;
	*len = 0;
	if (max == 0)
		max = SAOP_MAX_RECORD_BYTES;
	saop__buf_init(&b);
	for (;;) {
		size_t got;

		/* Read in blocks of at least 64 KB, into the room left. */
		if (b.cap - b.len < 65536 + 1 &&
		    saop__buf_reserve(&b, b.cap > 65536 ? b.cap : 65536) != 0) {
			saop__buf_free(&b);
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory reading input");
		}
		got = fread(b.data + b.len, 1, b.cap - b.len - 1, f);
		b.len += got;
		if (b.len > max) {
			saop__buf_free(&b);
			return saop__fail_at(e, SAOP_ELIMIT, 1, (long long)max,
			    "input longer than %zu bytes (raise it with "
			    "--max-record)", max);
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		saop__buf_free(&b);
		return saop__fail(e, SAOP_EIO, errno, "read error: %s",
		    strerror(errno));
	}
	b.data[b.len] = '\0';
	*len = b.len;
	*buf = saop__buf_steal(&b, NULL);
	return 0;
}

/*
 * Write the JSON string body at p (after a verbatim mark, as jansson
 * escaped it) unescaped: the value's own text.  Returns the byte after
 * the closing quote.
 */
static const char *
put_verbatim(FILE *f, const char *p)
{
	unsigned u;
	char c;

	for (; *p != '"' && *p != '\0'; p++) {
		if (*p != '\\') {
			putc(*p, f);
			continue;
		}
		switch ((c = *++p)) {
		case 'n': putc('\n', f); break;
		case 't': putc('\t', f); break;
		case 'r': putc('\r', f); break;
		case 'b': putc('\b', f); break;
		case 'f': putc('\f', f); break;
		case 'u':
			/* jansson escapes only control characters so. */
			if (sscanf(p + 1, "%4x", &u) == 1 && u < 0x80)
				putc((int)u, f);
			p += 4;
			break;
		default: putc(c, f); break;
		}
	}
	return *p == '"' ? p + 1 : p;
}

/*
 * Write rec as one compact line, verbatim values as their own text (see
 * saop.h).  Returns 0, or -SAOP_ENOMEM or -SAOP_EIO with e filled.
 */
int
saop_record_write(FILE *f, const json_t *rec, struct saop_err *e)
{
	const char *p, *m;
	char *text;

	if (!verbatim_made) {
		if (json_dumpf(rec, f, JSON_COMPACT) != 0 ||
		    putc('\n', f) == EOF)
			return saop__fail(e, SAOP_EIO, errno,
			    "write error: %s", strerror(errno));
		return 0;
	}
	/* Some record holds verbatim values: put their text back. */
	if ((text = json_dumps(rec, JSON_COMPACT)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
	for (p = text; (m = strstr(p, vmark_json)) != NULL; ) {
		fwrite(p, 1, (size_t)(m - p), f);
		p = put_verbatim(f, m + vmark_json_len);
	}
	fputs(p, f);
	free(text);
	if (putc('\n', f) == EOF || ferror(f))
		return saop__fail(e, SAOP_EIO, errno, "write error: %s",
		    strerror(errno));
	return 0;
}

/*
 * The names of the record's top-level members (enum saop_record_member, in
 * saop(7)'s order): the one table of them.  tests/cli/record-members.sh
 * checks it against saop(7)'s "The record on the pipe" and saop.h.
 */
static const char *const member_names[SAOP_RECORD_MEMBERS] = {
	[SAOP_RECORD_TASK_ID] = "task_id",
	[SAOP_RECORD_TURN] = "turn",
	[SAOP_RECORD_REQUEST] = "request",
	[SAOP_RECORD_RAW] = "raw",
	[SAOP_RECORD_FINISH_REASON] = "finish_reason",
	[SAOP_RECORD_TOOL_CALL] = "tool_call",
	[SAOP_RECORD_TOOL_CALLS] = "tool_calls",
	[SAOP_RECORD_TEXT] = "text",
	[SAOP_RECORD_CHOICES] = "choices",
	[SAOP_RECORD_SERVER_TOOLS] = "server_tools",
	[SAOP_RECORD_REFUSAL] = "refusal",
	[SAOP_RECORD_USAGE] = "usage",
	[SAOP_RECORD_SUSPEND] = "suspend",
	[SAOP_RECORD_DETECT] = "detect",
	[SAOP_RECORD_RESUME] = "resume",
	[SAOP_RECORD_VALIDATE] = "validate",
	[SAOP_RECORD_ENVELOPE] = "envelope",
	[SAOP_RECORD_STRUCTURED_OUTPUT] = "structured_output",
	[SAOP_RECORD_COST] = "cost",
	[SAOP_RECORD_STATE] = "state",
	[SAOP_RECORD_ERROR] = "error",
};

/* See saop.h.  Returns the name of m, or NULL out of range. */
const char *
saop_record_member_name(enum saop_record_member m)
{
	return (unsigned)m < SAOP_RECORD_MEMBERS ? member_names[m] : NULL;
}

/* rec's member m as it is (borrowed), or NULL when it has none. */
static json_t *
member(const json_t *rec, enum saop_record_member m)
{
	return json_object_get(rec, member_names[m]);
}

/* rec's member m when it is of type t (borrowed), else NULL. */
static json_t *
typed(const json_t *rec, enum saop_record_member m, json_type t)
{
	json_t *v = member(rec, m);

	return v != NULL && json_typeof(v) == t ? v : NULL;
}

/*
 * Set rec's member m to v (a new reference, stolen), when v is of type t
 * (any type for JSON_NULL).  Returns 0, -SAOP_ENOMEM (v NULL, or no room)
 * or -SAOP_EINTERNAL (another type).
 */
static int
put(json_t *rec, enum saop_record_member m, json_t *v, json_type t)
{
	if (v == NULL)
		return -SAOP_ENOMEM;
	if (t != JSON_NULL && json_typeof(v) != t) {
		json_decref(v);
		return -SAOP_EINTERNAL;
	}
	return json_object_set_new(rec, member_names[m], v) == 0 ? 0 :
	    -SAOP_ENOMEM;
}

/*
 * Set rec's member m to the n bytes at s as a string.  Returns 0,
 * -SAOP_EDATA (not UTF-8) or -SAOP_ENOMEM.
 */
static int
put_text(json_t *rec, enum saop_record_member m, const char *s, size_t n)
{
	if (saop_utf8_valid(s, n) < n)
		return -SAOP_EDATA;
	return put(rec, m, json_stringn(s, n), JSON_STRING);
}

/* See saop.h.  Returns 1 when rec has member m, else 0. */
int
saop_record_has(const json_t *rec, enum saop_record_member m)
{
	return (unsigned)m < SAOP_RECORD_MEMBERS && member(rec, m) != NULL;
}

/* See saop.h: member m removed from rec. */
void
saop_record_del(json_t *rec, enum saop_record_member m)
{
	if ((unsigned)m < SAOP_RECORD_MEMBERS)
		json_object_del(rec, member_names[m]);
}

/*
 * Set members m[] of rec to v[], all or none (see saop-private.h): the
 * new members first (taken away again when one cannot be added), then
 * the members rec has, through their iterators, which needs no memory
 * (a replacement by key may grow the table).  Returns 0 or -SAOP_ENOMEM.
 */
int
saop__record_put_all(json_t *rec, const enum saop_record_member *m,
    json_t *const *v, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (json_object_get(rec, member_names[m[i]]) != NULL)
			continue;
		if (json_object_set_new(rec, member_names[m[i]],
		    json_incref(v[i])) == 0)
			continue;
		/* set_new let its reference go; take away what was
		 * added (a deletion needs no memory). */
		for (j = 0; j < i; j++)
			if (json_object_get(rec, member_names[m[j]]) == v[j])
				json_object_del(rec, member_names[m[j]]);
		for (j = 0; j < n; j++)
			json_decref(v[j]);
		return -SAOP_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		void *it = json_object_iter_at(rec, member_names[m[i]]);

		if (json_object_iter_value(it) == v[i])
			json_decref(v[i]);	/* added above */
		else
			json_object_iter_set_new(rec, it, v[i]);
	}
	return 0;
}

/*
 * rec without state and error (see saop-private.h).  Returns a new
 * reference, or NULL out of memory.
 */
json_t *
saop__record_unjudged(const json_t *rec)
{
	const char *k;
	json_t *out, *v;
	size_t kl;

	/* Keys by their length: jansson's copies cut a key at a \u0000. */
	if ((out = json_object()) == NULL)
		return NULL;
	json_object_keylen_foreach((json_t *)rec, k, kl, v)
		if (!(kl == 5 && (memcmp(k, member_names[SAOP_RECORD_STATE],
		    5) == 0 || memcmp(k, member_names[SAOP_RECORD_ERROR],
		    5) == 0)) && json_object_setn(out, k, kl, v) != 0) {
			json_decref(out);
			return NULL;
		}
	return out;
}

/*
 * See saop.h.  Returns rec's "raw" string (borrowed) with its length in
 * *len (when len is not NULL), or NULL and 0 when there is none.
 */
const char *
saop_record_raw(const json_t *rec, size_t *len)
{
	const json_t *raw = typed(rec, SAOP_RECORD_RAW, JSON_STRING);

	if (raw == NULL) {
		if (len)
			*len = 0;
		return NULL;
	}
	if (len)
		*len = json_string_length(raw);
	return json_string_value(raw);
}

/* See saop.h: raw scanned as rec's answer.  Returns 0 or -SAOP_ENOMEM. */
int
saop_record_detect(const json_t *rec, const char *raw, size_t len,
    size_t max_depth, struct saop_detect_result *res)
{
	const json_t *tc = member(rec, SAOP_RECORD_TOOL_CALL);
	const char *fr = saop_record_finish_reason(rec);
	int rc;

	if (tc != NULL && !json_is_null(tc))
		rc = saop_detect_buffer(raw, len, max_depth, res);
	else
		rc = saop_detect_text(raw, len, max_depth, res);
	if (rc == 0 && fr != NULL && strcmp(fr, "length") == 0 &&
	    (rc = saop_detect_mark_cut(res, raw, len)) < 0)
		saop_detect_result_free(res);
	return rc < 0 ? rc : 0;
}

/* The words of enum saop_state, in its order: the one table of them. */
static const char *const state_names[] = {
	NULL, "OK", "TRUNCATED", "INVALID", "RESUME_EXHAUSTED",
	"USER_ESCALATION", "PAUSED_FOR_INTERVENTION"
};

/* See saop.h.  Returns the word of s, or NULL for NONE or out of range. */
const char *
saop_state_name(enum saop_state s)
{
	if ((unsigned)s >= sizeof(state_names) / sizeof(state_names[0]))
		return NULL;
	return state_names[s];
}

/*
 * The state word of a scanner verdict (see saop.h): the detect module's
 * verdicts, worded here where the state words live.
 */
const char *
saop_verdict_state(enum saop_verdict v)
{
	switch (v) {
	case SAOP_COMPLETE:
		return saop_state_name(SAOP_STATE_OK);
	case SAOP_TRUNCATED:
		return saop_state_name(SAOP_STATE_TRUNCATED);
	default:
		return saop_state_name(SAOP_STATE_INVALID);
	}
}

/* See saop.h.  Returns the state named word, else SAOP_STATE_NONE. */
enum saop_state
saop_state_of(const char *word)
{
	size_t i;

	for (i = 1; word != NULL &&
	    i < sizeof(state_names) / sizeof(state_names[0]); i++)
		if (strcmp(word, state_names[i]) == 0)
			return (enum saop_state)i;
	return SAOP_STATE_NONE;
}

/* See saop.h.  Returns rec's state, or SAOP_STATE_NONE. */
enum saop_state
saop_record_state(const json_t *rec)
{
	return saop_state_of(saop_record_state_word(rec));
}

/* See saop.h.  Returns 0, or -SAOP_ENOMEM (or -SAOP_EINTERNAL for NONE). */
int
saop_record_set_state(json_t *rec, enum saop_state s)
{
	const char *w = saop_state_name(s);

	assert(w != NULL);
	if (w == NULL)
		return -SAOP_EINTERNAL;
	return put(rec, SAOP_RECORD_STATE, json_string(w), JSON_STRING);
}

/* See saop.h.  Returns the task id as text, or NULL. */
const char *
saop_record_task_id(const json_t *rec, char buf[32])
{
	const json_t *t = member(rec, SAOP_RECORD_TASK_ID);

	if (json_is_string(t))
		return json_string_value(t);
	if (json_is_integer(t)) {
		snprintf(buf, 32, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(t));
		return buf;
	}
	return NULL;
}

/* See saop.h.  Returns the turn, or -1. */
long
saop_record_turn(const json_t *rec)
{
	const json_t *t = member(rec, SAOP_RECORD_TURN);

	if (!json_is_integer(t) || json_integer_value(t) < 0 ||
	    json_integer_value(t) > LONG_MAX)
		return -1;
	return (long)json_integer_value(t);
}

/* See saop.h.  Returns task_id of any type (borrowed), or NULL. */
const json_t *
saop_record_task_id_value(const json_t *rec)
{
	return member(rec, SAOP_RECORD_TASK_ID);
}

/* See saop.h.  Returns the request object, or NULL. */
json_t *
saop_record_request(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_REQUEST, JSON_OBJECT);
}

/* See saop.h.  Returns the finish reason, or NULL. */
const char *
saop_record_finish_reason(const json_t *rec)
{
	return json_string_value(typed(rec, SAOP_RECORD_FINISH_REASON,
	    JSON_STRING));
}

/* See saop.h.  Returns the tool_call object, or NULL. */
json_t *
saop_record_tool_call(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_TOOL_CALL, JSON_OBJECT);
}

/* See saop.h.  Returns the tool_calls array, or NULL. */
json_t *
saop_record_tool_calls(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_TOOL_CALLS, JSON_ARRAY);
}

/* See saop.h.  Returns the text string (*len its length), or NULL and 0. */
const char *
saop_record_text(const json_t *rec, size_t *len)
{
	const json_t *t = typed(rec, SAOP_RECORD_TEXT, JSON_STRING);

	if (len)
		*len = json_string_length(t);
	return json_string_value(t);
}

/* See saop.h.  Returns the choices array, or NULL. */
json_t *
saop_record_choices(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_CHOICES, JSON_ARRAY);
}

/* See saop.h.  Returns the server_tools array, or NULL. */
json_t *
saop_record_server_tools(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_SERVER_TOOLS, JSON_ARRAY);
}

/* See saop.h.  Returns the refusal string, or NULL. */
const char *
saop_record_refusal(const json_t *rec)
{
	return json_string_value(typed(rec, SAOP_RECORD_REFUSAL,
	    JSON_STRING));
}

/* See saop.h.  Returns the usage object, or NULL. */
json_t *
saop_record_usage(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_USAGE, JSON_OBJECT);
}

/* See saop.h.  Returns the cost object, or NULL. */
json_t *
saop_record_cost(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_COST, JSON_OBJECT);
}

/* See saop.h.  Returns the suspend object, or NULL. */
json_t *
saop_record_suspend(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_SUSPEND, JSON_OBJECT);
}

/* See saop.h.  Returns the detect object, or NULL. */
json_t *
saop_record_detect_info(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_DETECT, JSON_OBJECT);
}

/* See saop.h.  Returns the resume object, or NULL. */
json_t *
saop_record_resume(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_RESUME, JSON_OBJECT);
}

/* See saop.h.  Returns the validate object, or NULL. */
json_t *
saop_record_validate(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_VALIDATE, JSON_OBJECT);
}

/* See saop.h.  Returns the envelope, any value, or NULL when none. */
json_t *
saop_record_envelope(const json_t *rec)
{
	return member(rec, SAOP_RECORD_ENVELOPE);
}

/* See saop.h.  Returns the structured_output object, or NULL. */
json_t *
saop_record_structured_output(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_STRUCTURED_OUTPUT, JSON_OBJECT);
}

/* See saop.h.  Returns the state string as written, or NULL. */
const char *
saop_record_state_word(const json_t *rec)
{
	return json_string_value(typed(rec, SAOP_RECORD_STATE, JSON_STRING));
}

/* See saop.h.  Returns the error object, or NULL. */
json_t *
saop_record_error(const json_t *rec)
{
	return typed(rec, SAOP_RECORD_ERROR, JSON_OBJECT);
}

/* See saop.h.  Returns 0, or -SAOP_EDATA / -SAOP_ENOMEM. */
int
saop_record_set_task_id(json_t *rec, const char *id)
{
	return put_text(rec, SAOP_RECORD_TASK_ID, id, strlen(id));
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL (turn < 0) or -SAOP_ENOMEM. */
int
saop_record_set_turn(json_t *rec, long turn)
{
	if (turn < 0)
		return -SAOP_EINTERNAL;
	return put(rec, SAOP_RECORD_TURN, json_integer(turn), JSON_INTEGER);
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_request(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_REQUEST, v, JSON_OBJECT);
}

/* See saop.h.  Returns 0, -SAOP_EDATA or -SAOP_ENOMEM. */
int
saop_record_set_finish_reason(json_t *rec, const char *why)
{
	if (why == NULL)
		return put(rec, SAOP_RECORD_FINISH_REASON, json_null(),
		    JSON_NULL);
	return put_text(rec, SAOP_RECORD_FINISH_REASON, why, strlen(why));
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_tool_call(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_TOOL_CALL, v, JSON_OBJECT);
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_tool_calls(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_TOOL_CALLS, v, JSON_ARRAY);
}

/* See saop.h.  Returns 0, -SAOP_EDATA (not UTF-8) or -SAOP_ENOMEM. */
int
saop_record_set_text(json_t *rec, const char *text, size_t n)
{
	return put_text(rec, SAOP_RECORD_TEXT, text, n);
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_choices(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_CHOICES, v, JSON_ARRAY);
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_server_tools(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_SERVER_TOOLS, v, JSON_ARRAY);
}

/* See saop.h.  Returns 0, -SAOP_EDATA or -SAOP_ENOMEM. */
int
saop_record_set_refusal(json_t *rec, const char *s)
{
	return put_text(rec, SAOP_RECORD_REFUSAL, s, strlen(s));
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_usage(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_USAGE, v, JSON_OBJECT);
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_cost(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_COST, v, JSON_OBJECT);
}

/*
 * See saop-private.h: rec's cost with c's added to part, as a new object
 * into *out (NULL: c made no call, nothing to change).  Returns 0, or -1
 * out of memory.
 */
int
saop__record_cost_with(const json_t *rec, const char *part,
    const struct saop_llm_cost *c, json_t **out)
{
	json_t *cost, *v;

	*out = NULL;
	if (c->calls == 0)
		return 0;
	v = saop_record_cost(rec);
	if ((cost = v != NULL ? json_deep_copy(v) : json_object()) == NULL)
		return -1;
	v = json_object_get(cost, part);
	if (v == NULL || json_is_number(v))
		v = c->unpriced > 0 ? json_null() :
		    json_real(c->usd + (v == NULL ? 0 : json_number_value(v)));
	else
		v = json_null();
	if (v == NULL || json_object_set_new(cost, part, v) != 0 ||
	    (json_object_get(cost, "recovery") == NULL &&
	    json_object_set_new(cost, "recovery", json_real(0)) != 0)) {
		json_decref(cost);
		return -1;
	}
	*out = cost;
	return 0;
}

/*
 * See saop.h: c's cost added to rec.cost.part.  Returns 0, or
 * -SAOP_ENOMEM.
 */
int
saop_record_add_cost(json_t *rec, const char *part,
    const struct saop_llm_cost *c)
{
	json_t *cost;

	if (saop__record_cost_with(rec, part, c, &cost) != 0)
		return -SAOP_ENOMEM;
	return cost == NULL ? 0 : put(rec, SAOP_RECORD_COST, cost,
	    JSON_OBJECT) != 0 ? -SAOP_ENOMEM : 0;
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_suspend(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_SUSPEND, v, JSON_OBJECT);
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_detect(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_DETECT, v, JSON_OBJECT);
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_resume(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_RESUME, v, JSON_OBJECT);
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_validate(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_VALIDATE, v, JSON_OBJECT);
}

/* See saop.h.  Returns 0, or -SAOP_ENOMEM. */
int
saop_record_set_envelope(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_ENVELOPE, v, JSON_NULL);
}

/* See saop.h.  Returns 0, -SAOP_EINTERNAL or -SAOP_ENOMEM. */
int
saop_record_set_structured_output(json_t *rec, json_t *v)
{
	return put(rec, SAOP_RECORD_STRUCTURED_OUTPUT, v, JSON_OBJECT);
}

/* See saop.h.  Returns 0, -SAOP_EDATA (not UTF-8) or -SAOP_ENOMEM. */
int
saop_record_set_raw(json_t *rec, const char *raw, size_t n)
{
	return put_text(rec, SAOP_RECORD_RAW, raw, n);
}

/* See saop.h.  Returns 0, or -SAOP_ENOMEM. */
int
saop_record_set_error(json_t *rec, const char *program,
    const struct saop_err *e)
{
	json_t *err;

	err = json_pack("{s:s, s:s}", "program", program, "message",
	    e->msg[0] ? e->msg : "unknown error");
	if (err == NULL)
		return -SAOP_ENOMEM;
	if (e->line > 0)
		json_object_set_new(err, "line", json_integer(e->line));
	if (e->has_offset)
		json_object_set_new(err, "byte", json_integer(e->offset));
	if (e->field[0] != '\0')
		json_object_set_new(err, "field", json_string(e->field));
	json_object_set_new(err, "status", json_integer(
	    saop_err_exit_status(e->code)));
	return put(rec, SAOP_RECORD_ERROR, err, JSON_OBJECT);
}

/* See saop.h.  Returns 0: an event is a log (saop_event()). */
int
saop_record_event(struct saop_store *s, const json_t *rec,
    const char *fallback_task, const char *event, const json_t *data)
{
	const char *task;
	char buf[32];

	if (s == NULL)
		return 0;
	if ((task = saop_record_task_id(rec, buf)) == NULL)
		task = fallback_task != NULL ? fallback_task : "";
	return saop_event(s, task, saop_record_turn(rec), event, data, NULL);
}
