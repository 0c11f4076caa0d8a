/* check_suspend: the suspend policy (lib/suspend.c) with a stand-in model. */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "saop-private.h"
#include "db-sqlite.h"
#include "unit.h"

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

/*
 * Close the store and remove its files.  The lease renewer (a thread of
 * this process with a connection of its own, lib/suspend.c) may make a
 * -wal or -shm while rm reads the directory: then rm is run again.
 */
static void
teardown(void)
{
	char cmd[300];
	int i, rc = -1;

	saop_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' 2>/dev/null", dir);
	for (i = 0; i < 20 && rc != 0; i++)
		rc = system(cmd);
	ck_assert_int_eq(rc, 0);
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

/* The key of task, turn, stage. */
static struct saop_turn_key
key(const char *task, long turn, const char *stage)
{
	struct saop_turn_key k;

	k.task_id = task;
	k.turn = turn;
	k.stage = stage;
	return k;
}

/* A saved state holding {"v": v}. */
static json_t *
vstate(int v)
{
	return json_pack("{s:{s:i}, s:i}", "record", "v", v, "v", v);
}

START_TEST(upsert_twice_overwrites)
{
	struct saop_err e;
	struct saop_turn_key k = key("t1", 1, "saop-suspend");
	json_t *a = vstate(1), *b = vstate(2);
	json_t *got;

	ck_assert_int_eq(saop_turn_state_save(st, &k, a, 0, &e), 0);
	ck_assert_int_eq(saop_turn_state_save(st, &k, b, 0, &e), 0);
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    1);
	ck_assert_int_eq(saop_turn_state_load(st, &k, &got, &e), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(got, "v")), 2);
	json_decref(got);
	ck_assert_int_eq(saop_turn_state_delete(st, &k, &e), 1);
	ck_assert_int_eq(saop_turn_state_delete(st, &k, &e), 0);
	json_decref(a);
	json_decref(b);
}
END_TEST

START_TEST(one_row_per_turn_and_stage)
{
	struct saop_err e;
	struct saop_turn_key k1 = key("t", 1, "saop-suspend");
	struct saop_turn_key k2 = key("t", 2, "saop-suspend");
	struct saop_turn_key k3 = key("t", 1, "saop-resume");
	json_t *a = vstate(1), *got;

	ck_assert_int_eq(saop_turn_state_save(st, &k1, a, 0, &e), 0);
	ck_assert_int_eq(saop_turn_state_save(st, &k2, a, 0, &e), 0);
	ck_assert_int_eq(saop_turn_state_save(st, &k3, a, 0, &e), 0);
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    3);
	ck_assert_int_eq(saop_turn_state_delete(st, &k2, &e), 1);
	ck_assert_int_eq(saop_turn_state_load(st, &k1, &got, &e), 1);
	json_decref(got);
	ck_assert_int_eq(saop_turn_state_load(st, &k3, &got, &e), 1);
	json_decref(got);
	ck_assert_int_eq(saop_turn_state_clear(st, "t", &e), 2);
	json_decref(a);
}
END_TEST

START_TEST(a_live_claim_of_another_process_is_respected)
{
	struct saop_err e;
	struct saop_turn_key k = key("t", 1, "saop-suspend");
	json_t *a = vstate(1), *got;

	ck_assert_int_eq(saop_turn_state_save(st, &k, a, 0, &e), 0);
	/* Held by another host, lease an hour ahead: not ours. */
	ck_assert_int_eq(sqlite3_exec(saop__store_db(st), "UPDATE "
	    "agent_turn_states SET claim_host = 'elsewhere', claim_pid = 1,"
	    " claim_start = 'x', claim_until = 99999999999999", NULL, NULL,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(saop_turn_state_claim(st, &k, &got, &e), -SAOP_EBUSY);
	ck_assert_ptr_nonnull(strstr(e.msg, "elsewhere"));
	ck_assert_int_eq(saop_turn_state_save(st, &k, a, 1, &e), -SAOP_EBUSY);
	ck_assert_int_eq(saop_turn_state_delete(st, &k, &e), 0);
	/* Its lease runs out: taken over. */
	ck_assert_int_eq(sqlite3_exec(saop__store_db(st), "UPDATE "
	    "agent_turn_states SET claim_until = 1", NULL, NULL, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(saop_turn_state_claim(st, &k, &got, &e), 1);
	json_decref(got);
	ck_assert_int_eq(query_int("SELECT claim_pid FROM agent_turn_states"),
	    getpid());
	/* Ours now: a second claim by this process holds too. */
	ck_assert_int_eq(saop_turn_state_claim(st, &k, &got, &e), 1);
	json_decref(got);
	ck_assert_int_eq(saop_turn_state_release(st, &k, &e), 0);
	ck_assert_int_eq(query_int("SELECT claim_host IS NULL FROM "
	    "agent_turn_states"), 1);
	json_decref(a);
}
END_TEST

START_TEST(a_dead_claimer_on_this_host_is_taken_over)
{
	struct saop_err e;
	struct saop_turn_key k = key("t", 1, "saop-suspend");
	json_t *a = vstate(1), *got;
	char host[256], sql[600];
	pid_t pid;

	ck_assert_int_eq(saop_turn_state_save(st, &k, a, 1, &e), 0);
	ck_assert_int_eq(gethostname(host, sizeof(host)), 0);
	host[255] = '\0';
	/* A child that is gone by now holds it, lease an hour ahead. */
	if ((pid = fork()) == 0)
		_exit(0);
	ck_assert_int_gt(pid, 0);
	waitpid(pid, NULL, 0);
	snprintf(sql, sizeof(sql), "UPDATE agent_turn_states SET claim_pid ="
	    " %ld, claim_until = 99999999999999", (long)pid);
	ck_assert_int_eq(sqlite3_exec(saop__store_db(st), sql, NULL, NULL,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(saop_turn_state_claim(st, &k, &got, &e), 1);
	json_decref(got);
	/* A live process (pid 1) with another start: a reused pid. */
	ck_assert_int_eq(sqlite3_exec(saop__store_db(st), "UPDATE "
	    "agent_turn_states SET claim_pid = 1, claim_start = 'not-1'",
	    NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(saop_turn_state_claim(st, &k, &got, &e), 1);
	json_decref(got);
	json_decref(a);
}
END_TEST

/* The threads of this process (entries of /proc/self/task), or -1. */
static int
threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * A claim starts the lease renewer; saop_turn_claims_end() stops it and
 * waits for it (no thread of the library left when the process ends),
 * at once though its lease is long; a later claim starts it again.
 */
START_TEST(claims_end_stops_the_renewer)
{
	struct saop_err e;
	struct saop_turn_key k = key("t", 1, "saop-suspend");
	json_t *a = vstate(1), *got;
	int before = threads(), with;

	/* A sanitizer may start a thread of its own with the first. */
	ck_assert_int_gt(before, 0);
	ck_assert_int_eq(saop_turn_state_save(st, &k, a, 1, &e), 0);
	with = threads();
	ck_assert_int_gt(with, before);
	saop_turn_claims_end();
	ck_assert_int_eq(threads(), with - 1);
	saop_turn_claims_end();		/* nothing left to stop */
	ck_assert_int_eq(threads(), with - 1);
	ck_assert_int_eq(saop_turn_state_claim(st, &k, &got, &e), 1);
	json_decref(got);
	ck_assert_int_eq(threads(), with);
	saop_turn_claims_end();
	ck_assert_int_eq(threads(), with - 1);
	json_decref(a);
}
END_TEST

/* saop_turn_state_each() callback that counts readable and bad rows. */
static int
count_each(void *arg, const struct saop_turn_row *row)
{
	int *n = arg;

	if (row->state != NULL)
		n[0]++;
	else
		n[1]++;
	return 0;
}

START_TEST(a_bad_row_is_that_rows_trouble)
{
	struct saop_err e;
	struct saop_turn_key k = key("t", 1, "saop-suspend");
	json_t *a = vstate(1), *got;
	int n[2] = { 0, 0 };

	ck_assert_int_eq(saop_turn_state_save(st, &k, a, 0, &e), 0);
	ck_assert_int_eq(sqlite3_exec(saop__store_db(st), "INSERT INTO "
	    "agent_turn_states (task_id, turn, stage, turn_state_json, "
	    "saved_at) VALUES ('bad', 1, 'saop-suspend', '{\"record\": ', "
	    "'x'), ('bad', 2, 'saop-suspend', '[]', 'y')", NULL, NULL, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(saop_turn_state_each(st, NULL, count_each, n, &e), 0);
	ck_assert_int_eq(n[0], 1);
	ck_assert_int_eq(n[1], 2);
	k.task_id = "bad";
	ck_assert_int_eq(saop_turn_state_claim(st, &k, &got, &e),
	    -SAOP_EDATA);
	ck_assert_ptr_nonnull(strstr(e.msg, "task bad turn 1"));
	json_decref(a);
}
END_TEST

START_TEST(values_jansson_cannot_hold_read_back_byte_for_byte)
{
	static const char line[] = "{\"task_id\":\"t\",\"n\":"
	    "123456789012345678901234567890,\"s\":\"a\\u0000b\","
	    "\"k\\u0000\":1}";
	struct saop_err e;
	struct saop_turn_key k = key("t", 1, "saop-suspend");
	json_t *r, *state, *got;
	char *text;
	size_t len;

	ck_assert_int_eq(saop__record_parse(line, strlen(line), &r, &e), 1);
	state = json_pack("{s:O, s:s}", "record", r, "stage", "saop-suspend");
	ck_assert_int_eq(saop_turn_state_save(st, &k, state, 0, &e), 0);
	ck_assert_int_eq(saop_turn_state_load(st, &k, &got, &e), 1);
	text = saop__record_text(json_object_get(got, "record"), &len, &e);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, line);
	free(text);
	json_decref(got);
	json_decref(state);
	json_decref(r);
}
END_TEST

START_TEST(task_keys_of_every_kind)
{
	json_t *r = json_pack("{s:i}", "task_id", 42);
	char *t;

	t = saop_turn_task(r);
	ck_assert_str_eq(t, "42");
	free(t);
	json_object_set_new(r, "task_id", json_null());
	t = saop_turn_task(r);
	ck_assert_str_eq(t, "null");
	free(t);
	json_object_set_new(r, "task_id", json_string("x"));
	t = saop_turn_task(r);
	ck_assert_str_eq(t, "x");
	free(t);
	json_object_del(r, "task_id");
	ck_assert_ptr_null(saop_turn_task(r));
	json_decref(r);
}
END_TEST

START_TEST(durations)
{
	long long ms;

	ck_assert_int_eq(saop_duration_parse("30m", &ms), 0);
	ck_assert_int_eq(ms, 1800000);
	ck_assert_int_eq(saop_duration_parse("90", &ms), 0);
	ck_assert_int_eq(ms, 90000);
	ck_assert_int_eq(saop_duration_parse("250ms", &ms), 0);
	ck_assert_int_eq(ms, 250);
	ck_assert_int_eq(saop_duration_parse("2h", &ms), 0);
	ck_assert_int_eq(ms, 7200000);
	ck_assert_int_eq(saop_duration_parse("inf", &ms), 0);
	ck_assert_int_eq(ms, -1);
	ck_assert_int_eq(saop_duration_parse("-1s", &ms), -1);
	ck_assert_int_eq(saop_duration_parse("5 min", &ms), -1);
	ck_assert_int_eq(saop_duration_parse("", &ms), -1);
}
END_TEST

START_TEST(resume_with_no_row_returns_nothing)
{
	struct saop_err e;
	json_t *got = json_true();	/* a singleton: nothing to free */
	struct saop_turn_key k = key("nope", 1, "saop-suspend");
	int n[2] = { 0, 0 };

	ck_assert_int_eq(saop_turn_state_load(st, &k, &got, &e), 0);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(saop_turn_state_each(st, NULL, count_each, n, &e),
	    0);
	ck_assert_int_eq(n[0] + n[1], 0);
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
	o->max_wait_ms = 60000;
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

START_TEST(saved_before_the_call_forgotten_when_written)
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
	/* Kept, claimed, until the record is out. */
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states "
	    "WHERE claim_pid IS NOT NULL"), 1);
	ck_assert_int_eq(saop_suspend_forget(&o, r, &e), 1);
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
	ck_assert_int_eq(saop_suspend_forget(&o, r, &e), 1);
	/* The record written, the turn forgotten: the task is DONE. */
	ck_assert_str_eq(query_text("SELECT status FROM tasks"), "DONE");
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
	struct saop_turn_key tk = key("t", 4, "saop-suspend");

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
	ck_assert_int_eq(saop_turn_state_load(st, &tk, &state, &e), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(state,
	    "resumes")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(state, "stage")),
	    "saop-suspend");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
	    state, "record"), "turn")), 4);
	/* Let go: any resumer may take it. */
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states "
	    "WHERE claim_host IS NULL"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r,
	    "suspend"), "limit")), "max-resumes");
	ck_assert_str_eq(out.limit, "max-resumes");
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
	struct saop_turn_key tk = key("t", 4, "saop-suspend");

	opts(&o, s, 1);
	o.no_wait = 1;
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_ENETWORK);
	ck_assert_int_eq(out.calls, 1);
	ck_assert_int_eq(sc.probes, 0);
	ck_assert_int_eq(saop_turn_state_load(st, &tk, &state, &e), 1);
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

	state = json_pack("{s:O, s:s, s:s, s:i, s:i}", "record", r, "stage",
	    "saop-suspend", "partial", "[1, ", "received", 4, "resumes", 3);
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
	/* Nothing received: the record (with its request) carries all. */
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"),
	    0);
	ck_assert_str_eq(events(), "");
	json_decref(r);
}
END_TEST

START_TEST(refusal_keeps_a_turn_that_holds_something)
{
	static const struct step s[] = {
		{ SAOP_ENETWORK, 0, -1, "[1, " },
		{ SAOP_EREFUSED, 403, -1, "" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec(), *state;
	struct saop_turn_key tk = key("t", 4, "saop-suspend");

	opts(&o, s, 2);
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_EREFUSED);
	ck_assert_int_eq(saop_turn_state_load(st, &tk, &state, &e), 1);
	ck_assert_str_eq(json_string_value(json_object_get(state, "partial")),
	    "[1, ");
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states "
	    "WHERE claim_host IS NULL"), 1);
	json_decref(state);
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
	ck_assert_str_eq(out.limit, "signal");
	ck_assert_str_eq(events(), "NETWORK_LOST,TURN_SUSPENDED");
	json_decref(r);
}
END_TEST

START_TEST(the_monitor_waits_past_max_resumes_polls_until_max_wait)
{
	static const struct step s[] = { { SAOP_ENETWORK, 0, -1, "" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec();

	opts(&o, s, 1);
	sc.up_after = 100000;
	/* A wait long enough for several 2 ms polls on a loaded machine. */
	o.poll_ms = 2;
	o.max_wait_ms = 1000;
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_ENETWORK);
	/* Far more probes than --max-resumes: the wait is its own limit. */
	ck_assert_int_gt(sc.probes, 3);
	ck_assert_str_eq(out.limit, "max-wait");
	ck_assert_ptr_nonnull(strstr(e.msg, "--max-wait reached"));
	ck_assert_str_eq(events(), "NETWORK_LOST,TURN_SUSPENDED");
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
	/* Set IN_PROGRESS at the restore, DONE with the call. */
	ck_assert_str_eq(query_text("SELECT status FROM tasks"), "DONE");
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
	struct saop_turn_key tk = key("t", 4, "saop-resume");

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
	ck_assert_int_eq(saop_turn_state_load(st, &tk, &state, &e), 1);
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
	json_t *r = rec(), *other = json_pack("{s:O, s:s}", "record", r,
	    "stage", "saop-suspend");
	struct saop_turn_key tk = key("t", 4, "saop-suspend");

	ck_assert_int_eq(saop_turn_state_save(st, &tk, other, 0, &e), 0);
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
	struct saop_validate_outcome oc;
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
	ck_assert_int_eq(saop_validate_record(r, &vo, &oc, &e), 0);
	ck_assert_int_eq(oc.state, SAOP_STATE_OK);
	ck_assert_int_eq(oc.attempts, 1);
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

START_TEST(guard_covers_a_numeric_task_id)
{
	static const struct step s[] = { { SAOP_ENETWORK, 0, -1, "" } };
	struct saop_suspend_guard g;
	struct saop_llm_answer a;
	struct saop_model m;
	struct saop_err e;
	json_t *r = rec(), *state;
	struct saop_turn_key tk = key("42", 4, "saop-validate");

	json_object_set_new(r, "task_id", json_integer(42));
	guard_for(&g, s, 1, "saop-validate");
	g.opts.no_wait = 1;
	g.rec = r;
	m = saop_suspend_model(&g);
	ck_assert_int_eq(saop_model_call(&m, json_object_get(r, "request"),
	    &a, &e), -SAOP_ENETWORK);
	saop_llm_answer_free(&a);
	ck_assert_int_eq(g.out.suspended, 1);
	ck_assert_int_eq(saop_turn_state_load(st, &tk, &state, &e), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
	    state, "record"), "task_id")), 42);
	json_decref(state);
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

/* ---- Rarer ways of a turn (issue 25) ---- */

/* The role of the last message of request i of the script. */
static const char *
last_role(int i)
{
	const json_t *m = json_object_get(sc.requests[i], "messages");

	return json_string_value(json_object_get(json_array_get(m,
	    json_array_size(m) - 1), "role"));
}

START_TEST(a_record_without_a_task_or_a_request_is_refused)
{
	static const struct step s[] = { { 0, 0, -1, "{}" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = json_pack("{s:{s:[]}}", "request", "messages");

	opts(&o, s, 1);
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_EDATA);
	ck_assert_ptr_nonnull(strstr(e.msg, "task_id"));
	/* Nothing to forget either. */
	ck_assert_int_eq(saop_suspend_forget(&o, r, &e), 0);
	json_decref(r);
	r = json_pack("{s:s, s:s}", "task_id", "t", "request", "hi");
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_EDATA);
	ck_assert_ptr_nonnull(strstr(e.msg, "request object"));
	ck_assert_int_eq(sc.calls, 0);
	ck_assert_int_eq(out.calls, 0);
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"), 0);
	json_decref(r);
}
END_TEST

START_TEST(a_prefill_refused_after_a_loss_goes_on_in_the_user_form)
{
	static const struct step s[] = {
		{ SAOP_ENETWORK, 0, -1, "{\"a\": [1, " },
		{ SAOP_EPREFILL, 400, -1, "" },
		{ 0, 0, -1, "2]}" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec();

	opts(&o, s, 3);
	o.form = SAOP_RESUME_AUTO;
	o.provider = SAOP_PROVIDER_ANTHROPIC;
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e), 0);
	ck_assert_str_eq(json_string_value(json_object_get(r, "raw")),
	    "{\"a\": [1, 2]}");
	ck_assert_int_eq(sc.calls, 3);
	/* The first resume prefilled; the one after the refusal did not. */
	ck_assert_str_eq(last_role(1), "assistant");
	ck_assert_str_eq(last_role(2), "user");
	ck_assert_int_eq(o.form, SAOP_RESUME_USER);
	ck_assert_int_eq(out.resumes, 1);
	json_decref(r);
}
END_TEST

/* The monitor's lines, joined. */
static char said[1024];

/* Keep one line of the monitor; the first one (the wait begins) is
 * followed by a signal. */
static void
say(const char *line)
{
	size_t n = strlen(said);

	snprintf(said + n, sizeof(said) - n, "%s\n", line);
	sc.stop = 1;
}

START_TEST(a_signal_in_the_first_wait_suspends_without_a_probe)
{
	/* A 503 waits an interval before its first probe; a signal in that
	 * wait stops it: saved, let go, limit "signal", no probe.  A wait
	 * without end says so. */
	static const struct step s[] = { { SAOP_ERATELIMIT, 503, -1, "[1, " } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec();

	opts(&o, s, 1);
	o.max_wait_ms = -1;
	o.poll_ms = 60000;
	said[0] = '\0';
	saop_suspend_set_notice(say);
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_ERATELIMIT);
	saop_suspend_set_notice(NULL);
	ck_assert_int_eq(sc.probes, 0);
	ck_assert_int_eq(out.suspended, 1);
	ck_assert_str_eq(out.limit, "signal");
	ck_assert_ptr_nonnull(strstr(said, "for no limit;"));
	ck_assert_ptr_nonnull(strstr(said, "stopped by a signal"));
	ck_assert_ptr_nonnull(strstr(e.msg, "stopped while waiting"));
	ck_assert_str_eq(json_string_value(json_object_get(r, "state")),
	    "PAUSED_FOR_INTERVENTION");
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"), 1);
	ck_assert_str_eq(query_text("SELECT count(*) FROM agent_turn_states "
	    "WHERE claim_pid IS NULL"), "1");
	ck_assert_str_eq(events(),
	    "NETWORK_LOST,TURN_SUSPENDED");
	json_decref(r);
}
END_TEST

START_TEST(a_429_whose_wait_a_signal_stops_suspends_the_turn)
{
	/* Retry-After of a day (held to the longest wait), stopped by a
	 * signal: the turn suspended and saved, not called again. */
	static const struct step s[] = {
		{ SAOP_ERATELIMIT, 429, 86400000L, "" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec();

	opts(&o, s, 1);
	o.max_wait_ms = -1;
	sc.stop = 1;
	said[0] = '\0';
	saop_suspend_set_notice(say);
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_ERATELIMIT);
	saop_suspend_set_notice(NULL);
	/* Said as what it is: a rate limit, not a lost endpoint. */
	ck_assert_ptr_nonnull(strstr(said, "rate limited by "));
	ck_assert_ptr_nonnull(strstr(said, "waiting 10.0 min as it asks"));
	ck_assert_ptr_nonnull(strstr(said, "of the 10.0 min the rate limit"));
	ck_assert_ptr_null(strstr(said, "unreachable"));
	ck_assert_int_eq(sc.probes, 0);
	ck_assert_int_eq(out.rate_waits, 1);
	ck_assert_int_eq(sc.calls, 1);
	ck_assert_str_eq(out.limit, "signal");
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"), 1);
	json_decref(r);
}
END_TEST

/* Keep one line of the monitor, nothing more. */
static void
keep(const char *line)
{
	size_t n = strlen(said);

	snprintf(said + n, sizeof(said) - n, "%s\n", line);
}
START_TEST(a_429_longer_than_the_wait_allowed_is_not_waited)
{
	/* Retry-After: 300 over a wait of 60 s: said, and the turn saved
	 * at once (limit max-wait), never slept on nor probed. */
	static const struct step s[] = {
		{ SAOP_ERATELIMIT, 429, 300000L, "" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec();

	opts(&o, s, 1);
	said[0] = '\0';
	saop_suspend_set_notice(keep);
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_ERATELIMIT);
	saop_suspend_set_notice(NULL);
	ck_assert_str_eq(out.limit, "max-wait");
	ck_assert_int_eq(out.rate_waits, 0);
	ck_assert_int_eq(sc.probes, 0);
	ck_assert_int_eq(sc.calls, 1);
	ck_assert_ptr_nonnull(strstr(said, "rate limited by "));
	ck_assert_ptr_nonnull(strstr(said, "for 5.0 min, longer than the "
	    "wait allowed (60.0 s)"));
	ck_assert_ptr_nonnull(strstr(e.msg, "rate limited longer than"));
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"), 1);
	json_decref(r);
}
END_TEST

/*
 * Lose the network on the one call of a turn of r (the endpoint never
 * up again) with http as its status, first_contact_ms 20 and a wait of
 * 300 ms.  Returns the limit the turn was suspended with.
 */
static const char *
lost_with(json_t *r, int code, int http)
{
	struct step s[] = { { 0, 0, -1, "" } };
	struct saop_suspend_opts o;
	static struct saop_suspend_outcome out;
	struct saop_err e;

	s[0].code = code;
	s[0].http = http;
	opts(&o, s, 1);
	sc.up_after = 1000000;
	o.first_contact_ms = 20;
	o.max_wait_ms = 300;
	said[0] = '\0';
	saop_suspend_set_notice(keep);
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e), -code);
	saop_suspend_set_notice(NULL);
	ck_assert_int_eq(out.suspended, 1);
	return out.limit;
}

START_TEST(an_endpoint_never_answered_is_waited_for_briefly)
{
	/* Never answered this process, a turn not saved before: a wrong
	 * SAOP_API_BASE, waited for first_contact_ms alone, and said. */
	json_t *r = rec();

	ck_assert_str_eq(lost_with(r, SAOP_ENETWORK, 0), "never-answered");
	ck_assert_ptr_nonnull(strstr(said, "for 20 ms: it never answered "
	    "since this run began"));
	ck_assert_ptr_nonnull(strstr(said, "is SAOP_API_BASE right?"));
	json_decref(r);
}
END_TEST

START_TEST(an_endpoint_that_answered_or_a_turn_saved_is_waited_for)
{
	/* A 503 is an answer: the outage after it is waited out whole. */
	json_t *r = rec();

	ck_assert_str_eq(lost_with(r, SAOP_ERATELIMIT, 503), "max-wait");
	ck_assert_ptr_nonnull(strstr(said, "answered HTTP 503; waiting for "
	    "it (a probe every 1 ms, for 300 ms;"));
	json_decref(r);
}
END_TEST

START_TEST(a_turn_suspended_before_is_waited_for_whole)
{
	/* A record that comes back suspended: the endpoint answered once. */
	json_t *r = rec();

	json_object_set_new(r, "suspend", json_object());
	ck_assert_str_eq(lost_with(r, SAOP_ENETWORK, 0), "max-wait");
	ck_assert_ptr_nonnull(strstr(said, "still unreachable after"));
	json_decref(r);
}
END_TEST


START_TEST(a_saved_tool_call_resumes_as_a_tool_call)
{
	static const struct step s[] = { { 0, 0, -1, "1}" } };
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *r = rec(), *state, *calls;

	state = json_pack("{s:s, s:{s:s, s:s, s:i}, s:[{s:s, s:s, s:{s:s, "
	    "s:s}}, {s:s, s:s, s:{s:s, s:s}}], s:s}",
	    "partial", "{\"a\": ",
	    "tool_call", "id", "c1", "name", "f", "index", 0,
	    "tool_calls", "id", "c1", "type", "function", "function", "name",
	    "f", "arguments", "{\"a\": ", "id", "c2", "type", "function",
	    "function", "name", "g", "arguments", "{}",
	    "text", "Calling f.");
	ck_assert_ptr_nonnull(state);
	opts(&o, s, 1);
	ck_assert_int_eq(saop_suspend_turn(r, state, &o, &out, &e), 0);
	ck_assert_str_eq(json_string_value(json_object_get(r, "raw")), "{\"a\": 1}");
	/* A tool call continued as text is still a tool call. */
	ck_assert_str_eq(json_string_value(json_object_get(r,
	    "finish_reason")), "tool_calls");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r,
	    "tool_call"), "id")), "c1");
	calls = json_object_get(r, "tool_calls");
	ck_assert_uint_eq(json_array_size(calls), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(calls, 0), "function"), "arguments")),
	    "{\"a\": 1}");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(calls, 1), "function"), "arguments")), "{}");
	ck_assert_str_eq(json_string_value(json_object_get(r, "text")), "Calling f.");
	json_decref(state);
	json_decref(r);
}
END_TEST

START_TEST(the_guard_waits_out_a_429_and_passes_a_record_without_task)
{
	static const struct step s[] = {
		{ SAOP_ERATELIMIT, 429, 1, "" },
		{ 0, 0, -1, "{\"b\": 2}" } };
	struct saop_suspend_guard g;
	struct saop_llm_answer a;
	struct saop_model m;
	struct saop_err e;
	json_t *r = rec(), *req = json_object_get(r, "request");

	memset(&g, 0, sizeof(g));
	opts(&g.opts, s, 2);
	g.opts.stage = "saop-validate";
	g.rec = r;
	m = saop_suspend_model(&g);
	ck_assert_int_eq(saop_model_call(&m, req, &a, &e), 0);
	ck_assert_str_eq(a.raw, "{\"b\": 2}");
	ck_assert_int_eq(g.out.rate_waits, 1);
	ck_assert_int_eq(g.out.calls, 2);
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"), 0);
	saop_llm_answer_free(&a);
	/* No task: the model called as it is, no policy, no row. */
	json_object_del(r, "task_id");
	opts(&g.opts, s + 1, 1);
	g.opts.stage = "saop-validate";
	memset(&g.out, 0, sizeof(g.out));
	ck_assert_int_eq(saop_model_call(&m, req, &a, &e), 0);
	ck_assert_str_eq(a.raw, "{\"b\": 2}");
	ck_assert_int_eq(sc.calls, 1);
	ck_assert_int_eq(g.out.calls, 0);
	ck_assert_int_eq(query_int("SELECT count(*) FROM agent_turn_states"), 0);
	saop_llm_answer_free(&a);
	json_decref(r);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("suspend");
	TCase *tc = tcase_create("suspend");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, upsert_twice_overwrites);
	tcase_add_test(tc, one_row_per_turn_and_stage);
	tcase_add_test(tc, a_live_claim_of_another_process_is_respected);
	tcase_add_test(tc, a_dead_claimer_on_this_host_is_taken_over);
	tcase_add_test(tc, claims_end_stops_the_renewer);
	tcase_add_test(tc, a_bad_row_is_that_rows_trouble);
	tcase_add_test(tc, values_jansson_cannot_hold_read_back_byte_for_byte);
	tcase_add_test(tc, task_keys_of_every_kind);
	tcase_add_test(tc, durations);
	tcase_add_test(tc, refusal_keeps_a_turn_that_holds_something);
	tcase_add_test(tc, resume_with_no_row_returns_nothing);
	tcase_add_test(tc, failure_classification_table);
	tcase_add_test(tc, saved_before_the_call_forgotten_when_written);
	tcase_add_test(tc, cut_answer_continues_from_where_it_stopped);
	tcase_add_test(tc, resumptions_are_bounded_and_the_state_kept);
	tcase_add_test(tc, no_wait_suspends_without_probing);
	tcase_add_test(tc, a_saved_state_resumes_from_its_partial);
	tcase_add_test(tc, refusal_gives_up_at_once);
	tcase_add_test(tc, rate_limit_is_waited_out_not_a_loss);
	tcase_add_test(tc, stop_while_waiting_keeps_the_state);
	tcase_add_test(tc,
	    the_monitor_waits_past_max_resumes_polls_until_max_wait);
	tcase_add_test(tc, probe_of_a_closed_port_says_down);
	tcase_add_test(tc,
	    resume_protocol_pauses_and_resumes_through_the_guard);
	tcase_add_test(tc,
	    no_wait_through_the_guard_keeps_the_turn_of_its_stage);
	tcase_add_test(tc, guard_leaves_a_turn_another_stage_saved);
	tcase_add_test(tc, guard_covers_a_numeric_task_id);
	tcase_add_test(tc,
	    validate_protocol_pauses_and_resumes_through_the_guard);
	tcase_add_test(tc, a_record_without_a_task_or_a_request_is_refused);
	tcase_add_test(tc,
	    a_prefill_refused_after_a_loss_goes_on_in_the_user_form);
	tcase_add_test(tc,
	    a_signal_in_the_first_wait_suspends_without_a_probe);
	tcase_add_test(tc, a_429_whose_wait_a_signal_stops_suspends_the_turn);
	tcase_add_test(tc, a_429_longer_than_the_wait_allowed_is_not_waited);
	tcase_add_test(tc, an_endpoint_never_answered_is_waited_for_briefly);
	tcase_add_test(tc,
	    an_endpoint_that_answered_or_a_turn_saved_is_waited_for);
	tcase_add_test(tc, a_turn_suspended_before_is_waited_for_whole);
	tcase_add_test(tc, a_saved_tool_call_resumes_as_a_tool_call);
	tcase_add_test(tc,
	    the_guard_waits_out_a_429_and_passes_a_record_without_task);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
