/*
 * turn-state.c: fuzz target for the saved-turn reader
 * (saop_turn_state_each(), saop_turn_state_claim() in lib/suspend.c, and
 * the record parser they read with, saop__record_parse() in
 * lib/record.c).  The input is the turn_state_json text of one row of
 * agent_turn_states, as anybody with the database could have written it,
 * saved beside a good row.  Properties:
 *  - it never crashes, and every row comes back: with a state (a JSON
 *    object holding a "record" object) or with an error message;
 *  - a bad row is only its own trouble: the good row always reads;
 *  - claiming the row agrees with reading it (1 when readable,
 *    SAOP_EDATA when not), and an unreadable row is left unclaimed;
 *  - a readable state, saved again and read back, is the same text byte
 *    for byte (the verbatim form).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saop-private.h"
#include "db-sqlite.h"
#include "fuzz.h"

static struct saop_store *store;

/* The store of the run: made once, in /dev/shm when there is one. */
static struct saop_store *
the_store(void)
{
	static char dir[64];
	char path[96];
	struct saop_err e;

	if (store != NULL)
		return store;
	snprintf(dir, sizeof(dir), "%s/saop-fuzz-turn.XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	FUZZ_CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/state.sqlite", dir);
	FUZZ_CHECK((store = saop_store_open(path, &e)) != NULL);
	return store;
}

/* What saop_turn_state_each() handed over. */
struct seen {
	int good, bad_ok, bad_err;
	char *text;		/* the bad row's state, as saved again */
};

/* Check one row and keep what the bad one read as. */
static int
each(void *arg, const struct saop_turn_row *row)
{
	struct seen *s = arg;
	struct saop_err e;
	size_t len;

	FUZZ_CHECK((row->state == NULL) != (row->error == NULL));
	if (row->state != NULL) {
		FUZZ_CHECK(json_is_object(row->state));
		FUZZ_CHECK(json_is_object(json_object_get(row->state,
		    "record")));
	} else
		FUZZ_CHECK(row->error[0] != '\0');
	if (strcmp(row->key.task_id, "good") == 0) {
		FUZZ_CHECK(row->state != NULL);
		s->good++;
	} else if (row->state != NULL) {
		s->bad_ok++;
		FUZZ_CHECK((s->text = saop__record_text(row->state, &len,
		    &e)) != NULL);
	} else
		s->bad_err++;
	return 0;
}

/* Insert the row (task, 1, saop-suspend) holding text (n bytes). */
static void
insert(sqlite3 *db, const char *task, const char *text, size_t n)
{
	sqlite3_stmt *st;

	FUZZ_CHECK(sqlite3_prepare_v2(db, "INSERT INTO agent_turn_states"
	    " (task_id, turn, stage, turn_state_json, saved_at) VALUES (?1,"
	    " 1, 'saop-suspend', ?2, '2026-01-01T00:00:00.000Z')", -1, &st,
	    NULL) == SQLITE_OK);
	sqlite3_bind_text(st, 1, task, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, text, (int)n, SQLITE_STATIC);
	FUZZ_CHECK(sqlite3_step(st) == SQLITE_DONE);
	sqlite3_finalize(st);
}

/* libFuzzer's entry point: data as a saved turn's text. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char good[] = "{\"record\":{\"task_id\":\"good\"},"
	    "\"stage\":\"saop-suspend\",\"partial\":\"\"}";
	struct saop_turn_key k = { "bad", 1, "saop-suspend" };
	struct saop_store *s = the_store();
	struct seen seen, again;
	struct saop_err e;
	json_t *state = NULL;
	sqlite3 *db;
	int rc;

	if (size > 1 << 16)
		return 0;
	/*
	 * The reader marks a value jansson cannot hold with a NUL, a name
	 * and 64 random bits made once per process (lib/record.c), never
	 * written out: no saved text can hold this process's mark, but
	 * libFuzzer's comparison tracing learns it from inside the process.
	 * Such an input is not one the reader can meet.
	 */
	if (memmem(data, size, "saop-verbatim:", 14) != NULL)
		return 0;
	db = saop__store_db(s);
	FUZZ_CHECK(sqlite3_exec(db, "DELETE FROM agent_turn_states", NULL,
	    NULL, NULL) == SQLITE_OK);
	insert(db, "good", good, sizeof(good) - 1);
	insert(db, "bad", (const char *)data, size);
	memset(&seen, 0, sizeof(seen));
	FUZZ_CHECK(saop_turn_state_each(s, NULL, each, &seen, &e) == 0);
	FUZZ_CHECK(seen.good == 1 && seen.bad_ok + seen.bad_err == 1);
	/* Claiming agrees with reading. */
	rc = saop_turn_state_claim(s, &k, &state, &e);
	if (seen.bad_ok) {
		FUZZ_CHECK(rc == 1 && json_is_object(state));
		/* Saved again and read back: the same text. */
		FUZZ_CHECK(saop_turn_state_save(s, &k, state, 0, &e) == 0);
		memset(&again, 0, sizeof(again));
		FUZZ_CHECK(saop_turn_state_each(s, NULL, each, &again,
		    &e) == 0);
		FUZZ_CHECK(again.bad_ok == 1 && again.text != NULL);
		FUZZ_CHECK(strcmp(again.text, seen.text) == 0);
		free(again.text);
	} else {
		FUZZ_CHECK(rc == -SAOP_EDATA && state == NULL);
		FUZZ_CHECK(e.msg[0] != '\0');
	}
	json_decref(state);
	free(seen.text);
	return 0;
}
