/*
 * llm-guard.c: a model call that carries the user's schema as the
 * provider's native field, made once more without it when the server
 * refuses the field (a 400 or 422 naming it), and the note of what
 * happened on the record (structured_output) and in the log.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "llm-int.h"

/* Does s contain word, ignoring case?  1 or 0. */
static int
has_word_ci(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (; *s != '\0'; s++)
		if (strncasecmp(s, word, n) == 0)
			return 1;
	return 0;
}

/*
 * Is e a server's refusal of the structured-output field: a 400 (or 422)
 * whose message names it?  Returns 1 or 0.
 */
static int
refuses_field(const struct saop_err *e)
{
	static const char *const words[] = { "response_format",
	    "json_schema", "output_config", "output_format", "text.format",
	    "responseJsonSchema", "response_json_schema", "responseSchema",
	    "response_schema", "responseMimeType", "response_mime_type",
	    "structured output", NULL };
	const char *m = strchr(e->msg, ' ');	/* after the URL */
	size_t i;

	if (e->code != SAOP_EBADREQ || (e->http_status != 400 &&
	    e->http_status != 422) || m == NULL)
		return 0;
	for (i = 0; words[i] != NULL; i++)
		if (has_word_ci(m, words[i]))
			return 1;
	return 0;
}

/*
 * Would a call of request carry the native field of g's config?  Returns
 * 1 or 0.
 */
static int
carries_field(const struct saop_schema_guard *g, const json_t *request)
{
	const struct saop_llm_config *cfg = g->cfg;

	return cfg->schema != NULL && cfg->schema_mode == SAOP_SCHEMA_NATIVE &&
	    !cfg->schema_refused && !saop__llm_is_continuation(request) &&
	    !saop__llm_has_own(request);
}

/*
 * The call of saop_schema_model(): the inner call, made once more without
 * the field when a server refused it.  Returns what the last call
 * returned.
 */
static int
guarded_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct saop_schema_guard *g = arg;
	int rc, carried = carries_field(g, request);

	/* A turn's calls add up, until saop_schema_note() has said so. */
	g->sent |= carried;
	rc = saop_model_call(&g->inner, request, a, e);
	if (rc == 0 || !carried || !refuses_field(e))
		return rc;
	g->refused = 1;
	g->refusals++;
	g->sent = 0;
	saop__llm_clip(g->why, sizeof(g->why), e->msg, sizeof(g->why) - 1);
	g->cfg->schema_refused = 1;
	saop_llm_answer_free(a);
	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	a->cached_tokens = a->reasoning_tokens = -1;
	saop_err_clear(e);
	return saop_model_call(&g->inner, request, a, e);
}

/* The model whose calls go through g (see saop.h).  Returns it. */
struct saop_model
saop_schema_model(struct saop_schema_guard *g)
{
	struct saop_model m;

	m.call = guarded_call;
	m.arg = g;
	return m;
}

/*
 * Note on rec what g's calls since the last note did with the schema
 * (see saop.h), and start counting again.  Returns 1 when the field was
 * refused, 0, or -SAOP_ENOMEM.
 */
int
saop_schema_note(struct saop_schema_guard *g, json_t *rec,
    struct saop_store *store, struct saop_err *e)
{
	static const char *const modes[] = { "native", "prompt", "off" };
	const struct saop_llm_config *cfg = g->cfg;
	const json_t *req = saop_record_request(rec);
	json_t *note;
	int own = saop__llm_has_own(req);

	if (cfg->schema == NULL || cfg->schema_mode < 0 ||
	    cfg->schema_mode > SAOP_SCHEMA_OFF)
		return 0;
	note = json_pack("{s:s, s:s, s:b}", "mode", modes[cfg->schema_mode],
	    "field", saop_schema_field(cfg), "sent", g->sent);
	if (note == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	if ((own && json_object_set_new(note, "own", json_true()) != 0) ||
	    (g->refused && json_object_set_new(note, "refused",
	    json_string(g->why)) != 0)) {
		json_decref(note);
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	/* set_new takes note even when it fails; rec holds it after. */
	if (saop_record_set_structured_output(rec, note) != 0)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	g->sent = 0;
	if (!g->refused)
		return 0;
	g->refused = 0;
	saop_record_event(store, rec, NULL,
	    SAOP_EVENT_STRUCTURED_OUTPUT_REFUSED, note);
	return 1;
}
