/* check_core.c: unit tests for err.c, record.c and store.c. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <unistd.h>

#include "saop-private.h"
#include "db-sqlite.h"
#include "unit.h"

static char tmpdir[] = "/tmp/check_core.XXXXXX";

static void
setup(void)
{
	strcpy(tmpdir, "/tmp/check_core.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A reader over text held in memory. */
static struct saop_reader *
reader_on(const char *text, size_t max)
{
	char path[256];
	FILE *f;
	struct saop_err e;
	struct saop_reader *r;

	snprintf(path, sizeof(path), "%s/in.ndjson", tmpdir);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	r = saop_reader_open(path, max, &e);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* The wait hook's state: the pipe's write end, the calls seen. */
struct waiter {
	int fd;
	int calls;
};

/* The wait hook: the input comes only now, then ends. */
static void
feed_on_wait(void *arg)
{
	struct waiter *w = arg;
	static const char line[] = "{\"turn\": 1}\n";

	w->calls++;
	if (w->fd >= 0) {
		ck_assert_int_eq(write(w->fd, line, sizeof(line) - 1),
		    (long)sizeof(line) - 1);
		close(w->fd);
		w->fd = -1;
	}
}

/*
 * Before a read that would wait, the reader calls the caller's hook (a
 * program flushes its output there) and flushes no stream of its own
 * accord: another stream's buffered bytes stay buffered.
 */
START_TEST(reader_calls_the_wait_hook_and_flushes_no_other_stream)
{
	struct waiter w;
	struct saop_reader *r;
	struct saop_err e;
	struct stat st;
	char path[64];
	json_t *rec = NULL;
	int p[2];
	FILE *other = tmpfile();

	ck_assert_ptr_nonnull(other);
	ck_assert_int_eq(setvbuf(other, NULL, _IOFBF, 4096), 0);
	fputs("buffered", other);
	ck_assert_int_eq(pipe(p), 0);
	snprintf(path, sizeof(path), "/dev/fd/%d", p[0]);
	r = saop_reader_open(path, 0, &e);
	ck_assert_ptr_nonnull(r);
	w.fd = p[1];
	w.calls = 0;
	saop_reader_on_wait(r, feed_on_wait, &w);
	ck_assert_int_eq(saop_reader_next(r, &rec, &e), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(rec, "turn")), 1);
	ck_assert_int_ge(w.calls, 1);
	ck_assert_int_eq(fstat(fileno(other), &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	json_decref(rec);
	saop_reader_close(r);
	close(p[0]);
	fclose(other);
}
END_TEST

START_TEST(codes_map_to_sysexits)
{
	ck_assert_int_eq(saop_err_exit_status(SAOP_EDATA), EX_DATAERR);
	ck_assert_int_eq(saop_err_exit_status(SAOP_ELIMIT), EX_DATAERR);
	ck_assert_int_eq(saop_err_exit_status(SAOP_ENOINPUT), EX_NOINPUT);
	ck_assert_int_eq(saop_err_exit_status(SAOP_EDB), EX_IOERR);
	ck_assert_int_eq(saop_err_exit_status(SAOP_EREFUSED), EX_UNAVAILABLE);
	ck_assert_int_eq(saop_err_exit_status(SAOP_EPROTO), EX_PROTOCOL);
	ck_assert_int_eq(saop_err_exit_status(SAOP_ENETWORK), EX_TEMPFAIL);
	ck_assert_int_eq(saop_err_exit_status(SAOP_ECONFIG), EX_CONFIG);
	ck_assert_int_eq(saop_err_exit_status(SAOP_ENOMEM), EX_SOFTWARE);
	ck_assert_int_eq(saop_err_exit_status(999), EX_SOFTWARE);
}
END_TEST

START_TEST(fail_returns_negative_code_and_fills_err)
{
	struct saop_err e;

	ck_assert_int_eq(saop__fail_at(&e, SAOP_EDATA, 3, 17, "bad %s", "x"),
	    -SAOP_EDATA);
	ck_assert_int_eq(e.code, SAOP_EDATA);
	ck_assert_int_eq(e.line, 3);
	ck_assert_int_eq(e.offset, 17);
	ck_assert_str_eq(e.msg, "bad x");
	ck_assert_int_eq(saop__fail(NULL, SAOP_EIO, 0, "ignored"), -SAOP_EIO);
}
END_TEST

START_TEST(reader_keeps_unknown_fields_in_order)
{
	struct saop_reader *r = reader_on(
	    "{\"zeta\":1,\"raw\":\"x\",\"alpha\":{\"k\":[1,2]}}\n", 0);
	struct saop_err e;
	json_t *rec;
	char *out;

	ck_assert_int_eq(saop_reader_next(r, &rec, &e), 1);
	out = json_dumps(rec, JSON_COMPACT);
	ck_assert_str_eq(out, "{\"zeta\":1,\"raw\":\"x\",\"alpha\":{\"k\":[1,2]}}");
	free(out);
	json_decref(rec);
	ck_assert_int_eq(saop_reader_next(r, &rec, &e), 0);
	saop_reader_close(r);
}
END_TEST

START_TEST(reader_skips_blank_lines_and_counts_them)
{
	struct saop_reader *r = reader_on("\n  \n{\"a\":1}\n\n{\"b\":2}", 0);
	struct saop_err e;
	json_t *rec;

	ck_assert_int_eq(saop_reader_next(r, &rec, &e), 1);
	ck_assert_int_eq(saop_reader_line(r), 3);
	json_decref(rec);
	ck_assert_int_eq(saop_reader_next(r, &rec, &e), 1);
	ck_assert_int_eq(saop_reader_line(r), 5);
	json_decref(rec);
	ck_assert_int_eq(saop_reader_next(r, &rec, &e), 0);
	saop_reader_close(r);
}
END_TEST

START_TEST(reader_names_line_and_byte_of_bad_json)
{
	struct saop_reader *r = reader_on("{\"a\":1}\n{\"a\":tru}\n", 0);
	struct saop_err e;
	json_t *rec;

	ck_assert_int_eq(saop_reader_next(r, &rec, &e), 1);
	json_decref(rec);
	ck_assert_int_eq(saop_reader_next(r, &rec, &e), -SAOP_EDATA);
	ck_assert_ptr_null(rec);
	ck_assert_int_eq(e.line, 2);
	ck_assert_int_eq(e.has_offset, 1);
	/* The first byte that cannot be JSON: the '}' after "tru". */
	ck_assert_int_eq(e.offset, 8);
	saop_reader_close(r);

	r = reader_on("{\"a\": x}\n{\"a\": [1,\n", 0);
	ck_assert_int_eq(saop_reader_next(r, &rec, &e), -SAOP_EDATA);
	ck_assert_int_eq(e.line, 1);
	ck_assert_int_eq(e.offset, 6);
	ck_assert_ptr_nonnull(strstr(e.msg, "unexpected 'x'"));
	/* A line cut inside the JSON: named at its end. */
	ck_assert_int_eq(saop_reader_next(r, &rec, &e), -SAOP_EDATA);
	ck_assert_int_eq(e.line, 2);
	ck_assert_int_eq(e.offset, 9);
	ck_assert_ptr_nonnull(strstr(e.msg, "ends inside"));
	saop_reader_close(r);
}
END_TEST

START_TEST(reader_refuses_a_line_that_is_not_an_object)
{
	struct saop_reader *r = reader_on("[1,2]\n", 0);
	struct saop_err e;
	json_t *rec;

	ck_assert_int_eq(saop_reader_next(r, &rec, &e), -SAOP_EDATA);
	ck_assert_int_eq(e.line, 1);
	ck_assert_ptr_nonnull(strstr(e.msg, "object"));
	saop_reader_close(r);
}
END_TEST

START_TEST(reader_refuses_two_objects_on_one_line)
{
	struct saop_reader *r = reader_on("{\"a\":1} {\"b\":2}\n", 0);
	struct saop_err e;
	json_t *rec;

	ck_assert_int_eq(saop_reader_next(r, &rec, &e), -SAOP_EDATA);
	ck_assert_int_eq(e.offset, 8);
	saop_reader_close(r);
}
END_TEST

START_TEST(reader_limits_line_length)
{
	struct saop_reader *r = reader_on("{\"a\":\"0123456789\"}\n{}\n", 10);
	struct saop_err e;
	json_t *rec;

	ck_assert_int_eq(saop_reader_next(r, &rec, &e), -SAOP_ELIMIT);
	ck_assert_int_eq(e.line, 1);
	/* The long line was consumed: the next record is still readable. */
	ck_assert_int_eq(saop_reader_next(r, &rec, &e), 1);
	ck_assert_int_eq(saop_reader_line(r), 2);
	json_decref(rec);
	saop_reader_close(r);
}
END_TEST

START_TEST(reader_takes_lines_across_read_blocks)
{
	/* Lines longer than the reader's read-ahead block, and lines cut at
	 * every place around a block's end, come back whole. */
	size_t sizes[] = { 131060, 131061, 131062, 131063, 300000, 1 };
	size_t i, total = 0, at = 0, k;
	char *text;
	struct saop_reader *r;
	struct saop_err e;
	json_t *rec;

	for (i = 0; i < 6; i++)
		total += sizes[i] + 12;
	text = malloc(total + 1);
	ck_assert_ptr_nonnull(text);
	for (i = 0; i < 6; i++) {
		at += (size_t)sprintf(text + at, "{\"a\":\"");
		for (k = 0; k < sizes[i]; k++)
			text[at++] = (char)('a' + (k + i) % 26);
		at += (size_t)sprintf(text + at, "\"}\n");
	}
	text[at] = '\0';
	r = reader_on(text, 0);
	for (i = 0; i < 6; i++) {
		const char *v;

		ck_assert_int_eq(saop_reader_next(r, &rec, &e), 1);
		ck_assert_int_eq(saop_reader_line(r), (long)i + 1);
		v = json_string_value(json_object_get(rec, "a"));
		ck_assert_ptr_nonnull(v);
		ck_assert_uint_eq(strlen(v), sizes[i]);
		ck_assert_int_eq(v[sizes[i] - 1],
		    'a' + (int)((sizes[i] - 1 + i) % 26));
		json_decref(rec);
	}
	ck_assert_int_eq(saop_reader_next(r, &rec, &e), 0);
	saop_reader_close(r);

	/* The limit holds across blocks too, and the reader goes on. */
	r = reader_on(text, 200000);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(saop_reader_next(r, &rec, &e), 1);
		json_decref(rec);
	}
	ck_assert_int_eq(saop_reader_next(r, &rec, &e), -SAOP_ELIMIT);
	ck_assert_int_eq(e.line, 5);
	ck_assert_int_eq(saop_reader_next(r, &rec, &e), 1);
	ck_assert_int_eq(saop_reader_line(r), 6);
	json_decref(rec);
	saop_reader_close(r);
	free(text);
}
END_TEST

START_TEST(reader_open_missing_file_is_noinput)
{
	struct saop_err e;

	ck_assert_ptr_null(saop_reader_open("/nonexistent/x", 0, &e));
	ck_assert_int_eq(e.code, SAOP_ENOINPUT);
}
END_TEST

START_TEST(read_all_keeps_nul_bytes_and_limits_size)
{
	FILE *f = tmpfile();
	struct saop_err e;
	char *buf;
	size_t len;

	fwrite("a\0b", 1, 3, f);
	rewind(f);
	ck_assert_int_eq(saop_read_all(f, &buf, &len, 0, &e), 0);
	ck_assert_uint_eq(len, 3);
	ck_assert_int_eq(memcmp(buf, "a\0b", 4), 0);
	free(buf);
	rewind(f);
	ck_assert_int_eq(saop_read_all(f, &buf, &len, 2, &e), -SAOP_ELIMIT);
	ck_assert_ptr_null(buf);
	fclose(f);
}
END_TEST

START_TEST(record_write_is_one_compact_utf8_line)
{
	json_t *rec = json_pack("{s:s, s:i}", "raw", "caf\xc3\xa9 \"q\"", "turn", 2);
	struct saop_err e;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_int_eq(saop_record_write(f, rec, &e), 0);
	fclose(f);
	ck_assert_str_eq(buf, "{\"raw\":\"caf\xc3\xa9 \\\"q\\\"\",\"turn\":2}\n");
	free(buf);
	json_decref(rec);
}
END_TEST

static char *
db_path(const char *name)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	return p;
}

START_TEST(store_creates_private_dir_and_file_in_wal_mode)
{
	struct saop_err e;
	struct saop_store *s;
	struct stat st;
	sqlite3_stmt *q;

	s = saop_store_open(db_path("d/state.sqlite"), &e);
	ck_assert_msg(s != NULL, "%s", e.msg);
	ck_assert_int_eq(stat(db_path("d"), &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(stat(db_path("d/state.sqlite"), &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(s),
	    "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 0), "wal");
	sqlite3_finalize(q);
	saop_store_close(s);
}
END_TEST

static int
count_migrations(void)
{
	int n = 0;

	while (saop__migrations[n].name != NULL)
		n++;
	return n;
}

static char *
schema_text(const char *path)
{
	char cmd[512], *out;
	FILE *p;
	size_t len = 0;

	snprintf(cmd, sizeof(cmd), "sqlite3 '%s' .schema", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	out = calloc(1, 65536);
	len = fread(out, 1, 65535, p);
	pclose(p);
	out[len] = '\0';
	return out;
}

START_TEST(store_migrations_apply_once)
{
	struct saop_err e;
	struct saop_store *s;
	char *before, *after;

	s = saop_store_open(db_path("m.sqlite"), &e);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(saop_store_version(s), count_migrations());
	saop_store_close(s);
	before = schema_text(db_path("m.sqlite"));
	ck_assert_ptr_nonnull(strstr(before, "CREATE TABLE tasks"));
	ck_assert_ptr_nonnull(strstr(before, "CREATE TABLE events"));
	s = saop_store_open(db_path("m.sqlite"), &e);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(saop_store_version(s), count_migrations());
	saop_store_close(s);
	after = schema_text(db_path("m.sqlite"));
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
}
END_TEST

START_TEST(store_eight_processes_open_a_new_database_at_once)
{
	struct saop_err e;
	struct saop_store *s;
	pid_t pids[8];
	int i, status;

	for (i = 0; i < 8; i++) {
		if ((pids[i] = fork()) == 0) {
			s = saop_store_open(db_path("c.sqlite"), &e);
			if (s == NULL)
				_exit(1);
			if (saop_event(s, "t", i, "PROBE", NULL, &e) != 0)
				_exit(2);
			saop_store_close(s);
			_exit(0);
		}
		ck_assert_int_gt(pids[i], 0);
	}
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "child %d failed with %d", i, WEXITSTATUS(status));
	}
	s = saop_store_open(db_path("c.sqlite"), &e);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(saop_store_version(s), count_migrations());
	saop_store_close(s);
}
END_TEST

START_TEST(event_goes_to_table_and_log)
{
	struct saop_err e;
	struct saop_store *s;
	json_t *data = json_pack("{s:i}", "attempt", 2), *line;
	sqlite3_stmt *q;
	char buf[1024];
	FILE *f;

	s = saop_store_open(db_path("e.sqlite"), &e);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(saop_store_set_log(s, db_path("log.ndjson"), &e), 0);
	ck_assert_int_eq(saop_event(s, "task-1", 4, "MALFORMED_RESPONSE", data,
	    &e), 0);
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(s),
	    "SELECT task_id, turn, event, data FROM events", -1, &q, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 0), "task-1");
	ck_assert_int_eq(sqlite3_column_int(q, 1), 4);
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 2),
	    "MALFORMED_RESPONSE");
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 3),
	    "{\"attempt\":2}");
	sqlite3_finalize(q);
	saop_store_close(s);
	f = fopen(db_path("log.ndjson"), "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	line = json_loads(buf, 0, NULL);
	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(json_string_value(json_object_get(line, "event")),
	    "MALFORMED_RESPONSE");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
	    line, "data"), "attempt")), 2);
	json_decref(line);
	json_decref(data);
}
END_TEST

START_TEST(task_status_is_upserted)
{
	struct saop_err e;
	struct saop_store *s;
	sqlite3_stmt *q;

	s = saop_store_open(db_path("t.sqlite"), &e);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(saop_task_set_status(s, "t1", SAOP_TASK_IN_PROGRESS,
	    NULL, &e), 0);
	ck_assert_int_eq(saop_task_set_status(s, "t1",
	    SAOP_TASK_USER_ESCALATION, SAOP_REASON_MAX_RETRIES_EXCEEDED, &e), 0);
	/* DONE replaces only IN_PROGRESS: the escalation stays. */
	ck_assert_int_eq(saop_task_set_status(s, "t1", SAOP_TASK_DONE, NULL,
	    &e), 0);
	ck_assert_int_lt(saop_task_set_status(s, "t1",
	    (enum saop_task_status)99, NULL, &e), 0);
	ck_assert_int_eq(e.code, SAOP_EINTERNAL);
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(s),
	    "SELECT count(*), status, reason FROM tasks", -1, &q, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(q, 0), 1);
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 1),
	    "USER_ESCALATION");
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 2),
	    "MAX_RETRIES_EXCEEDED");
	sqlite3_finalize(q);
	/* An IN_PROGRESS task, or a new one, does become DONE. */
	ck_assert_int_eq(saop_task_set_status(s, "t2", SAOP_TASK_IN_PROGRESS,
	    NULL, &e), 0);
	ck_assert_int_eq(saop_task_set_status(s, "t2", SAOP_TASK_DONE, NULL,
	    &e), 0);
	ck_assert_int_eq(saop_task_set_status(s, "t3", SAOP_TASK_DONE, NULL,
	    &e), 0);
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(s),
	    "SELECT group_concat(status, ',') FROM (SELECT status FROM tasks"
	    " WHERE task_id <> 't1' ORDER BY task_id)", -1, &q, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 0), "DONE,DONE");
	sqlite3_finalize(q);
	saop_store_close(s);
}
END_TEST

/* The record's fields, read one way: every accessor, and its "none". */
START_TEST(record_accessors_read_every_field_and_say_none)
{
	json_t *r = json_loads("{\"task_id\":42,\"turn\":3,\"request\":{\"m\":1},"
	    "\"raw\":\"{}\",\"finish_reason\":\"length\",\"state\":\"TRUNCATED\","
	    "\"detect\":{\"complete\":false}}", 0, NULL);
	json_t *bad = json_loads("{\"task_id\":[1],\"turn\":-1,\"request\":5,"
	    "\"finish_reason\":null,\"state\":\"MAYBE\"}", 0, NULL);
	struct saop_err e;
	char buf[32];
	int s;

	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_nonnull(bad);
	ck_assert_str_eq(saop_record_task_id(r, buf), "42");
	ck_assert_int_eq(saop_record_turn(r), 3);
	ck_assert_ptr_nonnull(saop_record_request(r));
	ck_assert_str_eq(saop_record_finish_reason(r), "length");
	ck_assert_int_eq(saop_record_state(r), SAOP_STATE_TRUNCATED);
	ck_assert_ptr_nonnull(saop_record_detect_info(r));
	ck_assert_ptr_null(saop_record_task_id(bad, buf));
	ck_assert_int_eq(saop_record_turn(bad), -1);
	ck_assert_ptr_null(saop_record_request(bad));
	ck_assert_ptr_null(saop_record_finish_reason(bad));
	ck_assert_int_eq(saop_record_state(bad), SAOP_STATE_NONE);
	ck_assert_ptr_null(saop_record_detect_info(bad));
	/* Every state has one word and reads back as itself. */
	for (s = SAOP_STATE_OK; s <= SAOP_STATE_PAUSED_FOR_INTERVENTION; s++) {
		ck_assert_int_eq(saop_record_set_state(bad,
		    (enum saop_state)s), 0);
		ck_assert_int_eq(saop_record_state(bad), s);
	}
	ck_assert_ptr_null(saop_state_name(SAOP_STATE_NONE));
	ck_assert_ptr_null(saop_state_name((enum saop_state)99));
	ck_assert_str_eq(saop_task_status_name(SAOP_TASK_DONE), "DONE");
	ck_assert_ptr_null(saop_task_status_name((enum saop_task_status)99));
	/* raw: UTF-8 only. */
	ck_assert_int_eq(saop_record_set_raw(r, "[1", 2), 0);
	ck_assert_str_eq(saop_record_raw(r, NULL), "[1");
	ck_assert_int_eq(saop_record_set_raw(r, "\xc3\x28", 2), -SAOP_EDATA);
	ck_assert_str_eq(saop_record_raw(r, NULL), "[1");
	/* error: every part that is known. */
	saop_err_clear(&e);
	e.code = SAOP_EDATA;
	e.line = 7;
	e.offset = 3;
	e.has_offset = 1;
	snprintf(e.field, sizeof(e.field), "/raw");
	snprintf(e.msg, sizeof(e.msg), "bad");
	ck_assert_int_eq(saop_record_set_error(r, "saop-x", &e), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(
	    json_object_get(r, "error"), "status")), 65);
	ck_assert_int_eq(json_integer_value(json_object_get(
	    json_object_get(r, "error"), "byte")), 3);
	json_decref(r);
	json_decref(bad);
}
END_TEST

/*
 * Every member: written through its setter, it reads back through its
 * getter, under its own name in the JSON; a value of another type reads
 * as "none"; has/del/member_name agree with the table.
 */
START_TEST(record_every_member_set_and_read_back)
{
	json_t *r = json_object(), *bad, *o;
	const json_t *v;
	char buf[32];
	size_t n, m;
	const char *s;
	/* Each member's name, with the type its setter takes. */
	static const struct { enum saop_record_member m; const char *name; }
	    names[] = {
		{ SAOP_RECORD_TASK_ID, "task_id" },
		{ SAOP_RECORD_TURN, "turn" },
		{ SAOP_RECORD_REQUEST, "request" },
		{ SAOP_RECORD_RAW, "raw" },
		{ SAOP_RECORD_FINISH_REASON, "finish_reason" },
		{ SAOP_RECORD_TOOL_CALL, "tool_call" },
		{ SAOP_RECORD_TOOL_CALLS, "tool_calls" },
		{ SAOP_RECORD_TEXT, "text" },
		{ SAOP_RECORD_CHOICES, "choices" },
		{ SAOP_RECORD_SERVER_TOOLS, "server_tools" },
		{ SAOP_RECORD_REFUSAL, "refusal" },
		{ SAOP_RECORD_USAGE, "usage" },
		{ SAOP_RECORD_SUSPEND, "suspend" },
		{ SAOP_RECORD_DETECT, "detect" },
		{ SAOP_RECORD_RESUME, "resume" },
		{ SAOP_RECORD_VALIDATE, "validate" },
		{ SAOP_RECORD_ENVELOPE, "envelope" },
		{ SAOP_RECORD_STRUCTURED_OUTPUT, "structured_output" },
		{ SAOP_RECORD_COST, "cost" },
		{ SAOP_RECORD_STATE, "state" },
		{ SAOP_RECORD_ERROR, "error" },
	};
	struct saop_err e;

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(sizeof(names) / sizeof(names[0]),
	    SAOP_RECORD_MEMBERS);
	for (n = 0; n < SAOP_RECORD_MEMBERS; n++) {
		ck_assert_int_eq(names[n].m, (int)n);
		ck_assert_str_eq(saop_record_member_name(names[n].m),
		    names[n].name);
		ck_assert_int_eq(saop_record_has(r, names[n].m), 0);
	}
	ck_assert_ptr_null(saop_record_member_name(SAOP_RECORD_MEMBERS));
	ck_assert_int_eq(saop_record_has(r, SAOP_RECORD_MEMBERS), 0);

	ck_assert_int_eq(saop_record_set_task_id(r, "t-1"), 0);
	ck_assert_int_eq(saop_record_set_turn(r, 4), 0);
	ck_assert_int_eq(saop_record_set_turn(r, -1), -SAOP_EINTERNAL);
	ck_assert_int_eq(saop_record_set_request(r, json_pack("{s:[]}",
	    "messages")), 0);
	ck_assert_int_eq(saop_record_set_raw(r, "a\0b", 3), 0);
	ck_assert_int_eq(saop_record_set_finish_reason(r, "length"), 0);
	ck_assert_int_eq(saop_record_set_tool_call(r, json_pack("{s:s}",
	    "name", "f")), 0);
	ck_assert_int_eq(saop_record_set_tool_calls(r, json_pack("[{}]")), 0);
	ck_assert_int_eq(saop_record_set_text(r, "pro\0se", 6), 0);
	ck_assert_int_eq(saop_record_set_choices(r, json_pack("[{},{}]")), 0);
	ck_assert_int_eq(saop_record_set_server_tools(r, json_pack("[i]", 1)),
	    0);
	ck_assert_int_eq(saop_record_set_refusal(r, "no"), 0);
	ck_assert_int_eq(saop_record_set_usage(r, json_pack("{s:i}",
	    "prompt_tokens", 5)), 0);
	ck_assert_int_eq(saop_record_set_suspend(r, json_pack("{s:i}",
	    "resumes", 2)), 0);
	ck_assert_int_eq(saop_record_set_detect(r, json_pack("{s:b}",
	    "complete", 1)), 0);
	ck_assert_int_eq(saop_record_set_resume(r, json_pack("{s:i}",
	    "attempts", 1)), 0);
	ck_assert_int_eq(saop_record_set_validate(r, json_pack("{s:b}",
	    "valid", 0)), 0);
	ck_assert_int_eq(saop_record_set_envelope(r, json_null()), 0);
	ck_assert_int_eq(saop_record_set_structured_output(r,
	    json_pack("{s:s}", "mode", "native")), 0);
	ck_assert_int_eq(saop_record_set_cost(r, json_pack("{s:f}",
	    "recovery", 0.5)), 0);
	ck_assert_int_eq(saop_record_set_cost(r, json_pack("[]")),
	    -SAOP_EINTERNAL);
	ck_assert_int_eq(saop_record_set_state(r, SAOP_STATE_INVALID), 0);
	saop_err_clear(&e);
	e.code = SAOP_EDATA;
	snprintf(e.msg, sizeof(e.msg), "m");
	ck_assert_int_eq(saop_record_set_error(r, "saop-x", &e), 0);
	/* Every member is there now, under its own name. */
	ck_assert_int_eq(json_object_size(r), SAOP_RECORD_MEMBERS);
	for (n = 0; n < SAOP_RECORD_MEMBERS; n++) {
		ck_assert_int_eq(saop_record_has(r, names[n].m), 1);
		ck_assert_ptr_nonnull(json_object_get(r, names[n].name));
	}
	/* And reads back. */
	ck_assert_str_eq(saop_record_task_id(r, buf), "t-1");
	ck_assert_str_eq(json_string_value(saop_record_task_id_value(r)),
	    "t-1");
	ck_assert_int_eq(saop_record_turn(r), 4);
	ck_assert(json_real_value(json_object_get(saop_record_cost(r),
	    "recovery")) == 0.5);
	ck_assert_ptr_nonnull(json_object_get(saop_record_request(r),
	    "messages"));
	s = saop_record_raw(r, &m);
	ck_assert_int_eq(m, 3);
	ck_assert_int_eq(memcmp(s, "a\0b", 3), 0);
	ck_assert_str_eq(saop_record_finish_reason(r), "length");
	ck_assert_str_eq(json_string_value(json_object_get(
	    saop_record_tool_call(r), "name")), "f");
	ck_assert_int_eq(json_array_size(saop_record_tool_calls(r)), 1);
	s = saop_record_text(r, &m);
	ck_assert_int_eq(m, 6);
	ck_assert_int_eq(memcmp(s, "pro\0se", 6), 0);
	ck_assert_int_eq(json_array_size(saop_record_choices(r)), 2);
	ck_assert_int_eq(json_array_size(saop_record_server_tools(r)), 1);
	ck_assert_str_eq(saop_record_refusal(r), "no");
	ck_assert_int_eq(json_integer_value(json_object_get(
	    saop_record_usage(r), "prompt_tokens")), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(
	    saop_record_suspend(r), "resumes")), 2);
	ck_assert(json_is_true(json_object_get(saop_record_detect_info(r),
	    "complete")));
	ck_assert_int_eq(json_integer_value(json_object_get(
	    saop_record_resume(r), "attempts")), 1);
	ck_assert(json_is_false(json_object_get(saop_record_validate(r),
	    "valid")));
	ck_assert(json_is_null(saop_record_envelope(r)));
	ck_assert_str_eq(json_string_value(json_object_get(
	    saop_record_structured_output(r), "mode")), "native");
	ck_assert_int_eq(saop_record_state(r), SAOP_STATE_INVALID);
	ck_assert_str_eq(saop_record_state_word(r), "INVALID");
	ck_assert_str_eq(json_string_value(json_object_get(
	    saop_record_error(r), "program")), "saop-x");
	/* A null finish reason is JSON null. */
	ck_assert_int_eq(saop_record_set_finish_reason(r, NULL), 0);
	ck_assert(json_is_null(json_object_get(r, "finish_reason")));
	ck_assert_ptr_null(saop_record_finish_reason(r));
	/* A value of another type is refused, and nothing changes. */
	ck_assert_int_eq(saop_record_set_request(r, json_pack("[]")),
	    -SAOP_EINTERNAL);
	ck_assert_int_eq(saop_record_set_tool_calls(r, json_pack("{}")),
	    -SAOP_EINTERNAL);
	ck_assert_ptr_nonnull(saop_record_request(r));
	ck_assert_int_eq(saop_record_set_detect(r, NULL), -SAOP_ENOMEM);
	ck_assert_int_eq(saop_record_set_text(r, "\xff", 1), -SAOP_EDATA);
	ck_assert_int_eq(saop_record_set_task_id(r, "\xc3"), -SAOP_EDATA);
	ck_assert_int_eq(saop_record_text(r, NULL)[0], 'p');
	/* The record without its verdict: state and error gone, the rest
	 * shared. */
	o = saop__record_unjudged(r);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(json_object_size(o), SAOP_RECORD_MEMBERS - 2);
	ck_assert_int_eq(saop_record_has(o, SAOP_RECORD_STATE), 0);
	ck_assert_int_eq(saop_record_has(o, SAOP_RECORD_ERROR), 0);
	ck_assert_ptr_eq(saop_record_request(o), saop_record_request(r));
	json_decref(o);
	/* del, one member at a time. */
	for (n = 0; n < SAOP_RECORD_MEMBERS; n++) {
		saop_record_del(r, names[n].m);
		ck_assert_int_eq(saop_record_has(r, names[n].m), 0);
		ck_assert_int_eq(json_object_size(r),
		    SAOP_RECORD_MEMBERS - n - 1);
	}
	json_decref(r);

	/* Another type than saop(7)'s reads as none; has still sees it. */
	bad = json_loads("{\"task_id\":1.5,\"turn\":\"3\",\"request\":[],"
	    "\"raw\":1,\"finish_reason\":2,\"tool_call\":null,"
	    "\"tool_calls\":{},\"text\":[],\"choices\":{},"
	    "\"server_tools\":\"x\",\"refusal\":false,\"usage\":[],"
	    "\"suspend\":1,\"detect\":[],\"resume\":\"r\",\"validate\":true,"
	    "\"structured_output\":[],\"cost\":0.5,\"state\":7,"
	    "\"error\":\"e\"}", 0,
	    NULL);
	ck_assert_ptr_nonnull(bad);
	ck_assert_ptr_null(saop_record_task_id(bad, buf));
	v = saop_record_task_id_value(bad);
	ck_assert(json_is_real(v));
	ck_assert_int_eq(saop_record_turn(bad), -1);
	ck_assert_ptr_null(saop_record_request(bad));
	ck_assert_ptr_null(saop_record_raw(bad, &m));
	ck_assert_int_eq(m, 0);
	ck_assert_ptr_null(saop_record_finish_reason(bad));
	ck_assert_ptr_null(saop_record_tool_call(bad));
	ck_assert_ptr_null(saop_record_tool_calls(bad));
	ck_assert_ptr_null(saop_record_text(bad, &m));
	ck_assert_int_eq(m, 0);
	ck_assert_ptr_null(saop_record_choices(bad));
	ck_assert_ptr_null(saop_record_server_tools(bad));
	ck_assert_ptr_null(saop_record_refusal(bad));
	ck_assert_ptr_null(saop_record_usage(bad));
	ck_assert_ptr_null(saop_record_suspend(bad));
	ck_assert_ptr_null(saop_record_detect_info(bad));
	ck_assert_ptr_null(saop_record_resume(bad));
	ck_assert_ptr_null(saop_record_validate(bad));
	ck_assert_ptr_null(saop_record_envelope(bad));
	ck_assert_ptr_null(saop_record_structured_output(bad));
	ck_assert_ptr_null(saop_record_cost(bad));
	ck_assert_ptr_null(saop_record_state_word(bad));
	ck_assert_ptr_null(saop_record_error(bad));
	for (n = 0; n < SAOP_RECORD_MEMBERS; n++)
		ck_assert_int_eq(saop_record_has(bad, names[n].m),
		    names[n].m != SAOP_RECORD_ENVELOPE);
	json_decref(bad);
}
END_TEST

/* saop_record_event: the record's task (a number's text) and turn. */
START_TEST(record_event_takes_task_and_turn_from_the_record)
{
	struct saop_err e;
	struct saop_store *s;
	sqlite3_stmt *q;
	json_t *r = json_loads("{\"task_id\":42,\"turn\":3}", 0, NULL);
	json_t *none = json_object();

	s = saop_store_open(db_path("ev.sqlite"), &e);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(saop_record_event(s, r, "fb",
	    SAOP_EVENT_RESUME_FAILED, NULL), 0);
	ck_assert_int_eq(saop_record_event(s, none, "fb",
	    SAOP_EVENT_TURN_RESUMED, NULL), 0);
	ck_assert_int_eq(saop_record_event(NULL, r, "fb",
	    SAOP_EVENT_TURN_RESUMED, NULL), 0);
	ck_assert_int_eq(saop_store_error(s, &e), 0);
	ck_assert_int_eq(sqlite3_prepare_v2(saop__store_db(s),
	    "SELECT group_concat(task_id || '/' || coalesce(turn, '-') || '/'"
	    " || event, ' ') FROM events", -1, &q, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 0),
	    "42/3/RESUME_FAILED fb/-/TURN_RESUMED");
	sqlite3_finalize(q);
	saop_store_close(s);
	json_decref(r);
	json_decref(none);
}
END_TEST

START_TEST(store_open_on_unwritable_path_is_an_io_error)
{
	struct saop_err e;

	ck_assert_ptr_null(saop_store_open("/proc/nope/state.sqlite", &e));
	ck_assert(e.code == SAOP_EIO || e.code == SAOP_EDB);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("core");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, codes_map_to_sysexits);
	tcase_add_test(tc,
	    reader_calls_the_wait_hook_and_flushes_no_other_stream);
	tcase_add_test(tc, fail_returns_negative_code_and_fills_err);
	tcase_add_test(tc, reader_keeps_unknown_fields_in_order);
	tcase_add_test(tc, reader_skips_blank_lines_and_counts_them);
	tcase_add_test(tc, reader_names_line_and_byte_of_bad_json);
	tcase_add_test(tc, reader_refuses_a_line_that_is_not_an_object);
	tcase_add_test(tc, reader_refuses_two_objects_on_one_line);
	tcase_add_test(tc, reader_limits_line_length);
	tcase_add_test(tc, reader_takes_lines_across_read_blocks);
	tcase_add_test(tc, reader_open_missing_file_is_noinput);
	tcase_add_test(tc, read_all_keeps_nul_bytes_and_limits_size);
	tcase_add_test(tc, record_write_is_one_compact_utf8_line);
	tcase_add_test(tc, store_creates_private_dir_and_file_in_wal_mode);
	tcase_add_test(tc, store_migrations_apply_once);
	tcase_add_test(tc, store_eight_processes_open_a_new_database_at_once);
	tcase_add_test(tc, event_goes_to_table_and_log);
	tcase_add_test(tc, task_status_is_upserted);
	tcase_add_test(tc, store_open_on_unwritable_path_is_an_io_error);
	tcase_add_test(tc, record_accessors_read_every_field_and_say_none);
	tcase_add_test(tc, record_event_takes_task_and_turn_from_the_record);
	tcase_add_test(tc, record_every_member_set_and_read_back);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
