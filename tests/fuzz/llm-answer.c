/*
 * llm-answer.c: fuzz target for the model-answer parser of lib/llm.c
 * (saop__llm_parser_*: SSE, one JSON body, Ollama NDJSON; every wire
 * format: OpenAI chat completions, Anthropic Messages, OpenAI Responses,
 * Gemini, Ollama).  The input is the HTTP body of a 200 answer; its
 * Content-Type (none, SSE, JSON, NDJSON, text) is chosen from the bytes.
 * Properties:
 *  - any split into chunks reads the same answer as the whole body: the
 *    same code, text, finish reason, tool calls (and the call a cut is
 *    in), other choices, server tools, refusal, token counts;
 *  - a body cut short (clean 0) is a finished answer only when the
 *    whole body is one (its end marker came before the cut);
 *  - a body cut short at a random byte and ended clean (a server that
 *    closes an answer sent without length or chunks) is never a finished
 *    answer with another text or other calls than the whole body's;
 *  - with a small size limit the text kept never exceeds the limit;
 *  - never a crash.
 */
#include "config.h"

#include <string.h>

#include "saop-private.h"
#include "fuzz.h"

static const char *const ctypes[] = {
	NULL, NULL, NULL, "text/event-stream; charset=utf-8",
	"application/json", "application/x-ndjson", "text/plain"
};

/*
 * Parse the body through a new parser of limit bytes, fed in the chunks
 * rng chooses (whole when rng is NULL), ending with clean.  Fills a and
 * returns what saop__llm_parser_end returned.
 */
static int
parse(const uint8_t *data, size_t size, const char *ctype, size_t limit,
    struct fuzz_rng *rng, int clean, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct saop__llm_parser *p;
	size_t pos = 0, k;
	int r = 0, rc;

	memset(a, 0, sizeof(*a));
	saop_err_clear(e);
	FUZZ_CHECK((p = saop__llm_parser_new(limit)) != NULL);
	saop__llm_parser_head(p, 200, ctype);
	while (pos < size && r == 0) {
		k = rng != NULL ? fuzz_chunk(rng, size - pos) : size;
		r = saop__llm_parser_feed(p, (const char *)data + pos, k);
		FUZZ_CHECK(r == 0 || r == -SAOP_ELIMIT || r == -SAOP_ENOMEM);
		pos += k;
	}
	rc = saop__llm_parser_end(p, clean, a, e);
	saop__llm_parser_free(p);
	FUZZ_CHECK(a->raw != NULL && a->raw[a->raw_len] == '\0');
	FUZZ_CHECK(rc <= 0);
	FUZZ_CHECK(rc == 0 || (e->code == -rc && e->msg[0] != '\0'));
	return rc;
}

/* Abort unless two answers are the same. */
static void
check_same(const struct saop_llm_answer *a, const struct saop_llm_answer *b)
{
	FUZZ_CHECK(a->raw_len == b->raw_len);
	FUZZ_CHECK(memcmp(a->raw, b->raw, a->raw_len) == 0);
	FUZZ_CHECK(strcmp(a->finish_reason, b->finish_reason) == 0);
	FUZZ_CHECK(a->broken == b->broken);
	FUZZ_CHECK(a->prompt_tokens == b->prompt_tokens);
	FUZZ_CHECK(a->completion_tokens == b->completion_tokens);
	FUZZ_CHECK(a->http_status == b->http_status);
	FUZZ_CHECK((a->tool_calls == NULL && b->tool_calls == NULL) ||
	    json_equal(a->tool_calls, b->tool_calls));
	FUZZ_CHECK(a->open_call == b->open_call);
	FUZZ_CHECK((a->choices == NULL && b->choices == NULL) ||
	    json_equal(a->choices, b->choices));
	FUZZ_CHECK((a->server_tools == NULL && b->server_tools == NULL) ||
	    json_equal(a->server_tools, b->server_tools));
	FUZZ_CHECK((a->refusal == NULL && b->refusal == NULL) ||
	    (a->refusal != NULL && b->refusal != NULL &&
	    strcmp(a->refusal, b->refusal) == 0));
}

/* libFuzzer's entry point: read data as an answer body. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct saop_llm_answer whole, split;
	struct saop_err ew, es;
	struct fuzz_rng rng;
	const char *ctype;
	size_t limit;
	int rw, rs;

	fuzz_rng_seed(&rng, data, size);
	ctype = ctypes[fuzz_rng_below(&rng, sizeof(ctypes) /
	    sizeof(ctypes[0]))];
	rw = parse(data, size, ctype, 0, NULL, 1, &whole, &ew);
	rs = parse(data, size, ctype, 0, &rng, 1, &split, &es);
	FUZZ_CHECK(rw == rs);
	check_same(&whole, &split);
	saop_llm_answer_free(&split);
	/*
	 * A transfer that broke is a finished answer only when the end
	 * marker came before the break: then it is one when whole too.
	 */
	rs = parse(data, size, ctype, 0, &rng, 0, &split, &es);
	FUZZ_CHECK(rs < 0 || (rw == 0 && split.finish_reason[0] != '\0'));
	saop_llm_answer_free(&split);
	/*
	 * Cut at a random byte, then a clean end: finished only with the
	 * whole answer's text and calls (its finish had come).
	 */
	if (size > 0) {
		size_t cut = fuzz_rng_below(&rng, size);

		rs = parse(data, cut, ctype, 0, &rng, 1, &split, &es);
		if (rs == 0 && rw == 0) {
			FUZZ_CHECK(split.raw_len == whole.raw_len &&
			    memcmp(split.raw, whole.raw, whole.raw_len) == 0);
			FUZZ_CHECK((split.tool_calls == NULL &&
			    whole.tool_calls == NULL) ||
			    json_equal(split.tool_calls, whole.tool_calls));
		}
		saop_llm_answer_free(&split);
	}
	/* Under a small limit the text stays within it. */
	limit = 1 + fuzz_rng_below(&rng, 256);
	rs = parse(data, size, ctype, limit, &rng, 1, &split, &es);
	FUZZ_CHECK(split.raw_len <= limit);
	FUZZ_CHECK(rs != 0 || rw == 0);
	saop_llm_answer_free(&split);
	saop_llm_answer_free(&whole);
	return 0;
}
