/*
 * llm-int.h: what the six files of the model client share, and nothing
 * else includes.  Bottom up (each calls only those above it in this
 * list): lib/llm-shown.c (what of a failure may be shown: the key masked,
 * messages clipped, URLs redacted; the kind of failure an error object
 * names), lib/llm-eventstream.c (AWS's binary event-stream frames),
 * lib/llm-sigv4.c (AWS Signature Version 4, declared in saop-private.h),
 * lib/llm-config.c (configuration, the endpoint, a call's signature),
 * lib/llm-request.c (the wire body), lib/llm-answer.c (the answer parser)
 * and lib/llm.c (the transfer over libcurl, which uses them all).  Their
 * growable buffers are lib/buf.c's struct saop__buf.  Never installed.
 */
#ifndef SAOP_LLM_INT_H
#define SAOP_LLM_INT_H

#include <stdint.h>
#include <time.h>

#include "saop-private.h"

#define OPENAI_BASE		"https://api.openai.com/v1"
#define ANTHROPIC_BASE		"https://api.anthropic.com/v1"
#define ANTHROPIC_VERSION	"2023-06-01"
#define GEMINI_BASE		"https://generativelanguage.googleapis.com/v1beta"
/*
 * Claude on Vertex AI: the API version goes in the body, not a header
 * (Google's "Request predictions with Claude models").
 */
#define VERTEX_ANTHROPIC_VERSION	"vertex-2023-10-16"
/* Vertex AI's location when none is set (Google's SDKs' default). */
#define VERTEX_LOCATION		"us-central1"
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
/* Server messages are read up to this size, masked, then cut. */
#define SHOWN_SRC_MAX		4096
/* A run of this many bytes of the key is masked wherever it is. */
#define KEY_RUN_MIN		8

/*
 * What kind of body the answer is: decided by sniffing its first bytes
 * (AWS's binary event stream, M_EVENTS, by its Content-Type alone).
 */
enum mode { M_UNKNOWN, M_SSE, M_JSON, M_NDJSON, M_EVENTS, M_OTHER };

/* One whole AWS event-stream frame, its CRCs verified (borrowed). */
struct saop__es_frame {
	const unsigned char *headers;
	size_t headers_len;
	const char *payload;
	size_t payload_len;
	size_t offset;		/* where it starts in the stream */
};

/* An AWS event-stream decoder: zero it to start. */
struct saop__es {
	struct saop__buf buf;	/* a frame not whole yet */
	size_t offset;		/* bytes of the frames handed on */
	size_t limit;		/* the largest frame (0: 16 MiB) */
	int bad;		/* a frame failed a check: nothing more */
	char why[96];		/* what was wrong with it */
};

/* What is handed each frame; nonzero: no more frames are wanted. */
typedef int (*saop__es_fn)(void *arg, const struct saop__es_frame *f);

/* What a content block (by its index) of an Anthropic answer is. */
enum blk_kind { B_TEXT, B_CALL, B_SERVER, B_OTHER };

/*
 * A tool call (kind B_CALL), or a tool the provider ran (B_SERVER: its
 * block kept whole, its input gathered in args).
 */
struct tool {
	long key;		/* OpenAI tool index, Anthropic block index,
				   Responses output index, Gemini part count */
	char *id, *name;
	struct saop__buf args;
	int server;		/* a provider-run tool: not a call to make */
	json_t *block;		/* server: the block or item as it came */
	int closed;		/* its end came: empty arguments mean {} */
};

/* The kind of one Anthropic content block, by its index. */
struct blk {
	long ix;
	enum blk_kind kind;
};

struct saop__llm_parser;

/* Another choice (n > 1): index and the parser gathering it. */
struct alt {
	long index;
	struct saop__llm_parser *p;
};

struct saop__llm_parser {
	int status;
	enum mode mode;
	char ctype[128];
	struct saop__buf line;	/* an incomplete SSE or NDJSON line */
	int skip_lf;		/* the last line ended with CR */
	struct saop__buf data;	/* the SSE event being read */
	int has_data;
	struct saop__buf body;	/* a JSON body, or an error body */
	struct saop__buf text;	/* the answer text */
	struct tool *tools;
	size_t ntools;
	struct blk *blks;	/* Anthropic block kinds, by index */
	size_t nblks;
	struct alt *alts;	/* the other choices, by index */
	size_t nalts;
	struct saop__buf refusal;	/* OpenAI refusal deltas */
	int refused;		/* refusal text or a refusal finish came */
	int at_end;		/* the body ended: what is left is its tail */
	int tail_cut;		/* that tail was JSON cut short */
	char finish[16];
	int done;		/* [DONE], message_stop or done: true */
	int err;		/* an error inside the stream, or a bad chunk */
	char errmsg[300];
	int fail;		/* ENOMEM or ELIMIT while reading */
	long prompt, completion;
	long cached, reasoning;	/* of prompt and completion; -1 not told */
	size_t received;	/* body bytes */
	size_t limit;
	const char *key;	/* borrowed: masked out of error messages */
	/* Where things are, to name a bad event: */
	size_t lpos;		/* body bytes through the line splitter */
	size_t line_start;	/* the offset of the line held in line */
	size_t line_off;	/* the offset of the line being read */
	size_t unit_off;	/* the offset of this SSE event or NDJSON
				   line */
	unsigned long units;	/* SSE data events or NDJSON lines so far */
	int in_event;		/* a line of the current SSE event came */
	struct saop__es es;	/* M_EVENTS: the frame decoder */
};

/*
 * ---- lib/llm-shown.c: what may be shown, and the kind of failure ----
 * (saop__llm_url_redact() is in saop-private.h, for the tests.)
 */

/*
 * Replace in s every run of KEY_RUN_MIN or more bytes of key by "****"
 * (keys shorter than 4 bytes are left).
 */
void saop__llm_mask_secret(char *s, const char *key);

/*
 * Copy src into out (outsz bytes) as at most max bytes, cut at a UTF-8
 * character boundary and ended by "..." when cut.
 */
void saop__llm_clip(char *out, size_t outsz, const char *src, size_t max);

/*
 * Fill e as saop__fail() does, the message masked of key before it is cut
 * to size.  Returns -code.
 */
int saop__llm_fail_masked(struct saop_err *e, int code, const char *key,
    const char *fmt, ...) SAOP__PRINTF(4, 5);

/* Copy s into out as one printable line of at most outsz - 1 bytes. */
void saop__llm_one_line(char *out, size_t outsz, const char *s);

/*
 * Classify an error object (or string) from an error body or inside a
 * stream, by its type or code, then by the HTTP status; its message goes
 * to msg as one line.  Returns the SAOP code (positive).
 */
int saop__llm_classify_error(const json_t *err, int status, char *msg,
    size_t msgsz);

/*
 * The delay a Google error object asks for (details[] RetryInfo
 * retryDelay) in milliseconds, or -1 when it names none.
 */
long saop__llm_retry_delay_ms(const json_t *err);

/* ---- lib/llm-eventstream.c: AWS's binary event stream ---- */

/* (saop__crc32() is in saop-private.h, for saop-mock.) */

/*
 * Feed n more bytes of an event stream to d: every whole frame whose CRCs
 * and headers are sound goes to fn(arg, frame), in order, until fn
 * returns nonzero.  Returns 0; -1 once a frame failed a check (d->why
 * says how; d->offset is where it starts; nothing of it or after it is
 * handed on, now or later); or -SAOP_ENOMEM / -SAOP_ELIMIT.
 */
int saop__es_feed(struct saop__es *d, const char *s, size_t n,
    saop__es_fn fn, void *arg);

/* Free what d holds and zero it. */
void saop__es_free(struct saop__es *d);

/*
 * The value of f's string header name (":event-type"...) and its length
 * in *len, or NULL when f has none (borrowed: not NUL-terminated).
 */
const char *saop__es_header(const struct saop__es_frame *f,
    const char *name, size_t *len);

/* 1 when f's string header name is v, else 0. */
int saop__es_header_is(const struct saop__es_frame *f, const char *name,
    const char *v);

/* ---- lib/llm-config.c: the endpoint ---- */

/*
 * The endpoint URL of cfg for model (base URL plus the provider's path,
 * before any query).  A new string (free()), or NULL on ENOMEM.
 */
char *saop__llm_endpoint(const struct saop_llm_config *cfg,
    const char *model);

/*
 * The model a call of request goes to: its "model", else cfg->model (may
 * be NULL).  Borrowed.
 */
const char *saop__llm_model_of(const struct saop_llm_config *cfg,
    const json_t *request);

/*
 * The header line carrying key for provider p ("Authorization: Bearer",
 * "x-api-key", "x-goog-api-key").  A new string, or NULL on ENOMEM.
 */
char *saop__llm_auth_header(enum saop_provider p, const char *key);

/*
 * The key's header line for cfg with shown_key as the key ("Authorization:
 * Bearer ...", "x-api-key: ...", "$SAOP_AUTH_HEADER: ...").  New string
 * (free()), or NULL on ENOMEM.
 */
char *saop__llm_auth_line(const struct saop_llm_config *cfg,
    const char *shown_key);

/* 1 when cfg's own headers replace the one named as hdr ("Name: ..."). */
int saop__llm_header_given(const struct saop_llm_config *cfg,
    const char *hdr);

/*
 * 1 when a call of cfg is signed with AWS Signature Version 4 (Bedrock
 * with AWS credentials and a region, no bearer token), else 0.
 */
int saop__llm_sigv4_wanted(const struct saop_llm_config *cfg);

/*
 * Sign a call of cfg (saop__llm_sigv4_wanted()) to url with body at the
 * time now (UTC): out filled, amz_date the x-amz-date header's value.
 * Returns 0 or a negative code (saop__sigv4_sign()).
 */
int saop__llm_sigv4(const struct saop_llm_config *cfg, const char *url,
    const char *body, time_t now, char amz_date[17],
    struct saop__sigv4_out *out);

/* ---- lib/llm-schema.c: the user's schema on the wire ---- */

/*
 * Add cfg's schema to body, the wire body of request (the native field,
 * or the system prompt); keep the request's own field; take every
 * structured-output field out of a continuation.  Returns 0, or -1 on
 * ENOMEM.
 */
int saop__llm_schema_apply(json_t *body, const struct saop_llm_config *cfg,
    const json_t *request);

/*
 * Is request a continuation of a cut answer (its messages end with the
 * answer so far as the assistant's turn, or with the resume prompt)?
 * Does it carry a structured-output field of its own?  1 or 0.
 */
int saop__llm_is_continuation(const json_t *request);
int saop__llm_has_own(const json_t *request);

/* ---- lib/llm-answer.c: JSON and the answer ---- */

/*
 * Parse the n bytes at s as one JSON text (integers beyond 64 bits read
 * as reals).  Returns a new reference, or NULL with je filled.
 */
json_t *saop__llm_load(const char *s, size_t n, json_error_t *je);

/*
 * Move what p gathered into a: the text, the finish reason, the token
 * counts, the status and the tool calls.  Returns 0, or -SAOP_ENOMEM.
 */
int saop__llm_fill_answer(struct saop__llm_parser *p,
    struct saop_llm_answer *a);

#endif /* SAOP_LLM_INT_H */
