/*
 * llm-request.c: request translation: a record's provider-neutral chat
 * request into the wire body of OpenAI chat completions or Anthropic
 * Messages, and --dry-run's view of it.
 */
#include "config.h"

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
	if (json_is_array(json_object_get(req, "tools")) &&
	    set(out, "tools", tools_openai(json_object_get(req, "tools"))))
		return -1;
	if (json_object_get(req, "tool_choice") != NULL &&
	    set(out, "tool_choice",
	    choice_openai(json_object_get(req, "tool_choice"))) != 0)
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
	if (json_is_array(json_object_get(req, "tools")) &&
	    set(out, "tools", tools_anthropic(json_object_get(req, "tools"))))
		goto out;
	if (json_object_get(req, "tool_choice") != NULL &&
	    set(out, "tool_choice",
	    choice_anthropic(json_object_get(req, "tool_choice"))) != 0)
		goto out;
	if (set(out, "stream", json_boolean(stream)) != 0)
		goto out;
	r = 0;
out:
	saop__buf_free(&st);
	return r;
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
	if (cfg->provider == SAOP_PROVIDER_ANTHROPIC)
		r = body_anthropic(out, request, cfg->stream);
	else
		r = body_openai(out, request, cfg->stream);
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
	char *url, *shown = NULL, *text, masked[32];
	int r = 0;

	if (e == NULL)
		e = &dummy;
	if (cfg->problem != NULL)
		return saop__fail(e, SAOP_ECONFIG, 0, "%s", cfg->problem);
	if ((body = saop__llm_body(cfg, request, e)) == NULL)
		return -e->code;
	url = saop__llm_endpoint(cfg);
	text = json_dumps(body, JSON_INDENT(2));
	json_decref(body);
	if (url == NULL || text == NULL ||
	    (shown = saop__llm_url_redact(url)) == NULL) {
		r = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
		goto out;
	}
	fprintf(f, "POST %s\n", shown);
	fprintf(f, "Content-Type: application/json\n");
	fprintf(f, "Accept: %s\n", cfg->stream ? "text/event-stream" :
	    "application/json");
	if (cfg->key != NULL && *cfg->key != '\0') {
		mask_key(cfg->key, masked);
		if (cfg->provider == SAOP_PROVIDER_ANTHROPIC)
			fprintf(f, "x-api-key: %s\n", masked);
		else
			fprintf(f, "Authorization: Bearer %s\n", masked);
	}
	if (cfg->provider == SAOP_PROVIDER_ANTHROPIC)
		fprintf(f, "anthropic-version: %s\n", ANTHROPIC_VERSION);
	fprintf(f, "\n%s\n", text);
	if (ferror(f) || fflush(f) != 0)
		r = saop__fail(e, SAOP_EIO, errno, "cannot write the request");
out:
	free(url);
	free(shown);
	free(text);
	return r;
}
