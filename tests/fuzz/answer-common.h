/*
 * answer-common.h: what the fuzz targets of the model-answer parser share
 * (tests/fuzz/llm-answer.c, tests/fuzz/eventstream.c): the chunking
 * driver that feeds a body to saop__llm_parser_*, and the comparison of
 * two answers.  Include after fuzz.h and saop-private.h.
 */
#ifndef SAOP_FUZZ_ANSWER_COMMON_H
#define SAOP_FUZZ_ANSWER_COMMON_H

#include <string.h>

/*
 * Parse the body data[0..size) (Content-Type ctype, NULL for none)
 * through a new parser of limit bytes (0: the default), fed in the
 * chunks rng chooses (whole when rng is NULL), ending with clean.  Fills
 * a and returns what saop__llm_parser_end returned, after checking what
 * holds of any answer (a raw text ended by a NUL, an error with its
 * message).
 */
static int
fuzz_answer_parse(const uint8_t *data, size_t size, const char *ctype,
    size_t limit, struct fuzz_rng *rng, int clean, struct saop_llm_answer *a,
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

/*
 * Abort unless two answers are the same: code, text, finish reason, tool
 * calls (and the call a cut is in), other choices, server tools,
 * refusal, token counts.
 */
static void
fuzz_answer_same(const struct saop_llm_answer *a,
    const struct saop_llm_answer *b)
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

#endif
