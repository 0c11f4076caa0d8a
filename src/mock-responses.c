/* mock-responses.c: saop-mock's answers as OpenAI Responses writes them. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mock.h"

/* A Responses response object with status by fin (-1: in progress). */
static json_t *
responses_obj(const struct said *s, int fin, json_t *output)
{
	const char *status = fin < 0 ? "in_progress" : fin == FIN_LENGTH ?
	    "incomplete" : "completed";

	return json_pack("{s:s, s:s, s:i, s:s, s:n, s:o, s:s, s:o, s:o*}",
	    "id", "resp_mock", "object", "response", "created_at",
	    1700000000, "status", status, "error", "incomplete_details",
	    fin == FIN_LENGTH ? json_pack("{s:s}", "reason",
	    "max_output_tokens") : json_null(), "model", s->model, "output",
	    output, "usage", s->in < 0 ? NULL : json_pack("{s:I, s:I, s:I}",
	    "input_tokens", (json_int_t)s->in, "output_tokens",
	    (json_int_t)s->out, "total_tokens", (json_int_t)(s->in +
	    s->out)));
}

/* Append the Responses event o (taken) named by its own type. */
static void
add_typed(struct answer *a, json_t *o)
{
	add_event(a, json_string_value(json_object_get(o, "type")), o);
}

/* OpenAI Responses: its SSE events, or one response. */
void
write_responses(struct answer *a, const struct said *s)
{
	const struct reply *r = s->r;
	const char *p;
	json_t *x;
	int n = 0;

	if (!s->stream) {
		json_t *out = json_array();

		if (*r->text != '\0' || r->refusal != NULL)
			json_array_append_new(out, json_pack("{s:s, s:s, s:s, "
			    "s:s, s:[o]}", "type", "message", "id", "msg_mock",
			    "status", "completed", "role", "assistant",
			    "content", r->refusal != NULL ? json_pack(
			    "{s:s, s:s}", "type", "refusal", "refusal",
			    r->refusal) : json_pack("{s:s, s:s, s:[]}", "type",
			    "output_text", "text", r->text, "annotations")));
		if (r->tool_name != NULL)
			json_array_append_new(out, json_pack("{s:s, s:s, s:s, "
			    "s:s, s:s, s:s}", "type", "function_call", "id",
			    "fc_mock", "call_id", "call_mock1", "name",
			    r->tool_name, "arguments", r->tool_args, "status",
			    "completed"));
		add_json(a, responses_obj(s, s->fin == FIN_NONE ? -1 :
		    (int)s->fin, out));
		return;
	}
	add_typed(a, json_pack("{s:s, s:o}", "type", "response.created",
	    "response", responses_obj(s, -1, json_array())));
	if (*r->text != '\0' || r->refusal != NULL) {
		add_typed(a, json_pack("{s:s, s:i, s:{s:s, s:s, s:s, s:s, "
		    "s:[]}}", "type", "response.output_item.added",
		    "output_index", 0, "item", "type", "message", "id",
		    "msg_mock", "status", "in_progress", "role", "assistant",
		    "content"));
		for (p = r->text; (x = next_piece(&p, r->split)) != NULL; )
			add_typed(a, json_pack("{s:s, s:s, s:i, s:i, s:o}",
			    "type", "response.output_text.delta", "item_id",
			    "msg_mock", "output_index", 0, "content_index", 0,
			    "delta", x));
		for (p = r->refusal != NULL ? r->refusal : "";
		    (x = next_piece(&p, r->split)) != NULL; )
			add_typed(a, json_pack("{s:s, s:s, s:i, s:i, s:o}",
			    "type", "response.refusal.delta", "item_id",
			    "msg_mock", "output_index", 0, "content_index", 0,
			    "delta", x));
		n = 1;
	}
	if (r->tool_name != NULL) {
		add_typed(a, json_pack("{s:s, s:i, s:{s:s, s:s, s:s, s:s, "
		    "s:s, s:s}}", "type", "response.output_item.added",
		    "output_index", n, "item", "type", "function_call", "id",
		    "fc_mock", "call_id", "call_mock1", "name", r->tool_name,
		    "arguments", "", "status", "in_progress"));
		for (p = r->tool_args; (x = next_piece(&p, r->split)) != NULL; )
			add_typed(a, json_pack("{s:s, s:s, s:i, s:o}", "type",
			    "response.function_call_arguments.delta",
			    "item_id", "fc_mock", "output_index", n, "delta",
			    x));
	}
	if (r->stream_error != 0)
		add_typed(a, json_pack("{s:s, s:s, s:s, s:n}", "type", "error",
		    "code", error_type(r->stream_error), "message",
		    r->stream_error_msg, "param"));
	if (s->fin == FIN_NONE)
		return;		/* neither completed nor incomplete */
	add_typed(a, json_pack("{s:s, s:o}", "type", s->fin == FIN_LENGTH ?
	    "response.incomplete" : "response.completed", "response",
	    responses_obj(s, (int)s->fin, json_array())));
}
