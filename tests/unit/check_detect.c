/*
 * check_detect.c: unit tests of the streaming scanner (lib/detect.c):
 * the edge cases of issue 2, chunking, the closing suffix, the detect
 * object, JSONTestSuite, and the prefix property over the corpora
 * (tests/corpora).
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "saop.h"
#include "unit.h"

/* Scan a string literal (NUL bytes included). */
#define SCAN(lit, r)	scan_buf((lit), sizeof(lit) - 1, (r))

static void
scan_buf(const char *s, size_t n, struct saop_detect_result *r)
{
	ck_assert_int_eq(saop_detect_buffer(s, n, 0, r), 0);
}

/* The verdict of s with the default depth. */
static int
verdict_of(const char *s, size_t n)
{
	struct saop_detect_result r;
	int v;

	scan_buf(s, n, &r);
	v = r.verdict;
	saop_detect_result_free(&r);
	return v;
}

/*
 * s is truncated, and the text up to its close point followed by its
 * closing is complete (and is want, the whole closed text, if set).
 */
static void
check_closes(const char *s, size_t n, const char *want)
{
	struct saop_detect_result r;
	char *full;
	size_t cl, at;

	scan_buf(s, n, &r);
	ck_assert_msg(r.verdict == SAOP_TRUNCATED, "'%.*s' is not truncated "
	    "(%d: %s)", (int)n, s, r.verdict, r.error);
	ck_assert_msg(r.has_close && r.closing != NULL, "'%.*s': no closing",
	    (int)n, s);
	ck_assert_uint_le(r.close_index, n);
	ck_assert_uint_le(r.resume_index, n);
	at = (size_t)r.close_index;
	cl = strlen(r.closing);
	full = malloc(at + cl + 1);
	ck_assert_ptr_nonnull(full);
	memcpy(full, s, at);
	memcpy(full + at, r.closing, cl);
	full[at + cl] = '\0';
	if (want != NULL)
		ck_assert_msg(strcmp(full, want) == 0, "'%.*s': closed to "
		    "'%s', expected '%s'", (int)n, s, full, want);
	ck_assert_msg(verdict_of(full, at + cl) == SAOP_COMPLETE,
	    "'%.*s' closed to '%s' is not complete", (int)n, s, full);
	free(full);
	saop_detect_result_free(&r);
}

/* s is truncated and determines no value: no closing, no close point. */
static void
check_no_close(const char *s, size_t n)
{
	struct saop_detect_result r;

	scan_buf(s, n, &r);
	ck_assert_int_eq(r.verdict, SAOP_TRUNCATED);
	ck_assert_int_eq(r.has_close, 0);
	ck_assert_ptr_null(r.closing);
	saop_detect_result_free(&r);
}

/* The resume point of s (truncated) is at. */
static void
check_resume_at(const char *s, size_t n, uint64_t at)
{
	struct saop_detect_result r;

	scan_buf(s, n, &r);
	ck_assert_int_eq(r.verdict, SAOP_TRUNCATED);
	ck_assert_msg(r.resume_index == at, "'%.*s': resume_index %llu, "
	    "expected %llu", (int)n, s, (unsigned long long)r.resume_index,
	    (unsigned long long)at);
	saop_detect_result_free(&r);
}

/* s is invalid at byte off, with a message holding words. */
static void
check_invalid(const char *s, size_t n, uint64_t off, const char *words)
{
	struct saop_detect_result r;

	scan_buf(s, n, &r);
	ck_assert_msg(r.verdict == SAOP_INVALID, "'%.*s' is not invalid",
	    (int)n, s);
	ck_assert_msg(r.error_offset == off, "'%.*s': error at %llu, "
	    "expected %llu (%s)", (int)n, s,
	    (unsigned long long)r.error_offset, (unsigned long long)off,
	    r.error);
	if (words != NULL)
		ck_assert_msg(strstr(r.error, words) != NULL, "'%.*s': "
		    "message '%s' lacks '%s'", (int)n, s, r.error, words);
	saop_detect_result_free(&r);
}

#define CLOSES(lit, want)	check_closes((lit), sizeof(lit) - 1, (want))
#define NO_CLOSE(lit)		check_no_close((lit), sizeof(lit) - 1)
#define RESUMES_AT(lit, at)	check_resume_at((lit), sizeof(lit) - 1, (at))
#define INVALID_AT(lit, off, w) \
	check_invalid((lit), sizeof(lit) - 1, (off), (w))

START_TEST(empty_input_is_truncated_and_empty)
{
	struct saop_detect_result r;

	SCAN("", &r);
	ck_assert_int_eq(r.verdict, SAOP_TRUNCATED);
	ck_assert_int_eq(r.empty, 1);
	ck_assert_int_eq(r.truncation_index, 0);
	ck_assert_ptr_null(r.last_valid_token);
	ck_assert_str_eq(r.open, "");
	/* Nothing received determines a value: no closing invents one. */
	ck_assert_ptr_null(r.closing);
	ck_assert_int_eq(r.has_close, 0);
	ck_assert_int_eq(r.resume_index, 0);
	saop_detect_result_free(&r);
}
END_TEST

START_TEST(whitespace_only_is_truncated_and_empty)
{
	struct saop_detect_result r;

	SCAN(" \t\r\n \n", &r);
	ck_assert_int_eq(r.verdict, SAOP_TRUNCATED);
	ck_assert_int_eq(r.empty, 1);
	saop_detect_result_free(&r);
	SCAN(" 1", &r);
	ck_assert_int_eq(r.empty, 0);
	saop_detect_result_free(&r);
}
END_TEST

START_TEST(bom_at_the_start_is_skipped_and_reported)
{
	struct saop_detect_result r;

	SCAN("\xef\xbb\xbf{}", &r);
	ck_assert_int_eq(r.verdict, SAOP_COMPLETE);
	ck_assert_int_eq(r.bom, 1);
	saop_detect_result_free(&r);
	SCAN("\xef\xbb\xbf", &r);
	ck_assert_int_eq(r.verdict, SAOP_TRUNCATED);
	ck_assert_int_eq(r.empty, 1);
	ck_assert_int_eq(r.bom, 1);
	saop_detect_result_free(&r);
	SCAN("{}", &r);
	ck_assert_int_eq(r.bom, 0);
	saop_detect_result_free(&r);
	/* Cut inside the BOM: truncated; broken or late: invalid. */
	NO_CLOSE("\xef\xbb");
	RESUMES_AT("\xef\xbb", 0);
	INVALID_AT("\xef\xbb{}", 2, "byte order mark");
	INVALID_AT(" \xef\xbb\xbf{}", 1, "0xef");
}
END_TEST

START_TEST(lone_open_brace_is_truncated_with_its_open_stack)
{
	struct saop_detect_result r;

	SCAN("{", &r);
	ck_assert_int_eq(r.verdict, SAOP_TRUNCATED);
	ck_assert_str_eq(r.open, "{");
	ck_assert_int_eq(r.truncation_index, 1);
	ck_assert_str_eq(r.last_valid_token, "{");
	ck_assert_str_eq(r.expected, "a string key or '}'");
	ck_assert_str_eq(r.closing, "}");
	saop_detect_result_free(&r);
	SCAN("[{\"a\":[", &r);
	ck_assert_str_eq(r.open, "[{[");
	saop_detect_result_free(&r);
}
END_TEST

START_TEST(ten_thousand_deep_nesting_is_followed_without_recursion)
{
	size_t n = 10000;
	char *s = malloc(2 * n + 1);
	struct saop_detect_result r;

	ck_assert_ptr_nonnull(s);
	/* [[[[...]]]]: the first half truncated, the whole complete. */
	memset(s, '[', n);
	memset(s + n, ']', n);
	scan_buf(s, n, &r);
	ck_assert_int_eq(r.verdict, SAOP_TRUNCATED);
	ck_assert_uint_eq(strlen(r.open), n);
	ck_assert_uint_eq(strlen(r.closing), n);
	saop_detect_result_free(&r);
	scan_buf(s, 2 * n, &r);
	ck_assert_int_eq(r.verdict, SAOP_COMPLETE);
	saop_detect_result_free(&r);
	check_closes(s, n, NULL);
	free(s);
}
END_TEST

START_TEST(nesting_beyond_the_limit_is_invalid_with_a_clear_message)
{
	struct saop_detect_result r;

	ck_assert_int_eq(saop_detect_buffer("[[[[", 4, 3, &r), 0);
	ck_assert_int_eq(r.verdict, SAOP_INVALID);
	ck_assert_int_eq(r.error_offset, 3);
	ck_assert_str_eq(r.error, "nesting deeper than 3");
	saop_detect_result_free(&r);
	ck_assert_int_eq(saop_detect_buffer("[[[]]]", 6, 3, &r), 0);
	ck_assert_int_eq(r.verdict, SAOP_COMPLETE);
	saop_detect_result_free(&r);
}
END_TEST

START_TEST(escaped_quotes_and_backslashes_stay_inside_the_string)
{
	ck_assert_int_eq(verdict_of("\"a\\\"b\"", 6), SAOP_COMPLETE);
	ck_assert_int_eq(verdict_of("\"a\\\\\"", 5), SAOP_COMPLETE);
	/* "a\\" then "b": the second quote ends it, b is garbage. */
	INVALID_AT("\"a\\\\\"b", 5, "after the end");
	/* "a\" is still open. */
	CLOSES("\"a\\\"", "\"a\\\"\"");
	/* A cut escape is dropped, never finished. */
	CLOSES("\"a\\", "\"a\"");
	RESUMES_AT("\"a\\", 2);
	ck_assert_int_eq(verdict_of("\"\\/\\b\\f\\n\\r\\t\"", 14),
	    SAOP_COMPLETE);
	INVALID_AT("\"\\x\"", 2, "invalid escape 'x'");
}
END_TEST

START_TEST(u_escapes_cut_anywhere_are_truncated_and_close)
{
	static const char *const cut[] = {
		"\"\\u", "\"\\u0", "\"\\u00", "\"\\u00e", "\"\\uD", "\"\\ud8",
		"\"\\ud83", "\"\\ud83d", "\"\\ud83d\\", "\"\\ud83d\\u",
		"\"\\ud83d\\ud", "\"\\ud83d\\ude", "\"\\ud83d\\ude0",
		"{\"\\u0", "{\"k\\u00"
	};
	size_t i;

	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
		check_closes(cut[i], strlen(cut[i]), NULL);
	/* The cut escape is dropped; a lone high surrogate too. */
	CLOSES("\"text \\u00", "\"text \"");
	CLOSES("\"\\ud8", "\"\"");
	CLOSES("\"x\\ud83d", "\"x\"");
	CLOSES("\"x\\ud83d\\u", "\"x\"");
	CLOSES("{\"k\\u00", "{}");
	/* The resume point keeps the high surrogate: its low half can
	 * follow. */
	RESUMES_AT("\"text \\u00", 6);
	RESUMES_AT("\"x\\ud83d", 8);
	RESUMES_AT("\"x\\ud83d\\", 8);
	RESUMES_AT("\"x\\ud83d\\ude0", 8);
	INVALID_AT("\"\\u12x4\"", 5, "hex digit");
}
END_TEST

START_TEST(surrogate_pairs_are_complete_and_lone_halves_invalid)
{
	ck_assert_int_eq(verdict_of("\"\\ud83d\\ude00\"", 14), SAOP_COMPLETE);
	ck_assert_int_eq(verdict_of("\"\\uDBFF\\uDFFF\"", 14), SAOP_COMPLETE);
	/* A lone low surrogate is known at its second hex digit. */
	INVALID_AT("\"\\udc00\"", 4, "lone low surrogate");
	INVALID_AT("\"\\uDFFF", 4, "lone low surrogate");
	/* A high surrogate followed by anything but a low one. */
	INVALID_AT("\"\\ud800\"", 7, "lone high surrogate");
	INVALID_AT("\"\\ud800\\n\"", 8, "lone high surrogate");
	INVALID_AT("\"\\ud800\\u0041\"", 9, "not followed by a low one");
	INVALID_AT("\"\\ud800\\ud800\"", 10, "not followed by a low one");
	/* Not surrogates: D000-D7FF. */
	ck_assert_int_eq(verdict_of("\"\\ud7ff\"", 8), SAOP_COMPLETE);
}
END_TEST

START_TEST(invalid_utf8_is_invalid_at_the_offending_byte)
{
	INVALID_AT("\"\xc0\x80\"", 1, "overlong");
	INVALID_AT("\"\xc1\xbf\"", 1, "overlong");
	INVALID_AT("\"\xe0\x80\x80\"", 2, "overlong");
	INVALID_AT("\"\xf0\x80\x80\x80\"", 2, "overlong");
	INVALID_AT("\"\xed\xa0\x80\"", 2, "surrogate");
	INVALID_AT("\"\xed\xbf\xbf\"", 2, "surrogate");
	INVALID_AT("\"\xf4\x90\x80\x80\"", 2, "U+10FFFF");
	INVALID_AT("\"\xf5\x80\x80\x80\"", 1, "cannot start");
	INVALID_AT("\"\xff\"", 1, "cannot start");
	INVALID_AT("\"\x80\"", 1, "continuation byte 0x80");
	INVALID_AT("\"\xc3\x28\"", 2, "continuation byte belongs");
	INVALID_AT("\"\xe2\x82\x28\"", 3, "continuation byte belongs");
	INVALID_AT("\"\xf0\x9f\x98\x28\"", 4, "continuation byte belongs");
	INVALID_AT("\xc3\xa9", 0, "0xc3");
	/* The largest and the edges are fine. */
	ck_assert_int_eq(verdict_of("\"\xf4\x8f\xbf\xbf\"", 6), SAOP_COMPLETE);
	ck_assert_int_eq(verdict_of("\"\xed\x9f\xbf\xee\x80\x80\"", 8),
	    SAOP_COMPLETE);
	ck_assert_int_eq(verdict_of("\"\xc2\x80\xdf\xbf\xe0\xa0\x80\"", 9),
	    SAOP_COMPLETE);
}
END_TEST

START_TEST(utf8_cut_inside_a_character_is_truncated_and_finished)
{
	/* The cut character is dropped, never finished. */
	CLOSES("\"\xc3", "\"\"");
	CLOSES("\"a\xe0", "\"a\"");
	CLOSES("\"\xed", "\"\"");
	CLOSES("\"\xf0\x9f", "\"\"");
	CLOSES("\"\xf0", "\"\"");
	CLOSES("\"ab\xf4\x8f\xbf", "\"ab\"");
	CLOSES("[\"\xe2\x82", "[\"\"]");
	RESUMES_AT("[\"ab\xf0\x9f\x98", 4);
	RESUMES_AT("[\"ab\xf0\x9f\x98\x80", 8);
}
END_TEST

START_TEST(nul_bytes_are_invalid_outside_escapes)
{
	INVALID_AT("\"a\0b\"", 2, "control character 0x00");
	INVALID_AT("123\0", 3, "after the end");
	INVALID_AT("[\0]", 1, "0x00");
	ck_assert_int_eq(verdict_of("\"a\\u0000b\"", 10), SAOP_COMPLETE);
}
END_TEST

START_TEST(numbers_cut_anywhere_are_truncated_not_invalid)
{
	/* The dangling part of a number is dropped. */
	NO_CLOSE("-");
	CLOSES("1.", "1");
	CLOSES("1e", "1");
	CLOSES("1E+", "1");
	CLOSES("-0.5e-", "-0.5");
	CLOSES("[-", "[]");
	CLOSES("[1,-", "[1]");
	CLOSES("{\"a\":-", "{}");
	CLOSES("[12", "[12]");
	CLOSES("{\"a\":1.5", "{\"a\":1.5}");
	RESUMES_AT("[1.", 3);
	INVALID_AT("01", 1, "leading zero");
	INVALID_AT("-01", 2, "leading zero");
	INVALID_AT("1.e1", 2, "digit after '.'");
	INVALID_AT("+1", 0, "'+'");
	INVALID_AT(".5", 0, "'.'");
	INVALID_AT("1e+x", 3, "digit of the exponent");
}
END_TEST

START_TEST(a_top_level_number_prefix_is_complete)
{
	struct saop_detect_result r;

	SCAN("12", &r);
	ck_assert_int_eq(r.verdict, SAOP_COMPLETE);
	ck_assert_ptr_null(r.closing);
	saop_detect_result_free(&r);
	ck_assert_int_eq(verdict_of("-0.5e10 ", 8), SAOP_COMPLETE);
	ck_assert_int_eq(verdict_of("0", 1), SAOP_COMPLETE);
}
END_TEST

START_TEST(literals_cut_anywhere_are_truncated)
{
	/* A partial literal determines its literal. */
	CLOSES("t", "true");
	CLOSES("tru", "true");
	CLOSES("nul", "null");
	CLOSES("[f", "[false]");
	CLOSES("{\"a\":n", "{\"a\":null}");
	INVALID_AT("trux", 3, "the rest of 'true'");
	INVALID_AT("[nulll]", 5, "',' or ']'");
	INVALID_AT("True", 0, "'T'");
}
END_TEST

START_TEST(trailing_garbage_after_a_complete_value_is_invalid)
{
	struct saop_detect_result r;

	SCAN("{\"a\":1} x", &r);
	ck_assert_int_eq(r.verdict, SAOP_INVALID);
	ck_assert_int_eq(r.error_offset, 8);
	ck_assert_ptr_nonnull(strstr(r.error, "after the end"));
	saop_detect_result_free(&r);
	INVALID_AT("[] []", 3, "after the end");
	INVALID_AT("1 2", 2, "after the end");
	ck_assert_int_eq(verdict_of("[]\n\t ", 5), SAOP_COMPLETE);
}
END_TEST

START_TEST(an_error_names_its_line_and_column)
{
	struct saop_detect_result r;

	SCAN("{\n  \"a\": 1,\n  \"b\" 2\n}", &r);
	ck_assert_int_eq(r.verdict, SAOP_INVALID);
	ck_assert_int_eq(r.error_line, 3);
	ck_assert_int_eq(r.error_column, 7);
	ck_assert_int_eq(r.error_offset, 18);
	ck_assert_str_eq(r.error, "unexpected '2', expected ':'");
	ck_assert_str_eq(r.expected, "':'");
	saop_detect_result_free(&r);
}
END_TEST

START_TEST(closing_never_invents_a_character_or_a_member)
{
	CLOSES("{", "{}");
	CLOSES("[", "[]");
	CLOSES("[1,", "[1]");
	CLOSES("[1 ", "[1]");
	CLOSES("{\"a\":1,", "{\"a\":1}");
	CLOSES("{\"a\":1,\"b\"", "{\"a\":1}");
	CLOSES("[{\"key\": \"value\", \"key", "[{\"key\": \"value\"}]");
	CLOSES("{\"a\"", "{}");
	CLOSES("{\"a\" ", "{}");
	CLOSES("{\"a\":", "{}");
	CLOSES("{\"a\":1,\"b\": ", "{\"a\":1}");
	CLOSES("{\"a", "{}");
	CLOSES("{\"a\":\"b", "{\"a\":\"b\"}");
	CLOSES("{\"a\":[", "{\"a\":[]}");
	CLOSES("{\"a\":{\"b\":", "{\"a\":{}}");
	CLOSES("[{\"a\":[1,{\"b\":tr", "[{\"a\":[1,{\"b\":true}]}]");
	CLOSES("[[[\n", "[[[]]]");
	CLOSES("[[], ", "[[]]");
	CLOSES("\"", "\"\"");
	NO_CLOSE("  ");
	NO_CLOSE("\xef\xbb");
}
END_TEST

START_TEST(the_truncation_point_is_the_end_of_the_last_complete_token)
{
	struct saop_detect_result r;

	SCAN("{\"name\": \"value\", \"n\": 12", &r);
	ck_assert_int_eq(r.verdict, SAOP_TRUNCATED);
	/* 12 might go on (123): the colon is the last sure token. */
	ck_assert_int_eq(r.truncation_index, 22);
	ck_assert_str_eq(r.last_valid_token, ":");
	saop_detect_result_free(&r);
	SCAN("{\"name\": \"value\", \"n\": \"ab", &r);
	ck_assert_int_eq(r.truncation_index, 22);
	saop_detect_result_free(&r);
	SCAN("{\"name\": \"value\"  ", &r);
	ck_assert_int_eq(r.truncation_index, 16);
	ck_assert_str_eq(r.last_valid_token, "\"value\"");
	ck_assert_str_eq(r.expected, "',' or '}'");
	saop_detect_result_free(&r);
	SCAN("[1, 2", &r);
	ck_assert_int_eq(r.truncation_index, 3);
	saop_detect_result_free(&r);
	SCAN("[1, 2 ", &r);
	ck_assert_int_eq(r.truncation_index, 5);
	ck_assert_str_eq(r.last_valid_token, "2");
	saop_detect_result_free(&r);
}
END_TEST

/* Feed s in chunks of size k; compare with the whole-buffer result. */
static void
check_chunked(const char *s, size_t n, size_t k)
{
	struct saop_detect_result a, b;
	struct saop_detector *d;
	size_t i;

	scan_buf(s, n, &a);
	d = saop_detector_new(0);
	ck_assert_ptr_nonnull(d);
	for (i = 0; i < n; i += k)
		ck_assert_int_ge(saop_detector_feed(d, s + i,
		    n - i < k ? n - i : k), 0);
	ck_assert_int_eq(saop_detector_finish(d, &b), 0);
	saop_detector_free(d);
	ck_assert_int_eq(a.verdict, b.verdict);
	ck_assert_int_eq(a.truncation_index, b.truncation_index);
	ck_assert_int_eq(a.error_offset, b.error_offset);
	ck_assert_int_eq(a.error_line, b.error_line);
	ck_assert_int_eq(a.error_column, b.error_column);
	ck_assert_str_eq(a.error, b.error);
	ck_assert_str_eq(a.open, b.open);
	if (a.closing != NULL || b.closing != NULL)
		ck_assert_str_eq(a.closing, b.closing);
	if (a.last_valid_token != NULL || b.last_valid_token != NULL)
		ck_assert_str_eq(a.last_valid_token, b.last_valid_token);
	saop_detect_result_free(&a);
	saop_detect_result_free(&b);
}

START_TEST(chunks_of_any_size_give_the_same_answer)
{
	static const char *const docs[] = {
		"{\"a\": [1, 2.5e-3, true, null, \"x\\\"y\\u00e9\xc3\xa9"
		    "\xf0\x9f\x98\x80\\ud83d\\ude00\"], \"b\": {}}",
		"{\"a\": [1, 2.5e-3, tru",
		"[\"\\ud83d\\ude0",
		"{\"k\": \"\xe2\x82\xac\xe2\x82",
		"\xef\xbb\xbf [ \n 1 ,\n 2 \n x",
		"[\"abc\", 12345678901234567890123, -0.0E+1",
		"\"\xe0\x80\"",
	};
	size_t i, k;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		for (k = 1; k <= strlen(docs[i]); k++)
			check_chunked(docs[i], strlen(docs[i]), k);
}
END_TEST

START_TEST(a_long_token_keeps_its_tail_across_chunks)
{
	char s[1200];
	struct saop_detect_result r;
	size_t i, n;

	s[0] = '[';
	s[1] = '"';
	for (i = 2; i < 1002; i++)
		s[i] = (char)('a' + i % 26);
	/* A 3-byte character right where the 256-byte tail would cut it. */
	memcpy(s + 1002 - 256, "\xe2\x82\xac", 3);
	s[1002] = '"';
	s[1003] = ',';
	s[1004] = '"';
	n = 1010;
	memset(s + 1005, 'z', 5);
	for (i = 1; i <= 7; i += 3)
		check_chunked(s, n, i);
	scan_buf(s, n, &r);
	ck_assert_int_eq(r.truncation_index, 1004);
	ck_assert_str_eq(r.last_valid_token, ",");
	saop_detect_result_free(&r);
	scan_buf(s, 1003, &r);
	ck_assert_int_eq(r.truncation_index, 1003);
	/* The tail starts after the cut character, on a whole one. */
	ck_assert_uint_eq(strlen(r.last_valid_token), 254);
	ck_assert_int_eq(r.last_valid_token[253], '"');
	saop_detect_result_free(&r);
}
END_TEST

/* Strings equal, or both NULL. */
static int
same_str(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

/*
 * check_chunked() without an assertion per feed (each one costs the
 * runner a write): 1 when feeding s in chunks of size k gives the answer
 * want of the whole buffer.
 */
static int
chunked_agrees(const char *s, size_t n, size_t k,
    const struct saop_detect_result *want)
{
	struct saop_detect_result b;
	struct saop_detector *d;
	size_t i;
	int ok;

	if ((d = saop_detector_new(0)) == NULL)
		return 0;
	for (i = 0; i < n; i += k)
		if (saop_detector_feed(d, s + i, n - i < k ? n - i : k) < 0) {
			saop_detector_free(d);
			return 0;
		}
	ok = saop_detector_finish(d, &b) == 0;
	saop_detector_free(d);
	if (!ok)
		return 0;
	ok = want->verdict == b.verdict && want->length == b.length &&
	    want->truncation_index == b.truncation_index &&
	    want->error_offset == b.error_offset &&
	    want->error_line == b.error_line &&
	    want->error_column == b.error_column &&
	    strcmp(want->error, b.error) == 0 &&
	    same_str(want->expected, b.expected) &&
	    same_str(want->open, b.open) &&
	    same_str(want->closing, b.closing) &&
	    same_str(want->last_valid_token, b.last_valid_token);
	saop_detect_result_free(&b);
	return ok;
}

/*
 * Long strings go through the block scanner (64 bytes at a time, simple
 * escapes included); fed a byte at a time they go byte by byte.  Plant
 * escapes, backslash runs, bad bytes and characters at every offset
 * around the block edges and cut the input at every chunk size: the
 * answers must agree, and the planted faults must be found where they
 * are.
 */
START_TEST(string_runs_split_anywhere_give_the_same_answer)
{
	static const char *const plants[] = {
		"\\n", "\\\\", "\\\"", "\\\\\\\"", "\\\\\\\\\"",
		"\\u00e9", "\\ud83d\\ude00", "\xc3\xa9", "\xe2\x82\xac",
		"\"", "\\x", "\x01", "\xc0\xaf", "\\ud83d", "\\udc00",
		"\\\x01",
	};
	/* Chunk sizes: with the plant at every offset, every cut. */
	static const size_t ks[] = { 1, 2, 3, 5, 16, 17, 63, 64, 65, 127 };
	char s[400];
	struct saop_detect_result r;
	size_t i, j, k, n;
	int ok;

	for (i = 0; i < sizeof(plants) / sizeof(plants[0]); i++) {
		size_t len = strlen(plants[i]);

		for (j = 2; j < 150; j++) {
			/* [" then filler with escapes, the plant at j, more
			 * filler, "] */
			s[0] = '[';
			s[1] = '"';
			for (n = 2; n < j; n++)
				s[n] = n % 11 == 5 ? '\\' : n % 11 == 6 ?
				    't' : (char)('a' + n % 26);
			if (s[j - 1] == '\\')
				s[j - 1] = 'x';
			memcpy(s + j, plants[i], len);
			for (n = j + len; n < j + len + 90; n++)
				s[n] = (char)('A' + n % 26);
			s[n++] = '"';
			s[n++] = ']';
			scan_buf(s, n, &r);
			if (plants[i][0] == '\x01' ||
			    (plants[i][0] == '\\' && plants[i][1] == 'x')) {
				ck_assert_int_eq(r.verdict, SAOP_INVALID);
				ck_assert_int_eq(r.error_offset,
				    j + (plants[i][0] == '\\'));
			}
			ok = 1;
			for (k = 0; k < sizeof(ks) / sizeof(ks[0]); k++)
				ok &= chunked_agrees(s, n, ks[k], &r);
			ck_assert_msg(ok, "plant %zu at %zu: chunks disagree",
			    i, j);
			saop_detect_result_free(&r);
		}
	}
}
END_TEST

START_TEST(input_after_an_invalid_byte_is_counted_not_scanned)
{
	struct saop_detector *d = saop_detector_new(0);
	struct saop_detect_result r;

	ck_assert_int_eq(saop_detector_feed(d, "[1]", 3), SAOP_COMPLETE);
	ck_assert_int_eq(saop_detector_feed(d, "x", 1), SAOP_INVALID);
	ck_assert_int_eq(saop_detector_feed(d, "]]]", 3), SAOP_INVALID);
	ck_assert_int_eq(saop_detector_finish(d, &r), 0);
	ck_assert_int_eq(r.error_offset, 3);
	ck_assert_int_eq(r.length, 7);
	saop_detect_result_free(&r);
	saop_detector_free(d);
	saop_detector_free(NULL);
	saop_detect_result_free(NULL);
}
END_TEST

START_TEST(feed_reports_the_verdict_so_far)
{
	struct saop_detector *d = saop_detector_new(0);

	ck_assert_int_eq(saop_detector_feed(d, "", 0), SAOP_TRUNCATED);
	ck_assert_int_eq(saop_detector_feed(d, "1", 1), SAOP_COMPLETE);
	ck_assert_int_eq(saop_detector_feed(d, "2", 1), SAOP_COMPLETE);
	ck_assert_int_eq(saop_detector_feed(d, ".", 1), SAOP_TRUNCATED);
	ck_assert_int_eq(saop_detector_feed(d, "5 ", 2), SAOP_COMPLETE);
	saop_detector_free(d);
}
END_TEST

/* ---- Wrapped answers ---- */

/* saop_detect_text() of the NUL-terminated s into *r. */
static void
text_scan(const char *s, struct saop_detect_result *r)
{
	ck_assert_int_eq(saop_detect_text(s, strlen(s), 0, r), 0);
}

/* s is read as verdict v, its JSON at byte js after wrapper w. */
static void
wrapped_is(const char *s, enum saop_verdict v, size_t js, const char *w)
{
	struct saop_detect_result r;

	text_scan(s, &r);
	ck_assert_msg(r.verdict == v, "'%s': verdict %d, expected %d (%s)",
	    s, r.verdict, v, r.error);
	if (v != SAOP_INVALID) {
		ck_assert_uint_eq(r.json_start, js);
		ck_assert_msg((w == NULL && r.wrapper == 0) || (w != NULL &&
		    strcmp(saop_detect_wrapper_name(r.wrapper), w) == 0),
		    "'%s': wrapper %u", s, r.wrapper);
	}
	saop_detect_result_free(&r);
}

START_TEST(a_cut_fenced_answer_is_truncated_inside_its_json)
{
	static const char t[] = "```json\n{\"saop\": \"1.0\", \"thought\": "
	    "\"List the fi";
	struct saop_detect_result r, bare;

	text_scan(t, &r);
	ck_assert_int_eq(r.verdict, SAOP_TRUNCATED);
	ck_assert_uint_eq(r.json_start, 8);
	ck_assert_str_eq(saop_detect_wrapper_name(r.wrapper), "fence");
	/* The indexes count in the whole text: the JSON's own plus 8. */
	ck_assert_int_eq(saop_detect_buffer(t + 8, sizeof(t) - 9, 0, &bare),
	    0);
	ck_assert_uint_eq(r.truncation_index, bare.truncation_index + 8);
	ck_assert_uint_eq(r.resume_index, sizeof(t) - 1);
	ck_assert_uint_eq(r.close_index, bare.close_index + 8);
	ck_assert_str_eq(r.closing, "\"}");
	ck_assert_uint_eq(r.length, sizeof(t) - 1);
	saop_detect_result_free(&r);
	saop_detect_result_free(&bare);
}
END_TEST

START_TEST(each_wrapper_is_found_and_named)
{
	wrapped_is("```\n[1, 2", SAOP_TRUNCATED, 4, "fence");
	wrapped_is("~~~json\n{\"a\": 1", SAOP_TRUNCATED, 8, "fence");
	wrapped_is("````json\n{\"a\": 1", SAOP_TRUNCATED, 9, "fence");
	wrapped_is("Sure! Here is the envelope:\n```json\n{\"a\": 1",
	    SAOP_TRUNCATED, 36, "prose+fence");
	wrapped_is("Here it is:\n{\"a\": \"x", SAOP_TRUNCATED, 12, "prose");
	wrapped_is("The answer: {\"a\": 1", SAOP_TRUNCATED, 12, "prose");
	wrapped_is("<think>\nthe user wants {x}\n</think>\n{\"a\": [1",
	    SAOP_TRUNCATED, 36, "think");
	wrapped_is("<reasoning>r</reasoning>```json\n{\"a\": 1",
	    SAOP_TRUNCATED, 32, "think+fence");
	wrapped_is("<think>t</think>\nOK:\n{\"a\": 1", SAOP_TRUNCATED, 21,
	    "think+prose");
	/* Bare JSON is bare, whatever it holds. */
	wrapped_is("{\"a\": \"```json\\n{\"}", SAOP_COMPLETE, 0, NULL);
	wrapped_is("  [1, 2", SAOP_TRUNCATED, 0, NULL);
}
END_TEST

START_TEST(a_complete_fenced_answer_is_complete_with_its_wrapper)
{
	struct saop_detect_result r;

	wrapped_is("```json\n{\"a\": 1}\n```\n", SAOP_COMPLETE, 8, "fence");
	wrapped_is("```json\n{\"a\": 1}\n``", SAOP_COMPLETE, 8, "fence");
	wrapped_is("Here:\n{\"a\": 1}\n\nAnything else?", SAOP_COMPLETE, 6,
	    "prose");
	text_scan("```json\n{\"a\": 1}\n```\n", &r);
	ck_assert_uint_eq(r.json_end, 16);
	saop_detect_result_free(&r);
	/* Words right after the value, on its line, are no trailer. */
	wrapped_is("Here: {\"a\": 1} and more", SAOP_INVALID, 0, NULL);
}
END_TEST

START_TEST(a_text_with_no_single_reading_stays_invalid)
{
	struct saop_detect_result r;

	/* Two starts that both scan. */
	text_scan("Like this: {\"a\": 1}\n{\"b\": 2", &r);
	ck_assert_int_eq(r.verdict, SAOP_INVALID);
	ck_assert_ptr_nonnull(strstr(r.error, "two possible starts"));
	saop_detect_result_free(&r);
	/* A '{' inside the <think> block is not a start; cut inside it,
	 * there is no JSON yet. */
	text_scan("<think>\n{\"a\": 1", &r);
	ck_assert_int_eq(r.verdict, SAOP_INVALID);
	ck_assert_ptr_nonnull(strstr(r.error, "reasoning block"));
	saop_detect_result_free(&r);
	/* Braces inside the prose (not at a line's start, not after ": ")
	 * are words. */
	wrapped_is("Use {braces} and [x]:\n{\"a\": 1", SAOP_TRUNCATED, 22,
	    "prose");
	/* A prose-led text whose only candidate is not JSON. */
	text_scan("Hello there\n{oops", &r);
	ck_assert_int_eq(r.verdict, SAOP_INVALID);
	ck_assert_ptr_nonnull(strstr(r.error, "no '{' or '['"));
	saop_detect_result_free(&r);
	/* Prose only, cut before the JSON. */
	wrapped_is("Sure! Here is", SAOP_INVALID, 0, NULL);
	wrapped_is("```json", SAOP_INVALID, 0, NULL);
}
END_TEST

START_TEST(a_number_cut_at_the_end_of_a_cut_answer_is_truncated)
{
	struct saop_detect_result r;

	SCAN("1", &r);
	ck_assert_int_eq(r.verdict, SAOP_COMPLETE);
	ck_assert_int_eq(saop_detect_mark_cut(&r, "1", 1), 1);
	ck_assert_int_eq(r.verdict, SAOP_TRUNCATED);
	ck_assert_uint_eq(r.resume_index, 1);
	ck_assert_uint_eq(r.truncation_index, 0);
	ck_assert_str_eq(r.closing, "");
	saop_detect_result_free(&r);
	/* White space after it ended it; a string or an object is not a
	 * number; a fenced one counts from its start. */
	SCAN("12 ", &r);
	ck_assert_int_eq(saop_detect_mark_cut(&r, "12 ", 3), 0);
	saop_detect_result_free(&r);
	SCAN("\"1\"", &r);
	ck_assert_int_eq(saop_detect_mark_cut(&r, "\"1\"", 3), 0);
	saop_detect_result_free(&r);
	text_scan("```\n-12.5", &r);
	ck_assert_int_eq(r.verdict, SAOP_COMPLETE);
	ck_assert_int_eq(saop_detect_mark_cut(&r, "```\n-12.5", 9), 1);
	ck_assert_uint_eq(r.truncation_index, 4);
	saop_detect_result_free(&r);
}
END_TEST

START_TEST(the_detect_object_has_the_documented_keys)
{
	static const char *const keys[] = { "complete", "truncated",
	    "empty", "bom", "length", "truncation_index", "resume_index",
	    "last_valid_token", "open", "expected", "close_index", "closing",
	    "closing_bytes", "error", "json_start", "wrapper" };
	struct saop_detect_result r;
	json_t *j;
	size_t i;

	SCAN("{\"a\":[tr", &r);
	j = saop_detect_result_json(&r);
	ck_assert_ptr_nonnull(j);
	ck_assert_uint_eq(json_object_size(j), sizeof(keys) / sizeof(keys[0]));
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		ck_assert_msg(json_object_get(j, keys[i]) != NULL, "no %s",
		    keys[i]);
	ck_assert(json_is_true(json_object_get(j, "truncated")));
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "truncation_index")), 6);
	ck_assert_str_eq(json_string_value(json_object_get(j, "closing")),
	    "ue]}");
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "resume_index")), 8);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "close_index")), 8);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j,
	    "open"), 1)), "[");
	ck_assert(json_is_null(json_object_get(j, "error")));
	json_decref(j);
	saop_detect_result_free(&r);

	SCAN("[1,]", &r);
	j = saop_detect_result_json(&r);
	ck_assert(json_is_false(json_object_get(j, "truncated")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "error"), "offset")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j,
	    "error"), "column")), 4);
	ck_assert(json_is_null(json_object_get(j, "truncation_index")));
	ck_assert(json_is_null(json_object_get(j, "resume_index")));
	ck_assert(json_is_null(json_object_get(j, "close_index")));
	json_decref(j);
	saop_detect_result_free(&r);
	ck_assert_str_eq(saop_verdict_state(SAOP_COMPLETE), "OK");
	ck_assert_str_eq(saop_verdict_state(SAOP_TRUNCATED), "TRUNCATED");
	ck_assert_str_eq(saop_verdict_state(SAOP_INVALID), "INVALID");
}
END_TEST

START_TEST(a_cut_character_is_left_out_of_the_close_and_resume_points)
{
	struct saop_detect_result r;
	json_t *j, *b;

	SCAN("[\"\xe2\x82", &r);
	j = saop_detect_result_json(&r);
	ck_assert_ptr_nonnull(j);
	/* closing_bytes stays, always empty: nothing is finished. */
	b = json_object_get(j, "closing_bytes");
	ck_assert_uint_eq(json_array_size(b), 0);
	ck_assert_str_eq(json_string_value(json_object_get(j, "closing")),
	    "\"]");
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "close_index")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "resume_index")), 2);
	json_decref(j);
	saop_detect_result_free(&r);
	SCAN("{\"a\":\"x\", \"b", &r);
	j = saop_detect_result_json(&r);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "close_index")), 8);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "resume_index")), 12);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "truncation_index")), 9);
	json_decref(j);
	saop_detect_result_free(&r);
}
END_TEST

/* ---- The corpora (tests/corpora). ---- */

/* The directory of the corpora: $top_srcdir/tests/corpora. */
static const char *
corpora(void)
{
	static char dir[4000];
	const char *top = getenv("top_srcdir");

	snprintf(dir, sizeof(dir), "%s/tests/corpora",
	    top != NULL ? top : ".");
	return dir;
}

/* Read path whole; NULL when it cannot be read. */
static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)n + 1)) != NULL) {
		*len = fread(b, 1, (size_t)n, f);
		b[*len] = '\0';
	}
	fclose(f);
	return b;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir that start with prefix and end in .json, sorted;
 * *n of them (free each and the array). */
static char **
list_dir(const char *dir, const char *prefix, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	ck_assert_msg(d != NULL, "cannot open %s: %s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);

		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || l < 5 ||
		    strcmp(e->d_name + l - 5, ".json") != 0)
			continue;
		if (*n == cap) {
			char **nv;

			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			ck_assert_ptr_nonnull(nv);
			v = nv;
		}
		v[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	if (*n > 0)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void
free_list(char **v, size_t n)
{
	while (n > 0)
		free(v[--n]);
	free(v);
}

static char parsing_dir[4096];

START_TEST(jsontestsuite_y_files_are_complete)
{
	char **v, path[8192];
	size_t n, i, len;

	v = list_dir(parsing_dir, "y_", &n);
	ck_assert_uint_eq(n, 95);
	for (i = 0; i < n; i++) {
		char *b;

		snprintf(path, sizeof(path), "%s/%s", parsing_dir, v[i]);
		b = slurp(path, &len);
		ck_assert_ptr_nonnull(b);
		ck_assert_msg(verdict_of(b, len) == SAOP_COMPLETE,
		    "%s is not complete", v[i]);
		free(b);
	}
	free_list(v, n);
}
END_TEST

START_TEST(jsontestsuite_n_files_get_their_decided_verdicts)
{
	char path[8192], line[1024], name[512], verdict[32], off[32], *b;
	struct saop_detect_result r;
	const char *data = getenv("top_srcdir");
	size_t len, seen = 0, trunc = 0;
	char **v;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/data/detect/jsontestsuite-n.txt",
	    data != NULL ? data : ".");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		ck_assert_int_eq(sscanf(line, "%511s %31s %31s", name, verdict,
		    off), 3);
		snprintf(path, sizeof(path), "%s/%s", parsing_dir, name);
		b = slurp(path, &len);
		ck_assert_msg(b != NULL, "cannot read %s", path);
		scan_buf(b, len, &r);
		if (strcmp(verdict, "truncated") == 0) {
			ck_assert_msg(r.verdict == SAOP_TRUNCATED,
			    "%s: not truncated (%s)", name, r.error);
			trunc++;
		} else {
			ck_assert_msg(r.verdict == SAOP_INVALID,
			    "%s: not invalid", name);
			ck_assert_msg(r.error_offset == strtoull(off, NULL, 10),
			    "%s: invalid at %llu, expected %s (%s)", name,
			    (unsigned long long)r.error_offset, off, r.error);
			ck_assert(r.error[0] != '\0');
		}
		saop_detect_result_free(&r);
		free(b);
		seen++;
	}
	fclose(f);
	/* Every n_ file is decided, none twice. */
	v = list_dir(parsing_dir, "n_", &n);
	ck_assert_uint_eq(seen, n);
	free_list(v, n);
	/* DESIGN.md's 31 prefixes of valid JSON, and the lone BOM. */
	ck_assert_uint_eq(trunc, 32);
}
END_TEST

START_TEST(jsontestsuite_i_files_get_a_verdict_without_crashing)
{
	char **v, path[8192];
	struct saop_detect_result r;
	size_t n, i, len;

	v = list_dir(parsing_dir, "i_", &n);
	ck_assert_uint_eq(n, 35);
	for (i = 0; i < n; i++) {
		char *b;

		snprintf(path, sizeof(path), "%s/%s", parsing_dir, v[i]);
		b = slurp(path, &len);
		ck_assert_ptr_nonnull(b);
		check_chunked(b, len, 1);
		scan_buf(b, len, &r);
		ck_assert(r.verdict != SAOP_INVALID || r.error[0] != '\0');
		saop_detect_result_free(&r);
		free(b);
	}
	free_list(v, n);
}
END_TEST

/* Prefixes of one document checked in full (closing scanned and parsed). */
#define FULL_CHECKS	400
/* Documents up to this size get every prefix checked in full. */
#define WHOLE_BELOW	2048

static unsigned long prefixes_seen, closings_checked, jansson_checked;

/*
 * c (the closing of a prefix) as a closed value may determine: a quote or
 * the rest of the literal the prefix ends inside (a prefix of what the
 * whole document b has at k), then the closers of open, innermost first.
 * 1 when it holds only that.
 */
static int
closing_adds_nothing(const char *c, const char *b, size_t len, size_t k,
    const char *open)
{
	size_t n = strlen(open), i;

	if (*c == '"')
		c++;
	else {
		size_t lit = strcspn(c, "]}");

		if (lit > 0 && (k + lit > len || memcmp(c, b + k, lit) != 0 ||
		    (strncmp(c, "rue", lit) != 0 && strncmp(c, "ue", lit) != 0 &&
		    strncmp(c, "e", lit) != 0 && strncmp(c, "alse", lit) != 0 &&
		    strncmp(c, "lse", lit) != 0 && strncmp(c, "se", lit) != 0 &&
		    strncmp(c, "ull", lit) != 0 && strncmp(c, "ll", lit) != 0 &&
		    strncmp(c, "l", lit) != 0)))
			return 0;
		c += lit;
	}
	if (strlen(c) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (c[i] != (open[n - 1 - i] == '{' ? '}' : ']'))
			return 0;
	return 1;
}

/*
 * The closed value c holds nothing the whole value f does not: the same
 * type; a string a prefix of f's; an array the first items of f's, all
 * equal but the last, which holds nothing f's does not; an object the
 * members of f's, all equal but at most one, likewise; a literal equal.
 */
static int
holds_nothing_new(const json_t *c, const json_t *f)
{
	const char *k;
	json_t *v;
	size_t i, n, partial = 0;

	if (json_is_number(c))
		return json_is_number(f);
	if (json_typeof(c) != json_typeof(f))
		return 0;
	switch (json_typeof(c)) {
	case JSON_STRING:
		n = json_string_length(c);
		return n <= json_string_length(f) && memcmp(json_string_value(c),
		    json_string_value(f), n) == 0;
	case JSON_ARRAY:
		n = json_array_size(c);
		if (n > json_array_size(f))
			return 0;
		for (i = 0; i < n; i++)
			if (!(i + 1 == n ? holds_nothing_new :
			    (int (*)(const json_t *, const json_t *))
			    json_equal)(json_array_get(c, i),
			    json_array_get(f, i)))
				return 0;
		return 1;
	case JSON_OBJECT:
		json_object_foreach((json_t *)c, k, v) {
			const json_t *fv = json_object_get(f, k);

			if (fv == NULL)
				return 0;
			if (json_equal(v, fv))
				continue;
			if (partial++ > 0 || !holds_nothing_new(v, fv))
				return 0;
		}
		return 1;
	default:
		return json_equal(c, f);
	}
}

/*
 * Every proper prefix of the complete document b is truncated (or a
 * complete top-level scalar); for a spread of them, prefix + closing is
 * complete by the scanner and, when jansson parses b, by jansson.
 */
static void
check_prefixes(const char *name, const char *b, size_t len)
{
	struct saop_detector *d = saop_detector_new(0);
	struct saop_detect_result r, f;
	json_error_t je;
	json_t *j, *whole;
	int jansson_ok;
	size_t k, step, cl, at;
	char *full;

	ck_assert_ptr_nonnull(d);
	ck_assert_msg(verdict_of(b, len) == SAOP_COMPLETE, "%s is not "
	    "complete", name);
	whole = json_loadb(b, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	jansson_ok = whole != NULL;
	step = len / FULL_CHECKS + 1;
	full = malloc(len + SAOP_MAX_DEPTH + 64);
	ck_assert_ptr_nonnull(full);
	for (k = 0; k < len; k++) {
		/* The prefix b[0..k), scanned one byte at a time. */
		if (k > 0)
			ck_assert_int_ge(saop_detector_feed(d, b + k - 1, 1),
			    0);
		ck_assert_int_eq(saop_detector_finish(d, &r), 0);
		prefixes_seen++;
		ck_assert_msg(r.verdict != SAOP_INVALID, "%s: prefix of %zu "
		    "bytes is invalid: %s at %llu", name, k, r.error,
		    (unsigned long long)r.error_offset);
		if (r.verdict == SAOP_COMPLETE) {
			/* A top-level number cut short (12 of 123), or the
			 * whole value before trailing white space. */
			ck_assert_msg(strchr("-0123456789", b[strspn(b,
			    " \t\r\n\xef\xbb\xbf")]) != NULL ||
			    strspn(b + k, " \t\r\n") == len - k, "%s: prefix "
			    "of %zu bytes is complete", name, k);
		} else if (!r.has_close) {
			/* Only a prefix that determines no value has none. */
			ck_assert_msg(strspn(b, " \t\r\n\xef\xbb\xbf-") >= k,
			    "%s: prefix of %zu bytes has no closing", name, k);
		} else {
			/* Every prefix: its closing adds only what the prefix
			 * determines. */
			at = (size_t)r.close_index;
			ck_assert_uint_le(at, k);
			ck_assert_uint_ge(r.resume_index, r.truncation_index);
			ck_assert_uint_le(r.resume_index, k);
			ck_assert_msg(closing_adds_nothing(r.closing, b, len, k,
			    r.open), "%s: prefix of %zu bytes: closing '%s' "
			    "adds to what it determines", name, k, r.closing);
		}
		if (r.has_close && (len <= WHOLE_BELOW || k % step == 0 ||
		    len - k < 16)) {
			/* It makes the prefix whole, and parsed holds nothing
			 * the document does not: every prefix of a small
			 * document, a spread of a large one. */
			at = (size_t)r.close_index;
			cl = strlen(r.closing);
			memcpy(full, b, at);
			memcpy(full + at, r.closing, cl);
			ck_assert_msg(verdict_of(full, at + cl) == SAOP_COMPLETE,
			    "%s: prefix of %zu bytes closed to '%.*s' is not "
			    "complete", name, k, (int)(at + cl), full);
			closings_checked++;
			if (jansson_ok) {
				/* Parsed, it holds nothing b does not. */
				j = json_loadb(full, at + cl, JSON_DECODE_ANY |
				    JSON_ALLOW_NUL, &je);
				ck_assert_msg(j != NULL, "%s: prefix of %zu "
				    "bytes closed: jansson: %s", name, k,
				    je.text);
				/* (A document with a key twice is not
				 * its jansson tree: last wins there.) */
				ck_assert_msg(holds_nothing_new(j, whole) ||
				    strstr(name, "duplicate") != NULL,
				    "%s: prefix of %zu bytes closed to '%.*s' "
				    "holds what the prefix does not determine",
				    name, k, (int)(at + cl), full);
				json_decref(j);
				jansson_checked++;
			}
		}
		if (r.verdict == SAOP_TRUNCATED && (k % step == 0 ||
		    len - k < 16)) {
			/* Same answer scanned fresh. */
			scan_buf(b, k, &f);
			ck_assert_int_eq(f.verdict, r.verdict);
			ck_assert(f.closing == r.closing || strcmp(f.closing,
			    r.closing) == 0);
			ck_assert_int_eq(f.truncation_index,
			    r.truncation_index);
			ck_assert_int_eq(f.resume_index, r.resume_index);
			ck_assert_int_eq(f.close_index, r.close_index);
			saop_detect_result_free(&f);
		}
		saop_detect_result_free(&r);
	}
	free(full);
	json_decref(whole);
	saop_detector_free(d);
}

START_TEST(every_y_file_prefix_is_truncated_and_closes)
{
	char **v, path[8192];
	size_t n, i, len;

	prefixes_seen = closings_checked = jansson_checked = 0;
	v = list_dir(parsing_dir, "y_", &n);
	for (i = 0; i < n; i++) {
		char *b;

		snprintf(path, sizeof(path), "%s/%s", parsing_dir, v[i]);
		b = slurp(path, &len);
		ck_assert_ptr_nonnull(b);
		check_prefixes(v[i], b, len);
		free(b);
	}
	free_list(v, n);
	ck_assert_uint_gt(closings_checked, 1000);
	ck_assert_uint_gt(jansson_checked, 900);
}
END_TEST

/* check_prefixes on every .json file under dir, recursively; the count. */
static size_t
walk(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[8192], *b;
	size_t len, count = 0, l;

	ck_assert_msg(d != NULL, "cannot open %s", dir);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		l = strlen(e->d_name);
		if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0) {
			b = slurp(path, &len);
			ck_assert_msg(b != NULL, "cannot read %s", path);
			check_prefixes(path, b, len);
			free(b);
			count++;
		} else {
			DIR *sub = opendir(path);

			if (sub != NULL) {
				closedir(sub);
				count += walk(path);
			}
		}
	}
	closedir(d);
	return count;
}

START_TEST(every_schema_suite_prefix_is_truncated_and_closes)
{
	char dir[4096];
	size_t n;

	prefixes_seen = closings_checked = jansson_checked = 0;
	snprintf(dir, sizeof(dir), "%s/JSON-Schema-Test-Suite/tests",
	    corpora());
	n = walk(dir);
	ck_assert_uint_ge(n, 100);
	ck_assert_uint_gt(prefixes_seen, 500000);
	ck_assert_uint_gt(jansson_checked, 20000);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("detect");
	TCase *tc = tcase_create("scanner");
	TCase *tcc = tcase_create("corpora");

	tcase_add_test(tc, empty_input_is_truncated_and_empty);
	tcase_add_test(tc, whitespace_only_is_truncated_and_empty);
	tcase_add_test(tc, bom_at_the_start_is_skipped_and_reported);
	tcase_add_test(tc, lone_open_brace_is_truncated_with_its_open_stack);
	tcase_add_test(tc,
	    ten_thousand_deep_nesting_is_followed_without_recursion);
	tcase_add_test(tc,
	    nesting_beyond_the_limit_is_invalid_with_a_clear_message);
	tcase_add_test(tc,
	    escaped_quotes_and_backslashes_stay_inside_the_string);
	tcase_add_test(tc, u_escapes_cut_anywhere_are_truncated_and_close);
	tcase_add_test(tc,
	    surrogate_pairs_are_complete_and_lone_halves_invalid);
	tcase_add_test(tc, invalid_utf8_is_invalid_at_the_offending_byte);
	tcase_add_test(tc,
	    utf8_cut_inside_a_character_is_truncated_and_finished);
	tcase_add_test(tc, nul_bytes_are_invalid_outside_escapes);
	tcase_add_test(tc, numbers_cut_anywhere_are_truncated_not_invalid);
	tcase_add_test(tc, a_top_level_number_prefix_is_complete);
	tcase_add_test(tc, literals_cut_anywhere_are_truncated);
	tcase_add_test(tc, trailing_garbage_after_a_complete_value_is_invalid);
	tcase_add_test(tc, an_error_names_its_line_and_column);
	tcase_add_test(tc,
	    closing_never_invents_a_character_or_a_member);
	tcase_add_test(tc,
	    the_truncation_point_is_the_end_of_the_last_complete_token);
	tcase_add_test(tc, chunks_of_any_size_give_the_same_answer);
	tcase_add_test(tc, a_long_token_keeps_its_tail_across_chunks);
	tcase_add_test(tc, string_runs_split_anywhere_give_the_same_answer);
	tcase_add_test(tc, input_after_an_invalid_byte_is_counted_not_scanned);
	tcase_add_test(tc, feed_reports_the_verdict_so_far);
	tcase_add_test(tc, the_detect_object_has_the_documented_keys);
	tcase_add_test(tc,
	    a_cut_character_is_left_out_of_the_close_and_resume_points);
	tcase_add_test(tc, a_cut_fenced_answer_is_truncated_inside_its_json);
	tcase_add_test(tc, each_wrapper_is_found_and_named);
	tcase_add_test(tc,
	    a_complete_fenced_answer_is_complete_with_its_wrapper);
	tcase_add_test(tc, a_text_with_no_single_reading_stays_invalid);
	tcase_add_test(tc,
	    a_number_cut_at_the_end_of_a_cut_answer_is_truncated);
	suite_add_tcase(s, tc);

	snprintf(parsing_dir, sizeof(parsing_dir),
	    "%s/JSONTestSuite/test_parsing", corpora());
	tcase_set_timeout(tcc, 300);
	tcase_add_test(tcc, jsontestsuite_y_files_are_complete);
	tcase_add_test(tcc, jsontestsuite_n_files_get_their_decided_verdicts);
	tcase_add_test(tcc,
	    jsontestsuite_i_files_get_a_verdict_without_crashing);
	tcase_add_test(tcc, every_y_file_prefix_is_truncated_and_closes);
	tcase_add_test(tcc, every_schema_suite_prefix_is_truncated_and_closes);
	suite_add_tcase(s, tcc);
	return unit_run(s);
}
