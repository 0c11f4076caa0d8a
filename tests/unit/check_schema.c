/* check_schema.c: unit tests for the JSON Schema validator (lib/schema*.c). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "saop.h"
#include "unit.h"

static const char *datadir;	/* tests/data/schema */

static json_t *
js(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &je);

	ck_assert_msg(v != NULL, "bad test JSON: %s: %s", text, je.text);
	return v;
}

/* Compile schema text; fails the test when it does not compile. */
static struct saop_schema *
compile(const char *text, const struct saop_schema_opts *opts)
{
	struct saop_schema *s;
	struct saop_err e;
	json_t *doc = js(text);

	s = saop_schema_compile(doc, NULL, opts, &e);
	ck_assert_msg(s != NULL, "compile: %s", e.msg);
	json_decref(doc);
	return s;
}

/* Validate instance text: 1 or 0, with *errors (may be NULL). */
static int
check(const struct saop_schema *s, const char *text, json_t **errors)
{
	struct saop_err e;
	json_t *inst = js(text);
	int rc = saop_schema_validate(s, inst, errors, &e);

	ck_assert_msg(rc >= 0, "validate: %s", e.msg);
	json_decref(inst);
	return rc;
}

/* The index of the error with this message in errors, or -1. */
static long
find_msg(const json_t *errors, const char *msg)
{
	size_t i;
	json_t *x;

	json_array_foreach(errors, i, x)
		if (strcmp(json_string_value(json_object_get(x, "message")),
		    msg) == 0)
			return (long)i;
	return -1;
}

#define ASSERT_MSG(errors, msg) do { \
	char *t_ = json_dumps((errors), JSON_INDENT(1)); \
	ck_assert_msg(find_msg((errors), (msg)) >= 0, \
	    "no error '%s' in %s", (msg), t_ ? t_ : "?"); \
	free(t_); } while (0)

static const char *good_envelope =
    "{\"saop\":\"1.0\",\"turn_index\":3,\"agent_role\":\"developer\","
    "\"thought\":\"read the file\",\"action\":{\"tool\":\"read\","
    "\"parameters\":{\"path\":\"a.c\"}}}";

START_TEST(envelope_accepts_good_envelopes)
{
	struct saop_err e;
	struct saop_schema *s = saop_schema_envelope_v1(&e);
	json_t *errors = NULL;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(check(s, good_envelope, &errors), 1);
	ck_assert_ptr_null(errors);
	ck_assert_int_eq(check(s, "{\"saop\":\"1.0\",\"turn_index\":0,"
	    "\"agent_role\":\"reviewer\",\"thought\":\"done\","
	    "\"action\":null}", NULL), 1);
	saop_schema_free(s);
}
END_TEST

START_TEST(envelope_names_the_missing_nested_property)
{
	struct saop_err e;
	struct saop_schema *s = saop_schema_envelope_v1(&e);
	json_t *errors = NULL, *x;

	ck_assert_int_eq(check(s, "{\"saop\":\"1.0\",\"turn_index\":1,"
	    "\"agent_role\":\"developer\",\"thought\":\"t\","
	    "\"action\":{\"tool\":\"read\"}}", &errors), 0);
	ASSERT_MSG(errors, "/action: required property 'parameters' is "
	    "missing");
	x = json_array_get(errors, (size_t)find_msg(errors,
	    "/action: required property 'parameters' is missing"));
	ck_assert_str_eq(json_string_value(json_object_get(x, "path")),
	    "/action");
	ck_assert_str_eq(json_string_value(json_object_get(x, "keyword")),
	    "required");
	ck_assert_str_eq(json_string_value(json_object_get(x,
	    "schema_path")), "/properties/action/oneOf/1/required");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(envelope_reports_several_errors_at_once)
{
	struct saop_err e;
	struct saop_schema *s = saop_schema_envelope_v1(&e);
	json_t *errors = NULL;

	ck_assert_int_eq(check(s, "{\"saop\":\"2.0\",\"turn_index\":-1,"
	    "\"agent_role\":\"boss\",\"action\":7}", &errors), 0);
	ASSERT_MSG(errors, "/saop: must be \"1.0\"");
	ASSERT_MSG(errors, "/turn_index: must be >= 0, got -1");
	ASSERT_MSG(errors, "/agent_role: must be one of [\"researcher\","
	    "\"architect\",\"developer\",\"reviewer\"]");
	ASSERT_MSG(errors, "(root): required property 'thought' is missing");
	ASSERT_MSG(errors, "/action: expected null or object, got integer "
	    "(oneOf)");
	ck_assert_uint_eq(json_array_size(errors), 5);
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(envelope_rejects_a_non_object)
{
	struct saop_err e;
	struct saop_schema *s = saop_schema_envelope_v1(&e);
	json_t *errors = NULL;

	ck_assert_int_eq(check(s, "[1]", &errors), 0);
	ASSERT_MSG(errors, "(root): expected object, got array");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(pointer_paths_escape_tilde_and_slash)
{
	struct saop_schema *s = compile("{\"properties\":{\"a/b\":{"
	    "\"properties\":{\"c~d\":{\"type\":\"integer\"}}}}}", NULL);
	json_t *errors = NULL, *x;

	ck_assert_int_eq(check(s, "{\"a/b\":{\"c~d\":\"x\"}}", &errors), 0);
	ck_assert_uint_eq(json_array_size(errors), 1);
	x = json_array_get(errors, 0);
	ck_assert_str_eq(json_string_value(json_object_get(x, "path")),
	    "/a~1b/c~0d");
	ck_assert_str_eq(json_string_value(json_object_get(x,
	    "schema_path")), "/properties/a~1b/properties/c~0d/type");
	ck_assert_str_eq(json_string_value(json_object_get(x, "message")),
	    "/a~1b/c~0d: expected integer, got string");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(pointer_paths_name_array_indexes)
{
	struct saop_schema *s = compile("{\"properties\":{\"list\":{"
	    "\"items\":{\"type\":\"string\",\"maxLength\":2}}}}", NULL);
	json_t *errors = NULL;

	ck_assert_int_eq(check(s, "{\"list\":[\"ab\",3,\"abc\"]}", &errors),
	    0);
	ck_assert_uint_eq(json_array_size(errors), 2);
	ASSERT_MSG(errors, "/list/1: expected string, got integer");
	ASSERT_MSG(errors, "/list/2: must be at most 2 characters long, "
	    "has 3");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(additional_properties_false_names_the_property)
{
	struct saop_schema *s = compile("{\"properties\":{\"a\":true},"
	    "\"additionalProperties\":false}", NULL);
	json_t *errors = NULL;

	ck_assert_int_eq(check(s, "{\"a\":1,\"zz\":2}", &errors), 0);
	ASSERT_MSG(errors, "(root): property 'zz' is not allowed");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(local_refs_decode_percent_and_pointer_escapes)
{
	struct saop_schema *s = compile("{\"$defs\":{\"a b\":{\"type\":"
	    "\"string\"},\"x/y\":{\"type\":\"integer\"}},\"properties\":{"
	    "\"p\":{\"$ref\":\"#/$defs/a%20b\"},\"q\":{\"$ref\":"
	    "\"#/$defs/x~1y\"}}}", NULL);
	json_t *errors = NULL, *x;

	ck_assert_int_eq(check(s, "{\"p\":\"s\",\"q\":1}", NULL), 1);
	ck_assert_int_eq(check(s, "{\"p\":1,\"q\":\"s\"}", &errors), 0);
	ck_assert_uint_eq(json_array_size(errors), 2);
	x = json_array_get(errors, 0);
	ck_assert_str_eq(json_string_value(json_object_get(x,
	    "schema_path")), "/$defs/a b/type");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(anchors_and_ids_resolve)
{
	struct saop_schema *s = compile("{\"$id\":\"http://x.test/root.json\","
	    "\"properties\":{\"a\":{\"$ref\":\"#num\"},\"b\":{\"$ref\":"
	    "\"other.json\"}},\"$defs\":{\"n\":{\"$anchor\":\"num\","
	    "\"type\":\"number\"},\"o\":{\"$id\":\"other.json\",\"type\":"
	    "\"string\"}}}", NULL);

	ck_assert_int_eq(check(s, "{\"a\":1.5,\"b\":\"s\"}", NULL), 1);
	ck_assert_int_eq(check(s, "{\"a\":\"s\"}", NULL), 0);
	ck_assert_int_eq(check(s, "{\"b\":2}", NULL), 0);
	saop_schema_free(s);
}
END_TEST

START_TEST(file_refs_resolve_relative_to_the_schema_file)
{
	struct saop_schema *s;
	struct saop_err e;
	json_t *errors = NULL;
	char path[4096];

	snprintf(path, sizeof(path), "%s/main.json", datadir);
	s = saop_schema_load(path, NULL, &e);
	ck_assert_msg(s != NULL, "load: %s", e.msg);
	ck_assert_int_eq(check(s, "{\"name\":\"n\",\"tags\":[\"ab\"]}", NULL),
	    1);
	ck_assert_int_eq(check(s, "{\"name\":\"\",\"tags\":[\"AB\"]}",
	    &errors), 0);
	ASSERT_MSG(errors, "/name: must be at least 1 character long, has 0");
	ASSERT_MSG(errors, "/tags/0: must match the pattern '^[a-z]+$'");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(ref_dirs_map_a_base_uri_to_a_folder)
{
	char map[4200];
	const char *dirs[] = { map, NULL };
	struct saop_schema_opts opts = { dirs, 0 };
	struct saop_schema *s;

	snprintf(map, sizeof(map), "http://schemas.test/v1/=%s/defs",
	    datadir);
	s = compile("{\"$ref\":\"http://schemas.test/v1/common.json#/$defs/"
	    "name\"}", &opts);
	ck_assert_int_eq(check(s, "\"ok\"", NULL), 1);
	ck_assert_int_eq(check(s, "\"\"", NULL), 0);
	saop_schema_free(s);
}
END_TEST

START_TEST(unresolvable_ref_names_its_place)
{
	struct saop_err e;
	json_t *doc = js("{\"properties\":{\"p\":{\"$ref\":"
	    "\"http://nowhere.test/x.json\"}}}");

	ck_assert_ptr_null(saop_schema_compile(doc, NULL, NULL, &e));
	ck_assert_int_eq(e.code, SAOP_ECONFIG);
	ck_assert_msg(strstr(e.msg, "/properties/p/$ref") != NULL &&
	    strstr(e.msg, "http://nowhere.test/x.json") != NULL, "%s", e.msg);
	json_decref(doc);
	doc = js("{\"$ref\":\"#/$defs/missing\"}");
	ck_assert_ptr_null(saop_schema_compile(doc, NULL, NULL, &e));
	ck_assert_msg(strstr(e.msg, "points at nothing") != NULL, "%s",
	    e.msg);
	json_decref(doc);
}
END_TEST

START_TEST(bad_keyword_values_name_the_schema_location)
{
	static const char *const bad[][2] = {
		{ "{\"properties\":{\"a\":{\"minimum\":\"1\"}}}",
		    "/properties/a/minimum: must be a number" },
		{ "{\"type\":\"strin\"}", "/type: unknown type" },
		{ "{\"required\":[1]}", "/required: must be an array of "
		    "strings" },
		{ "{\"items\":{\"pattern\":\"(\"}}", "/items/pattern: "
		    "invalid regular expression '('" },
		{ "{\"allOf\":[]}", "/allOf: must be a non-empty array" },
		{ "{\"not\":3}", "/not: a schema must be an object or a "
		    "boolean" },
	};
	struct saop_err e;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *doc = js(bad[i][0]);

		ck_assert_ptr_null(saop_schema_compile(doc, NULL, NULL, &e));
		ck_assert_int_eq(e.code, SAOP_ECONFIG);
		ck_assert_msg(strncmp(e.msg, bad[i][1], strlen(bad[i][1])) ==
		    0, "%s: got '%s'", bad[i][0], e.msg);
		json_decref(doc);
	}
}
END_TEST

START_TEST(load_names_the_line_of_bad_json_and_missing_files)
{
	struct saop_err e;
	char path[4096];

	snprintf(path, sizeof(path), "%s/bad-syntax.json", datadir);
	ck_assert_ptr_null(saop_schema_load(path, NULL, &e));
	ck_assert_int_eq(e.code, SAOP_ECONFIG);
	/* The place is the schema file's, in the message: never the
	 * error's line, which programs print as the input's. */
	ck_assert_int_eq(e.line, 0);
	ck_assert_int_eq(e.has_offset, 0);
	ck_assert_msg(strstr(e.msg, "is not JSON: line 3") != NULL, "%s",
	    e.msg);
	snprintf(path, sizeof(path), "%s/no-such.json", datadir);
	ck_assert_ptr_null(saop_schema_load(path, NULL, &e));
	ck_assert_int_eq(e.code, SAOP_ECONFIG);
	ck_assert_msg(strstr(e.msg, "no-such.json") != NULL, "%s", e.msg);
}
END_TEST

START_TEST(draft7_items_array_and_additional_items)
{
	struct saop_schema *s = compile("{\"$schema\":"
	    "\"http://json-schema.org/draft-07/schema#\",\"items\":[{\"type\":"
	    "\"integer\"}],\"additionalItems\":{\"type\":\"string\"}}", NULL);
	json_t *errors = NULL;

	ck_assert_int_eq(check(s, "[1,\"a\",\"b\"]", NULL), 1);
	ck_assert_int_eq(check(s, "[1,2]", &errors), 0);
	ASSERT_MSG(errors, "/1: expected string, got integer");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(items_array_is_not_a_2020_12_schema)
{
	struct saop_err e;
	json_t *doc = js("{\"items\":[{\"type\":\"integer\"}]}");

	ck_assert_ptr_null(saop_schema_compile(doc, NULL, NULL, &e));
	ck_assert_msg(strstr(e.msg, "/items") != NULL, "%s", e.msg);
	json_decref(doc);
}
END_TEST

#define REF_SIBLINGS "{%s\"$ref\":\"#/definitions/s\",\"maxLength\":2," \
	"\"definitions\":{\"s\":{\"type\":\"string\"}}}"

START_TEST(draft7_ignores_ref_siblings_but_2020_12_does_not)
{
	char buf[512];
	struct saop_schema *s;

	snprintf(buf, sizeof(buf), REF_SIBLINGS, "\"$schema\":"
	    "\"http://json-schema.org/draft-07/schema#\",");
	s = compile(buf, NULL);
	ck_assert_int_eq(check(s, "\"abc\"", NULL), 1);
	ck_assert_int_eq(check(s, "3", NULL), 0);
	saop_schema_free(s);
	snprintf(buf, sizeof(buf), REF_SIBLINGS, "");
	s = compile(buf, NULL);
	ck_assert_int_eq(check(s, "\"abc\"", NULL), 0);
	ck_assert_int_eq(check(s, "\"ab\"", NULL), 1);
	saop_schema_free(s);
}
END_TEST

START_TEST(draft7_dependencies_split_into_required_and_schemas)
{
	struct saop_schema *s = compile("{\"$schema\":"
	    "\"http://json-schema.org/draft-07/schema#\",\"dependencies\":{"
	    "\"a\":[\"b\"],\"c\":{\"required\":[\"d\"]}}}", NULL);
	json_t *errors = NULL;

	ck_assert_int_eq(check(s, "{\"a\":1,\"b\":2,\"c\":3,\"d\":4}", NULL),
	    1);
	ck_assert_int_eq(check(s, "{\"a\":1,\"c\":3}", &errors), 0);
	ASSERT_MSG(errors, "(root): property 'b' is required when 'a' is "
	    "present");
	ASSERT_MSG(errors, "(root): required property 'd' is missing");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(integers_and_reals_compare_as_numbers)
{
	struct saop_schema *s = compile("{\"type\":\"integer\","
	    "\"multipleOf\":2}", NULL);

	ck_assert_int_eq(check(s, "4.0", NULL), 1);
	ck_assert_int_eq(check(s, "4.5", NULL), 0);
	ck_assert_int_eq(check(s, "3", NULL), 0);
	saop_schema_free(s);
	s = compile("{\"enum\":[1,[2],{\"a\":3}],\"uniqueItems\":true}",
	    NULL);
	ck_assert_int_eq(check(s, "1.0", NULL), 1);
	ck_assert_int_eq(check(s, "[2.0]", NULL), 1);
	ck_assert_int_eq(check(s, "{\"a\":3.0}", NULL), 1);
	ck_assert_int_eq(check(s, "2", NULL), 0);
	saop_schema_free(s);
	s = compile("{\"uniqueItems\":true}", NULL);
	ck_assert_int_eq(check(s, "[1,{\"a\":1},1.0]", NULL), 0);
	ck_assert_int_eq(check(s, "[1,{\"a\":1},{\"a\":2}]", NULL), 1);
	saop_schema_free(s);
	s = compile("{\"multipleOf\":0.01}", NULL);
	ck_assert_int_eq(check(s, "0.07", NULL), 1);
	ck_assert_int_eq(check(s, "0.075", NULL), 0);
	saop_schema_free(s);
}
END_TEST

START_TEST(max_length_counts_code_points)
{
	struct saop_schema *s = compile("{\"maxLength\":2,\"minLength\":2}",
	    NULL);

	ck_assert_int_eq(check(s, "\"\xc3\xa9\xf0\x9f\x98\x80\"", NULL), 1);
	ck_assert_int_eq(check(s, "\"\xc3\xa9\"", NULL), 0);
	saop_schema_free(s);
}
END_TEST

START_TEST(patterns_follow_ecma_262)
{
	struct saop_schema *s = compile("{\"pattern\":\"^\\\\d+$\"}", NULL);

	ck_assert_int_eq(check(s, "\"123\"", NULL), 1);
	/* ARABIC-INDIC DIGIT ONE is not \d in ECMA-262. */
	ck_assert_int_eq(check(s, "\"\xd9\xa1\"", NULL), 0);
	ck_assert_int_eq(check(s, "\"12\\n\"", NULL), 0);
	saop_schema_free(s);
	s = compile("{\"pattern\":\"^\\\\s$\"}", NULL);
	ck_assert_int_eq(check(s, "\"\\u00a0\"", NULL), 1);
	ck_assert_int_eq(check(s, "\"x\"", NULL), 0);
	saop_schema_free(s);
	s = compile("{\"patternProperties\":{\"^\\\\p{Letter}+$\":"
	    "{\"type\":\"integer\"}},\"additionalProperties\":false}", NULL);
	ck_assert_int_eq(check(s, "{\"\xc3\xa9t\xc3\xa9\":1}", NULL), 1);
	ck_assert_int_eq(check(s, "{\"a1\":1}", NULL), 0);
	saop_schema_free(s);
}
END_TEST

START_TEST(format_is_an_annotation_unless_asserted)
{
	struct saop_schema_opts opts = { NULL, 1 };
	const char *schema = "{\"properties\":{\"d\":{\"format\":\"date\"},"
	    "\"ip\":{\"format\":\"ipv4\"},\"t\":{\"format\":\"date-time\"},"
	    "\"u\":{\"format\":\"uuid\"}}}";
	struct saop_schema *s = compile(schema, NULL);
	json_t *errors = NULL;

	ck_assert_int_eq(check(s, "{\"d\":\"2023-02-29\"}", NULL), 1);
	saop_schema_free(s);
	s = compile(schema, &opts);
	ck_assert_int_eq(check(s, "{\"d\":\"2024-02-29\",\"ip\":\"10.0.0.1\","
	    "\"t\":\"2024-01-01T23:59:60Z\",\"u\":"
	    "\"2eb8aa08-aa98-11ea-b4aa-73b441d16380\"}", NULL), 1);
	ck_assert_int_eq(check(s, "{\"d\":\"2023-02-29\",\"ip\":\"10.0.0.01\","
	    "\"t\":\"2024-01-01T12:00:60Z\",\"u\":\"2eb8aa08\"}", &errors), 0);
	ck_assert_uint_eq(json_array_size(errors), 4);
	ASSERT_MSG(errors, "/d: is not a valid date");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(unevaluated_properties_sees_through_applicators)
{
	struct saop_schema *s = compile("{\"allOf\":[{\"properties\":{\"a\":"
	    "true}}],\"anyOf\":[{\"properties\":{\"b\":true}},{\"required\":"
	    "[\"x\"]}],\"unevaluatedProperties\":false}", NULL);
	json_t *errors = NULL;

	ck_assert_int_eq(check(s, "{\"a\":1,\"b\":2}", NULL), 1);
	ck_assert_int_eq(check(s, "{\"a\":1,\"c\":2}", &errors), 0);
	ASSERT_MSG(errors, "(root): property 'c' is not allowed");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(dynamic_ref_follows_the_dynamic_scope)
{
	struct saop_schema *s = compile("{\"$id\":\"http://x.test/strict\","
	    "\"$ref\":\"list\",\"$defs\":{\"item\":{"
	    "\"$dynamicAnchor\":\"item\","
	    "\"type\":\"string\"},\"list\":{\"$id\":\"list\",\"type\":"
	    "\"array\",\"items\":{\"$dynamicRef\":\"#item\"},\"$defs\":{"
	    "\"any\":{\"$dynamicAnchor\":\"item\"}}}}}", NULL);

	ck_assert_int_eq(check(s, "[\"a\",\"b\"]", NULL), 1);
	ck_assert_int_eq(check(s, "[\"a\",1]", NULL), 0);
	saop_schema_free(s);
}
END_TEST

START_TEST(one_of_reports_more_than_one_match)
{
	struct saop_schema *s = compile("{\"oneOf\":[{\"type\":\"integer\"},"
	    "{\"minimum\":0}]}", NULL);
	json_t *errors = NULL;

	ck_assert_int_eq(check(s, "-1", NULL), 1);
	ck_assert_int_eq(check(s, "3", &errors), 0);
	ASSERT_MSG(errors, "(root): must match exactly one of the 2 schemas "
	    "in oneOf, matched 0 and 1");
	json_decref(errors);
	saop_schema_free(s);
}
END_TEST

START_TEST(metaschemas_are_known)
{
	struct saop_schema *s = compile("{\"$ref\":"
	    "\"https://json-schema.org/draft/2020-12/schema\"}", NULL);
	json_t *errors = NULL;

	ck_assert_int_eq(check(s, "{\"type\":\"string\",\"minLength\":1}",
	    NULL), 1);
	ck_assert_int_eq(check(s, "{\"minLength\":-1}", &errors), 0);
	ck_assert_uint_ge(json_array_size(errors), 1);
	json_decref(errors);
	saop_schema_free(s);
	s = compile("{\"$ref\":\"http://json-schema.org/draft-07/schema#\"}",
	    NULL);
	ck_assert_int_eq(check(s, "{\"type\":\"strin\"}", NULL), 0);
	saop_schema_free(s);
}
END_TEST

/*
 * A $ref loop in which no keyword goes into the instance can never end: the
 * schema is refused when compiled, naming the $ref (as a JSON Pointer)
 * that closes the loop and the schema it is in (issue 8, defect 12).
 */
START_TEST(a_ref_loop_that_never_goes_into_the_instance_is_refused)
{
	static const struct {
		const char *schema, *where;
	} loops[] = {
		{ "{\"$ref\":\"#\"}", "/$ref" },
		{ "{\"properties\":{\"a\":{\"$ref\":\"#/properties/a\"}}}",
		    "/properties/a/$ref" },
		{ "{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":"
		    "{\"allOf\":[true,{\"$ref\":\"#/$defs/a\"}]}},"
		    "\"$ref\":\"#/$defs/a\"}", "/$defs/b/allOf/1/$ref" },
		{ "{\"not\":{\"$ref\":\"#\"}}", "/not/$ref" },
		{ "{\"anyOf\":[{\"type\":\"string\"},{\"$ref\":\"#\"}]}",
		    "/anyOf/1/$ref" },
		{ "{\"if\":true,\"then\":{\"$ref\":\"#\"}}", "/then/$ref" },
		{ "{\"dependentSchemas\":{\"x\":{\"$ref\":\"#\"}}}",
		    "/dependentSchemas/x/$ref" },
		{ "{\"$id\":\"http://x.test/a\",\"$anchor\":\"me\","
		    "\"oneOf\":[{\"$ref\":\"#me\"}]}", "/oneOf/0/$ref" },
		{ "{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
		    "\"definitions\":{\"d\":{\"$ref\":\"#\"}},"
		    "\"$ref\":\"#/definitions/d\"}", "/definitions/d/$ref" }
	};
	struct saop_err e;
	size_t i;
	json_t *doc;

	for (i = 0; i < sizeof(loops) / sizeof(loops[0]); i++) {
		doc = js(loops[i].schema);
		ck_assert_msg(saop_schema_compile(doc, "file:///s/loop.json",
		    NULL, &e) == NULL, "%s compiled", loops[i].schema);
		ck_assert_int_eq(e.code, SAOP_ECONFIG);
		ck_assert_msg(strstr(e.msg, "$ref loop") != NULL &&
		    strstr(e.msg, loops[i].where) != NULL &&
		    strstr(e.msg, "loop.json") != NULL, "%s: %s",
		    loops[i].schema, e.msg);
		json_decref(doc);
	}
}
END_TEST

/* Recursion through a keyword that goes into the instance is sound. */
START_TEST(recursion_into_the_instance_is_not_a_loop)
{
	static const char *const sound[] = {
		"{\"properties\":{\"a\":{\"$ref\":\"#\"}}}",
		"{\"items\":{\"$ref\":\"#\"},\"type\":\"array\"}",
		"{\"$defs\":{\"n\":{\"anyOf\":[{\"type\":\"null\"},"
		    "{\"properties\":{\"next\":{\"$ref\":\"#/$defs/n\"}},"
		    "\"required\":[\"next\"]}]}},\"$ref\":\"#/$defs/n\"}",
		"{\"allOf\":[{\"$ref\":\"#/$defs/a\"},{\"$ref\":\"#/$defs/a\"}],"
		    "\"$defs\":{\"a\":{\"additionalProperties\":"
		    "{\"$ref\":\"#\"}}}}",
		"{\"propertyNames\":{\"$ref\":\"#\"},\"contains\":"
		    "{\"$ref\":\"#\"}}"
	};
	struct saop_schema *s;
	size_t i;

	for (i = 0; i < sizeof(sound) / sizeof(sound[0]); i++) {
		s = compile(sound[i], NULL);
		ck_assert_int_ge(check(s, "{\"next\":{\"next\":null}}", NULL),
		    0);
		saop_schema_free(s);
	}
}
END_TEST

/* The text of {} nested depth levels deep under "a": new, free(). */
static char *
deep_object(size_t depth)
{
	char *t = malloc(depth * 6 + 3), *p = t;
	size_t i;

	ck_assert_ptr_nonnull(t);
	for (i = 0; i < depth; i++, p += 5)
		memcpy(p, "{\"a\":", 5);
	*p++ = '{';
	*p++ = '}';
	for (i = 0; i < depth; i++)
		*p++ = '}';
	*p = '\0';
	return t;
}

/*
 * An instance nested deeper than the evaluation limit on a sound
 * recursive schema is invalid, with one "limit" error at the pointer where
 * evaluation stopped (issue 8, defect 12), never a failure of the call.
 */
START_TEST(an_instance_past_the_evaluation_limit_is_invalid_with_one_error)
{
	struct saop_schema *s = compile("{\"type\":\"object\","
	    "\"properties\":{\"a\":{\"$ref\":\"#\"}}}", NULL);
	char *text = deep_object(2040), *ok = deep_object(100);
	const char *path, *msg;
	json_t *errors, *err;
	size_t i;

	ck_assert_int_eq(check(s, ok, NULL), 1);
	ck_assert_int_eq(check(s, text, NULL), 0);
	ck_assert_int_eq(check(s, text, &errors), 0);
	ck_assert_uint_eq(json_array_size(errors), 1);
	err = json_array_get(errors, 0);
	ck_assert_str_eq(json_string_value(json_object_get(err, "keyword")),
	    "limit");
	path = json_string_value(json_object_get(err, "path"));
	msg = json_string_value(json_object_get(err, "message"));
	ck_assert_uint_gt(strlen(path), 100);
	ck_assert_uint_lt(strlen(path), 2040 * 2);
	for (i = 0; path[i] != '\0'; i += 2)
		ck_assert_msg(path[i] == '/' && path[i + 1] == 'a', "%s", path);
	ck_assert_msg(strstr(msg, "2000") != NULL, "%s", msg);
	json_decref(errors);
	free(text);
	free(ok);
	saop_schema_free(s);
}
END_TEST

START_TEST(one_schema_validates_many_instances)
{
	struct saop_err e;
	struct saop_schema *s = saop_schema_envelope_v1(&e);
	int i;

	for (i = 0; i < 1000; i++) {
		ck_assert_int_eq(check(s, good_envelope, NULL), 1);
		ck_assert_int_eq(check(s, "{\"thought\":1}", NULL), 0);
	}
	saop_schema_free(s);
	saop_schema_free(NULL);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("schema");
	TCase *tc = tcase_create("schema");
	char *dir;
	int status;

	if ((datadir = getenv("top_srcdir")) == NULL)
		datadir = ".";
	if ((dir = malloc(strlen(datadir) + 32)) == NULL)
		return EXIT_FAILURE;
	sprintf(dir, "%s/tests/data/schema", datadir);
	datadir = dir;
	tcase_add_test(tc, envelope_accepts_good_envelopes);
	tcase_add_test(tc, envelope_names_the_missing_nested_property);
	tcase_add_test(tc, envelope_reports_several_errors_at_once);
	tcase_add_test(tc, envelope_rejects_a_non_object);
	tcase_add_test(tc, pointer_paths_escape_tilde_and_slash);
	tcase_add_test(tc, pointer_paths_name_array_indexes);
	tcase_add_test(tc, additional_properties_false_names_the_property);
	tcase_add_test(tc, local_refs_decode_percent_and_pointer_escapes);
	tcase_add_test(tc, anchors_and_ids_resolve);
	tcase_add_test(tc, file_refs_resolve_relative_to_the_schema_file);
	tcase_add_test(tc, ref_dirs_map_a_base_uri_to_a_folder);
	tcase_add_test(tc, unresolvable_ref_names_its_place);
	tcase_add_test(tc, bad_keyword_values_name_the_schema_location);
	tcase_add_test(tc, load_names_the_line_of_bad_json_and_missing_files);
	tcase_add_test(tc, draft7_items_array_and_additional_items);
	tcase_add_test(tc, items_array_is_not_a_2020_12_schema);
	tcase_add_test(tc, draft7_ignores_ref_siblings_but_2020_12_does_not);
	tcase_add_test(tc, draft7_dependencies_split_into_required_and_schemas);
	tcase_add_test(tc, integers_and_reals_compare_as_numbers);
	tcase_add_test(tc, max_length_counts_code_points);
	tcase_add_test(tc, patterns_follow_ecma_262);
	tcase_add_test(tc, format_is_an_annotation_unless_asserted);
	tcase_add_test(tc, unevaluated_properties_sees_through_applicators);
	tcase_add_test(tc, dynamic_ref_follows_the_dynamic_scope);
	tcase_add_test(tc, one_of_reports_more_than_one_match);
	tcase_add_test(tc, metaschemas_are_known);
	tcase_add_test(tc,
	    a_ref_loop_that_never_goes_into_the_instance_is_refused);
	tcase_add_test(tc, recursion_into_the_instance_is_not_a_loop);
	tcase_add_test(tc,
	    an_instance_past_the_evaluation_limit_is_invalid_with_one_error);
	tcase_add_test(tc, one_schema_validates_many_instances);
	suite_add_tcase(su, tc);
	status = unit_run(su);
	free(dir);
	return status;
}
