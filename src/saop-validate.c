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
	OPT_NO_RETRY
};

static const char own_help[] =
"      --schema FILE   validate against the JSON Schema in FILE\n"
"                      (default: the SAOP envelope v1)\n"
"      --ref-dir URI=DIR  read $refs under URI from DIR (repeatable)\n"
"      --format-assert  assert \"format\" instead of annotating\n"
"      --max-retries N  correction turns per record\n"
"                      ($SAOP_MAX_CORRECTION_RETRIES, 2)\n"
"      --no-repair     do not repair answers locally\n"
"      --no-retry      only validate: send no correction turn\n";

/* Print the errors of an invalid record on stderr, one line each. */
static void
report(const struct cli *o, long line, const json_t *rec)
{
	const json_t *errors, *err;
	size_t i;

	if (o->quiet)
		return;
	errors = json_object_get(json_object_get(rec, "validate"), "errors");
	json_array_foreach(errors, i, err) {
		char *text = saop_validate_error_text(err);

		cli_warn("line %ld: %s", line, text ? text : "out of memory");
		free(text);
	}
}

/* Write rec, or with -R its envelope alone; nothing with -q. */
static void
emit(const struct cli *o, const json_t *rec)
{
	struct saop_err e;
	const json_t *env;

	if (o->quiet)
		return;
	if (o->raw_out) {
		env = json_object_get(rec, "envelope");
		if (env == NULL || !json_is_true(json_object_get(
		    json_object_get(rec, "validate"), "valid")))
			return;
		if (json_dumpf(env, stdout, JSON_COMPACT | JSON_ENCODE_ANY |
		    JSON_PRESERVE_ORDER) != 0 || putchar('\n') == EOF) {
			saop_err_clear(&e);
			e.code = SAOP_EIO;
			snprintf(e.msg, sizeof(e.msg), "write error");
			cli_die(&e);
		}
		return;
	}
	if (saop_record_write(stdout, rec, &e) != 0)
		cli_die(&e);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		CLI_LONGOPTS,
		{ "schema", required_argument, NULL, OPT_SCHEMA },
		{ "ref-dir", required_argument, NULL, OPT_REF_DIR },
		{ "format-assert", no_argument, NULL, OPT_FORMAT_ASSERT },
		{ "max-retries", required_argument, NULL, OPT_MAX_RETRIES },
		{ "no-repair", no_argument, NULL, OPT_NO_REPAIR },
		{ "no-retry", no_argument, NULL, OPT_NO_RETRY },
		{ NULL, 0, NULL, 0 }
	};
	struct cli opt = { 0 };
	struct saop_llm_config cfg;
	struct saop_schema_opts so = { 0 };
	struct saop_validate_opts vo;
	struct saop_schema *schema;
	struct cli_records recs;
	struct saop_err e, stop;
	const char *schema_path = NULL, *env, **refs;
	json_t *rec, *req;
	unsigned long n = 0;
	size_t nrefs = 0;
	long line = 0;
	int ch, rc, status = CLI_OK, stopped = 0, no_retry = 0, model;

	cli_init("saop-validate", "[-hqRrVv] [--schema file] "
	    "[--ref-dir uri=dir] [--format-assert] [--max-retries n] "
	    "[--no-repair] [--no-retry] [--db path] [--log file] [--task id] "
	    "[--dry-run] [file]",
	    "Validate model output against a JSON Schema (the SAOP envelope "
	    "by default);\nrepair it locally, else ask the model to correct "
	    "it, else escalate.", own_help);
	if ((refs = calloc((size_t)argc + 1, sizeof(*refs))) == NULL)
		abort();
	memset(&vo, 0, sizeof(vo));
	vo.max_retries = SAOP_MAX_CORRECTION_RETRIES;
	if ((env = getenv("SAOP_MAX_CORRECTION_RETRIES")) != NULL &&
	    *env != '\0')
		vo.max_retries = (int)cli_count("SAOP_MAX_CORRECTION_RETRIES",
		    env, 100);
	while ((ch = getopt_long(argc, argv, CLI_SHORTOPTS, longopts,
	    NULL)) != -1) {
		switch (ch) {
		case OPT_SCHEMA:
			schema_path = optarg;
			continue;
		case OPT_REF_DIR:
			if (strchr(optarg, '=') == NULL)
				cli_usage_error("--ref-dir: '%s' is not "
				    "URI=DIR", optarg);
			refs[nrefs++] = optarg;
			continue;
		case OPT_FORMAT_ASSERT:
			so.format_assert = 1;
			continue;
		case OPT_MAX_RETRIES:
			vo.max_retries = (int)cli_count("--max-retries",
			    optarg, 100);
			continue;
		case OPT_NO_REPAIR:
			vo.no_repair = 1;
			continue;
		case OPT_NO_RETRY:
			no_retry = 1;
			continue;
		default:
			break;
		}
		if (!cli_common_opt(&opt, ch, optarg))
			cli_usage(EX_USAGE);
	}
	if (argc - optind > 1 || (opt.raw_in && argc - optind > 0))
		cli_usage(EX_USAGE);
	so.ref_dirs = refs;
	schema = schema_path != NULL ? saop_schema_load(schema_path, &so, &e) :
	    saop_schema_envelope_v1(&e);
	if (schema == NULL)
		cli_die(&e);
	vo.schema = schema;
	vo.max_answer = opt.max_record;
	memset(&cfg, 0, sizeof(cfg));
	if (saop_llm_config_from_env(&cfg, &e) != 0)
		cli_die(&e);
	model = !no_retry && (opt.dry_run || saop_llm_configured(&cfg));
	if (!no_retry && !model && opt.verbose)
		cli_warn("no model configured (set SAOP_API_KEY or "
		    "SAOP_API_BASE): only validating");
	saop_err_clear(&stop);

	cli_records_open(&recs, &opt, optind < argc ? argv[optind] : "-");
	while ((rec = cli_records_next(&recs)) != NULL) {
		line = recs.line;
		cli_record_task(&opt, rec);
		if (opt.dry_run && model) {
			if ((rc = saop_validate_plan(rec, &vo, &req, &e)) < 0)
				goto bad;
			if (rc == 1) {
				if (saop_llm_dry_run(stdout, &cfg, req,
				    &e) != 0)
					cli_die(&e);
				json_decref(req);
				status = cli_worse(status, CLI_FLAGGED);
			}
			json_decref(rec);
			continue;
		}
		vo.llm = model && !stopped ? &cfg : NULL;
		vo.store = vo.llm != NULL ? cli_store(&opt) : NULL;
		/* With -q and no model nobody reads the record after. */
		vo.no_envelope = opt.quiet && vo.llm == NULL;
		rc = saop_validate_record(rec, &vo, &e);
		if (rc < 0) {
			switch (e.code) {
			case SAOP_ENETWORK:
			case SAOP_ERATELIMIT:
			case SAOP_EREFUSED:
			case SAOP_EBADREQ:
			case SAOP_EPREFILL:
			case SAOP_EPROTO:
			case SAOP_ECONFIG:
			case SAOP_ELIMIT:
				/* The record goes on as it stands; the rest
				   are only validated. */
				if (e.line == 0)
					e.line = line;
				cli_warn_err(&e);
				stop = e;
				stopped = 1;
				rc = CLI_FLAGGED;
				break;
			default:
				goto bad;
			}
		}
		if (rc != CLI_OK)
			report(&opt, line, rec);
		emit(&opt, rec);
		status = cli_worse(status, rc);
		json_decref(rec);
		cli_progress(&opt, ++n, 0);
	}
	cli_progress(&opt, n, 1);
	cli_records_close(&recs);
	saop_schema_free(schema);
	saop_llm_config_free(&cfg);
	free(refs);
	if (stopped)
		return saop_err_exit_status(stop.code);
	return status;
bad:
	if (e.line == 0)
		e.line = line;
	cli_die(&e);
}
