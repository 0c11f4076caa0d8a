/*
 * store.c: the state database (a SQLite file or PostgreSQL, through
 * lib/db.h): connect lazily, migrate, transactions, tasks and events.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "db.h"

#define TX_TRIES	50

struct saop_store {
	struct saop__db *db;	/* NULL until first needed (saop_store_new()) */
	char *path;		/* a file, or a postgres:// URI */
	char *shown;		/* path as messages show it: password masked */
	char *log_path;		/* --log: opened on the first event */
	FILE *log;
	int log_owned;
	/* The first failure to write an event (a log) since it was last
	 * taken with saop_store_error(): kept, never returned. */
	struct saop_err soft;
	int has_soft;
};

/*
 * s's connection, connecting it first (see db.h).  Returns 0 with *db
 * borrowed (valid until saop_store_close() or a lost connection), or a
 * negative code with e filled.
 */
int
saop__store_conn(struct saop_store *s, struct saop__db **db,
    struct saop_err *e)
{
	int rc;

	*db = NULL;
	if ((rc = saop__store_connect(s, e)) != 0)
		return rc;
	*db = s->db;
	return 0;
}

/*
 * See saop.h.  Returns the database s was made for, as it may be shown
 * (a URI's password masked; borrowed: valid until saop_store_close()).
 */
const char *
saop_store_path(const struct saop_store *s)
{
	return s->shown;
}

/* See db.h.  Returns the path or URI s was made for, as given. */
const char *
saop__store_target(const struct saop_store *s)
{
	return s->path;
}

/* See saop.h.  Returns 1 for a postgres:// URI, else 0. */
int
saop_store_is_server(const char *target)
{
	return saop__db_is_pg(target);
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
 * Check, as ssh does for its files, the directory that holds path (".":
 * none named): not a symbolic link, owned by this user (or root), not
 * writable by every user.  Another user's directory, or one anybody can
 * write to, could hold a planted database or a symbolic link to any file
 * of ours.  Returns 0, or -SAOP_EIO with e filled.
 */
int
saop__store_check_dir(const char *path, struct saop_err *e)
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
int
saop__store_open_failed(const char *what, const char *path, int why,
    struct saop_err *e)
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
int
saop__store_check_companions(const char *path, struct saop_err *e)
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
			return saop__store_open_failed("state database", name,
			    ELOOP, e);
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
 * After a failure on s's connection: when the connection is gone, close
 * it, so that the next use connects again.
 */
static void
drop_if_lost(struct saop_store *s)
{
	if (s->db != NULL && s->db->be->lost(s->db)) {
		saop__db_close(s->db);
		s->db = NULL;
	}
}

/*
 * Run fn inside a transaction on s's database, connecting it first (see
 * db.h).  Returns 0, fn's negative code, or -SAOP_EDB (e filled) when the
 * database fails or stays busy for TX_TRIES tries.
 */
int
saop__store_tx(struct saop_store *s, int durable,
    int (*fn)(struct saop__db *db, void *arg, struct saop_err *e), void *arg,
    struct saop_err *e)
{
	struct saop__db *db;
	int rc, tries;

	if ((rc = saop__store_connect(s, e)) != 0)
		return rc;
	db = s->db;
	if (durable)
		db->be->durable(db, 1);
	for (tries = 0; tries < TX_TRIES; tries++) {
		if ((rc = db->be->begin(db, e)) != 0) {
			if (db->be->retry(db)) {
				sleep_ms(10 + rand() % 40);
				continue;
			}
			goto out;
		}
		saop_err_clear(e);
		if ((rc = fn(db, arg, e)) != 0) {
			int again = e && e->code == SAOP_EDB &&
			    db->be->retry(db);

			db->be->rollback(db);
			if (again) {
				sleep_ms(10 + rand() % 40);
				continue;
			}
			goto out;
		}
		if ((rc = db->be->commit(db, e)) == 0)
			goto out;
		db->be->rollback(db);
		if (db->be->retry(db)) {
			sleep_ms(10 + rand() % 40);
			continue;
		}
		goto out;
	}
	rc = saop__fail(e, SAOP_EDB, 0,
	    "state database: still busy after %d tries", TX_TRIES);
out:
	if (durable && !db->be->lost(db))
		db->be->durable(db, 0);
	if (rc != 0)
		drop_if_lost(s);
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

/*
 * Transaction body for migrate(): apply the migration arg (a struct
 * saop__blob) unless the version says it is applied already, then record
 * its number.  Returns 0, or -SAOP_EDB with e filled.
 */
static int
apply_one(struct saop__db *db, void *arg, struct saop_err *e)
{
	const struct saop__blob *m = arg;
	int have, rc;

	/* Read the version inside the transaction: another process may
	 * have applied this step while we waited for the lock. */
	if ((have = db->be->version(db, e)) < 0)
		return have;
	if (have >= migration_number(m->name))
		return 0;
	if ((rc = db->be->script(db, m->text, e)) != 0) {
		char msg[sizeof(e->msg)];

		if (e == NULL)
			return rc;
		snprintf(msg, sizeof(msg), "%s", e->msg);
		return saop__fail(e, SAOP_EDB, 0, "%s (%s)", msg, m->name);
	}
	return db->be->set_version(db, migration_number(m->name), m->name, e);
}

/*
 * See saop.h.  Returns the schema version, or -1 when it cannot be read
 * (or s is not connected).
 */
int
saop_store_version(struct saop_store *s)
{
	int v;

	if (s->db == NULL)
		return -1;
	v = s->db->be->version(s->db, NULL);
	return v < 0 ? -1 : v;
}

/*
 * Apply every migration of the dialect newer than the database's
 * version, each in its own durable transaction, holding the schema lock
 * (PostgreSQL: an advisory lock) while any is missing.  Returns 0, or the
 * first failure's negative code with e filled.
 */
static int
migrate(struct saop_store *s, struct saop_err *e)
{
	const struct saop__blob *m, *list = saop__db_migrations(s->db);
	int have, last = 0, rc = 0;

	for (m = list; m->name != NULL; m++)
		last = migration_number(m->name);
	if ((have = s->db->be->version(s->db, e)) < 0)
		return have;
	if (have > last)
		return saop__fail(e, SAOP_EDB, 0, "%s was made by a newer saop "
		    "(schema version %d; this saop knows up to %d): upgrade "
		    "saop, or give another state database with --db or "
		    "SAOP_DB", s->shown, have, last);
	if (have == last)
		return 0;
	if ((rc = s->db->be->lock_schema(s->db, e)) != 0)
		return rc;
	for (m = list; m->name != NULL && rc == 0; m++)
		if (migration_number(m->name) > have)
			rc = saop__store_tx(s, 1, apply_one, (void *)m, e);
	if (s->db != NULL)
		s->db->be->unlock_schema(s->db);
	return rc;
}

/*
 * A store for path (NULL: saop_config_db()'s rule) that touches nothing
 * yet (see saop.h).  Returns it, or NULL with e filled (SAOP_ENOMEM).
 */
struct saop_store *
saop_store_new(const char *path, struct saop_err *e)
{
	struct saop_store *s;

	saop_err_clear(e);
	path = saop_config_db(path);
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->path = strdup(path)) == NULL ||
	    (s->shown = saop__db_shown(path)) == NULL) {
		if (s != NULL)
			free(s->path);
		free(s);
		saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
		return NULL;
	}
	return s;
}

struct copy_tx {
	struct saop__db *from;
	long long rows;
};

/* Transaction body of saop_store_copy() on the destination db.  Returns
 * 0, or a negative code with e filled. */
static int
copy_tx(struct saop__db *db, void *arg, struct saop_err *e)
{
	struct copy_tx *c = arg;

	c->rows = saop__db_copy(c->from, db, e);
	return c->rows < 0 ? (int)c->rows : 0;
}

/* See saop.h.  Returns the rows copied, or a negative code with e filled. */
long long
saop_store_copy(struct saop_store *from, struct saop_store *to,
    struct saop_err *e)
{
	struct copy_tx c = { NULL, 0 };
	int rc;

	saop_err_clear(e);
	if ((rc = saop__store_conn(from, &c.from, e)) != 0)
		return rc;
	if ((rc = saop__store_tx(to, 1, copy_tx, &c, e)) != 0)
		return rc;
	return c.rows;
}

/*
 * Connect s's database if it is not connected yet (a file: its directory
 * 0700 and the file 0600 made; see lib/db-sqlite.c and lib/db-pg.c), and
 * apply the migrations.  A failed attempt leaves s unconnected, to be
 * tried again on the next need.  Returns 0, or -SAOP_EDB or -SAOP_EIO
 * with e filled.
 */
int
saop__store_connect(struct saop_store *s, struct saop_err *e)
{
	int rc;

	if (s->db != NULL)
		return 0;
	if ((rc = saop__db_open(s->path, &s->db, e)) != 0)
		return rc;
	if ((rc = migrate(s, e)) != 0) {
		saop__db_close(s->db);
		s->db = NULL;
	}
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
	saop__db_close(s->db);
	if (s->log_owned)
		fclose(s->log);
	free(s->log_path);
	free(s->shown);
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
		saop__store_open_failed("--log", s->log_path, errno, e);
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
insert_event(struct saop__db *db, void *arg, struct saop_err *e)
{
	const struct event_arg *a = arg;

	return saop__db_event_add(db, a->time, a->task_id, a->turn, a->event,
	    a->data, e);
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
upsert_status(struct saop__db *db, void *arg, struct saop_err *e)
{
	const struct status_arg *a = arg;

	return saop__db_task_status(db, a->task_id, a->status, a->reason,
	    a->now, e);
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
