/* check_validate.c: unit tests for lib/validate.c: errors and the protocol. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"
#include "db-sqlite.h"
#include "schema-int.h"
#include "unit.h"

static const char good[] = "{\"saop\": \"1.0\", \"turn_index\": 2, "
    "\"agent_role\": \"architect\", \"thought\": \"t\", \"action\": null}";

static json_t *
errs(const char *text)
{
	json_t *v = json_loads(text, 0, NULL);

	ck_assert_ptr_nonnull(v);
	return v;
}

START_TEST(errors_are_rendered_as_path_colon_message_joined_by_semicolons)
{
	json_t *e = errs("[{\"path\": \"/action/parameters\", \"keyword\": "
	    "\"required\", \"message\": \"required property 'path' is "
	    "missing\"}, {\"path\": \"\", \"keyword\": \"type\", \"message\": "
	    "\"must be an object.\"}]");
	char *t = saop_validate_errors_text(e);

	ck_assert_str_eq(t, "/action/parameters: required property 'path' "
	    "is missing; (root): must be an object");
	free(t);
	json_decref(e);
}
END_TEST

START_TEST(a_message_that_names_its_path_is_not_prefixed_twice)
{
	json_t *e = errs("[{\"path\": \"/a\", \"message\": \"/a: too long\"},"
	    "{\"path\": \"\", \"message\": \"(root): required property 'x' "
	    "is missing\"}, {\"path\": \"/ab\", \"message\": \"/a: odd\"}]");
	char *t = saop_validate_errors_text(e);

	ck_assert_str_eq(t, "/a: too long; (root): required property 'x' is "
	    "missing; /ab: /a: odd");
	free(t);
	json_decref(e);
}
END_TEST

START_TEST(no_errors_render_as_an_empty_text)
{
	json_t *e = json_array();
	char *t = saop_validate_errors_text(e);

	ck_assert_str_eq(t, "");
	free(t);
	json_decref(e);
}
END_TEST

START_TEST(the_correction_request_ends_with_the_answer_and_the_prompt)
{
	json_t *req = errs("{\"model\": \"m\", \"max_tokens\": 9, \"messages\":"
	    " [{\"role\": \"user\", \"content\": \"hi\"}]}");
	json_t *e = errs("[{\"path\": \"/saop\", \"keyword\": \"const\", "
	    "\"message\": \"must be \\\"1.0\\\"\"}]");
	struct saop_err err;
	json_t *c, *msgs;

	c = saop_correction_request(req, "{\"saop\": 2}", 11, e, &err);
	ck_assert_ptr_nonnull(c);
	msgs = json_object_get(c, "messages");
	ck_assert_uint_eq(json_array_size(msgs), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(c, "max_tokens")),
	    9);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(msgs,
	    1), "role")), "assistant");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(msgs,
	    1), "content")), "{\"saop\": 2}");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(msgs,
	    2), "content")), "Your previous response was not valid SAOP JSON. "
	    "Errors: /saop: must be \"1.0\". Please restate your complete "
	    "response starting from '{'.\n\n```json\n[{\"path\":\"/saop\","
	    "\"keyword\":\"const\",\"message\":\"must be \\\"1.0\\\"\"}]\n```");
	/* The record's own request is not changed. */
	ck_assert_uint_eq(json_array_size(json_object_get(req, "messages")), 1);
	json_decref(c);
	json_decref(req);
	json_decref(e);
}
END_TEST

START_TEST(an_answer_that_is_not_utf8_is_sent_with_replacement_characters)
{
	json_t *e = json_array(), *c;
	struct saop_err err;

	c = saop_correction_request(NULL, "a\xff" "b", 3, e, &err);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(c, "messages"), 0), "content")), "a\xef\xbf\xbd" "b");
	json_decref(c);
	json_decref(e);
}
END_TEST

START_TEST(messages_that_are_not_an_array_are_a_data_error)
{
	json_t *req = json_pack("{s:s}", "messages", "hi"), *e = json_array();
	struct saop_err err;

	ck_assert_ptr_null(saop_correction_request(req, "x", 1, e, &err));
	ck_assert_int_eq(err.code, SAOP_EDATA);
	ck_assert_ptr_nonnull(strstr(err.msg, "messages"));
	json_decref(req);
	json_decref(e);
}
END_TEST

START_TEST(a_request_that_is_not_an_object_is_a_data_error)
{
	json_t *req = json_string("x"), *e = json_array();
	struct saop_err err;

	ck_assert_ptr_null(saop_correction_request(req, "", 0, e, &err));
	ck_assert_int_eq(err.code, SAOP_EDATA);
	json_decref(req);
	json_decref(e);
}
END_TEST

/* Check text against the envelope; returns the verdict. */
static int
check(const char *text, size_t len, int no_repair, json_t **errors,
    json_t **repairs)
{
	struct saop_err e;
	struct saop_schema *s = saop_schema_envelope_v1(&e);
	json_t *v;
	int rc;

	ck_assert_ptr_nonnull(s);
	rc = saop_validate_text(s, no_repair, text, len, &v, errors, repairs,
	    &e);
	ck_assert_int_ge(rc, 0);
	ck_assert_int_eq(rc == 1, v != NULL);
	json_decref(v);
	saop_schema_free(s);
	return rc;
}

static const char *
first_message(const json_t *errors)
{
	return json_string_value(json_object_get(json_array_get(errors, 0),
	    "message"));
}

/* The one error of text (len bytes): its keyword and message. */
static void
one_error(const char *text, size_t len, int no_repair, const char *keyword,
    const char *words)
{
	json_t *errors, *repairs;

	ck_assert_int_eq(check(text, len, no_repair, &errors, &repairs), 0);
	ck_assert_uint_eq(json_array_size(errors), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    errors, 0), "keyword")), keyword);
	ck_assert_msg(strstr(first_message(errors), words) != NULL, "%s",
	    first_message(errors));
	json_decref(errors);
	json_decref(repairs);
}

START_TEST(what_jansson_cannot_hold_is_a_limit_named_as_such)
{
	/* A key holding \u0000: never repaired, named. */
	one_error("{\"a\\u0000\": 1}", 14, 0, "limit",
	    "an object key holding \\u0000");
	/* A number past a double, whole or cut. */
	one_error("[1e999]", 7, 0, "limit", "a number beyond what jansson");
	one_error("[1e999, ", 8, 0, "limit", "a number beyond what jansson");
	/* Without repair, a cut answer is still named as cut. */
	one_error("{\"a\": tru", 9, 1, "syntax", "cut off after byte 5");
}
END_TEST

START_TEST(a_number_past_64_bits_is_judged_by_the_schema_as_a_double)
{
	const char *t = "{\"saop\": \"1.0\", \"turn_index\": "
	    "123456789012345678901234567890, \"agent_role\": \"developer\", "
	    "\"thought\": 7, \"action\": null}";

	one_error(t, strlen(t), 0, "type", "/thought: expected string");
	one_error(t, strlen(t), 1, "type", "/thought: expected string");
}
END_TEST

START_TEST(an_error_reads_as_path_then_message_once)
{
	json_t *err = json_object();
	char *t;

	/* Neither path nor message: the root, "invalid". */
	ck_assert_ptr_nonnull(t = saop_validate_error_text(err));
	ck_assert_str_eq(t, "(root): invalid");
	free(t);
	/* A message that names its path already is not prefixed twice. */
	json_object_set_new(err, "path", json_string("/a"));
	json_object_set_new(err, "message", json_string("/a: too small"));
	ck_assert_ptr_nonnull(t = saop_validate_error_text(err));
	ck_assert_str_eq(t, "/a: too small");
	free(t);
	json_object_set_new(err, "message", json_string("/ab: too small"));
	ck_assert_ptr_nonnull(t = saop_validate_error_text(err));
	ck_assert_str_eq(t, "/a: /ab: too small");
	free(t);
	json_decref(err);
}
END_TEST

START_TEST(a_syntax_error_names_line_column_and_byte)
{
	json_t *errors, *repairs;

	ck_assert_int_eq(check("{\n \"a\": tru }", 13, 0, &errors, &repairs),
	    0);
	ck_assert_uint_eq(json_array_size(errors), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    errors, 0), "keyword")), "syntax");
	ck_assert_msg(strstr(first_message(errors), "line 2, column ") !=
	    NULL && strstr(first_message(errors), "(byte ") != NULL,
	    "%s", first_message(errors));
	json_decref(errors);
	json_decref(repairs);
}
END_TEST

START_TEST(a_truncated_answer_says_it_is_cut_off)
{
	json_t *errors, *repairs;

	ck_assert_int_eq(check("{\"saop\": \"1.", 12, 0, &errors, &repairs),
	    0);
	ck_assert_msg(strstr(first_message(errors), "cut off") != NULL, "%s",
	    first_message(errors));
	json_decref(errors);
	json_decref(repairs);
	ck_assert_int_eq(check("  ", 2, 0, &errors, &repairs), 0);
	ck_assert_str_eq(first_message(errors), "the response is empty");
	json_decref(errors);
	json_decref(repairs);
}
END_TEST

START_TEST(nesting_beyond_jansson_is_named_as_a_limit)
{
	char deep[3000 * 2];
	json_t *errors, *repairs;

	memset(deep, '[', 3000);
	memset(deep + 3000, ']', 3000);
	ck_assert_int_eq(check(deep, sizeof(deep), 0, &errors, &repairs), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    errors, 0), "keyword")), "limit");
	ck_assert_msg(strstr(first_message(errors), "2048") != NULL, "%s",
	    first_message(errors));
	json_decref(errors);
	json_decref(repairs);
}
END_TEST

START_TEST(an_integer_beyond_64_bits_is_accepted_and_kept_exactly)
{
	const char *t = "{\"saop\": \"1.0\", \"turn_index\": "
	    "123456789012345678901234567890, \"agent_role\": \"developer\", "
	    "\"thought\": \"x\", \"action\": null}";
	const char *neg = "{\"turn_index\": -123456789012345678901234567890}";
	json_t *errors, *repairs, *value;
	struct saop_err e;
	struct saop_schema *env = saop_schema_envelope_v1(&e);

	ck_assert_ptr_nonnull(env);
	ck_assert_int_eq(saop_validate_text(env, 0, t, strlen(t), &value,
	    &errors, &repairs, &e), 1);
	ck_assert(saop_record_verbatim(json_object_get(value, "turn_index")));
	ck_assert_ptr_nonnull(memmem(json_string_value(json_object_get(value,
	    "turn_index")), json_string_length(json_object_get(value,
	    "turn_index")), ":123456789012345678901234567890", 31));
	json_decref(value);
	json_decref(errors);
	json_decref(repairs);
	saop_schema_free(env);
	/* Judged by the schema like any number: here, a required missing. */
	ck_assert_int_eq(check(neg, strlen(neg), 0, &errors, &repairs), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    errors, 0), "keyword")), "required");
	json_decref(errors);
	json_decref(repairs);
}
END_TEST

START_TEST(several_schema_errors_come_back_at_once_with_pointers)
{
	const char *t = "{\"saop\": \"1.0\", \"turn_index\": -1, "
	    "\"agent_role\": \"cook\", \"thought\": 3, \"action\": null}";
	json_t *errors, *repairs, *err;
	size_t i;
	int seen = 0;

	ck_assert_int_eq(check(t, strlen(t), 0, &errors, &repairs), 0);
	json_array_foreach(errors, i, err) {
		const char *p = json_string_value(json_object_get(err, "path"));

		seen |= strcmp(p, "/turn_index") == 0 ? 1 :
		    strcmp(p, "/agent_role") == 0 ? 2 :
		    strcmp(p, "/thought") == 0 ? 4 : 0;
	}
	ck_assert_int_eq(seen, 7);
	json_decref(errors);
	json_decref(repairs);
}
END_TEST

START_TEST(a_repaired_answer_lists_its_repairs_and_no_repair_turns_it_off)
{
	const char *t = "```json\n{saop: '1.0', turn_index: 0, agent_role: "
	    "'developer', thought: 'x', action: None,}\n```";
	json_t *errors, *repairs;

	ck_assert_int_eq(check(t, strlen(t), 0, &errors, &repairs), 1);
	ck_assert_uint_eq(json_array_size(errors), 0);
	ck_assert_uint_eq(json_array_size(repairs), 5);
	json_decref(errors);
	json_decref(repairs);
	ck_assert_int_eq(check(t, strlen(t), 1, &errors, &repairs), 0);
	ck_assert_uint_eq(json_array_size(repairs), 0);
	json_decref(errors);
	json_decref(repairs);
}
END_TEST

/*
 * The stand-in model (unit_model_call(), in m) counting the bytes of the
 * calls it answered: the turns a correction adds, and its answers.
 */
struct script {
	struct unit_model m;
	size_t sent;		/* the bytes of the turns it got, answered */
	size_t received;	/* the bytes it answered */
};

/*
 * The bytes of the last two turns of request (the answer and the
 * correction text, the turns a correction adds).
 */
static size_t
turn_bytes(const json_t *request)
{
	const json_t *m = json_object_get(request, "messages");
	size_t n = json_array_size(m);

	ck_assert_uint_ge(n, 2);
	return json_string_length(json_object_get(json_array_get(m, n - 2),
	    "content")) + json_string_length(json_object_get(
	    json_array_get(m, n - 1), "content"));
}

/*
 * unit_model_call() on s->m, then the bytes of a call answered counted
 * (the requests not kept).  Returns unit_model_call()'s return.
 */
static int
fake_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct script *s = arg;
	int r = unit_model_call(&s->m, request, a, e);

	json_decref(s->m.last);
	s->m.last = NULL;
	if (r == 0) {
		s->sent += turn_bytes(request);
		s->received += a->raw_len;
	}
	return r;
}

/*
 * Run the protocol on one record whose raw is raw.  Returns the state of
 * its outcome, or the negative code of a failure.
 */
static int
run(const char *raw, struct script *sc, int max, json_t **rec)
{
	struct saop_validate_opts o;
	struct saop_validate_outcome oc;
	struct saop_err e;
	int rc;

	memset(&o, 0, sizeof(o));
	o.schema = saop_schema_envelope_v1(&e);
	o.max_retries = max;
	o.model.call = fake_call;
	o.model.arg = sc;
	*rec = json_pack("{s:s, s:s}", "task_id", "t", "raw", raw);
	rc = saop_validate_record(*rec, &o, &oc, &e);
	saop_schema_free((struct saop_schema *)o.schema);
	return rc < 0 ? rc : (int)oc.state;
}

/* rec.validate.attempts.  Returns it, 0 when there is none. */
static int
attempts(const json_t *rec)
{
	return (int)json_integer_value(json_object_get(json_object_get(rec,
	    "validate"), "attempts"));
}

/* rec.validate's member name (borrowed), or NULL. */
static const json_t *
vmember(const json_t *rec, const char *name)
{
	return json_object_get(json_object_get(rec, "validate"), name);
}

/* rec.validate's member name as an integer (asserted to be one). */
static json_int_t
vcount(const json_t *rec, const char *name)
{
	ck_assert_msg(json_is_integer(vmember(rec, name)), "%s", name);
	return json_integer_value(vmember(rec, name));
}

/* The record without its envelope, as text, for comparing. */
static char *
record_text(json_t *rec)
{
	json_object_del(rec, "envelope");
	return json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
}

START_TEST(validating_only_gives_what_validating_gives_without_envelope)
{
	static const char *const schemas[] = {
		"{\"type\": \"array\", \"items\": {\"type\": \"integer\"}, "
		    "\"minItems\": 1, \"maxItems\": 3}",
		"{\"items\": {\"pattern\": \"^a\"}}",
		"{\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/i\"}, "
		    "\"$defs\": {\"i\": {\"minimum\": 0}}}",
		"{\"type\": \"array\", \"items\": false}",
		"{\"type\": \"array\", \"prefixItems\": [true], "
		    "\"items\": {\"type\": \"integer\"}}",
	};
	static const char *const raws[] = {
		"[1, 2]", "[]", "[1, 2, 3, 4]", "[1, \"a\"]", "[\"ab\", \"b\"]",
		"[\"ab\", \"abc\"]", "[1, -1]", "{\"a\": 1}", "[1, 2,]",
		"[1, 99999999999999999999]", "[1 2]", "5", "[0.5, 2]",
	};
	struct saop_validate_opts o;
	struct saop_err e;
	size_t i, j;

	for (i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++) {
		json_t *sj = json_loads(schemas[i], 0, NULL);

		ck_assert_ptr_nonnull(sj);
		memset(&o, 0, sizeof(o));
		o.schema = saop_schema_compile(sj, NULL, NULL, &e);
		ck_assert_ptr_nonnull(o.schema);
		for (j = 0; j < sizeof(raws) / sizeof(raws[0]); j++) {
			json_t *a = json_pack("{s:s}", "raw", raws[j]);
			json_t *b = json_deep_copy(a);
			struct saop_validate_outcome oa, ob;
			char *ta, *tb;

			o.no_envelope = 0;
			ck_assert_int_eq(saop_validate_record(a, &o, &oa, &e),
			    0);
			o.no_envelope = 1;
			ck_assert_int_eq(saop_validate_record(b, &o, &ob, &e),
			    0);
			ck_assert_int_eq(oa.state, ob.state);
			ck_assert_int_eq(oa.valid, ob.valid);
			ck_assert_ptr_null(json_object_get(b, "envelope"));
			ck_assert_int_eq(json_object_get(a, "envelope") != NULL,
			    oa.state == SAOP_STATE_OK);
			ta = record_text(a);
			tb = record_text(b);
			ck_assert_msg(strcmp(ta, tb) == 0, "%s on %s: %s / %s",
			    schemas[i], raws[j], ta, tb);
			free(ta);
			free(tb);
			json_decref(a);
			json_decref(b);
		}
		saop_schema_free((struct saop_schema *)o.schema);
		json_decref(sj);
	}
}
END_TEST

START_TEST(a_valid_answer_makes_no_call)
{
	struct script sc = { { NULL, 0, 0, 0, 0, 0, NULL, 0 }, 0, 0 };
	json_t *rec;

	ck_assert_int_eq(run(good, &sc, 2, &rec), SAOP_STATE_OK);
	ck_assert_int_eq(sc.m.calls, 0);
	ck_assert_int_eq(attempts(rec), 0);
	/* No call, no cost. */
	ck_assert_ptr_null(vmember(rec, "sent_bytes"));
	ck_assert_ptr_null(vmember(rec, "prompt_tokens"));
	ck_assert_str_eq(json_string_value(json_object_get(rec, "state")),
	    "OK");
	json_decref(rec);
}
END_TEST

START_TEST(a_corrected_answer_counts_its_attempts_and_replaces_raw)
{
	static const char *const answers[] = { "{\"saop\": 1}", good };
	struct script sc = { { answers, UNIT_N(answers), 0, 0, 0, 0, NULL, 0 },
	    0, 0 };
	json_t *rec;

	ck_assert_int_eq(run("nope", &sc, 2, &rec), SAOP_STATE_OK);
	ck_assert_int_eq(sc.m.calls, 2);
	ck_assert_int_eq(attempts(rec), 2);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "raw")), good);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(rec,
	    "validate"), "original_raw")), "nope");
	ck_assert_ptr_nonnull(json_object_get(rec, "envelope"));
	json_decref(rec);
}
END_TEST

START_TEST(the_cost_of_the_correction_turns_is_what_the_model_saw)
{
	static const char *const answers[] = { "{\"saop\": 1}", good };
	struct script sc = { { answers, UNIT_N(answers), 0, 0, 0, 0, NULL, 1 },
	    0, 0 };
	json_t *rec;

	ck_assert_int_eq(run("nope", &sc, 2, &rec), SAOP_STATE_OK);
	ck_assert_int_eq(sc.m.calls, 2);
	ck_assert_uint_gt(sc.sent, 0);
	ck_assert_int_eq(vcount(rec, "sent_bytes"), (json_int_t)sc.sent);
	ck_assert_int_eq(vcount(rec, "received_bytes"),
	    (json_int_t)sc.received);
	ck_assert_int_eq(vcount(rec, "received_bytes"),
	    (json_int_t)(strlen(answers[0]) + strlen(good)));
	ck_assert_int_eq(vcount(rec, "prompt_tokens"), 10 + 20);
	ck_assert_int_eq(vcount(rec, "completion_tokens"), 1 + 2);
	json_decref(rec);
}
END_TEST

START_TEST(a_model_that_reports_no_usage_leaves_the_tokens_null)
{
	static const char *const answers[] = { good };
	struct script sc = { { answers, UNIT_N(answers), 0, 0, 0, 0, NULL, 0 },
	    0, 0 };
	json_t *rec;

	ck_assert_int_eq(run("nope", &sc, 2, &rec), SAOP_STATE_OK);
	ck_assert_int_eq(vcount(rec, "sent_bytes"), (json_int_t)sc.sent);
	ck_assert_int_eq(vcount(rec, "received_bytes"),
	    (json_int_t)strlen(good));
	ck_assert(json_is_null(vmember(rec, "prompt_tokens")));
	ck_assert(json_is_null(vmember(rec, "completion_tokens")));
	json_decref(rec);
}
END_TEST

START_TEST(an_escalated_record_and_a_failed_call_count_the_turns_answered)
{
	static const char *const no[] = { "no", "{\"saop\": 1}" };
	static const char *const one[] = { "{\"saop\": 1}" };
	struct script esc = { { no, UNIT_N(no), 0, 0, 0, 0, NULL, 1 }, 0, 0 };
	struct script cut = { { one, UNIT_N(one), 0, 2, 0, 0, NULL, 1 },
	    0, 0 };
	json_t *rec;

	ck_assert_int_eq(run("nope", &esc, 2, &rec),
	    SAOP_STATE_USER_ESCALATION);
	ck_assert_int_eq(vcount(rec, "sent_bytes"), (json_int_t)esc.sent);
	ck_assert_int_eq(vcount(rec, "received_bytes"),
	    (json_int_t)esc.received);
	ck_assert_int_eq(vcount(rec, "prompt_tokens"), 30);
	json_decref(rec);
	/* The second call fails: the first is what the record cost. */
	ck_assert_int_eq(run("nope", &cut, 2, &rec), -SAOP_ENETWORK);
	ck_assert_int_eq(attempts(rec), 1);
	ck_assert_int_eq(vcount(rec, "sent_bytes"), (json_int_t)cut.sent);
	ck_assert_int_eq(vcount(rec, "received_bytes"),
	    (json_int_t)strlen(one[0]));
	ck_assert_int_eq(vcount(rec, "prompt_tokens"), 10);
	ck_assert_int_eq(vcount(rec, "completion_tokens"), 1);
	json_decref(rec);
}
END_TEST

START_TEST(each_correction_answer_is_an_event_with_its_own_cost)
{
	static const char *const answers[] = { "{\"saop\": 1}", good };
	struct script sc = { { answers, UNIT_N(answers), 0, 0, 0, 0, NULL, 1 },
	    0, 0 };
	char dir[] = "/tmp/check_validate.XXXXXX", path[64], cmd[96];
	struct saop_validate_opts o;
	struct saop_validate_outcome oc;
	struct saop_err e;
	sqlite3_stmt *st;
	json_t *rec;
	int n = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.sqlite", dir);
	memset(&o, 0, sizeof(o));
	o.schema = saop_schema_envelope_v1(&e);
	o.max_retries = 2;
	o.model.call = fake_call;
	o.model.arg = &sc;
	ck_assert_ptr_nonnull(o.store = saop_store_open(path, &e));
	rec = json_pack("{s:s, s:i, s:s}", "task_id", "t", "turn", 3, "raw",
	    "nope");
	ck_assert_int_eq(saop_validate_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(oc.state, SAOP_STATE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(o.store),
	    "SELECT turn, json_extract(data, '$.attempt'),"
	    " json_extract(data, '$.sent_bytes'),"
	    " json_extract(data, '$.received_bytes'),"
	    " json_extract(data, '$.prompt_tokens'),"
	    " json_extract(data, '$.completion_tokens')"
	    " FROM events WHERE event = '" SAOP_EVENT_CORRECTION_ANSWERED "'"
	    " ORDER BY rowid", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		n++;
		ck_assert_int_eq(sqlite3_column_int(st, 0), 3);
		ck_assert_int_eq(sqlite3_column_int(st, 1), n);
		ck_assert_int_gt(sqlite3_column_int(st, 2), 0);
		ck_assert_int_eq(sqlite3_column_int(st, 3),
		    (int)strlen(answers[n - 1]));
		ck_assert_int_eq(sqlite3_column_int(st, 4), 10 * n);
		ck_assert_int_eq(sqlite3_column_int(st, 5), n);
	}
	sqlite3_finalize(st);
	ck_assert_int_eq(n, 2);
	/* The events sum to what the record says. */
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(o.store),
	    "SELECT total(json_extract(data, '$.sent_bytes')) FROM events"
	    " WHERE event = '" SAOP_EVENT_CORRECTION_ANSWERED "'", -1, &st,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int64(st, 0),
	    vcount(rec, "sent_bytes"));
	ck_assert_int_eq(sqlite3_column_int64(st, 0), (sqlite3_int64)sc.sent);
	sqlite3_finalize(st);
	saop_store_close(o.store);
	saop_schema_free((struct saop_schema *)o.schema);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	json_decref(rec);
}
END_TEST

START_TEST(exhausted_retries_escalate_with_the_last_errors)
{
	static const char *const answers[] = { "no", "{\"saop\": 1}" };
	struct script sc = { { answers, UNIT_N(answers), 0, 0, 0, 0, NULL, 0 },
	    0, 0 };
	json_t *rec, *errors;

	ck_assert_int_eq(run("nope", &sc, 2, &rec), SAOP_STATE_USER_ESCALATION);
	ck_assert_int_eq(sc.m.calls, 2);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "state")),
	    "USER_ESCALATION");
	errors = json_object_get(json_object_get(rec, "validate"), "errors");
	ck_assert_uint_gt(json_array_size(errors), 1);	/* schema, not syntax */
	ck_assert_ptr_null(json_object_get(rec, "envelope"));
	json_decref(rec);
}
END_TEST

START_TEST(zero_retries_escalate_without_a_call)
{
	struct script sc = { { NULL, 0, 0, 0, 0, 0, NULL, 0 }, 0, 0 };
	json_t *rec;

	ck_assert_int_eq(run("nope", &sc, 0, &rec), SAOP_STATE_USER_ESCALATION);
	ck_assert_int_eq(sc.m.calls, 0);
	json_decref(rec);
}
END_TEST

START_TEST(a_failed_call_leaves_the_record_as_it_stands)
{
	static const char *const answers[] = { "{\"saop\": 1}" };
	struct script sc = { { answers, UNIT_N(answers), 0, 2, 0, 0, NULL, 0 },
	    0, 0 };
	json_t *rec;

	ck_assert_int_eq(run("nope", &sc, 2, &rec), -SAOP_ENETWORK);
	ck_assert_int_eq(attempts(rec), 1);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "state")),
	    "INVALID");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "raw")),
	    "{\"saop\": 1}");
	json_decref(rec);
}
END_TEST

/* A stand-in model (struct script) and a watch on the record it sees. */
struct watched {
	struct script sc;	/* the answers (fake_call()) */
	struct unit_watch w;	/* the record (unit_watch_call()) */
};

/*
 * Run the protocol on a record whose raw is raw through w's watch
 * (max retries, close as given), out filled.  Returns its return.
 */
static int
run_watched(struct watched *w, const char *raw, int max, int close,
    struct saop_validate_outcome *out)
{
	struct saop_validate_opts o;
	struct saop_err e;
	int rc;

	memset(&o, 0, sizeof(o));
	o.schema = saop_schema_envelope_v1(&e);
	o.max_retries = max;
	o.close = close;
	w->w.model.call = fake_call;
	w->w.model.arg = &w->sc;
	o.model.call = unit_watch_call;
	o.model.arg = &w->w;
	unit_watch_begin(&w->w, json_pack("{s:s, s:i, s:s}", "task_id", "t",
	    "turn", 2, "raw", raw));
	rc = saop_validate_record(w->w.rec, &o, out, &e);
	saop_schema_free((struct saop_schema *)o.schema);
	unit_watch_end(&w->w);
	return rc;
}

/*
 * The record is written once, after the protocol: every correction call
 * finds it as it came; and the outcome returned is what was written.
 */
START_TEST(the_record_is_written_once_with_the_outcome_returned)
{
	static const char *const answers[] = { "{\"saop\": 1}", "no", good };
	static const char *const no[] = { "no" };
	struct watched w;
	struct saop_validate_outcome oc;
	const json_t *v;

	memset(&w, 0, sizeof(w));
	w.sc.m.answers = answers;
	w.sc.m.n = UNIT_N(answers);
	w.sc.m.usage = 1;
	ck_assert_int_eq(run_watched(&w, "nope", 3, 0, &oc), 0);
	ck_assert_int_eq(w.sc.m.calls, 3);
	ck_assert_int_eq(w.w.changed, 0);
	v = json_object_get(w.w.rec, "validate");
	ck_assert_int_eq(oc.state, SAOP_STATE_OK);
	ck_assert_str_eq(json_string_value(json_object_get(w.w.rec, "state")),
	    "OK");
	ck_assert(oc.valid && json_is_true(json_object_get(v, "valid")));
	ck_assert_int_eq(oc.attempts, 3);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "attempts")),
	    3);
	ck_assert_ptr_null(oc.errors);
	ck_assert_int_eq(oc.cost.calls, 3);
	ck_assert_uint_eq(oc.cost.sent_bytes, w.sc.sent);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "sent_bytes")),
	    (json_int_t)w.sc.sent);
	ck_assert_uint_eq(oc.cost.received_bytes, w.sc.received);
	ck_assert_int_eq(oc.cost.prompt_tokens, 10 + 20 + 30);
	ck_assert_int_eq(oc.cost.completion_tokens, 1 + 2 + 3);
	ck_assert_int_eq(json_integer_value(json_object_get(v,
	    "completion_tokens")), 6);
	ck_assert_str_eq(json_string_value(json_object_get(w.w.rec, "raw")),
	    good);
	json_decref(w.w.rec);

	/* Escalated: the errors returned are the record's. */
	memset(&w, 0, sizeof(w));
	w.sc.m.answers = no;
	w.sc.m.n = UNIT_N(no);
	ck_assert_int_eq(run_watched(&w, "nope", 1, 0, &oc), 0);
	ck_assert_int_eq(w.w.changed, 0);
	v = json_object_get(w.w.rec, "validate");
	ck_assert_int_eq(oc.state, SAOP_STATE_USER_ESCALATION);
	ck_assert_int_eq(oc.valid, 0);
	ck_assert_int_eq(oc.attempts, 1);
	ck_assert_ptr_nonnull(oc.errors);
	ck_assert_ptr_eq(oc.errors, json_object_get(v, "errors"));
	json_decref(w.w.rec);

	/* Closed locally (no call): closed and the repairs, as written. */
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(run_watched(&w, "{\"saop\": \"1.0\", \"turn_index\": "
	    "0, \"agent_role\": \"developer\", \"thought\": \"t\", "
	    "\"action\": null", 0, 1, &oc), 0);
	ck_assert_int_eq(w.sc.m.calls, 0);
	v = json_object_get(w.w.rec, "validate");
	ck_assert_int_eq(oc.state, SAOP_STATE_OK);
	ck_assert_int_eq(oc.closed, 1);
	ck_assert(json_is_true(json_object_get(v, "closed")));
	ck_assert_uint_ge(oc.repairs, 1);
	ck_assert_uint_eq(oc.repairs, json_array_size(json_object_get(v,
	    "repairs")));
	json_decref(w.w.rec);
}
END_TEST

/*
 * An answer with a BOM, a fenced block that is not JSON and no '{' or '['
 * gets the error the scanner gives for what the model wrote (issue 8,
 * defect 1: it was "the response is empty").
 */
START_TEST(a_bom_and_a_fence_without_json_get_the_scanners_error)
{
	static const char text[] = "\xef\xbb\xbf```\nabc\n```";
	json_t *errors, *repairs;

	ck_assert_int_eq(check(text, sizeof(text) - 1, 0, &errors, &repairs),
	    0);
	ck_assert_uint_eq(json_array_size(errors), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    errors, 0), "keyword")), "syntax");
	ck_assert_msg(strstr(first_message(errors), "line 1, column 4 "
	    "(byte 3)") != NULL, "%s", first_message(errors));
	ck_assert_str_eq(json_string_value(json_array_get(repairs, 0)), "bom");
	json_decref(errors);
	json_decref(repairs);
}
END_TEST

/*
 * Is every value in v held by v alone (reference count 1)?  A value with a
 * second reference nobody holds is never freed.  The first such value's
 * path goes into where.
 */
static int
owned_once(json_t *v, char *where, size_t size)
{
	const char *key;
	size_t i, n = strlen(where);
	json_t *x;

	if (json_is_true(v) || json_is_false(v) || json_is_null(v))
		return 1;		/* static: not counted */
	if (v->refcount != 1)
		return 0;
	json_object_foreach(v, key, x) {
		snprintf(where + n, size - n, "/%s", key);
		if (!owned_once(x, where, size))
			return 0;
	}
	json_array_foreach(v, i, x) {
		snprintf(where + n, size - n, "/%zu", i);
		if (!owned_once(x, where, size))
			return 0;
	}
	where[n] = '\0';
	return 1;
}

/*
 * Validating a record leaves no jansson value behind once the record is
 * freed: not for a record without raw (issue 8, defect 9: 127 MB for a
 * million of them), nor for valid, repaired or invalid ones.
 */
START_TEST(validating_a_record_leaks_no_json_value)
{
	static const char *const recs[] = {
		"{\"task_id\": \"x\"}",
		"{\"task_id\": \"x\", \"raw\": 5}",
		"{\"raw\": \"{\\\"saop\\\": \\\"1.0\\\", \\\"turn_index\\\": 0, "
		    "\\\"agent_role\\\": \\\"developer\\\", \\\"thought\\\": "
		    "\\\"t\\\", \\\"action\\\": null,}\"}",
		"{\"raw\": \"{\\\"saop\\\": 1}\"}",
		"{\"raw\": \"nope\"}"
	};
	struct saop_validate_opts o;
	struct saop_validate_outcome oc;
	struct saop_err e;
	char where[256];
	size_t i;
	json_t *rec;

	memset(&o, 0, sizeof(o));
	o.schema = saop_schema_envelope_v1(&e);
	ck_assert_ptr_nonnull(o.schema);
	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		rec = json_loads(recs[i], 0, NULL);
		ck_assert_ptr_nonnull(rec);
		ck_assert_int_eq(saop_validate_record(rec, &o, &oc, &e), 0);
		ck_assert_ptr_nonnull(json_object_get(rec, "validate"));
		where[0] = '\0';
		ck_assert_msg(owned_once(rec, where, sizeof(where)),
		    "%s: the record's %s has a reference nobody holds",
		    recs[i], where);
		json_decref(rec);
	}
	saop_schema_free((struct saop_schema *)o.schema);
}
END_TEST

/*
 * A valid answer too deep for the schema's evaluation limit is a record
 * verdict: INVALID with one "limit" error, exit status 1 for the tool
 * (issue 8, defect 12: no state and no validate, and the run stopped).
 */
START_TEST(an_answer_past_the_evaluation_limit_is_an_invalid_record)
{
	struct saop_validate_opts o;
	struct saop_validate_outcome oc;
	struct saop_err e;
	json_t *doc, *rec, *v, *err;
	char *raw, *p;
	size_t i, depth = 2040;

	memset(&o, 0, sizeof(o));
	doc = json_loads("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"$ref\": \"#\"}}}", 0, NULL);
	ck_assert_ptr_nonnull(doc);
	o.schema = saop_schema_compile(doc, NULL, NULL, &e);
	ck_assert_ptr_nonnull(o.schema);
	json_decref(doc);
	ck_assert_ptr_nonnull(raw = p = malloc(depth * 6 + 3));
	for (i = 0; i < depth; i++, p += 5)
		memcpy(p, "{\"a\":", 5);
	*p++ = '{';
	*p++ = '}';
	memset(p, '}', depth);
	p[depth] = '\0';
	rec = json_pack("{s:s, s:s}", "task_id", "t", "raw", raw);
	ck_assert_int_eq(saop_validate_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(oc.state, SAOP_STATE_INVALID);
	ck_assert_int_eq(oc.valid, 0);
	ck_assert_uint_eq(json_array_size(oc.errors), 1);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "state")),
	    "INVALID");
	v = json_object_get(rec, "validate");
	ck_assert(json_is_false(json_object_get(v, "valid")));
	ck_assert_uint_eq(json_array_size(json_object_get(v, "errors")), 1);
	err = json_array_get(json_object_get(v, "errors"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(err, "keyword")),
	    "limit");
	ck_assert(strncmp(json_string_value(json_object_get(err, "path")),
	    "/a/a/a/", 7) == 0);
	json_decref(rec);
	free(raw);
	saop_schema_free((struct saop_schema *)o.schema);
}
END_TEST

static Suite *
validate_suite(void)
{
	Suite *s = suite_create("validate");
	TCase *tc = tcase_create("validate");

	tcase_add_test(tc,
	    errors_are_rendered_as_path_colon_message_joined_by_semicolons);
	tcase_add_test(tc, a_message_that_names_its_path_is_not_prefixed_twice);
	tcase_add_test(tc, no_errors_render_as_an_empty_text);
	tcase_add_test(tc,
	    the_correction_request_ends_with_the_answer_and_the_prompt);
	tcase_add_test(tc,
	    an_answer_that_is_not_utf8_is_sent_with_replacement_characters);
	tcase_add_test(tc, a_request_that_is_not_an_object_is_a_data_error);
	tcase_add_test(tc, messages_that_are_not_an_array_are_a_data_error);
	tcase_add_test(tc, what_jansson_cannot_hold_is_a_limit_named_as_such);
	tcase_add_test(tc,
	    a_number_past_64_bits_is_judged_by_the_schema_as_a_double);
	tcase_add_test(tc, an_error_reads_as_path_then_message_once);
	tcase_add_test(tc, a_syntax_error_names_line_column_and_byte);
	tcase_add_test(tc, a_truncated_answer_says_it_is_cut_off);
	tcase_add_test(tc, nesting_beyond_jansson_is_named_as_a_limit);
	tcase_add_test(tc,
	    an_integer_beyond_64_bits_is_accepted_and_kept_exactly);
	tcase_add_test(tc,
	    several_schema_errors_come_back_at_once_with_pointers);
	tcase_add_test(tc,
	    a_repaired_answer_lists_its_repairs_and_no_repair_turns_it_off);
	tcase_add_test(tc,
	    validating_only_gives_what_validating_gives_without_envelope);
	tcase_add_test(tc, a_valid_answer_makes_no_call);
	tcase_add_test(tc,
	    a_corrected_answer_counts_its_attempts_and_replaces_raw);
	tcase_add_test(tc,
	    the_cost_of_the_correction_turns_is_what_the_model_saw);
	tcase_add_test(tc,
	    a_model_that_reports_no_usage_leaves_the_tokens_null);
	tcase_add_test(tc,
	    an_escalated_record_and_a_failed_call_count_the_turns_answered);
	tcase_add_test(tc, each_correction_answer_is_an_event_with_its_own_cost);
	tcase_add_test(tc, exhausted_retries_escalate_with_the_last_errors);
	tcase_add_test(tc, zero_retries_escalate_without_a_call);
	tcase_add_test(tc, a_failed_call_leaves_the_record_as_it_stands);
	tcase_add_test(tc,
	    the_record_is_written_once_with_the_outcome_returned);
	tcase_add_test(tc,
	    a_bom_and_a_fence_without_json_get_the_scanners_error);
	tcase_add_test(tc, validating_a_record_leaks_no_json_value);
	tcase_add_test(tc,
	    an_answer_past_the_evaluation_limit_is_an_invalid_record);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(validate_suite());
}
