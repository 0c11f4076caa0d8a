/*
 * resume.c: the partial-completion resume protocol: building the
 * continuation request, merging a continuation into the partial output,
 * and resuming one record up to its attempts, with the log row and events.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "db.h"

/* Candidate continuations tried per answer, and overlaps per candidate. */
#define MAX_CANDIDATES	6
#define MAX_OVERLAPS	4
/* Shorter repeats of the prefix's tail count only when nothing else
 * merges (see short_repeat_unneeded()). */
#define MIN_REPEAT	4

/* See saop.h.  Returns the word of resume status s. */
const char *
saop_resume_status_name(enum saop_resume_status s)
{
	switch (s) {
	case SAOP_RESUME_RESOLVED:
		return "RESOLVED";
	case SAOP_RESUME_EXHAUSTED:
		return "EXHAUSTED";
	case SAOP_RESUME_SUSPENDED:
		return "SUSPENDED";
	case SAOP_RESUME_SKIPPED:
	default:
		return "SKIPPED";
	}
}

/* 1 when c is JSON white space, else 0. */
static int
is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The length of s[0..len) without its trailing JSON white space. */
static size_t
rstrip_len(const char *s, size_t len)
{
	while (len > 0 && is_ws((unsigned char)s[len - 1]))
		len--;
	return len;
}

/* The number of leading JSON white space bytes of s[0..len). */
static size_t
lstrip_len(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && is_ws((unsigned char)s[i]))
		i++;
	return i;
}

/* A new JSON string of buf[0..len), or NULL (ENOMEM or bad UTF-8). */
static json_t *
string_n(const char *buf, size_t len)
{
	return json_stringn_nocheck(buf, len);
}

/* Append {"role": role, "content": text} to msgs; 0 or -1. */
static int
append_turn(json_t *msgs, const char *role, json_t *content)
{
	json_t *m;

	if (content == NULL)
		return -1;
	if ((m = json_object()) == NULL ||
	    json_object_set_new(m, "role", json_string(role)) != 0 ||
	    json_object_set_new(m, "content", content) != 0 ||
	    json_array_append_new(msgs, m) != 0) {
		json_decref(m);
		return -1;
	}
	return 0;
}

/*
 * The user turn's text: the prompt, the token label and token, then (when
 * label is not NULL) label and quote[0..qlen).  Returns a new string
 * (free()) of *len bytes, or NULL when out of memory.
 */
static char *
user_text(const char *token, const char *label, const char *quote,
    size_t qlen, size_t *len)
{
	size_t np = strlen(SAOP_RESUME_PROMPT);
	size_t nl = strlen(SAOP_RESUME_TOKEN_LABEL);
	size_t nt = strlen(token);
	size_t nq = label != NULL ? strlen(label) : 0;
	char *s, *p;

	if ((s = malloc(np + nl + nt + nq + qlen + 1)) == NULL)
		return NULL;
	p = s;
	memcpy(p, SAOP_RESUME_PROMPT, np);
	p += np;
	memcpy(p, SAOP_RESUME_TOKEN_LABEL, nl);
	p += nl;
	memcpy(p, token, nt);
	p += nt;
	if (label != NULL) {
		memcpy(p, label, nq);
		p += nq;
		memcpy(p, quote, qlen);
		p += qlen;
	}
	*p = '\0';
	*len = (size_t)(p - s);
	return s;
}

/*
 * Where the token that prefix[0..len) ends inside starts (its partial
 * token: a string, number or literal cut short), or len when it ends
 * between tokens; *ti gets the end of its last complete token.  -1 when
 * out of memory.
 */
static int
partial_token(const char *prefix, size_t len, size_t max_depth, size_t *ti,
    size_t *ts)
{
	struct saop_detect_result r;

	*ti = *ts = len;
	if (saop_detect_buffer(prefix, len, max_depth, &r) != 0)
		return -1;
	if (r.verdict == SAOP_TRUNCATED) {
		*ti = (size_t)r.truncation_index;
		*ts = *ti + lstrip_len(prefix + *ti, len - *ti);
	}
	saop_detect_result_free(&r);
	return 0;
}

/*
 * saop_resume_request(), adding to *sent (when not NULL) the bytes of the
 * resume turns' text.
 */
static json_t *
request_counted(const json_t *request, const char *prefix, size_t len,
    const char *token, enum saop_resume_form form,
    enum saop_resume_context context, size_t *sent, struct saop_err *e)
{
	json_t *req, *msgs;
	char *text;
	size_t tlen, keep;
	int rc;

	if (form == SAOP_RESUME_AUTO) {
		saop__fail(e, SAOP_EINTERNAL, 0,
		    "resume request: the form is not decided");
		return NULL;
	}
	if (token == NULL)
		token = "";
	if (request != NULL && !json_is_object(request)) {
		saop__fail(e, SAOP_EDATA, 0, "the request is not an object");
		if (e != NULL)
			snprintf(e->field, sizeof(e->field), "/request");
		return NULL;
	}
	req = request != NULL ? json_deep_copy(request) : json_object();
	if (req == NULL)
		goto nomem;
	msgs = json_object_get(req, "messages");
	if (msgs == NULL) {
		if (json_object_set_new(req, "messages", json_array()) != 0)
			goto nomem;
		msgs = json_object_get(req, "messages");
	} else if (!json_is_array(msgs)) {
		json_decref(req);
		saop__fail(e, SAOP_EDATA, 0,
		    "the request's messages is not an array");
		if (e != NULL)
			snprintf(e->field, sizeof(e->field),
			    "/request/messages");
		return NULL;
	}
	/* Prefill: the trailing white space stays out (the APIs refuse
	 * it); the merge puts it back. */
	keep = rstrip_len(prefix, len);
	if (context == SAOP_RESUME_TAIL) {
		size_t ti, ts;

		/* The token and the partial token after it, quoted. */
		if (partial_token(prefix, len, 0, &ti, &ts) != 0)
			goto nomem;
		text = ts < len ? user_text(token, SAOP_RESUME_TAIL_LABEL,
		    prefix + ti, len - ti, &tlen) :
		    user_text(token, NULL, NULL, 0, &tlen);
	} else if (form == SAOP_RESUME_USER && keep > 0) {
		text = user_text(token, SAOP_RESUME_PARTIAL_LABEL, prefix,
		    len, &tlen);
	} else {
		text = user_text(token, NULL, NULL, 0, &tlen);
	}
	if (text == NULL)
		goto nomem;
	if (sent != NULL)
		*sent += tlen;
	rc = append_turn(msgs, "user", string_n(text, tlen));
	free(text);
	if (rc != 0)
		goto nomem;
	if (context == SAOP_RESUME_FULL && form == SAOP_RESUME_PREFILL &&
	    keep > 0) {
		if (append_turn(msgs, "assistant", string_n(prefix, keep)) != 0)
			goto nomem;
		if (sent != NULL)
			*sent += keep;
	}
	return req;
nomem:
	json_decref(req);
	saop__fail(e, SAOP_ENOMEM, 0, "out of memory building the request");
	return NULL;
}

/*
 * See saop.h: the continuation request for prefix.  Returns it (new), or
 * NULL with e filled.
 */
json_t *
saop_resume_request(const json_t *request, const char *prefix, size_t len,
    const char *token, enum saop_resume_form form,
    enum saop_resume_context context, struct saop_err *e)
{
	return request_counted(request, prefix, len, token, form, context,
	    NULL, e);
}

/* ---- Merge ---- */

/* One way of reading the continuation: cont[off..off+len). */
struct span {
	size_t off, len;
};

/* The first needle in hay[0..hlen) (needle NUL-terminated), or NULL. */
static const char *
find_n(const char *hay, size_t hlen, const char *needle)
{
	size_t n = strlen(needle), i;

	for (i = 0; i + n <= hlen; i++)
		if (memcmp(hay + i, needle, n) == 0)
			return hay + i;
	return NULL;
}

/* 1 when c is an ASCII letter, else 0. */
static int
is_alpha(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* Does s[0..len) start with a JSON literal (true, false, null)? */
static int
literal_start(const char *s, size_t len)
{
	static const char *const lit[] = { "true", "false", "null" };
	size_t i;

	for (i = 0; i < 3; i++) {
		size_t n = strlen(lit[i]);

		if (len >= n && memcmp(s, lit[i], n) == 0 &&
		    (len == n || !is_alpha((unsigned char)s[n])))
			return 1;
		if (len < n && memcmp(s, lit[i], len) == 0)
			return 1;
	}
	return 0;
}

/* Does text that begins at s look like words, not JSON? */
static int
sentence_start(const char *s, size_t len)
{
	if (len == 0)
		return 0;
	if (len >= 3 && memcmp(s, "```", 3) == 0)
		return 1;
	if ((unsigned char)s[0] >= 0x80)
		return 1;
	return is_alpha((unsigned char)s[0]) && !literal_start(s, len);
}

/*
 * The readings of cont, most literal first: as it is; the body of its
 * first code fence; after a sentence that opens it (after ": " on its
 * first line, after each of its first lines).  Returns how many.
 */
static int
readings(const char *cont, size_t clen, struct span *sp)
{
	const char *f, *nl;
	size_t lead, i, pos;
	int n = 0, lines;

	sp[n].off = 0;
	sp[n++].len = clen;
	if ((f = find_n(cont, clen, "```")) != NULL) {
		const char *body, *end;

		nl = memchr(f, '\n', clen - (size_t)(f - cont));
		body = nl != NULL ? nl + 1 : cont + clen;
		end = find_n(body, clen - (size_t)(body - cont), "```");
		if (end == NULL)
			end = cont + clen;
		sp[n].off = (size_t)(body - cont);
		sp[n++].len = (size_t)(end - body);
	}
	lead = lstrip_len(cont, clen);
	if (!sentence_start(cont + lead, clen - lead) || f == cont + lead)
		return n;
	/*
	 * After ": " on the first line of the sentence, when what comes
	 * before is words ("Here is the rest: ..."), not the cut-off tail
	 * of a string (ially done.", "action": ...): a quote before the
	 * colon means the answer carries on inside the JSON, and reading
	 * past it would silently drop the text in between.
	 */
	for (i = lead; i < clen && cont[i] != '\n' && cont[i] != '"'; i++)
		if (cont[i] == ':' && i + 1 < clen && cont[i + 1] == ' ') {
			sp[n].off = i + 2;
			sp[n].len = clen - i - 2;
			n++;
			break;
		}
	/* After each of the first lines. */
	pos = lead;
	for (lines = 0; lines < 3 && n < MAX_CANDIDATES; lines++) {
		nl = memchr(cont + pos, '\n', clen - pos);
		if (nl == NULL)
			break;
		pos = (size_t)(nl - cont) + 1;
		sp[n].off = pos;
		sp[n++].len = clen - pos;
	}
	return n;
}

/*
 * The lengths k > 0 for which the last k bytes of p equal the first k of
 * c, longest first, at most max of them, into ks.  KMP: the automaton of
 * c run over the tail of p.  Returns how many, or -1 (ENOMEM).
 */
static int
overlaps(const char *p, size_t plen, const char *c, size_t clen, size_t *ks,
    int max)
{
	size_t m = clen < plen ? clen : plen, *pi, q, i;
	const char *t;
	int n = 0;

	if (m == 0)
		return 0;
	if ((pi = malloc(m * sizeof(*pi))) == NULL)
		return -1;
	pi[0] = 0;
	for (i = 1, q = 0; i < m; i++) {
		while (q > 0 && c[i] != c[q])
			q = pi[q - 1];
		if (c[i] == c[q])
			q++;
		pi[i] = q;
	}
	t = p + plen - m;
	for (i = 0, q = 0; i < m; i++) {
		while (q > 0 && (q == m || c[q] != t[i]))
			q = pi[q - 1];
		if (c[q] == t[i])
			q++;
	}
	while (q > 0 && n < max) {
		ks[n++] = q;
		q = pi[q - 1];
	}
	free(pi);
	return n;
}

/* How good a verdict is for a merge: complete 3, truncated 2, else 1. */
static int
rank(enum saop_verdict v)
{
	return v == SAOP_COMPLETE ? 3 : v == SAOP_TRUNCATED ? 2 : 1;
}

/* Scan buf with the scanner; 0, or a negative code. */
static int
scan(const char *buf, size_t len, size_t max_depth,
    struct saop_detect_result *res, struct saop_err *e)
{
	int rc;

	memset(res, 0, sizeof(*res));
	rc = saop_detect_buffer(buf, len, max_depth ? max_depth :
	    SAOP_MAX_DEPTH, res);
	if (rc < 0)
		return saop__fail(e, -rc, 0, "scanning the merged output "
		    "failed");
	return 0;
}

/* The best merge found so far. */
struct best {
	char *buf;
	size_t len;
	struct saop_detect_result res;
	size_t kept;		/* bytes of the received text it keeps */
	int have;
};

/*
 * Judge head[0..hlen) + tail[0..tlen) (and, when the scanner says that
 * invalid only because words follow a complete value, the text cut
 * there), a merge that keeps kept bytes of the received text; keep it
 * in b when it is better.  Returns 1 when b is now complete, 0, or -1
 * (ENOMEM/scanner failure, e filled).
 */
static int
judge(struct best *b, const char *head, size_t hlen, size_t kept,
    const char *tail, size_t tlen, size_t max_depth, struct saop_err *e)
{
	struct saop_detect_result r, cut;
	size_t len = hlen + tlen;
	char *buf;

	if ((buf = malloc(len + 1)) == NULL) {
		saop__fail(e, SAOP_ENOMEM, 0, "out of memory merging");
		return -1;
	}
	memcpy(buf, head, hlen);
	memcpy(buf + hlen, tail, tlen);
	buf[len] = '\0';
	if (scan(buf, len, max_depth, &r, e) != 0) {
		free(buf);
		return -1;
	}
	if (r.verdict == SAOP_INVALID && r.error_offset >= hlen &&
	    r.error_offset < len) {
		size_t at = (size_t)r.error_offset, lead = at;

		while (lead > hlen && is_ws((unsigned char)buf[lead - 1]))
			lead--;
		if (lead < at && sentence_start(buf + at, len - at)) {
			if (scan(buf, lead, max_depth, &cut, e) != 0) {
				saop_detect_result_free(&r);
				free(buf);
				return -1;
			}
			if (cut.verdict == SAOP_COMPLETE) {
				saop_detect_result_free(&r);
				r = cut;
				len = lead;
				buf[len] = '\0';
			} else {
				saop_detect_result_free(&cut);
			}
		}
	}
	/*
	 * Complete beats truncated beats invalid; among truncated merges the
	 * one that keeps most of the received text; on a tie the earlier
	 * candidate (the more literal reading: carried on, then the open
	 * token re-sent, then the longer repeat) stays.  (Not the longest
	 * merge: a one-byte coincidence, a '"' repeated, would outrun a
	 * string re-sent from its quote.)
	 */
	if (b->have && (rank(r.verdict) < rank(b->res.verdict) ||
	    (rank(r.verdict) == rank(b->res.verdict) &&
	    (r.verdict != SAOP_TRUNCATED || kept <= b->kept)))) {
		saop_detect_result_free(&r);
		free(buf);
		return 0;
	}
	if (b->have) {
		saop_detect_result_free(&b->res);
		free(b->buf);
	}
	b->buf = buf;
	b->len = len;
	b->res = r;
	b->kept = kept;
	b->have = 1;
	return r.verdict == SAOP_COMPLETE;
}

/* The length of the common prefix of a[0..an) and b[0..bn). */
static size_t
common_len(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i = 0;

	while (i < an && i < bn && a[i] == b[i])
		i++;
	return i;
}

/*
 * A repeat of fewer than MIN_REPEAT bytes ('[', ',', '"') is as likely a
 * coincidence as a repeat: it is tried only while nothing better than
 * invalid was found ("[[" + "[], {}]" is "[[[], {}]" cut again, not the
 * complete "[[], {}]").  1 when b makes the k-byte repeat k unneeded.
 */
static int
short_repeat_unneeded(const struct best *b, size_t k)
{
	return k < MIN_REPEAT && b->have && b->res.verdict != SAOP_INVALID;
}

/*
 * Judge the candidates of one reading c[0..cl) of the answer against
 * prefix[0..plen) (see merge()): appended at the resume point, the open
 * token re-sent, a repeat of the prefix's tail dropped.  Returns 1 when b
 * is complete, 0, or -1 with e filled.
 */
static int
judge_reading(struct best *b, const char *prefix, size_t plen, size_t unseen,
    size_t ts, const char *c, size_t cl, size_t max_depth,
    struct saop_err *e)
{
	size_t ks[MAX_OVERLAPS], lead = lstrip_len(c, cl), u;
	int partial = ts < plen, nk, j, rc;

	/* 1. Carried on from the resume point, byte for byte (its leading
	 * white space too: inside a string it is content, and between
	 * tokens the answer is kept as it came); the white space the model
	 * did not see (prefill) is received text: the answer's own leading
	 * white space is merged with it. */
	u = common_len(prefix + plen - unseen, unseen, c, cl);
	if ((rc = judge(b, prefix, plen, plen, c + u, cl - u, max_depth,
	    e)) != 0)
		return rc;
	/* 2. The open token re-sent from its start: only when it begins
	 * with every byte of it received. */
	if (partial && cl - lead >= plen - ts &&
	    memcmp(c + lead, prefix + ts, plen - ts) == 0 &&
	    (rc = judge(b, prefix, ts, plen, c + lead, cl - lead, max_depth,
	    e)) != 0)
		return rc;
	/* 3. A repeat of the prefix's tail dropped (the model went back a
	 * little).  (Never the prefix's trailing white space: that would be
	 * received bytes lost.) */
	if ((nk = overlaps(prefix, plen, c + lead, cl - lead, ks,
	    MAX_OVERLAPS)) < 0)
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory merging");
	for (j = 0; j < nk; j++)
		if (short_repeat_unneeded(b, ks[j]))
			continue;
		else if ((rc = judge(b, prefix, plen, plen, c + lead + ks[j],
		    cl - lead - ks[j], max_depth, e)) != 0)
			return rc;
	return 0;
}

/*
 * saop_resume_merge() where the last unseen bytes of prefix are white
 * space the model was not shown (prefill strips it): an answer that
 * starts with (part of) it does not repeat it.
 */
static int
merge(const char *prefix, size_t plen, size_t unseen, const char *cont,
    size_t clen, size_t max_depth, char **out, size_t *outlen,
    struct saop_detect_result *res, struct saop_err *e)
{
	struct span sp[MAX_CANDIDATES];
	struct best b;
	size_t ti, ts;
	int n, i, rc = 0;

	*out = NULL;
	*outlen = 0;
	if (res != NULL)
		memset(res, 0, sizeof(*res));
	memset(&b, 0, sizeof(b));
	if (partial_token(prefix, plen, max_depth, &ti, &ts) != 0)
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory merging");
	n = readings(cont, clen, sp);
	for (i = 0; i < n && rc == 0; i++)
		rc = judge_reading(&b, prefix, plen, unseen, ts,
		    cont + sp[i].off, sp[i].len, max_depth, e);
	if (rc < 0) {
		if (b.have) {
			saop_detect_result_free(&b.res);
			free(b.buf);
		}
		return -e->code;
	}
	*out = b.buf;
	*outlen = b.len;
	rc = (int)b.res.verdict;
	if (res != NULL)
		*res = b.res;
	else
		saop_detect_result_free(&b.res);
	return rc;
}

/*
 * See saop.h: prefix and continuation merged, the best candidate kept.
 * Returns 0 with *out (new) and res, or a negative code.
 */
int
saop_resume_merge(const char *prefix, size_t plen, const char *cont,
    size_t clen, size_t max_depth, char **out, size_t *outlen,
    struct saop_detect_result *res, struct saop_err *e)
{
	return merge(prefix, plen, 0, cont, clen, max_depth, out, outlen, res,
	    e);
}

/* ---- One record ---- */

/* The request of rec, or NULL when it has none; -1 when not an object. */
static int
record_request(const json_t *rec, const json_t **req, struct saop_err *e)
{
	*req = json_object_get(rec, "request");
	if (*req != NULL && json_is_null(*req))
		*req = NULL;
	if (*req != NULL && !json_is_object(*req)) {
		saop__fail(e, SAOP_EDATA, 0, "the request is not an object");
		snprintf(e->field, sizeof(e->field), "/request");
		return -1;
	}
	return 0;
}

/* rec's raw text and its length, or NULL with SAOP_EDATA in e. */
static const char *
record_raw(const json_t *rec, size_t *len, struct saop_err *e)
{
	const char *raw = saop_record_raw(rec, len);

	if (raw == NULL) {
		saop__fail(e, SAOP_EDATA, 0, "the record has no string raw");
		snprintf(e->field, sizeof(e->field), "/raw");
	}
	return raw;
}

/* The form to use now: AUTO resolved by the provider. */
static enum saop_resume_form
form_now(const struct saop_resume_opts *o)
{
	if (o->form != SAOP_RESUME_AUTO)
		return o->form;
	return o->provider == SAOP_PROVIDER_ANTHROPIC ? SAOP_RESUME_PREFILL :
	    SAOP_RESUME_USER;
}

/*
 * See saop.h: what a resume of rec would send first.  Returns 1 with
 * *request (new), 0 when rec needs no call, or a negative code.
 */
int
saop_resume_plan(const json_t *rec, const struct saop_resume_opts *opts,
    json_t **request, struct saop_err *e)
{
	struct saop_detect_result r;
	const json_t *req;
	const char *raw;
	size_t len;
	int rc;

	if (request != NULL)
		*request = NULL;
	if ((raw = record_raw(rec, &len, e)) == NULL ||
	    record_request(rec, &req, e) != 0)
		return -SAOP_EDATA;
	if ((rc = scan(raw, len, opts->max_depth, &r, e)) != 0)
		return rc;
	rc = r.verdict == SAOP_TRUNCATED;
	if (rc && request != NULL &&
	    (*request = saop_resume_request(req, raw,
	    (size_t)r.resume_index, r.last_valid_token, form_now(opts),
	    opts->context, e)) == NULL)
		rc = -e->code;
	saop_detect_result_free(&r);
	return rc;
}

/* A row of partial_completion_log. */
struct log_row {
	const char *task_id;
	long turn;
	uint64_t truncation_index;
	size_t initial_length;
	int attempts;
	const char *status;
	const struct saop_resume_outcome *cost;
};

/*
 * Transaction body: one partial_completion_log row (arg: struct log_row).
 * Returns 0, or -SAOP_EDB.
 */
static int
insert_row(struct saop__db *db, void *arg, struct saop_err *e)
{
	const struct log_row *row = arg;
	struct saop__db_resume_row r;
	char now[32];

	saop_now_iso8601(now);
	r.task_id = row->task_id;
	r.turn = row->turn;
	r.truncation_index = (long long)row->truncation_index;
	r.initial_length = (long long)row->initial_length;
	r.attempts = row->attempts;
	r.status = row->status;
	r.timestamp = now;
	r.sent_bytes = (long long)row->cost->sent_bytes;
	r.received_bytes = (long long)row->cost->received_bytes;
	r.prompt_tokens = row->cost->prompt_tokens;
	r.completion_tokens = row->cost->completion_tokens;
	return saop__db_resume_log(db, &r, e);
}

/*
 * Record event name for rec with data (stolen) when there is a store.
 * Returns 0: an event is a log (saop_record_event()).
 */
static int
event(const struct saop_resume_opts *o, const json_t *rec, const char *name,
    json_t *data)
{
	saop_record_event(o->store, rec, o->task_id, name, data);
	json_decref(data);
	return 0;
}

/* A JSON integer of n, or null when n is negative (not reported). */
static json_t *
count_or_null(long long n)
{
	return n < 0 ? json_null() : json_integer((json_int_t)n);
}

/* Set rec.resume = {attempts, status, sent_bytes, received_bytes,
 * prompt_tokens, completion_tokens} from o; 0 or ENOMEM. */
static int
set_resume(json_t *rec, const struct saop_resume_outcome *o,
    enum saop_resume_status st, struct saop_err *e)
{
	if (json_object_set_new(rec, "resume", json_pack("{s:i,s:s,s:I,s:I,"
	    "s:o,s:o}", "attempts", o->attempts, "status",
	    saop_resume_status_name(st), "sent_bytes",
	    (json_int_t)o->sent_bytes, "received_bytes",
	    (json_int_t)o->received_bytes, "prompt_tokens",
	    count_or_null(o->prompt_tokens), "completion_tokens",
	    count_or_null(o->completion_tokens))) != 0)
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
	return 0;
}

/* Write the outcome into rec: raw, detect, resume, state. */
static int
finish(json_t *rec, const char *raw, size_t len,
    const struct saop_detect_result *r, const struct saop_resume_outcome *o,
    enum saop_resume_status st, enum saop_state state, struct saop_err *e)
{
	struct saop_detect_result cut;
	json_t *s, *d;

	memset(&cut, 0, sizeof(cut));
	if ((s = json_stringn(raw, len)) == NULL) {
		/*
		 * Only a character cut at the very end can do that (the
		 * scanner passed the rest): a JSON string cannot hold half a
		 * character, so the record keeps what precedes it, the
		 * resume point, and the model writes that character again.
		 */
		if (r->verdict != SAOP_TRUNCATED || (s = json_stringn(raw,
		    (size_t)r->resume_index)) == NULL)
			return saop__fail(e, SAOP_EINTERNAL, 0,
			    "the merged output is not valid UTF-8");
		if (scan(raw, (size_t)r->resume_index, 0, &cut, e) != 0) {
			json_decref(s);
			return -e->code;
		}
		r = &cut;
	}
	d = saop_detect_result_json(r);
	saop_detect_result_free(&cut);
	if (json_object_set_new(rec, "raw", s) != 0 ||
	    json_object_set_new(rec, "detect", d) != 0 ||
	    set_resume(rec, o, st, e) != 0 ||
	    saop_record_set_state(rec, state) != 0)
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
	return 0;
}

/* Where one record stands while it is resumed. */
struct progress {
	char *buf;			/* the best text so far */
	size_t len;
	struct saop_detect_result res;	/* its scan (TRUNCATED) */
};

/* Make buf (len bytes, scanned as res) the progress of p; steals both. */
static void
progress_take(struct progress *p, char *buf, size_t len,
    const struct saop_detect_result *res)
{
	free(p->buf);
	saop_detect_result_free(&p->res);
	p->buf = buf;
	p->len = len;
	p->res = *res;
}

/* Add one call's cost to o: sent bytes, the answer's bytes and usage. */
static void
count_call(struct saop_resume_outcome *o, size_t sent,
    const struct saop_llm_answer *a)
{
	o->sent_bytes += sent;
	if (a->raw != NULL)
		o->received_bytes += a->raw_len;
	if (a->prompt_tokens >= 0)
		o->prompt_tokens = (o->prompt_tokens < 0 ? 0 :
		    o->prompt_tokens) + a->prompt_tokens;
	if (a->completion_tokens >= 0)
		o->completion_tokens = (o->completion_tokens < 0 ? 0 :
		    o->completion_tokens) + a->completion_tokens;
}

/*
 * See saop.h: resume rec in place.  Returns 0 with out filled, or a
 * negative code (rec keeps the progress made).
 */
int
saop_resume_record(json_t *rec, struct saop_resume_opts *opts,
    struct saop_resume_outcome *out, struct saop_err *e)
{
	struct saop_detect_result r, mr;
	struct saop_llm_answer ans;
	struct progress pg;
	struct saop_err ce;
	struct log_row row;
	const json_t *req;
	const char *raw, *task;
	enum saop_state state;
	json_t *cr;
	char *m, tbuf[32];
	size_t len, mlen;
	long turn;
	int max, rc, v, done = 0, call_rc = 0;

	memset(out, 0, sizeof(*out));
	if ((raw = record_raw(rec, &len, e)) == NULL ||
	    record_request(rec, &req, e) != 0)
		return -SAOP_EDATA;
	if ((rc = scan(raw, len, opts->max_depth, &r, e)) != 0)
		return rc;
	out->verdict = r.verdict;
	if (r.verdict != SAOP_TRUNCATED) {
		state = saop_record_state(rec);
		saop_detect_result_free(&r);
		out->prompt_tokens = out->completion_tokens = -1;
		if (set_resume(rec, out, SAOP_RESUME_SKIPPED, e) != 0)
			return -e->code;
		if (out->verdict == SAOP_INVALID)
			state = SAOP_STATE_INVALID;
		else if (state == SAOP_STATE_TRUNCATED)
			state = SAOP_STATE_OK;
		else
			return 0;
		if (saop_record_set_state(rec, state) != 0)
			return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
		return 0;
	}
	if ((task = saop_record_task_id(rec, tbuf)) == NULL)
		task = opts->task_id != NULL ? opts->task_id : "";
	turn = saop_record_turn(rec);
	row.task_id = task;
	row.turn = turn >= 0 ? turn : 0;
	row.truncation_index = r.truncation_index;
	row.initial_length = len;
	out->prompt_tokens = out->completion_tokens = -1;
	row.cost = out;
	if (opts->no_call) {
		out->status = SAOP_RESUME_SUSPENDED;
		rc = finish(rec, raw, len, &r, out, SAOP_RESUME_SUSPENDED,
		    SAOP_STATE_TRUNCATED, e);
		saop_detect_result_free(&r);
		return rc;
	}
	event(opts, rec, SAOP_EVENT_PARTIAL_COMPLETION_DETECTED,
	    json_pack("{s:I,s:I}", "truncation_index",
	    (json_int_t)r.truncation_index, "length", (json_int_t)len));
	max = opts->max_attempts > 0 ? opts->max_attempts :
	    SAOP_MAX_RESUME_ATTEMPTS;
	pg.buf = malloc(len + 1);
	if (pg.buf == NULL) {
		saop_detect_result_free(&r);
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
	}
	memcpy(pg.buf, raw, len);
	pg.buf[len] = '\0';
	pg.len = len;
	pg.res = r;
	while (out->attempts < max && !done) {
		enum saop_resume_form form = form_now(opts);
		/* The resume point: the end of what was received (of the
		 * last merge), but a cut escape or character. */
		size_t rp = (size_t)pg.res.resume_index, sent = 0, unseen = 0;

		if (form == SAOP_RESUME_PREFILL &&
		    opts->context == SAOP_RESUME_FULL)
			unseen = rp - rstrip_len(pg.buf, rp);
		cr = request_counted(req, pg.buf, rp, pg.res.last_valid_token,
		    form, opts->context, &sent, e);
		if (cr == NULL) {
			rc = -e->code;
			goto out;
		}
		memset(&ans, 0, sizeof(ans));
		saop_err_clear(&ce);
		call_rc = saop_model_call(&opts->model, cr, &ans, &ce);
		json_decref(cr);
		if (call_rc == -SAOP_EPREFILL && opts->form == SAOP_RESUME_AUTO &&
		    form == SAOP_RESUME_PREFILL) {
			/* Refused before any text: the same attempt again. */
			saop_llm_answer_free(&ans);
			opts->form = SAOP_RESUME_USER;
			out->prefill_refused = 1;
			continue;
		}
		if (call_rc == -SAOP_ECONFIG) {
			/* Nothing was sent (no libcurl, say): no attempt. */
			saop_llm_answer_free(&ans);
			break;
		}
		out->attempts++;
		count_call(out, sent, &ans);
		if (ans.raw != NULL && (call_rc == 0 || ans.raw_len > 0)) {
			v = merge(pg.buf, rp, unseen, ans.raw, ans.raw_len,
			    opts->max_depth, &m, &mlen, &mr, e);
			if (v < 0) {
				saop_llm_answer_free(&ans);
				rc = v;
				goto out;
			}
			if (v == SAOP_INVALID) {
				saop_detect_result_free(&mr);
				free(m);
			} else {
				/* Complete, or truncated further on. */
				progress_take(&pg, m, mlen, &mr);
				done = v == SAOP_COMPLETE;
			}
		}
		saop_llm_answer_free(&ans);
		if (call_rc < 0 && !done)
			break;
		call_rc = 0;
	}
	if (done) {
		out->status = SAOP_RESUME_RESOLVED;
		out->verdict = SAOP_COMPLETE;
		if ((rc = finish(rec, pg.buf, pg.len, &pg.res, out,
		    SAOP_RESUME_RESOLVED, SAOP_STATE_OK, e)) != 0)
			goto out;
	} else if (call_rc < 0) {
		out->status = SAOP_RESUME_SUSPENDED;
		out->verdict = pg.res.verdict;
		if ((rc = finish(rec, pg.buf, pg.len, &pg.res, out,
		    SAOP_RESUME_SUSPENDED, SAOP_STATE_TRUNCATED, e)) != 0)
			goto out;
		event(opts, rec, SAOP_EVENT_RESUME_FAILED,
		    json_pack("{s:i,s:s,s:s}", "attempts", out->attempts,
		    "status", saop_resume_status_name(SAOP_RESUME_SUSPENDED),
		    "error", ce.msg));
		*e = ce;
		rc = call_rc;
		goto out;
	} else {
		out->status = SAOP_RESUME_EXHAUSTED;
		out->verdict = pg.res.verdict;
		if ((rc = finish(rec, pg.buf, pg.len, &pg.res, out,
		    SAOP_RESUME_EXHAUSTED, SAOP_STATE_RESUME_EXHAUSTED, e)) != 0)
			goto out;
	}
	row.attempts = out->attempts;
	row.status = saop_resume_status_name(out->status);
	if (opts->store != NULL &&
	    (rc = saop__store_tx(opts->store, 0, insert_row, &row, e)) != 0)
		goto out;
	rc = event(opts, rec, done ? SAOP_EVENT_RESUME_SUCCEEDED :
	    SAOP_EVENT_RESUME_FAILED, json_pack("{s:i,s:s,s:I,s:I,s:I,s:o,s:o}",
	    "attempts", out->attempts, "status", row.status, "length",
	    (json_int_t)pg.len, "sent_bytes", (json_int_t)out->sent_bytes,
	    "received_bytes", (json_int_t)out->received_bytes,
	    "prompt_tokens", count_or_null(out->prompt_tokens),
	    "completion_tokens", count_or_null(out->completion_tokens)));
out:
	free(pg.buf);
	saop_detect_result_free(&pg.res);
	return rc;
}
