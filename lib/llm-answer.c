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
	free(a->refusal);
	json_decref(a->tool_calls);
	json_decref(a->choices);
	json_decref(a->server_tools);
	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	a->cached_tokens = a->reasoning_tokens = -1;
}

/* See saop.h: c empty, its token counts -1.  Returns nothing. */
void
saop_llm_cost_init(struct saop_llm_cost *c)
{
	memset(c, 0, sizeof(*c));
	c->prompt_tokens = c->completion_tokens = -1;
}

/* Add n (when reported, n >= 0) to the count *sum (-1: none yet). */
static void
add_tokens(long *sum, long n)
{
	if (n >= 0)
		*sum = (*sum < 0 ? 0 : *sum) + n;
}

/* See saop.h: one call's cost added to c.  Returns nothing. */
void
saop_llm_cost_add(struct saop_llm_cost *c, size_t sent,
    const struct saop_llm_answer *a)
{
	c->calls++;
	c->sent_bytes += sent;
	if (a->raw != NULL)
		c->received_bytes += a->raw_len;
	add_tokens(&c->prompt_tokens, a->prompt_tokens);
	add_tokens(&c->completion_tokens, a->completion_tokens);
	if (a->priced)
		c->usd += a->cost;
	else
		c->unpriced++;
}

/*
 * See saop.h: c's cost as it goes on a record, USD, null when a call of c
 * is not priced (0 only for no call).  Returns a new reference, or NULL
 * out of memory.
 */
json_t *
saop_llm_cost_usd(const struct saop_llm_cost *c)
{
	return c->unpriced > 0 ? json_null() : json_real(c->usd);
}

/* A JSON integer of n, or null when n is negative (not reported). */
static json_t *
count_or_null(long n)
{
	return n < 0 ? json_null() : json_integer((json_int_t)n);
}

/* See saop.h: c's counts and cost set on obj, in order.  Returns 0 or -1. */
int
saop_llm_cost_put(json_t *obj, const struct saop_llm_cost *c)
{
	if (!json_is_object(obj) ||
	    json_object_set_new(obj, "sent_bytes",
	    json_integer((json_int_t)c->sent_bytes)) != 0 ||
	    json_object_set_new(obj, "received_bytes",
	    json_integer((json_int_t)c->received_bytes)) != 0 ||
	    json_object_set_new(obj, "prompt_tokens",
	    count_or_null(c->prompt_tokens)) != 0 ||
	    json_object_set_new(obj, "completion_tokens",
	    count_or_null(c->completion_tokens)) != 0 ||
	    json_object_set_new(obj, "cost", saop_llm_cost_usd(c)) != 0)
		return -1;
	return 0;
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
 * "length", "tool_calls", "refusal" (the model or the provider's filter
 * declined: OpenAI content_filter, Anthropic refusal, Gemini SAFETY...)
 * or, for a word it does not know, "error".
 */
static const char *
normal_finish(const char *w)
{
	static const char *const stop[] = { "stop", "end_turn",
	    "stop_sequence", "pause_turn", "eos", "STOP", NULL };
	static const char *const length[] = { "length", "max_tokens",
	    "model_context_window_exceeded", "MAX_TOKENS",
	    "max_output_tokens", NULL };
	static const char *const tools[] = { "tool_calls", "tool_use",
	    "function_call", NULL };
	static const char *const refusal[] = { "refusal", "content_filter",
	    "guardrail_intervened", "content_filtered", "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
	    "IMAGE_SAFETY", "LANGUAGE", NULL };
	int i;

	for (i = 0; refusal[i] != NULL; i++)
		if (strcmp(w, refusal[i]) == 0)
			return "refusal";

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

/*
 * 1 when p's answer (or choice) has ended: its finish reason came.  The
 * one rule of an answer's end: nothing of it sent afterwards is read, for
 * every format and every choice, so that an answer cut just after its
 * finish reads as the whole one does (a fuzz finding).  Every sink that
 * gathers an answer asks it (set_finish(), bad_chunk(), add_text(),
 * add_refusal(), tool_at() making or finding a call, tool_args(),
 * block_set());
 * usage and errors inside the stream are no part of the answer and are
 * read after it (OpenAI's usage chunk comes after the finish).
 */
static int
ended(const struct saop__llm_parser *p)
{
	return p->finish[0] != '\0';
}

/*
 * Set p's finish reason from the provider's word w (NULL: none came),
 * unless one came before; a refusal marks p refused.  Every tool call is
 * then closed.
 */
static void
set_finish(struct saop__llm_parser *p, const char *w)
{
	size_t i;

	if (w == NULL || ended(p))
		return;
	snprintf(p->finish, sizeof(p->finish), "%s", normal_finish(w));
	if (strcmp(p->finish, "refusal") == 0)
		p->refused = 1;
	for (i = 0; i < p->ntools; i++)
		p->tools[i].closed = 1;
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
	if (p->mode == M_SSE || p->mode == M_NDJSON || p->mode == M_EVENTS)
		snprintf(out, outsz, "%s %lu (byte %zu of the answer)",
		    p->mode == M_SSE ? "SSE event" : p->mode == M_EVENTS ?
		    "event-stream frame" : "NDJSON line", p->units,
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

	if (p->err != 0 || ended(p))
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

	if (!json_is_string(s) || p->fail || p->err || ended(p))
		return;
	r = saop__buf_append_max(&p->text, json_string_value(s),
	    json_string_length(s), p->limit);
	if (r != 0)
		p->fail = -r;
}

/* Append the string s to the refusal text (OpenAI refusal deltas). */
static void
add_refusal(struct saop__llm_parser *p, const json_t *s)
{
	int r;

	if (!json_is_string(s) || p->fail || p->err || ended(p))
		return;
	if (json_string_length(s) > 0)
		p->refused = 1;
	r = saop__buf_append_max(&p->refusal, json_string_value(s),
	    json_string_length(s), p->limit);
	if (r != 0)
		p->fail = -r;
}

/*
 * The tool call under key (an OpenAI tool index or an Anthropic block
 * index), made when create is set; NULL when there is none, once the
 * answer has ended (no call is made or changed after the finish: a
 * server tool's block under a call's key would take it from the
 * answer), or on ENOMEM (p->fail set) or past 1024 calls.
 */
static struct tool *
tool_at(struct saop__llm_parser *p, long key, int create)
{
	struct tool *nt;
	size_t i;

	if (ended(p))
		return NULL;
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

	if (t == NULL || !json_is_string(v) || p->fail || p->err ||
	    ended(p))
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
	long n;

	if (!json_is_object(u))
		return;
	if ((v = json_object_get(u, "prompt_tokens")) == NULL)
		v = json_object_get(u, "input_tokens");
	num(v, &p->prompt);
	if ((v = json_object_get(u, "completion_tokens")) == NULL)
		v = json_object_get(u, "output_tokens");
	num(v, &p->completion);
	/* OpenAI's chat and Responses: the cached and reasoning tokens are
	 * among the counts. */
	if ((v = json_object_get(u, "prompt_tokens_details")) == NULL)
		v = json_object_get(u, "input_tokens_details");
	num(json_object_get(v, "cached_tokens"), &p->cached);
	if ((v = json_object_get(u, "completion_tokens_details")) == NULL)
		v = json_object_get(u, "output_tokens_details");
	num(json_object_get(v, "reasoning_tokens"), &p->reasoning);
	/* Anthropic's input_tokens leave out what was read from the cache
	 * and written to it: counted in here, the reads as cached. */
	if (json_object_get(u, "input_tokens") != NULL &&
	    num(json_object_get(u, "cache_read_input_tokens"), &n) == 0 &&
	    p->prompt >= 0 && n >= 0) {
		p->cached = n;
		p->prompt += n;
		if (num(json_object_get(u, "cache_creation_input_tokens"),
		    &n) == 0 && n > 0)
			p->prompt += n;
	}
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

/*
 * The parser that gathers choice (or candidate) index of p's answer: p
 * itself for index 0, else one of p->alts, made on first use.  NULL on
 * ENOMEM (p->fail set) or past 64 choices.
 */
static struct saop__llm_parser *
choice_parser(struct saop__llm_parser *p, long index)
{
	struct alt *na;
	size_t i;

	if (index == 0)
		return p;
	for (i = 0; i < p->nalts; i++)
		if (p->alts[i].index == index)
			return p->alts[i].p;
	if (p->nalts >= 64)
		return NULL;
	if ((na = realloc(p->alts, (p->nalts + 1) * sizeof(*na))) == NULL) {
		p->fail = SAOP_ENOMEM;
		return NULL;
	}
	p->alts = na;
	if ((na[p->nalts].p = saop__llm_parser_new(p->limit)) == NULL) {
		p->fail = SAOP_ENOMEM;
		return NULL;
	}
	na[p->nalts].index = index;
	return na[p->nalts++].p;
}

/*
 * Fold what an alternative parser a met (a failure, a broken chunk) into
 * its main parser p, so that a choice the caller does not read still
 * spoils nothing unseen.
 */
static void
alt_fold(struct saop__llm_parser *p, const struct saop__llm_parser *a)
{
	if (a->fail && !p->fail)
		p->fail = a->fail;
	if (a->err == SAOP_EPROTO && p->err == 0) {
		p->err = a->err;
		snprintf(p->errmsg, sizeof(p->errmsg), "%s", a->errmsg);
	}
}

/*
 * One OpenAI choice ch (a chunk's delta or a whole message) into the
 * parser t that gathers it: content, refusal, tool calls, finish reason.
 * Errors are recorded in p, the answer's parser.
 */
static void
openai_choice(struct saop__llm_parser *p, struct saop__llm_parser *t,
    const json_t *ch)
{
	json_t *d, *tc;
	size_t i;

	if (openai_choice_ok(p, ch) != 0)
		return;
	if ((d = json_object_get(ch, "delta")) == NULL)
		d = json_object_get(ch, "message");
	openai_content(t, json_object_get(d, "content"));
	add_refusal(t, json_object_get(d, "refusal"));
	json_array_foreach(json_object_get(d, "tool_calls"), i, tc) {
		json_t *f = json_object_get(tc, "function");
		long ix = (long)i;
		struct tool *tl;

		if (!json_is_object(tc)) {
			bad_chunk(p, "a tool call is not an object");
			return;
		}
		num(json_object_get(tc, "index"), &ix);
		if ((tl = tool_at(t, ix, 1)) == NULL)
			continue;
		tool_str(&tl->id, json_object_get(tc, "id"));
		tool_str(&tl->name, json_object_get(f, "name"));
		/* OpenRouter: "arguments": null for a call without any. */
		tool_args(t, tl, json_object_get(f, "arguments"));
	}
	set_finish(t, json_string_value(json_object_get(ch,
	    "finish_reason")));
	if (t != p)
		alt_fold(p, t);
}

/*
 * An OpenAI chunk (delta) or a whole chat.completion (message).  Every
 * choice is read by its index: choice 0 is the answer, the others (n > 1)
 * are gathered apart.  Vendor usage (Groq's x_groq.usage) is read too.
 */
static void
openai_obj(struct saop__llm_parser *p, const json_t *o)
{
	json_t *chs, *ch, *c;
	size_t i;

	usage_of(p, json_object_get(json_object_get(o, "x_groq"), "usage"));
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
	json_array_foreach(chs, i, ch) {
		struct saop__llm_parser *t;
		long ix = (long)i;

		if (json_is_object(ch))
			num(json_object_get(ch, "index"), &ix);
		if ((t = choice_parser(p, ix)) != NULL)
			openai_choice(p, t, ch);
		if (p->err != 0 || p->fail)
			return;
	}
}

/*
 * The kind of Anthropic content block type bt: text, a tool call, a tool
 * the provider runs (server_tool_use, mcp_tool_use and every
 * *_tool_result block) or another block (thinking, compaction, a beta the
 * client does not know), which carries no part of the answer.
 */
static enum blk_kind
block_kind(const char *bt)
{
	size_t n = strlen(bt);

	if (strcmp(bt, "text") == 0)
		return B_TEXT;
	if (strcmp(bt, "tool_use") == 0)
		return B_CALL;
	if (strcmp(bt, "server_tool_use") == 0 ||
	    strcmp(bt, "mcp_tool_use") == 0 ||
	    (n > 12 && strcmp(bt + n - 12, "_tool_result") == 0))
		return B_SERVER;
	return B_OTHER;
}

/*
 * Remember that block ix is of kind k.  Returns nothing: on ENOMEM (or
 * past 4096 blocks) p->fail is set.
 */
static void
block_set(struct saop__llm_parser *p, long ix, enum blk_kind k)
{
	struct blk *nb;
	size_t i;

	if (ended(p))
		return;
	for (i = 0; i < p->nblks; i++)
		if (p->blks[i].ix == ix) {
			p->blks[i].kind = k;
			return;
		}
	if (p->nblks >= 4096 ||
	    (nb = realloc(p->blks, (p->nblks + 1) * sizeof(*nb))) == NULL) {
		p->fail = SAOP_ENOMEM;
		return;
	}
	p->blks = nb;
	nb[p->nblks].ix = ix;
	nb[p->nblks++].kind = k;
}

/*
 * The kind of block ix: what its content_block_start said; a block that
 * never started is text (a delta is read as its type says).
 */
static enum blk_kind
block_of(const struct saop__llm_parser *p, long ix)
{
	size_t i;

	for (i = 0; i < p->nblks; i++)
		if (p->blks[i].ix == ix)
			return p->blks[i].kind;
	return B_TEXT;
}

/*
 * Keep a block the provider ran (server tool use, its result) as it
 * came, under key ix.  Returns the entry, or NULL (ENOMEM: p->fail set).
 */
static struct tool *
server_block(struct saop__llm_parser *p, long ix, const json_t *b)
{
	struct tool *t;

	if ((t = tool_at(p, ix, 1)) == NULL)
		return NULL;
	t->server = 1;
	json_decref(t->block);
	if ((t->block = json_deep_copy(b)) == NULL)
		p->fail = SAOP_ENOMEM;
	return t;
}

/*
 * An Anthropic content_block_delta for block ix: text and tool input are
 * taken where the block is text or a call; a server tool's input is kept
 * with it; thinking, signatures, citations and the deltas of blocks that
 * carry no part of the answer are left.  A delta of unknown type on a
 * text or call block would change the answer unseen: not the protocol.
 */
static void
anthropic_delta(struct saop__llm_parser *p, long ix, const json_t *o)
{
	static const char *const unused[] = { "thinking_delta",
	    "signature_delta", "citations_delta", NULL };
	const json_t *d = json_object_get(o, "delta");
	const char *dt = json_string_value(json_object_get(d, "type"));
	enum blk_kind k = block_of(p, ix);
	int i;

	if (!json_is_object(d) || dt == NULL) {
		bad_chunk(p, "a content_block_delta without a typed delta");
		return;
	}
	if (strcmp(dt, "text_delta") == 0) {
		if (!json_is_string(json_object_get(d, "text")))
			bad_chunk(p, "a text_delta without its text");
		if (k == B_TEXT)
			add_text(p, json_object_get(d, "text"));
		return;
	}
	if (strcmp(dt, "input_json_delta") == 0) {
		const json_t *pj = json_object_get(d, "partial_json");

		/* An input_json_delta without partial_json adds nothing. */
		if (pj != NULL && !json_is_string(pj))
			bad_chunk(p, "an input_json_delta whose partial_json "
			    "is not a string");
		if (k == B_CALL || k == B_SERVER)
			tool_args(p, tool_at(p, ix, k == B_CALL), pj);
		return;
	}
	for (i = 0; unused[i] != NULL; i++)
		if (strcmp(dt, unused[i]) == 0)
			return;
	if (k == B_TEXT || k == B_CALL)
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
 * (ping, thinking blocks) are left; content_block_stop closes a call.
 * Anthropic may add event types (its versioning policy asks clients to
 * bear them), so an event of unknown type is left too, unless it has a
 * member that could hold part of the answer: then, like a known one
 * without its parts, it is not the protocol, for nothing of the answer may
 * be lost unseen.  Blocks of unknown type are left whole (with their
 * deltas); server tools and their results are kept apart.
 */
static void
anthropic_event(struct saop__llm_parser *p, const char *type, const json_t *o)
{
	json_t *d, *b, *e;
	long ix = 0;
	struct tool *t;

	num(json_object_get(o, "index"), &ix);
	if (strcmp(type, "message_start") == 0) {
		if (!json_is_object(json_object_get(o, "message")))
			bad_chunk(p, "a message_start without its message");
		usage_of(p, json_object_get(json_object_get(o, "message"),
		    "usage"));
	} else if (strcmp(type, "content_block_start") == 0) {
		enum blk_kind k;

		b = json_object_get(o, "content_block");
		d = json_object_get(b, "type");
		if (!json_is_string(d)) {
			bad_chunk(p, "a content_block_start without a typed "
			    "content_block");
			return;
		}
		k = block_kind(json_string_value(d));
		block_set(p, ix, k);
		if (k == B_TEXT)
			add_text(p, json_object_get(b, "text"));
		else if (k == B_CALL && (t = tool_at(p, ix, 1)) != NULL) {
			tool_str(&t->id, json_object_get(b, "id"));
			tool_str(&t->name, json_object_get(b, "name"));
		} else if (k == B_SERVER)
			server_block(p, ix, b);
	} else if (strcmp(type, "content_block_delta") == 0) {
		anthropic_delta(p, ix, o);
	} else if (strcmp(type, "content_block_stop") == 0) {
		if ((t = tool_at(p, ix, 0)) != NULL)
			t->closed = 1;
	} else if (strcmp(type, "message_delta") == 0) {
		d = json_object_get(o, "delta");
		if (!json_is_object(d) || !absent_or(json_object_get(d,
		    "stop_reason"), JSON_STRING))
			bad_chunk(p, "a message_delta without its delta");
		usage_of(p, json_object_get(o, "usage"));
		set_finish(p, json_string_value(json_object_get(d,
		    "stop_reason")));
	} else if (strcmp(type, "message_stop") == 0) {
		p->done = 1;
	} else if (strcmp(type, "error") == 0) {
		/* Anthropic nests the error; the Responses API does not. */
		e = json_object_get(o, "error");
		stream_error(p, e != NULL ? e : o);
	} else if (strcmp(type, "ping") != 0 && carries_content(o)) {
		bad_chunk(p, "an event of unknown type '%.40s'", type);
	}
}

/*
 * A whole tool call under key ix (a block of a whole Anthropic Message
 * or Converse answer): its id and name, its input written as compact
 * JSON into its arguments (under the size limit), closed.  On ENOMEM or
 * past the limit, p->fail is set.
 */
static void
whole_call(struct saop__llm_parser *p, long ix, const json_t *id,
    const json_t *name, const json_t *in)
{
	struct tool *t;
	char *s;
	int r;

	if ((t = tool_at(p, ix, 1)) == NULL)
		return;
	tool_str(&t->id, id);
	tool_str(&t->name, name);
	t->closed = 1;
	if (in == NULL)
		return;
	if ((s = json_dumps(in, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL) {
		p->fail = SAOP_ENOMEM;
		return;
	}
	if ((r = saop__buf_append_max(&t->args, s, strlen(s), p->limit)) != 0)
		p->fail = -r;
	free(s);
}

/* A whole Anthropic Message. */
static void
anthropic_message(struct saop__llm_parser *p, const json_t *o)
{
	json_t *b;
	size_t i;

	if (!absent_or(json_object_get(o, "content"), JSON_ARRAY)) {
		bad_chunk(p, "the message's content is not an array");
		return;
	}
	usage_of(p, json_object_get(o, "usage"));
	json_array_foreach(json_object_get(o, "content"), i, b) {
		const char *bt = json_string_value(json_object_get(b, "type"));
		enum blk_kind k;

		if (bt == NULL)
			continue;
		k = block_kind(bt);
		if (k == B_TEXT) {
			add_text(p, json_object_get(b, "text"));
		} else if (k == B_SERVER) {
			server_block(p, (long)i, b);
		} else if (k == B_CALL) {
			whole_call(p, (long)i, json_object_get(b, "id"),
			    json_object_get(b, "name"), json_object_get(b,
			    "input"));
		}
	}
	set_finish(p, json_string_value(json_object_get(o,
	    "stop_reason")));
	p->done = 1;
}

/* ---- OpenAI Responses ---- */

/*
 * 1 when a Responses output item of type it is a tool the provider runs
 * (web_search_call, file_search_call, code_interpreter_call, mcp_call,
 * image_generation_call, ...), else 0.  Messages, function calls and
 * reasoning are not.
 */
static int
responses_server_item(const char *it)
{
	return it != NULL && strcmp(it, "function_call") != 0 &&
	    strcmp(it, "message") != 0 && strcmp(it, "reasoning") != 0 &&
	    strcmp(it, "function_call_output") != 0;
}

/*
 * The end of a Responses answer, r (the response object of
 * response.completed / incomplete / failed, or a whole body): usage and
 * the finish reason from status and incomplete_details.reason.
 */
static void
responses_final(struct saop__llm_parser *p, const json_t *r)
{
	const char *st = json_string_value(json_object_get(r, "status"));
	json_t *why;
	size_t i;
	int calls = 0;

	if (!json_is_object(r)) {
		bad_chunk(p, "the end of the response without the response");
		return;
	}
	usage_of(p, json_object_get(r, "usage"));
	for (i = 0; i < p->ntools; i++)
		calls |= !p->tools[i].server;
	if (st == NULL || strcmp(st, "failed") == 0) {
		why = json_object_get(r, "error");
		stream_error(p, why != NULL && !json_is_null(why) ? why : r);
	} else if (strcmp(st, "completed") == 0) {
		set_finish(p, p->refused ? "refusal" : calls ? "tool_calls" :
		    "stop");
	} else if (strcmp(st, "incomplete") == 0) {
		why = json_object_get(json_object_get(r,
		    "incomplete_details"), "reason");
		set_finish(p, json_is_string(why) ? json_string_value(why) :
		    "error");
	} else if (strcmp(st, "in_progress") != 0 &&
	    strcmp(st, "queued") != 0) {
		set_finish(p, "error");
	}
	if (p->finish[0] != '\0' || p->err != 0)
		p->done = 1;
}

/*
 * One output item of a Responses answer, whole (a body's output, or
 * response.output_item.done), at output index ix: a message's text and
 * refusal (whole only: a stream gave them as deltas), a function call's
 * arguments (when none streamed in), a server tool kept whole.
 */
static void
responses_item(struct saop__llm_parser *p, long ix, const json_t *it,
    int whole)
{
	const char *ty = json_string_value(json_object_get(it, "type"));
	struct tool *t;
	json_t *c;

	if (!json_is_object(it) || ty == NULL) {
		bad_chunk(p, "an output item without a type");
		return;
	}
	if (strcmp(ty, "message") == 0 && whole) {
		size_t i;

		json_array_foreach(json_object_get(it, "content"), i, c) {
			const char *ct = json_string_value(json_object_get(c,
			    "type"));

			if (ct != NULL && strcmp(ct, "output_text") == 0)
				add_text(p, json_object_get(c, "text"));
			else if (ct != NULL && strcmp(ct, "refusal") == 0)
				add_refusal(p, json_object_get(c, "refusal"));
		}
	} else if (strcmp(ty, "function_call") == 0 &&
	    (t = tool_at(p, ix, 1)) != NULL) {
		c = json_object_get(it, "call_id");
		tool_str(&t->id, c != NULL ? c : json_object_get(it, "id"));
		tool_str(&t->name, json_object_get(it, "name"));
		if (t->args.len == 0)
			tool_args(p, t, json_object_get(it, "arguments"));
		t->closed = 1;
	} else if (responses_server_item(ty)) {
		server_block(p, ix, it);
	}
}

/*
 * A Responses stream event of type type.  The text is in
 * response.output_text.delta, refusals in response.refusal.delta, call
 * arguments in response.function_call_arguments.delta; the answer ends
 * with response.completed, response.incomplete or response.failed.  The
 * other events (created, in_progress, content parts, reasoning summaries,
 * annotations, a tool's progress) carry no part of the text or of a call
 * and are left.
 */
static void
responses_event(struct saop__llm_parser *p, const char *type,
    const json_t *o)
{
	const json_t *item = json_object_get(o, "item");
	struct tool *t;
	long ix = 0;

	num(json_object_get(o, "output_index"), &ix);
	if (strcmp(type, "response.output_text.delta") == 0) {
		if (!json_is_string(json_object_get(o, "delta")))
			bad_chunk(p, "an output_text delta without its text");
		add_text(p, json_object_get(o, "delta"));
	} else if (strcmp(type, "response.refusal.delta") == 0) {
		add_refusal(p, json_object_get(o, "delta"));
	} else if (strcmp(type, "response.function_call_arguments.delta") ==
	    0) {
		if (!json_is_string(json_object_get(o, "delta")))
			bad_chunk(p, "a function_call_arguments delta without "
			    "its text");
		tool_args(p, tool_at(p, ix, 1), json_object_get(o, "delta"));
	} else if (strcmp(type, "response.function_call_arguments.done") ==
	    0) {
		if ((t = tool_at(p, ix, 1)) != NULL) {
			if (t->args.len == 0)
				tool_args(p, t, json_object_get(o,
				    "arguments"));
			t->closed = 1;
		}
	} else if (strcmp(type, "response.output_item.added") == 0) {
		const char *ty = json_string_value(json_object_get(item,
		    "type"));

		if (ty != NULL && strcmp(ty, "function_call") == 0 &&
		    (t = tool_at(p, ix, 1)) != NULL) {
			tool_str(&t->id, json_object_get(item, "call_id"));
			tool_str(&t->name, json_object_get(item, "name"));
		}
	} else if (strcmp(type, "response.output_item.done") == 0) {
		responses_item(p, ix, item, 0);
	} else if (strcmp(type, "response.completed") == 0 ||
	    strcmp(type, "response.incomplete") == 0 ||
	    strcmp(type, "response.failed") == 0) {
		responses_final(p, json_object_get(o, "response"));
	}
}

/* A whole Responses body (object "response"). */
static void
responses_whole(struct saop__llm_parser *p, const json_t *o)
{
	json_t *it;
	size_t i;

	if (!absent_or(json_object_get(o, "output"), JSON_ARRAY)) {
		bad_chunk(p, "the response's output is not an array");
		return;
	}
	json_array_foreach(json_object_get(o, "output"), i, it) {
		responses_item(p, (long)i, it, 1);
		if (p->err != 0)
			return;
	}
	responses_final(p, o);
}

/* ---- Gemini ---- */

/*
 * One Gemini candidate c into the parser t that gathers it: text parts
 * (not thoughts), functionCall parts (each a whole call), code the
 * provider ran (executableCode, codeExecutionResult: kept apart), and
 * its finishReason (STOP after calls is tool_calls).  Errors go to p.
 */
static void
gemini_candidate(struct saop__llm_parser *p, struct saop__llm_parser *t,
    const json_t *c)
{
	json_t *parts, *x, *fr, *args;
	struct tool *tl;
	size_t i;
	char *s;

	if (!json_is_object(c)) {
		bad_chunk(p, "a candidate is not an object");
		return;
	}
	parts = json_object_get(json_object_get(c, "content"), "parts");
	if (!absent_or(parts, JSON_ARRAY)) {
		bad_chunk(p, "a candidate's parts are not an array");
		return;
	}
	json_array_foreach(parts, i, x) {
		json_t *fc = json_object_get(x, "functionCall");

		if (!json_is_object(x)) {
			bad_chunk(p, "a part is not an object");
			return;
		}
		if (json_is_true(json_object_get(x, "thought")))
			continue;
		if (json_object_get(x, "text") != NULL) {
			if (!json_is_string(json_object_get(x, "text"))) {
				bad_chunk(p, "a part's text is not a string");
				return;
			}
			add_text(t, json_object_get(x, "text"));
		} else if (json_is_object(fc)) {
			if ((tl = tool_at(t, (long)t->ntools, 1)) == NULL)
				continue;
			tool_str(&tl->id, json_object_get(fc, "id"));
			tool_str(&tl->name, json_object_get(fc, "name"));
			/* A call without "args" has none: {} (a fuzz
			 * finding: the {} made for it was leaked). */
			args = json_object_get(fc, "args");
			if (args == NULL)
				s = strdup("{}");
			else
				s = json_dumps(args, JSON_COMPACT |
				    JSON_ENCODE_ANY);
			if (s == NULL)
				t->fail = SAOP_ENOMEM;
			else if (saop__buf_append_max(&tl->args, s, strlen(s),
			    t->limit) != 0)
				t->fail = SAOP_ELIMIT;
			free(s);
			tl->closed = 1;
		} else if (json_object_get(x, "executableCode") != NULL ||
		    json_object_get(x, "codeExecutionResult") != NULL) {
			server_block(t, -1 - (long)t->ntools, x);
		}
	}
	fr = json_object_get(c, "finishReason");
	if (!absent_or(fr, JSON_STRING)) {
		bad_chunk(p, "finishReason is not a string");
		return;
	}
	if (json_is_string(fr)) {
		int calls = 0;

		for (i = 0; i < t->ntools; i++)
			calls |= !t->tools[i].server;
		set_finish(t, calls && strcmp(json_string_value(fr), "STOP") ==
		    0 ? "tool_calls" : json_string_value(fr));
	}
	if (t != p)
		alt_fold(p, t);
}

/*
 * A Gemini GenerateContentResponse (an SSE event's data, or a whole
 * body): usageMetadata (the thoughts counted with the answer, as OpenAI
 * counts reasoning tokens), every candidate by its index, and a prompt
 * blocked before any candidate (promptFeedback.blockReason: a refusal).
 */
static void
gemini_obj(struct saop__llm_parser *p, const json_t *o)
{
	json_t *u = json_object_get(o, "usageMetadata"), *cs, *c, *br;
	long n, th;
	size_t i;

	if (json_is_object(u)) {
		num(json_object_get(u, "promptTokenCount"), &p->prompt);
		num(json_object_get(u, "cachedContentTokenCount"),
		    &p->cached);
		if (num(json_object_get(u, "candidatesTokenCount"), &n) == 0) {
			if (num(json_object_get(u, "thoughtsTokenCount"),
			    &th) == 0) {
				n += th;
				p->reasoning = th;
			}
			p->completion = n;
		}
	}
	cs = json_object_get(o, "candidates");
	if (!absent_or(cs, JSON_ARRAY)) {
		bad_chunk(p, "\"candidates\" is not an array");
		return;
	}
	json_array_foreach(cs, i, c) {
		struct saop__llm_parser *t;
		long ix = (long)i;

		num(json_object_get(c, "index"), &ix);
		if ((t = choice_parser(p, ix)) != NULL)
			gemini_candidate(p, t, c);
		if (p->err != 0 || p->fail)
			return;
	}
	br = json_object_get(json_object_get(o, "promptFeedback"),
	    "blockReason");
	if (json_array_size(cs) == 0 && json_is_string(br)) {
		add_refusal(p, br);
		set_finish(p, "refusal");
	}
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

		set_finish(p, json_is_string(v) ? json_string_value(v) :
		    "stop");
		num(json_object_get(o, "prompt_eval_count"), &p->prompt);
		num(json_object_get(o, "eval_count"), &p->completion);
		p->done = 1;
	}
}

/* ---- Amazon Bedrock Converse ---- */

/*
 * Take the token counts of a Bedrock usage object (inputTokens...; the
 * tokens read from the cache, left out of inputTokens, counted in as
 * cached).
 */
static void
bedrock_usage(struct saop__llm_parser *p, const json_t *u)
{
	long n;

	if (!json_is_object(u))
		return;
	num(json_object_get(u, "inputTokens"), &p->prompt);
	num(json_object_get(u, "outputTokens"), &p->completion);
	if (p->prompt >= 0 && num(json_object_get(u,
	    "cacheReadInputTokens"), &n) == 0 && n >= 0) {
		p->cached = n;
		p->prompt += n;
	}
}

/*
 * A whole Converse answer: output.message.content's text and toolUse
 * blocks (reasoningContent and others carry no part of the answer),
 * stopReason, usage.
 */
static void
bedrock_whole(struct saop__llm_parser *p, const json_t *o)
{
	const json_t *c = json_object_get(json_object_get(json_object_get(o,
	    "output"), "message"), "content");
	json_t *b, *u;
	size_t i;

	if (!json_is_array(c) ||
	    !json_is_string(json_object_get(o, "stopReason"))) {
		bad_chunk(p, "a Converse answer without output.message."
		    "content or stopReason");
		return;
	}
	bedrock_usage(p, json_object_get(o, "usage"));
	json_array_foreach(c, i, b) {
		if (json_object_get(b, "text") != NULL) {
			add_text(p, json_object_get(b, "text"));
		} else if (json_is_object(u = json_object_get(b, "toolUse"))) {
			whole_call(p, (long)i, json_object_get(u, "toolUseId"),
			    json_object_get(u, "name"), json_object_get(u,
			    "input"));
		}
	}
	set_finish(p, json_string_value(json_object_get(o, "stopReason")));
	p->done = 1;
}

/*
 * One ConverseStream event of type type, its payload o: contentBlockStart
 * opens a tool call, contentBlockDelta adds text or a call's input
 * (reasoningContent, citations: no part of the answer), contentBlockStop
 * closes a call, messageStop gives the finish, metadata the usage and the
 * end.  An event of unknown type is left unless it could hold part of
 * the answer.
 */
static void
bedrock_event(struct saop__llm_parser *p, const char *type, const json_t *o)
{
	json_t *d, *u;
	long ix = 0;
	struct tool *t;

	num(json_object_get(o, "contentBlockIndex"), &ix);
	if (strcmp(type, "contentBlockStart") == 0) {
		u = json_object_get(json_object_get(o, "start"), "toolUse");
		if (json_is_object(u) && (t = tool_at(p, ix, 1)) != NULL) {
			tool_str(&t->id, json_object_get(u, "toolUseId"));
			tool_str(&t->name, json_object_get(u, "name"));
		}
	} else if (strcmp(type, "contentBlockDelta") == 0) {
		if (!json_is_object(d = json_object_get(o, "delta"))) {
			bad_chunk(p, "a contentBlockDelta without its delta");
			return;
		}
		if (json_object_get(d, "text") != NULL) {
			if (!json_is_string(json_object_get(d, "text")))
				bad_chunk(p, "a text delta that is not a "
				    "string");
			add_text(p, json_object_get(d, "text"));
		} else if ((u = json_object_get(d, "toolUse")) != NULL) {
			if (!json_is_string(json_object_get(u, "input")))
				bad_chunk(p, "a toolUse delta without its "
				    "input");
			tool_args(p, tool_at(p, ix, 1),
			    json_object_get(u, "input"));
		}
	} else if (strcmp(type, "contentBlockStop") == 0) {
		if ((t = tool_at(p, ix, 0)) != NULL)
			t->closed = 1;
	} else if (strcmp(type, "messageStop") == 0) {
		if (!json_is_string(json_object_get(o, "stopReason")))
			bad_chunk(p, "a messageStop without its stopReason");
		set_finish(p, json_string_value(json_object_get(o,
		    "stopReason")));
	} else if (strcmp(type, "metadata") == 0) {
		bedrock_usage(p, json_object_get(o, "usage"));
		/* The last event: the answer is whole if it had its finish. */
		if (ended(p))
			p->done = 1;
	} else if (strcmp(type, "messageStart") != 0 &&
	    (json_object_get(o, "delta") != NULL ||
	    json_object_get(o, "start") != NULL)) {
		bad_chunk(p, "an event of unknown type '%.40s'", type);
	}
}

/*
 * The HTTP status an AWS exception's name stands for, as the Bedrock
 * Runtime API reference gives it (throttling 429, validation 400, the
 * model's stream failing 424, unavailable 503...); 500 for a name it does
 * not know: the server failed.
 */
static int
aws_exception_status(const char *name, size_t n)
{
	static const struct {
		const char *name;
		int status;
	} map[] = {
		{ "throttlingException", 429 },
		{ "serviceQuotaExceededException", 429 },
		{ "modelNotReadyException", 429 },
		{ "validationException", 400 },
		{ "accessDeniedException", 403 },
		{ "resourceNotFoundException", 404 },
		{ "modelTimeoutException", 408 },
		{ "modelStreamErrorException", 502 },
		{ "modelErrorException", 502 },
		{ "internalServerException", 500 },
		{ "serviceUnavailableException", 503 },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strlen(map[i].name) == n &&
		    strncasecmp(map[i].name, name, n) == 0)
			return map[i].status;
	return 500;
}

/*
 * An exception (or error) frame inside the stream: its kind from its
 * :exception-type (or :error-code) header, its message from the payload's
 * "message" (or :error-message), classified as an error body of the
 * status the kind stands for.
 */
static void
bedrock_exception(struct saop__llm_parser *p, const struct saop__es_frame *f,
    const json_t *o)
{
	const char *kind, *m;
	size_t kn, mn = 0;
	json_t *err;

	if ((kind = saop__es_header(f, ":exception-type", &kn)) == NULL &&
	    (kind = saop__es_header(f, ":error-code", &kn)) == NULL) {
		kind = "";
		kn = 0;
	}
	if ((m = json_string_value(json_object_get(o, "message"))) != NULL)
		mn = strlen(m);
	else if ((m = saop__es_header(f, ":error-message", &mn)) == NULL) {
		m = kind;
		mn = kn;
	}
	err = json_pack("{s:s%, s:s%, s:i}", "message", m, mn, "aws", kind,
	    kn, "code", aws_exception_status(kind, kn));
	if (err == NULL) {
		p->fail = SAOP_ENOMEM;
		return;
	}
	stream_error(p, err);
	json_decref(err);
}

/*
 * One whole, checked event-stream frame (saop__es_fn): an event's payload
 * to bedrock_event(), an exception to bedrock_exception().  Returns 1 once
 * nothing more is wanted (the end came, an error, a failure), else 0.
 */
static int
es_frame(void *arg, const struct saop__es_frame *f)
{
	struct saop__llm_parser *p = arg;
	const char *et;
	size_t etn;
	json_error_t je;
	json_t *o = NULL;
	char type[64];

	p->units++;
	p->unit_off = f->offset;
	if (f->payload_len > 0 &&
	    (o = saop__llm_load(f->payload, f->payload_len, &je)) == NULL) {
		/* (Not read once the answer ended, as every format's.) */
		bad_chunk(p, "a payload that is not JSON (%.120s)", je.text);
	} else if (saop__es_header_is(f, ":message-type", "exception") ||
	    saop__es_header_is(f, ":message-type", "error")) {
		bedrock_exception(p, f, o);
	} else if (!saop__es_header_is(f, ":message-type", "event") ||
	    (et = saop__es_header(f, ":event-type", &etn)) == NULL) {
		bad_chunk(p, "a frame that is not an event");
	} else if (!json_is_object(o)) {
		bad_chunk(p, "an event whose payload is not a JSON object");
	} else if (etn < sizeof(type)) {
		memcpy(type, et, etn);
		type[etn] = '\0';
		bedrock_event(p, type, o);
	}
	json_decref(o);
	return p->done || p->err != 0 || p->fail;
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
	const char *obj = json_string_value(json_object_get(o, "object"));

	if (p->err != 0)
		return;
	if (whole && json_is_array(o)) {
		size_t i;
		json_t *x;

		/* Gemini streamGenerateContent without alt=sse: an array. */
		json_array_foreach(o, i, x) {
			if (!json_is_object(x)) {
				bad_chunk(p, "not a JSON object");
				return;
			}
			gemini_obj(p, x);
		}
		return;
	}
	if (!json_is_object(o)) {
		bad_chunk(p, "not a JSON object");
		return;
	}
	if (json_object_get(o, "choices") != NULL) {
		openai_obj(p, o);
		if (whole && p->err == 0)
			p->done = 1;
	} else if (json_object_get(o, "candidates") != NULL ||
	    json_object_get(o, "usageMetadata") != NULL ||
	    json_object_get(o, "promptFeedback") != NULL) {
		gemini_obj(p, o);
	} else if (whole && obj == NULL &&
	    (json_object_get(o, "stopReason") != NULL ||
	    json_is_object(json_object_get(o, "output")))) {
		bedrock_whole(p, o);
	} else if (whole && obj != NULL && strcmp(obj, "response") == 0) {
		responses_whole(p, o);
	} else if (type != NULL && strncmp(type, "response.", 9) == 0) {
		responses_event(p, type, o);
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

/*
 * 1 when the n bytes at s are the start of a JSON text cut short (the
 * streaming scanner says truncated), else 0.
 */
static int
truncated_json(const char *s, size_t n)
{
	struct saop_detect_result r;
	int t;

	if (saop_detect_buffer(s, n, 0, &r) != 0)
		return 0;
	t = r.verdict == SAOP_TRUNCATED;
	saop_detect_result_free(&r);
	return t;
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
		if (p->at_end && truncated_json(s, n)) {
			/*
			 * The last event or line, cut short by a server
			 * that closed the connection mid-event: a network
			 * loss like any cut, not a broken answer.
			 */
			p->tail_cut = 1;
			return;
		}
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
	else if (p->at_end && p->data.len < 6 &&
	    memcmp(p->data.data, "[DONE]", p->data.len) == 0)
		p->tail_cut = 1;	/* the end marker, cut short */
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
	if (strcasestr(p->ctype, "vnd.amazon.eventstream") != NULL) {
		p->mode = M_EVENTS;
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
	p->cached = p->reasoning = -1;
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
	if (p->mode == M_EVENTS) {
		if (p->done || p->err != 0)
			return 0;
		p->es.limit = p->limit;
		r = saop__es_feed(&p->es, s, n, es_frame, p);
		if (r < -1)
			p->fail = -r;
		return -p->fail;
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
 * The tool calls p gathered as an OpenAI-style array (a call whose end
 * came with no arguments has "{}", as the SDKs read it), and in *open 1 +
 * the index of the call the answer was cut in (the last call whose end
 * did not come, when no finish reason came), else 0.  Returns a new
 * reference, NULL when there is no call (or on ENOMEM).
 */
static json_t *
calls_json(const struct saop__llm_parser *p, size_t *open)
{
	json_t *tc = NULL, *t;
	size_t i, n = 0;

	*open = 0;
	for (i = 0; i < p->ntools; i++) {
		const struct tool *x = &p->tools[i];
		const char *args = x->args.data != NULL ? x->args.data : "";
		size_t alen = x->args.len;

		if (x->server)
			continue;
		if (alen == 0 && x->closed) {
			args = "{}";
			alen = 2;
		}
		if (tc == NULL && (tc = json_array()) == NULL)
			return NULL;
		t = json_pack("{s:s?, s:s, s:{s:s?, s:s%}}", "id", x->id,
		    "type", "function", "function", "name", x->name,
		    "arguments", args, alen);
		if (t != NULL)
			json_array_append_new(tc, t);
		n++;
		if (p->finish[0] == '\0')
			*open = x->closed ? 0 : n;
	}
	return tc;
}

/*
 * The blocks of the tools the provider ran, as they came, a streamed
 * input put in as "input" (parsed, or the string received when it does
 * not parse).  Returns a new reference, NULL when there is none.
 */
static json_t *
server_json(const struct saop__llm_parser *p)
{
	json_t *out = NULL, *b, *in;
	json_error_t je;
	size_t i;

	for (i = 0; i < p->ntools; i++) {
		const struct tool *x = &p->tools[i];

		if (!x->server || x->block == NULL)
			continue;
		if (out == NULL && (out = json_array()) == NULL)
			return NULL;
		if ((b = json_deep_copy(x->block)) == NULL)
			continue;
		if (x->args.len > 0) {
			in = saop__llm_load(x->args.data, x->args.len, &je);
			if (in == NULL)
				in = json_stringn(x->args.data, x->args.len);
			json_object_set_new(b, "input", in);
		}
		json_array_append_new(out, b);
	}
	return out;
}

/*
 * Move what p gathered into a: the text (p keeps none of it), the finish
 * reason ("refusal" once refusal text came), the token counts, the status,
 * the tool calls as an OpenAI-style array (and the call a cut is in), the
 * other choices, the provider's own tools and the refusal.  Returns 0, or
 * -SAOP_ENOMEM when there is no text and an empty one cannot be made.
 */
int
saop__llm_fill_answer(struct saop__llm_parser *p, struct saop_llm_answer *a)
{
	json_t *tc;
	size_t i;

	free(a->raw);
	a->raw = saop__buf_steal(&p->text, &a->raw_len);
	if (p->refused && p->finish[0] != '\0' &&
	    strcmp(p->finish, "error") != 0)
		snprintf(p->finish, sizeof(p->finish), "refusal");
	snprintf(a->finish_reason, sizeof(a->finish_reason), "%s", p->finish);
	a->prompt_tokens = p->prompt;
	a->completion_tokens = p->completion;
	a->cached_tokens = p->cached;
	a->reasoning_tokens = p->reasoning;
	a->http_status = p->status;
	if ((tc = calls_json(p, &a->open_call)) != NULL) {
		json_decref(a->tool_calls);
		a->tool_calls = tc;
	}
	if ((tc = server_json(p)) != NULL) {
		json_decref(a->server_tools);
		a->server_tools = tc;
	}
	free(a->refusal);
	a->refusal = NULL;
	if (p->refused && p->finish[0] != '\0')
		a->refusal = p->refusal.len > 0 ?
		    strndup(p->refusal.data, p->refusal.len) : strdup("");
	for (i = 0; i < p->nalts; i++) {
		struct saop_llm_answer sub;
		json_t *c;

		memset(&sub, 0, sizeof(sub));
		if (saop__llm_fill_answer(p->alts[i].p, &sub) != 0) {
			saop_llm_answer_free(&sub);
			continue;
		}
		c = json_pack("{s:I, s:s%, s:s?, s:O?, s:s?}", "index",
		    (json_int_t)p->alts[i].index, "raw", sub.raw, sub.raw_len,
		    "finish_reason", sub.finish_reason[0] != '\0' ?
		    sub.finish_reason : NULL, "tool_calls", sub.tool_calls,
		    "refusal", sub.refusal);
		if (c != NULL) {
			/* Members the choice has not: absent, not null. */
			const char *k;
			void *tmp;
			json_t *v;

			json_object_foreach_safe(c, tmp, k, v)
				if (json_is_null(v) && strcmp(k,
				    "finish_reason") != 0)
					json_object_del(c, k);
		}
		if (c != NULL && a->choices == NULL &&
		    (a->choices = json_array()) == NULL) {
			json_decref(c);
			c = NULL;
		}
		if (c != NULL)
			json_array_append_new(a->choices, c);
		saop_llm_answer_free(&sub);
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
		/*
		 * Without a length or chunks, a server that closes the
		 * connection ends the body: what was left unfinished then
		 * is a cut (handle_json()), not a broken answer.
		 */
		p->at_end = 1;
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
			} else if (truncated_json(p->body.data, p->body.len)) {
				p->tail_cut = 1;
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
		} else if (p->mode == M_EVENTS && !p->done && p->err == 0 &&
		    !p->es.bad && p->es.buf.len > 0) {
			/* A frame cut short by the server's close. */
			p->tail_cut = 1;
		}
	}
	if (p->es.bad && !p->done && p->err == 0 && !p->fail) {
		/*
		 * A frame that failed its CRC or its framing: the answer
		 * stops before it, as if the network had broken there; the
		 * frame is never read.
		 */
		if (saop__llm_fill_answer(p, a) != 0)
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		a->broken = 1;
		a->finish_reason[0] = '\0';
		return saop__fail(e, SAOP_ENETWORK, 0, "a damaged event-"
		    "stream frame at byte %zu of the answer (%s): the answer "
		    "stops before it (%zu bytes of text kept)", p->es.offset,
		    p->es.why, a->raw_len);
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
		json_decref(a->choices);
		a->choices = NULL;
		json_decref(a->server_tools);
		a->server_tools = NULL;
		free(a->refusal);
		a->refusal = NULL;
		a->open_call = 0;
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
	if (p->finish[0] != '\0' && (p->done || clean)) {
		if (strcmp(a->finish_reason, "refusal") != 0)
			return 0;
		a->open_call = 0;
		return saop__llm_fail_masked(e, SAOP_EREFUSED, p->key,
		    "the model refused to answer%s%.200s",
		    a->refusal != NULL && *a->refusal != '\0' ? ": " : "",
		    a->refusal != NULL ? a->refusal : "");
	}
	if (p->mode == M_JSON && clean && !p->tail_cut)
		return saop__fail(e, SAOP_EPROTO, 0,
		    "the answer has no finish reason");
	a->broken = 1;
	a->finish_reason[0] = '\0';
	if (p->tail_cut)
		return saop__fail(e, SAOP_ENETWORK, 0, "the server closed the "
		    "connection in the middle of the answer after %zu bytes "
		    "(%zu bytes of text kept)", p->received, a->raw_len);
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
	for (i = 0; i < p->nalts; i++)
		saop__llm_parser_free(p->alts[i].p);
	free(p->alts);
	free(p->blks);
	saop__buf_free(&p->refusal);
	saop__buf_free(&p->line);
	saop__buf_free(&p->data);
	saop__buf_free(&p->body);
	saop__buf_free(&p->text);
	saop__es_free(&p->es);
	for (i = 0; i < p->ntools; i++) {
		free(p->tools[i].id);
		free(p->tools[i].name);
		saop__buf_free(&p->tools[i].args);
		json_decref(p->tools[i].block);
	}
	free(p->tools);
	free(p);
}
