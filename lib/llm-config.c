/*
 * llm-config.c: how to reach the model (SAOP_PROVIDER, SAOP_API_BASE, the
 * key, SAOP_MODEL, SAOP_TIMEOUT_MS) and the endpoint URL.  What keeps the
 * key out of everything shown is in lib/llm-shown.c.
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

/* ---- configuration ---- */

/* The public API base URL of provider p.  Returns a static string. */
static const char *
default_base(enum saop_provider p)
{
	return p == SAOP_PROVIDER_ANTHROPIC ? ANTHROPIC_BASE :
	    p == SAOP_PROVIDER_GEMINI ? GEMINI_BASE : OPENAI_BASE;
}

/*
 * A copy of the environment variable name.  Returns a new string (free()),
 * or NULL when it is unset or empty, or on ENOMEM.
 */
static char *
env_dup(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? strdup(v) : NULL;
}

/*
 * Keep the first problem of the environment in cfg->problem (see saop.h),
 * formatted from fmt; a later one is dropped.  Returns 0, or -1 on ENOMEM.
 */
static int SAOP__PRINTF(2, 3)
config_problem(struct saop_llm_config *cfg, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (cfg->problem != NULL)
		return 0;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return (cfg->problem = strdup(msg)) != NULL ? 0 : -1;
}

/*
 * Fill cfg from the environment (see saop.h and DESIGN.md).  Returns 0 or
 * -SAOP_ENOMEM.  An unknown provider or a bad SAOP_TIMEOUT_MS is kept in
 * cfg->problem, for saop_llm_call() and saop_llm_dry_run() to report: a
 * program that never calls the model does not fail for it.
 */
int
saop_llm_config_from_env(struct saop_llm_config *cfg, struct saop_err *e)
{
	const char *v;
	int bad = 0, known = 1;

	memset(cfg, 0, sizeof(*cfg));
	cfg->stream = 1;
	cfg->timeout_ms = DEFAULT_TIMEOUT_MS;
	cfg->connect_timeout_ms = DEFAULT_CONNECT_MS;
	v = getenv("SAOP_PROVIDER");
	if (v == NULL || *v == '\0' || strcmp(v, "openai") == 0) {
		cfg->provider = SAOP_PROVIDER_OPENAI;
	} else if (strcmp(v, "anthropic") == 0) {
		cfg->provider = SAOP_PROVIDER_ANTHROPIC;
	} else if (strcmp(v, "openai-responses") == 0) {
		cfg->provider = SAOP_PROVIDER_RESPONSES;
	} else if (strcmp(v, "gemini") == 0) {
		cfg->provider = SAOP_PROVIDER_GEMINI;
	} else {
		cfg->provider = SAOP_PROVIDER_OPENAI;
		known = 0;
		bad |= config_problem(cfg, "SAOP_PROVIDER: unknown provider "
		    "'%.64s' (openai, anthropic, openai-responses or gemini)",
		    v);
	}
	if ((v = getenv("SAOP_TIMEOUT_MS")) != NULL && *v != '\0') {
		char *end;
		long ms;

		errno = 0;
		ms = strtol(v, &end, 10);
		if (errno != 0 || *end != '\0' || ms <= 0)
			bad |= config_problem(cfg, "SAOP_TIMEOUT_MS: '%.32s' "
			    "is not a positive number of milliseconds", v);
		else
			cfg->timeout_ms = ms;
	}
	if (cfg->connect_timeout_ms > cfg->timeout_ms)
		cfg->connect_timeout_ms = cfg->timeout_ms;
	if ((cfg->base = env_dup("SAOP_API_BASE")) == NULL)
		cfg->base = strdup(default_base(cfg->provider));
	/*
	 * With an unknown provider either provider's key will do: a key
	 * means a model was meant, and the call then says what is wrong.
	 */
	if ((cfg->key = env_dup("SAOP_API_KEY")) == NULL &&
	    ((cfg->provider != SAOP_PROVIDER_ANTHROPIC &&
	    cfg->provider != SAOP_PROVIDER_GEMINI) || !known))
		cfg->key = env_dup("OPENAI_API_KEY");
	if (cfg->key == NULL && (cfg->provider == SAOP_PROVIDER_ANTHROPIC ||
	    !known))
		cfg->key = env_dup("ANTHROPIC_API_KEY");
	if (cfg->key == NULL && cfg->provider == SAOP_PROVIDER_GEMINI &&
	    (cfg->key = env_dup("GEMINI_API_KEY")) == NULL)
		cfg->key = env_dup("GOOGLE_API_KEY");
	cfg->model = env_dup("SAOP_MODEL");
	if (cfg->base == NULL || bad) {
		saop_llm_config_free(cfg);
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * See saop.h.  Returns 1 when cfg has a key, or a base URL other than the
 * provider's own; else 0 (also for a NULL cfg).
 */
int
saop_llm_configured(const struct saop_llm_config *cfg)
{
	if (cfg == NULL)
		return 0;
	if (cfg->key != NULL && *cfg->key != '\0')
		return 1;
	return cfg->base != NULL &&
	    strcmp(cfg->base, default_base(cfg->provider)) != 0;
}

/* Free the strings of cfg, wiping the key first. */
void
saop_llm_config_free(struct saop_llm_config *cfg)
{
	if (cfg == NULL)
		return;
	if (cfg->key != NULL) {
		volatile char *k = cfg->key;

		while (*k != '\0')
			*k++ = '\0';
	}
	free(cfg->base);
	free(cfg->key);
	free(cfg->model);
	free(cfg->problem);
	cfg->base = cfg->key = cfg->model = cfg->problem = NULL;
}

/*
 * The model a call of request goes to: the request's "model" when it is a
 * string, else cfg->model (may be NULL).  Borrowed.
 */
const char *
saop__llm_model_of(const struct saop_llm_config *cfg, const json_t *request)
{
	const char *m = json_string_value(json_object_get(request, "model"));

	return m != NULL ? m : cfg->model;
}

/*
 * The header that carries key for provider p: "Authorization: Bearer
 * KEY" (OpenAI, Responses), "x-api-key: KEY" (Anthropic) or
 * "x-goog-api-key: KEY" (Gemini: never in the URL).  A new string
 * (free() it after wiping), or NULL on ENOMEM.
 */
char *
saop__llm_auth_header(enum saop_provider p, const char *key)
{
	const char *h = p == SAOP_PROVIDER_ANTHROPIC ? "x-api-key: " :
	    p == SAOP_PROVIDER_GEMINI ? "x-goog-api-key: " :
	    "Authorization: Bearer ";
	size_t n = strlen(h) + strlen(key) + 1;
	char *s;

	if ((s = malloc(n)) != NULL)
		snprintf(s, n, "%s%s", h, key);
	return s;
}

/*
 * The endpoint URL for cfg and model: the base URL with the provider's
 * path put after its own path, before any query (an Azure-style
 * ?api-version=): /chat/completions, /messages, /responses, or Gemini's
 * /models/MODEL:streamGenerateContent?alt=sse (:generateContent when not
 * streaming; a "models/" prefix of the model is not doubled).  A new
 * string (free()), or NULL on ENOMEM.
 */
char *
saop__llm_endpoint(const struct saop_llm_config *cfg, const char *model)
{
	const char *base = cfg->base != NULL ? cfg->base :
	    default_base(cfg->provider);
	const char *path = cfg->provider == SAOP_PROVIDER_ANTHROPIC ?
	    "/messages" : cfg->provider == SAOP_PROVIDER_RESPONSES ?
	    "/responses" : "/chat/completions";
	const char *auth = strstr(base, "://"), *query, *extra = "";
	size_t n;
	char *u, *gp = NULL;

	if (cfg->provider == SAOP_PROVIDER_GEMINI) {
		size_t plen;

		if (model == NULL)
			model = "";
		if (strncmp(model, "models/", 7) == 0)
			model += 7;
		plen = strlen(model) + 40;
		if ((gp = malloc(plen)) == NULL)
			return NULL;
		snprintf(gp, plen, "/models/%s:%s", model, cfg->stream ?
		    "streamGenerateContent" : "generateContent");
		path = gp;
		if (cfg->stream)
			extra = "alt=sse";
	}
	/* The query starts at the first '?' or '#' after the scheme. */
	auth = auth != NULL ? auth + 3 : base;
	query = auth + strcspn(auth, "?#");
	n = (size_t)(query - base);
	while (n > 0 && base[n - 1] == '/')
		n--;
	if ((u = malloc(n + strlen(path) + strlen(query) + strlen(extra) +
	    2)) == NULL) {
		free(gp);
		return NULL;
	}
	memcpy(u, base, n);
	strcpy(u + n, path);
	if (*extra != '\0') {
		/* Gemini's alt=sse joins the base's own query, if any. */
		strcat(u, *query == '?' ? query : "?");
		if (*query == '?')
			strcat(u, "&");
		strcat(u, extra);
		if (*query != '?')
			strcat(u, query);
	} else
		strcat(u, query);
	free(gp);
	return u;
}
