/*
 * llm-eventstream.c: AWS's binary event-stream framing (Amazon Bedrock's
 * ConverseStream), however the network splits it, into whole frames whose
 * two CRC32s are verified: a prelude (total length, headers length, both
 * 32-bit big-endian, and the CRC32 of those 8 bytes), the headers (each a
 * 1-byte name length, the name, a 1-byte value type and the value), the
 * payload, and the CRC32 of everything before it.  A frame that fails a
 * check stops the decoder for good: nothing of it or after it is handed
 * on.  What the frames mean is llm-answer.c's.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm-int.h"

/* The 12-byte prelude and the 4-byte message CRC: the smallest frame. */
#define ES_PRELUDE	12
#define ES_MIN		16
/* AWS's own limits: a message of at most 16 MiB, headers of 128 KiB. */
#define ES_MAX		(16u * 1024 * 1024)
#define ES_MAX_HEADERS	(128u * 1024)

/*
 * The CRC-32 (ISO-HDLC: polynomial 0xEDB88320 reflected, as zlib's and
 * AWS's) of the n bytes at s, continued from crc (0 to start).  Returns
 * the new CRC.
 */
uint32_t
saop__crc32(uint32_t crc, const void *s, size_t n)
{
	static uint32_t table[256];
	static int made;
	const unsigned char *b = s;
	size_t i;

	if (!made) {
		for (i = 0; i < 256; i++) {
			uint32_t c = (uint32_t)i;
			int k;

			for (k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		made = 1;
	}
	crc = ~crc;
	for (i = 0; i < n; i++)
		crc = table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* The 32-bit big-endian number at s. */
static uint32_t
be32(const unsigned char *s)
{
	return (uint32_t)s[0] << 24 | (uint32_t)s[1] << 16 |
	    (uint32_t)s[2] << 8 | (uint32_t)s[3];
}

/*
 * The size of the value of a header of type t whose value starts at s
 * (n bytes left: true and false have none), or -1 when t is no type or
 * the value does not fit.
 */
static long
value_size(unsigned t, const unsigned char *s, size_t n)
{
	static const size_t fixed[] = { 0, 0, 1, 2, 4, 8, 0, 0, 8, 16 };
	size_t sz;

	if (t > 9)
		return -1;
	if (t == 6 || t == 7) {
		if (n < 2)
			return -1;
		sz = 2 + ((size_t)s[0] << 8 | s[1]);
	} else
		sz = fixed[t];
	return sz <= n ? (long)sz : -1;
}

/*
 * Check the n-byte header block at s: every header whole, its name not
 * empty.  Returns 0, or -1 with why filled.
 */
static int
check_headers(const unsigned char *s, size_t n, char *why, size_t whysz)
{
	size_t i = 0;

	while (i < n) {
		size_t nl = s[i];
		long vs;

		if (nl == 0 || i + 1 + nl + 1 > n) {
			snprintf(why, whysz, "a header cut short at byte %zu "
			    "of the headers", i);
			return -1;
		}
		i += 1 + nl;
		vs = value_size(s[i], s + i + 1, n - i - 1);
		if (vs < 0) {
			snprintf(why, whysz, "a header of bad type %u or cut "
			    "short at byte %zu of the headers", s[i], i);
			return -1;
		}
		i += 1 + (size_t)vs;
	}
	return 0;
}

/* See llm-int.h: the string header named name of f, or NULL. */
const char *
saop__es_header(const struct saop__es_frame *f, const char *name,
    size_t *len)
{
	const unsigned char *s = f->headers;
	size_t i = 0, want = strlen(name);

	while (i < f->headers_len) {
		size_t nl = s[i];

		i++;
		if (nl == want && memcmp(s + i, name, nl) == 0 &&
		    s[i + nl] == 7) {
			*len = (size_t)s[i + nl + 1] << 8 | s[i + nl + 2];
			return (const char *)s + i + nl + 3;
		}
		i += nl;
		/* Checked whole by check_headers(). */
		i += 1 + (size_t)value_size(s[i], s + i + 1,
		    f->headers_len - i - 1);
	}
	return NULL;
}

/* See llm-int.h: 1 when header name of f is the string v. */
int
saop__es_header_is(const struct saop__es_frame *f, const char *name,
    const char *v)
{
	size_t n;
	const char *h = saop__es_header(f, name, &n);

	return h != NULL && n == strlen(v) && memcmp(h, v, n) == 0;
}

/*
 * Check the frame at s (its prelude whole, total bytes long, all there)
 * and fill f.  Returns 0, or -1 with d->why filled.
 */
static int
frame_of(struct saop__es *d, const unsigned char *s, uint32_t total,
    struct saop__es_frame *f)
{
	uint32_t hl = be32(s + 4);

	if (saop__crc32(0, s, total - 4) != be32(s + total - 4)) {
		snprintf(d->why, sizeof(d->why), "bad message CRC");
		return -1;
	}
	if (hl > total - ES_MIN || hl > ES_MAX_HEADERS) {
		snprintf(d->why, sizeof(d->why), "headers length %lu does not "
		    "fit a frame of %lu bytes", (unsigned long)hl,
		    (unsigned long)total);
		return -1;
	}
	if (check_headers(s + ES_PRELUDE, hl, d->why, sizeof(d->why)) != 0)
		return -1;
	f->headers = s + ES_PRELUDE;
	f->headers_len = hl;
	f->payload = (const char *)s + ES_PRELUDE + hl;
	f->payload_len = total - ES_MIN - hl;
	f->offset = d->offset;
	return 0;
}

/*
 * The frame that starts at s (n bytes there): its total length when its
 * prelude is whole and sound, 0 when more bytes must come, or -1 with
 * d->why filled.
 */
static long
frame_len(struct saop__es *d, const unsigned char *s, size_t n)
{
	uint32_t total;

	if (n < ES_PRELUDE)
		return 0;
	if (saop__crc32(0, s, 8) != be32(s + 8)) {
		snprintf(d->why, sizeof(d->why), "bad prelude CRC");
		return -1;
	}
	total = be32(s);
	if (total < ES_MIN || total > ES_MAX || total > d->limit) {
		snprintf(d->why, sizeof(d->why), "a frame of %lu bytes",
		    (unsigned long)total);
		return -1;
	}
	return (long)total;
}

/* See llm-int.h: feed n bytes, hand every whole frame to fn. */
int
saop__es_feed(struct saop__es *d, const char *s, size_t n,
    saop__es_fn fn, void *arg)
{
	struct saop__es_frame f;
	const unsigned char *at;
	size_t used = 0;
	long total;
	int r;

	if (d->bad)
		return -1;
	if (d->limit == 0)
		d->limit = ES_MAX;
	/* Frames whole in s are read from it; the rest waits in d->buf. */
	while (d->buf.len == 0 && used < n) {
		at = (const unsigned char *)s + used;
		if ((total = frame_len(d, at, n - used)) < 0) {
			d->bad = 1;
			return -1;
		}
		if (total == 0 || (size_t)total > n - used)
			break;
		if (frame_of(d, at, (uint32_t)total, &f) != 0) {
			d->bad = 1;
			return -1;
		}
		used += (size_t)total;
		d->offset += (size_t)total;
		if (fn(arg, &f) != 0)
			return 0;
	}
	if (used == n)
		return 0;
	if ((r = saop__buf_append_max(&d->buf, s + used, n - used,
	    d->limit + ES_MIN)) != 0)
		return r;
	for (;;) {
		size_t have = d->buf.len;

		at = (const unsigned char *)d->buf.data;
		if ((total = frame_len(d, at, have)) < 0) {
			d->bad = 1;
			return -1;
		}
		if (total == 0 || (size_t)total > have)
			return 0;
		if (frame_of(d, at, (uint32_t)total, &f) != 0) {
			d->bad = 1;
			return -1;
		}
		d->offset += (size_t)total;
		r = fn(arg, &f);
		memmove(d->buf.data, d->buf.data + total, have - (size_t)total);
		d->buf.len = have - (size_t)total;
		if (r != 0 || d->buf.len == 0)
			return 0;
	}
}

/* See llm-int.h: free what d holds. */
void
saop__es_free(struct saop__es *d)
{
	saop__buf_free(&d->buf);
	memset(d, 0, sizeof(*d));
}
