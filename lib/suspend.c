/*
 * suspend.c: graceful suspension: one policy for every model call that
 * can meet a lost network.  The turn is saved before each call, a loss
 * pauses the task, a connectivity monitor waits for the endpoint, and
 * the turn resumes from what had been received.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "db.h"

/* 429s waited out per turn before the turn is suspended instead. */
#define RATE_WAITS_MAX	10
/* The longest Retry-After honoured in one wait (ms). */
#define RATE_WAIT_MAX_MS	(10L * 60 * 1000)

/* The class of the failure e, by its code and HTTP status (see saop.h). */
enum saop_suspend_class
saop_suspend_classify(const struct saop_err *e)
{
	switch (e->code) {
	case SAOP_ENETWORK:
		return SAOP_SUSPEND_LOST;
	case SAOP_ERATELIMIT:
		/* A 429 is waited out; a 503 or 529 is a loss. */
		return e->http_status == 429 ? SAOP_SUSPEND_WAIT :
		    SAOP_SUSPEND_LOST;
	case SAOP_EREFUSED:
	case SAOP_EBADREQ:
	case SAOP_EPREFILL:
	case SAOP_EPROTO:
	case SAOP_ECONFIG:
		return SAOP_SUSPEND_REFUSE;
	default:
		return SAOP_SUSPEND_NONE;
	}
}

/* ---- Turn states in agent_turn_states: one row per turn, claimed ---- */

/*
 * Who this process is, for claims: host name, pid, and the process's
 * start ("<boot id>:<start ticks>"), so that a reused pid is not taken
 * for the claimer.  Refreshed after a fork.
 */
struct whoami {
	char host[256];
	long pid;
	char start[96];
};
static struct whoami self;

/*
 * Read the first line of path into buf (n bytes), without its LF.
 * Returns 0, or -1 when it cannot be read.
 */
static int
read_line_of(const char *path, char *buf, size_t n)
{
	FILE *f;
	int ok;

	if ((f = fopen(path, "re")) == NULL)
		return -1;
	ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * The start of process pid as "<boot id>:<start ticks>" (field 22 of
 * /proc/PID/stat) in buf.  Returns 0, or -1 when it cannot be read (no
 * such process, no /proc).
 */
static int
proc_start(long pid, char *buf, size_t n)
{
	char path[64], stat[1024], boot[64];
	const char *p;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (read_line_of(path, stat, sizeof(stat)) != 0)
		return -1;
	if (read_line_of("/proc/sys/kernel/random/boot_id", boot,
	    sizeof(boot)) != 0)
		boot[0] = '\0';
	/* The command name (field 2) may hold spaces: count after it. */
	if ((p = strrchr(stat, ')')) == NULL)
		return -1;
	for (field = 2; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL)
		return -1;
	snprintf(buf, n, "%s:%.*s", boot, (int)strcspn(p + 1, " "), p + 1);
	return 0;
}

/* This process's identity (see struct whoami).  Returns it, borrowed. */
static const struct whoami *
whoami(void)
{
	if (self.pid == (long)getpid())
		return &self;
	if (gethostname(self.host, sizeof(self.host)) != 0)
		snprintf(self.host, sizeof(self.host), "localhost");
	self.host[sizeof(self.host) - 1] = '\0';
	self.pid = (long)getpid();
	if (proc_start(self.pid, self.start, sizeof(self.start)) != 0)
		snprintf(self.start, sizeof(self.start), "t%lld",
		    (long long)time(NULL));
	return &self;
}

/* Milliseconds since the epoch (UTC). */
static long long
epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A claim as stored: host NULL when the row is free. */
struct claim {
	const char *host;
	long pid;
	const char *start;
	long long until;
};

/* 1 when c is this process's claim, else 0. */
static int
claim_mine(const struct claim *c)
{
	const struct whoami *w = whoami();

	return c->host != NULL && c->start != NULL && c->pid == w->pid &&
	    strcmp(c->host, w->host) == 0 && strcmp(c->start, w->start) == 0;
}

/*
 * 1 when claim c holds its row against this process at time now: set,
 * not this process's, its lease not run out, and (on this host) its
 * process still the one that claimed; else 0.
 */
static int
claim_live(const struct claim *c, long long now)
{
	char start[96];

	if (c->host == NULL || claim_mine(c) || c->until < now)
		return 0;
	if (strcmp(c->host, whoami()->host) != 0)
		return 1;	/* another host: only its lease tells */
	if (c->pid <= 0 || (kill((pid_t)c->pid, 0) != 0 && errno == ESRCH))
		return 0;	/* gone */
	if (c->start != NULL && proc_start(c->pid, start, sizeof(start)) ==
	    0 && strcmp(start, c->start) != 0)
		return 0;	/* the pid is another process's now */
	return 1;
}

/*
 * The lease renewer: a thread with its own connection (see saop.h),
 * started by the first claim and stopped by saop_turn_claims_end().
 * Everything here is guarded by renew_mu; the thread waits on renew_cv
 * (CLOCK_MONOTONIC), so that a stop wakes it at once.
 */
static pthread_mutex_t renew_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t renew_cv;
static int renew_cv_made;	/* renew_cv initialised */
static long renew_pid;		/* the process whose thread runs */
static char *renew_path;	/* its database */
static pthread_t renew_th;	/* the thread, joined at the end */
static int renew_stop;		/* 1: the thread is to end */

/* This process's claim, its lease ending a lease from now. */
static struct saop__db_claim
my_claim(void)
{
	const struct whoami *w = whoami();
	struct saop__db_claim c;

	c.host = w->host;
	c.pid = w->pid;
	c.start = w->start;
	c.until = epoch_ms() + saop__config_lease_ms();
	return c;
}

/*
 * The renewer's wait: ms milliseconds, or less when it is told to stop.
 * Returns 1 when it is to stop, else 0.
 */
static int
renew_wait(long long ms)
{
	struct timespec until;
	int stop;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&renew_mu);
	while (!renew_stop &&
	    pthread_cond_timedwait(&renew_cv, &renew_mu, &until) == 0)
		;
	stop = renew_stop;
	pthread_mutex_unlock(&renew_mu);
	return stop;
}

/*
 * The renewer's body: every third of the lease, push the end of every
 * lease this process holds, on a connection of its own (lib/db.h),
 * opened again when it is lost.  Ends when saop_turn_claims_end() says
 * so, after the statement it is in, its connection closed.  Returns NULL.
 */
static void *
renew_main(void *arg)
{
	struct saop__db *db = NULL;
	long long lease = saop__config_lease_ms();

	(void)arg;
	/* Connected at once: the first renewal pays no connection. */
	if (saop__db_open(renew_path, &db, NULL) != 0)
		db = NULL;
	while (!renew_wait(lease / 3)) {
		struct saop__db_claim c;

		/* A miss (busy, a lost connection): the next round tries
		 * again, on a new connection when this one is gone. */
		if (db == NULL && saop__db_open(renew_path, &db, NULL) != 0)
			db = NULL;
		if (db == NULL)
			continue;
		c = my_claim();
		if (saop__db_turn_renew(db, &c, NULL) != 0 &&
		    db->be->lost(db)) {
			saop__db_close(db);
			db = NULL;
		}
	}
	if (db != NULL)
		saop__db_close(db);
	return NULL;
}

/*
 * Start the lease renewer of this process on s's database, once (again
 * after a fork, or after saop_turn_claims_end()).  Signals stay with the
 * other threads.  Returns 0, or -1 when the thread cannot be made (the
 * claims then live one lease).
 */
static int
renew_start(struct saop_store *s)
{
	const struct whoami *w = whoami();
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc = 0;

	pthread_mutex_lock(&renew_mu);
	if (!renew_cv_made) {
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		renew_cv_made = pthread_cond_init(&renew_cv, &ca) == 0;
		pthread_condattr_destroy(&ca);
	}
	if (renew_pid != w->pid && renew_cv_made) {
		free(renew_path);
		if ((renew_path = strdup(saop__store_target(s))) == NULL)
			rc = -1;
		renew_stop = 0;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (rc == 0 && pthread_create(&renew_th, NULL, renew_main,
		    NULL) == 0)
			renew_pid = w->pid;
		else
			rc = -1;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	pthread_mutex_unlock(&renew_mu);
	return rc;
}

/*
 * See saop.h: stop this process's renewer, if it runs, and wait for it.
 * Returns nothing.
 */
void
saop_turn_claims_end(void)
{
	pthread_t th;
	int mine;

	pthread_mutex_lock(&renew_mu);
	mine = renew_pid != 0 && renew_pid == (long)getpid();
	if (mine) {
		renew_stop = 1;
		pthread_cond_broadcast(&renew_cv);
		renew_pid = 0;
	}
	th = renew_th;
	pthread_mutex_unlock(&renew_mu);
	if (mine)
		pthread_join(th, NULL);
}

/* "task T turn N (stage)" of k in buf.  Returns buf. */
static const char *
key_name(const struct saop_turn_key *k, char *buf, size_t n)
{
	snprintf(buf, n, "task %.200s turn %ld (%s)", k->task_id, k->turn,
	    k->stage);
	return buf;
}

/* What a transaction on one row reads and says. */
struct row_arg {
	const struct saop_turn_key *k;
	const char *text;	/* save: the state's text */
	const char *now;	/* save: saved_at */
	int claim;		/* save: 1 claimed by this process */
	int found;		/* claim, delete: the row was there */
	char *got;		/* claim: the row's text (malloc) */
};

/* What may_take() reads of a row. */
struct take {
	int found;
	struct claim c;
	char *got;		/* the row's turn_state_json (malloc), wanted */
	int want_text;
	char *host, *start;	/* the claim's strings (malloc) */
};

/* saop__db_turn_read() callback: keep the row's claim (and text) in the
 * struct take arg.  Returns 0, or -SAOP_ENOMEM. */
static int
take_row(void *arg, const struct saop__db_row *r)
{
	struct take *t = arg;
	const char *host = saop__db_col_text(r, 0);
	const char *start = saop__db_col_text(r, 2);
	const char *text = saop__db_col_text(r, 4);

	t->found = 1;
	if ((host != NULL && (t->host = strdup(host)) == NULL) ||
	    (start != NULL && (t->start = strdup(start)) == NULL) ||
	    (t->want_text && (t->got = strdup(text != NULL ? text : "")) ==
	    NULL))
		return -SAOP_ENOMEM;
	t->c.host = t->host;
	t->c.pid = (long)saop__db_col_int(r, 1);
	t->c.start = t->start;
	t->c.until = saop__db_col_int(r, 3);
	return 0;
}

/*
 * Inside a transaction: read k's claim and say whether this process may
 * take the row (*found: there is a row).  Returns 0 when it may (or
 * there is none), -SAOP_EBUSY naming the live holder, or -SAOP_EDB.
 * With got, the row's turn_state_json is copied there (malloc).
 */
static int
may_take(struct saop__db *db, const struct saop_turn_key *k, int *found,
    char **got, struct saop_err *e)
{
	struct take t;
	int rc;

	memset(&t, 0, sizeof(t));
	t.want_text = got != NULL;
	rc = saop__db_turn_read(db, k, take_row, &t, e);
	*found = t.found;
	if (rc == -SAOP_ENOMEM)
		rc = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	else if (rc == 0 && t.found && claim_live(&t.c, epoch_ms())) {
		char name[300];

		rc = saop__fail(e, SAOP_EBUSY, 0, "%s is being worked on by "
		    "pid %ld on %.100s (claimed until %lld)", key_name(k, name,
		    sizeof(name)), t.c.pid, t.c.host, t.c.until);
	}
	if (rc == 0 && got != NULL)
		*got = t.got;
	else
		free(t.got);
	free(t.host);
	free(t.start);
	return rc;
}

/*
 * Transaction body of saop_turn_state_save(): upsert the row unless a
 * live claim of another process holds it.  Returns 0, -SAOP_EBUSY or
 * -SAOP_EDB.
 */
static int
save_tx(struct saop__db *db, void *arg, struct saop_err *e)
{
	struct row_arg *a = arg;
	struct saop__db_claim c = my_claim();
	int rc;

	if ((rc = may_take(db, a->k, &a->found, NULL, e)) != 0)
		return rc;
	return saop__db_turn_save(db, a->k, a->text, a->now,
	    a->claim ? &c : NULL, e);
}

/*
 * Save k's turn state (see saop.h), durably, in the verbatim form.
 * Returns 0, or SAOP_EBUSY / SAOP_EDB / SAOP_ENOMEM with e filled.
 */
int
saop_turn_state_save(struct saop_store *s, const struct saop_turn_key *k,
    const json_t *state, int claim, struct saop_err *e)
{
	struct row_arg a;
	char now[32];
	char *text;
	size_t len;
	int rc;

	if ((text = saop__record_text(state, &len, e)) == NULL)
		return -e->code;
	saop_now_iso8601(now);
	memset(&a, 0, sizeof(a));
	a.k = k;
	a.text = text;
	a.now = now;
	a.claim = claim;
	rc = saop__store_tx(s, 1, save_tx, &a, e);
	free(text);
	if (rc == 0 && claim)
		renew_start(s);
	return rc;
}

/*
 * Transaction body of saop_turn_state_claim(): read the row and, when
 * this process may take it, claim it.  Returns 0 (a->found, a->got),
 * -SAOP_EBUSY, or -SAOP_EDB.
 */
static int
claim_tx(struct saop__db *db, void *arg, struct saop_err *e)
{
	struct row_arg *a = arg;
	struct saop__db_claim c = my_claim();
	int rc;

	free(a->got);
	a->got = NULL;
	if ((rc = may_take(db, a->k, &a->found, &a->got, e)) != 0 ||
	    !a->found)
		return rc;
	return saop__db_turn_claim(db, a->k, &c, e);
}

/*
 * Parse a saved state's text (len bytes) for k into *state (new), naming
 * k in the error.  Returns 1, or -SAOP_EDATA / -SAOP_ENOMEM.
 */
static int
state_parse(const struct saop_turn_key *k, const char *text, size_t len,
    json_t **state, struct saop_err *e)
{
	int rc;

	if ((rc = saop__record_parse(text, len, state, e)) == 1 &&
	    !json_is_object(json_object_get(*state, "record"))) {
		json_decref(*state);
		*state = NULL;
		rc = saop__fail(e, SAOP_EDATA, 0, "the saved state holds no "
		    "record object");
	}
	if (rc < 0 && e->code == SAOP_EDATA) {
		char msg[sizeof(e->msg)], name[300];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		saop__fail(e, SAOP_EDATA, 0, "state database: the saved turn "
		    "of %s cannot be read (byte %lld): %s", key_name(k, name,
		    sizeof(name)), e->offset, msg);
		e->has_offset = 0;
	}
	return rc;
}

/*
 * Claim k's saved turn (see saop.h).  Returns 1 with *state, 0 when gone,
 * or a negative code with e filled.
 */
int
saop_turn_state_claim(struct saop_store *s, const struct saop_turn_key *k,
    json_t **state, struct saop_err *e)
{
	struct row_arg a;
	int rc;

	*state = NULL;
	memset(&a, 0, sizeof(a));
	a.k = k;
	if ((rc = saop__store_tx(s, 1, claim_tx, &a, e)) != 0 || !a.found) {
		free(a.got);
		return rc;
	}
	renew_start(s);
	rc = state_parse(k, a.got, strlen(a.got), state, e);
	free(a.got);
	if (rc < 0) {
		struct saop_err ignored;

		/* Unreadable: not ours to keep; the row stays as it is. */
		saop_turn_state_release(s, k, &ignored);
		return rc;
	}
	return 1;
}

/* Transaction body of saop_turn_state_release(): drop this process's
 * claim on a->k's row (a->found: it had one).  Returns 0 or a code. */
static int
release_tx(struct saop__db *db, void *arg, struct saop_err *e)
{
	struct row_arg *a = arg;
	struct saop__db_claim c = my_claim();
	long long n = 0;
	int rc;

	rc = saop__db_turn_release(db, a->k, &c, &n, e);
	a->found = n > 0;
	return rc;
}

/* Drop this process's claim on k's row (see saop.h).  0 or a code. */
int
saop_turn_state_release(struct saop_store *s, const struct saop_turn_key *k,
    struct saop_err *e)
{
	struct row_arg a;

	memset(&a, 0, sizeof(a));
	a.k = k;
	return saop__store_tx(s, 0, release_tx, &a, e);
}

/*
 * Transaction body of saop_turn_state_delete(): delete k's row unless a
 * live claim of another process holds it.  Returns 0 or a code.
 */
static int
delete_tx(struct saop__db *db, void *arg, struct saop_err *e)
{
	struct row_arg *a = arg;
	long long n = 0;
	int rc;

	if ((rc = may_take(db, a->k, &a->found, NULL, e)) == -SAOP_EBUSY) {
		a->found = 0;	/* another's: left to it */
		saop_err_clear(e);
		return 0;
	}
	if (rc != 0 || !a->found)
		return rc;
	rc = saop__db_turn_delete(db, a->k, &n, e);
	a->found = n > 0;
	return rc;
}

/*
 * Delete k's saved turn (see saop.h): not durable (a power cut may bring
 * it back: a turn repeated, never one lost).  1 deleted, 0 none, or a
 * negative code.
 */
int
saop_turn_state_delete(struct saop_store *s, const struct saop_turn_key *k,
    struct saop_err *e)
{
	struct row_arg a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.k = k;
	if ((rc = saop__store_tx(s, 0, delete_tx, &a, e)) != 0)
		return rc;
	return a.found;
}

/* Transaction body of saop_turn_state_clear(): a->text the task, the
 * rows deleted in a->found. */
static int
clear_tx(struct saop__db *db, void *arg, struct saop_err *e)
{
	struct row_arg *a = arg;
	long long n = 0;
	int rc;

	rc = saop__db_turn_clear(db, a->text, &n, e);
	a->found = (int)n;
	return rc;
}

/* Delete every saved turn of task_id.  Returns how many, or a code. */
int
saop_turn_state_clear(struct saop_store *s, const char *task_id,
    struct saop_err *e)
{
	struct row_arg a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.text = task_id;
	if ((rc = saop__store_tx(s, 1, clear_tx, &a, e)) != 0)
		return rc;
	return a.found;
}

/* What each_row() hands each saved turn to. */
struct each_arg {
	int (*each)(void *arg, const struct saop_turn_row *row);
	void *arg;
	long long now;
	struct saop_err *e;
};

/*
 * saop__db_turn_each() callback: one saved turn to the caller's each, its
 * state parsed (or its error named).  Returns what each returned, or
 * -SAOP_ENOMEM.
 */
static int
each_row(void *arg, const struct saop__db_row *r)
{
	struct each_arg *a = arg;
	struct saop_turn_row row;
	struct saop_err pe;
	struct claim c;
	const char *text = saop__db_col_text(r, 3);
	int rc;

	memset(&row, 0, sizeof(row));
	row.key.task_id = saop__db_col_text(r, 0);
	row.key.turn = (long)saop__db_col_int(r, 1);
	row.key.stage = saop__db_col_text(r, 2);
	row.saved_at = saop__db_col_text(r, 4);
	if (row.key.task_id == NULL)
		row.key.task_id = "";
	if (row.key.stage == NULL)
		row.key.stage = "";
	if (row.saved_at == NULL)
		row.saved_at = "";
	c.host = row.claim_host = saop__db_col_text(r, 5);
	c.pid = row.claim_pid = (long)saop__db_col_int(r, 6);
	c.start = saop__db_col_text(r, 7);
	c.until = row.claim_until = saop__db_col_int(r, 8);
	row.claim_mine = claim_mine(&c);
	row.claim_live = claim_live(&c, a->now);
	saop_err_clear(&pe);
	if (text == NULL || state_parse(&row.key, text, strlen(text),
	    &row.state, &pe) < 0) {
		if (pe.code == SAOP_ENOMEM)
			return saop__fail(a->e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		row.error = text == NULL ? "the saved turn is empty" : pe.msg;
	}
	rc = a->each(a->arg, &row);
	json_decref(row.state);
	return rc;
}

/*
 * Call each for every saved turn (or task_id's), oldest first (see
 * saop.h); a row that cannot be read comes with its error.  Returns
 * what each returned when not 0, else 0, or SAOP_EDB.
 */
int
saop_turn_state_each(struct saop_store *s, const char *task_id,
    int (*each)(void *arg, const struct saop_turn_row *row), void *arg,
    struct saop_err *e)
{
	struct each_arg a;
	struct saop__db *db;
	int rc;

	saop_err_clear(e);
	a.each = each;
	a.arg = arg;
	a.now = epoch_ms();
	a.e = e;
	if ((rc = saop__store_conn(s, &db, e)) != 0)
		return rc;
	return saop__db_turn_each(db, task_id, each_row, &a, e);
}

/* saop_turn_state_each() callback of load: keep the row of arg's key. */
struct load_arg {
	const struct saop_turn_key *k;
	json_t *state;
	struct saop_err bad;
	int found;
};

/* Keep the state of the row of a->k (or its error).  Returns 1 at it. */
static int
load_one(void *arg, const struct saop_turn_row *row)
{
	struct load_arg *a = arg;

	if (row->key.turn != a->k->turn || strcmp(row->key.stage,
	    a->k->stage) != 0)
		return 0;
	a->found = 1;
	if (row->state != NULL)
		a->state = json_incref(row->state);
	else
		saop__fail(&a->bad, SAOP_EDATA, 0, "%s", row->error);
	return 1;
}

/*
 * Load k's turn state into *state (new reference).  Returns 1, 0 when
 * there is none, or a negative code.
 */
int
saop_turn_state_load(struct saop_store *s, const struct saop_turn_key *k,
    json_t **state, struct saop_err *e)
{
	struct load_arg a;
	int rc;

	*state = NULL;
	memset(&a, 0, sizeof(a));
	a.k = k;
	if ((rc = saop_turn_state_each(s, k->task_id, load_one, &a, e)) < 0)
		return rc;
	if (a.found && a.state == NULL) {
		*e = a.bad;
		return -SAOP_EDATA;
	}
	*state = a.state;
	return a.found;
}

/*
 * The task of rec as text (see saop.h).  Returns new text, or NULL when
 * there is no task_id.
 */
char *
saop_turn_task(const json_t *rec)
{
	const json_t *t = saop_record_task_id_value(rec);
	struct saop_err e;
	json_t *one;
	char *text, *p;
	size_t len;

	if (t == NULL)
		return NULL;
	if (json_is_string(t) && !saop_record_verbatim(t))
		return strdup(json_string_value(t));
	/* Any other value (verbatim ones too) as its own JSON text. */
	if ((one = json_pack("{s:O}", "t", t)) == NULL)
		return NULL;
	text = saop__record_text(one, &len, &e);
	json_decref(one);
	if (text == NULL || len < 6) {
		free(text);
		return NULL;
	}
	/* {"t":VALUE} -> VALUE */
	p = text + 5;
	memmove(text, p, len - 6);
	text[len - 6] = '\0';
	return text;
}

/* ---- The connectivity monitor ---- */

/* Milliseconds of a monotonic clock. */
static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Sleep ms milliseconds, waking early only when *stop is set.  Returns 1
 * when stopped, else 0.
 */
static int
sleep_ms(long ms, const volatile sig_atomic_t *stop)
{
	long long end = now_ms() + ms;
	long long left;
	struct timespec ts;

	while ((stop == NULL || !*stop) && (left = end - now_ms()) > 0) {
		ts.tv_sec = (time_t)(left / 1000);
		ts.tv_nsec = (long)(left % 1000) * 1000000L;
		nanosleep(&ts, NULL);	/* EINTR: look at *stop again */
	}
	return stop != NULL && *stop;
}

/*
 * Split url's authority into host (without brackets) and port (def when
 * none).  Returns 0, or -1 when url has no host.
 */
static int
url_host_port(const char *url, char *host, size_t hostsz, char *port,
    size_t portsz, const char *def)
{
	const char *p, *end, *at, *hs, *he, *colon;

	p = strstr(url, "://");
	p = p != NULL ? p + 3 : url;
	end = p + strcspn(p, "/?#");
	/* userinfo@ is never part of where to connect */
	for (at = p; at < end && *at != '@'; at++)
		;
	if (at < end)
		p = at + 1;
	if (*p == '[') {
		hs = p + 1;
		if ((he = memchr(hs, ']', (size_t)(end - hs))) == NULL)
			return -1;
		colon = he + 1 < end && he[1] == ':' ? he + 1 : NULL;
	} else {
		hs = p;
		colon = memchr(p, ':', (size_t)(end - p));
		he = colon != NULL ? colon : end;
	}
	if (he == hs || (size_t)(he - hs) >= hostsz)
		return -1;
	memcpy(host, hs, (size_t)(he - hs));
	host[he - hs] = '\0';
	if (colon != NULL && end - colon > 1 &&
	    (size_t)(end - colon - 1) < portsz) {
		memcpy(port, colon + 1, (size_t)(end - colon - 1));
		port[end - colon - 1] = '\0';
	} else
		snprintf(port, portsz, "%s", def);
	return 0;
}

/* 1 when host matches the NO_PROXY list (libcurl's reading), else 0. */
static int
no_proxy_for(const char *host)
{
	const char *list = saop__config_no_proxy(), *p;
	size_t hl = strlen(host), n;

	if (list == NULL)
		return 0;
	for (p = list; *p != '\0'; p += n) {
		p += strspn(p, ", ");
		n = strcspn(p, ", ");
		if (n == 1 && *p == '*')
			return 1;
		if (n > 0 && *p == '.') {
			p++;
			n--;
		}
		if (n > 0 && n <= hl && strncasecmp(host + hl - n, p, n) == 0 &&
		    (n == hl || host[hl - n - 1] == '.'))
			return 1;
	}
	return 0;
}

/*
 * Where a request to base first connects: the proxy libcurl would take
 * from the environment, else base's own host and port.  0 or -1.
 */
static int
connect_target(const char *base, char *host, size_t hostsz, char *port,
    size_t portsz)
{
	const char *proxy;
	int https = strncasecmp(base, "https://", 8) == 0;

	if (url_host_port(base, host, hostsz, port, portsz, https ? "443" :
	    "80") != 0)
		return -1;
	proxy = saop__config_proxy(https);
	/* A proxy URL without a port means libcurl's 1080. */
	if (proxy != NULL && !no_proxy_for(host) &&
	    url_host_port(proxy, host, hostsz, port, portsz, "1080") != 0)
		return -1;
	return 0;
}

/* 1 when a non-blocking connect to ai completes within ms, else 0. */
static int
try_connect(const struct addrinfo *ai, long ms)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, err = 0, ok = 0, fl;

	if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
	    ai->ai_protocol)) < 0)
		return 0;
	if ((fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		close(fd);
		return 0;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		ok = 1;
	else if (errno == EINPROGRESS) {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, (int)ms) == 1 &&
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
		    err == 0)
			ok = 1;
	}
	close(fd);
	return ok;
}

/*
 * Probe the endpoint of base (or the proxy for it) with a TCP connect of
 * at most timeout_ms.  Returns 1 when it answers, else 0.
 */
int
saop_suspend_probe(const char *base, long timeout_ms)
{
	struct addrinfo hints, *res, *ai;
	char host[256], port[16];
	int ok = 0;

	if (base == NULL || connect_target(base, host, sizeof(host), port,
	    sizeof(port)) != 0)
		return 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return 0;	/* DNS down is the network down */
	for (ai = res; ai != NULL && !ok; ai = ai->ai_next)
		ok = try_connect(ai, timeout_ms);
	freeaddrinfo(res);
	return ok;
}

/* The probe of opts: 1 up, 0 down. */
static int
probe(const struct saop_suspend_opts *o)
{
	if (o->probe != NULL)
		return o->probe(o->probe_arg);
	/* A probe takes at most the poll interval (and at most 3 s). */
	return saop_suspend_probe(o->endpoint, o->poll_ms < 3000 ?
	    o->poll_ms : 3000);
}

/* Where the monitor's lines go (saop_suspend_set_notice()); NULL: nowhere. */
static void (*notice_fn)(const char *line);

/* See saop.h: the program's printer of the monitor's lines. */
void
saop_suspend_set_notice(void (*say)(const char *line))
{
	notice_fn = say;
}

static void say(const char *fmt, ...) SAOP__PRINTF(1, 2);

/* Hand one line of the monitor (printf format) to the program. */
static void
say(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (notice_fn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	notice_fn(line);
}

/* ms as "1.5 s" / "30 min" / "no limit" in buf (n bytes).  Returns buf. */
static const char *
span(long long ms, char *buf, size_t n)
{
	if (ms < 0)
		snprintf(buf, n, "no limit");
	else if (ms < 1000)
		snprintf(buf, n, "%lld ms", ms);
	else if (ms < 120000)
		snprintf(buf, n, "%.1f s", (double)ms / 1000);
	else
		snprintf(buf, n, "%.1f min", (double)ms / 60000);
	return buf;
}

/*
 * 1 once a model call of this process had an answer of the endpoint (an
 * HTTP status, or bytes): a later loss is an outage, not a wrong URL.
 */
static int answered;

/* Note what a call that returned rc (e its error) received. */
static void
note_answer(int rc, const struct saop_err *e, size_t received)
{
	if (rc == 0 || e->http_status != 0 || received > 0)
		__atomic_store_n(&answered, 1, __ATOMIC_RELAXED);
}

/* o's endpoint as it may be shown (credentials masked) in buf. */
static const char *
endpoint_shown(const struct saop_suspend_opts *o, char *buf, size_t n)
{
	char *s = o->endpoint != NULL ? saop__llm_url_redact(o->endpoint) :
	    NULL;

	snprintf(buf, n, "%.200s", s != NULL ? s : "the model endpoint");
	free(s);
	return buf;
}

/* What sets the wait of o's program: --max-wait, else SAOP_MAX_WAIT. */
static const char *
max_wait_name(const struct saop_suspend_opts *o)
{
	return o->stage == NULL || strcmp(o->stage, "saop-suspend") == 0 ?
	    "--max-wait" : "SAOP_MAX_WAIT";
}

/* How a waiting o is cut short or made longer, in buf (n bytes). */
static const char *
way_on(const struct saop_suspend_opts *o, char *buf, size_t n)
{
	snprintf(buf, n, "Ctrl-C saves the turn and stops; --no-wait: no "
	    "waiting, %s: how long", max_wait_name(o));
	return buf;
}

/* What the loss e was, in a few words, in buf. */
static const char *
loss_said(const struct saop_err *e, char *buf, size_t n)
{
	if (e->sys_errno == ETIMEDOUT)
		snprintf(buf, n, "gave no answer within the timeout "
		    "(--timeout, SAOP_TIMEOUT_MS)");
	else if (e->http_status >= 300)
		snprintf(buf, n, "answered HTTP %d", e->http_status);
	else if (e->http_status >= 200)
		snprintf(buf, n, "broke off its answer");
	else
		snprintf(buf, n, "is unreachable");
	return buf;
}

/*
 * Wait until the endpoint answers after the loss e: after first_ms,
 * probe, then probe again every opts->poll_ms, sleeping in between, for
 * at most opts->max_wait_ms in all (-1: no end), saying so at each
 * change.  An endpoint that never answered this process, for a turn
 * never saved before (fresh), is waited for at most
 * opts->first_contact_ms (when > 0): a wrong SAOP_API_BASE costs
 * seconds, not the whole wait.  Returns 1 when it answers; 0 with *limit
 * "max-wait" when the wait ran out, "never-answered" when the shorter
 * wait did, "signal" when *opts->stop was set.
 */
static int
wait_for_network(const struct saop_suspend_opts *o, long first_ms,
    const char *what, const struct saop_err *e, int fresh,
    const char **limit)
{
	long long start = now_ms(), left, max = o->max_wait_ms;
	char a[32], b[32], url[224], how[96], way[96];
	int up = 0, unproven = 0;

	if (fresh && o->first_contact_ms > 0 &&
	    !__atomic_load_n(&answered, __ATOMIC_RELAXED) &&
	    (max < 0 || o->first_contact_ms < max)) {
		max = o->first_contact_ms;
		unproven = 1;
	}
	endpoint_shown(o, url, sizeof(url));
	if (o->waiting != NULL)
		*o->waiting = 1;
	say("%s: endpoint %s %s; waiting for it (a probe every %s, for "
	    "%s%s; %s)", what, url, loss_said(e, how, sizeof(how)),
	    span(o->poll_ms, a, sizeof(a)), span(max, b, sizeof(b)),
	    unproven ? ": it never answered since this run began" : "",
	    way_on(o, way, sizeof(way)));
	if (first_ms > 0 && sleep_ms(first_ms, o->stop))
		goto out;
	while (o->stop == NULL || !*o->stop) {
		if ((up = probe(o)) == 1)
			break;
		left = max < 0 ? o->poll_ms : max - (now_ms() - start);
		if (left <= 0)
			break;
		if (sleep_ms(left < o->poll_ms ? (long)left : o->poll_ms,
		    o->stop))
			break;
	}
out:
	if (o->waiting != NULL)
		*o->waiting = 0;
	if (o->stop != NULL && *o->stop) {
		*limit = "signal";
		say("%s: stopped by a signal after waiting %s for endpoint %s",
		    what, span(now_ms() - start, a, sizeof(a)), url);
		return 0;
	}
	if (!up && unproven) {
		*limit = "never-answered";
		say("%s: endpoint %s never answered since this run began "
		    "(waited %s): is SAOP_API_BASE right? (%s: wait longer "
		    "for one not up yet)", what, url, span(now_ms() - start, a,
		    sizeof(a)), max_wait_name(o));
		return 0;
	}
	if (!up) {
		*limit = "max-wait";
		say("%s: endpoint %s still unreachable after %s: --max-wait "
		    "reached", what, url, span(now_ms() - start, a, sizeof(a)));
		return 0;
	}
	say("%s: endpoint %s reachable again after %s: resuming", what, url,
	    span(now_ms() - start, a, sizeof(a)));
	return 1;
}

/* ---- One turn ---- */

/* Everything one turn carries between its calls. */
struct turn {
	json_t *rec;		/* borrowed: the record */
	char *task;		/* its task as text (saop_turn_task()) */
	const char *task_id;	/* = task */
	long turn;
	struct saop_turn_key key;	/* its row: task, turn, stage */
	char *partial;		/* the answer received so far (malloc) */
	size_t plen;
	json_t *tool_call;	/* {id, name, index} of a tool call in progress */
	json_t *tool_calls;	/* all calls of the answer (OpenAI shape) */
	char *text;		/* the prose received beside a call, or of a
				   cut answer that is not JSON (malloc) */
	size_t tlen;
	json_t *choices;	/* the answer's other choices, or NULL */
	json_t *server_tools;	/* the tools the provider ran, or NULL */
	struct saop_llm_cost cost;	/* the calls' usage */
	/* The same calls apart: the turn's own first call, the others (a
	 * restored turn's all), which are recovery. */
	struct saop_llm_cost answer, recovery;
	int resumes;
	int discarded;		/* partial text not JSON: asked again */
	int dropped;		/* the last answer was not merged: the
				   partial ends where it was cut */
	int fresh;		/* never saved before (not a --resume) */
	/* The continuation's text (shown_of()): what the next request
	 * shows the model of partial, and what its answer is merged onto;
	 * scan: partial scanned, which it borrows from. */
	struct saop__shown shown;
	struct saop_detect_result scan;
};

/* The program calling under o: o->stage, else "saop-suspend". */
static const char *
stage_of(const struct saop_suspend_opts *o)
{
	return o->stage != NULL ? o->stage : "saop-suspend";
}

/*
 * Start t for rec under o: zeroed, its task, turn and row key.  Returns
 * 0, or -1 when rec has no task_id (or out of memory).
 */
static int
turn_init(struct turn *t, json_t *rec, const struct saop_suspend_opts *o)
{
	memset(t, 0, sizeof(*t));
	t->rec = rec;
	if ((t->task = saop_turn_task(rec)) == NULL)
		return -1;
	t->task_id = t->task;
	t->turn = saop_record_turn(rec);
	t->key.task_id = t->task;
	t->key.turn = t->turn;
	t->key.stage = stage_of(o);
	/* A record suspended before comes with its "suspend" member. */
	t->fresh = json_object_get(rec, "suspend") == NULL;
	return 0;
}

/* The state to save for t (new reference), or NULL out of memory. */
static json_t *
turn_state(const struct turn *t, const struct saop_suspend_opts *o)
{
	json_t *rec, *st;

	/* The record without its verdict, its members shared. */
	if ((rec = saop__record_unjudged(t->rec)) == NULL)
		return NULL;
	st = json_pack("{s:o, s:s, s:I, s:s%, s:i}", "record", rec, "stage",
	    stage_of(o), "received",
	    (json_int_t)t->plen, "partial", t->partial != NULL ? t->partial :
	    "", t->plen, "resumes", t->resumes);
	if (st != NULL && t->tool_call != NULL)
		json_object_set(st, "tool_call", t->tool_call);
	if (st != NULL && t->tool_calls != NULL)
		json_object_set(st, "tool_calls", t->tool_calls);
	if (st != NULL && t->tlen > 0)
		json_object_set_new(st, "text", json_stringn(t->text,
		    t->tlen));
	return st;
}

/*
 * Save t's state, claimed by this process when claim is 1.  Returns 0 or
 * the store's code.
 */
static int
save(const struct turn *t, const struct saop_suspend_opts *o, int claim,
    struct saop_err *e)
{
	json_t *st;
	int rc;

	if ((st = turn_state(t, o)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	rc = saop_turn_state_save(o->store, &t->key, st, claim, e);
	json_decref(st);
	return rc;
}

/* Log event name for t with data (stolen; may be NULL). */
static void
event(const struct turn *t, const struct saop_suspend_opts *o,
    const char *name, json_t *data)
{
	struct saop_err ignored;

	saop_event(o->store, t->task_id, t->turn, name, data, &ignored);
	json_decref(data);
}

/*
 * Keep the n bytes of prose s as t's text (replacing what it had).
 * Returns nothing: out of memory the text is not kept.
 */
static void
keep_text(struct turn *t, const char *s, size_t n)
{
	char *c;

	if (n == 0 || (c = malloc(n + 1)) == NULL)
		return;
	memcpy(c, s, n);
	c[n] = '\0';
	free(t->text);
	t->text = c;
	t->tlen = n;
}

/*
 * The text of answer a: the arguments of the call the answer was cut in
 * (a->open_call), else of the first call, when it made calls (and
 * t->tool_call, t->tool_calls and the prose beside them in t->text set),
 * else a->raw.  The other choices and the provider's own tools are kept
 * in t->extra.  Borrowed from a; *len its length.
 */
static const char *
answer_text(struct turn *t, const struct saop_llm_answer *a, size_t *len)
{
	size_t ix = a->open_call > 0 ? a->open_call - 1 : 0;
	json_t *c = json_array_get(a->tool_calls, ix), *fn, *args;

	if (a->choices != NULL || a->server_tools != NULL) {
		json_decref(t->choices);
		json_decref(t->server_tools);
		t->choices = json_incref(a->choices);
		t->server_tools = json_incref(a->server_tools);
	}
	if (c == NULL) {
		*len = a->raw_len;
		return a->raw;
	}
	keep_text(t, a->raw, a->raw_len);
	fn = json_object_get(c, "function");
	args = json_object_get(fn, "arguments");
	if (t->tool_call == NULL)
		t->tool_call = json_pack("{s:O?, s:O?, s:I}", "id",
		    json_object_get(c, "id"), "name",
		    json_object_get(fn, "name"), "index", (json_int_t)ix);
	if (json_array_size(a->tool_calls) > 1) {
		json_decref(t->tool_calls);
		t->tool_calls = json_deep_copy(a->tool_calls);
	}
	*len = json_string_length(args);
	return json_string_value(args) != NULL ? json_string_value(args) : "";
}

/*
 * Set t->shown to the text of t's next call: its partial answer (a tool
 * call's arguments bare, a text by the wrapper rule) up to its resume
 * point, as saop-resume shows it (a cut escape is written again whole by
 * the model, never continued blind: "\\" then a restarted string's
 * quote would read as an escaped quote), in the form o gives (AUTO
 * resolved by the provider).  The request is built from it and the
 * answer merged onto it: one variable, set once before each call.
 * Returns 0 or ENOMEM.
 */
static int
shown_of(struct turn *t, const struct saop_suspend_opts *o,
    struct saop_err *e)
{
	enum saop_resume_form form = o->form;
	int rc;

	saop_detect_result_free(&t->scan);
	memset(&t->shown, 0, sizeof(t->shown));
	rc = t->tool_call != NULL ? saop_detect_buffer(t->partial, t->plen, 0,
	    &t->scan) : saop_detect_text(t->partial, t->plen, 0, &t->scan);
	if (rc != 0) {
		memset(&t->scan, 0, sizeof(t->scan));
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	if (form == SAOP_RESUME_AUTO)
		form = o->provider == SAOP_PROVIDER_ANTHROPIC ?
		    SAOP_RESUME_PREFILL : SAOP_RESUME_USER;
	t->shown.text = t->partial != NULL ? t->partial : "";
	t->shown.len = t->scan.verdict == SAOP_TRUNCATED &&
	    t->scan.resume_index <= t->plen ? (size_t)t->scan.resume_index :
	    t->plen;
	t->shown.token = t->scan.last_valid_token;
	t->shown.json_start = (size_t)t->scan.json_start;
	t->shown.wrapper = t->scan.wrapper;
	t->shown.form = form;
	t->shown.context = SAOP_RESUME_FULL;
	return 0;
}

/*
 * Put text (len bytes) after t's partial answer: the one merge of the
 * resume protocol onto the text the request showed (t->shown,
 * saop__shown_join(): the white space a prefill did not show, the
 * wrapper of a text answer, the likeliest reading; an answer with two
 * readings of two texts, or one that spoils the partial, is dropped),
 * else text itself, scanned as an answer (a wrapped text by the wrapper
 * rule; a number at its end cut when cut says the answer was).  *verdict
 * gets the scan.  0 or ENOMEM.
 */
static int
take(struct turn *t, const char *text, size_t len, int cut, int *verdict,
    struct saop_err *e)
{
	struct saop_detect_result r;
	char *out;
	size_t olen;
	int v, amb;

	if (t->plen == 0) {
		int rc;

		if ((out = malloc(len + 1)) == NULL)
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		memcpy(out, text, len);
		out[len] = '\0';
		olen = len;
		rc = t->tool_call != NULL ? saop_detect_buffer(out, olen, 0,
		    &r) : saop_detect_text(out, olen, 0, &r);
		if (rc == 0 && cut && (rc = saop_detect_mark_cut(&r, out,
		    olen)) < 0)
			saop_detect_result_free(&r);
		if (rc < 0) {
			free(out);
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		}
		v = (int)r.verdict;
		saop_detect_result_free(&r);
	} else {
		if (len == 0) {
			*verdict = SAOP_TRUNCATED;
			return 0;
		}
		v = saop__shown_join(&t->shown, text, len, cut, &out, &olen,
		    NULL, &amb, e);
		if (v < 0)
			return v;
		if (v == SAOP_INVALID || amb) {
			/* A continuation that spoils the partial, or one
			 * read two ways: drop it. */
			free(out);
			*verdict = SAOP_TRUNCATED;
			t->dropped = 1;
			return 0;
		}
	}
	t->dropped = 0;
	free(t->partial);
	t->partial = out;
	t->plen = olen;
	*verdict = v;
	return 0;
}

/*
 * The request for t's next call: rec.request when nothing has come yet,
 * else the continuation of the resume protocol showing t->shown (new
 * reference), or NULL with e.
 */
static json_t *
next_request(struct turn *t, struct saop_err *e)
{
	const json_t *req = saop_record_request(t->rec);

	if (t->plen == 0)
		return json_incref((json_t *)req);
	return saop__shown_request(&t->shown, req, NULL, e);
}

/*
 * Put on rec what t's answer carried beside its raw text: the prose
 * received ("text": beside a tool call, or, with all set, of a cut answer
 * that was not JSON), the other choices ("choices") and the tools the
 * provider ran ("server_tools").  Returns 0, or -1 out of memory.
 */
static int
answer_extras(const struct turn *t, json_t *rec, int all)
{
	int bad = 0;

	if (t->tlen > 0 && (all || t->tool_call != NULL))
		bad |= saop_record_set_text(rec, t->text, t->tlen);
	if (t->choices != NULL)
		bad |= saop_record_set_choices(rec, json_incref(t->choices));
	if (t->server_tools != NULL)
		bad |= saop_record_set_server_tools(rec,
		    json_incref(t->server_tools));
	return bad ? -1 : 0;
}

/*
 * The usage of t's calls on its record: prompt_tokens and completion_tokens
 * summed over the calls (each count only when a provider reported it) and
 * their cost (USD, null when a call is not priced), nothing when none
 * reported a count; and the record's cost, the first call of a fresh turn
 * its answer, the others recovery.  Written for every answer that ended, a
 * refused one too: its tokens are paid as well.  Returns 0, or -1 out of
 * memory.
 */
static int
put_usage(const struct turn *t)
{
	json_t *usage;

	if (t->cost.prompt_tokens < 0 && t->cost.completion_tokens < 0)
		return saop_record_add_cost(t->rec, "answer",
		    &t->answer) != 0 || saop_record_add_cost(t->rec,
		    "recovery", &t->recovery) != 0 ? -1 : 0;
	if ((usage = json_object()) == NULL ||
	    (t->cost.prompt_tokens >= 0 && json_object_set_new(usage,
	    "prompt_tokens", json_integer(t->cost.prompt_tokens)) != 0) ||
	    (t->cost.completion_tokens >= 0 && json_object_set_new(usage,
	    "completion_tokens", json_integer(t->cost.completion_tokens)) !=
	    0) || json_object_set_new(usage, "cost",
	    saop_llm_cost_usd(&t->cost)) != 0) {
		json_decref(usage);
		return -1;
	}
	return saop_record_set_usage(t->rec, usage) != 0 ||
	    saop_record_add_cost(t->rec, "answer", &t->answer) != 0 ||
	    saop_record_add_cost(t->rec, "recovery", &t->recovery) != 0 ?
	    -1 : 0;
}

/*
 * A refusal (finish_reason refusal) on t's record: the reason, what the
 * model said instead ("refusal"), the usage of the calls (put_usage())
 * and the state USER_ESCALATION, for a person must decide what the agent
 * does next.  0, or -1 out of memory.
 */
static int
refused_answer(const struct turn *t, const struct saop_llm_answer *a)
{
	int bad = 0;

	if (strcmp(a->finish_reason, "refusal") != 0)
		return 0;
	bad |= saop_record_set_finish_reason(t->rec, "refusal");
	bad |= put_usage(t);
	bad |= saop_record_set_refusal(t->rec, a->refusal != NULL ?
	    a->refusal : "");
	bad |= answer_extras(t, t->rec, 0);
	bad |= saop_record_set_state(t->rec, SAOP_STATE_USER_ESCALATION);
	return bad ? -1 : 0;
}

/* Write t's finished answer into its record; 0 or ENOMEM. */
static int
finish(struct turn *t, const struct saop_llm_answer *a, size_t received,
    struct saop_err *e)
{
	json_t *rec = t->rec;
	int bad = 0;

	bad |= saop_record_set_raw(rec, t->partial, t->plen);
	/* A tool call continued as text is still a tool call; an answer
	 * not merged (take()) leaves the partial as it was cut: "length",
	 * so that what reads the record never takes the cut for the end
	 * (a bare number's digits). */
	bad |= saop_record_set_finish_reason(rec, a == NULL ||
	    a->finish_reason[0] == '\0' ? NULL : t->dropped ? "length" :
	    t->tool_call != NULL &&
	    strcmp(a->finish_reason, "stop") == 0 ? "tool_calls" :
	    a->finish_reason);
	bad |= put_usage(t);
	if (t->tool_call != NULL)
		bad |= saop_record_set_tool_call(rec,
		    json_incref(t->tool_call));
	if (t->tool_calls != NULL) {
		/* The call continued has its whole arguments now. */
		json_t *c = json_array_get(t->tool_calls, (size_t)
		    json_integer_value(json_object_get(t->tool_call, "index")));

		if (c != NULL)
			json_object_set_new(json_object_get(c, "function"),
			    "arguments", json_stringn(t->partial, t->plen));
		bad |= saop_record_set_tool_calls(rec,
		    json_incref(t->tool_calls));
	}
	bad |= answer_extras(t, rec, 0);
	if (t->resumes > 0 || t->discarded)
		bad |= saop_record_set_suspend(rec, json_pack(
		    "{s:i, s:I, s:b}", "resumes", t->resumes, "received",
		    (json_int_t)received, "asked_again", t->discarded));
	saop_record_del(rec, SAOP_RECORD_STATE);
	return bad ? saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory") : 0;
}

/* Start t from a saved state (borrowed): partial, tool call, resumes. */
static int
restore(struct turn *t, const json_t *state, struct saop_err *e)
{
	const json_t *p = json_object_get(state, "partial");
	const json_t *tc = json_object_get(state, "tool_call");
	size_t n = json_string_length(p);

	if (n > 0) {
		if ((t->partial = malloc(n + 1)) == NULL)
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		memcpy(t->partial, json_string_value(p), n + 1);
		t->plen = n;
	}
	if (json_is_object(tc))
		t->tool_call = json_deep_copy(tc);
	if (json_is_array(json_object_get(state, "tool_calls")))
		t->tool_calls = json_deep_copy(json_object_get(state,
		    "tool_calls"));
	p = json_object_get(state, "text");
	keep_text(t, json_string_value(p), json_string_length(p));
	return 0;
}

/* The task goes to status (reason may be NULL); failures are kept. */
static int
set_status(const struct turn *t, const struct saop_suspend_opts *o,
    enum saop_task_status status, const char *reason, struct saop_err *e)
{
	return saop_task_set_status(o->store, t->task_id, status, reason, e);
}

/*
 * Settle a lost network for t: save the part received, pause the task,
 * log NETWORK_LOST, then (unless no_wait or the resumptions are spent)
 * wait for the endpoint and log NETWORK_RESTORED and TURN_RESUMED.
 * Returns 1 to call again, 0 suspended (e holds the loss), or a
 * negative code of the store.
 */
static int
lost(struct turn *t, struct saop_suspend_opts *o, long wait_first,
    const char *why, struct saop_err *e, struct saop_suspend_outcome *out)
{
	struct saop_err loss = *e, se;
	const char *limit = why;
	char what[300];
	long long start = now_ms();
	int rc;

	/* Saved and held (claimed) while this process waits for it. */
	if ((rc = save(t, o, 1, &se)) != 0 ||
	    (rc = set_status(t, o, SAOP_TASK_PAUSED_FOR_INTERVENTION,
	    SAOP_REASON_NETWORK_LOSS, &se)) != 0) {
		*e = se;
		return rc;
	}
	event(t, o, SAOP_EVENT_NETWORK_LOST, json_pack("{s:s, s:I, s:i, s:i}",
	    "error", loss.msg, "received", (json_int_t)t->plen, "http_status",
	    loss.http_status, "resumes", t->resumes));
	key_name(&t->key, what, sizeof(what));
	if (limit != NULL)
		;		/* decided by the 429's wait */
	else if (o->no_wait)
		limit = "no-wait";
	else if (t->resumes >= o->max_resumes)
		limit = "max-resumes";
	if (limit != NULL || !wait_for_network(o, wait_first, what, &loss,
	    t->fresh, &limit)) {
		char how[64];

		out->suspended = 1;
		out->limit = limit;
		*e = loss;
		/* Saved again, and let go: any resumer may take it now. */
		if ((rc = save(t, o, 0, &se)) != 0) {
			*e = se;
			return rc;
		}
		event(t, o, SAOP_EVENT_TURN_SUSPENDED, json_pack("{s:s, s:i, "
		    "s:I, s:I}", "limit", limit, "resumes", t->resumes,
		    "received", (json_int_t)t->plen, "waited_ms",
		    (json_int_t)(now_ms() - start)));
		saop_record_set_suspend(t->rec, json_pack("{s:i, s:I, s:s}",
		    "resumes", t->resumes, "received", (json_int_t)t->plen,
		    "limit", limit));
		/* saop-suspend resumes its own turns; the others resume a
		 * record they are given again. */
		if (strcmp(stage_of(o), "saop-suspend") == 0)
			snprintf(how, sizeof(how), "saop-suspend --resume");
		else
			snprintf(how, sizeof(how), "%.40s again on its output",
			    stage_of(o));
		snprintf(e->msg, sizeof(e->msg), "suspended (%s, %d "
		    "resumptions): turn saved with %zu bytes received; run "
		    "%s: %.300s", strcmp(limit, "no-wait") == 0 ? "--no-wait" :
		    strcmp(limit, "signal") == 0 ? "stopped while waiting" :
		    strcmp(limit, "max-resumes") == 0 ? "resumptions spent: "
		    "--max-resumes reached" : strcmp(limit, "never-answered")
		    == 0 ? "the endpoint never answered since this run "
		    "began" : loss.http_status == 429 ? "rate limited "
		    "longer than the wait allowed" : "the endpoint stayed "
		    "down: --max-wait reached", t->resumes, t->plen, how,
		    loss.msg);
		return 0;
	}
	event(t, o, SAOP_EVENT_NETWORK_RESTORED, NULL);
	if ((rc = set_status(t, o, SAOP_TASK_IN_PROGRESS, NULL, &se)) != 0) {
		*e = se;
		return rc;
	}
	t->resumes++;
	out->resumes++;
	event(t, o, SAOP_EVENT_TURN_RESUMED, json_pack("{s:i, s:I}", "resumes",
	    t->resumes, "received", (json_int_t)t->plen));
	return 1;
}

/*
 * After a failed call of class cls (e its error) in t: a 429 (while fewer
 * than RATE_WAITS_MAX were waited out in this turn, and not --no-wait) is
 * waited out as the server asks, said once on the notice line, when the
 * wait is within opts->max_wait_ms.  Returns SAOP_SUSPEND_WAIT when it was
 * (call again), SAOP_SUSPEND_LOST for a 429 not waited out (*limit
 * "max-wait" when it asked too long, "signal" when a signal stopped the
 * wait: save and suspend, no waiting for the network), else cls.
 */
static int
wait_out(const struct saop_suspend_opts *o, int cls, const struct turn *t,
    const struct saop_err *e, struct saop_suspend_outcome *out,
    const char **limit)
{
	long long start;
	long wait;
	int stopped;
	char what[300], url[224], a[32], b[32], way[96];

	*limit = NULL;
	if (cls != SAOP_SUSPEND_WAIT)
		return cls;
	if (out->rate_waits >= RATE_WAITS_MAX || o->no_wait)
		return SAOP_SUSPEND_LOST;	/* 429s spent, --no-wait */
	/* 429: not a loss; wait as the server asks. */
	wait = e->retry_after_ms >= 0 ? e->retry_after_ms : o->poll_ms;
	if (wait > RATE_WAIT_MAX_MS)
		wait = RATE_WAIT_MAX_MS;
	key_name(&t->key, what, sizeof(what));
	endpoint_shown(o, url, sizeof(url));
	if (o->max_wait_ms >= 0 && wait > o->max_wait_ms) {
		*limit = "max-wait";
		say("%s: rate limited by %s (HTTP 429) for %s, longer than the "
		    "wait allowed (%s): not waiting", what, url,
		    span(wait, a, sizeof(a)), span(o->max_wait_ms, b,
		    sizeof(b)));
		return SAOP_SUSPEND_LOST;
	}
	say("%s: rate limited by %s (HTTP 429): waiting %s as it asks (%s)",
	    what, url, span(wait, a, sizeof(a)), way_on(o, way, sizeof(way)));
	out->rate_waits++;
	if (o->waiting != NULL)
		*o->waiting = 1;
	start = now_ms();
	stopped = sleep_ms(wait, o->stop);
	if (o->waiting != NULL)
		*o->waiting = 0;
	if (!stopped)
		return SAOP_SUSPEND_WAIT;
	*limit = "signal";
	say("%s: stopped by a signal after waiting %s of the %s the rate limit "
	    "of %s asked", what, span(now_ms() - start, a, sizeof(a)),
	    span(wait, b, sizeof(b)), url);
	return SAOP_SUSPEND_LOST;
}

/*
 * How long to wait before the first probe after the loss e: a server
 * that answered (5xx) at least one interval, or its Retry-After; a dead
 * link not at all.  Returns milliseconds.
 */
static long
first_wait(const struct saop_suspend_opts *o, const struct saop_err *e)
{
	long wait = e->http_status >= 500 ? (e->retry_after_ms > o->poll_ms ?
	    e->retry_after_ms : o->poll_ms) : 0;

	return wait > RATE_WAIT_MAX_MS ? RATE_WAIT_MAX_MS : wait;
}

/* Free what t holds. */
static void
turn_free(struct turn *t)
{
	free(t->task);
	free(t->partial);
	free(t->text);
	json_decref(t->tool_call);
	json_decref(t->tool_calls);
	json_decref(t->choices);
	json_decref(t->server_tools);
	saop_detect_result_free(&t->scan);
}

/*
 * A recovery call of t over o's budget (e names it): the turn kept saved
 * and let go (a --resume with a larger --max-cost goes on), its task and
 * record USER_ESCALATION (MAX_COST_EXCEEDED: a person decides, and no
 * loop that retries exit 75 calls again), the record with its usage and
 * cost and suspend.limit "max-cost".  Returns -SAOP_EBUDGET, or
 * -SAOP_ENOMEM.
 */
static int
over_budget(struct turn *t, const struct saop_suspend_opts *o,
    struct saop_err *e)
{
	struct saop_err ignored;
	int bad = 0;

	save(t, o, 0, &ignored);
	set_status(t, o, SAOP_TASK_USER_ESCALATION,
	    SAOP_REASON_MAX_COST_EXCEEDED, &ignored);
	bad |= answer_extras(t, t->rec, 1);
	bad |= put_usage(t);
	bad |= saop_record_set_suspend(t->rec, json_pack("{s:i, s:I, s:s}",
	    "resumes", t->resumes, "received", (json_int_t)t->plen, "limit",
	    "max-cost"));
	bad |= saop_record_set_state(t->rec, SAOP_STATE_USER_ESCALATION);
	if (bad)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	return -SAOP_EBUDGET;
}

/*
 * Run one turn of rec under the suspend policy, from state when not NULL
 * (see saop.h).  Returns 0, or a negative code with e filled.
 */
int
saop_suspend_turn(json_t *rec, const json_t *state,
    struct saop_suspend_opts *o, struct saop_suspend_outcome *out,
    struct saop_err *e)
{
	struct saop_llm_answer a;
	struct turn t;
	json_t *req;
	const char *text, *why;
	size_t len;
	int rc, verdict = SAOP_TRUNCATED, cls, again, recovery;

	memset(out, 0, sizeof(*out));
	saop_err_clear(e);
	if (turn_init(&t, rec, o) != 0)
		return saop_record_has(rec, SAOP_RECORD_TASK_ID) ?
		    saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory") :
		    saop__fail(e, SAOP_EDATA, 0, "the record has no task_id");
	saop_llm_cost_init(&t.cost);
	saop_llm_cost_init(&t.answer);
	saop_llm_cost_init(&t.recovery);
	if (o->budget != NULL)
		saop_budget_record(o->budget, rec);
	if (saop_record_request(rec) == NULL) {
		turn_free(&t);
		return saop__fail(e, SAOP_EDATA, 0, "the record has no "
		    "request object");
	}
	if (state != NULL && (rc = restore(&t, state, e)) != 0)
		goto out;
	if (state != NULL)
		t.fresh = 0;
	for (;;) {
		/* Before the call: the turn can be resumed whatever happens;
		 * claimed, so that no other process calls it meanwhile. */
		if ((rc = save(&t, o, 1, e)) != 0 ||
		    (rc = set_status(&t, o, SAOP_TASK_IN_PROGRESS, NULL, e)) != 0)
			goto out;
		if ((rc = shown_of(&t, o, e)) != 0)
			goto out;
		if ((req = next_request(&t, e)) == NULL) {
			rc = -e->code;
			goto out;
		}
		recovery = !(t.fresh && t.answer.calls == 0);
		if (recovery && o->budget != NULL &&
		    (rc = saop_budget_check(o->budget, req, e)) != 0) {
			json_decref(req);
			rc = over_budget(&t, o, e);
			goto out;
		}
		out->calls++;
		rc = saop_model_call(&o->model, req, &a, e);
		json_decref(req);
		saop_llm_cost_add(&t.cost, 0, &a);
		saop_llm_cost_add(recovery ? &t.recovery : &t.answer, 0, &a);
		if (recovery && o->budget != NULL)
			saop_budget_spend(o->budget, &a);
		text = answer_text(&t, &a, &len);
		out->received += len;
		note_answer(rc, e, a.raw_len);
		cls = rc == 0 ? SAOP_SUSPEND_NONE : saop_suspend_classify(e);
		if (rc == -SAOP_EPREFILL && o->form == SAOP_RESUME_AUTO &&
		    t.plen > 0) {
			/* The model refuses prefill: the user form from now. */
			o->form = SAOP_RESUME_USER;
			saop_llm_answer_free(&a);
			continue;
		}
		if (rc == 0 || cls == SAOP_SUSPEND_LOST) {
			struct saop_err me;

			if ((again = take(&t, text, len, rc != 0 ||
			    strcmp(a.finish_reason, "length") == 0, &verdict,
			    &me)) != 0) {
				*e = me;
				rc = again;
				saop_llm_answer_free(&a);
				goto out;
			}
			if (rc != 0 && t.plen > 0 && verdict != SAOP_TRUNCATED) {
				if (verdict == SAOP_COMPLETE) {
					/* All of it came; only the end
					 * marker was lost. */
					rc = 0;
					a.finish_reason[0] = '\0';
				} else {
					/* Not JSON: the resume protocol
					 * cannot continue it; ask again,
					 * the prose received kept. */
					keep_text(&t, t.partial, t.plen);
					free(t.partial);
					t.partial = NULL;
					t.plen = 0;
					t.discarded = 1;
				}
			}
			if (o->max_answer > 0 && t.plen > o->max_answer) {
				struct saop_err ignored;

				/* Over --max-record: refused, never an
				 * out-of-memory crash; kept saved (let go),
				 * for a --resume with a larger limit. */
				saop_llm_answer_free(&a);
				rc = saop__fail(e, SAOP_ELIMIT, 0, "the answer "
				    "to this turn is %zu bytes, over the "
				    "--max-record limit of %zu (raise it with "
				    "--max-record)", t.plen, o->max_answer);
				save(&t, o, 0, &ignored);
				goto out;
			}
		}
		if (rc == 0) {
			/* The row stays (claimed) until the caller has
			 * written the record: saop_suspend_forget(). */
			rc = finish(&t, &a, out->received, e);
			saop_llm_answer_free(&a);
			goto out;
		}
		if (refused_answer(&t, &a) != 0) {
			saop_llm_answer_free(&a);
			rc = saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
			goto out;
		}
		saop_llm_answer_free(&a);
		if ((cls = wait_out(o, cls, &t, e, out, &why)) ==
		    SAOP_SUSPEND_WAIT)
			continue;	/* a 429 waited out: call again */
		if (cls != SAOP_SUSPEND_LOST) {
			/* Refused: waiting will not help.  A turn that holds
			 * something received, or came from a saved row, stays
			 * saved (let go) for a --resume once the cause is
			 * fixed; else the record, written with its error,
			 * carries all the row held. */
			struct saop_err ignored;

			if (t.plen > 0 || state != NULL)
				save(&t, o, 0, &ignored);
			else
				saop_turn_state_delete(o->store, &t.key,
				    &ignored);
			goto out;
		}
		if ((again = lost(&t, o, first_wait(o, e), why, e, out)) < 0) {
			rc = again;
			goto out;
		}
		if (again == 0) {
			if (answer_extras(&t, rec, 1) != 0) {
				rc = saop__fail(e, SAOP_ENOMEM, ENOMEM,
				    "out of memory");
				goto out;
			}
			saop_record_set_state(rec,
			    SAOP_STATE_PAUSED_FOR_INTERVENTION);
			goto out;	/* rc: the loss's code */
		}
	}
out:
	out->resumes = t.resumes;
	turn_free(&t);
	return rc;
}

/* ---- The policy at the model-call seam ---- */

/*
 * Forget rec's saved turn of o's stage: its record is written (see
 * saop.h); its task DONE.  Returns 1 deleted, 0 none, or a negative
 * code.
 */
int
saop_suspend_forget(const struct saop_suspend_opts *o, const json_t *rec,
    struct saop_err *e)
{
	struct turn t;
	int rc;

	saop_err_clear(e);
	if (turn_init(&t, (json_t *)rec, o) != 0)
		return 0;
	if ((rc = saop_turn_state_delete(o->store, &t.key, e)) >= 0) {
		int st = set_status(&t, o, SAOP_TASK_DONE, NULL, e);

		rc = st < 0 ? st : rc;
	}
	turn_free(&t);
	return rc;
}

/*
 * The call of saop_suspend_model(): g->opts.model's call under the
 * policy (see saop.h).  Returns 0 with a filled, or the last failure's
 * negative code with e filled (a suspended turn's message says so) and
 * what that call received in a.
 */
static int
guarded_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct saop_suspend_guard *g = arg;
	struct saop_suspend_opts *o = &g->opts;
	struct turn t;
	const char *why;
	int rc = 0;

	if (turn_init(&t, g->rec, o) != 0) {
		turn_free(&t);
		return saop_model_call(&o->model, request, a, e);
	}
	for (;;) {
		int cls, again;

		g->out.calls++;
		rc = saop_model_call(&o->model, request, a, e);
		g->out.received += a->raw_len;
		note_answer(rc, e, a->raw_len);
		if (rc == 0 && o->max_answer > 0 && a->raw_len >
		    o->max_answer) {
			saop_llm_answer_free(a);
			rc = saop__fail(e, SAOP_ELIMIT, 0, "the model's answer "
			    "is %zu bytes, over the --max-record limit of %zu "
			    "(raise it with --max-record)", g->out.received,
			    o->max_answer);
			break;
		}
		if (rc == 0) {
			struct saop_err ignored;

			/* A row left behind costs nothing: --list shows it,
			 * --clear removes it.  A task a lost network set
			 * IN_PROGRESS is DONE with the call. */
			saop_turn_state_delete(o->store, &t.key, &ignored);
			if (g->out.resumes > 0)
				set_status(&t, o, SAOP_TASK_DONE, NULL,
				    &ignored);
			break;
		}
		cls = wait_out(o, (int)saop_suspend_classify(e), &t, e,
		    &g->out, &why);
		if (cls == SAOP_SUSPEND_WAIT) {
			saop_llm_answer_free(a);
			continue;	/* a 429 waited out: call again */
		}
		if (cls != SAOP_SUSPEND_LOST)
			break;		/* refused: waiting will not help */
		/* The protocol keeps its own progress: the turn is saved as
		 * the record stood when it called, and the same request is
		 * sent again once the endpoint answers. */
		if ((again = lost(&t, o, first_wait(o, e), why, e,
		    &g->out)) <= 0) {
			if (again < 0)
				rc = again;
			break;
		}
		saop_llm_answer_free(a);
	}
	turn_free(&t);
	return rc;
}

/* The model whose calls go through g's policy (see saop.h).  Returns it. */
struct saop_model
saop_suspend_model(struct saop_suspend_guard *g)
{
	struct saop_model m;

	m.call = guarded_call;
	m.arg = g;
	return m;
}

/* See saop.h: a program's suspend options in one call.  Returns nothing. */
void
saop_suspend_opts_for(struct saop_suspend_opts *o, const char *stage,
    struct saop_llm_config *cfg)
{
	o->stage = stage;
	o->provider = cfg->provider;
	o->model = saop_llm_model(cfg);
	o->endpoint = cfg->base;
}
