/*
 * check_structured.c: unit tests for the user's schema end to end:
 * lib/llm-schema.c (OpenAI's strict subset, the field per wire format,
 * continuations, the refusal fallback) and the correction text of
 * lib/validate.c for schemas other than the envelope.
 */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "llm-int.h"
#include "unit.h"

/* A JSON value from text, or the test fails. */
static json_t *
js(const char *text)
{
	json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);

	ck_assert_ptr_nonnull(v);
	return v;
}

/* Is text strict for OpenAI?  1 or 0. */
static int
strict(const char *text)
{
	json_t *s = js(text);
	int r = saop_schema_openai_strict(s);

	json_decref(s);
	return r;
}

START_TEST(only_closed_objects_with_every_property_required_are_strict)
{
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"], "
	    "\"additionalProperties\": false}"), 1);
	/* Not closed. */
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"]}"), 0);
	/* A property not required. */
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"type\": \"string\"}, \"b\": {}}, \"required\": "
	    "[\"a\"], \"additionalProperties\": false}"), 0);
	/* A nested object not closed. */
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"type\": \"object\"}}, \"required\": [\"a\"], "
	    "\"additionalProperties\": false}"), 0);
	/* Root not an object, or a union at the root. */
	ck_assert_int_eq(strict("{\"type\": \"array\", \"items\": "
	    "{\"type\": \"string\"}}"), 0);
	ck_assert_int_eq(strict("{\"type\": \"object\", \"anyOf\": [], "
	    "\"additionalProperties\": false}"), 0);
	/* A keyword outside the subset. */
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"oneOf\": [{\"type\": \"string\"}]}}, \"required\": "
	    "[\"a\"], \"additionalProperties\": false}"), 0);
	/* anyOf and $defs inside are checked too. */
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"anyOf\": [{\"type\": \"string\"}, {\"type\": "
	    "\"null\"}]}}, \"required\": [\"a\"], \"additionalProperties\": "
	    "false, \"$defs\": {\"x\": {\"type\": \"object\"}}}"), 0);
	/* A nullable object (a type list naming "object") must be closed. */
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"type\": [\"object\", \"null\"]}}, \"required\": "
	    "[\"a\"], \"additionalProperties\": false}"), 0);
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"type\": [\"null\", \"object\"], \"properties\": "
	    "{}, \"additionalProperties\": false}}, \"required\": [\"a\"], "
	    "\"additionalProperties\": false}"), 1);
	/* items, definitions and a nested anyOf are checked too. */
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"type\": \"array\", \"items\": {\"type\": "
	    "\"object\"}}}, \"required\": [\"a\"], "
	    "\"additionalProperties\": false}"), 0);
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"type\": \"array\", \"items\": {\"type\": "
	    "\"string\"}}}, \"required\": [\"a\"], "
	    "\"additionalProperties\": false, \"definitions\": {\"d\": "
	    "{\"type\": \"string\"}}}"), 1);
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{}, \"additionalProperties\": false, \"definitions\": {\"d\": "
	    "{\"type\": \"object\"}}}"), 0);
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": {\"anyOf\": [{\"type\": \"string\"}, {\"type\": "
	    "\"object\"}]}}, \"required\": [\"a\"], "
	    "\"additionalProperties\": false}"), 0);
	/* A schema that is not an object (true) is not in the subset. */
	ck_assert_int_eq(strict("{\"type\": \"object\", \"properties\": "
	    "{\"a\": true}, \"required\": [\"a\"], "
	    "\"additionalProperties\": false}"), 0);
}
END_TEST

START_TEST(objects_nested_past_ten_are_not_strict)
{
	const char *leaf = "{\"type\": \"object\", \"properties\": {}, "
	    "\"additionalProperties\": false}";
	char *s = strdup(leaf), *t;
	int depth;

	for (depth = 1; depth < 11; depth++) {
		ck_assert_int_eq(strict(s), 1);
		ck_assert_int_ne(asprintf(&t, "{\"type\": \"object\", "
		    "\"properties\": {\"a\": %s}, \"required\": [\"a\"], "
		    "\"additionalProperties\": false}", s), -1);
		free(s);
		s = t;
	}
	ck_assert_int_eq(strict(s), 0);	/* 11 deep */
	free(s);
}
END_TEST

/* The body of request under cfg (schema text, provider), as compact JSON. */
static char *
body_of(const char *schema, enum saop_provider p, int mode,
    const char *request)
{
	struct saop_llm_config cfg;
	struct saop_err e;
	json_t *s = schema != NULL ? js(schema) : NULL, *req = js(request), *b;
	char *text;

	memset(&cfg, 0, sizeof(cfg));
	cfg.provider = p;
	cfg.schema = s;
	cfg.schema_name = "f";
	cfg.schema_mode = mode;
	b = saop__llm_body(&cfg, req, &e);
	ck_assert_ptr_nonnull(b);
	json_object_del(b, "stream");
	json_object_del(b, "stream_options");
	json_object_del(b, "max_tokens");
	text = json_dumps(b, JSON_COMPACT);
	json_decref(b);
	json_decref(req);
	json_decref(s);
	return text;
}

#define ASK "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", " \
	"\"content\": \"x\"}]}"

START_TEST(each_wire_format_gets_its_field)
{
	char *b;

	b = body_of("{\"$schema\": \"x\", \"title\": \"A b!\", \"type\": "
	    "\"string\"}", SAOP_PROVIDER_OPENAI, SAOP_SCHEMA_NATIVE, ASK);
	ck_assert_str_eq(b, "{\"model\":\"m\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":"
	    "\"json_schema\",\"json_schema\":{\"name\":\"A_b_\",\"strict\":"
	    "false,\"schema\":{\"title\":\"A b!\",\"type\":\"string\"}}}}");
	free(b);
	b = body_of("{\"type\": \"string\"}", SAOP_PROVIDER_ANTHROPIC,
	    SAOP_SCHEMA_NATIVE, ASK);
	ck_assert_str_eq(b, "{\"model\":\"m\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"x\"}],\"output_config\":{\"format\":"
	    "{\"type\":\"json_schema\",\"schema\":{\"type\":\"string\"}}}}");
	free(b);
	b = body_of("{\"type\": \"object\", \"additionalProperties\": false}",
	    SAOP_PROVIDER_RESPONSES, SAOP_SCHEMA_NATIVE, ASK);
	ck_assert_ptr_nonnull(strstr(b, "\"text\":{\"format\":{\"type\":"
	    "\"json_schema\",\"name\":\"f\",\"strict\":true,\"schema\":"
	    "{\"type\":\"object\",\"additionalProperties\":false}}}"));
	free(b);
	b = body_of("{\"type\": \"string\"}", SAOP_PROVIDER_GEMINI,
	    SAOP_SCHEMA_NATIVE, ASK);
	ck_assert_ptr_nonnull(strstr(b, "\"generationConfig\":{"
	    "\"responseMimeType\":\"application/json\",\"responseJsonSchema\":"
	    "{\"type\":\"string\"}}"));
	free(b);
	/* Off, and no schema: nothing. */
	b = body_of("{\"type\": \"string\"}", SAOP_PROVIDER_OPENAI,
	    SAOP_SCHEMA_OFF, ASK);
	ck_assert_ptr_null(strstr(b, "response_format"));
	free(b);
	b = body_of(NULL, SAOP_PROVIDER_ANTHROPIC, SAOP_SCHEMA_NATIVE, ASK);
	ck_assert_ptr_null(strstr(b, "output_config"));
	free(b);
}
END_TEST

START_TEST(a_continuation_carries_no_field_and_an_own_field_is_kept)
{
	char *b;

	/* Prefill: the answer so far is the assistant's turn. */
	b = body_of("{\"type\": \"string\"}", SAOP_PROVIDER_ANTHROPIC,
	    SAOP_SCHEMA_NATIVE, "{\"model\": \"m\", \"output_format\": {}, "
	    "\"messages\": [{\"role\": \"user\", \"content\": \"x\"}, "
	    "{\"role\": \"assistant\", \"content\": \"\\\"ab\"}]}");
	ck_assert_ptr_null(strstr(b, "output_"));
	free(b);
	/* The resume prompt last, in a block. */
	b = body_of("{\"type\": \"string\"}", SAOP_PROVIDER_OPENAI,
	    SAOP_SCHEMA_NATIVE, "{\"model\": \"m\", \"response_format\": "
	    "{\"type\": \"json_object\"}, \"messages\": [{\"role\": \"user\", "
	    "\"content\": [{\"type\": \"text\", \"text\": \""
	    SAOP_RESUME_PROMPT "\"}]}]}");
	ck_assert_ptr_null(strstr(b, "response_format"));
	free(b);
	/* An ordinary turn keeps its own field; Anthropic's too. */
	b = body_of("{\"type\": \"string\"}", SAOP_PROVIDER_ANTHROPIC,
	    SAOP_SCHEMA_NATIVE, "{\"model\": \"m\", \"output_config\": "
	    "{\"format\": {\"type\": \"json_schema\", \"schema\": {}}}, "
	    "\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}");
	ck_assert_ptr_nonnull(strstr(b, "\"output_config\":{\"format\":"
	    "{\"type\":\"json_schema\",\"schema\":{}}}"));
	free(b);
}
END_TEST

START_TEST(prompt_mode_puts_the_schema_after_the_system_text)
{
	char *b;

	b = body_of("{\"type\": \"null\"}", SAOP_PROVIDER_OPENAI,
	    SAOP_SCHEMA_PROMPT, "{\"model\": \"m\", \"system\": \"S\", "
	    "\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}");
	ck_assert_str_eq(b, "{\"model\":\"m\",\"messages\":[{\"role\":"
	    "\"system\",\"content\":\"S\"},{\"role\":\"system\",\"content\":"
	    "\"Answer with JSON only: one value that follows this JSON "
	    "Schema.\\n\\n```json\\n{\\n  \\\"type\\\": \\\"null\\\"\\n}\\n"
	    "```\"},{\"role\":\"user\",\"content\":\"x\"}]}");
	free(b);
	b = body_of("{\"type\": \"null\"}", SAOP_PROVIDER_ANTHROPIC,
	    SAOP_SCHEMA_PROMPT, "{\"model\": \"m\", \"system\": \"S\", "
	    "\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}");
	ck_assert_ptr_nonnull(strstr(b, "\"system\":\"S\\n\\nAnswer with "
	    "JSON only"));
	free(b);
}
END_TEST

/* A stand-in model: refuses a body with the field once, per script. */
struct standin {
	struct saop_llm_config *cfg;
	const char *refusal;	/* the 400's message, or NULL */
	int calls, with_field;
};

static int
standin_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct standin *st = arg;
	json_t *b = saop__llm_body(st->cfg, request, e);
	int field = json_object_get(b, "response_format") != NULL;

	json_decref(b);
	st->calls++;
	st->with_field += field;
	memset(a, 0, sizeof(*a));
	a->raw = strdup("1");
	if (field && st->refusal != NULL) {
		saop_err_clear(e);
		e->code = SAOP_EBADREQ;
		e->http_status = 400;
		snprintf(e->msg, sizeof(e->msg), "http://h/v1: HTTP 400: %s",
		    st->refusal);
		return -SAOP_EBADREQ;
	}
	return 0;
}

START_TEST(a_refused_field_is_dropped_once_and_noted)
{
	struct saop_llm_config cfg;
	struct saop_schema_guard g;
	struct standin st = { NULL, "Unknown parameter: 'response_format'.",
	    0, 0 };
	struct saop_llm_answer a;
	struct saop_model m;
	struct saop_err e;
	json_t *req = js(ASK), *rec = js("{\"task_id\": \"t\"}");
	json_t *s = js("{\"type\": \"string\"}");

	memset(&cfg, 0, sizeof(cfg));
	memset(&g, 0, sizeof(g));
	cfg.schema = s;
	st.cfg = &cfg;
	g.inner.call = standin_call;
	g.inner.arg = &st;
	g.cfg = &cfg;
	m = saop_schema_model(&g);
	ck_assert_int_eq(saop_model_call(&m, req, &a, &e), 0);
	saop_llm_answer_free(&a);
	ck_assert_int_eq(st.calls, 2);
	ck_assert_int_eq(st.with_field, 1);
	ck_assert_int_eq(cfg.schema_refused, 1);
	ck_assert_int_eq(saop_schema_note(&g, rec, NULL, &e), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(rec,
	    "structured_output"), "refused")), "http://h/v1: HTTP 400: "
	    "Unknown parameter: 'response_format'.");
	/* The next call goes without the field, in one call. */
	ck_assert_int_eq(saop_model_call(&m, req, &a, &e), 0);
	saop_llm_answer_free(&a);
	ck_assert_int_eq(st.calls, 3);
	ck_assert_int_eq(saop_schema_note(&g, rec, NULL, &e), 0);
	/* A 400 that does not name the field is not retried. */
	cfg.schema_refused = 0;
	st.refusal = "max_tokens: too large";
	ck_assert_int_eq(saop_model_call(&m, req, &a, &e), -SAOP_EBADREQ);
	saop_llm_answer_free(&a);
	ck_assert_int_eq(st.calls, 4);
	json_decref(req);
	json_decref(rec);
	json_decref(s);
}
END_TEST

/* The correction text of errors under the schema text. */
static char *
correction(const char *schema, const char *errors)
{
	struct saop_err e;
	struct saop_schema *s = NULL;
	json_t *doc, *err = js(errors);
	char *t;

	if (schema != NULL) {
		doc = js(schema);
		s = saop_schema_compile(doc, NULL, NULL, &e);
		json_decref(doc);
		ck_assert_ptr_nonnull(s);
	}
	t = saop_correction_text(s, err);
	ck_assert_ptr_nonnull(t);
	saop_schema_free(s);
	json_decref(err);
	return t;
}

START_TEST(the_correction_text_asks_for_the_start_the_type_fixes)
{
	static const char *const cases[][2] = {
		{ "{\"type\": \"object\"}", "starting from '{'." },
		{ "{\"type\": \"array\"}", "starting from '['." },
		{ "{\"type\": \"string\"}", "as one JSON string, starting "
		    "from '\"'." },
		{ "{\"type\": \"integer\"}", "as one JSON number." },
		{ "{\"type\": \"boolean\"}", "as true or false." },
		{ "{\"type\": \"null\"}", "as null." },
		{ "{\"type\": [\"null\", \"string\"]}", "complete response." },
		{ "{}", "complete response." },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = correction(cases[i][0], "[{\"path\": \"/a\", "
		    "\"message\": \"bad\"}]");
		char *end = strstr(t, "\n\n");

		ck_assert_ptr_nonnull(end);
		*end = '\0';
		ck_assert_msg(strlen(t) >= strlen(cases[i][1]) &&
		    strcmp(t + strlen(t) - strlen(cases[i][1]),
		    cases[i][1]) == 0, "%s: %s", cases[i][0], t);
		ck_assert_ptr_null(strstr(t, "SAOP"));
		ck_assert_ptr_nonnull(strstr(t, "Errors: /a: bad."));
		free(t);
	}
}
END_TEST

START_TEST(the_envelope_keeps_its_saop_words_and_quotes_no_schema)
{
	struct saop_err e;
	struct saop_schema *s = saop_schema_envelope_v1(&e);
	json_t *err = js("[{\"path\": \"\", \"message\": \"bad\"}]");
	char *t = saop_correction_text(s, err), *n = saop_correction_text(NULL,
	    err);

	ck_assert_str_eq(t, n);
	ck_assert_str_eq(t, "Your previous response was not valid SAOP JSON. "
	    "Errors: (root): bad. Please restate your complete response "
	    "starting from '{'.\n\n```json\n[{\"path\":\"\",\"message\":"
	    "\"bad\"}]\n```");
	free(t);
	free(n);
	json_decref(err);
	saop_schema_free(s);
}
END_TEST

/* SIGPIPEs the handler below saw. */
static volatile sig_atomic_t pipes;

/* A caller's own SIGPIPE handler: counts. */
static void
count_pipe(int sig)
{
	(void)sig;
	pipes++;
}

/*
 * A check that reads none of a 1 MB answer: the run is its verdict, and
 * the caller's SIGPIPE handler, mask and pending set are as they were
 * (no SIGPIPE reached it, none is left pending).
 */
START_TEST(a_check_that_does_not_read_leaves_the_callers_signals_alone)
{
	struct sigaction sa, now;
	sigset_t mask_before, mask_after, pending;
	size_t len = 1 << 20;
	struct saop_err e;
	char *text = malloc(len), *msg = NULL;
	int rc, round;

	ck_assert_ptr_nonnull(text);
	memset(text, ' ', len);
	text[0] = '[';
	text[len - 1] = ']';
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count_pipe;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGPIPE, &sa, NULL), 0);
	sigprocmask(SIG_SETMASK, NULL, &mask_before);
	for (round = 0; round < 3; round++) {
		rc = saop_check_run(round == 2 ? "exit 3" : "true", NULL, -1,
		    text, len, &msg, &e);
		ck_assert_int_eq(rc, round == 2 ? 0 : 1);
		free(msg);
		msg = NULL;
	}
	ck_assert_int_eq(pipes, 0);
	sigprocmask(SIG_SETMASK, NULL, &mask_after);
	ck_assert_int_eq(sigismember(&mask_after, SIGPIPE),
	    sigismember(&mask_before, SIGPIPE));
	sigpending(&pending);
	ck_assert_int_eq(sigismember(&pending, SIGPIPE), 0);
	ck_assert_int_eq(sigaction(SIGPIPE, NULL, &now), 0);
	ck_assert_ptr_eq((void *)now.sa_handler, (void *)count_pipe);
	signal(SIGPIPE, SIG_DFL);
	free(text);
}
END_TEST

static Suite *
structured_suite(void)
{
	Suite *s = suite_create("structured");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc,
	    only_closed_objects_with_every_property_required_are_strict);
	tcase_add_test(tc, objects_nested_past_ten_are_not_strict);
	tcase_add_test(tc, each_wire_format_gets_its_field);
	tcase_add_test(tc,
	    a_continuation_carries_no_field_and_an_own_field_is_kept);
	tcase_add_test(tc, prompt_mode_puts_the_schema_after_the_system_text);
	tcase_add_test(tc, a_refused_field_is_dropped_once_and_noted);
	tcase_add_test(tc,
	    the_correction_text_asks_for_the_start_the_type_fixes);
	tcase_add_test(tc,
	    the_envelope_keeps_its_saop_words_and_quotes_no_schema);
	tcase_add_test(tc,
	    a_check_that_does_not_read_leaves_the_callers_signals_alone);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(structured_suite());
}
