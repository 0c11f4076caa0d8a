/*
 * llm.c: the HTTP transfer of a model call over libcurl (loaded with
 * dlopen() on the first call), and what a failed transfer or an error
 * status means (network, rate limit, refusal, protocol) as a SAOP code;
 * an error object is read by lib/llm-shown.c.  The top of the model
 * client: it calls the other llm files, none calls it.
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
#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include <dlfcn.h>

#include <curl/curl.h>

#include "llm-int.h"

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

/* ---- one HTTP call ---- */

struct call {
	struct saop__llm_parser *p;
	CURL *h;
	int status;
	int head_done;
	char ctype[128];
	long retry_after_ms;
	int should_retry;	/* -1 not said, 0 false, 1 true */
	char location[1024];	/* a redirect's Location, cut to fit */
	const struct saop_llm_config *cfg;	/* its on_text */
	size_t told;		/* text bytes given to on_text */
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
		c->location[0] = '\0';
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
	if (strncasecmp(s, "location:", 9) == 0) {
		size_t ll = (size_t)(s + len - v);

		while (ll > 0 && isspace((unsigned char)v[ll - 1]))
			ll--;
		if (ll >= sizeof(c->location))
			ll = sizeof(c->location) - 1;
		memcpy(c->location, v, ll);
		c->location[ll] = '\0';
	} else if (strncasecmp(s, "content-type:", 13) == 0) {
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
 * status and Content-Type, then feed it the size * n bytes at s, and
 * give cfg's on_text the text they added.  Returns
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
	if (c->cfg->on_text != NULL && c->p->text.len > c->told) {
		c->cfg->on_text(c->cfg->on_text_arg, c->p->text.data +
		    c->told, c->p->text.len - c->told);
		c->told = c->p->text.len;
	}
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
 * A 3xx answer: saop follows no redirect (the key would go along to
 * wherever it points), and waiting will not change it: SAOP_EREFUSED
 * (69) naming the status and the Location, its credentials and query
 * values masked.  Returns -SAOP_EREFUSED.
 */
static int
redirect_error(struct call *c, const char *shown, const char *key,
    struct saop_err *e)
{
	char *where = saop__llm_url_redact(c->location[0] != '\0' ?
	    c->location : "(no Location header)");
	int rc;

	rc = saop__llm_fail_masked(e, SAOP_EREFUSED, key, "%s: HTTP %d: "
	    "redirected to %.300s; saop follows no redirect: set "
	    "SAOP_API_BASE to the endpoint itself", shown, c->status,
	    where != NULL ? where : "?");
	free(where);
	e->http_status = c->status;
	return rc;
}

/*
 * 1 when HTTP status n says the request itself was wrong, whatever the
 * body calls it: a 4xx but 408 (timeout), 409 (a conflict, retried by
 * OpenAI's and Anthropic's own clients) and 429 (rate limit); else 0.
 */
static int
client_error(long n)
{
	return n >= 400 && n < 500 && n != 408 && n != 409 && n != 429;
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
		o = saop__llm_load(p->body.data, p->body.len, &je);
	if (json_is_object(o)) {
		err = json_object_get(o, "error");
		if (err == NULL)
			err = json_object_get(o, "message");
	}
	if (err != NULL) {
		code = saop__llm_classify_error(err, c->status, full,
		    sizeof(full));
		/* Gemini says how long to wait in the body (RetryInfo). */
		if (c->retry_after_ms < 0)
			c->retry_after_ms = saop__llm_retry_delay_ms(err);
		saop__llm_mask_secret(full, key);
		saop__llm_clip(msg, sizeof(msg), full, sizeof(msg) - 1);
		/* The HTTP status outranks a vague type in the body. */
		if (c->status == 429 && code != SAOP_EREFUSED)
			code = SAOP_ERATELIMIT;
		else if ((c->status == 401 || c->status == 403 ||
		    c->status == 404) && code != SAOP_EPREFILL)
			code = SAOP_EREFUSED;
		else if ((c->status >= 500 || c->status == 408) &&
		    code != SAOP_EREFUSED)
			code = SAOP_ENETWORK;
		else if (client_error(c->status) && (code == SAOP_ENETWORK ||
		    code == SAOP_ERATELIMIT))
			code = SAOP_EBADREQ;
	} else {
		code = saop__llm_classify_error(NULL, c->status, full,
		    sizeof(full));
		saop__llm_one_line(full, sizeof(full), p->body.len > 0 ?
		    p->body.data : "empty body");
		saop__llm_mask_secret(full, key);
		saop__llm_clip(msg, sizeof(msg), full, 120);
	}
	json_decref(o);
	/*
	 * x-should-retry: false is the server's verdict.  "true" changes
	 * nothing: 5xx, 529 and 429 are retried anyway, and a 401 that says
	 * true would have saop-suspend wait for ever.
	 */
	if (code != SAOP_EPREFILL && c->should_retry == 0)
		code = SAOP_EREFUSED;
	saop__llm_fail_masked(e, code, key, "%s: HTTP %d: %s", shown,
	    c->status, msg);
	e->http_status = c->status;
	if (c->status == 429 || c->status == 503 || c->status == 529)
		e->retry_after_ms = c->retry_after_ms;
	return -code;
}

/*
 * Sign the call of cfg to url with body now (AWS Signature Version 4,
 * lib/llm-sigv4.c) and append its headers to *hd: x-amz-date, the
 * session token (x-amz-security-token) when there is one, Authorization.
 * The secrets' copies are wiped.  Returns 0, or a negative code with e
 * filled.
 */
static int
signed_headers(const struct saop_llm_config *cfg, const char *url,
    const char *body, struct curl_slist **hd, struct saop_err *e)
{
	struct saop__sigv4_out sig;
	struct curl_slist *x;
	char date[17], *line;
	const char *v[3];
	const char *name[3] = { "x-amz-date", "x-amz-security-token",
	    "Authorization" };
	size_t i, n;
	int r;

	if ((r = saop__llm_sigv4(cfg, url, body, time(NULL), date, &sig)) < 0)
		return saop__fail(e, -r, r == -SAOP_ENOMEM ? ENOMEM : 0,
		    "cannot sign the call (AWS Signature Version 4)%s%s",
		    *saop__sigv4_why() != '\0' ? ": " : "",
		    saop__sigv4_why());
	v[0] = date;
	v[1] = cfg->aws_token;
	v[2] = sig.authorization;
	for (i = 0; i < 3 && r == 0; i++) {
		if (v[i] == NULL)
			continue;
		n = strlen(name[i]) + strlen(v[i]) + 3;
		x = NULL;
		if ((line = malloc(n)) != NULL) {
			snprintf(line, n, "%s: %s", name[i], v[i]);
			x = C.slist_append(*hd, line);
			saop__wipe(line);
			free(line);
		}
		if (x == NULL)
			r = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
		else
			*hd = x;
	}
	saop__sigv4_free(&sig);
	return r;
}

/*
 * POST body to url once with key (cfg's, or api_key_cmd's newer output)
 * and fill a (see saop_llm_call()); shown is the URL as messages may show
 * it.  Returns 0 or a negative code, e filled and masked of the key.
 */
static int
call_once(const struct saop_llm_config *cfg, const char *key,
    const char *url, const char *shown, const char *body,
    struct saop_llm_answer *a, struct saop_err *e)
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
	c.p->key = key;
	c.cfg = cfg;
	{
		const char *own[4];
		size_t i, k = 0;
		int oom = 0;

		own[k++] = "Content-Type: application/json";
		own[k++] = !cfg->stream ? "Accept: application/json" :
		    cfg->provider == SAOP_PROVIDER_BEDROCK ?
		    "Accept: application/vnd.amazon.eventstream" :
		    "Accept: text/event-stream";
		own[k++] = "Expect:";
		/* Vertex AI takes Claude's version in the body. */
		if (cfg->provider == SAOP_PROVIDER_ANTHROPIC && !cfg->vertex)
			own[k++] = "anthropic-version: " ANTHROPIC_VERSION;
		/* A header of the user's replaces saop's own of that name. */
		for (i = 0; i < k + cfg->nheaders; i++) {
			const char *h = i < k ? own[i] : cfg->headers[i - k];

			if (i < k && saop__llm_header_given(cfg, h))
				continue;
			if ((x = C.slist_append(hd, h)) == NULL)
				oom = 1;
			else
				hd = x;
		}
		if (oom) {
			r = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
			goto out;
		}
	}
	if (key != NULL && *key != '\0') {
		x = NULL;
		if ((auth = saop__llm_auth_line(cfg, key)) != NULL) {
			if (!saop__llm_header_given(cfg, auth))
				x = C.slist_append(hd, auth);
			else
				x = hd;
			explicit_bzero(auth, strlen(auth));
			if (x != NULL)
				hd = x;
		}
		if (auth == NULL || x == NULL) {
			r = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
			goto out;
		}
	}
	if (saop__llm_sigv4_wanted(cfg) &&
	    (r = signed_headers(cfg, url, body, &hd, e)) < 0)
		goto out;
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
		saop__llm_fill_answer(c.p, a);
		snprintf(a->finish_reason, sizeof(a->finish_reason), "error");
		r = c.status >= 300 && c.status <= 399 ? redirect_error(&c,
		    shown, key, e) : http_error(&c, shown, key, e);
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
		/* curl's detail often ends in its short text already
		 * ("Failed to connect ...: Couldn't connect to server"):
		 * then it is said once. */
		r = saop__llm_fail_masked(e, net_code(rc), key,
		    "%s: %s%s%s", shown, strstr(errbuf, C.easy_strerror(rc))
		    != NULL ? "" : C.easy_strerror(rc), strstr(errbuf,
		    C.easy_strerror(rc)) == NULL && errbuf[0] != '\0' ? ": " :
		    "", errbuf);
		if (rc == CURLE_OPERATION_TIMEDOUT)
			e->sys_errno = ETIMEDOUT;	/* a timeout, said so */
		if (a->broken && strlen(e->msg) < sizeof(e->msg) - 80)
			snprintf(e->msg + strlen(e->msg), sizeof(e->msg) -
			    strlen(e->msg), " (after %zu bytes, %zu of text "
			    "kept)", c.p->received, a->raw_len);
	}
	if (r < 0)
		e->http_status = c.status;
out:
	if (r < 0)
		saop__llm_mask_secret(e->msg, key);
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
 * call again.  A key of api_key_cmd (cfg->key_cmd) is its newest output;
 * refused with HTTP 401, the command is run once more (an expired token)
 * and the call made once more.  Returns 0, or the last call's negative
 * code with e filled.
 */
int
saop_llm_call(const struct saop_llm_config *cfg, const json_t *request,
    struct saop_llm_answer *a, struct saop_err *e)
{
	struct saop_err dummy, ke;
	json_t *body;
	char *url = NULL, *shown = NULL, *text = NULL, *fresh = NULL, *k2;
	const char *key = cfg->key;
	int r, attempt, again = cfg->key_cmd;

	if (e == NULL)
		e = &dummy;
	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	a->cached_tokens = a->reasoning_tokens = -1;
	saop_err_clear(e);
	if ((a->raw = strdup("")) == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	if (cfg->problem != NULL)
		return saop__fail(e, SAOP_ECONFIG, 0, "%s", cfg->problem);
	if (!saop_llm_configured(cfg) &&
	    cfg->provider == SAOP_PROVIDER_BEDROCK)
		return saop__fail(e, SAOP_ECONFIG, 0, "no AWS credentials: "
		    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
		    "AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK");
	if (!saop_llm_configured(cfg) && cfg->vertex)
		return saop__fail(e, SAOP_ECONFIG, 0, "no access token for "
		    "Vertex AI: set SAOP_API_KEY, or api_key_cmd in the "
		    "configuration file (gcloud auth print-access-token)");
	if (!saop_llm_configured(cfg))
		return saop__fail(e, SAOP_ECONFIG, 0, "no API key: set "
		    "SAOP_API_KEY (or %s), or SAOP_API_BASE for a local "
		    "endpoint", cfg->provider == SAOP_PROVIDER_ANTHROPIC ?
		    "ANTHROPIC_API_KEY" : cfg->provider == SAOP_PROVIDER_GEMINI ?
		    "GEMINI_API_KEY" : "OPENAI_API_KEY");
	pthread_once(&curl_once, curl_init);
	if (curl_init_err[0] != '\0')
		return saop__fail(e, SAOP_ECONFIG, 0, "%s", curl_init_err);
	if ((body = saop__llm_body(cfg, request, e)) == NULL)
		return -e->code;
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (text == NULL || (url = saop__llm_endpoint(cfg,
	    saop__llm_model_of(cfg, request))) == NULL ||
	    (shown = saop__llm_url_redact(url)) == NULL) {
		free(text);
		free(url);
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	/* api_key_cmd's output as it is now (another call may have run it). */
	if (cfg->key_cmd && saop__settings_key_again(NULL, &fresh, &ke) == 0)
		key = fresh;
	for (attempt = 1;; attempt++) {
		r = call_once(cfg, key, url, shown, text, a, e);
		if (r == -SAOP_EREFUSED && e->http_status == 401 && again &&
		    saop__settings_key_again(key, &k2, &ke) == 0) {
			again = 0;	/* a second 401 is the answer */
			if (fresh != NULL)
				saop__wipe(fresh);
			free(fresh);
			key = fresh = k2;
			attempt--;
		} else if ((r != -SAOP_ENETWORK && r != -SAOP_ERATELIMIT) ||
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
	if (fresh != NULL)
		saop__wipe(fresh);
	free(fresh);
	/* What the last call cost: a failed call's usage is paid too. */
	saop__price_answer(cfg->provider, saop__llm_model_of(cfg, request), a);
	free(url);
	free(shown);
	free(text);
	return r;
}

/* ---- the model-call seam ---- */

/* saop_llm_call() as a struct saop_model's call: arg is the config. */
static int
llm_model_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	return saop_llm_call(arg, request, a, e);
}

/* The model reached through cfg (see saop.h).  Returns it. */
struct saop_model
saop_llm_model(struct saop_llm_config *cfg)
{
	struct saop_model m;

	m.call = llm_model_call;
	m.arg = cfg;
	return m;
}

/*
 * Make one call of m.  Returns what m->call returns: 0, or a negative
 * code with e filled.
 */
int
saop_model_call(const struct saop_model *m, const json_t *request,
    struct saop_llm_answer *a, struct saop_err *e)
{
	return m->call(m->arg, request, a, e);
}
