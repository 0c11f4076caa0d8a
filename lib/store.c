/* store.c: state.sqlite: open, migrate, transactions, tasks and events. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "saop-private.h"

#define DEFAULT_DB	".saop/state.sqlite"
#define BUSY_TIMEOUT_MS	5000
#define TX_TRIES	50

struct saop_store {
	sqlite3 *db;
	char *path;
	FILE *log;
	int log_owned;
};

int
saop__fail_db(struct saop_err *e, sqlite3 *db, const char *what)
{
	return saop__fail(e, SAOP_EDB, 0, "state database: %s: %s", what,
	    db ? sqlite3_errmsg(db) : "cannot allocate");
}

sqlite3 *
saop__store_db(struct saop_store *s)
{
	return s->db;
}

const char *
saop_store_path(const struct saop_store *s)
{
	return s->path;
}

void
saop_now_iso8601(char buf[32])
{
	struct timeval tv;
	struct tm tm;

	char date[24];

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	if (strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		date[0] = '\0';
	snprintf(buf, 32, "%.19s.%03uZ", date,
	    (unsigned)(tv.tv_usec / 1000) % 1000u);
}

/* Make the directory that will hold path, mode 0700, if it is missing. */
static int
make_parent(const char *path, struct saop_err *e)
{
	char *dir, *slash;
	int rc = 0;

	if ((dir = strdup(path)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
			rc = saop__fail(e, SAOP_EIO, errno,
			    "state database: cannot create %s: %s", dir,
			    strerror(errno));
	}
	free(dir);
	return rc;
}

static int
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	return nanosleep(&ts, NULL);
}

static int
busy(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

int
saop__store_tx(struct saop_store *s, int durable,
    int (*fn)(sqlite3 *db, void *arg, struct saop_err *e), void *arg,
    struct saop_err *e)
{
	int rc, tries;

	if (durable)
		sqlite3_exec(s->db, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
	for (tries = 0; tries < TX_TRIES; tries++) {
		rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		if (busy(rc)) {
			sleep_ms(10 + rand() % 40);
			continue;
		}
		if (rc != SQLITE_OK) {
			rc = saop__fail_db(e, s->db, "begin");
			goto out;
		}
		saop_err_clear(e);
		if ((rc = fn(s->db, arg, e)) != 0) {
			int again = e && e->code == SAOP_EDB &&
			    busy(sqlite3_errcode(s->db));

			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			if (again) {
				sleep_ms(10 + rand() % 40);
				continue;
			}
			goto out;
		}
		rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			goto out;
		if (busy(rc)) {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			sleep_ms(10 + rand() % 40);
			continue;
		}
		rc = saop__fail_db(e, s->db, "commit");
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		goto out;
	}
	rc = saop__fail(e, SAOP_EDB, 0,
	    "state database: still busy after %d tries", TX_TRIES);
out:
	if (durable)
		sqlite3_exec(s->db, "PRAGMA synchronous=NORMAL", NULL, NULL,
		    NULL);
	return rc;
}

/* The number at the front of a migration's name, "0003-x.sql" -> 3. */
static int
migration_number(const char *name)
{
	return atoi(name);
}

struct migrate_arg {
	const struct saop__blob *m;
};

static int
apply_one(sqlite3 *db, void *arg, struct saop_err *e)
{
	const struct saop__blob *m = ((struct migrate_arg *)arg)->m;
	sqlite3_stmt *st;
	int have, rc;
	char sql[64];

	/* Read the version inside the transaction: another process may
	 * have applied this step while we waited for the lock. */
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) !=
	    SQLITE_OK)
		return saop__fail_db(e, db, "reading the schema version");
	rc = sqlite3_step(st);
	have = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return saop__fail_db(e, db, "reading the schema version");
	if (have >= migration_number(m->name))
		return 0;
	if (sqlite3_exec(db, m->text, NULL, NULL, NULL) != SQLITE_OK)
		return saop__fail(e, SAOP_EDB, 0,
		    "state database: migration %s: %s", m->name,
		    sqlite3_errmsg(db));
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d",
	    migration_number(m->name));
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return saop__fail_db(e, db, "setting the schema version");
	return 0;
}

int
saop_store_version(struct saop_store *s)
{
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st,
	    NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int
migrate(struct saop_store *s, struct saop_err *e)
{
	const struct saop__blob *m;
	struct migrate_arg a;
	int rc;

	for (m = saop__migrations; m->name != NULL; m++) {
		if (saop_store_version(s) >= migration_number(m->name))
			continue;
		a.m = m;
		if ((rc = saop__store_tx(s, 1, apply_one, &a, e)) != 0)
			return rc;
	}
	return 0;
}

/* Set WAL mode, retrying while another process holds the lock. */
static int
set_wal(struct saop_store *s, struct saop_err *e)
{
	int rc, tries;

	for (tries = 0; tries < TX_TRIES; tries++) {
		rc = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL", NULL, NULL,
		    NULL);
		if (rc == SQLITE_OK)
			return 0;
		if (!busy(rc))
			break;
		sleep_ms(10 + rand() % 40);
	}
	return saop__fail_db(e, s->db, "setting WAL mode");
}

struct saop_store *
saop_store_open(const char *path, struct saop_err *e)
{
	struct saop_store *s;
	int fd;

	saop_err_clear(e);
	if (path == NULL || *path == '\0')
		path = getenv("SAOP_DB");
	if (path == NULL || *path == '\0')
		path = DEFAULT_DB;
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->path = strdup(path)) == NULL) {
		free(s);
		saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
		return NULL;
	}
	if (make_parent(path, e) != 0)
		goto fail;
	/* Create the file ourselves so that it is 0600 from the start. */
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1 &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		saop__fail(e, SAOP_EIO, errno,
		    "state database: cannot open %s: %s", path,
		    strerror(errno));
		goto fail;
	}
	close(fd);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		saop__fail(e, SAOP_EDB, 0, "state database: cannot open %s: %s",
		    path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(s->db, 1);
	if (set_wal(s, e) != 0)
		goto fail;
	sqlite3_exec(s->db, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON",
	    NULL, NULL, NULL);
	if (migrate(s, e) != 0)
		goto fail;
	return s;
fail:
	saop_store_close(s);
	return NULL;
}

void
saop_store_close(struct saop_store *s)
{
	if (s == NULL)
		return;
	if (s->db != NULL)
		sqlite3_close(s->db);
	if (s->log_owned)
		fclose(s->log);
	free(s->path);
	free(s);
}

int
saop_store_set_log(struct saop_store *s, const char *path,
    struct saop_err *e)
{
	FILE *f;

	if (s->log_owned)
		fclose(s->log);
	s->log = NULL;
	s->log_owned = 0;
	if (path == NULL)
		return 0;
	if (strcmp(path, "-") == 0) {
		s->log = stderr;
		return 0;
	}
	if ((f = fopen(path, "a")) == NULL)
		return saop__fail(e, SAOP_EIO, errno, "--log %s: %s", path,
		    strerror(errno));
	s->log = f;
	s->log_owned = 1;
	return 0;
}

struct event_arg {
	const char *time, *task_id, *event;
	long turn;
	const char *data;
};

static int
insert_event(sqlite3 *db, void *arg, struct saop_err *e)
{
	const struct event_arg *a = arg;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "INSERT INTO events (time, task_id, turn,"
	    " event, data) VALUES (?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return saop__fail_db(e, db, "recording an event");
	sqlite3_bind_text(st, 1, a->time, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, a->task_id, -1, SQLITE_STATIC);
	if (a->turn >= 0)
		sqlite3_bind_int64(st, 3, a->turn);
	sqlite3_bind_text(st, 4, a->event, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, a->data, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return saop__fail_db(e, db, "recording an event");
	return 0;
}

int
saop_event(struct saop_store *s, const char *task_id, long turn,
    const char *event, const json_t *data, struct saop_err *e)
{
	struct event_arg a;
	char now[32], *text;
	json_t *line;
	int rc;

	saop_now_iso8601(now);
	text = data ? json_dumps(data, JSON_COMPACT) : strdup("{}");
	if (text == NULL)
		return saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
	a.time = now;
	a.task_id = task_id;
	a.turn = turn;
	a.event = event;
	a.data = text;
	rc = saop__store_tx(s, 0, insert_event, &a, e);
	if (rc == 0 && s->log != NULL) {
		line = json_pack("{s:s, s:s?, s:s}", "time", now, "task_id",
		    task_id, "event", event);
		if (line == NULL) {
			free(text);
			return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
		}
		if (turn >= 0)
			json_object_set_new(line, "turn", json_integer(turn));
		json_object_set_new(line, "data", data ?
		    json_deep_copy(data) : json_object());
		if (json_dumpf(line, s->log, JSON_COMPACT) != 0 ||
		    putc('\n', s->log) == EOF || fflush(s->log) != 0)
			rc = saop__fail(e, SAOP_EIO, errno,
			    "--log: write error: %s", strerror(errno));
		json_decref(line);
	}
	free(text);
	return rc;
}

struct status_arg {
	const char *task_id, *status, *reason, *now;
};

static int
upsert_status(sqlite3 *db, void *arg, struct saop_err *e)
{
	const struct status_arg *a = arg;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "INSERT INTO tasks (task_id, status,"
	    " reason, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (task_id)"
	    " DO UPDATE SET status = excluded.status, reason = excluded.reason,"
	    " updated_at = excluded.updated_at", -1, &st, NULL) != SQLITE_OK)
		return saop__fail_db(e, db, "setting the task status");
	sqlite3_bind_text(st, 1, a->task_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, a->status, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, a->reason, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, a->now, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return saop__fail_db(e, db, "setting the task status");
	return 0;
}

int
saop_task_set_status(struct saop_store *s, const char *task_id,
    const char *status, const char *reason, struct saop_err *e)
{
	struct status_arg a;
	char now[32];

	saop_now_iso8601(now);
	a.task_id = task_id;
	a.status = status;
	a.reason = reason;
	a.now = now;
	return saop__store_tx(s, 0, upsert_status, &a, e);
}
