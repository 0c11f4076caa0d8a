/*
 * saop-suspend: the call stage: call the model for each record, and
 * survive a lost network (save the turn, pause, wait, resume).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "suspend-saved.h"

enum {
	OPT_MAX_WAIT = CLI_OPT_FIRST_OWN,
	OPT_RESUME,
	OPT_LIST,
	OPT_CLEAR,
	OPT_SCHEMA,
	OPT_SCHEMA_MODE,
	OPT_JSON
};

/* The options of saop-suspend: getopt, --help, usage, completion, page. */
static const struct cli_option options[] = {
	CLI_OPT("max-resumes", 0, CLI_OPT_MAX_RESUMES, "N",
	    "automatic resumptions per turn after a lost network "
	    "($SAOP_MAX_AUTO_RESUME, default 3)"),
	CLI_OPT("max-wait", 0, OPT_MAX_WAIT, "DURATION",
	    "how long to wait for a lost endpoint (90s, 30m, 2h, inf; "
	    "$SAOP_MAX_WAIT, default 30m)"),
	CLI_OPT("no-wait", 0, CLI_OPT_NO_WAIT, NULL,
	    "on a lost network save the turn and exit 75"),
	CLI_OPT("resume", 0, OPT_RESUME, NULL,
	    "resume the saved turns (of the task given) and write their "
	    "records"),
	CLI_OPT("list", 0, OPT_LIST, NULL,
	    "print the saved turns: task, turn, stage, saved_at, bytes "
	    "received, claim"),
	CLI_OPT("json", 0, OPT_JSON, NULL,
	    "with --list: print the saved turns as one JSON array"),
	CLI_OPT("clear", 0, OPT_CLEAR, "TASK", "delete TASK's saved turns"),
	CLI_OPT("schema", 0, OPT_SCHEMA, "FILE",
	    "send the JSON Schema in FILE (\"envelope\": the SAOP envelope) "
	    "as the answer's structured output ($SAOP_SCHEMA)"),
	CLI_OPT("schema-mode", 0, OPT_SCHEMA_MODE, "MODE",
	    "native (the provider's field, the default), prompt (the system "
	    "prompt) or off ($SAOP_SCHEMA_MODE)"),
	CLI_OPTS_COMMON,
	CLI_OPTS_RECORDS,
	CLI_OPTS_MODEL,
	CLI_OPTS_END
};

/* What the run shares between records. */
struct suspend_run {
	struct saop_llm_config cfg;
	struct saop_suspend_opts so;
	struct saop_budget budget;	/* --max-cost */
	int resumed;		/* --resume: turns done */
	int answered;		/* the record at hand was answered */
	int resume, list;	/* --resume, --list */
	int json;		/* --json */
	int quiet;		/* -q */
	const char *clear;	/* --clear TASK */
	const char *schema_path;	/* --schema, else $SAOP_SCHEMA */
	const char *schema_mode;	/* --schema-mode, else $SAOP_SCHEMA_MODE */
	struct saop_schema *schema;
	char schema_name[65];
	struct saop_schema_guard sg;	/* the field, dropped once refused */
	size_t shown;		/* on a terminal: text bytes shown of the
				   record at hand (show_text()) */
	char shown_last;	/* the last of them */
};

/*
 * cfg's on_text when standard output is a terminal: write the piece of
 * the answer's text that came (n bytes at s) at once.
 */
static void
show_text(void *arg, const char *s, size_t n)
{
	struct suspend_run *r = arg;

	if (n == 0)
		return;
	fwrite(s, 1, n, stdout);
	fflush(stdout);
	r->shown += n;
	r->shown_last = s[n - 1];
}

/*
 * -r, and a terminal: rec's text.  When show_text() showed it as it came,
 * only the LF it did not end with; else (nothing came as it streamed: a
 * tool call, an answer in one body) cli_raw_out()'s.
 */
static void
text_out(struct suspend_run *r, const json_t *rec)
{
	if (r->shown == 0)
		cli_raw_out(NULL, rec);
	else if (r->shown_last != '\n')
		putchar('\n');
	r->shown = 0;
}

/* cli_run()'s raw_out: text_out() of the run. */
static void
loop_text_out(const struct cli_loop *l, const json_t *rec)
{
	text_out(l->arg, rec);
}

/*
 * -R: rec's raw becomes rec.request: a bare chat request when its first
 * non-blank byte is "{" (an object with messages), else a plain prompt,
 * as llm(1) takes one: the text, as it is, as one user message.  0 or -1
 * (65: "{" that is not a JSON object, or nothing but blanks).
 */
static int
raw_request(json_t *rec, struct saop_err *e)
{
	json_error_t je;
	const char *raw;
	size_t len, i = 0;
	json_t *req;

	raw = saop_record_raw(rec, &len);
	while (raw != NULL && i < len && strchr(" \t\r\n", raw[i]) != NULL)
		i++;
	if (raw == NULL || i == len)
		req = NULL;
	else if (raw[i] == '{')
		req = json_loadb(raw, len, 0, &je);
	else if ((req = json_pack("{s:[{s:s, s:s%}]}", "messages", "role",
	    "user", "content", raw, len)) == NULL)
		cli_die_nomem();
	if (!json_is_object(req)) {
		json_decref(req);
		saop_err_clear(e);
		e->code = SAOP_EDATA;
		snprintf(e->msg, sizeof(e->msg), raw == NULL || i == len ?
		    "-R: the input is empty (a prompt, or a chat request)" :
		    "-R: the input is not a chat request (a JSON object "
		    "with messages)");
		return -1;
	}
	saop_record_del(rec, SAOP_RECORD_RAW);
	if (saop_record_set_request(rec, req) != 0)
		cli_die_nomem();
	return 0;
}

/*
 * A record after a failed call (cli_run() makes no more calls): save it
 * for --resume when its task has no saved turn yet, and say so.
 * Returns -1 with e (SAOP_ENETWORK: the run is suspended).
 */
static int
defer(struct suspend_run *r, json_t *rec, struct saop_err *e)
{
	struct saop_turn_key k;
	char *task = saop_turn_task(rec);
	json_t *have = NULL;
	int rc = 0;

	k.task_id = task;
	k.turn = saop_record_turn(rec);
	k.stage = "saop-suspend";
	if (task != NULL)
		rc = saop_turn_state_load(r->so.store, &k, &have, e);
	json_decref(have);
	if (rc < 0 && e->code != SAOP_EDATA) {
		free(task);
		return -1;
	}
	if (rc == 0 && task != NULL) {
		json_t *st = json_pack("{s:O, s:s, s:i, s:s, s:i}", "record", rec,
		    "stage", "saop-suspend", "received", 0, "partial", "",
		    "resumes", 0);
		if (st == NULL || saop_turn_state_save(r->so.store, &k, st, 0,
		    e) != 0) {
			json_decref(st);
			free(task);
			return -1;
		}
		json_decref(st);
	}
	free(task);
	saop_record_set_state(rec, SAOP_STATE_PAUSED_FOR_INTERVENTION);
	saop_err_clear(e);
	e->code = SAOP_ENETWORK;
	snprintf(e->msg, sizeof(e->msg), rc == 0 && k.task_id != NULL ?
	    "not called after an earlier failure: turn saved for "
	    "saop-suspend --resume" : "not called after an earlier failure "
	    "(the turn is saved already): the record passes on without a "
	    "call");
	return -1;
}

/*
 * After a call: say on rec what became of the schema, and warn (unless
 * -q) when the server refused the structured-output field.
 */
static void
note_schema(struct suspend_run *r, json_t *rec)
{
	struct saop_err e;
	char buf[32];
	const char *task;
	int rc;

	if ((rc = saop_schema_note(&r->sg, rec, r->so.store, &e)) < 0)
		cli_die(&e);
	if ((task = saop_record_task_id(rec, buf)) == NULL)
		task = "-";
	if (rc == 1 && !r->quiet)
		cli_warn("task %s: the server refused %s (%s); the turn was "
		    "asked again without it", task, saop_schema_field(
		    &r->cfg), r->sg.why);
}

/*
 * --schema / $SAOP_SCHEMA: load the schema (exits 78 when it cannot be
 * read or compiled) and put it into the run's configuration, with the
 * mode of --schema-mode / $SAOP_SCHEMA_MODE (exits 64 for a bad word).
 */
static void
load_schema(struct suspend_run *r)
{
	enum saop_schema_mode mode = SAOP_SCHEMA_NATIVE;
	struct saop_err e;
	const char *base, *p = r->schema_path;
	size_t n;

	if (r->schema_mode == NULL || *r->schema_mode == '\0')
		r->schema_mode = cli_env_schema_mode();
	if (r->schema_mode != NULL && *r->schema_mode != '\0' &&
	    saop_schema_mode_parse(r->schema_mode, &mode) != 0)
		cli_usage_error("--schema-mode: '%s' is not native, prompt "
		    "or off", r->schema_mode);
	if (p == NULL || *p == '\0')
		p = cli_env_schema();
	if (p == NULL || *p == '\0')
		return;
	r->schema = strcmp(p, "envelope") == 0 ?
	    saop_schema_envelope_v1(&e) : saop_schema_load(p, NULL, &e);
	if (r->schema == NULL)
		cli_die(&e);
	/* Its name: the file's, without directory and extension. */
	base = strrchr(p, '/') != NULL ? strrchr(p, '/') + 1 : p;
	n = strcspn(base, ".");
	snprintf(r->schema_name, sizeof(r->schema_name), "%.*s",
	    (int)(n < 64 ? n : 64), base);
	r->cfg.schema = saop_schema_document(r->schema);
	r->cfg.schema_name = r->schema_name;
	r->cfg.schema_mode = (int)mode;
}

/* One record: call the model for it under the suspend policy. */
static int
suspend_one(struct cli_loop *l, json_t *rec, struct saop_err *e)
{
	struct suspend_run *r = l->arg;
	struct saop_suspend_outcome oc;
	const char *task;
	char buf[32];
	int rc;

	if (l->o->raw_in && raw_request(rec, e) != 0)
		return -1;
	/* Already answered, or nothing to ask: not ours; untouched. */
	if (saop_record_has(rec, SAOP_RECORD_RAW) ||
	    !saop_record_has(rec, SAOP_RECORD_REQUEST))
		return CLI_OK;
	cli_record_task(l->o, rec);
	if (l->o->dry_run)
		return saop_llm_dry_run(stdout, &r->cfg,
		    saop_record_request(rec), e) != 0 ? -1 : CLI_OK;
	r->so.store = cli_store(l->o);
	if (l->no_call)
		return defer(r, rec, e);
	r->sg.sent = r->sg.refused = 0;
	rc = saop_suspend_turn(rec, NULL, &r->so, &oc, e);
	cli_budget_warn(&r->budget);
	if (rc != 0)
		return -1;
	note_schema(r, rec);
	r->answered = 1;	/* forgotten once written: forget_one() */
	if ((task = saop_record_task_id(rec, buf)) == NULL)
		task = "-";
	if (oc.resumes > 0 && l->o->verbose)
		cli_warn("task %s: turn resumed %d time(s) after a lost "
		    "network", task, oc.resumes);
	return CLI_OK;
}

/*
 * cli_run()'s written(): rec is written and flushed; forget its saved
 * turn when it was answered.  Returns 0, or -1 with e.
 */
static int
forget_one(struct cli_loop *l, json_t *rec, struct saop_err *e)
{
	struct suspend_run *r = l->arg;

	if (!r->answered)
		return 0;
	r->answered = 0;
	return saop_suspend_forget(&r->so, rec, e) < 0 ? -1 : 0;
}

/*
 * Write rec (resumed) and flush it, then forget its saved turn, with
 * SIGINT and SIGTERM held back in between: write, then forget.  Exits
 * 74 when it cannot be written (the turn stays saved).
 */
static void
deliver(const struct cli *o, struct suspend_run *r, json_t *rec)
{
	struct saop_err e;
	sigset_t hold, old;

	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigprocmask(SIG_BLOCK, &hold, &old);
	if (o->quiet)
		;
	else if (o->raw_out)
		text_out(r, rec);
	else if (saop_record_write(stdout, rec, &e) != 0)
		cli_die(&e);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		saop_err_clear(&e);
		e.code = SAOP_EIO;
		snprintf(e.msg, sizeof(e.msg), "write error: %s (the turn "
		    "stays saved)", strerror(errno));
		cli_die(&e);
	}
	if (saop_suspend_forget(&r->so, rec, &e) < 0)
		cli_warn_err(&e);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/*
 * --resume [TASK]: resume every saved turn (or TASK's) that no live
 * process holds: claim it, call, write its record, forget it.  Returns
 * the exit status; with nothing saved says so, 0.
 */
static int
resume_turns(const struct cli *o, struct suspend_run *r, const char *task)
{
	json_t *rows = saved_turns(o, task), *row;
	struct saop_suspend_outcome oc;
	struct saop_err e;
	size_t i;
	int status = CLI_OK, failed = 0, rc;

	if (json_array_size(rows) == 0) {
		if (!o->quiet)
			cli_warn("no saved turns%s%s: nothing to resume",
			    task != NULL ? " for task " : "",
			    task != NULL ? task : "");
		json_decref(rows);
		return CLI_OK;
	}
	r->so.store = cli_store(o);
	json_array_foreach(rows, i, row) {
		struct saop_turn_key k = saved_key(row);
		json_t *st = NULL, *rec;

		if (failed)
			break;		/* the rest stay saved */
		if (json_object_get(row, "error") != NULL) {
			status = cli_worse(status, saved_bad(row));
			continue;
		}
		if (strcmp(k.stage, "saop-suspend") != 0) {
			cli_warn("task %s: the turn was saved by %s; resume "
			    "it with %s", k.task_id, k.stage, k.stage);
			status = cli_worse(status, CLI_FLAGGED);
			continue;
		}
		/* Taken in one transaction: no other resumer calls it. */
		if ((rc = saop_turn_state_claim(r->so.store, &k, &st, &e)) <=
		    0) {
			if (rc == -SAOP_EBUSY) {
				if (o->verbose)
					cli_warn_err(&e);
			} else if (rc < 0) {
				cli_warn_err(&e);
				status = cli_worse(status,
				    saop_err_exit_status(e.code));
			}
			continue;	/* 0: done meanwhile */
		}
		/* st is this claim's own parse: its record is worked on in
		 * place (a copy by jansson would cut a key at a \u0000). */
		rec = json_incref(json_object_get(st, "record"));
		rc = saop_suspend_turn(rec, st, &r->so, &oc, &e);
		cli_budget_warn(&r->budget);
		if (rc != 0) {
			cli_warn_err(&e);
			status = cli_worse(status,
			    saop_err_exit_status(e.code));
			if (cli_call_failed(&e))
				failed = 1;	/* the rest stay saved */
			if (!oc.suspended && e.code != SAOP_ENETWORK &&
			    e.code != SAOP_ERATELIMIT && !o->quiet) {
				/* Refused: the record with its error; the
				 * turn stays saved for a later --resume. */
				if (cli_record_error(rec, &e) != 0)
					cli_die_nomem();
				saop_record_set_state(rec,
				    SAOP_STATE_PAUSED_FOR_INTERVENTION);
				if (o->raw_out)
					;
				else if (saop_record_write(stdout, rec,
				    &e) != 0 || fflush(stdout) != 0)
					cli_die(&e);
			}
			json_decref(rec);
			json_decref(st);
			continue;
		}
		r->resumed++;
		note_schema(r, rec);
		deliver(o, r, rec);
		json_decref(rec);
		json_decref(st);
	}
	json_decref(rows);
	if (saop_store_error(r->so.store, &e)) {
		cli_warn_err(&e);
		status = cli_worse(status, EX_IOERR);
	}
	return status;
}

/*
 * The program's own options, for cli_getopt(): 1 when ch was one of
 * them (set in the run arg), else 0.
 */
static int
own_opt(void *arg, int ch, const char *val)
{
	struct suspend_run *r = arg;

	switch (ch) {
	case OPT_MAX_WAIT:
		if (saop_duration_parse(val, &r->so.max_wait_ms) != 0)
			cli_usage_error("--max-wait: '%s' is not a duration "
			    "(90s, 30m, 2h, inf)", val);
		r->so.first_contact_ms = 0;	/* the wait asked for */
		return 1;
	case OPT_RESUME:
		r->resume = 1;
		return 1;
	case OPT_LIST:
		r->list = 1;
		return 1;
	case OPT_JSON:
		r->json = 1;
		return 1;
	case OPT_CLEAR:
		r->clear = val;
		return 1;
	case OPT_SCHEMA:
		r->schema_path = val;
		return 1;
	case OPT_SCHEMA_MODE:
		r->schema_mode = val;
		return 1;
	default:
		return cli_suspend_opt(&r->so, ch, val);
	}
}

/*
 * saop-suspend: parse the options, then --list, --clear, --resume, or
 * call the model for each record (cli_run()) under the suspend policy.
 * Returns the exit status of the run.
 */
static int
run(int argc, char *argv[])
{
	static struct suspend_run r;
	struct cli opt = { 0 };
	struct cli_loop loop = { 0 };
	struct saop_err e;
	int status, first;

	cli_init("saop-suspend", options, "[file ...]\n"
	    "--resume [task] | --list [--json] | --clear task",
	    "Call the model for each record; on a lost network save the "
	    "turn, wait for the\nendpoint and resume.");
	cli_settings(options, argc, argv);
	if (saop_suspend_opts_from_env(&r.so, &e) != 0)
		cli_die(&e);
	first = cli_getopt(&opt, argc, argv, own_opt, &r);
	if (r.resume + r.list + (r.clear != NULL) > 1)
		cli_usage_error("--resume, --list and --clear go alone");
	cli_operands(argc, argv, first, r.list || r.clear != NULL ? 0 :
	    r.resume ? 1 : CLI_FILES);
	if (r.json && !r.list)
		cli_usage_error("--json goes with --list");
	if (r.list)
		return saved_list(&opt, r.json);
	if (r.clear != NULL)
		return saved_clear(&opt, r.clear);
	cli_llm_config(&opt, &r.cfg);
	/* A terminal is shown the answers' text as it comes (not -o). */
	if (!opt.quiet && !opt.dry_run && isatty(STDOUT_FILENO)) {
		r.cfg.on_text = show_text;
		r.cfg.on_text_arg = &r;
		opt.raw_out = 1;
	}
	load_schema(&r);
	saop_suspend_opts_for(&r.so, "saop-suspend", &r.cfg);
	cli_budget(&opt, &r.cfg, &r.budget);
	r.so.budget = &r.budget;
	cli_catch_signals(&r.so);
	r.so.max_answer = opt.max_record ? opt.max_record :
	    SAOP_MAX_RECORD_BYTES;
	r.quiet = opt.quiet;
	r.sg.inner = r.so.model;
	r.sg.cfg = &r.cfg;
	r.so.model = saop_schema_model(&r.sg);
	if (r.resume) {
		status = resume_turns(&opt, &r, first < argc ? argv[first] :
		    NULL);
	} else {
		loop.o = &opt;
		cli_loop_inputs(&loop, argc, argv, first);
		loop.record = suspend_one;
		loop.judged_later = 1;
		loop.raw_out = loop_text_out;
		loop.written = forget_one;
		loop.no_write = opt.dry_run;
		loop.arg = &r;
		status = cli_run(&loop);
	}
	saop_llm_config_free(&r.cfg);
	saop_schema_free(r.schema);
	return status;
}

/* saop-suspend: run(), its status settled (cli_exit()).  Returns it. */
int
main(int argc, char *argv[])
{
	return cli_exit(run(argc, argv));
}

