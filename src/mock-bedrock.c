/*
 * mock-bedrock.c: saop-mock serving Amazon Bedrock's Converse API
 * (POST /model/ID/converse, one JSON body) and ConverseStream (POST
 * /model/ID/converse-stream, AWS's binary event stream: each event a
 * frame of prelude, headers, JSON payload and CRC-32s; messageStart,
 * contentBlockStart / Delta / Stop, messageStop with the stopReason,
 * metadata with the usage; an error an exception frame).  A call is
 * checked against the key of --key-env: a bearer token (a Bedrock API
 * key), or an AWS Signature Version 4 made with it as the secret access
 * key, checked with libsaop's own signer (lib/llm-sigv4.c).
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mock.h"
#include "mock-bedrock.h"
#include "saop-private.h"

/* ---- the paths and the key ---- */

/* See mock-bedrock.h. */
int
bedrock_path(const char *url, int *stream)
{
	const char *m = strstr(url, "/model/");
	size_t n = strlen(url);

	if (m == NULL)
		return 0;
	m += 7;
#define ENDS(s) (n >= sizeof(s) - 1 && (size_t)(url + n - m) > \
	sizeof(s) - 1 && strcmp(url + n - (sizeof(s) - 1), (s)) == 0)
	if (ENDS("/converse-stream")) {
		*stream = 1;
		return 1;
	}
	if (ENDS("/converse")) {
		*stream = 0;
		return 1;
	}
#undef ENDS
	return 0;
}

/*
 * The value of the member name ("Credential=" ...) of an Authorization's
 * list, up to the next ',' (its length in *len), or NULL.
 */
static const char *
auth_member(const char *auth, const char *name, size_t *len)
{
	const char *p = strstr(auth, name);

	if (p == NULL)
		return NULL;
	p += strlen(name);
	*len = strcspn(p, ", ");
	return p;
}

/*
 * The path url as it was sent: MHD gives it decoded; each byte outside
 * the unreserved set and '/' encoded again as an AWS SDK (and saop)
 * encodes it (a model ID's ':' as %3A).  A new string, or NULL.
 */
static char *
wire_path(const char *url)
{
	static const char hex[] = "0123456789ABCDEF";
	char *s = malloc(3 * strlen(url) + 1), *o = s;
	const unsigned char *u = (const unsigned char *)url;

	if (s == NULL)
		return NULL;
	for (; *u != '\0'; u++)
		if ((*u < 128 && isalnum(*u)) || strchr("-_.~/", *u) != NULL) {
			*o++ = (char)*u;
		} else {
			*o++ = '%';
			*o++ = hex[*u >> 4];
			*o++ = hex[*u & 15];
		}
	*o = '\0';
	return s;
}

/*
 * 1 when the AWS4-HMAC-SHA256 Authorization auth of the call on c is the
 * signature libsaop makes of it with the secret access key want (service
 * bedrock; the region, the access key's ID and the signed headers as the
 * Authorization names them), else -1.
 */
static int
signature_state(struct MHD_Connection *c, const char *auth,
    const char *method, const char *url, const char *body, size_t len,
    const char *want)
{
	struct saop__sigv4_hdr hd[16];
	struct saop__sigv4 in;
	struct saop__sigv4_out out;
	const char *cred, *sh, *host, *date, *p;
	size_t cn, shn, nh = 0;
	char id[128], region[64], names[512], *path = NULL, *full = NULL,
	    *name, *save = NULL;
	int ok = -1;

	memset(&in, 0, sizeof(in));
	cred = auth_member(auth, "Credential=", &cn);
	sh = auth_member(auth, "SignedHeaders=", &shn);
	host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "host");
	date = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "x-amz-date");
	if (cred == NULL || sh == NULL || host == NULL || date == NULL ||
	    shn >= sizeof(names) || (p = memchr(cred, '/', cn)) == NULL ||
	    (size_t)(p - cred) >= sizeof(id))
		return -1;
	snprintf(id, sizeof(id), "%.*s", (int)(p - cred), cred);
	/* Credential=ID/DATE/REGION/SERVICE/aws4_request */
	if ((p = memchr(p + 1, '/', cn - (size_t)(p + 1 - cred))) == NULL)
		return -1;
	snprintf(region, sizeof(region), "%.*s", (int)strcspn(p + 1, "/"),
	    p + 1);
	snprintf(names, sizeof(names), "%.*s", (int)shn, sh);
	for (name = strtok_r(names, ";", &save); name != NULL;
	    name = strtok_r(NULL, ";", &save)) {
		const char *v = MHD_lookup_connection_value(c,
		    MHD_HEADER_KIND, name);

		if (strcmp(name, "host") == 0 ||
		    strcmp(name, "x-amz-date") == 0)
			continue;
		if (v == NULL)
			return -1;	/* signed, not sent */
		if (strcmp(name, "x-amz-security-token") == 0)
			in.token = v;
		else if (strcmp(name, "x-amz-content-sha256") == 0)
			in.content_sha256 = 1;
		else if (nh < sizeof(hd) / sizeof(hd[0])) {
			hd[nh].name = name;
			hd[nh++].value = v;
		} else
			return -1;
	}
	if ((path = wire_path(url)) == NULL ||
	    asprintf(&full, "http://%s%s", host, path) < 0)
		full = NULL;
	if (full != NULL) {
		in.method = method;
		in.url = full;
		in.headers = hd;
		in.nheaders = nh;
		in.payload = body != NULL ? body : "";
		in.payload_len = len;
		in.amz_date = date;
		in.region = region;
		in.service = "bedrock";
		in.id = id;
		in.secret = want;
		if (saop__sigv4_sign(&in, &out) == 0) {
			ok = strcmp(out.authorization, auth) == 0 ? 1 : -1;
			saop__sigv4_free(&out);
		}
	}
	free(path);
	free(full);
	return ok;
}

/* See mock-bedrock.h. */
int
bedrock_key_state(struct MHD_Connection *c, const char *method,
    const char *url, const char *body, size_t len, const char *want)
{
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "authorization");

	if (auth == NULL)
		return 0;
	if (strncmp(auth, "AWS4-HMAC-SHA256 ", 17) == 0)
		return signature_state(c, auth, method, url, body, len, want);
	if (strncmp(auth, "Bearer ", 7) == 0)
		return strcmp(auth + 7, want) == 0 ? 1 : -1;
	return -1;
}

/* ---- the answer, in frames ---- */

/* Write the 32-bit v big-endian at p. */
static void
be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/*
 * Append one event-stream frame to b: the string headers of names and
 * values (n of them), the payload o (taken) as compact JSON, both CRCs.
 */
static void
add_frame(struct answer *b, const char *const *names, const char *const *values,
    size_t n, json_t *o)
{
	char *payload = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
	size_t hlen = 0, plen, total, i, at;
	unsigned char *f;

	json_decref(o);
	if (payload == NULL) {
		b->oom = 1;
		return;
	}
	for (i = 0; i < n; i++)
		hlen += 1 + strlen(names[i]) + 1 + 2 + strlen(values[i]);
	plen = strlen(payload);
	total = 12 + hlen + plen + 4;
	if ((f = malloc(total)) == NULL) {
		free(payload);
		b->oom = 1;
		return;
	}
	be32(f, (uint32_t)total);
	be32(f + 4, (uint32_t)hlen);
	be32(f + 8, saop__crc32(0, f, 8));
	at = 12;
	for (i = 0; i < n; i++) {
		size_t nl = strlen(names[i]), vl = strlen(values[i]);

		f[at++] = (unsigned char)nl;
		memcpy(f + at, names[i], nl);
		at += nl;
		f[at++] = 7;	/* a string */
		f[at++] = (unsigned char)(vl >> 8);
		f[at++] = (unsigned char)vl;
		memcpy(f + at, values[i], vl);
		at += vl;
	}
	memcpy(f + at, payload, plen);
	at += plen;
	be32(f + at, saop__crc32(0, f, at));
	free(payload);
	add_bytes(b, (char *)f, total);
}

/* Append the event type with payload o (taken) to b. */
static void
add_frame_event(struct answer *b, const char *type, json_t *o)
{
	static const char *const names[] = { ":event-type", ":content-type",
	    ":message-type" };
	const char *values[] = { type, "application/json", "event" };

	add_frame(b, names, values, 3, o);
}

/*
 * The name of the exception for HTTP status st, as the Bedrock Runtime
 * API reference has them (first letter lower case in a stream's
 * :exception-type, upper case in x-amzn-ErrorType).
 */
static const char *
exception_of(int st)
{
	switch (st) {
	case 400: return "validationException";
	case 403: return "accessDeniedException";
	case 404: return "resourceNotFoundException";
	case 408: return "modelTimeoutException";
	case 424:
	case 502: return "modelStreamErrorException";
	case 429: return "throttlingException";
	case 503: return "serviceUnavailableException";
	default: return st >= 500 ? "internalServerException" :
	    "validationException";
	}
}

/*
 * The length in bytes of the first piece of s (at most 4 characters,
 * never a character cut); 0 at the end.
 */
static size_t
piece_len(const char *s)
{
	size_t n = 0;
	int chars = 0;

	while (s[n] != '\0' && chars < 4) {
		n++;
		while ((s[n] & 0xc0) == 0x80)
			n++;
		chars++;
	}
	return n;
}

/* Bedrock's stopReason for finish (see struct bedrock_answer). */
static const char *
stop_reason(int finish)
{
	static const char *const w[] = { "end_turn", "max_tokens", "tool_use",
	    "guardrail_intervened" };

	return w[finish >= 0 && finish < 4 ? finish : 0];
}

/* The usage object of a (NULL when none is reported). */
static json_t *
usage_of(const struct bedrock_answer *a)
{
	return a->in < 0 ? NULL : json_pack("{s:I, s:I, s:I}", "inputTokens",
	    (json_int_t)a->in, "outputTokens", (json_int_t)a->out,
	    "totalTokens", (json_int_t)(a->in + a->out));
}

/* The tool's input as a JSON object ({} when it is not one). */
static json_t *
input_of(const struct bedrock_answer *a)
{
	json_t *o = json_loads(a->tool_args != NULL ? a->tool_args : "", 0,
	    NULL);

	if (!json_is_object(o)) {
		json_decref(o);
		o = json_object();
	}
	return o;
}

/* ConverseStream: a's events, text and input in pieces. */
static void
write_stream(struct answer *b, const struct bedrock_answer *a)
{
	const char *text = a->refusal != NULL ? a->refusal : a->text, *p;
	size_t n;
	int ix = 0;

	add_frame_event(b, "messageStart", json_pack("{s:s}", "role", "assistant"));
	if (a->status != 0) {
		static const char *const names[] = { ":exception-type",
		    ":content-type", ":message-type" };
		const char *values[] = { exception_of(a->status),
		    "application/json", "exception" };

		add_frame(b, names, values, 3, json_pack("{s:s}", "message",
		    *a->text != '\0' ? a->text :
		    "saop-mock: the script's error"));
		return;
	}
	if (*text != '\0') {
		for (p = text; (n = piece_len(p)) > 0; p += n)
			add_frame_event(b, "contentBlockDelta", json_pack("{s:i, "
			    "s:{s:s%}, s:s}", "contentBlockIndex", ix, "delta",
			    "text", p, n, "p", "abcdefgh"));
		add_frame_event(b, "contentBlockStop", json_pack("{s:i}",
		    "contentBlockIndex", ix));
		ix++;
	}
	if (a->tool_name != NULL) {
		add_frame_event(b, "contentBlockStart", json_pack("{s:i, s:{s:{s:s, "
		    "s:s}}}", "contentBlockIndex", ix, "start", "toolUse",
		    "toolUseId", "tooluse_mock1", "name", a->tool_name));
		for (p = a->tool_args; (n = piece_len(p)) > 0; p += n)
			add_frame_event(b, "contentBlockDelta", json_pack("{s:i, "
			    "s:{s:{s:s%}}}", "contentBlockIndex", ix, "delta",
			    "toolUse", "input", p, n));
		add_frame_event(b, "contentBlockStop", json_pack("{s:i}",
		    "contentBlockIndex", ix));
	}
	if (a->finish != 4)	/* "finish": null: no messageStop */
		add_frame_event(b, "messageStop", json_pack("{s:s}", "stopReason",
		    stop_reason(a->finish)));
	add_frame_event(b, "metadata", json_pack("{s:o*, s:{s:i}}", "usage",
	    usage_of(a), "metrics", "latencyMs", 1));
}

/* Converse: the whole answer, one JSON body. */
static void
write_whole(struct answer *b, const struct bedrock_answer *a)
{
	const char *text = a->refusal != NULL ? a->refusal : a->text;
	json_t *content = json_array(), *o;
	char *s;

	if (*text != '\0')
		json_array_append_new(content, json_pack("{s:s}", "text",
		    text));
	if (a->tool_name != NULL)
		json_array_append_new(content, json_pack("{s:{s:s, s:s, "
		    "s:o}}", "toolUse", "toolUseId", "tooluse_mock1", "name",
		    a->tool_name, "input", input_of(a)));
	o = json_pack("{s:{s:{s:s, s:o}}, s:s, s:o*, s:{s:i}}", "output",
	    "message", "role", "assistant", "content", content, "stopReason",
	    stop_reason(a->finish), "usage", usage_of(a), "metrics",
	    "latencyMs", 1);
	s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	add_bytes(b, s, s != NULL ? strlen(s) : 0);
}

/* ---- sending ---- */

/* See mock-bedrock.h. */
enum MHD_Result
bedrock_queue(struct MHD_Connection *c, struct answer *b,
    const struct bedrock_answer *a)
{
	struct MHD_Response *resp;
	int st = 200, stream = a->stream;
	enum MHD_Result rc;

	/*
	 * An error before the stream is an HTTP error (AWS's throttling of
	 * a call is a 429); one the script gives a Retry-After can only be
	 * that.  Else, in a stream, an exception frame (write_stream()).
	 */
	if (a->status != 0 && (!stream || a->retry_after >= 0)) {
		stream = 0;
		write_error(b, W_BEDROCK, a->status, *a->text != '\0' ?
		    a->text : "saop-mock: the script's error");
		st = a->status;
	} else if (stream) {
		write_stream(b, a);
	} else {
		write_whole(b, a);
	}
	if (b->oom) {
		answer_free(b);
		return MHD_NO;
	}
	if ((resp = answer_response(c, b, stream)) == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, stream ?
	    "application/vnd.amazon.eventstream" : "application/json");
	if (st != 200) {
		char name[64];

		snprintf(name, sizeof(name), "%s", exception_of(st));
		name[0] = (char)toupper((unsigned char)name[0]);
		MHD_add_response_header(resp, "x-amzn-ErrorType", name);
	}
	if (st != 200 && a->retry_after >= 0) {
		char s[32];

		snprintf(s, sizeof(s), "%ld", a->retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, s);
	}
	add_headers(resp, a->headers);
	rc = MHD_queue_response(c, (unsigned)st, resp);
	MHD_destroy_response(resp);
	return rc;
}
