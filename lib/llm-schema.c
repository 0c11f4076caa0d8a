/*
 * llm-schema.c: the user's schema on the wire: the provider's native
 * structured-output field (or the system prompt) added to a request body,
 * left out of continuations.  Dropping it once a server refuses it is
 * lib/llm-guard.c's, a floor above the call (lib/llm.c).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "llm-int.h"

/*
 * The structured-output fields a request may carry of its own (paths of
 * one or two members of the provider-neutral request): OpenAI chat's
 * response_format (which lib/llm-request.c also turns into the Responses
 * API's and Gemini's fields), Anthropic's output_config.format (GA) and
 * the beta output_format it replaced, the Responses API's text.format.
 */
static const char *const own_fields[][2] = {
	{ "response_format", NULL },
	{ "output_config", "format" },
	{ "output_format", NULL },
	{ "text", "format" },
	{ NULL, NULL }
};

/*
 * The structured-output fields of every wire body: what a continuation
 * loses.
 */
static const char *const wire_fields[][2] = {
	{ "response_format", NULL },
	{ "output_config", "format" },
	{ "output_format", NULL },
	{ "text", "format" },
	{ "generationConfig", "responseJsonSchema" },
	{ "generationConfig", "responseSchema" },
	{ "generationConfig", "responseMimeType" },
	{ NULL, NULL }
};

/* Anthropic's own fields its body translation leaves out: copied. */
static const char *const anthropic_own[] = { "output_config",
    "output_format", NULL };

/* OpenAI's strict mode: the keywords it takes, and its limits. */
static const char *const strict_keys[] = { "type", "properties",
    "required", "additionalProperties", "items", "enum", "const", "anyOf",
    "$ref", "$defs", "definitions", "description", "title", "$schema",
    "$id", "$comment", "pattern", "format", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems",
    "maxItems", NULL };
#define STRICT_MAX_DEPTH	10	/* nested objects */
#define STRICT_MAX_PROPS	5000	/* properties in all */

/* Is word one of the NULL-ended list?  1 or 0. */
static int
in_list(const char *word, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(word, *list) == 0)
			return 1;
	return 0;
}

/* The mode named word (see saop.h).  Returns 0, or -1 for another word. */
int
saop_schema_mode_parse(const char *word, enum saop_schema_mode *mode)
{
	static const char *const names[] = { "native", "prompt", "off" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(word, names[i]) == 0) {
			*mode = (enum saop_schema_mode)i;
			return 0;
		}
	return -1;
}

/* The field of cfg's wire format (see saop.h).  Returns a static string. */
const char *
saop_schema_field(const struct saop_llm_config *cfg)
{
	switch (cfg->provider) {
	case SAOP_PROVIDER_ANTHROPIC:
		return "output_config.format";
	case SAOP_PROVIDER_RESPONSES:
		return "text.format";
	case SAOP_PROVIDER_GEMINI:
		return "generationConfig.responseJsonSchema";
	case SAOP_PROVIDER_BEDROCK:
		return "system";
	default:
		return "response_format";
	}
}

/*
 * Does the schema node n (depth objects deep) keep to OpenAI's strict
 * subset?  *props counts the properties met.  Returns 1 or 0.
 */
static int
strict_node(const json_t *n, int depth, size_t *props)
{
	const char *k;
	json_t *v, *x, *props_o;
	size_t i;
	int object;

	if (!json_is_object(n))
		return 0;
	json_object_foreach((json_t *)n, k, v)
		if (!in_list(k, strict_keys))
			return 0;
	v = json_object_get(n, "type");
	object = json_is_string(v) && strcmp(json_string_value(v),
	    "object") == 0;
	json_array_foreach(v, i, x)
		if (json_is_string(x) && strcmp(json_string_value(x),
		    "object") == 0)
			object = 1;
	props_o = json_object_get(n, "properties");
	if (object || props_o != NULL) {
		const json_t *req;

		/* Every object closed, every property required. */
		if (!json_is_false(json_object_get(n, "additionalProperties")) ||
		    ++depth > STRICT_MAX_DEPTH)
			return 0;
		req = json_object_get(n, "required");
		json_object_foreach(props_o, k, v) {
			int found = 0;

			json_array_foreach(req, i, x)
				if (json_is_string(x) &&
				    strcmp(json_string_value(x), k) == 0)
					found = 1;
			if (!found || ++*props > STRICT_MAX_PROPS ||
			    !strict_node(v, depth, props))
				return 0;
		}
	}
	if ((v = json_object_get(n, "items")) != NULL &&
	    !strict_node(v, depth, props))
		return 0;
	json_array_foreach(json_object_get(n, "anyOf"), i, x)
		if (!strict_node(x, depth, props))
			return 0;
	json_object_foreach(json_object_get(n, "$defs"), k, v)
		if (!strict_node(v, depth, props))
			return 0;
	json_object_foreach(json_object_get(n, "definitions"), k, v)
		if (!strict_node(v, depth, props))
			return 0;
	return 1;
}

/* Would OpenAI take schema strict (see saop.h)?  Returns 1 or 0. */
int
saop_schema_openai_strict(const json_t *schema)
{
	const json_t *t = json_object_get(schema, "type");
	size_t props = 0;

	/* The root is one object, never a union. */
	if (!json_is_string(t) || strcmp(json_string_value(t), "object") != 0 ||
	    json_object_get(schema, "anyOf") != NULL)
		return 0;
	return strict_node(schema, 0, &props);
}

/*
 * The name OpenAI wants for the schema: its title, else cfg's name, else
 * "response", as letters, digits, '_' and '-' (others become '_'), at most
 * 64.  Fills out[65].
 */
static void
schema_name(const struct saop_llm_config *cfg, char out[65])
{
	const char *src = json_string_value(json_object_get(cfg->schema,
	    "title"));
	char *p;

	if (src == NULL || *src == '\0')
		src = cfg->schema_name;
	if (src == NULL || *src == '\0')
		src = "response";
	snprintf(out, 65, "%.64s", src);
	for (p = out; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '-')
			*p = '_';
}

/*
 * The schema as it is sent: a copy without the top-level "$schema",
 * "$id" and "$comment" (which say nothing of the answer, and which some
 * providers refuse).  Returns a new reference, or NULL on ENOMEM.
 */
static json_t *
schema_sent(const json_t *schema)
{
	json_t *c = json_deep_copy(schema);

	if (json_is_object(c)) {
		json_object_del(c, "$schema");
		json_object_del(c, "$id");
		json_object_del(c, "$comment");
	}
	return c;
}

/*
 * The native field's value for cfg's wire format.  Returns a new
 * reference, or NULL on ENOMEM.
 */
static json_t *
native_value(const struct saop_llm_config *cfg)
{
	json_t *s = schema_sent(cfg->schema);
	char name[65];

	if (s == NULL)
		return NULL;
	switch (cfg->provider) {
	case SAOP_PROVIDER_ANTHROPIC:
		/* platform.claude.com/docs/en/build-with-claude/
		 * structured-outputs: output_config.format. */
		return json_pack("{s:s, s:o}", "type", "json_schema", "schema",
		    s);
	case SAOP_PROVIDER_RESPONSES:
		/* platform.openai.com/docs/api-reference/responses/create:
		 * text.format {type, name, strict, schema}. */
		schema_name(cfg, name);
		return json_pack("{s:s, s:s, s:b, s:o}", "type", "json_schema",
		    "name", name, "strict",
		    saop_schema_openai_strict(cfg->schema), "schema", s);
	case SAOP_PROVIDER_GEMINI:
		/* ai.google.dev/api/generate-content#generationconfig:
		 * responseJsonSchema, with responseMimeType (add_native). */
		return s;
	default:
		schema_name(cfg, name);
		return json_pack("{s:s, s:{s:s, s:b, s:o}}", "type",
		    "json_schema", "json_schema", "name", name, "strict",
		    saop_schema_openai_strict(cfg->schema), "schema", s);
	}
}

/*
 * Set member k of body's object member o (made when missing) to v,
 * stealing v.  Returns 0, or -1 on ENOMEM.
 */
static int
sub_set(json_t *body, const char *o, const char *k, json_t *v)
{
	json_t *x = json_object_get(body, o);

	if (v == NULL)
		return -1;
	if (!json_is_object(x)) {
		if (json_object_set_new(body, o, json_object()) != 0) {
			json_decref(v);
			return -1;
		}
		x = json_object_get(body, o);
	}
	return json_object_set_new(x, k, v) != 0 ? -1 : 0;
}

/*
 * Put the native field into body for cfg's wire format.  Returns 0, or -1
 * on ENOMEM.
 */
static int
add_native(json_t *body, const struct saop_llm_config *cfg)
{
	json_t *v = native_value(cfg), *oc;

	if (v == NULL)
		return -1;
	switch (cfg->provider) {
	case SAOP_PROVIDER_ANTHROPIC:
		oc = json_object_get(body, "output_config");
		if (!json_is_object(oc)) {
			if (json_object_set_new(body, "output_config",
			    json_object()) != 0) {
				json_decref(v);
				return -1;
			}
			oc = json_object_get(body, "output_config");
		}
		return json_object_set_new(oc, "format", v) != 0 ? -1 : 0;
	case SAOP_PROVIDER_RESPONSES:
		return sub_set(body, "text", "format", v);
	case SAOP_PROVIDER_GEMINI:
		if (sub_set(body, "generationConfig", "responseMimeType",
		    json_string("application/json")) != 0) {
			json_decref(v);
			return -1;
		}
		return sub_set(body, "generationConfig", "responseJsonSchema",
		    v);
	default:
		return json_object_set_new(body, "response_format", v) != 0 ?
		    -1 : 0;
	}
}

/*
 * The schema into body's system prompt (SAOP_SCHEMA_PROMPT): after the
 * system text of an Anthropic body, or as one more system message after
 * the leading ones of an OpenAI body.  Returns 0, or -1 on ENOMEM.
 */
static int
add_prompt(json_t *body, const struct saop_llm_config *cfg)
{
	char *js = json_dumps(cfg->schema, JSON_INDENT(2) |
	    JSON_PRESERVE_ORDER);
	struct saop__buf b;
	json_t *sys, *msgs, *m;
	size_t i;
	int r = -1;

	saop__buf_init(&b);
	if (js == NULL)
		return -1;
	sys = json_object_get(body, cfg->provider == SAOP_PROVIDER_RESPONSES ?
	    "instructions" : "system");
	if (cfg->provider == SAOP_PROVIDER_ANTHROPIC ||
	    cfg->provider == SAOP_PROVIDER_RESPONSES) {
		if (json_is_string(sys) && json_string_length(sys) > 0 &&
		    (saop__buf_append(&b, json_string_value(sys),
		    json_string_length(sys)) != 0 ||
		    saop__buf_append(&b, "\n\n", 2) != 0))
			goto out;
	}
	if (saop__buf_append(&b, SAOP_SCHEMA_PROMPT_HEAD,
	    strlen(SAOP_SCHEMA_PROMPT_HEAD)) != 0 ||
	    saop__buf_append(&b, js, strlen(js)) != 0 ||
	    saop__buf_append(&b, SAOP_SCHEMA_PROMPT_TAIL,
	    strlen(SAOP_SCHEMA_PROMPT_TAIL)) != 0)
		goto out;
	if (cfg->provider == SAOP_PROVIDER_RESPONSES) {
		r = json_object_set_new(body, "instructions",
		    json_stringn(b.data, b.len));
		goto out;
	}
	if (cfg->provider == SAOP_PROVIDER_BEDROCK) {
		/* One more text block of Converse's system. */
		if (!json_is_array(sys) && json_object_set_new(body, "system",
		    json_array()) != 0)
			goto out;
		r = json_array_append_new(json_object_get(body, "system"),
		    json_pack("{s:s%}", "text", b.data, b.len));
		goto out;
	}
	if (cfg->provider == SAOP_PROVIDER_GEMINI) {
		/* One more part of systemInstruction. */
		json_t *si = json_object_get(body, "systemInstruction");

		if (!json_is_object(si) && (sub_set(body, "systemInstruction",
		    "parts", json_array()) != 0 || (si = json_object_get(body,
		    "systemInstruction")) == NULL))
			goto out;
		if (!json_is_array(json_object_get(si, "parts")) &&
		    json_object_set_new(si, "parts", json_array()) != 0)
			goto out;
		r = json_array_append_new(json_object_get(si, "parts"),
		    json_pack("{s:s%}", "text", b.data, b.len));
		goto out;
	}
	if (cfg->provider == SAOP_PROVIDER_ANTHROPIC) {
		if (json_is_array(sys))
			r = json_array_append_new(sys, json_pack("{s:s, s:s%}",
			    "type", "text", "text", b.data, b.len));
		else
			r = json_object_set_new(body, "system",
			    json_stringn(b.data, b.len));
		goto out;
	}
	msgs = json_object_get(body, "messages");
	for (i = 0; i < json_array_size(msgs); i++) {
		const char *role = json_string_value(json_object_get(
		    json_array_get(msgs, i), "role"));

		if (role == NULL || (strcmp(role, "system") != 0 &&
		    strcmp(role, "developer") != 0))
			break;
	}
	m = json_pack("{s:s, s:s%}", "role", "system", "content", b.data,
	    b.len);
	r = m == NULL || json_array_insert_new(msgs, i, m) != 0 ? -1 : 0;
out:
	free(js);
	saop__buf_free(&b);
	return r != 0 ? -1 : 0;
}

/* Does message m's text begin with prefix?  1 or 0. */
static int
text_starts(const json_t *m, const char *prefix)
{
	const json_t *c = json_object_get(m, "content");
	const char *t = json_string_value(c);

	if (t == NULL && json_is_array(c))
		t = json_string_value(json_object_get(json_array_get(c, 0),
		    "text"));
	return t != NULL && strncmp(t, prefix, strlen(prefix)) == 0;
}

/*
 * Is request a continuation of a cut answer (saop-resume, or
 * saop-suspend resuming a turn)?  Its messages end with the answer so far
 * as the assistant's own turn (prefill), or with the resume prompt.
 * Returns 1 or 0.
 */
int
saop__llm_is_continuation(const json_t *request)
{
	const json_t *msgs = json_object_get(request, "messages");
	const json_t *last = json_array_get(msgs, json_array_size(msgs) - 1);
	const char *role = json_string_value(json_object_get(last, "role"));

	if (role == NULL)
		return 0;
	if (strcmp(role, "assistant") == 0)
		return 1;
	return strcmp(role, "user") == 0 && text_starts(last,
	    SAOP_RESUME_PROMPT);
}

/* Does o hold the structured-output field f?  1 or 0. */
static int
has_field(const json_t *o, const char *const f[2])
{
	const json_t *v = json_object_get(o, f[0]);

	return v != NULL && (f[1] == NULL || json_object_get(v, f[1]) != NULL);
}

/* Does request carry a structured-output field of its own?  1 or 0. */
int
saop__llm_has_own(const json_t *request)
{
	size_t i;

	for (i = 0; own_fields[i][0] != NULL; i++)
		if (has_field(request, own_fields[i]))
			return 1;
	return 0;
}

/* Take every structured-output field out of body. */
static void
drop_fields(json_t *body)
{
	size_t i;

	for (i = 0; wire_fields[i][0] != NULL; i++) {
		json_t *v = json_object_get(body, wire_fields[i][0]);

		if (wire_fields[i][1] == NULL) {
			json_object_del(body, wire_fields[i][0]);
		} else if (json_is_object(v)) {
			json_object_del(v, wire_fields[i][1]);
			if (json_object_size(v) == 0)
				json_object_del(body, wire_fields[i][0]);
		}
	}
}

/*
 * Copy into the Anthropic body the request's own structured-output
 * fields, which the translation (it takes only the members it knows)
 * left out.  Returns 0, or -1 on ENOMEM.
 */
static int
keep_own(json_t *body, const json_t *request)
{
	size_t i;

	for (i = 0; anthropic_own[i] != NULL; i++)
		if (json_object_get(request, anthropic_own[i]) != NULL &&
		    json_object_get(body, anthropic_own[i]) == NULL &&
		    json_object_set(body, anthropic_own[i],
		    json_object_get(request, anthropic_own[i])) != 0)
			return -1;
	return 0;
}

/*
 * The hook of saop__llm_body(): add cfg's schema to body (the wire body
 * of request) as cfg->schema_mode says.  A request's own field is kept
 * and nothing is added; a continuation carries no structured-output field
 * at all, its own or the schema's: the field would make the model start a
 * new document where the continuation is the rest of one.  Returns 0, or
 * -1 on ENOMEM.
 */
int
saop__llm_schema_apply(json_t *body, const struct saop_llm_config *cfg,
    const json_t *request)
{
	if (saop__llm_is_continuation(request)) {
		drop_fields(body);
		return 0;
	}
	if (saop__llm_has_own(request))
		return cfg->provider == SAOP_PROVIDER_ANTHROPIC ?
		    keep_own(body, request) : 0;
	if (cfg->schema == NULL)
		return 0;
	switch (cfg->schema_mode) {
	case SAOP_SCHEMA_NATIVE:
		/* Bedrock's Converse: no field saop sends; the prompt. */
		if (cfg->provider == SAOP_PROVIDER_BEDROCK)
			return add_prompt(body, cfg);
		return cfg->schema_refused ? 0 : add_native(body, cfg);
	case SAOP_SCHEMA_PROMPT:
		return add_prompt(body, cfg);
	default:
		return 0;
	}
}
