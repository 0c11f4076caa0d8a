/* check_resume.c: unit tests for resume.c (requests, merge, attempts). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saop-private.h"
#include "db-sqlite.h"
#include "resume-sim.h"
#include "unit.h"

#define PROMPT_AND(tok) SAOP_RESUME_PROMPT SAOP_RESUME_TOKEN_LABEL tok

/* ---- The stand-in models: unit_model_call() (unit.h), and this one ---- */

/*
 * A stand-in that knows the whole intended answer and carries on from
 * the partial output it is shown (the prefill, or what follows
 * SAOP_RESUME_PARTIAL_LABEL in the user turn) with at most chars
 * characters, as a model under max_tokens does.
 */
struct standin {
	const char *answer;
	size_t len;
	size_t chars;			/* characters per answer */
	int calls;
	int lost;			/* requests whose partial output is not
					   a prefix of the answer */
	size_t sent;			/* bytes answered, in all */
};

static int
standin_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct standin *s = arg;
	const char *p;
	size_t n, i, k;

	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	s->calls++;
	p = sim_own_text(request, &n);
	if (p == NULL || n > s->len || memcmp(p, s->answer, n) != 0) {
		s->lost++;
		a->raw = strdup("");
		return saop__fail(e, SAOP_EBADREQ, 0, "no such partial output");
	}
	/* The next chars characters (whole UTF-8 characters). */
	for (i = n, k = 0; i < s->len && k < s->chars; k++) {
		i++;
		while (i < s->len &&
		    ((unsigned char)s->answer[i] & 0xc0) == 0x80)
			i++;
	}
	a->raw = malloc(i - n + 1);
	memcpy(a->raw, s->answer + n, i - n);
	a->raw[i - n] = '\0';
	a->raw_len = i - n;
	s->sent += i - n;
	strcpy(a->finish_reason, i < s->len ? "length" : "stop");
	return 0;
}

/* The complete answers of tests/data/resume/corpus.ndjson: *n of them,
 * new strings (free each and the array). */
static char **
corpus(size_t *n, size_t **lens)
{
	const char *top = getenv("top_srcdir");
	char path[4096], line[65536];
	char **v = NULL;
	FILE *f;

	*n = 0;
	*lens = NULL;
	snprintf(path, sizeof(path), "%s/tests/data/resume/corpus.ndjson",
	    top != NULL ? top : "..");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof(line), f) != NULL) {
		json_t *j = json_loads(line, JSON_DECODE_ANY, NULL);
		char **nv = realloc(v, (*n + 1) * sizeof(*v));
		size_t *nl = realloc(*lens, (*n + 1) * sizeof(**lens));

		ck_assert_ptr_nonnull(j);
		ck_assert(nv != NULL && nl != NULL);
		v = nv;
		*lens = nl;
		(*lens)[*n] = json_string_length(j);
		v[*n] = malloc((*lens)[*n] + 1);
		memcpy(v[*n], json_string_value(j), (*lens)[*n] + 1);
		(*n)++;
		json_decref(j);
	}
	fclose(f);
	ck_assert_uint_ge(*n, 3);
	return v;
}

static void
opts_for(struct saop_resume_opts *o, struct unit_model *f)
{
	memset(o, 0, sizeof(*o));
	o->model.call = unit_model_call;
	o->model.arg = f;
	o->provider = SAOP_PROVIDER_ANTHROPIC;
}

/* A record {"task_id":"t1","turn":4,"request":{...},"raw":raw}. */
static json_t *
record(const char *raw)
{
	json_t *r = json_pack("{s:s,s:i,s:{s:s,s:[{s:s,s:s}]},s:s}",
	    "task_id", "t1", "turn", 4, "request", "model", "m",
	    "messages", "role", "user", "content", "give JSON", "raw", raw);

	ck_assert_ptr_nonnull(r);
	return r;
}

/* A record as record(), its raw the bytes raw[0..len) as they are (a
 * cut UTF-8 character too: what the library may be handed). */
static json_t *
record_n(const char *raw, size_t len)
{
	json_t *r = record("");

	ck_assert_int_eq(json_object_set_new(r, "raw",
	    json_stringn_nocheck(raw, len)), 0);
	return r;
}

/* The scan of s[0..n). */
static struct saop_detect_result
scan_of(const char *s, size_t n)
{
	struct saop_detect_result r;

	ck_assert_int_eq(saop_detect_buffer(s, n, 0, &r), 0);
	return r;
}

static const char *
sget(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	if (b != NULL)
		v = json_object_get(v, b);
	return json_string_value(v);
}

static json_int_t
iget(const json_t *o, const char *a, const char *b)
{
	return json_integer_value(json_object_get(json_object_get(o, a), b));
}

/* ---- Requests ---- */

static json_t *
base_request(void)
{
	return json_pack("{s:s,s:i,s:[{s:s,s:s}]}", "model", "claude-x",
	    "max_tokens", 64, "messages", "role", "user", "content", "q");
}

static const char *
msg(const json_t *req, size_t i, const char *key)
{
	return json_string_value(json_object_get(json_array_get(
	    json_object_get(req, "messages"), i), key));
}

START_TEST(prefill_request_ends_with_the_prefix_as_assistant_turn)
{
	const char prefix[] = "{\"a\": 1, \n";
	json_t *req = base_request(), *r;
	struct saop_err e;

	r = saop_resume_request(req, prefix, strlen(prefix), ",",
	    SAOP_RESUME_PREFILL, SAOP_RESUME_FULL, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(json_array_size(json_object_get(r, "messages")), 3);
	ck_assert_str_eq(msg(r, 0, "content"), "q");
	ck_assert_str_eq(msg(r, 1, "role"), "user");
	ck_assert_str_eq(msg(r, 1, "content"), PROMPT_AND(","));
	ck_assert_str_eq(msg(r, 2, "role"), "assistant");
	ck_assert_str_eq(msg(r, 2, "content"), "{\"a\": 1,");
	ck_assert_str_eq(sget(r, "model", NULL), "claude-x");
	ck_assert_int_eq(json_integer_value(json_object_get(r, "max_tokens")),
	    64);
	/* The caller's request is not changed. */
	ck_assert_uint_eq(json_array_size(json_object_get(req, "messages")),
	    1);
	json_decref(r);
	json_decref(req);
}
END_TEST

START_TEST(prompt_text_is_exactly_the_design_text)
{
	ck_assert_str_eq(SAOP_RESUME_PROMPT, "Continue the JSON payload from "
	    "the last valid token. Output ONLY the remaining JSON. Do not "
	    "repeat any content before the last valid token.");
}
END_TEST

START_TEST(user_request_quotes_the_prefix_after_the_prompt)
{
	const char prefix[] = "{\"a\": [1, 2";
	json_t *req = base_request(), *r;
	struct saop_err e;

	r = saop_resume_request(req, prefix, strlen(prefix), "2",
	    SAOP_RESUME_USER, SAOP_RESUME_FULL, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(json_array_size(json_object_get(r, "messages")), 2);
	ck_assert_str_eq(msg(r, 1, "role"), "user");
	ck_assert_str_eq(msg(r, 1, "content"), PROMPT_AND("2")
	    SAOP_RESUME_PARTIAL_LABEL "{\"a\": [1, 2");
	json_decref(r);
	json_decref(req);
}
END_TEST

START_TEST(tail_context_sends_no_byte_of_the_prefix)
{
	const char prefix[] = "{\"secret_field_xyz\": \"long text\", \"b\":";
	json_t *req = base_request();
	struct saop_err e;
	int form;

	for (form = SAOP_RESUME_PREFILL; form <= SAOP_RESUME_USER; form++) {
		json_t *r;
		char *dump;

		r = saop_resume_request(req, prefix, strlen(prefix), ":",
		    (enum saop_resume_form)form, SAOP_RESUME_TAIL, &e);
		ck_assert_ptr_nonnull(r);
		dump = json_dumps(r, 0);
		ck_assert_ptr_null(strstr(dump, "secret_field_xyz"));
		ck_assert_ptr_null(strstr(dump, "long text"));
		free(dump);
		ck_assert_uint_eq(json_array_size(json_object_get(r,
		    "messages")), 2);
		ck_assert_str_eq(msg(r, 1, "role"), "user");
		ck_assert_str_eq(msg(r, 1, "content"), PROMPT_AND(":"));
		json_decref(r);
	}
	json_decref(req);
}
END_TEST

START_TEST(tail_context_sends_the_partial_token_after_the_last_valid_one)
{
	const char prefix[] = "{\"secret_field_xyz\": 1, \"b\": \"the cut str";
	json_t *req = base_request(), *r;
	struct saop_err e;

	r = saop_resume_request(req, prefix, strlen(prefix), ":",
	    SAOP_RESUME_PREFILL, SAOP_RESUME_TAIL, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(json_array_size(json_object_get(r, "messages")), 2);
	ck_assert_str_eq(msg(r, 1, "content"), PROMPT_AND(":")
	    SAOP_RESUME_TAIL_LABEL " \"the cut str");
	json_decref(r);
	json_decref(req);
}
END_TEST

START_TEST(request_is_built_when_the_record_has_none)
{
	struct saop_err e;
	json_t *r;

	r = saop_resume_request(NULL, "[1,", 3, ",", SAOP_RESUME_PREFILL,
	    SAOP_RESUME_FULL, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(json_array_size(json_object_get(r, "messages")), 2);
	ck_assert_str_eq(msg(r, 1, "content"), "[1,");
	json_decref(r);
}
END_TEST

START_TEST(empty_prefix_gets_no_assistant_turn)
{
	struct saop_err e;
	json_t *r;

	r = saop_resume_request(NULL, "  \n", 3, NULL, SAOP_RESUME_PREFILL,
	    SAOP_RESUME_FULL, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(json_array_size(json_object_get(r, "messages")), 1);
	ck_assert_str_eq(msg(r, 0, "content"), PROMPT_AND(""));
	json_decref(r);
}
END_TEST

START_TEST(messages_that_are_not_an_array_name_the_field)
{
	json_t *req = json_pack("{s:s}", "messages", "hi");
	struct saop_err e;

	ck_assert_ptr_null(saop_resume_request(req, "[", 1, "[",
	    SAOP_RESUME_USER, SAOP_RESUME_FULL, &e));
	ck_assert_int_eq(e.code, SAOP_EDATA);
	ck_assert_str_eq(e.field, "/request/messages");
	json_decref(req);
}
END_TEST

/* ---- Merge ---- */

/* Merge and check the verdict and the text. */
static void
merge_is(const char *prefix, const char *cont, int verdict, const char *want)
{
	struct saop_detect_result r;
	struct saop_err e;
	char *out;
	size_t len;
	int v;

	v = saop_resume_merge(prefix, strlen(prefix), cont, strlen(cont), 0,
	    &out, &len, &r, &e);
	ck_assert_msg(v == verdict, "merge of '%s' + '%s': verdict %d, "
	    "expected %d ('%s')", prefix, cont, v, verdict, out ? out : "");
	ck_assert_uint_eq(len, strlen(out));
	ck_assert_str_eq(out, want);
	ck_assert_int_eq((int)r.verdict, verdict);
	saop_detect_result_free(&r);
	free(out);
}

START_TEST(merge_appends_a_plain_continuation)
{
	merge_is("{\"a\": 1, ", "\"b\": 2}", SAOP_COMPLETE,
	    "{\"a\": 1, \"b\": 2}");
}
END_TEST

START_TEST(merge_keeps_leading_white_space_as_it_came)
{
	/* One line break and indentation: as it came. */
	merge_is("{\"a\": 1,", "\n   \"b\": 2}", SAOP_COMPLETE,
	    "{\"a\": 1,\n   \"b\": 2}");
	/* Blank lines put first: dropped through the last line break. */
	merge_is("{\"a\": 1,", "\n\n   \"b\": 2}", SAOP_COMPLETE,
	    "{\"a\": 1,   \"b\": 2}");
	/* Inside a string a raw line break is never content. */
	merge_is("[\"ab", "\n\ncd\"]", SAOP_COMPLETE, "[\"abcd\"]");
	/* At a number all of it: it cannot go on after white space. */
	merge_is("[1, 22, 33", "\n\n3, 4]", SAOP_COMPLETE, "[1, 22, 333, 4]");
	merge_is("[1, 22, 33", "\n  3, 4]", SAOP_COMPLETE, "[1, 22, 333, 4]");
}
END_TEST

START_TEST(merge_drops_a_repeated_tail_of_the_prefix)
{
	merge_is("{\"a\": 1, \"b\":", "\"b\": 2}", SAOP_COMPLETE,
	    "{\"a\": 1, \"b\": 2}");
	merge_is("{\"a\": 1, \"b\": ", "\"b\": 2}", SAOP_COMPLETE,
	    "{\"a\": 1, \"b\": 2}");
}
END_TEST

START_TEST(merge_drops_a_repeat_of_the_whole_prefix)
{
	merge_is("{\"a\": [1, 2,", "{\"a\": [1, 2, 3]}", SAOP_COMPLETE,
	    "{\"a\": [1, 2, 3]}");
}
END_TEST

START_TEST(merge_keeps_a_repeat_when_dropping_scans_no_better)
{
	/* Both readings are complete, with two values, and a two-byte
	 * repeat is as likely as a continuation: neither is taken. */
	merge_is("[1,2,", "2,3]", SAOP_TRUNCATED, "[1,2,");
}
END_TEST

START_TEST(merge_takes_the_body_of_a_code_fence)
{
	merge_is("{\"a\": 1, ", "```json\n\"b\": 2}\n```\n", SAOP_COMPLETE,
	    "{\"a\": 1, \"b\": 2}\n");
	merge_is("{\"a\": 1, ", "Here you go:\n```\n\"b\": 2}\n```",
	    SAOP_COMPLETE, "{\"a\": 1, \"b\": 2}\n");
	/* A fence inside a string is text: the closing one begins a
	 * line. */
	merge_is("{\"a\": 1, ", "```json\n\"b\": \"x ``` y\"}\n```",
	    SAOP_COMPLETE, "{\"a\": 1, \"b\": \"x ``` y\"}\n");
}
END_TEST

START_TEST(merge_drops_a_sentence_around_the_continuation)
{
	merge_is("{\"a\": 1, ", "Here is the rest: \"b\": 2}", SAOP_COMPLETE,
	    "{\"a\": 1, \"b\": 2}");
	merge_is("{\"a\": 1, ", "Sure.\n\"b\": 2}", SAOP_COMPLETE,
	    "{\"a\": 1, \"b\": 2}");
	merge_is("{\"a\": 1, ", "\"b\": 2}\n\nLet me know if you need more.",
	    SAOP_COMPLETE, "{\"a\": 1, \"b\": 2}");
}
END_TEST

START_TEST(merge_never_reads_past_the_tail_of_a_cut_string)
{
	struct saop_err e;
	const char *p = "{\"thought\": ";
	const char *c = "ially done.\", \"action\": {\"tool\": \"x\"}}";
	char *out;
	size_t len;

	/*
	 * The model carried on inside the cut string, which the prefix no
	 * longer holds.  Reading after the first ": " would give complete
	 * JSON ({"thought": {"tool": "x"}}) and lose "ially done." without
	 * a word: the merge must stay invalid (a failed attempt) instead.
	 */
	ck_assert_int_eq(saop_resume_merge(p, strlen(p), c, strlen(c), 0,
	    &out, &len, NULL, &e), SAOP_INVALID);
	free(out);
}
END_TEST

START_TEST(merge_keeps_the_cut_token_and_appends_its_rest)
{
	/* Inside a string, a number, a literal: the rest only. */
	merge_is("{\"p\": {\"content\": \"int main(void){return 0;",
	    "}\\n\"}}", SAOP_COMPLETE,
	    "{\"p\": {\"content\": \"int main(void){return 0;}\\n\"}}");
	merge_is("[12", "34]", SAOP_COMPLETE, "[1234]");
	merge_is("[-1.", "5e3]", SAOP_COMPLETE, "[-1.5e3]");
	merge_is("{\"a\": tr", "ue}", SAOP_COMPLETE, "{\"a\": true}");
	merge_is("[nu", "ll]", SAOP_COMPLETE, "[null]");
	/* Leading white space inside a string is content. */
	merge_is("[\"a", "  b\"]", SAOP_COMPLETE, "[\"a  b\"]");
	/* Right after a key's colon, between tokens. */
	merge_is("{\"k\":", " \"v\"}", SAOP_COMPLETE, "{\"k\": \"v\"}");
}
END_TEST

START_TEST(merge_takes_a_resent_token_only_when_it_keeps_every_byte)
{
	/* The open string, number or literal sent again from its start. */
	merge_is("{\"a\": \"hel", "\"hello\"}", SAOP_COMPLETE,
	    "{\"a\": \"hello\"}");
	/* (A number sent again reads as digits carried on as well:
	 * "[12" + "123]" is "[12123]" or "[123]", neither is taken.) */
	merge_is("[12", "123]", SAOP_TRUNCATED, "[12");
	merge_is("[12345678", "123456789]", SAOP_TRUNCATED, "[12345678");
	merge_is("[tr", "true]", SAOP_COMPLETE, "[true]");
	/* Something else in its place would lose "hel": refused. */
	merge_is("{\"a\": \"hel", "\"world\"}", SAOP_INVALID,
	    "{\"a\": \"hel\"world\"}");
	merge_is("{\"a\": 1, \"b\": \"x", "\"b\": 2}", SAOP_INVALID,
	    "{\"a\": 1, \"b\": \"x\"b\": 2}");
}
END_TEST

START_TEST(merge_reports_a_continuation_truncated_again)
{
	merge_is("{\"a\": 1, ", "\"b\": [true, nu", SAOP_TRUNCATED,
	    "{\"a\": 1, \"b\": [true, nu");
	/* Among truncated merges that keep all received, the earlier
	 * reading: a string re-sent from its quote, not a '"' taken for a
	 * repeat. */
	merge_is("[\"a\\\"", "\"a\\\"b", SAOP_TRUNCATED, "[\"a\\\"b");
}
END_TEST

/*
 * The record is written once, after the protocol: every continuation call
 * finds it as it came; the outcome's state is the state written.
 */
START_TEST(the_record_is_written_once_with_the_state_returned)
{
	static const char *const ans[] = { "bcd", "efg", "h\"]" };
	struct unit_model f;
	struct unit_watch w;
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;

	memset(&f, 0, sizeof(f));
	memset(&w, 0, sizeof(w));
	f.answers = ans;
	f.n = 3;
	opts_for(&o, &f);
	w.model = o.model;
	o.model.call = unit_watch_call;
	o.model.arg = &w;
	o.form = SAOP_RESUME_USER;
	o.max_attempts = 3;
	w.rec = record("[\"a");
	ck_assert_int_eq(saop_record_set_state(w.rec, SAOP_STATE_TRUNCATED),
	    0);
	unit_watch_begin(&w, w.rec);
	ck_assert_int_eq(saop_resume_record(w.rec, &o, &oc, &e), 0);
	ck_assert_int_eq(f.calls, 3);
	ck_assert_int_eq(w.changed, 0);
	ck_assert_int_eq(oc.state, SAOP_STATE_OK);
	ck_assert_str_eq(sget(w.rec, "state", NULL), "OK");
	ck_assert_str_eq(sget(w.rec, "raw", NULL), "[\"abcdefgh\"]");
	unit_watch_end(&w);
	json_decref(w.rec);
	json_decref(f.last);

	/* Exhausted: the state written is the state returned. */
	memset(&f, 0, sizeof(f));
	memset(&w, 0, sizeof(w));
	f.answers = ans;
	f.n = 1;
	opts_for(&o, &f);
	w.model = o.model;
	o.model.call = unit_watch_call;
	o.model.arg = &w;
	o.form = SAOP_RESUME_USER;
	o.max_attempts = 1;
	w.rec = record("[\"a");
	unit_watch_begin(&w, w.rec);
	ck_assert_int_eq(saop_resume_record(w.rec, &o, &oc, &e), 0);
	ck_assert_int_eq(w.changed, 0);
	ck_assert_int_eq(oc.state, SAOP_STATE_RESUME_EXHAUSTED);
	ck_assert_str_eq(sget(w.rec, "state", NULL), "RESUME_EXHAUSTED");
	unit_watch_end(&w);
	json_decref(w.rec);
	json_decref(f.last);

	/* Complete: skipped, the state it came with. */
	w.rec = record("[1]");
	ck_assert_int_eq(saop_record_set_state(w.rec,
	    SAOP_STATE_USER_ESCALATION), 0);
	ck_assert_int_eq(saop_resume_record(w.rec, &o, &oc, &e), 0);
	ck_assert_int_eq(oc.state, SAOP_STATE_USER_ESCALATION);
	json_decref(w.rec);
}
END_TEST

/* A record "{"a": "x " resumed in form with one answer: raw is want;
 * the last turn sent, when last is not NULL, is last. */
static void
ws_case(enum saop_resume_form form, const char *answer, const char *want,
    const char *last)
{
	const char *const texts[] = { answer };
	struct unit_model f = { texts, 1, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\": \"x ");

	opts_for(&o, &f);
	o.form = form;
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	if (last != NULL)
		ck_assert_str_eq(msg(f.last, 2, "content"), last);
	ck_assert_str_eq(sget(rec, "raw", NULL), want);
	json_decref(rec);
	json_decref(f.last);
}

START_TEST(prefill_white_space_is_kept_for_the_merge)
{
	/* The model saw '"x' (the space stripped) and carried on with
	 * ' y"}': the received space is not doubled; with 'z"}' it is not
	 * lost. */
	ws_case(SAOP_RESUME_PREFILL, " y\"}", "{\"a\": \"x y\"}",
	    "{\"a\": \"x");
	ws_case(SAOP_RESUME_PREFILL, "z\"}", "{\"a\": \"x z\"}", NULL);
	/* The user form quotes it: ' y"}' reads as the space carried on
	 * or written again, two values: not taken (asked once more, the
	 * same answer, exhausted); 'y"}' goes right after it. */
	ws_case(SAOP_RESUME_USER, " y\"}", "{\"a\": \"x ", NULL);
	ws_case(SAOP_RESUME_USER, "y\"}", "{\"a\": \"x y\"}", NULL);
}
END_TEST

START_TEST(progress_accumulates_and_the_cost_is_counted)
{
	/* Each answer carries on from the end of the last merge. */
	static const char *const ans[] = { "bcd", "efg", "h\"]" };
	struct unit_model f = { ans, 3, 0, 0, 0, 0, NULL, 1 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("[\"a");

	opts_for(&o, &f);
	o.form = SAOP_RESUME_USER;
	o.max_attempts = 3;
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_str_eq(sget(rec, "raw", NULL), "[\"abcdefgh\"]");
	ck_assert_int_eq(oc.attempts, 3);
	/* The last request quoted all of it so far. */
	ck_assert_str_eq(msg(f.last, 1, "content"), PROMPT_AND("[")
	    SAOP_RESUME_PARTIAL_LABEL "[\"abcdefg");
	ck_assert_uint_eq(oc.cost.received_bytes, 9);
	ck_assert_int_eq(iget(rec, "resume", "received_bytes"), 9);
	ck_assert_uint_eq(oc.cost.sent_bytes, 3 * strlen(PROMPT_AND("[")
	    SAOP_RESUME_PARTIAL_LABEL) + 3 + 6 + 9);
	ck_assert_int_eq(iget(rec, "resume", "sent_bytes"),
	    (json_int_t)oc.cost.sent_bytes);
	ck_assert_int_eq(oc.cost.prompt_tokens, 10 + 20 + 30);
	ck_assert_int_eq(iget(rec, "resume", "prompt_tokens"), 60);
	ck_assert_int_eq(iget(rec, "resume", "completion_tokens"), 1 + 2 + 3);
	json_decref(rec);
	json_decref(f.last);
	/* No usage reported: null, not 0. */
	f.usage = 0;
	f.calls = 0;
	f.last = NULL;
	rec = record("[\"a");
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(oc.cost.prompt_tokens, -1);
	ck_assert(json_is_null(json_object_get(json_object_get(rec,
	    "resume"), "prompt_tokens")));
	ck_assert(json_is_null(json_object_get(json_object_get(rec,
	    "resume"), "completion_tokens")));
	json_decref(rec);
	json_decref(f.last);
}
END_TEST

START_TEST(merge_never_passes_invalid_json_as_complete)
{
	struct saop_err e;
	char *out;
	size_t len;

	ck_assert_int_eq(saop_resume_merge("{\"a\": 1, ", 9, "\"b\": 2}}", 8,
	    0, &out, &len, NULL, &e), SAOP_INVALID);
	free(out);
	ck_assert_int_eq(saop_resume_merge("{\"a\": 1, ", 9, "oops ] 2", 8,
	    0, &out, &len, NULL, &e), SAOP_INVALID);
	free(out);
}
END_TEST

/* ---- Records and attempts ---- */

START_TEST(truncated_record_resolves_in_one_attempt)
{
	static const char *const ans[] = { "2}" };
	struct unit_model f = { ans, 1, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\": 1, \"b\": ");

	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(f.calls, 1);
	ck_assert_int_eq(oc.attempts, 1);
	ck_assert_int_eq(oc.status, SAOP_RESUME_RESOLVED);
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"a\": 1, \"b\": 2}");
	ck_assert_str_eq(sget(rec, "state", NULL), "OK");
	ck_assert_str_eq(sget(rec, "resume", "status"), "RESOLVED");
	ck_assert_int_eq(iget(rec, "resume", "attempts"), 1);
	/* Anthropic, auto: the prefix went as the model's own turn, its
	 * trailing white space kept aside. */
	ck_assert_str_eq(msg(f.last, 2, "content"), "{\"a\": 1, \"b\":");
	json_decref(f.last);
	json_decref(rec);
}
END_TEST

START_TEST(continuation_truncated_again_takes_a_second_attempt)
{
	static const char *const ans[] = { "[1, 2,", "3]}" };
	struct unit_model f = { ans, 2, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\":");

	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(f.calls, 2);
	ck_assert_int_eq(oc.attempts, 2);
	ck_assert_int_eq(oc.status, SAOP_RESUME_RESOLVED);
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"a\":[1, 2,3]}");
	/* The second call continued from the merged text. */
	ck_assert_str_eq(msg(f.last, 2, "content"), "{\"a\":[1, 2,");
	json_decref(f.last);
	json_decref(rec);
}
END_TEST

START_TEST(attempts_stop_at_the_maximum_and_keep_the_best_merge)
{
	static const char *const ans[] = { "[1,", "2,", "3," };
	struct unit_model f = { ans, 3, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\":");

	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(f.calls, SAOP_MAX_RESUME_ATTEMPTS);
	ck_assert_int_eq(oc.attempts, 2);
	ck_assert_int_eq(oc.status, SAOP_RESUME_EXHAUSTED);
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"a\":[1,2,");
	ck_assert_str_eq(sget(rec, "state", NULL), "RESUME_EXHAUSTED");
	ck_assert_str_eq(sget(rec, "resume", "status"), "EXHAUSTED");
	json_decref(f.last);
	json_decref(rec);
}
END_TEST

START_TEST(max_attempts_can_be_raised)
{
	static const char *const ans[] = { "[1,", "2,", "3]}" };
	struct unit_model f = { ans, 3, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\":");

	opts_for(&o, &f);
	o.max_attempts = 3;
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(f.calls, 3);
	ck_assert_int_eq(oc.status, SAOP_RESUME_RESOLVED);
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"a\":[1,2,3]}");
	json_decref(f.last);
	json_decref(rec);
}
END_TEST

START_TEST(invalid_continuation_counts_and_the_next_starts_over)
{
	static const char *const ans[] = { "]]]", "1}" };
	struct unit_model f = { ans, 2, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\":");

	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(oc.attempts, 2);
	ck_assert_int_eq(oc.status, SAOP_RESUME_RESOLVED);
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"a\":1}");
	json_decref(f.last);
	json_decref(rec);
}
END_TEST

START_TEST(complete_record_is_skipped_without_a_call)
{
	struct unit_model f = { NULL, 0, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\": 1}");

	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(f.calls, 0);
	ck_assert_str_eq(sget(rec, "resume", "status"), "SKIPPED");
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"a\": 1}");
	ck_assert_ptr_null(json_object_get(rec, "state"));
	ck_assert_ptr_null(json_object_get(rec, "detect"));
	json_decref(rec);
}
END_TEST

START_TEST(invalid_record_passes_through_flagged)
{
	struct unit_model f = { NULL, 0, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\": 1]");

	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(f.calls, 0);
	ck_assert_int_eq(oc.verdict, SAOP_INVALID);
	ck_assert_str_eq(sget(rec, "resume", "status"), "SKIPPED");
	ck_assert_str_eq(sget(rec, "state", NULL), "INVALID");
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"a\": 1]");
	json_decref(rec);
}
END_TEST

START_TEST(prefill_refusal_switches_to_the_user_form_for_good)
{
	/* The refused call takes no answer; its slot stays unused. */
	static const char *const ans[] = { "-", "2}", "3}" };
	struct unit_model f = { ans, 3, 0, 0, 0, 1, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\":");

	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(f.calls, 2);
	ck_assert_int_eq(oc.attempts, 1);
	ck_assert(oc.prefill_refused);
	ck_assert_int_eq(o.form, SAOP_RESUME_USER);
	ck_assert_str_eq(msg(f.last, 1, "role"), "user");
	ck_assert_str_eq(msg(f.last, 1, "content"), PROMPT_AND(":")
	    SAOP_RESUME_PARTIAL_LABEL "{\"a\":");
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"a\":2}");
	json_decref(rec);
	/* The next record goes straight to the user form. */
	rec = record("{\"b\":");
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(f.calls, 3);
	ck_assert(!oc.prefill_refused);
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"b\":3}");
	json_decref(f.last);
	json_decref(rec);
}
END_TEST

START_TEST(forced_prefill_refusal_is_an_error)
{
	struct unit_model f = { NULL, 0, 0, 0, 0, 1, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\": ");

	opts_for(&o, &f);
	o.form = SAOP_RESUME_PREFILL;
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), -SAOP_EPREFILL);
	ck_assert_int_eq(e.code, SAOP_EPREFILL);
	ck_assert_int_eq(f.calls, 1);
	json_decref(f.last);
	json_decref(rec);
}
END_TEST

START_TEST(openai_auto_uses_the_user_form)
{
	static const char *const ans[] = { "1}" };
	struct unit_model f = { ans, 1, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\":");

	opts_for(&o, &f);
	o.provider = SAOP_PROVIDER_OPENAI;
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(f.last,
	    "messages")), 2);
	ck_assert_str_eq(msg(f.last, 1, "role"), "user");
	json_decref(f.last);
	json_decref(rec);
}
END_TEST

START_TEST(network_failure_keeps_the_progress_made)
{
	static const char *const ans[] = { "[1, 2,", "3" };
	struct unit_model f = { ans, 2, 0, 2, SAOP_ENETWORK, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\":");

	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e),
	    -SAOP_ENETWORK);
	ck_assert_int_eq(e.code, SAOP_ENETWORK);
	ck_assert_int_eq(oc.attempts, 2);
	ck_assert_int_eq(oc.status, SAOP_RESUME_SUSPENDED);
	/* The partial second answer is kept too: it still scans truncated. */
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"a\":[1, 2,3");
	ck_assert_str_eq(sget(rec, "resume", "status"), "SUSPENDED");
	ck_assert_str_eq(sget(rec, "state", NULL), "TRUNCATED");
	json_decref(f.last);
	json_decref(rec);
}
END_TEST

START_TEST(a_call_that_cannot_start_is_no_attempt)
{
	/* ECONFIG (libcurl cannot be loaded, say): nothing was sent. */
	struct unit_model f = { NULL, 0, 0, 1, SAOP_ECONFIG, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\": [1,");

	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e),
	    -SAOP_ECONFIG);
	ck_assert_int_eq(e.code, SAOP_ECONFIG);
	ck_assert_int_eq(f.calls, 1);
	ck_assert_int_eq(oc.attempts, 0);
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"a\": [1,");
	ck_assert_str_eq(sget(rec, "state", NULL), "TRUNCATED");
	json_decref(f.last);
	json_decref(rec);
}
END_TEST

START_TEST(no_call_marks_truncated_records_suspended)
{
	struct unit_model f = { NULL, 0, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"a\":");

	opts_for(&o, &f);
	o.no_call = 1;
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(f.calls, 0);
	ck_assert_int_eq(iget(rec, "resume", "attempts"), 0);
	ck_assert_str_eq(sget(rec, "resume", "status"), "SUSPENDED");
	ck_assert_str_eq(sget(rec, "raw", NULL), "{\"a\":");
	json_decref(rec);
}
END_TEST

START_TEST(record_without_raw_names_the_field)
{
	struct unit_model f = { NULL, 0, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = json_pack("{s:i}", "raw", 3);

	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), -SAOP_EDATA);
	ck_assert_str_eq(e.field, "/raw");
	json_decref(rec);
}
END_TEST

START_TEST(plan_says_which_records_need_a_call)
{
	struct unit_model f = { NULL, 0, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_err e;
	json_t *rec = record("[1, {\"a\"");
	json_t *req;

	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_plan(rec, &o, &req, &e), 1);
	ck_assert_str_eq(msg(req, 1, "content"), PROMPT_AND("\"a\""));
	ck_assert_str_eq(msg(req, 2, "content"), "[1, {\"a\"");
	json_decref(req);
	json_decref(rec);
	rec = record("[1]");
	ck_assert_int_eq(saop_resume_plan(rec, &o, &req, &e), 0);
	ck_assert_ptr_null(req);
	json_decref(rec);
}
END_TEST

/* ---- The likeliest reading (issue: merges that are never wrong) ---- */

/* saop_resume_join() of prefix and cont with o: the verdict, *amb, and
 * the text (new). */
static char *
join_of(const char *prefix, size_t plen, const char *cont, size_t clen,
    struct saop_resume_join *o, int *verdict)
{
	struct saop_err e;
	char *out;
	size_t len;

	*verdict = saop_resume_join(prefix, plen, cont, clen, o, &out, &len,
	    NULL, &e);
	ck_assert_int_ge(*verdict, 0);
	ck_assert_uint_eq(len, strlen(out));
	return out;
}

/* prefix + cont joins into want (NULL: not taken, two readings). */
static void
joins_to(const char *prefix, const char *cont, size_t unseen,
    const char *want)
{
	struct saop_resume_join o;
	char *out;
	int v;

	memset(&o, 0, sizeof(o));
	o.unseen = unseen;
	out = join_of(prefix, strlen(prefix), cont, strlen(cont), &o, &v);
	if (want == NULL) {
		ck_assert_msg(o.ambiguous && v != SAOP_COMPLETE &&
		    strcmp(out, prefix) == 0, "'%s' + '%s': taken as '%s'",
		    prefix, cont, out);
	} else {
		ck_assert_msg(!o.ambiguous && v == SAOP_COMPLETE,
		    "'%s' + '%s': verdict %d, ambiguous %d", prefix, cont, v,
		    o.ambiguous);
		ck_assert_str_eq(out, want);
	}
	free(out);
}

START_TEST(a_restarted_string_is_read_as_a_repeat)
{
	/* Example 1: the open string's text written again. */
	joins_to("{\"thought\": \"hello wor", "hello world\"}", 0,
	    "{\"thought\": \"hello world\"}");
	/* With its quote. */
	joins_to("{\"thought\": \"hello wor", "\"hello world\"}", 0,
	    "{\"thought\": \"hello world\"}");
	/* A text that repeats itself going on with itself is as likely
	 * as its restart: not taken. */
	joins_to("{\"t\": \"QQQQQQQQQQ", "QQQQQQQQQQQQ\"}", 0, NULL);
	joins_to("{\"t\": \"abcabcabca", "abcabcabcab\"}", 0, NULL);
}
END_TEST

/*
 * Words after a complete value that restate the received text are not a
 * remark to cut: "hello wor + "hello w (a string restarted from its quote,
 * the answer ended there) is not "hello wor" with words after it.
 */
START_TEST(restated_words_are_not_cut_as_a_remark)
{
	struct saop_resume_join o;
	char *out;
	int v;

	memset(&o, 0, sizeof(o));
	out = join_of("\"hello wor", 10, "\"hello w", 8, &o, &v);
	ck_assert_msg(v != SAOP_COMPLETE, "taken as '%s'", out);
	free(out);
	/* A remark that the received text does not hold is cut. */
	memset(&o, 0, sizeof(o));
	out = join_of("\"hello wor", 10, "ld\" Let me know", 16, &o, &v);
	ck_assert_int_eq(v, SAOP_COMPLETE);
	ck_assert_str_eq(out, "\"hello world\"");
	free(out);
}
END_TEST

START_TEST(a_short_repeat_with_two_readings_is_not_taken)
{
	/* Examples 2 and 3: "22, 333]" is "22, 33" written again or the
	 * numbers 3322 and 333; ", 33, 333]" is ", 33" again or one more
	 * 33.  Both read as complete JSON, two values: neither is taken. */
	joins_to("[1, 22, 33", "22, 333]", 0, NULL);
	joins_to("[1, 22, 33", ", 33, 333]", 0, NULL);
}
END_TEST

START_TEST(blank_lines_before_a_number_are_not_content)
{
	/* Example 4: "33" then blank lines then "3": the number goes on. */
	joins_to("[1, 22, 33", "\n\n3, 4]", 0, "[1, 22, 333, 4]");
}
END_TEST

START_TEST(a_long_repeat_inside_code_is_not_taken)
{
	/* Example 5: "return 0;" written again inside a string, or code
	 * that says it twice (code repeats itself): not taken. */
	joins_to("{\"a\": {\"b\": {\"code\": \"int main(void) {return 0;",
	    "return 0;}\\n\"}}}", 0, NULL);
	/* The whole string again is a restart of it: taken. */
	joins_to("{\"a\": {\"b\": {\"code\": \"int main(void) {return 0;",
	    "int main(void) {return 0;}\\n\"}}}", 0,
	    "{\"a\": {\"b\": {\"code\": \"int main(void) {return 0;}\\n"
	    "\"}}}");
	/* A short string's restart is as likely as its text doubled. */
	joins_to("[\"abc", "abcd\"]", 0, NULL);
}
END_TEST

START_TEST(prefill_white_space_and_a_rewritten_escape_are_never_doubled)
{
	/* The space the prefill did not show, sent again by the model. */
	joins_to("[\"a ", " b\"]", 1, "[\"a b\"]");
	/* A cut escape written whole: read as the '\\' again or as "\\\\":
	 * two values, not taken; a cut \u escape written whole has one. */
	joins_to("[\"a\\", "\\n\"]", 0, NULL);
	joins_to("[\"a\\u00", "\\u00e9\"]", 0, "[\"a\\u00e9\"]");
	/* A cut 4-byte character written whole. */
	joins_to("[\"a\xf0\x9f", "\xf0\x9f\x98\x80\"]", 0,
	    "[\"a\xf0\x9f\x98\x80\"]");
}
END_TEST

START_TEST(merge_refuses_a_cut_answer_read_two_ways)
{
	struct saop_resume_join o;
	char *out;
	int v;

	/* "bcd", cut: "b" written again or a second "b": the next request
	 * would show one of them, so neither is kept. */
	memset(&o, 0, sizeof(o));
	o.cut = 1;
	out = join_of("{\"a\": \"ab", 9, "bcd", 3, &o, &v);
	ck_assert(o.ambiguous && v == SAOP_TRUNCATED);
	ck_assert_str_eq(out, "{\"a\": \"ab");
	free(out);
	/* Only white space between tokens apart: one text, kept as it came
	 * (the model goes on from its own). */
	memset(&o, 0, sizeof(o));
	o.cut = 1;
	out = join_of("{\n ", 3, " \"a\": [1", 8, &o, &v);
	ck_assert(!o.ambiguous && v == SAOP_TRUNCATED);
	ck_assert_str_eq(out, "{\n  \"a\": [1");
	free(out);
}
END_TEST

/* A scripted model that keeps every request: answer i of texts, cut
 * (finish_reason length) when cut[i]. */
struct script {
	const char *const *texts;
	const int *cut;
	int n, calls;
	json_t *req[4];
};

static int
script_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct script *s = arg;
	int i = s->calls++;

	(void)e;
	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	if (i < 4)
		s->req[i] = json_deep_copy(request);
	a->raw = strdup(i < s->n ? s->texts[i] : "");
	a->raw_len = strlen(a->raw);
	strcpy(a->finish_reason, i < s->n && s->cut[i] ? "length" : "stop");
	return 0;
}

/* The text request (the i-th of s) shows the model as its own: the
 * prefill, or what follows the partial-output label to the end of the
 * user turn. */
static const char *
own_of(const struct script *s, int i)
{
	size_t n;
	const char *t;

	ck_assert_ptr_nonnull(s->req[i]);
	t = sim_own_text(s->req[i], &n);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(strlen(t), n);
	return t;
}

START_TEST(a_second_attempt_is_merged_onto_the_text_it_shows)
{
	/*
	 * Issue 31: C code with escapes, cut inside "path": "src/p., a
	 * model that repeats the last 6 bytes it was shown.  Two readings,
	 * so asked once more: the second request shows the model the same
	 * text as its own (the note before it), never the note and a tail
	 * after it, and nothing is merged onto another text.
	 */
	static const char *const whole =
	    "{\"tool\": \"write_file\", \"arguments\": {\"path\": "
	    "\"src/p.c\", \"content\": \"int main(void) {\\n\\t"
	    "printf(\\\"%d\\\\n\\\", 42);\\n}\\n\"}}";
	const char *at = strstr(whole, "c\", \"content");
	size_t cut = (size_t)(at - whole);
	const char *texts[2];
	static const int cuts[2] = { 0, 0 };
	struct script sc;
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	char *prefix = strndup(whole, cut);
	json_t *rec = record(prefix);
	int form, i;

	texts[0] = texts[1] = at - 6;
	for (form = SAOP_RESUME_PREFILL; form <= SAOP_RESUME_USER; form++) {
		memset(&sc, 0, sizeof(sc));
		sc.texts = texts;
		sc.cut = cuts;
		sc.n = 2;
		memset(&o, 0, sizeof(o));
		o.model.call = script_call;
		o.model.arg = &sc;
		o.form = (enum saop_resume_form)form;
		json_decref(rec);
		rec = record(prefix);
		ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
		ck_assert_int_eq(sc.calls, 2);
		ck_assert_int_eq(oc.ambiguous, 2);
		ck_assert_int_eq(oc.status, SAOP_RESUME_EXHAUSTED);
		ck_assert_str_eq(sget(rec, "raw", NULL), prefix);
		ck_assert_str_ne(sget(rec, "state", NULL), "OK");
		/* Both requests show the model the same text as its own. */
		ck_assert_str_eq(own_of(&sc, 0), prefix);
		ck_assert_str_eq(own_of(&sc, 1), prefix);
		/* The second says why, before that text. */
		ck_assert_ptr_nonnull(strstr(msg(sc.req[1], 1, "content"),
		    SAOP_RESUME_AGAIN_LABEL));
		ck_assert_ptr_null(strstr(msg(sc.req[0], 1, "content"),
		    SAOP_RESUME_AGAIN_LABEL));
		for (i = 0; i < 2; i++)
			json_decref(sc.req[i]);
	}
	json_decref(rec);
	free(prefix);
}
END_TEST

START_TEST(a_cut_answer_read_two_ways_is_not_kept_before_the_next_request)
{
	/* The first answer, cut, repeats the last 3 bytes: "pathpath..."
	 * or "path...": not kept, the next request shows the text as it
	 * was, and the honest answer to it resolves the record. */
	static const char *const texts[] = {
		"ath\": \"src/p.c\", \"con", "\": \"src/p.c\", \"n\": 1}"
	};
	static const int cuts[] = { 1, 0 };
	struct script sc;
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("{\"path");
	int i;

	memset(&sc, 0, sizeof(sc));
	sc.texts = texts;
	sc.cut = cuts;
	sc.n = 2;
	memset(&o, 0, sizeof(o));
	o.model.call = script_call;
	o.model.arg = &sc;
	o.form = SAOP_RESUME_USER;
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(oc.ambiguous, 1);
	ck_assert_str_eq(own_of(&sc, 1), "{\"path");
	ck_assert_int_eq(oc.status, SAOP_RESUME_RESOLVED);
	ck_assert_str_eq(sget(rec, "raw", NULL),
	    "{\"path\": \"src/p.c\", \"n\": 1}");
	for (i = 0; i < 2; i++)
		json_decref(sc.req[i]);
	json_decref(rec);
}
END_TEST

START_TEST(a_top_level_number_cut_at_the_limit_is_resumed)
{
	/* "12345.678" cut to "1" with finish_reason length: not complete. */
	static const char *const texts[] = { "2345.678" };
	struct unit_model f = { texts, 1, 0, 0, 0, 0, NULL, 0 };
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	json_t *rec = record("1");

	json_object_set_new(rec, "finish_reason", json_string("length"));
	opts_for(&o, &f);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(oc.status, SAOP_RESUME_RESOLVED);
	ck_assert_str_eq(sget(rec, "raw", NULL), "12345.678");
	json_decref(rec);
	json_decref(f.last);
	f.last = NULL;
	/* Without the limit, "1" is a complete answer. */
	rec = record("1");
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(oc.status, SAOP_RESUME_SKIPPED);
	json_decref(rec);
}
END_TEST

/* The ways a model carries on in the sweep below. */
enum manner {
	M_EXACT, M_REPEAT, M_RESTART, M_RESTART_NOQUOTE, M_BLANK,
	M_REWRITE, M_COUNT
};
static const char *const manner_names[M_COUNT] = {
	"exactly from the cut", "repeating the last k bytes (k=1..20)",
	"restarting the open token", "restarting it without its quote",
	"blank lines first", "rewriting a cut escape or character whole"
};

/* Counts of the sweep, per manner. */
struct tally {
	size_t resolved, other;
};

/* Join shown (what the model saw: P, or P without the white space a
 * prefill strips: unseen bytes) + cont for answer a (n bytes) and tally
 * it: a complete join must be a itself. */
static void
sweep_one(const char *a, size_t n, const char *p, size_t plen,
    size_t unseen, const char *pre, size_t prelen, const char *rest,
    size_t rlen, struct tally *t, const char *what)
{
	struct saop_resume_join o;
	char *cont, *out;
	int v;

	cont = malloc(prelen + rlen + 1);
	memcpy(cont, pre, prelen);
	memcpy(cont + prelen, rest, rlen);
	memset(&o, 0, sizeof(o));
	o.unseen = unseen;
	out = join_of(p, plen, cont, prelen + rlen, &o, &v);
	if (v == SAOP_COMPLETE && !o.ambiguous) {
		ck_assert_msg(strlen(out) == n && memcmp(out, a, n) == 0,
		    "%s: '%.*s' + '%.*s' RESOLVED as '%s', not '%.*s'", what,
		    (int)plen, p, (int)(prelen + rlen), cont, out, (int)n, a);
		t->resolved++;
	} else {
		/* Never OK: not complete, or left as received. */
		ck_assert(v != SAOP_COMPLETE || strcmp(out, p) == 0 ||
		    o.ambiguous);
		t->other++;
	}
	free(cont);
	free(out);
}

/* Every manner at cut k of answer a (n bytes) for the path that shows
 * the model p = a[0..plen) (saop-resume: up to the resume point rp;
 * saop-suspend: all received), in form prefill or user. */
static void
sweep_cut(const char *a, size_t n, size_t plen, size_t rp, int prefill,
    struct tally *t)
{
	struct saop_detect_result r;
	size_t shown = plen, k, ts;
	char what[64];

	if (prefill)
		while (shown > 0 && strchr(" \t\r\n", a[shown - 1]) != NULL)
			shown--;
	snprintf(what, sizeof(what), "cut at %zu, %s", plen,
	    prefill ? "prefill" : "user");
	sweep_one(a, n, a, plen, plen - shown, "", 0, a + shown, n - shown,
	    &t[M_EXACT], what);
	sweep_one(a, n, a, plen, plen - shown, "\n\n", 2, a + shown,
	    n - shown, &t[M_BLANK], what);
	for (k = 1; k <= 20 && k <= shown; k++)
		if (((unsigned char)a[shown - k] & 0xc0) != 0x80)
			sweep_one(a, n, a, plen, plen - shown, "", 0,
			    a + shown - k, n - shown + k, &t[M_REPEAT], what);
	ck_assert_int_eq(saop_detect_buffer(a, shown, 0, &r), 0);
	ts = (size_t)r.truncation_index;
	while (ts < shown && strchr(" \t\r\n", a[ts]) != NULL)
		ts++;
	if (r.verdict == SAOP_TRUNCATED && ts < shown) {
		sweep_one(a, n, a, plen, plen - shown, "", 0, a + ts, n - ts,
		    &t[M_RESTART], what);
		if (a[ts] == '"')
			sweep_one(a, n, a, plen, plen - shown, "", 0,
			    a + ts + 1, n - ts - 1, &t[M_RESTART_NOQUOTE],
			    what);
	}
	saop_detect_result_free(&r);
	if (rp < plen)
		sweep_one(a, n, a, plen, 0, "", 0, a + rp, n - rp,
		    &t[M_REWRITE], what);
}

START_TEST(no_manner_of_carrying_on_is_ever_resolved_wrong)
{
	/*
	 * Model stand-ins that each carry on honestly in one manner, over
	 * every cut of a corpus (strings, numbers, literals, escapes,
	 * 2- and 4-byte characters, between tokens), as saop-resume shows
	 * the partial output (up to the resume point) and as saop-suspend's
	 * continuation does (all received, a cut escape or character too),
	 * prefill (trailing white space unseen) and user form: every
	 * complete join is the intended answer byte for byte; the others
	 * are not OK.  The counts go to the log.
	 */
	static const char *const corpus[] = {
		"{\"saop\": \"1.0\", \"turn_index\": 3, \"agent_role\": "
		"\"developer\", \"thought\": \"Read the file, then fix the "
		"bug.\", \"action\": {\"tool\": \"read_file\", \"parameters\": "
		"{\"path\": \"src/main.c\", \"limit\": 120}}}",
		"{\"thought\": \"caf\\u00e9 \\ud83d\\ude00 \xf0\x9f\x98\x80 "
		"na\xc3\xafve \\\"quoted\\\" back\\\\slash\\t\", \"action\": "
		"null}",
		"[1, -22, 3.25, 4e10, -0.5E-3, 123456789, true, false, null, "
		"[], {}]",
		"{\"a\": {\"b\": [true, null, \"x\"]}, \"c\": -1.5e+2, \"d\": "
		"\"line1\\nline2\"}",
		"{\"code\": \"int main(void) {return 0;}\\n\", \"ok\": true}"
	};
	struct tally t[M_COUNT];
	struct saop_detect_result r;
	size_t i, k, n, rp, total = 0;
	int m, prefill;

	memset(t, 0, sizeof(t));
	for (i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		n = strlen(corpus[i]);
		for (k = 1; k < n; k++) {
			ck_assert_int_eq(saop_detect_buffer(corpus[i], k, 0,
			    &r), 0);
			rp = (size_t)r.resume_index;
			m = r.verdict == SAOP_TRUNCATED;
			saop_detect_result_free(&r);
			if (!m)
				continue;
			for (prefill = 0; prefill < 2; prefill++) {
				/* saop-resume, then saop-suspend. */
				sweep_cut(corpus[i], n, rp, rp, prefill, t);
				sweep_cut(corpus[i], n, k, rp, prefill, t);
			}
		}
	}
	for (m = 0; m < M_COUNT; m++) {
		fprintf(stderr, "sweep: %-44s %6zu resolved byte-exact, "
		    "%5zu not OK, 0 wrong\n", manner_names[m], t[m].resolved,
		    t[m].other);
		total += t[m].resolved + t[m].other;
		/* Every manner is mostly resolved, not just refused. */
		ck_assert_msg(t[m].resolved * 2 > t[m].other, "%s: %zu of %zu",
		    manner_names[m], t[m].resolved,
		    t[m].resolved + t[m].other);
	}
	ck_assert_uint_ge(total, 10000);
}
END_TEST

/* ---- saop-suspend's continuation: the same merge ---- */

/* A stream cut after cut bytes of answer, then a continuation in one
 * manner (manner, k) of what the next request shows. */
struct cutstream {
	const char *answer;
	size_t len, cut;
	enum manner manner;
	size_t k;
	int calls;
};

/* The text the continuation request shows as the partial answer (the
 * assistant's prefill, or what follows SAOP_RESUME_PARTIAL_LABEL), *n
 * bytes. */
static const char *
cut_shown(const json_t *req, size_t *n)
{
	const char *t = sim_own_text(req, n);

	ck_assert_ptr_nonnull(t);
	return t;
}

/* The stand-in: the first call breaks after the cut, the second carries
 * on from what it was shown in its manner. */
static int
cutstream_call(void *arg, const json_t *req, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct cutstream *c = arg;
	struct saop_detect_result r;
	const char *p;
	size_t n, from, ts;
	const char *lead = "";

	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	if (c->calls++ == 0) {
		a->raw = strndup(c->answer, c->cut);
		a->raw_len = c->cut;
		return saop__fail(e, SAOP_ENETWORK, 0, "cut");
	}
	p = cut_shown(req, &n);
	ck_assert(n <= c->len && memcmp(p, c->answer, n) == 0);
	from = n;
	ck_assert_int_eq(saop_detect_text(p, n, 0, &r), 0);
	ts = (size_t)r.truncation_index;
	while (ts < n && strchr(" \t\r\n", p[ts]) != NULL)
		ts++;
	switch (c->manner) {
	case M_REPEAT:
		from = n - c->k;
		break;
	case M_RESTART:
		from = ts;	/* (n, the cut, when between tokens) */
		break;
	case M_RESTART_NOQUOTE:
		if (ts < n && p[ts] == '"')
			from = ts + 1;
		break;
	case M_BLANK:
		lead = "\n\n";
		break;
	case M_REWRITE:
		from = (size_t)r.resume_index;
		break;
	default:
		break;
	}
	saop_detect_result_free(&r);
	a->raw_len = strlen(lead) + c->len - from;
	a->raw = malloc(a->raw_len + 1);
	strcpy(a->raw, lead);
	memcpy(a->raw + strlen(lead), c->answer + from, c->len - from);
	a->raw[a->raw_len] = '\0';
	strcpy(a->finish_reason, "stop");
	return 0;
}

/* The probe: the endpoint is up. */
static int
up(void *arg)
{
	(void)arg;
	return 1;
}

START_TEST(suspend_continuation_is_never_wrong)
{
	/*
	 * saop-suspend's continuation of a stream cut by the network, a
	 * sample of cuts (every eleventh byte, and every one inside an
	 * escape or a character) of two answers, each manner (k =
	 * 1, 3, 12 for the repeats),
	 * prefill (anthropic) and user form (openai): a raw that scans
	 * complete is the answer byte for byte; the rest is left cut (not
	 * OK downstream).  The counts go to the log.
	 */
	static const char *const answers[] = {
		"{\"thought\": \"caf\\u00e9 \xf0\x9f\x98\x80 \\\"q\\\" "
		"back\\\\slash\", \"n\": -12.5e3, \"ok\": [true, null]}",
		"```json\n{\"saop\": \"1.0\", \"thought\": \"Read it all.\", "
		"\"action\": null}\n```"
	};
	char dir[64], path[96], cmd[128];
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_detect_result r;
	struct cutstream c;
	struct saop_store *st;
	struct saop_err e;
	struct tally t[M_COUNT];
	const char *raw;
	size_t i, k, n, rl, rp;
	json_t *rec;
	int m, form, ks[] = { 1, 3, 12 }, kk;

	memset(t, 0, sizeof(t));
	/* In memory where there is one: a turn saved is a synchronous
	 * write, and there are hundreds. */
	snprintf(dir, sizeof(dir), "%s/check_resume.XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.sqlite", dir);
	ck_assert_ptr_nonnull(st = saop_store_open(path, &e));
	for (i = 0; i < 2; i++) {
		n = strlen(answers[i]);
		for (k = 2; k < n; k++) {
			ck_assert_int_eq(saop_detect_text(answers[i], k, 0,
			    &r), 0);
			rp = (size_t)r.resume_index;
			m = r.verdict == SAOP_TRUNCATED;
			saop_detect_result_free(&r);
			/* Every eleventh cut, and each inside an escape or
			 * a character. */
			if (!m || (k % 11 != 2 && rp == k))
				continue;
			/* (A stream's text deltas are whole characters.) */
			if (((unsigned char)answers[i][k] & 0xc0) == 0x80)
				continue;
			for (m = 0; m < M_COUNT; m++)
			for (kk = 0; kk < (m == M_REPEAT ? 3 : 1); kk++)
			for (form = SAOP_RESUME_PREFILL;
			    form <= SAOP_RESUME_USER; form++) {
				if (m == M_REWRITE && rp == k)
					continue;
				memset(&c, 0, sizeof(c));
				c.answer = answers[i];
				c.len = n;
				c.cut = k;
				c.manner = (enum manner)m;
				c.k = (size_t)ks[kk];
				if (m == M_REPEAT && c.k > k - 1)
					continue;
				memset(&o, 0, sizeof(o));
				o.store = st;
				o.max_resumes = 1;
				o.poll_ms = 1;
				o.form = (enum saop_resume_form)form;
				o.model.call = cutstream_call;
				o.model.arg = &c;
				o.probe = up;
				rec = json_pack("{s:s,s:i,s:{s:[{s:s,s:s}]}}",
				    "task_id", "c", "turn", 1, "request",
				    "messages", "role", "user", "content",
				    "go");
				(void)saop_suspend_turn(rec, NULL, &o, &out,
				    &e);
				raw = saop_record_raw(rec, &rl);
				ck_assert_int_eq(saop_detect_text(raw, rl, 0,
				    &r), 0);
				if (r.verdict == SAOP_COMPLETE) {
					ck_assert_msg(rl == n && memcmp(raw,
					    answers[i], n) == 0, "cut %zu, "
					    "%s, form %d: '%s'", k,
					    manner_names[m], form, raw);
					t[m].resolved++;
				} else {
					t[m].other++;
				}
				saop_detect_result_free(&r);
				json_decref(rec);
			}
		}
	}
	for (m = 0; m < M_COUNT; m++) {
		fprintf(stderr, "suspend: %-44s %5zu complete byte-exact, "
		    "%4zu left cut, 0 wrong\n", manner_names[m], t[m].resolved,
		    t[m].other);
		ck_assert_uint_gt(t[m].resolved, 0);
	}
	/* A model that carries on exactly is nearly always taken (not
	 * where a byte of the text happens to repeat at the cut: "al" +
	 * "l." reads as "al." too). */
	ck_assert_uint_le(t[M_EXACT].other * 10, t[M_EXACT].resolved);
	ck_assert_uint_le(t[M_BLANK].other * 10, t[M_BLANK].resolved);
	saop_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The log row and the events of one resumed record. */
START_TEST(every_cut_of_the_corpus_resumes_byte_for_byte)
{
	/*
	 * Every byte of every corpus answer as a cut point (inside strings,
	 * escapes, \u escapes, 2- and 4-byte characters, numbers, literals,
	 * between tokens, after a colon), prefill and user form, 7
	 * characters an answer: the record comes back as the whole answer,
	 * byte for byte, or, where a piece read two ways, left cut with
	 * every received byte; the stand-in always finds what it was shown.
	 */
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_detect_result r;
	struct standin st;
	struct saop_err e;
	size_t n, i, k, *lens, in_utf8 = 0, in_escape = 0, done = 0;
	size_t refused = 0, rp;
	char **v = corpus(&n, &lens);
	const char *raw;
	size_t rl;
	json_t *rec;
	int form;

	for (i = 0; i < n; i++)
		for (k = 1; k < lens[i]; k++) {
			r = scan_of(v[i], k);
			if (r.verdict != SAOP_TRUNCATED) {
				saop_detect_result_free(&r);
				continue;
			}
			rp = (size_t)r.resume_index;
			if (((unsigned char)v[i][k] & 0xc0) == 0x80 && rp < k)
				in_utf8++;
			else if (rp < k)
				in_escape++;
			saop_detect_result_free(&r);
			for (form = SAOP_RESUME_PREFILL;
			    form <= SAOP_RESUME_USER; form++) {
				done++;
				memset(&st, 0, sizeof(st));
				st.answer = v[i];
				st.len = lens[i];
				st.chars = 7;
				memset(&o, 0, sizeof(o));
				o.model.call = standin_call;
				o.model.arg = &st;
				o.form = (enum saop_resume_form)form;
				o.max_attempts = (int)(lens[i] / 7 + 2);
				rec = record_n(v[i], k);
				ck_assert_msg(saop_resume_record(rec, &o,
				    &oc, &e) == 0, "answer %zu cut at %zu "
				    "(form %d): %s", i, k, form, e.msg);
				raw = saop_record_raw(rec, &rl);
				ck_assert_int_eq(st.lost, 0);
				if (oc.status != SAOP_RESUME_RESOLVED) {
					/* A 7-character piece that could be
					 * the tail again: not taken, the
					 * same text asked again; left cut. */
					ck_assert_int_gt(oc.ambiguous, 0);
					ck_assert(rl >= rp &&
					    memcmp(raw, v[i], rp) == 0);
					ck_assert_int_ne(oc.state,
					    SAOP_STATE_OK);
					refused++;
					json_decref(rec);
					continue;
				}
				/* (Complete before the answer's trailing
				 * white space came: no call for it.) */
				ck_assert_msg(rl <= lens[i] &&
				    memcmp(raw, v[i], rl) == 0 &&
				    strspn(v[i] + rl, " \t\r\n") ==
				    lens[i] - rl, "answer %zu "
				    "cut at %zu (form %d): %s, '%.*s'", i, k,
				    form, saop_resume_status_name(oc.status),
				    (int)rl, raw);
				ck_assert_uint_eq(oc.cost.received_bytes, st.sent);
				ck_assert_int_eq(oc.attempts, st.calls);
				json_decref(rec);
			}
		}
	/* Pieces that read two ways are rare (a cut piece is decided
	 * before the next request shows it: one that could be the tail
	 * written again is not kept, saop-resume(1)). */
	fprintf(stderr, "corpus: %zu resumed, %zu RESOLVED byte for byte, "
	    "%zu left cut (a piece read two ways)\n", done, done - refused,
	    refused);
	ck_assert_uint_le(refused * 4, done);
	/* The corpus has cuts inside characters and escapes. */
	ck_assert_uint_ge(in_utf8, 6);
	ck_assert_uint_ge(in_escape, 20);
	ck_assert_uint_ge(done, 1000);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	free(lens);
}
END_TEST

START_TEST(a_cut_four_byte_character_is_written_again_whole)
{
	/* "ab" then 3 of the 4 bytes of U+1F600: the model is shown "ab
	 * (resume_index 3), the record never carries the cut bytes. */
	static const char want[] = "[\"ab\xf0\x9f\x98\x80" "c\"]";
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct standin st = { want, sizeof(want) - 1, 2, 0, 0, 0 };
	struct saop_err e;
	json_t *rec = record_n(want, 7);
	json_t *req;

	memset(&o, 0, sizeof(o));
	o.model.call = standin_call;
	o.model.arg = &st;
	o.form = SAOP_RESUME_USER;
	ck_assert_int_eq(saop_resume_plan(rec, &o, &req, &e), 1);
	ck_assert_str_eq(msg(req, 1, "content"), PROMPT_AND("[")
	    SAOP_RESUME_PARTIAL_LABEL "[\"ab");
	json_decref(req);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_str_eq(sget(rec, "raw", NULL), want);
	ck_assert_int_eq(oc.attempts, 2);
	json_decref(rec);
}
END_TEST

START_TEST(an_unrelated_answer_never_resolves_with_lost_bytes)
{
	/*
	 * Over every cut of the corpus, answers that have nothing to do
	 * with it (words, another document, closers, fences): whatever the
	 * verdict, the text written begins with every byte received up to
	 * the resume point, and a RESOLVED one is complete JSON.
	 */
	static const char *const unrelated[] = {
		"I cannot help with that.", "{\"other\": true}",
		"```json\n{\"other\": [1, 2]}\n```", "\"}]}", "]}}", "}",
		"null}", "0]}", "e\"}", "Here you go: {\"a\": 1}", "",
		"\n\n", "\"a\": 1}", "ue, \"x\": 1}"
	};
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_detect_result r;
	struct saop_err e;
	struct unit_model f;
	size_t n, i, k, u, rp, *lens, resolved = 0;
	char **v = corpus(&n, &lens);
	const char *raw;
	size_t rl;
	json_t *rec;
	int form;

	for (i = 0; i < n; i++)
		for (k = 1; k < lens[i]; k++) {
			r = scan_of(v[i], k);
			rp = (size_t)r.resume_index;
			if (r.verdict != SAOP_TRUNCATED) {
				saop_detect_result_free(&r);
				continue;
			}
			saop_detect_result_free(&r);
			for (u = 0; u < sizeof(unrelated) /
			    sizeof(unrelated[0]); u++)
				for (form = SAOP_RESUME_PREFILL;
				    form <= SAOP_RESUME_USER; form++) {
					memset(&f, 0, sizeof(f));
					f.answers = &unrelated[u];
					f.n = 1;
					opts_for(&o, &f);
					o.form = (enum saop_resume_form)form;
					o.max_attempts = 1;
					rec = record_n(v[i], k);
					ck_assert_int_eq(saop_resume_record(rec,
					    &o, &oc, &e), 0);
					raw = saop_record_raw(rec, &rl);
					ck_assert_msg(rl >= rp &&
					    memcmp(raw, v[i], rp) == 0,
					    "answer %zu cut at %zu + '%s': "
					    "'%.*s' lost received bytes", i, k,
					    unrelated[u], (int)rl, raw);
					if (oc.status == SAOP_RESUME_RESOLVED) {
						r = scan_of(raw, rl);
						ck_assert_int_eq(r.verdict,
						    SAOP_COMPLETE);
						saop_detect_result_free(&r);
						resolved++;
					}
					json_decref(f.last);
					json_decref(rec);
				}
		}
	/* Some of them do close a cut (a test that can fail). */
	ck_assert_uint_ge(resolved, 10);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	free(lens);
}
END_TEST

START_TEST(resumed_record_writes_one_log_row_and_its_events)
{
	static const char *const ans[] = { "[1,", "2]}" };
	struct unit_model f = { ans, 2, 0, 0, 0, 0, NULL, 0 };
	char dir[] = "/tmp/check_resume.XXXXXX", path[64], cmd[96];
	struct saop_resume_opts o;
	struct saop_resume_outcome oc;
	struct saop_err e;
	sqlite3_stmt *st;
	json_t *rec = record("{\"a\":");

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.sqlite", dir);
	opts_for(&o, &f);
	o.store = saop_store_open(path, &e);
	ck_assert_ptr_nonnull(o.store);
	ck_assert_int_eq(saop_resume_record(rec, &o, &oc, &e), 0);
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(o.store),
	    "SELECT task_id, turn_number, truncation_index, "
	    "initial_chunk_length, resume_attempts, final_status, "
	    "count(*) OVER () FROM partial_completion_log", -1, &st, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "t1");
	ck_assert_int_eq(sqlite3_column_int(st, 1), 4);
	ck_assert_int_eq(sqlite3_column_int(st, 2), 5);
	ck_assert_int_eq(sqlite3_column_int(st, 3), 5);
	ck_assert_int_eq(sqlite3_column_int(st, 4), 2);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 5),
	    "RESOLVED");
	ck_assert_int_eq(sqlite3_column_int(st, 6), 1);
	sqlite3_finalize(st);
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(o.store),
	    "SELECT group_concat(event, ' ') FROM "
	    "(SELECT event FROM events ORDER BY rowid)", -1, &st, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 0),
	    "PARTIAL_COMPLETION_DETECTED RESUME_SUCCEEDED");
	sqlite3_finalize(st);
	saop_store_close(o.store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	json_decref(f.last);
	json_decref(rec);
}
END_TEST

static Suite *
resume_suite(void)
{
	Suite *s = suite_create("resume");
	TCase *t;

	t = tcase_create("request");
	tcase_add_test(t, prompt_text_is_exactly_the_design_text);
	tcase_add_test(t, prefill_request_ends_with_the_prefix_as_assistant_turn);
	tcase_add_test(t, user_request_quotes_the_prefix_after_the_prompt);
	tcase_add_test(t, tail_context_sends_no_byte_of_the_prefix);
	tcase_add_test(t,
	    tail_context_sends_the_partial_token_after_the_last_valid_one);
	tcase_add_test(t, request_is_built_when_the_record_has_none);
	tcase_add_test(t, empty_prefix_gets_no_assistant_turn);
	tcase_add_test(t, messages_that_are_not_an_array_name_the_field);
	suite_add_tcase(s, t);
	t = tcase_create("merge");
	tcase_add_test(t, merge_appends_a_plain_continuation);
	tcase_add_test(t, merge_keeps_leading_white_space_as_it_came);
	tcase_add_test(t, merge_drops_a_repeated_tail_of_the_prefix);
	tcase_add_test(t, merge_drops_a_repeat_of_the_whole_prefix);
	tcase_add_test(t, merge_keeps_a_repeat_when_dropping_scans_no_better);
	tcase_add_test(t, merge_takes_the_body_of_a_code_fence);
	tcase_add_test(t, merge_drops_a_sentence_around_the_continuation);
	tcase_add_test(t, merge_never_reads_past_the_tail_of_a_cut_string);
	tcase_add_test(t, merge_reports_a_continuation_truncated_again);
	tcase_add_test(t, merge_keeps_the_cut_token_and_appends_its_rest);
	tcase_add_test(t,
	    merge_takes_a_resent_token_only_when_it_keeps_every_byte);
	tcase_add_test(t, merge_never_passes_invalid_json_as_complete);
	tcase_add_test(t, merge_refuses_a_cut_answer_read_two_ways);
	suite_add_tcase(s, t);
	t = tcase_create("record");
	tcase_add_test(t, truncated_record_resolves_in_one_attempt);
	tcase_add_test(t, prefill_white_space_is_kept_for_the_merge);
	tcase_add_test(t, progress_accumulates_and_the_cost_is_counted);
	tcase_add_test(t, continuation_truncated_again_takes_a_second_attempt);
	tcase_add_test(t, a_second_attempt_is_merged_onto_the_text_it_shows);
	tcase_add_test(t,
	    a_cut_answer_read_two_ways_is_not_kept_before_the_next_request);
	tcase_add_test(t, attempts_stop_at_the_maximum_and_keep_the_best_merge);
	tcase_add_test(t, max_attempts_can_be_raised);
	tcase_add_test(t, invalid_continuation_counts_and_the_next_starts_over);
	tcase_add_test(t, complete_record_is_skipped_without_a_call);
	tcase_add_test(t, invalid_record_passes_through_flagged);
	tcase_add_test(t, prefill_refusal_switches_to_the_user_form_for_good);
	tcase_add_test(t, forced_prefill_refusal_is_an_error);
	tcase_add_test(t, openai_auto_uses_the_user_form);
	tcase_add_test(t, network_failure_keeps_the_progress_made);
	tcase_add_test(t, a_call_that_cannot_start_is_no_attempt);
	tcase_add_test(t, no_call_marks_truncated_records_suspended);
	tcase_add_test(t, record_without_raw_names_the_field);
	tcase_add_test(t, plan_says_which_records_need_a_call);
	tcase_add_test(t, resumed_record_writes_one_log_row_and_its_events);
	tcase_add_test(t, every_cut_of_the_corpus_resumes_byte_for_byte);
	tcase_add_test(t, a_restarted_string_is_read_as_a_repeat);
	tcase_add_test(t, restated_words_are_not_cut_as_a_remark);
	tcase_add_test(t, a_short_repeat_with_two_readings_is_not_taken);
	tcase_add_test(t, blank_lines_before_a_number_are_not_content);
	tcase_add_test(t, a_long_repeat_inside_code_is_not_taken);
	tcase_add_test(t,
	    prefill_white_space_and_a_rewritten_escape_are_never_doubled);
	tcase_add_test(t, a_top_level_number_cut_at_the_limit_is_resumed);
	tcase_add_test(t, no_manner_of_carrying_on_is_ever_resolved_wrong);
	tcase_add_test(t, suspend_continuation_is_never_wrong);
	tcase_add_test(t, a_cut_four_byte_character_is_written_again_whole);
	tcase_add_test(t, an_unrelated_answer_never_resolves_with_lost_bytes);
	tcase_add_test(t, the_record_is_written_once_with_the_state_returned);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	return unit_run(resume_suite());
}
