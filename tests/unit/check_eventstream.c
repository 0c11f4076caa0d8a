/*
 * check_eventstream.c: AWS's binary event stream (lib/llm-eventstream.c)
 * and Amazon Bedrock's Converse answers read from it (lib/llm-answer.c).
 * The decoder against botocore's test vectors (tests/fixtures/bedrock/
 * SOURCE): every good frame decoded with its headers, every corrupted
 * one refused; the CRC-32 against its check value.  A ConverseStream
 * answer, framed here, read whole and at every split the same; cut at
 * every byte a broken answer whose text is a prefix of the whole one's;
 * with any one byte damaged never a finished answer, never more text
 * than the whole one's; exceptions classified as error bodies are; tool
 * calls, finish reasons and usage mapped; the whole Converse body.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"
#include "llm-int.h"
#include "unit.h"

/* ---- botocore's vectors (tests/unit/test_eventstream.py) ---- */

static const char *const good_hex[] = {
	/* EMPTY_MESSAGE */
	"000000100000000005c248eb7d98c8ff",
	/* INT8_HEADER */
	"000000170000000729860158046279746502ffc2f869dc",
	/* INT64_HEADER */
	"0000001e0000000e5d4adb8d046c6f6e6705ffffffffffffffff4bc232da",
	/* PAYLOAD_NO_HEADERS */
	"0000001d00000000fd528c5a7b27666f6f273a27626172277dc3653936",
	/* PAYLOAD_ONE_STR_HEADER */
	"0000003d0000002007fd83960c636f6e74656e742d747970650700106170706c"
	"69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1",
	/* ALL_HEADERS_TYPES */
	"000000620000005203b5cb9c0130000131010132020201330300030134040000"
	"0004013505000000000000000501360600056279746573013707000475746638"
	"0138080000000000000008013909303132333435363738396162636465666335"
	"3671",
	/* ERROR_EVENT_MESSAGE */
	"0000005200000042bf23637e0d3a6d6573736167652d74797065070005657272"
	"6f720b3a6572726f722d636f6465070004636f64650e3a6572726f722d6d6573"
	"736167650700076d6573736167656b6cea3d",
};

static const char *const bad_hex[] = {
	/* CORRUPTED_LENGTH */
	"0100001d00000000fd528c5a7b27666f6f273a27626172277dc3653936",
	/* CORRUPTED_PAYLOAD */
	"0000001d00000000fd528c5a7b27666f6f273a27626172278dc3653936",
	/* CORRUPTED_HEADERS */
	"0000003d0000002007fd83960c636f6e74656e742b747970650700106170706c"
	"69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1",
	/* CORRUPTED_HEADER_LENGTH */
	"0000003dff00010207fd83960c636f6e74656e742d747970650700106170706c"
	"69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1",
	/* INVALID_HEADERS_LENGTH */
	"0000003dff0001021583f5c20c636f6e74656e742d747970650700106170706c"
	"69636174696f6e2f6a736f6e7b27666f6f273a27626172277d2f377f5d",
	/* INVALID_PAYLOAD_LENGTH (its prelude) */
	"0180002100000000dd3f33b1",
};

/* The expected header count of each good vector, in order. */
static const int good_headers[] = { 0, 1, 1, 0, 1, 10, 3 };

/* The n bytes of hex h into out (room for n / 2).  Returns the length. */
static size_t
unhex(const char *h, unsigned char *out)
{
	size_t i, n = strlen(h) / 2;
	unsigned v;

	for (i = 0; i < n; i++) {
		ck_assert(sscanf(h + 2 * i, "%2x", &v) == 1);
		out[i] = (unsigned char)v;
	}
	return n;
}

/* Counts the frames and headers handed on. */
struct seen {
	int frames, headers;
	size_t payload;
	char etype[32];
};

/* A saop__es_fn: count f and its headers. */
static int
count_frame(void *arg, const struct saop__es_frame *f)
{
	struct seen *s = arg;
	size_t i = 0, n;
	const char *et;

	s->frames++;
	s->payload += f->payload_len;
	while (i < f->headers_len) {
		s->headers++;
		i += 1 + f->headers[i];
		switch (f->headers[i]) {
		case 0: case 1: n = 0; break;
		case 2: n = 1; break;
		case 3: n = 2; break;
		case 4: n = 4; break;
		case 5: case 8: n = 8; break;
		case 9: n = 16; break;
		default:
			n = 2 + ((size_t)f->headers[i + 1] << 8 |
			    f->headers[i + 2]);
		}
		i += 1 + n;
	}
	if ((et = saop__es_header(f, ":error-code", &n)) != NULL)
		snprintf(s->etype, sizeof(s->etype), "%.*s", (int)n, et);
	return 0;
}

START_TEST(crc32_check_value)
{
	ck_assert_uint_eq(saop__crc32(0, "123456789", 9), 0xCBF43926u);
	ck_assert_uint_eq(saop__crc32(0, "", 0), 0);
	/* Continued: the same as at once. */
	ck_assert_uint_eq(saop__crc32(saop__crc32(0, "1234", 4), "56789", 5),
	    0xCBF43926u);
}
END_TEST

/* Every good vector decodes, whole and a byte at a time. */
START_TEST(good_vectors_decode)
{
	unsigned char b[256];
	size_t n = unhex(good_hex[_i], b), k;
	struct saop__es d;
	struct seen s;

	memset(&d, 0, sizeof(d));
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(saop__es_feed(&d, (char *)b, n, count_frame, &s), 0);
	ck_assert_int_eq(s.frames, 1);
	ck_assert_int_eq(s.headers, good_headers[_i]);
	saop__es_free(&d);
	memset(&s, 0, sizeof(s));
	for (k = 0; k < n; k++)
		ck_assert_int_eq(saop__es_feed(&d, (char *)b + k, 1,
		    count_frame, &s), 0);
	ck_assert_int_eq(s.frames, 1);
	ck_assert_int_eq(d.buf.len, 0);
	if (_i == 6)
		ck_assert_str_eq(s.etype, "code");
	saop__es_free(&d);
}
END_TEST

/* Every corrupted vector is refused, and nothing of it handed on. */
START_TEST(bad_vectors_are_refused)
{
	unsigned char b[256];
	size_t n = unhex(bad_hex[_i], b);
	struct saop__es d;
	struct seen s;

	memset(&d, 0, sizeof(d));
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(saop__es_feed(&d, (char *)b, n, count_frame, &s), -1);
	ck_assert_int_eq(s.frames, 0);
	ck_assert(d.bad && d.why[0] != '\0');
	/* Once bad, nothing more, not even a good frame. */
	n = unhex(good_hex[0], b);
	ck_assert_int_eq(saop__es_feed(&d, (char *)b, n, count_frame, &s), -1);
	ck_assert_int_eq(s.frames, 0);
	saop__es_free(&d);
}
END_TEST

/* ---- Converse answers ---- */

/*
 * Append to out one frame: :message-type mt, its :event-type (or
 * :exception-type) et, :content-type application/json, payload pl.
 */
static void
frame(struct saop__buf *out, const char *mt, const char *et, const char *pl)
{
	unsigned char h[256], pre[12], crc[4];
	size_t hl = 0, pll = strlen(pl);
	uint32_t total, c;
	const char *names[3] = { ":message-type", NULL, ":content-type" };
	const char *vals[3] = { mt, et, "application/json" };
	size_t i, k;

	names[1] = strcmp(mt, "exception") == 0 ? ":exception-type" :
	    ":event-type";
	for (i = 0; i < 3; i++) {
		k = strlen(names[i]);
		h[hl++] = (unsigned char)k;
		memcpy(h + hl, names[i], k);
		hl += k;
		h[hl++] = 7;
		k = strlen(vals[i]);
		h[hl++] = (unsigned char)(k >> 8);
		h[hl++] = (unsigned char)k;
		memcpy(h + hl, vals[i], k);
		hl += k;
	}
	total = (uint32_t)(16 + hl + pll);
	for (i = 0; i < 4; i++) {
		pre[i] = (unsigned char)(total >> (24 - 8 * i));
		pre[4 + i] = (unsigned char)(hl >> (24 - 8 * i));
	}
	c = saop__crc32(0, pre, 8);
	for (i = 0; i < 4; i++)
		pre[8 + i] = (unsigned char)(c >> (24 - 8 * i));
	c = saop__crc32(0, pre, 12);
	c = saop__crc32(c, h, hl);
	c = saop__crc32(c, pl, pll);
	for (i = 0; i < 4; i++)
		crc[i] = (unsigned char)(c >> (24 - 8 * i));
	ck_assert(saop__buf_append(out, pre, 12) == 0);
	ck_assert(saop__buf_append(out, h, hl) == 0);
	ck_assert(saop__buf_append(out, pl, pll) == 0);
	ck_assert(saop__buf_append(out, crc, 4) == 0);
}

/*
 * The event stream of a ConverseStream answer ending with stop; its length
 * before the last frame (metadata) in *before when before is not NULL.
 */
static void
text_stream(struct saop__buf *b, const char *stop, size_t *before)
{
	char ms[96];

	frame(b, "event", "messageStart", "{\"role\":\"assistant\",\"p\":\"ab\"}");
	frame(b, "event", "contentBlockDelta", "{\"contentBlockIndex\":0,"
	    "\"delta\":{\"text\":\"{\\\"city\\\": \"},\"p\":\"abcdef\"}");
	frame(b, "event", "contentBlockDelta", "{\"contentBlockIndex\":0,"
	    "\"delta\":{\"reasoningContent\":{\"text\":\"hmm\"}}}");
	frame(b, "event", "contentBlockDelta", "{\"contentBlockIndex\":0,"
	    "\"delta\":{\"text\":\"\\\"Paris\\\"}\"}}");
	frame(b, "event", "contentBlockStop", "{\"contentBlockIndex\":0}");
	snprintf(ms, sizeof(ms), "{\"stopReason\":\"%s\"}", stop);
	frame(b, "event", "messageStop", ms);
	if (before != NULL)
		*before = b->len;
	frame(b, "event", "metadata", "{\"usage\":{\"inputTokens\":25,"
	    "\"outputTokens\":9,\"totalTokens\":34,\"cacheReadInputTokens\":"
	    "0},\"metrics\":{\"latencyMs\":300}}");
}

/*
 * Parse the n bytes at s as an event-stream answer fed in chunks of k
 * bytes (0: whole), ended with clean.  Returns saop__llm_parser_end's.
 */
static int
parse(const char *s, size_t n, size_t k, int clean,
    struct saop_llm_answer *a, struct saop_err *e)
{
	struct saop__llm_parser *p = saop__llm_parser_new(0);
	size_t at, c;
	int rc;

	memset(a, 0, sizeof(*a));
	saop_err_clear(e);
	ck_assert_ptr_nonnull(p);
	saop__llm_parser_head(p, 200, "application/vnd.amazon.eventstream");
	for (at = 0; at < n; at += c) {
		c = k == 0 || k > n - at ? n - at : k;
		ck_assert_int_eq(saop__llm_parser_feed(p, s + at, c), 0);
	}
	rc = saop__llm_parser_end(p, clean, a, e);
	saop__llm_parser_free(p);
	return rc;
}

START_TEST(a_stream_reads_the_same_at_every_split)
{
	struct saop__buf b = { 0 };
	struct saop_llm_answer a;
	struct saop_err e;
	size_t k;

	text_stream(&b, "end_turn", NULL);
	for (k = 0; k < 40; k++) {
		ck_assert_int_eq(parse(b.data, b.len, k, 1, &a, &e), 0);
		ck_assert_str_eq(a.raw, "{\"city\": \"Paris\"}");
		ck_assert_str_eq(a.finish_reason, "stop");
		ck_assert_int_eq(a.prompt_tokens, 25);
		ck_assert_int_eq(a.completion_tokens, 9);
		ck_assert(!a.broken);
		saop_llm_answer_free(&a);
	}
	saop__buf_free(&b);
}
END_TEST

/*
 * Cut at every byte, the server closing cleanly: a broken answer (a lost
 * network) whose text is a prefix of the whole one; finished only when
 * the server closed cleanly after the finish reason came (as for SSE).
 */
START_TEST(a_stream_cut_at_every_byte_is_a_broken_answer)
{
	struct saop__buf b = { 0 };
	struct saop_llm_answer a;
	struct saop_err e;
	size_t k, stop;
	int rc;

	text_stream(&b, "max_tokens", &stop);
	for (k = 0; k < b.len; k++) {
		rc = parse(b.data, k, 7, _i, &a, &e);
		if (_i == 1 && k >= stop) {
			ck_assert_int_eq(rc, 0);
			ck_assert_str_eq(a.finish_reason, "length");
		} else {
			ck_assert_msg(rc == -SAOP_ENETWORK, "cut at %zu: %d "
			    "(%s)", k, rc, e.msg);
			ck_assert(a.broken);
		}
		ck_assert(strncmp(a.raw, "{\"city\": \"Paris\"}", a.raw_len) ==
		    0);
		saop_llm_answer_free(&a);
	}
	ck_assert_int_eq(parse(b.data, b.len, 7, 1, &a, &e), 0);
	ck_assert_str_eq(a.finish_reason, "length");
	saop_llm_answer_free(&a);
	saop__buf_free(&b);
}
END_TEST

/*
 * Any one byte damaged: a lost network at that frame (ENETWORK, broken),
 * the text a prefix of the whole one's, never merged on.
 */
START_TEST(a_damaged_byte_is_never_read)
{
	struct saop__buf b = { 0 };
	struct saop_llm_answer a;
	struct saop_err e;
	size_t k;
	int rc;

	text_stream(&b, "end_turn", NULL);
	for (k = 0; k < b.len; k++) {
		b.data[k] ^= 0x20;
		rc = parse(b.data, b.len, _i == 0 ? 0 : 5, 1, &a, &e);
		b.data[k] ^= 0x20;
		ck_assert_msg(rc == -SAOP_ENETWORK, "byte %zu: %d (%s)", k,
		    rc, e.msg);
		ck_assert(a.broken);
		ck_assert(strstr(e.msg, "damaged") != NULL);
		ck_assert(strncmp(a.raw, "{\"city\": \"Paris\"}", a.raw_len) ==
		    0);
		saop_llm_answer_free(&a);
	}
	saop__buf_free(&b);
}
END_TEST

/* Exceptions inside the stream and the codes they are classified as. */
static const struct {
	const char *type;
	int code;
} exceptions[] = {
	{ "throttlingException", SAOP_ERATELIMIT },
	{ "modelStreamErrorException", SAOP_ENETWORK },
	{ "serviceUnavailableException", SAOP_ENETWORK },
	{ "internalServerException", SAOP_ENETWORK },
	{ "validationException", SAOP_EBADREQ },
	{ "accessDeniedException", SAOP_EREFUSED },
};

START_TEST(exceptions_are_classified)
{
	struct saop__buf b = { 0 };
	struct saop_llm_answer a;
	struct saop_err e;

	frame(&b, "event", "messageStart", "{\"role\":\"assistant\"}");
	frame(&b, "event", "contentBlockDelta", "{\"contentBlockIndex\":0,"
	    "\"delta\":{\"text\":\"{\\\"a\\\"\"}}");
	frame(&b, "exception", exceptions[_i].type,
	    "{\"message\":\"the model said no\"}");
	ck_assert_int_eq(parse(b.data, b.len, 3, 1, &a, &e),
	    -exceptions[_i].code);
	ck_assert(strstr(e.msg, "the model said no") != NULL);
	ck_assert_str_eq(a.finish_reason, "error");
	saop_llm_answer_free(&a);
	saop__buf_free(&b);
}
END_TEST

/* A tool call: its id, name and streamed input; tool_use: tool_calls. */
START_TEST(a_tool_call_streams)
{
	struct saop__buf b = { 0 };
	struct saop_llm_answer a;
	struct saop_err e;
	json_t *c;

	frame(&b, "event", "messageStart", "{\"role\":\"assistant\"}");
	frame(&b, "event", "contentBlockDelta", "{\"contentBlockIndex\":0,"
	    "\"delta\":{\"text\":\"Let me look.\"}}");
	frame(&b, "event", "contentBlockStop", "{\"contentBlockIndex\":0}");
	frame(&b, "event", "contentBlockStart", "{\"contentBlockIndex\":1,"
	    "\"start\":{\"toolUse\":{\"toolUseId\":\"tooluse_1\",\"name\":"
	    "\"weather\"}}}");
	frame(&b, "event", "contentBlockDelta", "{\"contentBlockIndex\":1,"
	    "\"delta\":{\"toolUse\":{\"input\":\"{\\\"city\\\":\"}}}");
	frame(&b, "event", "contentBlockDelta", "{\"contentBlockIndex\":1,"
	    "\"delta\":{\"toolUse\":{\"input\":\"\\\"Paris\\\"}\"}}}");
	frame(&b, "event", "contentBlockStop", "{\"contentBlockIndex\":1}");
	frame(&b, "event", "messageStop", "{\"stopReason\":\"tool_use\"}");
	frame(&b, "event", "metadata", "{\"usage\":{\"inputTokens\":3,"
	    "\"outputTokens\":4}}");
	ck_assert_int_eq(parse(b.data, b.len, 0, 1, &a, &e), 0);
	ck_assert_str_eq(a.finish_reason, "tool_calls");
	ck_assert_str_eq(a.raw, "Let me look.");
	c = json_array_get(a.tool_calls, 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "id")),
	    "tooluse_1");
	c = json_object_get(c, "function");
	ck_assert_str_eq(json_string_value(json_object_get(c, "name")),
	    "weather");
	ck_assert_str_eq(json_string_value(json_object_get(c, "arguments")),
	    "{\"city\":\"Paris\"}");
	saop_llm_answer_free(&a);
	saop__buf_free(&b);
}
END_TEST

/* A guardrail or content filter is a refusal. */
START_TEST(a_guardrail_is_a_refusal)
{
	struct saop__buf b = { 0 };
	struct saop_llm_answer a;
	struct saop_err e;

	text_stream(&b, _i == 0 ? "guardrail_intervened" :
	    "content_filtered", NULL);
	ck_assert_int_eq(parse(b.data, b.len, 0, 1, &a, &e), -SAOP_EREFUSED);
	ck_assert_str_eq(a.finish_reason, "refusal");
	saop_llm_answer_free(&a);
	saop__buf_free(&b);
}
END_TEST

/* The whole Converse body: text, a call, finish, usage. */
START_TEST(a_whole_converse_body)
{
	static const char body[] = "{\"output\":{\"message\":{\"role\":"
	    "\"assistant\",\"content\":[{\"text\":\"Sure.\"},{\"toolUse\":{"
	    "\"toolUseId\":\"t1\",\"name\":\"f\",\"input\":{\"x\":1}}}]}},"
	    "\"stopReason\":\"tool_use\",\"usage\":{\"inputTokens\":12,"
	    "\"outputTokens\":7,\"totalTokens\":19},\"metrics\":{"
	    "\"latencyMs\":1}}";
	struct saop__llm_parser *p = saop__llm_parser_new(0);
	struct saop_llm_answer a;
	struct saop_err e;

	memset(&a, 0, sizeof(a));
	saop__llm_parser_head(p, 200, "application/json");
	ck_assert_int_eq(saop__llm_parser_feed(p, body, strlen(body)), 0);
	ck_assert_int_eq(saop__llm_parser_end(p, 1, &a, &e), 0);
	saop__llm_parser_free(p);
	ck_assert_str_eq(a.raw, "Sure.");
	ck_assert_str_eq(a.finish_reason, "tool_calls");
	ck_assert_int_eq(a.prompt_tokens, 12);
	ck_assert_int_eq(a.completion_tokens, 7);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(a.tool_calls, 0), "function"), "arguments")),
	    "{\"x\":1}");
	saop_llm_answer_free(&a);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("eventstream");
	TCase *tc = tcase_create("eventstream");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, crc32_check_value);
	tcase_add_loop_test(tc, good_vectors_decode, 0,
	    (int)(sizeof(good_hex) / sizeof(good_hex[0])));
	tcase_add_loop_test(tc, bad_vectors_are_refused, 0,
	    (int)(sizeof(bad_hex) / sizeof(bad_hex[0])));
	tcase_add_test(tc, a_stream_reads_the_same_at_every_split);
	tcase_add_loop_test(tc, a_stream_cut_at_every_byte_is_a_broken_answer,
	    0, 2);
	tcase_add_loop_test(tc, a_damaged_byte_is_never_read, 0, 2);
	tcase_add_loop_test(tc, exceptions_are_classified, 0,
	    (int)(sizeof(exceptions) / sizeof(exceptions[0])));
	tcase_add_test(tc, a_tool_call_streams);
	tcase_add_loop_test(tc, a_guardrail_is_a_refusal, 0, 2);
	tcase_add_test(tc, a_whole_converse_body);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
