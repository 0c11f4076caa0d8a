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
	sqlite3 *db;		/* NULL until first needed (saop_store_new()) */
	char *path;
	char *log_path;		/* --log: opened on the first event */
	FILE *log;
	int log_owned;
	/* The first failure to write an event (a log) since it was last
	 * taken with saop_store_error(): kept, never returned. */
	struct saop_err soft;
	int has_soft;
};

/*
 * Fill e with SAOP_EDB naming what failed and SQLite's message for db
 * ("cannot allocate" when db is NULL).  Returns -SAOP_EDB.
 */
int
saop__fail_db(struct saop_err *e, sqlite3 *db, const char *what)
{
	return saop__fail(e, SAOP_EDB, 0, "state database: %s: %s", what,
	    db ? sqlite3_errmsg(db) : "cannot allocate");
}

/*
 * The SQLite handle of s (borrowed), or NULL while a lazy store is not yet
 * connected.
 */
sqlite3 *
saop__store_db(struct saop_store *s)
{
	return s->db;
}

/*
 * See saop.h.  Returns the path s was made for (borrowed: valid until
 * saop_store_close()).
 */
const char *
saop_store_path(const struct saop_store *s)
{
	return s->path;
}

/*
 * Write the current UTC time to buf as ISO 8601 with milliseconds
 * ("2026-08-23T10:00:00.123Z"; see saop.h).
 */
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

/*
 * Make the directory that will hold path, mode 0700, if it is missing.
 * Returns 0, or -SAOP_ENOMEM or -SAOP_EIO with e filled.
 */
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

/*
 * Check, as ssh does for its files, the directory that holds path (".":
 * none named): not a symbolic link, owned by this user (or root), not
 * writable by every user.  Another user's directory, or one anybody can
 * write to, could hold a planted database or a symbolic link to any file
 * of ours.  Returns 0, or -SAOP_EIO with e filled.
 */
static int
check_dir(const char *path, struct saop_err *e)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	struct stat st;
	int fd, rc = 0;

	if (slash == NULL)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (dir == NULL)
		return saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		rc = saop__fail(e, SAOP_EIO, errno, "state database: %s: %s",
		    dir, errno == ELOOP || errno == ENOTDIR ? "a symbolic link "
		    "or not a directory: refused (it could point anywhere)" :
		    strerror(errno));
	} else if (fstat(fd, &st) != 0) {
		rc = saop__fail(e, SAOP_EIO, errno, "state database: %s: %s",
		    dir, strerror(errno));
	} else if (st.st_uid != geteuid() && st.st_uid != 0) {
		rc = saop__fail(e, SAOP_EIO, 0, "state database: the "
		    "directory %s belongs to uid %ld, not to you (uid %ld): "
		    "refused", dir, (long)st.st_uid, (long)geteuid());
	} else if (st.st_mode & S_IWOTH) {
		rc = saop__fail(e, SAOP_EIO, 0, "state database: the "
		    "directory %s is writable by every user: refused (keep "
		    "the database in a private directory, such as the "
		    "default .saop/)", dir);
	}
	if (fd != -1)
		close(fd);
	free(dir);
	return rc;
}

/*
 * Check an open file fd of path: a regular file owned by this user.
 * what names it ("state database", "--log").  Returns 0, or -SAOP_EIO.
 */
static int
check_file(int fd, const char *path, const char *what, struct saop_err *e)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return saop__fail(e, SAOP_EIO, errno, "%s: %s: %s", what, path,
		    strerror(errno));
	if (!S_ISREG(st.st_mode))
		return 0;	/* /dev/null, a FIFO: nobody's data */
	if (st.st_uid != geteuid())
		return saop__fail(e, SAOP_EIO, 0, "%s: %s belongs to uid %ld, "
		    "not to you (uid %ld): refused", what, path,
		    (long)st.st_uid, (long)geteuid());
	return 0;
}

/*
 * The message for an open() of path that failed with errno why: a
 * symbolic link is named as such.  Returns -SAOP_EIO with e filled.
 */
static int
open_failed(const char *what, const char *path, int why, struct saop_err *e)
{
	if (why == ELOOP)
		return saop__fail(e, SAOP_EIO, why, "%s: %s is a symbolic "
		    "link: refused (it could point anywhere)", what, path);
	return saop__fail(e, SAOP_EIO, why, "%s: cannot open %s: %s", what,
	    path, strerror(why));
}

/*
 * The files SQLite adds beside path (-wal, -shm, -journal), when they
 * exist: no symbolic link, owned by this user.  Returns 0 or -SAOP_EIO.
 */
static int
check_companions(const char *path, struct saop_err *e)
{
	static const char *const ext[] = { "-wal", "-shm", "-journal" };
	struct stat st;
	char name[4096];
	size_t i;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", path, ext[i]);
		if (lstat(name, &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode))
			return open_failed("state database", name, ELOOP, e);
		if (st.st_uid != geteuid())
			return saop__fail(e, SAOP_EIO, 0, "state database: %s "
			    "belongs to uid %ld, not to you (uid %ld): refused",
			    name, (long)st.st_uid, (long)geteuid());
	}
	return 0;
}

/*
 * Sleep for ms milliseconds.  Returns nanosleep()'s 0, or -1 when a signal
 * cut the sleep short.
 */
static int
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	return nanosleep(&ts, NULL);
}

/*
 * 1 when the SQLite result code rc (extended or not) is BUSY or LOCKED:
 * worth another try; else 0.
 */
static int
busy(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/*
 * Run fn inside a transaction on s's database, connecting it first (see
 * saop-private.h).  Returns 0, fn's negative code, or -SAOP_EDB (e filled)
 * when SQLite fails or stays busy for TX_TRIES tries.
 */
int
saop__store_tx(struct saop_store *s, int durable,
    int (*fn)(sqlite3 *db, void *arg, struct saop_err *e), void *arg,
    struct saop_err *e)
{
	int rc, tries;

	if ((rc = saop__store_connect(s, e)) != 0)
		return rc;
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

/*
 * The number at the front of a migration's name, "0003-x.sql" -> 3.
 * Returns it, or 0 when the name has none.
 */
static int
migration_number(const char *name)
{
	return atoi(name);
}

struct migrate_arg {
	const struct saop__blob *m;
};

/*
 * Transaction body for migrate(): apply the migration in arg (a struct
 * migrate_arg) unless user_version says it is applied already, then set
 * user_version to its number.  Returns 0, or -SAOP_EDB with e filled.
 */
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

/*
 * See saop.h.  Returns the schema version (user_version), or -1 when it
 * cannot be read.
 */
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

/*
 * Apply every migration newer than the database's version, each in its own
 * durable transaction.  Returns 0, or the first failure's negative code
 * with e filled.
 */
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

/*
 * Set WAL mode, retrying while another process holds the lock.  Returns 0,
 * or -SAOP_EDB with e filled.
 */
static int
set_wal(struct saop_store *s, struct saop_err *e)
{
	int tries;

	for (tries = 0; tries < TX_TRIES; tries++) {
		int rc = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL", NULL,
		    NULL, NULL);

		if (rc == SQLITE_OK)
			return 0;
		if (!busy(rc))
			break;
		sleep_ms(10 + rand() % 40);
	}
	return saop__fail_db(e, s->db, "setting WAL mode");
}

/*
 * A store for path (NULL: $SAOP_DB, else DEFAULT_DB) that touches nothing
 * yet (see saop.h).  Returns it, or NULL with e filled (SAOP_ENOMEM).
 */
struct saop_store *
saop_store_new(const char *path, struct saop_err *e)
{
	struct saop_store *s;

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
	return s;
}

/*
 * Open s's database if it is not open yet: make its directory (0700) and
 * file (0600), WAL mode, busy timeout, migrations.  A failed attempt leaves
 * s closed, to be tried again on the next need.  Returns 0, or -SAOP_EDB or
 * -SAOP_EIO with e filled.
 */
int
saop__store_connect(struct saop_store *s, struct saop_err *e)
{
	int fd, rc;

	if (s->db != NULL)
		return 0;
	if (make_parent(s->path, e) != 0)
		return -SAOP_EIO;
	/* No symbolic link is followed, nobody else's file is used. */
	if ((rc = check_dir(s->path, e)) != 0)
		return rc;
	/* Create the file ourselves so that it is 0600 from the start. */
	if ((fd = open(s->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1) {
		int why = errno;

		/* A read-only file may still serve reads (--get). */
		if (why == ELOOP || (fd = open(s->path, O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC)) == -1)
			return open_failed("state database", s->path, why, e);
	}
	rc = check_file(fd, s->path, "state database", e);
	close(fd);
	if (rc != 0 || (rc = check_companions(s->path, e)) != 0)
		return rc;
	if (sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW,
	    NULL) != SQLITE_OK) {
		rc = saop__fail(e, SAOP_EDB, 0,
		    "state database: cannot open %s: %s", s->path,
		    s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(s->db, 1);
	if ((rc = set_wal(s, e)) != 0)
		goto fail;
	sqlite3_exec(s->db, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON",
	    NULL, NULL, NULL);
	if ((rc = migrate(s, e)) != 0)
		goto fail;
	return 0;
fail:
	sqlite3_close(s->db);
	s->db = NULL;
	return rc;
}

/*
 * See saop.h: saop_store_new() and a connection made at once.  Returns the
 * store, or NULL with e filled.
 */
struct saop_store *
saop_store_open(const char *path, struct saop_err *e)
{
	struct saop_store *s;

	if ((s = saop_store_new(path, e)) == NULL)
		return NULL;
	if (saop__store_connect(s, e) != 0) {
		saop_store_close(s);
		return NULL;
	}
	return s;
}

/* Close s's database and its --log file, and free s; NULL is a no-op. */
void
saop_store_close(struct saop_store *s)
{
	if (s == NULL)
		return;
	if (s->db != NULL)
		sqlite3_close(s->db);
	if (s->log_owned)
		fclose(s->log);
	free(s->log_path);
	free(s->path);
	free(s);
}

/*
 * See saop.h.  The file is only named here; log_stream() opens it on the
 * first event.  Returns 0, or -SAOP_ENOMEM.
 */
int
saop_store_set_log(struct saop_store *s, const char *path,
    struct saop_err *e)
{
	char *copy = NULL;

	saop_err_clear(e);
	if (path != NULL && strcmp(path, "-") != 0 &&
	    (copy = strdup(path)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
	if (s->log_owned)
		fclose(s->log);
	free(s->log_path);
	s->log = path != NULL && strcmp(path, "-") == 0 ? stderr : NULL;
	s->log_owned = 0;
	s->log_path = copy;
	return 0;
}

/*
 * The --log stream of s, opening its file on first use: appended to,
 * created 0600 like the database (it holds the same data), whatever the
 * umask.  Returns it, NULL when there is no log, or NULL and SAOP_EIO in e
 * (*failed set) when the file cannot be opened.
 */
static FILE *
log_stream(struct saop_store *s, int *failed, struct saop_err *e)
{
	int fd;

	*failed = 0;
	saop_err_clear(e);
	if (s->log != NULL || s->log_path == NULL)
		return s->log;
	/* No symbolic link followed, nobody else's file appended to. */
	if ((fd = open(s->log_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1) {
		open_failed("--log", s->log_path, errno, e);
		*failed = 1;
		return NULL;
	}
	if (check_file(fd, s->log_path, "--log", e) != 0 ||
	    (s->log = fdopen(fd, "a")) == NULL) {
		if (e->code == SAOP_OK)
			saop__fail(e, SAOP_EIO, errno, "--log %s: %s",
			    s->log_path, strerror(errno));
		close(fd);
		*failed = 1;
		return NULL;
	}
	s->log_owned = 1;
	return s->log;
}

/* Keep e as s's first unreported event failure (see saop_store_error()). */
static void
keep_soft(struct saop_store *s, const struct saop_err *e)
{
	if (s->has_soft)
		return;
	s->soft = *e;
	s->has_soft = 1;
}

/*
 * See saop.h.  Returns 1 with the first kept event failure in e (then
 * forgotten), or 0 with e cleared.
 */
int
saop_store_error(struct saop_store *s, struct saop_err *e)
{
	saop_err_clear(e);
	if (s == NULL || !s->has_soft)
		return 0;
	*e = s->soft;
	s->has_soft = 0;
	return 1;
}

struct event_arg {
	const char *time, *task_id, *event;
	long turn;
	const char *data;
};

/*
 * Transaction body for saop_event(): insert the row arg (a struct
 * event_arg) describes into events.  Returns 0, or -SAOP_EDB with e filled.
 */
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

/*
 * Record an event (see saop.h): a row in events and, with --log, a line in
 * the log file.  A failure of either is kept for saop_store_error(), never
 * returned.  Returns 0.
 */
int
saop_event(struct saop_store *s, const char *task_id, long turn,
    const char *event, const json_t *data, struct saop_err *e)
{
	struct event_arg a;
	struct saop_err fail;
	char now[32], *text;
	json_t *line;
	FILE *log;
	int bad;

	saop_err_clear(e);
	saop_now_iso8601(now);
	text = data ? json_dumps(data, JSON_COMPACT) : strdup("{}");
	if (text == NULL) {
		saop__fail(&fail, SAOP_ENOMEM, errno, "event %s: out of memory",
		    event);
		keep_soft(s, &fail);
		return 0;
	}
	a.time = now;
	a.task_id = task_id;
	a.turn = turn;
	a.event = event;
	a.data = text;
	if (saop__store_tx(s, 0, insert_event, &a, &fail) != 0)
		keep_soft(s, &fail);
	free(text);
	/* The log line is written whether or not the row could be. */
	if ((log = log_stream(s, &bad, &fail)) == NULL) {
		if (bad)
			keep_soft(s, &fail);
		return 0;
	}
	line = json_pack("{s:s, s:s?, s:s}", "time", now, "task_id", task_id,
	    "event", event);
	if (line == NULL) {
		saop__fail(&fail, SAOP_ENOMEM, 0, "event %s: out of memory",
		    event);
		keep_soft(s, &fail);
		return 0;
	}
	if (turn >= 0)
		json_object_set_new(line, "turn", json_integer(turn));
	json_object_set_new(line, "data", data ? json_deep_copy(data) :
	    json_object());
	if (json_dumpf(line, log, JSON_COMPACT) != 0 ||
	    putc('\n', log) == EOF || fflush(log) != 0) {
		saop__fail(&fail, SAOP_EIO, errno, "--log: write error: %s",
		    strerror(errno));
		keep_soft(s, &fail);
		clearerr(log);
	}
	json_decref(line);
	return 0;
}

struct status_arg {
	const char *task_id, *status, *reason, *now;
};

/*
 * Transaction body for saop_task_set_status(): insert or update the tasks
 * row arg (a struct status_arg) describes.  Returns 0, or -SAOP_EDB with e
 * filled.
 */
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

/* The words of enum saop_task_status, in its order. */
static const char *const task_status_names[] = {
	"IN_PROGRESS", "PAUSED_FOR_INTERVENTION", "USER_ESCALATION", "DONE"
};

/* See saop.h.  Returns the word of st, or NULL when it is unknown. */
const char *
saop_task_status_name(enum saop_task_status st)
{
	if ((unsigned)st >= sizeof(task_status_names) /
	    sizeof(task_status_names[0]))
		return NULL;
	return task_status_names[st];
}

/*
 * See saop.h.  Returns 0, or a negative code with e filled
 * (saop__store_tx()).
 */
int
saop_task_set_status(struct saop_store *s, const char *task_id,
    enum saop_task_status status, const char *reason, struct saop_err *e)
{
	struct status_arg a;
	char now[32];

	if ((a.status = saop_task_status_name(status)) == NULL)
		return saop__fail(e, SAOP_EINTERNAL, 0,
		    "task status %d is not one", (int)status);
	saop_now_iso8601(now);
	a.task_id = task_id;
	a.reason = reason;
	a.now = now;
	return saop__store_tx(s, 0, upsert_status, &a, e);
}
