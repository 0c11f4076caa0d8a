/* check_suspend: the suspend policy (lib/suspend.c) with a stand-in model. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saop-private.h"

static char dir[] = "/tmp/check_suspend.XXXXXX";
static char path[256];
static struct saop_store *st;

/* A fresh store in a fresh directory for each test. */
static void
setup(void)
{
	struct saop_err e;

	strcpy(dir, "/tmp/check_suspend.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.sqlite", dir);
	st = saop_store_open(path, &e);
	ck_assert_msg(st != NULL, "%s", e.msg);
}

/* Close the store and remove its files. */
static void
teardown(void)
{
	char cmd[300];

	saop_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* One integer from a query on the store, or -1. */
static long
query_int(const char *sql)
{
	sqlite3_stmt *s;
	long v = -1;

	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(st), sql, -1, &s,
	    NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* One text from a query on the store (static buffer), or "". */
static const char *
query_text(const char *sql)
{
	static char buf[256];
	sqlite3_stmt *s;

	buf[0] = '\0';
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(st), sql, -1, &s,
	    NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		snprintf(buf, sizeof(buf), "%s", sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return buf;
}

START_TEST(upsert_twice_overwrites)
{
	struct saop_err e;
	json_t *a = json_pack("{s:i}", "v", 1), *b = json_pack("{s:i}", "v", 2);
	json_t *got;

	ck_assert_int_eq(saop_turn_state_save(st, "t1", a, &e), 0);
	ck_assert_int_eq(saop_turn_state_save(st, "t1", b, &e), 0);
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    1);
	ck_assert_int_eq(saop_turn_state_load(st, "t1", &got, &e), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(got, "v")), 2);
	json_decref(got);
	ck_assert_int_eq(saop_turn_state_delete(st, "t1", &e), 1);
	ck_assert_int_eq(saop_turn_state_delete(st, "t1", &e), 0);
	json_decref(a);
	json_decref(b);
}
END_TEST

/* saop_turn_state_each() callback that counts. */
static int
count_each(void *arg, const char *task, json_t *state, const char *at)
{
	(void)task;
	(void)state;
	(void)at;
	(*(int *)arg)++;
	return 0;
}

START_TEST(resume_with_no_row_returns_nothing)
{
	struct saop_err e;
	json_t *got = json_true();	/* a singleton: nothing to free */
	int n = 0;

	ck_assert_int_eq(saop_turn_state_load(st, "nope", &got, &e), 0);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(saop_turn_state_each(st, NULL, count_each, &n, &e),
	    0);
	ck_assert_int_eq(n, 0);
}
END_TEST

/* The classification of code with HTTP status http. */
static enum saop_suspend_class
cls(int code, int http)
{
	struct saop_err e;

	saop_err_clear(&e);
	e.code = code;
	e.http_status = http;
	return saop_suspend_classify(&e);
}

START_TEST(failure_classification_table)
{
	/* Suspend: the network is lost. */
	ck_assert_int_eq(cls(SAOP_ENETWORK, 0), SAOP_SUSPEND_LOST);
	ck_assert_int_eq(cls(SAOP_ENETWORK, 200), SAOP_SUSPEND_LOST);
	ck_assert_int_eq(cls(SAOP_ENETWORK, 500), SAOP_SUSPEND_LOST);
	ck_assert_int_eq(cls(SAOP_ENETWORK, 529), SAOP_SUSPEND_LOST);
	ck_assert_int_eq(cls(SAOP_ERATELIMIT, 503), SAOP_SUSPEND_LOST);
	ck_assert_int_eq(cls(SAOP_ERATELIMIT, 529), SAOP_SUSPEND_LOST);
	/* Waited out: a 429. */
	ck_assert_int_eq(cls(SAOP_ERATELIMIT, 429), SAOP_SUSPEND_WAIT);
	/* Refused: no waiting fixes them. */
	ck_assert_int_eq(cls(SAOP_EREFUSED, 401), SAOP_SUSPEND_REFUSE);
	ck_assert_int_eq(cls(SAOP_EREFUSED, 429), SAOP_SUSPEND_REFUSE);
	ck_assert_int_eq(cls(SAOP_EBADREQ, 400), SAOP_SUSPEND_REFUSE);
	ck_assert_int_eq(cls(SAOP_EPREFILL, 400), SAOP_SUSPEND_REFUSE);
	ck_assert_int_eq(cls(SAOP_EPROTO, 200), SAOP_SUSPEND_REFUSE);
	ck_assert_int_eq(cls(SAOP_ECONFIG, 0), SAOP_SUSPEND_REFUSE);
	/* Not call failures at all. */
	ck_assert_int_eq(cls(SAOP_OK, 0), SAOP_SUSPEND_NONE);
	ck_assert_int_eq(cls(SAOP_EDB, 0), SAOP_SUSPEND_NONE);
	ck_assert_int_eq(cls(SAOP_ENOMEM, 0), SAOP_SUSPEND_NONE);
	ck_assert_int_eq(cls(SAOP_EDATA, 0), SAOP_SUSPEND_NONE);
}
END_TEST

/* ---- A stand-in model: a script of answers ---- */

struct step {
	int code;		/* 0 or a (positive) error code */
	int http;
	long retry_after_ms;
	const char *text;	/* what arrives */
};

struct script {
	const struct step *steps;
	int n, calls;
	int row_before[8];	/* a saved row existed at call i */
	char status_before[8][32];
	json_t *requests[8];
	int probes, up_after;	/* probe says up from probe up_after on */
	volatile sig_atomic_t stop;
	int stop_after;		/* set stop at this probe (0: never) */
};

static struct script sc;

/* The stand-in call: the next step of the script. */
static int
fake_call(void *arg, const json_t *req, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct script *s = arg;
	const struct step *p = &s->steps[s->calls < s->n ? s->calls :
	    s->n - 1];

	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	saop_err_clear(e);
	if (s->calls < 8) {
		s->row_before[s->calls] = (int)query_int(
		    "SELECT count(*) FROM agent_turn_states");
		snprintf(s->status_before[s->calls], 32, "%s", query_text(
		    "SELECT status FROM tasks WHERE task_id = 't'"));
		s->requests[s->calls] = json_deep_copy(req);
	}
	s->calls++;
	a->raw = strdup(p->text);
	a->raw_len = strlen(p->text);
	if (p->code == 0) {
		strcpy(a->finish_reason, "stop");
		return 0;
	}
	e->code = p->code;
	e->http_status = p->http;
	e->retry_after_ms = p->retry_after_ms;
	snprintf(e->msg, sizeof(e->msg), "scripted failure %d", p->code);
	return -p->code;
}

/* The stand-in probe: down until up_after probes, maybe stop. */
static int
fake_probe(void *arg)
{
	struct script *s = arg;

	s->probes++;
	if (s->stop_after > 0 && s->probes >= s->stop_after)
		s->stop = 1;
	return s->probes >= s->up_after;
}

/* Options with the stand-ins, 1 ms polls. */
static void
opts(struct saop_suspend_opts *o, const struct step *steps, int n)
{
	int i;

	for (i = 0; i < 8; i++)
		json_decref(sc.requests[i]);
	memset(&sc, 0, sizeof(sc));
	sc.steps = steps;
	sc.n = n;
	sc.up_after = 1;
	memset(o, 0, sizeof(*o));
	o->store = st;
	o->stage = "saop-suspend";
	o->max_resumes = 3;
	o->poll_ms = 1;
	o->form = SAOP_RESUME_USER;
	o->model.call = fake_call;
	o->model.arg = &sc;
	o->probe = fake_probe;
	o->probe_arg = &sc;
	o->stop = &sc.stop;
}

/* A record of task "t". */
static json_t *
rec(void)
{
	return json_pack("{s:s, s:i, s:{s:[{s:s, s:s}]}}", "task_id", "t",
	    "turn", 4, "request", "messages", "role", "user", "content",
	    "hi");
}

/* The events of the store, comma-joined. */
static const char *
events(void)
{
	return query_text("SELECT group_concat(event, ',') FROM (SELECT "
	    "event FROM events ORDER BY id)");
}

START_TEST(saved_before_the_call_deleted_after)
{
	static const struct step s[] = { { 0, 0, -1, "{\"a\": 1}" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec();

	opts(&o, s, 1);
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e), 0);
	ck_assert_int_eq(sc.row_before[0], 1);
	ck_assert_str_eq(sc.status_before[0], "IN_PROGRESS");
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    0);
	ck_assert_str_eq(json_string_value(json_object_get(r, "raw")),
	    "{\"a\": 1}");
	ck_assert_str_eq(json_string_value(json_object_get(r,
	    "finish_reason")), "stop");
	ck_assert_int_eq(out.calls, 1);
	json_decref(r);
}
END_TEST

START_TEST(cut_answer_continues_from_where_it_stopped)
{
	static const struct step s[] = {
		/* (Cut where the answer goes on with another byte: "hel" +
		 * "lo" also reads as the "l" written again, "helo".) */
		{ SAOP_ENETWORK, 200, -1, "{\"a\": \"he" },
		{ 0, 0, -1, "llo\"}" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec(), *msgs;

	opts(&o, s, 2);
	sc.up_after = 3;	/* down for two probes */
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e), 0);
	ck_assert_str_eq(json_string_value(json_object_get(r, "raw")),
	    "{\"a\": \"hello\"}");
	ck_assert_int_eq(out.calls, 2);
	ck_assert_int_eq(out.resumes, 1);
	ck_assert_int_eq(sc.probes, 3);
	ck_assert_int_eq(out.received, strlen("{\"a\": \"hello\"}"));
	/* The second call saw the part received, saved before it. */
	ck_assert_str_eq(sc.status_before[1], "IN_PROGRESS");
	/* The original message once, then the resume turn. */
	msgs = json_object_get(sc.requests[1], "messages");
	ck_assert_int_eq(json_array_size(msgs), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    msgs, 0), "content")), "hi");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
	    json_array_get(msgs, 1), "content")), "{\"a\": \"he"));
	ck_assert_str_eq(events(), "NETWORK_LOST,NETWORK_RESTORED,"
	    "TURN_RESUMED");
	ck_assert_str_eq(query_text("SELECT status FROM tasks"),
	    "IN_PROGRESS");
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    0);
	json_decref(r);
}
END_TEST

START_TEST(resumptions_are_bounded_and_the_state_kept)
{
	static const struct step s[] = {
		{ SAOP_ENETWORK, 0, -1, "" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec(), *state;

	opts(&o, s, 1);
	o.max_resumes = 2;
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_ENETWORK);
	ck_assert_int_eq(saop_err_exit_status(e.code), 75);
	ck_assert_int_eq(out.calls, 3);
	ck_assert_int_eq(out.resumes, 2);
	ck_assert_int_eq(out.suspended, 1);
	ck_assert_str_eq(json_string_value(json_object_get(r, "state")),
	    "PAUSED_FOR_INTERVENTION");
	ck_assert_str_eq(query_text("SELECT status || ' ' || reason FROM "
	    "tasks"), "PAUSED_FOR_INTERVENTION NETWORK_LOSS");
	ck_assert_int_eq(saop_turn_state_load(st, "t", &state, &e), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(state,
	    "resumes")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(state, "stage")),
	    "saop-suspend");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
	    state, "record"), "turn")), 4);
	json_decref(state);
	json_decref(r);
}
END_TEST

START_TEST(no_wait_suspends_without_probing)
{
	static const struct step s[] = {
		{ SAOP_ENETWORK, 0, -1, "[1, " } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec(), *state;

	opts(&o, s, 1);
	o.no_wait = 1;
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_ENETWORK);
	ck_assert_int_eq(out.calls, 1);
	ck_assert_int_eq(sc.probes, 0);
	ck_assert_int_eq(saop_turn_state_load(st, "t", &state, &e), 1);
	ck_assert_str_eq(json_string_value(json_object_get(state, "partial")),
	    "[1, ");
	ck_assert_int_eq(json_integer_value(json_object_get(state,
	    "received")), 4);
	json_decref(state);
	json_decref(r);
}
END_TEST

START_TEST(a_saved_state_resumes_from_its_partial)
{
	static const struct step s[] = { { 0, 0, -1, "2]" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec(), *state;

	state = json_pack("{s:s, s:s, s:i, s:i}", "stage", "saop-suspend",
	    "partial", "[1, ", "received", 4, "resumes", 3);
	opts(&o, s, 1);
	ck_assert_int_eq(saop_suspend_turn(r, state, &o, &out, &e), 0);
	ck_assert_str_eq(json_string_value(json_object_get(r, "raw")),
	    "[1, 2]");
	ck_assert_int_eq(out.calls, 1);
	json_decref(state);
	json_decref(r);
}
END_TEST

START_TEST(refusal_gives_up_at_once)
{
	static const struct step s[] = { { SAOP_EREFUSED, 401, -1, "" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec();

	opts(&o, s, 1);
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_EREFUSED);
	ck_assert_int_eq(out.calls, 1);
	ck_assert_int_eq(sc.probes, 0);
	ck_assert_int_eq(out.suspended, 0);
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    0);
	ck_assert_str_eq(events(), "");
	json_decref(r);
}
END_TEST

START_TEST(rate_limit_is_waited_out_not_a_loss)
{
	static const struct step s[] = {
		{ SAOP_ERATELIMIT, 429, 20, "" },
		{ 0, 0, -1, "{}" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec();

	opts(&o, s, 2);
	o.max_resumes = 0;
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e), 0);
	ck_assert_int_eq(out.calls, 2);
	ck_assert_int_eq(out.rate_waits, 1);
	ck_assert_int_eq(out.resumes, 0);
	ck_assert_str_eq(events(), "");
	json_decref(r);
}
END_TEST

START_TEST(stop_while_waiting_keeps_the_state)
{
	static const struct step s[] = { { SAOP_ENETWORK, 0, -1, "{\"x\"" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec();

	opts(&o, s, 1);
	sc.up_after = 1000;
	sc.stop_after = 2;
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_ENETWORK);
	ck_assert_int_eq(sc.probes, 2);
	ck_assert_int_eq(out.suspended, 1);
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    1);
	ck_assert_str_eq(events(), "NETWORK_LOST");
	json_decref(r);
}
END_TEST

START_TEST(the_monitor_gives_up_after_max_resumes_polls)
{
	static const struct step s[] = { { SAOP_ENETWORK, 0, -1, "" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec();

	opts(&o, s, 1);
	sc.up_after = 1000;
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_ENETWORK);
	ck_assert_int_eq(sc.probes, 3);
	ck_assert_int_eq(out.calls, 1);
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    1);
	json_decref(r);
}
END_TEST

/* ---- The policy at the model-call seam, under other protocols ---- */

/* A guard for stage around the scripted model, 1 ms polls. */
static void
guard_for(struct saop_suspend_guard *g, const struct step *steps, int n,
    const char *stage)
{
	memset(g, 0, sizeof(*g));
	opts(&g->opts, steps, n);
	g->opts.stage = stage;
}

/* A truncated record of task "t" for the resume protocol. */
static json_t *
trunc_rec(void)
{
	json_t *r = rec();

	json_object_set_new(r, "raw", json_string("{\"a\": [1, "));
	return r;
}

START_TEST(resume_protocol_pauses_and_resumes_through_the_guard)
{
	static const struct step s[] = {
		{ SAOP_ENETWORK, 0, -1, "" },
		{ 0, 0, -1, "2]}" } };
	struct saop_suspend_guard g;
	struct saop_resume_opts ro;
	struct saop_resume_outcome out;
	struct saop_err e;
	json_t *r = trunc_rec();

	guard_for(&g, s, 2, "saop-resume");
	sc.up_after = 2;	/* down at the first probe, up at the second */
	memset(&ro, 0, sizeof(ro));
	ro.form = SAOP_RESUME_USER;
	ro.model = saop_suspend_model(&g);
	ro.store = st;
	g.rec = r;
	ck_assert_int_eq(saop_resume_record(r, &ro, &out, &e), 0);
	ck_assert_int_eq(out.status, SAOP_RESUME_RESOLVED);
	ck_assert_int_eq(out.attempts, 1);	/* the protocol saw one call */
	ck_assert_int_eq(g.out.calls, 2);
	ck_assert_int_eq(g.out.resumes, 1);
	ck_assert_int_eq(sc.probes, 2);
	ck_assert_str_eq(json_string_value(json_object_get(r, "raw")),
	    "{\"a\": [1, 2]}");
	/* The same continuation was sent again. */
	ck_assert(json_equal(sc.requests[0], sc.requests[1]));
	/* Saved at the loss, deleted once the call succeeded. */
	ck_assert_int_eq(sc.row_before[1], 1);
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    0);
	ck_assert_str_eq(query_text("SELECT status FROM tasks"),
	    "IN_PROGRESS");
	ck_assert_str_eq(events(), "PARTIAL_COMPLETION_DETECTED,NETWORK_LOST,"
	    "NETWORK_RESTORED,TURN_RESUMED,RESUME_SUCCEEDED");
	json_decref(r);
}
END_TEST

START_TEST(no_wait_through_the_guard_keeps_the_turn_of_its_stage)
{
	static const struct step s[] = {
		{ SAOP_ENETWORK, 0, -1, "2, " } };
	struct saop_suspend_guard g;
	struct saop_resume_opts ro;
	struct saop_resume_outcome out;
	struct saop_err e;
	json_t *r = trunc_rec(), *state;

	guard_for(&g, s, 1, "saop-resume");
	g.opts.no_wait = 1;
	memset(&ro, 0, sizeof(ro));
	ro.form = SAOP_RESUME_USER;
	ro.model = saop_suspend_model(&g);
	g.rec = r;
	ck_assert_int_eq(saop_resume_record(r, &ro, &out, &e),
	    -SAOP_ENETWORK);
	ck_assert_int_eq(g.out.suspended, 1);
	ck_assert_int_eq(sc.probes, 0);
	ck_assert_ptr_nonnull(strstr(e.msg, "run saop-resume again"));
	/* The protocol kept what came before the loss. */
	ck_assert_int_eq(out.status, SAOP_RESUME_SUSPENDED);
	ck_assert_str_eq(json_string_value(json_object_get(r, "raw")),
	    "{\"a\": [1, 2, ");
	ck_assert_int_eq(saop_turn_state_load(st, "t", &state, &e), 1);
	ck_assert_str_eq(json_string_value(json_object_get(state, "stage")),
	    "saop-resume");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    state, "record"), "raw")), "{\"a\": [1, ");
	json_decref(state);
	ck_assert_str_eq(query_text("SELECT status || ' ' || reason FROM "
	    "tasks"), "PAUSED_FOR_INTERVENTION NETWORK_LOSS");
	json_decref(r);
}
END_TEST

START_TEST(guard_leaves_a_turn_another_stage_saved)
{
	static const struct step s[] = { { 0, 0, -1, "ok" } };
	struct saop_suspend_guard g;
	struct saop_llm_answer a;
	struct saop_model m;
	struct saop_err e;
	json_t *r = rec(), *other = json_pack("{s:s}", "stage",
	    "saop-suspend");

	ck_assert_int_eq(saop_turn_state_save(st, "t", other, &e), 0);
	guard_for(&g, s, 1, "saop-validate");
	g.rec = r;
	m = saop_suspend_model(&g);
	ck_assert_int_eq(saop_model_call(&m, json_object_get(r, "request"),
	    &a, &e), 0);
	saop_llm_answer_free(&a);
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    1);
	json_decref(other);
	json_decref(r);
}
END_TEST

START_TEST(validate_protocol_pauses_and_resumes_through_the_guard)
{
	static const struct step s[] = {
		{ SAOP_ENETWORK, 503, -1, "" },
		{ 0, 0, -1, "{\"saop\": \"1.0\", \"turn_index\": 0, "
		    "\"agent_role\": \"developer\", \"thought\": \"t\", "
		    "\"action\": null}" } };
	struct saop_suspend_guard g;
	struct saop_validate_opts vo;
	struct saop_err e;
	json_t *r = rec();

	json_object_set_new(r, "raw", json_string("{\"thought\": 1}"));
	guard_for(&g, s, 2, "saop-validate");
	memset(&vo, 0, sizeof(vo));
	vo.schema = saop_schema_envelope_v1(&e);
	vo.max_retries = 2;
	vo.model = saop_suspend_model(&g);
	vo.store = st;
	g.rec = r;
	ck_assert_int_eq(saop_validate_record(r, &vo, &e), 0);
	ck_assert_int_eq(g.out.calls, 2);
	ck_assert_int_eq(g.out.resumes, 1);
	ck_assert(json_is_true(json_object_get(json_object_get(r, "validate"),
	    "valid")));
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    0);
	saop_schema_free((struct saop_schema *)vo.schema);
	json_decref(r);
}
END_TEST

START_TEST(probe_of_a_closed_port_says_down)
{
	/* Port 1 on loopback: nothing listens there in a test box. */
	ck_assert_int_eq(saop_suspend_probe("http://127.0.0.1:1/v1", 200), 0);
	ck_assert_int_eq(saop_suspend_probe("not a url", 200), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("suspend");
	TCase *tc = tcase_create("suspend");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, upsert_twice_overwrites);
	tcase_add_test(tc, resume_with_no_row_returns_nothing);
	tcase_add_test(tc, failure_classification_table);
	tcase_add_test(tc, saved_before_the_call_deleted_after);
	tcase_add_test(tc, cut_answer_continues_from_where_it_stopped);
	tcase_add_test(tc, resumptions_are_bounded_and_the_state_kept);
	tcase_add_test(tc, no_wait_suspends_without_probing);
	tcase_add_test(tc, a_saved_state_resumes_from_its_partial);
	tcase_add_test(tc, refusal_gives_up_at_once);
	tcase_add_test(tc, rate_limit_is_waited_out_not_a_loss);
	tcase_add_test(tc, stop_while_waiting_keeps_the_state);
	tcase_add_test(tc, the_monitor_gives_up_after_max_resumes_polls);
	tcase_add_test(tc, probe_of_a_closed_port_says_down);
	tcase_add_test(tc,
	    resume_protocol_pauses_and_resumes_through_the_guard);
	tcase_add_test(tc,
	    no_wait_through_the_guard_keeps_the_turn_of_its_stage);
	tcase_add_test(tc, guard_leaves_a_turn_another_stage_saved);
	tcase_add_test(tc,
	    validate_protocol_pauses_and_resumes_through_the_guard);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
