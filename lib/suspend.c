/*
 * suspend.c: graceful suspension: one policy for every model call that
 * can meet a lost network.  The turn is saved before each call, a loss
 * pauses the task, a connectivity monitor waits for the endpoint, and
 * the turn resumes from what had been received.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "db.h"

/* 429s waited out per turn before the turn is suspended instead. */
#define RATE_WAITS_MAX	10
/* The longest Retry-After honoured in one wait (ms). */
#define RATE_WAIT_MAX_MS	(10L * 60 * 1000)

/* The class of the failure e, by its code and HTTP status (see saop.h). */
enum saop_suspend_class
saop_suspend_classify(const struct saop_err *e)
{
	switch (e->code) {
	case SAOP_ENETWORK:
		return SAOP_SUSPEND_LOST;
	case SAOP_ERATELIMIT:
		/* A 429 is waited out; a 503 or 529 is a loss. */
		return e->http_status == 429 ? SAOP_SUSPEND_WAIT :
		    SAOP_SUSPEND_LOST;
	case SAOP_EREFUSED:
	case SAOP_EBADREQ:
	case SAOP_EPREFILL:
	case SAOP_EPROTO:
	case SAOP_ECONFIG:
		return SAOP_SUSPEND_REFUSE;
	default:
		return SAOP_SUSPEND_NONE;
	}
}

/* ---- Turn states in agent_turn_states ---- */

struct save_arg {
	const char *task_id;
	const char *text;
	const char *now;
};

/* Upsert one row inside a transaction; 0 or SAOP_EDB. */
static int
save_tx(struct saop__db *db, void *arg, struct saop_err *e)
{
	const struct save_arg *a = arg;

	return saop__db_turn_save(db, a->task_id, a->text, a->now, e);
}

/*
 * Upsert task_id's turn state (see saop.h), durably.  Returns 0, or
 * SAOP_EDB / SAOP_ENOMEM with e filled.
 */
int
saop_turn_state_save(struct saop_store *s, const char *task_id,
    const json_t *state, struct saop_err *e)
{
	struct save_arg a;
	char now[32];
	char *text;
	int rc;

	if ((text = json_dumps(state, JSON_COMPACT | JSON_ENCODE_ANY)) ==
	    NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	saop_now_iso8601(now);
	a.task_id = task_id;
	a.text = text;
	a.now = now;
	rc = saop__store_tx(s, 1, save_tx, &a, e);
	free(text);
	return rc;
}

struct delete_arg {
	const char *task_id;
	long long deleted;
};

/* Delete one row inside a transaction; 0 or SAOP_EDB. */
static int
delete_tx(struct saop__db *db, void *arg, struct saop_err *e)
{
	struct delete_arg *a = arg;

	return saop__db_turn_delete(db, a->task_id, &a->deleted, e);
}

/* Delete task_id's turn state: 1 deleted, 0 none, or a negative code. */
int
saop_turn_state_delete(struct saop_store *s, const char *task_id,
    struct saop_err *e)
{
	struct delete_arg a = { task_id, 0 };
	int rc;

	if ((rc = saop__store_tx(s, 1, delete_tx, &a, e)) != 0)
		return rc;
	return a.deleted > 0 ? 1 : 0;
}

struct each_arg {
	int (*each)(void *arg, const char *task_id, json_t *state,
	    const char *saved_at);
	void *arg;
	struct saop_err *e;
};

/*
 * saop__db_turn_each() callback: parse one row's state and hand it on.
 * Returns what each returned, or -SAOP_EDATA for a state that is not a
 * JSON object.
 */
static int
each_row(void *arg, const struct saop__db_row *r)
{
	struct each_arg *a = arg;
	const char *id = saop__db_col_text(r, 0);
	const char *text = saop__db_col_text(r, 1);
	const char *at = saop__db_col_text(r, 2);
	json_error_t je;
	json_t *state;
	int rc;

	state = text != NULL ? json_loads(text, 0, &je) : NULL;
	if (state == NULL || !json_is_object(state)) {
		json_decref(state);
		return saop__fail(a->e, SAOP_EDATA, 0, "state database: "
		    "the turn state of task %s is not a JSON object",
		    id != NULL ? id : "?");
	}
	rc = a->each(a->arg, id != NULL ? id : "", state, at != NULL ? at : "");
	json_decref(state);
	return rc;
}

/*
 * Call each for every saved turn (or task_id's), oldest first (see
 * saop.h).  Returns what each returned when not 0, else 0, or a negative
 * code (SAOP_EDB, SAOP_EDATA for a row that is not a JSON object).
 */
int
saop_turn_state_each(struct saop_store *s, const char *task_id,
    int (*each)(void *arg, const char *task_id, json_t *state,
    const char *saved_at), void *arg, struct saop_err *e)
{
	struct each_arg a;
	struct saop__db *db;
	int rc;

	saop_err_clear(e);
	a.each = each;
	a.arg = arg;
	a.e = e;
	if ((rc = saop__store_conn(s, &db, e)) != 0)
		return rc;
	return saop__db_turn_each(db, task_id, each_row, &a, e);
}

/* saop_turn_state_each() callback of load: keep the state. */
static int
load_one(void *arg, const char *task_id, json_t *state, const char *at)
{
	(void)task_id;
	(void)at;
	*(json_t **)arg = json_incref(state);
	return 1;
}

/*
 * Load task_id's turn state into *state (new reference).  Returns 1, 0
 * when there is none, or a negative code.
 */
int
saop_turn_state_load(struct saop_store *s, const char *task_id,
    json_t **state, struct saop_err *e)
{
	int rc;

	*state = NULL;
	rc = saop_turn_state_each(s, task_id, load_one, state, e);
	return rc < 0 ? rc : *state != NULL;
}

/* ---- The connectivity monitor ---- */

/* Milliseconds of a monotonic clock. */
static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Sleep ms milliseconds, waking early only when *stop is set.  Returns 1
 * when stopped, else 0.
 */
static int
sleep_ms(long ms, const volatile sig_atomic_t *stop)
{
	long long end = now_ms() + ms;
	long long left;
	struct timespec ts;

	while ((stop == NULL || !*stop) && (left = end - now_ms()) > 0) {
		ts.tv_sec = (time_t)(left / 1000);
		ts.tv_nsec = (long)(left % 1000) * 1000000L;
		nanosleep(&ts, NULL);	/* EINTR: look at *stop again */
	}
	return stop != NULL && *stop;
}

/*
 * Split url's authority into host (without brackets) and port (the
 * scheme's default when none).  Returns 0, or -1 when url has no host.
 */
static int
url_host_port(const char *url, char *host, size_t hostsz, char *port,
    size_t portsz)
{
	const char *p, *end, *at, *hs, *he, *colon;
	int https = strncasecmp(url, "https://", 8) == 0;

	p = strstr(url, "://");
	p = p != NULL ? p + 3 : url;
	end = p + strcspn(p, "/?#");
	/* userinfo@ is never part of where to connect */
	for (at = p; at < end && *at != '@'; at++)
		;
	if (at < end)
		p = at + 1;
	if (*p == '[') {
		hs = p + 1;
		if ((he = memchr(hs, ']', (size_t)(end - hs))) == NULL)
			return -1;
		colon = he + 1 < end && he[1] == ':' ? he + 1 : NULL;
	} else {
		hs = p;
		colon = memchr(p, ':', (size_t)(end - p));
		he = colon != NULL ? colon : end;
	}
	if (he == hs || (size_t)(he - hs) >= hostsz)
		return -1;
	memcpy(host, hs, (size_t)(he - hs));
	host[he - hs] = '\0';
	if (colon != NULL && end - colon > 1 &&
	    (size_t)(end - colon - 1) < portsz) {
		memcpy(port, colon + 1, (size_t)(end - colon - 1));
		port[end - colon - 1] = '\0';
	} else
		snprintf(port, portsz, "%s", https ? "443" : "80");
	return 0;
}

/* The first of the environment variables names that is set, or NULL. */
static const char *
env_first(const char *const *names)
{
	for (; *names != NULL; names++) {
		const char *v = getenv(*names);

		if (v != NULL && *v != '\0')
			return v;
	}
	return NULL;
}

/* 1 when host matches the NO_PROXY list (libcurl's reading), else 0. */
static int
no_proxy_for(const char *host)
{
	static const char *const names[] = { "no_proxy", "NO_PROXY", NULL };
	const char *list = env_first(names), *p;
	size_t hl = strlen(host), n;

	if (list == NULL)
		return 0;
	for (p = list; *p != '\0'; p += n) {
		p += strspn(p, ", ");
		n = strcspn(p, ", ");
		if (n == 1 && *p == '*')
			return 1;
		if (n > 0 && *p == '.') {
			p++;
			n--;
		}
		if (n > 0 && n <= hl && strncasecmp(host + hl - n, p, n) == 0 &&
		    (n == hl || host[hl - n - 1] == '.'))
			return 1;
	}
	return 0;
}

/*
 * Where a request to base first connects: the proxy libcurl would take
 * from the environment, else base's own host and port.  0 or -1.
 */
static int
connect_target(const char *base, char *host, size_t hostsz, char *port,
    size_t portsz)
{
	static const char *const https_env[] = { "https_proxy", "HTTPS_PROXY",
	    "all_proxy", "ALL_PROXY", NULL };
	static const char *const http_env[] = { "http_proxy", "all_proxy",
	    "ALL_PROXY", NULL };
	const char *proxy;

	if (url_host_port(base, host, hostsz, port, portsz) != 0)
		return -1;
	proxy = env_first(strncasecmp(base, "https://", 8) == 0 ? https_env :
	    http_env);
	if (proxy != NULL && !no_proxy_for(host)) {
		if (url_host_port(proxy, host, hostsz, port, portsz) != 0)
			return -1;
		/* A proxy URL without a port means libcurl's 1080. */
		if (strstr(proxy, "://") == NULL || strchr(strstr(proxy,
		    "://") + 3, ':') == NULL)
			snprintf(port, portsz, "1080");
	}
	return 0;
}

/* 1 when a non-blocking connect to ai completes within ms, else 0. */
static int
try_connect(const struct addrinfo *ai, long ms)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, err = 0, ok = 0, fl;

	if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
	    ai->ai_protocol)) < 0)
		return 0;
	if ((fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		close(fd);
		return 0;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		ok = 1;
	else if (errno == EINPROGRESS) {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, (int)ms) == 1 &&
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
		    err == 0)
			ok = 1;
	}
	close(fd);
	return ok;
}

/*
 * Probe the endpoint of base (or the proxy for it) with a TCP connect of
 * at most timeout_ms.  Returns 1 when it answers, else 0.
 */
int
saop_suspend_probe(const char *base, long timeout_ms)
{
	struct addrinfo hints, *res, *ai;
	char host[256], port[16];
	int ok = 0;

	if (base == NULL || connect_target(base, host, sizeof(host), port,
	    sizeof(port)) != 0)
		return 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return 0;	/* DNS down is the network down */
	for (ai = res; ai != NULL && !ok; ai = ai->ai_next)
		ok = try_connect(ai, timeout_ms);
	freeaddrinfo(res);
	return ok;
}

/* The probe of opts: 1 up, 0 down. */
static int
probe(const struct saop_suspend_opts *o)
{
	if (o->probe != NULL)
		return o->probe(o->probe_arg);
	/* A probe takes at most the poll interval (and at most 3 s). */
	return saop_suspend_probe(o->endpoint, o->poll_ms < 3000 ?
	    o->poll_ms : 3000);
}

/*
 * Wait until the endpoint answers: after first_ms, probe, then probe
 * again every opts->poll_ms, sleeping in between, at most
 * opts->max_resumes probes.  Returns 1 when it answers, 0 when every
 * probe found it down or *opts->stop was set.
 */
static int
wait_for_network(const struct saop_suspend_opts *o, long first_ms)
{
	int up = 0, down = 0;

	if (o->waiting != NULL)
		*o->waiting = 1;
	if (first_ms > 0 && sleep_ms(first_ms, o->stop))
		goto out;
	while (o->stop == NULL || !*o->stop) {
		if ((up = probe(o)) == 1 || ++down >= o->max_resumes)
			break;
		if (sleep_ms(o->poll_ms, o->stop))
			break;
	}
out:
	if (o->waiting != NULL)
		*o->waiting = 0;
	return up && (o->stop == NULL || !*o->stop);
}

/* ---- One turn ---- */

/* Everything one turn carries between its calls. */
struct turn {
	json_t *rec;		/* borrowed: the record */
	const char *task_id;
	long turn;
	char *partial;		/* the answer received so far (malloc) */
	size_t plen;
	json_t *tool_call;	/* {id, name} of a tool call in progress */
	json_t *tool_calls;	/* all calls of the answer (OpenAI shape) */
	long prompt_tokens, completion_tokens;
	int resumes;
	int discarded;		/* partial text not JSON: asked again */
};

/* The program calling under o: o->stage, else "saop-suspend". */
static const char *
stage_of(const struct saop_suspend_opts *o)
{
	return o->stage != NULL ? o->stage : "saop-suspend";
}

/* The state to save for t (new reference), or NULL out of memory. */
static json_t *
turn_state(const struct turn *t, const struct saop_suspend_opts *o)
{
	json_t *rec, *st;

	if ((rec = json_deep_copy(t->rec)) == NULL)
		return NULL;
	json_object_del(rec, "state");
	json_object_del(rec, "error");
	st = json_pack("{s:o, s:s, s:I, s:s%, s:i}", "record", rec, "stage",
	    stage_of(o), "received",
	    (json_int_t)t->plen, "partial", t->partial != NULL ? t->partial :
	    "", t->plen, "resumes", t->resumes);
	if (st != NULL && t->tool_call != NULL)
		json_object_set(st, "tool_call", t->tool_call);
	return st;
}

/* Save t's state; 0 or the store's code. */
static int
save(const struct turn *t, const struct saop_suspend_opts *o,
    struct saop_err *e)
{
	json_t *st;
	int rc;

	if ((st = turn_state(t, o)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	rc = saop_turn_state_save(o->store, t->task_id, st, e);
	json_decref(st);
	return rc;
}

/* Log event name for t with data (stolen; may be NULL). */
static void
event(const struct turn *t, const struct saop_suspend_opts *o,
    const char *name, json_t *data)
{
	struct saop_err ignored;

	saop_event(o->store, t->task_id, t->turn, name, data, &ignored);
	json_decref(data);
}

/*
 * The text of answer a: the first tool call's arguments when it made
 * calls (and t->tool_call, t->tool_calls set), else a->raw.  Borrowed
 * from a; *len its length.
 */
static const char *
answer_text(struct turn *t, const struct saop_llm_answer *a, size_t *len)
{
	json_t *c = json_array_get(a->tool_calls, 0), *fn, *args;

	if (c == NULL) {
		*len = a->raw_len;
		return a->raw;
	}
	fn = json_object_get(c, "function");
	args = json_object_get(fn, "arguments");
	if (t->tool_call == NULL)
		t->tool_call = json_pack("{s:O?, s:O?}", "id",
		    json_object_get(c, "id"), "name",
		    json_object_get(fn, "name"));
	if (json_array_size(a->tool_calls) > 1) {
		json_decref(t->tool_calls);
		t->tool_calls = json_incref(a->tool_calls);
	}
	*len = json_string_length(args);
	return json_string_value(args) != NULL ? json_string_value(args) : "";
}

/* Add a's token counts to t's. */
static void
count_usage(struct turn *t, const struct saop_llm_answer *a)
{
	if (a->prompt_tokens >= 0)
		t->prompt_tokens = (t->prompt_tokens < 0 ? 0 :
		    t->prompt_tokens) + a->prompt_tokens;
	if (a->completion_tokens >= 0)
		t->completion_tokens = (t->completion_tokens < 0 ? 0 :
		    t->completion_tokens) + a->completion_tokens;
}

/*
 * Put text (len bytes) after t's partial answer: the merge of the resume
 * protocol when there is one (kept only when it scans no worse than the
 * partial alone), else text itself.  *verdict gets the scan.  0 or ENOMEM.
 */
static int
take(struct turn *t, const char *text, size_t len, int *verdict,
    struct saop_err *e)
{
	struct saop_detect_result r;
	char *out;
	size_t olen;
	int v;

	if (t->plen == 0) {
		if ((out = malloc(len + 1)) == NULL)
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		memcpy(out, text, len);
		out[len] = '\0';
		olen = len;
		if (saop_detect_buffer(out, olen, 0, &r) != 0) {
			free(out);
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		}
		v = (int)r.verdict;
		saop_detect_result_free(&r);
	} else {
		if (len == 0) {
			*verdict = SAOP_TRUNCATED;
			return 0;
		}
		v = saop_resume_merge(t->partial, t->plen, text, len, 0, &out,
		    &olen, NULL, e);
		if (v < 0)
			return v;
		if (v == SAOP_INVALID) {
			/* A continuation that spoils the partial: drop it. */
			free(out);
			*verdict = SAOP_TRUNCATED;
			return 0;
		}
	}
	free(t->partial);
	t->partial = out;
	t->plen = olen;
	*verdict = v;
	return 0;
}

/*
 * The request for t's next call: rec.request when nothing has come yet,
 * else the continuation of the resume protocol from the end of the
 * partial answer (new reference), or NULL with e.
 */
static json_t *
next_request(struct turn *t, struct saop_suspend_opts *o,
    struct saop_err *e)
{
	const json_t *req = json_object_get(t->rec, "request");
	struct saop_detect_result r;
	enum saop_resume_form form = o->form;
	json_t *cont;

	if (t->plen == 0)
		return json_incref((json_t *)req);
	if (saop_detect_buffer(t->partial, t->plen, 0, &r) != 0) {
		saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
		return NULL;
	}
	if (form == SAOP_RESUME_AUTO)
		form = o->provider == SAOP_PROVIDER_ANTHROPIC ?
		    SAOP_RESUME_PREFILL : SAOP_RESUME_USER;
	cont = saop_resume_request(req, t->partial, t->plen,
	    r.last_valid_token, form, SAOP_RESUME_FULL, e);
	saop_detect_result_free(&r);
	return cont;
}

/* Write t's finished answer into its record; 0 or ENOMEM. */
static int
finish(struct turn *t, const struct saop_llm_answer *a, size_t received,
    struct saop_err *e)
{
	json_t *rec = t->rec;
	int bad = 0;

	bad |= json_object_set_new(rec, "raw", json_stringn(t->partial,
	    t->plen));
	/* A tool call continued as text is still a tool call. */
	bad |= json_object_set_new(rec, "finish_reason", a == NULL ||
	    a->finish_reason[0] == '\0' ? json_null() : t->tool_call != NULL &&
	    strcmp(a->finish_reason, "stop") == 0 ? json_string("tool_calls") :
	    json_string(a->finish_reason));
	if (t->prompt_tokens >= 0 || t->completion_tokens >= 0) {
		json_t *usage = json_object();

		if (t->prompt_tokens >= 0)
			json_object_set_new(usage, "prompt_tokens",
			    json_integer(t->prompt_tokens));
		if (t->completion_tokens >= 0)
			json_object_set_new(usage, "completion_tokens",
			    json_integer(t->completion_tokens));
		bad |= json_object_set_new(rec, "usage", usage);
	}
	if (t->tool_call != NULL)
		bad |= json_object_set(rec, "tool_call", t->tool_call);
	if (t->tool_calls != NULL)
		bad |= json_object_set(rec, "tool_calls", t->tool_calls);
	if (t->resumes > 0 || t->discarded)
		bad |= json_object_set_new(rec, "suspend", json_pack(
		    "{s:i, s:I, s:b}", "resumes", t->resumes, "received",
		    (json_int_t)received, "asked_again", t->discarded));
	json_object_del(rec, "state");
	return bad ? saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory") : 0;
}

/* Start t from a saved state (borrowed): partial, tool call, resumes. */
static int
restore(struct turn *t, const json_t *state, struct saop_err *e)
{
	const json_t *p = json_object_get(state, "partial");
	const json_t *tc = json_object_get(state, "tool_call");
	size_t n = json_string_length(p);

	if (n > 0) {
		if ((t->partial = malloc(n + 1)) == NULL)
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		memcpy(t->partial, json_string_value(p), n + 1);
		t->plen = n;
	}
	if (json_is_object(tc))
		t->tool_call = json_deep_copy(tc);
	return 0;
}

/* The task goes to status (reason may be NULL); failures are kept. */
static int
set_status(const struct turn *t, const struct saop_suspend_opts *o,
    enum saop_task_status status, const char *reason, struct saop_err *e)
{
	return saop_task_set_status(o->store, t->task_id, status, reason, e);
}

/*
 * Settle a lost network for t: save the part received, pause the task,
 * log NETWORK_LOST, then (unless no_wait or the resumptions are spent)
 * wait for the endpoint and log NETWORK_RESTORED and TURN_RESUMED.
 * Returns 1 to call again, 0 suspended (e holds the loss), or a
 * negative code of the store.
 */
static int
lost(struct turn *t, struct saop_suspend_opts *o, long wait_first,
    struct saop_err *e, struct saop_suspend_outcome *out)
{
	struct saop_err loss = *e, se;
	int rc;

	if ((rc = save(t, o, &se)) != 0 ||
	    (rc = set_status(t, o, SAOP_TASK_PAUSED_FOR_INTERVENTION,
	    SAOP_REASON_NETWORK_LOSS, &se)) != 0) {
		*e = se;
		return rc;
	}
	event(t, o, SAOP_EVENT_NETWORK_LOST, json_pack("{s:s, s:I, s:i, s:i}",
	    "error", loss.msg, "received", (json_int_t)t->plen, "http_status",
	    loss.http_status, "resumes", t->resumes));
	if (o->no_wait || t->resumes >= o->max_resumes ||
	    !wait_for_network(o, wait_first)) {
		char how[64];

		out->suspended = 1;
		*e = loss;
		/* saop-suspend resumes its own turns; the others resume a
		 * record they are given again. */
		if (strcmp(stage_of(o), "saop-suspend") == 0)
			snprintf(how, sizeof(how), "saop-suspend --resume");
		else
			snprintf(how, sizeof(how), "%.40s again on its output",
			    stage_of(o));
		snprintf(e->msg, sizeof(e->msg), "suspended (%s, %d "
		    "resumptions): turn saved with %zu bytes received; run "
		    "%s: %.300s", o->no_wait ? "--no-wait" :
		    o->stop != NULL && *o->stop ? "stopped while waiting" :
		    t->resumes >= o->max_resumes ? "resumptions spent" :
		    "the endpoint stayed down", t->resumes, t->plen, how,
		    loss.msg);
		return 0;
	}
	event(t, o, SAOP_EVENT_NETWORK_RESTORED, NULL);
	if ((rc = set_status(t, o, SAOP_TASK_IN_PROGRESS, NULL, &se)) != 0) {
		*e = se;
		return rc;
	}
	t->resumes++;
	out->resumes++;
	event(t, o, SAOP_EVENT_TURN_RESUMED, json_pack("{s:i, s:I}", "resumes",
	    t->resumes, "received", (json_int_t)t->plen));
	return 1;
}

/*
 * After a failed call of class cls (e its error): a 429 (while fewer than
 * RATE_WAITS_MAX were waited out in this turn, and not --no-wait) is
 * waited out as the server asks.  Returns SAOP_SUSPEND_WAIT when it was
 * (call again), SAOP_SUSPEND_LOST for a 429 not waited out or a wait
 * stopped by a signal (save and suspend), else cls.
 */
static int
wait_out(const struct saop_suspend_opts *o, int cls,
    const struct saop_err *e, struct saop_suspend_outcome *out)
{
	long wait;
	int stopped;

	if (cls != SAOP_SUSPEND_WAIT)
		return cls;
	if (out->rate_waits >= RATE_WAITS_MAX || o->no_wait)
		return SAOP_SUSPEND_LOST;	/* 429s spent, --no-wait */
	/* 429: not a loss; wait as the server asks. */
	wait = e->retry_after_ms >= 0 ? e->retry_after_ms : o->poll_ms;
	if (wait > RATE_WAIT_MAX_MS)
		wait = RATE_WAIT_MAX_MS;
	out->rate_waits++;
	if (o->waiting != NULL)
		*o->waiting = 1;
	stopped = sleep_ms(wait, o->stop);
	if (o->waiting != NULL)
		*o->waiting = 0;
	return stopped ? SAOP_SUSPEND_LOST : SAOP_SUSPEND_WAIT;
}

/*
 * How long to wait before the first probe after the loss e: a server
 * that answered (5xx) at least one interval, or its Retry-After; a dead
 * link not at all.  Returns milliseconds.
 */
static long
first_wait(const struct saop_suspend_opts *o, const struct saop_err *e)
{
	long wait = e->http_status >= 500 ? (e->retry_after_ms > o->poll_ms ?
	    e->retry_after_ms : o->poll_ms) : 0;

	return wait > RATE_WAIT_MAX_MS ? RATE_WAIT_MAX_MS : wait;
}

/* Free what t holds. */
static void
turn_free(struct turn *t)
{
	free(t->partial);
	json_decref(t->tool_call);
	json_decref(t->tool_calls);
}

/*
 * Run one turn of rec under the suspend policy, from state when not NULL
 * (see saop.h).  Returns 0, or a negative code with e filled.
 */
int
saop_suspend_turn(json_t *rec, const json_t *state,
    struct saop_suspend_opts *o, struct saop_suspend_outcome *out,
    struct saop_err *e)
{
	struct saop_llm_answer a;
	struct turn t;
	json_t *req;
	const char *text;
	size_t len;
	int rc, verdict = SAOP_TRUNCATED, cls, again;

	memset(out, 0, sizeof(*out));
	memset(&t, 0, sizeof(t));
	saop_err_clear(e);
	t.rec = rec;
	t.task_id = json_string_value(json_object_get(rec, "task_id"));
	t.turn = json_is_integer(json_object_get(rec, "turn")) ?
	    (long)json_integer_value(json_object_get(rec, "turn")) : -1;
	t.prompt_tokens = t.completion_tokens = -1;
	if (t.task_id == NULL)
		return saop__fail(e, SAOP_EDATA, 0, "the record has no "
		    "string task_id");
	if (!json_is_object(json_object_get(rec, "request")))
		return saop__fail(e, SAOP_EDATA, 0, "the record has no "
		    "request object");
	if (state != NULL && (rc = restore(&t, state, e)) != 0)
		goto out;
	for (;;) {
		/* Before the call: the turn can be resumed whatever happens. */
		if ((rc = save(&t, o, e)) != 0 ||
		    (rc = set_status(&t, o, SAOP_TASK_IN_PROGRESS, NULL, e)) != 0)
			goto out;
		if ((req = next_request(&t, o, e)) == NULL) {
			rc = -e->code;
			goto out;
		}
		out->calls++;
		rc = saop_model_call(&o->model, req, &a, e);
		json_decref(req);
		count_usage(&t, &a);
		text = answer_text(&t, &a, &len);
		out->received += len;
		cls = rc == 0 ? SAOP_SUSPEND_NONE : saop_suspend_classify(e);
		if (rc == -SAOP_EPREFILL && o->form == SAOP_RESUME_AUTO &&
		    t.plen > 0) {
			/* The model refuses prefill: the user form from now. */
			o->form = SAOP_RESUME_USER;
			saop_llm_answer_free(&a);
			continue;
		}
		if (rc == 0 || cls == SAOP_SUSPEND_LOST) {
			struct saop_err me;

			if ((again = take(&t, text, len, &verdict, &me)) != 0) {
				*e = me;
				rc = again;
				saop_llm_answer_free(&a);
				goto out;
			}
			if (rc != 0 && t.plen > 0 && verdict != SAOP_TRUNCATED) {
				if (verdict == SAOP_COMPLETE) {
					/* All of it came; only the end
					 * marker was lost. */
					rc = 0;
					a.finish_reason[0] = '\0';
				} else {
					/* Not JSON: the resume protocol
					 * cannot continue it; ask again. */
					free(t.partial);
					t.partial = NULL;
					t.plen = 0;
					t.discarded = 1;
				}
			}
		}
		if (rc == 0) {
			rc = finish(&t, &a, out->received, e);
			saop_llm_answer_free(&a);
			if (rc == 0 && (rc = saop_turn_state_delete(o->store,
			    t.task_id, e)) > 0)
				rc = 0;
			goto out;
		}
		saop_llm_answer_free(&a);
		if ((cls = wait_out(o, cls, e, out)) == SAOP_SUSPEND_WAIT)
			continue;	/* a 429 waited out: call again */
		if (cls != SAOP_SUSPEND_LOST) {
			/* Refused: waiting will not help; nothing to resume. */
			struct saop_err ignored;

			saop_turn_state_delete(o->store, t.task_id, &ignored);
			goto out;
		}
		if ((again = lost(&t, o, first_wait(o, e), e, out)) < 0) {
			rc = again;
			goto out;
		}
		if (again == 0) {
			saop_record_set_state(rec,
			    SAOP_STATE_PAUSED_FOR_INTERVENTION);
			goto out;	/* rc: the loss's code */
		}
	}
out:
	out->resumes = t.resumes;
	turn_free(&t);
	return rc;
}

/* ---- The policy at the model-call seam ---- */

/*
 * Delete the turn state of task when stage of o saved it (a turn now
 * finished); a turn saved by another program is left.  Returns 0, or a
 * negative code of the store.
 */
static int
forget(const struct saop_suspend_opts *o, const char *task,
    struct saop_err *e)
{
	const char *stage;
	json_t *st;
	int rc, ours;

	if ((rc = saop_turn_state_load(o->store, task, &st, e)) <= 0)
		return rc;
	stage = json_string_value(json_object_get(st, "stage"));
	ours = stage != NULL && strcmp(stage, stage_of(o)) == 0;
	json_decref(st);
	if (ours && (rc = saop_turn_state_delete(o->store, task, e)) < 0)
		return rc;
	return 0;
}

/*
 * The call of saop_suspend_model(): g->opts.model's call under the
 * policy (see saop.h).  Returns 0 with a filled, or the last failure's
 * negative code with e filled (a suspended turn's message says so) and
 * what that call received in a.
 */
static int
guarded_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct saop_suspend_guard *g = arg;
	struct saop_suspend_opts *o = &g->opts;
	const json_t *jt;
	struct turn t;

	memset(&t, 0, sizeof(t));
	t.rec = g->rec;
	t.task_id = json_string_value(json_object_get(g->rec, "task_id"));
	if (t.task_id == NULL)
		return saop_model_call(&o->model, request, a, e);
	jt = json_object_get(g->rec, "turn");
	t.turn = json_is_integer(jt) ? (long)json_integer_value(jt) : -1;
	for (;;) {
		int rc, cls, again;

		g->out.calls++;
		rc = saop_model_call(&o->model, request, a, e);
		g->out.received += a->raw_len;
		if (rc == 0) {
			struct saop_err ignored;

			/* A row left behind costs nothing: --list shows it,
			 * --clear removes it. */
			forget(o, t.task_id, &ignored);
			return 0;
		}
		cls = wait_out(o, (int)saop_suspend_classify(e), e, &g->out);
		if (cls == SAOP_SUSPEND_WAIT) {
			saop_llm_answer_free(a);
			continue;	/* a 429 waited out: call again */
		}
		if (cls != SAOP_SUSPEND_LOST)
			return rc;	/* refused: waiting will not help */
		/* The protocol keeps its own progress: the turn is saved as
		 * the record stood when it called, and the same request is
		 * sent again once the endpoint answers. */
		if ((again = lost(&t, o, first_wait(o, e), e, &g->out)) <= 0)
			return again < 0 ? again : rc;
		saop_llm_answer_free(a);
	}
}

/* The model whose calls go through g's policy (see saop.h).  Returns it. */
struct saop_model
saop_suspend_model(struct saop_suspend_guard *g)
{
	struct saop_model m;

	m.call = guarded_call;
	m.arg = g;
	return m;
}

/*
 * The whole number in the environment variable name, from min to max;
 * def when it is unset or empty.  Returns 0 with *out set, or
 * SAOP_ECONFIG naming the variable.
 */
static int
env_count(const char *name, long def, long min, long max, long *out,
    struct saop_err *e)
{
	const char *v = getenv(name);
	char *end;
	long n;

	*out = def;
	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < min || n > max)
		return saop__fail(e, SAOP_ECONFIG, 0, "%s: '%s' is not a "
		    "whole number from %ld to %ld", name, v, min, max);
	*out = n;
	return 0;
}

/*
 * Set o's resumptions and poll interval from the environment (see
 * saop.h).  Returns 0, or SAOP_ECONFIG naming the variable.
 */
int
saop_suspend_opts_from_env(struct saop_suspend_opts *o, struct saop_err *e)
{
	long n;
	int rc;

	if ((rc = env_count("SAOP_MAX_AUTO_RESUME", SAOP_MAX_AUTO_RESUME, 0,
	    1000, &n, e)) != 0)
		return rc;
	o->max_resumes = (int)n;
	return env_count("SAOP_NETWORK_POLL_INTERVAL_MS",
	    SAOP_NETWORK_POLL_INTERVAL_MS, 1, 86400000L, &o->poll_ms, e);
}

/* Set by the signal handler: stop waiting, keep the turn. */
static volatile sig_atomic_t stop_flag;
/* 1 while waiting for the network, 0 while calling. */
static volatile sig_atomic_t waiting_flag;

/*
 * SIGINT, SIGTERM: while waiting, stop the wait (the turn is saved); at
 * any other time die of the signal as if unhandled.
 */
static void
on_signal(int sig)
{
	stop_flag = 1;
	if (!waiting_flag) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

/* See saop.h: a program's suspend options in one call.  Returns nothing. */
void
saop_suspend_opts_for(struct saop_suspend_opts *o, const char *stage,
    struct saop_llm_config *cfg)
{
	saop_suspend_catch_signals(o);
	o->stage = stage;
	o->provider = cfg->provider;
	o->model = saop_llm_model(cfg);
	o->endpoint = cfg->base;
}

/*
 * Catch SIGINT and SIGTERM and point o's stop and waiting flags at the
 * ones the handler uses (see saop.h).  Returns nothing.
 */
void
saop_suspend_catch_signals(struct saop_suspend_opts *o)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: wake the sleep */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	o->stop = &stop_flag;
	o->waiting = &waiting_flag;
}
