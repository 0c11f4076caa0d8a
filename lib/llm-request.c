/*
 * llm-request.c: request translation: a record's provider-neutral chat
 * request into the wire body of OpenAI chat completions, Anthropic
 * Messages, OpenAI Responses, Gemini generateContent or Amazon Bedrock
 * Converse (one body_*()
 * function per wire format), and --dry-run's view of it.
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

/* ---- the request body ---- */

/*
 * Set member k of o to v, stealing v.  Returns 0, or -1 when v is NULL (a
 * constructor that failed) or on ENOMEM.
 */
static int
set(json_t *o, const char *k, json_t *v)
{
	return v == NULL || json_object_set_new(o, k, v) != 0 ? -1 : 0;
}

/*
 * Append to b the text of c: a string, or the "text" members of an array of
 * {"type":"text","text"} blocks.  Returns 0, or a negative code on ENOMEM.
 */
static int
text_of(const json_t *c, struct saop__buf *b)
{
	size_t i;
	json_t *x;

	if (json_is_string(c))
		return saop__buf_append_max(b, json_string_value(c),
		    json_string_length(c), SIZE_MAX / 2);
	json_array_foreach(c, i, x) {
		const json_t *t = json_object_get(x, "text");

		if (json_is_string(t) && saop__buf_append_max(b,
		    json_string_value(t), json_string_length(t),
		    SIZE_MAX / 2) != 0)
			return -1;
	}
	return 0;
}

/*
 * Is m a message of system text: role system, or developer (OpenAI's
 * newer name for it)?  1 or 0.  Formats that keep the system text apart
 * (Anthropic, Gemini) take both there.
 */
static int
system_text(const json_t *m)
{
	const char *role = json_string_value(json_object_get(m, "role"));

	return role != NULL && (strcmp(role, "system") == 0 ||
	    strcmp(role, "developer") == 0);
}

/*
 * The message m in Anthropic's form: an OpenAI tool result (role tool)
 * becomes a user tool_result block, an assistant message with tool_calls
 * text and tool_use blocks, any other its role and content.  Returns a new
 * reference, or NULL on ENOMEM.
 */
static json_t *
message_anthropic(const json_t *m)
{
	const char *role = json_string_value(json_object_get(m, "role"));
	json_t *content = json_object_get(m, "content");
	json_t *calls = json_object_get(m, "tool_calls");

	if (role != NULL && strcmp(role, "tool") == 0)
		return json_pack("{s:s, s:[{s:s, s:O?, s:O?}]}", "role", "user",
		    "content", "type", "tool_result", "tool_use_id",
		    json_object_get(m, "tool_call_id"), "content", content);
	if (role != NULL && strcmp(role, "assistant") == 0 &&
	    json_array_size(calls) > 0) {
		json_t *blocks = json_array(), *c;
		size_t i;

		if (json_is_string(content) && json_string_length(content) > 0)
			json_array_append_new(blocks, json_pack("{s:s, s:O}",
			    "type", "text", "text", content));
		else if (json_is_array(content))
			json_array_extend(blocks, content);
		json_array_foreach(calls, i, c) {
			const json_t *f = json_object_get(c, "function");
			const char *a = json_string_value(json_object_get(f,
			    "arguments"));
			json_t *in;

			in = a != NULL ? json_loads(a, 0, NULL) : NULL;
			if (!json_is_object(in)) {
				json_decref(in);
				in = json_object();
			}
			json_array_append_new(blocks,
			    json_pack("{s:s, s:O?, s:O?, s:o}", "type",
			    "tool_use", "id", json_object_get(c, "id"), "name",
			    json_object_get(f, "name"), "input", in));
		}
		return json_pack("{s:s, s:o}", "role", "assistant", "content",
		    blocks);
	}
	return json_pack("{s:O?, s:O?}", "role", json_object_get(m, "role"),
	    "content", content);
}

/*
 * Fill out with req as an OpenAI chat completions body: system becomes the
 * first message, stop_sequences stop, the other members are copied (tools
 * and tool_choice are set_tools()'), and stream is set (asking for usage
 * when streaming).  Returns 0, or -1 on ENOMEM.
 */
static int
body_openai(json_t *out, const json_t *req, int stream)
{
	const char *k;
	json_t *v, *msgs, *sys, *stop;

	json_object_foreach((json_t *)req, k, v) {
		if (strcmp(k, "model") == 0 || strcmp(k, "messages") == 0 ||
		    strcmp(k, "system") == 0 || strcmp(k, "stream") == 0 ||
		    strcmp(k, "stream_options") == 0 ||
		    strcmp(k, "stop_sequences") == 0 ||
		    strcmp(k, "tools") == 0 || strcmp(k, "tool_choice") == 0)
			continue;
		if (json_object_set(out, k, v) != 0)
			return -1;
	}
	if ((msgs = json_array()) == NULL || set(out, "messages", msgs) != 0)
		return -1;
	sys = json_object_get(req, "system");
	if (sys != NULL && !json_is_null(sys))
		json_array_append_new(msgs, json_pack("{s:s, s:O}", "role",
		    "system", "content", sys));
	json_array_extend(msgs, json_object_get(req, "messages"));
	stop = json_object_get(req, "stop");
	if (stop == NULL && json_object_get(req, "stop_sequences") != NULL)
		json_object_set(out, "stop",
		    json_object_get(req, "stop_sequences"));
	if (set(out, "stream", json_boolean(stream)) != 0)
		return -1;
	if (stream && set(out, "stream_options",
	    json_pack("{s:b}", "include_usage", 1)) != 0)
		return -1;
	return 0;
}

/*
 * Fill out with req as an Anthropic Messages body: system and developer
 * messages are gathered into "system" (after its text, or as more text
 * blocks after its blocks), OpenAI-style tool messages are turned
 * Anthropic's way, max_tokens is set (DEFAULT_MAX_TOKENS when req has
 * none), stop becomes stop_sequences, the sampling members in keep are
 * copied and the others dropped, and stream is set.  Returns 0, or -1 on
 * ENOMEM.
 */
static int
body_anthropic(json_t *out, const json_t *req, int stream)
{
	static const char *const keep[] = { "temperature", "top_p", "top_k",
	    "metadata", "thinking", "service_tier", NULL };
	json_t *msgs, *m, *sys, *stop, *mt, *x, *blocks = NULL;
	struct saop__buf st = { NULL, 0, 0 };
	size_t i;
	int r = -1;

	sys = json_object_get(req, "system");
	if (json_is_array(sys) && ((blocks = json_copy(sys)) == NULL ||
	    set(out, "system", blocks) != 0))
		goto out;
	if (json_is_string(sys) && saop__buf_append_max(&st,
	    json_string_value(sys), json_string_length(sys),
	    SIZE_MAX / 2) != 0)
		goto out;
	if ((msgs = json_array()) == NULL || set(out, "messages", msgs) != 0)
		goto out;
	json_array_foreach(json_object_get(req, "messages"), i, m) {
		if (!system_text(m)) {
			if ((x = message_anthropic(m)) == NULL ||
			    json_array_append_new(msgs, x) != 0)
				goto out;
			continue;
		}
		/* A system of blocks gets one more; a string, more text. */
		if (blocks != NULL) {
			struct saop__buf b = { NULL, 0, 0 };

			if (text_of(json_object_get(m, "content"), &b) != 0 ||
			    json_array_append_new(blocks, json_pack(
			    "{s:s, s:s%}", "type", "text", "text",
			    b.data != NULL ? b.data : "", b.len)) != 0) {
				saop__buf_free(&b);
				goto out;
			}
			saop__buf_free(&b);
			continue;
		}
		if (st.len > 0 && saop__buf_append_max(&st, "\n\n", 2,
		    SIZE_MAX / 2) != 0)
			goto out;
		if (text_of(json_object_get(m, "content"), &st) != 0)
			goto out;
	}
	if (st.len > 0 && set(out, "system",
	    json_stringn(st.data, st.len)) != 0)
		goto out;
	mt = json_object_get(req, "max_tokens");
	if (mt == NULL)
		mt = json_object_get(req, "max_completion_tokens");
	if (mt != NULL)
		json_object_set(out, "max_tokens", mt);
	else
		json_object_set_new(out, "max_tokens",
		    json_integer(DEFAULT_MAX_TOKENS));
	stop = json_object_get(req, "stop_sequences");
	if (stop == NULL)
		stop = json_object_get(req, "stop");
	if (json_is_string(stop))
		json_object_set_new(out, "stop_sequences",
		    json_pack("[O]", stop));
	else if (json_is_array(stop))
		json_object_set(out, "stop_sequences", stop);
	for (i = 0; keep[i] != NULL; i++)
		if ((x = json_object_get(req, keep[i])) != NULL)
			json_object_set(out, keep[i], x);
	if (set(out, "stream", json_boolean(stream)) != 0)
		goto out;
	r = 0;
out:
	saop__buf_free(&st);
	return r;
}

/* ---- OpenAI Responses ---- */

/*
 * Content c of a message of role role in the Responses form: a string
 * stays; the parts of an array become input_text / output_text (by the
 * role) and input_image; other parts are copied.  Returns a new
 * reference, or NULL on ENOMEM.
 */
static json_t *
content_responses(const json_t *c, const char *role)
{
	int out = role != NULL && strcmp(role, "assistant") == 0;
	json_t *a, *x, *u;
	size_t i;

	if (!json_is_array(c))
		return json_incref((json_t *)c);
	if ((a = json_array()) == NULL)
		return NULL;
	json_array_foreach(c, i, x) {
		const char *t = json_string_value(json_object_get(x, "type"));

		if (t != NULL && strcmp(t, "text") == 0)
			json_array_append_new(a, json_pack("{s:s, s:O?}",
			    "type", out ? "output_text" : "input_text", "text",
			    json_object_get(x, "text")));
		else if (t != NULL && strcmp(t, "image_url") == 0) {
			u = json_object_get(x, "image_url");
			if (json_is_object(u))
				u = json_object_get(u, "url");
			json_array_append_new(a, json_pack("{s:s, s:O?}",
			    "type", "input_image", "image_url", u));
		} else
			json_array_append(a, x);
	}
	return a;
}

/*
 * The messages of a neutral request as Responses input items: a tool
 * result (role tool) becomes a function_call_output, an assistant's
 * tool_calls function_call items after its text, any other message its
 * role and content.  Returns a new reference, or NULL on ENOMEM.
 */
static json_t *
input_responses(const json_t *msgs)
{
	json_t *in, *m, *c, *calls;
	size_t i, j;

	if ((in = json_array()) == NULL)
		return NULL;
	json_array_foreach(msgs, i, m) {
		const char *role = json_string_value(json_object_get(m,
		    "role"));
		json_t *content = json_object_get(m, "content");

		calls = json_object_get(m, "tool_calls");
		if (role != NULL && strcmp(role, "tool") == 0) {
			struct saop__buf b = { NULL, 0, 0 };

			if (text_of(content, &b) != 0) {
				saop__buf_free(&b);
				goto nomem;
			}
			json_array_append_new(in, json_pack("{s:s, s:O?, s:s%}",
			    "type", "function_call_output", "call_id",
			    json_object_get(m, "tool_call_id"), "output",
			    b.data != NULL ? b.data : "", b.len));
			saop__buf_free(&b);
			continue;
		}
		if (content != NULL && !json_is_null(content) &&
		    !(json_is_string(content) && json_string_length(content) ==
		    0 && json_array_size(calls) > 0))
			json_array_append_new(in, json_pack("{s:O?, s:o}",
			    "role", json_object_get(m, "role"), "content",
			    content_responses(content, role)));
		json_array_foreach(calls, j, c) {
			const json_t *f = json_object_get(c, "function");

			json_array_append_new(in, json_pack(
			    "{s:s, s:O?, s:O?, s:O?}", "type", "function_call",
			    "call_id", json_object_get(c, "id"), "name",
			    json_object_get(f, "name"), "arguments",
			    json_object_get(f, "arguments")));
		}
	}
	return in;
nomem:
	json_decref(in);
	return NULL;
}

/*
 * Fill out with req as an OpenAI Responses body: system becomes
 * instructions, messages input items, max_tokens max_output_tokens,
 * response_format text.format (tools and tool_choice are set_tools());
 * the members in keep are copied (the API refuses unknown ones: stop,
 * n and the like are dropped); stream is set.  Returns 0, or -1 on ENOMEM.
 */
static int
body_responses(json_t *out, const json_t *req, int stream)
{
	static const char *const keep[] = { "temperature", "top_p",
	    "metadata", "parallel_tool_calls", "reasoning", "service_tier",
	    "user", "store", "truncation", "include", "previous_response_id",
	    "prompt_cache_key", "safety_identifier", "text", "top_logprobs",
	    "max_tool_calls", "max_output_tokens", NULL };
	json_t *sys, *mt, *rf, *x;
	struct saop__buf st = { NULL, 0, 0 };
	size_t i;
	int r = -1;

	sys = json_object_get(req, "system");
	if (sys != NULL && text_of(sys, &st) != 0)
		goto out;
	if (st.len > 0 && set(out, "instructions",
	    json_stringn(st.data, st.len)) != 0)
		goto out;
	if (set(out, "input", input_responses(json_object_get(req,
	    "messages"))) != 0)
		goto out;
	for (i = 0; keep[i] != NULL; i++)
		if ((x = json_object_get(req, keep[i])) != NULL)
			json_object_set(out, keep[i], x);
	if ((mt = json_object_get(req, "max_tokens")) == NULL)
		mt = json_object_get(req, "max_completion_tokens");
	if (mt != NULL && json_object_get(req, "max_output_tokens") == NULL)
		json_object_set(out, "max_output_tokens", mt);
	rf = json_object_get(req, "response_format");
	if (json_is_object(rf) && json_object_get(req, "text") == NULL) {
		const char *t = json_string_value(json_object_get(rf, "type"));
		json_t *f = json_object_get(rf, "json_schema");

		if (t != NULL && strcmp(t, "json_schema") == 0 &&
		    json_is_object(f)) {
			if ((f = json_deep_copy(f)) == NULL || set(f, "type",
			    json_string("json_schema")) != 0 || set(out,
			    "text", json_pack("{s:o}", "format", f)) != 0)
				goto out;
		} else if (t != NULL && set(out, "text", json_pack("{s:{s:s}}",
		    "format", "type", t)) != 0)
			goto out;
	}
	if (set(out, "stream", json_boolean(stream)) != 0)
		goto out;
	r = 0;
out:
	saop__buf_free(&st);
	return r;
}

/* ---- Gemini ---- */

/*
 * Content c (a string, or an array of text parts) as Gemini parts
 * [{"text"}] appended to parts.  Returns 0, or -1 on ENOMEM.
 */
static int
parts_gemini(json_t *parts, const json_t *c)
{
	json_t *x;
	size_t i;

	if (json_is_string(c)) {
		if (json_string_length(c) > 0)
			return json_array_append_new(parts, json_pack("{s:O}",
			    "text", c));
		return 0;
	}
	json_array_foreach(c, i, x) {
		const json_t *t = json_object_get(x, "text");

		if (json_is_string(t) && json_array_append_new(parts,
		    json_pack("{s:O}", "text", t)) != 0)
			return -1;
	}
	return 0;
}

/*
 * The name of the tool call id among the assistants' tool_calls of msgs
 * (a tool result names only its call), or NULL.
 */
static const json_t *
call_name(const json_t *msgs, const json_t *id)
{
	const json_t *m, *c;
	size_t i, j;

	json_array_foreach(msgs, i, m)
		json_array_foreach(json_object_get(m, "tool_calls"), j, c)
			if (json_equal(json_object_get(c, "id"), id))
				return json_object_get(json_object_get(c,
				    "function"), "name");
	return NULL;
}

/*
 * The messages of a neutral request as Gemini contents: user stays,
 * assistant becomes model (its tool_calls functionCall parts), a tool
 * result a user functionResponse part (named after its call); system
 * messages are left to systemInstruction.  Returns a new reference, or
 * NULL on ENOMEM.
 */
static json_t *
contents_gemini(const json_t *msgs)
{
	json_t *out, *m, *parts, *c, *args;
	size_t i, j;

	if ((out = json_array()) == NULL)
		return NULL;
	json_array_foreach(msgs, i, m) {
		const char *role = json_string_value(json_object_get(m,
		    "role"));
		json_t *content = json_object_get(m, "content");

		if (system_text(m))
			continue;
		if ((parts = json_array()) == NULL)
			goto nomem;
		if (role != NULL && strcmp(role, "tool") == 0) {
			struct saop__buf b = { NULL, 0, 0 };
			json_t *resp;

			if (text_of(content, &b) != 0) {
				saop__buf_free(&b);
				json_decref(parts);
				goto nomem;
			}
			resp = b.len > 0 ? json_loadb(b.data, b.len, 0, NULL) :
			    NULL;
			if (!json_is_object(resp)) {
				json_decref(resp);
				resp = json_pack("{s:s%}", "result",
				    b.data != NULL ? b.data : "", b.len);
			}
			saop__buf_free(&b);
			json_array_append_new(parts, json_pack(
			    "{s:{s:O?, s:O?, s:o}}", "functionResponse", "id",
			    json_object_get(m, "tool_call_id"), "name",
			    call_name(msgs, json_object_get(m, "tool_call_id")),
			    "response", resp));
			role = "user";
		} else if (parts_gemini(parts, content) != 0) {
			json_decref(parts);
			goto nomem;
		}
		json_array_foreach(json_object_get(m, "tool_calls"), j, c) {
			const json_t *f = json_object_get(c, "function");
			const char *a = json_string_value(json_object_get(f,
			    "arguments"));

			args = a != NULL ? json_loads(a, 0, NULL) : NULL;
			if (!json_is_object(args)) {
				json_decref(args);
				args = json_object();
			}
			json_array_append_new(parts, json_pack(
			    "{s:{s:O?, s:O?, s:o}}", "functionCall", "id",
			    json_object_get(c, "id"), "name",
			    json_object_get(f, "name"), "args", args));
		}
		if (json_array_append_new(out, json_pack("{s:s, s:o}", "role",
		    role != NULL && strcmp(role, "assistant") == 0 ? "model" :
		    "user", "parts", parts)) != 0)
			goto nomem;
	}
	return out;
nomem:
	json_decref(out);
	return NULL;
}

/*
 * Fill out with req as a Gemini generateContent body: system (and system
 * and developer messages) becomes systemInstruction, messages contents,
 * the sampling members generationConfig (max_tokens maxOutputTokens, stop
 * stopSequences, n candidateCount, response_format responseMimeType and
 * responseJsonSchema); tools and tool_choice are set_tools()'.  The model
 * and streaming are in the URL, not the body.  Returns 0, or -1 on
 * ENOMEM.
 */
static int
body_gemini(json_t *out, const json_t *req)
{
	static const char *const gen[][2] = {
	    { "max_tokens", "maxOutputTokens" },
	    { "max_completion_tokens", "maxOutputTokens" },
	    { "temperature", "temperature" }, { "top_p", "topP" },
	    { "top_k", "topK" }, { "n", "candidateCount" },
	    { "seed", "seed" }, { "presence_penalty", "presencePenalty" },
	    { "frequency_penalty", "frequencyPenalty" } };
	json_t *gc, *x, *sysparts, *m, *stop, *rf;
	size_t i;

	json_object_del(out, "model");
	if ((sysparts = json_array()) == NULL ||
	    parts_gemini(sysparts, json_object_get(req, "system")) != 0) {
		json_decref(sysparts);
		return -1;
	}
	json_array_foreach(json_object_get(req, "messages"), i, m) {
		if (system_text(m) && parts_gemini(sysparts,
		    json_object_get(m, "content")) != 0) {
			json_decref(sysparts);
			return -1;
		}
	}
	if (json_array_size(sysparts) > 0) {
		if (set(out, "systemInstruction", json_pack("{s:o}", "parts",
		    sysparts)) != 0)
			return -1;
	} else
		json_decref(sysparts);
	if (set(out, "contents", contents_gemini(json_object_get(req,
	    "messages"))) != 0 || (gc = json_object()) == NULL)
		return -1;
	for (i = 0; i < sizeof(gen) / sizeof(gen[0]); i++)
		if ((x = json_object_get(req, gen[i][0])) != NULL &&
		    json_object_get(gc, gen[i][1]) == NULL)
			json_object_set(gc, gen[i][1], x);
	if ((stop = json_object_get(req, "stop_sequences")) == NULL)
		stop = json_object_get(req, "stop");
	if (json_is_string(stop))
		json_object_set_new(gc, "stopSequences", json_pack("[O]", stop));
	else if (json_is_array(stop))
		json_object_set(gc, "stopSequences", stop);
	rf = json_object_get(req, "response_format");
	x = json_object_get(rf, "type");
	if (json_is_string(x) && strcmp(json_string_value(x), "text") != 0) {
		json_object_set_new(gc, "responseMimeType",
		    json_string("application/json"));
		x = json_object_get(json_object_get(rf, "json_schema"),
		    "schema");
		if (x != NULL)
			json_object_set(gc, "responseJsonSchema", x);
	}
	if (json_object_size(gc) > 0) {
		if (set(out, "generationConfig", gc) != 0)
			return -1;
	} else
		json_decref(gc);
	return 0;
}

/* ---- tools and tool_choice, in every format ---- */

/*
 * Refuse the request: SAOP_EDATA with the JSON Pointer field (into the
 * record) and the message fmt formats.  Returns -SAOP_EDATA.
 */
static int SAOP__PRINTF(3, 4)
refuse(struct saop_err *e, const char *field, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	saop__fail(e, SAOP_EDATA, 0, "%s", msg);
	if (e != NULL)
		snprintf(e->field, sizeof(e->field), "%s", field);
	return -SAOP_EDATA;
}

/*
 * A function tool as read from any of its forms, its members borrowed
 * from the request: chat completions' {"type":"function","function":
 * {name, description, parameters, strict}}, Responses' {"type":
 * "function", name, description, parameters, strict} and Anthropic's
 * {name, description, input_schema}.
 */
struct ftool {
	enum saop_provider form;	/* the format whose own form it is */
	json_t *name, *desc, *schema, *strict;
};

/* Is t a function tool (1, f filled) or another, a built-in one (0)? */
static int
ftool_read(const json_t *t, struct ftool *f)
{
	const json_t *src = json_object_get(t, "function");
	const char *type = json_string_value(json_object_get(t, "type"));

	memset(f, 0, sizeof(*f));
	if (src != NULL) {
		f->form = SAOP_PROVIDER_OPENAI;
		f->schema = json_object_get(src, "parameters");
	} else if ((f->schema = json_object_get(t, "input_schema")) != NULL) {
		f->form = SAOP_PROVIDER_ANTHROPIC;
		src = t;
	} else if (type != NULL && strcmp(type, "function") == 0) {
		f->form = SAOP_PROVIDER_RESPONSES;
		f->schema = json_object_get(t, "parameters");
		src = t;
	} else
		return 0;
	f->name = json_object_get(src, "name");
	f->desc = json_object_get(src, "description");
	f->strict = json_object_get(src, "strict");
	return 1;
}

/*
 * The function tool f in p's form: chat completions' nested one,
 * Responses' flat one, Anthropic's {name, description, input_schema}, a
 * Gemini function declaration (parametersJsonSchema).  Anthropic and
 * Responses, which need a schema, get an empty object schema when f has
 * none; strict goes where the format takes it (OpenAI's two).  Returns
 * a new reference, or NULL on ENOMEM.
 */
static json_t *
ftool_write(const struct ftool *f, enum saop_provider p)
{
	const char *key = p == SAOP_PROVIDER_ANTHROPIC ? "input_schema" :
	    p == SAOP_PROVIDER_GEMINI ? "parametersJsonSchema" : "parameters";
	int openai = p == SAOP_PROVIDER_OPENAI || p == SAOP_PROVIDER_RESPONSES;
	json_t *n = json_pack("{s:O}", "name", f->name);

	if (n == NULL)
		return NULL;
	if (f->desc != NULL && json_object_set(n, "description", f->desc) != 0)
		goto nomem;
	if (f->schema != NULL) {
		if (json_object_set(n, key, f->schema) != 0)
			goto nomem;
	} else if ((p == SAOP_PROVIDER_ANTHROPIC ||
	    p == SAOP_PROVIDER_RESPONSES) &&
	    set(n, key, json_pack("{s:s}", "type", "object")) != 0)
		goto nomem;
	if (f->strict != NULL && openai &&
	    json_object_set(n, "strict", f->strict) != 0)
		goto nomem;
	if (p == SAOP_PROVIDER_OPENAI)
		return json_pack("{s:s, s:o}", "type", "function", "function",
		    n);
	if (p == SAOP_PROVIDER_RESPONSES && set(n, "type",
	    json_string("function")) != 0)
		goto nomem;
	return n;
nomem:
	json_decref(n);
	return NULL;
}

/*
 * The request's tools in p's form, in *out (a new reference): a function
 * tool already in p's form is copied (with what saop does not read, such
 * as cache_control), one of another form written p's way (Gemini's all
 * in one functionDeclarations entry, after the others); any other tool
 * (a built-in one) is copied, but Gemini takes only its own, objects
 * without "type" ({"googleSearch": {}}): the built-in tool of another API
 * has no Gemini reading that keeps its options, and dropping it would
 * change what the model can do unseen.  Returns 0, or -SAOP_EDATA (a
 * function tool without a name, a tool Gemini does not take: e names
 * it) or -SAOP_ENOMEM.
 */
static int
tools_write(const json_t *tools, enum saop_provider p, json_t **out,
    struct saop_err *e)
{
	const char *why;
	char field[64];
	struct ftool f;
	json_t *decl, *t, *n;
	size_t i;
	int fn;

	if ((*out = json_array()) == NULL || (decl = json_array()) == NULL)
		goto nomem;
	json_array_foreach(tools, i, t) {
		why = NULL;
		if (!(fn = ftool_read(t, &f)) && p == SAOP_PROVIDER_GEMINI &&
		    (!json_is_object(t) || json_object_get(t, "type") != NULL))
			why = "not a tool Gemini takes: a function tool, or "
			    "one of Gemini's own ({\"googleSearch\": {}}, "
			    "{\"codeExecution\": {}}...)";
		else if (fn && !json_is_string(f.name))
			why = "a function tool without a name";
		if (why != NULL) {
			json_decref(decl);
			json_decref(*out);
			*out = NULL;
			snprintf(field, sizeof(field), "/request/tools/%zu", i);
			return refuse(e, field, "%s", why);
		}
		n = !fn || f.form == p ? json_incref(t) : ftool_write(&f, p);
		/* (json_array_append_new() fails on a NULL n too.) */
		if (json_array_append_new(p == SAOP_PROVIDER_GEMINI && fn ?
		    decl : *out, n) != 0)
			goto nomem_decl;
	}
	if (json_array_size(decl) == 0)
		json_decref(decl);
	else if (json_array_append_new(*out, json_pack("{s:o}",
	    "functionDeclarations", decl)) != 0)
		goto nomem;
	return 0;
nomem_decl:
	json_decref(decl);
nomem:
	json_decref(*out);
	*out = NULL;
	return saop__fail(e, SAOP_ENOMEM, ENOMEM,
	    "out of memory building the request");
}

/*
 * A request's tool_choice as read from any of its forms, borrowed from
 * the request: a word ("auto", "none", "required"), chat completions'
 * {"type":"function","function":{"name"}}, Responses' {"type":
 * "function","name"}, Anthropic's {"type":"auto"|"any"|"none"} and
 * {"type":"tool","name"}.  Neither word nor name: a form saop does not
 * know.
 */
struct choice {
	const json_t *given;	/* the request's tool_choice */
	const char *word;	/* "auto", "none" or "required", or NULL */
	const json_t *name;	/* the one function to call, or NULL */
	int anthropic;		/* given in Anthropic's form */
};

/*
 * Read c into ch.  Returns 0, or -SAOP_EDATA (e naming the member) for a
 * choice of one tool that names none: no format has a reading for it.
 */
static int
choice_read(const json_t *c, struct choice *ch, struct saop_err *e)
{
	const json_t *f = json_object_get(c, "function");
	const char *w = json_string_value(c);

	memset(ch, 0, sizeof(*ch));
	ch->given = c;
	if (f != NULL) {
		if (!json_is_string(ch->name = json_object_get(f, "name")))
			return refuse(e, "/request/tool_choice/function/name",
			    "the tool_choice names no tool to call");
		return 0;
	}
	if (w == NULL && (w = json_string_value(json_object_get(c,
	    "type"))) == NULL)
		return 0;
	if (json_is_object(c) && (strcmp(w, "tool") == 0 ||
	    strcmp(w, "function") == 0)) {
		if (!json_is_string(ch->name = json_object_get(c, "name")))
			return refuse(e, "/request/tool_choice/name",
			    "the tool_choice names no tool to call");
		ch->anthropic = strcmp(w, "tool") == 0;
		return 0;
	}
	if (strcmp(w, "auto") == 0)
		ch->word = "auto";
	else if (strcmp(w, "none") == 0)
		ch->word = "none";
	else if (strcmp(w, "required") == 0 || strcmp(w, "any") == 0)
		ch->word = "required";
	ch->anthropic = json_is_object(c) && ch->word != NULL &&
	    strcmp(w, "required") != 0;
	return 0;
}

/*
 * ch in p's form: a word as itself (Anthropic's {"type"}, "required"
 * being "any"; Gemini's functionCallingConfig mode AUTO, NONE, ANY), one
 * function named as p names it (Gemini: ANY with allowedFunctionNames),
 * Anthropic's form to Anthropic as it is (disable_parallel_tool_use
 * kept), a form saop does not know as it is (never for Gemini: see
 * set_tools()).  Returns a new reference, or NULL on ENOMEM.
 */
static json_t *
choice_write(const struct choice *ch, enum saop_provider p)
{
	static const char *const mode[][2] = { { "auto", "AUTO" },
	    { "none", "NONE" }, { "required", "ANY" } };
	size_t i;

	if (p == SAOP_PROVIDER_ANTHROPIC && ch->anthropic)
		return json_incref((json_t *)ch->given);
	if (ch->name != NULL)
		switch (p) {
		case SAOP_PROVIDER_ANTHROPIC:
			return json_pack("{s:s, s:O}", "type", "tool", "name",
			    ch->name);
		case SAOP_PROVIDER_RESPONSES:
			return json_pack("{s:s, s:O}", "type", "function",
			    "name", ch->name);
		case SAOP_PROVIDER_GEMINI:
			return json_pack("{s:{s:s, s:[O]}}",
			    "functionCallingConfig", "mode", "ANY",
			    "allowedFunctionNames", ch->name);
		default:
			return json_pack("{s:s, s:{s:O}}", "type", "function",
			    "function", "name", ch->name);
		}
	if (ch->word == NULL)
		return json_incref((json_t *)ch->given);
	if (p == SAOP_PROVIDER_ANTHROPIC)
		return json_pack("{s:s}", "type", strcmp(ch->word,
		    "required") == 0 ? "any" : ch->word);
	if (p != SAOP_PROVIDER_GEMINI)
		return json_string(ch->word);
	for (i = 0; strcmp(mode[i][0], ch->word) != 0; i++)
		;
	return json_pack("{s:{s:s}}", "functionCallingConfig", "mode",
	    mode[i][1]);
}

/*
 * Set out's tools and tool choice (Gemini's toolConfig) from req's, in
 * p's form (a null tool_choice is none); Anthropic's
 * disable_parallel_tool_use is OpenAI's parallel_tool_calls false unless
 * req sets that.  Returns 0, or -SAOP_EDATA (a tool or a tool choice with
 * no reading in p: e names it) or -SAOP_ENOMEM.
 */
static int
set_tools(json_t *out, const json_t *req, enum saop_provider p,
    struct saop_err *e)
{
	const json_t *c = json_object_get(req, "tool_choice");
	struct choice ch;
	json_t *tools;
	int r;

	if (json_is_array(json_object_get(req, "tools"))) {
		if ((r = tools_write(json_object_get(req, "tools"), p, &tools,
		    e)) != 0)
			return r;
		if (set(out, "tools", tools) != 0)
			goto nomem;
	}
	if (c == NULL || json_is_null(c))
		return 0;
	if ((r = choice_read(c, &ch, e)) != 0)
		return r;
	if (p == SAOP_PROVIDER_GEMINI && ch.word == NULL && ch.name == NULL)
		return refuse(e, "/request/tool_choice", "a tool_choice Gemini "
		    "has no reading for (auto, none, required, or one "
		    "function named)");
	if (set(out, p == SAOP_PROVIDER_GEMINI ? "toolConfig" : "tool_choice",
	    choice_write(&ch, p)) != 0)
		goto nomem;
	if ((p == SAOP_PROVIDER_OPENAI || p == SAOP_PROVIDER_RESPONSES) &&
	    json_is_true(json_object_get(c, "disable_parallel_tool_use")) &&
	    json_object_get(req, "parallel_tool_calls") == NULL &&
	    set(out, "parallel_tool_calls", json_false()) != 0)
		goto nomem;
	return 0;
nomem:
	return saop__fail(e, SAOP_ENOMEM, ENOMEM,
	    "out of memory building the request");
}

/* ---- Amazon Bedrock Converse ---- */

/*
 * Append to blocks the content c of a message as Converse content blocks:
 * a string as one text block, an array's text parts as text blocks (empty
 * text dropped: Converse refuses blank blocks; other parts have no
 * reading and are dropped).  Returns 0, or -1 on ENOMEM.
 */
static int
blocks_bedrock(json_t *blocks, const json_t *c)
{
	json_t *x;
	size_t i;

	if (json_is_string(c))
		return json_string_length(c) == 0 ? 0 :
		    json_array_append_new(blocks, json_pack("{s:O}", "text",
		    c));
	json_array_foreach(c, i, x) {
		const json_t *t = json_object_get(x, "text");

		if (json_is_string(t) && json_string_length(t) > 0 &&
		    json_array_append_new(blocks, json_pack("{s:O}", "text",
		    t)) != 0)
			return -1;
	}
	return 0;
}

/*
 * The content blocks of the message m (not a system one) in Converse's
 * form, with its role in *role: a tool result (role tool) a user
 * toolResult block, an assistant's tool_calls toolUse blocks after its
 * text.  Returns a new reference, or NULL on ENOMEM.
 */
static json_t *
message_bedrock(const json_t *m, const char **role)
{
	const char *r = json_string_value(json_object_get(m, "role"));
	const json_t *c = json_object_get(m, "content"), *call;
	json_t *blocks = json_array();
	size_t i;

	*role = r != NULL && strcmp(r, "assistant") == 0 ? "assistant" :
	    "user";
	if (blocks == NULL)
		return NULL;
	if (r != NULL && strcmp(r, "tool") == 0) {
		json_t *tc;

		if ((tc = json_array()) == NULL || blocks_bedrock(tc, c) != 0 ||
		    json_array_append_new(blocks, json_pack("{s:{s:O?, s:o}}",
		    "toolResult", "toolUseId", json_object_get(m,
		    "tool_call_id"), "content", tc)) != 0) {
			json_decref(blocks);
			return NULL;
		}
		return blocks;
	}
	if (blocks_bedrock(blocks, c) != 0) {
		json_decref(blocks);
		return NULL;
	}
	json_array_foreach(json_object_get(m, "tool_calls"), i, call) {
		const json_t *f = json_object_get(call, "function");
		const char *a = json_string_value(json_object_get(f,
		    "arguments"));
		json_t *in;

		in = a != NULL ? json_loads(a, 0, NULL) : NULL;
		if (!json_is_object(in)) {
			json_decref(in);
			in = json_object();
		}
		if (json_array_append_new(blocks, json_pack("{s:{s:O?, s:O?, "
		    "s:o}}", "toolUse", "toolUseId", json_object_get(call,
		    "id"), "name", json_object_get(f, "name"), "input",
		    in)) != 0) {
			json_decref(blocks);
			return NULL;
		}
	}
	return blocks;
}

/*
 * Fill out with req as a Converse body: system and developer messages
 * (and req's "system") as system text blocks; the other messages as
 * Converse messages, those of one role in a row joined (tool results
 * after one another are one user turn, as Converse wants); max_tokens,
 * temperature, top_p and stop as inferenceConfig; tools and tool_choice
 * as toolConfig (tool_choice none: the tools with no toolChoice, for
 * Converse has no "none").  A continuation's last assistant turn is the
 * prefill Bedrock's Claude models continue.  Returns 0, -SAOP_EDATA (a
 * function tool without a name, e naming it) or -SAOP_ENOMEM.
 */
static int
body_bedrock(json_t *out, const json_t *req, struct saop_err *e)
{
	json_t *msgs, *sys, *m, *b, *ic, *x, *last = NULL, *tools = NULL;
	const char *role, *last_role = NULL;
	struct ftool f;
	struct choice ch;
	size_t i;
	int r;

	if ((sys = json_array()) == NULL || set(out, "system", sys) != 0 ||
	    (msgs = json_array()) == NULL || set(out, "messages", msgs) != 0 ||
	    blocks_bedrock(sys, json_object_get(req, "system")) != 0)
		goto nomem;
	json_array_foreach(json_object_get(req, "messages"), i, m) {
		if (system_text(m)) {
			if (blocks_bedrock(sys, json_object_get(m, "content"))
			    != 0)
				goto nomem;
			continue;
		}
		if ((b = message_bedrock(m, &role)) == NULL)
			goto nomem;
		if (last != NULL && strcmp(role, last_role) == 0) {
			r = json_array_extend(json_object_get(last, "content"),
			    b);
			json_decref(b);
			if (r != 0)
				goto nomem;
			continue;
		}
		if ((last = json_pack("{s:s, s:o}", "role", role, "content",
		    b)) == NULL || json_array_append_new(msgs, last) != 0)
			goto nomem;
		last_role = role;
	}
	if (json_array_size(sys) == 0)
		json_object_del(out, "system");
	if ((ic = json_object()) == NULL || set(out, "inferenceConfig", ic) !=
	    0)
		goto nomem;
	if ((x = json_object_get(req, "max_tokens")) != NULL ||
	    (x = json_object_get(req, "max_completion_tokens")) != NULL)
		json_object_set(ic, "maxTokens", x);
	if ((x = json_object_get(req, "temperature")) != NULL)
		json_object_set(ic, "temperature", x);
	if ((x = json_object_get(req, "top_p")) != NULL)
		json_object_set(ic, "topP", x);
	if ((x = json_object_get(req, "stop_sequences")) == NULL)
		x = json_object_get(req, "stop");
	if (json_is_string(x))
		json_object_set_new(ic, "stopSequences", json_pack("[O]", x));
	else if (json_is_array(x))
		json_object_set(ic, "stopSequences", x);
	if (json_object_size(ic) == 0)
		json_object_del(out, "inferenceConfig");
	json_array_foreach(json_object_get(req, "tools"), i, x) {
		char field[64];

		snprintf(field, sizeof(field), "/request/tools/%zu", i);
		if (!ftool_read(x, &f))
			return refuse(e, field, "not a tool Bedrock takes: "
			    "a function tool");
		if (!json_is_string(f.name))
			return refuse(e, field, "a function tool without a "
			    "name");
		if (tools == NULL && ((tools = json_array()) == NULL ||
		    set(out, "toolConfig", json_pack("{s:o}", "tools",
		    tools)) != 0))
			goto nomem;
		ic = f.schema != NULL ? json_incref(f.schema) :
		    json_pack("{s:s}", "type", "object");
		b = json_pack("{s:{s:O, s:{s:o}}}", "toolSpec", "name", f.name,
		    "inputSchema", "json", ic);
		if (b == NULL)
			goto nomem;
		if (f.desc != NULL)
			json_object_set(json_object_get(b, "toolSpec"),
			    "description", f.desc);
		if (json_array_append_new(tools, b) != 0)
			goto nomem;
	}
	x = json_object_get(req, "tool_choice");
	if (tools == NULL || x == NULL || json_is_null(x))
		return 0;
	if ((r = choice_read(x, &ch, e)) != 0)
		return r;
	if (ch.name != NULL)
		b = json_pack("{s:{s:O}}", "tool", "name", ch.name);
	else if (ch.word != NULL && strcmp(ch.word, "required") == 0)
		b = json_pack("{s:{}}", "any");
	else if (ch.word != NULL && strcmp(ch.word, "auto") == 0)
		b = json_pack("{s:{}}", "auto");
	else if (ch.word != NULL)
		return 0;	/* none */
	else
		return refuse(e, "/request/tool_choice", "a tool_choice "
		    "Bedrock has no reading for (auto, required, or one "
		    "function named)");
	if (set(json_object_get(out, "toolConfig"), "toolChoice", b) != 0)
		goto nomem;
	return 0;
nomem:
	return saop__fail(e, SAOP_ENOMEM, ENOMEM,
	    "out of memory building the request");
}

/*
 * The wire body for request in cfg's provider format, with "stream" set
 * from cfg->stream.  Returns a new reference, or NULL and SAOP_EDATA (no
 * messages; a tool or tool choice with no reading in the format, e->field
 * naming it), SAOP_ECONFIG (no model) or SAOP_ENOMEM.
 */
json_t *
saop__llm_body(const struct saop_llm_config *cfg, const json_t *request,
    struct saop_err *e)
{
	json_t *out, *model;
	int r;

	if (!json_is_object(request)) {
		saop__fail(e, SAOP_EDATA, 0, "request is not a JSON object");
		return NULL;
	}
	if (!json_is_array(json_object_get(request, "messages"))) {
		saop__fail(e, SAOP_EDATA, 0,
		    "request has no \"messages\" array");
		return NULL;
	}
	model = json_object_get(request, "model");
	if (!json_is_string(model) && cfg->model == NULL) {
		saop__fail(e, SAOP_ECONFIG, 0,
		    "no model: the request names none and SAOP_MODEL is "
		    "not set");
		return NULL;
	}
	if ((out = json_object()) == NULL)
		goto nomem;
	if (json_is_string(model))
		json_object_set(out, "model", model);
	else
		json_object_set_new(out, "model", json_string(cfg->model));
	switch (cfg->provider) {
	case SAOP_PROVIDER_ANTHROPIC:
		r = body_anthropic(out, request, cfg->stream);
		break;
	case SAOP_PROVIDER_RESPONSES:
		r = body_responses(out, request, cfg->stream);
		break;
	case SAOP_PROVIDER_GEMINI:
		r = body_gemini(out, request);
		break;
	case SAOP_PROVIDER_BEDROCK:
		/* The model is in the URL; the tools its own way. */
		json_object_del(out, "model");
		if ((r = body_bedrock(out, request, e)) == -SAOP_ENOMEM)
			break;
		if (r != 0) {
			json_decref(out);
			return NULL;
		}
		break;
	default:
		r = body_openai(out, request, cfg->stream);
		break;
	}
	if (r == 0 && cfg->provider != SAOP_PROVIDER_BEDROCK &&
	    (r = set_tools(out, request, cfg->provider, e)) != 0) {
		json_decref(out);
		return NULL;
	}
	/* The user's schema, where the provider takes it (llm-schema.c). */
	if (r == 0)
		r = saop__llm_schema_apply(out, cfg, request);
	/*
	 * Claude on Vertex AI: the model is in the path, the API version in
	 * the body (Google's "Request predictions with Claude models").
	 */
	if (r == 0 && cfg->vertex && cfg->provider ==
	    SAOP_PROVIDER_ANTHROPIC) {
		json_object_del(out, "model");
		r = json_object_set_new(out, "anthropic_version",
		    json_string(VERTEX_ANTHROPIC_VERSION));
	}
	if (r == 0)
		return out;
	json_decref(out);
nomem:
	saop__fail(e, SAOP_ENOMEM, ENOMEM,
	    "out of memory building the request");
	return NULL;
}

/* The key as --dry-run shows it: "sk-...****", or "****" when short. */
static void
mask_key(const char *key, char out[32])
{
	if (strlen(key) >= 12)
		snprintf(out, 32, "%.3s...****", key);
	else
		snprintf(out, 32, "****");
}

/* Print saop's own header line h, unless one of cfg's replaces it. */
static void
print_header(FILE *f, const struct saop_llm_config *cfg, const char *h)
{
	if (!saop__llm_header_given(cfg, h))
		fprintf(f, "%s\n", h);
}

/*
 * Print the user's header line h; one that can carry a secret (the key's
 * header, Authorization, a name with "key", "token" or "secret" in it)
 * has its value masked.
 */
static void
print_shown_header(FILE *f, const struct saop_llm_config *cfg, const char *h)
{
	static const char *const secret[] = { "authorization", "key", "token",
	    "secret", "cookie" };
	size_t n = strcspn(h, ":"), i;
	char name[128], masked[32];
	const char *v;

	snprintf(name, sizeof(name), "%.*s", (int)n, h);
	for (i = 0; name[i] != '\0'; i++)
		name[i] = (char)tolower((unsigned char)name[i]);
	for (i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
		if (strstr(name, secret[i]) != NULL)
			break;
	if (i == sizeof(secret) / sizeof(secret[0]) && (cfg->auth_header ==
	    NULL || strncasecmp(cfg->auth_header, h, n) != 0 ||
	    cfg->auth_header[n] != '\0')) {
		fprintf(f, "%s\n", h);
		return;
	}
	v = h + n + (h[n] == ':');
	v += strspn(v, " \t");
	/* "Bearer KEY": the scheme shown, the credentials masked. */
	if (strncasecmp(v, "Bearer ", 7) == 0) {
		mask_key(v + 7, masked);
		fprintf(f, "%.*s: Bearer %s\n", (int)n, h, masked);
	} else {
		mask_key(v, masked);
		fprintf(f, "%.*s: %s\n", (int)n, h, masked);
	}
}

/*
 * Print the headers of a signed call of cfg to url with body (as
 * saop_llm_call() would sign it now): x-amz-date as it is, the session
 * token masked, Authorization with the access key's ID and the signature
 * masked.  Returns 0, or a negative code with e filled.
 */
static int
print_signed(FILE *f, const struct saop_llm_config *cfg, const char *url,
    const json_t *body, struct saop_err *e)
{
	struct saop__sigv4_out sig;
	char date[17], masked[32], *text, *cred, *sh;
	int r;

	if ((text = json_dumps(body, JSON_COMPACT)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	r = saop__llm_sigv4(cfg, url, text, time(NULL), date, &sig);
	free(text);
	if (r < 0)
		return saop__fail(e, -r, 0, "cannot sign the call (AWS "
		    "Signature Version 4)%s%s", *saop__sigv4_why() != '\0' ?
		    ": " : "", saop__sigv4_why());
	/* "Credential=ID/SCOPE, SignedHeaders=..., Signature=HEX". */
	cred = strstr(sig.authorization, "Credential=");
	sh = strstr(sig.authorization, ", SignedHeaders=");
	mask_key(cfg->aws_id, masked);
	fprintf(f, "x-amz-date: %s\n", date);
	if (cfg->aws_token != NULL)
		fprintf(f, "x-amz-security-token: ****\n");
	if (cred != NULL && sh != NULL)
		fprintf(f, "Authorization: AWS4-HMAC-SHA256 Credential=%s%.*s"
		    "%.*sSignature=****\n", masked, (int)(sh - cred - 11 -
		    strlen(cfg->aws_id)), cred + 11 + strlen(cfg->aws_id),
		    (int)(strstr(sh, "Signature=") - sh), sh);
	saop__sigv4_free(&sig);
	return 0;
}

/*
 * Write what saop_llm_call() would send to f, the key masked (see saop.h).
 * Returns 0, or -SAOP_ECONFIG, -SAOP_EDATA, -SAOP_ENOMEM or -SAOP_EIO with
 * e filled.
 */
int
saop_llm_dry_run(FILE *f, const struct saop_llm_config *cfg,
    const json_t *request, struct saop_err *e)
{
	struct saop_err dummy;
	json_t *body;
	char *url, *shown = NULL, *text, masked[32], *auth;
	size_t i;
	int r = 0;

	if (e == NULL)
		e = &dummy;
	if (cfg->problem != NULL)
		return saop__fail(e, SAOP_ECONFIG, 0, "%s", cfg->problem);
	if ((body = saop__llm_body(cfg, request, e)) == NULL)
		return -e->code;
	url = saop__llm_endpoint(cfg, saop__llm_model_of(cfg, request));
	text = json_dumps(body, JSON_INDENT(2));
	if (url == NULL || text == NULL ||
	    (shown = saop__llm_url_redact(url)) == NULL) {
		r = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
		goto out;
	}
	fprintf(f, "POST %s\n", shown);
	print_header(f, cfg, "Content-Type: application/json");
	print_header(f, cfg, !cfg->stream ? "Accept: application/json" :
	    cfg->provider == SAOP_PROVIDER_BEDROCK ?
	    "Accept: application/vnd.amazon.eventstream" :
	    "Accept: text/event-stream");
	if (cfg->provider == SAOP_PROVIDER_ANTHROPIC && !cfg->vertex)
		print_header(f, cfg, "anthropic-version: " ANTHROPIC_VERSION);
	for (i = 0; i < cfg->nheaders; i++)
		print_shown_header(f, cfg, cfg->headers[i]);
	if (cfg->key != NULL && *cfg->key != '\0') {
		mask_key(cfg->key, masked);
		if ((auth = saop__llm_auth_line(cfg, masked)) == NULL) {
			r = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
			goto out;
		}
		print_header(f, cfg, auth);
		free(auth);
	} else if (saop__llm_sigv4_wanted(cfg) &&
	    (r = print_signed(f, cfg, url, body, e)) < 0) {
		goto out;
	}
	fprintf(f, "\n%s\n", text);
	if (ferror(f) || fflush(f) != 0)
		r = saop__fail(e, SAOP_EIO, errno, "cannot write the request");
out:
	json_decref(body);
	free(url);
	free(shown);
	free(text);
	return r;
}
