/* mock-openai.c: saop-mock's answers as OpenAI chat completions writes them. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mock.h"

/* An OpenAI chat completion chunk with one choice of delta and fin. */
static json_t *
openai_chunk(const struct said *s, json_t *delta, const char *fin)
{
	return json_pack("{s:s, s:s, s:i, s:s, s:[{s:i, s:o, s:o}]}",
	    "id", "chatcmpl-mock", "object", "chat.completion.chunk",
	    "created", 1700000000, "model", s->model, "choices", "index", 0,
	    "delta", delta, "finish_reason", fin != NULL ? json_string(fin) :
	    json_null());
}

/*
 * OpenAI's finish_reason (a refusal ends "stop", the refusal beside); NULL
 * with no finish.
 */
static const char *
openai_finish(enum finish f)
{
	return f == FIN_NONE ? NULL : f == FIN_LENGTH ? "length" :
	    f == FIN_TOOL ? "tool_calls" : "stop";
}

/* OpenAI chat completions: SSE chunks, or one chat.completion. */
void
write_openai(struct answer *a, const struct said *s)
{
	const struct reply *r = s->r;
	const char *p;
	json_t *x, *usage = s->in < 0 ? NULL : json_pack("{s:I, s:I, s:I}",
	    "prompt_tokens", (json_int_t)s->in, "completion_tokens",
	    (json_int_t)s->out, "total_tokens", (json_int_t)(s->in + s->out));

	if (!s->stream) {
		json_t *msg = json_pack("{s:s}", "role", "assistant");

		json_object_set_new(msg, "content", r->refusal != NULL ||
		    (r->tool_name != NULL && *r->text == '\0') ?
		    json_null() : json_string(r->text));
		if (r->refusal != NULL)
			json_object_set_new(msg, "refusal",
			    json_string(r->refusal));
		if (r->tool_name != NULL)
			json_object_set_new(msg, "tool_calls", json_pack(
			    "[{s:s, s:s, s:{s:s, s:s}}]", "id", "call_mock1",
			    "type", "function", "function", "name",
			    r->tool_name, "arguments", r->tool_args));
		add_json(a, json_pack("{s:s, s:s, s:i, s:s, "
		    "s:[{s:i, s:o, s:o}], s:o*}", "id", "chatcmpl-mock",
		    "object", "chat.completion", "created", 1700000000,
		    "model", s->model, "choices", "index", 0, "message", msg,
		    "finish_reason", s->fin == FIN_NONE ? json_null() :
		    json_string(openai_finish(s->fin)), "usage", usage));
		return;
	}
	add_event(a, NULL, openai_chunk(s, r->refusal != NULL ?
	    json_pack("{s:s, s:n, s:s}", "role", "assistant", "content",
	    "refusal", "") : json_pack("{s:s, s:s}", "role", "assistant",
	    "content", ""), NULL));
	for (p = r->text; (x = next_piece(&p, r->split)) != NULL; )
		add_event(a, NULL, openai_chunk(s, json_pack("{s:o}",
		    "content", x), NULL));
	for (p = r->refusal != NULL ? r->refusal : "";
	    (x = next_piece(&p, r->split)) != NULL; )
		add_event(a, NULL, openai_chunk(s, json_pack("{s:o}",
		    "refusal", x), NULL));
	if (r->tool_name != NULL) {
		add_event(a, NULL, openai_chunk(s, json_pack(
		    "{s:[{s:i, s:s, s:s, s:{s:s, s:s}}]}", "tool_calls",
		    "index", 0, "id", "call_mock1", "type", "function",
		    "function", "name", r->tool_name, "arguments", ""), NULL));
		for (p = r->tool_args; (x = next_piece(&p, r->split)) != NULL; )
			add_event(a, NULL, openai_chunk(s, json_pack(
			    "{s:[{s:i, s:{s:o}}]}", "tool_calls", "index", 0,
			    "function", "arguments", x), NULL));
	}
	if (r->stream_error != 0) {
		/* OpenRouter's: a chunk with an error, finish "error". */
		json_t *o = openai_chunk(s, json_pack("{s:s}", "content", ""),
		    "error");

		json_object_set_new(o, "error", json_pack("{s:i, s:s}",
		    "code", r->stream_error, "message", r->stream_error_msg));
		add_event(a, NULL, o);
		add_piece(a, strdup("data: [DONE]\n\n"));
	}
	if (s->fin == FIN_NONE) {
		json_decref(usage);
		return;		/* no finish, no usage, no [DONE] */
	}
	add_event(a, NULL, openai_chunk(s, json_object(),
	    openai_finish(s->fin)));
	if (usage != NULL)
		add_event(a, NULL, json_pack("{s:s, s:s, s:i, s:s, s:[], "
		    "s:o}", "id", "chatcmpl-mock", "object",
		    "chat.completion.chunk", "created", 1700000000, "model",
		    s->model, "choices", "usage", usage));
	add_piece(a, strdup("data: [DONE]\n\n"));
}
