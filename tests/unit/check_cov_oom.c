/*
 * check_cov_oom.c: every allocation of a call made to fail in turn (the
 * 1st, the 2nd, ... until the call makes no more), the way SQLite tests
 * its malloc failures (issue 25): only that allocation fails.  Whatever fails, the call must not
 * crash, must return what it documents (its result, or -SAOP_ENOMEM with
 * e saying "out of memory" for the calls that say so), and must leave its
 * out-parameters clean.  The allocations are counted by replacing malloc,
 * calloc and realloc (glibc's __libc_ functions do the work), and free()
 * too, so that the blocks a call leaves behind are counted; under ASan,
 * which owns malloc, only jansson's allocations are failed (through
 * json_set_alloc_funcs()) and its leak check does the counting.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saop-private.h"
#include "db-sqlite.h"
#include "unit.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#endif

/* The allocation that fails (only that one: the clean-up after it gets
 * its memory, as after a passing shortage), 0 for none; with keep set,
 * it and every one after it (a shortage that lasts: the clean-up fails
 * too).  Counted per thread: the claim renewer of lib/suspend.c
 * allocates on its own. */
static __thread long fail_at, allocs;
static __thread int keep;
/* The blocks allocated and not yet freed (without ASan: its leak check
 * does this under it); counted over every thread, read only by a test
 * whose calls start none. */
static long live;

/* Count an allocation; 1 when it is to fail. */
static int
failing(void)
{
	if (fail_at == 0)
		return 0;
	++allocs;
	return keep ? allocs >= fail_at : allocs == fail_at;
}

/* The least runs a call's loop must make: under ASan only jansson's
 * allocations are counted, and some calls make one or none. */
#ifdef SANITIZED
#define RUNS(n)	0
#else
#define RUNS(n)	(n)
#endif

#ifndef SANITIZED
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);

/* Count p, a block just allocated (or NULL).  Returns p. */
static void *
counted(void *p)
{
	if (p != NULL)
		live++;
	return p;
}

/* malloc() that fails from the fail_at-th call on.  Returns the block. */
void *
malloc(size_t n)
{
	if (failing()) {
		errno = ENOMEM;
		return NULL;
	}
	return counted(__libc_malloc(n));
}

/* calloc(), failing as malloc() does.  Returns the block. */
void *
calloc(size_t n, size_t m)
{
	if (failing()) {
		errno = ENOMEM;
		return NULL;
	}
	return counted(__libc_calloc(n, m));
}

/* realloc(), failing as malloc() does.  Returns the block. */
void *
realloc(void *p, size_t n)
{
	void *q;

	if (failing()) {
		errno = ENOMEM;
		return NULL;
	}
	q = __libc_realloc(p, n);
	if (p == NULL && q != NULL)
		live++;
	else if (p != NULL && n == 0)
		live--;		/* glibc frees p */
	return q;
}

/* free(), counting the block given back. */
void
free(void *p)
{
	if (p != NULL)
		live--;
	__libc_free(p);
}
#else
/* jansson's allocator under ASan: malloc(), failing from fail_at on. */
static void *
json_failing_malloc(size_t n)
{
	return failing() ? NULL : malloc(n);
}
#endif

/* In a child of fork() (a --check): nothing fails, its allocations are
 * not the parent's. */
static void
child_disarm(void)
{
	fail_at = 0;
}

/* Start failing allocations from the n-th on (n 0: none). */
static void
arm(long n)
{
	allocs = 0;
	fail_at = n;
}

/* Stop failing.  Returns 1 when an allocation was failed. */
static int
disarm(void)
{
	int hit = fail_at != 0 && allocs >= fail_at;

	fail_at = 0;
	return hit;
}

/*
 * Run f(arg, n) for n = 1, 2, ... (f arms n around its call) until a run
 * fails no allocation, then once with none failing (n 0: what the runs
 * before left behind must not fail it); f checks its own outcome and
 * returns whether an allocation failed.  Returns the runs made.
 */
static long
each_failure(int (*f)(void *arg, long n), void *arg)
{
	long n;

	for (n = 1; n < 200000 && f(arg, n); n++)
		;
	ck_assert_int_eq(f(arg, 0), 0);
	return n;
}

static const char envelope[] = "Here it is:\n```json\n{\"saop\": \"1.0\", "
    "\"turn_index\": 0, \"agent_role\": \"developer\", \"thought\": "
    "\"List the files first.\", \"action\": {\"tool\": \"ls\", "
    "\"parameters\": {\"path\": \".\",},},}\n```\n";

/* saop_validate_text() on a fenced envelope with trailing commas. */
static int
validate_text(void *arg, long n)
{
	struct saop_err e;
	json_t *v = NULL, *errors = NULL, *repairs = NULL;
	int rc, hit;

	saop_err_clear(&e);
	arm(n);
	rc = saop_validate_text(arg, 0, envelope, strlen(envelope), &v,
	    &errors, &repairs, &e);
	hit = disarm();
	if (rc < 0) {
		ck_assert_int_eq(rc, -SAOP_ENOMEM);
		ck_assert_int_eq(e.code, SAOP_ENOMEM);
		ck_assert_ptr_null(v);
	} else {
		/* jansson's own failure reads as a syntax error: invalid. */
		ck_assert(rc == 1 || (rc == 0 && hit));
		ck_assert_ptr_nonnull(errors);
		ck_assert_ptr_nonnull(repairs);
	}
	if (!hit)
		ck_assert_int_eq(rc, 1);
	json_decref(v);
	json_decref(errors);
	json_decref(repairs);
	return hit;
}

START_TEST(validate_text_survives_every_failed_allocation)
{
	struct saop_err e;
	struct saop_schema *s = saop_schema_envelope_v1(&e);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_gt(each_failure(validate_text, s), RUNS(10));
	saop_schema_free(s);
}
END_TEST

/* saop_validate_record() with no model: a record to repair, one invalid. */
static int
validate_record(void *arg, long n)
{
	struct saop_validate_opts o;
	struct saop_validate_outcome o1, o2;
	struct saop_err e;
	json_t *good, *bad;
	int rc1, rc2, hit;

	memset(&o, 0, sizeof(o));
	o.schema = arg;
	good = json_pack("{s:s, s:i, s:s}", "task_id", "t", "turn", 1, "raw",
	    envelope);
	bad = json_pack("{s:s, s:i, s:s}", "task_id", "t", "turn", 2, "raw",
	    "{\"saop\": \"1.0\"}");
	ck_assert_ptr_nonnull(good);
	ck_assert_ptr_nonnull(bad);
	saop_err_clear(&e);
	arm(n);
	rc1 = saop_validate_record(good, &o, &o1, &e);
	rc2 = saop_validate_record(bad, &o, &o2, &e);
	hit = disarm();
	ck_assert_msg(rc1 == 0 || rc1 == -SAOP_ENOMEM, "%d", rc1);
	ck_assert_msg(rc2 == 0 || rc2 == -SAOP_ENOMEM, "%d", rc2);
	if (rc2 == 0)
		ck_assert_int_eq(o2.state, SAOP_STATE_INVALID);
	if (!hit) {
		ck_assert_int_eq(rc1, 0);
		ck_assert_int_eq(o1.state, SAOP_STATE_OK);
		ck_assert_int_eq(rc2, 0);
		ck_assert_int_eq(o2.state, SAOP_STATE_INVALID);
		ck_assert_str_eq(json_string_value(json_object_get(bad,
		    "state")), "INVALID");
	}
	json_decref(good);
	json_decref(bad);
	return hit;
}

START_TEST(validate_record_survives_every_failed_allocation)
{
	struct saop_err e;
	struct saop_schema *s = saop_schema_envelope_v1(&e);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_gt(each_failure(validate_record, s), RUNS(10));
	saop_schema_free(s);
}
END_TEST

/* saop_correction_request() for an invalid answer. */
static int
correction(void *arg, long n)
{
	struct saop_err e;
	json_t *req, *errors, *out;
	int hit;

	(void)arg;
	req = json_pack("{s:[{s:s, s:s}]}", "messages", "role", "user",
	    "content", "JSON please");
	errors = json_pack("[{s:s, s:s, s:s}]", "path", "/a", "keyword",
	    "required", "message", "required property 'a' is missing");
	ck_assert_ptr_nonnull(req);
	ck_assert_ptr_nonnull(errors);
	arm(n);
	out = saop_correction_request(req, "{\"b\": 1}", 8, errors, &e);
	hit = disarm();
	if (out == NULL)
		ck_assert_int_eq(e.code, SAOP_ENOMEM);
	else
		ck_assert_uint_eq(json_array_size(json_object_get(out,
		    "messages")), 3);
	ck_assert(hit || out != NULL);
	json_decref(out);
	json_decref(req);
	json_decref(errors);
	return hit;
}

START_TEST(correction_request_survives_every_failed_allocation)
{
	ck_assert_int_gt(each_failure(correction, NULL), RUNS(3));
}
END_TEST

/* Remove the state database made in the directory dir, and dir. */
static void
remove_store(const char *dir)
{
	static const char *const names[] = { "state.sqlite",
	    "state.sqlite-wal", "state.sqlite-shm" };
	char path[96];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* The store of prune_store() (opened once: migrations are not in the loop). */
static struct saop_store *store;

/* saop_prune_messages() with --dry-run (arg NULL: nothing stored) or
 * storing in store. */
static int
prune(void *arg, long n)
{
	struct saop_prune_opts o;
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *msgs;
	char *big = arg;
	int rc, hit;

	saop_prune_opts_init(&o);
	o.dry_run = store == NULL;
	o.store = store;
	o.task_id = "t";
	o.threshold = 10;
	memset(&st, 0, sizeof(st));
	msgs = json_pack("[{s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:[{s:s, s:s}]},"
	    " {s:s, s:s}, {s:s, s:s}]",
	    "role", "user", "content", "go",
	    "role", "tool", "tool_call_id", "a", "content", big,
	    "role", "tool", "content", "type", "text", "text", big,
	    "role", "assistant", "content", "x",
	    "role", "assistant", "content", "y");
	ck_assert_ptr_nonnull(msgs);
	saop_err_clear(&e);
	arm(n);
	rc = saop_prune_messages(msgs, &o, &st, &e);
	hit = disarm();
	ck_assert_msg(rc == 0 || rc == -SAOP_ENOMEM ||
	    (store != NULL && rc == -SAOP_EDB), "%d: %s", rc, e.msg);
	if (!hit) {
		ck_assert_msg(rc == 0, "%d: %s", rc, e.msg);
		ck_assert_uint_eq(st.outputs, 2);
	}
	json_decref(msgs);
	return hit;
}

START_TEST(prune_survives_every_failed_allocation)
{
	char big[200];

	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_gt(each_failure(prune, big), RUNS(3));
}
END_TEST

/*
 * prune() storing, with every allocation failing from the n-th on (the
 * rollback after a failed statement too), then a look at the connection:
 * it must not be left inside the failed transaction, holding the write
 * lock and taking the next statement into it.  Returns prune()'s hit.
 */
static int
prune_lasting(void *arg, long n)
{
	sqlite3 *h;
	int hit;

	keep = 1;
	hit = prune(arg, n);
	keep = 0;
	if ((h = saop__store_db(store)) != NULL)
		ck_assert_msg(sqlite3_get_autocommit(h),
		    "allocation %ld on: the connection is left in a "
		    "transaction", n);
	return hit;
}

START_TEST(prune_store_survives_every_failed_allocation)
{
	/* In a directory of its own: a state database directly in a
	 * world-writable directory is refused. */
	char big[200], path[] = "/tmp/saop-cov-oom.XXXXXX", db[64];
	struct saop_err e;

	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_ptr_nonnull(mkdtemp(path));
	snprintf(db, sizeof(db), "%s/state.sqlite", path);
	ck_assert_ptr_nonnull(store = saop_store_open(db, &e));
	/* Migrations applied first, then the same output reused. */
	ck_assert_int_eq(prune(big, 0), 0);
	ck_assert_int_gt(each_failure(prune, big), RUNS(3));
	/* A shortage that lasts: nothing left in a transaction. */
	ck_assert_int_gt(each_failure(prune_lasting, big), RUNS(3));
	saop_store_close(store);
	store = NULL;
	remove_store(path);
}
END_TEST

/* saop_resume_merge() of a cut object and its continuation. */
static int
merge(void *arg, long n)
{
	static const char prefix[] = "{\"a\": [1, 2, \"thr";
	static const char cont[] = "ee\", 4], \"b\": null}";
	struct saop_detect_result res;
	struct saop_err e;
	char *out = NULL;
	size_t outlen = 0;
	int rc, hit;

	(void)arg;
	memset(&res, 0, sizeof(res));
	arm(n);
	rc = saop_resume_merge(prefix, strlen(prefix), cont, strlen(cont), 64,
	    &out, &outlen, &res, &e);
	hit = disarm();
	if (rc < 0) {
		ck_assert_int_eq(rc, -SAOP_ENOMEM);
		ck_assert_ptr_null(out);
	} else if (!hit) {
		ck_assert_int_eq(rc, 0);
		ck_assert_int_eq(res.verdict, SAOP_COMPLETE);
		ck_assert_str_eq(out, "{\"a\": [1, 2, \"three\", 4], "
		    "\"b\": null}");
	}
	free(out);
	saop_detect_result_free(&res);
	return hit;
}

START_TEST(resume_merge_survives_every_failed_allocation)
{
	ck_assert_int_gt(each_failure(merge, NULL), RUNS(3));
}
END_TEST

/* A merge for join_case(): prefix + cont (cut: cont was cut too), and
 * what it gives (want NULL: two readings, the prefix kept; truncated:
 * want is the merged text, still cut). */
struct join_case {
	const char *prefix, *cont, *want;
	int cut, truncated;
};

/* saop_resume_join() of one struct join_case: every path of the merge
 * (leading blank lines, a repeat dropped, a fence's body, words after
 * the value, two readings) meets its failed allocations. */
static int
join_case(void *arg, long n)
{
	const struct join_case *c = arg;
	struct saop_resume_join o;
	struct saop_detect_result res;
	struct saop_err e;
	char *out = NULL;
	size_t outlen = 0;
	int rc, hit;

	memset(&o, 0, sizeof(o));
	o.cut = c->cut;
	memset(&res, 0, sizeof(res));
	saop_err_clear(&e);
	arm(n);
	rc = saop_resume_join(c->prefix, strlen(c->prefix), c->cont,
	    strlen(c->cont), &o, &out, &outlen, &res, &e);
	hit = disarm();
	if (rc < 0) {
		ck_assert_int_eq(rc, -SAOP_ENOMEM);
		ck_assert_int_eq(e.code, SAOP_ENOMEM);
		ck_assert_ptr_null(out);
	} else if (!hit) {
		ck_assert_str_eq(out, c->want != NULL ? c->want : c->prefix);
		ck_assert_int_eq(rc, c->want != NULL && !c->truncated ?
		    SAOP_COMPLETE : SAOP_TRUNCATED);
		ck_assert_int_eq(o.ambiguous, c->want == NULL);
	}
	free(out);
	saop_detect_result_free(&res);
	return hit;
}

START_TEST(resume_join_survives_every_failed_allocation)
{
	static const struct join_case cases[] = {
		{ "{\"a\": \"he", "\n\nllo\"}", "{\"a\": \"hello\"}", 0, 0 },
		{ "{\"a\": \"hello wor", "hello world\"}",
		    "{\"a\": \"hello world\"}", 0, 0 },
		{ "{\"a\": [1, ", "Sure:\n```json\n2]}\n```",
		    "{\"a\": [1, 2]}\n", 0, 0 },
		{ "{\"a\": [1, ", "2]} That is all.", "{\"a\": [1, 2]}", 0, 0 },
		{ "[1, 22, 33", "22, 333]", NULL, 0, 0 },
		/* A cut answer ending in a top-level number's digits (it
		 * may go on: saop_detect_mark_cut()). */
		{ "-12", "34", "-1234", 1, 1 },
		/* A repeat of the tail but for its white space. */
		{ "{\"a\": [10,\n\n  20", "[10, 20, 30]}",
		    "{\"a\": [10,\n\n  20, 30]}", 0, 0 } };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_int_gt(each_failure(join_case, (void *)&cases[i]),
		    RUNS(3));
}
END_TEST

/* A scripted model for resume_record(): answers in turn (code, text,
 * finish_reason); its own allocation failing is a failed call. */
struct answer {
	int rc;
	const char *text, *finish;
};
struct answers {
	const struct answer *a;
	int n, calls;
};

/* The next scripted answer.  Returns its code. */
static int
answering(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct answers *s = arg;
	const struct answer *st = &s->a[s->calls < s->n ? s->calls++ :
	    s->n - 1];

	(void)request;
	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	if ((a->raw = strdup(st->text)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
	a->raw_len = strlen(st->text);
	snprintf(a->finish_reason, sizeof(a->finish_reason), "%s",
	    st->finish);
	if (st->rc != 0)
		return saop__fail(e, -st->rc, 0, "scripted failure");
	return 0;
}

/* A case of resume_record(): the record's raw and state, the answers,
 * and what must come of it. */
struct record_case {
	const char *raw, *state;
	struct answer a[2];
	int n, max_attempts, rc;
	const char *want_raw, *want_state;
};

/* saop_resume_record() of one struct record_case: every outcome of the
 * attempt loop meets its failed allocations, and a failure leaves the
 * record as it came or with the progress made. */
static int
record_case(void *arg, long n)
{
	const struct record_case *c = arg;
	struct saop_resume_opts o;
	struct saop_resume_outcome out;
	struct answers s = { c->a, c->n, 0 };
	struct saop_err e;
	json_t *rec = json_pack("{s:s, s:s, s:{s:[{s:s, s:s}]}}", "raw",
	    c->raw, "task_id", "t", "request", "messages", "role", "user",
	    "content", "JSON please");
	const char *raw;
	int rc, hit;

	ck_assert_ptr_nonnull(rec);
	if (c->state != NULL)
		json_object_set_new(rec, "state", json_string(c->state));
	memset(&o, 0, sizeof(o));
	o.max_attempts = c->max_attempts;
	o.model.call = answering;
	o.model.arg = &s;
	saop_err_clear(&e);
	arm(n);
	rc = saop_resume_record(rec, &o, &out, &e);
	hit = disarm();
	raw = json_string_value(json_object_get(rec, "raw"));
	ck_assert_ptr_nonnull(raw);
	ck_assert_msg(strncmp(raw, c->raw, strlen(c->raw)) == 0, "%s", raw);
	if (rc != c->rc) {
		ck_assert_msg(hit, "%d: %s", rc, e.msg);
		ck_assert_int_eq(rc, -SAOP_ENOMEM);
		ck_assert_int_eq(e.code, SAOP_ENOMEM);
	} else if (!hit) {
		ck_assert_str_eq(raw, c->want_raw);
		ck_assert_str_eq(json_string_value(json_object_get(rec,
		    "state")), c->want_state);
	}
	json_decref(rec);
	return hit;
}

START_TEST(resume_record_survives_every_failed_allocation)
{
	static const struct record_case cases[] = {
		/* Resolved by one answer. */
		{ "{\"a\": [1, ", NULL, { { 0, "2]}", "stop" } }, 1, 0, 0,
		    "{\"a\": [1, 2]}", "OK" },
		/* The attempts run out, the bytes merged kept. */
		{ "{\"a\": [1, ", NULL, { { 0, "2, ", "length" } }, 1, 1, 0,
		    "{\"a\": [1, 2, ", "RESUME_EXHAUSTED" },
		/* A call fails after part of the rest. */
		{ "{\"a\": [1, ", NULL, { { -SAOP_ENETWORK, "2, ", "" } }, 1,
		    0, -SAOP_ENETWORK, "{\"a\": [1, 2, ", "TRUNCATED" },
		/* Complete already: no call, the state set. */
		{ "{\"a\": 1}", "TRUNCATED", { { 0, "", "stop" } }, 0, 0, 0,
		    "{\"a\": 1}", "OK" } };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_int_gt(each_failure(record_case, (void *)&cases[i]),
		    RUNS(2));
}
END_TEST

/* A scripted model for suspend_turn(): a loss after part of the answer,
 * then the rest (its own allocation failing is a failed call). */
static int
losing(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	int *calls = arg;
	const char *text = (*calls)++ == 0 ? "{\"a\": [1, " : "2]}";

	(void)request;
	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	if ((a->raw = strdup(text)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
	a->raw_len = strlen(text);
	if (*calls == 1)
		return saop__fail(e, SAOP_ENETWORK, 0, "connection reset");
	strcpy(a->finish_reason, "stop");
	return 0;
}

/* The network back at once. */
static int
up(void *arg)
{
	(void)arg;
	return 1;
}

/* saop_suspend_turn() of a turn cut by a loss, then resumed (arg: 1
 * from a saved tool call): every failed allocation leaves an error of
 * memory or of the store, never a crash; the turn resolves without. */
static int
suspend_turn(void *arg, long n)
{
	struct saop_suspend_opts o;
	struct saop_suspend_outcome out;
	struct saop_err e;
	json_t *rec, *state = NULL;
	int calls = 0, rc, hit;

	rec = json_pack("{s:s, s:i, s:{s:[{s:s, s:s}]}}", "task_id", "t",
	    "turn", 2, "request", "messages", "role", "user", "content",
	    "JSON please");
	ck_assert_ptr_nonnull(rec);
	if (arg != NULL) {
		calls = 1;
		state = json_pack("{s:s, s:{s:s, s:s, s:i}, s:[{s:s, s:{s:s, "
		    "s:s}}, {s:s, s:{s:s, s:s}}], s:s}", "partial",
		    "{\"a\": [1, ", "tool_call", "id", "c1", "name", "f",
		    "index", 0, "tool_calls", "id", "c1", "function", "name",
		    "f", "arguments", "{\"a\": [1, ", "id", "c2", "function",
		    "name", "g", "arguments", "{}", "text", "Calling f.");
		ck_assert_ptr_nonnull(state);
	}
	memset(&o, 0, sizeof(o));
	o.store = store;
	o.stage = "saop-suspend";
	o.max_resumes = 2;
	o.poll_ms = 1;
	o.max_wait_ms = 60000;
	o.form = SAOP_RESUME_AUTO;
	o.provider = SAOP_PROVIDER_ANTHROPIC;
	o.model.call = losing;
	o.model.arg = &calls;
	o.probe = up;
	saop_err_clear(&e);
	arm(n);
	rc = saop_suspend_turn(rec, state, &o, &out, &e);
	hit = disarm();
	ck_assert_msg(rc == 0 || rc == -SAOP_ENOMEM || rc == -SAOP_EDB ||
	    (hit && rc == -SAOP_ENETWORK), "run %ld: %d: %s", n, rc, e.msg);
	if (rc < 0)
		ck_assert_int_eq(e.code, -rc);
	if (!hit) {
		ck_assert_msg(rc == 0, "%d: %s", rc, e.msg);
		ck_assert_str_eq(json_string_value(json_object_get(rec, "raw")),
		    "{\"a\": [1, 2]}");
		ck_assert_int_eq(out.resumes, arg != NULL ? 0 : 1);
		if (arg != NULL)
			ck_assert_str_eq(json_string_value(json_object_get(rec,
			    "finish_reason")), "tool_calls");
	}
	ck_assert_int_ge(saop_turn_state_clear(store, "t", &e), 0);
	json_decref(state);
	json_decref(rec);
	return hit;
}

START_TEST(suspend_turn_survives_every_failed_allocation)
{
	char path[] = "/tmp/saop-cov-oom.XXXXXX", db[64], cmd[96];
	struct saop_err e;

	ck_assert_ptr_nonnull(mkdtemp(path));
	snprintf(db, sizeof(db), "%s/state.sqlite", path);
	ck_assert_ptr_nonnull(store = saop_store_open(db, &e));
	/* Once whole first: the claim renewer started, the tables made. */
	ck_assert_int_eq(suspend_turn(NULL, 0), 0);
	ck_assert_int_gt(each_failure(suspend_turn, NULL), RUNS(10));
	ck_assert_int_gt(each_failure(suspend_turn, path), RUNS(10));
	saop_store_close(store);
	store = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* saop_repair() of near-JSON needing several repairs. */
static int
repair(void *arg, long n)
{
	static const char text[] = "Sure! ```json\n{'a': 1, b: [1, 2,], "
	    "\"c\": True, // note\n}\n```";
	struct saop_err e;
	json_t *repairs = NULL;
	char *out = NULL;
	size_t outlen = 0;
	int rc, hit;

	(void)arg;
	arm(n);
	rc = saop_repair(text, strlen(text), &out, &outlen, &repairs, &e);
	hit = disarm();
	if (rc < 0) {
		ck_assert_int_eq(rc, -SAOP_ENOMEM);
	} else if (!hit) {
		ck_assert_ptr_nonnull(out);
		ck_assert_int_gt(json_array_size(repairs), 2);
	}
	free(out);
	json_decref(repairs);
	return hit;
}

START_TEST(repair_survives_every_failed_allocation)
{
	ck_assert_int_gt(each_failure(repair, NULL), RUNS(3));
}
END_TEST


/* A schema with most keywords of 2020-12, and a value breaking many. */
static const char rich_schema[] = "{\"$schema\": "
    "\"https://json-schema.org/draft/2020-12/schema\", \"$id\": "
    "\"urn:cov\", \"$defs\": {\"pos\": {\"type\": \"integer\", "
    "\"exclusiveMinimum\": 0}, \"node\": {\"type\": \"object\", "
    "\"properties\": {\"next\": {\"$ref\": \"#/$defs/node\"}}}}, "
    "\"type\": \"object\", \"required\": [\"a\", \"b\"], \"properties\": "
    "{\"a\": {\"$ref\": \"#/$defs/pos\"}, \"b\": {\"type\": \"array\", "
    "\"items\": {\"type\": \"string\", \"minLength\": 2, \"maxLength\": 4, "
    "\"pattern\": \"^[a-z]+$\"}, \"minItems\": 1, \"maxItems\": 3, "
    "\"uniqueItems\": true, \"contains\": {\"const\": \"ok\"}}, \"c\": "
    "{\"enum\": [1, \"two\", null]}, \"d\": {\"oneOf\": [{\"type\": "
    "\"number\", \"multipleOf\": 3}, {\"type\": \"string\", \"format\": "
    "\"date\"}]}, \"e\": {\"anyOf\": [{\"maximum\": 5}, {\"minimum\": "
    "10}]}, \"f\": {\"allOf\": [{\"type\": \"object\"}, {\"not\": "
    "{\"required\": [\"x\"]}}], \"dependentRequired\": {\"y\": [\"z\"]}, "
    "\"minProperties\": 1, \"maxProperties\": 2, \"propertyNames\": "
    "{\"maxLength\": 1}}, \"g\": {\"if\": {\"type\": \"string\"}, "
    "\"then\": {\"minLength\": 3}, \"else\": {\"type\": \"number\"}}, "
    "\"h\": {\"prefixItems\": [{\"type\": \"boolean\"}], \"items\": "
    "false}, \"n\": {\"$ref\": \"#/$defs/node\"}}, "
    "\"patternProperties\": {\"^p_\": {\"type\": \"null\"}}, "
    "\"additionalProperties\": false, \"unevaluatedProperties\": false}";
static const char rich_bad[] = "{\"a\": 0, \"b\": [\"x\", \"x\", \"TOOLONG\"],"
    " \"c\": 4, \"d\": \"2024-02-30\", \"e\": 7, \"f\": {\"x\": 1, \"y\": "
    "2, \"zz\": 3}, \"g\": \"ab\", \"h\": [true, 1], \"n\": {\"next\": "
    "{\"next\": 5}}, \"p_q\": 1, \"other\": 1}";

/* Compile the rich schema and collect every error of rich_bad. */
static int
schema(void *arg, long n)
{
	struct saop_schema_opts so = { NULL, 1 };
	struct saop_schema *s;
	struct saop_err e;
	json_t *doc, *bad, *errors = NULL;
	int rc = 0, hit;

	(void)arg;
	doc = json_loads(rich_schema, 0, NULL);
	bad = json_loads(rich_bad, 0, NULL);
	ck_assert_ptr_nonnull(doc);
	ck_assert_ptr_nonnull(bad);
	saop_err_clear(&e);
	arm(n);
	s = saop_schema_compile(doc, NULL, &so, &e);
	if (s != NULL)
		rc = saop_schema_validate(s, bad, &errors, &e);
	hit = disarm();
	if (s == NULL)
		ck_assert_msg(e.code == SAOP_ENOMEM, "%d: %s", e.code, e.msg);
	else
		ck_assert_msg(rc == 0 || rc == -SAOP_ENOMEM, "%d", rc);
	if (!hit) {
		ck_assert_ptr_nonnull(s);
		ck_assert_int_eq(rc, 0);
		ck_assert_int_gt(json_array_size(errors), 12);
	}
	json_decref(errors);
	saop_schema_free(s);
	json_decref(doc);
	json_decref(bad);
	return hit;
}

START_TEST(schema_survives_every_failed_allocation)
{
	ck_assert_int_gt(each_failure(schema, NULL), RUNS(50));
}
END_TEST

/* The scanner, and the record's "detect" object. */
static int
detect(void *arg, long n)
{
	static const char text[] = "\xef\xbb\xbf{\"a\": [1, {\"b\": \"c\\u00e9";
	struct saop_detect_result res;
	json_t *j = NULL;
	int rc, hit;

	(void)arg;
	memset(&res, 0, sizeof(res));
	arm(n);
	rc = saop_detect_buffer(text, strlen(text), 64, &res);
	if (rc == 0)
		j = saop_detect_result_json(&res);
	hit = disarm();
	ck_assert(rc == 0 || rc == -SAOP_ENOMEM);
	if (!hit) {
		ck_assert_int_eq(res.verdict, SAOP_TRUNCATED);
		ck_assert_ptr_nonnull(j);
	}
	json_decref(j);
	saop_detect_result_free(&res);
	return hit;
}

START_TEST(detect_survives_every_failed_allocation)
{
	ck_assert_int_gt(each_failure(detect, NULL), RUNS(2));
}
END_TEST

/* A request with most of what the wire formats translate. */
static const char rich_request[] = "{\"model\": \"m\", \"system\": "
    "\"Be brief.\", \"max_tokens\": 100, \"temperature\": 0.5, \"top_p\": "
    "0.9, \"stop\": [\"END\"], \"tool_choice\": {\"type\": \"function\", "
    "\"function\": {\"name\": \"ls\"}}, \"tools\": [{\"type\": "
    "\"function\", \"function\": {\"name\": \"ls\", \"description\": "
    "\"list\", \"parameters\": {\"type\": \"object\"}}}, {\"name\": "
    "\"cat\", \"input_schema\": {\"type\": \"object\"}}], \"messages\": "
    "[{\"role\": \"system\", \"content\": \"And exact.\"}, {\"role\": "
    "\"user\", \"content\": [{\"type\": \"text\", \"text\": \"go\"}]}, "
    "{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": "
    "\"c1\", \"type\": \"function\", \"function\": {\"name\": \"ls\", "
    "\"arguments\": \"{\\\"p\\\": 1}\"}}]}, {\"role\": \"tool\", "
    "\"tool_call_id\": \"c1\", \"content\": \"a b\"}, {\"role\": "
    "\"assistant\", \"content\": \"{\\\"a\\\": \"}]}";

/* --dry-run of the rich request to /dev/null, provider arg. */
static int
dry_run(void *arg, long n)
{
	struct saop_llm_config cfg;
	struct saop_err e;
	json_t *req = json_loads(rich_request, 0, NULL);
	FILE *f = fopen("/dev/null", "w");
	int rc, hit;

	ck_assert_ptr_nonnull(req);
	ck_assert_ptr_nonnull(f);
	memset(&cfg, 0, sizeof(cfg));
	cfg.provider = *(const enum saop_provider *)arg;
	cfg.base = (char *)"http://user:pw@127.0.0.1:9/v1?key=k";
	cfg.key = (char *)"sk-test-0123456789abcdef";
	cfg.model = (char *)"m";
	cfg.stream = 1;
	saop_err_clear(&e);
	arm(n);
	rc = saop_llm_dry_run(f, &cfg, req, &e);
	hit = disarm();
	ck_assert_msg(rc == 0 || rc == -SAOP_ENOMEM, "%d: %s", rc, e.msg);
	if (!hit)
		ck_assert_int_eq(rc, 0);
	fclose(f);
	json_decref(req);
	return hit;
}

START_TEST(request_bodies_survive_every_failed_allocation)
{
	enum saop_provider p = SAOP_PROVIDER_OPENAI;

	ck_assert_int_gt(each_failure(dry_run, &p), RUNS(20));
	p = SAOP_PROVIDER_ANTHROPIC;
	ck_assert_int_gt(each_failure(dry_run, &p), RUNS(20));
	p = SAOP_PROVIDER_RESPONSES;
	ck_assert_int_gt(each_failure(dry_run, &p), RUNS(20));
	p = SAOP_PROVIDER_GEMINI;
	ck_assert_int_gt(each_failure(dry_run, &p), RUNS(20));
}
END_TEST

/*
 * The correction protocol under a shortage: saop_validate_record() with a
 * stand-in model over records that reach each of its steps.  Whatever
 * allocation fails, the call returns 0 or -SAOP_ENOMEM (-SAOP_EDB too
 * when the store's own allocation failed), the record is left as it came
 * or written whole (whole(): never half), and nothing leaks.
 */

/* One record to correct, and how. */
struct vcase {
	const char *name;
	int user;		/* 1: the user's long schema, 2: a short one
				   (an array of integers), 0: the envelope */
	const char *raw;
	const char *more;	/* JSON object merged into the record */
	const char *const *answers;	/* the model's, in order */
	int max_retries, close, no_envelope, with_store;
	const char *const *checks;
	size_t nchecks;
	json_t *expect;		/* the record after a run failing nothing */
	int calls;		/* the model's calls in this run */
	const char *state;	/* the state it ends in, failing nothing */
	int attempts;		/* and the turns answered */
	int refused;		/* the model refuses: the call fails with
				   SAOP_EREFUSED, its cost still counted */
};

/* An answer of the stand-in model that is a refusal (finish_reason
 * refusal, the call failed SAOP_EREFUSED), its usage reported. */
static const char refusal[] = "(refused)";

/* The stand-in model: the case's next answer.  Returns 0, or
 * -SAOP_ENOMEM when its copy of the answer cannot be made. */
static int
canned_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct vcase *c = arg;
	const char *t = c->answers[c->calls++];

	(void)request;
	strcpy(a->finish_reason, "stop");
	a->prompt_tokens = 7;
	a->completion_tokens = 3;
	if (t == refusal) {
		strcpy(a->finish_reason, "refusal");
		return saop__fail(e, SAOP_EREFUSED, 0, "the model refused");
	}
	if ((a->raw = strdup(t)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	a->raw_len = strlen(t);
	return 0;
}

/* The record of case c, as it comes. */
static json_t *
case_record(const struct vcase *c)
{
	json_t *rec = json_pack("{s:s, s:i, s:s}", "task_id", "t", "turn", 4,
	    "raw", c->raw);
	json_t *more = c->more != NULL ? json_loads(c->more, 0, NULL) : NULL;

	ck_assert_ptr_nonnull(rec);
	if (c->more != NULL) {
		ck_assert_ptr_nonnull(more);
		ck_assert_int_eq(json_object_update(rec, more), 0);
		json_decref(more);
	}
	return rec;
}

/* The case and allocation the checks of whole() name. */
static char where[96];

/* Is key one saop_validate_record() writes? */
static int
written_key(const char *key)
{
	return strcmp(key, "raw") == 0 || strcmp(key, "state") == 0 ||
	    strcmp(key, "validate") == 0 || strcmp(key, "envelope") == 0 ||
	    strcmp(key, "cost") == 0;
}

/*
 * Check that rec, which came as was, is written whole: validate and state
 * agreeing, the envelope with a valid answer only, a replaced raw only
 * with the first kept as validate.original_raw and the turns' cost,
 * nothing else touched; and, after a return of 0, that out says what rec
 * holds.
 */
static void
whole(const struct vcase *c, const json_t *rec, const json_t *was, int rc,
    const struct saop_validate_outcome *out)
{
	const json_t *v = json_object_get(rec, "validate"), *x;
	const char *state = json_string_value(json_object_get(rec, "state"));
	const char *key;
	json_int_t attempts;
	int valid;

	json_object_foreach((json_t *)was, key, x)
		if (!written_key(key))
			ck_assert_msg(json_equal(x, json_object_get(rec, key)),
			    "%s: %s changed", where, key);
	json_object_foreach((json_t *)rec, key, x)
		ck_assert_msg(written_key(key) || json_object_get(was, key),
		    "%s: %s added", where, key);
	ck_assert_msg(json_is_object(v), "%s: no validate", where);
	ck_assert_msg(state != NULL, "%s: no state", where);
	ck_assert(json_is_boolean(json_object_get(v, "valid")));
	ck_assert(json_is_integer(json_object_get(v, "attempts")));
	ck_assert(json_is_array(json_object_get(v, "repairs")));
	valid = json_is_true(json_object_get(v, "valid"));
	attempts = json_integer_value(json_object_get(v, "attempts"));
	ck_assert_msg(valid == (strcmp(state, "OK") == 0), "%s: %s, valid %d",
	    where, state, valid);
	ck_assert_msg((json_object_get(rec, "envelope") != NULL) ==
	    (valid && !c->no_envelope), "%s: envelope", where);
	if (!valid)
		ck_assert_msg(json_array_size(json_object_get(v, "errors")) > 0,
		    "%s: invalid with no errors", where);
	if (attempts == 0) {
		ck_assert_msg(json_equal(json_object_get(rec, "raw"),
		    json_object_get(was, "raw")), "%s: raw replaced with no "
		    "turn answered", where);
		ck_assert_ptr_null(json_object_get(v, "original_raw"));
	} else {
		ck_assert_msg(json_equal(json_object_get(v, "original_raw"),
		    json_object_get(was, "raw")), "%s: %lld turns answered, "
		    "the first answer not kept", where, (long long)attempts);
		ck_assert_msg(!json_equal(json_object_get(rec, "raw"),
		    json_object_get(was, "raw")), "%s: raw not replaced",
		    where);
		ck_assert_msg(json_integer_value(json_object_get(v,
		    "sent_bytes")) > 0, "%s: the turns' cost not written",
		    where);
	}
	if (rc == 0) {
		ck_assert_str_eq(state, saop_state_name(out->state));
		ck_assert_int_eq(out->valid, valid);
		ck_assert_int_eq(out->attempts, attempts);
	}
}

/* The store of the cases that log events, and the schemas (made once). */
static struct saop_store *vstore;
static struct saop_schema *venv, *vuser, *vitems;

/* saop_validate_record() on case arg, allocation n failing. */
static int
correct_record(void *arg, long n)
{
	struct vcase *c = arg;
	struct saop_validate_opts o;
	struct saop_validate_outcome out;
	struct saop_err e;
	json_t *rec, *was;
	long before = live;
	int rc, hit, first = c->expect == NULL;

	rec = case_record(c);
	ck_assert_ptr_nonnull(was = json_deep_copy(rec));
	memset(&o, 0, sizeof(o));
	o.schema = c->user == 2 ? vitems : c->user ? vuser : venv;
	o.max_retries = c->max_retries;
	o.close = c->close;
	o.no_envelope = c->no_envelope;
	o.checks = c->checks;
	o.nchecks = c->nchecks;
	o.store = c->with_store ? vstore : NULL;
	if (c->answers != NULL) {
		o.model.call = canned_call;
		o.model.arg = c;
	}
	c->calls = 0;
	snprintf(where, sizeof(where), "%s, allocation %ld%s", c->name, n,
	    keep ? " on" : "");
	saop_err_clear(&e);
	arm(n);
	rc = saop_validate_record(rec, &o, &out, &e);
	hit = disarm();
	ck_assert_msg(rc == 0 || rc == -SAOP_ENOMEM ||
	    (c->with_store && rc == -SAOP_EDB) ||
	    (c->refused && rc == -SAOP_EREFUSED), "%s, allocation %ld: %d: %s",
	    c->name, n, rc, e.msg);
	if (rc < 0)
		ck_assert_int_eq(e.code, -rc);
	/* As it came (a failure only), or written whole. */
	if (rc == 0 || !json_equal(rec, was))
		whole(c, rec, was, rc, &out);
	if (!hit) {
		ck_assert_msg(rc == (c->refused ? -SAOP_EREFUSED : 0),
		    "%s: %d: %s", c->name, rc, e.msg);
		if (c->expect == NULL) {
			ck_assert_str_eq(json_string_value(json_object_get(rec,
			    "state")), c->state);
			ck_assert_int_eq(json_integer_value(json_object_get(
			    json_object_get(rec, "validate"), "attempts")),
			    c->attempts);
			c->expect = json_deep_copy(rec);
		}
		else
			ck_assert_msg(json_equal(rec, c->expect),
			    "%s: not the record of a run failing nothing",
			    c->name);
	}
	json_decref(rec);
	json_decref(was);
	/* Every block the call took is given back (not counted: the run
	 * that made c->expect, and the store's cache). */
	if (!c->with_store && !first)
		ck_assert_msg(live == before, "%s, allocation %ld: %ld blocks "
		    "leaked", c->name, n, live - before);
	return hit;
}

/* A schema of the user's longer than the correction turn quotes whole. */
static struct saop_schema *
long_schema(void)
{
	struct saop_schema_opts so = { NULL, 0 };
	struct saop_schema *s;
	struct saop_err e;
	char pad[SAOP_CORRECTION_SCHEMA_MAX + 16];
	json_t *doc;

	memset(pad, 'p', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	doc = json_pack("{s:s, s:[s], s:{s:{s:s, s:i, s:i}, s:{s:s}, "
	    "s:{s:s}}, s:b, s:[{s:[s]}]}", "type", "object", "required", "a",
	    "properties", "a", "type", "integer", "minimum", 1, "multipleOf",
	    2, "b", "description", pad, "t~/", "type", "string",
	    "additionalProperties", 0, "allOf", "required", "a");
	ck_assert_ptr_nonnull(doc);
	s = saop_schema_compile(doc, NULL, &so, &e);
	json_decref(doc);
	ck_assert_ptr_nonnull(s);
	return s;
}

static const char env_good[] = "{\"saop\": \"1.0\", \"turn_index\": 2, "
    "\"agent_role\": \"developer\", \"thought\": \"t\", \"action\": null}";
static const char env_cut[] = "{\"saop\": \"1.0\", \"turn_index\": 2, "
    "\"agent_role\": \"developer\", \"action\": null, \"thought\": \"Do";
static const char env_cmd[] = "{\"saop\": \"1.0\", \"turn_index\": 2, "
    "\"agent_role\": \"developer\", \"thought\": \"clean\", \"action\": "
    "{\"tool\": \"sh\", \"parameters\": {\"cmd\": \"rm -rf /tmp/bu";
static const char env_two[] = "{\"saop\": \"1.0\", \"turn_index\": 2, "
    "\"agent_role\": \"developer\", \"action\": null, \"thought\": \"a\"}"
    "{\"saop\": \"1.0\", \"turn_index\": 2, \"agent_role\": \"developer\", "
    "\"action\": null, \"thought\": \"b\"}";

/* Run each_failure() over case c, then over it in a shortage that lasts;
 * frees c->expect. */
static void
each_case(struct vcase *c)
{
	ck_assert_int_gt(each_failure(correct_record, c), RUNS(10));
	keep = 1;
	ck_assert_int_gt(each_failure(correct_record, c), RUNS(10));
	keep = 0;
	json_decref(c->expect);
	c->expect = NULL;
}

START_TEST(correction_protocol_survives_every_failed_allocation)
{
	static const char *const fixed[] = { "{\"saop\": 1}", env_good };
	static const char *const never[] = { "{}",
	    "{\"a\": -1, \"t~/\": 1, \"c\": 2}" };
	static const char *const lossy[] = { "{\"saop\": \"\xff\"}", env_good };
	static const char *const ints[] = { "[1, 2]" };
	static const char *const check_two[] = { "true", "grep -q ok" };
	static const char *const once[] = { "{\"a\": 6}" };
	static const char *const checked[] = { "{\"a\": 8, \"b\": \"ok\"}" };
	static const char *const refused[] = { refusal };
	static const char *const check_ok[] = {
		"grep -q ok || { echo 'no ok' >&2; exit 1; }", "true"
	};
	char path[] = "/tmp/saop-cov-oom.XXXXXX", db[64];
	struct saop_schema_opts so = { NULL, 0 };
	struct saop_err e;
	json_t *doc;
	struct vcase cases[] = {
		/* Two turns answered, the second valid; events logged. */
		{ "corrected", 0, "nope", "{\"request\": {\"messages\": []}}",
		    fixed, 2, 0, 0, 1, NULL, 0, NULL, 0, "OK", 2, 0 },
		/* An answer that is not UTF-8; no task id to log under. */
		{ "lossy", 0, "nope", "{\"task_id\": null}", lossy, 2, 0, 0, 1,
		    NULL, 0, NULL, 0, "OK", 2, 0 },
		/* Never fixed: escalated, the task's status set. */
		{ "escalated", 1, "{\"a\": \"x\"}", NULL, never, 2, 0, 0,
		    1, NULL, 0, NULL, 0, "USER_ESCALATION", 2, 0 },
		/* The user's schema quoted in parts; no store. */
		{ "user schema", 1, "{\"a\": 0}", NULL, once, 1, 0, 0, 0,
		    NULL, 0, NULL, 0, "OK", 1, 0 },
		/* Valid as it came, the envelope kept; and not kept. */
		{ "kept", 0, env_good, NULL, NULL, 0, 0, 0, 0, NULL, 0,
		    NULL, 0, "OK", 0, 0 },
		{ "not kept", 0, env_good, NULL, NULL, 0, 0, 1, 0, NULL, 0,
		    NULL, 0, "OK", 0, 0 },
		/* --close: a cut answer closed locally. */
		{ "closed", 0, env_cut, "{\"state\": \"TRUNCATED\"}", NULL,
		    0, 1, 0, 0, NULL, 0, NULL, 0, "OK", 0, 0 },
		/* A cut tool call under --close goes on to correction. */
		{ "tool call", 0, env_cut, "{\"state\": \"TRUNCATED\", "
		    "\"tool_call\": {\"id\": \"c1\", \"name\": \"sh\"}}",
		    fixed + 1, 1, 1, 0, 0, NULL, 0, NULL, 0, "OK", 1, 0 },
		/* Several readings, none taken; then a turn fixes it. */
		{ "readings", 0, env_two, NULL, fixed + 1, 1, 1, 0, 0, NULL,
		    0, NULL, 0, "OK", 1, 0 },
		/* --check: the schema passes, the check fails, a turn fixes. */
		{ "checked", 1, "{\"a\": 4}", NULL, checked, 1, 0, 0, 0,
		    check_ok, 2, NULL, 0, "OK", 1, 0 },
		/* Two checks, the envelope not kept: the first passes. */
		{ "checked twice", 1, "{\"a\": 4}", NULL, checked, 1, 0, 1, 0,
		    check_two, 2, NULL, 0, "OK", 1, 0 },
		/* A top-level array checked an item at a time; and the
		 * short schema quoted whole in a correction turn. */
		{ "items", 2, "[1, 2, 3]", NULL, NULL, 0, 0, 1, 0, NULL, 0,
		    NULL, 0, "OK", 0, 0 },
		{ "items corrected", 2, "[1, \"x\"]", NULL, ints, 1, 0, 0, 0,
		    NULL, 0, NULL, 0, "OK", 1, 0 },
		/* Cut where --close may not close: saop-resume's to fix. */
		{ "not closed", 0, env_cmd, "{\"state\": \"TRUNCATED\"}",
		    fixed, 1, 1, 0, 0, NULL, 0, NULL, 0, "TRUNCATED", 0, 0 },
		/* Cut, with a model but no --close: saop-resume's to fix. */
		{ "truncated", 0, env_cut, "{\"state\": \"TRUNCATED\"}", fixed,
		    1, 0, 0, 0, NULL, 0, NULL, 0, "TRUNCATED", 0, 0 },
		/* The correction turn refused: its cost on the record and
		 * in an event, the record as it stands, INVALID. */
		{ "refused", 0, "nope", NULL, refused, 1, 0, 0, 1, NULL, 0,
		    NULL, 0, "INVALID", 0, 1 },
		/* No raw at all. */
		{ "no raw", 0, "", "{\"raw\": null}", NULL, 0, 0, 0, 0, NULL,
		    0, NULL, 0, "INVALID", 0, 0 },
	};
	size_t i;

	ck_assert_ptr_nonnull(venv = saop_schema_envelope_v1(&e));
	vuser = long_schema();
	doc = json_pack("{s:s, s:{s:s}}", "type", "array", "items", "type",
	    "integer");
	ck_assert_ptr_nonnull(doc);
	ck_assert_ptr_nonnull(vitems = saop_schema_compile(doc, NULL, &so,
	    &e));
	json_decref(doc);
	ck_assert_ptr_nonnull(mkdtemp(path));
	snprintf(db, sizeof(db), "%s/state.sqlite", path);
	ck_assert_ptr_nonnull(vstore = saop_store_open(db, &e));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		each_case(&cases[i]);
	saop_store_close(vstore);
	vstore = NULL;
	remove_store(path);
	saop_schema_free(vitems);
	saop_schema_free(vuser);
	saop_schema_free(venv);
	vitems = vuser = venv = NULL;
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cov_oom");
	TCase *tc = tcase_create("oom");

#ifdef SANITIZED
	json_set_alloc_funcs(json_failing_malloc, free);
#endif
	pthread_atfork(NULL, NULL, child_disarm);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, validate_text_survives_every_failed_allocation);
	tcase_add_test(tc, validate_record_survives_every_failed_allocation);
	tcase_add_test(tc, correction_request_survives_every_failed_allocation);
	tcase_add_test(tc, prune_survives_every_failed_allocation);
	tcase_add_test(tc, prune_store_survives_every_failed_allocation);
	tcase_add_test(tc, resume_merge_survives_every_failed_allocation);
	tcase_add_test(tc, resume_join_survives_every_failed_allocation);
	tcase_add_test(tc, resume_record_survives_every_failed_allocation);
	tcase_add_test(tc, suspend_turn_survives_every_failed_allocation);
	tcase_add_test(tc, repair_survives_every_failed_allocation);
	tcase_add_test(tc, schema_survives_every_failed_allocation);
	tcase_add_test(tc, detect_survives_every_failed_allocation);
	tcase_add_test(tc, request_bodies_survive_every_failed_allocation);
	tcase_add_test(tc,
	    correction_protocol_survives_every_failed_allocation);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
