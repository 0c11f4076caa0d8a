/*
 * resume-merge.c: fuzz target for the resume merge (saop_resume_join in
 * lib/resume.c).  The input is a text; a cut point chosen from its bytes
 * splits it into the partial output (before) and the model's
 * continuation (after, which the fuzzer mutates like any answer).
 * Properties:
 *  - the merged output starts with the kept prefix (the partial output
 *    without its trailing white space): nothing received is lost;
 *  - the verdict returned is the scanner's verdict on the output, and the
 *    scan handed back is of the output;
 *  - an answer read two ways is not taken: the output is the partial
 *    output itself;
 *  - when partial output + continuation is complete JSON (the model went
 *    on exactly), the merge is complete, or read two ways.
 */
#include "config.h"

#include <string.h>

#include "saop.h"
#include "fuzz.h"

/* The length of s (n bytes) without its trailing JSON white space. */
static size_t
rstrip(const char *s, size_t n)
{
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
	    s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	return n;
}

/* The scanner's verdict on s (n bytes). */
static int
verdict_of(const char *s, size_t n)
{
	struct saop_detect_result r;
	int v;

	FUZZ_CHECK(saop_detect_buffer(s, n, 0, &r) == 0);
	v = (int)r.verdict;
	saop_detect_result_free(&r);
	return v;
}

/* Merge text[0..cut) with text[cut..size) and check the result. */
static void
check_merge(const char *text, size_t size, size_t cut)
{
	struct saop_detect_result res;
	struct saop_resume_join j;
	struct saop_err e;
	size_t keep = rstrip(text, cut), outlen;
	char *out;
	int v;

	memset(&j, 0, sizeof(j));
	v = saop_resume_join(text, cut, text + cut, size - cut, &j, &out,
	    &outlen, &res, &e);
	if (v < 0) {
		FUZZ_CHECK(v == -SAOP_ENOMEM && out == NULL);
		return;
	}
	FUZZ_CHECK(v == SAOP_COMPLETE || v == SAOP_TRUNCATED ||
	    v == SAOP_INVALID);
	FUZZ_CHECK(out != NULL && out[outlen] == '\0');
	FUZZ_CHECK(outlen >= keep && memcmp(out, text, keep) == 0);
	FUZZ_CHECK((int)res.verdict == v && res.length == outlen);
	FUZZ_CHECK(verdict_of(out, outlen) == v);
	if (j.ambiguous)
		FUZZ_CHECK(outlen == cut && memcmp(out, text, cut) == 0);
	if (verdict_of(text, size) == SAOP_COMPLETE)
		FUZZ_CHECK(v == SAOP_COMPLETE || j.ambiguous);
	saop_detect_result_free(&res);
	free(out);
}

/* libFuzzer's entry point: merge data cut at a point it chooses. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_rng rng;

	fuzz_rng_seed(&rng, data, size);
	check_merge((const char *)data, size, fuzz_rng_below(&rng, size + 1));
	check_merge((const char *)data, size, size / 2);
	return 0;
}
