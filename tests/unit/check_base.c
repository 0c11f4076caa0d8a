/* check_base.c: unit tests for buf.c, utf8.c and escape.c. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"
#include "unit.h"

/* An allocator that always fails, for the out-of-memory paths. */
static void *
no_memory(void *p, size_t n)
{
	(void)p;
	(void)n;
	return NULL;
}

START_TEST(buf_grows_and_stays_nul_terminated)
{
	struct saop__buf b;
	size_t i, len;
	char *s;

	saop__buf_init(&b);
	for (i = 0; i < 10000; i++)
		ck_assert_int_eq(saop__buf_putc(&b, 'a' + (int)(i % 26)), 0);
	ck_assert_uint_eq(b.len, 10000);
	ck_assert(b.cap > b.len);
	ck_assert_int_eq(b.data[b.len], '\0');
	ck_assert_int_eq(saop__buf_append(&b, "xyz", 3), 0);
	ck_assert_str_eq(b.data + 10000, "xyz");
	ck_assert_int_eq(saop__buf_append(&b, NULL, 0), 0);
	s = saop__buf_steal(&b, &len);
	ck_assert_uint_eq(len, 10003);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	free(s);
	saop__buf_free(&b);
	saop__buf_free(NULL);
}
END_TEST

START_TEST(buf_steal_of_nothing_is_an_empty_string)
{
	struct saop__buf b;
	size_t len = 7;
	char *s;

	saop__buf_init(&b);
	s = saop__buf_steal(&b, &len);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "");
	ck_assert_uint_eq(len, 0);
	free(s);
}
END_TEST

START_TEST(buf_append_max_refuses_past_the_limit)
{
	struct saop__buf b;

	saop__buf_init(&b);
	ck_assert_int_eq(saop__buf_append_max(&b, "12345", 5, 8), 0);
	ck_assert_int_eq(saop__buf_append_max(&b, "678", 3, 8), 0);
	ck_assert_int_eq(saop__buf_append_max(&b, "9", 1, 8),
	    -SAOP_ELIMIT);
	ck_assert_uint_eq(b.len, 8);
	ck_assert_str_eq(b.data, "12345678");
	ck_assert_int_eq(saop__buf_append_max(&b, "", 0, 8), 0);
	ck_assert_int_eq(saop__buf_append_max(&b, "x", 1, 4), -SAOP_ELIMIT);
	saop__buf_free(&b);
}
END_TEST

START_TEST(buf_refuses_sizes_that_overflow)
{
	struct saop__buf b;

	saop__buf_init(&b);
	ck_assert_int_eq(saop__buf_append(&b, "ab", 2), 0);
	ck_assert_int_eq(saop__buf_reserve(&b, SIZE_MAX), -SAOP_ENOMEM);
	ck_assert_int_eq(saop__buf_reserve(&b, SIZE_MAX - 2), -SAOP_ENOMEM);
	ck_assert_int_eq(saop__buf_append(&b, "", SIZE_MAX - 1),
	    -SAOP_ENOMEM);
	ck_assert_uint_eq(b.len, 2);
	ck_assert_str_eq(b.data, "ab");
	saop__buf_free(&b);
}
END_TEST

START_TEST(buf_out_of_memory_leaves_it_unchanged)
{
	struct saop__buf b;
	char big[200];

	memset(big, 'z', sizeof(big));
	saop__buf_init(&b);
	ck_assert_int_eq(saop__buf_append(&b, "keep", 4), 0);
	saop__buf_realloc = no_memory;
	ck_assert_int_eq(saop__buf_append(&b, big, sizeof(big)),
	    -SAOP_ENOMEM);
	ck_assert_int_eq(saop__buf_putc(&b, '!'), 0);	/* room left */
	saop__buf_realloc = realloc;
	ck_assert_str_eq(b.data, "keep!");
	saop__buf_free(&b);
	saop__buf_realloc = no_memory;
	ck_assert_ptr_null(saop__buf_steal(&b, NULL));
	ck_assert_int_eq(saop__buf_putc(&b, 'x'), -SAOP_ENOMEM);
	saop__buf_realloc = realloc;
	ck_assert_ptr_null(b.data);
}
END_TEST

/* saop__utf8_seq() on the n bytes at s. */
static size_t
seq(const char *s, size_t n)
{
	return saop__utf8_seq((const unsigned char *)s, n);
}

START_TEST(utf8_accepts_every_length_at_its_edges)
{
	uint32_t cp;

	ck_assert_uint_eq(seq("\x00", 1), 1);
	ck_assert_uint_eq(seq("\x7f", 1), 1);
	ck_assert_uint_eq(seq("\xc2\x80", 2), 2);
	ck_assert_uint_eq(seq("\xdf\xbf", 2), 2);
	ck_assert_uint_eq(seq("\xe0\xa0\x80", 3), 3);
	ck_assert_uint_eq(seq("\xed\x9f\xbf", 3), 3);	/* U+D7FF */
	ck_assert_uint_eq(seq("\xee\x80\x80", 3), 3);	/* U+E000 */
	ck_assert_uint_eq(seq("\xef\xbf\xbf", 3), 3);
	ck_assert_uint_eq(seq("\xf0\x90\x80\x80", 4), 4);
	ck_assert_uint_eq(seq("\xf4\x8f\xbf\xbf", 4), 4);
	ck_assert_uint_eq(saop__utf8_decode((const unsigned char *)"A", 1,
	    &cp), 1);
	ck_assert_uint_eq(cp, 0x41);
	ck_assert_uint_eq(saop__utf8_decode((const unsigned char *)
	    "\xc3\xa9", 2, &cp), 2);
	ck_assert_uint_eq(cp, 0xe9);
	ck_assert_uint_eq(saop__utf8_decode((const unsigned char *)
	    "\xe2\x82\xac", 3, &cp), 3);
	ck_assert_uint_eq(cp, 0x20ac);
	ck_assert_uint_eq(saop__utf8_decode((const unsigned char *)
	    "\xf0\x9f\x98\x80", 4, &cp), 4);
	ck_assert_uint_eq(cp, 0x1f600);
	ck_assert_uint_eq(saop__utf8_decode((const unsigned char *)
	    "\xf4\x8f\xbf\xbf", 4, &cp), 4);
	ck_assert_uint_eq(cp, 0x10ffff);
}
END_TEST

START_TEST(utf8_refuses_every_class_of_bad_sequence)
{
	static const char *const bad[] = {
		"\x80", "\xbf",				/* lone continuation */
		"\xc0\x80", "\xc1\xbf",			/* overlong 2 */
		"\xe0\x80\x80", "\xe0\x9f\xbf",		/* overlong 3 */
		"\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf",	/* overlong 4 */
		"\xed\xa0\x80", "\xed\xbf\xbf",		/* surrogates */
		"\xf4\x90\x80\x80", "\xf7\xbf\xbf\xbf",	/* > U+10FFFF */
		"\xf5\x80\x80\x80", "\xf8\x88\x80\x80", "\xfe", "\xff",
		"\xc2\x41", "\xe2\x28\xa1", "\xe2\x82\x28",
		"\xf0\x9f\x28\x80", "\xf0\x9f\x98\xc0",	/* bad later byte */
	};
	size_t i;
	uint32_t cp = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(seq(bad[i], strlen(bad[i])) == 0, "bad[%zu]", i);
		ck_assert_uint_eq(saop__utf8_decode((const unsigned char *)
		    bad[i], strlen(bad[i]), &cp), 0);
		ck_assert_uint_eq(cp, 0xfffd);
		ck_assert_uint_eq(saop_utf8_valid(bad[i], strlen(bad[i])), 0);
	}
	ck_assert_uint_eq(seq("", 0), 0);
}
END_TEST

START_TEST(utf8_refuses_cut_sequences)
{
	ck_assert_uint_eq(seq("\xc3", 1), 0);
	ck_assert_uint_eq(seq("\xe2\x82", 2), 0);
	ck_assert_uint_eq(seq("\xf0\x9f\x98", 3), 0);
	ck_assert_uint_eq(saop_utf8_valid("ab\xf0\x9f\x98", 5), 2);
	ck_assert_uint_eq(saop_utf8_valid("ab\xc3\xa9", 4), 4);
	ck_assert_uint_eq(saop_utf8_valid("a\xc3\xa9\xff", 4), 3);
}
END_TEST

/* saop__utf8_tail() of the string s. */
static size_t
tail(const char *s)
{
	return saop__utf8_tail((const unsigned char *)s, strlen(s));
}

START_TEST(utf8_tail_finds_the_last_whole_character)
{
	ck_assert_uint_eq(tail(""), 0);
	ck_assert_uint_eq(tail("abc"), 0);
	ck_assert_uint_eq(tail("ab\xc3\xa9"), 0);
	ck_assert_uint_eq(tail("ab\xc3"), 1);
	ck_assert_uint_eq(tail("ab\xe2"), 1);
	ck_assert_uint_eq(tail("ab\xe2\x82"), 2);
	ck_assert_uint_eq(tail("ab\xe2\x82\xac"), 0);
	ck_assert_uint_eq(tail("\xf0"), 1);
	ck_assert_uint_eq(tail("\xf0\x9f"), 2);
	ck_assert_uint_eq(tail("\xf0\x9f\x98"), 3);
	ck_assert_uint_eq(tail("\xf0\x9f\x98\x80"), 0);
	/* Not a cut character but bytes that are not UTF-8: 0. */
	ck_assert_uint_eq(tail("\xe0\x80"), 0);		/* overlong */
	ck_assert_uint_eq(tail("\xed\xa0"), 0);		/* surrogate */
	ck_assert_uint_eq(tail("\xf4\x90"), 0);		/* > U+10FFFF */
	ck_assert_uint_eq(tail("\xc0"), 0);
	ck_assert_uint_eq(tail("\xff"), 0);
	ck_assert_uint_eq(tail("a\x80\x80"), 0);
	ck_assert_uint_eq(tail("\x80\x80\x80\x80"), 0);
}
END_TEST

START_TEST(utf8_prefix_and_count_go_by_characters)
{
	const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";

	ck_assert_uint_eq(saop__utf8_count(s, strlen(s)), 5);
	ck_assert_uint_eq(saop__utf8_prefix(s, strlen(s), 0), 0);
	ck_assert_uint_eq(saop__utf8_prefix(s, strlen(s), 2), 3);
	ck_assert_uint_eq(saop__utf8_prefix(s, strlen(s), 4), 10);
	ck_assert_uint_eq(saop__utf8_prefix(s, strlen(s), 99), strlen(s));
}
END_TEST

/* A write() for the escaper: append to the saop__buf at arg. */
static int
to_buf(const char *p, size_t n, void *arg)
{
	return saop__buf_append(arg, p, n) == 0 ? 0 : 5;
}

/* Escape the n bytes at s fed in two chunks cut at cut; the output is
 * in out (a new string), the U+FFFD count in *replaced. */
static char *
escape2(const char *s, size_t n, size_t cut, unsigned long long *replaced)
{
	struct saop__buf b;
	struct saop_escaper *x;

	saop__buf_init(&b);
	ck_assert_ptr_nonnull(x = saop_escaper_new(to_buf, &b));
	ck_assert_int_eq(saop_escaper_feed(x, s, cut), 0);
	ck_assert_int_eq(saop_escaper_feed(x, s + cut, n - cut), 0);
	ck_assert_int_eq(saop_escaper_end(x), 0);
	*replaced = saop_escaper_replaced(x);
	saop_escaper_free(x);
	return saop__buf_steal(&b, NULL);
}

START_TEST(escaper_output_is_the_same_however_split)
{
	/* What saop-detect -r wrote for these inputs before the escaper
	 * moved into lib/ (as bench/same-output keeps them). */
	static const struct {
		const char *in;
		size_t len;
		const char *out;
		unsigned long long replaced;
	} cases[] = {
		{ "plain text", 10, "plain text", 0 },
		{ "q\"b\\s/", 6, "q\\\"b\\\\s/", 0 },
		{ "\n\t\r\b\f\x01\x1f\x7f", 8,
		    "\\n\\t\\r\\b\\f\\u0001\\u001f\x7f", 0 },
		{ "\0x", 2, "\\u0000x", 0 },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
		    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0 },
		{ "a\xff" "b", 3, "a\xef\xbf\xbd" "b", 1 },
		{ "\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd", 2 },
		{ "\xe0\x80\x80", 3,
		    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 3 },
		{ "\xed\xa0\x80!", 4,
		    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd!", 3 },
		{ "\xf4\x90\x80\x80", 4, "\xef\xbf\xbd\xef\xbf\xbd"
		    "\xef\xbf\xbd\xef\xbf\xbd", 4 },
		/* A cut character, then ASCII: one U+FFFD, the ASCII kept. */
		{ "\xf0\x9f\"a", 4, "\xef\xbf\xbd\\\"a", 1 },
		/* Cut at the very end. */
		{ "ok\xe2\x82", 4, "ok\xef\xbf\xbd", 1 },
	};
	size_t i, cut;
	unsigned long long r;
	char *got;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (cut = 0; cut <= cases[i].len; cut++) {
			got = escape2(cases[i].in, cases[i].len, cut, &r);
			ck_assert_msg(strcmp(got, cases[i].out) == 0,
			    "case %zu cut at %zu: %s", i, cut, got);
			ck_assert_uint_eq(r, cases[i].replaced);
			free(got);
		}
}
END_TEST

START_TEST(escaper_streams_large_input_in_blocks)
{
	static char in[200000];
	struct saop__buf b;
	struct saop_escaper *x;
	size_t i;

	for (i = 0; i < sizeof(in); i++)
		in[i] = i % 100 == 99 ? '"' : 'a' + (char)(i % 26);
	saop__buf_init(&b);
	ck_assert_ptr_nonnull(x = saop_escaper_new(to_buf, &b));
	for (i = 0; i < sizeof(in); i += 7777)
		ck_assert_int_eq(saop_escaper_feed(x, in + i,
		    sizeof(in) - i < 7777 ? sizeof(in) - i : 7777), 0);
	ck_assert_int_eq(saop_escaper_end(x), 0);
	ck_assert_uint_eq(b.len, sizeof(in) + sizeof(in) / 100);
	ck_assert_uint_eq(saop_escaper_replaced(x), 0);
	saop_escaper_free(x);
	saop__buf_free(&b);
	saop_escaper_free(NULL);
}
END_TEST

START_TEST(escaper_stops_at_a_failed_write)
{
	static char in[100000];
	struct saop__buf b;
	struct saop_escaper *x;

	memset(in, 'x', sizeof(in));
	saop__buf_init(&b);
	ck_assert_ptr_nonnull(x = saop_escaper_new(to_buf, &b));
	saop__buf_realloc = no_memory;
	ck_assert_int_eq(saop_escaper_feed(x, in, sizeof(in)), 5);
	saop__buf_realloc = realloc;
	ck_assert_int_eq(saop_escaper_feed(x, "more", 4), 5);
	ck_assert_int_eq(saop_escaper_end(x), 5);
	ck_assert_uint_eq(b.len, 0);
	saop_escaper_free(x);
	saop__buf_free(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("base");
	TCase *tc = tcase_create("base");

	tcase_add_test(tc, buf_grows_and_stays_nul_terminated);
	tcase_add_test(tc, buf_steal_of_nothing_is_an_empty_string);
	tcase_add_test(tc, buf_append_max_refuses_past_the_limit);
	tcase_add_test(tc, buf_refuses_sizes_that_overflow);
	tcase_add_test(tc, buf_out_of_memory_leaves_it_unchanged);
	tcase_add_test(tc, utf8_accepts_every_length_at_its_edges);
	tcase_add_test(tc, utf8_refuses_every_class_of_bad_sequence);
	tcase_add_test(tc, utf8_refuses_cut_sequences);
	tcase_add_test(tc, utf8_tail_finds_the_last_whole_character);
	tcase_add_test(tc, utf8_prefix_and_count_go_by_characters);
	tcase_add_test(tc, escaper_output_is_the_same_however_split);
	tcase_add_test(tc, escaper_streams_large_input_in_blocks);
	tcase_add_test(tc, escaper_stops_at_a_failed_write);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
