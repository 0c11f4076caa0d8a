/*
 * mock.h: what saop-mock's files share.  saop-mock.c owns the options
 * and the run; mock-script.c reads the script and hands out its replies;
 * mock-answer.c holds a body in pieces and sends it with its faults (and
 * the error bodies); mock-openai.c, mock-responses.c, mock-anthropic.c
 * and mock-gemini.c write a reply in their format; mock-http.c is the
 * server: a request's connection, its log line, its key, its reply;
 * mock-oracle.c and mock-replay.c are --oracle and --replay.
 */
#ifndef SAOP_MOCK_H
#define SAOP_MOCK_H

#include <stdio.h>

#include <jansson.h>
#include <microhttpd.h>

#include "cli.h"

struct recorded;

/* What a reply ends with, as saop reads it; each format writes its own. */
/* FIN_NONE: the stream ends cleanly with no finish at all. */
enum finish { FIN_STOP, FIN_LENGTH, FIN_TOOL, FIN_REFUSAL, FIN_NONE };

/* One reply of the script (one line). */
struct reply {
	long line;		/* its line in the script */
	const char *text;	/* the answer ("" when none) */
	int length;		/* "finish": "length" */
	int no_finish;		/* "finish": null */
	long split;		/* characters a streamed piece (4) */
	int no_answer;		/* closed with no status line */
	long chunks;		/* bytes a chunk (the most), 0: a piece */
	int random_chunks;	/* 1 to chunks bytes, drawn from seed */
	unsigned long seed;
	int until_close;	/* no length, no chunks: ends at the close */
	const char *tool_name;	/* tool_call.name, or NULL */
	char *tool_args;	/* tool_call.arguments as text (malloc) */
	int status;		/* 0: 200 and an answer */
	long retry_after;	/* seconds, or -1 */
	long drop_after;	/* bytes of the body, or -1 */
	int reset;		/* the drop is an RST */
	long delay_ms;		/* before the first byte */
	long chunk_delay_ms;	/* between the pieces of the body */
	const char *refusal;	/* refusal text, or NULL */
	long usage_in, usage_out;	/* -1: estimated */
	char *body;		/* "body": sent as it is (malloc), or NULL */
	const char *type;	/* its Content-Type */
	const json_t *headers;	/* more response headers, or NULL */
	const struct recorded *rec;	/* "recording", or NULL */
	int stream_error;	/* an error's status inside the stream, 0 */
	const char *stream_error_msg;	/* its message */
	int stream;		/* -1: as asked; 0 whole, 1 streamed */
	long comments;		/* SSE comment lines first */
	const char *match;	/* only for a request body holding it */
	int any_key;		/* served whatever key came */
	int served;		/* taken already (under lock) */
};

/* The wire format a request's path asks for. */
enum wire { W_OPENAI, W_RESPONSES, W_ANTHROPIC, W_GEMINI, W_BEDROCK };

/* A body to send: pieces handed to MHD one by one, and the faults. */
struct answer {
	char **piece;
	size_t *plen;		/* each piece's length */
	size_t npiece, cap;
	size_t at, off;		/* the piece being sent, and how far */
	unsigned long long sent;	/* bytes of the body sent */
	long drop_after, chunk_delay_ms;
	int reset;
	long chunks;		/* the reply's */
	int random_chunks;
	unsigned long long rng;	/* xorshift64's state */
	size_t chunk_left;	/* bytes left of the chunk being sent */
	int until_close;	/* the reply's */
	struct MHD_Connection *conn;
	int oom;		/* a piece could not be made */
};

/* What one answer is made of, whatever its format. */
struct said {
	const struct reply *r;
	enum finish fin;
	const char *model;
	long in, out;		/* usage; -1: none reported */
	int stream;		/* pieces: SSE events (or Gemini's array) */
	int gemini_array;	/* Gemini streaming without alt=sse */
};

/* The run's settings, from the options (saop-mock.c). */
extern const char *script_path;		/* --script */
extern const char *oracle_path;		/* --oracle */
extern const char *replay_path;		/* --replay */
extern const char *key_header;		/* --key-header */
extern const char *want_key;		/* --key-env's variable's value */
extern int no_usage;			/* --no-usage */
extern int by_model;			/* --match model */
extern int exhausted_status;		/* --exhausted; 0: last repeats */
extern long max_requests;		/* --max-requests, 0: none */
extern char *tls_cert;			/* --tls-cert's PEM text, or NULL */
extern char *tls_key;			/* --tls-key's PEM text, or NULL */
extern struct cli cli_opts;

/* The server's state (mock-http.c). */
extern FILE *log_file;			/* --log's, or NULL */
extern int wake[2];			/* the main loop's self-pipe */
extern long requests_answered;	/* requests answered */

/* mock-script.c */

/*
 * Read the script at path: one reply per line, blank lines and lines
 * starting with '#' skipped.  Exits 66 when it cannot be read, 65 when a
 * line is not a reply or there is none.
 */
void script_load(const char *path);

/*
 * The reply for a request of body (NUL-ended; NULL: none), under the
 * caller's lock: the first not taken yet whose "match" (when it has one)
 * is in body; when none is left, the last reply, or NULL with
 * --exhausted.
 */
const struct reply *script_take(const char *body);

/* Free what script_load() read. */
void script_free(void);

/* mock-answer.c */

/* Append s (taken: freed here on failure) as a piece of a. */
void add_piece(struct answer *a, char *s);

/* Append the n bytes at s (taken: freed here on failure) as a piece. */
void add_bytes(struct answer *a, char *s, size_t n);

/* Take the reply r's chunks, their delay, its drop and framing into a. */
void answer_faults(struct answer *a, const struct reply *r);

/*
 * A new MHD response of a (a->conn set to c; freed with it, or here when
 * NULL is returned: out of memory), of unknown length when chunked (or
 * until_close: an HTTP/1.0 answer ended by the close).
 */
struct MHD_Response *answer_response(struct MHD_Connection *c,
    struct answer *a, int chunked);

/* Append o (taken) as JSON text, compact, a piece of its own. */
void add_json(struct answer *a, json_t *o);

/* Append o (taken) as one SSE event, with "event: name" when not NULL. */
void add_event(struct answer *a, const char *name, json_t *o);

/* Free a and its pieces (MHD's free callback: a void *). */
void answer_free(void *cls);

/*
 * End the connection of a (a->conn) in the middle of its body, or before
 * it: an RST when a->reset, else a FIN.
 */
void drop(struct answer *a);

/* Sleep ms milliseconds (signals do not cut it short). */
void mock_sleep_ms(long ms);

/*
 * The next piece of *s, at most chars characters (never a character
 * cut), as a new JSON string (advancing *s), or NULL at its end.
 */
json_t *next_piece(const char **s, long chars);

/* The tool's arguments as a JSON object ({} when they are not one). */
json_t *args_object(const struct reply *r);

/* The error type of HTTP status st (OpenAI's and Anthropic's type). */
const char *error_type(int st);

/* Gemini's status word of HTTP status st (RESOURCE_EXHAUSTED...). */
const char *gemini_status(int st);

/* Append the error body of status st with msg, as the format w writes it. */
void write_error(struct answer *a, enum wire w, int st, const char *msg);

/* Add the headers of the object extra (NULL: none) to resp. */
void add_headers(struct MHD_Response *resp, const json_t *extra);

/*
 * Queue the response of a (taken) with status st and content type
 * ctype, chunked or with its length, with Retry-After when retry_after
 * >= 0 and the headers of extra (an object, or NULL).  Returns MHD's
 * result.
 */
enum MHD_Result queue(struct MHD_Connection *c, struct answer *a, int st,
    const char *ctype, long retry_after, int chunked, const json_t *extra);

/* The four formats: append the answer s to a, streamed or whole. */
void write_openai(struct answer *a, const struct said *s);
void write_responses(struct answer *a, const struct said *s);
void write_anthropic(struct answer *a, const struct said *s);
void write_gemini(struct answer *a, const struct said *s);

/* mock-http.c */

/*
 * Start MHD on host and port, HTTPS with tls_cert and tls_key when set;
 * exits 69 when it cannot listen.
 */
struct MHD_Daemon *mock_start(const char *host, long port);

#endif
