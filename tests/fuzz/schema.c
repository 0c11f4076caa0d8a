/*
 * schema.c: fuzz target for the JSON Schema compiler and validator
 * (lib/schema*.c).  The input is a schema, a newline, and an instance
 * (both JSON; a first line that is not JSON ends the run).  Properties:
 *  - compiling either gives a schema or fails with SAOP_ECONFIG (or
 *    SAOP_ENOMEM) and a message;
 *  - validating says valid (1, no errors) or invalid (0, at least one
 *    error, each with a JSON Pointer path, a keyword and a message), or
 *    fails with a code and a message; never a crash;
 *  - validating twice gives the same answer (nothing kept between calls);
 *  - the same holds with format assertion on.
 */
#include "config.h"

#include <string.h>

#include "saop.h"
#include "fuzz.h"

/* Abort unless every error of a failed validation is well formed. */
static void
check_errors(const json_t *errors)
{
	const json_t *err;
	const char *path;
	size_t i;

	FUZZ_CHECK(json_is_array(errors) && json_array_size(errors) > 0);
	json_array_foreach(errors, i, err) {
		FUZZ_CHECK(json_is_object(err));
		path = json_string_value(json_object_get(err, "path"));
		FUZZ_CHECK(path != NULL && (path[0] == '\0' || path[0] == '/'));
		FUZZ_CHECK(json_is_string(json_object_get(err, "keyword")));
		FUZZ_CHECK(json_is_string(json_object_get(err, "message")));
	}
}

/* Validate instance against s; check the answer; return it. */
static int
validate(const struct saop_schema *s, const json_t *instance)
{
	struct saop_err e;
	json_t *errors = NULL;
	int rc;

	saop_err_clear(&e);
	rc = saop_schema_validate(s, instance, &errors, &e);
	if (rc == 0)
		check_errors(errors);
	else if (rc == 1)
		FUZZ_CHECK(errors == NULL || json_array_size(errors) == 0);
	else
		FUZZ_CHECK(rc < 0 && e.code == -rc && e.msg[0] != '\0');
	json_decref(errors);
	return rc;
}

/* Compile schema (format assertion as asked), validate instance twice. */
static void
check(const json_t *schema, const json_t *instance, int format_assert)
{
	struct saop_schema_opts opts = { NULL, format_assert };
	struct saop_schema *s;
	struct saop_err e;

	saop_err_clear(&e);
	s = saop_schema_compile(schema, NULL, &opts, &e);
	if (s == NULL) {
		FUZZ_CHECK(e.code == SAOP_ECONFIG || e.code == SAOP_ENOMEM);
		FUZZ_CHECK(e.msg[0] != '\0');
		return;
	}
	if (instance != NULL)
		FUZZ_CHECK(validate(s, instance) == validate(s, instance));
	saop_schema_free(s);
}

/*
 * 1 when a string (key or value) anywhere in v holds "file:": the
 * compiler reads file: URIs from disk, and a fuzzer that found
 * "file:/dev/zero" would only measure the disk.
 */
static int
names_file(const json_t *v)
{
	const char *key;
	const json_t *x;
	size_t i;

	if (json_is_string(v))
		return strstr(json_string_value(v), "file:") != NULL;
	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if (names_file(x))
				return 1;
	}
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, x)
			if (strstr(key, "file:") != NULL || names_file(x))
				return 1;
	}
	return 0;
}

/* libFuzzer's entry point: schema line, instance after it. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nl = memchr(text, '\n', size);
	size_t slen = nl != NULL ? (size_t)(nl - text) : size;
	json_t *schema, *instance = NULL;
	json_error_t je;

	schema = json_loadb(text, slen, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (schema == NULL)
		return 0;
	if (names_file(schema)) {
		json_decref(schema);
		return 0;
	}
	if (nl != NULL)
		instance = json_loadb(nl + 1, size - slen - 1,
		    JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	check(schema, instance, 0);
	check(schema, instance, 1);
	json_decref(instance);
	json_decref(schema);
	return 0;
}
