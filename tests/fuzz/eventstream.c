/*
 * eventstream.c: fuzz target for AWS's binary event stream
 * (lib/llm-eventstream.c) and the Bedrock ConverseStream answers read
 * from it (lib/llm-answer.c).  The input is either (first byte odd) the
 * HTTP body itself, or (even) lines "TYPE PAYLOAD" that the target frames
 * with right CRCs: an event of :event-type TYPE, or, when TYPE starts
 * with '!', an exception of :exception-type TYPE without it.
 * Properties:
 *  - any split into chunks reads the same answer as the whole body;
 *  - a framed body with one byte damaged is a finished answer only when
 *    the whole one is and the same; never more text than the whole
 *    body's (a prefix of it, when the whole body is the protocol): a
 *    damaged frame is never read;
 *  - a transfer that broke is finished only when the whole one is;
 *  - never a crash.
 */
#include "config.h"

#include <string.h>

#include "saop-private.h"
#include "llm-int.h"
#include "fuzz.h"
#include "answer-common.h"

#define CTYPE	"application/vnd.amazon.eventstream"

/* Append the 32-bit big-endian v to b. */
static void
put32(struct saop__buf *b, uint32_t v)
{
	unsigned char s[4];

	s[0] = (unsigned char)(v >> 24);
	s[1] = (unsigned char)(v >> 16);
	s[2] = (unsigned char)(v >> 8);
	s[3] = (unsigned char)v;
	FUZZ_CHECK(saop__buf_append(b, s, 4) == 0);
}

/* Append a string header name: v (n bytes) to h. */
static void
header(struct saop__buf *h, const char *name, const char *v, size_t n)
{
	unsigned char x[3];

	x[0] = (unsigned char)strlen(name);
	FUZZ_CHECK(saop__buf_append(h, x, 1) == 0);
	FUZZ_CHECK(saop__buf_append(h, name, strlen(name)) == 0);
	x[0] = 7;
	x[1] = (unsigned char)(n >> 8);
	x[2] = (unsigned char)n;
	FUZZ_CHECK(saop__buf_append(h, x, 3) == 0);
	FUZZ_CHECK(saop__buf_append(h, v, n) == 0);
}

/* Frame the line s (n bytes: "TYPE PAYLOAD") into out. */
static void
frame_line(struct saop__buf *out, const char *s, size_t n)
{
	struct saop__buf h = { 0 };
	const char *sp = memchr(s, ' ', n);
	size_t tl = sp != NULL ? (size_t)(sp - s) : n;
	size_t start = out->len;
	int exc = tl > 0 && s[0] == '!';

	if (tl > 200)
		tl = 200;
	header(&h, ":message-type", exc ? "exception" : "event",
	    exc ? 9 : 5);
	header(&h, exc ? ":exception-type" : ":event-type", s + exc,
	    tl - (size_t)exc);
	header(&h, ":content-type", "application/json", 16);
	s += sp != NULL ? tl + 1 : n;
	n -= sp != NULL ? tl + 1 : n;
	put32(out, (uint32_t)(16 + h.len + n));
	put32(out, (uint32_t)h.len);
	put32(out, saop__crc32(0, out->data + start, 8));
	FUZZ_CHECK(saop__buf_append(out, h.data, h.len) == 0);
	FUZZ_CHECK(saop__buf_append(out, s, n) == 0);
	put32(out, saop__crc32(0, out->data + start, out->len - start));
	saop__buf_free(&h);
}

/* libFuzzer's entry point: read data as a Bedrock answer body. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct saop_llm_answer whole, other;
	struct saop_err ew, eo;
	struct saop__buf body = { 0 };
	struct fuzz_rng rng;
	const uint8_t *b;
	size_t n, i, start, k;
	int rw, ro, framed;

	if (size == 0)
		return 0;
	fuzz_rng_seed(&rng, data, size);
	framed = (data[0] & 1) == 0;
	if (framed) {
		for (i = start = 1; i <= size; i++)
			if (i == size || data[i] == '\n') {
				if (i > start)
					frame_line(&body, (const char *)data +
					    start, i - start);
				start = i + 1;
			}
		b = (const uint8_t *)body.data;
		n = body.len;
	} else {
		b = data + 1;
		n = size - 1;
	}
	rw = fuzz_answer_parse(b, n, CTYPE, 0, NULL, 1, &whole, &ew);
	ro = fuzz_answer_parse(b, n, CTYPE, 0, &rng, 1, &other, &eo);
	FUZZ_CHECK(rw == ro);
	fuzz_answer_same(&whole, &other);
	saop_llm_answer_free(&other);
	/* A transfer that broke: finished only when the whole one is. */
	ro = fuzz_answer_parse(b, n, CTYPE, 0, &rng, 0, &other, &eo);
	FUZZ_CHECK(ro < 0 || rw == 0);
	saop_llm_answer_free(&other);
	if (framed && n > 0) {
		k = fuzz_rng_below(&rng, n);
		body.data[k] ^= (char)(1 + fuzz_rng_below(&rng, 255));
		ro = fuzz_answer_parse(b, n, CTYPE, 0, &rng, 1, &other, &eo);
		if (ro == 0) {
			FUZZ_CHECK(rw == 0);
			fuzz_answer_same(&whole, &other);
		}
		if (rw != -SAOP_EPROTO)
			FUZZ_CHECK(other.raw_len <= whole.raw_len &&
			    memcmp(other.raw, whole.raw, other.raw_len) == 0);
		saop_llm_answer_free(&other);
	}
	saop_llm_answer_free(&whole);
	saop__buf_free(&body);
	return 0;
}
