/* check_llm.c: unit tests of the model client (lib/llm*.c), against
 * saop-mock (src/saop-mock, its script and its --tls-cert) and the
 * recorded fixtures. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "saop-private.h"
#include "llm-int.h"
#include "unit.h"

#define KEY "sk-test-check-llm-0123456789abcdef"

static char fixdir[1024];
/* Set: fake_start() serves HTTPS with TLS_DIR/cert.pem and key.pem. */
static char tls_dir[512];

struct fake {
	pid_t pid;
	char dir[256];
	char log[300];
	int port;
	struct saop_llm_config cfg;
};

/*
 * Start saop-mock with the steps (one reply of its script each), the key
 * KEY checked (--key-env), 500 once they run out; "fx/NAME" in a
 * step's recording is the fixture NAME (fx: a link to fixdir beside the
 * script).
 */
static void
fake_start(struct fake *f, enum saop_provider prov, const char *const *steps)
{
	char script[600], portf[600], fx[600], base[64];
	char cert[600], key[600];
	FILE *fp;
	int i;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "%s/check_llm.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(script, sizeof(script), "%s/script", f->dir);
	snprintf(portf, sizeof(portf), "%s/port", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/log", f->dir);
	snprintf(fx, sizeof(fx), "%s/fx", f->dir);
	ck_assert_int_eq(symlink(fixdir, fx), 0);
	ck_assert_ptr_nonnull(fp = fopen(script, "w"));
	for (i = 0; steps[i] != NULL; i++)
		fprintf(fp, "%s\n", steps[i]);
	ck_assert_int_eq(fclose(fp), 0);
	snprintf(cert, sizeof(cert), "%s/cert.pem", tls_dir);
	snprintf(key, sizeof(key), "%s/key.pem", tls_dir);
	setenv("CHECK_LLM_KEY", KEY, 1);
	if ((f->pid = fork()) == 0) {
		if (tls_dir[0] != '\0')
			execlp("saop-mock", "saop-mock", "--script", script,
			    "--port-file", portf, "--log", f->log,
			    "--key-env", "CHECK_LLM_KEY", "--exhausted", "500",
			    "--max-seconds", "60", "--tls-cert", cert,
			    "--tls-key", key, (char *)NULL);
		else
			execlp("saop-mock", "saop-mock", "--script", script,
			    "--port-file", portf, "--log", f->log,
			    "--key-env", "CHECK_LLM_KEY", "--exhausted", "500",
			    "--max-seconds", "60", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_gt(f->pid, 0);
	/* Until it listens: up to 40 s, however loaded the machine. */
	for (i = 0; i < 1600; i++) {
		struct stat st;

		if (stat(portf, &st) == 0 && st.st_size > 0)
			break;
		ck_assert_msg(waitpid(f->pid, NULL, WNOHANG) == 0,
		    "saop-mock exited");
		usleep(25000);
	}
	ck_assert_ptr_nonnull(fp = fopen(portf, "r"));
	ck_assert_int_eq(fscanf(fp, "%d", &f->port), 1);
	fclose(fp);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d/v1", f->port);
	f->cfg.provider = prov;
	f->cfg.base = strdup(base);
	f->cfg.key = strdup(KEY);
	f->cfg.model = strdup("fake-model");
	f->cfg.timeout_ms = 30000;
	f->cfg.connect_timeout_ms = 2000;
	f->cfg.stream = 1;
}

/*
 * Stop the server: SIGTERM, then SIGKILL when it is still answering after
 * 250 ms (a reply's long delay_ms, which SIGTERM lets finish; its log is
 * read already); remove its directory.
 */
static void
fake_stop(struct fake *f)
{
	char cmd[600];
	int i;

	if (f->pid > 0) {
		kill(f->pid, SIGTERM);
		for (i = 0; i < 10 && waitpid(f->pid, NULL, WNOHANG) == 0; i++)
			usleep(25000);
		if (i == 10) {
			kill(f->pid, SIGKILL);
			waitpid(f->pid, NULL, 0);
		}
	}
	saop_llm_config_free(&f->cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", f->dir);
}

/* The request log (saop-mock's --log) as a JSON array. */
static json_t *
fake_requests(struct fake *f)
{
	FILE *fp = fopen(f->log, "r");
	json_t *a = json_array(), *o;
	char line[65536];

	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof(line), fp) != NULL) {
		ck_assert_ptr_nonnull(o = json_loads(line, 0, NULL));
		json_array_append_new(a, o);
	}
	fclose(fp);
	return a;
}

static json_t *
simple_request(void)
{
	return json_pack("{s:[{s:s, s:s}], s:i}", "messages", "role", "user",
	    "content", "Say {\"a\":1}", "max_tokens", 50);
}

/* One call with a fresh request; the key is never in the error. */
static int
call(struct fake *f, struct saop_llm_answer *a, struct saop_err *e)
{
	json_t *req = simple_request();
	int r;

	r = saop_llm_call(&f->cfg, req, a, e);
	json_decref(req);
	ck_assert_ptr_nonnull(a->raw);
	ck_assert_msg(strstr(e->msg, KEY) == NULL, "key in '%s'", e->msg);
	ck_assert_msg(strstr(e->msg, "0123456789abcdef") == NULL,
	    "key part in '%s'", e->msg);
	return r;
}

/* Serve one step and call once. */
static int
one(enum saop_provider prov, int stream, const char *step,
    struct saop_llm_answer *a, struct saop_err *e)
{
	const char *steps[] = { step, NULL };
	struct fake f;
	int r;

	fake_start(&f, prov, steps);
	f.cfg.stream = stream;
	r = call(&f, a, e);
	fake_stop(&f);
	return r;
}

/* The next call on a running server, as provider prov. */
static int
next(struct fake *f, enum saop_provider prov, int stream,
    struct saop_llm_answer *a, struct saop_err *e)
{
	f->cfg.provider = prov;
	f->cfg.stream = stream;
	return call(f, a, e);
}

#define OPENAI SAOP_PROVIDER_OPENAI
#define ANTHROPIC SAOP_PROVIDER_ANTHROPIC

/* ---- the recorded fixtures, served as they are ---- */

START_TEST(openai_length_stream_gives_the_partial_json_and_length)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 1,
	    "{\"recording\": \"fx/openai-chat-length.sse\"}", &a, &e), 0);
	ck_assert_str_eq(a.raw, "{\"");
	ck_assert_uint_eq(a.raw_len, 2);
	ck_assert_str_eq(a.finish_reason, "length");
	ck_assert_int_eq(a.broken, 0);
	ck_assert_int_eq(a.prompt_tokens, 79);
	ck_assert_int_eq(a.completion_tokens, 1);
	ck_assert_int_eq(a.http_status, 200);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(openai_length_json_body_gives_the_partial_json_and_length)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 0,
	    "{\"recording\": \"fx/openai-chat-length.json\"}", &a, &e), 0);
	ck_assert_str_eq(a.raw, "{\"");
	ck_assert_str_eq(a.finish_reason, "length");
	ck_assert_int_eq(a.prompt_tokens, 79);
	ck_assert_int_eq(a.completion_tokens, 1);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(openai_stop_stream_assembles_every_delta)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 1,
	    "{\"recording\": \"fx/openai-chat-json-stop.sse\"}", &a, &e), 0);
	ck_assert_str_eq(a.raw,
	    "{\"city\":\"San Francisco\",\"temperature\":61,\"units\":\"f\"}");
	ck_assert_str_eq(a.finish_reason, "stop");
	ck_assert_int_eq(a.prompt_tokens, 79);
	ck_assert_int_eq(a.completion_tokens, 14);
	ck_assert_ptr_null(a.tool_calls);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(openai_stop_json_body_is_read)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 0,
	    "{\"recording\": \"fx/openai-chat-json-stop.json\"}", &a, &e), 0);
	ck_assert_str_eq(a.raw,
	    "{\"city\":\"San Francisco\",\"temperature\":65,\"units\":\"f\"}");
	ck_assert_str_eq(a.finish_reason, "stop");
	saop_llm_answer_free(&a);
}
END_TEST

static void
assert_weather_tool(const struct saop_llm_answer *a)
{
	json_t *t = json_array_get(a->tool_calls, 0);

	ck_assert_int_eq(json_array_size(a->tool_calls), 1);
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_object_get(t, "function"), "name")), "GetWeatherArgs");
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_object_get(t, "function"), "arguments")),
	    "{\"city\":\"Edinburgh\",\"country\":\"UK\",\"units\":\"c\"}");
	ck_assert_str_eq(a->finish_reason, "tool_calls");
	ck_assert_str_eq(a->raw, "");
}

START_TEST(openai_tool_call_stream_joins_argument_fragments)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 1,
	    "{\"recording\": \"fx/openai-chat-tool-calls.sse\"}", &a, &e), 0);
	assert_weather_tool(&a);
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(a.tool_calls, 0), "id")),
	    "call_c91SqDXlYFuETYv8mUHzz6pp");
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(openai_tool_call_json_body_keeps_arguments_as_a_string)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 0,
	    "{\"recording\": \"fx/openai-chat-tool-calls.json\"}", &a, &e), 0);
	assert_weather_tool(&a);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(openrouter_error_chunk_after_length_is_an_error)
{
	struct saop_llm_answer a;
	struct saop_err e;
	int r;

	r = one(OPENAI, 1,
	    "{\"recording\": "
	    "\"fx/openrouter-chat-length-then-error.sse\"}", &a, &e);
	ck_assert_int_eq(r, -SAOP_EBADREQ);
	ck_assert_str_eq(a.finish_reason, "error");
	ck_assert_ptr_nonnull(strstr(e.msg, "Token limit reached"));
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(openrouter_429_without_retry_after_is_a_rate_limit)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 1,
	    "{\"recording\": \"fx/openrouter-429.json\"}", &a, &e),
	    -SAOP_ERATELIMIT);
	ck_assert_int_eq(e.http_status, 429);
	ck_assert_int_eq(e.retry_after_ms, -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "Provider returned error"));
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(retry_after_on_a_200_is_ignored)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 0,
	    "{\"recording\": "
	    "\"fx/together-deepseek-length.json\"}", &a, &e), 0);
	ck_assert_str_eq(a.finish_reason, "length");
	ck_assert_int_eq(strncmp(a.raw, "<think>\nHmm", 11), 0);
	ck_assert_int_eq(a.prompt_tokens, 4);
	ck_assert_int_eq(a.completion_tokens, 100);
	ck_assert_int_eq(e.retry_after_ms, -1);
	ck_assert_int_eq(e.code, 0);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(ollama_openai_compatible_body_is_read)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 0,
	    "{\"recording\": "
	    "\"fx/ollama-openai-compat-json.json\"}", &a, &e), 0);
	ck_assert_str_eq(a.raw,
	    "{ \"city\": \"Paris\", \"country\": \"France\" }");
	ck_assert_str_eq(a.finish_reason, "stop");
	ck_assert_int_eq(a.prompt_tokens, 136);
	ck_assert_int_eq(a.completion_tokens, 15);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(reask_roundtrip_request_goes_out_and_its_answer_is_read)
{
	const char *steps[] = {
	    "{\"recording\": \"fx/reask-roundtrip.response.json\"}", NULL };
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	json_t *req, *log, *body;
	char path[1100];

	snprintf(path, sizeof(path), "%s/reask-roundtrip.request.json",
	    fixdir);
	ck_assert_ptr_nonnull(req = json_load_file(path, 0, NULL));
	fake_start(&f, OPENAI, steps);
	f.cfg.stream = 0;
	ck_assert_int_eq(saop_llm_call(&f.cfg, req, &a, &e), 0);
	ck_assert_str_eq(a.finish_reason, "tool_calls");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(a.tool_calls, 0), "function"), "arguments")),
	    "{\"city\":\"Paris\",\"country\":\"France\"}");
	log = fake_requests(&f);
	body = json_object_get(json_array_get(log, 0), "body");
	ck_assert(json_equal(json_object_get(body, "messages"),
	    json_object_get(req, "messages")));
	ck_assert(json_equal(json_object_get(body, "tools"),
	    json_object_get(req, "tools")));
	ck_assert_str_eq(json_string_value(json_object_get(body, "model")),
	    "gpt-oss:20b");
	ck_assert(json_is_false(json_object_get(body, "stream")));
	json_decref(log);
	json_decref(req);
	saop_llm_answer_free(&a);
	fake_stop(&f);
}
END_TEST

START_TEST(llamacpp_503_loading_model_is_a_network_failure)
{
	struct saop_llm_answer a;
	struct saop_err e;

	/* 503: the status in its name (saop-mock(1), Replay). */
	ck_assert_int_eq(one(OPENAI, 1, "{\"recording\": "
	    "\"fx/llamacpp-503-loading-model.json\"}", &a, &e),
	    -SAOP_ENETWORK);
	ck_assert_int_eq(e.http_status, 503);
	ck_assert_ptr_nonnull(strstr(e.msg, "Loading model"));
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(anthropic_max_tokens_in_a_tool_use_keeps_the_partial_input)
{
	struct saop_llm_answer a;
	struct saop_err e;
	const char *args;
	json_t *t;

	ck_assert_int_eq(one(ANTHROPIC, 1,
	    "{\"recording\": "
	    "\"fx/anthropic-max-tokens-tool-use.sse\"}", &a, &e), 0);
	ck_assert_str_eq(a.finish_reason, "length");
	ck_assert_str_eq(a.raw, "I'll create a comprehensive tax guide for "
	    "someone with multiple W2s and save it in a file called "
	    "taxes.txt. Let me do that for you now.");
	ck_assert_int_eq(a.prompt_tokens, 450);
	ck_assert_int_eq(a.completion_tokens, 124);
	ck_assert_int_eq(json_array_size(a.tool_calls), 1);
	t = json_array_get(a.tool_calls, 0);
	ck_assert_str_eq(json_string_value(json_object_get(t, "id")),
	    "toolu_01EKqbqmZrGRXy18eN7m9kvY");
	t = json_object_get(t, "function");
	ck_assert_str_eq(json_string_value(json_object_get(t, "name")),
	    "make_file");
	args = json_string_value(json_object_get(t, "arguments"));
	ck_assert_int_eq(strncmp(args, "{\"filename\": \"taxes.txt\", "
	    "\"lines_of_text\": [\n", 38), 0);
	ck_assert_ptr_nonnull(strstr(args, "\"\",\n\"Filing taxes"));
	ck_assert_str_eq(args + strlen(args) - 13, "\"Filing taxes");
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(anthropic_prefill_continuation_is_read_and_prefill_sent)
{
	const char *steps[] = {
	    "{\"recording\": "
	    "\"fx/anthropic-prefill-stop-sequence.sse\"}", NULL };
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	json_t *req, *log, *body, *last;
	char path[1100];

	snprintf(path, sizeof(path),
	    "%s/anthropic-prefill-stop-sequence.request.json", fixdir);
	ck_assert_ptr_nonnull(req = json_load_file(path, 0, NULL));
	fake_start(&f, ANTHROPIC, steps);
	ck_assert_int_eq(saop_llm_call(&f.cfg, req, &a, &e), 0);
	ck_assert_str_eq(a.raw, "\ndef pelican():\n    return \"A large "
	    "waterbird with a long bill and a throat pouch for catching "
	    "fish.\"\n");
	ck_assert_str_eq(a.finish_reason, "stop");
	ck_assert_int_eq(a.completion_tokens, 28);
	log = fake_requests(&f);
	ck_assert_str_eq(json_string_value(json_object_get(
	    json_array_get(log, 0), "path")), "/v1/messages");
	ck_assert(json_is_true(json_object_get(json_array_get(log, 0),
	    "key_ok")));
	body = json_object_get(json_array_get(log, 0), "body");
	last = json_array_get(json_object_get(body, "messages"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(last, "role")),
	    "assistant");
	ck_assert(json_equal(json_object_get(body, "messages"),
	    json_object_get(req, "messages")));
	ck_assert(json_equal(json_object_get(body, "stop_sequences"),
	    json_object_get(req, "stop_sequences")));
	ck_assert_int_eq(json_integer_value(json_object_get(body,
	    "max_tokens")), 8192);
	ck_assert(json_is_true(json_object_get(body, "stream")));
	json_decref(log);
	json_decref(req);
	saop_llm_answer_free(&a);
	fake_stop(&f);
}
END_TEST

START_TEST(anthropic_529_overloaded_is_a_network_failure)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(ANTHROPIC, 1,
	    "{\"recording\": \"fx/anthropic-529-overloaded.json\"}", &a, &e),
	    -SAOP_ENETWORK);
	ck_assert_int_eq(e.http_status, 529);
	ck_assert_int_eq(e.retry_after_ms, -1);
	ck_assert_str_eq(a.finish_reason, "error");
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(anthropic_429_with_recorded_headers_is_a_rate_limit)
{
	static const char *const link[][2] = {
	    { "anthropic-429-rate-limit.json",
	      "anthropic-429-no-retry-after.json" },
	    { "anthropic-429-no-retry-after.headers.json",
	      "anthropic-429-no-retry-after.headers.json" } };
	struct saop_llm_answer a;
	struct saop_err e;
	char dir[512], from[1600], to[1600], step[1700];
	size_t i;

	/* The recorded 429's body with the recorded headers of another 429
	 * (no retry-after): linked side by side under one stem, which
	 * saop-mock serves as a body and its STEM.headers.json. */
	snprintf(dir, sizeof(dir), "%s/check_llm_hdr.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (i = 0; i < 2; i++) {
		snprintf(from, sizeof(from), "%s/%s", fixdir, link[i][0]);
		snprintf(to, sizeof(to), "%s/%s", dir, link[i][1]);
		ck_assert_int_eq(symlink(from, to), 0);
	}
	snprintf(step, sizeof(step), "{\"recording\": \"%s/%s\"}", dir,
	    link[0][1]);
	ck_assert_int_eq(one(ANTHROPIC, 1, step, &a, &e), -SAOP_ERATELIMIT);
	ck_assert_int_eq(e.http_status, 429);
	ck_assert_int_eq(e.retry_after_ms, -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "rate limit"));
	saop_llm_answer_free(&a);
	for (i = 0; i < 2; i++) {
		snprintf(to, sizeof(to), "%s/%s", dir, link[i][1]);
		ck_assert_int_eq(unlink(to), 0);
	}
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(anthropic_429_retry_after_is_honoured)
{
	struct saop_llm_answer a;
	struct saop_err e;

	/* 429: the status in its name (saop-mock(1), Replay). */
	ck_assert_int_eq(one(ANTHROPIC, 1,
	    "{\"recording\": \"fx/anthropic-429-rate-limit.json\", "
	    "\"headers\": {\"retry-after\": \"7\"}}", &a, &e),
	    -SAOP_ERATELIMIT);
	ck_assert_int_eq(e.retry_after_ms, 7000);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(anthropic_prefill_refusals_are_eprefill)
{
	/* 400: the status in their names (saop-mock(1), Replay). */
	const char *steps[] = {
	    "{\"recording\": \"fx/anthropic-400-prefill-unsupported.json\"}",
	    "{\"recording\": "
	    "\"fx/anthropic-400-prefill-trailing-whitespace.json\"}",
	    NULL };
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;

	fake_start(&f, ANTHROPIC, steps);
	ck_assert_int_eq(next(&f, ANTHROPIC, 1, &a, &e), -SAOP_EPREFILL);
	ck_assert_int_eq(e.http_status, 400);
	ck_assert_ptr_nonnull(strstr(e.msg, "prefill"));
	saop_llm_answer_free(&a);
	ck_assert_int_eq(next(&f, ANTHROPIC, 1, &a, &e), -SAOP_EPREFILL);
	ck_assert_ptr_nonnull(strstr(e.msg, "trailing whitespace"));
	saop_llm_answer_free(&a);
	fake_stop(&f);
}
END_TEST

START_TEST(anthropic_prompt_too_long_is_a_bad_request)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(ANTHROPIC, 1,
	    "{\"recording\": \"fx/anthropic-400-prompt-too-long.json\"}",
	    &a, &e), -SAOP_EBADREQ);
	ck_assert_ptr_nonnull(strstr(e.msg, "prompt is too long"));
	ck_assert_int_eq(saop_err_exit_status(e.code), 69);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(ollama_ndjson_stream_is_read)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 1,
	    "{\"recording\": "
	    "\"fx/ollama-generate-stream.ndjson\"}", &a, &e), 0);
	ck_assert_str_eq(a.raw, "That's a fantastic question!");
	ck_assert_str_eq(a.finish_reason, "stop");
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(ollama_error_line_after_tokens_is_an_error)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 1,
	    "{\"recording\": "
	    "\"fx/ollama-generate-stream-error.ndjson\"}", &a, &e),
	    -SAOP_ENETWORK);
	ck_assert_str_eq(a.raw, " Yes.Ican");
	ck_assert_str_eq(a.finish_reason, "error");
	ck_assert_ptr_nonnull(strstr(e.msg, "an error was encountered"));
	saop_llm_answer_free(&a);
}
END_TEST

/* ---- generated answers: both wire formats, plain and SSE ---- */

/*
 * A reply of saop-mock's script that sends body as it is, of Content-Type
 * type.  Returns the reply (malloc).
 */
static char *
body_step(const char *type, const char *body)
{
	json_t *step = json_pack("{s:s, s:s}", "body", body, "type", type);
	char *r;

	ck_assert_ptr_nonnull(step);
	ck_assert_ptr_nonnull(r = json_dumps(step, JSON_COMPACT));
	json_decref(step);
	return r;
}

/*
 * A reply of saop-mock's script whose body is an Ollama native NDJSON
 * stream of text (in pieces of 4 bytes, then a last line done with
 * done_reason fin and the usage p, c; no last line when fin is NULL),
 * as Ollama's /api/chat streams it: saop-mock writes the four formats
 * saop asks for, and the client reads Ollama's whatever it asked.
 * Returns the reply (malloc).
 */
static char *
ollama_step(const char *text, const char *fin, int p, int c)
{
	size_t i, n = strlen(text), len = 0;
	char *body = NULL, *r;
	FILE *fp = open_memstream(&body, &len);
	json_t *o;

	ck_assert_ptr_nonnull(fp);
	for (i = 0; i < n; i += 4) {
		o = json_pack("{s:s, s:s, s:{s:s, s:s#}, s:b}", "model",
		    "fake-model", "created_at", "2026-01-01T00:00:00Z",
		    "message", "role", "assistant", "content", text + i,
		    (int)(n - i < 4 ? n - i : 4), "done", 0);
		ck_assert_ptr_nonnull(o);
		ck_assert_int_eq(json_dumpf(o, fp, JSON_COMPACT), 0);
		fputc('\n', fp);
		json_decref(o);
	}
	if (fin != NULL) {
		o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:b, s:s, s:i, s:i}",
		    "model", "fake-model", "created_at",
		    "2026-01-01T00:00:00Z", "message", "role", "assistant",
		    "content", "", "done", 1, "done_reason", fin,
		    "prompt_eval_count", p, "eval_count", c);
		ck_assert_ptr_nonnull(o);
		ck_assert_int_eq(json_dumpf(o, fp, JSON_COMPACT), 0);
		fputc('\n', fp);
		json_decref(o);
	}
	ck_assert_int_eq(fclose(fp), 0);
	r = body_step("application/x-ndjson", body);
	free(body);
	return r;
}

START_TEST(generated_answers_read_the_same_in_every_form)
{
#define T "{\"text\": \"{\\\"a\\\": [1, 2, \\\"x\\\"]}\", " \
	    "\"finish\": \"length\""
	/* As asked; whole to a stream request too; Ollama's NDJSON; SSE
	 * with comments first, a character an event. */
	const char *forms[] = { T "}", T ", \"stream\": false}", NULL,
	    T ", \"comments\": 3, \"split\": 1}" };
#undef T
	char *ndjson = ollama_step("{\"a\": [1, 2, \"x\"]}", "length", 7, 5);
	const char *steps[17];
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	int prov, stream;
	size_t i, n = 0;

	forms[2] = ndjson;
	for (i = 0; i < 16; i++)
		steps[i] = forms[i % 4];
	steps[16] = NULL;
	fake_start(&f, OPENAI, steps);
	for (prov = 0; prov < 2; prov++)
		for (stream = 0; stream < 2; stream++)
			for (i = 0; i < 4; i++, n++) {
				ck_assert_msg(next(&f, prov, stream, &a, &e) ==
				    0, "%d %d %zu: %s", prov, stream, i, e.msg);
				ck_assert_str_eq(a.raw,
				    "{\"a\": [1, 2, \"x\"]}");
				ck_assert_str_eq(a.finish_reason, "length");
				saop_llm_answer_free(&a);
			}
	fake_stop(&f);
	free(ndjson);
}
END_TEST

START_TEST(generated_tool_calls_read_in_both_formats)
{
	const char *step = "{\"text\": \"ok\", \"tool_call\": "
	    "{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1}\"}}";
	struct saop_llm_answer a;
	struct saop_err e;
	int prov, stream;
	json_t *fn, *args;

	const char *steps[] = { step, step, step, step, NULL };
	struct fake f;

	fake_start(&f, OPENAI, steps);
	for (prov = 0; prov < 2; prov++)
		for (stream = 0; stream < 2; stream++) {
			ck_assert_int_eq(next(&f, prov, stream, &a, &e), 0);
			ck_assert_str_eq(a.finish_reason, "tool_calls");
			ck_assert_str_eq(a.raw, "ok");
			fn = json_object_get(json_array_get(a.tool_calls, 0),
			    "function");
			ck_assert_str_eq(json_string_value(json_object_get(fn,
			    "name")), "f");
			args = json_loads(json_string_value(json_object_get(fn,
			    "arguments")), 0, NULL);
			ck_assert_int_eq(json_integer_value(json_object_get(
			    args, "x")), 1);
			ck_assert_int_eq(json_object_size(args), 1);
			json_decref(args);
			if (prov == OPENAI || stream)
				ck_assert_str_eq(json_string_value(
				    json_object_get(fn, "arguments")),
				    "{\"x\": 1}");
			saop_llm_answer_free(&a);
		}
	fake_stop(&f);
}
END_TEST

START_TEST(ollama_done_reason_length_is_length)
{
	struct saop_llm_answer a;
	struct saop_err e;
	char *step = ollama_step("[1, 2", "length", 5, 3);

	ck_assert_int_eq(one(OPENAI, 1, step, &a, &e), 0);
	free(step);
	ck_assert_str_eq(a.raw, "[1, 2");
	ck_assert_str_eq(a.finish_reason, "length");
	ck_assert_int_eq(a.prompt_tokens, 5);
	ck_assert_int_eq(a.completion_tokens, 3);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(anthropic_context_window_exceeded_is_length)
{
	/* Stop reasons of Anthropic's that saop-mock does not write: the
	 * stream and the whole body as Anthropic sends them. */
	char *sse = body_step("text/event-stream", "event: message_start\n"
	    "data: {\"type\": \"message_start\", \"message\": {\"id\": "
	    "\"msg_1\", \"type\": \"message\", \"role\": \"assistant\", "
	    "\"content\": [], \"stop_reason\": null, \"usage\": "
	    "{\"input_tokens\": 7, \"output_tokens\": 1}}}\n\n"
	    "event: content_block_start\ndata: {\"type\": "
	    "\"content_block_start\", \"index\": 0, \"content_block\": "
	    "{\"type\": \"text\", \"text\": \"\"}}\n\n"
	    "event: content_block_delta\ndata: {\"type\": "
	    "\"content_block_delta\", \"index\": 0, \"delta\": "
	    "{\"type\": \"text_delta\", \"text\": \"{\"}}\n\n"
	    "event: content_block_stop\ndata: {\"type\": "
	    "\"content_block_stop\", \"index\": 0}\n\n"
	    "event: message_delta\ndata: {\"type\": \"message_delta\", "
	    "\"delta\": {\"stop_reason\": \"model_context_window_exceeded\"}, "
	    "\"usage\": {\"output_tokens\": 1}}\n\n"
	    "event: message_stop\ndata: {\"type\": \"message_stop\"}\n\n");
	char *whole = body_step("application/json", "{\"id\": \"msg_1\", "
	    "\"type\": \"message\", \"role\": \"assistant\", \"content\": "
	    "[{\"type\": \"text\", \"text\": \"{\"}], \"stop_reason\": "
	    "\"stop_sequence\", \"stop_sequence\": \"}\", \"usage\": "
	    "{\"input_tokens\": 7, \"output_tokens\": 1}}");
	const char *steps[] = { sse, whole, NULL };
	struct fake f;
	struct saop_llm_answer a;
	struct saop_err e;

	fake_start(&f, OPENAI, steps);
	ck_assert_int_eq(next(&f, ANTHROPIC, 1, &a, &e), 0);
	ck_assert_str_eq(a.finish_reason, "length");
	saop_llm_answer_free(&a);
	ck_assert_int_eq(next(&f, ANTHROPIC, 0, &a, &e), 0);
	ck_assert_str_eq(a.finish_reason, "stop");
	saop_llm_answer_free(&a);
	fake_stop(&f);
	free(sse);
	free(whole);
}
END_TEST

START_TEST(anthropic_error_event_inside_a_200_is_an_error)
{
	const char *steps[] = {
	    "{\"text\": \"{\\\"a\\\":\", \"stream_error\": "
	    "{\"status\": 529, \"message\": \"Overloaded\"}}",
	    "{\"text\": \"{\", \"stream_error\": "
	    "{\"status\": 429, \"message\": \"slow down\"}}",
	    NULL };
	struct fake f;
	struct saop_llm_answer a;
	struct saop_err e;

	fake_start(&f, OPENAI, steps);
	ck_assert_int_eq(next(&f, ANTHROPIC, 1, &a, &e), -SAOP_ENETWORK);
	ck_assert_str_eq(a.raw, "{\"a\":");
	ck_assert_str_eq(a.finish_reason, "error");
	ck_assert_ptr_nonnull(strstr(e.msg, "Overloaded"));
	saop_llm_answer_free(&a);
	ck_assert_int_eq(next(&f, OPENAI, 1, &a, &e), -SAOP_ERATELIMIT);
	saop_llm_answer_free(&a);
	fake_stop(&f);
}
END_TEST

START_TEST(json_answer_to_a_stream_request_is_accepted)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(ANTHROPIC, 1, "{\"text\": \"{}\", \"stream\": "
	    "false}", &a, &e), 0);
	ck_assert_str_eq(a.raw, "{}");
	ck_assert_str_eq(a.finish_reason, "stop");
	saop_llm_answer_free(&a);
}
END_TEST

/* ---- faults ---- */

START_TEST(connection_refused_is_a_network_failure)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct saop_llm_config cfg = { 0 };
	struct saop_llm_answer a;
	struct saop_err e;
	char base[64];
	json_t *req = simple_request();
	int s;

	/* A port that was free a moment ago and has no listener. */
	ck_assert_int_ge(s = socket(AF_INET, SOCK_STREAM, 0), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
	close(s);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d/v1",
	    ntohs(sa.sin_port));
	cfg.base = base;
	cfg.key = (char *)KEY;
	cfg.model = (char *)"m";
	cfg.stream = 1;
	cfg.timeout_ms = 5000;
	cfg.connect_timeout_ms = 2000;
	ck_assert_int_eq(saop_llm_call(&cfg, req, &a, &e), -SAOP_ENETWORK);
	ck_assert_ptr_nonnull(strstr(e.msg, "onnect"));
	ck_assert_int_eq(a.broken, 0);
	ck_assert_str_eq(a.raw, "");
	ck_assert_int_eq(saop_err_exit_status(e.code), 75);
	saop_llm_answer_free(&a);
	json_decref(req);
}
END_TEST

START_TEST(reset_mid_stream_keeps_the_partial_text)
{
	struct saop_llm_answer a;
	struct saop_err e;
	const char *full = "{\"answer\": \"abcdefghijklmnopqrstuvwxyz\"}";

	ck_assert_int_eq(one(OPENAI, 1, "{\"text\": \"{\\\"answer\\\": "
	    "\\\"abcdefghijklmnopqrstuvwxyz\\\"}\", \"drop_after\": 700, "
	    "\"reset\": true}", &a, &e), -SAOP_ENETWORK);
	ck_assert_int_eq(a.broken, 1);
	ck_assert_uint_gt(a.raw_len, 0);
	ck_assert_uint_lt(a.raw_len, strlen(full));
	ck_assert_int_eq(strncmp(a.raw, full, a.raw_len), 0);
	ck_assert_str_eq(a.finish_reason, "");
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(close_mid_stream_keeps_the_partial_text)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(ANTHROPIC, 1, "{\"text\": \"[1, 2, 3, 4, 5, 6]\", "
	    "\"drop_after\": 700, \"reset\": false}", &a, &e),
	    -SAOP_ENETWORK);
	ck_assert_int_eq(a.broken, 1);
	ck_assert_uint_gt(a.raw_len, 0);
	ck_assert_int_eq(strncmp(a.raw, "[1, 2, 3, 4, 5, 6]", a.raw_len), 0);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(stream_ending_without_finish_reason_is_broken)
{
	char *ndjson = ollama_step("[1", NULL, 0, 0);
	const char *steps[] = {
	    "{\"text\": \"{\\\"a\\\": 1}\", \"finish\": null}",
	    "{\"text\": \"{\\\"a\\\": 1}\", \"finish\": null}",
	    ndjson, NULL };
	struct fake f;
	struct saop_llm_answer a;
	struct saop_err e;
	int prov;

	fake_start(&f, OPENAI, steps);
	for (prov = 0; prov < 2; prov++) {
		ck_assert_int_eq(next(&f, prov, 1, &a, &e), -SAOP_ENETWORK);
		ck_assert_int_eq(a.broken, 1);
		ck_assert_str_eq(a.raw, "{\"a\": 1}");
		ck_assert_str_eq(a.finish_reason, "");
		ck_assert_ptr_nonnull(strstr(e.msg, "without a finish reason"));
		saop_llm_answer_free(&a);
	}
	ck_assert_int_eq(next(&f, OPENAI, 1, &a, &e), -SAOP_ENETWORK);
	ck_assert_int_eq(a.broken, 1);
	ck_assert_str_eq(a.raw, "[1");
	saop_llm_answer_free(&a);
	fake_stop(&f);
	free(ndjson);
}
END_TEST

START_TEST(html_page_with_200_is_not_the_protocol)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 1, "{\"body\": \"<html><body>Sign in to "
	    "the Wi-Fi</body></html>\", \"type\": \"text/html\"}", &a, &e),
	    -SAOP_EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "text/html"));
	ck_assert_int_eq(saop_err_exit_status(e.code), 76);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(garbage_in_an_sse_event_is_not_the_protocol)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 1, "{\"body\": \"data: {\\\"choices\\\": "
	    "[{\\\"delta\\\": {\\\"content\\\": \\\"x\\\"}}]}\\n\\ndata: "
	    "{oops\\n\\n\", \"type\": \"text/event-stream\"}", &a, &e),
	    -SAOP_EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "SSE event 2 (byte 50 "));
	/* Nothing of a damaged answer is kept. */
	ck_assert_str_eq(a.raw, "");
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(unauthorized_is_refused_and_the_key_is_not_in_the_message)
{
	struct saop_llm_answer a;
	struct saop_err e;

	/* A server that echoes the key back in its error message. */
	ck_assert_int_eq(one(OPENAI, 1, "{\"status\": 401, \"body\": "
	    "{\"error\": {\"message\": \"Incorrect API key provided: " KEY
	    "\", \"type\": \"invalid_request_error\", \"code\": "
	    "\"invalid_api_key\"}}}", &a, &e), -SAOP_EREFUSED);
	ck_assert_int_eq(e.http_status, 401);
	ck_assert_ptr_nonnull(strstr(e.msg, "Incorrect API key provided"));
	ck_assert_int_eq(saop_err_exit_status(e.code), 69);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(the_key_is_sent_and_a_wrong_key_is_refused)
{
	const char *steps[] = { "{\"text\": \"{}\"}", "{\"text\": \"{}\"}",
	    NULL };
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	json_t *log, *h;
	int prov;

	for (prov = 0; prov < 2; prov++) {
		fake_start(&f, prov, steps);
		ck_assert_int_eq(call(&f, &a, &e), 0);
		saop_llm_answer_free(&a);
		free(f.cfg.key);
		f.cfg.key = strdup("sk-wrong-wrong-wrong");
		ck_assert_int_eq(call(&f, &a, &e), -SAOP_EREFUSED);
		saop_llm_answer_free(&a);
		log = fake_requests(&f);
		ck_assert(json_is_true(json_object_get(json_array_get(log, 0),
		    "key_ok")));
		ck_assert(json_is_false(json_object_get(json_array_get(log, 1),
		    "key_ok")));
		h = json_object_get(json_array_get(log, 0), "headers");
		if (prov == ANTHROPIC)
			ck_assert_str_eq(json_string_value(json_object_get(h,
			    "anthropic-version")), "2023-06-01");
		/* The header the key came in (saop-mock logs its name). */
		h = json_object_get(json_array_get(log, 0), "key_in");
		ck_assert_int_eq(json_array_size(h), 1);
		ck_assert_str_eq(json_string_value(json_array_get(h, 0)),
		    prov == ANTHROPIC ? "x-api-key" : "authorization");
		json_decref(log);
		fake_stop(&f);
	}
}
END_TEST

START_TEST(refusals_for_good_are_erefused)
{
	static const char *const steps[] = {
	    "{\"status\": 403}", "{\"status\": 404}",
	    "{\"status\": 429, \"body\": {\"error\": {\"message\": \"You "
	    "exceeded your current quota\", \"type\": \"insufficient_quota\", "
	    "\"code\": \"insufficient_quota\"}}}",
	    "{\"status\": 503, \"headers\": {\"x-should-retry\": \"false\"}}",
	    "{\"status\": 429, \"text\": \"spend limit reached\"}",
	    "{\"status\": 401, \"headers\": {\"x-should-retry\": \"true\"}}",
	    NULL
	};
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	size_t i;

	fake_start(&f, OPENAI, steps);
	for (i = 0; steps[i] != NULL; i++) {
		ck_assert_msg(next(&f, OPENAI, 1, &a, &e) ==
		    -SAOP_EREFUSED, "%s: %s", steps[i], e.msg);
		saop_llm_answer_free(&a);
	}
	fake_stop(&f);
}
END_TEST

START_TEST(server_errors_are_network_failures_and_keep_retry_after_rules)
{
	const char *steps[] = {
	    "{\"status\": 500, \"retry_after\": 5}",
	    "{\"status\": 503, \"retry_after\": 3}",
	    "{\"status\": 529, \"headers\": {\"retry-after-ms\": \"1500\"}}",
	    "{\"status\": 429, \"retry_after\": 2}",
	    "{\"status\": 502, \"type\": \"text/html\", \"body\": "
	    "\"<html><body>502 Bad Gateway</body></html>\"}",
	    "{\"status\": 502, \"type\": \"text/html\", \"body\": "
	    "\"<html><body>502 Bad Gateway</body></html>\", "
	    "\"drop_after\": 10, \"reset\": true}",
	    NULL };
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;

	fake_start(&f, OPENAI, steps);
	ck_assert_int_eq(next(&f, OPENAI, 1, &a, &e), -SAOP_ENETWORK);
	ck_assert_int_eq(e.retry_after_ms, -1);
	saop_llm_answer_free(&a);
	ck_assert_int_eq(next(&f, OPENAI, 1, &a, &e), -SAOP_ENETWORK);
	ck_assert_int_eq(e.retry_after_ms, 3000);
	saop_llm_answer_free(&a);
	ck_assert_int_eq(next(&f, ANTHROPIC, 1, &a, &e), -SAOP_ENETWORK);
	ck_assert_int_eq(e.retry_after_ms, 1500);
	saop_llm_answer_free(&a);
	ck_assert_int_eq(next(&f, OPENAI, 1, &a, &e), -SAOP_ERATELIMIT);
	ck_assert_int_eq(e.retry_after_ms, 2000);
	ck_assert_int_eq(saop_err_exit_status(e.code), 75);
	saop_llm_answer_free(&a);
	/* A proxy's HTML error page is the network, not the protocol. */
	ck_assert_int_eq(next(&f, OPENAI, 1, &a, &e), -SAOP_ENETWORK);
	ck_assert_ptr_nonnull(strstr(e.msg, "HTTP 502: <html>"));
	saop_llm_answer_free(&a);
	ck_assert_int_eq(next(&f, OPENAI, 1, &a, &e), -SAOP_ENETWORK);
	ck_assert_int_eq(e.http_status, 502);
	saop_llm_answer_free(&a);
	fake_stop(&f);
}
END_TEST

START_TEST(refused_connection_without_answer_is_a_network_failure)
{
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(one(OPENAI, 1, "{\"no_answer\": true}", &a, &e),
	    -SAOP_ENETWORK);
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(dns_failure_is_a_network_failure)
{
	struct saop_llm_config cfg = { 0 };
	struct saop_llm_answer a;
	struct saop_err e;
	json_t *req = simple_request();

	/* A label of 64 bytes: the resolver refuses the name itself, asking
	 * no server (no lookup beyond this machine). */
	cfg.base = (char *)"http://saop-test-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.invalid:8/v1";
	cfg.key = (char *)KEY;
	cfg.model = (char *)"m";
	cfg.stream = 1;
	cfg.timeout_ms = 5000;
	cfg.connect_timeout_ms = 3000;
	ck_assert_int_eq(saop_llm_call(&cfg, req, &a, &e), -SAOP_ENETWORK);
	ck_assert_ptr_nonnull(strstr(e.msg, "aaaa.invalid"));
	saop_llm_answer_free(&a);
	json_decref(req);
}
END_TEST

START_TEST(tls_certificates_are_verified)
{
	const char *steps[] = { "{\"text\": \"{}\"}", NULL };
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	json_t *log;
	char cmd[1400], base[64];

	snprintf(tls_dir, sizeof(tls_dir), "%s/check_llm_tls.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tls_dir));
	snprintf(cmd, sizeof(cmd), "openssl req -x509 -newkey rsa:2048 "
	    "-nodes -days 1 -subj /CN=127.0.0.1 -addext "
	    "subjectAltName=IP:127.0.0.1 -keyout '%s/key.pem' "
	    "-out '%s/cert.pem' >/dev/null 2>&1", tls_dir, tls_dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "no openssl: TLS verification not tested\n");
		return;
	}
	fake_start(&f, OPENAI, steps);
	snprintf(base, sizeof(base), "https://127.0.0.1:%d/v1", f.port);
	free(f.cfg.base);
	f.cfg.base = strdup(base);
	/* A certificate nobody vouches for: refused, nothing sent. */
	ck_assert_int_eq(call(&f, &a, &e), -SAOP_EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "certificate"));
	ck_assert_int_eq(saop_err_exit_status(e.code), 76);
	saop_llm_answer_free(&a);
	log = fake_requests(&f);
	ck_assert_int_eq(json_array_size(log), 0);
	json_decref(log);
	/* The server itself is fine for whoever trusts its certificate. */
	snprintf(cmd, sizeof(cmd), "curl -sS -o /dev/null --cacert "
	    "'%s/cert.pem' -H 'Authorization: Bearer %s' -d '{}' "
	    "'%s/chat/completions' 2>/dev/null || exit 2", tls_dir, KEY, base);
	if (system(cmd) == 0) {
		log = fake_requests(&f);
		ck_assert_int_eq(json_array_size(log), 1);
		json_decref(log);
	}
	fake_stop(&f);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tls_dir);
	ck_assert_int_eq(system(cmd), 0);
	tls_dir[0] = '\0';
}
END_TEST

START_TEST(whole_call_timeout_is_a_network_failure)
{
	/* The server would answer after 50 s; the call ends at its 300 ms
	 * limit, far sooner however loaded the machine. */
	const char *steps[] = { "{\"text\": \"{}\", \"delay_ms\": 50000}",
	    NULL };
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	struct timespec t0, t1;
	double s;

	fake_start(&f, OPENAI, steps);
	f.cfg.timeout_ms = 300;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(call(&f, &a, &e), -SAOP_ENETWORK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_double_lt(s, 25.0);
	ck_assert_ptr_nonnull(strstr(e.msg, "imeout"));
	saop_llm_answer_free(&a);
	fake_stop(&f);
}
END_TEST

struct seen {
	int calls;
	long retry_after[8];
	int codes[8];
	int give_up_after;
};

static int
on_failure(void *arg, const struct saop_err *e, int attempt)
{
	struct seen *s = arg;

	ck_assert_int_eq(attempt, s->calls + 1);
	s->retry_after[s->calls] = e->retry_after_ms;
	s->codes[s->calls] = e->code;
	s->calls++;
	return s->calls < s->give_up_after;
}

START_TEST(on_failure_is_asked_and_the_call_retried_while_it_says_so)
{
	const char *steps[] = { "{\"status\": 503}",
	    "{\"status\": 429, \"retry_after\": 1}",
	    "{\"text\": \"[true]\"}", NULL };
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	struct seen s = { 0 };
	json_t *log;

	s.give_up_after = 10;
	fake_start(&f, OPENAI, steps);
	f.cfg.on_failure = on_failure;
	f.cfg.on_failure_arg = &s;
	ck_assert_int_eq(call(&f, &a, &e), 0);
	ck_assert_str_eq(a.raw, "[true]");
	ck_assert_int_eq(s.calls, 2);
	ck_assert_int_eq(s.codes[0], SAOP_ENETWORK);
	ck_assert_int_eq(s.codes[1], SAOP_ERATELIMIT);
	ck_assert_int_eq(s.retry_after[1], 1000);
	log = fake_requests(&f);
	ck_assert_int_eq(json_array_size(log), 3);
	ck_assert(json_equal(json_object_get(json_array_get(log, 0), "body"),
	    json_object_get(json_array_get(log, 2), "body")));
	json_decref(log);
	saop_llm_answer_free(&a);
	fake_stop(&f);
}
END_TEST

START_TEST(on_failure_saying_no_returns_the_failure)
{
	const char *steps[] = { "{\"status\": 503}", "{\"status\": 503}",
	    "{\"status\": 401}", NULL };
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	struct seen s = { 0 };

	s.give_up_after = 2;
	fake_start(&f, OPENAI, steps);
	f.cfg.on_failure = on_failure;
	f.cfg.on_failure_arg = &s;
	ck_assert_int_eq(call(&f, &a, &e), -SAOP_ENETWORK);
	ck_assert_int_eq(s.calls, 2);
	saop_llm_answer_free(&a);
	fake_stop(&f);
	/* A refusal is never retried. */
	memset(&s, 0, sizeof(s));
	s.give_up_after = 10;
	fake_start(&f, OPENAI, steps + 2);
	f.cfg.on_failure = on_failure;
	f.cfg.on_failure_arg = &s;
	ck_assert_int_eq(call(&f, &a, &e), -SAOP_EREFUSED);
	ck_assert_int_eq(s.calls, 0);
	saop_llm_answer_free(&a);
	fake_stop(&f);
}
END_TEST

/* ---- configuration, bodies, dry run ---- */

static void
clear_env(void)
{
	unsetenv("SAOP_PROVIDER");
	unsetenv("SAOP_API_BASE");
	unsetenv("SAOP_API_KEY");
	unsetenv("OPENAI_API_KEY");
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("SAOP_MODEL");
	unsetenv("SAOP_TIMEOUT_MS");
}

START_TEST(config_reads_the_environment)
{
	struct saop_llm_config cfg;
	struct saop_err e;

	clear_env();
	setenv("SAOP_PROVIDER", "anthropic", 1);
	setenv("ANTHROPIC_API_KEY", "sk-ant-xyz", 1);
	setenv("OPENAI_API_KEY", "sk-openai", 1);
	setenv("SAOP_TIMEOUT_MS", "1234", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert_int_eq(cfg.provider, SAOP_PROVIDER_ANTHROPIC);
	ck_assert_str_eq(cfg.key, "sk-ant-xyz");
	ck_assert_str_eq(cfg.base, "https://api.anthropic.com/v1");
	ck_assert_int_eq(cfg.timeout_ms, 1234);
	ck_assert_int_le(cfg.connect_timeout_ms, 1234);
	ck_assert_int_eq(cfg.stream, 1);
	ck_assert_ptr_null(cfg.model);
	ck_assert(saop_llm_configured(&cfg));
	saop_llm_config_free(&cfg);
	setenv("SAOP_API_KEY", "sk-saop", 1);
	setenv("SAOP_MODEL", "m1", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert_str_eq(cfg.key, "sk-saop");
	ck_assert_str_eq(cfg.model, "m1");
	saop_llm_config_free(&cfg);
	clear_env();
}
END_TEST

/*
 * Vertex AI's endpoints, streamed and not (the programs always stream:
 * only here is :rawPredict / :generateContent made), and Claude's body
 * there: anthropic_version, no model.
 */
START_TEST(vertex_endpoints_and_body)
{
	struct saop_llm_config cfg;
	struct saop_err e;
	json_t *req = simple_request(), *body;
	char *url;

	clear_env();
	setenv("SAOP_PROVIDER", "vertex-anthropic", 1);
	setenv("SAOP_VERTEX_PROJECT", "p-1", 1);
	setenv("SAOP_VERTEX_LOCATION", "us-east5", 1);
	setenv("SAOP_MODEL", "claude-x@20250101", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert_ptr_null(cfg.problem);
	ck_assert(!saop_llm_configured(&cfg));	/* no token */
	cfg.stream = 0;
	url = saop__llm_endpoint(&cfg, "claude-x@20250101");
	ck_assert_str_eq(url, "https://us-east5-aiplatform.googleapis.com/v1/"
	    "projects/p-1/locations/us-east5/publishers/anthropic/models/"
	    "claude-x@20250101:rawPredict");
	free(url);
	body = saop__llm_body(&cfg, req, &e);
	ck_assert_ptr_nonnull(body);
	ck_assert_ptr_null(json_object_get(body, "model"));
	ck_assert_str_eq(json_string_value(json_object_get(body,
	    "anthropic_version")), "vertex-2023-10-16");
	json_decref(body);
	saop_llm_config_free(&cfg);
	setenv("SAOP_PROVIDER", "vertex-gemini", 1);
	setenv("SAOP_VERTEX_LOCATION", "global", 1);
	setenv("SAOP_API_KEY", "ya29.token", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert(saop_llm_configured(&cfg));
	cfg.stream = 0;
	url = saop__llm_endpoint(&cfg, "models/gemini-x");
	ck_assert_str_eq(url, "https://aiplatform.googleapis.com/v1/projects/"
	    "p-1/locations/global/publishers/google/models/gemini-x:"
	    "generateContent");
	free(url);
	body = saop__llm_body(&cfg, req, &e);
	ck_assert_ptr_nonnull(body);
	ck_assert_ptr_null(json_object_get(body, "anthropic_version"));
	json_decref(body);
	saop_llm_config_free(&cfg);
	/* A bad location: a configuration problem naming the variable. */
	setenv("SAOP_VERTEX_LOCATION", "us/east", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert_ptr_nonnull(cfg.problem);
	ck_assert_ptr_nonnull(strstr(cfg.problem, "SAOP_VERTEX_LOCATION: "
	    "'us/east' is not a location"));
	saop_llm_config_free(&cfg);
	unsetenv("SAOP_VERTEX_PROJECT");
	unsetenv("SAOP_VERTEX_LOCATION");
	json_decref(req);
	clear_env();
}
END_TEST

START_TEST(config_problems_are_reported_by_the_call_and_the_dry_run_only)
{
	struct saop_llm_config cfg;
	struct saop_llm_answer a;
	struct saop_err e;
	json_t *req = simple_request();
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	/* Reading the environment never fails a program that calls no model. */
	clear_env();
	setenv("SAOP_PROVIDER", "vertex-ai", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert(!saop_llm_configured(&cfg));
	ck_assert_int_eq(saop_llm_call(&cfg, req, &a, &e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "vertex-ai"));
	saop_llm_answer_free(&a);
	saop_llm_config_free(&cfg);
	/* A typo of anthropic: its key means a model was meant. */
	setenv("SAOP_PROVIDER", "antropic", 1);
	setenv("ANTHROPIC_API_KEY", "sk-ant-x", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert(saop_llm_configured(&cfg));
	ck_assert_int_eq(saop_llm_call(&cfg, req, &a, &e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "SAOP_PROVIDER: unknown provider "
	    "'antropic' (openai, anthropic, openai-responses, "
	    "gemini, bedrock, vertex-gemini or vertex-anthropic)"));
	ck_assert_int_eq(saop_err_exit_status(e.code), 78);
	ck_assert_str_eq(a.raw, "");
	saop_llm_answer_free(&a);
	ck_assert_ptr_nonnull(f = open_memstream(&out, &len));
	ck_assert_int_eq(saop_llm_dry_run(f, &cfg, req, &e), -SAOP_ECONFIG);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(e.msg, "antropic"));
	ck_assert_str_eq(out, "");
	free(out);
	saop_llm_config_free(&cfg);
	/* A bad timeout alone, no key: no model to call, nothing wrong. */
	clear_env();
	setenv("SAOP_TIMEOUT_MS", "10s", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert(!saop_llm_configured(&cfg));
	saop_llm_config_free(&cfg);
	/* With a key it matters. */
	setenv("SAOP_API_KEY", "sk-x", 1);
	setenv("SAOP_MODEL", "m", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert(saop_llm_configured(&cfg));
	ck_assert_int_eq(saop_llm_call(&cfg, req, &a, &e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "SAOP_TIMEOUT_MS: '10s' is not a "
	    "positive number of milliseconds"));
	saop_llm_answer_free(&a);
	out = NULL;
	ck_assert_ptr_nonnull(f = open_memstream(&out, &len));
	ck_assert_int_eq(saop_llm_dry_run(f, &cfg, req, &e), -SAOP_ECONFIG);
	fclose(f);
	free(out);
	saop_llm_config_free(&cfg);
	setenv("SAOP_TIMEOUT_MS", "-5", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert_int_eq(saop_llm_call(&cfg, req, &a, &e), -SAOP_ECONFIG);
	saop_llm_answer_free(&a);
	saop_llm_config_free(&cfg);
	clear_env();
	json_decref(req);
}
END_TEST

START_TEST(no_key_and_no_base_is_a_configuration_error)
{
	struct saop_llm_config cfg;
	struct saop_llm_answer a;
	struct saop_err e;
	json_t *req = simple_request();

	clear_env();
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert(!saop_llm_configured(&cfg));
	ck_assert_int_eq(saop_llm_call(&cfg, req, &a, &e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "SAOP_API_KEY"));
	ck_assert_str_eq(a.raw, "");
	saop_llm_answer_free(&a);
	saop_llm_config_free(&cfg);
	/* A local endpoint needs no key. */
	setenv("SAOP_API_BASE", "http://127.0.0.1:1/v1", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert(saop_llm_configured(&cfg));
	saop_llm_config_free(&cfg);
	clear_env();
	json_decref(req);
}
END_TEST

START_TEST(openai_body_puts_system_first_and_asks_for_usage)
{
	struct saop_llm_config cfg = { 0 };
	struct saop_err e;
	json_t *req, *b, *m;

	cfg.provider = SAOP_PROVIDER_OPENAI;
	cfg.model = (char *)"dflt";
	cfg.stream = 1;
	req = json_pack("{s:s, s:[{s:s, s:s}], s:i, s:f, s:[s], "
	    "s:[{s:s, s:s, s:{s:s}}], s:{s:s}}", "system", "be brief",
	    "messages", "role", "user", "content", "hi", "max_tokens", 10,
	    "temperature", 0.5, "stop_sequences", "END", "tools", "name", "f",
	    "description", "d", "input_schema", "type", "object",
	    "tool_choice", "type", "any");
	ck_assert_ptr_nonnull(b = saop__llm_body(&cfg, req, &e));
	ck_assert_str_eq(json_string_value(json_object_get(b, "model")),
	    "dflt");
	m = json_object_get(b, "messages");
	ck_assert_int_eq(json_array_size(m), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(m,
	    0), "role")), "system");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(m,
	    0), "content")), "be brief");
	ck_assert_ptr_null(json_object_get(b, "system"));
	ck_assert_int_eq(json_integer_value(json_object_get(b, "max_tokens")),
	    10);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(b,
	    "stop"), 0)), "END");
	ck_assert(json_is_true(json_object_get(b, "stream")));
	ck_assert(json_is_true(json_object_get(json_object_get(b,
	    "stream_options"), "include_usage")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(b, "tools"), 0), "function"),
	    "name")), "f");
	ck_assert_str_eq(json_string_value(json_object_get(b, "tool_choice")),
	    "required");
	json_decref(b);
	json_decref(req);
}
END_TEST

START_TEST(anthropic_body_lifts_system_and_defaults_max_tokens)
{
	struct saop_llm_config cfg = { 0 };
	struct saop_err e;
	json_t *req, *b, *m;

	cfg.provider = SAOP_PROVIDER_ANTHROPIC;
	cfg.stream = 0;
	req = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:[{s:s, "
	    "s:s, s:{s:s, s:s}}]}, {s:s, s:s, s:s}], s:s, s:i, "
	    "s:[{s:s, s:{s:s, s:{}}}]}", "model", "claude-x", "messages",
	    "role", "system", "content", "sys", "role", "user", "content", "q",
	    "role", "assistant", "tool_calls", "id", "c1", "type", "function",
	    "function", "name", "f", "arguments", "{\"x\":1}",
	    "role", "tool", "tool_call_id", "c1", "content", "42",
	    "stop", "END", "seed", 7,
	    "tools", "type", "function", "function", "name", "f",
	    "parameters");
	ck_assert_ptr_nonnull(b = saop__llm_body(&cfg, req, &e));
	ck_assert_str_eq(json_string_value(json_object_get(b, "system")),
	    "sys");
	ck_assert_int_eq(json_integer_value(json_object_get(b, "max_tokens")),
	    4096);
	ck_assert_ptr_null(json_object_get(b, "seed"));
	ck_assert(json_is_false(json_object_get(b, "stream")));
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(b,
	    "stop_sequences"), 0)), "END");
	m = json_object_get(b, "messages");
	ck_assert_int_eq(json_array_size(m), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(json_array_get(m, 1), "content"), 0), "type")),
	    "tool_use");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(json_array_get(m, 1), "content"),
	    0), "input"), "x")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(json_array_get(m, 2), "content"), 0),
	    "tool_use_id")), "c1");
	ck_assert_ptr_nonnull(json_object_get(json_array_get(json_object_get(b,
	    "tools"), 0), "input_schema"));
	json_decref(b);
	json_decref(req);
}
END_TEST

/*
 * A system of blocks in an Anthropic body is a copy: the schema's words
 * (--schema-mode prompt) go into the body, never into the request, which
 * a retried call would send with them twice.
 */
START_TEST(anthropic_system_blocks_are_copied_not_shared)
{
	struct saop_llm_config cfg = { 0 };
	struct saop_err e;
	json_t *req, *b, *schema = json_pack("{s:s}", "type", "object");
	int i;

	cfg.provider = SAOP_PROVIDER_ANTHROPIC;
	cfg.model = (char *)"m";
	cfg.schema = schema;
	cfg.schema_name = "s";
	cfg.schema_mode = SAOP_SCHEMA_PROMPT;
	req = json_pack("{s:[{s:s, s:s}], s:[{s:s, s:s}, {s:s, s:s}]}",
	    "system", "type", "text", "text", "blk", "messages", "role",
	    "developer", "content", "dev", "role", "user", "content", "q");
	for (i = 0; i < 2; i++) {
		ck_assert_ptr_nonnull(b = saop__llm_body(&cfg, req, &e));
		ck_assert_int_eq(json_array_size(json_object_get(b, "system")),
		    3);
		ck_assert_str_eq(json_string_value(json_object_get(
		    json_array_get(json_object_get(b, "system"), 1), "text")),
		    "dev");
		ck_assert_int_eq(json_array_size(json_object_get(b,
		    "messages")), 1);
		json_decref(b);
	}
	ck_assert_int_eq(json_array_size(json_object_get(req, "system")), 1);
	json_decref(req);
	json_decref(schema);
}
END_TEST

START_TEST(body_without_model_or_messages_is_refused)
{
	struct saop_llm_config cfg = { 0 };
	struct saop_err e;
	json_t *req = simple_request();

	ck_assert_ptr_null(saop__llm_body(&cfg, req, &e));
	ck_assert_int_eq(e.code, SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "SAOP_MODEL"));
	json_decref(req);
	cfg.model = (char *)"m";
	req = json_pack("{s:s}", "model", "m");
	ck_assert_ptr_null(saop__llm_body(&cfg, req, &e));
	ck_assert_int_eq(e.code, SAOP_EDATA);
	json_decref(req);
}
END_TEST

START_TEST(dry_run_prints_url_headers_and_body_with_the_key_masked)
{
	struct saop_llm_config cfg = { 0 };
	struct saop_err e;
	json_t *req = simple_request(), *b;
	char *out = NULL, *body;
	size_t len = 0;
	FILE *f;
	int prov;

	for (prov = 0; prov < 2; prov++) {
		cfg.provider = prov;
		cfg.base = (char *)"http://127.0.0.1:9/v1/";
		cfg.key = (char *)KEY;
		cfg.model = (char *)"m";
		cfg.stream = 1;
		ck_assert_ptr_nonnull(f = open_memstream(&out, &len));
		ck_assert_int_eq(saop_llm_dry_run(f, &cfg, req, &e), 0);
		fclose(f);
		ck_assert_ptr_null(strstr(out, KEY));
		ck_assert_ptr_null(strstr(out, "check-llm"));
		if (prov == OPENAI) {
			ck_assert_int_eq(strncmp(out, "POST http://127.0.0.1:9"
			    "/v1/chat/completions\n", 43), 0);
			ck_assert_ptr_nonnull(strstr(out,
			    "\nAuthorization: Bearer sk-...****\n"));
		} else {
			ck_assert_int_eq(strncmp(out, "POST http://127.0.0.1:9"
			    "/v1/messages\n", 36), 0);
			ck_assert_ptr_nonnull(strstr(out,
			    "\nx-api-key: sk-...****\n"));
			ck_assert_ptr_nonnull(strstr(out,
			    "\nanthropic-version: 2023-06-01\n"));
		}
		ck_assert_ptr_nonnull(body = strstr(out, "\n\n{"));
		ck_assert_ptr_nonnull(b = json_loads(body + 2, 0, NULL));
		ck_assert_str_eq(json_string_value(json_object_get(b, "model")),
		    "m");
		json_decref(b);
		free(out);
		out = NULL;
	}
	json_decref(req);
}
END_TEST

/* ---- the parser on its own: any split of the bytes reads the same ---- */

/*
 * The bytes of fixture name: of tests/fixtures/llm, or of tests/data/llm
 * for a "data:" name.  *len their length.
 */
static char *
slurp(const char *name, size_t *len)
{
	char path[1100];
	FILE *f;
	char *s;
	long n;

	if (strncmp(name, "data:", 5) == 0)
		snprintf(path, sizeof(path), "%s/tests/data/llm/%s",
		    getenv("top_srcdir") != NULL ? getenv("top_srcdir") : ".",
		    name + 5);
	else
		snprintf(path, sizeof(path), "%s/%s", fixdir, name);
	ck_assert_msg((f = fopen(path, "rb")) != NULL, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	ck_assert_ptr_nonnull(s = malloc((size_t)n + 1));
	ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return s;
}

static int
parse(const char *s, size_t n, size_t piece, const char *ctype,
    struct saop_llm_answer *a, struct saop_err *e)
{
	struct saop__llm_parser *p = saop__llm_parser_new(0);
	size_t i;
	int r;

	memset(a, 0, sizeof(*a));
	saop__llm_parser_head(p, 200, ctype);
	for (i = 0; i < n; i += piece)
		ck_assert_int_eq(saop__llm_parser_feed(p, s + i,
		    n - i < piece ? n - i : piece), 0);
	r = saop__llm_parser_end(p, 1, a, e);
	saop__llm_parser_free(p);
	return r;
}

/*
 * The cached input and reasoning tokens, where each format reports them:
 * OpenAI's chat and Responses among the counts; Anthropic's cache reads and
 * writes and Bedrock's cache reads counted into the input; Gemini's
 * thoughts among the output.  Not reported: -1.
 */
START_TEST(cached_and_reasoning_tokens_of_every_format)
{
	static const struct {
		const char *body;
		long prompt, completion, cached, reasoning;
	} c[] = {
		{ "{\"choices\":[{\"message\":{\"content\":\"x\"},"
		  "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":"
		  "100,\"completion_tokens\":50,\"prompt_tokens_details\":"
		  "{\"cached_tokens\":40},\"completion_tokens_details\":"
		  "{\"reasoning_tokens\":30}}}", 100, 50, 40, 30 },
		{ "{\"choices\":[{\"message\":{\"content\":\"x\"},"
		  "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":"
		  "7,\"completion_tokens\":2}}", 7, 2, -1, -1 },
		{ "{\"type\":\"message\",\"content\":[{\"type\":\"text\","
		  "\"text\":\"x\"}],\"stop_reason\":\"end_turn\",\"usage\":"
		  "{\"input_tokens\":10,\"output_tokens\":5,"
		  "\"cache_read_input_tokens\":200,"
		  "\"cache_creation_input_tokens\":30}}", 240, 5, 200, -1 },
		{ "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":"
		  "\"x\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":"
		  "{\"promptTokenCount\":90,\"candidatesTokenCount\":10,"
		  "\"thoughtsTokenCount\":25,\"cachedContentTokenCount\":60}}",
		  90, 35, 60, 25 },
		{ "{\"output\":{\"message\":{\"role\":\"assistant\","
		  "\"content\":[{\"text\":\"x\"}]}},\"stopReason\":"
		  "\"end_turn\",\"usage\":"
		  "{\"inputTokens\":12,\"outputTokens\":3,"
		  "\"cacheReadInputTokens\":8}}", 20, 3, 8, -1 },
		{ "{\"object\":\"response\",\"status\":\"completed\","
		  "\"output\":[{\"type\":\"message\",\"content\":[{\"type\":"
		  "\"output_text\",\"text\":\"x\"}]}],\"usage\":"
		  "{\"input_tokens\":64,\"output_tokens\":16,"
		  "\"input_tokens_details\":{\"cached_tokens\":32},"
		  "\"output_tokens_details\":{\"reasoning_tokens\":8}}}",
		  64, 16, 32, 8 },
	};
	struct saop_llm_answer a;
	struct saop_err e;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ck_assert_int_eq(parse(c[i].body, strlen(c[i].body),
		    strlen(c[i].body), "application/json", &a, &e), 0);
		ck_assert_int_eq(a.prompt_tokens, c[i].prompt);
		ck_assert_int_eq(a.completion_tokens, c[i].completion);
		ck_assert_int_eq(a.cached_tokens, c[i].cached);
		ck_assert_int_eq(a.reasoning_tokens, c[i].reasoning);
		ck_assert_int_eq(a.priced, 0);
		saop_llm_answer_free(&a);
	}
}
END_TEST

START_TEST(sse_fixtures_read_the_same_byte_by_byte_and_with_crlf)
{
	static const char *const names[] = { "openai-chat-json-stop.sse",
	    "openai-chat-tool-calls.sse", "anthropic-max-tokens-tool-use.sse",
	    "anthropic-prefill-stop-sequence.sse",
	    "openrouter-chat-length-then-error.sse",
	    "ollama-generate-stream.ndjson" };
	struct saop_llm_answer a, b;
	struct saop_err e;
	size_t i, j, k, n;
	char *s, *crlf;
	int r1, r2;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		s = slurp(names[i], &n);
		r1 = parse(s, n, n, NULL, &a, &e);
		r2 = parse(s, n, 1, NULL, &b, &e);
		ck_assert_int_eq(r1, r2);
		ck_assert_str_eq(a.raw, b.raw);
		ck_assert_str_eq(a.finish_reason, b.finish_reason);
		saop_llm_answer_free(&b);
		ck_assert_ptr_nonnull(crlf = malloc(2 * n + 1));
		for (j = k = 0; j < n; j++) {
			if (s[j] == '\n')
				crlf[k++] = '\r';
			crlf[k++] = s[j];
		}
		r2 = parse(crlf, k, 3, NULL, &b, &e);
		ck_assert_int_eq(r1, r2);
		ck_assert_str_eq(a.raw, b.raw);
		ck_assert_str_eq(a.finish_reason, b.finish_reason);
		ck_assert(json_equal(a.tool_calls, b.tool_calls) ||
		    (a.tool_calls == NULL && b.tool_calls == NULL));
		saop_llm_answer_free(&a);
		saop_llm_answer_free(&b);
		free(crlf);
		free(s);
	}
}
END_TEST

/* ---- every recorded answer, however split and wherever cut ---- */

/*
 * What a recorded answer gives (tests/data/llm/README.md names each
 * source): the call's code, finish reason, text (NULL: not checked), the
 * number of tool calls and the first and last one's arguments, of other
 * choices and of server tool blocks, the token counts (-2: not checked).
 */
struct fxcase {
	const char *name;	/* "data:" names tests/data/llm */
	const char *ctype;
	int rc;
	const char *finish;
	const char *raw;
	size_t ncalls;
	const char *args0, *args_last;
	size_t nchoices, nserver;
	long prompt, completion;
	const char *refusal;
};

static const struct fxcase fxcases[] = {
	{ "data:openai-chat-n3.sse", NULL, 0, "stop",
	    "{\"city\":\"San Francisco\",\"temperature\":65,\"units\":\"f\"}",
	    0, NULL, NULL, 2, 0, -2, -2, NULL },
	{ "data:openai-chat-refusal.sse", NULL, -SAOP_EREFUSED, "refusal", "", 0,
	    NULL, NULL, 0, 0, 79, 11,
	    "I'm sorry, I can't assist with that request." },
	{ "data:openai-chat-refusal.json", "application/json", -SAOP_EREFUSED,
	    "refusal", "", 0, NULL, NULL, 0, 0, 79, 11,
	    "I'm sorry, I can't assist with that request." },
	{ "data:openai-chat-two-tools.sse", NULL, 0, "tool_calls", "", 2,
	    "{\"city\": \"Edinburgh\", \"country\": \"GB\", \"units\": \"c\"}",
	    "{\"ticker\": \"AAPL\", \"exchange\": \"NASDAQ\"}",
	    0, 0, -2, -2, NULL },
	{ "data:openrouter-tool-null-args.sse", NULL, 0, "tool_calls", "", 1, "{}",
	    "{}", 0, 0, -2, -2, NULL },
	{ "data:groq-x-groq-usage.sse", NULL, 0, "stop", NULL, 0, NULL, NULL, 0, 0,
	    5003, 359, NULL },
	{ "data:anthropic-tool-use.sse", NULL, 0, "tool_calls",
	    "I'll check the current weather in Paris for you.", 1,
	    "{\"location\": \"Paris\"}", "{\"location\": \"Paris\"}", 0, 0, 377,
	    65, NULL },
	{ "data:anthropic-tool-no-args.sse", NULL, 0, "tool_calls",
	    "I'll check the current weather in Paris for you.", 1, "{}", "{}",
	    0, 0, 377, 65, NULL },
	{ "data:anthropic-web-search.sse", NULL, 0, "stop", NULL, 0, NULL, NULL, 0,
	    4, -2, -2, NULL },
	{ "data:anthropic-refusal.sse", NULL, -SAOP_EREFUSED, "refusal", "", 0,
	    NULL, NULL, 0, 0, 20, 0, "" },
	{ "data:anthropic-refusal.json", "application/json", -SAOP_EREFUSED,
	    "refusal", "", 0, NULL, NULL, 0, 0, 20, 4, "" },
	{ "data:anthropic-compaction.sse", NULL, 0, "stop", "Hello there!", 0, NULL,
	    NULL, 0, 0, 30, 8, NULL },
	{ "data:responses-text.sse", NULL, 0, "stop", NULL, 0, NULL, NULL, 0, 0,
	    -2, -2, NULL },
	{ "data:responses-function-call.sse", NULL, 0, "tool_calls", "", 1,
	    "{\"country\":\"France\"}", "{\"country\":\"France\"}", 0, 0, -2,
	    -2, NULL },
	{ "data:responses-incomplete.sse", NULL, 0, "length", NULL, 0, NULL, NULL,
	    0, 0, -2, 3, NULL },
	{ "data:responses-refusal.sse", NULL, -SAOP_EREFUSED, "refusal", "", 0,
	    NULL, NULL, 0, 0, 278, 11,
	    "I'm sorry, but I can't help with that." },
	{ "data:responses-refusal.json", "application/json", -SAOP_EREFUSED,
	    "refusal", "", 0, NULL, NULL, 0, 0, 278, 11,
	    "I'm sorry, but I can't help with that." },
	{ "data:gemini-stream.sse", NULL, 0, "stop",
	    "The capital of France is Paris.\n", 0, NULL, NULL, 0, 0, 13, 8,
	    NULL },
	{ "data:gemini-function-call.sse", NULL, 0, "tool_calls", "", 1,
	    "{\"country\":\"France\"}", "{\"country\":\"France\"}", 0, 0, 52, 5,
	    NULL },
	{ "data:gemini-max-tokens.json", "application/json; charset=UTF-8", 0,
	    "length", "The capital of France is", 0, NULL, NULL, 0, 0, 15, 5,
	    NULL },
	{ "data:gemini-safety.sse", NULL, -SAOP_EREFUSED, "refusal", "The", 0,
	    NULL, NULL, 0, 0, 13, 5, "" },
	{ "data:gemini-safety.json", "application/json", -SAOP_EREFUSED,
	    "refusal", "", 0, NULL, NULL, 0, 0, 13, -1, "" },
	{ "openai-chat-json-stop.sse", NULL, 0, "stop", NULL, 0, NULL,
	    NULL, 0, 0, -2, -2, NULL },
	{ "openai-chat-tool-calls.sse", NULL, 0, "tool_calls", "", 1,
	    NULL, NULL, 0, 0, -2, -2, NULL },
	{ "openai-chat-length.sse", NULL, 0, "length", "{\"", 0, NULL,
	    NULL, 0, 0, -2, -2, NULL },
	{ "anthropic-max-tokens-tool-use.sse", NULL, 0, "length", NULL,
	    1, NULL, NULL, 0, 0, -2, -2, NULL },
	{ "anthropic-prefill-stop-sequence.sse", NULL, 0, "stop", NULL,
	    0, NULL, NULL, 0, 0, -2, -2, NULL },
	{ "ollama-generate-stream.ndjson", "application/x-ndjson", 0,
	    "stop", NULL, 0, NULL, NULL, 0, 0, -2, -2, NULL },
};

/*
 * Parse the first n bytes at s, fed in pieces: cuts[] (ncuts offsets,
 * increasing) split them; the transfer ends clean or broken.  Returns
 * what saop__llm_parser_end() returns, a filled.
 */
static int
parse_cuts(const char *s, size_t n, const char *ctype, const size_t *cuts,
    size_t ncuts, int clean, struct saop_llm_answer *a, struct saop_err *e)
{
	struct saop__llm_parser *p = saop__llm_parser_new(0);
	size_t i, at = 0;
	int r;

	memset(a, 0, sizeof(*a));
	saop_err_clear(e);
	saop__llm_parser_head(p, 200, ctype);
	for (i = 0; i <= ncuts; i++) {
		size_t to = i < ncuts && cuts[i] < n ? cuts[i] : n;

		if (to > at)
			ck_assert_int_eq(saop__llm_parser_feed(p, s + at,
			    to - at), 0);
		at = to > at ? to : at;
	}
	r = saop__llm_parser_end(p, clean, a, e);
	saop__llm_parser_free(p);
	return r;
}

/* The arguments of call i of a, or NULL. */
static const char *
call_args(const struct saop_llm_answer *a, size_t i)
{
	return json_string_value(json_object_get(json_object_get(
	    json_array_get(a->tool_calls, i), "function"), "arguments"));
}

/* Fail unless a and b are the same record (what saop-suspend writes). */
static void
same_answer(const char *what, int ra, const struct saop_llm_answer *a,
    int rb, const struct saop_llm_answer *b)
{
	ck_assert_msg(ra == rb, "%s: %d, not %d", what, rb, ra);
	ck_assert_msg(a->raw_len == b->raw_len &&
	    memcmp(a->raw, b->raw, a->raw_len) == 0, "%s: raw differs", what);
	ck_assert_msg(strcmp(a->finish_reason, b->finish_reason) == 0,
	    "%s: finish %s, not %s", what, b->finish_reason,
	    a->finish_reason);
	ck_assert_msg(a->prompt_tokens == b->prompt_tokens &&
	    a->completion_tokens == b->completion_tokens, "%s: usage", what);
	ck_assert_msg((a->tool_calls == NULL && b->tool_calls == NULL) ||
	    json_equal(a->tool_calls, b->tool_calls), "%s: calls", what);
	ck_assert_msg((a->choices == NULL && b->choices == NULL) ||
	    json_equal(a->choices, b->choices), "%s: choices", what);
	ck_assert_msg((a->server_tools == NULL && b->server_tools == NULL) ||
	    json_equal(a->server_tools, b->server_tools), "%s: server", what);
	ck_assert_msg((a->refusal == NULL && b->refusal == NULL) ||
	    (a->refusal != NULL && b->refusal != NULL &&
	    strcmp(a->refusal, b->refusal) == 0), "%s: refusal", what);
	ck_assert_msg(a->open_call == b->open_call, "%s: open call", what);
}

/* Fail unless fixture x read whole gives what the table says. */
static void
check_whole(const struct fxcase *x, int r, const struct saop_llm_answer *a,
    const struct saop_err *e)
{
	ck_assert_msg(r == x->rc, "%s: %d (%s), not %d", x->name, r, e->msg,
	    x->rc);
	ck_assert_msg(strcmp(a->finish_reason, x->finish) == 0,
	    "%s: finish %s", x->name, a->finish_reason);
	if (x->raw != NULL)
		ck_assert_msg(strcmp(a->raw, x->raw) == 0, "%s: raw '%s'",
		    x->name, a->raw);
	ck_assert_msg(json_array_size(a->tool_calls) == x->ncalls,
	    "%s: %zu calls", x->name, json_array_size(a->tool_calls));
	if (x->args0 != NULL) {
		ck_assert_str_eq(call_args(a, 0), x->args0);
		ck_assert_str_eq(call_args(a, x->ncalls - 1), x->args_last);
	}
	ck_assert_msg(json_array_size(a->choices) == x->nchoices,
	    "%s: %zu other choices", x->name, json_array_size(a->choices));
	ck_assert_msg(json_array_size(a->server_tools) == x->nserver,
	    "%s: %zu server blocks", x->name,
	    json_array_size(a->server_tools));
	if (x->prompt != -2)
		ck_assert_int_eq(a->prompt_tokens, x->prompt);
	if (x->completion != -2)
		ck_assert_int_eq(a->completion_tokens, x->completion);
	if (x->refusal != NULL)
		ck_assert_str_eq(a->refusal, x->refusal);
	else
		ck_assert_ptr_null(a->refusal);
	ck_assert_uint_eq(a->open_call, 0);
	ck_assert(!a->broken);
}

/*
 * Fail unless the answer c of a transfer cut short is either final with
 * the whole answer's text and calls (its finish had come) or not OK
 * (SAOP_ENETWORK, broken) with a part of the whole answer's text and of
 * each call's arguments.
 */
static void
check_cut(const char *what, const struct saop_llm_answer *w, int rc,
    const struct saop_llm_answer *c, const struct saop_err *e)
{
	size_t i;

	if (rc == 0 || (rc == -SAOP_EREFUSED &&
	    strcmp(c->finish_reason, "refusal") == 0)) {
		ck_assert_msg(c->raw_len == w->raw_len &&
		    memcmp(c->raw, w->raw, w->raw_len) == 0,
		    "%s: final with another text", what);
		ck_assert_msg((c->tool_calls == NULL && w->tool_calls == NULL)
		    || json_equal(c->tool_calls, w->tool_calls),
		    "%s: final with other calls", what);
		return;
	}
	ck_assert_msg(rc == -SAOP_ENETWORK, "%s: %d (%s)", what, rc, e->msg);
	ck_assert_msg(c->broken, "%s: not broken", what);
	ck_assert_msg(c->finish_reason[0] == '\0', "%s: a finish", what);
	ck_assert_msg(c->raw_len <= w->raw_len &&
	    memcmp(c->raw, w->raw, c->raw_len) == 0,
	    "%s: the text kept is not the start of the answer", what);
	for (i = 0; i < json_array_size(c->tool_calls); i++) {
		const char *ca = call_args(c, i), *wa = call_args(w, i);

		ck_assert_msg(ca != NULL && wa != NULL &&
		    strncmp(ca, wa, strlen(ca)) == 0,
		    "%s: call %zu: '%s' is not the start of '%s'", what, i,
		    ca, wa != NULL ? wa : "");
	}
	if (c->open_call > 0)
		ck_assert_uint_le(c->open_call,
		    json_array_size(c->tool_calls));
}

START_TEST(every_recorded_answer_reads_the_same_however_split_or_cut)
{
	const struct fxcase *x = &fxcases[_i];
	struct saop_llm_answer w, a;
	struct saop_err e;
	size_t n, k, i, step, cuts[40];
	unsigned seed = 7u + (unsigned)_i;
	char *s, what[200];
	int rw, r;

	s = slurp(x->name, &n);
	rw = parse_cuts(s, n, x->ctype, NULL, 0, 1, &w, &e);
	check_whole(x, rw, &w, &e);
	/* Every piece size up to 9 bytes, then random splits. */
	for (k = 1; k <= 9; k++) {
		size_t m = 0;

		for (i = k; i < n && m < sizeof(cuts) / sizeof(cuts[0]);
		    i += k)
			cuts[m++] = i;
		/* The rest of the body in pieces of k bytes too. */
		{
			struct saop__llm_parser *p = saop__llm_parser_new(0);

			memset(&a, 0, sizeof(a));
			saop__llm_parser_head(p, 200, x->ctype);
			for (i = 0; i < n; i += k)
				ck_assert_int_eq(saop__llm_parser_feed(p,
				    s + i, n - i < k ? n - i : k), 0);
			r = saop__llm_parser_end(p, 1, &a, &e);
			saop__llm_parser_free(p);
		}
		snprintf(what, sizeof(what), "%s in pieces of %zu", x->name,
		    k);
		same_answer(what, rw, &w, r, &a);
		saop_llm_answer_free(&a);
	}
	for (k = 0; k < 30; k++) {
		size_t m = 1 + (size_t)rand_r(&seed) % 39, j;

		for (j = 0; j < m; j++)
			cuts[j] = (size_t)rand_r(&seed) % (n + 1);
		/* Sort the offsets (insertion sort: at most 40). */
		for (j = 1; j < m; j++) {
			size_t v = cuts[j], q = j;

			for (; q > 0 && cuts[q - 1] > v; q--)
				cuts[q] = cuts[q - 1];
			cuts[q] = v;
		}
		r = parse_cuts(s, n, x->ctype, cuts, m, 1, &a, &e);
		snprintf(what, sizeof(what), "%s split at random (%zu)",
		    x->name, k);
		same_answer(what, rw, &w, r, &a);
		saop_llm_answer_free(&a);
	}
	/*
	 * Cut at every offset (every few for the long ones): reset (a
	 * broken transfer) and closed (a server that closes the connection
	 * of an answer without length or chunks).
	 */
	step = n / 400 + 1;
	for (k = 0; k < n; k += step) {
		r = parse_cuts(s, k, x->ctype, NULL, 0, 0, &a, &e);
		snprintf(what, sizeof(what), "%s reset after %zu bytes",
		    x->name, k);
		check_cut(what, &w, r, &a, &e);
		saop_llm_answer_free(&a);
		r = parse_cuts(s, k, x->ctype, NULL, 0, 1, &a, &e);
		snprintf(what, sizeof(what), "%s closed after %zu bytes",
		    x->name, k);
		check_cut(what, &w, r, &a, &e);
		saop_llm_answer_free(&a);
	}
	saop_llm_answer_free(&w);
	free(s);
}
END_TEST

START_TEST(a_cut_inside_the_second_call_names_it)
{
	struct saop_llm_answer w, a;
	struct saop_err e;
	size_t n, k;
	char *s, *second;
	int r;

	s = slurp("data:openai-chat-two-tools.sse", &n);
	ck_assert_int_eq(parse_cuts(s, n, NULL, NULL, 0, 1, &w, &e), 0);
	/* The middle of the second call's arguments. */
	ck_assert_ptr_nonnull(second = strstr(s, "\"index\":1,\"function\":"
	    "{\"arguments\":\"cker"));
	k = (size_t)(second - s) + 60;
	r = parse_cuts(s, k, NULL, NULL, 0, 0, &a, &e);
	ck_assert_int_eq(r, -SAOP_ENETWORK);
	ck_assert_uint_eq(json_array_size(a.tool_calls), 2);
	ck_assert_uint_eq(a.open_call, 2);
	ck_assert_str_eq(call_args(&a, 0), call_args(&w, 0));
	ck_assert_int_ne(strcmp(call_args(&a, 1), call_args(&w, 1)), 0);
	saop_llm_answer_free(&a);
	/* Cut inside the first: the first is named. */
	ck_assert_ptr_nonnull(second = strstr(s, "{\\\"ci"));
	r = parse_cuts(s, (size_t)(second - s) + 80, NULL, NULL, 0, 0, &a,
	    &e);
	ck_assert_int_eq(r, -SAOP_ENETWORK);
	ck_assert_uint_eq(a.open_call, 1);
	saop_llm_answer_free(&a);
	saop_llm_answer_free(&w);
	free(s);
}
END_TEST

START_TEST(empty_data_lines_comments_and_other_fields_are_skipped)
{
	const char *in = ": hello\n\ndata:\n\nevent: x\nid: 7\nretry: 10\n"
	    "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}   \n\n"
	    "data: {\"choices\":[{\"delta\":{\"content\":null},"
	    "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]";
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(parse(in, strlen(in), 5, "text/event-stream", &a,
	    &e), 0);
	ck_assert_str_eq(a.raw, "a");
	ck_assert_str_eq(a.finish_reason, "stop");
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(answer_over_the_limit_is_elimit)
{
	struct saop__llm_parser *p = saop__llm_parser_new(16);
	struct saop_llm_answer a;
	struct saop_err e;
	const char *ev = "data: {\"choices\":[{\"delta\":{\"content\":"
	    "\"0123456789\"}}]}\n\n";
	int i, r = 0;

	memset(&a, 0, sizeof(a));
	saop__llm_parser_head(p, 200, "text/event-stream");
	for (i = 0; i < 3 && r == 0; i++)
		r = saop__llm_parser_feed(p, ev, strlen(ev));
	ck_assert_int_eq(r, -SAOP_ELIMIT);
	ck_assert_int_eq(saop__llm_parser_end(p, 0, &a, &e), -SAOP_ELIMIT);
	ck_assert_int_eq(saop_err_exit_status(e.code), 65);
	saop__llm_parser_free(p);
	saop_llm_answer_free(&a);
}
END_TEST

/* ---- a damaged answer is never taken (issue 8, defect 4) ---- */

#define OA_EV(t)	"data: {\"choices\":[{\"index\":0,\"delta\":" \
	"{\"content\":\"" t "\"}}]}\n\n"
#define OA_END		"data: {\"choices\":[{\"index\":0,\"delta\":{}," \
	"\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
#define AN_EV(t)	"event: content_block_delta\ndata: {\"type\":" \
	"\"content_block_delta\",\"index\":0,\"delta\":{\"type\":" \
	"\"text_delta\",\"text\":\"" t "\"}}\n\n"
#define AN_START	"event: message_start\ndata: {\"type\":" \
	"\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\"," \
	"\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":" \
	"5,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: " \
	"{\"type\":\"content_block_start\",\"index\":0,\"content_block\":" \
	"{\"type\":\"text\",\"text\":\"\"}}\n\nevent: ping\ndata: " \
	"{\"type\": \"ping\"}\n\n"
#define AN_END		"event: content_block_stop\ndata: {\"type\":" \
	"\"content_block_stop\",\"index\":0}\n\nevent: message_delta\n" \
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":" \
	"\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":" \
	"9}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

/* The stream "1", ", 2", bad, "3]}" in a wire format; a new string. */
static char *
damaged(int anthropic, const char *bad)
{
	char *s;

	ck_assert_int_gt(asprintf(&s, "%s%s%s%s%s%s",
	    anthropic ? AN_START : "",
	    anthropic ? AN_EV("1") AN_EV(", 2") : OA_EV("1") OA_EV(", 2"),
	    bad, anthropic ? AN_EV("3]}") : OA_EV("3]}"),
	    anthropic ? AN_END : OA_END, ""), 0);
	return s;
}

START_TEST(a_bad_sse_event_mid_stream_fails_and_keeps_nothing)
{
	/* Events that do not parse, or have no known shape. */
	static const char *const any[] = {
	    "data: {\"delta\":\"7777\"}\n\n",
	    "data: {\"delta\":\"77\n\n",
	    "data: 7777\n\n",
	    "data: [\"7777\"]\n\n",
	    "event: content_block_delta\ndata: {}\n\n",
	    NULL };
	static const char *const openai[] = {
	    "data: {\"choices\":[{\"index\":0,\"delta\":\"7777\"}]}\n\n",
	    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":7777}}]}"
	    "\n\n",
	    "data: {\"choices\":\"7777\"}\n\n",
	    "data: {\"choices\":[\"7777\"]}\n\n",
	    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
	    "\"7777\"}}]}\n\n",
	    NULL };
	static const char *const anthropic[] = {
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
	    "\"index\":0,\"delta\":\"7777\"}\n\n",
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
	    "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":7777}}\n\n",
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
	    "\"index\":0,\"delta\":{\"type\":\"new_delta\",\"text\":\"7777\"}}"
	    "\n\n",
	    "event: text_delta\ndata: {\"type\":\"text_delta\",\"text\":"
	    "\"7777\"}\n\n",
	    "event: content_block_delta\ndata: {\"type\":7}\n\n",
	    NULL };
	const char *const *sets[2][2] = { { any, openai }, { any, anthropic } };
	struct saop_llm_answer a;
	struct saop_err e;
	size_t piece, n;
	char *s, want[32];
	int an, k, i, r;

	for (an = 0; an < 2; an++) {
		/* The same stream without the bad event is fine. */
		s = damaged(an, "");
		ck_assert_int_eq(parse(s, strlen(s), 7, NULL, &a, &e), 0);
		ck_assert_str_eq(a.raw, "1, 23]}");
		ck_assert_str_eq(a.finish_reason, "stop");
		saop_llm_answer_free(&a);
		free(s);
		snprintf(want, sizeof(want), "SSE event %d ", an ? 6 : 3);
		for (k = 0; k < 2; k++)
			for (i = 0; sets[an][k][i] != NULL; i++) {
				s = damaged(an, sets[an][k][i]);
				n = strlen(s);
				for (piece = 1; piece <= n; piece = piece * 3 +
				    1) {
					r = parse(s, n, piece, NULL, &a, &e);
					ck_assert_msg(r == -SAOP_EPROTO,
					    "%s: %d (%s)", sets[an][k][i], r,
					    e.msg);
					ck_assert_msg(strstr(e.msg, want) !=
					    NULL && strstr(e.msg, "byte ") !=
					    NULL, "'%s' does not name the "
					    "event (%s)", e.msg, want);
					ck_assert_int_eq(saop_err_exit_status(
					    e.code), 76);
					/* Nothing of a damaged answer. */
					ck_assert_str_eq(a.raw, "");
					ck_assert_ptr_null(a.tool_calls);
					saop_llm_answer_free(&a);
				}
				free(s);
			}
	}
}
END_TEST

START_TEST(a_bad_ndjson_line_is_named_and_nothing_kept)
{
	const char *in = "{\"response\":\"{\\\"a\\\": \",\"done\":false}\n"
	    "\n{\"response\":7,\"done\":false}\n"
	    "{\"response\":\"1}\",\"done\":true}\n";
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(parse(in, strlen(in), 4, "application/x-ndjson", &a,
	    &e), -SAOP_EPROTO);
	ck_assert_msg(strstr(e.msg, "NDJSON line 2 (byte 38 ") != NULL, "%s",
	    e.msg);
	ck_assert_str_eq(a.raw, "");
	saop_llm_answer_free(&a);
}
END_TEST

START_TEST(known_events_that_carry_no_text_are_still_skipped)
{
	/* Azure's filter results, a role-only delta, the usage chunk. */
	const char *oa = ": OPENROUTER PROCESSING\n\n:" "          \n\n"
	    "data: {\"choices\":[],\"prompt_filter_results\":[]}\n\n"
	    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":"
	    "\"assistant\",\"content\":null,\"refusal\":null}}]}\n\n"
	    OA_EV("{}")
	    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
	    "\"stop\"}],\"usage\":null}\n\n"
	    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,"
	    "\"completion_tokens\":1}}\n\ndata: [DONE]\n\n";
	/* Thinking, a signature, a ping, a stop without text. */
	const char *an = AN_START
	    "event: content_block_start\ndata: {\"type\":\"content_block_start\","
	    "\"index\":1,\"content_block\":{\"type\":\"thinking\",\"thinking\":"
	    "\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":"
	    "\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
	    "\"thinking_delta\",\"thinking\":\"hm\"}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
	    "\"index\":1,\"delta\":{\"type\":\"signature_delta\",\"signature\":"
	    "\"x\"}}\n\nevent: content_block_stop\ndata: {\"type\":"
	    "\"content_block_stop\",\"index\":1}\n\nevent: ping\n"
	    "data: {\"type\": \"ping\"}\n\n" AN_EV("{}") AN_END;
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(parse(oa, strlen(oa), 5, NULL, &a, &e), 0);
	ck_assert_str_eq(a.raw, "{}");
	ck_assert_int_eq(a.prompt_tokens, 3);
	saop_llm_answer_free(&a);
	ck_assert_int_eq(parse(an, strlen(an), 5, NULL, &a, &e), 0);
	ck_assert_str_eq(a.raw, "{}");
	ck_assert_str_eq(a.finish_reason, "stop");
	ck_assert_int_eq(a.completion_tokens, 9);
	saop_llm_answer_free(&a);
}
END_TEST

/*
 * Anthropic may add event types: one that carries no part of an answer is
 * left, one that might (a delta, text) is not the protocol.
 */
START_TEST(an_unknown_anthropic_event_is_left_unless_it_carries_content)
{
	const char *quiet = AN_START
	    "event: usage_update\ndata: {\"type\":\"usage_update\","
	    "\"index\":0,\"note\":\"x\"}\n\n" AN_EV("{}") AN_END;
	const char *loud = AN_START
	    "event: text_chunk\ndata: {\"type\":\"text_chunk\","
	    "\"index\":0,\"text\":\"7\"}\n\n" AN_EV("{}") AN_END;
	struct saop_llm_answer a;
	struct saop_err e;

	ck_assert_int_eq(parse(quiet, strlen(quiet), 7, NULL, &a, &e), 0);
	ck_assert_str_eq(a.raw, "{}");
	saop_llm_answer_free(&a);
	ck_assert_int_lt(parse(loud, strlen(loud), 7, NULL, &a, &e), 0);
	ck_assert_int_eq(e.code, SAOP_EPROTO);
	saop_llm_answer_free(&a);
}
END_TEST

/*
 * After the end marker the answer is whole: a line after [DONE] is not
 * read, so the answer is the same whether the transfer broke after the
 * marker or not (a fuzz regression: junk-after-done.sse).
 */
START_TEST(nothing_after_the_end_marker_is_read)
{
	const char *s = OA_EV("{}") "data: {\"choices\":[{\"index\":0,"
	    "\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
	    "data: [DONE]\n\ndata: {\"not\": \"a chunk\"}\n\ndata: {\"x";
	struct saop_llm_answer a;
	struct saop_err e;
	int clean;

	for (clean = 0; clean <= 1; clean++) {
		struct saop__llm_parser *p = saop__llm_parser_new(0);

		memset(&a, 0, sizeof(a));
		saop__llm_parser_head(p, 200, "text/event-stream");
		ck_assert_int_eq(saop__llm_parser_feed(p, s, strlen(s)), 0);
		ck_assert_int_eq(saop__llm_parser_end(p, clean, &a, &e), 0);
		saop__llm_parser_free(p);
		ck_assert_str_eq(a.raw, "{}");
		ck_assert_str_eq(a.finish_reason, "stop");
		saop_llm_answer_free(&a);
	}
}
END_TEST

/* ---- the key never leaks, not even in part (issue 8, defect 5) ---- */

/* Fail when s holds any 8 consecutive characters of KEY. */
static void
assert_no_key_run(const char *s)
{
	char run[9];
	size_t i;

	for (i = 0; i + 8 <= strlen(KEY); i++) {
		memcpy(run, KEY + i, 8);
		run[8] = '\0';
		ck_assert_msg(strstr(s, run) == NULL, "'%s' of the key is in "
		    "'%s'", run, s);
	}
}

START_TEST(a_key_straddling_any_cut_of_an_error_message_is_masked)
{
	char steps[64][600], pad[400];
	const char *sp[65];
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	int i, n = 0, len;

	memset(pad, 'x', sizeof(pad));
	/* Around the 120-byte cut of a plain body, the 300 of a message. */
	for (len = 90; len <= 330; len += 6) {
		snprintf(steps[n++], sizeof(steps[0]), "{\"status\": 401, "
		    "\"any_key\": true, \"body\": {\"error\": {\"type\": "
		    "\"authentication_error\", \"message\": \"%.*s " KEY
		    "\"}}}", len, pad);
	}
	for (len = 90; len <= 130; len += 3)
		snprintf(steps[n++], sizeof(steps[0]), "{\"status\": 403, "
		    "\"any_key\": true, \"type\": \"text/plain\", "
		    "\"body\": \"%.*s " KEY "\"}", len, pad);
	for (i = 0; i < n; i++)
		sp[i] = steps[i];
	sp[n] = NULL;
	fake_start(&f, OPENAI, sp);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(next(&f, i % 2 ? ANTHROPIC : OPENAI, 1, &a,
		    &e), -SAOP_EREFUSED);
		assert_no_key_run(e.msg);
		saop_llm_answer_free(&a);
	}
	fake_stop(&f);
}
END_TEST

START_TEST(a_key_in_an_error_inside_the_stream_is_masked)
{
	char steps[16][500], pad[400];
	const char *sp[17];
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	int i, n = 0, len;

	memset(pad, 'y', sizeof(pad));
	for (len = 240; len <= 320; len += 8)
		snprintf(steps[n++], sizeof(steps[0]), "{\"text\": \"{\", "
		    "\"stream_error\": {\"status\": 529, "
		    "\"message\": \"%.*s " KEY "\"}}", len, pad);
	/* Only a middle part of the key: still masked. */
	snprintf(steps[n++], sizeof(steps[0]), "{\"status\": 401, "
	    "\"any_key\": true, \"body\": {\"error\": {\"message\": "
	    "\"key ending ...check-llm-01234 is wrong\"}}}");
	for (i = 0; i < n; i++)
		sp[i] = steps[i];
	sp[n] = NULL;
	fake_start(&f, OPENAI, sp);
	for (i = 0; i < n; i++) {
		ck_assert_int_lt(next(&f, i % 2 ? ANTHROPIC : OPENAI, 1, &a,
		    &e), 0);
		assert_no_key_run(e.msg);
		ck_assert_ptr_nonnull(strstr(e.msg, i < n - 1 ? "yyy" :
		    "is wrong"));
		saop_llm_answer_free(&a);
	}
	fake_stop(&f);
}
END_TEST

/* ---- credentials in the base URL are never shown (defect 7) ---- */

/* Fail when s shows any of the base URL's secrets. */
static void
assert_no_url_secret(const char *s)
{
	static const char *const secret[] = { "s3cr3t-user", "s3cr3t-pass",
	    "s3cr3t-query", "s3cr3t-token", NULL };
	int i;

	for (i = 0; secret[i] != NULL; i++)
		ck_assert_msg(strstr(s, secret[i]) == NULL, "%s in '%s'",
		    secret[i], s);
}

START_TEST(url_redact_hides_userinfo_query_values_and_fragment)
{
	static const char *const cases[][2] = {
	    { "https://api.openai.com/v1/chat/completions",
	      "https://api.openai.com/v1/chat/completions" },
	    { "http://user:pass@host:8080/v1/messages",
	      "http://****@host:8080/v1/messages" },
	    { "http://sk-key@host/v1", "http://****@host/v1" },
	    { "http://a:b@c@host/p?q=1", "http://****@host/p?q=****" },
	    { "https://h/v1/chat/completions?key=abc&api-version=2024&x=&flag",
	      "https://h/v1/chat/completions?key=****&api-version=****&x=&"
	      "****" },
	    { "https://h/p?api_key=s#frag", "https://h/p?api_key=****#****" },
	    { "https://h/p/x@y?", "https://h/p/x@y?" },
	    { "user:pw@host/v1", "****@host/v1" },
	    { "", "" },
	};
	size_t i;
	char *r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_ptr_nonnull(r = saop__llm_url_redact(cases[i][0]));
		ck_assert_str_eq(r, cases[i][1]);
		free(r);
	}
}
END_TEST

START_TEST(a_clipped_message_never_cuts_a_character_in_two)
{
	/* 1-, 2-, 3- and 4-byte characters, and one stray continuation. */
	static const char src[] = "ab\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
	    "cd\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	char out[64];
	size_t max, n;

	for (max = 0; max < sizeof(src) - 1; max++) {
		saop__llm_clip(out, sizeof(out), src, max);
		n = strlen(out);
		ck_assert_uint_le(n, max < 3 ? 3 : max);
		ck_assert_uint_ge(n, 3);
		ck_assert_str_eq(out + n - 3, "...");
		/* A whole-character prefix of src, at most 3 bytes short. */
		ck_assert_int_eq(memcmp(out, src, n - 3), 0);
		ck_assert_uint_eq(saop_utf8_valid(out, n), n);
		/* Backed up by at most the 3 bytes of a cut character. */
		ck_assert_uint_ge(n, max < 3 ? 3 : max - 3);
	}
	saop__llm_clip(out, sizeof(out), src, sizeof(src) - 1);
	ck_assert_str_eq(out, src);
	/* A stray continuation byte is not a character to keep whole. */
	saop__llm_clip(out, sizeof(out), "abcd\x80\x80xyz", 8);
	ck_assert_str_eq(out, "abcd\x80...");
}
END_TEST

START_TEST(credentials_in_the_base_url_are_not_shown)
{
	const char *steps[] = { "{\"status\": 404}", "{\"status\": 500, "
	    "\"body\": \"down\", \"type\": \"text/plain\"}", NULL };
	struct saop_llm_answer a;
	struct saop_err e;
	struct fake f;
	json_t *req = simple_request();
	char *out = NULL, base[200];
	size_t len = 0;
	FILE *fp;

	fake_start(&f, OPENAI, steps);
	snprintf(base, sizeof(base), "http://s3cr3t-user:s3cr3t-pass@"
	    "127.0.0.1:%d/v1?key=s3cr3t-query&api_key=s3cr3t-token", f.port);
	free(f.cfg.base);
	f.cfg.base = strdup(base);
	ck_assert_int_eq(next(&f, OPENAI, 1, &a, &e), -SAOP_EREFUSED);
	assert_no_url_secret(e.msg);
	/* The URL is shown, only its secrets hidden. */
	ck_assert_msg(strstr(e.msg, "http://****@127.0.0.1:") != NULL &&
	    strstr(e.msg, "/v1/chat/completions?key=****&api_key=****") !=
	    NULL, "%s", e.msg);
	saop_llm_answer_free(&a);
	ck_assert_int_eq(next(&f, OPENAI, 1, &a, &e), -SAOP_ENETWORK);
	assert_no_url_secret(e.msg);
	saop_llm_answer_free(&a);
	ck_assert_ptr_nonnull(fp = open_memstream(&out, &len));
	ck_assert_int_eq(saop_llm_dry_run(fp, &f.cfg, req, &e), 0);
	fclose(fp);
	assert_no_url_secret(out);
	ck_assert_ptr_nonnull(strstr(out, "POST http://****@127.0.0.1:"));
	free(out);
	fake_stop(&f);
	/* Nobody listens: the transport error does not show them either. */
	f.cfg.base = (char *)"http://s3cr3t-user:s3cr3t-pass@127.0.0.1:1/v1"
	    "?key=s3cr3t-query";
	f.cfg.key = (char *)KEY;
	f.cfg.model = (char *)"m";
	ck_assert_int_eq(saop_llm_call(&f.cfg, req, &a, &e), -SAOP_ENETWORK);
	assert_no_url_secret(e.msg);
	saop_llm_answer_free(&a);
	json_decref(req);
}
END_TEST

/*
 * The one sum of a call's cost: bytes sent and received added call by
 * call (an answer without raw text adds none), a token count null until
 * some call reports it, then the sum of those that did.
 */
START_TEST(a_calls_cost_is_summed_once_and_shown_alike)
{
	struct saop_llm_answer a1, a2, a3;
	struct saop_llm_cost c;
	json_t *j, *want;

	memset(&a1, 0, sizeof(a1));
	memset(&a2, 0, sizeof(a2));
	memset(&a3, 0, sizeof(a3));
	a1.raw = "{\"a\"";
	a1.raw_len = 4;
	a1.prompt_tokens = -1;
	a1.completion_tokens = -1;
	a2.raw = "1}";
	a2.raw_len = 2;
	a2.prompt_tokens = 10;
	a2.completion_tokens = -1;
	a3.raw = NULL;
	a3.raw_len = 7;	/* no text: not received */
	a3.prompt_tokens = 5;
	a3.completion_tokens = 0;
	saop_llm_cost_init(&c);
	ck_assert_int_eq(saop_llm_cost_put(NULL, &c), -1);
	j = json_pack("{s:i}", "attempt", 1);
	ck_assert_int_eq(saop_llm_cost_put(j, &c), 0);
	want = json_pack("{s:i,s:i,s:i,s:n,s:n,s:f}", "attempt", 1,
	    "sent_bytes", 0, "received_bytes", 0, "prompt_tokens",
	    "completion_tokens", "cost", 0.0);
	ck_assert(json_equal(j, want));
	json_decref(want);
	json_decref(j);
	saop_llm_cost_add(&c, 100, &a1);
	j = json_object();
	ck_assert_int_eq(saop_llm_cost_put(j, &c), 0);
	ck_assert(json_is_null(json_object_get(j, "prompt_tokens")));
	json_decref(j);
	saop_llm_cost_add(&c, 30, &a2);
	saop_llm_cost_add(&c, 1, &a3);
	ck_assert_int_eq(c.calls, 3);
	j = json_object();
	ck_assert_int_eq(saop_llm_cost_put(j, &c), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "sent_bytes")),
	    131);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "received_bytes")), 6);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "prompt_tokens")), 15);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "completion_tokens")), 0);
	ck_assert(json_is_integer(json_object_get(j, "completion_tokens")));
	/* None of the three priced: the cost not known, never 0. */
	ck_assert(json_is_null(json_object_get(j, "cost")));
	json_decref(j);
}
END_TEST

/*
 * The cost in money: priced calls summed; one call not priced makes the
 * sum unknown (null), however many were priced.
 */
START_TEST(a_calls_money_is_summed_and_unknown_stays_unknown)
{
	struct saop_llm_answer a;
	struct saop_llm_cost c;
	json_t *j;

	memset(&a, 0, sizeof(a));
	saop_llm_cost_init(&c);
	a.priced = 1;
	a.cost = 0.25;
	saop_llm_cost_add(&c, 1, &a);
	a.cost = 0.5;
	saop_llm_cost_add(&c, 1, &a);
	j = json_object();
	ck_assert_int_eq(saop_llm_cost_put(j, &c), 0);
	ck_assert(json_is_real(json_object_get(j, "cost")));
	ck_assert(json_real_value(json_object_get(j, "cost")) == 0.75);
	json_decref(j);
	a.priced = 0;
	saop_llm_cost_add(&c, 1, &a);
	j = saop_llm_cost_usd(&c);
	ck_assert(json_is_null(j));
	json_decref(j);
}
END_TEST

/*
 * A record's cost: the answer's and recovery's parts added to, recovery
 * made 0 beside the first part written; a part not known stays null; no
 * call changes nothing.
 */
START_TEST(a_records_cost_adds_up_by_part)
{
	struct saop_llm_answer a;
	struct saop_llm_cost none, one, unknown;
	json_t *rec = json_object(), *c;

	memset(&a, 0, sizeof(a));
	saop_llm_cost_init(&none);
	saop_llm_cost_init(&one);
	saop_llm_cost_init(&unknown);
	a.priced = 1;
	a.cost = 0.125;
	saop_llm_cost_add(&one, 1, &a);
	a.priced = 0;
	saop_llm_cost_add(&unknown, 1, &a);
	ck_assert_int_eq(saop_record_add_cost(rec, "recovery", &none), 0);
	ck_assert_ptr_null(saop_record_cost(rec));
	ck_assert_int_eq(saop_record_add_cost(rec, "answer", &one), 0);
	ck_assert_ptr_nonnull(c = saop_record_cost(rec));
	ck_assert(json_real_value(json_object_get(c, "answer")) == 0.125);
	ck_assert(json_is_real(json_object_get(c, "recovery")));
	ck_assert(json_real_value(json_object_get(c, "recovery")) == 0);
	ck_assert_int_eq(saop_record_add_cost(rec, "recovery", &one), 0);
	ck_assert_int_eq(saop_record_add_cost(rec, "recovery", &one), 0);
	c = saop_record_cost(rec);
	ck_assert(json_real_value(json_object_get(c, "recovery")) == 0.25);
	ck_assert_int_eq(saop_record_add_cost(rec, "recovery", &unknown), 0);
	c = saop_record_cost(rec);
	ck_assert(json_is_null(json_object_get(c, "recovery")));
	ck_assert_int_eq(saop_record_add_cost(rec, "recovery", &one), 0);
	c = saop_record_cost(rec);
	ck_assert(json_is_null(json_object_get(c, "recovery")));
	ck_assert(json_real_value(json_object_get(c, "answer")) == 0.125);
	json_decref(rec);
}
END_TEST

static Suite *
llm_suite(void)
{
	Suite *s = suite_create("llm");
	TCase *fx = tcase_create("fixtures"), *gen = tcase_create("generated");
	TCase *flt = tcase_create("faults"), *cf = tcase_create("config");

	tcase_set_timeout(fx, 60);
	tcase_set_timeout(gen, 120);
	tcase_set_timeout(flt, 60);
	tcase_add_test(fx, a_calls_cost_is_summed_once_and_shown_alike);
	tcase_add_test(fx, a_calls_money_is_summed_and_unknown_stays_unknown);
	tcase_add_test(fx, a_records_cost_adds_up_by_part);
	tcase_add_test(fx, cached_and_reasoning_tokens_of_every_format);
	tcase_add_test(fx,
	    openai_length_stream_gives_the_partial_json_and_length);
	tcase_add_test(fx,
	    openai_length_json_body_gives_the_partial_json_and_length);
	tcase_add_test(fx, openai_stop_stream_assembles_every_delta);
	tcase_add_test(fx, openai_stop_json_body_is_read);
	tcase_add_test(fx, openai_tool_call_stream_joins_argument_fragments);
	tcase_add_test(fx,
	    openai_tool_call_json_body_keeps_arguments_as_a_string);
	tcase_add_test(fx, openrouter_error_chunk_after_length_is_an_error);
	tcase_add_test(fx, openrouter_429_without_retry_after_is_a_rate_limit);
	tcase_add_test(fx, retry_after_on_a_200_is_ignored);
	tcase_add_test(fx, ollama_openai_compatible_body_is_read);
	tcase_add_test(fx,
	    reask_roundtrip_request_goes_out_and_its_answer_is_read);
	tcase_add_test(fx, llamacpp_503_loading_model_is_a_network_failure);
	tcase_add_test(fx,
	    anthropic_max_tokens_in_a_tool_use_keeps_the_partial_input);
	tcase_add_test(fx,
	    anthropic_prefill_continuation_is_read_and_prefill_sent);
	tcase_add_test(fx, anthropic_529_overloaded_is_a_network_failure);
	tcase_add_test(fx, anthropic_429_with_recorded_headers_is_a_rate_limit);
	tcase_add_test(fx, anthropic_429_retry_after_is_honoured);
	tcase_add_test(fx, anthropic_prefill_refusals_are_eprefill);
	tcase_add_test(fx, anthropic_prompt_too_long_is_a_bad_request);
	tcase_add_test(fx, ollama_ndjson_stream_is_read);
	tcase_add_test(fx, ollama_error_line_after_tokens_is_an_error);
	tcase_add_test(fx,
	    sse_fixtures_read_the_same_byte_by_byte_and_with_crlf);
	tcase_add_loop_test(fx,
	    every_recorded_answer_reads_the_same_however_split_or_cut, 0,
	    (int)(sizeof(fxcases) / sizeof(fxcases[0])));
	tcase_add_test(fx, a_cut_inside_the_second_call_names_it);
	suite_add_tcase(s, fx);
	tcase_add_test(gen, generated_answers_read_the_same_in_every_form);
	tcase_add_test(gen, generated_tool_calls_read_in_both_formats);
	tcase_add_test(gen, ollama_done_reason_length_is_length);
	tcase_add_test(gen, anthropic_context_window_exceeded_is_length);
	tcase_add_test(gen, anthropic_error_event_inside_a_200_is_an_error);
	tcase_add_test(gen, json_answer_to_a_stream_request_is_accepted);
	suite_add_tcase(s, gen);
	tcase_add_test(flt, connection_refused_is_a_network_failure);
	tcase_add_test(flt, reset_mid_stream_keeps_the_partial_text);
	tcase_add_test(flt, close_mid_stream_keeps_the_partial_text);
	tcase_add_test(flt, stream_ending_without_finish_reason_is_broken);
	tcase_add_test(flt, html_page_with_200_is_not_the_protocol);
	tcase_add_test(flt, garbage_in_an_sse_event_is_not_the_protocol);
	tcase_add_test(flt,
	    unauthorized_is_refused_and_the_key_is_not_in_the_message);
	tcase_add_test(flt, the_key_is_sent_and_a_wrong_key_is_refused);
	tcase_add_test(flt, refusals_for_good_are_erefused);
	tcase_add_test(flt,
	    server_errors_are_network_failures_and_keep_retry_after_rules);
	tcase_add_test(flt,
	    refused_connection_without_answer_is_a_network_failure);
	tcase_add_test(flt, whole_call_timeout_is_a_network_failure);
	tcase_add_test(flt, dns_failure_is_a_network_failure);
	tcase_add_test(flt, tls_certificates_are_verified);
	tcase_add_test(flt,
	    on_failure_is_asked_and_the_call_retried_while_it_says_so);
	tcase_add_test(flt, on_failure_saying_no_returns_the_failure);
	tcase_add_test(flt, answer_over_the_limit_is_elimit);
	tcase_add_test(flt,
	    empty_data_lines_comments_and_other_fields_are_skipped);
	tcase_add_test(flt, a_bad_sse_event_mid_stream_fails_and_keeps_nothing);
	tcase_add_test(flt, known_events_that_carry_no_text_are_still_skipped);
	tcase_add_test(flt,
	    an_unknown_anthropic_event_is_left_unless_it_carries_content);
	tcase_add_test(flt, nothing_after_the_end_marker_is_read);
	tcase_add_test(flt, a_bad_ndjson_line_is_named_and_nothing_kept);
	tcase_add_test(flt,
	    a_key_straddling_any_cut_of_an_error_message_is_masked);
	tcase_add_test(flt, a_key_in_an_error_inside_the_stream_is_masked);
	tcase_add_test(flt, credentials_in_the_base_url_are_not_shown);
	tcase_add_test(flt,
	    url_redact_hides_userinfo_query_values_and_fragment);
	tcase_add_test(cf, a_clipped_message_never_cuts_a_character_in_two);
	suite_add_tcase(s, flt);
	tcase_add_test(cf, config_reads_the_environment);
	tcase_add_test(cf,
	    config_problems_are_reported_by_the_call_and_the_dry_run_only);
	tcase_add_test(cf, no_key_and_no_base_is_a_configuration_error);
	tcase_add_test(cf, openai_body_puts_system_first_and_asks_for_usage);
	tcase_add_test(cf, anthropic_body_lifts_system_and_defaults_max_tokens);
	tcase_add_test(cf, anthropic_system_blocks_are_copied_not_shared);
	tcase_add_test(cf, body_without_model_or_messages_is_refused);
	tcase_add_test(cf, vertex_endpoints_and_body);
	tcase_add_test(cf,
	    dry_run_prints_url_headers_and_body_with_the_key_masked);
	suite_add_tcase(s, cf);
	return s;
}

int
main(void)
{
	const char *top = getenv("top_srcdir");
	struct stat st;

	/* The recorded provider answers are part of the tree. */
	snprintf(fixdir, sizeof(fixdir), "%s/tests/fixtures/llm",
	    top != NULL ? top : ".");
	if (stat(fixdir, &st) != 0) {
		fprintf(stderr, "missing %s (run through make check)\n",
		    fixdir);
		return 1;
	}
	unsetenv("http_proxy");
	unsetenv("https_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("HTTPS_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	signal(SIGPIPE, SIG_IGN);
	return unit_run(llm_suite());
}
