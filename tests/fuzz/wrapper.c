/*
 * wrapper.c: fuzz target for the wrapper rule (saop_detect_text in
 * lib/detect.c): where the JSON of a wrapped answer begins.
 * Properties:
 *  - a text that scans as JSON as it stands is read bare: the verdict and
 *    indexes of saop_detect_buffer(), json_start 0, no wrapper;
 *  - otherwise a reading names its wrapper and its JSON's start inside
 *    the text, and its verdict is the JSON's own: the text from
 *    json_start scans truncated with the same indexes less json_start, or
 *    (complete) the text from json_start to json_end scans complete;
 *  - every index is inside the text; the verdict is stable (the same
 *    text read twice gives the same reading).
 */
#include "config.h"

#include <string.h>

#include "saop.h"
#include "fuzz.h"

/* Scan s[0..n) bare into *r. */
static void
bare(const char *s, size_t n, struct saop_detect_result *r)
{
	FUZZ_CHECK(saop_detect_buffer(s, n, 0, r) == 0);
}

/* libFuzzer's entry point: the rule on data, checked against the bare
 * scanner. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct saop_detect_result r, b, again, part;
	size_t js, je;

	FUZZ_CHECK(saop_detect_text(s, size, 0, &r) == 0);
	bare(s, size, &b);
	FUZZ_CHECK(r.length == size);
	if (b.verdict != SAOP_INVALID) {
		FUZZ_CHECK(r.verdict == b.verdict && r.json_start == 0 &&
		    r.wrapper == 0);
		FUZZ_CHECK(r.verdict != SAOP_TRUNCATED ||
		    (r.truncation_index == b.truncation_index &&
		    r.resume_index == b.resume_index));
	} else if (r.verdict != SAOP_INVALID) {
		js = (size_t)r.json_start;
		FUZZ_CHECK(r.wrapper != 0 && js > 0 && js <= size);
		FUZZ_CHECK(saop_detect_wrapper_name(r.wrapper) != NULL);
		if (r.verdict == SAOP_TRUNCATED) {
			bare(s + js, size - js, &part);
			FUZZ_CHECK(part.verdict == SAOP_TRUNCATED);
			FUZZ_CHECK(r.truncation_index ==
			    part.truncation_index + js);
			FUZZ_CHECK(r.resume_index == part.resume_index + js);
			FUZZ_CHECK(!r.has_close ||
			    r.close_index == part.close_index + js);
			FUZZ_CHECK(r.resume_index <= size &&
			    r.truncation_index >= js);
			saop_detect_result_free(&part);
		} else {
			je = (size_t)r.json_end;
			FUZZ_CHECK(je > js && je <= size);
			bare(s + js, je - js, &part);
			FUZZ_CHECK(part.verdict == SAOP_COMPLETE);
			saop_detect_result_free(&part);
		}
	} else {
		FUZZ_CHECK(r.json_start == 0 && r.wrapper == 0);
		FUZZ_CHECK(r.error_offset <= size && r.error[0] != '\0');
	}
	FUZZ_CHECK(saop_detect_text(s, size, 0, &again) == 0);
	FUZZ_CHECK(again.verdict == r.verdict &&
	    again.json_start == r.json_start && again.wrapper == r.wrapper);
	saop_detect_result_free(&again);
	saop_detect_result_free(&b);
	saop_detect_result_free(&r);
	return 0;
}
