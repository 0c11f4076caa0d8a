/*
 * repair.c: fuzz target for local repair (saop_repair in lib/repair.c)
 * and the text check around it (saop_validate_text with the SAOP
 * envelope, lib/validate.c).  The input is a model's answer text.
 * Properties:
 *  - valid JSON (complete for the scanner, no BOM) is never changed;
 *  - a repaired text names the repairs it made, is strict JSON (unless
 *    the BOM was the only thing to go: then it is the text without it),
 *    and a repair of it changes nothing;
 *  - saop_validate_text says valid (with a value) or invalid (with at
 *    least one error), or fails with a code; never a crash.
 */
#include "config.h"

#include <string.h>

#include "saop.h"
#include "fuzz.h"

/* The scanner's verdict on s (n bytes); *bom set when it skipped one. */
static int
verdict_of(const char *s, size_t n, int *bom)
{
	struct saop_detect_result r;
	int v;

	FUZZ_CHECK(saop_detect_buffer(s, n, 0, &r) == 0);
	v = (int)r.verdict;
	if (bom != NULL)
		*bom = r.bom;
	saop_detect_result_free(&r);
	return v;
}

/* 1 when the repairs made are the BOM's alone. */
static int
bom_only(const json_t *rep)
{
	return json_array_size(rep) == 1 &&
	    strcmp(json_string_value(json_array_get(rep, 0)), "bom") == 0;
}

/* Check the properties of saop_repair on text. */
static void
check_repair(const char *text, size_t len)
{
	struct saop_err e;
	char *out, *out2;
	size_t out_len, out2_len;
	json_t *rep, *rep2;
	int rc, rc2, bom;

	rc = saop_repair(text, len, &out, &out_len, &rep, &e);
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == -SAOP_ENOMEM);
	if (verdict_of(text, len, &bom) == SAOP_COMPLETE && !bom)
		FUZZ_CHECK(rc == 0);
	if (rc != 1) {
		FUZZ_CHECK(out == NULL && rep == NULL);
		return;
	}
	FUZZ_CHECK(out != NULL && out[out_len] == '\0');
	FUZZ_CHECK(json_is_array(rep) && json_array_size(rep) > 0);
	if (bom_only(rep)) {
		/* No single reading: only the BOM went. */
		FUZZ_CHECK(len >= 3 && out_len == len - 3);
		FUZZ_CHECK(memcmp(out, text + 3, out_len) == 0);
	} else {
		FUZZ_CHECK(verdict_of(out, out_len, NULL) == SAOP_COMPLETE);
	}
	/* A repair of a repair changes nothing. */
	rc2 = saop_repair(out, out_len, &out2, &out2_len, &rep2, &e);
	FUZZ_CHECK(rc2 == 0 || rc2 == -SAOP_ENOMEM);
	FUZZ_CHECK(out2 == NULL && rep2 == NULL);
	free(out);
	json_decref(rep);
}

/* Check saop_validate_text on text against the envelope, with repair. */
static void
check_validate(const char *text, size_t len)
{
	static struct saop_schema *env;
	struct saop_err e;
	json_t *value, *errors, *repairs;
	int rc;

	if (env == NULL)
		FUZZ_CHECK((env = saop_schema_envelope_v1(&e)) != NULL);
	rc = saop_validate_text(env, 0, text, len, &value, &errors, &repairs,
	    &e);
	if (rc < 0) {
		FUZZ_CHECK(e.code > 0 && e.msg[0] != '\0');
	} else if (rc == 1) {
		FUZZ_CHECK(value != NULL);
		FUZZ_CHECK(errors == NULL || json_array_size(errors) == 0);
	} else {
		char *words;

		FUZZ_CHECK(rc == 0 && value == NULL);
		FUZZ_CHECK(json_array_size(errors) > 0);
		/* The errors can be put into a correction prompt. */
		FUZZ_CHECK((words = saop_validate_errors_text(errors)) != NULL);
		FUZZ_CHECK(words[0] != '\0');
		free(words);
	}
	json_decref(value);
	json_decref(errors);
	json_decref(repairs);
}

/* libFuzzer's entry point: repair and check data as a model's answer. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_repair((const char *)data, size);
	check_validate((const char *)data, size);
	return 0;
}
