/*
 * schema-suite.c: run JSON-Schema-Test-Suite (the files of tests/DRAFT, not
 * optional/) through libsaop in this process, or through a program (one
 * saop-validate process per test, as users run it), and print
 * "N passed, M failed" per draft.
 *
 * usage: schema-suite [-Fv] [-p program] [-m min-percent] [-f filter]
 *            suite-dir draft...
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "saop.h"

static int verbose;
static const char *program;
static const char *filter;
static int format_assert;
static char tmpdir[] = "/tmp/schema-suite.XXXXXX";
static char refdir[4096];

static int
cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The schema a draft's test means: draft7 tests carry no $schema. */
static json_t *
with_dialect(json_t *schema, const char *draft)
{
	json_t *s = json_deep_copy(schema);

	if (strcmp(draft, "draft7") == 0 && json_is_object(s) &&
	    json_object_get(s, "$schema") == NULL)
		json_object_set_new(s, "$schema",
		    json_string("http://json-schema.org/draft-07/schema#"));
	return s;
}

/*
 * Run one test in this process: 1 valid, 0 invalid, -1 error (why).  The
 * verdict with and without error collection must agree, and an invalid
 * instance must come with errors.
 */
static int
run_lib(struct saop_schema *s, json_t *data, char *why, size_t len)
{
	struct saop_err e;
	json_t *errors = NULL;
	int fast, full;

	fast = saop_schema_validate(s, data, NULL, &e);
	if (fast < 0) {
		snprintf(why, len, "validate: %s", e.msg);
		return -1;
	}
	full = saop_schema_validate(s, data, &errors, &e);
	if (full != fast) {
		snprintf(why, len, "verdicts differ with errors collected");
		json_decref(errors);
		return -1;
	}
	if (full == 0 && json_array_size(errors) == 0) {
		snprintf(why, len, "invalid but no error reported");
		json_decref(errors);
		return -1;
	}
	if (full == 0 && verbose > 1) {
		char *t = json_dumps(errors, JSON_COMPACT);

		fprintf(stderr, "    errors: %s\n", t ? t : "?");
		free(t);
	}
	json_decref(errors);
	return fast;
}

/* Run one test through the program: 1 valid (exit 0), 0 (exit 1), -1. */
static int
run_program(const char *schemafile, json_t *data, char *why, size_t len)
{
	char inst[4200], arg[4200];
	pid_t pid;
	int status, fd;

	snprintf(inst, sizeof(inst), "%s/instance.json", tmpdir);
	if (json_dump_file(data, inst, JSON_ENCODE_ANY | JSON_COMPACT) != 0) {
		snprintf(why, len, "cannot write the instance");
		return -1;
	}
	snprintf(arg, sizeof(arg), "http://localhost:1234/=%s", refdir);
	if ((pid = fork()) == -1) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if ((fd = open(inst, O_RDONLY)) == -1 || dup2(fd, 0) == -1)
			_exit(126);
		if ((fd = open("/dev/null", O_WRONLY)) == -1 ||
		    dup2(fd, 1) == -1 || (verbose < 2 && dup2(fd, 2) == -1))
			_exit(126);
		if (format_assert)
			execlp(program, program, "-R", "-q", "--no-retry",
			    "--format-assert", "--ref-dir", arg, "--schema",
			    schemafile, (char *)NULL);
		else
			execlp(program, program, "-R", "-q", "--no-retry",
			    "--ref-dir", arg, "--schema", schemafile,
			    (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) == -1 || !WIFEXITED(status)) {
		snprintf(why, len, "%s did not exit normally", program);
		return -1;
	}
	if (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1)
		return WEXITSTATUS(status) == 0;
	snprintf(why, len, "%s exited %d", program, WEXITSTATUS(status));
	return -1;
}

/* Run the tests of one file; add to *pass and *fail. */
static void
run_file(const char *path, const char *name, const char *draft,
    long *pass, long *fail)
{
	const char *dirs[2] = { refdir, NULL };
	struct saop_schema_opts opts = { dirs, format_assert };
	char rd[4200], schemafile[4200], why[600];
	json_error_t je;
	json_t *doc, *group, *test, *schema;
	size_t i, j;

	snprintf(rd, sizeof(rd), "http://localhost:1234/=%s", refdir);
	dirs[0] = rd;
	if ((doc = json_load_file(path, JSON_ALLOW_NUL, &je)) == NULL) {
		printf("%s: cannot read: %s\n", name, je.text);
		(*fail)++;
		return;
	}
	json_array_foreach(doc, i, group) {
		const char *gd = json_string_value(json_object_get(group,
		    "description"));
		struct saop_schema *s = NULL;
		struct saop_err e;

		if (filter != NULL && strstr(name, filter) == NULL &&
		    (gd == NULL || strstr(gd, filter) == NULL))
			continue;
		schema = with_dialect(json_object_get(group, "schema"), draft);
		if (program == NULL)
			s = saop_schema_compile(schema, NULL, &opts, &e);
		else {
			snprintf(schemafile, sizeof(schemafile),
			    "%s/schema.json", tmpdir);
			if (json_dump_file(schema, schemafile,
			    JSON_ENCODE_ANY) != 0) {
				fprintf(stderr, "cannot write %s\n",
				    schemafile);
				exit(2);
			}
		}
		json_array_foreach(json_object_get(group, "tests"), j, test) {
			int want = json_is_true(json_object_get(test, "valid"));
			int got;

			why[0] = '\0';
			if (program == NULL && s == NULL) {
				got = -1;
				snprintf(why, sizeof(why), "compile: %s",
				    e.msg);
			} else if (program == NULL)
				got = run_lib(s, json_object_get(test, "data"),
				    why, sizeof(why));
			else
				got = run_program(schemafile,
				    json_object_get(test, "data"), why,
				    sizeof(why));
			if (got == want) {
				(*pass)++;
				continue;
			}
			(*fail)++;
			if (verbose)
				printf("FAIL %s/%s: %s: %s: %s%s%s\n", draft,
				    name, gd, json_string_value(
				    json_object_get(test, "description")),
				    got < 0 ? "error" : got ? "valid" :
				    "invalid", why[0] ? ": " : "", why);
		}
		saop_schema_free(s);
		json_decref(schema);
	}
	json_decref(doc);
}

int
main(int argc, char *argv[])
{
	double min = 0;
	int ch, i, rc = 0;

	while ((ch = getopt(argc, argv, "Ff:m:p:v")) != -1)
		switch (ch) {
		case 'F':
			format_assert = 1;
			break;
		case 'f':
			filter = optarg;
			break;
		case 'm':
			min = strtod(optarg, NULL);
			break;
		case 'p':
			program = optarg;
			break;
		case 'v':
			verbose++;
			break;
		default:
			goto usage;
		}
	if (argc - optind < 2)
		goto usage;
	snprintf(refdir, sizeof(refdir), "%s/remotes", argv[optind]);
	if (program != NULL && mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	for (i = optind + 1; i < argc; i++) {
		char dir[4096], path[8192];
		char **names = NULL;
		size_t n = 0, k;
		long pass = 0, fail = 0;
		struct dirent *d;
		DIR *dp;

		snprintf(dir, sizeof(dir), "%s/tests/%s", argv[optind],
		    argv[i]);
		if ((dp = opendir(dir)) == NULL) {
			fprintf(stderr, "schema-suite: %s: %s\n", dir,
			    strerror(errno));
			return 2;
		}
		while ((d = readdir(dp)) != NULL) {
			size_t l = strlen(d->d_name);

			if (l < 6 || strcmp(d->d_name + l - 5, ".json") != 0)
				continue;
			char **nn = realloc(names, (n + 1) * sizeof(*names));

			if (nn == NULL || (names = nn, names[n] =
			    strdup(d->d_name)) == NULL) {
				perror("schema-suite");
				return 2;
			}
			n++;
		}
		closedir(dp);
		qsort(names, n, sizeof(*names), cmp);
		for (k = 0; k < n; k++) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[k]);
			run_file(path, names[k], argv[i], &pass, &fail);
			free(names[k]);
		}
		free(names);
		printf("%s: %ld passed, %ld failed (%.2f%%)\n", argv[i], pass,
		    fail, pass + fail ? 100.0 * pass / (pass + fail) : 0.0);
		if (pass + fail == 0 || 100.0 * pass / (pass + fail) < min) {
			printf("%s: below the bar of %.2f%%\n", argv[i], min);
			rc = 1;
		}
	}
	if (program != NULL) {
		char p[4200];

		snprintf(p, sizeof(p), "%s/schema.json", tmpdir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/instance.json", tmpdir);
		unlink(p);
		rmdir(tmpdir);
	}
	return rc;
usage:
	fprintf(stderr, "usage: schema-suite [-Fv] [-p program] "
	    "[-m min-percent] [-f filter] suite-dir draft...\n");
	return 2;
}
