/*
 * check_cov_suspend.c: what the suspension code (lib/suspend.c) does that
 * no other test reached (issue 25): the network probe going where libcurl
 * would (a proxy from the environment, NO_PROXY, an IPv6 literal), a
 * record without a task or a request, a prefill refused after a loss, a
 * 429 asking for longer than the longest wait, a signal during the first
 * wait, a wait without end, a saved tool call resumed, and the guard
 * around other protocols' calls.  The model and the probe are scripts;
 * the store a real SQLite file; the probe's endpoints real sockets on
 * loopback.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "saop-private.h"

static char dir[64];
static struct saop_store *st;

/* A fresh store in a fresh directory for each test. */
static void
setup(void)
{
	char path[96];
	struct saop_err e;

	snprintf(dir, sizeof(dir), "/tmp/check_cov_suspend.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.sqlite", dir);
	st = saop_store_open(path, &e);
	ck_assert_msg(st != NULL, "%s", e.msg);
}

/* Close the store and remove its files. */
static void
teardown(void)
{
	char cmd[128];

	saop_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* One text from a query on the store (static buffer), "" for none. */
static const char *
text_of(const char *sql)
{
	static char buf[512];
	sqlite3_stmt *s;

	buf[0] = '\0';
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(st), sql, -1, &s,
	    NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		snprintf(buf, sizeof(buf), "%s", sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return buf;
}

/* The store's rows of agent_turn_states. */
static long
saved_rows(void)
{
	return atol(text_of("SELECT count(*) FROM agent_turn_states"));
}

/* ---- The probe: where it connects ---- */

/* The proxy variables libcurl reads, all unset. */
static void
no_proxies(void)
{
	static const char *const v[] = { "http_proxy", "https_proxy",
	    "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
	    NULL };
	int i;

	for (i = 0; v[i] != NULL; i++)
		unsetenv(v[i]);
}

/* A socket listening on loopback (family AF_INET or AF_INET6), its port
 * in *port; -1 when the family is not there. */
static int
listener(int family, int *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		len = sizeof(*a);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 8) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/* A loopback port nothing listens on (bound, then closed). */
static int
dead_port(void)
{
	int port, fd = listener(AF_INET, &port);

	ck_assert_int_ge(fd, 0);
	close(fd);
	return port;
}

START_TEST(the_probe_goes_through_the_proxy_libcurl_would_take)
{
	char live[64], lives[64], proxy[64];
	int port, fd = listener(AF_INET, &port), dead = dead_port();

	ck_assert_int_ge(fd, 0);
	no_proxies();
	snprintf(live, sizeof(live), "http://127.0.0.1:%d/v1", port);
	snprintf(lives, sizeof(lives), "https://127.0.0.1:%d/v1", port);
	snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", dead);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 1);
	ck_assert_int_eq(saop_suspend_probe(lives, 2000), 1);
	/* A dead proxy: the endpoint is down for the calls too. */
	setenv("http_proxy", proxy, 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 0);
	/* http_proxy is not for https. */
	ck_assert_int_eq(saop_suspend_probe(lives, 2000), 1);
	setenv("HTTPS_PROXY", proxy, 1);
	ck_assert_int_eq(saop_suspend_probe(lives, 2000), 0);
	/* NO_PROXY: the host itself, a domain with or without its dot, or
	 * *: straight to the endpoint; a mere suffix is no match. */
	setenv("no_proxy", "example.com, 127.0.0.1", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 1);
	setenv("no_proxy", "example.com,*", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 1);
	setenv("no_proxy", ".0.0.1", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 1);
	setenv("no_proxy", "27.0.0.1", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 0);
	setenv("no_proxy", "", 1);
	setenv("NO_PROXY", "other.example", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 0);
	no_proxies();
	/* A proxy that is no URL: nowhere to connect. */
	setenv("all_proxy", "http:///", 1);
	ck_assert_int_eq(saop_suspend_probe(live, 2000), 0);
	/* The live endpoint as the proxy (for any host): up. */
	snprintf(proxy, sizeof(proxy), "127.0.0.1:%d", port);
	setenv("all_proxy", proxy, 1);
	ck_assert_int_eq(saop_suspend_probe("http://api.invalid/v1", 2000),
	    1);
	no_proxies();
	close(fd);
}
END_TEST

START_TEST(a_proxy_without_a_port_is_on_1080)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(1080);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		/* Held by another program: nothing to tell 1080 apart. */
		ck_assert_int_eq(errno, EADDRINUSE);
		fprintf(stderr, "port 1080 in use: the default proxy port is "
		    "not checked\n");
		close(fd);
		return;
	}
	ck_assert_int_eq(listen(fd, 8), 0);
	no_proxies();
	/* The endpoint itself answers nowhere: only 1080 does. */
	setenv("http_proxy", "http://127.0.0.1", 1);
	ck_assert_int_eq(saop_suspend_probe("http://127.0.0.1:1/v1", 2000), 1);
	setenv("http_proxy", "127.0.0.1/", 1);
	ck_assert_int_eq(saop_suspend_probe("http://127.0.0.1:1/v1", 2000), 1);
	/* A port given is the port. */
	setenv("http_proxy", "http://127.0.0.1:1", 1);
	ck_assert_int_eq(saop_suspend_probe("http://127.0.0.1:1080/v1", 2000),
	    0);
	no_proxies();
	close(fd);
}
END_TEST

START_TEST(the_probe_reads_ipv6_literals)
{
	char url[64];
	int port, fd = listener(AF_INET6, &port);

	no_proxies();
	/* A bracket never closed: no host. */
	ck_assert_int_eq(saop_suspend_probe("http://[::1/v1", 2000), 0);
	ck_assert_int_eq(saop_suspend_probe("http://[]:80/v1", 2000), 0);
	if (fd < 0) {
		fprintf(stderr, "no IPv6 loopback: the literal's parse only\n");
		return;
	}
	snprintf(url, sizeof(url), "http://[::1]:%d/v1", port);
	ck_assert_int_eq(saop_suspend_probe(url, 2000), 1);
	snprintf(url, sizeof(url), "http://user:pw@[::1]:%d", port);
	ck_assert_int_eq(saop_suspend_probe(url, 2000), 1);
	close(fd);
	/* Closed now. */
	snprintf(url, sizeof(url), "http://[::1]:%d/v1", port);
	ck_assert_int_eq(saop_suspend_probe(url, 2000), 0);
}
END_TEST

START_TEST(durations_too_long_or_out_of_range_are_refused)
{
	long long ms = 7;

	ck_assert_int_eq(saop_duration_parse("9e999s", &ms), -1);
	ck_assert_int_eq(saop_duration_parse("3000000000h", &ms), -1);
	ck_assert_int_eq(ms, 7);
	ck_assert_int_eq(saop_duration_parse("2500000000h", &ms), 0);
	ck_assert_int_eq(ms, 2500000000LL * 3600000);
}
END_TEST

/* ---- One turn ---- */

/* One scripted answer: the code, HTTP status, Retry-After and text. */
struct step {
	int code, http;
	long retry_after_ms;
	const char *text;
};

/* The script, what it saw, and the probe's. */
struct script {
	const struct step *steps;
	int n, calls, probes, up_after;
	char last_role[8][16];	/* the last message's role, per call */
	volatile sig_atomic_t stop;
};
static struct script sc;

/* The scripted model: the next step (the last one again past the end). */
static int
model(void *arg, const json_t *req, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct script *s = arg;
	const struct step *p = &s->steps[s->calls < s->n ? s->calls :
	    s->n - 1];
	const json_t *msgs = json_object_get(req, "messages");

	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	if (s->calls < 8)
		snprintf(s->last_role[s->calls], 16, "%s", json_string_value(
		    json_object_get(json_array_get(msgs, json_array_size(msgs)
		    - 1), "role")));
	s->calls++;
	a->raw = strdup(p->text);
	ck_assert_ptr_nonnull(a->raw);
	a->raw_len = strlen(p->text);
	saop_err_clear(e);
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

/* The scripted probe: up from the up_after-th probe on. */
static int
probe(void *arg)
{
	struct script *s = arg;

	return ++s->probes >= s->up_after;
}

/* Options for the script (steps, n), 1 ms polls, the store. */
static void
opts(struct saop_suspend_opts *o, const struct step *steps, int n)
{
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
	o->model.call = model;
	o->model.arg = &sc;
	o->probe = probe;
	o->probe_arg = &sc;
	o->stop = &sc.stop;
}

/* A record of task "t", turn 2. */
static json_t *
rec(void)
{
	return json_pack("{s:s, s:i, s:{s:[{s:s, s:s}]}}", "task_id", "t",
	    "turn", 2, "request", "messages", "role", "user", "content",
	    "JSON please");
}

static const char *
str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
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
	ck_assert_int_eq(saved_rows(), 0);
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
	ck_assert_str_eq(str(r, "raw"), "{\"a\": [1, 2]}");
	ck_assert_int_eq(sc.calls, 3);
	/* The first resume prefilled; the one after the refusal did not. */
	ck_assert_str_eq(sc.last_role[1], "assistant");
	ck_assert_str_eq(sc.last_role[2], "user");
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
	ck_assert_ptr_nonnull(strstr(said, "for no limit)"));
	ck_assert_ptr_nonnull(strstr(said, "stopped by a signal"));
	ck_assert_ptr_nonnull(strstr(e.msg, "stopped while waiting"));
	ck_assert_str_eq(str(r, "state"), "PAUSED_FOR_INTERVENTION");
	ck_assert_int_eq(saved_rows(), 1);
	ck_assert_str_eq(text_of("SELECT count(*) FROM agent_turn_states "
	    "WHERE claim_pid IS NULL"), "1");
	ck_assert_str_eq(text_of("SELECT group_concat(event, ',') FROM "
	    "(SELECT event FROM events ORDER BY id)"),
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
	sc.stop = 1;
	ck_assert_int_eq(saop_suspend_turn(r, NULL, &o, &out, &e),
	    -SAOP_ERATELIMIT);
	ck_assert_int_eq(out.rate_waits, 1);
	ck_assert_int_eq(sc.calls, 1);
	ck_assert_str_eq(out.limit, "signal");
	ck_assert_int_eq(saved_rows(), 1);
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
	ck_assert_str_eq(str(r, "raw"), "{\"a\": 1}");
	/* A tool call continued as text is still a tool call. */
	ck_assert_str_eq(str(r, "finish_reason"), "tool_calls");
	ck_assert_str_eq(str(json_object_get(r, "tool_call"), "id"), "c1");
	calls = json_object_get(r, "tool_calls");
	ck_assert_uint_eq(json_array_size(calls), 2);
	ck_assert_str_eq(str(json_object_get(json_array_get(calls, 0),
	    "function"), "arguments"), "{\"a\": 1}");
	ck_assert_str_eq(str(json_object_get(json_array_get(calls, 1),
	    "function"), "arguments"), "{}");
	ck_assert_str_eq(str(r, "text"), "Calling f.");
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
	ck_assert_int_eq(saved_rows(), 0);
	saop_llm_answer_free(&a);
	/* No task: the model called as it is, no policy, no row. */
	json_object_del(r, "task_id");
	sc.calls = 0;
	sc.steps = s + 1;
	sc.n = 1;
	memset(&g.out, 0, sizeof(g.out));
	ck_assert_int_eq(saop_model_call(&m, req, &a, &e), 0);
	ck_assert_str_eq(a.raw, "{\"b\": 2}");
	ck_assert_int_eq(sc.calls, 1);
	ck_assert_int_eq(g.out.calls, 0);
	ck_assert_int_eq(saved_rows(), 0);
	saop_llm_answer_free(&a);
	json_decref(r);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cov_suspend");
	TCase *probe_tc = tcase_create("probe");
	TCase *tc = tcase_create("turn");
	SRunner *sr;
	int failed;

	tcase_add_test(probe_tc,
	    the_probe_goes_through_the_proxy_libcurl_would_take);
	tcase_add_test(probe_tc, a_proxy_without_a_port_is_on_1080);
	tcase_add_test(probe_tc, the_probe_reads_ipv6_literals);
	tcase_add_test(probe_tc, durations_too_long_or_out_of_range_are_refused);
	suite_add_tcase(s, probe_tc);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_record_without_a_task_or_a_request_is_refused);
	tcase_add_test(tc,
	    a_prefill_refused_after_a_loss_goes_on_in_the_user_form);
	tcase_add_test(tc,
	    a_signal_in_the_first_wait_suspends_without_a_probe);
	tcase_add_test(tc, a_429_whose_wait_a_signal_stops_suspends_the_turn);
	tcase_add_test(tc, a_saved_tool_call_resumes_as_a_tool_call);
	tcase_add_test(tc,
	    the_guard_waits_out_a_429_and_passes_a_record_without_task);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
