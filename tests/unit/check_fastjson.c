/*
 * check_fastjson.c: unit tests for lib/fastjson.c: it builds the tree
 * jansson builds, or gives up; it never accepts what jansson refuses.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema-int.h"
#include "unit.h"

#define FLAGS (JSON_DECODE_ANY | JSON_ALLOW_NUL)

/*
 * Compare with jansson on buf.  Returns 1 when the fast parser built the
 * tree, 0 when it gave up; fails when it accepted what jansson refuses
 * or built another tree.
 */
static int
same_as_jansson(const char *buf, size_t len, const char *what)
{
	json_error_t je;
	json_t *fast = saop__json_fast(buf, len);
	json_t *ref = json_loadb(buf, len, FLAGS, &je);
	int built = fast != NULL;

	if (fast != NULL) {
		ck_assert_msg(ref != NULL, "%s: accepted, jansson says %s", what,
		    je.text);
		ck_assert_msg(json_equal(fast, ref), "%s: another tree", what);
	}
	json_decref(fast);
	json_decref(ref);
	return built;
}

#define ACCEPTS(s) ck_assert_msg(same_as_jansson(s, strlen(s), s) == 1, \
	"gave up on %s", s)
#define REFUSES(s) ck_assert_msg(same_as_jansson(s, strlen(s), s) == 0, \
	"accepted %s", s)

START_TEST(ordinary_json_is_built_as_jansson_builds_it)
{
	ACCEPTS("{\"saop\": \"1.0\", \"turn_index\": 3, \"action\": null}");
	ACCEPTS(" [1, -0, 0.5, -1.25e-3, 1E+2, 9223372036854775807, "
	    "-9223372036854775808, true, false, null, {}, [], \"\"] ");
	ACCEPTS("\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	ACCEPTS("{\"a\\nb\": \"x\\\"y\\\\z\\/\\b\\f\\r\\t\\u00e9\\ud83d\\ude00\"}");
	ACCEPTS("{\"k\": 1, \"k\": 2}");	/* the last wins, as in jansson */
	ACCEPTS("[[[[[[[[[[{\"deep\": [[]]}]]]]]]]]]]");
	ACCEPTS("1e-400");			/* underflow is not an error */
}
END_TEST

/* Each item of buf, dumped, joined by spaces; stops at item stop. */
struct items_seen {
	char text[512];
	size_t stop;
};

static int
see_item(void *arg, json_t *item, size_t i)
{
	struct items_seen *is = arg;
	char *d = json_dumps(item, JSON_COMPACT | JSON_ENCODE_ANY);

	ck_assert_ptr_nonnull(d);
	if (is->text[0] != '\0')
		strcat(is->text, " ");
	strcat(is->text, d);
	free(d);
	return i == is->stop ? 7 : 0;
}

static int
items_of(const char *buf, size_t stop, struct items_seen *is, size_t *n)
{
	is->text[0] = '\0';
	is->stop = stop;
	return saop__json_fast_items(buf, strlen(buf), see_item, is, n);
}

START_TEST(an_array_is_read_an_item_at_a_time)
{
	struct items_seen is;
	size_t n;

	ck_assert_int_eq(items_of(" [1, {\"a\": [true, null]}, \"x\\n\"] ",
	    99, &is, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(is.text, "1 {\"a\":[true,null]} \"x\\n\"");
	ck_assert_int_eq(items_of("[]", 99, &is, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_str_eq(is.text, "");
	/* The callback stops it. */
	ck_assert_int_eq(items_of("[1, 2, 3]", 1, &is, &n), 7);
	ck_assert_str_eq(is.text, "1 2");
	/* Not an array the fast parser reads whole. */
	ck_assert_int_eq(items_of("{\"a\": 1}", 99, &is, &n), -1);
	ck_assert_int_eq(items_of("[1, 2] x", 99, &is, &n), -1);
	ck_assert_int_eq(items_of("[1, 2,]", 99, &is, &n), -1);
	ck_assert_int_eq(items_of("[1 2]", 99, &is, &n), -1);
	ck_assert_int_eq(items_of("[1, 2", 99, &is, &n), -1);
	ck_assert_int_eq(items_of("[1, 99999999999999999999]", 99, &is, &n),
	    -1);
	ck_assert_int_eq(items_of("", 99, &is, &n), -1);
}
END_TEST

static int
count_item(void *arg, json_t *item, size_t i)
{
	(*(size_t *)arg)++;
	return 0;
}

START_TEST(items_nest_one_level_less_than_the_document)
{
	char buf[2 * 2049 + 1];
	size_t n, seen = 0, i;

	/* 2048 levels with the array: what jansson reads. */
	for (i = 0; i < 2048; i++) {
		buf[i] = '[';
		buf[2 * 2048 - 1 - i] = ']';
	}
	buf[2 * 2048] = '\0';
	ck_assert_int_eq(saop__json_fast_items(buf, strlen(buf), count_item,
	    &seen, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(seen, 1);
	/* 2049: jansson's to judge. */
	memmove(buf + 1, buf, 2 * 2048 + 1);
	buf[0] = '[';
	strcat(buf, "]");
	ck_assert_ptr_null(saop__json_fast(buf, strlen(buf)));
	ck_assert_int_eq(saop__json_fast_items(buf, strlen(buf), count_item,
	    &seen, &n), -1);
}
END_TEST

START_TEST(nul_inside_a_string_is_kept)
{
	ck_assert_int_eq(same_as_jansson("[\"a\\u0000b\"]", 12, "nul"), 1);
}
END_TEST

START_TEST(bad_json_is_refused)
{
	REFUSES("");
	REFUSES("{\"a\": 1,}");
	REFUSES("[1,]");
	REFUSES("[01]");
	REFUSES("[1.]");
	REFUSES("[.5]");
	REFUSES("[-]");
	REFUSES("[1e]");
	REFUSES("{'a': 1}");
	REFUSES("{a: 1}");
	REFUSES("[tru]");
	REFUSES("[True]");
	REFUSES("[\"a\nb\"]");
	REFUSES("[\"\\x\"]");
	REFUSES("[\"\\u12\"]");
	REFUSES("[\"\\ud800\"]");		/* a lone surrogate */
	REFUSES("[\"\\udc00\"]");
	REFUSES("[\"\xc0\xaf\"]");		/* overlong */
	REFUSES("[\"\xed\xa0\x80\"]");		/* an encoded surrogate */
	REFUSES("[\"\xf4\x90\x80\x80\"]");	/* above U+10FFFF */
	REFUSES("[\"\xe2\x82\"]");		/* cut */
	REFUSES("{\"a\" 1}");
	REFUSES("{\"a\": 1]");
	REFUSES("[1} ");
	REFUSES("[1] [2]");
	REFUSES("[1] x");
}
END_TEST

START_TEST(what_only_jansson_can_judge_is_left_to_it)
{
	char deep[3000 * 2];

	REFUSES("9223372036854775808");
	REFUSES("[1e999]");
	REFUSES("{\"a\\u0000b\": 1}");
	memset(deep, '[', 3000);
	memset(deep + 3000, ']', 3000);
	ck_assert_int_eq(same_as_jansson(deep, sizeof(deep), "deep"), 0);
}
END_TEST

/* Every file of JSONTestSuite's test_parsing (tests/corpora). */
START_TEST(json_test_suite_files_get_jansson_verdicts)
{
	const char *top = getenv("top_srcdir");
	char dir[1024], path[2048];
	struct dirent *de;
	DIR *d;
	int files = 0, built = 0;

	snprintf(dir, sizeof(dir),
	    "%s/tests/corpora/JSONTestSuite/test_parsing",
	    top != NULL ? top : ".");
	ck_assert_msg((d = opendir(dir)) != NULL, "cannot open %s", dir);
	while ((de = readdir(d)) != NULL) {
		FILE *f;
		char *buf;
		long n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ck_assert_ptr_nonnull(f = fopen(path, "rb"));
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		rewind(f);
		ck_assert_ptr_nonnull(buf = malloc((size_t)n + 1));
		ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
		fclose(f);
		built += same_as_jansson(buf, (size_t)n, de->d_name);
		/* y_ files are valid: the fast path should take most. */
		free(buf);
		files++;
	}
	closedir(d);
	ck_assert_int_gt(files, 300);
	ck_assert_int_gt(built, 80);
}
END_TEST

/* Random byte changes on a valid text: never a wrong acceptance. */
START_TEST(mutated_texts_never_get_another_verdict)
{
	static const char base[] = "{\"saop\": \"1.0\", \"turn_index\": 12, "
	    "\"t\": \"caf\xc3\xa9 \\u00e9\\ud83d\\ude00\", \"a\": [1.5e3, -0, "
	    "true, false, null, {\"k\": []}]}";
	static const char alphabet[] = "{}[]:,\"\\ -+.eE0123456789tfnaulrsu"
	    "\x80\xc3\xed\xf4\x01";
	char buf[sizeof(base)];
	unsigned seed = 12345;
	int i, k;

	for (i = 0; i < 20000; i++) {
		memcpy(buf, base, sizeof(base));
		for (k = 0; k < 1 + i % 3; k++) {
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % (sizeof(base) - 1)] =
			    alphabet[(seed >> 20) % (sizeof(alphabet) - 1)];
		}
		same_as_jansson(buf, sizeof(base) - 1 - (i % 7 == 0 ?
		    (size_t)(seed >> 4) % 20 : 0), "mutation");
	}
}
END_TEST

static Suite *
fastjson_suite(void)
{
	Suite *s = suite_create("fastjson");
	TCase *tc = tcase_create("fastjson");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ordinary_json_is_built_as_jansson_builds_it);
	tcase_add_test(tc, nul_inside_a_string_is_kept);
	tcase_add_test(tc, an_array_is_read_an_item_at_a_time);
	tcase_add_test(tc, items_nest_one_level_less_than_the_document);
	tcase_add_test(tc, bad_json_is_refused);
	tcase_add_test(tc, what_only_jansson_can_judge_is_left_to_it);
	tcase_add_test(tc, json_test_suite_files_get_jansson_verdicts);
	tcase_add_test(tc, mutated_texts_never_get_another_verdict);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(fastjson_suite());
}
