/*
 * saop-validate: validate each record's raw output against a JSON Schema
 * (the SAOP envelope v1 by default), repair it locally, and when it is
 * still invalid send formatting-correction turns, then escalate.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
	OPT_SCHEMA = CLI_OPT_FIRST_OWN,
	OPT_REF_DIR,
	OPT_FORMAT_ASSERT,
	OPT_MAX_RETRIES,
	OPT_NO_REPAIR,
	OPT_NO_RETRY,
	OPT_CLOSE,
	OPT_CHECK
};

/* The options of saop-validate: getopt, --help, usage, completion, page. */
static const struct cli_option options[] = {
	CLI_OPT("schema", 0, OPT_SCHEMA, "FILE",
	    "validate against the JSON Schema in FILE ($SAOP_SCHEMA; default: "
	    "envelope v1)"),
	CLI_OPT("check", 0, OPT_CHECK, "CMD",
	    "after the schema, run CMD with the answer's JSON on its stdin: "
	    "exit 0 accepts (repeatable)"),
	CLI_OPT("ref-dir", 0, OPT_REF_DIR, "URI=DIR",
	    "read $refs under URI from DIR (repeatable)"),
	CLI_OPT("format-assert", 0, OPT_FORMAT_ASSERT, NULL,
	    "assert \"format\" instead of annotating"),
	CLI_OPT("max-retries", 0, OPT_MAX_RETRIES, "N",
	    "correction turns per record ($SAOP_MAX_CORRECTION_RETRIES, 2)"),
	CLI_OPT("no-repair", 0, OPT_NO_REPAIR, NULL,
	    "do not repair answers locally"),
	CLI_OPT("close", 0, OPT_CLOSE, NULL,
	    "close a cut answer locally as the last resort (never a tool "
	    "call's)"),
	CLI_OPT("no-retry", 0, OPT_NO_RETRY, NULL,
	    "only validate: send no correction turn"),
	CLI_OPTS_SUSPEND,
	CLI_OPTS_COMMON,
	CLI_OPTS_RECORDS,
	CLI_OPTS_MODEL,
	CLI_OPTS_END
};

/* What the run shares between records. */
struct validate_run {
	struct saop_llm_config cfg;
	struct saop_validate_opts vo;
	struct saop_suspend_guard guard;	/* the correction calls, under
						   the suspend policy */
	int model;		/* correction turns are asked for */
	struct saop_schema_opts so;	/* --format-assert, --ref-dir */
	const char *schema_path;	/* --schema */
	const char **refs;		/* --ref-dir URI=DIR, argc at most */
	const char **checks;		/* --check CMD, argc at most */
	struct saop_schema_guard sg;	/* the structured-output field of
					   the correction calls */
	size_t nrefs;
	int no_retry;		/* --no-retry */
	struct saop_budget budget;	/* --max-cost */
};

/* Print errors (an invalid record's) on stderr, one line each. */
static void
report(const struct cli_loop *l, const json_t *errors)
{
	const json_t *err;
	size_t i;

	if (l->o->quiet)
		return;
	json_array_foreach(errors, i, err) {
		char *text = saop_validate_error_text(err);

		cli_warn("line %ld: %s", l->line, text ? text :
		    "out of memory");
		free(text);
	}
}

/*
 * -r: write rec's envelope as one line when it is valid (nothing else);
 * exits 74 when it cannot be written.
 */
static void
raw_out(const struct cli_loop *l, const json_t *rec)
{
	struct saop_err e;
	const json_t *env;

	(void)l;
	env = saop_record_envelope(rec);
	if (env == NULL || !json_is_true(json_object_get(
	    saop_record_validate(rec), "valid")))
		return;
	if (json_dumpf(env, stdout, JSON_COMPACT | JSON_ENCODE_ANY |
	    JSON_PRESERVE_ORDER) != 0 || putchar('\n') == EOF) {
		saop_err_clear(&e);
		e.code = SAOP_EIO;
		snprintf(e.msg, sizeof(e.msg), "write error");
		cli_die(&e);
	}
}

/*
 * --dry-run: print the correction request rec would need.  Returns
 * CLI_FLAGGED when it needs one, CLI_OK when it needs none, or -1 with e
 * filled.
 */
static int
dry_run(struct validate_run *r, const json_t *rec, struct saop_err *e)
{
	json_t *req;
	int rc;

	if ((rc = saop_validate_plan(rec, &r->vo, &req, e)) <= 0)
		return rc < 0 ? -1 : CLI_OK;
	rc = saop_llm_dry_run(stdout, &r->cfg, req, e);
	json_decref(req);
	return rc != 0 ? -1 : CLI_FLAGGED;
}

/*
 * cli_run()'s work on one record: validate, repair, correct, and name the
 * errors of an invalid one on stderr.  Returns the status of its outcome
 * (cli_status()), or -1 with e filled.
 */
static int
validate_one(struct cli_loop *l, json_t *rec, struct saop_err *e)
{
	struct validate_run *r = l->arg;
	struct saop_validate_outcome oc;
	struct saop_err ne;
	int rc, refusals;

	cli_record_task(l->o, rec);

	if (l->o->dry_run && r->model)
		return dry_run(r, rec, e);
	if (r->model && !l->no_call)
		r->vo.model = saop_suspend_model(&r->guard);
	else
		r->vo.model.call = NULL;
	/* The database opens only when an event is written. */
	r->vo.store = r->vo.model.call != NULL ? cli_store(l->o) : NULL;
	r->guard.opts.store = r->vo.store;
	r->guard.rec = rec;
	/* With -q and no model nobody reads the record after. */
	r->vo.no_envelope = l->o->quiet && r->vo.model.call == NULL;
	refusals = r->sg.refusals;
	r->sg.sent = r->sg.refused = 0;
	rc = saop_validate_record(rec, &r->vo, &oc, e);
	cli_budget_warn(&r->budget);
	if (r->sg.refusals > refusals) {
		/* A correction call was refused the field and made again
		 * without it: the record and the events say so. */
		if (saop_schema_note(&r->sg, rec, r->vo.store, &ne) < 0)
			cli_die(&ne);
		if (!l->o->quiet)
			cli_warn("line %ld: the server refused %s (%s); the "
			    "correction turn was sent again without it",
			    l->line, saop_schema_field(&r->cfg), r->sg.why);
	}
	if (rc < 0 || oc.state != SAOP_STATE_OK)
		report(l, oc.errors);
	return rc < 0 ? -1 : cli_status(oc.state);
}

/*
 * saop-validate: parse the options, load the schema, read the model's
 * configuration from the environment and validate each record (cli_run()).
 * Returns the exit status of the run.
 */
/*
 * The program's own options, for cli_getopt(): 1 when ch was one of
 * them (set in the run arg), else 0.
 */
static int
own_opt(void *arg, int ch, const char *val)
{
	struct validate_run *r = arg;

	switch (ch) {
	case OPT_SCHEMA:
		r->schema_path = val;
		return 1;
	case OPT_REF_DIR:
		if (strchr(val, '=') == NULL)
			cli_usage_error("--ref-dir: '%s' is not "
			    "URI=DIR", val);
		r->refs[r->nrefs++] = val;
		return 1;
	case OPT_FORMAT_ASSERT:
		r->so.format_assert = 1;
		return 1;
	case OPT_MAX_RETRIES:
		r->vo.max_retries = (int)cli_count("--max-retries",
		    val, 100);
		return 1;
	case OPT_NO_REPAIR:
		r->vo.no_repair = 1;
		return 1;
	case OPT_NO_RETRY:
		r->no_retry = 1;
		return 1;
	case OPT_CLOSE:
		r->vo.close = 1;
		return 1;
	case OPT_CHECK:
		r->checks[r->vo.nchecks++] = val;
		return 1;
	default:
		return cli_suspend_opt(&r->guard.opts, ch, val);
	}
}

static int
run(int argc, char *argv[])
{
	static struct validate_run r;
	struct cli opt = { 0 };
	struct cli_loop loop = { 0 };
	struct saop_schema *schema;
	struct saop_err e;
	size_t i;
	int status, first;

	cli_init("saop-validate", options, "[file ...]",
	    "Validate model output against a JSON Schema (the SAOP envelope "
	    "by default);\nrepair it locally, else ask the model to correct "
	    "it, else escalate.");
	if ((r.refs = calloc((size_t)argc + 1, sizeof(*r.refs))) == NULL ||
	    (r.checks = calloc((size_t)argc + 1, sizeof(*r.checks))) == NULL)
		abort();
	r.vo.max_retries = SAOP_MAX_CORRECTION_RETRIES;
	cli_settings(options, argc, argv);
	if (saop_suspend_opts_from_env(&r.guard.opts, &e) != 0)
		cli_die(&e);
	r.vo.max_retries = cli_env_correction_retries(r.vo.max_retries);
	first = cli_getopt(&opt, argc, argv, own_opt, &r);
	cli_operands(argc, argv, first, CLI_FILES);
	/* A check that cannot run stops the run before any record. */
	for (i = 0; i < r.vo.nchecks; i++)
		if (saop_check_runnable(r.checks[i], &e) != 0)
			cli_die(&e);
	r.vo.checks = r.checks;
	r.so.ref_dirs = r.refs;
	if (r.schema_path == NULL)
		r.schema_path = cli_env_schema();
	if (r.schema_path != NULL && strcmp(r.schema_path, "envelope") == 0)
		r.schema_path = NULL;
	schema = r.schema_path != NULL ? saop_schema_load(r.schema_path,
	    &r.so, &e) : saop_schema_envelope_v1(&e);
	if (schema == NULL)
		cli_die(&e);
	r.vo.schema = schema;
	r.vo.max_answer = opt.max_record;
	cli_llm_config(&opt, &r.cfg);
	cli_budget(&opt, &r.cfg, &r.budget);
	r.vo.budget = &r.budget;
	r.model = !r.no_retry && (opt.dry_run || saop_llm_configured(&r.cfg));
	saop_suspend_opts_for(&r.guard.opts, "saop-validate", &r.cfg);
	cli_catch_signals(&r.guard.opts);
	/* The correction calls carry a given schema in the provider's
	 * structured-output field too (dropped once a server refuses it). */
	if (r.schema_path != NULL) {
		r.cfg.schema = saop_schema_document(schema);
		r.cfg.schema_mode = SAOP_SCHEMA_NATIVE;
	}
	r.sg.inner = r.guard.opts.model;
	r.sg.cfg = &r.cfg;
	r.guard.opts.model = saop_schema_model(&r.sg);
	if (!r.no_retry && !r.model && opt.verbose)
		cli_warn("no model configured (set SAOP_API_KEY or "
		    "SAOP_API_BASE): only validating");
	loop.o = &opt;
	cli_loop_inputs(&loop, argc, argv, first);
	loop.record = validate_one;
	loop.raw_out = raw_out;
	loop.no_write = opt.dry_run && r.model;
	loop.arg = &r;
	status = cli_run(&loop);
	saop_schema_free(schema);
	saop_llm_config_free(&r.cfg);
	free(r.refs);
	free(r.checks);
	return status;
}

/* saop-validate: run(), its status settled (cli_exit()).  Returns it. */
int
main(int argc, char *argv[])
{
	return cli_exit(run(argc, argv));
}
