/*
 * repair.c: fuzz target for local repair (saop_repair in lib/repair.c)
 * and the text check around it (saop_validate_text with the SAOP
 * envelope, lib/validate.c).  The input is a model's answer text.
 * Properties:
 *  - valid JSON (complete for the scanner, no BOM) is never changed;
 *  - a repaired text names the repairs it made, is strict JSON (unless
 *    the BOM was the only thing to go: then it is the text without it),
 *    and a repair of it changes nothing;
 *  - the same with the envelope schema and with --close (a closed text
 *    is named "closed");
 *  - when the input is valid JSON, one slip put into it (a trailing
 *    comma, a fence, prose around it, a comment, single quotes, a
 *    missing comma...) is repaired into the same value or refused;
 *  - saop_validate_text says valid (with a value) or invalid (with at
 *    least one error), or fails with a code; never a crash.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
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

/* Is the name n among the repairs rep?  1 or 0. */
static int
named(const json_t *rep, const char *n)
{
	size_t i;

	for (i = 0; i < json_array_size(rep); i++)
		if (strcmp(json_string_value(json_array_get(rep, i)), n) == 0)
			return 1;
	return 0;
}

/* Check the properties of saop_repair_with(o) on text. */
static void
check_repair(const char *text, size_t len, const struct saop_repair_opts *o)
{
	struct saop_err e;
	char *out, *out2;
	size_t out_len, out2_len;
	json_t *rep, *rep2, *rd;
	int rc, rc2, bom;

	rc = saop_repair_with(text, len, o, &out, &out_len, &rep, &rd, &e);
	json_decref(rd);
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
	FUZZ_CHECK(named(rep, "closed") == (o != NULL && o->close &&
	    named(rep, "closed")));
	/* A repair of a repair changes nothing. */
	rc2 = saop_repair_with(out, out_len, o, &out2, &out2_len, &rep2, NULL,
	    &e);
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

/*
 * When text is valid JSON (jansson reads it): put one slip of each kind
 * into it and check that its repair is the same value or a refusal.
 */
static void
check_slips(const char *text, size_t len)
{
	static const char *const wrap[][2] = {
		{ "```json\n", "\n```" }, { "Here it is:\n", "\nDone." },
		{ "<think>x</think>", "" }, { "cb(", ");" },
		{ "// note\n", " # end" }, { "\xef\xbb\xbf", "" }
	};
	struct saop_err e;
	json_error_t je;
	json_t *v, *got, *rep;
	char *in, *out;
	size_t k, n, i, out_len;
	int rc;

	if (len > 2048 || memchr(text, '\0', len) != NULL ||
	    (v = json_loadb(text, len, JSON_DECODE_ANY, &je)) == NULL)
		return;
	FUZZ_CHECK((in = malloc(len + 64)) != NULL);
	for (k = 0; k < sizeof(wrap) / sizeof(wrap[0]) + 3; k++) {
		if (k < sizeof(wrap) / sizeof(wrap[0])) {
			n = (size_t)sprintf(in, "%s", wrap[k][0]);
			memcpy(in + n, text, len);
			n += len;
			n += (size_t)sprintf(in + n, "%s", wrap[k][1]);
		} else {
			/* A trailing comma, a missing comma, Python. */
			const char *c = k == sizeof(wrap) / sizeof(wrap[0]) ?
			    "}" : k == sizeof(wrap) / sizeof(wrap[0]) + 1 ?
			    "," : "true";
			const char *r = k == sizeof(wrap) / sizeof(wrap[0]) ?
			    ",}" : k == sizeof(wrap) / sizeof(wrap[0]) + 1 ?
			    "\n" : "True";
			const char *p = NULL;
			int instr = 0;

			for (i = 0; i < len && p == NULL; i++) {
				if (instr) {
					if (text[i] == '\\')
						i++;
					else if (text[i] == '"')
						instr = 0;
				} else if (text[i] == '"') {
					instr = 1;
				} else if (strncmp(text + i, c, strlen(c)) ==
				    0 && (k != sizeof(wrap) / sizeof(wrap[0]) ||
				    (i > 0 && text[i - 1] != '{' &&
				    text[i - 1] != ','))) {
					p = text + i;
				}
			}
			if (p == NULL)
				continue;
			i = (size_t)(p - text);
			memcpy(in, text, i);
			n = i + (size_t)sprintf(in + i, "%s", r);
			memcpy(in + n, text + i + strlen(c), len - i -
			    strlen(c));
			n += len - i - strlen(c);
		}
		rc = saop_repair(in, n, &out, &out_len, &rep, &e);
		FUZZ_CHECK(rc >= 0 || rc == -SAOP_ENOMEM);
		if (rc != 1)
			continue;
		got = json_loadb(out, out_len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
		    &je);
		/* The same value, or (no reading: only a BOM went) none. */
		FUZZ_CHECK(got == NULL || json_equal(got, v));
		json_decref(got);
		json_decref(rep);
		free(out);
	}
	free(in);
	json_decref(v);
}

/* libFuzzer's entry point: repair and check data as a model's answer. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct saop_schema *env;
	struct saop_repair_opts o;
	struct saop_err e;

	if (env == NULL)
		FUZZ_CHECK((env = saop_schema_envelope_v1(&e)) != NULL);
	check_repair((const char *)data, size, NULL);
	o.schema = env;
	o.close = 1;
	check_repair((const char *)data, size, &o);
	check_slips((const char *)data, size);
	check_validate((const char *)data, size);
	return 0;
}
