/*
 * llm-sigv4.c: AWS Signature Version 4, as AWS's "Create a signed AWS API
 * request" describes it for every service but S3: the canonical request
 * (the method; the path as sent, each byte outside the unreserved set
 * percent-encoded once more, so that a path segment is encoded twice; the
 * query's parameters encoded and sorted; the signed headers, lower case,
 * values trimmed, sorted; the payload's SHA-256), the string to sign, the
 * key derived from the secret by date, region and service, and the
 * Authorization header.  SHA-256 and HMAC are OpenSSL's libcrypto.
 */
#include "config.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "saop-private.h"

/*
 * ---- libcrypto, loaded on the first signature ----
 *
 * As libcurl is (lib/llm.c): a program that signs nothing does not map
 * it (saop-validate runs in a few MB of address space), so the three
 * functions are looked up with dlopen() on the first signature, once.
 */
struct crypto_fns {
	int (*digest)(const void *, size_t, unsigned char *, unsigned int *,
	    const EVP_MD *, ENGINE *);
	const EVP_MD *(*sha256)(void);
	unsigned char *(*hmac)(const EVP_MD *, const void *, int,
	    const unsigned char *, size_t, unsigned char *, unsigned int *);
};
static struct crypto_fns X;
static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;
static char crypto_err[256];	/* why libcrypto is not usable, or "" */

/*
 * Load libcrypto and look up the functions in X; run once
 * (pthread_once).  Returns nothing: on failure crypto_err says why.
 */
static void
crypto_init(void)
{
	static const struct {
		const char *name;
		size_t off;
	} syms[] = {
		{ "EVP_Digest", offsetof(struct crypto_fns, digest) },
		{ "EVP_sha256", offsetof(struct crypto_fns, sha256) },
		{ "HMAC", offsetof(struct crypto_fns, hmac) },
	};
	void *h, *f;
	size_t i;

	if ((h = dlopen(SAOP_LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL)) ==
	    NULL) {
		const char *why = dlerror();

		snprintf(crypto_err, sizeof(crypto_err), "cannot load "
		    "libcrypto: %s", why != NULL ? why :
		    SAOP_LIBCRYPTO_SONAME);
		return;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		if ((f = dlsym(h, syms[i].name)) == NULL) {
			snprintf(crypto_err, sizeof(crypto_err), "%s: no %s",
			    SAOP_LIBCRYPTO_SONAME, syms[i].name);
			return;
		}
		/* POSIX: a function pointer is as wide as void *. */
		memcpy((char *)&X + syms[i].off, &f, sizeof(f));
	}
}

/* See saop-private.h: why libcrypto cannot sign, or "". */
const char *
saop__sigv4_why(void)
{
	pthread_once(&crypto_once, crypto_init);
	return crypto_err;
}

/* A buffer that remembers a failed append (then everything is lost). */
struct text {
	struct saop__buf b;
	int oom;
};

/* Append the n bytes at s to t. */
static void
put(struct text *t, const void *s, size_t n)
{
	if (!t->oom && saop__buf_append(&t->b, s, n) != 0)
		t->oom = 1;
}

/* Append the string s to t. */
static void
puts_(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

/* The SHA-256 of n bytes at s, as 64 lower-case hex digits in out. */
static int
sha256_hex(const void *s, size_t n, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;

	if (!X.digest(s, n, md, &len, X.sha256(), NULL) || len != 32)
		return -1;
	for (i = 0; i < len; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
	return 0;
}

/*
 * out (32 bytes) = HMAC-SHA256 of the n bytes at s under the key of klen
 * bytes.  Returns 0, or -1 when libcrypto failed.
 */
static int
hmac(const void *key, size_t klen, const char *s, size_t n,
    unsigned char out[32])
{
	unsigned int len = 0;

	if (X.hmac(X.sha256(), key, (int)klen, (const unsigned char *)s, n,
	    out, &len) == NULL || len != 32)
		return -1;
	return 0;
}

/*
 * Append the n bytes at s to b, each byte but the unreserved (A-Z a-z 0-9
 * - _ . ~) and, when keep_slash, '/' written as %XX (upper-case hex).
 */
static void
encode(struct text *b, const char *s, size_t n, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[3];

		if ((c < 128 && isalnum(c)) || strchr("-_.~", c) != NULL ||
		    (keep_slash && c == '/')) {
			put(b, (const char *)&c, 1);
			continue;
		}
		e[0] = '%';
		e[1] = hex[c >> 4];
		e[2] = hex[c & 15];
		put(b, e, 3);
	}
}

/* The value of the hex digit c, or -1. */
static int
hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
	    c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * Append to b the n bytes at s percent-decoded (a '%' not followed by two
 * hex digits kept), then encoded strictly (encode(), '/' too): a query's
 * name or value in its canonical form.
 */
static void
reencode(struct text *b, const char *s, size_t n)
{
	struct text d = { { 0 }, 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 &&
		    hexval(s[i + 2]) >= 0) {
			c = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		}
		put(&d, &c, 1);
	}
	if (d.oom)
		b->oom = 1;
	else
		encode(b, d.b.data != NULL ? d.b.data : "", d.b.len, 0);
	saop__buf_free(&d.b);
}

/* One query parameter, canonical: "name=value". */
struct param {
	char *text;
	size_t name_len;
};

/* qsort(): parameters by name, then by value (bytes). */
static int
param_cmp(const void *a, const void *b)
{
	const struct param *x = a, *y = b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->text, y->text, n);

	if (c != 0 || x->name_len != y->name_len)
		return c != 0 ? c : x->name_len < y->name_len ? -1 : 1;
	return strcmp(x->text + x->name_len, y->text + y->name_len);
}

/*
 * Append the canonical query of q (the text after '?', up to any '#', n
 * bytes) to b: each parameter's name and value decoded and encoded
 * strictly, "name=value" (a parameter without '=' has an empty value),
 * sorted, joined by '&'.
 */
static void
canonical_query(struct text *b, const char *q, size_t n)
{
	struct param *ps = NULL;
	size_t np = 0, i = 0;

	while (i < n) {
		size_t end = i, eq;
		struct text t = { { 0 }, 0 };
		struct param *x;

		while (end < n && q[end] != '&')
			end++;
		if (end == i) {
			i = end + 1;
			continue;
		}
		for (eq = i; eq < end && q[eq] != '='; eq++)
			;
		reencode(&t, q + i, eq - i);
		put(&t, "=", 1);
		if (eq < end)
			reencode(&t, q + eq + 1, end - eq - 1);
		put(&t, "", 0);
		if (t.oom || (x = realloc(ps, (np + 1) * sizeof(*ps))) ==
		    NULL) {
			saop__buf_free(&t.b);
			b->oom = 1;
			break;
		}
		ps = x;
		ps[np].text = t.b.data;
		ps[np].name_len = strcspn(t.b.data, "=");
		np++;
		i = end + 1;
	}
	qsort(ps, np, sizeof(*ps), param_cmp);
	for (i = 0; i < np; i++) {
		if (i > 0)
			put(b, "&", 1);
		put(b, ps[i].text, strlen(ps[i].text));
		free(ps[i].text);
	}
	free(ps);
}

/* A header to sign: its name lower case and its value trimmed. */
struct hdr {
	char *name;
	char *value;
	size_t order;		/* where it was given: repeats keep it */
};

/* qsort(): headers by name, then in the order given. */
static int
hdr_cmp(const void *a, const void *b)
{
	const struct hdr *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c != 0 ? c : x->order < y->order ? -1 : 1;
}

/*
 * A header's value as it is signed: without the white space at its ends,
 * each run of spaces and tabs inside one space.  A new string, or NULL.
 */
static char *
trim_value(const char *v)
{
	size_t n = strlen(v), i, o = 0;
	char *s;

	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	while (n > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		n--;
	}
	if ((s = malloc(n + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if ((v[i] == ' ' || v[i] == '\t') && o > 0 &&
		    s[o - 1] == ' ')
			continue;
		s[o++] = v[i] == '\t' ? ' ' : v[i];
	}
	s[o] = '\0';
	return s;
}

/*
 * Add the header name: value to the n headers of *hs.  Returns 0, or -1
 * on ENOMEM.
 */
static int
add_hdr(struct hdr **hs, size_t *n, const char *name, const char *value)
{
	struct hdr *x = realloc(*hs, (*n + 1) * sizeof(**hs));
	size_t i;

	if (x == NULL)
		return -1;
	*hs = x;
	x[*n].name = strdup(name);
	x[*n].value = trim_value(value);
	x[*n].order = *n;
	if (x[*n].name == NULL || x[*n].value == NULL) {
		free(x[*n].name);
		free(x[*n].value);
		return -1;
	}
	for (i = 0; x[*n].name[i] != '\0'; i++)
		x[*n].name[i] = (char)tolower((unsigned char)x[*n].name[i]);
	(*n)++;
	return 0;
}

/*
 * The host of url (scheme://[userinfo@]host[:port]...) as its Host header
 * says it: lower case, with the port when it is not the scheme's default;
 * path set to where the path starts (the end of the URL when none).  A
 * new string, or NULL when url names no host, or on ENOMEM.
 */
static char *
host_of(const char *url, const char **path)
{
	const char *h = strstr(url, "://"), *end, *colon;
	size_t n, i;
	char *s;

	if (h == NULL)
		return NULL;
	h += 3;
	end = h + strcspn(h, "/?#");
	*path = end;
	if (memchr(h, '@', (size_t)(end - h)) != NULL)
		h = (const char *)memchr(h, '@', (size_t)(end - h)) + 1;
	n = (size_t)(end - h);
	colon = memchr(h, ':', n);
	if (colon != NULL && h[0] != '[' &&
	    ((strncmp(url, "https:", 6) == 0 && strncmp(colon, ":443", 4) ==
	    0 && colon + 4 == end) || (strncmp(url, "http:", 5) == 0 &&
	    strncmp(colon, ":80", 3) == 0 && colon + 3 == end)))
		n = (size_t)(colon - h);
	if (n == 0 || (s = malloc(n + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		s[i] = (char)tolower((unsigned char)h[i]);
	s[n] = '\0';
	return s;
}

/* Free what out holds, the secrets' traces wiped, and zero it. */
void
saop__sigv4_free(struct saop__sigv4_out *out)
{
	if (out->authorization != NULL)
		saop__wipe(out->authorization);
	free(out->canonical);
	free(out->to_sign);
	free(out->authorization);
	memset(out, 0, sizeof(*out));
}

/*
 * Sign the request in (see saop-private.h) into out.  Returns 0, or
 * -SAOP_EDATA when in's URL names no host or its date is not
 * YYYYMMDDTHHMMSSZ, -SAOP_ENOMEM, or -SAOP_ECONFIG when libcrypto could
 * not be loaded (saop__sigv4_why()) or failed.
 */
int
saop__sigv4_sign(const struct saop__sigv4 *in, struct saop__sigv4_out *out)
{
	struct text cr = { { 0 }, 0 }, signed_h = { { 0 }, 0 };
	struct hdr *hs = NULL;
	size_t nh = 0, i, n;
	const char *path, *q, *qend;
	char *host, scope[160], date[9], h[65];
	unsigned char k[32];
	int r = -SAOP_ENOMEM;

	memset(out, 0, sizeof(*out));
	memset(k, 0, sizeof(k));
	if (*saop__sigv4_why() != '\0')
		return -SAOP_ECONFIG;
	if (in->amz_date == NULL || strlen(in->amz_date) != 16 ||
	    in->amz_date[8] != 'T' || in->amz_date[15] != 'Z')
		return -SAOP_EDATA;
	if ((q = strstr(in->url, "://")) == NULL ||
	    strchr("/?#@", q[3]) != NULL)
		return -SAOP_EDATA;
	if ((host = host_of(in->url, &path)) == NULL)
		return -SAOP_ENOMEM;
	memcpy(date, in->amz_date, 8);
	date[8] = '\0';
	snprintf(scope, sizeof(scope), "%s/%.40s/%.40s/aws4_request", date,
	    in->region, in->service);
	if (sha256_hex(in->payload != NULL ? in->payload : "",
	    in->payload_len, out->payload_hash) != 0) {
		r = -SAOP_ECONFIG;
		goto out;
	}
	if (add_hdr(&hs, &nh, "host", host) != 0 ||
	    add_hdr(&hs, &nh, "x-amz-date", in->amz_date) != 0 ||
	    (in->token != NULL && add_hdr(&hs, &nh, "x-amz-security-token",
	    in->token) != 0) || (in->content_sha256 && add_hdr(&hs, &nh,
	    "x-amz-content-sha256", out->payload_hash) != 0))
		goto out;
	for (i = 0; i < in->nheaders; i++)
		if (add_hdr(&hs, &nh, in->headers[i].name,
		    in->headers[i].value) != 0)
			goto out;
	qsort(hs, nh, sizeof(*hs), hdr_cmp);

	/* The canonical request. */
	puts_(&cr, in->method);
	put(&cr, "\n", 1);
	q = path + strcspn(path, "?#");
	if (q == path)
		put(&cr, "/", 1);
	else
		encode(&cr, path, (size_t)(q - path), 1);
	put(&cr, "\n", 1);
	if (*q == '?') {
		qend = q + 1 + strcspn(q + 1, "#");
		canonical_query(&cr, q + 1, (size_t)(qend - q - 1));
	}
	put(&cr, "\n", 1);
	for (i = 0; i < nh; i++) {
		if (i > 0 && strcmp(hs[i].name, hs[i - 1].name) == 0) {
			/* A name given twice: its values joined by ','. */
			if (!cr.oom)
				cr.b.len--;
			put(&cr, ",", 1);
		} else {
			if (i > 0)
				put(&signed_h, ";", 1);
			puts_(&signed_h, hs[i].name);
			puts_(&cr, hs[i].name);
			put(&cr, ":", 1);
		}
		puts_(&cr, hs[i].value);
		put(&cr, "\n", 1);
	}
	put(&cr, "\n", 1);
	put(&cr, signed_h.b.data, signed_h.b.len);
	put(&cr, "\n", 1);
	put(&cr, out->payload_hash, 64);
	if (cr.oom || signed_h.oom)
		goto out;

	/* The string to sign. */
	if (sha256_hex(cr.b.data, cr.b.len, h) != 0) {
		r = -SAOP_ECONFIG;
		goto out;
	}
	n = 16 + 16 + strlen(scope) + 64 + 8;
	if ((out->to_sign = malloc(n)) == NULL)
		goto out;
	snprintf(out->to_sign, n, "AWS4-HMAC-SHA256\n%s\n%s\n%s",
	    in->amz_date, scope, h);

	/* The signing key, from the secret by date, region, service. */
	{
		size_t kn = strlen(in->secret) + 5;
		char *ks = malloc(kn);
		int bad;

		if (ks == NULL)
			goto out;
		snprintf(ks, kn, "AWS4%s", in->secret);
		bad = hmac(ks, kn - 1, date, strlen(date), k) != 0 ||
		    hmac(k, 32, in->region, strlen(in->region), k) != 0 ||
		    hmac(k, 32, in->service, strlen(in->service), k) != 0 ||
		    hmac(k, 32, "aws4_request", 12, k) != 0 ||
		    hmac(k, 32, out->to_sign, strlen(out->to_sign), k) != 0;
		saop__wipe(ks);
		free(ks);
		if (bad) {
			r = -SAOP_ECONFIG;
			goto out;
		}
		for (i = 0; i < 32; i++)
			snprintf(out->signature + 2 * i, 3, "%02x", k[i]);
	}
	n = strlen(in->id) + strlen(scope) + signed_h.b.len + 64 + 80;
	if ((out->authorization = malloc(n)) == NULL)
		goto out;
	snprintf(out->authorization, n, "AWS4-HMAC-SHA256 Credential=%s/%s, "
	    "SignedHeaders=%s, Signature=%s", in->id, scope, signed_h.b.data,
	    out->signature);
	out->canonical = cr.b.data;
	saop__buf_init(&cr.b);
	r = 0;
out:
	explicit_bzero(k, sizeof(k));
	for (i = 0; i < nh; i++) {
		saop__wipe(hs[i].value);
		free(hs[i].name);
		free(hs[i].value);
	}
	free(hs);
	free(host);
	saop__buf_free(&cr.b);
	saop__buf_free(&signed_h.b);
	if (r < 0)
		saop__sigv4_free(out);
	return r;
}
