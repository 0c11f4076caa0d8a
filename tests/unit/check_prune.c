/* check_prune.c: unit tests for prune.c. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"
#include "db-sqlite.h"
#include "unit.h"

static char tmpdir[] = "/tmp/check_prune.XXXXXX";
static struct saop_store *store;

static void
setup(void)
{
	char path[256];
	struct saop_err e;

	strcpy(tmpdir, "/tmp/check_prune.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/state.sqlite", tmpdir);
	store = saop_store_open(path, &e);
	ck_assert_msg(store != NULL, "%s", e.msg);
}

static void
teardown(void)
{
	char cmd[128];

	saop_store_close(store);
	store = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A string of n bytes: c repeated. */
static json_t *
text_of(size_t n, char c)
{
	char *s = malloc(n + 1);
	json_t *v;

	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	s[n] = '\0';
	v = json_stringn(s, n);
	free(s);
	return v;
}

/*
 * An OpenAI conversation: a tool output of size bytes (of c), followed by
 * age - 1 assistant turns.
 */
static json_t *
openai_conv(size_t size, long age, char c)
{
	json_t *m = json_pack("[{s:s, s:s}, {s:s, s:n, s:[{s:s, s:s, s:{s:s, "
	    "s:s}}]}, {s:s, s:s, s:o}]", "role", "user", "content", "go",
	    "role", "assistant", "content", "tool_calls", "id", "call_1",
	    "type", "function", "function", "name", "fetch", "arguments", "{}",
	    "role", "tool", "tool_call_id", "call_1", "content",
	    text_of(size, c));
	long i;

	ck_assert_ptr_nonnull(m);
	for (i = 1; i < age; i++) {
		json_array_append_new(m, json_pack("{s:s, s:s}", "role",
		    "assistant", "content", "next"));
		json_array_append_new(m, json_pack("{s:s, s:s}", "role",
		    "user", "content", "more"));
	}
	return m;
}

static int
prune(json_t *msgs, struct saop_prune_stats *st, struct saop_err *e)
{
	struct saop_prune_opts o;

	saop_prune_opts_init(&o);
	o.store = store;
	o.task_id = "task-1";
	o.field = "/request/messages";
	memset(st, 0, sizeof(*st));
	return saop_prune_messages(msgs, &o, st, e);
}

static long
rows(void)
{
	sqlite3_stmt *st;
	long n;

	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(store),
	    "SELECT count(*) FROM tool_outputs", -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* The content of message i as a string (borrowed). */
static const char *
content(json_t *msgs, size_t i)
{
	return json_string_value(json_object_get(json_array_get(msgs, i),
	    "content"));
}

/* What saop_tool_output_get() writes for id, in a new buffer. */
static char *
got(long long id, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	struct saop_err e;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(saop_tool_output_get(store, id, f, &e), 0);
	fclose(f);
	*len = n;
	return buf;
}

START_TEST(age_2_is_pruned_and_age_1_is_not)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *young = openai_conv(51201, 1, 'a');
	json_t *old = openai_conv(51201, 2, 'a');

	ck_assert_int_eq(prune(young, &st, &e), 0);
	ck_assert_uint_eq(st.pruned, 0);
	ck_assert_uint_eq(strlen(content(young, 2)), 51201);
	ck_assert_int_eq(prune(old, &st, &e), 0);
	ck_assert_uint_eq(st.pruned, 1);
	ck_assert_ptr_nonnull(strstr(content(old, 2), "[... 51201 bytes total"));
	ck_assert_int_eq(rows(), 1);
	json_decref(young);
	json_decref(old);
}
END_TEST

START_TEST(size_51201_is_pruned_and_51200_is_not)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *at = openai_conv(51200, 5, 'b');
	json_t *over = openai_conv(51201, 5, 'b');

	ck_assert_int_eq(prune(at, &st, &e), 0);
	ck_assert_uint_eq(st.pruned, 0);
	ck_assert_uint_eq(strlen(content(at, 2)), 51200);
	ck_assert_int_eq(prune(over, &st, &e), 0);
	ck_assert_uint_eq(st.pruned, 1);
	ck_assert_uint_eq(st.stored, 1);
	json_decref(at);
	json_decref(over);
}
END_TEST

START_TEST(summary_is_500_characters_then_the_marker_with_the_id)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m = openai_conv(60000, 3, 'c');
	char want[700];
	unsigned long long bytes;
	long long id;

	ck_assert_int_eq(prune(m, &st, &e), 0);
	memset(want, 'c', 500);
	snprintf(want + 500, sizeof(want) - 500, "\n\n[... 60000 bytes total"
	    " \xe2\x80\x94 full output in state.sqlite, id 1]");
	ck_assert_str_eq(content(m, 2), want);
	ck_assert_int_eq(saop_prune_is_summary(want, strlen(want), &bytes,
	    &id), 1);
	ck_assert_uint_eq(bytes, 60000);
	ck_assert_int_eq(id, 1);
	json_decref(m);
}
END_TEST

START_TEST(a_4_byte_character_at_character_500_is_kept_whole)
{
	/* 499 ASCII bytes, U+1F600 (4 bytes) as character 500, then more. */
	char raw[1200], *s;
	size_t n;

	memset(raw, 'd', sizeof(raw));
	memcpy(raw + 499, "\xf0\x9f\x98\x80", 4);
	s = saop_prune_summary(raw, sizeof(raw), 500, 9, &n);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(memcmp(s, raw, 503), 0);
	ck_assert_int_eq(s[503], '\n');
	free(s);
	/* As character 501 it is left out entirely, never cut. */
	memset(raw, 'd', sizeof(raw));
	memcpy(raw + 500, "\xf0\x9f\x98\x80", 4);
	s = saop_prune_summary(raw, sizeof(raw), 500, 9, &n);
	ck_assert_int_eq(memcmp(s, raw, 500), 0);
	ck_assert_int_eq(s[500], '\n');
	free(s);
	/* Fewer characters than kept: all of them. */
	s = saop_prune_summary("\xf0\x9f\x98\x80", 4, 500, 9, &n);
	ck_assert_int_eq(memcmp(s, "\xf0\x9f\x98\x80\n\n[... 4 bytes", 16), 0);
	free(s);
}
END_TEST

START_TEST(pruning_twice_changes_nothing_and_stores_nothing_twice)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m = openai_conv(70000, 4, 'e'), *once;

	ck_assert_int_eq(prune(m, &st, &e), 0);
	ck_assert_uint_eq(st.pruned, 1);
	once = json_deep_copy(m);
	ck_assert_int_eq(prune(m, &st, &e), 0);
	ck_assert_uint_eq(st.pruned, 0);
	ck_assert_uint_eq(st.already, 1);
	ck_assert(json_equal(m, once));
	ck_assert_int_eq(rows(), 1);
	json_decref(m);
	json_decref(once);
}
END_TEST

START_TEST(the_same_raw_output_in_a_later_turn_is_stored_once)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m = openai_conv(80000, 1, 'f');

	/* The same output again, then two more assistant turns. */
	json_array_append_new(m, json_pack("{s:s, s:s}", "role", "assistant",
	    "content", "again"));
	json_array_append_new(m, json_pack("{s:s, s:s, s:o}", "role", "tool",
	    "tool_call_id", "call_2", "content", text_of(80000, 'f')));
	json_array_append_new(m, json_pack("{s:s, s:s}", "role", "assistant",
	    "content", "done"));
	ck_assert_int_eq(prune(m, &st, &e), 0);
	ck_assert_uint_eq(st.pruned, 2);
	ck_assert_uint_eq(st.stored, 1);
	ck_assert_int_eq(rows(), 1);
	ck_assert_str_eq(content(m, 2), content(m, 4));
	/* And in a later run, as a new conversation of the same task. */
	json_decref(m);
	m = openai_conv(80000, 3, 'f');
	ck_assert_int_eq(prune(m, &st, &e), 0);
	ck_assert_uint_eq(st.pruned, 1);
	ck_assert_uint_eq(st.stored, 0);
	ck_assert_int_eq(rows(), 1);
	json_decref(m);
}
END_TEST

START_TEST(anthropic_tool_result_blocks_are_pruned_with_their_tool_name)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m, *blocks, *res;
	char *raw;
	size_t n;
	long long id;

	m = json_pack("[{s:s, s:s}, {s:s, s:[{s:s, s:s, s:s, s:{}}]},"
	    " {s:s, s:[{s:s, s:s, s:o}, {s:s, s:s, s:[{s:s, s:o}, {s:s, s:o}]},"
	    " {s:s, s:s}]}, {s:s, s:s}]",
	    "role", "user", "content", "go",
	    "role", "assistant", "content", "type", "tool_use", "id", "tu_1",
	    "name", "read_file", "input",
	    "role", "user", "content",
	    "type", "tool_result", "tool_use_id", "tu_1", "content",
	    text_of(60000, 'g'),
	    "type", "tool_result", "tool_use_id", "tu_1", "content",
	    "type", "text", "text", text_of(30000, 'h'),
	    "type", "text", "text", text_of(30000, 'i'),
	    "type", "text", "text", "a remark",
	    "role", "assistant", "content", "seen");
	ck_assert_ptr_nonnull(m);
	/* Turn age 2: one assistant message after the tool results. */
	ck_assert_int_eq(prune(m, &st, &e), 0);
	ck_assert_uint_eq(st.outputs, 2);
	ck_assert_uint_eq(st.pruned, 2);
	blocks = json_object_get(json_array_get(m, 2), "content");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    blocks, 2), "text")), "a remark");
	res = json_object_get(json_array_get(blocks, 0), "content");
	ck_assert(json_is_string(res));
	ck_assert_ptr_nonnull(strstr(json_string_value(res), ", id 1]"));
	/* Text parts stay an array of one text part; the raw is joined. */
	res = json_object_get(json_array_get(blocks, 1), "content");
	ck_assert_uint_eq(json_array_size(res), 1);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
	    json_array_get(res, 0), "text")), "[... 60000 bytes total"));
	raw = got(2, &n);
	ck_assert_uint_eq(n, 60000);
	ck_assert(raw[0] == 'h' && raw[29999] == 'h' && raw[30000] == 'i' &&
	    raw[59999] == 'i');
	free(raw);
	ck_assert_int_eq(saop_tool_output_latest(store, "read_file", NULL,
	    &id, &e), 0);
	ck_assert_int_eq(id, 2);
	ck_assert_int_eq(saop_tool_output_latest(store, "nothing", NULL, &id,
	    &e), 1);
	json_decref(m);
}
END_TEST

START_TEST(raw_output_comes_back_byte_for_byte_nul_included)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m = openai_conv(1, 2, 'j');
	char *raw, *back;
	size_t i, n;

	raw = malloc(100000);
	ck_assert_ptr_nonnull(raw);
	for (i = 0; i < 100000; i++)
		raw[i] = (char)(i % 97 == 0 ? 0 : 'a' + i % 26);
	json_object_set_new(json_array_get(m, 2), "content",
	    json_stringn(raw, 100000));
	ck_assert_int_eq(prune(m, &st, &e), 0);
	ck_assert_uint_eq(st.pruned, 1);
	back = got(1, &n);
	ck_assert_uint_eq(n, 100000);
	ck_assert_int_eq(memcmp(back, raw, n), 0);
	free(back);
	free(raw);
	ck_assert_int_eq(saop_tool_output_get(store, 99, stdout, &e), 1);
	json_decref(m);
}
END_TEST

START_TEST(a_failed_store_changes_no_message)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m = openai_conv(90000, 3, 'k'), *copy = json_deep_copy(m);

	json_array_append_new(m, json_pack("{s:s, s:s, s:o}", "role", "tool",
	    "tool_call_id", "c9", "content", text_of(90000, 'l')));
	json_array_append_new(m, json_pack("{s:s, s:s}", "role", "assistant",
	    "content", "x"));
	json_decref(copy);
	copy = json_deep_copy(m);
	ck_assert_int_eq(sqlite3_exec(saop__store_db(store),
	    "CREATE TRIGGER no_second BEFORE INSERT ON tool_outputs"
	    " WHEN (SELECT count(*) FROM tool_outputs) >= 1"
	    " BEGIN SELECT RAISE(ABORT, 'disk full, say'); END", NULL, NULL,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(prune(m, &st, &e), -SAOP_EDB);
	ck_assert_ptr_nonnull(strstr(e.msg, "disk full, say"));
	/* The first output was inserted, then rolled back with the second. */
	ck_assert(json_equal(m, copy));
	ck_assert_int_eq(rows(), 0);
	json_decref(m);
	json_decref(copy);
}
END_TEST

/* PRAGMA wal_autocheckpoint of the store's connection. */
static long
autockpt(void)
{
	sqlite3_stmt *st;
	long n;

	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(store),
	    "PRAGMA wal_autocheckpoint", -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

START_TEST(the_checkpoint_setting_is_put_back_after_a_batch)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m = openai_conv(90000, 3, 'p');

	/* Raised while a batch is stored, put back when it is done, the
	 * store failing or not. */
	ck_assert_int_eq(sqlite3_exec(saop__store_db(store),
	    "PRAGMA wal_autocheckpoint=123", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(prune(m, &st, &e), 0);
	ck_assert_int_eq(st.stored, 1);
	ck_assert_int_eq(autockpt(), 123);
	json_decref(m);
	m = openai_conv(90000, 3, 'q');
	ck_assert_int_eq(sqlite3_exec(saop__store_db(store),
	    "CREATE TRIGGER no_more BEFORE INSERT ON tool_outputs"
	    " BEGIN SELECT RAISE(ABORT, 'disk full, say'); END", NULL, NULL,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(prune(m, &st, &e), -SAOP_EDB);
	ck_assert_int_eq(autockpt(), 123);
	ck_assert_int_eq(rows(), 1);
	json_decref(m);
}
END_TEST

START_TEST(tool_names_reach_sql_only_as_parameters)
{
	struct saop_prune_stats st;
	struct saop_err e;
	const char *evil = "x'); DROP TABLE tool_outputs; --";
	json_t *m = openai_conv(52000, 2, 'm');
	long long id;

	json_object_set_new(json_array_get(m, 2), "name", json_string(evil));
	ck_assert_int_eq(prune(m, &st, &e), 0);
	ck_assert_int_eq(rows(), 1);
	ck_assert_int_eq(saop_tool_output_latest(store, evil, "task-1", &id,
	    &e), 0);
	ck_assert_int_eq(id, 1);
	json_decref(m);
}
END_TEST

START_TEST(entries_use_their_turn_age_and_name_a_bad_field)
{
	struct saop_prune_opts o;
	struct saop_prune_stats st = { 0 };
	struct saop_err e;
	json_t *en[3];
	long lines[3] = { 1, 2, 3 };

	saop_prune_opts_init(&o);
	o.store = store;
	o.task_id = "t";
	en[0] = json_pack("{s:s, s:o, s:i, s:i}", "tool_name", "ls",
	    "raw_content", text_of(60000, 'n'), "byte_size", 60000,
	    "turn_age", 2);
	en[1] = json_pack("{s:s, s:o, s:i}", "tool_name", "ls",
	    "raw_content", text_of(60000, 'o'), "turn_age", 1);
	ck_assert_int_eq(saop_prune_entries(en, lines, 2, &o, &st, &e), 0);
	ck_assert_uint_eq(st.pruned, 1);
	ck_assert_int_eq(json_integer_value(json_object_get(en[0],
	    "stored_id")), 1);
	ck_assert_ptr_null(json_object_get(en[1], "stored_id"));
	en[2] = json_pack("{s:s, s:i, s:i}", "raw_content", "short",
	    "byte_size", 7, "turn_age", 3);
	ck_assert_int_eq(saop_prune_entries(&en[2], &lines[2], 1, &o, &st,
	    &e), -SAOP_EDATA);
	ck_assert_int_eq(e.line, 3);
	ck_assert_str_eq(e.field, "/byte_size");
	json_decref(en[0]);
	json_decref(en[1]);
	json_decref(en[2]);
}
END_TEST

START_TEST(a_message_that_is_not_an_object_is_named)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m = openai_conv(10, 2, 'p');

	json_array_append_new(m, json_integer(7));
	ck_assert_int_eq(prune(m, &st, &e), -SAOP_EDATA);
	ck_assert_str_eq(e.field, "/request/messages/5");
	json_decref(m);
	m = openai_conv(10, 2, 'p');
	json_object_set_new(json_array_get(m, 2), "content", json_integer(3));
	ck_assert_int_eq(prune(m, &st, &e), -SAOP_EDATA);
	ck_assert_str_eq(e.field, "/request/messages/2/content");
	json_decref(m);
}
END_TEST

START_TEST(only_the_exact_marker_counts_as_a_summary)
{
	const char *ok = "abc\n\n[... 12 bytes total \xe2\x80\x94 full output"
	    " in state.sqlite, id 3]";

	ck_assert_int_eq(saop_prune_is_summary(ok, strlen(ok), NULL, NULL), 1);
	ck_assert_int_eq(saop_prune_is_summary(ok, strlen(ok) - 1, NULL,
	    NULL), 0);
	ck_assert_int_eq(saop_prune_is_summary("x, id 3]", 8, NULL, NULL), 0);
	ck_assert_int_eq(saop_prune_is_summary("[... 1 bytes total \xe2\x80\x94"
	    " full output in state.sqlite, id 0]", 53, NULL, NULL), 0);
}
END_TEST

/* A marker as saop_prune_summary() writes it, for bytes b and row id. */
#define MARK(b, id) "\n\n[... " b " bytes total \xe2\x80\x94 full output" \
	" in state.sqlite, id " id "]"

START_TEST(the_marker_s_numbers_are_read_strictly)
{
	static const struct {
		const char *s;
		int ok;
	} cases[] = {
		{ "12]", 0 },				/* digits, nothing before */
		{ "abc" MARK("12", "03"), 0 },		/* a leading zero */
		{ "abc" MARK("12", "12345678901234567890"), 0 },  /* 20 digits */
		{ "abc" MARK("12", "9223372036854775808"), 0 },	/* > INT64_MAX */
		{ "abc" MARK("", "3"), 0 },		/* no total */
		{ "abc" MARK("012", "3"), 0 },		/* the total's zero */
		{ "abc 12 bytes total \xe2\x80\x94 full output in "
		    "state.sqlite, id 3]", 0 },		/* no head */
		{ "x:3]", 0 },				/* ':' before the id */
		{ "abc" MARK("1", "0"), 0 },		/* row 0 */
		{ MARK("0", "9223372036854775807"), 1 },
	};
	unsigned long long b = 7;
	long long id = 7;
	size_t i, n;
	char *s;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(saop_prune_is_summary(cases[i].s,
		    strlen(cases[i].s), NULL, NULL) == cases[i].ok,
		    "case %zu", i);
	ck_assert_int_eq(saop_prune_is_summary(MARK("0", "9223372036854775807"),
	    strlen(MARK("0", "9223372036854775807")), &b, &id), 1);
	ck_assert_uint_eq(b, 0);
	ck_assert(id == 9223372036854775807LL);
	/* Without out_len, the same summary, read back by the same rule. */
	s = saop_prune_summary("hello world", 11, 5, 42, NULL);
	ck_assert_str_eq(s, "hello" MARK("11", "42"));
	n = strlen(s);
	ck_assert_int_eq(saop_prune_is_summary(s, n, &b, &id), 1);
	ck_assert_uint_eq(b, 11);
	ck_assert_int_eq(id, 42);
	free(s);
}
END_TEST

START_TEST(nine_outputs_of_one_conversation_are_all_stored)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m = json_array();
	size_t i;
	char want[64];

	for (i = 0; i < 9; i++)
		json_array_append_new(m, json_pack("{s:s, s:s, s:o}", "role",
		    "tool", "tool_call_id", "c", "content",
		    text_of(60000, (char)('a' + i))));
	json_array_append_new(m, json_pack("{s:s}", "role", "assistant"));
	json_array_append_new(m, json_pack("{s:s}", "role", "assistant"));
	ck_assert_int_eq(prune(m, &st, &e), 0);
	ck_assert_uint_eq(st.outputs, 9);
	ck_assert_uint_eq(st.pruned, 9);
	ck_assert_uint_eq(st.stored, 9);
	ck_assert_int_eq(rows(), 9);
	for (i = 0; i < 9; i++) {
		const char *c = content(m, i);
		long long id;

		ck_assert_int_eq(saop_prune_is_summary(c, strlen(c), NULL,
		    &id), 1);
		ck_assert_int_eq(id, (long long)i + 1);
		snprintf(want, sizeof(want), "%c%c", (char)('a' + i),
		    (char)('a' + i));
		ck_assert_int_eq(strncmp(c, want, 2), 0);
	}
	json_decref(m);
}
END_TEST

START_TEST(messages_not_an_array_fail_without_an_error_struct)
{
	struct saop_prune_opts o;
	json_t *v = json_integer(1);

	saop_prune_opts_init(&o);
	o.store = store;
	ck_assert_int_eq(saop_prune_messages(v, &o, NULL, NULL), -SAOP_EDATA);
	json_decref(v);
}
END_TEST

START_TEST(messages_without_a_role_or_content_are_passed_over)
{
	struct saop_prune_stats st;
	struct saop_err e;
	long long id;
	json_t *m = json_pack("[{s:o}, {s:s, s:s}, {s:s, s:s, s:o}, {s:s},"
	    " {s:s}]", "content", text_of(60000, 'r'), "role", "tool",
	    "tool_call_id", "a", "role", "function", "name", "fn", "content",
	    text_of(60000, 'f'), "role", "assistant", "role", "assistant");

	ck_assert_int_eq(prune(m, &st, &e), 0);
	ck_assert_uint_eq(st.outputs, 1);
	ck_assert_uint_eq(st.pruned, 1);
	/* The message without a role is left whole. */
	ck_assert_uint_eq(strlen(content(m, 0)), 60000);
	ck_assert_ptr_null(json_object_get(json_array_get(m, 1), "content"));
	ck_assert_int_eq(saop_prune_is_summary(content(m, 2),
	    strlen(content(m, 2)), NULL, NULL), 1);
	/* A function message's name is its tool's name. */
	ck_assert_int_eq(saop_tool_output_latest(store, "fn", NULL, &id, &e),
	    0);
	ck_assert_int_eq(id, 1);
	json_decref(m);
}
END_TEST

START_TEST(a_tool_result_block_of_an_object_is_named_and_nothing_stored)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m = json_pack("[{s:s, s:[{s:s, s:s, s:o}, {s:s, s:s, "
	    "s:{s:i}}]}, {s:s}, {s:s}]", "role", "user", "content", "type",
	    "tool_result", "tool_use_id", "u1", "content",
	    text_of(60000, 'k'), "type", "tool_result", "tool_use_id", "u2",
	    "content", "a", 1, "role", "assistant", "role", "assistant");

	ck_assert_int_eq(prune(m, &st, &e), -SAOP_EDATA);
	ck_assert_str_eq(e.field, "/request/messages/0/content/1/content");
	ck_assert_int_eq(rows(), 0);
	/* The first block, before the bad one, is not changed either. */
	ck_assert_uint_eq(json_string_length(json_object_get(json_array_get(
	    json_object_get(json_array_get(m, 0), "content"), 0), "content")),
	    60000);
	json_decref(m);
}
END_TEST

START_TEST(a_tool_result_without_a_call_id_is_pruned_without_a_name)
{
	struct saop_prune_stats st;
	struct saop_err e;
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	json_t *m = json_pack("[{s:s, s:[{s:s, s:o}]}, {s:s}, {s:s}]",
	    "role", "user", "content", "type", "tool_result", "content",
	    text_of(60000, 'w'), "role", "assistant", "role", "assistant");

	ck_assert_int_eq(prune(m, &st, &e), 0);
	ck_assert_uint_eq(st.pruned, 1);
	f = open_memstream(&buf, &n);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(saop_tool_output_list(store, NULL, f, &e), 0);
	fclose(f);
	/* id, task, tool "-", call "-", bytes, age */
	ck_assert_msg(strstr(buf, "\n1\ttask-1\t-\t-\t60000\t3\t") != NULL,
	    "%s", buf);
	free(buf);
	json_decref(m);
}
END_TEST

START_TEST(entries_of_every_bad_shape_are_named)
{
	struct saop_prune_opts o;
	struct saop_prune_stats st = { 0 };
	struct saop_err e;
	json_t *en;
	long line = 9;
	char sum[256];

	saop_prune_opts_init(&o);
	o.store = store;
	o.task_id = "t";
	en = json_integer(3);
	ck_assert_int_eq(saop_prune_entries(&en, &line, 1, &o, &st, &e),
	    -SAOP_EDATA);
	ck_assert_str_eq(e.field, "");
	ck_assert_int_eq(e.line, 9);
	json_decref(en);
	en = json_pack("{s:s, s:s, s:i}", "raw_content", "abc", "byte_size",
	    "3", "turn_age", 2);
	ck_assert_int_eq(saop_prune_entries(&en, NULL, 1, &o, &st, &e),
	    -SAOP_EDATA);
	ck_assert_str_eq(e.field, "/byte_size");
	ck_assert_int_eq(e.line, 0);
	json_decref(en);
	/* byte_size null is no size; a summary keeps the size of its raw. */
	snprintf(sum, sizeof(sum), "abc" MARK("60000", "5"));
	en = json_pack("{s:s, s:n, s:i}", "raw_content", "abc", "byte_size",
	    "turn_age", 2);
	ck_assert_int_eq(saop_prune_entries(&en, NULL, 1, &o, &st, &e), 0);
	json_decref(en);
	en = json_pack("{s:s, s:i, s:i}", "raw_content", sum, "byte_size",
	    60000, "turn_age", 2);
	ck_assert_int_eq(saop_prune_entries(&en, NULL, 1, &o, &st, &e), 0);
	ck_assert_uint_eq(st.already, 1);
	ck_assert_uint_eq(st.pruned, 0);
	json_decref(en);
}
END_TEST

/* An open_store callback: the store in arg, or a failure when NULL. */
static struct saop_store *
open_cb(void *arg, struct saop_err *e)
{
	if (arg == NULL)
		saop__fail(e, SAOP_EDB, 0, "cannot open it");
	return arg;
}

START_TEST(the_store_is_opened_only_when_an_output_is_to_be_stored)
{
	struct saop_prune_opts o;
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m = openai_conv(60000, 2, 's');

	saop_prune_opts_init(&o);
	o.task_id = "t";
	ck_assert_int_eq(saop_prune_messages(m, &o, &st, &e), -SAOP_EDB);
	ck_assert_str_eq(e.msg, "no state database to store tool outputs in");
	o.open_store = open_cb;
	ck_assert_int_eq(saop_prune_messages(m, &o, &st, &e), -SAOP_EDB);
	ck_assert_str_eq(e.msg, "cannot open it");
	ck_assert_uint_eq(strlen(content(m, 2)), 60000);
	ck_assert_int_eq(rows(), 0);
	o.store_arg = store;
	ck_assert_int_eq(saop_prune_messages(m, &o, &st, &e), 0);
	ck_assert_int_eq(rows(), 1);
	ck_assert_int_eq(saop_prune_is_summary(content(m, 2),
	    strlen(content(m, 2)), NULL, NULL), 1);
	json_decref(m);
}
END_TEST

START_TEST(an_entry_s_capture_time_is_stored_and_listed_escaped)
{
	struct saop_prune_opts o;
	struct saop_prune_stats st = { 0 };
	struct saop_err e;
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	json_t *en;

	saop_prune_opts_init(&o);
	o.store = store;
	o.task_id = "t";
	en = json_pack("{s:s, s:o, s:i, s:s}", "tool_name", "del\x7f",
	    "raw_content", text_of(60000, 'c'), "turn_age", 4, "captured_at",
	    "2020-01-02T03:04:05.000Z");
	ck_assert_int_eq(saop_prune_entries(&en, NULL, 1, &o, &st, &e), 0);
	json_decref(en);
	f = open_memstream(&buf, &n);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(saop_tool_output_list(store, "t", f, &e), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "\tdel\\x7f\t-\t60000\t4\t"
	    "2020-01-02T03:04:05.000Z\t") != NULL, "%s", buf);
	free(buf);
}
END_TEST

START_TEST(a_write_error_is_an_io_error)
{
	struct saop_err e;
	json_t *m = openai_conv(60000, 2, 'z');
	struct saop_prune_stats st;
	FILE *f;

	/* No call id: the list writes its cell as "-". */
	json_object_del(json_array_get(m, 2), "tool_call_id");

	ck_assert_int_eq(prune(m, &st, &e), 0);
	if ((f = fopen("/dev/full", "w")) == NULL)
		return;		/* no /dev/full: nothing to check */
	ck_assert_int_eq(saop_tool_output_get(store, 1, f, &e), -SAOP_EIO);
	ck_assert_msg(strncmp(e.msg, "write error: ", 13) == 0, "%s", e.msg);
	setvbuf(f, NULL, _IONBF, 0);
	ck_assert_int_eq(saop_tool_output_list(store, NULL, f, &e), -SAOP_EIO);
	ck_assert_msg(strncmp(e.msg, "write error: ", 13) == 0, "%s", e.msg);
	fclose(f);
	json_decref(m);
}
END_TEST

START_TEST(parts_and_blocks_that_are_not_tool_text_are_left_alone)
{
	struct saop_prune_stats st;
	struct saop_err e;
	json_t *m = json_pack("[{s:s, s:[{s:s, s:s}]}, {s:s},"
	    " {s:s, s:[{s:s}, {s:s, s:s}]},"
	    " {s:s, s:[{s:s}, {s:s, s:i}], s:[{s:s, s:s}]},"
	    " {s:s, s:s, s:[{s:s}]}, {s:s, s:s, s:[{s:s, s:i}]},"
	    " {s:s}, {s:s}]",
	    "role", "assistant", "content", "id", "u9", "name", "x",
	    "role", "user",
	    "role", "user", "content", "text", "hi", "type", "text",
	    "text", "hi",
	    "role", "assistant", "content", "id", "u8", "id", "u7",
	    "name", 5, "tool_calls", "type", "function", "function", "x",
	    "role", "tool", "tool_call_id", "a", "content", "text", "x",
	    "role", "tool", "tool_call_id", "b", "content", "type", "text",
	    "text", 5,
	    "role", "assistant", "role", "assistant");

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(prune(m, &st, &e), 0);
	/* Only the two tool messages are outputs; neither is text. */
	ck_assert_uint_eq(st.outputs, 0);
	ck_assert_int_eq(rows(), 0);
	json_decref(m);
}
END_TEST

START_TEST(an_output_without_a_task_is_an_internal_error)
{
	struct saop_prune_opts o;
	struct saop_err e;
	json_t *m = openai_conv(60000, 2, 'i');

	saop_prune_opts_init(&o);
	o.store = store;
	ck_assert_int_eq(saop_prune_messages(m, &o, NULL, &e),
	    -SAOP_EINTERNAL);
	ck_assert_str_eq(e.msg, "pruning without a task id");
	ck_assert_int_eq(rows(), 0);
	/* Without a store and without e: still the database's error. */
	o.store = NULL;
	o.task_id = "t";
	ck_assert_int_eq(saop_prune_messages(m, &o, NULL, NULL), -SAOP_EDB);
	ck_assert_uint_eq(strlen(content(m, 2)), 60000);
	json_decref(m);
}
END_TEST

START_TEST(entries_without_a_turn_age_or_tallies_are_named)
{
	struct saop_prune_opts o;
	struct saop_err e;
	json_t *en;

	saop_prune_opts_init(&o);
	o.store = store;
	o.task_id = "t";
	en = json_pack("{s:s}", "raw_content", "abc");
	ck_assert_int_eq(saop_prune_entries(&en, NULL, 1, &o, NULL, &e),
	    -SAOP_EDATA);
	ck_assert_str_eq(e.field, "/turn_age");
	json_decref(en);
	en = json_pack("{s:o, s:i}", "raw_content", text_of(60000, 'e'),
	    "turn_age", 2);
	ck_assert_int_eq(saop_prune_entries(&en, NULL, 1, &o, NULL, &e), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(en, "stored_id")),
	    1);
	json_decref(en);
}
END_TEST

START_TEST(a_store_that_cannot_open_fails_every_read)
{
	struct saop_err e;
	struct saop_store *bad;
	long long id = 5;
	char path[300];

	snprintf(path, sizeof(path), "%s/no/such/dir/state.sqlite", tmpdir);
	/* saop_store_new() connects on the first use. */
	bad = saop_store_new(path, &e);
	ck_assert_ptr_nonnull(bad);
	ck_assert_int_lt(saop_tool_output_get(bad, 1, stdout, &e), 0);
	ck_assert_msg(strstr(e.msg, "no/such/dir") != NULL, "%s", e.msg);
	ck_assert_int_lt(saop_tool_output_latest(bad, "x", NULL, &id, &e), 0);
	ck_assert_int_eq(id, 0);
	ck_assert_int_lt(saop_tool_output_list(bad, NULL, stdout, &e), 0);
	saop_store_close(bad);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("prune");
	TCase *tc = tcase_create("prune");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, age_2_is_pruned_and_age_1_is_not);
	tcase_add_test(tc, size_51201_is_pruned_and_51200_is_not);
	tcase_add_test(tc, summary_is_500_characters_then_the_marker_with_the_id);
	tcase_add_test(tc, a_4_byte_character_at_character_500_is_kept_whole);
	tcase_add_test(tc, pruning_twice_changes_nothing_and_stores_nothing_twice);
	tcase_add_test(tc, the_same_raw_output_in_a_later_turn_is_stored_once);
	tcase_add_test(tc,
	    anthropic_tool_result_blocks_are_pruned_with_their_tool_name);
	tcase_add_test(tc, raw_output_comes_back_byte_for_byte_nul_included);
	tcase_add_test(tc, a_failed_store_changes_no_message);
	tcase_add_test(tc, the_checkpoint_setting_is_put_back_after_a_batch);
	tcase_add_test(tc, tool_names_reach_sql_only_as_parameters);
	tcase_add_test(tc, entries_use_their_turn_age_and_name_a_bad_field);
	tcase_add_test(tc, a_message_that_is_not_an_object_is_named);
	tcase_add_test(tc, only_the_exact_marker_counts_as_a_summary);
	tcase_add_test(tc, the_marker_s_numbers_are_read_strictly);
	tcase_add_test(tc, nine_outputs_of_one_conversation_are_all_stored);
	tcase_add_test(tc, messages_not_an_array_fail_without_an_error_struct);
	tcase_add_test(tc, messages_without_a_role_or_content_are_passed_over);
	tcase_add_test(tc, a_tool_result_block_of_an_object_is_named_and_nothing_stored);
	tcase_add_test(tc, a_tool_result_without_a_call_id_is_pruned_without_a_name);
	tcase_add_test(tc, entries_of_every_bad_shape_are_named);
	tcase_add_test(tc, the_store_is_opened_only_when_an_output_is_to_be_stored);
	tcase_add_test(tc, an_entry_s_capture_time_is_stored_and_listed_escaped);
	tcase_add_test(tc, a_write_error_is_an_io_error);
	tcase_add_test(tc, parts_and_blocks_that_are_not_tool_text_are_left_alone);
	tcase_add_test(tc, an_output_without_a_task_is_an_internal_error);
	tcase_add_test(tc, entries_without_a_turn_age_or_tallies_are_named);
	tcase_add_test(tc, a_store_that_cannot_open_fails_every_read);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
