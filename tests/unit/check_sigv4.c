/*
 * check_sigv4.c: AWS Signature Version 4 (lib/llm-sigv4.c).  Against
 * AWS's published test suite (tests/fixtures/sigv4/SOURCE): each case's
 * canonical request, string to sign, signature and Authorization header
 * the same.  Against a second signer written apart (tests/sigv4-ref.py,
 * from AWS's documentation with Python's hashlib and hmac; and botocore's
 * SigV4Auth where it is installed): Bedrock's paths, whose model IDs hold
 * ':' sent as %3A and signed as %253A, with a session token, a query and a
 * port.  A signed Bedrock call of saop's (saop__llm_sigv4()) checked the
 * same way (tests/cli/bedrock.sh has --dry-run's view of it, masked).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include <jansson.h>

#include "saop-private.h"
#include "llm-int.h"
#include "unit.h"

/* The contents of tests/fixtures/sigv4/CASE/NAME (malloc), or NULL. */
static char *
vector_file(const char *kase, const char *name)
{
	const char *top = getenv("top_srcdir");
	char path[1024], *s;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/tests/fixtures/sigv4/%s/%s",
	    top != NULL ? top : ".", kase, name);
	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

static const char *const cases[] = {
	"get-vanilla", "get-vanilla-query-order-key-case",
	"get-vanilla-query-unreserved", "get-vanilla-utf8-query", "get-utf8",
	"get-header-value-trim", "get-header-key-duplicate", "post-vanilla",
	"post-x-www-form-urlencoded", "post-sts-header-before",
	"post-sts-header-after",
};

/*
 * Each case of AWS's suite: request.txt read (its request line, its
 * headers, its body), signed as context.json says, and every step
 * compared with the suite's files.
 */
START_TEST(aws_suite)
{
	const char *kase = cases[_i];
	char *req = vector_file(kase, "request.txt");
	char *ctx = vector_file(kase, "context.json");
	char *creq = vector_file(kase, "header-canonical-request.txt");
	char *sts = vector_file(kase, "header-string-to-sign.txt");
	char *sig = vector_file(kase, "header-signature.txt");
	char *sreq = vector_file(kase, "header-signed-request.txt");
	struct saop__sigv4_hdr hd[8];
	struct saop__sigv4 in;
	struct saop__sigv4_out out;
	json_t *c;
	char url[1024], method[16], *line, *next, *host = NULL, *auth;
	const char *token;
	size_t nh = 0;

	ck_assert_msg(req != NULL && ctx != NULL && creq != NULL &&
	    sts != NULL && sig != NULL && sreq != NULL, "%s: files", kase);
	c = json_loads(ctx, 0, NULL);
	ck_assert_ptr_nonnull(c);
	memset(&in, 0, sizeof(in));
	/* "GET /path HTTP/1.1", then "Name:value" lines, a blank, the body. */
	line = req;
	next = strstr(line, "\n");
	ck_assert_ptr_nonnull(next);
	*next++ = '\0';
	{
		char *sp = strchr(line, ' '), *end = strrchr(line, ' ');

		ck_assert(sp != NULL && end != NULL && end > sp);
		snprintf(method, sizeof(method), "%.*s", (int)(sp - line),
		    line);
		*end = '\0';
		/* The path after the host, once it is known. */
		line = sp + 1;
	}
	in.method = method;
	{
		char *path = line;

		for (line = next; line != NULL && *line != '\0'; line = next) {
			char *colon;

			next = strchr(line, '\n');
			if (next != NULL)
				*next++ = '\0';
			if (*line == '\0')
				break;
			colon = strchr(line, ':');
			ck_assert_ptr_nonnull(colon);
			*colon = '\0';
			if (strcasecmp(line, "Host") == 0) {
				host = colon + 1;
				continue;
			}
			ck_assert_uint_lt(nh, 8);
			hd[nh].name = line;
			hd[nh].value = colon + 1;
			nh++;
		}
		ck_assert_ptr_nonnull(host);
		snprintf(url, sizeof(url), "https://%s%s", host, path);
	}
	in.url = url;
	in.headers = hd;
	in.nheaders = nh;
	in.payload = next != NULL ? next : "";
	in.payload_len = strlen(in.payload);
	in.amz_date = "20150830T123600Z";
	in.region = json_string_value(json_object_get(c, "region"));
	in.service = json_string_value(json_object_get(c, "service"));
	in.id = json_string_value(json_object_get(json_object_get(c,
	    "credentials"), "access_key_id"));
	in.secret = json_string_value(json_object_get(json_object_get(c,
	    "credentials"), "secret_access_key"));
	token = json_string_value(json_object_get(json_object_get(c,
	    "credentials"), "token"));
	in.token = json_is_true(json_object_get(c, "omit_session_token")) ?
	    NULL : token;
	in.content_sha256 = json_is_true(json_object_get(c, "sign_body"));
	ck_assert_int_eq(saop__sigv4_sign(&in, &out), 0);
	ck_assert_msg(strcmp(out.canonical, creq) == 0,
	    "%s: canonical request\n%s\nnot\n%s", kase, out.canonical, creq);
	ck_assert_msg(strcmp(out.to_sign, sts) == 0,
	    "%s: string to sign\n%s\nnot\n%s", kase, out.to_sign, sts);
	ck_assert_str_eq(out.signature, sig);
	auth = strstr(sreq, "Authorization:");
	ck_assert_ptr_nonnull(auth);
	auth += strlen("Authorization:");
	auth[strcspn(auth, "\r\n")] = '\0';
	ck_assert_str_eq(out.authorization, auth);
	saop__sigv4_free(&out);
	ck_assert_ptr_null(out.authorization);
	json_decref(c);
	free(req);
	free(ctx);
	free(creq);
	free(sts);
	free(sig);
	free(sreq);
}
END_TEST

/*
 * The Authorization tests/sigv4-ref.py gives (with --botocore when
 * botocore), in out (size bytes).  Returns 1, or 0 when it cannot say
 * (no python3, no botocore: exit 77).
 */
static int
reference(int botocore, const struct saop__sigv4 *in, char *out,
    size_t size)
{
	const char *py = getenv("PYTHON3"), *top = getenv("top_srcdir");
	char cmd[4096];
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/sigv4-ref.py' %s '%s' "
	    "'%s' '%s' '%s' '%s' '%s' '%s' '%s' '%.*s'", py != NULL ? py :
	    "python3", top != NULL ? top : ".", botocore ? "--botocore" : "",
	    in->method, in->url, in->amz_date, in->region, in->service,
	    in->id, in->secret, in->token != NULL ? in->token : "-",
	    (int)in->payload_len, in->payload);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	if (fgets(out, (int)size, p) == NULL)
		out[0] = '\0';
	st = pclose(p);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		return 0;
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", cmd);
	out[strcspn(out, "\n")] = '\0';
	return 1;
}

/* Bedrock's URLs, as saop sends them (the model ID encoded once). */
static const char *const bedrock_urls[] = {
	"https://bedrock-runtime.us-west-2.amazonaws.com/model/"
	    "anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream",
	"https://bedrock-runtime.eu-central-1.amazonaws.com/model/"
	    "arn%3Aaws%3Abedrock%3Aeu-central-1%3A123456789012%3A"
	    "inference-profile%2Feu.anthropic.claude-3-haiku-20240307-v1%3A0/"
	    "converse",
	"http://127.0.0.1:8080/v1/model/meta.llama3-70b-instruct-v1%3A0/"
	    "converse-stream?b=2&a=x%20y",
	"https://bedrock-runtime.us-east-1.amazonaws.com:443/model/"
	    "amazon.nova-pro-v1%3A0/converse",
};

/*
 * A Bedrock path with ':' (and an ARN's '/') in the model ID: the same
 * Authorization as the reference's and, where installed, botocore's; the
 * canonical URI encoded twice.
 */
START_TEST(bedrock_paths)
{
	struct saop__sigv4 in;
	struct saop__sigv4_out out;
	char want[1024];
	int b;

	memset(&in, 0, sizeof(in));
	in.method = "POST";
	in.url = bedrock_urls[_i];
	in.payload = "{\"messages\":[{\"role\":\"user\",\"content\":"
	    "[{\"text\":\"hi\"}]}]}";
	in.payload_len = strlen(in.payload);
	in.amz_date = "20261128T093015Z";
	in.region = "us-west-2";
	in.service = "bedrock";
	in.id = "AKIDEXAMPLE";
	in.secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	in.token = _i % 2 == 0 ? "FQoGZXIvYXdzEXAMPLE//token+/=" : NULL;
	ck_assert_int_eq(saop__sigv4_sign(&in, &out), 0);
	ck_assert_ptr_nonnull(strstr(out.canonical, "%253A"));
	ck_assert_ptr_null(strstr(out.canonical, "/%3A"));
	for (b = 0; b <= 1; b++) {
		if (!reference(b, &in, want, sizeof(want)))
			continue;
		ck_assert_msg(strcmp(out.authorization, want) == 0,
		    "%s%s:\n%s\nnot\n%s\ncanonical:\n%s", b ? "botocore: " :
		    "", in.url, out.authorization, want, out.canonical);
	}
	saop__sigv4_free(&out);
}
END_TEST

/*
 * saop's own call: saop__llm_sigv4() of a Bedrock configuration at a
 * fixed time, to the URL saop__llm_endpoint() makes: the date as AWS
 * writes it, the session token signed, the reference's Authorization.
 */
START_TEST(bedrock_call)
{
	struct saop_llm_config cfg;
	struct saop__sigv4 in;
	struct saop__sigv4_out out;
	char date[17], want[1024], *url;
	const char *body = "{\"messages\":[]}";

	memset(&cfg, 0, sizeof(cfg));
	cfg.provider = SAOP_PROVIDER_BEDROCK;
	cfg.stream = 1;
	cfg.aws_region = (char *)"eu-west-1";
	cfg.aws_id = (char *)"AKIDEXAMPLE";
	cfg.aws_secret = (char *)"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	cfg.aws_token = (char *)"session-token-example";
	cfg.base = (char *)"https://bedrock-runtime.eu-west-1.amazonaws.com";
	ck_assert_int_eq(saop__llm_sigv4_wanted(&cfg), 1);
	url = saop__llm_endpoint(&cfg,
	    "anthropic.claude-3-haiku-20240307-v1:0");
	ck_assert_ptr_nonnull(url);
	ck_assert_str_eq(url, "https://bedrock-runtime.eu-west-1.amazonaws.com"
	    "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream");
	/* 2026-11-28 09:30:15 UTC */
	ck_assert_int_eq(saop__llm_sigv4(&cfg, url, body, 1795858215, date,
	    &out), 0);
	ck_assert_str_eq(date, "20261128T093015Z");
	ck_assert_ptr_nonnull(strstr(out.authorization,
	    "SignedHeaders=host;x-amz-date;x-amz-security-token, "));
	memset(&in, 0, sizeof(in));
	in.method = "POST";
	in.url = url;
	in.amz_date = date;
	in.region = cfg.aws_region;
	in.service = "bedrock";
	in.id = cfg.aws_id;
	in.secret = cfg.aws_secret;
	in.token = cfg.aws_token;
	in.payload = body;
	in.payload_len = strlen(body);
	if (reference(0, &in, want, sizeof(want)))
		ck_assert_str_eq(out.authorization, want);
	saop__sigv4_free(&out);
	/* A Bedrock API key: a bearer token, nothing signed. */
	cfg.key = (char *)"bedrock-api-key-0123456789";
	ck_assert_int_eq(saop__llm_sigv4_wanted(&cfg), 0);
	free(url);
}
END_TEST

/* What the signer refuses: no host, a date of another form. */
START_TEST(refused)
{
	struct saop__sigv4 in;
	struct saop__sigv4_out out;

	memset(&in, 0, sizeof(in));
	in.method = "POST";
	in.url = "https://example.amazonaws.com/";
	in.amz_date = "2026-11-28T09:30:15Z";
	in.region = "us-east-1";
	in.service = "bedrock";
	in.id = "AKID";
	in.secret = "s";
	ck_assert_int_eq(saop__sigv4_sign(&in, &out), -SAOP_EDATA);
	ck_assert_ptr_null(out.authorization);
	in.amz_date = "20261128T093015Z";
	in.url = "example.amazonaws.com/";
	ck_assert_int_eq(saop__sigv4_sign(&in, &out), -SAOP_EDATA);
	in.url = "https:///model";
	ck_assert_int_eq(saop__sigv4_sign(&in, &out), -SAOP_EDATA);
}
END_TEST

/* The suite. */
static Suite *
sigv4_suite(void)
{
	Suite *s = suite_create("sigv4");
	TCase *tc = tcase_create("sigv4");

	tcase_add_loop_test(tc, aws_suite, 0, sizeof(cases) /
	    sizeof(cases[0]));
	tcase_add_loop_test(tc, bedrock_paths, 0, sizeof(bedrock_urls) /
	    sizeof(bedrock_urls[0]));
	tcase_add_test(tc, bedrock_call);
	tcase_add_test(tc, refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(sigv4_suite());
}
