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

#include "saop-private.h"

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

int
main(void)
{
	Suite *s = suite_create("cov_resume");
	TCase *tc = tcase_create("resume");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, a_complete_record_that_came_truncated_is_ok);
	tcase_add_test(tc, a_record_without_a_task_id_resolves);
	tcase_add_test(tc, prefill_refused_in_auto_falls_back_to_the_user_form);
	tcase_add_test(tc, a_call_that_fails_keeps_what_it_received);
	tcase_add_test(tc, answers_that_never_complete_exhaust_the_attempts);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
