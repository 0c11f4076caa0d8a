/*
 * llm-request.c: request translation: a record's provider-neutral chat
 * request into the wire body of OpenAI chat completions, Anthropic
 * Messages, OpenAI Responses or Gemini generateContent (one body_*()
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
 * The tools array in OpenAI's form: an Anthropic-style tool (name,
 * description, input_schema) becomes {"type":"function","function":{...}}
 * with the schema as "parameters"; any other is copied as it is.  Returns a
 * new reference, or NULL on ENOMEM.
 */
static json_t *
tools_openai(const json_t *tools)
{
	json_t *out, *t, *f;
	size_t i;

	if ((out = json_array()) == NULL)
		return NULL;
	json_array_foreach(tools, i, t) {
		if (json_object_get(t, "function") != NULL ||
		    json_object_get(t, "input_schema") == NULL) {
			json_array_append(out, t);
			continue;
		}
		f = json_object();
		json_object_set(f, "name", json_object_get(t, "name"));
		if (json_object_get(t, "description") != NULL)
			json_object_set(f, "description",
			    json_object_get(t, "description"));
		json_object_set(f, "parameters",
		    json_object_get(t, "input_schema"));
		json_array_append_new(out, json_pack("{s:s, s:o}",
		    "type", "function", "function", f));
	}
	return out;
}

/*
 * The tools array in Anthropic's form: an OpenAI-style function tool
 * becomes {name, description, input_schema} (an empty object schema when it
 * has no parameters); any other is copied as it is.  Returns a new
 * reference, or NULL on ENOMEM.
 */
static json_t *
tools_anthropic(const json_t *tools)
{
	json_t *out, *t;
	size_t i;

	if ((out = json_array()) == NULL)
		return NULL;
	json_array_foreach(tools, i, t) {
		const json_t *f = json_object_get(t, "function");
		json_t *n, *p;

		if (f == NULL) {
			json_array_append(out, t);
			continue;
		}
		n = json_object();
		json_object_set(n, "name", json_object_get(f, "name"));
		if (json_object_get(f, "description") != NULL)
			json_object_set(n, "description",
			    json_object_get(f, "description"));
		p = json_object_get(f, "parameters");
		if (p != NULL)
			json_object_set(n, "input_schema", p);
		else
			json_object_set_new(n, "input_schema",
			    json_pack("{s:s}", "type", "object"));
		json_array_append_new(out, n);
	}
	return out;
}

/*
 * tool_choice in OpenAI's form: Anthropic's {"type":"any"} becomes
 * "required", {"type":"tool","name"} an OpenAI function choice and another
 * type its bare word; a string or an OpenAI choice is kept.  Returns a new
 * reference, or NULL on ENOMEM.
 */
static json_t *
choice_openai(const json_t *c)
{
	const char *t;

	if (!json_is_object(c))
		return json_incref((json_t *)c);
	t = json_string_value(json_object_get(c, "type"));
	if (t == NULL || json_object_get(c, "function") != NULL)
		return json_incref((json_t *)c);
	if (strcmp(t, "any") == 0)
		return json_string("required");
	if (strcmp(t, "tool") == 0)
		return json_pack("{s:s, s:{s:O}}", "type", "function",
		    "function", "name", json_object_get(c, "name"));
	return json_string(t);
}

/*
 * tool_choice in Anthropic's form: a word becomes {"type": word}
 * ("required" becoming "any"), an OpenAI function choice
 * {"type":"tool","name"}; anything else is kept.  Returns a new reference,
 * or NULL on ENOMEM.
 */
static json_t *
choice_anthropic(const json_t *c)
{
	if (json_is_string(c)) {
		const char *s = json_string_value(c);

		if (strcmp(s, "required") == 0)
			s = "any";
		return json_pack("{s:s}", "type", s);
	}
	if (json_is_object(c) && json_object_get(c, "function") != NULL)
		return json_pack("{s:s, s:O}", "type", "tool", "name",
		    json_object_get(json_object_get(c, "function"), "name"));
	return json_incref((json_t *)c);
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
 * Set out's "tools" and "tool_choice" from req's, each turned by tf and
 * cf (a wire format's own form).  Returns 0, or -1 on ENOMEM.
 */
static int
set_tools(json_t *out, const json_t *req, json_t *(*tf)(const json_t *),
    json_t *(*cf)(const json_t *))
{
	if (json_is_array(json_object_get(req, "tools")) &&
	    set(out, "tools", tf(json_object_get(req, "tools"))) != 0)
		return -1;
	if (json_object_get(req, "tool_choice") != NULL &&
	    set(out, "tool_choice", cf(json_object_get(req, "tool_choice"))) !=
	    0)
		return -1;
	return 0;
}

/*
 * Fill out with req as an OpenAI chat completions body: system becomes the
 * first message, stop_sequences stop, Anthropic-style tools and tool_choice
 * are turned OpenAI's way, the other members are copied, and stream is set
 * (asking for usage when streaming).  Returns 0, or -1 on ENOMEM.
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
	if (set_tools(out, req, tools_openai, choice_openai) != 0)
		return -1;
	if (set(out, "stream", json_boolean(stream)) != 0)
		return -1;
	if (stream && set(out, "stream_options",
	    json_pack("{s:b}", "include_usage", 1)) != 0)
		return -1;
	return 0;
}

/*
 * Fill out with req as an Anthropic Messages body: system messages are
 * gathered into "system", OpenAI-style tool messages and tools are turned
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
	json_t *msgs, *m, *sys, *stop, *mt, *x;
	struct saop__buf st = { NULL, 0, 0 };
	size_t i;
	int r = -1;

	sys = json_object_get(req, "system");
	if (json_is_string(sys) && saop__buf_append_max(&st,
	    json_string_value(sys), json_string_length(sys),
	    SIZE_MAX / 2) != 0)
		goto out;
	if ((msgs = json_array()) == NULL || set(out, "messages", msgs) != 0)
		goto out;
	json_array_foreach(json_object_get(req, "messages"), i, m) {
		const char *role = json_string_value(json_object_get(m,
		    "role"));

		if (role != NULL && strcmp(role, "system") == 0) {
			if (st.len > 0 && saop__buf_append_max(&st, "\n\n", 2,
			    SIZE_MAX / 2) != 0)
				goto out;
			if (text_of(json_object_get(m, "content"), &st) != 0)
				goto out;
			continue;
		}
		if ((x = message_anthropic(m)) == NULL ||
		    json_array_append_new(msgs, x) != 0)
			goto out;
	}
	if (json_is_array(sys) && st.len == 0)
		json_object_set(out, "system", sys);
	else if (st.len > 0 && set(out, "system",
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
	if (set_tools(out, req, tools_anthropic, choice_anthropic) != 0)
		goto out;
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
 * A function tool t of either form (OpenAI's {"type":"function",
 * "function":{name, description, parameters}} or Anthropic's {name,
 * description, input_schema}) as a new {name, description, KEY: schema}
 * (the schema when it has one).  NULL when t is another tool (a built-in
 * one), or on ENOMEM.
 */
static json_t *
function_tool(const json_t *t, const char *key)
{
	const json_t *f = json_object_get(t, "function");
	const json_t *src = f != NULL ? f : t;
	json_t *ps = f != NULL ? json_object_get(f, "parameters") :
	    json_object_get(t, "input_schema"), *n;

	if (f == NULL && ps == NULL)
		return NULL;
	if ((n = json_pack("{s:O?}", "name", json_object_get(src,
	    "name"))) == NULL)
		return NULL;
	if (json_object_get(src, "description") != NULL)
		json_object_set(n, "description",
		    json_object_get(src, "description"));
	if (ps != NULL)
		json_object_set(n, key, ps);
	return n;
}

/*
 * The tools array in the Responses form: a function tool, OpenAI's
 * nested {"type":"function","function":{...}} or Anthropic's
 * {name, input_schema}, becomes {"type":"function", name, description,
 * parameters}; a built-in tool ({"type":"web_search"}...) is copied.
 * Returns a new reference, or NULL on ENOMEM.
 */
static json_t *
tools_responses(const json_t *tools)
{
	json_t *out, *t;
	size_t i;

	if ((out = json_array()) == NULL)
		return NULL;
	json_array_foreach(tools, i, t) {
		json_t *n = function_tool(t, "parameters");

		if (n == NULL) {
			json_array_append(out, t);
			continue;
		}
		json_object_set_new(n, "type", json_string("function"));
		if (json_object_get(n, "parameters") == NULL)
			json_object_set_new(n, "parameters",
			    json_pack("{s:s}", "type", "object"));
		if (json_object_get(json_object_get(t, "function"), "strict"))
			json_object_set(n, "strict", json_object_get(
			    json_object_get(t, "function"), "strict"));
		json_array_append_new(out, n);
	}
	return out;
}

/*
 * tool_choice in the Responses form: a word stays (Anthropic's "any"
 * becomes "required"), a function choice of either form becomes
 * {"type":"function","name"}.  Returns a new reference, or NULL on ENOMEM.
 */
static json_t *
choice_responses(const json_t *c)
{
	const json_t *f = json_object_get(c, "function");
	const char *t = json_string_value(json_object_get(c, "type"));

	if (f != NULL)
		return json_pack("{s:s, s:O?}", "type", "function", "name",
		    json_object_get(f, "name"));
	if (t != NULL && strcmp(t, "tool") == 0)
		return json_pack("{s:s, s:O?}", "type", "function", "name",
		    json_object_get(c, "name"));
	if (t != NULL && strcmp(t, "any") == 0)
		return json_string("required");
	if (t != NULL && (strcmp(t, "auto") == 0 || strcmp(t, "none") == 0))
		return json_string(t);
	return json_incref((json_t *)c);
}

/*
 * Fill out with req as an OpenAI Responses body: system becomes
 * instructions, messages input items, max_tokens max_output_tokens,
 * response_format text.format, tools and tool_choice the Responses way;
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
	if (set_tools(out, req, tools_responses, choice_responses) != 0)
		goto out;
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

		if (role != NULL && (strcmp(role, "system") == 0 ||
		    strcmp(role, "developer") == 0))
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
 * The tools of a neutral request as Gemini tools: the function tools (of
 * either form) as one functionDeclarations list with their JSON Schema
 * as parametersJsonSchema; a Gemini tool ({"googleSearch": {}},
 * {"codeExecution": {}}) is copied.  Returns a new reference, or NULL on
 * ENOMEM.
 */
static json_t *
tools_gemini(const json_t *tools)
{
	json_t *out, *decl, *t;
	size_t i;

	if ((out = json_array()) == NULL || (decl = json_array()) == NULL) {
		json_decref(out);
		return NULL;
	}
	json_array_foreach(tools, i, t) {
		json_t *n = function_tool(t, "parametersJsonSchema");

		if (n == NULL)
			json_array_append(out, t);
		else
			json_array_append_new(decl, n);
	}
	if (json_array_size(decl) > 0)
		json_array_append_new(out, json_pack("{s:o}",
		    "functionDeclarations", decl));
	else
		json_decref(decl);
	return out;
}

/*
 * tool_choice as Gemini's toolConfig: auto, none, required (any) as the
 * function-calling mode AUTO, NONE, ANY; one function named as ANY with
 * allowedFunctionNames.  Returns a new reference, or NULL (also for a
 * choice it does not know: then none is sent).
 */
static json_t *
choice_gemini(const json_t *c)
{
	const char *w = json_string_value(c), *mode = NULL;
	const json_t *name = NULL;

	if (w == NULL)
		w = json_string_value(json_object_get(c, "type"));
	if (json_object_get(c, "function") != NULL)
		name = json_object_get(json_object_get(c, "function"), "name");
	else if (w != NULL && strcmp(w, "tool") == 0)
		name = json_object_get(c, "name");
	if (name != NULL)
		return json_pack("{s:{s:s, s:[O]}}", "functionCallingConfig",
		    "mode", "ANY", "allowedFunctionNames", name);
	if (w == NULL)
		return NULL;
	if (strcmp(w, "auto") == 0)
		mode = "AUTO";
	else if (strcmp(w, "none") == 0)
		mode = "NONE";
	else if (strcmp(w, "required") == 0 || strcmp(w, "any") == 0)
		mode = "ANY";
	return mode != NULL ? json_pack("{s:{s:s}}", "functionCallingConfig",
	    "mode", mode) : NULL;
}

/*
 * Fill out with req as a Gemini generateContent body: system (and system
 * messages) becomes systemInstruction, messages contents, the sampling
 * members generationConfig (max_tokens maxOutputTokens, stop
 * stopSequences, n candidateCount, response_format responseMimeType and
 * responseJsonSchema), tools and tool_choice Gemini's way.  The model and
 * streaming are in the URL, not the body.  Returns 0, or -1 on ENOMEM.
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
		const char *role = json_string_value(json_object_get(m,
		    "role"));

		if (role != NULL && (strcmp(role, "system") == 0 ||
		    strcmp(role, "developer") == 0) &&
		    parts_gemini(sysparts, json_object_get(m, "content")) != 0) {
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
	if (json_is_array(json_object_get(req, "tools")) &&
	    set(out, "tools", tools_gemini(json_object_get(req, "tools"))))
		return -1;
	if (json_object_get(req, "tool_choice") != NULL &&
	    (x = choice_gemini(json_object_get(req, "tool_choice"))) != NULL &&
	    set(out, "toolConfig", x) != 0)
		return -1;
	return 0;
}

/*
 * The wire body for request in cfg's provider format, with "stream" set
 * from cfg->stream.  Returns a new reference, or NULL and SAOP_EDATA (no
 * messages), SAOP_ECONFIG (no model) or SAOP_ENOMEM.
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
	default:
		r = body_openai(out, request, cfg->stream);
		break;
	}
	/* The user's schema, where the provider takes it (llm-schema.c). */
	if (r == 0)
		r = saop__llm_schema_apply(out, cfg, request);
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
	json_decref(body);
	if (url == NULL || text == NULL ||
	    (shown = saop__llm_url_redact(url)) == NULL) {
		r = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
		goto out;
	}
	fprintf(f, "POST %s\n", shown);
	print_header(f, cfg, "Content-Type: application/json");
	print_header(f, cfg, cfg->stream ? "Accept: text/event-stream" :
	    "Accept: application/json");
	if (cfg->provider == SAOP_PROVIDER_ANTHROPIC)
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
	}
	fprintf(f, "\n%s\n", text);
	if (ferror(f) || fflush(f) != 0)
		r = saop__fail(e, SAOP_EIO, errno, "cannot write the request");
out:
	free(url);
	free(shown);
	free(text);
	return r;
}
