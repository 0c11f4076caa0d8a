/*
 * mock-http.c: saop-mock's server: a request's connection and body, its
 * log line, its key, and its answer (a script's reply, --oracle's or
 * --replay's) queued in the format of its path.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mock.h"
#include "mock-bedrock.h"
#include "mock-oracle.h"
#include "mock-replay.h"

FILE *log_file;
int wake[2] = { -1, -1 };
long requests_answered;

/* The requests received, and the script's served flags: under lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long requests;

/* A request being received: its body. */
struct call {
	char *body;
	size_t len, cap;
	int answered;		/* a reply (or an error) was queued */
};

/*
 * The wire format of path, or -1 when it is none of the five; *path_stream
 * 1 or 0 when the path says whether the answer streams (Gemini's, Vertex
 * AI's and Bedrock's), else -1 (the body's "stream" says).
 */
static int
wire_of(const char *path, int *path_stream)
{
	size_t n = strlen(path);

#define ENDS(s) (n >= sizeof(s) - 1 && \
	strcmp(path + n - (sizeof(s) - 1), (s)) == 0)
	*path_stream = 0;
	/* Bedrock's stream is named by its path too (src/mock-bedrock.c). */
	if (bedrock_path(path, path_stream))
		return W_BEDROCK;
	/*
	 * Claude on Vertex AI: Anthropic's body at
	 * .../publishers/anthropic/models/M:streamRawPredict (an SSE
	 * stream) or :rawPredict (one JSON body).  Gemini on Vertex AI
	 * (.../publishers/google/models/M:streamGenerateContent) is Gemini's
	 * below.
	 */
	if (strstr(path, "/publishers/anthropic/models/") != NULL &&
	    (ENDS(":streamRawPredict") || ENDS(":rawPredict"))) {
		*path_stream = ENDS(":streamRawPredict");
		return W_ANTHROPIC;
	}
	*path_stream = -1;
	if (ENDS("/chat/completions"))
		return W_OPENAI;
	if (ENDS("/responses"))
		return W_RESPONSES;
	if (ENDS("/messages"))
		return W_ANTHROPIC;
	if (strstr(path, "/models/") != NULL && ENDS(":generateContent")) {
		*path_stream = 0;
		return W_GEMINI;
	}
	if (strstr(path, "/models/") != NULL &&
	    ENDS(":streamGenerateContent")) {
		*path_stream = 1;
		return W_GEMINI;
	}
#undef ENDS
	return -1;
}

/* 1 when the header name (any case) carries the key, else 0. */
static int
is_key_header(const char *name)
{
	static const char *const keys[] = { "authorization", "x-api-key",
	    "x-goog-api-key", "api-key", "x-amz-security-token", NULL };
	size_t i;

	for (i = 0; keys[i] != NULL; i++)
		if (strcasecmp(name, keys[i]) == 0)
			return 1;
	return key_header != NULL && strcasecmp(name, key_header) == 0;
}

/* What the log gathers of a request's headers or query. */
struct seen {
	json_t *obj;
	int key;		/* a key came */
	int query;		/* the query's arguments, not headers */
	json_t *via;		/* the names it came in (lower case) */
};

/*
 * MHD's iterator over a request's headers (or query arguments): each
 * into seen's object (names lower-cased, repeats joined by ", "), the
 * key only noted.  Returns MHD_YES (go on).
 */
static enum MHD_Result
see_value(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct seen *s = cls;
	const char *had;
	char name[256];
	size_t i;

	if (s->query ? strcmp(key, "key") == 0 : is_key_header(key)) {
		s->key = 1;
		for (i = 0; key[i] != '\0' && i + 1 < sizeof(name); i++)
			name[i] = (char)tolower((unsigned char)key[i]);
		name[i] = '\0';
		json_array_append_new(s->via, json_string(s->query ? "?key" :
		    name));
		return MHD_YES;
	}
	for (i = 0; key[i] != '\0' && i + 1 < sizeof(name); i++)
		name[i] = s->query ? key[i] : (char)(key[i] >= 'A' &&
		    key[i] <= 'Z' ? key[i] + 32 : key[i]);
	name[i] = '\0';
	had = json_string_value(json_object_get(s->obj, name));
	if (had != NULL) {
		char *both;

		if (asprintf(&both, "%s, %s", had, value ? value : "") >= 0) {
			json_object_set_new(s->obj, name, json_string(both));
			free(both);
		}
	} else {
		json_object_set_new(s->obj, name, json_string(value ? value :
		    ""));
	}
	return MHD_YES;
}

static int key_state(struct MHD_Connection *c);

/*
 * Append the log line of request n (its reply's script line, or the
 * number of its recording, 0 when none) to --log: method, path, query,
 * headers but the key, whether a key came, the body (as JSON when it
 * is), what --oracle made of it (oracle, when not NULL) and with --replay
 * the recording's file name (fixture).  Under lock.
 */
static void
log_request(struct MHD_Connection *c, long n, const char *method,
    const char *url, const struct call *k, long line, json_t *oracle,
    const char *fixture)
{
	json_t *via = json_array();
	struct seen h = { json_object(), 0, 0, via },
	    q = { json_object(), 0, 1, via };
	json_t *body, *o;
	char *text;
	int bs;

	MHD_get_connection_values(c, MHD_HEADER_KIND, see_value, &h);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, see_value, &q);
	body = json_loadb(k->body != NULL ? k->body : "", k->len, 0, NULL);
	if (body == NULL)
		body = json_stringn_nocheck(k->body != NULL ? k->body : "",
		    k->len);
	o = json_pack("{s:I, s:s, s:s, s:o, s:o, s:b, s:o, s:I, s:O*}", "n",
	    (json_int_t)n, "method", method, "path", url, "query", q.obj,
	    "headers", h.obj, "key", h.key || q.key, "body", body, "reply",
	    (json_int_t)line, "oracle", oracle);
	if (o != NULL && json_array_size(via) > 0)
		json_object_set(o, "key_in", via);
	json_decref(via);
	if (o != NULL && fixture != NULL)
		json_object_set_new(o, "replay", json_string(fixture));
	if (o != NULL && want_key != NULL)
		json_object_set_new(o, "key_ok", json_boolean((bedrock_path(url,
		    &bs) ? bedrock_key_state(c, method, url, k->body, k->len,
		    want_key) : key_state(c)) == 1));
	if (o == NULL || (text = json_dumps(o, JSON_COMPACT)) == NULL) {
		json_decref(o);
		return;
	}
	fprintf(log_file, "%s\n", text);
	fflush(log_file);
	free(text);
	json_decref(o);
}

/* The model a request names (its body's, or Gemini's path's). */
static const char *
model_of(const json_t *body, const char *url, char *buf, size_t size)
{
	const char *m = json_string_value(json_object_get(body, "model"));
	const char *p = strstr(url, "/models/");

	if (m != NULL)
		return m;
	if (p != NULL) {
		const char *end = strchr(p + 8, ':');

		snprintf(buf, size, "%.*s", end != NULL ? (int)(end - p - 8) :
		    0, p + 8);
		if (*buf != '\0')
			return buf;
	}
	return "saop-mock";
}

/* The tokens of n bytes, as saop-mock estimates them: about 4 bytes each. */
static long
tokens_of(size_t n)
{
	return (long)(n / 4) + 1;
}

/*
 * The reply r (filled, its strings o's) to a request of len bytes of
 * --oracle's answer o: its text and finish, or a 400 that says why the
 * request could not be placed; the usage reported is put on o's log.
 * Returns r.
 */
static const struct reply *
oracle_reply(struct oracle_reply *o, size_t len, struct reply *r)
{
	memset(r, 0, sizeof(*r));
	r->line = o->line;
	r->split = 4;
	r->retry_after = r->drop_after = -1;
	r->stream = -1;		/* streamed or whole, as asked */
	r->usage_in = tokens_of(len);
	r->usage_out = tokens_of(o->len);
	if (o->text == NULL) {
		r->status = 400;
		r->text = o->error;
		return r;
	}
	r->text = o->text;
	r->length = o->length;
	json_object_set_new(o->log, "usage", no_usage ? json_null() :
	    json_pack("{s:I, s:I}", "input", (json_int_t)r->usage_in,
	    "output", (json_int_t)r->usage_out));
	return r;
}

/* The key of a request: an Authorization: Bearer's, or a key header's. */
static const char *
key_of(struct MHD_Connection *c)
{
	static const char *const names[] = { "x-api-key", "x-goog-api-key",
	    "api-key", NULL };
	const char *v;
	size_t i;

	if (key_header != NULL && (v = MHD_lookup_connection_value(c,
	    MHD_HEADER_KIND, key_header)) != NULL)
		return v;
	for (i = 0; names[i] != NULL; i++)
		if ((v = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		    names[i])) != NULL)
			return v;
	v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "authorization");
	if (v != NULL && strncmp(v, "Bearer ", 7) == 0)
		return v + 7;
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "key");
}

/* With --key-env: 1 when the request's key is $VAR's, 0 none, -1 another. */
static int
key_state(struct MHD_Connection *c)
{
	const char *got = key_of(c);

	if (got == NULL)
		return 0;
	return strcmp(got, want_key) == 0 ? 1 : -1;
}

/*
 * Answer with the raw body of r (its status, type and headers) or its
 * recording (as --replay does, r's headers added).  a (taken) carries
 * the faults (drop, chunks, framing).  Returns MHD's result.
 */
static enum MHD_Result
respond_raw(struct MHD_Connection *c, const struct reply *r,
    struct answer *a)
{
	struct MHD_Response *resp;
	enum MHD_Result rc;
	unsigned st;

	if (r->body != NULL) {
		char *b = strdup(r->body);

		add_piece(a, b);
		if (a->oom) {
			answer_free(a);
			return MHD_NO;
		}
		return queue(c, a, r->status != 0 ? r->status : 200, r->type,
		    r->retry_after, 0, r->headers);
	}
	{
		size_t len;
		int stream;
		const char *data = replay_body(r->rec, &len, &stream, &st);
		char *copy = malloc(len + 1);

		if (copy != NULL)
			memcpy(copy, data, len);
		add_bytes(a, copy, len);
		if (a->oom) {
			answer_free(a);
			return MHD_NO;
		}
		if ((resp = answer_response(c, a, stream)) == NULL)
			return MHD_NO;
	}
	replay_headers(r->rec, resp);
	add_headers(resp, r->headers);
	rc = MHD_queue_response(c, st, resp);
	MHD_destroy_response(resp);
	return rc;
}

/*
 * Answer a request of --replay whose body is all in k: take its
 * recording (the next one, or the next of the request's model), log the
 * request, and queue the recording raw; a 404 in the path's format when
 * no recording is for its model, --exhausted's status when they are all
 * served.  a (taken) holds an error's body.  Returns MHD's result.
 */
static enum MHD_Result
respond_replay(struct MHD_Connection *c, const char *url, const char *method,
    struct call *k, struct answer *a)
{
	json_t *body = json_loadb(k->body != NULL ? k->body : "", k->len, 0,
	    NULL);
	const struct recorded *rec = NULL;
	char mbuf[128], *msg = NULL;
	const char *model;
	int path_stream, w = wire_of(url, &path_stream), matched = 1;
	unsigned st;
	long n;
	enum MHD_Result rc;

	model = model_of(body, url, mbuf, sizeof(mbuf));
	pthread_mutex_lock(&lock);
	n = ++requests;
	if (w >= 0 && strcmp(method, "POST") == 0)
		rec = replay_pick(model, by_model, exhausted_status == 0,
		    &matched);
	if (log_file != NULL)
		log_request(c, n, method, url, k, rec != NULL ?
		    replay_number(rec) : 0, NULL, rec != NULL ?
		    replay_name(rec) : NULL);
	pthread_mutex_unlock(&lock);
	if (cli_opts.verbose > 0)
		cli_warn("%s %s: %s", method, url, rec != NULL ?
		    replay_name(rec) : "error");
	if (rec != NULL) {
		struct MHD_Response *resp;

		json_decref(body);
		answer_free(a);
		if ((resp = replay_response(rec, &st)) == NULL)
			return MHD_NO;
		rc = MHD_queue_response(c, st, resp);
		MHD_destroy_response(resp);
		return rc;
	}
	if (w < 0 || strcmp(method, "POST") != 0)
		st = w < 0 ? 404 : 405;
	else
		st = matched ? (unsigned)exhausted_status : 404;
	if (st == 404 && w >= 0 && asprintf(&msg, "saop-mock: no recorded "
	    "answer for model %s", model) < 0)
		msg = NULL;
	write_error(a, w < 0 ? W_OPENAI : (enum wire)w, (int)st,
	    msg != NULL ? msg : st == 404 ? "saop-mock: no model at this "
	    "path" : st == 405 ? "saop-mock: only POST" :
	    "saop-mock: the recordings are exhausted");
	free(msg);
	json_decref(body);
	return queue(c, a, (int)st, "application/json", -1, 0, NULL);
}

/*
 * Answer a request whose body is all in k: take the next reply (or
 * --oracle's), log the request, wait delay_ms, and queue the reply in the
 * format of the path.  Returns MHD's result.
 */
static enum MHD_Result
respond(struct MHD_Connection *c, const char *url, const char *method,
    struct call *k)
{
	struct answer *a = calloc(1, sizeof(*a));
	const struct reply *r = NULL;
	json_t *body = json_loadb(k->body != NULL ? k->body : "", k->len, 0,
	    NULL);
	struct said s;
	struct oracle_reply o;
	struct reply orep;
	char mbuf[128];
	int path_stream = 0, w = wire_of(url, &path_stream), ks;
	long n;
	enum MHD_Result rc;

	k->answered = 1;
	memset(&o, 0, sizeof(o));
	if (a != NULL && oracle_path != NULL && w >= 0 &&
	    strcmp(method, "POST") == 0) {
		if (oracle_answer(body, &o) < 0) {
			free(a);
			a = NULL;
		} else {
			r = oracle_reply(&o, k->len, &orep);
		}
	}
	if (a == NULL) {
		json_decref(body);
		return MHD_NO;
	}
	a->drop_after = -1;
	if (replay_path != NULL) {
		json_decref(body);
		return respond_replay(c, url, method, k, a);
	}
	pthread_mutex_lock(&lock);
	n = ++requests;
	if (oracle_path == NULL && w >= 0 && strcmp(method, "POST") == 0)
		r = script_take(k->body);
	if (log_file != NULL)
		log_request(c, n, method, url, k, r != NULL ? r->line : 0,
		    o.log, NULL);
	pthread_mutex_unlock(&lock);
	if (cli_opts.verbose > 0)
		cli_warn("%s %s: %s", method, url, r != NULL ? "reply" :
		    "error");
	if (w < 0 || strcmp(method, "POST") != 0) {
		int st = w < 0 ? 404 : 405;

		write_error(a, w < 0 ? W_OPENAI : (enum wire)w, st, w < 0 ?
		    "saop-mock: no model at this path" :
		    "saop-mock: only POST");
		json_decref(body);
		oracle_reply_free(&o);
		return queue(c, a, st, "application/json", -1, 0, NULL);
	}
	if (r == NULL) {
		write_error(a, (enum wire)w, exhausted_status,
		    "saop-mock: the script is exhausted");
		json_decref(body);
		oracle_reply_free(&o);
		return queue(c, a, exhausted_status, "application/json", -1, 0,
		    NULL);
	}
	answer_faults(a, r);
	if (r->delay_ms > 0)
		mock_sleep_ms(r->delay_ms);
	if (r->no_answer) {
		/* The request read, the connection closed: no status line. */
		a->conn = c;
		drop(a);
		answer_free(a);
		json_decref(body);
		return MHD_NO;
	}
	if (want_key != NULL && !r->any_key && (ks = w == W_BEDROCK ?
	    bedrock_key_state(c, method, url, k->body, k->len, want_key) :
	    key_state(c)) != 1) {
		write_error(a, (enum wire)w, 401, ks == 0 ?
		    "saop-mock: no key" : "saop-mock: wrong key");
		json_decref(body);
		return queue(c, a, 401, "application/json", -1, 0, NULL);
	}
	if (r->body != NULL || r->rec != NULL) {
		json_decref(body);
		return respond_raw(c, r, a);
	}
	if (r->status != 0 && w != W_BEDROCK) {
		write_error(a, (enum wire)w, r->status, *r->text != '\0' ?
		    r->text : "saop-mock: the script's error");
		json_decref(body);
		oracle_reply_free(&o);
		return queue(c, a, r->status, "application/json",
		    r->retry_after, 0, r->headers);
	}
	memset(&s, 0, sizeof(s));
	s.r = r;
	s.fin = r->no_finish ? FIN_NONE : r->refusal != NULL ? FIN_REFUSAL :
	    r->length ? FIN_LENGTH :
	    r->tool_name != NULL ? FIN_TOOL : FIN_STOP;
	s.model = model_of(body, url, mbuf, sizeof(mbuf));
	s.in = r->usage_in >= 0 ? r->usage_in : tokens_of(k->len);
	s.out = r->usage_out >= 0 ? r->usage_out : tokens_of(strlen(r->text) +
	    (r->refusal ? strlen(r->refusal) : 0) + (r->tool_args ?
	    strlen(r->tool_args) : 0));
	if (no_usage)
		s.in = s.out = -1;
	if (w == W_GEMINI) {
		const char *alt = MHD_lookup_connection_value(c,
		    MHD_GET_ARGUMENT_KIND, "alt");

		s.stream = path_stream;
		s.gemini_array = path_stream && (alt == NULL ||
		    strcmp(alt, "sse") != 0);
	} else if (path_stream >= 0) {
		s.stream = path_stream;	/* Vertex AI's rawPredict */
	} else {
		s.stream = json_is_true(json_object_get(body, "stream"));
	}
	if (r->stream >= 0) {
		/* Whole or streamed, whatever was asked. */
		s.stream = r->stream;
		s.gemini_array = s.gemini_array && s.stream;
	}
	if (s.stream && r->stream_error != 0)
		s.fin = FIN_NONE;	/* the error comes in its place */
	if (s.stream && !s.gemini_array) {
		long i;

		for (i = 0; i < r->comments; i++)
			add_piece(a, strdup(": keep-alive\n\n"));
	}
	switch (w) {
	case W_ANTHROPIC:
		write_anthropic(a, &s);
		break;
	case W_RESPONSES:
		write_responses(a, &s);
		break;
	case W_GEMINI:
		write_gemini(a, &s);
		break;
	case W_BEDROCK:
		json_decref(body);
		oracle_reply_free(&o);
		return bedrock_queue(c, a, &(const struct bedrock_answer){
		    r->text, r->tool_name, r->tool_args, r->refusal,
		    (int)s.fin, s.in, s.out, r->status, r->retry_after,
		    path_stream, r->headers });
	default:
		write_openai(a, &s);
		break;
	}
	oracle_reply_free(&o);
	if (a->oom) {
		answer_free(a);
		json_decref(body);
		return MHD_NO;
	}
	rc = queue(c, a, 200, s.stream && !s.gemini_array ?
	    "text/event-stream" : "application/json", -1, s.stream,
	    r->headers);
	json_decref(body);
	return rc;
}

/*
 * MHD's handler of a request: gather the body over the calls, then
 * respond().  Returns MHD_YES to go on, MHD_NO to close the connection.
 */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **con_cls)
{
	struct call *k = *con_cls;

	if (k == NULL) {
		if ((k = calloc(1, sizeof(*k))) == NULL)
			return MHD_NO;
		*con_cls = k;
		return MHD_YES;
	}
	if (*upload_size > 0) {
		if (k->len + *upload_size + 1 > k->cap) {
			size_t ncap = (k->len + *upload_size + 1) * 2;
			char *nb;

			if (ncap > 256u * 1024 * 1024 ||
			    (nb = realloc(k->body, ncap)) == NULL)
				return MHD_NO;
			k->body = nb;
			k->cap = ncap;
		}
		memcpy(k->body + k->len, upload, *upload_size);
		k->len += *upload_size;
		k->body[k->len] = '\0';
		*upload_size = 0;
		return MHD_YES;
	}
	if (k->answered)
		return MHD_YES;
	return respond(c, url, method, k);
}

/*
 * MHD's end of a request: count it answered (and wake the main loop at
 * --max-requests), free its call.  Returns nothing.
 */
static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode why)
{
	struct call *k = *con_cls;
	int wakeup = 0;

	if (k == NULL)
		return;
	if (k->answered) {
		pthread_mutex_lock(&lock);
		requests_answered++;
		wakeup = max_requests > 0 &&
		    requests_answered == max_requests;
		pthread_mutex_unlock(&lock);
	}
	if (wakeup && write(wake[1], "r", 1) < 0)
		cli_warn("cannot wake the main loop: %s", strerror(errno));
	free(k->body);
	free(k);
	*con_cls = NULL;
}

/*
 * Start MHD on host and port, HTTPS with tls_cert and tls_key when set;
 * exits 69 when it cannot listen.
 */
struct MHD_Daemon *
mock_start(const char *host, long port)
{
	struct addrinfo hints, *ai = NULL;
	struct MHD_Daemon *d;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION |
	    MHD_USE_INTERNAL_POLLING_THREAD;
	char service[16];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(service, sizeof(service), "%ld", port);
	if ((rc = getaddrinfo(host, service, &hints, &ai)) != 0) {
		cli_warn("--host %s: %s", host, gai_strerror(rc));
		exit(EX_UNAVAILABLE);
	}
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (cli_opts.verbose > 1)
		flags |= MHD_USE_ERROR_LOG;
	if (tls_cert != NULL)
		d = MHD_start_daemon(flags | MHD_USE_TLS, (uint16_t)port,
		    NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR,
		    ai->ai_addr, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
		    NULL, MHD_OPTION_HTTPS_MEM_CERT, tls_cert,
		    MHD_OPTION_HTTPS_MEM_KEY, tls_key, MHD_OPTION_END);
	else
		d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL,
		    on_request, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
		    MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
		    MHD_OPTION_END);
	freeaddrinfo(ai);
	if (d == NULL) {
		cli_warn("cannot listen on %s port %ld%s", host, port,
		    tls_cert != NULL ? " (or --tls-cert or --tls-key is not "
		    "a PEM certificate and its key)" : "");
		exit(EX_UNAVAILABLE);
	}
	return d;
}
