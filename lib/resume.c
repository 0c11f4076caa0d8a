/*
 * resume.c: the partial-completion resume protocol: building the
 * continuation request, merging a continuation into the partial output,
 * and resuming one record up to its attempts, with the log row and events.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "db.h"

/* Readings of an answer tried (as it is, a fence's body, after a colon,
 * after each of its first LINE_READINGS lines), and repeats of the
 * received tail per reading. */
#define LINE_READINGS	3
#define MAX_CANDIDATES	(3 + LINE_READINGS)
#define MAX_OVERLAPS	8

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

/* Append {"role": role, "content": content (stolen)} to msgs; 0 or -1. */
static int
append_turn(json_t *msgs, const char *role, json_t *content)
{
	json_t *m = json_object();

	if (m == NULL || content == NULL ||
	    json_object_set_new(m, "role", json_string(role)) != 0) {
		json_decref(m);
		json_decref(content);
		return -1;
	}
	/* Both take their value, even when they fail. */
	if (json_object_set_new(m, "content", content) != 0) {
		json_decref(m);
		return -1;
	}
	return json_array_append_new(msgs, m) != 0 ? -1 : 0;
}

/*
 * The user turn's text: the prompt, the token label and token, then
 * SAOP_RESUME_AGAIN_LABEL when again is set, then (when label is not
 * NULL) label and quote[0..qlen): the text the model is shown as its own
 * always ends the turn.  Returns a new string (free()) of *len bytes, or
 * NULL when out of memory.
 */
static char *
user_text(const char *token, int again, const char *label,
    const char *quote, size_t qlen, size_t *len)
{
	struct saop__buf b;

	saop__buf_init(&b);
	if (saop__buf_append(&b, SAOP_RESUME_PROMPT,
	    strlen(SAOP_RESUME_PROMPT)) != 0 ||
	    saop__buf_append(&b, SAOP_RESUME_TOKEN_LABEL,
	    strlen(SAOP_RESUME_TOKEN_LABEL)) != 0 ||
	    saop__buf_append(&b, token, strlen(token)) != 0 ||
	    (again && saop__buf_append(&b, SAOP_RESUME_AGAIN_LABEL,
	    strlen(SAOP_RESUME_AGAIN_LABEL)) != 0) ||
	    (label != NULL && (saop__buf_append(&b, label,
	    strlen(label)) != 0 || saop__buf_append(&b, quote, qlen) != 0))) {
		saop__buf_free(&b);
		return NULL;
	}
	return saop__buf_steal(&b, len);
}

/*
 * Where the token that prefix[0..len) (an answer, wrapped or bare) ends
 * inside starts (its partial token: a string, number or literal cut
 * short), or len when it ends between tokens; *ti gets the end of its last
 * complete token.  -1 when out of memory.
 */
static int
partial_token(const char *prefix, size_t len, size_t max_depth, size_t *ti,
    size_t *ts)
{
	struct saop_detect_result r;

	*ti = *ts = len;
	if (saop_detect_text(prefix, len, max_depth, &r) != 0)
		return -1;
	if (r.verdict == SAOP_TRUNCATED) {
		*ti = (size_t)r.truncation_index;
		*ts = *ti + lstrip_len(prefix + *ti, len - *ti);
	}
	saop_detect_result_free(&r);
	return 0;
}

/*
 * The bytes at the end of s's text the model is not shown: its trailing
 * white space, in a prefill (the APIs refuse a prefill that ends in
 * white space); the merge puts them back.  0 in every other form.
 */
static size_t
unseen_of(const struct saop__shown *s)
{
	if (s->form != SAOP_RESUME_PREFILL || s->context != SAOP_RESUME_FULL)
		return 0;
	return s->len - rstrip_len(s->text, s->len);
}

/*
 * See saop-private.h: the continuation request that shows s (a copy of
 * request, may be NULL), adding to *sent (when not NULL) the bytes of the
 * resume turns' text.  Returns it (new), or NULL with e filled.
 */
json_t *
saop__shown_request(const struct saop__shown *s, const json_t *request,
    size_t *sent, struct saop_err *e)
{
	const char *token = s->token != NULL ? s->token : "";
	json_t *req, *msgs;
	char *text;
	size_t tlen, keep;
	int rc;

	if (s->form != SAOP_RESUME_PREFILL && s->form != SAOP_RESUME_USER) {
		saop__fail(e, SAOP_EINTERNAL, 0,
		    "resume request: the form is not decided");
		return NULL;
	}
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
	keep = s->len - unseen_of(s);
	if (s->context == SAOP_RESUME_TAIL) {
		size_t ti, ts;

		/* The token and the partial token after it, quoted. */
		if (partial_token(s->text, s->len, 0, &ti, &ts) != 0)
			goto nomem;
		text = ts < s->len ? user_text(token, s->again,
		    SAOP_RESUME_TAIL_LABEL, s->text + ti, s->len - ti, &tlen) :
		    user_text(token, s->again, NULL, NULL, 0, &tlen);
	} else if (s->form == SAOP_RESUME_USER &&
	    rstrip_len(s->text, s->len) > 0) {
		text = user_text(token, s->again, SAOP_RESUME_PARTIAL_LABEL,
		    s->text, s->len, &tlen);
	} else {
		text = user_text(token, s->again, NULL, NULL, 0, &tlen);
	}
	if (text == NULL)
		goto nomem;
	if (sent != NULL)
		*sent += tlen;
	rc = append_turn(msgs, "user", string_n(text, tlen));
	free(text);
	if (rc != 0)
		goto nomem;
	if (s->context == SAOP_RESUME_FULL && s->form == SAOP_RESUME_PREFILL &&
	    keep > 0) {
		if (append_turn(msgs, "assistant", string_n(s->text, keep)) !=
		    0)
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
	struct saop__shown s;

	memset(&s, 0, sizeof(s));
	s.text = prefix;
	s.len = len;
	s.token = token;
	s.form = form;
	s.context = context;
	return saop__shown_request(&s, request, NULL, e);
}

/* ---- Merge ---- */

/* One way of reading the continuation: cont[off..off+len). */
struct span {
	size_t off, len;
};

/* The first needle[0..n) in hay[0..hlen), or NULL. */
static const char *
find_mem(const char *hay, size_t hlen, const char *needle, size_t n)
{
	size_t i;

	for (i = 0; i + n <= hlen; i++)
		if (memcmp(hay + i, needle, n) == 0)
			return hay + i;
	return NULL;
}

/* The first needle in hay[0..hlen) (needle NUL-terminated), or NULL. */
static const char *
find_n(const char *hay, size_t hlen, const char *needle)
{
	return find_mem(hay, hlen, needle, strlen(needle));
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
 * first code fence (to a fence that begins a line); after a sentence that opens it (after ": " on its
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
		/* The closing fence begins a line: a "```" inside a JSON
		 * string (markdown in a file's content) never does. */
		end = nl != NULL ? find_n(nl, clen - (size_t)(nl - cont),
		    "\n```") : NULL;
		end = end != NULL ? end + 1 : cont + clen;
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
	for (lines = 0; lines < LINE_READINGS; lines++) {
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
		while (q > 0 && c[q] != t[i])	/* q < m: q <= i */
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

/*
 * 1 when s[0..n) is a text that repeats itself (it has a period of n / 2
 * or less: "QQQQ", "abcabcab"), or when out of memory; else 0.  Such a
 * text going on with itself written again is as likely as a model
 * restarting it.
 */
static int
self_repeats(const char *s, size_t n)
{
	size_t *pi, q, i;
	int r;

	if (n < 2)
		return 0;
	if ((pi = malloc(n * sizeof(*pi))) == NULL)
		return 1;
	pi[0] = 0;
	for (i = 1, q = 0; i < n; i++) {
		while (q > 0 && s[i] != s[q])
			q = pi[q - 1];
		if (s[i] == s[q])
			q++;
		pi[i] = q;
	}
	/* The shortest period is n - pi[n - 1]. */
	r = n - pi[n - 1] <= n / 2;
	free(pi);
	return r;
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
 * A text with its white space between tokens dropped (one space kept
 * between two bytes of scalars, where it parts two tokens), for finding
 * a repeat of the received tail that the model wrote with its own white
 * space (it restarts at its last valid token, the blank lines it meant,
 * not those received): the normalized bytes, and for each the byte after
 * it in the text and a flag byte (its string state before it, TOKEN when
 * a token starts there).
 */
struct squeezed {
	char *s;
	size_t n;
	size_t *end;
	unsigned char *flag;
};

enum { SQ_OUT, SQ_STR, SQ_ESC, SQ_STATE = 3, SQ_TOKEN = 4 };

/* 1 when c is part of a scalar outside strings (a number, a literal, a
 * bare word), else 0. */
static int
scalar_byte(unsigned char c)
{
	return !is_ws(c) && strchr(",:[]{}\"", c) == NULL;
}

/*
 * Squeeze t[0..tn), read from string state st, into q, keeping only the
 * normalized bytes from the skip-th on (q NULL: count them).  Returns how
 * many normalized bytes t has in all, or (size_t)-1 (ENOMEM).
 */
static size_t
squeeze(const char *t, size_t tn, int st, size_t skip, struct squeezed *q)
{
	size_t i, n = 0;
	unsigned char prev = 0;
	int gap = 0, tok;

	if (q != NULL) {
		size_t o;

		memset(q, 0, sizeof(*q));
		if ((o = squeeze(t, tn, st, 0, NULL)) < skip)
			skip = 0;
		o = o - skip + 1;
		q->s = malloc(o);
		q->end = malloc(o * sizeof(*q->end));
		q->flag = malloc(o);
		if (q->s == NULL || q->end == NULL || q->flag == NULL)
			return (size_t)-1;
	}
	for (i = 0; i < tn; i++) {
		unsigned char c = (unsigned char)t[i];

		if (st == SQ_OUT && is_ws(c)) {
			gap = 1;
			continue;
		}
		tok = st == SQ_OUT && (n == 0 || !scalar_byte(c) ||
		    !scalar_byte(prev) || gap);
		if (st == SQ_OUT && gap && n > 0 && scalar_byte(c) &&
		    scalar_byte(prev)) {
			if (q != NULL && n >= skip) {
				q->s[q->n] = ' ';
				q->end[q->n] = i;
				q->flag[q->n++] = SQ_OUT;
			}
			n++;
		}
		if (q != NULL && n >= skip) {
			q->s[q->n] = (char)c;
			q->end[q->n] = i + 1;
			q->flag[q->n++] = (unsigned char)(st |
			    (tok ? SQ_TOKEN : 0));
		}
		n++;
		gap = 0;
		prev = c;
		if (st == SQ_OUT && c == '"')
			st = SQ_STR;
		else if (st == SQ_STR && c == '\\')
			st = SQ_ESC;
		else if (st == SQ_STR && c == '"')
			st = SQ_OUT, prev = 0;
		else if (st == SQ_ESC)
			st = SQ_STR;
	}
	return n;
}

/* Free what squeeze() made of q. */
static void
squeezed_free(struct squeezed *q)
{
	free(q->s);
	free(q->end);
	free(q->flag);
}


/* How far a verdict is from a finished merge: complete 0, truncated 1,
 * invalid 2. */
static int
verdict_class(enum saop_verdict v)
{
	return v == SAOP_COMPLETE ? 0 : v == SAOP_TRUNCATED ? 1 : 2;
}

/*
 * Scan buf (len bytes) as an answer whose JSON begins at js after wrapper
 * (saop__detect_part()); 0, or a negative code with e filled.
 */
static int
scan_part(const char *buf, size_t len, size_t js, unsigned wrapper,
    size_t max_depth, struct saop_detect_result *res, struct saop_err *e)
{
	int rc;

	memset(res, 0, sizeof(*res));
	rc = saop__detect_part(buf, len, js, wrapper, max_depth ? max_depth :
	    SAOP_MAX_DEPTH, res);
	if (rc < 0)
		return saop__fail(e, -rc, 0, "scanning the merged output "
		    "failed");
	return 0;
}

/*
 * The likelihood of a candidate (smaller: more likely; saop-resume(1),
 * "How the pieces are joined").  Readings of the answer after its first
 * (a code fence's body, after a sentence) add L_NEXT_READING each.
 */
enum likely {
	L_RESTART = 0,		/* the open string written again from its
				   quote or first byte, LONG_REPEAT bytes of
				   its text or more received: a repeat that
				   starts where the string does */
	L_AS_CAME = 1,		/* as it came, its leading blank lines
				   dropped, or any other repeat of the
				   received tail dropped: all as likely (text
				   that truly repeats itself at the cut, as
				   code does, reads as a repeat too) */
	L_NEXT_READING = 2
};

/* The open string's text received, at least, for its restart to be read
 * before the answer as it came. */
#define LONG_REPEAT	8

/* The merge of one answer: what it joins and the best candidate so far. */
struct joiner {
	const char *p;		/* the received text up to its resume point */
	size_t plen;
	size_t js;		/* where its JSON begins */
	unsigned wrapper;	/* what is before that (SAOP_WRAP_*) */
	size_t unseen;		/* its trailing white space the model did
				   not see (prefill) */
	size_t max_depth;
	int cut;		/* the answer was cut too */
	size_t open_str;	/* bytes of the open string received (its
				   quote too), 0 when the cut is not in one,
				   nor when its text repeats itself
				   (self_repeats()) */
	struct saop_err *e;
	/* The best candidate: */
	char *buf;
	size_t len;
	struct saop_detect_result res;
	int have, cls, likely;
	int differs;		/* another as likely has another value */
};

/*
 * The next byte of the value in s[0..n) from *i that counts for its value
 * (white space outside strings skipped), advancing *i; -1 at the end.
 * *str and *esc carry whether *i is inside a string, after a backslash.
 */
static int
value_byte(const char *s, size_t n, size_t *i, int *str, int *esc)
{
	while (*i < n) {
		unsigned char c = (unsigned char)s[(*i)++];

		if (*str) {
			if (*esc)
				*esc = 0;
			else if (c == '\\')
				*esc = 1;
			else if (c == '"')
				*str = 0;
			return c;
		}
		if (is_ws(c))
			continue;
		if (c == '"')
			*str = 1;
		return c;
	}
	return -1;
}

/* The end of the JSON of a merge scanned as r (COMPLETE: its
 * saop__detect_part() sets json_end). */
static size_t
json_end(const struct saop_detect_result *r)
{
	return (size_t)r->json_end;
}

/* The end of what a merge scanned as r (len bytes) holds: its JSON's
 * end when complete, else all of it. */
static size_t
value_end(const struct saop_detect_result *r, size_t len)
{
	return r->verdict == SAOP_COMPLETE ? json_end(r) : len;
}

/* 1 when a[from..an) and b[from..bn) hold the same value (the same bytes
 * but for white space between tokens), else 0. */
static int
same_value(const char *a, size_t an, const char *b, size_t bn, size_t from)
{
	size_t i = from, j = from;
	int sa = 0, ea = 0, sb = 0, eb = 0, ca;

	do {
		int cb;

		ca = value_byte(a, an, &i, &sa, &ea);
		cb = value_byte(b, bn, &j, &sb, &eb);
		if (ca != cb)
			return 0;
	} while (ca != -1);
	return 1;
}

/* The bytes of words after a value that, found in the received text,
 * make them its text written again, not a remark. */
#define RESTATED_MIN	3
#define RESTATED_CMP	16

/*
 * 1 when the words w[0..wl) after a complete value begin with text the
 * received text p[0..pl) holds (RESTATED_CMP bytes of them, or all when
 * fewer, at least RESTATED_MIN): the model writing again what it had
 * written (a string restarted from its quote and cut, whose quote then
 * reads as the end of the received string), not a remark after its
 * answer.  Else 0.
 */
static int
restated_words(const char *p, size_t pl, const char *w, size_t wl)
{
	size_t n = wl < RESTATED_CMP ? wl : RESTATED_CMP;

	return n >= RESTATED_MIN && find_mem(p, pl, w, n) != NULL;
}

/*
 * When the scan r of buf (len bytes, the received text's hlen bytes and
 * the answer's) is invalid only because words follow a complete value
 * in the answer, the text cut before them: rescanned into r, and len
 * shortened.  Not when those words are the received text written again
 * (restated_words()): that reading stays invalid.  0, or a negative code
 * with e filled.
 */
static int
cut_words(const struct joiner *j, char *buf, size_t *len, size_t hlen,
    struct saop_detect_result *r)
{
	struct saop_detect_result cut;
	size_t at = (size_t)r->error_offset, lead = at;

	if (r->verdict != SAOP_INVALID || at < hlen)
		return 0;	/* at <= *len: at == *len is no sentence */
	while (lead > hlen && is_ws((unsigned char)buf[lead - 1]))
		lead--;
	if (lead == at || !sentence_start(buf + at, *len - at) ||
	    restated_words(buf + j->js, hlen - j->js, buf + at, *len - at))
		return 0;
	if (scan_part(buf, lead, j->js, j->wrapper, j->max_depth, &cut,
	    j->e) != 0)
		return -j->e->code;
	if (cut.verdict != SAOP_COMPLETE) {
		saop_detect_result_free(&cut);
		return 0;
	}
	saop_detect_result_free(r);
	*r = cut;
	*len = lead;
	buf[lead] = '\0';
	return 0;
}

/*
 * Judge the received text followed by tail[0..tlen), a candidate of
 * likelihood likely: kept in j when it is the best so far (complete
 * beats truncated beats invalid, then the more likely, then, for the
 * same value, the shorter (white space between tokens not doubled; not
 * for a cut answer), then the one judged first); a complete one as
 * likely with another value marks j ambiguous.  When the answer was cut
 * too, complete and truncated are as good, and one as likely with another
 * text (but for white space between tokens) marks j ambiguous as well:
 * what is kept of a cut answer is the text the next request shows, and
 * the next answer is merged onto it, so it is decided now, or not kept.
 * 0, or a negative code with e filled.
 */
static int
consider(struct joiner *j, const char *tail, size_t tlen, int likely)
{
	struct saop_detect_result r;
	size_t len = j->plen + tlen;
	char *buf;
	int cls, rc;

	if ((buf = malloc(len + 1)) == NULL)
		return saop__fail(j->e, SAOP_ENOMEM, 0, "out of memory "
		    "merging");
	memcpy(buf, j->p, j->plen);
	memcpy(buf + j->plen, tail, tlen);
	buf[len] = '\0';
	if ((rc = scan_part(buf, len, j->js, j->wrapper, j->max_depth, &r,
	    j->e)) != 0 || (rc = cut_words(j, buf, &len, j->plen, &r)) != 0) {
		free(buf);
		return rc;
	}
	/* A cut answer that ends in a bare number's digits: they may go
	 * on in the next answer. */
	if (j->cut && saop_detect_mark_cut(&r, buf, len) < 0) {
		saop_detect_result_free(&r);
		free(buf);
		return saop__fail(j->e, SAOP_ENOMEM, 0, "out of memory "
		    "merging");
	}
	cls = verdict_class(r.verdict);
	if (j->cut && cls == 1)
		cls = 0;	/* A cut answer: no reading is finished. */
	if (j->have && cls == j->cls && likely == j->likely && cls == 0) {
		if (!same_value(buf, value_end(&r, len), j->buf,
		    value_end(&j->res, j->len), j->js))
			j->differs = 1;
		else if (len < j->len && !j->cut)
			goto take;	/* The same value, less doubled space
					   (a cut answer's text as it came:
					   the model goes on from it). */
	}
	if (j->have && (cls > j->cls || (cls == j->cls &&
	    likely >= j->likely))) {
		saop_detect_result_free(&r);
		free(buf);
		return 0;
	}
	j->differs = 0;
take:
	if (j->have) {
		saop_detect_result_free(&j->res);
		free(j->buf);
	}
	j->buf = buf;
	j->len = len;
	j->res = r;
	j->cls = cls;
	j->likely = likely;
	j->have = 1;
	return 0;
}

/* What the received text ends inside (its open token). */
enum at_cut { CUT_BETWEEN, CUT_STRING, CUT_SCALAR };

/*
 * How many leading bytes of c[0..cl) a model put first that cannot be
 * content at the cut, 0 for none: blank lines (white space through its
 * last line feed) inside a string (a raw line feed is never in one) or,
 * when it holds two line feeds or more, between tokens; all leading white
 * space, when it holds a line feed, at a number or literal.
 */
static size_t
blank_lead(const char *c, size_t cl, enum at_cut at)
{
	size_t lead = lstrip_len(c, cl), i, last = 0;
	int lfs = 0;

	for (i = 0; i < lead; i++)
		if (c[i] == '\n') {
			lfs++;
			last = i + 1;
		}
	if (lfs == 0 || (at == CUT_BETWEEN && lfs < 2))
		return 0;
	return at == CUT_SCALAR ? lead : last;
}

/*
 * 1 when a repeat of the last k received bytes is the open string written
 * again from its start (its quote, or its first byte) and at least
 * LONG_REPEAT bytes of its text had come, a text that does not repeat
 * itself, else 0.
 */
static int
restart(const struct joiner *j, size_t k)
{
	return j->open_str > LONG_REPEAT &&
	    (k == j->open_str || k == j->open_str - 1);
}

/*
 * Judge the candidate where the reading c[0..cl) (base: its likelihood
 * added) begins with the whole received JSON written again, each with
 * its own leading white space (the model restarting the answer, its
 * blank lines not those received): that repeat dropped, as likely as the
 * other repeats (overlaps() finds it only when the white space is the
 * same); or, when the answer was cut, the candidate where it is a cut
 * restatement that stops before the end of the received text (nothing
 * new).  0 when it is not one, or a negative code with e filled.
 */
static int
restatement(struct joiner *j, const char *c, size_t cl, int base)
{
	const char *t = j->p + j->js;
	size_t tl = j->plen - j->js, pl = lstrip_len(t, tl);
	size_t lead = lstrip_len(c, cl), k = tl - pl;

	/* A cut answer that writes the received JSON again and stops
	 * before its end (even within its leading white space) brings
	 * nothing new: that reading is as likely as one taking its bytes
	 * for new ones (its quote closing the received string, its blanks
	 * the string's text), and a cut answer's two readings are not
	 * kept. */
	if (j->cut && k > 0 && cl > 0 && cl - lead < k &&
	    memcmp(c + lead, t + pl, cl - lead) == 0)
		return consider(j, c + cl, 0, base + L_AS_CAME);
	if (k == 0 || (lead == 0 && pl == 0) || cl - lead < k ||
	    memcmp(c + lead, t + pl, k) != 0)
		return 0;
	return consider(j, c + lead + k, cl - lead - k, base +
	    (restart(j, k) ? L_RESTART : L_AS_CAME));
}

/*
 * Judge the candidates where c[0..cl) (base: its likelihood added) begins
 * with a repeat of the received JSON's tail from the start of a token
 * (or within a string), the same but for white space between tokens:
 * that repeat dropped, as likely as the other repeats (overlaps() finds
 * those whose white space is the same byte for byte).  A model that
 * restarts at its last valid token writes the blank lines it meant, not
 * those the request showed it, and its repeat must not be read as new
 * values.  0, or a negative code with e filled.
 */
static int
spaced_repeats(struct joiner *j, const char *c, size_t cl, int base)
{
	struct squeezed p, q;
	size_t ks[4 * MAX_OVERLAPS], pn, at;
	int st, i, rc = 0;

	pn = squeeze(j->p + j->js, j->plen - j->js, SQ_OUT, 0, NULL);
	if (squeeze(j->p + j->js, j->plen - j->js, SQ_OUT,
	    pn > cl ? pn - cl : 0, &p) == (size_t)-1) {
		squeezed_free(&p);
		return saop__fail(j->e, SAOP_ENOMEM, 0, "out of memory "
		    "merging");
	}
	for (st = SQ_OUT; st <= SQ_ESC && rc == 0; st++) {
		int nk;

		if (squeeze(c, cl, st, 0, &q) == (size_t)-1) {
			squeezed_free(&q);
			rc = saop__fail(j->e, SAOP_ENOMEM, 0, "out of "
			    "memory merging");
			break;
		}
		if ((nk = overlaps(p.s, p.n, q.s, q.n, ks,
		    4 * MAX_OVERLAPS)) < 0)
			rc = saop__fail(j->e, SAOP_ENOMEM, 0, "out of "
			    "memory merging");
		for (i = 0; i < nk && rc == 0; i++) {
			at = p.n - ks[i];
			if ((p.flag[at] & SQ_STATE) != st ||
			    (st == SQ_OUT && !(p.flag[at] & SQ_TOKEN)))
				continue;
			rc = consider(j, c + q.end[ks[i] - 1],
			    cl - q.end[ks[i] - 1], base + L_AS_CAME);
		}
		squeezed_free(&q);
	}
	squeezed_free(&p);
	return rc;
}

/*
 * Judge every candidate of one reading c[0..cl) of the answer (base: its
 * likelihood added): its leading blank lines dropped; as it came (the
 * white space prefill did not show merged with its own); a repeat of the
 * received tail dropped (the longest MAX_OVERLAPS), byte for byte or but
 * for white space between tokens (spaced_repeats()); the whole received
 * JSON written again dropped (restatement()).  0, or a negative code with
 * e filled.
 */
static int
judge_reading(struct joiner *j, enum at_cut at, const char *c, size_t cl,
    int base)
{
	size_t ks[MAX_OVERLAPS], blank = blank_lead(c, cl, at), u;
	int nk, i, rc;

	if (blank > 0) {
		u = blank + common_len(j->p + j->plen - j->unseen, j->unseen,
		    c + blank, cl - blank);
		if ((rc = consider(j, c + u, cl - u, base + L_AS_CAME)) != 0)
			return rc;
	}
	u = common_len(j->p + j->plen - j->unseen, j->unseen, c, cl);
	if ((rc = consider(j, c + u, cl - u, base + L_AS_CAME)) != 0)
		return rc;
	if ((nk = overlaps(j->p + j->js, j->plen - j->js, c, cl, ks,
	    MAX_OVERLAPS)) < 0)
		return saop__fail(j->e, SAOP_ENOMEM, 0, "out of memory "
		    "merging");
	for (i = 0; i < nk; i++)
		if ((rc = consider(j, c + ks[i], cl - ks[i], base +
		    (restart(j, ks[i]) ? L_RESTART : L_AS_CAME))) != 0)
			return rc;
	if ((rc = spaced_repeats(j, c, cl, base)) != 0)
		return rc;
	return restatement(j, c, cl, base);
}

/* See saop.h: prefix and cont joined by the most likely reading.
 * Returns the verdict with *out (new), or a negative code. */
int
saop_resume_join(const char *prefix, size_t plen, const char *cont,
    size_t clen, struct saop_resume_join *opt, char **out, size_t *outlen,
    struct saop_detect_result *res, struct saop_err *e)
{
	struct span sp[MAX_CANDIDATES];
	struct saop_detect_result pr;
	struct joiner j;
	enum at_cut at = CUT_BETWEEN;
	size_t ti, ts;
	int n, i, rc = 0;

	*out = NULL;
	*outlen = 0;
	opt->ambiguous = 0;
	if (res != NULL)
		memset(res, 0, sizeof(*res));
	memset(&j, 0, sizeof(j));
	j.p = prefix;
	j.plen = plen;
	j.js = opt->json_start <= plen ? opt->json_start : 0;
	j.wrapper = j.js > 0 ? opt->wrapper : 0;
	j.unseen = opt->unseen <= plen - j.js ? opt->unseen : 0;
	j.max_depth = opt->max_depth;
	j.cut = opt->cut;
	j.e = e;
	if (partial_token(prefix + j.js, plen - j.js, opt->max_depth, &ti,
	    &ts) != 0)
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory merging");
	if (ts < plen - j.js)
		at = prefix[j.js + ts] == '"' ? CUT_STRING : CUT_SCALAR;
	if (at == CUT_STRING && !self_repeats(prefix + j.js + ts + 1,
	    plen - j.js - ts - 1))
		j.open_str = plen - j.js - ts;
	n = readings(cont, clen, sp);
	for (i = 0; i < n && rc == 0; i++) {
		if (i > 0 && j.res.verdict == SAOP_COMPLETE)	/* j.have: i > 0 */
			break;	/* A later reading only for what is left. */
		rc = judge_reading(&j, at, cont + sp[i].off, sp[i].len,
		    i * L_NEXT_READING);
	}
	if (rc == 0 && j.differs) {
		/* Two readings as likely, two values: neither is taken. */
		opt->ambiguous = 1;
		saop_detect_result_free(&j.res);
		free(j.buf);
		j.have = 0;
		if ((j.buf = malloc(plen + 1)) == NULL)
			rc = saop__fail(e, SAOP_ENOMEM, 0, "out of memory "
			    "merging");
		else if ((rc = scan_part(prefix, plen, j.js, j.wrapper,
		    opt->max_depth, &pr, e)) != 0)
			free(j.buf);
		else {
			memcpy(j.buf, prefix, plen);
			j.buf[plen] = '\0';
			j.len = plen;
			j.res = pr;
			j.have = 1;
		}
	}
	if (rc < 0) {
		if (j.have) {
			saop_detect_result_free(&j.res);
			free(j.buf);
		}
		return rc;
	}
	*out = j.buf;
	*outlen = j.len;
	rc = (int)j.res.verdict;
	if (res != NULL)
		*res = j.res;
	else
		saop_detect_result_free(&j.res);
	return rc;
}

/*
 * See saop-private.h: cont (clen bytes; cut: it was cut too) merged onto
 * the text s showed the model, and nothing else.  Returns the verdict
 * with *out (new) and *ambiguous, or a negative code.
 */
int
saop__shown_join(const struct saop__shown *s, const char *cont, size_t clen,
    int cut, char **out, size_t *outlen, struct saop_detect_result *res,
    int *ambiguous, struct saop_err *e)
{
	struct saop_resume_join j;
	int v;

	memset(&j, 0, sizeof(j));
	j.unseen = unseen_of(s);
	j.json_start = s->json_start;
	j.wrapper = s->wrapper;
	j.max_depth = s->max_depth;
	j.cut = cut;
	v = saop_resume_join(s->text, s->len, cont, clen, &j, out, outlen,
	    res, e);
	*ambiguous = j.ambiguous;
	return v;
}

/*
 * See saop.h: prefix and continuation merged, the most likely reading
 * kept.  Returns the verdict with *out (new), or a negative code.
 */
int
saop_resume_merge(const char *prefix, size_t plen, const char *cont,
    size_t clen, size_t max_depth, char **out, size_t *outlen,
    struct saop_detect_result *res, struct saop_err *e)
{
	struct saop_resume_join j;

	memset(&j, 0, sizeof(j));
	j.max_depth = max_depth;
	return saop_resume_join(prefix, plen, cont, clen, &j, out, outlen,
	    res, e);
}

/* ---- One record ---- */

/*
 * What the protocol reads of a record, once, before it starts: every
 * later step works on this and on its own outcome (struct work), never on
 * the record.
 */
struct given {
	const char *raw;		/* its answer (borrowed) */
	size_t len;
	const json_t *request;		/* its request (borrowed), NULL:
					   none */
	struct saop_detect_result r;	/* raw scanned as its answer */
	enum saop_state state;		/* the state it came with */
	const char *task;		/* its task id (borrowed, in tbuf, or
					   opts->task_id), else "" */
	long turn;			/* its turn, -1: none */
	char tbuf[32];
};

/*
 * Read into g what the protocol needs of rec (g then borrows from rec)
 * and scan its raw (saop_record_detect(); free g->r after).  Returns 0,
 * or a negative code with e filled: EDATA when raw is not a string or the
 * request not an object (g->r then not made), ENOMEM.
 */
static int
read_given(const json_t *rec, const struct saop_resume_opts *opts,
    struct given *g, struct saop_err *e)
{
	if ((g->raw = saop_record_raw(rec, &g->len)) == NULL) {
		saop__fail(e, SAOP_EDATA, 0, "the record has no string raw");
		snprintf(e->field, sizeof(e->field), "/raw");
		return -SAOP_EDATA;
	}
	g->request = saop_record_request(rec);
	if (g->request == NULL && saop_record_has(rec, SAOP_RECORD_REQUEST)) {
		saop__fail(e, SAOP_EDATA, 0, "the request is not an object");
		snprintf(e->field, sizeof(e->field), "/request");
		return -SAOP_EDATA;
	}
	if (saop_record_detect(rec, g->raw, g->len, opts->max_depth ?
	    opts->max_depth : SAOP_MAX_DEPTH, &g->r) < 0)
		return saop__fail(e, SAOP_ENOMEM, 0,
		    "scanning the raw output failed");
	g->state = saop_record_state(rec);
	if ((g->task = saop_record_task_id(rec, g->tbuf)) == NULL)
		g->task = opts->task_id != NULL ? opts->task_id : "";
	g->turn = saop_record_turn(rec);
	return 0;
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
	struct given g;
	int rc;

	if (request != NULL)
		*request = NULL;
	if ((rc = read_given(rec, opts, &g, e)) != 0)
		return rc;
	rc = g.r.verdict == SAOP_TRUNCATED;
	if (rc && request != NULL &&
	    (*request = saop_resume_request(g.request, g.raw,
	    (size_t)g.r.resume_index, g.r.last_valid_token, form_now(opts),
	    opts->context, e)) == NULL)
		rc = -e->code;
	saop_detect_result_free(&g.r);
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
	const struct saop_llm_cost *cost;
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
 * Log the event name with data (stolen) for the record g was read from,
 * when there is a store.  Returns 0: an event is a log (saop_event()
 * keeps its failure in the store).
 */
static int
event(const struct saop_resume_opts *o, const struct given *g,
    const char *name, json_t *data)
{
	if (o->store != NULL)
		saop_event(o->store, g->task, g->turn, name, data, NULL);
	json_decref(data);
	return 0;
}

/*
 * obj (stolen) with the counts of c set (saop_llm_cost_put()).  Returns
 * it, or NULL out of memory.
 */
static json_t *
with_cost(json_t *obj, const struct saop_llm_cost *c)
{
	if (saop_llm_cost_put(obj, c) != 0) {
		json_decref(obj);
		obj = NULL;
	}
	return obj;
}

/*
 * The outcome of the protocol while it runs: what the record is to
 * become, written on it once, at the end (write_outcome()).
 */
struct work {
	json_t *raw;		/* rec.raw to be (own); NULL: as it is */
	json_t *detect;		/* rec.detect to be (own); NULL: none */
	json_t *resume;		/* rec.resume to be (own); NULL: none */
	enum saop_state state;	/* the state to write; NONE: as it came */
};

/*
 * Make w.resume {attempts, status, sent_bytes, received_bytes,
 * prompt_tokens, completion_tokens, and ambiguous when answers were not
 * taken} from o and st.  Returns 0, or -SAOP_ENOMEM with e filled.
 */
static int
set_resume(struct work *w, const struct saop_resume_outcome *o,
    enum saop_resume_status st, struct saop_err *e)
{
	json_decref(w->resume);
	if ((w->resume = with_cost(json_pack("{s:i,s:s}", "attempts",
	    o->attempts, "status", saop_resume_status_name(st)), &o->cost)) ==
	    NULL || (o->ambiguous > 0 && json_object_set_new(w->resume,
	    "ambiguous", json_integer(o->ambiguous)) != 0))
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
	return 0;
}

/*
 * Settle the outcome into w: raw (len bytes, scanned as r), its detect,
 * resume (o, st) and state.  Returns 0, or a negative code with e filled.
 */
static int
finish(struct work *w, const char *raw, size_t len,
    const struct saop_detect_result *r, const struct saop_resume_outcome *o,
    enum saop_resume_status st, enum saop_state state, struct saop_err *e)
{
	struct saop_detect_result cut;
	json_t *s;

	memset(&cut, 0, sizeof(cut));
	if ((s = json_stringn(raw, len)) == NULL) {
		size_t ri = (size_t)r->resume_index;

		if (saop_utf8_valid(raw, len) == len)
			return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
		/*
		 * Only a character cut at the very end can do that (the
		 * scanner passed the rest): a JSON string cannot hold half a
		 * character, so the record keeps what precedes it, the
		 * resume point, and the model writes that character again.
		 */
		if (r->verdict != SAOP_TRUNCATED ||
		    saop_utf8_valid(raw, ri) != ri)
			return saop__fail(e, SAOP_EINTERNAL, 0,
			    "the merged output is not valid UTF-8");
		if ((s = json_stringn(raw, ri)) == NULL)
			return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
		if (scan_part(raw, (size_t)r->resume_index,
		    (size_t)r->json_start, r->wrapper, 0, &cut, e) != 0) {
			json_decref(s);
			return -e->code;
		}
		r = &cut;
	}
	json_decref(w->raw);
	json_decref(w->detect);
	w->raw = s;
	w->detect = saop_detect_result_json(r);
	saop_detect_result_free(&cut);
	if (w->detect == NULL || set_resume(w, o, st, e) != 0)
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
	w->state = state;
	return 0;
}

/*
 * Write w on rec, once: raw, detect, resume, state (each when w has it).
 * Returns 0, or -1 out of memory.
 */
static int
write_outcome(json_t *rec, const struct work *w)
{
	int bad = 0;

	if (w->raw != NULL)
		bad |= saop_record_set_raw(rec, json_string_value(w->raw),
		    json_string_length(w->raw)) != 0;
	if (w->detect != NULL)
		bad |= saop_record_set_detect(rec, json_incref(w->detect)) != 0;
	if (w->resume != NULL)
		bad |= saop_record_set_resume(rec, json_incref(w->resume)) != 0;
	if (w->state != SAOP_STATE_NONE)
		bad |= saop_record_set_state(rec, w->state) != 0;
	return bad ? -1 : 0;
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

/*
 * The protocol on the answer g holds, into w and out: when it is cut,
 * call the model up to opts->max_attempts times, merging each
 * continuation; log the events and the partial_completion_log row.
 * g->r becomes the protocol's own (g->r is then zeroed).  Returns 0, or a
 * negative code with e filled (w then holds the progress made, or
 * nothing).
 */
static int
resume(struct given *g, struct saop_resume_opts *opts, struct work *w,
    struct saop_resume_outcome *out, struct saop_err *e)
{
	struct saop_detect_result mr;
	struct saop__shown sh;
	struct saop_llm_answer ans;
	struct progress pg;
	struct saop_err ce, be;
	struct log_row row;
	json_t *cr;
	char *m;
	size_t mlen;
	int max, rc, v, amb, again = 0, done = 0, call_rc = 0, over = 0;

	out->verdict = g->r.verdict;
	if (g->r.verdict != SAOP_TRUNCATED) {
		saop_llm_cost_init(&out->cost);
		if (set_resume(w, out, SAOP_RESUME_SKIPPED, e) != 0)
			return -e->code;
		if (out->verdict == SAOP_INVALID)
			w->state = SAOP_STATE_INVALID;
		else if (g->state == SAOP_STATE_TRUNCATED)
			w->state = SAOP_STATE_OK;
		return 0;
	}
	row.task_id = g->task;
	row.turn = g->turn >= 0 ? g->turn : 0;
	row.truncation_index = g->r.truncation_index;
	row.initial_length = g->len;
	saop_llm_cost_init(&out->cost);
	row.cost = &out->cost;
	if (opts->no_call) {
		out->status = SAOP_RESUME_SUSPENDED;
		return finish(w, g->raw, g->len, &g->r, out,
		    SAOP_RESUME_SUSPENDED, SAOP_STATE_TRUNCATED, e);
	}
	event(opts, g, SAOP_EVENT_PARTIAL_COMPLETION_DETECTED,
	    json_pack("{s:I,s:I}", "truncation_index",
	    (json_int_t)g->r.truncation_index, "length", (json_int_t)g->len));
	max = opts->max_attempts > 0 ? opts->max_attempts :
	    SAOP_MAX_RESUME_ATTEMPTS;
	if ((pg.buf = malloc(g->len + 1)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
	memcpy(pg.buf, g->raw, g->len);
	pg.buf[g->len] = '\0';
	pg.len = g->len;
	pg.res = g->r;
	memset(&g->r, 0, sizeof(g->r));
	while (out->attempts < max && !done) {
		enum saop_resume_form form = form_now(opts);
		size_t sent = 0;

		/*
		 * The text of this attempt, one variable: what the request
		 * shows the model as its own and what its answer is merged
		 * onto.  What was received up to its resume point (a cut
		 * escape or character left out), with what earlier answers
		 * added to it, all decided before this request is built.
		 */
		memset(&sh, 0, sizeof(sh));
		sh.text = pg.buf;
		sh.len = (size_t)pg.res.resume_index;
		sh.token = pg.res.last_valid_token;
		sh.json_start = (size_t)pg.res.json_start;
		sh.wrapper = pg.res.wrapper;
		sh.form = form;
		sh.context = opts->context;
		sh.max_depth = opts->max_depth;
		sh.again = again;
		cr = saop__shown_request(&sh, g->request, &sent, e);
		if (cr == NULL) {
			rc = -e->code;
			goto out;
		}
		if (opts->budget != NULL &&
		    saop_budget_check(opts->budget, cr, &be) != 0) {
			/* Over --max-cost: no more attempts. */
			json_decref(cr);
			over = 1;
			break;
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
		saop_llm_cost_add(&out->cost, sent, &ans);
		if (opts->budget != NULL)
			saop_budget_spend(opts->budget, &ans);
		if (ans.raw != NULL && (call_rc == 0 || ans.raw_len > 0)) {
			v = saop__shown_join(&sh, ans.raw, ans.raw_len,
			    call_rc != 0 ||
			    strcmp(ans.finish_reason, "length") == 0, &m,
			    &mlen, &mr, &amb, e);
			if (v < 0) {
				saop_llm_answer_free(&ans);
				rc = v;
				goto out;
			}
			again = amb;
			if (amb) {
				/* Not taken: the same text shown once more,
				 * saying why (saop-resume(1)). */
				out->ambiguous++;
				saop_detect_result_free(&mr);
				free(m);
			} else if (v == SAOP_INVALID) {
				saop_detect_result_free(&mr);
				free(m);
			} else {
				/* Complete, or truncated further on: the
				 * text the next request shows. */
				progress_take(&pg, m, mlen, &mr);
				done = v == SAOP_COMPLETE;
			}
		}
		saop_llm_answer_free(&ans);
		if (call_rc < 0)
			break;
		call_rc = 0;
	}
	if (done) {
		out->status = SAOP_RESUME_RESOLVED;
		out->verdict = SAOP_COMPLETE;
		if ((rc = finish(w, pg.buf, pg.len, &pg.res, out,
		    SAOP_RESUME_RESOLVED, SAOP_STATE_OK, e)) != 0)
			goto out;
	} else if (call_rc < 0) {
		out->status = SAOP_RESUME_SUSPENDED;
		out->verdict = pg.res.verdict;
		if ((rc = finish(w, pg.buf, pg.len, &pg.res, out,
		    SAOP_RESUME_SUSPENDED, SAOP_STATE_TRUNCATED, e)) != 0)
			goto out;
		/* What the calls cost, a refused one too (its tokens are
		 * paid): no partial_completion_log row says it. */
		event(opts, g, SAOP_EVENT_RESUME_FAILED,
		    with_cost(json_pack("{s:i,s:s,s:s}", "attempts",
		    out->attempts, "status",
		    saop_resume_status_name(SAOP_RESUME_SUSPENDED), "error",
		    ce.msg), &out->cost));
		*e = ce;
		rc = call_rc;
		goto out;
	} else {
		out->status = SAOP_RESUME_EXHAUSTED;
		out->verdict = pg.res.verdict;
		if ((rc = finish(w, pg.buf, pg.len, &pg.res, out,
		    SAOP_RESUME_EXHAUSTED, SAOP_STATE_RESUME_EXHAUSTED, e)) != 0)
			goto out;
	}
	row.attempts = out->attempts;
	row.status = saop_resume_status_name(out->status);
	if (opts->store != NULL &&
	    (rc = saop__store_tx(opts->store, 0, insert_row, &row, e)) != 0)
		goto out;
	rc = event(opts, g, done ? SAOP_EVENT_RESUME_SUCCEEDED :
	    SAOP_EVENT_RESUME_FAILED, with_cost(json_pack("{s:i,s:s,s:I}",
	    "attempts", out->attempts, "status", row.status, "length",
	    (json_int_t)pg.len), &out->cost));
	if (rc == 0 && over) {
		/* Exhausted by the budget: the error names the limit. */
		*e = be;
		rc = -SAOP_EBUDGET;
	}
out:
	free(pg.buf);
	saop_detect_result_free(&pg.res);
	return rc;
}

/*
 * See saop.h: resume rec in place: read it, run the protocol, write the
 * outcome once.  Returns 0 with out filled, or a negative code (rec keeps
 * the progress made).
 */
int
saop_resume_record(json_t *rec, struct saop_resume_opts *opts,
    struct saop_resume_outcome *out, struct saop_err *e)
{
	struct given g;
	struct work w = { NULL, NULL, NULL, SAOP_STATE_NONE };
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = read_given(rec, opts, &g, e)) != 0)
		return rc;
	if (opts->budget != NULL)
		saop_budget_record(opts->budget, rec);
	rc = resume(&g, opts, &w, out, e);
	saop_detect_result_free(&g.r);
	if ((write_outcome(rec, &w) != 0 ||
	    saop_record_add_cost(rec, "recovery", &out->cost) != 0) && rc >= 0)
		rc = saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
	out->state = w.state != SAOP_STATE_NONE ? w.state : g.state;
	json_decref(w.raw);
	json_decref(w.detect);
	json_decref(w.resume);
	return rc;
}
