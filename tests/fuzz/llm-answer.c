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
#include "answer-common.h"

static const char *const ctypes[] = {
	NULL, NULL, NULL, "text/event-stream; charset=utf-8",
	"application/json", "application/x-ndjson", "text/plain"
};

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
	rw = fuzz_answer_parse(data, size, ctype, 0, NULL, 1, &whole, &ew);
	rs = fuzz_answer_parse(data, size, ctype, 0, &rng, 1, &split, &es);
	FUZZ_CHECK(rw == rs);
	fuzz_answer_same(&whole, &split);
	saop_llm_answer_free(&split);
	/*
	 * A transfer that broke is a finished answer only when the end
	 * marker came before the break: then it is one when whole too.
	 */
	rs = fuzz_answer_parse(data, size, ctype, 0, &rng, 0, &split, &es);
	FUZZ_CHECK(rs < 0 || (rw == 0 && split.finish_reason[0] != '\0'));
	saop_llm_answer_free(&split);
	/*
	 * Cut at a random byte, then a clean end: finished only with the
	 * whole answer's text and calls (its finish had come).
	 */
	if (size > 0) {
		size_t cut = fuzz_rng_below(&rng, size);

		rs = fuzz_answer_parse(data, cut, ctype, 0, &rng, 1, &split,
		    &es);
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
	rs = fuzz_answer_parse(data, size, ctype, limit, &rng, 1, &split, &es);
	FUZZ_CHECK(split.raw_len <= limit);
	FUZZ_CHECK(rs != 0 || rw == 0);
	saop_llm_answer_free(&split);
	saop_llm_answer_free(&whole);
	return 0;
}
