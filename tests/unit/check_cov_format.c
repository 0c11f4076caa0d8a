/*
 * check_cov_format.c: unit tests for lib/schema-format.c (issue 25): the
 * asserted formats at their edges (leap years, offsets, label lengths,
 * quoted local parts, address literals, percent escapes, zeros of IPv4)
 * and the ECMA-262 to PCRE2 translation of patterns (\s, [^], [], \u,
 * \p{...} with and without a prefix, (?...) groups).
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"
#include "schema-int.h"
#include "unit.h"

/* fmt's verdict on s. */
static int
fmt(const char *name, const char *s)
{
	enum sch_format f = saop__sch_format(name);

	ck_assert_msg(f != SCH_FMT_NONE, "format %s not asserted", name);
	ck_assert_str_eq(saop__sch_format_name(f), name);
	return saop__sch_format_check(f, s, strlen(s));
}

#define VALID(n, s)	ck_assert_msg(fmt(n, s) == 1, "%s: '%s' refused", n, s)
#define INVALID(n, s)	ck_assert_msg(fmt(n, s) == 0, "%s: '%s' taken", n, s)

START_TEST(dates_and_times_at_their_edges)
{
	VALID("date", "2024-02-29");
	VALID("date", "2000-02-29");
	INVALID("date", "1900-02-29");
	INVALID("date", "2023-02-29");
	INVALID("date", "2024-04-31");
	INVALID("date", "2024-13-01");
	INVALID("date", "2024-00-10");
	INVALID("date", "2024-1-01");
	INVALID("date", "2024-01-01x");
	INVALID("date", "2024-01-0a");
	VALID("time", "12:34:56Z");
	VALID("time", "12:34:56.789+05:30");
	VALID("time", "00:00:00-23:59");
	INVALID("time", "12:34:56");
	INVALID("time", "24:00:00Z");
	INVALID("time", "12:60:00Z");
	INVALID("time", "12:34:56.Z");
	INVALID("time", "12:34:56+24:00");
	INVALID("time", "12:34:56+05:60");
	INVALID("time", "12:34:56+05:3");
	INVALID("time", "12:34:56+0530");
	INVALID("time", "12:34:56Zjunk");
	VALID("date-time", "2024-02-29T12:34:56Z");
	VALID("date-time", "2024-02-29 12:34:56.5-01:00");
	INVALID("date-time", "2024-02-29X12:34:56Z");
	INVALID("date-time", "2023-02-29T12:34:56Z");
	INVALID("date-time", "2024-02-29T");
}
END_TEST

START_TEST(emails_uris_uuids_and_addresses)
{
	VALID("email", "a.b+c@example.com");
	VALID("email", "\"quoted local\"@example.com");
	VALID("email", "x@[127.0.0.1]");
	VALID("email", "x@[IPv6:::1]");
	INVALID("email", "x@[IPv6:nope]");
	INVALID("email", "x@[300.1.1.1]");
	INVALID("email", ".a@example.com");
	INVALID("email", "a.@example.com");
	INVALID("email", "a..b@example.com");
	INVALID("email", "@example.com");
	INVALID("email", "\"@example.com");
	INVALID("email", "a b@example.com");
	INVALID("email", "no-at-sign");
	INVALID("email", "a@");
	INVALID("email", "a@-example.com");
	INVALID("email", "a@example-.com");
	INVALID("email", "a@exa..mple.com");
	INVALID("email", "a@exa_mple.com");
	INVALID("email", "a@aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com");
	VALID("email", "a@aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com");
	INVALID("email", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@b.c");
	VALID("uri", "http://example.com/a%41?q=1#f");
	VALID("uri", "urn:isbn:0451450523");
	VALID("uri", "a+b-c.d:x");
	INVALID("uri", "//example.com/relative");
	INVALID("uri", "1http://x");
	INVALID("uri", "http");
	INVALID("uri", "http://x/%4");
	INVALID("uri", "http://x/%zz");
	INVALID("uri", "http://x/a b");
	INVALID("uri", "");
	VALID("uuid", "123e4567-e89b-12d3-a456-426614174000");
	INVALID("uuid", "123e4567-e89b-12d3-a456-42661417400");
	INVALID("uuid", "123e4567xe89b-12d3-a456-426614174000");
	INVALID("uuid", "123e4567-e89b-12d3-a456-42661417400g");
	VALID("ipv4", "192.168.0.1");
	VALID("ipv4", "0.0.0.0");
	INVALID("ipv4", "192.168.01.1");
	INVALID("ipv4", "01.1.1.1");
	INVALID("ipv4", "256.1.1.1");
	INVALID("ipv4", "");
	INVALID("ipv4", "1.1.1.1\xc3\xa9");
	VALID("ipv6", "::1");
	VALID("ipv6", "2001:db8::8a2e:370:7334");
	INVALID("ipv6", "2001:db8:::1");
	INVALID("ipv6", "12345::1");
	VALID("regex", "^[a-z]+\\d*$");
	INVALID("regex", "([a-z]");
	ck_assert_int_eq(saop__sch_format("hostname-or-not"), SCH_FMT_NONE);
}
END_TEST

/* Compile the ECMA-262 pattern p: 0, or -1 (then msg says why). */
static int
compile(struct sch_re *re, const char *p, char *msg, size_t len)
{
	return saop__sch_regex(re, p, msg, len);
}

/* 1 when pattern p matches s, 0 when not. */
static int
matches(const char *p, const char *s)
{
	struct sch_re re;
	pcre2_match_data *md = NULL;
	char msg[128];
	int r;

	ck_assert_msg(compile(&re, p, msg, sizeof(msg)) == 0, "%s: %s", p,
	    msg);
	r = saop__sch_match(&re, s, strlen(s), &md);
	pcre2_match_data_free(md);
	pcre2_code_free(re.code);
	ck_assert_int_ge(r, 0);
	return r;
}

START_TEST(patterns_are_translated_from_ecma_262)
{
	struct sch_re re;
	char msg[128];

	ck_assert(matches("^\\s$", " "));
	ck_assert(matches("^\\s$", "\xef\xbb\xbf"));	/* U+FEFF is \s */
	ck_assert(!matches("^\\S$", "\t"));
	ck_assert(matches("^[^]$", "\n"));
	ck_assert(!matches("[]", "anything"));
	ck_assert(matches("^\\u0041$", "A"));
	ck_assert(matches("^\\u{1F600}$", "\xf0\x9f\x98\x80"));
	ck_assert(matches("^\\p{Letter}+$", "caf\xc3\xa9"));
	ck_assert(matches("^\\p{General_Category=Lu}$", "A"));
	ck_assert(matches("^\\p{gc=Decimal_Number}$", "7"));
	ck_assert(!matches("^\\P{Lu}$", "A"));
	ck_assert(matches("^\\p{Script=Greek}$", "\xce\xb1"));
	ck_assert(matches("(?<word>ab)c", "xabc"));
	ck_assert(matches("a(?=b)", "ab"));
	ck_assert(matches("a(?!b)", "ac"));
	ck_assert(matches("(?<=a)b", "ab"));
	ck_assert(matches("[\\s]", " "));
	ck_assert(matches("^[\\S]$", "x"));
	ck_assert_int_eq(compile(&re, "(?x)a", msg, sizeof(msg)), -1);
	ck_assert_ptr_nonnull(strstr(msg, "invalid regular expression"));
	ck_assert_int_eq(compile(&re, "\\ux", msg, sizeof(msg)), -1);
	ck_assert_ptr_nonnull(strstr(msg, "invalid regular"));
	ck_assert_int_eq(compile(&re, "a{2,1}", msg, sizeof(msg)), -1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cov_format");
	TCase *tc = tcase_create("format");

	tcase_add_test(tc, dates_and_times_at_their_edges);
	tcase_add_test(tc, emails_uris_uuids_and_addresses);
	tcase_add_test(tc, patterns_are_translated_from_ecma_262);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
