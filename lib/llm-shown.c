/*
 * llm-shown.c: the bottom of the model client, what its other files
 * share: what of a failure may be shown (the key masked, messages cut at
 * a whole character, URLs redacted, one printable line) and what kind of
 * failure an error object names.  It calls nothing of the other llm
 * files; they all call it.
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "llm-int.h"

/*
 * ---- what may be shown ----
 *
 * Error messages go to stderr, --log and the events table; the request
 * line of --dry-run to stdout.  The key must never be in them, not even
 * in part, and neither the credentials a base URL can hold.
 */

/*
 * Replace in s every run of KEY_RUN_MIN or more bytes that occurs in key
 * (or, for a key shorter than that, every copy of it) by "****".  Keys
 * shorter than 4 bytes are left: masking them would garble any message.
 */
void
saop__llm_mask_secret(char *s, const char *key)
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
 * cut so that no character is cut in two (saop__utf8_tail()) and ended
 * by "..." when cut.  Returns nothing: out always holds a string.
 */
void
saop__llm_clip(char *out, size_t outsz, const char *src, size_t max)
{
	size_t n = strlen(src);

	if (max >= outsz)
		max = outsz - 1;
	if (n <= max) {
		memcpy(out, src, n + 1);
		return;
	}
	n = max > 3 ? max - 3 : 0;
	n -= saop__utf8_tail((const unsigned char *)src, n);
	memcpy(out, src, n);
	memcpy(out + n, "...", 4);
}

/* Append the n bytes at s to b.  Returns 0, or -1 on ENOMEM. */
static int
put(struct saop__buf *b, const char *s, size_t n)
{
	return saop__buf_append(b, s, n) == 0 ? 0 : -1;
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
	struct saop__buf b = { NULL, 0, 0 };
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
	if (!bad && b.data == NULL)
		bad = put(&b, "", 0);
	if (bad) {
		saop__buf_free(&b);
		return NULL;
	}
	return b.data;
}

/*
 * Fill e as saop__fail() does, the message formatted in full first, the
 * key masked (saop__llm_mask_secret()), and only then cut to e->msg's
 * size.  Returns -code.
 */
int SAOP__PRINTF(4, 5)
saop__llm_fail_masked(struct saop_err *e, int code, const char *key,
    const char *fmt, ...)
{
	char full[SHOWN_SRC_MAX], msg[sizeof(e->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(full, sizeof(full), fmt, ap);
	va_end(ap);
	saop__llm_mask_secret(full, key);
	saop__llm_clip(msg, sizeof(msg), full, sizeof(msg) - 1);
	return saop__fail(e, code, 0, "%s", msg);
}

/* ---- the kind of a failure ---- */

/* Copy s into out as one printable line of at most outsz - 1 bytes. */
void
saop__llm_one_line(char *out, size_t outsz, const char *s)
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
 * The delay a Google error object err asks for (details[] RetryInfo
 * retryDelay, "41s" or "1.5s") in milliseconds, or -1 when it names none.
 */
long
saop__llm_retry_delay_ms(const json_t *err)
{
	const json_t *d;
	size_t i;

	json_array_foreach(json_object_get(err, "details"), i, d) {
		const char *t = json_string_value(json_object_get(d, "@type"));
		const char *v = json_string_value(json_object_get(d,
		    "retryDelay"));
		char *end;
		double s;

		if (t == NULL || v == NULL || strstr(t, "RetryInfo") == NULL)
			continue;
		s = strtod(v, &end);
		if (end != v && strcmp(end, "s") == 0 && s >= 0 && s < 86400)
			return (long)(s * 1000);
	}
	return -1;
}

/*
 * Classify a Google error object by its status (Gemini: RESOURCE_EXHAUSTED,
 * UNAVAILABLE, ...; m its message).  Returns the SAOP code, or 0 when
 * status names none of them.
 */
static int
google_status(const json_t *err, const char *status, const char *m)
{
	static const char *const net[] = { "UNAVAILABLE", "INTERNAL",
	    "DEADLINE_EXCEEDED", "ABORTED", NULL };
	static const char *const refused[] = { "PERMISSION_DENIED",
	    "UNAUTHENTICATED", "NOT_FOUND", NULL };
	int i;

	if (strcmp(status, "RESOURCE_EXHAUSTED") == 0) {
		/* A quota that a RetryInfo says waiting fixes is a rate
		 * limit, whatever its message; one without is spent. */
		if (saop__llm_retry_delay_ms(err) >= 0)
			return SAOP_ERATELIMIT;
		return has_word(m, "quota") ? SAOP_EREFUSED : SAOP_ERATELIMIT;
	}
	if (has_word(m, "API key not valid") || has_word(m, "API key expired"))
		return SAOP_EREFUSED;
	for (i = 0; net[i] != NULL; i++)
		if (strcmp(status, net[i]) == 0)
			return SAOP_ENETWORK;
	for (i = 0; refused[i] != NULL; i++)
		if (strcmp(status, refused[i]) == 0)
			return SAOP_EREFUSED;
	if (strcmp(status, "INVALID_ARGUMENT") == 0 ||
	    strcmp(status, "FAILED_PRECONDITION") == 0 ||
	    strcmp(status, "OUT_OF_RANGE") == 0)
		return SAOP_EBADREQ;
	return 0;
}

/*
 * Classify an error object (or string) from an error body or inside a
 * stream: by its type or code (a Google error by its status), then by the
 * HTTP status.  Its message goes
 * to msg as one line.  Returns the SAOP code (positive).
 */
int
saop__llm_classify_error(const json_t *err, int status, char *msg,
    size_t msgsz)
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
	saop__llm_one_line(msg, msgsz, m != NULL ? m : type != NULL ? type :
	    code != NULL ? code : "no message");
	if (json_is_string(json_object_get(err, "status")) &&
	    (c = json_object_get(err, "status")) != NULL) {
		int g = google_status(err, json_string_value(c), m);

		if (g != 0)
			return g;
	}
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
