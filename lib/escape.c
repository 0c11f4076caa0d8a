/*
 * escape.c: any bytes, as they stream by, written as the inside of a JSON
 * string: strict UTF-8 as it is with the escapes JSON needs, each byte
 * that is not part of strict UTF-8 as U+FFFD (counted), a character split
 * between two chunks joined again.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "saop-private.h"

/* Output is handed to write() in blocks of up to this many bytes. */
#define ESC_BLOCK 65536

struct saop_escaper {
	int (*write)(const char *p, size_t n, void *arg);
	void *arg;
	int failed;		/* what write() returned when it failed */
	unsigned char seq[4];	/* an unfinished UTF-8 character */
	int have, need;
	unsigned char lo, hi;	/* range of its next byte */
	unsigned long long replaced;
	size_t n;
	char out[ESC_BLOCK + 16];
};

/*
 * A new escaper writing through write(p, n, arg), which returns 0 or a
 * nonzero failure that the feed returns.  Returns it (free with
 * saop_escaper_free()), or NULL when out of memory.
 */
struct saop_escaper *
saop_escaper_new(int (*write)(const char *p, size_t n, void *arg), void *arg)
{
	struct saop_escaper *x;

	if ((x = calloc(1, sizeof(*x))) == NULL)
		return NULL;
	x->write = write;
	x->arg = arg;
	return x;
}

/* Hand what x holds to its write() and empty it; remember a failure. */
static void
flush(struct saop_escaper *x)
{
	int rc;

	if (x->n > 0 && x->failed == 0 &&
	    (rc = x->write(x->out, x->n, x->arg)) != 0)
		x->failed = rc;
	x->n = 0;
}

/* Append the n (at most 16) bytes at p, already escaped, to x's output,
 * flushing first when they would not fit. */
static void
emit(struct saop_escaper *x, const void *p, size_t n)
{
	if (x->n + n > ESC_BLOCK)
		flush(x);
	memcpy(x->out + x->n, p, n);
	x->n += n;
}

/* Append the run of n plain bytes at p, a block at a time. */
static void
emit_run(struct saop_escaper *x, const unsigned char *p, size_t n)
{
	while (n > 0) {
		size_t k = n > 4096 ? 4096 : n;

		if (x->n + k > ESC_BLOCK)
			flush(x);
		memcpy(x->out + x->n, p, k);
		x->n += k;
		p += k;
		n -= k;
	}
}

/* Write U+FFFD in place of the broken character x holds (or the byte at
 * hand), count it, and forget the broken character. */
static void
replace(struct saop_escaper *x)
{
	emit(x, "\xef\xbf\xbd", 3);
	x->replaced++;
	x->have = x->need = 0;
}

/* Write the byte c (a quote, a backslash or a control) escaped. */
static void
escape_byte(struct saop_escaper *x, unsigned c)
{
	static const char hex[] = "0123456789abcdef";
	char e[6] = { '\\', 'u', '0', '0', 0, 0 };
	const char *sh;

	if (c == '"' || c == '\\') {
		e[1] = (char)c;
		emit(x, e, 2);
		return;
	}
	sh = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" :
	    c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
	if (sh != NULL) {
		emit(x, sh, 2);
		return;
	}
	e[4] = hex[c >> 4];
	e[5] = hex[c & 15];
	emit(x, e, 6);
}

/*
 * Escape the len bytes at p: valid UTF-8 as it is, with the escapes JSON
 * needs; a character left unfinished at the end is kept for the next
 * call.  Returns 0, or the nonzero value write() failed with (then and
 * after, nothing more is written).
 */
int
saop_escaper_feed(struct saop_escaper *x, const void *buf, size_t len)
{
	const unsigned char *p = buf, *end = p + len;

	while (p < end && x->failed == 0) {
		unsigned c = *p;

		if (x->need > 0) {
			if (c < x->lo || c > x->hi) {
				/* Replace the broken start; c begins anew. */
				replace(x);
				continue;
			}
			x->seq[x->have++] = (unsigned char)c;
			x->lo = 0x80;
			x->hi = 0xbf;
			p++;
			if (--x->need == 0) {
				emit(x, x->seq, (size_t)x->have);
				x->have = 0;
			}
			continue;
		}
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			const unsigned char *s = p;

			while (p < end && *p >= 0x20 && *p < 0x80 &&
			    *p != '"' && *p != '\\')
				p++;
			emit_run(x, s, (size_t)(p - s));
			continue;
		}
		p++;
		if (c < 0x80) {
			escape_byte(x, c);
		} else if ((x->need = (int)saop__utf8_lead(c, &x->lo,
		    &x->hi)) > 0) {
			x->seq[0] = (unsigned char)c;
			x->have = 1;
		} else {
			replace(x);
		}
	}
	return x->failed;
}

/*
 * The input has ended: replace a character left unfinished, and hand the
 * rest to write().  Returns 0, or the nonzero value write() failed with.
 */
int
saop_escaper_end(struct saop_escaper *x)
{
	if (x->need > 0)
		replace(x);
	flush(x);
	return x->failed;
}

/* The bytes replaced by U+FFFD so far. */
unsigned long long
saop_escaper_replaced(const struct saop_escaper *x)
{
	return x->replaced;
}

/* Free x; NULL is a no-op.  What x still holds is not written. */
void
saop_escaper_free(struct saop_escaper *x)
{
	free(x);
}
