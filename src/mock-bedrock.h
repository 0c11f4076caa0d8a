/*
 * mock-bedrock.h: saop-mock's Amazon Bedrock (src/mock-bedrock.c): the
 * Converse paths, the check of a call's key or SigV4 signature, and the
 * answer (one Converse body, or ConverseStream's binary event stream).
 */
#ifndef SAOP_MOCK_BEDROCK_H
#define SAOP_MOCK_BEDROCK_H

#include <jansson.h>
#include <microhttpd.h>

struct answer;

/* What one Bedrock answer says: saop-mock.c fills it from a reply. */
struct bedrock_answer {
	const char *text;	/* the answer's text ("" when none) */
	const char *tool_name;	/* a toolUse block's name, or NULL */
	const char *tool_args;	/* its input, JSON text */
	const char *refusal;	/* a guardrail's text, or NULL */
	int finish;		/* 0 end_turn, 1 max_tokens, 2 tool_use,
				   3 guardrail_intervened, 4 none: the
				   stream lacks its messageStop */
	long in, out;		/* usage; -1: none reported */
	int status;		/* an error: its HTTP status, or 0 */
	long retry_after;	/* seconds, or -1 */
	int stream;		/* converse-stream */
	const json_t *headers;	/* more response headers, or NULL */
};

/*
 * 1 when url is a Bedrock Converse path (.../model/ID/converse, or
 * .../converse-stream: *stream 1), else 0.
 */
int bedrock_path(const char *url, int *stream);

/*
 * The key state of the Bedrock call on c (method, url, its body of len
 * bytes) against want: with an AWS4-HMAC-SHA256 Authorization, 1 when it
 * is the SigV4 signature of the call under the secret want, else -1;
 * with a bearer token, 1 when it is want, else -1; 0 when none came.
 */
int bedrock_key_state(struct MHD_Connection *c, const char *method,
    const char *url, const char *body, size_t len, const char *want);

/*
 * Queue a on c in the body b (taken: the script's faults set in it, as
 * for every format: answer_faults()): a Converse body or a ConverseStream
 * event stream, each frame a piece; an error status as an exception
 * frame in the stream, or as an HTTP error (x-amzn-ErrorType,
 * {"message"}) without a stream or with a Retry-After.  Returns MHD's
 * result.
 */
enum MHD_Result bedrock_queue(struct MHD_Connection *c, struct answer *b,
    const struct bedrock_answer *a);

#endif
