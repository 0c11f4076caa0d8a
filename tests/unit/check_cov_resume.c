/*
 * check_cov_resume.c: the branches of the resume protocol's attempt loop
 * (saop_resume_record()) that no other test takes (issue 25): a record
 * that came TRUNCATED but is complete, one without a task id, the model
 * refusing prefill in AUTO, a call that fails after sending part of an
 * answer, one that sends nothing, a configuration failure (no attempt), an
 * answer that never merges, and the attempts running out.  The model is a
 * script (struct saop_model), no network.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saop-private.h"
#include "db-sqlite.h"
#include "unit.h"

/* One scripted answer: the code the call returns and the text it got. */
struct step {
	int rc;
	const char *text;
	const char *finish;
};

/* The script and what was asked of it. */
struct script {
	const struct step *steps;
	int n, calls;
	int prefill_seen;	/* a request whose last turn is the assistant's */
};

/* The model: the next step.  Returns its code (the text filled either way). */
static int
scripted(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct script *s = arg;
	const struct step *st;
	json_t *msgs = json_object_get(request, "messages");
	const char *last = json_string_value(json_object_get(json_array_get(
	    msgs, json_array_size(msgs) - 1), "role"));

	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	ck_assert_int_lt(s->calls, s->n);
	st = &s->steps[s->calls++];
	if (last != NULL && strcmp(last, "assistant") == 0)
		s->prefill_seen++;
	a->raw = strdup(st->text);
	ck_assert_ptr_nonnull(a->raw);
	a->raw_len = strlen(st->text);
	snprintf(a->finish_reason, sizeof(a->finish_reason), "%s",
	    st->finish ? st->finish : "stop");
	if (st->rc != 0)
		saop__fail(e, -st->rc, 0, "scripted failure %d", st->rc);
	return st->rc;
}

/* A truncated record (with task id when task is not NULL). */
static json_t *
record(const char *task, const char *raw, const char *state)
{
	json_t *r = json_pack("{s:s, s:{s:[{s:s, s:s}]}}", "raw", raw,
	    "request", "messages", "role", "user", "content", "JSON please");

	ck_assert_ptr_nonnull(r);
	if (task != NULL)
		json_object_set_new(r, "task_id", json_string(task));
	if (state != NULL)
		json_object_set_new(r, "state", json_string(state));
	return r;
}

/* Resume rec with the script; opts as given.  Returns the call's code. */
static int
resume(json_t *rec, struct script *s, struct saop_resume_opts *o,
    struct saop_resume_outcome *out)
{
	struct saop_err e;

	o->model.call = scripted;
	o->model.arg = s;
	saop_err_clear(&e);
	return saop_resume_record(rec, o, out, &e);
}

static const char *
str(const json_t *rec, const char *key)
{
	return json_string_value(json_object_get(rec, key));
}

START_TEST(a_complete_record_that_came_truncated_is_ok)
{
	struct saop_resume_opts o = { 0 };
	struct saop_resume_outcome out;
	struct script s = { NULL, 0, 0, 0 };
	json_t *r = record("t", "{\"a\": 1}", "TRUNCATED");

	ck_assert_int_eq(resume(r, &s, &o, &out), 0);
	ck_assert_str_eq(str(r, "state"), "OK");
	ck_assert_int_eq(out.status, SAOP_RESUME_SKIPPED);
	ck_assert_int_eq(s.calls, 0);
	json_decref(r);
	/* Complete and OK already: the state is left alone. */
	r = record("t", "[1]", "USER_ESCALATION");
	ck_assert_int_eq(resume(r, &s, &o, &out), 0);
	ck_assert_str_eq(str(r, "state"), "USER_ESCALATION");
	json_decref(r);
}
END_TEST

START_TEST(a_record_without_a_task_id_resolves)
{
	static const struct step one[] = { { 0, "2]}", NULL } };
	struct saop_resume_opts o = { 0 };
	struct saop_resume_outcome out;
	struct script s = { one, 1, 0, 0 };
	json_t *r = record(NULL, "{\"a\": [1, ", NULL);

	ck_assert_int_eq(resume(r, &s, &o, &out), 0);
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, 2]}");
	ck_assert_int_eq(out.status, SAOP_RESUME_RESOLVED);
	json_decref(r);
	/* The options' task id then. */
	o.task_id = "opt-task";
	s.calls = 0;
	r = record(NULL, "{\"a\": [1, ", NULL);
	ck_assert_int_eq(resume(r, &s, &o, &out), 0);
	ck_assert_int_eq(out.status, SAOP_RESUME_RESOLVED);
	json_decref(r);
}
END_TEST

START_TEST(prefill_refused_in_auto_falls_back_to_the_user_form)
{
	static const struct step two[] = { { -SAOP_EPREFILL, "", NULL },
	    { 0, "2]}", NULL } };
	struct saop_resume_opts o = { 0 };
	struct saop_resume_outcome out;
	struct script s = { two, 2, 0, 0 };
	json_t *r = record("t", "{\"a\": [1, ", NULL);

	o.provider = SAOP_PROVIDER_ANTHROPIC;
	o.form = SAOP_RESUME_AUTO;
	ck_assert_int_eq(resume(r, &s, &o, &out), 0);
	ck_assert_int_eq(out.prefill_refused, 1);
	ck_assert_int_eq(out.attempts, 1);	/* the refusal is no attempt */
	ck_assert_int_eq(s.prefill_seen, 1);	/* the first call only */
	ck_assert_int_eq(o.form, SAOP_RESUME_USER);
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, 2]}");
	json_decref(r);
	/* PREFILL asked for: a refusal is final. */
	s.calls = 0;
	s.prefill_seen = 0;
	o.form = SAOP_RESUME_PREFILL;
	r = record("t", "{\"a\": [1, ", NULL);
	ck_assert_int_eq(resume(r, &s, &o, &out), -SAOP_EPREFILL);
	ck_assert_int_eq(s.calls, 1);
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, ");
	json_decref(r);
}
END_TEST

START_TEST(a_call_that_fails_keeps_what_it_received)
{
	static const struct step cut[] = { { -SAOP_ENETWORK, "2, 3", NULL } };
	static const struct step none[] = { { -SAOP_ENETWORK, "", NULL } };
	static const struct step conf[] = { { -SAOP_ECONFIG, "", NULL } };
	struct saop_resume_opts o = { 0 };
	struct saop_resume_outcome out;
	struct script s = { cut, 1, 0, 0 };
	json_t *r = record("t", "{\"a\": [1, ", NULL);

	ck_assert_int_eq(resume(r, &s, &o, &out), -SAOP_ENETWORK);
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, 2, 3");
	ck_assert_int_eq(out.attempts, 1);
	json_decref(r);
	s.steps = none;
	s.calls = 0;
	r = record("t", "{\"a\": [1, ", NULL);
	ck_assert_int_eq(resume(r, &s, &o, &out), -SAOP_ENETWORK);
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, ");
	json_decref(r);
	/* Nothing sent: no attempt counted. */
	s.steps = conf;
	s.calls = 0;
	r = record("t", "{\"a\": [1, ", NULL);
	ck_assert_int_eq(resume(r, &s, &o, &out), -SAOP_ECONFIG);
	ck_assert_int_eq(out.attempts, 0);
	json_decref(r);
}
END_TEST

START_TEST(answers_that_never_complete_exhaust_the_attempts)
{
	static const struct step bad[] = { { 0, "}}}} no", NULL },
	    { 0, "2, ", "length" }, { 0, "3, ", "length" } };
	struct saop_resume_opts o = { 0 };
	struct saop_resume_outcome out;
	struct script s = { bad, 3, 0, 0 };
	json_t *r = record("t", "{\"a\": [1, ", NULL);

	o.max_attempts = 3;
	ck_assert_int_eq(resume(r, &s, &o, &out), 0);
	ck_assert_int_eq(out.attempts, 3);
	ck_assert_int_eq(s.calls, 3);
	ck_assert_int_eq(out.status, SAOP_RESUME_EXHAUSTED);
	ck_assert_str_eq(str(r, "state"), "RESUME_EXHAUSTED");
	/* Every byte received that merged is kept. */
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, 2, 3, ");
	json_decref(r);
}
END_TEST

START_TEST(a_call_that_fails_after_the_whole_answer_resolves)
{
	/* The rest came whole, then the connection broke: the record is
	 * complete, and nothing is kept of the failure. */
	static const struct step tail[] = { { -SAOP_ENETWORK, "2]}", NULL } };
	struct saop_resume_opts o = { 0 };
	struct saop_resume_outcome out;
	struct script s = { tail, 1, 0, 0 };
	json_t *r = record("t", "{\"a\": [1, ", NULL);

	ck_assert_int_eq(resume(r, &s, &o, &out), 0);
	ck_assert_int_eq(out.status, SAOP_RESUME_RESOLVED);
	ck_assert_int_eq(out.verdict, SAOP_COMPLETE);
	ck_assert_int_eq(out.attempts, 1);
	ck_assert_int_eq(s.calls, 1);
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, 2]}");
	ck_assert_str_eq(str(r, "state"), "OK");
	json_decref(r);
}
END_TEST

START_TEST(a_refused_prefill_outside_the_prefill_form_is_final)
{
	/* AUTO with a provider that takes the user form: a prefill refusal
	 * cannot be the form's fault, so it is no reason to ask again. */
	static const struct step two[] = { { -SAOP_EPREFILL, "", NULL },
	    { 0, "2]}", NULL } };
	struct saop_resume_opts o = { 0 };
	struct saop_resume_outcome out;
	struct script s = { two, 2, 0, 0 };
	json_t *r = record("t", "{\"a\": [1, ", NULL);

	o.provider = SAOP_PROVIDER_OPENAI;
	o.form = SAOP_RESUME_AUTO;
	ck_assert_int_eq(resume(r, &s, &o, &out), -SAOP_EPREFILL);
	ck_assert_int_eq(s.calls, 1);
	ck_assert_int_eq(s.prefill_seen, 0);
	ck_assert_int_eq(out.prefill_refused, 0);
	ck_assert_int_eq(o.form, SAOP_RESUME_AUTO);
	ck_assert_int_eq(out.status, SAOP_RESUME_SUSPENDED);
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, ");
	ck_assert_str_eq(str(r, "state"), "TRUNCATED");
	json_decref(r);
}
END_TEST

START_TEST(a_request_that_is_no_object_is_refused_before_any_call)
{
	struct saop_resume_opts o = { 0 };
	struct saop_resume_outcome out;
	struct script s = { NULL, 0, 0, 0 };
	struct saop_err e;
	json_t *r = json_pack("{s:s, s:i}", "raw", "{\"a\": [1, ", "request",
	    5);

	o.model.call = scripted;
	o.model.arg = &s;
	saop_err_clear(&e);
	ck_assert_int_eq(saop_resume_record(r, &o, &out, &e), -SAOP_EDATA);
	ck_assert_str_eq(e.field, "/request");
	ck_assert_int_eq(s.calls, 0);
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, ");
	ck_assert_ptr_null(json_object_get(r, "resume"));
	json_decref(r);
	/* Messages that are no array: refused when the request is built,
	 * still before any call, the record as it came. */
	r = json_pack("{s:s, s:{s:i}}", "raw", "{\"a\": [1, ", "request",
	    "messages", 5);
	saop_err_clear(&e);
	ck_assert_int_eq(saop_resume_record(r, &o, &out, &e), -SAOP_EDATA);
	ck_assert_str_eq(e.field, "/request/messages");
	ck_assert_int_eq(s.calls, 0);
	ck_assert_int_eq(out.attempts, 0);
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, ");
	json_decref(r);
}
END_TEST

START_TEST(a_log_row_the_store_refuses_fails_the_record)
{
	/* The store refuses the partial_completion_log row (a trigger, as a
	 * full disk or a locked file would): the record says so (EDB), and
	 * no RESUME_SUCCEEDED event claims a resume the log does not hold. */
	static const struct step one[] = { { 0, "2]}", NULL } };
	char dir[] = "/tmp/check_cov_resume.XXXXXX", db[80], cmd[120];
	struct saop_resume_opts o = { 0 };
	struct saop_resume_outcome out;
	struct script s = { one, 1, 0, 0 };
	struct saop_err e;
	sqlite3_stmt *q;
	json_t *r = record("t", "{\"a\": [1, ", NULL);

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/state.sqlite", dir);
	o.store = saop_store_open(db, &e);
	ck_assert_msg(o.store != NULL, "%s", e.msg);
	ck_assert_int_eq(sqlite3_exec(saop__store_db(o.store),
	    "CREATE TRIGGER no_log BEFORE INSERT ON partial_completion_log "
	    "BEGIN SELECT RAISE(ABORT, 'the log is full'); END;", NULL, NULL,
	    NULL), SQLITE_OK);
	o.model.call = scripted;
	o.model.arg = &s;
	saop_err_clear(&e);
	ck_assert_int_eq(saop_resume_record(r, &o, &out, &e), -SAOP_EDB);
	ck_assert_int_eq(e.code, SAOP_EDB);
	ck_assert_int_eq(s.calls, 1);
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(o.store),
	    "SELECT group_concat(event, ',') FROM (SELECT event FROM events "
	    "ORDER BY id)", -1, &q, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 0),
	    "PARTIAL_COMPLETION_DETECTED");
	sqlite3_finalize(q);
	saop_store_close(o.store);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	json_decref(r);
}
END_TEST

/* saop_resume_join() of prefix and cont under opt; the verdict, *out
 * (static, NUL-terminated). */
static int
join(const char *prefix, const char *cont, struct saop_resume_join *opt,
    const char **out)
{
	static char keep[256];
	struct saop_err e;
	char *m = NULL;
	size_t mlen = 0;
	int v;

	saop_err_clear(&e);
	v = saop_resume_join(prefix, strlen(prefix), cont, strlen(cont), opt,
	    &m, &mlen, NULL, &e);
	ck_assert_int_ge(v, 0);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_lt(mlen, sizeof(keep));
	memcpy(keep, m, mlen);
	keep[mlen] = '\0';
	free(m);
	*out = keep;
	return v;
}

START_TEST(join_ignores_places_beyond_the_prefix)
{
	struct saop_resume_join j;
	const char *out;

	/* A JSON start past the end of the prefix: read from its start. */
	memset(&j, 0, sizeof(j));
	j.json_start = 100;
	j.wrapper = SAOP_WRAP_FENCE;
	ck_assert_int_eq(join("[1, ", "2]", &j, &out), SAOP_COMPLETE);
	ck_assert_str_eq(out, "[1, 2]");
	/* More unseen white space than the prefix holds: read as none
	 * unseen (nothing before the prefix is looked at), the repeated
	 * space dropped as a repeat. */
	memset(&j, 0, sizeof(j));
	j.unseen = 100;
	ck_assert_int_eq(join("[1, ", "  2]", &j, &out), SAOP_COMPLETE);
	ck_assert_str_eq(out, "[1,  2]");
	j.unseen = 0;
	ck_assert_int_eq(join("[1, ", "  2]", &j, &out), SAOP_COMPLETE);
	ck_assert_str_eq(out, "[1,  2]");
}
END_TEST

START_TEST(a_sentence_ending_in_a_colon_is_not_cut_after_it)
{
	struct saop_resume_join j;
	const char *out;

	/* "Wait:" ends at its colon: no reading after it; the words spoil
	 * the object, and the merge says so. */
	memset(&j, 0, sizeof(j));
	ck_assert_int_eq(join("{\"a\": 1, ", "Wait:", &j, &out),
	    SAOP_INVALID);
	ck_assert_str_eq(out, "{\"a\": 1, Wait:");
	/* With a space after it, the rest is read after the colon. */
	ck_assert_int_eq(join("{\"a\": 1, ", "Here: \"b\": 2}", &j, &out),
	    SAOP_COMPLETE);
	ck_assert_str_eq(out, "{\"a\": 1, \"b\": 2}");
}
END_TEST

START_TEST(many_repeats_and_a_spoiled_prefix)
{
	struct saop_resume_join j;
	const char *out;

	/* Twelve bytes that repeat themselves: more readings of a repeat
	 * than are tried; the string written again from its start is no
	 * likelier than the text going on with itself: not taken. */
	memset(&j, 0, sizeof(j));
	ck_assert_int_eq(join("[\"aaaaaaaaaaaa", "aaaaaaaaaaaa\"]", &j, &out),
	    SAOP_TRUNCATED);
	ck_assert(j.ambiguous);
	ck_assert_str_eq(out, "[\"aaaaaaaaaaaa");
	/* A prefix invalid before the cut: nothing after it mends it, and
	 * no words are cut from the answer. */
	ck_assert_int_eq(join("{\"a\": 1,, \"b\": ", "2} Done.", &j, &out),
	    SAOP_INVALID);
	ck_assert_str_eq(out, "{\"a\": 1,, \"b\": 2} Done.");
}
END_TEST

START_TEST(a_prefill_with_only_the_tail_shown_sees_no_unseen_space)
{
	/* The tail context sends no prefill: the partial's trailing space
	 * was not hidden, and the answer's own is kept as it came. */
	static const struct step one[] = { { 0, "2]}", NULL } };
	struct saop_resume_opts o = { 0 };
	struct saop_resume_outcome out;
	struct script s = { one, 1, 0, 0 };
	json_t *r = record("t", "{\"a\": [1, ", NULL);

	o.form = SAOP_RESUME_PREFILL;
	o.context = SAOP_RESUME_TAIL;
	ck_assert_int_eq(resume(r, &s, &o, &out), 0);
	ck_assert_int_eq(s.prefill_seen, 0);
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, 2]}");
	ck_assert_int_eq(out.status, SAOP_RESUME_RESOLVED);
	json_decref(r);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cov_resume");
	TCase *tc = tcase_create("resume");

	tcase_add_test(tc, a_complete_record_that_came_truncated_is_ok);
	tcase_add_test(tc, a_record_without_a_task_id_resolves);
	tcase_add_test(tc, prefill_refused_in_auto_falls_back_to_the_user_form);
	tcase_add_test(tc, a_call_that_fails_keeps_what_it_received);
	tcase_add_test(tc, answers_that_never_complete_exhaust_the_attempts);
	tcase_add_test(tc, a_call_that_fails_after_the_whole_answer_resolves);
	tcase_add_test(tc, a_refused_prefill_outside_the_prefill_form_is_final);
	tcase_add_test(tc, a_request_that_is_no_object_is_refused_before_any_call);
	tcase_add_test(tc, a_log_row_the_store_refuses_fails_the_record);
	tcase_add_test(tc, join_ignores_places_beyond_the_prefix);
	tcase_add_test(tc, a_sentence_ending_in_a_colon_is_not_cut_after_it);
	tcase_add_test(tc, many_repeats_and_a_spoiled_prefix);
	tcase_add_test(tc,
	    a_prefill_with_only_the_tail_shown_sees_no_unseen_space);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
