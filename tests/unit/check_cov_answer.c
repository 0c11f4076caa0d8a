/*
 * check_cov_answer.c: the shapes of a whole answer body (not a stream)
 * that no other test fed the answer parser (lib/llm-answer.c, issue 25):
 * an OpenAI message whose content is a list of parts; a Responses body
 * (a message, a refusal, a call beside a tool the provider ran, each
 * status); Gemini bodies (thoughts, calls, code run, a blocked prompt,
 * the array streamGenerateContent gives without SSE, and every member of
 * the wrong type); an Anthropic message with blocks that are not text.
 * Each gives its text, finish reason, usage, calls, the provider's tools
 * and refusal, or the error naming what is wrong, with the code that
 * decides the program's exit status.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"
#include "unit.h"

/* A body and what the parser must make of it (-2: not checked; NULL:
 * none). */
struct body {
	const char *body;
	int rc;
	const char *raw, *finish, *msg;
	long prompt, completion;
	const char *call_args;	/* the first call's arguments */
	const char *server_key;	/* a member of the first provider's tool */
	const char *refusal;
};

static const struct body bodies[] = {
	/* OpenAI: content as parts: the text parts in order, no others */
	{ "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\""
	    ",\"content\":[{\"type\":\"text\",\"text\":\"{\\\"a\\\":\"},{\"type\""
	    ":\"image_url\",\"x\":1},{\"type\":\"text\",\"text\":\"1}\"}]},\"f"
	    "inish_reason\":\"stop\"}]}",
	    0, "{\"a\":1}", "stop",
	    NULL,
	    -2, -2, NULL, NULL, NULL },
	/* OpenAI: a part that is no object */
	{ "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\""
	    ",\"content\":[5]},\"finish_reason\":\"stop\"}]}",
	    -SAOP_EPROTO, "", "",
	    "a part of the content is not an object",
	    -2, -2, NULL, NULL, NULL },
	/* Responses body: a message after reasoning, usage */
	{ "{\"object\":\"response\",\"status\":\"completed\",\"output\":["
	    "{\"type\":\"reasoning\"},{\"type\":\"message\",\"content\":[{\""
	    "type\":\"output_text\",\"text\":\"{\\\"a\\\": 1}\"}]}],\"usage\":"
	    "{\"input_tokens\":5,\"output_tokens\":7}}",
	    0, "{\"a\": 1}", "stop",
	    NULL,
	    5, 7, NULL, NULL, NULL },
	/* Responses body: a refusal */
	{ "{\"object\":\"response\",\"status\":\"completed\",\"output\":["
	    "{\"type\":\"message\",\"content\":[{\"type\":\"refusal\",\"refu"
	    "sal\":\"I cannot.\"}]}]}",
	    -SAOP_EREFUSED, "", "refusal",
	    "I cannot.",
	    -2, -2, NULL, NULL, "I cannot." },
	/* Responses body: a call beside a tool the provider ran */
	{ "{\"object\":\"response\",\"status\":\"completed\",\"output\":["
	    "{\"type\":\"web_search_call\",\"id\":\"ws1\"},{\"type\":\"funct"
	    "ion_call\",\"call_id\":\"c1\",\"name\":\"f\",\"arguments\":\"{\\\""
	    "x\\\":1}\"}]}",
	    0, "", "tool_calls",
	    NULL,
	    -2, -2, "{\"x\":1}", "id", NULL },
	/* Responses body: cut at its token limit */
	{ "{\"object\":\"response\",\"status\":\"incomplete\",\"incomple"
	    "te_details\":{\"reason\":\"max_output_tokens\"},\"output\":"
	    "[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\","
	    "\"text\":\"{\\\"a\\\": \"}]}]}",
	    0, "{\"a\": ", "length",
	    NULL,
	    -2, -2, NULL, NULL, NULL },
	/* Responses body: incomplete without a reason */
	{ "{\"object\":\"response\",\"status\":\"incomplete\",\"output\":"
	    "[]}",
	    0, "", "error",
	    NULL,
	    -2, -2, NULL, NULL, NULL },
	/* Responses body: a status of no known kind */
	{ "{\"object\":\"response\",\"status\":\"cancelled\",\"output\":["
	    "]}",
	    0, "", "error",
	    NULL,
	    -2, -2, NULL, NULL, NULL },
	/* Responses body: still in progress: no end */
	{ "{\"object\":\"response\",\"status\":\"in_progress\",\"output\""
	    ":[]}",
	    -SAOP_EPROTO, "", "",
	    "no finish reason",
	    -2, -2, NULL, NULL, NULL },
	/* Responses body: failed, with its error */
	{ "{\"object\":\"response\",\"status\":\"failed\",\"error\":{\"mes"
	    "sage\":\"the model broke\"},\"output\":[]}",
	    -SAOP_ENETWORK, "", "error",
	    "the model broke",
	    -2, -2, NULL, NULL, NULL },
	/* Responses body: no status */
	{ "{\"object\":\"response\",\"output\":[]}",
	    -SAOP_ENETWORK, "", "error",
	    "error inside the answer",
	    -2, -2, NULL, NULL, NULL },
	/* Responses body: output no array */
	{ "{\"object\":\"response\",\"status\":\"completed\",\"output\":{"
	    "}}",
	    -SAOP_EPROTO, "", "",
	    "the response's output is not an array",
	    -2, -2, NULL, NULL, NULL },
	/* Responses body: an item without a type */
	{ "{\"object\":\"response\",\"status\":\"completed\",\"output\":["
	    "{\"content\":[]}]}",
	    -SAOP_EPROTO, "", "",
	    "an output item without a type",
	    -2, -2, NULL, NULL, NULL },
	/* Gemini: a thought left out, its tokens counted with the answer */
	{ "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"thinkin"
	    "g...\",\"thought\":true},{\"text\":\"{\\\"a\\\": 1}\"}]},\"finis"
	    "hReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount"
	    "\":3,\"candidatesTokenCount\":4,\"thoughtsTokenCount\":10"
	    "}}",
	    0, "{\"a\": 1}", "stop",
	    NULL,
	    3, 14, NULL, NULL, NULL },
	/* Gemini: a call, and code the provider ran */
	{ "{\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":"
	    "{\"name\":\"f\",\"args\":{\"x\":1}}},{\"executableCode\":{\"cod"
	    "e\":\"print(1)\"}}]},\"finishReason\":\"STOP\"}]}",
	    0, "", "tool_calls",
	    NULL,
	    -2, -2, "{\"x\":1}", "executableCode", NULL },
	/* Gemini: candidates no array */
	{ "{\"candidates\":{}}",
	    -SAOP_EPROTO, "", "",
	    "\"candidates\" is not an array",
	    -2, -2, NULL, NULL, NULL },
	/* Gemini: a candidate no object */
	{ "{\"candidates\":[5]}",
	    -SAOP_EPROTO, "", "",
	    "a candidate is not an object",
	    -2, -2, NULL, NULL, NULL },
	/* Gemini: parts no array */
	{ "{\"candidates\":[{\"content\":{\"parts\":{}}}]}",
	    -SAOP_EPROTO, "", "",
	    "a candidate's parts are not an array",
	    -2, -2, NULL, NULL, NULL },
	/* Gemini: a part no object */
	{ "{\"candidates\":[{\"content\":{\"parts\":[5]}}]}",
	    -SAOP_EPROTO, "", "",
	    "a part is not an object",
	    -2, -2, NULL, NULL, NULL },
	/* Gemini: a text no string */
	{ "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":5}]}}]}",
	    -SAOP_EPROTO, "", "",
	    "a part's text is not a string",
	    -2, -2, NULL, NULL, NULL },
	/* Gemini: finishReason no string */
	{ "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]},\""
	    "finishReason\":5}]}",
	    -SAOP_EPROTO, "", "",
	    "finishReason is not a string",
	    -2, -2, NULL, NULL, NULL },
	/* Gemini: a prompt blocked before any candidate: a refusal */
	{ "{\"candidates\":[],\"promptFeedback\":{\"blockReason\":\"SA"
	    "FETY\"}}",
	    -SAOP_EREFUSED, "", "refusal",
	    "SAFETY",
	    -2, -2, NULL, NULL, "SAFETY" },
	/* Gemini without SSE: an array of responses, joined */
	{ "[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"{\\\"a\\\""
	    ": \"}]}}]},{\"candidates\":[{\"content\":{\"parts\":[{\"text"
	    "\":\"1}\"}]},\"finishReason\":\"STOP\"}]}]",
	    0, "{\"a\": 1}", "stop",
	    NULL,
	    -2, -2, NULL, NULL, NULL },
	/* Gemini without SSE: an element no object */
	{ "[{\"candidates\":[]}, 5]",
	    -SAOP_EPROTO, "", "",
	    "not a JSON object",
	    -2, -2, NULL, NULL, NULL },
	/* Anthropic body: content no array */
	{ "{\"type\":\"message\",\"content\":\"x\",\"stop_reason\":\"end_t"
	    "urn\"}",
	    -SAOP_EPROTO, "", "",
	    "the message's content is not an array",
	    -2, -2, NULL, NULL, NULL },
	/* Anthropic body: thinking left out, a server tool kept apart */
	{ "{\"type\":\"message\",\"content\":[{\"type\":\"thinking\",\"thi"
	    "nking\":\"hm\"},{\"type\":\"server_tool_use\",\"id\":\"s1\",\"na"
	    "me\":\"web_search\",\"input\":{}},{\"type\":\"text\",\"text\":\""
	    "{\\\"a\\\": 1}\"}],\"stop_reason\":\"end_turn\",\"usage\":{\"inp"
	    "ut_tokens\":2,\"output_tokens\":3}}",
	    0, "{\"a\": 1}", "stop",
	    NULL,
	    2, 3, NULL, "type", NULL },
};

/* Parse body b as a whole JSON body, fed in pieces of piece bytes. */
static int
parse(const char *b, size_t piece, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct saop__llm_parser *p = saop__llm_parser_new(0);
	size_t i, n = strlen(b);
	int rc;

	ck_assert_ptr_nonnull(p);
	memset(a, 0, sizeof(*a));
	saop_err_clear(e);
	saop__llm_parser_head(p, 200, "application/json");
	for (i = 0; i < n; i += piece)
		ck_assert_int_eq(saop__llm_parser_feed(p, b + i, n - i < piece ?
		    n - i : piece), 0);
	rc = saop__llm_parser_end(p, 1, a, e);
	saop__llm_parser_free(p);
	return rc;
}

START_TEST(whole_bodies_of_every_provider)
{
	const struct body *b = &bodies[_i];
	struct saop_llm_answer a;
	struct saop_err e;
	size_t piece;

	for (piece = 7; piece <= 1 << 16; piece <<= 13) {
		int rc = parse(b->body, piece, &a, &e);

		ck_assert_msg(rc == b->rc, "body %d: %d (%s)", _i, rc, e.msg);
		ck_assert_ptr_nonnull(a.raw);
		ck_assert_str_eq(a.raw, b->raw);
		ck_assert_str_eq(a.finish_reason, b->finish);
		if (b->msg != NULL)
			ck_assert_msg(strstr(e.msg, b->msg) != NULL,
			    "body %d: '%s' without '%s'", _i, e.msg, b->msg);
		if (b->prompt != -2)
			ck_assert_int_eq(a.prompt_tokens, b->prompt);
		if (b->completion != -2)
			ck_assert_int_eq(a.completion_tokens, b->completion);
		if (b->call_args != NULL)
			ck_assert_str_eq(json_string_value(json_object_get(
			    json_object_get(json_array_get(a.tool_calls, 0),
			    "function"), "arguments")), b->call_args);
		else
			ck_assert_uint_eq(json_array_size(a.tool_calls), 0);
		if (b->server_key != NULL)
			ck_assert_ptr_nonnull(json_object_get(json_array_get(
			    a.server_tools, 0), b->server_key));
		else
			ck_assert_ptr_null(a.server_tools);
		if (b->refusal != NULL)
			ck_assert_str_eq(a.refusal, b->refusal);
		else
			ck_assert_ptr_null(a.refusal);
		saop_llm_answer_free(&a);
	}
}
END_TEST

START_TEST(a_second_candidate_is_another_choice)
{
	static const char b[] = "{\"candidates\":[{\"index\":0,\"content\":"
	    "{\"parts\":[{\"text\":\"[1]\"}]},\"finishReason\":\"STOP\"},"
	    "{\"index\":1,\"content\":{\"parts\":[{\"text\":\"[2]\"}]},"
	    "\"finishReason\":\"MAX_TOKENS\"}]}";
	struct saop_llm_answer a;
	struct saop_err e;
	json_t *c;

	ck_assert_int_eq(parse(b, sizeof(b), &a, &e), 0);
	ck_assert_str_eq(a.raw, "[1]");
	ck_assert_str_eq(a.finish_reason, "stop");
	ck_assert_uint_eq(json_array_size(a.choices), 1);
	c = json_array_get(a.choices, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(c, "index")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(c, "raw")), "[2]");
	ck_assert_str_eq(json_string_value(json_object_get(c,
	    "finish_reason")), "length");
	saop_llm_answer_free(&a);
}
END_TEST

/*
 * Streams whose answer is "a" with its finish, and then more: an
 * Anthropic delta after the message_delta, a Responses delta after
 * response.completed, a Gemini chunk after the candidate's finishReason,
 * an Ollama line after an Anthropic finish (formats mixed, as fuzzing
 * sends them).  What comes after the finish is not read (saop-suspend(1)
 * WIRE FORMATS), so a stream cut just after its finish reads the same.
 */
START_TEST(what_comes_after_the_finish_is_not_read)
{
	static const char *const streams[] = {
		"event: message_start\ndata: {\"type\":\"message_start\","
		"\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n"
		"event: content_block_start\ndata: {\"type\":\"content_block_"
		"start\",\"index\":0,\"content_block\":{\"type\":\"text\","
		"\"text\":\"\"}}\n\n"
		"event: content_block_delta\ndata: {\"type\":\"content_block_"
		"delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
		"\"text\":\"a\"}}\n\n"
		"event: message_delta\ndata: {\"type\":\"message_delta\","
		"\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n"
		"event: content_block_delta\ndata: {\"type\":\"content_block_"
		"delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
		"\"text\":\"b\"}}\n\n"
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"event: response.output_text.delta\ndata: {\"type\":\"response."
		"output_text.delta\",\"delta\":\"a\"}\n\n"
		"event: response.completed\ndata: {\"type\":\"response.completed"
		"\",\"response\":{\"status\":\"completed\"}}\n\n"
		"event: response.output_text.delta\ndata: {\"type\":\"response."
		"output_text.delta\",\"delta\":\"b\"}\n\n",
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":"
		"\"a\"}]},\"finishReason\":\"STOP\"}]}\n\n"
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":"
		"\"b\"}]}}]}\n\n",
		/* formats mixed: an Ollama line after an Anthropic finish */
		"event: content_block_delta\ndata: {\"type\":\"content_block_"
		"delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
		"\"text\":\"a\"}}\n\n"
		"event: message_delta\ndata: {\"type\":\"message_delta\","
		"\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n"
		"data: {\"message\":{\"content\":\"b\"}}\n\n",
	};
	struct saop__llm_parser *p = saop__llm_parser_new(0);
	struct saop_llm_answer a;
	struct saop_err e;
	int rc;

	ck_assert_ptr_nonnull(p);
	memset(&a, 0, sizeof(a));
	saop_err_clear(&e);
	saop__llm_parser_head(p, 200, "text/event-stream");
	ck_assert_int_eq(saop__llm_parser_feed(p, streams[_i],
	    strlen(streams[_i])), 0);
	rc = saop__llm_parser_end(p, 1, &a, &e);
	saop__llm_parser_free(p);
	ck_assert_msg(rc == 0, "stream %d: %d (%s)", _i, rc, e.msg);
	ck_assert_str_eq(a.raw, "a");
	ck_assert_str_eq(a.finish_reason, "stop");
	saop_llm_answer_free(&a);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cov_answer");
	TCase *tc = tcase_create("answer");

	tcase_add_loop_test(tc, whole_bodies_of_every_provider, 0,
	    (int)(sizeof(bodies) / sizeof(bodies[0])));
	tcase_add_test(tc, a_second_candidate_is_another_choice);
	tcase_add_loop_test(tc, what_comes_after_the_finish_is_not_read, 0, 4);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
