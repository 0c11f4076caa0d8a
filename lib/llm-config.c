/*
 * llm-config.c: how to reach the model (SAOP_PROVIDER, SAOP_API_BASE, the
 * key, SAOP_MODEL, SAOP_TIMEOUT_MS, SAOP_HEADERS, SAOP_AUTH_HEADER,
 * SAOP_VERTEX_PROJECT, SAOP_VERTEX_LOCATION, each also a key of the
 * configuration file, through settings.c; the provider's own key
 * variables after the file) and the endpoint URL.
 * What keeps the key out of everything shown is in lib/llm-shown.c.
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
 * The setting key (the environment, else the file: settings.c), or NULL
 * when unset or empty.  Returns it borrowed.
 */
static const char *
setting(const char *key)
{
	const char *v = saop__setting(key);

	return v != NULL && *v != '\0' ? v : NULL;
}

/*
 * A copy of the setting key.  Returns a new string (free()), or NULL when
 * it is unset or empty, or on ENOMEM.
 */
static char *
setting_dup(const char *key)
{
	const char *v = setting(key);

	return v != NULL ? strdup(v) : NULL;
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
 * The length of the HTTP token (RFC 9110: a header name) at the start of
 * s.  Returns 0 when s does not start with one.
 */
static size_t
token_len(const char *s)
{
	static const char extra[] = "!#$%&'*+-.^_`|~";
	size_t n = 0;

	while (s[n] != '\0' && ((s[n] >= 'a' && s[n] <= 'z') ||
	    (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9') ||
	    strchr(extra, s[n]) != NULL))
		n++;
	return n;
}

/* See saop.h.  Returns 0, -SAOP_EUSAGE or -SAOP_ENOMEM. */
int
saop_llm_config_add_header(struct saop_llm_config *cfg, const char *line,
    struct saop_err *e)
{
	size_t n = token_len(line);
	char **h, *copy;

	if (n == 0 || line[n] != ':')
		return saop__fail(e, SAOP_EUSAGE, 0, "'%.64s' is not "
		    "'Name: value' (a header name, then a colon)", line);
	if (strpbrk(line, "\r\n") != NULL)
		return saop__fail(e, SAOP_EUSAGE, 0, "a header may not hold "
		    "a line break");
	if ((copy = strdup(line)) == NULL ||
	    (h = realloc(cfg->headers, (cfg->nheaders + 1) *
	    sizeof(*h))) == NULL) {
		free(copy);
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	h[cfg->nheaders++] = copy;
	cfg->headers = h;
	return 0;
}

/*
 * The header lines of SAOP_HEADERS (one a line; blank lines skipped) into
 * cfg; a bad one becomes cfg->problem.  Returns 0, or -1 on ENOMEM.
 */
static int
env_headers(struct saop_llm_config *cfg)
{
	const char *v = setting("headers"), *p, *nl;
	struct saop_err e;
	char line[1024], name[300];

	saop__setting_name("headers", name, sizeof(name));

	for (p = v; p != NULL && *p != '\0'; p = nl != NULL ? nl + 1 : NULL) {
		size_t n;

		nl = strchr(p, '\n');
		n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n == 0)
			continue;
		if (n >= sizeof(line)) {
			if (config_problem(cfg, "%s: a line of more than %zu "
			    "bytes", name, sizeof(line) - 1) != 0)
				return -1;
			continue;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		if (saop_llm_config_add_header(cfg, line, &e) != 0 &&
		    (e.code == SAOP_ENOMEM ||
		    config_problem(cfg, "%s: %s", name, e.msg) != 0))
			return -1;
	}
	return 0;
}

/* ---- Amazon Bedrock: the region and the AWS credentials ---- */

/*
 * The value of key in section sect of the INI file at path (AWS's shared
 * credentials and config files: "[name]" sections, "key = value" lines,
 * '#' and ';' comments), leading and trailing blanks dropped.  Returns a
 * new string (free(), wipe first: it may be a secret), or NULL when the
 * file, the section or the key is not there, or on ENOMEM.
 */
static char *
ini_get(const char *path, const char *sect, const char *key)
{
	char line[1024], *v = NULL, *s;
	size_t sl = strlen(sect), kl = strlen(key);
	int in = 0;
	FILE *f;

	if (path == NULL || (f = fopen(path, "r")) == NULL)
		return NULL;
	while (v == NULL && fgets(line, sizeof(line), f) != NULL) {
		char *e;

		for (s = line; *s == ' ' || *s == '\t'; s++)
			;
		e = s + strlen(s);
		while (e > s && strchr(" \t\r\n", e[-1]) != NULL)
			*--e = '\0';
		if (*s == '[') {
			in = (size_t)(e - s) == sl + 2 && e[-1] == ']' &&
			    strncmp(s + 1, sect, sl) == 0;
			continue;
		}
		if (!in || *s == '#' || *s == ';' || strncmp(s, key, kl) != 0)
			continue;
		for (s += kl; *s == ' ' || *s == '\t'; s++)
			;
		if (*s++ != '=')
			continue;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s != '\0')
			v = strdup(s);
	}
	explicit_bzero(line, sizeof(line));
	fclose(f);
	return v;
}

/*
 * The path of one of AWS's shared files: the environment variable env
 * when set, else ~/.aws/name.  Returns a new string, or NULL.
 */
static char *
aws_file(const char *env, const char *name)
{
	const char *home = getenv("HOME");
	char *p;
	size_t n;

	if ((p = env_dup(env)) != NULL || home == NULL || *home == '\0')
		return p;
	n = strlen(home) + strlen(name) + 8;
	if ((p = malloc(n)) != NULL)
		snprintf(p, n, "%s/.aws/%s", home, name);
	return p;
}

/*
 * Fill cfg's Bedrock settings: the key (a Bedrock API key,
 * AWS_BEARER_TOKEN_BEDROCK, unless SAOP_API_KEY is set), the region
 * (AWS_REGION, AWS_DEFAULT_REGION, the profile's), the credentials
 * (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, else
 * those of the profile AWS_PROFILE, or "default", in ~/.aws/credentials
 * and ~/.aws/config) and the base URL when SAOP_API_BASE gives none.
 * Returns 0, or nonzero on ENOMEM.
 */
static int
bedrock_env(struct saop_llm_config *cfg)
{
	char *cred, *conf, sect[160];
	const char *prof = getenv("AWS_PROFILE");
	int bad = 0;

	if (prof == NULL || *prof == '\0')
		prof = "default";
	cred = aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
	conf = aws_file("AWS_CONFIG_FILE", "config");
	/* ~/.aws/config names a profile "[profile NAME]", but default. */
	snprintf(sect, sizeof(sect), "%s%.140s", strcmp(prof, "default") ==
	    0 ? "" : "profile ", prof);
	if (cfg->key == NULL)
		cfg->key = env_dup("AWS_BEARER_TOKEN_BEDROCK");
	if ((cfg->aws_region = env_dup("AWS_REGION")) == NULL &&
	    (cfg->aws_region = env_dup("AWS_DEFAULT_REGION")) == NULL)
		cfg->aws_region = ini_get(conf, sect, "region");
	if ((cfg->aws_id = env_dup("AWS_ACCESS_KEY_ID")) != NULL) {
		cfg->aws_secret = env_dup("AWS_SECRET_ACCESS_KEY");
		cfg->aws_token = env_dup("AWS_SESSION_TOKEN");
	} else if ((cfg->aws_id = ini_get(cred, prof,
	    "aws_access_key_id")) != NULL) {
		cfg->aws_secret = ini_get(cred, prof, "aws_secret_access_key");
		cfg->aws_token = ini_get(cred, prof, "aws_session_token");
	} else if ((cfg->aws_id = ini_get(conf, sect,
	    "aws_access_key_id")) != NULL) {
		cfg->aws_secret = ini_get(conf, sect, "aws_secret_access_key");
		cfg->aws_token = ini_get(conf, sect, "aws_session_token");
	}
	free(cred);
	free(conf);
	if (cfg->aws_region == NULL)
		bad |= config_problem(cfg, "bedrock: no region: set "
		    "AWS_REGION (or a region in the profile's ~/.aws/config)");
	else if (strspn(cfg->aws_region, "abcdefghijklmnopqrstuvwxyz"
	    "0123456789-") != strlen(cfg->aws_region))
		bad |= config_problem(cfg, "AWS_REGION: '%.64s' is not a "
		    "region name", cfg->aws_region);
	if (cfg->aws_id != NULL && cfg->aws_secret == NULL)
		bad |= config_problem(cfg, "bedrock: an access key id without "
		    "its secret (AWS_SECRET_ACCESS_KEY)");
	if (cfg->base == NULL && cfg->aws_region != NULL) {
		size_t n = strlen(cfg->aws_region) + 48;

		if ((cfg->base = malloc(n)) != NULL)
			snprintf(cfg->base, n, "https://bedrock-runtime.%s."
			    "amazonaws.com", cfg->aws_region);
	}
	return bad;
}

/* ---- Google Vertex AI: the project and the location ---- */

/*
 * The host URL of Vertex AI at location into buf (size bytes):
 * https://LOCATION-aiplatform.googleapis.com, or
 * https://aiplatform.googleapis.com for "global" (Google's "Generate
 * content with the Gemini API in Vertex AI" and "Request predictions
 * with Claude models", cloud.google.com/vertex-ai/generative-ai/docs).
 * Returns buf.
 */
static const char *
vertex_host(const char *location, char *buf, size_t size)
{
	if (strcmp(location, "global") == 0)
		snprintf(buf, size, "https://aiplatform.googleapis.com");
	else
		snprintf(buf, size, "https://%.64s-aiplatform.googleapis.com",
		    location);
	return buf;
}

/* 1 when s is made of the bytes of ok alone (a word of the path). */
static int
path_word(const char *s, const char *ok)
{
	return strspn(s, ok) == strlen(s);
}

/*
 * Fill cfg's Vertex AI settings: the project (SAOP_VERTEX_PROJECT, else
 * the file's vertex_project: missing, a configuration problem naming
 * the variable), the location (SAOP_VERTEX_LOCATION, vertex_location,
 * else VERTEX_LOCATION) and the base URL when SAOP_API_BASE gives none.
 * Returns 0, or nonzero on ENOMEM.
 */
static int
vertex_env(struct saop_llm_config *cfg)
{
	static const char word[] = "abcdefghijklmnopqrstuvwxyz0123456789-";
	char name[300], host[128];
	int bad = 0;

	cfg->vertex_project = setting_dup("vertex_project");
	if ((cfg->vertex_location = setting_dup("vertex_location")) == NULL &&
	    (cfg->vertex_location = strdup(VERTEX_LOCATION)) == NULL)
		return 1;
	/* A project ID; an old one may be "domain.com:name". */
	if (cfg->vertex_project == NULL)
		bad |= config_problem(cfg, "%s: no project: set "
		    "SAOP_VERTEX_PROJECT (or vertex_project in the "
		    "configuration file)", cfg->provider ==
		    SAOP_PROVIDER_ANTHROPIC ? "vertex-anthropic" :
		    "vertex-gemini");
	else if (!path_word(cfg->vertex_project, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:"))
		bad |= config_problem(cfg, "%s: '%.64s' is not a project ID",
		    saop__setting_name("vertex_project", name, sizeof(name)),
		    cfg->vertex_project);
	if (!path_word(cfg->vertex_location, word) ||
	    strlen(cfg->vertex_location) > 64)
		bad |= config_problem(cfg, "%s: '%.64s' is not a location",
		    saop__setting_name("vertex_location", name, sizeof(name)),
		    cfg->vertex_location);
	else if (cfg->base == NULL && (cfg->base = strdup(vertex_host(
	    cfg->vertex_location, host, sizeof(host)))) == NULL)
		bad = 1;
	return bad;
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
	struct saop_setting_from kfrom;
	struct saop_err ke;
	const char *v, *key;
	char name[300];
	int bad = 0, known = 1;

	memset(cfg, 0, sizeof(*cfg));
	cfg->stream = 1;
	cfg->timeout_ms = DEFAULT_TIMEOUT_MS;
	cfg->connect_timeout_ms = DEFAULT_CONNECT_MS;
	v = setting("provider");
	if (v == NULL || strcmp(v, "openai") == 0) {
		cfg->provider = SAOP_PROVIDER_OPENAI;
	} else if (strcmp(v, "anthropic") == 0) {
		cfg->provider = SAOP_PROVIDER_ANTHROPIC;
	} else if (strcmp(v, "openai-responses") == 0) {
		cfg->provider = SAOP_PROVIDER_RESPONSES;
	} else if (strcmp(v, "gemini") == 0) {
		cfg->provider = SAOP_PROVIDER_GEMINI;
	} else if (strcmp(v, "bedrock") == 0) {
		cfg->provider = SAOP_PROVIDER_BEDROCK;
	} else if (strcmp(v, "vertex-gemini") == 0) {
		cfg->provider = SAOP_PROVIDER_GEMINI;
		cfg->vertex = 1;
	} else if (strcmp(v, "vertex-anthropic") == 0) {
		cfg->provider = SAOP_PROVIDER_ANTHROPIC;
		cfg->vertex = 1;
	} else {
		cfg->provider = SAOP_PROVIDER_OPENAI;
		known = 0;
		bad |= config_problem(cfg, "%s: unknown provider '%.64s' "
		    "(openai, anthropic, openai-responses, gemini, bedrock, "
		    "vertex-gemini or vertex-anthropic)",
		    saop__setting_name("provider", name, sizeof(name)), v);
	}
	if ((v = setting("timeout_ms")) != NULL) {
		char *end;
		long ms;

		errno = 0;
		ms = strtol(v, &end, 10);
		if (errno != 0 || *end != '\0' || ms <= 0)
			bad |= config_problem(cfg, "%s: '%.32s' is not a "
			    "positive number of milliseconds",
			    saop__setting_name("timeout_ms", name,
			    sizeof(name)), v);
		else
			cfg->timeout_ms = ms;
	}
	if (cfg->connect_timeout_ms > cfg->timeout_ms)
		cfg->connect_timeout_ms = cfg->timeout_ms;
	cfg->base = setting_dup("api_base");
	if (cfg->base == NULL && cfg->provider != SAOP_PROVIDER_BEDROCK &&
	    !cfg->vertex)
		cfg->base = strdup(default_base(cfg->provider));
	/*
	 * With an unknown provider either provider's key will do: a key
	 * means a model was meant, and the call then says what is wrong.
	 */
	if (saop_settings_api_key(&key, &kfrom, &ke) != 0) {
		if (ke.code == SAOP_ENOMEM)
			bad = 1;
		else
			bad |= config_problem(cfg, "%s", ke.msg);
	} else if (key != NULL && (cfg->key = strdup(key)) == NULL)
		bad = 1;
	else
		cfg->key_cmd = key != NULL && kfrom.cmd;
	/* Vertex AI's token is Google's, not a provider's API key. */
	if (cfg->key == NULL && !bad && !cfg->vertex &&
	    ((cfg->provider != SAOP_PROVIDER_ANTHROPIC &&
	    cfg->provider != SAOP_PROVIDER_GEMINI &&
	    cfg->provider != SAOP_PROVIDER_BEDROCK) || !known))
		cfg->key = env_dup("OPENAI_API_KEY");
	if (cfg->key == NULL && !cfg->vertex &&
	    (cfg->provider == SAOP_PROVIDER_ANTHROPIC || !known))
		cfg->key = env_dup("ANTHROPIC_API_KEY");
	if (cfg->key == NULL && cfg->provider == SAOP_PROVIDER_GEMINI &&
	    !cfg->vertex && (cfg->key = env_dup("GEMINI_API_KEY")) == NULL)
		cfg->key = env_dup("GOOGLE_API_KEY");
	cfg->model = setting_dup("model");
	if (cfg->provider == SAOP_PROVIDER_BEDROCK) {
		bad |= bedrock_env(cfg);
		/* Without a region: a base to keep, the call fails. */
		if (cfg->base == NULL)
			cfg->base = strdup(default_base(cfg->provider));
	}
	if (cfg->vertex) {
		bad |= vertex_env(cfg);
		/* A bad location: a base to keep, the call fails. */
		if (cfg->base == NULL)
			cfg->base = strdup(default_base(cfg->provider));
	}
	if ((v = setting("auth_header")) != NULL) {
		if (token_len(v) != strlen(v))
			bad |= config_problem(cfg, "%s: '%.64s' is not a "
			    "header name", saop__setting_name("auth_header",
			    name, sizeof(name)), v);
		else if ((cfg->auth_header = strdup(v)) == NULL)
			bad = 1;
	}
	bad |= env_headers(cfg);
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
	if (cfg->vertex && cfg->vertex_location != NULL &&
	    (cfg->key == NULL || *cfg->key == '\0')) {
		char host[128];

		return cfg->base != NULL && strcmp(cfg->base, vertex_host(
		    cfg->vertex_location, host, sizeof(host))) != 0;
	}
	if (cfg->key != NULL && *cfg->key != '\0')
		return 1;
	if (cfg->aws_id != NULL && cfg->aws_secret != NULL)
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
	saop__wipe(cfg->key);
	saop__wipe(cfg->aws_secret);
	saop__wipe(cfg->aws_token);
	saop__wipe(cfg->aws_id);
	free(cfg->aws_secret);
	free(cfg->aws_token);
	free(cfg->aws_id);
	free(cfg->aws_region);
	cfg->aws_secret = cfg->aws_token = cfg->aws_id = NULL;
	cfg->aws_region = NULL;
	free(cfg->vertex_project);
	free(cfg->vertex_location);
	cfg->vertex_project = cfg->vertex_location = NULL;
	free(cfg->base);
	free(cfg->key);
	free(cfg->model);
	free(cfg->problem);
	free(cfg->auth_header);
	while (cfg->nheaders > 0)
		free(cfg->headers[--cfg->nheaders]);
	free(cfg->headers);
	cfg->headers = NULL;
	cfg->base = cfg->key = cfg->model = cfg->problem = NULL;
	cfg->auth_header = NULL;
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
 * streaming; a "models/" prefix of the model is not doubled), or Vertex
 * AI's /v1/projects/P/locations/L/publishers/google/models/MODEL and
 * Gemini's method, or .../publishers/anthropic/models/MODEL:
 * streamRawPredict (:rawPredict).  A new string (free()), or NULL on
 * ENOMEM.
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

	if (cfg->provider == SAOP_PROVIDER_BEDROCK) {
		/*
		 * /model/ID/converse-stream (or /converse), the ID
		 * percent-encoded: its ':' (anthropic.claude-...-v1:0) and
		 * the '/' of an ARN are data in the path.
		 */
		static const char hex[] = "0123456789ABCDEF";
		const unsigned char *m = (const unsigned char *)(model != NULL ?
		    model : "");
		char *q;

		if ((gp = malloc(3 * strlen((const char *)m) + 40)) == NULL)
			return NULL;
		q = gp + sprintf(gp, "/model/");
		for (; *m != '\0'; m++)
			if (strchr("-._~", *m) != NULL ||
			    (*m < 128 && isalnum(*m)))
				*q++ = (char)*m;
			else {
				*q++ = '%';
				*q++ = hex[*m >> 4];
				*q++ = hex[*m & 15];
			}
		strcpy(q, cfg->stream ? "/converse-stream" : "/converse");
		path = gp;
	}
	if (cfg->provider == SAOP_PROVIDER_GEMINI || cfg->vertex) {
		int gem = cfg->provider == SAOP_PROVIDER_GEMINI;
		size_t plen;

		if (model == NULL)
			model = "";
		if (gem && strncmp(model, "models/", 7) == 0)
			model += 7;
		plen = strlen(model) + 100 + (cfg->vertex ?
		    strlen(cfg->vertex_project != NULL ? cfg->vertex_project :
		    "") + strlen(cfg->vertex_location != NULL ?
		    cfg->vertex_location : "") : 0);
		if ((gp = malloc(plen)) == NULL)
			return NULL;
		if (cfg->vertex)
			snprintf(gp, plen, "/v1/projects/%s/locations/%s/"
			    "publishers/%s/models/%s:%s", cfg->vertex_project !=
			    NULL ? cfg->vertex_project : "",
			    cfg->vertex_location != NULL ?
			    cfg->vertex_location : "", gem ? "google" :
			    "anthropic", model, gem ? (cfg->stream ?
			    "streamGenerateContent" : "generateContent") :
			    cfg->stream ? "streamRawPredict" : "rawPredict");
		else
			snprintf(gp, plen, "/models/%s:%s", model,
			    cfg->stream ? "streamGenerateContent" :
			    "generateContent");
		path = gp;
		if (cfg->stream && gem)
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

/*
 * The key's header line for cfg: the provider's own
 * (saop__llm_auth_header()), or with SAOP_AUTH_HEADER "NAME: KEY"), with
 * shown_key in place of the key.  Returns a new string (free(), wipe first when it holds the
 * key), or NULL on ENOMEM.
 */
char *
saop__llm_auth_line(const struct saop_llm_config *cfg, const char *shown_key)
{
	const char *name = cfg->auth_header;
	size_t n;
	char *s;

	if (name == NULL)	/* Vertex AI's: Google's bearer token */
		return saop__llm_auth_header(cfg->vertex ?
		    SAOP_PROVIDER_OPENAI : cfg->provider, shown_key);
	n = strlen(name) + strlen(shown_key) + 16;
	if ((s = malloc(n)) == NULL)
		return NULL;
	snprintf(s, n, "%s: %s%s", name, strcasecmp(name, "Authorization") ==
	    0 ? "Bearer " : "", shown_key);
	return s;
}

/* See llm-int.h. */
int
saop__llm_sigv4_wanted(const struct saop_llm_config *cfg)
{
	return cfg->provider == SAOP_PROVIDER_BEDROCK &&
	    (cfg->key == NULL || *cfg->key == '\0') &&
	    cfg->aws_id != NULL && cfg->aws_secret != NULL &&
	    cfg->aws_region != NULL;
}

/*
 * Sign a call of cfg to url with body at now (see llm-int.h): host,
 * x-amz-date and the session token (when there is one) signed, service
 * "bedrock".  Returns 0 or a negative code.
 */
int
saop__llm_sigv4(const struct saop_llm_config *cfg, const char *url,
    const char *body, time_t now, char amz_date[17],
    struct saop__sigv4_out *out)
{
	struct saop__sigv4 in;
	struct tm tm;

	memset(&in, 0, sizeof(in));
	if (gmtime_r(&now, &tm) == NULL ||
	    strftime(amz_date, 17, "%Y%m%dT%H%M%SZ", &tm) != 16)
		return -SAOP_EDATA;
	in.method = "POST";
	in.url = url;
	in.payload = body;
	in.payload_len = strlen(body);
	in.amz_date = amz_date;
	in.region = cfg->aws_region;
	in.service = "bedrock";
	in.id = cfg->aws_id;
	in.secret = cfg->aws_secret;
	in.token = cfg->aws_token;
	return saop__sigv4_sign(&in, out);
}

/*
 * 1 when one of cfg's own headers is named as the header line hdr ("Name:
 * ..." or "Name"), which it then replaces; else 0.
 */
int
saop__llm_header_given(const struct saop_llm_config *cfg, const char *hdr)
{
	size_t i, n = strcspn(hdr, ":");

	for (i = 0; i < cfg->nheaders; i++)
		if (strncasecmp(cfg->headers[i], hdr, n) == 0 &&
		    cfg->headers[i][n] == ':')
			return 1;
	return 0;
}
