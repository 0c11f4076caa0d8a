/* llm.c: the model client: provider-neutral requests over libcurl, answers
 * read from SSE, JSON or NDJSON, every failure classified. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <dlfcn.h>

#include <curl/curl.h>

#include "saop-private.h"

#define OPENAI_BASE		"https://api.openai.com/v1"
#define ANTHROPIC_BASE		"https://api.anthropic.com/v1"
#define ANTHROPIC_VERSION	"2023-06-01"
/* Anthropic requires max_tokens; this is sent when the request has none. */
#define DEFAULT_MAX_TOKENS	SAOP_LLM_DEFAULT_MAX_TOKENS
#define DEFAULT_TIMEOUT_MS	600000L
#define DEFAULT_CONNECT_MS	((long)SAOP_LLM_CONNECT_TIMEOUT_MS)
/*
 * A stream silent for this long (less than 1 byte/s) is dead.  Generous:
 * reasoning models can think for minutes before their first token.
 */
#define LOW_SPEED_TIME_S	((long)SAOP_LLM_LOW_SPEED_TIME_S)
/* Error bodies kept for classification; the rest is dropped. */
#define MAX_ERROR_BODY		65536

enum mode { M_UNKNOWN, M_SSE, M_JSON, M_NDJSON, M_OTHER };

struct buf {
	char *p;
	size_t len, cap;
};

struct tool {
	long key;		/* OpenAI tool index or Anthropic block index */
	char *id, *name;
	struct buf args;
};

struct saop__llm_parser {
	int status;
	enum mode mode;
	char ctype[128];
	struct buf line;	/* an incomplete SSE or NDJSON line */
	int skip_lf;		/* the last line ended with CR */
	struct buf data;	/* the SSE event being read */
	int has_data;
	struct buf body;	/* a JSON body, or an error body */
	struct buf text;	/* the answer text */
	struct tool *tools;
	size_t ntools;
	char finish[16];
	int done;		/* [DONE], message_stop or done: true */
	int err;		/* an error inside the stream, or a bad chunk */
	char errmsg[300];
	int fail;		/* ENOMEM or ELIMIT while reading */
	long prompt, completion;
	size_t received;	/* body bytes */
	size_t limit;
	const char *key;	/* borrowed: masked out of error messages */
	/* Where things are, to name a bad event: */
	size_t lpos;		/* body bytes through the line splitter */
	size_t line_start;	/* the offset of the line held in line */
	size_t line_off;	/* the offset of the line being read */
	size_t unit_off;	/* the offset of this SSE event or NDJSON line */
	unsigned long units;	/* SSE data events or NDJSON lines so far */
	int in_event;		/* a line of the current SSE event came */
};

/* ---- small buffers ---- */

/*
 * Append the n bytes at s to b, keeping it NUL-terminated.  Returns 0,
 * -SAOP_ELIMIT when b would pass limit bytes, or -SAOP_ENOMEM.
 */
static int
buf_add(struct buf *b, const char *s, size_t n, size_t limit)
{
	if (n > limit || b->len > limit - n)
		return -SAOP_ELIMIT;
	if (b->len + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 256;
		char *np;

		while (ncap < b->len + n + 1)
			ncap *= 2;
		if ((np = realloc(b->p, ncap)) == NULL)
			return -SAOP_ENOMEM;
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/* Free what b holds and zero it. */
static void
buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/*
 * ---- what may be shown ----
 *
 * Error messages go to stderr, --log and the events table; the request
 * line of --dry-run to stdout.  The key must never be in them, not even
 * in part, and neither the credentials a base URL can hold.
 */

/* Server messages are read up to this size, masked, then cut. */
#define SHOWN_SRC_MAX		4096
/* A run of this many bytes of the key is masked wherever it is. */
#define KEY_RUN_MIN		8

/*
 * Replace in s every run of KEY_RUN_MIN or more bytes that occurs in key
 * (or, for a key shorter than that, every copy of it) by "****".  Keys
 * shorter than 4 bytes are left: masking them would garble any message.
 */
static void
mask_secret(char *s, const char *key)
{
	size_t kl, min, i, j, l, rest;

	if (s == NULL || key == NULL || (kl = strlen(key)) < 4)
		return;
	min = KEY_RUN_MIN;
	if (kl < min)
		min = kl;
	for (i = 0; s[i] != '\0'; i++) {
		size_t best = 0;

		for (j = 0; j + best < kl; j++) {
			if (key[j] != s[i])
				continue;
			for (l = 0; j + l < kl && s[i + l] == key[j + l]; l++)
				;
			if (l > best)
				best = l;
		}
		if (best < min)
			continue;
		rest = strlen(s + i + best);
		memcpy(s + i, "****", 4);
		memmove(s + i + 4, s + i + best, rest + 1);
		i += 3;
	}
}

/*
 * Copy src into out (outsz bytes) as at most max bytes (max < outsz),
 * cut at a UTF-8 character boundary and ended by "..." when cut.
 */
static void
clip(char *out, size_t outsz, const char *src, size_t max)
{
	size_t n = strlen(src);

	if (max >= outsz)
		max = outsz - 1;
	if (n <= max) {
		memcpy(out, src, n + 1);
		return;
	}
	n = max > 3 ? max - 3 : 0;
	while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
		n--;
	memcpy(out, src, n);
	memcpy(out + n, "...", 4);
}

/* Append the n bytes at s to b.  Returns 0, or -1 on ENOMEM. */
static int
put(struct buf *b, const char *s, size_t n)
{
	return buf_add(b, s, n, SIZE_MAX / 2) == 0 ? 0 : -1;
}

/*
 * The URL as it may be shown: the userinfo (user:password@) becomes
 * "****@", the value of every query parameter (a whole parameter that
 * has no '=') "****", and a fragment "#****".  Returns a new string
 * (free()), or NULL on ENOMEM.  Every message and --dry-run line that
 * shows an endpoint shows it through this.
 */
char *
saop__llm_url_redact(const char *url)
{
	struct buf b = { 0 };
	const char *a, *end, *at, *q, *amp, *s;
	int bad = 0;

	if (url == NULL)
		url = "";
	a = strstr(url, "://");
	a = a != NULL && (size_t)(a - url) < strcspn(url, "/?#") ? a + 3 : url;
	end = a + strcspn(a, "/?#");
	for (at = NULL, s = a; s < end; s++)
		if (*s == '@')
			at = s;
	if (at != NULL)
		bad |= put(&b, url, (size_t)(a - url)) | put(&b, "****", 4) |
		    put(&b, at, (size_t)(end - at));
	else
		bad |= put(&b, url, (size_t)(end - url));
	q = end + strcspn(end, "?#");
	bad |= put(&b, end, (size_t)(q - end));
	if (*q == '?') {
		bad |= put(&b, "?", 1);
		for (s = q + 1; *s != '\0' && *s != '#'; s = amp) {
			const char *eq;

			amp = s + strcspn(s, "&#");
			eq = memchr(s, '=', (size_t)(amp - s));
			if (eq != NULL)
				bad |= put(&b, s, (size_t)(eq - s + 1)) |
				    (eq + 1 < amp ? put(&b, "****", 4) : 0);
			else if (amp > s)
				bad |= put(&b, "****", 4);
			if (*amp == '&') {
				bad |= put(&b, "&", 1);
				amp++;
			}
		}
		q = s;
	}
	if (*q == '#')
		bad |= put(&b, q[1] != '\0' ? "#****" : "#", q[1] != '\0' ?
		    5 : 1);
	if (!bad && b.p == NULL)
		bad = put(&b, "", 0);
	if (bad) {
		buf_free(&b);
		return NULL;
	}
	return b.p;
}

/*
 * Fill e as saop__fail() does, the message formatted in full first, the key
 * masked (mask_secret()), and only then cut to e->msg's size.  Returns
 * -code.
 */
static int SAOP__PRINTF(4, 5)
fail_masked(struct saop_err *e, int code, const char *key,
    const char *fmt, ...)
{
	char full[SHOWN_SRC_MAX], msg[sizeof(e->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(full, sizeof(full), fmt, ap);
	va_end(ap);
	mask_secret(full, key);
	clip(msg, sizeof(msg), full, sizeof(msg) - 1);
	return saop__fail(e, code, 0, "%s", msg);
}

/*
 * ---- libcurl, loaded on the first call ----
 *
 * libcurl and the thirty-odd libraries it brings (TLS, Kerberos, LDAP,
 * SSH...) take some 20 ms to map and relocate: more than a whole
 * saop-validate run over one envelope.  A program that never calls the
 * model should not pay it, so the functions below are looked up with
 * dlopen() on the first call, once, and libcurl is not linked in.
 */
struct curl_fns {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	time_t (*getdate)(const char *, const time_t *);
};
static struct curl_fns C;

static const struct {
	const char *name;
	size_t off;
} curl_syms[] = {
	{ "curl_global_init", offsetof(struct curl_fns, global_init) },
	{ "curl_easy_init", offsetof(struct curl_fns, easy_init) },
	{ "curl_easy_setopt", offsetof(struct curl_fns, easy_setopt) },
	{ "curl_easy_perform", offsetof(struct curl_fns, easy_perform) },
	{ "curl_easy_getinfo", offsetof(struct curl_fns, easy_getinfo) },
	{ "curl_easy_cleanup", offsetof(struct curl_fns, easy_cleanup) },
	{ "curl_easy_strerror", offsetof(struct curl_fns, easy_strerror) },
	{ "curl_slist_append", offsetof(struct curl_fns, slist_append) },
	{ "curl_slist_free_all", offsetof(struct curl_fns, slist_free_all) },
	{ "curl_getdate", offsetof(struct curl_fns, getdate) },
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static char curl_init_err[256];	/* why libcurl is not usable, or "" */

/*
 * Load libcurl and look up the functions in C, then initialise it; run
 * once (pthread_once).  Returns nothing: on failure curl_init_err says why.
 */
static void
curl_init(void)
{
	CURLcode rc;
	void *h, *f;
	size_t i;

	if ((h = dlopen(SAOP_LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		const char *why = dlerror();

		snprintf(curl_init_err, sizeof(curl_init_err),
		    "cannot load libcurl: %s", why != NULL ? why :
		    SAOP_LIBCURL_SONAME);
		return;
	}
	for (i = 0; i < sizeof(curl_syms) / sizeof(curl_syms[0]); i++) {
		if ((f = dlsym(h, curl_syms[i].name)) == NULL) {
			snprintf(curl_init_err, sizeof(curl_init_err),
			    "%s: no %s", SAOP_LIBCURL_SONAME,
			    curl_syms[i].name);
			return;
		}
		/* POSIX: a function pointer is as wide as void *. */
		memcpy((char *)&C + curl_syms[i].off, &f, sizeof(f));
	}
	if ((rc = C.global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK)
		snprintf(curl_init_err, sizeof(curl_init_err),
		    "curl_global_init: %s", C.easy_strerror(rc));
}

/* ---- configuration ---- */

/* The public API base URL of provider p.  Returns a static string. */
static const char *
default_base(enum saop_provider p)
{
	return p == SAOP_PROVIDER_ANTHROPIC ? ANTHROPIC_BASE : OPENAI_BASE;
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
	} else {
		cfg->provider = SAOP_PROVIDER_OPENAI;
		known = 0;
		bad |= config_problem(cfg, "SAOP_PROVIDER: unknown provider "
		    "'%.64s' (openai or anthropic)", v);
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
	    (cfg->provider != SAOP_PROVIDER_ANTHROPIC || !known))
		cfg->key = env_dup("OPENAI_API_KEY");
	if (cfg->key == NULL && (cfg->provider == SAOP_PROVIDER_ANTHROPIC ||
	    !known))
		cfg->key = env_dup("ANTHROPIC_API_KEY");
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

/* Free what a holds and zero it. */
void
saop_llm_answer_free(struct saop_llm_answer *a)
{
	if (a == NULL)
		return;
	free(a->raw);
	json_decref(a->tool_calls);
	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
}

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
text_of(const json_t *c, struct buf *b)
{
	size_t i;
	json_t *x;

	if (json_is_string(c))
		return buf_add(b, json_string_value(c), json_string_length(c),
		    SIZE_MAX / 2);
	json_array_foreach(c, i, x) {
		const json_t *t = json_object_get(x, "text");

		if (json_is_string(t) && buf_add(b, json_string_value(t),
		    json_string_length(t), SIZE_MAX / 2) != 0)
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
	struct buf st = { 0 };
	size_t i;
	int r = -1;

	sys = json_object_get(req, "system");
	if (json_is_string(sys) && buf_add(&st, json_string_value(sys),
	    json_string_length(sys), SIZE_MAX / 2) != 0)
		goto out;
	if ((msgs = json_array()) == NULL || set(out, "messages", msgs) != 0)
		goto out;
	json_array_foreach(json_object_get(req, "messages"), i, m) {
		const char *role = json_string_value(json_object_get(m,
		    "role"));

		if (role != NULL && strcmp(role, "system") == 0) {
			if (st.len > 0 && buf_add(&st, "\n\n", 2,
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
	    json_stringn(st.p, st.len)) != 0)
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
	buf_free(&st);
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
	if (r == 0)
		return out;
	json_decref(out);
nomem:
	saop__fail(e, SAOP_ENOMEM, ENOMEM,
	    "out of memory building the request");
	return NULL;
}

/*
 * The endpoint URL for cfg: the base URL with the provider's path put
 * after its own path, before any query (an Azure-style ?api-version=, a
 * ?key=).  A new string (free()), or NULL on ENOMEM.
 */
static char *
endpoint(const struct saop_llm_config *cfg)
{
	const char *base = cfg->base != NULL ? cfg->base :
	    default_base(cfg->provider);
	const char *path = cfg->provider == SAOP_PROVIDER_ANTHROPIC ?
	    "/messages" : "/chat/completions";
	const char *auth = strstr(base, "://"), *query;
	size_t n;
	char *u;

	/* The query starts at the first '?' or '#' after the scheme. */
	auth = auth != NULL ? auth + 3 : base;
	query = auth + strcspn(auth, "?#");
	n = (size_t)(query - base);
	while (n > 0 && base[n - 1] == '/')
		n--;
	if ((u = malloc(n + strlen(path) + strlen(query) + 1)) == NULL)
		return NULL;
	memcpy(u, base, n);
	strcpy(u + n, path);
	strcat(u, query);
	return u;
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
	url = endpoint(cfg);
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

/* ---- reading the answer ---- */

/*
 * Parse the n bytes at s as one JSON text.  Providers send integers beyond
 * 64 bits (Together's "seed"), which jansson refuses: then read every
 * integer as a real.  Returns a new reference, or NULL with je filled.
 */
static json_t *
load(const char *s, size_t n, json_error_t *je)
{
	json_t *o = json_loadb(s, n, JSON_ALLOW_NUL, je);

	if (o == NULL && strstr(je->text, "too big") != NULL)
		o = json_loadb(s, n, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL,
		    je);
	return o;
}

/* The number v as a long into *out; 0, or -1 when v is no number. */
static int
num(const json_t *v, long *out)
{
	double d;

	if (json_is_integer(v)) {
		*out = (long)json_integer_value(v);
		return 0;
	}
	if (!json_is_real(v))
		return -1;
	d = json_real_value(v);
	if (d < (double)LONG_MIN || d > (double)LONG_MAX)
		return -1;
	*out = (long)d;
	return 0;
}

/*
 * The neutral finish reason for a provider's word w.  Returns "stop",
 * "length", "tool_calls" or, for a word it does not know, "error".
 */
static const char *
normal_finish(const char *w)
{
	static const char *const stop[] = { "stop", "end_turn",
	    "stop_sequence", "pause_turn", "eos", "STOP", NULL };
	static const char *const length[] = { "length", "max_tokens",
	    "model_context_window_exceeded", "MAX_TOKENS", NULL };
	static const char *const tools[] = { "tool_calls", "tool_use",
	    "function_call", NULL };
	int i;

	for (i = 0; stop[i] != NULL; i++)
		if (strcmp(w, stop[i]) == 0)
			return "stop";
	for (i = 0; length[i] != NULL; i++)
		if (strcmp(w, length[i]) == 0)
			return "length";
	for (i = 0; tools[i] != NULL; i++)
		if (strcmp(w, tools[i]) == 0)
			return "tool_calls";
	return "error";
}

/* Set p's finish reason from the provider's word v, when v is a string. */
static void
set_finish(struct saop__llm_parser *p, const json_t *v)
{
	if (json_is_string(v))
		snprintf(p->finish, sizeof(p->finish), "%s",
		    normal_finish(json_string_value(v)));
}

/* Copy s into out as one printable line of at most outsz - 1 bytes. */
static void
one_line(char *out, size_t outsz, const char *s)
{
	size_t i, n = 0;

	for (i = 0; s != NULL && s[i] != '\0' && n + 1 < outsz; i++)
		out[n++] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
	out[n] = '\0';
}

/* 1 when s is not NULL and holds w, case ignored; else 0. */
static int
has_word(const char *s, const char *w)
{
	return s != NULL && strcasestr(s, w) != NULL;
}

/*
 * Classify an error object (or string) from an error body or inside a
 * stream: by its type or code, then by the HTTP status.  Its message goes
 * to msg as one line.  Returns the SAOP code (positive).
 */
static int
classify_error(const json_t *err, int status, char *msg, size_t msgsz)
{
	const char *type = NULL, *code = NULL, *m = NULL;
	json_t *c;
	long n = status;

	if (json_is_string(err)) {
		m = json_string_value(err);
	} else if (json_is_object(err)) {
		type = json_string_value(json_object_get(err, "type"));
		c = json_object_get(err, "code");
		if (json_is_string(c))
			code = json_string_value(c);
		else if (json_is_integer(c))
			n = (long)json_integer_value(c);
		m = json_string_value(json_object_get(err, "message"));
	}
	one_line(msg, msgsz, m != NULL ? m : type != NULL ? type :
	    code != NULL ? code : "no message");
	if (has_word(m, "does not support assistant message prefill") ||
	    has_word(m, "final assistant content cannot end with trailing "
	    "whitespace"))
		return SAOP_EPREFILL;
	if (has_word(type, "insufficient_quota") ||
	    has_word(code, "insufficient_quota") ||
	    has_word(m, "spend limit") || has_word(m, "exceeded your current "
	    "quota") || has_word(type, "billing") || has_word(code, "billing"))
		return SAOP_EREFUSED;
	if (type != NULL || code != NULL) {
		const char *t = type != NULL ? type : code;

		if (has_word(t, "rate_limit"))
			return SAOP_ERATELIMIT;
		if (has_word(t, "overloaded") || has_word(t, "api_error") ||
		    has_word(t, "server_error") || has_word(t, "unavailable") ||
		    has_word(t, "timeout"))
			return SAOP_ENETWORK;
		if (has_word(t, "authentication") ||
		    has_word(t, "permission") ||
		    has_word(t, "not_found") || has_word(t, "invalid_api_key"))
			return SAOP_EREFUSED;
		if (has_word(t, "invalid_request") && (n == 0 || n == 400))
			return SAOP_EBADREQ;
	}
	if (n == 429)
		return SAOP_ERATELIMIT;
	if (n == 401 || n == 403 || n == 404)
		return SAOP_EREFUSED;
	if (n == 408 || n == 409 || n >= 500)
		return SAOP_ENETWORK;
	if (n >= 400)
		return SAOP_EBADREQ;
	/* An error with no kind named, inside a 200: the server failed. */
	return SAOP_ENETWORK;
}

/*
 * Record an error that came inside the stream (an Anthropic error event,
 * an OpenRouter error chunk, an Ollama error line): the first one wins.
 * Its message is masked of the key before it is cut to size.
 */
static void
stream_error(struct saop__llm_parser *p, const json_t *err)
{
	char full[SHOWN_SRC_MAX];

	if (p->err != 0)
		return;
	p->err = classify_error(err, 0, full, sizeof(full));
	mask_secret(full, p->key);
	clip(p->errmsg, sizeof(p->errmsg), full, sizeof(p->errmsg) - 1);
	snprintf(p->finish, sizeof(p->finish), "error");
}

/*
 * Describe where the parser is in the answer: "SSE event 3 (byte 140 of
 * the answer)", "NDJSON line 2 (...)" or "the JSON body".
 */
static void
where(const struct saop__llm_parser *p, char *out, size_t outsz)
{
	if (p->mode == M_SSE || p->mode == M_NDJSON)
		snprintf(out, outsz, "%s %lu (byte %zu of the answer)",
		    p->mode == M_SSE ? "SSE event" : "NDJSON line", p->units,
		    p->unit_off);
	else
		snprintf(out, outsz, "the JSON body");
}

/*
 * The answer is not the protocol: record SAOP_EPROTO (the first problem
 * wins) with a message naming the event or line and what is wrong with
 * it.  Nothing more of the answer is taken, and parser_end() drops what
 * was (a damaged answer is never merged).
 */
static void SAOP__PRINTF(2, 3)
bad_chunk(struct saop__llm_parser *p, const char *fmt, ...)
{
	char at[96], what[160];
	va_list ap;

	if (p->err != 0)
		return;
	p->err = SAOP_EPROTO;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	where(p, at, sizeof(at));
	snprintf(p->errmsg, sizeof(p->errmsg), "broken answer: %s: %s", at,
	    what);
}

/* Append the string s to the answer text (nothing once an error came). */
static void
add_text(struct saop__llm_parser *p, const json_t *s)
{
	int r;

	if (!json_is_string(s) || p->fail || p->err)
		return;
	r = buf_add(&p->text, json_string_value(s), json_string_length(s),
	    p->limit);
	if (r != 0)
		p->fail = -r;
}

/*
 * The tool call under key (an OpenAI tool index or an Anthropic block
 * index), made when create is set; NULL when there is none, or on
 * ENOMEM (p->fail set) or past 1024 calls.
 */
static struct tool *
tool_at(struct saop__llm_parser *p, long key, int create)
{
	struct tool *nt;
	size_t i;

	for (i = 0; i < p->ntools; i++)
		if (p->tools[i].key == key)
			return &p->tools[i];
	if (!create || p->ntools >= 1024)
		return NULL;
	if ((nt = realloc(p->tools, (p->ntools + 1) * sizeof(*nt))) == NULL) {
		p->fail = SAOP_ENOMEM;
		return NULL;
	}
	p->tools = nt;
	nt = &p->tools[p->ntools++];
	memset(nt, 0, sizeof(*nt));
	nt->key = key;
	return nt;
}

/* Set *dst to a copy of the string v, unless it is set already. */
static void
tool_str(char **dst, const json_t *v)
{
	if (json_is_string(v) && *dst == NULL)
		*dst = strdup(json_string_value(v));
}

/* Append the string v to t's arguments (nothing once an error came). */
static void
tool_args(struct saop__llm_parser *p, struct tool *t, const json_t *v)
{
	int r;

	if (t == NULL || !json_is_string(v) || p->fail || p->err)
		return;
	r = buf_add(&t->args, json_string_value(v), json_string_length(v),
	    p->limit);
	if (r != 0)
		p->fail = -r;
}

/* Take the token counts of a usage object (either format). */
static void
usage_of(struct saop__llm_parser *p, const json_t *u)
{
	json_t *v;

	if (!json_is_object(u))
		return;
	if ((v = json_object_get(u, "prompt_tokens")) == NULL)
		v = json_object_get(u, "input_tokens");
	num(v, &p->prompt);
	if ((v = json_object_get(u, "completion_tokens")) == NULL)
		v = json_object_get(u, "output_tokens");
	num(v, &p->completion);
}

/* 1 when v is absent, null or of the JSON type t; else 0. */
static int
absent_or(const json_t *v, json_type t)
{
	return v == NULL || json_is_null(v) || json_typeof(v) == t;
}

/*
 * 0 when the OpenAI choice ch (a chunk's or a whole body's) has a known
 * shape: an object whose delta (or message) is an object, with a content
 * that is a string or an array of parts, tool_calls an array and
 * finish_reason a string (each may be absent or null).  Else -1 and
 * SAOP_EPROTO recorded.
 */
static int
openai_choice_ok(struct saop__llm_parser *p, const json_t *ch)
{
	const json_t *d;

	if (!json_is_object(ch)) {
		bad_chunk(p, "a choice is not an object");
		return -1;
	}
	if ((d = json_object_get(ch, "delta")) == NULL)
		d = json_object_get(ch, "message");
	if (!absent_or(d, JSON_OBJECT)) {
		bad_chunk(p, "the delta is not an object");
		return -1;
	}
	if (!absent_or(json_object_get(d, "content"), JSON_STRING) &&
	    !json_is_array(json_object_get(d, "content"))) {
		bad_chunk(p, "the content is not a string");
		return -1;
	}
	if (!absent_or(json_object_get(d, "tool_calls"), JSON_ARRAY)) {
		bad_chunk(p, "tool_calls is not an array");
		return -1;
	}
	if (!absent_or(json_object_get(ch, "finish_reason"), JSON_STRING)) {
		bad_chunk(p, "finish_reason is not a string");
		return -1;
	}
	return 0;
}

/* Add the text of content: a string, or the "text" parts of an array. */
static void
openai_content(struct saop__llm_parser *p, const json_t *c)
{
	const json_t *x;
	size_t i;

	if (!json_is_array(c)) {
		add_text(p, c);
		return;
	}
	json_array_foreach(c, i, x) {
		const char *t;

		if (!json_is_object(x)) {
			bad_chunk(p, "a part of the content is not an object");
			return;
		}
		t = json_string_value(json_object_get(x, "type"));
		if (t != NULL && strcmp(t, "text") == 0)
			add_text(p, json_object_get(x, "text"));
	}
}

/* An OpenAI chunk (delta) or a whole chat.completion (message). */
static void
openai_obj(struct saop__llm_parser *p, const json_t *o)
{
	json_t *chs, *ch, *d, *tc, *c;
	size_t i;

	usage_of(p, json_object_get(o, "usage"));
	/* OpenRouter: an error chunk after a 200 (even after a finish). */
	if ((c = json_object_get(o, "error")) != NULL && !json_is_null(c)) {
		stream_error(p, c);
		return;
	}
	if (!json_is_array(chs = json_object_get(o, "choices"))) {
		bad_chunk(p, "\"choices\" is not an array");
		return;
	}
	/* Azure's first chunk and the final usage chunk have no choice. */
	if ((ch = json_array_get(chs, 0)) == NULL)
		return;
	if (openai_choice_ok(p, ch) != 0)
		return;
	if ((d = json_object_get(ch, "delta")) == NULL)
		d = json_object_get(ch, "message");
	openai_content(p, json_object_get(d, "content"));
	json_array_foreach(json_object_get(d, "tool_calls"), i, tc) {
		json_t *f = json_object_get(tc, "function");
		long ix = (long)i;
		struct tool *t;

		if (!json_is_object(tc)) {
			bad_chunk(p, "a tool call is not an object");
			return;
		}
		num(json_object_get(tc, "index"), &ix);
		if ((t = tool_at(p, ix, 1)) == NULL)
			continue;
		tool_str(&t->id, json_object_get(tc, "id"));
		tool_str(&t->name, json_object_get(f, "name"));
		tool_args(p, t, json_object_get(f, "arguments"));
	}
	set_finish(p, json_object_get(ch, "finish_reason"));
}

/*
 * An Anthropic content_block_delta: text and tool input are taken;
 * thinking, signatures and citations are known and left; any other
 * delta is not the protocol.
 */
static void
anthropic_delta(struct saop__llm_parser *p, long ix, const json_t *o)
{
	static const char *const unused[] = { "thinking_delta",
	    "signature_delta", "citations_delta", NULL };
	const json_t *d = json_object_get(o, "delta");
	const char *dt = json_string_value(json_object_get(d, "type"));
	int i;

	if (!json_is_object(d) || dt == NULL) {
		bad_chunk(p, "a content_block_delta without a typed delta");
		return;
	}
	if (strcmp(dt, "text_delta") == 0) {
		if (!json_is_string(json_object_get(d, "text")))
			bad_chunk(p, "a text_delta without its text");
		add_text(p, json_object_get(d, "text"));
		return;
	}
	if (strcmp(dt, "input_json_delta") == 0) {
		if (!json_is_string(json_object_get(d, "partial_json")))
			bad_chunk(p, "an input_json_delta without its "
			    "partial_json");
		tool_args(p, tool_at(p, ix, 1),
		    json_object_get(d, "partial_json"));
		return;
	}
	for (i = 0; unused[i] != NULL; i++)
		if (strcmp(dt, unused[i]) == 0)
			return;
	bad_chunk(p, "a delta of unknown type '%.40s'", dt);
}

/*
 * 1 when the event o has a member that could hold part of the answer
 * (text, a delta, a content block), else 0.
 */
static int
carries_content(const json_t *o)
{
	static const char *const parts[] = { "delta", "text", "content",
	    "content_block", "partial_json", "message", NULL };
	int i;

	for (i = 0; parts[i] != NULL; i++)
		if (json_object_get(o, parts[i]) != NULL)
			return 1;
	return 0;
}

/*
 * An Anthropic stream event.  Known events that carry nothing saop uses
 * (ping, content_block_stop, thinking blocks) are left.  Anthropic may add
 * event types (its versioning policy asks clients to bear them), so an
 * event of unknown type is left too, unless it has a member that could
 * hold part of the answer: then, like a known one without its parts, it
 * is not the protocol, for nothing of the answer may be lost unseen.
 */
static void
anthropic_event(struct saop__llm_parser *p, const char *type, const json_t *o)
{
	json_t *d, *b;
	long ix = 0;
	struct tool *t;

	num(json_object_get(o, "index"), &ix);
	if (strcmp(type, "message_start") == 0) {
		if (!json_is_object(json_object_get(o, "message")))
			bad_chunk(p, "a message_start without its message");
		usage_of(p, json_object_get(json_object_get(o, "message"),
		    "usage"));
	} else if (strcmp(type, "content_block_start") == 0) {
		b = json_object_get(o, "content_block");
		d = json_object_get(b, "type");
		if (!json_is_string(d))
			bad_chunk(p, "a content_block_start without a typed "
			    "content_block");
		else if (strcmp(json_string_value(d), "text") == 0)
			add_text(p, json_object_get(b, "text"));
		else if (strcmp(json_string_value(d), "tool_use") == 0 &&
		    (t = tool_at(p, ix, 1)) != NULL) {
			tool_str(&t->id, json_object_get(b, "id"));
			tool_str(&t->name, json_object_get(b, "name"));
		}
	} else if (strcmp(type, "content_block_delta") == 0) {
		anthropic_delta(p, ix, o);
	} else if (strcmp(type, "message_delta") == 0) {
		d = json_object_get(o, "delta");
		if (!json_is_object(d) || !absent_or(json_object_get(d,
		    "stop_reason"), JSON_STRING))
			bad_chunk(p, "a message_delta without its delta");
		usage_of(p, json_object_get(o, "usage"));
		set_finish(p, json_object_get(d, "stop_reason"));
	} else if (strcmp(type, "message_stop") == 0) {
		p->done = 1;
	} else if (strcmp(type, "error") == 0) {
		stream_error(p, json_object_get(o, "error"));
	} else if (strcmp(type, "content_block_stop") != 0 &&
	    strcmp(type, "ping") != 0 && carries_content(o)) {
		bad_chunk(p, "an event of unknown type '%.40s'", type);
	}
}

/* A whole Anthropic Message. */
static void
anthropic_message(struct saop__llm_parser *p, const json_t *o)
{
	json_t *b, *in;
	size_t i;
	struct tool *t;
	char *s;

	if (!absent_or(json_object_get(o, "content"), JSON_ARRAY)) {
		bad_chunk(p, "the message's content is not an array");
		return;
	}
	usage_of(p, json_object_get(o, "usage"));
	json_array_foreach(json_object_get(o, "content"), i, b) {
		const char *bt = json_string_value(json_object_get(b, "type"));

		if (bt == NULL)
			continue;
		if (strcmp(bt, "text") == 0) {
			add_text(p, json_object_get(b, "text"));
		} else if (strcmp(bt, "tool_use") == 0 &&
		    (t = tool_at(p, (long)i, 1)) != NULL) {
			tool_str(&t->id, json_object_get(b, "id"));
			tool_str(&t->name, json_object_get(b, "name"));
			in = json_object_get(b, "input");
			s = in != NULL ? json_dumps(in, JSON_COMPACT |
			    JSON_ENCODE_ANY) : NULL;
			if (s != NULL && buf_add(&t->args, s, strlen(s),
			    p->limit) != 0)
				p->fail = SAOP_ELIMIT;
			free(s);
		}
	}
	set_finish(p, json_object_get(o, "stop_reason"));
	p->done = 1;
}

/* An Ollama native object (one NDJSON line or a whole body). */
static void
ollama_obj(struct saop__llm_parser *p, const json_t *o)
{
	json_t *m = json_object_get(o, "message");

	if (!absent_or(json_object_get(o, "response"), JSON_STRING) ||
	    !absent_or(m, JSON_OBJECT) ||
	    !absent_or(json_object_get(m, "content"), JSON_STRING)) {
		bad_chunk(p, "the response is not a string");
		return;
	}
	add_text(p, json_object_get(o, "response"));
	add_text(p, json_object_get(m, "content"));
	if (json_is_true(json_object_get(o, "done"))) {
		const json_t *v = json_object_get(o, "done_reason");

		if (json_is_string(v))
			set_finish(p, v);
		else
			snprintf(p->finish, sizeof(p->finish), "stop");
		num(json_object_get(o, "prompt_eval_count"), &p->prompt);
		num(json_object_get(o, "eval_count"), &p->completion);
		p->done = 1;
	}
}

/*
 * One JSON value of any of the wire formats: an SSE event's data, an
 * NDJSON line, or (whole set) the whole body.  A value of no known shape
 * is not the protocol.  Once an error came, nothing more is read.
 */
static void
handle_obj(struct saop__llm_parser *p, const json_t *o, int whole)
{
	const char *type = json_string_value(json_object_get(o, "type"));

	if (p->err != 0)
		return;
	if (!json_is_object(o)) {
		bad_chunk(p, "not a JSON object");
		return;
	}
	if (json_object_get(o, "choices") != NULL) {
		openai_obj(p, o);
		if (whole && p->err == 0)
			p->done = 1;
	} else if (type != NULL && strcmp(type, "message") == 0) {
		anthropic_message(p, o);
	} else if (type != NULL && !whole) {
		anthropic_event(p, type, o);
	} else if (type != NULL && strcmp(type, "error") == 0) {
		stream_error(p, json_object_get(o, "error"));
	} else if (json_object_get(o, "error") != NULL) {
		stream_error(p, json_object_get(o, "error"));
	} else if (json_object_get(o, "done") != NULL ||
	    json_object_get(o, "response") != NULL ||
	    json_object_get(o, "message") != NULL) {
		ollama_obj(p, o);
	} else {
		bad_chunk(p, "not of a known wire format");
	}
}

/* Parse the n bytes at s as one JSON value and handle it (handle_obj). */
static void
handle_json(struct saop__llm_parser *p, const char *s, size_t n, int whole)
{
	json_error_t je;
	json_t *o;

	if (p->err != 0)
		return;
	if ((o = load(s, n, &je)) == NULL) {
		bad_chunk(p, "not JSON (%.120s, at byte %d of it)", je.text,
		    je.position);
		return;
	}
	handle_obj(p, o, whole);
	json_decref(o);
}

/* The SSE event read so far is complete: handle its data, if any. */
static void
sse_dispatch(struct saop__llm_parser *p)
{
	size_t i;

	p->in_event = 0;
	if (!p->has_data)
		return;
	p->has_data = 0;
	p->units++;
	for (i = 0; i < p->data.len && isspace((unsigned char)p->data.p[i]);
	    i++)
		;
	if (i == p->data.len)
		;			/* "data:" with nothing: keep-alive */
	else if (p->data.len == 6 && memcmp(p->data.p, "[DONE]", 6) == 0)
		p->done = 1;
	else
		handle_json(p, p->data.p, p->data.len, 0);
	p->data.len = 0;
}

/*
 * One SSE line (without its end), starting at body offset p->line_off:
 * a blank line ends the event, a comment is skipped, "data:" adds to the
 * event's data, other fields (event:, id:, retry:) are left.
 */
static void
sse_line(struct saop__llm_parser *p, const char *s, size_t n)
{
	const char *colon;
	size_t fl;
	int r;

	if (n == 0) {
		sse_dispatch(p);
		return;
	}
	if (s[0] == ':')
		return;			/* a comment: keep-alive, padding */
	if (!p->in_event) {
		p->in_event = 1;
		p->unit_off = p->line_off;
	}
	colon = memchr(s, ':', n);
	fl = colon != NULL ? (size_t)(colon - s) : n;
	if (fl != 4 || memcmp(s, "data", 4) != 0)
		return;			/* event:, id:, retry: */
	s += fl;
	n -= fl;
	if (n > 0) {
		s++;
		n--;
		if (n > 0 && *s == ' ') {
			s++;
			n--;
		}
	}
	if (p->has_data && (r = buf_add(&p->data, "\n", 1, p->limit)) != 0)
		p->fail = -r;
	else if ((r = buf_add(&p->data, s, n, p->limit)) != 0)
		p->fail = -r;
	if (p->data.p == NULL && buf_add(&p->data, "", 0, p->limit) != 0)
		p->fail = SAOP_ENOMEM;
	p->has_data = 1;
}

/* One line of an SSE or NDJSON body, starting at body offset off. */
static void
do_line(struct saop__llm_parser *p, const char *s, size_t n, size_t off)
{
	size_t i;

	p->line_off = off;
	if (p->mode == M_SSE) {
		sse_line(p, s, n);
		return;
	}
	for (i = 0; i < n && isspace((unsigned char)s[i]); i++)
		;
	if (i < n) {
		p->units++;
		p->unit_off = off;
		handle_json(p, s, n, 0);
	}
}

/*
 * Tell the wire format of the answer (p->mode) from its status, its
 * Content-Type and, when neither says, the first byte of s (n bytes) that
 * is not a space; while only spaces came, the mode stays M_UNKNOWN.
 */
static void
sniff(struct saop__llm_parser *p, const char *s, size_t n)
{
	size_t i;

	if (p->status < 200 || p->status > 299) {
		p->mode = M_OTHER;
		return;
	}
	if (strcasestr(p->ctype, "event-stream") != NULL) {
		p->mode = M_SSE;
		return;
	}
	if (strcasestr(p->ctype, "ndjson") != NULL) {
		p->mode = M_NDJSON;
		return;
	}
	if (strcasestr(p->ctype, "json") != NULL) {
		p->mode = M_JSON;
		return;
	}
	for (i = 0; i < n && isspace((unsigned char)s[i]); i++)
		;
	if (i == n)
		return;			/* still unknown */
	if (p->ctype[0] == '\0' && (s[i] == ':' || s[i] == 'd' ||
	    s[i] == 'e'))
		p->mode = M_SSE;
	else if (p->ctype[0] == '\0' && s[i] == '{')
		p->mode = M_JSON;
	else
		p->mode = M_OTHER;
}

/*
 * A new parser for an answer of at most limit bytes (0: the default).
 * Returns it (saop__llm_parser_free()), or NULL on ENOMEM.
 */
struct saop__llm_parser *
saop__llm_parser_new(size_t limit)
{
	struct saop__llm_parser *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->status = 200;
	p->prompt = p->completion = -1;
	p->limit = limit != 0 ? limit : SAOP_MAX_RECORD_BYTES;
	return p;
}

/* Tell p the HTTP status and Content-Type (may be NULL) of the answer. */
void
saop__llm_parser_head(struct saop__llm_parser *p, int status,
    const char *ctype)
{
	p->status = status;
	snprintf(p->ctype, sizeof(p->ctype), "%s", ctype != NULL ? ctype : "");
}

/*
 * Feed n more body bytes.  Returns 0, or a negative code (SAOP_ENOMEM,
 * SAOP_ELIMIT) after which feeding must stop.
 */
/*
 * Feed n bytes of an event stream (SSE or NDJSON) to p's line reader:
 * each whole line goes to do_line(), a part line waits in p->line.
 * Returns 0, or a negative code after which feeding must stop.
 */
static int
feed_lines(struct saop__llm_parser *p, const char *s, size_t n)
{
	size_t i, start, base;
	int r;

	base = p->lpos;
	p->lpos += n;
	for (i = start = 0; i < n && !p->fail; i++) {
		if (s[i] != '\n' && s[i] != '\r')
			continue;
		if (s[i] == '\n' && p->skip_lf && i == start &&
		    p->line.len == 0) {
			p->skip_lf = 0;
			start = i + 1;
			continue;
		}
		p->skip_lf = s[i] == '\r';
		if (p->line.len > 0) {
			if ((r = buf_add(&p->line, s + start, i - start,
			    p->limit)) != 0) {
				p->fail = -r;
				break;
			}
			do_line(p, p->line.p, p->line.len, p->line_start);
			p->line.len = 0;
		} else
			do_line(p, s + start, i - start, base + start);
		start = i + 1;
	}
	if (!p->fail && start < n) {
		if (p->line.len == 0)
			p->line_start = base + start;
		if ((r = buf_add(&p->line, s + start, n - start,
		    p->limit)) != 0)
			p->fail = -r;
	}
	return -p->fail;
}

int
saop__llm_parser_feed(struct saop__llm_parser *p, const char *s, size_t n)
{
	int r;

	if (p->fail)
		return -p->fail;
	p->received += n;
	if (p->mode == M_UNKNOWN) {
		sniff(p, s, n);
		/*
		 * White space held while the kind was unknown is the start
		 * of the first line: read it as such, so that the answer is
		 * the same however the network split the bytes.
		 */
		if ((p->mode == M_SSE || p->mode == M_NDJSON) &&
		    p->body.len > 0) {
			struct buf held = p->body;

			memset(&p->body, 0, sizeof(p->body));
			r = feed_lines(p, held.p, held.len);
			free(held.p);
			if (r != 0)
				return r;
		}
	}
	if (p->mode == M_UNKNOWN || p->mode == M_JSON || p->mode == M_OTHER) {
		size_t lim = p->mode == M_OTHER ? MAX_ERROR_BODY : p->limit;

		if (p->mode == M_OTHER && p->body.len + n > lim)
			n = p->body.len < lim ? lim - p->body.len : 0;
		if ((r = buf_add(&p->body, s, n, p->limit)) != 0)
			p->fail = -r;
		return -p->fail;
	}
	return feed_lines(p, s, n);
}

/*
 * Move what p gathered into a: the text (p keeps none of it), the finish
 * reason, the token counts, the status and the tool calls as an
 * OpenAI-style array.  Returns 0, or -SAOP_ENOMEM when there is no text and
 * an empty one cannot be made.
 */
static int
fill_answer(struct saop__llm_parser *p, struct saop_llm_answer *a)
{
	json_t *tc;

	free(a->raw);
	a->raw = p->text.p != NULL ? p->text.p : strdup("");
	a->raw_len = p->text.len;
	memset(&p->text, 0, sizeof(p->text));
	snprintf(a->finish_reason, sizeof(a->finish_reason), "%s", p->finish);
	a->prompt_tokens = p->prompt;
	a->completion_tokens = p->completion;
	a->http_status = p->status;
	if (p->ntools > 0 && (tc = json_array()) != NULL) {
		size_t i;

		for (i = 0; i < p->ntools; i++) {
			json_t *t;

			t = json_pack("{s:s?, s:s, s:{s:s?, s:s%}}", "id",
			    p->tools[i].id, "type", "function", "function",
			    "name", p->tools[i].name, "arguments",
			    p->tools[i].args.p != NULL ? p->tools[i].args.p :
			    "", p->tools[i].args.len);
			if (t != NULL)
				json_array_append_new(tc, t);
		}
		json_decref(a->tool_calls);
		a->tool_calls = tc;
	}
	return a->raw == NULL ? -SAOP_ENOMEM : 0;
}

/*
 * The body has ended: clean is 1 when the transfer ended normally, 0 when
 * it broke.  Fills a with what arrived and returns 0 when a finished answer
 * came, else -code with e filled (0 with clean 0 never).  After SAOP_EPROTO
 * (an event or line that is not the protocol) a holds no text and no tool
 * call: a damaged answer is never taken in part.  For a 2xx answer only;
 * the caller classifies other statuses.
 */
int
saop__llm_parser_end(struct saop__llm_parser *p, int clean,
    struct saop_llm_answer *a, struct saop_err *e)
{
	if (clean && !p->fail) {
		if (p->mode == M_SSE || p->mode == M_NDJSON) {
			if (p->line.len > 0)
				do_line(p, p->line.p, p->line.len,
				    p->line_start);
			p->line.len = 0;
			if (p->mode == M_SSE)
				sse_dispatch(p);
		} else if (p->mode == M_JSON && p->body.len > 0) {
			json_error_t je;
			json_t *o = load(p->body.p, p->body.len, &je);

			if (o != NULL) {
				handle_obj(p, o, 1);
				json_decref(o);
			} else if (memchr(p->body.p, '\n', p->body.len) !=
			    NULL) {
				int r;

				/* Several JSON lines: Ollama NDJSON. */
				p->mode = M_NDJSON;
				r = saop__llm_parser_feed(p, p->body.p,
				    p->body.len);
				p->received -= p->body.len;
				if (r == 0 && p->line.len > 0)
					do_line(p, p->line.p, p->line.len,
					    p->line_start);
			} else
				handle_json(p, p->body.p, p->body.len, 1);
		}
	}
	if (fill_answer(p, a) != 0)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	if (p->fail == SAOP_ELIMIT)
		return saop__fail(e, SAOP_ELIMIT, 0, "the answer is over "
		    "the size limit (%zu bytes)", p->limit);
	if (p->fail)
		return saop__fail(e, p->fail, ENOMEM, "out of memory");
	if (p->err == SAOP_EPROTO) {
		/* A damaged answer: nothing of it may be taken. */
		free(a->raw);
		if ((a->raw = strdup("")) == NULL)
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		a->raw_len = 0;
		a->finish_reason[0] = '\0';
		json_decref(a->tool_calls);
		a->tool_calls = NULL;
	}
	if (p->err != 0) {
		if (p->err != SAOP_EPROTO)
			snprintf(a->finish_reason, sizeof(a->finish_reason),
			    "error");
		return saop__fail(e, p->err, 0, "%s%s",
		    p->err == SAOP_EPROTO ? "" : "error inside the answer: ",
		    p->errmsg);
	}
	if (p->mode == M_OTHER || (p->mode == M_UNKNOWN && p->received > 0))
		return saop__fail(e, SAOP_EPROTO, 0, "the endpoint answered "
		    "%s, not the protocol (%zu bytes)", p->ctype[0] != '\0' ?
		    p->ctype : "an unknown Content-Type", p->received);
	/* Finished: the end marker came, or a finish reason and a clean end. */
	if (p->finish[0] != '\0' && (p->done || clean))
		return 0;
	if (p->mode == M_JSON && clean)
		return saop__fail(e, SAOP_EPROTO, 0,
		    "the answer has no finish reason");
	a->broken = 1;
	a->finish_reason[0] = '\0';
	return saop__fail(e, SAOP_ENETWORK, 0, "the answer stream ended "
	    "without a finish reason after %zu bytes (%zu bytes of text "
	    "kept)", p->received, a->raw_len);
}

/* Free p; NULL is a no-op. */
void
saop__llm_parser_free(struct saop__llm_parser *p)
{
	size_t i;

	if (p == NULL)
		return;
	buf_free(&p->line);
	buf_free(&p->data);
	buf_free(&p->body);
	buf_free(&p->text);
	for (i = 0; i < p->ntools; i++) {
		free(p->tools[i].id);
		free(p->tools[i].name);
		buf_free(&p->tools[i].args);
	}
	free(p->tools);
	free(p);
}

/* ---- one HTTP call ---- */

struct call {
	struct saop__llm_parser *p;
	CURL *h;
	int status;
	int head_done;
	char ctype[128];
	long retry_after_ms;
	int should_retry;	/* -1 not said, 0 false, 1 true */
};

/*
 * libcurl's header callback: take one header line s (size * n bytes) into
 * the struct call arg.  A status line forgets what an earlier answer's
 * headers said (a redirect, 100 Continue); Content-Type, retry-after-ms,
 * Retry-After (seconds or an HTTP date) and x-should-retry are kept.
 * Returns size * n: every header is taken.
 */
static size_t
on_header(char *s, size_t size, size_t n, void *arg)
{
	struct call *c = arg;
	size_t len = size * n, vl;
	const char *v;
	char val[128];

	if (len >= 5 && strncmp(s, "HTTP/", 5) == 0) {
		c->ctype[0] = '\0';
		c->retry_after_ms = -1;
		c->should_retry = -1;
		return len;
	}
	if ((v = memchr(s, ':', len)) == NULL)
		return len;
	v++;
	while (v < s + len && (*v == ' ' || *v == '\t'))
		v++;
	vl = (size_t)(s + len - v);
	while (vl > 0 && isspace((unsigned char)v[vl - 1]))
		vl--;
	if (vl >= sizeof(val))
		vl = sizeof(val) - 1;
	memcpy(val, v, vl);
	val[vl] = '\0';
	if (strncasecmp(s, "content-type:", 13) == 0) {
		snprintf(c->ctype, sizeof(c->ctype), "%s", val);
	} else if (strncasecmp(s, "retry-after-ms:", 15) == 0) {
		char *end;
		double d = strtod(val, &end);

		if (end != val && d >= 0 && d < 86400000.0)
			c->retry_after_ms = (long)d;
	} else if (strncasecmp(s, "retry-after:", 12) == 0 &&
	    c->retry_after_ms < 0) {
		char *end;
		double d = strtod(val, &end);
		time_t t;

		if (end != val && *end == '\0' && d >= 0 && d < 86400.0)
			c->retry_after_ms = (long)(d * 1000);
		else if ((t = C.getdate(val, NULL)) != (time_t)-1)
			c->retry_after_ms = t > time(NULL) ?
			    (long)(t - time(NULL)) * 1000 : 0;
	} else if (strncasecmp(s, "x-should-retry:", 15) == 0) {
		c->should_retry = strcasecmp(val, "true") == 0 ? 1 :
		    strcasecmp(val, "false") == 0 ? 0 : -1;
	}
	return len;
}

/*
 * libcurl's write callback: on the first body bytes tell the parser the
 * status and Content-Type, then feed it the size * n bytes at s.  Returns
 * size * n, or 0 to stop the transfer once the parser failed.
 */
static size_t
on_body(char *s, size_t size, size_t n, void *arg)
{
	struct call *c = arg;
	long st = 0;

	if (!c->head_done) {
		C.easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &st);
		c->status = (int)st;
		saop__llm_parser_head(c->p, c->status, c->ctype);
		c->head_done = 1;
	}
	if (saop__llm_parser_feed(c->p, s, size * n) != 0)
		return 0;		/* stops the transfer */
	return size * n;
}

/*
 * The SAOP code for a transfer that failed with rc: SAOP_ENOMEM,
 * SAOP_ECONFIG (a URL libcurl refuses), SAOP_EPROTO (TLS, a bad encoding)
 * or SAOP_ENETWORK.  Returns it (positive).
 */
static int
net_code(CURLcode rc)
{
	switch (rc) {
	case CURLE_OUT_OF_MEMORY:
		return SAOP_ENOMEM;
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
		return SAOP_ECONFIG;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_BAD_CONTENT_ENCODING:
		return SAOP_EPROTO;
	default:
		return SAOP_ENETWORK;
	}
}

/*
 * Classify a non-2xx answer: fill e with the code, the status, the URL
 * as it may be shown (shown) and the server's message, masked of key
 * before it is cut.  Returns -code.
 */
static int
http_error(struct call *c, const char *shown, const char *key,
    struct saop_err *e)
{
	struct saop__llm_parser *p = c->p;
	json_t *o = NULL, *err = NULL;
	json_error_t je;
	char full[SHOWN_SRC_MAX], msg[300];
	int code;

	if (p->body.len > 0)
		o = load(p->body.p, p->body.len, &je);
	if (json_is_object(o)) {
		err = json_object_get(o, "error");
		if (err == NULL)
			err = json_object_get(o, "message");
	}
	if (err != NULL) {
		code = classify_error(err, c->status, full, sizeof(full));
		mask_secret(full, key);
		clip(msg, sizeof(msg), full, sizeof(msg) - 1);
		/* The HTTP status outranks a vague type in the body. */
		if (c->status == 429 && code != SAOP_EREFUSED)
			code = SAOP_ERATELIMIT;
		else if ((c->status == 401 || c->status == 403 ||
		    c->status == 404) && code != SAOP_EPREFILL)
			code = SAOP_EREFUSED;
		else if ((c->status >= 500 || c->status == 408) &&
		    code != SAOP_EREFUSED)
			code = SAOP_ENETWORK;
	} else {
		code = classify_error(NULL, c->status, full, sizeof(full));
		one_line(full, sizeof(full), p->body.len > 0 ? p->body.p :
		    "empty body");
		mask_secret(full, key);
		clip(msg, sizeof(msg), full, 120);
	}
	json_decref(o);
	/*
	 * x-should-retry: false is the server's verdict.  "true" changes
	 * nothing: 5xx, 529 and 429 are retried anyway, and a 401 that says
	 * true would have saop-suspend wait for ever.
	 */
	if (code != SAOP_EPREFILL && c->should_retry == 0)
		code = SAOP_EREFUSED;
	fail_masked(e, code, key, "%s: HTTP %d: %s", shown, c->status, msg);
	e->http_status = c->status;
	if (c->status == 429 || c->status == 503 || c->status == 529)
		e->retry_after_ms = c->retry_after_ms;
	return -code;
}

/*
 * POST body to url once and fill a (see saop_llm_call()); shown is the
 * URL as messages may show it.  Returns 0 or a negative code, e filled
 * and masked of the key.
 */
static int
call_once(const struct saop_llm_config *cfg, const char *url,
    const char *shown, const char *body, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct call c = { 0 };
	struct curl_slist *hd = NULL, *x = NULL;
	char *auth = NULL;
	char errbuf[CURL_ERROR_SIZE];
	CURLcode rc;
	long lst;
	int r;

	c.retry_after_ms = -1;
	c.should_retry = -1;
	if ((c.p = saop__llm_parser_new(0)) == NULL ||
	    (c.h = C.easy_init()) == NULL) {
		saop__llm_parser_free(c.p);
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	c.p->key = cfg->key;
	hd = C.slist_append(hd, "Content-Type: application/json");
	hd = C.slist_append(hd, cfg->stream ? "Accept: text/event-stream" :
	    "Accept: application/json");
	hd = C.slist_append(hd, "Expect:");
	if (cfg->provider == SAOP_PROVIDER_ANTHROPIC)
		hd = C.slist_append(hd,
		    "anthropic-version: " ANTHROPIC_VERSION);
	if (cfg->key != NULL && *cfg->key != '\0') {
		size_t n = strlen(cfg->key) + 32;

		if ((auth = malloc(n)) != NULL) {
			snprintf(auth, n, cfg->provider ==
			    SAOP_PROVIDER_ANTHROPIC ? "x-api-key: %s" :
			    "Authorization: Bearer %s", cfg->key);
			x = C.slist_append(hd, auth);
			explicit_bzero(auth, strlen(auth));
			if (x != NULL)
				hd = x;
		}
		if (auth == NULL || x == NULL) {
			r = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
			goto out;
		}
	}
	if (hd == NULL) {
		r = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
		goto out;
	}
	errbuf[0] = '\0';
	C.easy_setopt(c.h, CURLOPT_URL, url);
	C.easy_setopt(c.h, CURLOPT_PROTOCOLS_STR, "http,https");
	C.easy_setopt(c.h, CURLOPT_HTTPHEADER, hd);
	C.easy_setopt(c.h, CURLOPT_POSTFIELDS, body);
	C.easy_setopt(c.h, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)strlen(body));
	C.easy_setopt(c.h, CURLOPT_USERAGENT, "saop/" SAOP_VERSION);
	C.easy_setopt(c.h, CURLOPT_NOSIGNAL, 1L);
	C.easy_setopt(c.h, CURLOPT_SSL_VERIFYPEER, 1L);
	C.easy_setopt(c.h, CURLOPT_SSL_VERIFYHOST, 2L);
	C.easy_setopt(c.h, CURLOPT_ACCEPT_ENCODING, "");
	C.easy_setopt(c.h, CURLOPT_TIMEOUT_MS, cfg->timeout_ms > 0 ?
	    cfg->timeout_ms : DEFAULT_TIMEOUT_MS);
	C.easy_setopt(c.h, CURLOPT_CONNECTTIMEOUT_MS,
	    cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms :
	    DEFAULT_CONNECT_MS);
	C.easy_setopt(c.h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	C.easy_setopt(c.h, CURLOPT_LOW_SPEED_TIME, LOW_SPEED_TIME_S);
	C.easy_setopt(c.h, CURLOPT_HEADERFUNCTION, on_header);
	C.easy_setopt(c.h, CURLOPT_HEADERDATA, &c);
	C.easy_setopt(c.h, CURLOPT_WRITEFUNCTION, on_body);
	C.easy_setopt(c.h, CURLOPT_WRITEDATA, &c);
	C.easy_setopt(c.h, CURLOPT_ERRORBUFFER, errbuf);
	rc = C.easy_perform(c.h);
	if (!c.head_done) {
		lst = 0;
		C.easy_getinfo(c.h, CURLINFO_RESPONSE_CODE, &lst);
		c.status = (int)lst;
		saop__llm_parser_head(c.p, c.status, c.ctype);
	}
	a->http_status = c.status;
	if (rc == CURLE_OK && (c.status < 200 || c.status > 299)) {
		fill_answer(c.p, a);
		snprintf(a->finish_reason, sizeof(a->finish_reason), "error");
		r = http_error(&c, shown, cfg->key, e);
		goto out;
	}
	if (rc == CURLE_WRITE_ERROR && c.p->fail) {
		r = saop__llm_parser_end(c.p, 0, a, e);
		goto out;
	}
	r = saop__llm_parser_end(c.p, rc == CURLE_OK, a, e);
	if (rc != CURLE_OK && (r == 0 || r == -SAOP_ENETWORK ||
	    (c.status != 0 && (c.status < 200 || c.status > 299)))) {
		/* The transfer broke: keep the text, say how it broke. */
		if (r == 0 && c.p->done)
			goto out;	/* everything had come */
		a->broken = c.p->received > 0;
		a->finish_reason[0] = '\0';
		r = fail_masked(e, net_code(rc), cfg->key, "%s: %s%s%s",
		    shown, C.easy_strerror(rc), errbuf[0] != '\0' ? ": " :
		    "", errbuf);
		if (a->broken && strlen(e->msg) < sizeof(e->msg) - 80)
			snprintf(e->msg + strlen(e->msg), sizeof(e->msg) -
			    strlen(e->msg), " (after %zu bytes, %zu of text "
			    "kept)", c.p->received, a->raw_len);
	}
	if (r < 0)
		e->http_status = c.status;
out:
	if (r < 0)
		mask_secret(e->msg, cfg->key);
	if (auth != NULL)
		free(auth);
	C.slist_free_all(hd);
	C.easy_cleanup(c.h);
	saop__llm_parser_free(c.p);
	return r;
}

/*
 * Send request and fill a (see saop.h).  After an SAOP_ENETWORK or
 * SAOP_ERATELIMIT failure, cfg->on_failure (when set) decides whether to
 * call again.  Returns 0, or the last call's negative code with e filled.
 */
int
saop_llm_call(const struct saop_llm_config *cfg, const json_t *request,
    struct saop_llm_answer *a, struct saop_err *e)
{
	struct saop_err dummy;
	json_t *body;
	char *url = NULL, *shown = NULL, *text = NULL;
	int r, attempt;

	if (e == NULL)
		e = &dummy;
	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	saop_err_clear(e);
	if ((a->raw = strdup("")) == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	if (cfg->problem != NULL)
		return saop__fail(e, SAOP_ECONFIG, 0, "%s", cfg->problem);
	if (!saop_llm_configured(cfg))
		return saop__fail(e, SAOP_ECONFIG, 0, "no API key: set "
		    "SAOP_API_KEY (or %s), or SAOP_API_BASE for a local "
		    "endpoint", cfg->provider == SAOP_PROVIDER_ANTHROPIC ?
		    "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
	pthread_once(&curl_once, curl_init);
	if (curl_init_err[0] != '\0')
		return saop__fail(e, SAOP_ECONFIG, 0, "%s", curl_init_err);
	if ((body = saop__llm_body(cfg, request, e)) == NULL)
		return -e->code;
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (text == NULL || (url = endpoint(cfg)) == NULL ||
	    (shown = saop__llm_url_redact(url)) == NULL) {
		free(text);
		free(url);
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	for (attempt = 1;; attempt++) {
		r = call_once(cfg, url, shown, text, a, e);
		if ((r != -SAOP_ENETWORK && r != -SAOP_ERATELIMIT) ||
		    cfg->on_failure == NULL ||
		    !cfg->on_failure(cfg->on_failure_arg, e, attempt))
			break;
		saop_llm_answer_free(a);
		if ((a->raw = strdup("")) == NULL) {
			r = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
			break;
		}
		saop_err_clear(e);
	}
	free(url);
	free(shown);
	free(text);
	return r;
}
