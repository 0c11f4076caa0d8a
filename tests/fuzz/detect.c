/*
 * detect.c: fuzz target for the streaming scanner (lib/detect.c).  The
 * input is the text itself.  Properties:
 *  - any split into chunks (random sizes, empty chunks, byte by byte)
 *    gives the same result as the whole buffer, also when the verdict is
 *    asked for midway (saop_detector_finish() and feeding on);
 *  - the verdict feed returns after each chunk is the verdict of that
 *    prefix, and a prefix of a complete or truncated text is never
 *    invalid (nor is the text before the first invalid byte);
 *  - a truncated text up to its close point plus its closing suffix scans
 *    complete;
 *  - a text jansson reads is complete, and a complete text jansson
 *    refuses is refused for one of the limits DESIGN.md names.
 */
#include "config.h"

#include <string.h>

#include "saop.h"
#include "fuzz.h"

/* Strings equal, NULL equal only to NULL. */
static int
same_str(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Abort unless two scans of the same text say the same in every field. */
static void
check_same(const struct saop_detect_result *a,
    const struct saop_detect_result *b)
{
	FUZZ_CHECK(a->verdict == b->verdict);
	FUZZ_CHECK(a->empty == b->empty);
	FUZZ_CHECK(a->bom == b->bom);
	FUZZ_CHECK(a->length == b->length);
	FUZZ_CHECK(a->truncation_index == b->truncation_index);
	FUZZ_CHECK(same_str(a->last_valid_token, b->last_valid_token));
	FUZZ_CHECK(same_str(a->open, b->open));
	FUZZ_CHECK(same_str(a->expected, b->expected));
	FUZZ_CHECK(same_str(a->closing, b->closing));
	FUZZ_CHECK(a->error_offset == b->error_offset);
	FUZZ_CHECK(a->error_line == b->error_line);
	FUZZ_CHECK(a->error_column == b->error_column);
	FUZZ_CHECK(strcmp(a->error, b->error) == 0);
}

/*
 * Where the closed text is cut before the closing is appended: the closed
 * text is the text up to close_index plus closing (issue 9's rule; before
 * it, the closing completed the whole text: return res->length then).
 * Returns (size_t)-1 when the result has no closing (nothing received
 * determines a value: empty input, a lone '-').
 */
static size_t
close_point(const struct saop_detect_result *res)
{
	if (!res->has_close)
		return (size_t)-1;
	return (size_t)res->close_index;
}

/* The verdict of the first n bytes of data, scanned whole. */
static int
verdict_of(const uint8_t *data, size_t n)
{
	struct saop_detect_result r;
	int v;

	FUZZ_CHECK(saop_detect_buffer((const char *)data, n, 0, &r) == 0);
	v = (int)r.verdict;
	saop_detect_result_free(&r);
	return v;
}

/*
 * Feed data in the chunks rng chooses (byte by byte when bytewise), check
 * each verdict on the way (never invalid when the whole text is not; the
 * verdict of the prefix at a few points), ask for the result midway once,
 * and check the end result equals whole.
 */
static void
check_split(const uint8_t *data, size_t size, struct fuzz_rng *rng,
    int bytewise, const struct saop_detect_result *whole)
{
	struct saop_detect_result res, mid;
	struct saop_detector *d;
	size_t pos = 0, k, stop = fuzz_rng_below(rng, size + 1);
	int v, checks = 0, seen_invalid = 0;

	FUZZ_CHECK((d = saop_detector_new(0)) != NULL);
	do {
		k = bytewise ? 1 : fuzz_chunk(rng, size - pos);
		if (k > size - pos)
			k = size - pos;
		v = saop_detector_feed(d, (const char *)data + pos, k);
		pos += k;
		FUZZ_CHECK(v >= 0);
		/* Invalid once is invalid for good. */
		FUZZ_CHECK(!seen_invalid || v == SAOP_INVALID);
		seen_invalid |= v == SAOP_INVALID;
		if (whole->verdict != SAOP_INVALID)
			FUZZ_CHECK(v != SAOP_INVALID);
		if (checks < 4 && fuzz_rng_below(rng, 8) == 0) {
			FUZZ_CHECK(v == verdict_of(data, pos));
			checks++;
		}
		if (stop != (size_t)-1 && pos >= stop) {
			/* Asking midway changes nothing after. */
			FUZZ_CHECK(saop_detector_finish(d, &mid) == 0);
			FUZZ_CHECK(mid.length == pos);
			FUZZ_CHECK((int)mid.verdict == v);
			saop_detect_result_free(&mid);
			stop = (size_t)-1;
		}
	} while (pos < size);
	FUZZ_CHECK(saop_detector_finish(d, &res) == 0);
	check_same(whole, &res);
	saop_detect_result_free(&res);
	saop_detector_free(d);
}

/*
 * A prefix of a text that is not invalid is never invalid; for an invalid
 * text, the bytes before the first invalid one are not.
 */
static void
check_prefixes(const uint8_t *data, size_t size, struct fuzz_rng *rng,
    const struct saop_detect_result *whole)
{
	size_t end = size, i, n, k;

	if (whole->verdict == SAOP_INVALID) {
		FUZZ_CHECK(whole->error_offset < size);
		end = (size_t)whole->error_offset;
		FUZZ_CHECK(verdict_of(data, end) != SAOP_INVALID);
	}
	n = end <= 64 ? end : 16;
	for (i = 0; i < n; i++) {
		k = end <= 64 ? i : fuzz_rng_below(rng, end);
		FUZZ_CHECK(verdict_of(data, k) != SAOP_INVALID);
	}
}

/* A truncated text, cut at its close point and closed, scans complete. */
static void
check_closing(const uint8_t *data, const struct saop_detect_result *whole)
{
	size_t cut = close_point(whole), cl;
	char *closed;

	if (cut == (size_t)-1) {
		FUZZ_CHECK(whole->closing == NULL);
		return;
	}
	FUZZ_CHECK(whole->closing != NULL);
	FUZZ_CHECK(cut <= whole->length);
	cl = strlen(whole->closing);
	FUZZ_CHECK((closed = malloc(cut + cl + 1)) != NULL);
	memcpy(closed, data, cut);
	memcpy(closed + cut, whole->closing, cl + 1);
	FUZZ_CHECK(verdict_of((const uint8_t *)closed, cut + cl) ==
	    SAOP_COMPLETE);
	free(closed);
}

/*
 * jansson against the scanner: what jansson reads is complete; a complete
 * text jansson refuses hits one of its limits (DESIGN.md: nesting, 64-bit
 * integers, reals beyond double, \u0000 in a key) or starts with a BOM.
 * Texts with a NUL byte are left out (jansson reads "123\0" as 123).
 */
static void
check_jansson(const uint8_t *data, size_t size,
    const struct saop_detect_result *whole)
{
	json_error_t je;
	json_t *v;
	enum json_error_code c;

	if (memchr(data, '\0', size) != NULL)
		return;
	v = json_loadb((const char *)data, size,
	    JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (v != NULL) {
		FUZZ_CHECK(whole->verdict == SAOP_COMPLETE);
		json_decref(v);
		return;
	}
	if (whole->verdict != SAOP_COMPLETE || whole->bom)
		return;
	c = json_error_code(&je);
	FUZZ_CHECK(c == json_error_stack_overflow ||
	    c == json_error_numeric_overflow ||
	    c == json_error_null_byte_in_key || c == json_error_out_of_memory);
}

/* libFuzzer's entry point: scan data and check every property. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct saop_detect_result whole;
	struct fuzz_rng rng;

	fuzz_rng_seed(&rng, data, size);
	FUZZ_CHECK(saop_detect_buffer((const char *)data, size, 0,
	    &whole) == 0);
	FUZZ_CHECK(whole.length == size);
	FUZZ_CHECK(whole.verdict == SAOP_COMPLETE ||
	    whole.verdict == SAOP_TRUNCATED || whole.verdict == SAOP_INVALID);
	FUZZ_CHECK(whole.verdict != SAOP_TRUNCATED ||
	    whole.truncation_index <= size);
	check_split(data, size, &rng, 0, &whole);
	if (size <= 4096)
		check_split(data, size, &rng, 1, &whole);
	check_prefixes(data, size, &rng, &whole);
	if (whole.verdict == SAOP_TRUNCATED)
		check_closing(data, &whole);
	check_jansson(data, size, &whole);
	saop_detect_result_free(&whole);
	return 0;
}
