/*
 * mock-answer.c: saop-mock's bodies: an answer held in pieces and sent to
 * MHD one piece at a time with the reply's faults (drop, delay), the
 * helpers the four formats' writers share, and the error bodies.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "mock.h"

/*
 * One process, libmicrohttpd's thread per connection: a reply's delays
 * are sleeps in the connection's own thread, its body is handed to MHD
 * one piece (one SSE event) per call of the content reader, and MHD asks
 * for the next piece only once the last one has been written to the
 * socket, so that drop_after cuts after exactly that many bytes of the
 * body.  A drop is a FIN (shutdown() of the connection's socket, which
 * MHD_get_connection_info() gives) or, with "reset", an RST (see drop()),
 * then MHD_CONTENT_READER_END_WITH_ERROR: MHD closes the connection.
 */

/* Append the n bytes at s (taken: freed here on failure) as a piece. */
void
add_bytes(struct answer *a, char *s, size_t n)
{
	if (s == NULL) {
		a->oom = 1;
		return;
	}
	if (a->npiece == a->cap) {
		size_t ncap = a->cap ? a->cap * 2 : 16;
		char **np = realloc(a->piece, ncap * sizeof(*np));
		size_t *nl;

		if (np != NULL)
			a->piece = np;
		nl = np == NULL ? NULL : realloc(a->plen, ncap *
		    sizeof(*nl));
		if (nl == NULL) {
			free(s);
			a->oom = 1;
			return;
		}
		a->plen = nl;
		a->cap = ncap;
	}
	a->plen[a->npiece] = n;
	a->piece[a->npiece++] = s;
}

/* Append s (taken: freed here on failure) as a piece of a. */
void
add_piece(struct answer *a, char *s)
{
	add_bytes(a, s, s != NULL ? strlen(s) : 0);
}

/* Take the reply r's chunks, their delay, its drop and framing into a. */
void
answer_faults(struct answer *a, const struct reply *r)
{
	a->drop_after = r->drop_after;
	a->reset = r->reset;
	a->chunk_delay_ms = r->chunk_delay_ms;
	a->chunks = r->chunks;
	a->random_chunks = r->random_chunks;
	a->rng = r->seed * 2654435761u + 0x9e3779b97f4a7c15ull;
	a->until_close = r->until_close;
}

/* Append o (taken) as JSON text, compact, a piece of its own. */
void
add_json(struct answer *a, json_t *o)
{
	if (o == NULL) {
		a->oom = 1;
		return;
	}
	add_piece(a, json_dumps(o, JSON_COMPACT));
	json_decref(o);
}

/* Append o (taken) as one SSE event, with "event: name" when not NULL. */
void
add_event(struct answer *a, const char *name, json_t *o)
{
	char *data, *ev;

	if (o == NULL || (data = json_dumps(o, JSON_COMPACT)) == NULL) {
		json_decref(o);
		a->oom = 1;
		return;
	}
	/* name may be o's own (add_typed()): o is let go after. */
	if (name != NULL ? asprintf(&ev, "event: %s\ndata: %s\n\n", name,
	    data) < 0 : asprintf(&ev, "data: %s\n\n", data) < 0)
		ev = NULL;
	json_decref(o);
	free(data);
	add_piece(a, ev);
}

/* Free a and its pieces (MHD's free callback: a void *). */
void
answer_free(void *cls)
{
	struct answer *a = cls;
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->npiece; i++)
		free(a->piece[i]);
	free(a->piece);
	free(a->plen);
	free(a);
}

/* Sleep ms milliseconds (signals do not cut it short). */
void
mock_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * End the connection of a in the middle of its body: an RST (SO_LINGER 0,
 * then MHD's close()) when a->reset, else a FIN (shutdown()).
 */
void
drop(struct answer *a)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(a->conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);

	if (ci == NULL)
		return;
	if (a->reset) {
		struct linger lg = { 1, 0 };
		struct sockaddr none;

		/* MHD's connection thread ends with shutdown(SHUT_WR), a FIN,
		 * before its close(): the RST is sent here, by disconnecting
		 * the socket (connect() to AF_UNSPEC: Linux resets an
		 * established connection); SO_LINGER 0 makes the close an
		 * RST should the disconnect fail. */
		setsockopt(ci->connect_fd, SOL_SOCKET, SO_LINGER, &lg,
		    sizeof(lg));
		memset(&none, 0, sizeof(none));
		none.sa_family = AF_UNSPEC;
		if (connect(ci->connect_fd, &none, sizeof(none)) != 0 &&
		    cli_opts.verbose > 0)
			cli_warn("cannot reset the connection: %s",
			    strerror(errno));
	} else {
		shutdown(ci->connect_fd, SHUT_RDWR);
	}
}

/* The size of a's next chunk: chunks, or 1 to chunks drawn (xorshift64). */
static size_t
next_chunk(struct answer *a)
{
	if (!a->random_chunks)
		return (size_t)a->chunks;
	a->rng ^= a->rng << 13;
	a->rng ^= a->rng >> 7;
	a->rng ^= a->rng << 17;
	return 1 + (size_t)(a->rng % (unsigned long long)a->chunks);
}

/*
 * MHD's content reader: the next bytes of a's body into buf (at most
 * max), one piece at most per call (with "chunks", one chunk at most, a
 * chunk never spanning two pieces), a piece (or chunk) after the first
 * waited for by chunk_delay_ms; the connection dropped once drop_after
 * bytes are out.  Returns the bytes given, or MHD's end of stream or
 * error.
 */
static ssize_t
read_answer(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct answer *a = cls;
	size_t len, n;

	if (a->drop_after >= 0 && a->sent >=
	    (unsigned long long)a->drop_after) {
		drop(a);
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	if (a->at == a->npiece)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (a->chunks > 0 && a->off == 0)
		a->chunk_left = 0;
	if ((a->chunks > 0 ? a->chunk_left == 0 : a->off == 0) &&
	    a->sent > 0 && a->chunk_delay_ms > 0)
		mock_sleep_ms(a->chunk_delay_ms);
	if (a->chunks > 0 && a->chunk_left == 0)
		a->chunk_left = next_chunk(a);
	len = a->plen[a->at];
	n = len - a->off;
	if (n > max)
		n = max;
	if (a->chunks > 0 && n > a->chunk_left)
		n = a->chunk_left;
	if (a->drop_after >= 0 && n > (unsigned long long)a->drop_after -
	    a->sent)
		n = (size_t)((unsigned long long)a->drop_after - a->sent);
	memcpy(buf, a->piece[a->at] + a->off, n);
	a->off += n;
	a->sent += n;
	a->chunk_left -= a->chunks > 0 ? n : 0;
	if (a->off == len) {
		a->at++;
		a->off = 0;
	}
	return (ssize_t)n;
}

/*
 * The length in bytes of the first piece of s (at most chars characters,
 * never a character cut); 0 at the end.
 */
static size_t
piece_len(const char *s, long chars)
{
	size_t n = 0;
	long got = 0;

	while (s[n] != '\0' && got < chars) {
		n++;
		while ((s[n] & 0xc0) == 0x80)
			n++;
		got++;
	}
	return n;
}

/*
 * The next piece of *s, at most chars characters (never a character
 * cut), as a new JSON string (advancing *s), or NULL at its end.
 */
json_t *
next_piece(const char **s, long chars)
{
	size_t n = piece_len(*s, chars);
	json_t *j;

	if (n == 0)
		return NULL;
	j = json_stringn(*s, n);
	*s += n;
	return j;
}

/* The tool's arguments as a JSON object ({} when they are not one). */
json_t *
args_object(const struct reply *r)
{
	json_t *o = json_loads(r->tool_args, 0, NULL);

	if (!json_is_object(o)) {
		json_decref(o);
		o = json_object();
	}
	return o;
}

/* The type of an error body of HTTP status st (Anthropic's, OpenAI's). */
const char *
error_type(int st)
{
	switch (st) {
	case 401: return "authentication_error";
	case 403: return "permission_error";
	case 404: return "not_found_error";
	case 413: return "request_too_large";
	case 429: return "rate_limit_error";
	case 503:
	case 529: return "overloaded_error";
	default: return st >= 500 ? "api_error" : "invalid_request_error";
	}
}

/* Gemini's status word of HTTP status st. */
const char *
gemini_status(int st)
{
	switch (st) {
	case 400: return "INVALID_ARGUMENT";
	case 401: return "UNAUTHENTICATED";
	case 403: return "PERMISSION_DENIED";
	case 404: return "NOT_FOUND";
	case 429: return "RESOURCE_EXHAUSTED";
	case 500: return "INTERNAL";
	case 503: return "UNAVAILABLE";
	case 504: return "DEADLINE_EXCEEDED";
	default: return "UNKNOWN";
	}
}

/* Append the error body of status st with msg, as the format w writes it. */
void
write_error(struct answer *a, enum wire w, int st, const char *msg)
{
	if (w == W_BEDROCK)
		add_json(a, json_pack("{s:s}", "message", msg));
	else if (w == W_ANTHROPIC)
		add_json(a, json_pack("{s:s, s:{s:s, s:s}}", "type", "error",
		    "error", "type", error_type(st), "message", msg));
	else if (w == W_GEMINI)
		add_json(a, json_pack("{s:{s:i, s:s, s:s}}", "error", "code",
		    st, "message", msg, "status", gemini_status(st)));
	else
		add_json(a, json_pack("{s:{s:s, s:s, s:n, s:o}}", "error",
		    "message", msg, "type", error_type(st), "param", "code",
		    st == 429 ? json_string(error_type(st)) : json_null()));
}

/* Add the headers of the object extra (NULL: none) to resp. */
void
add_headers(struct MHD_Response *resp, const json_t *extra)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)extra, key, v)
		MHD_add_response_header(resp, key, json_string_value(v));
}

/*
 * A new MHD response of a (a->conn set to c; freed with it, or here when
 * NULL is returned: out of memory), of unknown length when chunked (or
 * until_close: an HTTP/1.0 answer ended by the close).
 */
struct MHD_Response *
answer_response(struct MHD_Connection *c, struct answer *a, int chunked)
{
	struct MHD_Response *resp;
	unsigned long long total = 0;
	size_t i;

	a->conn = c;
	for (i = 0; i < a->npiece; i++)
		total += a->plen[i];
	resp = MHD_create_response_from_callback(chunked || a->until_close ?
	    MHD_SIZE_UNKNOWN : total, 64 * 1024, read_answer, a, answer_free);
	if (resp == NULL) {
		answer_free(a);
		return NULL;
	}
	if (a->until_close && MHD_set_response_options(resp,
	    MHD_RF_HTTP_1_0_SERVER, MHD_RO_END) != MHD_YES) {
		MHD_destroy_response(resp);
		return NULL;
	}
	return resp;
}

/*
 * Queue the response of a (taken) with status st and content type
 * ctype, chunked or with its length, with Retry-After when retry_after
 * >= 0 and the headers of extra (an object, or NULL).  Returns MHD's
 * result.
 */
enum MHD_Result
queue(struct MHD_Connection *c, struct answer *a, int st, const char *ctype,
    long retry_after, int chunked, const json_t *extra)
{
	struct MHD_Response *resp = answer_response(c, a, chunked);
	enum MHD_Result rc;

	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (chunked)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
		    "no-cache");
	if (retry_after >= 0) {
		char v[32];

		snprintf(v, sizeof(v), "%ld", retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
	}
	add_headers(resp, extra);
	rc = MHD_queue_response(c, (unsigned)st, resp);
	MHD_destroy_response(resp);
	return rc;
}
