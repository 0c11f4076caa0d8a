/*
 * mock-gemini.c: saop-mock's answers as Gemini generateContent and
 * streamGenerateContent write them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mock.h"

/* Gemini's finishReason. */
static const char *
gemini_finish(enum finish f)
{
	static const char *const w[] = { "STOP", "MAX_TOKENS", "STOP",
	    "SAFETY" };

	return w[f];
}

/*
 * A Gemini GenerateContentResponse of parts (taken), the last of an
 * answer (finishReason, usageMetadata) when last.
 */
static json_t *
gemini_obj(const struct said *s, json_t *parts, int last)
{
	json_t *cand = json_pack("{s:{s:o, s:s}, s:i}", "content", "parts",
	    parts, "role", "model", "index", 0);
	json_t *o;

	if (last && s->fin != FIN_NONE)
		json_object_set_new(cand, "finishReason",
		    json_string(gemini_finish(s->fin)));
	o = json_pack("{s:[o], s:s, s:s}", "candidates", cand, "modelVersion",
	    s->model, "responseId", "mock");
	if (last && s->in >= 0)
		json_object_set_new(o, "usageMetadata", json_pack("{s:I, s:I, "
		    "s:I}", "promptTokenCount", (json_int_t)s->in,
		    "candidatesTokenCount", (json_int_t)s->out,
		    "totalTokenCount", (json_int_t)(s->in + s->out)));
	return o;
}

/* Append a Gemini chunk o (taken) as an event or an array's member. */
static void
add_gemini(struct answer *a, const struct said *s, json_t *o)
{
	if (!s->gemini_array) {
		add_event(a, NULL, o);
		return;
	}
	add_piece(a, strdup(a->npiece == 0 ? "[" : ",\r\n"));
	add_json(a, o);
}

/* Gemini: chunks as SSE (alt=sse) or a JSON array, or one response. */
void
write_gemini(struct answer *a, const struct said *s)
{
	const struct reply *r = s->r;
	const char *p = r->text;
	json_t *x;

	if (!s->stream) {
		json_t *parts = json_array();

		if (*r->text != '\0')
			json_array_append_new(parts, json_pack("{s:s}", "text",
			    r->text));
		if (r->tool_name != NULL)
			json_array_append_new(parts, json_pack("{s:{s:s, s:o}}",
			    "functionCall", "name", r->tool_name, "args",
			    args_object(r)));
		add_json(a, gemini_obj(s, parts, 1));
		return;
	}
	while ((x = next_piece(&p, r->split)) != NULL) {
		int last = *p == '\0' && r->tool_name == NULL;

		add_gemini(a, s, gemini_obj(s, json_pack("[{s:o}]", "text", x),
		    last));
	}
	if (r->tool_name != NULL)
		add_gemini(a, s, gemini_obj(s, json_pack("[{s:{s:s, s:o}}]",
		    "functionCall", "name", r->tool_name, "args",
		    args_object(r)), 1));
	else if (*r->text == '\0')
		add_gemini(a, s, gemini_obj(s, json_array(), 1));
	if (r->stream_error != 0)
		add_gemini(a, s, json_pack("{s:{s:i, s:s, s:s}}", "error",
		    "code", r->stream_error, "message", r->stream_error_msg,
		    "status", gemini_status(r->stream_error)));
	if (s->gemini_array)
		add_piece(a, strdup("]"));
}
