/* mock-anthropic.c: saop-mock's answers as Anthropic Messages writes them. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mock.h"

/* Anthropic's stop_reason, a new JSON value (null with no finish). */
static json_t *
anthropic_stop(enum finish f)
{
	static const char *const w[] = { "end_turn", "max_tokens", "tool_use",
	    "refusal" };

	return f == FIN_NONE ? json_null() : json_string(w[f]);
}

/* Anthropic Messages: its SSE events, or one message. */
void
write_anthropic(struct answer *a, const struct said *s)
{
	const struct reply *r = s->r;
	const char *p;
	json_t *x;

	if (!s->stream) {
		json_t *content = json_array();

		if (*r->text != '\0')
			json_array_append_new(content, json_pack("{s:s, s:s}",
			    "type", "text", "text", r->text));
		if (r->tool_name != NULL)
			json_array_append_new(content, json_pack(
			    "{s:s, s:s, s:s, s:o}", "type", "tool_use", "id",
			    "toolu_mock1", "name", r->tool_name, "input",
			    args_object(r)));
		add_json(a, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:n, "
		    "s:o*}", "id", "msg_mock", "type", "message", "role",
		    "assistant", "model", s->model, "content", content,
		    "stop_reason", anthropic_stop(s->fin), "stop_sequence",
		    "usage", s->in < 0 ? NULL : json_pack("{s:I, s:I}",
		    "input_tokens", (json_int_t)s->in, "output_tokens",
		    (json_int_t)s->out)));
		return;
	}
	add_event(a, "message_start", json_pack("{s:s, s:{s:s, s:s, s:s, "
	    "s:s, s:[], s:n, s:n, s:o*}}", "type", "message_start",
	    "message", "id", "msg_mock", "type", "message", "role",
	    "assistant", "model", s->model, "content", "stop_reason",
	    "stop_sequence", "usage", s->in < 0 ? NULL : json_pack("{s:I, "
	    "s:i}", "input_tokens", (json_int_t)s->in, "output_tokens", 1)));
	add_event(a, "content_block_start", json_pack("{s:s, s:i, "
	    "s:{s:s, s:s}}", "type", "content_block_start", "index", 0,
	    "content_block", "type", "text", "text", ""));
	add_event(a, "ping", json_pack("{s:s}", "type", "ping"));
	for (p = r->text; (x = next_piece(&p, r->split)) != NULL; )
		add_event(a, "content_block_delta", json_pack("{s:s, s:i, "
		    "s:{s:s, s:o}}", "type", "content_block_delta", "index", 0,
		    "delta", "type", "text_delta", "text", x));
	add_event(a, "content_block_stop", json_pack("{s:s, s:i}", "type",
	    "content_block_stop", "index", 0));
	if (r->tool_name != NULL) {
		add_event(a, "content_block_start", json_pack("{s:s, s:i, "
		    "s:{s:s, s:s, s:s, s:{}}}", "type", "content_block_start",
		    "index", 1, "content_block", "type", "tool_use", "id",
		    "toolu_mock1", "name", r->tool_name, "input"));
		for (p = r->tool_args; (x = next_piece(&p, r->split)) != NULL; )
			add_event(a, "content_block_delta", json_pack(
			    "{s:s, s:i, s:{s:s, s:o}}", "type",
			    "content_block_delta", "index", 1, "delta", "type",
			    "input_json_delta", "partial_json", x));
		add_event(a, "content_block_stop", json_pack("{s:s, s:i}",
		    "type", "content_block_stop", "index", 1));
	}
	if (r->stream_error != 0)
		add_event(a, "error", json_pack("{s:s, s:{s:s, s:s}}", "type",
		    "error", "error", "type", error_type(r->stream_error),
		    "message", r->stream_error_msg));
	if (s->fin == FIN_NONE)
		return;		/* the stream ends cleanly, unfinished */
	add_event(a, "message_delta", json_pack("{s:s, s:{s:o, s:n}, "
	    "s:o*}", "type", "message_delta", "delta", "stop_reason",
	    anthropic_stop(s->fin), "stop_sequence", "usage", s->out < 0 ?
	    NULL : json_pack("{s:I}", "output_tokens", (json_int_t)s->out)));
	add_event(a, "message_stop", json_pack("{s:s}", "type",
	    "message_stop"));
}
