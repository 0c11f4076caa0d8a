/*
 * check_cov_shown.c: unit tests for lib/llm-shown.c's masking of the key
 * (issue 25): a key of 4 to 11 bytes masked wherever it is, every copy of
 * a key masked (not only the first), runs of 8 bytes of a long key
 * masked, keys under 4 bytes left, and the clip after the mask.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "llm-int.h"
#include "unit.h"

/* Mask a copy of msg with key and compare with want. */
static void
masks_to(const char *msg, const char *key, const char *want)
{
	char buf[512];

	ck_assert_uint_lt(strlen(msg), sizeof(buf));
	strcpy(buf, msg);
	saop__llm_mask_secret(buf, key);
	ck_assert_msg(strcmp(buf, want) == 0, "key '%s' in '%s': got '%s', "
	    "want '%s'", key, msg, buf, want);
}

START_TEST(a_short_key_is_masked_wherever_it_is)
{
	/* 4 to 7 bytes: the whole key (shorter than a run of 8). */
	masks_to("bad key zq4w", "zq4w", "bad key ****");
	masks_to("zq4w-8 at the start", "zq4w-8", "**** at the start");
	masks_to("in[zq4w-8x]side", "zq4w-8x", "in[****]side");
	/* 8 to 11 bytes: the key, or any 8 bytes of it. */
	masks_to("key zq4w-8x-7 here", "zq4w-8x-7", "key **** here");
	masks_to("cut: zq4w-8x-", "zq4w-8x-7k", "cut: ****");
	masks_to("zq4w-8x-7ku", "zq4w-8x-7ku", "****");
	/* Fewer bytes of it than the run: left (a message stays readable). */
	masks_to("zq4 and q4w-8x", "zq4w-8x-7ku", "zq4 and q4w-8x");
}
END_TEST

START_TEST(every_copy_of_the_key_is_masked)
{
	const char *key = "sk-test-0123456789abcdef";

	masks_to("a sk-test-0123456789abcdef b sk-test-0123456789abcdef c",
	    key, "a **** b **** c");
	masks_to("zq4w,zq4w;zq4w", "zq4w", "****,****;****");
	masks_to("zq4wzq4w", "zq4w", "********");
	/* Parts of the key, each 8 bytes or more: each masked. */
	masks_to("[0123456789] [sk-test-] [89abcdef]", key,
	    "[****] [****] [****]");
}
END_TEST

START_TEST(keys_under_four_bytes_and_no_key_are_left)
{
	masks_to("abc abc", "abc", "abc abc");
	masks_to("abc", "", "abc");
	saop__llm_mask_secret(NULL, "zq4w");	/* no crash */
	{
		char s[] = "zq4w";

		saop__llm_mask_secret(s, NULL);
		ck_assert_str_eq(s, "zq4w");
	}
}
END_TEST

START_TEST(clip_keeps_whole_characters_and_says_so)
{
	char out[16];

	saop__llm_clip(out, sizeof(out), "short", 10);
	ck_assert_str_eq(out, "short");
	saop__llm_clip(out, sizeof(out), "0123456789abcdef", 10);
	ck_assert_str_eq(out, "0123456...");
	/* "\xc3\xa9" (e acute) is not cut in two. */
	saop__llm_clip(out, sizeof(out), "012345\xc3\xa9" "89abc", 10);
	ck_assert_str_eq(out, "012345...");
	/* max past the buffer: the buffer's size less one. */
	saop__llm_clip(out, sizeof(out), "0123456789abcdefghij", 100);
	ck_assert_uint_eq(strlen(out), sizeof(out) - 1);
	ck_assert_str_eq(out + strlen(out) - 3, "...");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cov_shown");
	TCase *tc = tcase_create("shown");

	tcase_add_test(tc, a_short_key_is_masked_wherever_it_is);
	tcase_add_test(tc, every_copy_of_the_key_is_masked);
	tcase_add_test(tc, keys_under_four_bytes_and_no_key_are_left);
	tcase_add_test(tc, clip_keeps_whole_characters_and_says_so);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
