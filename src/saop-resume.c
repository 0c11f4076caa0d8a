/* saop-resume: continue truncated model output and merge the pieces. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
	OPT_MAX_ATTEMPTS = CLI_OPT_FIRST_OWN,
	OPT_CONTINUATION,
	OPT_CONTEXT
};

static const char own_help[] =
"      --max-attempts N  continuation calls per record (default 2)\n"
"      --continuation F  prefill, user or auto (default auto)\n"
"      --context C       full (the partial output) or tail (only the last\n"
"                        valid token) (default full)\n";

/* The model call behind saop_resume_record(). */
static int
llm_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	return saop_llm_call(arg, request, a, e);
}

/* Write rec's result: the record, or with -R only its raw text. */
static void
emit(const struct cli *o, const json_t *rec)
{
	struct saop_err e;
	const char *raw;
	size_t len;

	if (o->quiet)
		return;
	if (o->raw_out) {
		if ((raw = saop_record_raw(rec, &len)) != NULL) {
			fwrite(raw, 1, len, stdout);
			if (len == 0 || raw[len - 1] != '\n')
				putchar('\n');
		}
		return;
	}
	if (saop_record_write(stdout, rec, &e) != 0)
		cli_die(&e);
}

/* Print what would be sent for rec (--dry-run). */
static void
dry_run(const struct saop_llm_config *cfg, struct saop_resume_opts *ro,
    const json_t *rec)
{
	struct saop_err e;
	json_t *req;
	int rc;

	if ((rc = saop_resume_plan(rec, ro, &req, &e)) < 0)
		cli_die(&e);
	if (rc == 0)
		return;
	if (saop_llm_dry_run(stdout, cfg, req, &e) != 0)
		cli_die(&e);
	json_decref(req);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		CLI_LONGOPTS,
		{ "max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS },
		{ "continuation", required_argument, NULL, OPT_CONTINUATION },
		{ "context", required_argument, NULL, OPT_CONTEXT },
		{ NULL, 0, NULL, 0 }
	};
	struct cli opt = { 0 };
	struct saop_llm_config cfg;
	struct saop_resume_opts ro;
	struct saop_resume_outcome oc;
	struct cli_records recs;
	struct saop_err e, stop;
	json_t *rec;
	unsigned long n = 0;
	int ch, rc, status = CLI_OK, stopped = 0, rec_status;

	cli_init("saop-resume", "[-hqRrVv] [--max-attempts n] "
	    "[--continuation prefill|user|auto] [--context full|tail] "
	    "[--db path] [--log file] [--task id] [--dry-run] [file]",
	    "Continue truncated JSON output from its last valid token and "
	    "merge the pieces.", own_help);
	memset(&ro, 0, sizeof(ro));
	ro.max_attempts = SAOP_MAX_RESUME_ATTEMPTS;
	while ((ch = getopt_long(argc, argv, CLI_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case OPT_MAX_ATTEMPTS:
			ro.max_attempts = (int)cli_count("--max-attempts",
			    optarg, 100);
			if (ro.max_attempts == 0)
				cli_usage_error("--max-attempts: must be at "
				    "least 1");
			continue;
		case OPT_CONTINUATION:
			if (strcmp(optarg, "auto") == 0)
				ro.form = SAOP_RESUME_AUTO;
			else if (strcmp(optarg, "prefill") == 0)
				ro.form = SAOP_RESUME_PREFILL;
			else if (strcmp(optarg, "user") == 0)
				ro.form = SAOP_RESUME_USER;
			else
				cli_usage_error("--continuation: '%s' is not "
				    "prefill, user or auto", optarg);
			continue;
		case OPT_CONTEXT:
			if (strcmp(optarg, "full") == 0)
				ro.context = SAOP_RESUME_FULL;
			else if (strcmp(optarg, "tail") == 0)
				ro.context = SAOP_RESUME_TAIL;
			else
				cli_usage_error("--context: '%s' is not full "
				    "or tail", optarg);
			continue;
		default:
			break;
		}
		if (!cli_common_opt(&opt, ch, optarg))
			cli_usage(EX_USAGE);
	}
	if (argc - optind > 1 || (opt.raw_in && argc - optind > 0))
		cli_usage(EX_USAGE);
	memset(&cfg, 0, sizeof(cfg));
	if (saop_llm_config_from_env(&cfg, &e) != 0)
		cli_die(&e);
	ro.provider = cfg.provider;
	ro.call = llm_call;
	ro.call_arg = &cfg;
	ro.task_id = cli_task_id(&opt);
	saop_err_clear(&stop);

	cli_records_open(&recs, &opt, optind < argc ? argv[optind] : "-");
	while ((rec = cli_records_next(&recs)) != NULL) {
		cli_record_task(&opt, rec);
		if (opt.dry_run) {
			dry_run(&cfg, &ro, rec);
			json_decref(rec);
			continue;
		}
		if (!stopped && !saop_llm_configured(&cfg) &&
		    (rc = saop_resume_plan(rec, &ro, NULL, &e)) != 0) {
			if (rc < 0)
				goto bad;
			stop.code = SAOP_ECONFIG;
			snprintf(stop.msg, sizeof(stop.msg), "no model "
			    "configured (set SAOP_API_KEY or SAOP_API_BASE): "
			    "truncated records pass through unresumed");
			cli_warn_err(&stop);
			stopped = 1;
		}
		ro.no_call = stopped;
		if (!ro.no_call)
			ro.store = cli_store(&opt);
		if ((rc = saop_resume_record(rec, &ro, &oc, &e)) < 0) {
			switch (e.code) {
			case SAOP_ENETWORK:
			case SAOP_ERATELIMIT:
			case SAOP_EREFUSED:
			case SAOP_EBADREQ:
			case SAOP_EPREFILL:
			case SAOP_EPROTO:
			case SAOP_ECONFIG:
				/* The record keeps its progress; the rest
				   pass through without a call. */
				cli_warn_err(&e);
				stop = e;
				stopped = 1;
				break;
			default:
				goto bad;
			}
		}
		if (oc.prefill_refused && opt.verbose)
			cli_warn("the model refuses assistant prefill: "
			    "using the user-turn form from now on");
		emit(&opt, rec);
		rec_status = cli_state_status(json_string_value(
		    json_object_get(rec, "state")));
		status = cli_worse(status, rec_status);
		json_decref(rec);
		cli_progress(&opt, ++n, 0);
	}
	cli_progress(&opt, n, 1);
	cli_records_close(&recs);
	saop_llm_config_free(&cfg);
	if (stopped)
		return saop_err_exit_status(stop.code);
	return status;
bad:
	if (!opt.raw_in && e.line == 0)
		e.line = recs.line;
	cli_die(&e);
}
