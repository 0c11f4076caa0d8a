/*
 * llm-answer.c: the answer parser: SSE, one JSON body or Ollama NDJSON,
 * however the network splits it, into one normalised answer (text, tool
 * calls, finish reason, usage, errors inside the stream).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "llm-int.h"

/* Free what a holds and zero it. */
void
saop_llm_answer_free(struct saop_llm_answer *a)
{
	if (a == NULL)
		return;
	free(a->raw);
	json_decref(a->tool_calls);
	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
}

/* ---- reading the answer ---- */

/*
 * Parse the n bytes at s as one JSON text.  Providers send integers beyond
 * 64 bits (Together's "seed"), which jansson refuses: then read every
 * integer as a real.  Returns a new reference, or NULL with je filled.
 */
json_t *
saop__llm_load(const char *s, size_t n, json_error_t *je)
{
	json_t *o = json_loadb(s, n, JSON_ALLOW_NUL, je);

	if (o == NULL && strstr(je->text, "too big") != NULL)
		o = json_loadb(s, n, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL,
		    je);
	return o;
}

/* The number v as a long into *out; 0, or -1 when v is no number. */
static int
num(const json_t *v, long *out)
{
	double d;

	if (json_is_integer(v)) {
		*out = (long)json_integer_value(v);
		return 0;
	}
	if (!json_is_real(v))
		return -1;
	d = json_real_value(v);
	if (d < (double)LONG_MIN || d > (double)LONG_MAX)
		return -1;
	*out = (long)d;
	return 0;
}

/*
 * The neutral finish reason for a provider's word w.  Returns "stop",
 * "length", "tool_calls" or, for a word it does not know, "error".
 */
static const char *
normal_finish(const char *w)
{
	static const char *const stop[] = { "stop", "end_turn",
	    "stop_sequence", "pause_turn", "eos", "STOP", NULL };
	static const char *const length[] = { "length", "max_tokens",
	    "model_context_window_exceeded", "MAX_TOKENS", NULL };
	static const char *const tools[] = { "tool_calls", "tool_use",
	    "function_call", NULL };
	int i;

	for (i = 0; stop[i] != NULL; i++)
		if (strcmp(w, stop[i]) == 0)
			return "stop";
	for (i = 0; length[i] != NULL; i++)
		if (strcmp(w, length[i]) == 0)
			return "length";
	for (i = 0; tools[i] != NULL; i++)
		if (strcmp(w, tools[i]) == 0)
			return "tool_calls";
	return "error";
}

/* Set p's finish reason from the provider's word v, when v is a string. */
static void
set_finish(struct saop__llm_parser *p, const json_t *v)
{
	if (json_is_string(v))
		snprintf(p->finish, sizeof(p->finish), "%s",
		    normal_finish(json_string_value(v)));
}


/*
 * Record an error that came inside the stream (an Anthropic error event,
 * an OpenRouter error chunk, an Ollama error line): the first one wins.
 * Its message is masked of the key before it is cut to size.
 */
static void
stream_error(struct saop__llm_parser *p, const json_t *err)
{
	char full[SHOWN_SRC_MAX];

	if (p->err != 0)
		return;
	p->err = saop__llm_classify_error(err, 0, full, sizeof(full));
	saop__llm_mask_secret(full, p->key);
	saop__llm_clip(p->errmsg, sizeof(p->errmsg), full,
	    sizeof(p->errmsg) - 1);
	snprintf(p->finish, sizeof(p->finish), "error");
}

/*
 * Describe where the parser is in the answer: "SSE event 3 (byte 140 of
 * the answer)", "NDJSON line 2 (...)" or "the JSON body".
 */
static void
where(const struct saop__llm_parser *p, char *out, size_t outsz)
{
	if (p->mode == M_SSE || p->mode == M_NDJSON)
		snprintf(out, outsz, "%s %lu (byte %zu of the answer)",
		    p->mode == M_SSE ? "SSE event" : "NDJSON line", p->units,
		    p->unit_off);
	else
		snprintf(out, outsz, "the JSON body");
}

/*
 * The answer is not the protocol: record SAOP_EPROTO (the first problem
 * wins) with a message naming the event or line and what is wrong with
 * it.  Nothing more of the answer is taken, and parser_end() drops what
 * was (a damaged answer is never merged).
 */
static void SAOP__PRINTF(2, 3)
bad_chunk(struct saop__llm_parser *p, const char *fmt, ...)
{
	char at[96], what[160];
	va_list ap;

	if (p->err != 0)
		return;
	p->err = SAOP_EPROTO;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	where(p, at, sizeof(at));
	snprintf(p->errmsg, sizeof(p->errmsg), "broken answer: %s: %s", at,
	    what);
}

/* Append the string s to the answer text (nothing once an error came). */
static void
add_text(struct saop__llm_parser *p, const json_t *s)
{
	int r;

	if (!json_is_string(s) || p->fail || p->err)
		return;
	r = saop__buf_append_max(&p->text, json_string_value(s),
	    json_string_length(s), p->limit);
	if (r != 0)
		p->fail = -r;
}

/*
 * The tool call under key (an OpenAI tool index or an Anthropic block
 * index), made when create is set; NULL when there is none, or on
 * ENOMEM (p->fail set) or past 1024 calls.
 */
static struct tool *
tool_at(struct saop__llm_parser *p, long key, int create)
{
	struct tool *nt;
	size_t i;

	for (i = 0; i < p->ntools; i++)
		if (p->tools[i].key == key)
			return &p->tools[i];
	if (!create || p->ntools >= 1024)
		return NULL;
	if ((nt = realloc(p->tools, (p->ntools + 1) * sizeof(*nt))) == NULL) {
		p->fail = SAOP_ENOMEM;
		return NULL;
	}
	p->tools = nt;
	nt = &p->tools[p->ntools++];
	memset(nt, 0, sizeof(*nt));
	nt->key = key;
	return nt;
}

/* Set *dst to a copy of the string v, unless it is set already. */
static void
tool_str(char **dst, const json_t *v)
{
	if (json_is_string(v) && *dst == NULL)
		*dst = strdup(json_string_value(v));
}

/* Append the string v to t's arguments (nothing once an error came). */
static void
tool_args(struct saop__llm_parser *p, struct tool *t, const json_t *v)
{
	int r;

	if (t == NULL || !json_is_string(v) || p->fail || p->err)
		return;
	r = saop__buf_append_max(&t->args, json_string_value(v),
	    json_string_length(v), p->limit);
	if (r != 0)
		p->fail = -r;
}

/* Take the token counts of a usage object (either format). */
static void
usage_of(struct saop__llm_parser *p, const json_t *u)
{
	json_t *v;

	if (!json_is_object(u))
		return;
	if ((v = json_object_get(u, "prompt_tokens")) == NULL)
		v = json_object_get(u, "input_tokens");
	num(v, &p->prompt);
	if ((v = json_object_get(u, "completion_tokens")) == NULL)
		v = json_object_get(u, "output_tokens");
	num(v, &p->completion);
}

/* 1 when v is absent, null or of the JSON type t; else 0. */
static int
absent_or(const json_t *v, json_type t)
{
	return v == NULL || json_is_null(v) || json_typeof(v) == t;
}

/*
 * 0 when the OpenAI choice ch (a chunk's or a whole body's) has a known
 * shape: an object whose delta (or message) is an object, with a content
 * that is a string or an array of parts, tool_calls an array and
 * finish_reason a string (each may be absent or null).  Else -1 and
 * SAOP_EPROTO recorded.
 */
static int
openai_choice_ok(struct saop__llm_parser *p, const json_t *ch)
{
	const json_t *d;

	if (!json_is_object(ch)) {
		bad_chunk(p, "a choice is not an object");
		return -1;
	}
	if ((d = json_object_get(ch, "delta")) == NULL)
		d = json_object_get(ch, "message");
	if (!absent_or(d, JSON_OBJECT)) {
		bad_chunk(p, "the delta is not an object");
		return -1;
	}
	if (!absent_or(json_object_get(d, "content"), JSON_STRING) &&
	    !json_is_array(json_object_get(d, "content"))) {
		bad_chunk(p, "the content is not a string");
		return -1;
	}
	if (!absent_or(json_object_get(d, "tool_calls"), JSON_ARRAY)) {
		bad_chunk(p, "tool_calls is not an array");
		return -1;
	}
	if (!absent_or(json_object_get(ch, "finish_reason"), JSON_STRING)) {
		bad_chunk(p, "finish_reason is not a string");
		return -1;
	}
	return 0;
}

/* Add the text of content: a string, or the "text" parts of an array. */
static void
openai_content(struct saop__llm_parser *p, const json_t *c)
{
	const json_t *x;
	size_t i;

	if (!json_is_array(c)) {
		add_text(p, c);
		return;
	}
	json_array_foreach(c, i, x) {
		const char *t;

		if (!json_is_object(x)) {
			bad_chunk(p, "a part of the content is not an object");
			return;
		}
		t = json_string_value(json_object_get(x, "type"));
		if (t != NULL && strcmp(t, "text") == 0)
			add_text(p, json_object_get(x, "text"));
	}
}

/* An OpenAI chunk (delta) or a whole chat.completion (message). */
static void
openai_obj(struct saop__llm_parser *p, const json_t *o)
{
	json_t *chs, *ch, *d, *tc, *c;
	size_t i;

	usage_of(p, json_object_get(o, "usage"));
	/* OpenRouter: an error chunk after a 200 (even after a finish). */
	if ((c = json_object_get(o, "error")) != NULL && !json_is_null(c)) {
		stream_error(p, c);
		return;
	}
	if (!json_is_array(chs = json_object_get(o, "choices"))) {
		bad_chunk(p, "\"choices\" is not an array");
		return;
	}
	/* Azure's first chunk and the final usage chunk have no choice. */
	if ((ch = json_array_get(chs, 0)) == NULL)
		return;
	if (openai_choice_ok(p, ch) != 0)
		return;
	if ((d = json_object_get(ch, "delta")) == NULL)
		d = json_object_get(ch, "message");
	openai_content(p, json_object_get(d, "content"));
	json_array_foreach(json_object_get(d, "tool_calls"), i, tc) {
		json_t *f = json_object_get(tc, "function");
		long ix = (long)i;
		struct tool *t;

		if (!json_is_object(tc)) {
			bad_chunk(p, "a tool call is not an object");
			return;
		}
		num(json_object_get(tc, "index"), &ix);
		if ((t = tool_at(p, ix, 1)) == NULL)
			continue;
		tool_str(&t->id, json_object_get(tc, "id"));
		tool_str(&t->name, json_object_get(f, "name"));
		tool_args(p, t, json_object_get(f, "arguments"));
	}
	set_finish(p, json_object_get(ch, "finish_reason"));
}

/*
 * An Anthropic content_block_delta: text and tool input are taken;
 * thinking, signatures and citations are known and left; any other
 * delta is not the protocol.
 */
static void
anthropic_delta(struct saop__llm_parser *p, long ix, const json_t *o)
{
	static const char *const unused[] = { "thinking_delta",
	    "signature_delta", "citations_delta", NULL };
	const json_t *d = json_object_get(o, "delta");
	const char *dt = json_string_value(json_object_get(d, "type"));
	int i;

	if (!json_is_object(d) || dt == NULL) {
		bad_chunk(p, "a content_block_delta without a typed delta");
		return;
	}
	if (strcmp(dt, "text_delta") == 0) {
		if (!json_is_string(json_object_get(d, "text")))
			bad_chunk(p, "a text_delta without its text");
		add_text(p, json_object_get(d, "text"));
		return;
	}
	if (strcmp(dt, "input_json_delta") == 0) {
		if (!json_is_string(json_object_get(d, "partial_json")))
			bad_chunk(p, "an input_json_delta without its "
			    "partial_json");
		tool_args(p, tool_at(p, ix, 1),
		    json_object_get(d, "partial_json"));
		return;
	}
	for (i = 0; unused[i] != NULL; i++)
		if (strcmp(dt, unused[i]) == 0)
			return;
	bad_chunk(p, "a delta of unknown type '%.40s'", dt);
}

/*
 * 1 when the event o has a member that could hold part of the answer
 * (text, a delta, a content block), else 0.
 */
static int
carries_content(const json_t *o)
{
	static const char *const parts[] = { "delta", "text", "content",
	    "content_block", "partial_json", "message", NULL };
	int i;

	for (i = 0; parts[i] != NULL; i++)
		if (json_object_get(o, parts[i]) != NULL)
			return 1;
	return 0;
}

/*
 * An Anthropic stream event.  Known events that carry nothing saop uses
 * (ping, content_block_stop, thinking blocks) are left.  Anthropic may add
 * event types (its versioning policy asks clients to bear them), so an
 * event of unknown type is left too, unless it has a member that could
 * hold part of the answer: then, like a known one without its parts, it
 * is not the protocol, for nothing of the answer may be lost unseen.
 */
static void
anthropic_event(struct saop__llm_parser *p, const char *type, const json_t *o)
{
	json_t *d, *b;
	long ix = 0;
	struct tool *t;

	num(json_object_get(o, "index"), &ix);
	if (strcmp(type, "message_start") == 0) {
		if (!json_is_object(json_object_get(o, "message")))
			bad_chunk(p, "a message_start without its message");
		usage_of(p, json_object_get(json_object_get(o, "message"),
		    "usage"));
	} else if (strcmp(type, "content_block_start") == 0) {
		b = json_object_get(o, "content_block");
		d = json_object_get(b, "type");
		if (!json_is_string(d))
			bad_chunk(p, "a content_block_start without a typed "
			    "content_block");
		else if (strcmp(json_string_value(d), "text") == 0)
			add_text(p, json_object_get(b, "text"));
		else if (strcmp(json_string_value(d), "tool_use") == 0 &&
		    (t = tool_at(p, ix, 1)) != NULL) {
			tool_str(&t->id, json_object_get(b, "id"));
			tool_str(&t->name, json_object_get(b, "name"));
		}
	} else if (strcmp(type, "content_block_delta") == 0) {
		anthropic_delta(p, ix, o);
	} else if (strcmp(type, "message_delta") == 0) {
		d = json_object_get(o, "delta");
		if (!json_is_object(d) || !absent_or(json_object_get(d,
		    "stop_reason"), JSON_STRING))
			bad_chunk(p, "a message_delta without its delta");
		usage_of(p, json_object_get(o, "usage"));
		set_finish(p, json_object_get(d, "stop_reason"));
	} else if (strcmp(type, "message_stop") == 0) {
		p->done = 1;
	} else if (strcmp(type, "error") == 0) {
		stream_error(p, json_object_get(o, "error"));
	} else if (strcmp(type, "content_block_stop") != 0 &&
	    strcmp(type, "ping") != 0 && carries_content(o)) {
		bad_chunk(p, "an event of unknown type '%.40s'", type);
	}
}

/* A whole Anthropic Message. */
static void
anthropic_message(struct saop__llm_parser *p, const json_t *o)
{
	json_t *b, *in;
	size_t i;
	struct tool *t;
	char *s;

	if (!absent_or(json_object_get(o, "content"), JSON_ARRAY)) {
		bad_chunk(p, "the message's content is not an array");
		return;
	}
	usage_of(p, json_object_get(o, "usage"));
	json_array_foreach(json_object_get(o, "content"), i, b) {
		const char *bt = json_string_value(json_object_get(b, "type"));

		if (bt == NULL)
			continue;
		if (strcmp(bt, "text") == 0) {
			add_text(p, json_object_get(b, "text"));
		} else if (strcmp(bt, "tool_use") == 0 &&
		    (t = tool_at(p, (long)i, 1)) != NULL) {
			tool_str(&t->id, json_object_get(b, "id"));
			tool_str(&t->name, json_object_get(b, "name"));
			in = json_object_get(b, "input");
			s = in != NULL ? json_dumps(in, JSON_COMPACT |
			    JSON_ENCODE_ANY) : NULL;
			if (s != NULL && saop__buf_append_max(&t->args, s,
			    strlen(s), p->limit) != 0)
				p->fail = SAOP_ELIMIT;
			free(s);
		}
	}
	set_finish(p, json_object_get(o, "stop_reason"));
	p->done = 1;
}

/* An Ollama native object (one NDJSON line or a whole body). */
static void
ollama_obj(struct saop__llm_parser *p, const json_t *o)
{
	json_t *m = json_object_get(o, "message");

	if (!absent_or(json_object_get(o, "response"), JSON_STRING) ||
	    !absent_or(m, JSON_OBJECT) ||
	    !absent_or(json_object_get(m, "content"), JSON_STRING)) {
		bad_chunk(p, "the response is not a string");
		return;
	}
	add_text(p, json_object_get(o, "response"));
	add_text(p, json_object_get(m, "content"));
	if (json_is_true(json_object_get(o, "done"))) {
		const json_t *v = json_object_get(o, "done_reason");

		if (json_is_string(v))
			set_finish(p, v);
		else
			snprintf(p->finish, sizeof(p->finish), "stop");
		num(json_object_get(o, "prompt_eval_count"), &p->prompt);
		num(json_object_get(o, "eval_count"), &p->completion);
		p->done = 1;
	}
}

/*
 * One JSON value of any of the wire formats: an SSE event's data, an
 * NDJSON line, or (whole set) the whole body.  A value of no known shape
 * is not the protocol.  Once an error came, nothing more is read.
 */
static void
handle_obj(struct saop__llm_parser *p, const json_t *o, int whole)
{
	const char *type = json_string_value(json_object_get(o, "type"));

	if (p->err != 0)
		return;
	if (!json_is_object(o)) {
		bad_chunk(p, "not a JSON object");
		return;
	}
	if (json_object_get(o, "choices") != NULL) {
		openai_obj(p, o);
		if (whole && p->err == 0)
			p->done = 1;
	} else if (type != NULL && strcmp(type, "message") == 0) {
		anthropic_message(p, o);
	} else if (type != NULL && !whole) {
		anthropic_event(p, type, o);
	} else if (type != NULL && strcmp(type, "error") == 0) {
		stream_error(p, json_object_get(o, "error"));
	} else if (json_object_get(o, "error") != NULL) {
		stream_error(p, json_object_get(o, "error"));
	} else if (json_object_get(o, "done") != NULL ||
	    json_object_get(o, "response") != NULL ||
	    json_object_get(o, "message") != NULL) {
		ollama_obj(p, o);
	} else {
		bad_chunk(p, "not of a known wire format");
	}
}

/* Parse the n bytes at s as one JSON value and handle it (handle_obj). */
static void
handle_json(struct saop__llm_parser *p, const char *s, size_t n, int whole)
{
	json_error_t je;
	json_t *o;

	if (p->err != 0)
		return;
	if ((o = saop__llm_load(s, n, &je)) == NULL) {
		bad_chunk(p, "not JSON (%.120s, at byte %d of it)", je.text,
		    je.position);
		return;
	}
	handle_obj(p, o, whole);
	json_decref(o);
}

/* The SSE event read so far is complete: handle its data, if any. */
static void
sse_dispatch(struct saop__llm_parser *p)
{
	size_t i;

	p->in_event = 0;
	if (!p->has_data)
		return;
	p->has_data = 0;
	p->units++;
	for (i = 0; i < p->data.len && isspace((unsigned char)p->data.data[i]);
	    i++)
		;
	if (i == p->data.len)
		;			/* "data:" with nothing: keep-alive */
	else if (p->data.len == 6 && memcmp(p->data.data, "[DONE]", 6) == 0)
		p->done = 1;
	else
		handle_json(p, p->data.data, p->data.len, 0);
	p->data.len = 0;
}

/*
 * One SSE line (without its end), starting at body offset p->line_off:
 * a blank line ends the event, a comment is skipped, "data:" adds to the
 * event's data, other fields (event:, id:, retry:) are left.
 */
static void
sse_line(struct saop__llm_parser *p, const char *s, size_t n)
{
	const char *colon;
	size_t fl;
	int r;

	if (n == 0) {
		sse_dispatch(p);
		return;
	}
	if (s[0] == ':')
		return;			/* a comment: keep-alive, padding */
	if (!p->in_event) {
		p->in_event = 1;
		p->unit_off = p->line_off;
	}
	colon = memchr(s, ':', n);
	fl = colon != NULL ? (size_t)(colon - s) : n;
	if (fl != 4 || memcmp(s, "data", 4) != 0)
		return;			/* event:, id:, retry: */
	s += fl;
	n -= fl;
	if (n > 0) {
		s++;
		n--;
		if (n > 0 && *s == ' ') {
			s++;
			n--;
		}
	}
	if (p->has_data &&
	    (r = saop__buf_append_max(&p->data, "\n", 1, p->limit)) != 0)
		p->fail = -r;
	else if ((r = saop__buf_append_max(&p->data, s, n, p->limit)) != 0)
		p->fail = -r;
	if (p->data.data == NULL &&
	    saop__buf_append_max(&p->data, "", 0, p->limit) != 0)
		p->fail = SAOP_ENOMEM;
	p->has_data = 1;
}

/*
 * One line of an SSE or NDJSON body, starting at body offset off.  Once
 * the stream's end marker came ([DONE], message_stop, done: true), the
 * answer is whole: what follows it is not read, so that the answer is the
 * same whether or not the transfer broke after the marker.
 */
static void
do_line(struct saop__llm_parser *p, const char *s, size_t n, size_t off)
{
	size_t i;

	if (p->done)
		return;
	p->line_off = off;
	if (p->mode == M_SSE) {
		sse_line(p, s, n);
		return;
	}
	for (i = 0; i < n && isspace((unsigned char)s[i]); i++)
		;
	if (i < n) {
		p->units++;
		p->unit_off = off;
		handle_json(p, s, n, 0);
	}
}

/*
 * Tell the wire format of the answer (p->mode) from its status, its
 * Content-Type and, when neither says, the first byte of s (n bytes) that
 * is not a space; while only spaces came, the mode stays M_UNKNOWN.
 */
static void
sniff(struct saop__llm_parser *p, const char *s, size_t n)
{
	size_t i;

	if (p->status < 200 || p->status > 299) {
		p->mode = M_OTHER;
		return;
	}
	if (strcasestr(p->ctype, "event-stream") != NULL) {
		p->mode = M_SSE;
		return;
	}
	if (strcasestr(p->ctype, "ndjson") != NULL) {
		p->mode = M_NDJSON;
		return;
	}
	if (strcasestr(p->ctype, "json") != NULL) {
		p->mode = M_JSON;
		return;
	}
	for (i = 0; i < n && isspace((unsigned char)s[i]); i++)
		;
	if (i == n)
		return;			/* still unknown */
	if (p->ctype[0] == '\0' && (s[i] == ':' || s[i] == 'd' ||
	    s[i] == 'e'))
		p->mode = M_SSE;
	else if (p->ctype[0] == '\0' && s[i] == '{')
		p->mode = M_JSON;
	else
		p->mode = M_OTHER;
}

/*
 * A new parser for an answer of at most limit bytes (0: the default).
 * Returns it (saop__llm_parser_free()), or NULL on ENOMEM.
 */
struct saop__llm_parser *
saop__llm_parser_new(size_t limit)
{
	struct saop__llm_parser *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->status = 200;
	p->prompt = p->completion = -1;
	p->limit = limit != 0 ? limit : SAOP_MAX_RECORD_BYTES;
	return p;
}

/* Tell p the HTTP status and Content-Type (may be NULL) of the answer. */
void
saop__llm_parser_head(struct saop__llm_parser *p, int status,
    const char *ctype)
{
	p->status = status;
	snprintf(p->ctype, sizeof(p->ctype), "%s", ctype != NULL ? ctype : "");
}

/*
 * Feed n more body bytes.  Returns 0, or a negative code (SAOP_ENOMEM,
 * SAOP_ELIMIT) after which feeding must stop.
 */
/*
 * Feed n bytes of an event stream (SSE or NDJSON) to p's line reader:
 * each whole line goes to do_line(), a part line waits in p->line.
 * Returns 0, or a negative code after which feeding must stop.
 */
static int
feed_lines(struct saop__llm_parser *p, const char *s, size_t n)
{
	size_t i, start, base;
	int r;

	base = p->lpos;
	p->lpos += n;
	for (i = start = 0; i < n && !p->fail; i++) {
		if (s[i] != '\n' && s[i] != '\r')
			continue;
		if (s[i] == '\n' && p->skip_lf && i == start &&
		    p->line.len == 0) {
			p->skip_lf = 0;
			start = i + 1;
			continue;
		}
		p->skip_lf = s[i] == '\r';
		if (p->line.len > 0) {
			if ((r = saop__buf_append_max(&p->line, s + start,
			    i - start, p->limit)) != 0) {
				p->fail = -r;
				break;
			}
			do_line(p, p->line.data, p->line.len, p->line_start);
			p->line.len = 0;
		} else
			do_line(p, s + start, i - start, base + start);
		start = i + 1;
	}
	if (!p->fail && start < n) {
		if (p->line.len == 0)
			p->line_start = base + start;
		if ((r = saop__buf_append_max(&p->line, s + start, n - start,
		    p->limit)) != 0)
			p->fail = -r;
	}
	return -p->fail;
}

/*
 * Feed the parser the next n bytes of the body at s.  Returns 0, or
 * -SAOP_ENOMEM / -SAOP_ELIMIT once it failed: the transfer then stops.
 */
int
saop__llm_parser_feed(struct saop__llm_parser *p, const char *s, size_t n)
{
	int r;

	if (p->fail)
		return -p->fail;
	p->received += n;
	if (p->mode == M_UNKNOWN) {
		sniff(p, s, n);
		/*
		 * White space held while the kind was unknown is the start
		 * of the first line: read it as such, so that the answer is
		 * the same however the network split the bytes.
		 */
		if ((p->mode == M_SSE || p->mode == M_NDJSON) &&
		    p->body.len > 0) {
			struct saop__buf held = p->body;

			memset(&p->body, 0, sizeof(p->body));
			r = feed_lines(p, held.data, held.len);
			free(held.data);
			if (r != 0)
				return r;
		}
	}
	if (p->mode == M_UNKNOWN || p->mode == M_JSON || p->mode == M_OTHER) {
		size_t lim = p->mode == M_OTHER ? MAX_ERROR_BODY : p->limit;

		if (p->mode == M_OTHER && p->body.len + n > lim)
			n = p->body.len < lim ? lim - p->body.len : 0;
		if ((r = saop__buf_append_max(&p->body, s, n, p->limit)) != 0)
			p->fail = -r;
		return -p->fail;
	}
	return feed_lines(p, s, n);
}

/*
 * Move what p gathered into a: the text (p keeps none of it), the finish
 * reason, the token counts, the status and the tool calls as an
 * OpenAI-style array.  Returns 0, or -SAOP_ENOMEM when there is no text and
 * an empty one cannot be made.
 */
int
saop__llm_fill_answer(struct saop__llm_parser *p, struct saop_llm_answer *a)
{
	json_t *tc;

	free(a->raw);
	a->raw = saop__buf_steal(&p->text, &a->raw_len);
	snprintf(a->finish_reason, sizeof(a->finish_reason), "%s", p->finish);
	a->prompt_tokens = p->prompt;
	a->completion_tokens = p->completion;
	a->http_status = p->status;
	if (p->ntools > 0 && (tc = json_array()) != NULL) {
		size_t i;

		for (i = 0; i < p->ntools; i++) {
			json_t *t;

			t = json_pack("{s:s?, s:s, s:{s:s?, s:s%}}", "id",
			    p->tools[i].id, "type", "function", "function",
			    "name", p->tools[i].name, "arguments",
			    p->tools[i].args.data != NULL ?
			    p->tools[i].args.data : "", p->tools[i].args.len);
			if (t != NULL)
				json_array_append_new(tc, t);
		}
		json_decref(a->tool_calls);
		a->tool_calls = tc;
	}
	return a->raw == NULL ? -SAOP_ENOMEM : 0;
}

/*
 * The body has ended: clean is 1 when the transfer ended normally, 0 when
 * it broke.  Fills a with what arrived and returns 0 when a finished answer
 * came, else -code with e filled (0 with clean 0 never).  After SAOP_EPROTO
 * (an event or line that is not the protocol) a holds no text and no tool
 * call: a damaged answer is never taken in part.  For a 2xx answer only;
 * the caller classifies other statuses.
 */
int
saop__llm_parser_end(struct saop__llm_parser *p, int clean,
    struct saop_llm_answer *a, struct saop_err *e)
{
	if (clean && !p->fail) {
		if (p->mode == M_SSE || p->mode == M_NDJSON) {
			if (p->line.len > 0)
				do_line(p, p->line.data, p->line.len,
				    p->line_start);
			p->line.len = 0;
			if (p->mode == M_SSE)
				sse_dispatch(p);
		} else if (p->mode == M_JSON && p->body.len > 0) {
			json_error_t je;
			json_t *o = saop__llm_load(p->body.data, p->body.len,
			    &je);

			if (o != NULL) {
				handle_obj(p, o, 1);
				json_decref(o);
			} else if (memchr(p->body.data, '\n', p->body.len) !=
			    NULL) {
				int r;

				/* Several JSON lines: Ollama NDJSON. */
				p->mode = M_NDJSON;
				r = saop__llm_parser_feed(p, p->body.data,
				    p->body.len);
				p->received -= p->body.len;
				if (r == 0 && p->line.len > 0)
					do_line(p, p->line.data, p->line.len,
					    p->line_start);
			} else
				handle_json(p, p->body.data, p->body.len, 1);
		}
	}
	if (saop__llm_fill_answer(p, a) != 0)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	if (p->fail == SAOP_ELIMIT)
		return saop__fail(e, SAOP_ELIMIT, 0, "the answer is over "
		    "the size limit (%zu bytes)", p->limit);
	if (p->fail)
		return saop__fail(e, p->fail, ENOMEM, "out of memory");
	if (p->err == SAOP_EPROTO) {
		/* A damaged answer: nothing of it may be taken. */
		free(a->raw);
		if ((a->raw = strdup("")) == NULL)
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		a->raw_len = 0;
		a->finish_reason[0] = '\0';
		json_decref(a->tool_calls);
		a->tool_calls = NULL;
	}
	if (p->err != 0) {
		if (p->err != SAOP_EPROTO)
			snprintf(a->finish_reason, sizeof(a->finish_reason),
			    "error");
		return saop__fail(e, p->err, 0, "%s%s",
		    p->err == SAOP_EPROTO ? "" : "error inside the answer: ",
		    p->errmsg);
	}
	if (p->mode == M_OTHER || (p->mode == M_UNKNOWN && p->received > 0))
		return saop__fail(e, SAOP_EPROTO, 0, "the endpoint answered "
		    "%s, not the protocol (%zu bytes)", p->ctype[0] != '\0' ?
		    p->ctype : "an unknown Content-Type", p->received);
	/* Finished: the end marker came, or a finish reason and a clean end. */
	if (p->finish[0] != '\0' && (p->done || clean))
		return 0;
	if (p->mode == M_JSON && clean)
		return saop__fail(e, SAOP_EPROTO, 0,
		    "the answer has no finish reason");
	a->broken = 1;
	a->finish_reason[0] = '\0';
	return saop__fail(e, SAOP_ENETWORK, 0, "the answer stream ended "
	    "without a finish reason after %zu bytes (%zu bytes of text "
	    "kept)", p->received, a->raw_len);
}

/* Free p; NULL is a no-op. */
void
saop__llm_parser_free(struct saop__llm_parser *p)
{
	size_t i;

	if (p == NULL)
		return;
	saop__buf_free(&p->line);
	saop__buf_free(&p->data);
	saop__buf_free(&p->body);
	saop__buf_free(&p->text);
	for (i = 0; i < p->ntools; i++) {
		free(p->tools[i].id);
		free(p->tools[i].name);
		saop__buf_free(&p->tools[i].args);
	}
	free(p->tools);
	free(p);
}
