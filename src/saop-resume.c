/* saop-resume: continue truncated model output and merge the pieces. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
	OPT_MAX_ATTEMPTS = CLI_OPT_FIRST_OWN,
	OPT_CONTINUATION,
	OPT_CONTEXT,
};

/* The options of saop-resume: getopt, --help, usage, completion, page. */
static const struct cli_option options[] = {
	CLI_OPT("max-attempts", 0, OPT_MAX_ATTEMPTS, "N",
	    "continuation calls per record (default 2)"),
	CLI_OPT("continuation", 0, OPT_CONTINUATION, "prefill|user|auto",
	    "how the model is asked to go on (default auto)"),
	CLI_OPT("context", 0, OPT_CONTEXT, "full|tail",
	    "send the partial output, or only its last valid token"),
	CLI_OPTS_SUSPEND,
	CLI_OPTS_COMMON,
	CLI_OPTS_RECORDS,
	CLI_OPTS_MODEL,
	CLI_OPTS_END
};

/* What the run shares between records. */
struct resume_run {
	struct saop_llm_config cfg;
	struct saop_resume_opts ro;
	struct saop_suspend_guard guard;	/* the calls, under the
						   suspend policy */
	struct saop_budget budget;	/* --max-cost */
};

/*
 * --dry-run: print what would be sent for rec (nothing when it needs no
 * call).  Returns CLI_OK, or -1 with e filled.
 */
static int
dry_run(struct resume_run *r, const json_t *rec, struct saop_err *e)
{
	json_t *req;
	int rc;

	if ((rc = saop_resume_plan(rec, &r->ro, &req, e)) <= 0)
		return rc < 0 ? -1 : CLI_OK;
	rc = saop_llm_dry_run(stdout, &r->cfg, req, e);
	json_decref(req);
	return rc != 0 ? -1 : CLI_OK;
}

/*
 * cli_run()'s work on one record: resume it when truncated.  Without a
 * model, a record that needs one is judged and passed on, and the run's one
 * configuration error is returned for it (cli_run() then calls no more).
 * Returns the status of its outcome (cli_status()), or -1 with e filled.
 */
static int
resume_one(struct cli_loop *l, json_t *rec, struct saop_err *e)
{
	struct resume_run *r = l->arg;
	struct saop_resume_outcome oc;
	int rc, unconfigured = 0;

	cli_record_task(l->o, rec);

	if (l->o->dry_run)
		return dry_run(r, rec, e);
	if (!l->no_call && !saop_llm_configured(&r->cfg)) {
		if ((rc = saop_resume_plan(rec, &r->ro, NULL, e)) < 0)
			return -1;
		unconfigured = rc > 0;
	}
	r->ro.no_call = l->no_call || unconfigured;
	r->ro.store = cli_store(l->o);
	r->guard.opts.store = r->ro.store;
	r->guard.rec = rec;
	rc = saop_resume_record(rec, &r->ro, &oc, e);
	cli_budget_warn(&r->budget);
	if (rc < 0)
		return -1;
	if (oc.prefill_refused && l->o->verbose)
		cli_warn("the model refuses assistant prefill: "
		    "using the user-turn form from now on");
	if (unconfigured) {
		saop_err_clear(e);
		e->code = SAOP_ECONFIG;
		snprintf(e->msg, sizeof(e->msg), "no model configured (set "
		    "SAOP_API_KEY or SAOP_API_BASE): truncated records pass "
		    "through unresumed");
		return -1;
	}
	return cli_status(oc.state);
}

/*
 * saop-resume: parse the options, read the model's configuration from the
 * environment and resume each record (cli_run()).  Returns the exit status
 * of the run.
 */
/*
 * The program's own options, for cli_getopt(): 1 when ch was one of
 * them (set in the run arg), else 0.
 */
static int
own_opt(void *arg, int ch, const char *val)
{
	struct resume_run *r = arg;

	switch (ch) {
	case OPT_MAX_ATTEMPTS:
		r->ro.max_attempts = (int)cli_count("--max-attempts",
		    val, 100);
		if (r->ro.max_attempts == 0)
			cli_usage_error("--max-attempts: must be at "
			    "least 1");
		return 1;
	case OPT_CONTINUATION:
		if (strcmp(val, "auto") == 0)
			r->ro.form = SAOP_RESUME_AUTO;
		else if (strcmp(val, "prefill") == 0)
			r->ro.form = SAOP_RESUME_PREFILL;
		else if (strcmp(val, "user") == 0)
			r->ro.form = SAOP_RESUME_USER;
		else
			cli_usage_error("--continuation: '%s' is not "
			    "prefill, user or auto", val);
		return 1;
	case OPT_CONTEXT:
		if (strcmp(val, "full") == 0)
			r->ro.context = SAOP_RESUME_FULL;
		else if (strcmp(val, "tail") == 0)
			r->ro.context = SAOP_RESUME_TAIL;
		else
			cli_usage_error("--context: '%s' is not full "
			    "or tail", val);
		return 1;
	default:
		return cli_suspend_opt(&r->guard.opts, ch, val);
	}
}

static int
run(int argc, char *argv[])
{
	static struct resume_run r;
	struct cli opt = { 0 };
	struct cli_loop loop = { 0 };
	struct saop_err e;
	int status, first;

	cli_init("saop-resume", options, "[file ...]",
	    "Continue truncated JSON output from its last valid token and "
	    "merge the pieces.");
	r.ro.max_attempts = SAOP_MAX_RESUME_ATTEMPTS;
	cli_settings(options, argc, argv);
	if (saop_suspend_opts_from_env(&r.guard.opts, &e) != 0)
		cli_die(&e);
	first = cli_getopt(&opt, argc, argv, own_opt, &r);
	cli_operands(argc, argv, first, CLI_FILES);
	cli_llm_config(&opt, &r.cfg);
	r.ro.provider = r.cfg.provider;
	cli_budget(&opt, &r.cfg, &r.budget);
	r.ro.budget = &r.budget;
	saop_suspend_opts_for(&r.guard.opts, "saop-resume", &r.cfg);
	cli_catch_signals(&r.guard.opts);
	r.guard.opts.max_answer = opt.max_record ? opt.max_record :
	    SAOP_MAX_RECORD_BYTES;
	r.ro.model = saop_suspend_model(&r.guard);
	r.ro.task_id = cli_task_id(&opt);
	loop.o = &opt;
	cli_loop_inputs(&loop, argc, argv, first);
	loop.record = resume_one;
	loop.judged_later = 1;	/* saop-validate */
	loop.raw_out = cli_raw_out;
	loop.no_write = opt.dry_run;
	loop.arg = &r;
	status = cli_run(&loop);
	saop_llm_config_free(&r.cfg);
	return status;
}

/* saop-resume: run(), its status settled (cli_exit()).  Returns it. */
int
main(int argc, char *argv[])
{
	return cli_exit(run(argc, argv));
}
