/*
 * resume-sim.c: a model simulated in-process for the resume sweeps, and
 * the two protocols that continue a cut answer run against it and
 * judged (see resume-sim.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"
#include "resume-sim.h"

/* See resume-sim.h.  Returns the name of manner m. */
const char *
sim_manner_name(enum sim_manner m)
{
	static const char *const names[SIM_MANNERS] = {
		"honest", "repeating k bytes", "restarting the open string",
		"restarting the last valid token", "blank lines first",
		"in a code fence", "after a line of prose",
		"the whole answer again"
	};

	return (unsigned)m < SIM_MANNERS ? names[m] : "?";
}

/* 1 when byte c continues a UTF-8 character, else 0. */
static int
cont_byte(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/*
 * See resume-sim.h: the assistant's prefill, or what follows
 * SAOP_RESUME_PARTIAL_LABEL to the end of the last user turn.  Returns it
 * (borrowed from request) with *n its length, or NULL when the request
 * shows none (a first call).
 */
const char *
sim_own_text(const json_t *request, size_t *n)
{
	const json_t *msgs = json_object_get(request, "messages");
	const json_t *m = json_array_get(msgs, json_array_size(msgs) - 1);
	const json_t *c = json_object_get(m, "content");
	const char *t = json_string_value(c), *role, *p;

	*n = 0;
	role = json_string_value(json_object_get(m, "role"));
	if (t == NULL || role == NULL)
		return NULL;
	if (strcmp(role, "assistant") == 0) {
		*n = json_string_length(c);
		return t;
	}
	if ((p = strstr(t, SAOP_RESUME_PARTIAL_LABEL)) == NULL)
		return NULL;
	p += strlen(SAOP_RESUME_PARTIAL_LABEL);
	*n = json_string_length(c) - (size_t)(p - t);
	return p;
}

/* 1 when c is JSON white space, else 0. */
static int
ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * Where the model believes it stopped in its answer a (n bytes) after
 * the text t (tn bytes) shown as its own: the end of t's match in a, the
 * white space between tokens of either aside (a merge may keep a space
 * the answer has not, or not keep one it has); when t is no such
 * prefix of a, tn bytes in all the same (a model shown more than it
 * wrote carries on after what it was shown), at most n.
 */
static size_t
position(const char *a, size_t n, const char *t, size_t tn)
{
	size_t i = 0, j = 0;
	int str = 0, esc = 0;

	if (tn <= n && memcmp(a, t, tn) == 0)
		return tn;
	while (i < tn) {
		if (!str && ws(t[i])) {
			i++;
			continue;
		}
		if (!str && j < n && ws(a[j])) {
			j++;
			continue;
		}
		if (j >= n || t[i] != a[j])
			return tn < n ? tn : n;
		if (str && esc)
			esc = 0;
		else if (str && t[i] == '\\')
			esc = 1;
		else if (t[i] == '"')
			str = !str;
		i++;
		j++;
	}
	while (!str && tn > 0 && ws(t[tn - 1]) && j < n && ws(a[j]))
		j++;
	return j;
}

/*
 * Where the model's answer starts in the intended answer a (n bytes)
 * when it believes it has written a[0..pos), in manner s (a character
 * never split).
 */
static size_t
start_of(const char *a, size_t n, size_t pos, const struct sim_step *s)
{
	struct saop_detect_result r;
	size_t from = pos, ti, ts;

	switch (s->manner) {
	case SIM_REPEAT:
		from = s->k < pos ? pos - s->k : 0;
		break;
	case SIM_WHOLE:
		from = 0;
		break;
	case SIM_RESTART_STRING:
	case SIM_RESTART_TOKEN:
		if (saop_detect_text(a, pos, 0, &r) != 0)
			abort();
		if (r.verdict == SAOP_TRUNCATED) {
			ti = (size_t)r.truncation_index;
			ts = ti;
			while (ts < pos && strchr(" \t\r\n", a[ts]) != NULL)
				ts++;
			if (s->manner == SIM_RESTART_STRING) {
				if (ts < pos && a[ts] == '"')
					from = ts;
			} else if (r.last_valid_token != NULL &&
			    strlen(r.last_valid_token) <= ti) {
				from = ti - strlen(r.last_valid_token);
			}
		}
		saop_detect_result_free(&r);
		break;
	default:
		break;
	}
	/* From the end (the model thinks it said it all): nothing to read
	 * there, a[n] is past the answer. */
	while (from > 0 && from < n && cont_byte((unsigned char)a[from]))
		from--;
	return from;
}

/* The answer's text in manner s from a[from..n): lead, the rest, tail.
 * Returns a new string (*len bytes). */
static char *
dress(const char *a, size_t n, size_t from, const struct sim_step *s,
    size_t *len)
{
	const char *lead = "", *tail = "";
	size_t nl, nt;
	char *t;

	switch (s->manner) {
	case SIM_BLANK:
		lead = "\n\n";
		break;
	case SIM_FENCE:
		lead = "```json\n";
		tail = "\n```";
		break;
	case SIM_PROSE:
		lead = "Here is the rest of the JSON:\n";
		break;
	default:
		break;
	}
	nl = strlen(lead);
	nt = strlen(tail);
	*len = nl + (n - from) + nt;
	if ((t = malloc(*len + 1)) == NULL)
		abort();
	memcpy(t, lead, nl);
	memcpy(t + nl, a + from, n - from);
	memcpy(t + nl + n - from, tail, nt);
	t[*len] = '\0';
	return t;
}

/* With $SAOP_SIM_TRACE set, one call on stderr: the text shown as the
 * model's own (own, n bytes) and its answer t, ended by how. */
static void
trace(const char *own, size_t n, const char *t, const char *how)
{
	if (getenv("SAOP_SIM_TRACE") == NULL)
		return;
	fprintf(stderr, "sim: shown as its own: [%.*s]\nsim: answered "
	    "(%s): [%s]\n", (int)n, own != NULL ? own : "", how, t);
}

/* See resume-sim.h: one call of the model.  Returns 0, or a negative code
 * with e filled (a broken stream: what came in a->raw). */
int
sim_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct sim_model *m = arg;
	const struct sim_step *s;
	const char *own;
	size_t n, pos, from, len;
	char *t;

	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	own = sim_own_text(request, &n);
	if (m->calls++ == 0 && m->cut > 0 && own == NULL) {
		/* The first call: a stream broken after cut bytes. */
		if ((a->raw = malloc(m->cut + 1)) == NULL)
			abort();
		memcpy(a->raw, m->answer, m->cut);
		a->raw[m->cut] = '\0';
		a->raw_len = m->cut;
		a->broken = 1;
		m->sent += m->cut;
		return saop__fail(e, SAOP_ENETWORK, 0, "stream cut");
	}
	s = m->conts++ == 0 ? &m->first : &m->then;
	/* Where it believes it stopped: after the text shown as its own. */
	pos = own != NULL ? position(m->answer, m->len, own, n) : 0;
	while (pos > 0 && pos < m->len &&
	    cont_byte((unsigned char)m->answer[pos]))
		pos--;
	from = start_of(m->answer, m->len, pos, s);
	t = dress(m->answer, m->len, from, s, &len);
	if (s->limit > 0 && len > s->limit) {
		len = s->limit;
		while (len > 0 && cont_byte((unsigned char)t[len]))
			len--;
		t[len] = '\0';
		a->raw = t;
		a->raw_len = len;
		m->sent += len;
		if (s->net) {
			trace(own, n, t, "a broken stream");
			a->broken = 1;
			return saop__fail(e, SAOP_ENETWORK, 0, "stream cut");
		}
		trace(own, n, t, "length");
		strcpy(a->finish_reason, "length");
		return 0;
	}
	a->raw = t;
	a->raw_len = len;
	m->sent += len;
	trace(own, n, t, "stop");
	strcpy(a->finish_reason, "stop");
	return 0;
}

/* 1 when raw (len bytes) scans complete and its JSON is the value of
 * answer (n bytes), else 0. */
static int
intended(const char *raw, size_t len, const char *answer, size_t n)
{
	struct saop_detect_result r;
	json_t *x, *y;
	int same;

	if (saop_detect_text(raw, len, 0, &r) != 0)
		abort();
	if (r.verdict != SAOP_COMPLETE) {
		saop_detect_result_free(&r);
		return 0;
	}
	/* (json_end 0: a bare value, to the end.) */
	x = json_loadb(raw + r.json_start, (r.json_end != 0 ?
	    (size_t)r.json_end : len) - (size_t)r.json_start,
	    JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	y = json_loadb(answer, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	saop_detect_result_free(&r);
	same = x != NULL && y != NULL && json_equal(x, y);
	json_decref(x);
	json_decref(y);
	return same;
}

/* 1 when rec's raw (len bytes) scans complete as the next stage reads it
 * (saop_record_detect(): a cut answer, finish "length", ending in a
 * number's digits is not), else 0. */
static int
complete(const json_t *rec, const char *raw, size_t len)
{
	struct saop_detect_result r;
	int v;

	if (saop_record_detect(rec, raw, len, 0, &r) != 0)
		abort();
	v = r.verdict == SAOP_COMPLETE;
	saop_detect_result_free(&r);
	return v;
}

/* Mark r wrong, saying why (printf format). */
#define WRONG(r, ...) do { \
	if (!(r)->wrong) \
		snprintf((r)->why, sizeof((r)->why), __VA_ARGS__); \
	(r)->wrong = 1; \
} while (0)

/* The record both protocols start from: a task, a turn, a request. */
static json_t *
new_record(void)
{
	json_t *rec = json_pack("{s:s,s:i,s:{s:[{s:s,s:s}]}}", "task_id",
	    "sweep", "turn", 1, "request", "messages", "role", "user",
	    "content", "Write the envelope.");

	if (rec == NULL)
		abort();
	return rec;
}

/* See resume-sim.h.  Returns 0, or -1 (the protocol failed). */
int
sim_run_resume(struct sim_model *m, size_t cut, enum saop_resume_form form,
    int max_attempts, struct sim_result *r)
{
	struct saop_resume_outcome out;
	struct saop_resume_opts o;
	struct saop_detect_result d;
	struct saop_err e;
	const char *raw;
	size_t rlen, rp;
	json_t *rec = new_record();
	const json_t *res;
	int rc;

	memset(r, 0, sizeof(*r));
	m->cut = 0;
	m->calls = m->conts = 0;
	m->sent = 0;
	if (json_object_set_new(rec, "raw",
	    json_stringn(m->answer, cut)) != 0 ||
	    json_object_set_new(rec, "finish_reason",
	    json_string("length")) != 0)
		abort();
	if (saop_detect_text(m->answer, cut, 0, &d) != 0)
		abort();
	rp = (size_t)d.resume_index;
	saop_detect_result_free(&d);
	memset(&o, 0, sizeof(o));
	o.form = form;
	o.context = SAOP_RESUME_FULL;
	o.max_attempts = max_attempts;
	o.model.call = sim_call;
	o.model.arg = m;
	rc = saop_resume_record(rec, &o, &out, &e);
	r->calls = m->calls;
	if (rc != 0) {
		WRONG(r, "saop_resume_record failed: %.200s", e.msg);
		json_decref(rec);
		return -1;
	}
	raw = saop_record_raw(rec, &rlen);
	res = saop_record_resume(rec);
	if (raw == NULL) {
		WRONG(r, "no raw written");
	} else {
		if (out.status == SAOP_RESUME_RESOLVED &&
		    !intended(raw, rlen, m->answer, m->len))
			WRONG(r, "RESOLVED as '%.*s'", (int)rlen, raw);
		if (rlen < rp || memcmp(raw, m->answer, rp) != 0)
			WRONG(r, "received bytes lost: '%.*s'", (int)rlen,
			    raw);
		r->resolved = out.status == SAOP_RESUME_RESOLVED && !r->wrong;
	}
	if (saop_record_state(rec) == SAOP_STATE_OK &&
	    out.status != SAOP_RESUME_RESOLVED)
		WRONG(r, "state OK, resume.status %s",
		    saop_resume_status_name(out.status));
	if (out.state == SAOP_STATE_OK && out.status != SAOP_RESUME_RESOLVED)
		WRONG(r, "outcome OK without RESOLVED");
	if (res == NULL || (size_t)json_integer_value(json_object_get(res,
	    "received_bytes")) != m->sent)
		WRONG(r, "resume.received_bytes is not the %zu bytes sent",
		    m->sent);
	json_decref(rec);
	return 0;
}

/* The probe of the simulated endpoint: it is up. */
static int
sim_up(void *arg)
{
	(void)arg;
	return 1;
}

/* See resume-sim.h.  Returns 0, or -1 (the turn failed). */
int
sim_run_suspend(struct sim_model *m, size_t cut, enum saop_resume_form form,
    int max_resumes, struct saop_store *store, struct sim_result *r)
{
	struct saop_suspend_outcome out;
	struct saop_suspend_opts o;
	struct saop_detect_result d;
	struct saop_err e;
	const char *raw;
	size_t rlen, rp;
	json_t *rec = new_record();
	int rc;

	memset(r, 0, sizeof(*r));
	if (saop_detect_text(m->answer, cut, 0, &d) != 0)
		abort();
	rp = (size_t)d.resume_index;
	saop_detect_result_free(&d);
	m->cut = cut;
	m->calls = m->conts = 0;
	m->sent = 0;
	memset(&o, 0, sizeof(o));
	o.store = store;
	o.max_resumes = max_resumes;
	o.poll_ms = 1;
	o.max_wait_ms = -1;
	o.form = form;
	o.model.call = sim_call;
	o.model.arg = m;
	o.probe = sim_up;
	rc = saop_suspend_turn(rec, NULL, &o, &out, &e);
	r->calls = m->calls;
	raw = saop_record_raw(rec, &rlen);
	if (rc != 0 && !out.suspended) {
		WRONG(r, "saop_suspend_turn failed: %.200s", e.msg);
		json_decref(rec);
		return -1;
	}
	if (raw == NULL) {
		if (!out.suspended)
			WRONG(r, "no raw written, not suspended");
	} else {
		if (complete(rec, raw, rlen) &&
		    !intended(raw, rlen, m->answer, m->len))
			WRONG(r, "completed as '%.*s'", (int)rlen, raw);
		if (rlen < rp || memcmp(raw, m->answer, rp) != 0)
			WRONG(r, "received bytes lost: '%.*s'", (int)rlen,
			    raw);
		r->resolved = complete(rec, raw, rlen) && !r->wrong;
	}
	if (saop_record_state(rec) == SAOP_STATE_OK)
		WRONG(r, "state OK from saop-suspend");
	if (out.received != m->sent)
		WRONG(r, "%zu bytes received counted, %zu sent",
		    out.received, m->sent);
	saop_suspend_forget(&o, rec, &e);
	json_decref(rec);
	return 0;
}
