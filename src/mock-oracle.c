/*
 * mock-oracle.c: saop-mock's --oracle, a model that knows the whole
 * intended answers and carries on from what a request shows it wrote
 * (see mock-oracle.h and saop-mock(1)).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cli.h"
#include "mock-lines.h"
#include "mock-oracle.h"

/* How the oracle carries on from where the request shows it stopped. */
enum kind {
	K_HONEST,		/* exactly from there */
	K_REPEAT,		/* the last k characters shown, again, first */
	K_RESTART,		/* the open token again from its first byte */
	K_RESTART_STRING,	/* the open string again from its quote */
	K_RESTART_NOQUOTE,	/* the open string again without its quote */
	K_BLANK,		/* two blank lines first */
	K_FENCE,		/* the rest in a ```json fence */
	K_PROSE,		/* a line of prose first */
	K_WHOLE			/* the whole answer again from its start */
};

/* A manner: its kind, and k of repeat:K. */
struct manner {
	enum kind kind;
	long k;
};

/* The manners' names, but repeat:K's. */
static const struct {
	const char *name;
	enum kind kind;
} kinds[] = {
	{ "honest", K_HONEST },
	{ "restart", K_RESTART },
	{ "restart-string", K_RESTART_STRING },
	{ "restart-noquote", K_RESTART_NOQUOTE },
	{ "blank", K_BLANK },
	{ "fence", K_FENCE },
	{ "prose", K_PROSE },
	{ "whole", K_WHOLE }
};

/* What K_PROSE and K_FENCE write around the rest. */
#define PROSE_LEAD	"Here is the rest of the JSON:\n"
#define FENCE_LEAD	"```json\n"
#define FENCE_CLOSE	"\n```"

/* One intended answer (one line of the file). */
struct answer {
	long line;
	const char *text;	/* owned by lines */
	size_t len;
	struct manner manner;
	long max_chars;		/* characters a call, 0: no limit */
};

static struct answer *answers;
static size_t nanswers;
static json_t *lines;		/* the parsed lines: the strings' owner */
static const char *path_of;	/* the file, for its errors */
static struct manner def_manner;	/* --manner */
static long def_max_chars = 400;	/* --max-chars */

/*
 * Read manner s ("honest", "repeat:3"...) into m.  Returns 0, or -1 when
 * s is not one.
 */
static int
parse_manner(const char *s, struct manner *m)
{
	size_t i;

	if (strncmp(s, "repeat:", 7) == 0) {
		char *end;
		long k;

		if (s[7] < '0' || s[7] > '9')
			return -1;
		errno = 0;
		k = strtol(s + 7, &end, 10);
		if (*end != '\0' || errno != 0 || k < 1 || k > 100000000)
			return -1;
		m->kind = K_REPEAT;
		m->k = k;
		return 0;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(s, kinds[i].name) == 0) {
			m->kind = kinds[i].kind;
			m->k = 0;
			return 0;
		}
	return -1;
}

/* The name of manner m in buf (size bytes).  Returns buf. */
static const char *
manner_name(const struct manner *m, char *buf, size_t size)
{
	size_t i;

	if (m->kind == K_REPEAT) {
		snprintf(buf, size, "repeat:%ld", m->k);
		return buf;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == m->kind)
			snprintf(buf, size, "%s", kinds[i].name);
	return buf;
}

/* See mock-oracle.h.  Returns 0, or -1 when manner is not one. */
int
oracle_defaults(const char *manner, long max_chars)
{
	if (manner != NULL && parse_manner(manner, &def_manner) != 0)
		return -1;
	def_max_chars = max_chars;
	return 0;
}

/* A line of the answers refused (mock_line_error()): exits 65. */
#define oracle_error(line, member, ...) \
	mock_line_error(path_of, (line), (member), __VA_ARGS__)

/* Fill a from the line v (line): a string, or an object; exits 65. */
static void
parse_answer(struct answer *a, const json_t *v, long line)
{
	const char *key;
	const json_t *m;

	memset(a, 0, sizeof(*a));
	a->line = line;
	a->manner = def_manner;
	a->max_chars = def_max_chars;
	if (json_is_string(v)) {
		a->text = json_string_value(v);
		a->len = json_string_length(v);
		return;
	}
	if (!json_is_object(v))
		oracle_error(line, NULL, "an answer is a JSON string or an "
		    "object with \"text\"");
	json_object_foreach((json_t *)v, key, m) {
		if (strcmp(key, "text") == 0) {
			if (!json_is_string(m))
				oracle_error(line, key, "not a string");
			a->text = json_string_value(m);
			a->len = json_string_length(m);
		} else if (strcmp(key, "manner") == 0) {
			if (!json_is_string(m) || parse_manner(
			    json_string_value(m), &a->manner) != 0)
				oracle_error(line, key, "not a manner (honest, "
				    "repeat:K, restart, restart-string, "
				    "restart-noquote, blank, fence, prose, "
				    "whole)");
		} else if (strcmp(key, "max_chars") == 0) {
			if (!json_is_integer(m) || json_integer_value(m) < 0 ||
			    json_integer_value(m) > 1000000000)
				oracle_error(line, key, "not a whole number "
				    "from 0 to 1000000000");
			a->max_chars = (long)json_integer_value(m);
		} else {
			oracle_error(line, key, "not a member of an answer");
		}
	}
	if (a->text == NULL)
		oracle_error(line, NULL, "an answer object needs \"text\"");
}

/* mock_read_lines()'s callback: the line v (line) one more answer. */
static void
oracle_line(void *arg, json_t *v, long line)
{
	struct answer *na;

	(void)arg;
	if ((na = realloc(answers, (nanswers + 1) * sizeof(*na))) == NULL)
		cli_die_nomem();
	answers = na;
	parse_answer(&answers[nanswers++], v, line);
}

/* See mock-oracle.h: read the answers at path; exits 66 or 65. */
void
oracle_load(const char *path)
{
	long line;

	path_of = path;
	lines = mock_read_lines(path, JSON_DECODE_ANY, oracle_line, NULL,
	    &line);
	if (nanswers == 0)
		oracle_error(line, NULL, "the file has no answer");
}

/* See mock-oracle.h: free the answers. */
void
oracle_free(void)
{
	free(answers);
	answers = NULL;
	nanswers = 0;
	json_decref(lines);
	lines = NULL;
}

/* ---- what a request shows ---- */

/* A growing text. */
struct text {
	char *s;
	size_t len;
};

/* Append s[0..n) to t.  Returns 0, or -1 when out of memory. */
static int
text_add(struct text *t, const char *s, size_t n)
{
	char *ns = realloc(t->s, t->len + n + 1);

	if (ns == NULL)
		return -1;
	memcpy(ns + t->len, s, n);
	t->s = ns;
	t->len += n;
	t->s[t->len] = '\0';
	return 0;
}

/*
 * Append to t the text of a turn's content c: a string, or the "text" of
 * each part or block of an array.  Returns 0, or -1 when out of memory.
 */
static int
content_text(const json_t *c, struct text *t)
{
	const json_t *x;
	size_t i;

	if (json_is_string(c))
		return text_add(t, json_string_value(c), json_string_length(c));
	json_array_foreach(c, i, x) {
		const json_t *s = json_object_get(x, "text");

		if (json_is_string(s) && text_add(t, json_string_value(s),
		    json_string_length(s)) != 0)
			return -1;
	}
	return 0;
}

/*
 * The turns of body in its wire format: Gemini's contents, the Responses
 * input items, or the messages (chat completions, Anthropic); NULL when
 * it has none of them.  *gemini is set for Gemini's.
 */
static const json_t *
turns_of(const json_t *body, int *gemini)
{
	const json_t *t;

	*gemini = 0;
	if (json_is_array(t = json_object_get(body, "contents"))) {
		*gemini = 1;
		return t;
	}
	if (json_is_array(t = json_object_get(body, "input")))
		return t;
	if (json_is_array(t = json_object_get(body, "messages")))
		return t;
	return NULL;
}

/* 1 when turn m is the model's own (assistant, Gemini's model). */
static int
own_turn(const json_t *m)
{
	const char *role = json_string_value(json_object_get(m, "role"));

	return role != NULL && (strcmp(role, "assistant") == 0 ||
	    strcmp(role, "model") == 0);
}

/* Append the text of turn m to t.  Returns 0, or -1 when out of memory. */
static int
turn_text(const json_t *m, int gemini, struct text *t)
{
	return content_text(json_object_get(m, gemini ? "parts" : "content"),
	    t);
}

/* ---- where to carry on from ---- */

/* 1 when byte c continues a UTF-8 character, else 0. */
static int
cont_byte(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/* The offset k characters back from at in s (at least 0). */
static size_t
back_chars(const char *s, size_t at, long k)
{
	while (k-- > 0 && at > 0) {
		at--;
		while (at > 0 && cont_byte((unsigned char)s[at]))
			at--;
	}
	return at;
}

/* The offset n characters on from at in s[0..len) (at most len). */
static size_t
on_chars(const char *s, size_t len, size_t at, long n)
{
	while (n-- > 0 && at < len) {
		at++;
		while (at < len && cont_byte((unsigned char)s[at]))
			at++;
	}
	return at;
}

/*
 * Where the JSON string that s[0..n) ends inside opens (its quote), or -1
 * when s ends outside a string.
 */
static long
open_string(const char *s, size_t n)
{
	int in = 0, esc = 0;
	long start = -1;
	size_t i;

	for (i = 0; i < n; i++) {
		if (in) {
			if (esc)
				esc = 0;
			else if (s[i] == '\\')
				esc = 1;
			else if (s[i] == '"')
				in = 0;
		} else if (s[i] == '"') {
			in = 1;
			start = (long)i;
		}
	}
	return in ? start : -1;
}

/*
 * Where the token that s[0..n) ends inside starts: an open string (its
 * quote), a number or literal (its first byte); -1 when s ends between
 * tokens.
 */
static long
open_token(const char *s, size_t n)
{
	long q = open_string(s, n);
	size_t i = n;

	if (q >= 0)
		return q;
	while (i > 0 && ((s[i - 1] >= '0' && s[i - 1] <= '9') ||
	    (s[i - 1] >= 'a' && s[i - 1] <= 'z') ||
	    (s[i - 1] >= 'A' && s[i - 1] <= 'Z') ||
	    strchr("+-.", s[i - 1]) != NULL))
		i--;
	return i < n ? (long)i : -1;
}

/*
 * Where an answer in manner m starts in a->text when the request shows
 * a->text[0..at) as written (never past at).
 */
static size_t
start_of(const struct answer *a, const struct manner *m, size_t at)
{
	long q;

	switch (m->kind) {
	case K_REPEAT:
		return back_chars(a->text, at, m->k);
	case K_RESTART:
		q = open_token(a->text, at);
		return q >= 0 ? (size_t)q : at;
	case K_RESTART_STRING:
		q = open_string(a->text, at);
		return q >= 0 ? (size_t)q : at;
	case K_RESTART_NOQUOTE:
		q = open_token(a->text, at);
		return q >= 0 && a->text[q] == '"' ? (size_t)q + 1 : at;
	case K_WHOLE:
		return 0;
	default:
		return at;
	}
}

/* ---- the answer ---- */

/*
 * r's error (a request the oracle cannot place): "form: why" and the
 * last characters of what it showed, text[0..len).  Returns 1.
 */
static int
cannot_place(struct oracle_reply *r, const char *form, const char *why,
    const char *text, size_t len)
{
	size_t from = len > 80 ? len - 80 : 0;

	while (from < len && cont_byte((unsigned char)text[from]))
		from++;
	snprintf(r->error, sizeof(r->error), "saop-mock: %s: %s%s%.*s%s",
	    form, why, len > 0 ? " \"" : "", (int)(len - from), text + from,
	    len > 0 ? "\"" : "");
	r->log = json_pack("{s:s, s:s}", "form", form, "error", r->error);
	return 1;
}

/*
 * The text of a's answer from a->text[from..end), in manner m, into r
 * (text, len, length) with its log.  Returns 0, or -1 when out of memory.
 */
static int
dress(struct oracle_reply *r, const struct answer *a,
    const struct manner *m, size_t from, size_t end)
{
	const char *lead = "", *close = "";
	struct text t = { NULL, 0 };

	if (m->kind == K_BLANK)
		lead = "\n\n";
	else if (m->kind == K_PROSE)
		lead = PROSE_LEAD;
	else if (m->kind == K_FENCE) {
		lead = FENCE_LEAD;
		if (end == a->len)
			close = FENCE_CLOSE;
	}
	if (text_add(&t, lead, strlen(lead)) != 0 ||
	    text_add(&t, a->text + from, end - from) != 0 ||
	    text_add(&t, close, strlen(close)) != 0) {
		free(t.s);
		return -1;
	}
	r->line = a->line;
	r->text = t.s;
	r->len = t.len;
	r->length = end < a->len;
	return 0;
}

/*
 * See mock-oracle.h: place what body shows as written in an answer, then
 * answer from there.  Returns 0, 1 (r->error), or -1 (out of memory).
 */
int
oracle_answer(const json_t *body, struct oracle_reply *r)
{
	struct text user = { NULL, 0 }, shown = { NULL, 0 };
	const struct answer *a = NULL;
	const json_t *turns, *last;
	const char *form, *p;
	size_t i, at = 0, from, end, nturns;
	int gemini, tail = 0, rc = -1;
	char mname[32];
	struct manner m;

	memset(r, 0, sizeof(*r));
	turns = turns_of(body, &gemini);
	nturns = json_array_size(turns);
	last = json_array_get(turns, nturns - 1);
	if (json_is_string(json_object_get(body, "input"))) {
		/* A Responses input of one string: a user turn. */
		if (content_text(json_object_get(body, "input"), &user) != 0)
			goto out;
	} else if (nturns == 0) {
		rc = cannot_place(r, "none", "the request has no turn", "", 0);
		goto out;
	} else if (own_turn(last)) {
		if (turn_text(last, gemini, &shown) != 0 || (nturns > 1 &&
		    turn_text(json_array_get(turns, nturns - 2), gemini,
		    &user) != 0))
			goto out;
	} else if (turn_text(last, gemini, &user) != 0) {
		goto out;
	}
	form = last != NULL && own_turn(last) ? "prefill" : "first";
	if (user.s != NULL && strcmp(form, "first") == 0 &&
	    (p = strstr(user.s, SAOP_RESUME_PARTIAL_LABEL)) != NULL) {
		/* The partial output quoted, to the end of the turn. */
		form = "user";
		p += strlen(SAOP_RESUME_PARTIAL_LABEL);
		if (text_add(&shown, p, user.len - (size_t)(p - user.s)) != 0)
			goto out;
	} else if (user.s != NULL && strcmp(form, "first") == 0 &&
	    (p = strstr(user.s, SAOP_RESUME_TOKEN_LABEL)) != NULL) {
		/* The last valid token, maybe the note that the last
		 * continuation read two ways, maybe what came after it. */
		const char *tok = p + strlen(SAOP_RESUME_TOKEN_LABEL);
		const char *end_all = user.s + user.len;
		const char *after = memmem(tok, (size_t)(end_all - tok),
		    SAOP_RESUME_TAIL_LABEL, strlen(SAOP_RESUME_TAIL_LABEL));
		const char *tok_end = after != NULL ? after : end_all;
		const char *again = memmem(tok, (size_t)(tok_end - tok),
		    SAOP_RESUME_AGAIN_LABEL, strlen(SAOP_RESUME_AGAIN_LABEL));

		form = "tail";
		tail = 1;
		if (text_add(&shown, tok, (size_t)((again != NULL ? again :
		    tok_end) - tok)) != 0 || (after != NULL && text_add(&shown,
		    after + strlen(SAOP_RESUME_TAIL_LABEL), (size_t)(end_all -
		    after) - strlen(SAOP_RESUME_TAIL_LABEL)) != 0) ||
		    text_add(&shown, "", 0) != 0)
			goto out;
	} else if (shown.s == NULL && text_add(&shown, "", 0) != 0) {
		goto out;
	}
	for (i = 0; i < nanswers && a == NULL; i++) {
		const struct answer *c = &answers[i];

		if (tail) {
			/* The first place it occurs, in the first answer. */
			p = memmem(c->text, c->len, shown.s, shown.len);
			if (p != NULL) {
				a = c;
				at = (size_t)(p - c->text) + shown.len;
			}
		} else if (c->len >= shown.len &&
		    memcmp(c->text, shown.s, shown.len) == 0) {
			a = c;
			at = shown.len;
		}
	}
	if (a == NULL) {
		rc = cannot_place(r, form, tail ? "the tail shown is in no "
		    "answer:" : "no answer begins with the text shown:",
		    shown.s, shown.len);
		goto out;
	}
	m = a->manner;
	/* Shown a tail, the model does not know where the token began. */
	from = tail ? at : start_of(a, &m, at);
	end = a->max_chars > 0 ? on_chars(a->text, a->len, at, a->max_chars) :
	    a->len;
	if (dress(r, a, &m, from, end) != 0)
		goto out;
	r->log = json_pack("{s:I, s:s, s:s, s:I, s:I, s:I, s:s%, s:I, s:I, "
	    "s:s}", "answer", (json_int_t)a->line, "form", form, "manner",
	    manner_name(&m, mname, sizeof(mname)), "shown_bytes",
	    (json_int_t)shown.len, "at", (json_int_t)at, "from",
	    (json_int_t)from, "text", r->text, r->len, "text_bytes",
	    (json_int_t)r->len, "turn_bytes", (json_int_t)(user.len +
	    (strcmp(form, "prefill") == 0 ? shown.len : 0)), "finish",
	    r->length ? "length" : "stop");
	rc = r->log != NULL ? 0 : -1;
out:
	free(user.s);
	free(shown.s);
	if (rc < 0)
		oracle_reply_free(r);
	return rc;
}

/* See mock-oracle.h: free what r holds. */
void
oracle_reply_free(struct oracle_reply *r)
{
	free(r->text);
	r->text = NULL;
	json_decref(r->log);
	r->log = NULL;
}
