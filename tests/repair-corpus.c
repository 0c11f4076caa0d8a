/*
 * repair-corpus: run a repair corpus through saop's local repair.
 *
 *   repair-corpus [--report] [--repeat N] [--json] CORPUS
 *
 * CORPUS is NDJSON, one case a line: {"in": text, "want": value} or
 * {"in": text, "refuse": true}, with "kind" (a name for the report),
 * "schema" ("envelope" or a schema object) and "close" (true: the
 * --close rules) when wanted.  A text that parses as it is is its own
 * value; else saop_repair_with() repairs it (with the schema and close
 * when given).  Each case is right (the intended value, or refused when a
 * refusal is intended), wrong (a value that is not the intended one) or
 * refused (no value where one was intended).  Prints the cases that are
 * not right, then "right R wrong W refused F of N"; with --json, one
 * object {"right", "wrong", "refused", "cases", "bytes", "seconds"} and,
 * per wrong case, its line.  Exits 1 on any wrong value, and (without
 * --report) on any case that is not right; 2 on a bad corpus.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "saop.h"

/* The outcome of one case. */
enum { RIGHT, WRONG, REFUSED };

/* Seconds on a monotonic clock. */
static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The value text[0..len) stands for: itself when it parses, else its
 * repair (with schema and close).  Returns a new reference, or NULL when
 * refused.
 */
static json_t *
value_of(const char *text, size_t len, const struct saop_schema *schema,
    int close)
{
	struct saop_repair_opts ro;
	struct saop_err e;
	json_error_t je;
	json_t *v, *rep, *readings;
	char *out;
	size_t out_len;

	/* Valid JSON is its own value (an integer beyond 64 bits too). */
	if ((v = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
	    &je)) != NULL || (v = json_loadb(text, len, JSON_DECODE_ANY |
	    JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &je)) != NULL)
		return v;
	ro.schema = schema;
	ro.close = close;
	if (saop_repair_with(text, len, &ro, &out, &out_len, &rep, &readings,
	    &e) != 1) {
		json_decref(readings);
		return NULL;
	}
	v = json_loadb(out, out_len, JSON_DECODE_ANY | JSON_ALLOW_NUL |
	    JSON_DECODE_INT_AS_REAL, &je);
	free(out);
	json_decref(rep);
	return v;
}

/*
 * Are a and b the same JSON value, numbers compared by value (1 and 1.0
 * are the same number)?  1 or 0.
 */
static int
same(const json_t *a, const json_t *b)
{
	const char *k;
	json_t *m;
	size_t i;

	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (json_typeof(a) != json_typeof(b))
		return 0;
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b))
			return 0;
		json_array_foreach(a, i, m)
			if (!same(m, json_array_get(b, i)))
				return 0;
		return 1;
	}
	if (json_is_object(a)) {
		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach((json_t *)a, k, m)
			if (json_object_get(b, k) == NULL ||
			    !same(m, json_object_get(b, k)))
				return 0;
		return 1;
	}
	return json_equal(a, b);
}

/* The schema a case names (new), NULL for none; exits 2 when bad. */
static struct saop_schema *
schema_of(const json_t *c, long line)
{
	const json_t *s = json_object_get(c, "schema");
	struct saop_schema *sc;
	struct saop_err e;

	if (s == NULL)
		return NULL;
	sc = json_is_string(s) ? saop_schema_envelope_v1(&e) :
	    saop_schema_compile(s, NULL, NULL, &e);
	if (sc == NULL) {
		fprintf(stderr, "repair-corpus: line %ld: %s\n", line, e.msg);
		exit(2);
	}
	return sc;
}

/* Read the corpus, run each case, print the counts; see the top. */
int
main(int argc, char *argv[])
{
	int report = 0, as_json = 0, repeat = 1, a, r;
	long line = 0, count[3] = { 0, 0, 0 };
	size_t bytes = 0;
	double seconds = 0;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	json_t *wrong = json_array();

	for (a = 1; a < argc - 1; a++) {
		if (strcmp(argv[a], "--report") == 0)
			report = 1;
		else if (strcmp(argv[a], "--json") == 0)
			as_json = 1;
		else if (strcmp(argv[a], "--repeat") == 0 && a + 1 < argc - 1)
			repeat = atoi(argv[++a]);
		else
			break;
	}
	if (a != argc - 1 || repeat < 1) {
		fprintf(stderr, "usage: repair-corpus [--report] [--json] "
		    "[--repeat N] CORPUS\n");
		return 2;
	}
	if ((f = fopen(argv[a], "r")) == NULL) {
		perror(argv[a]);
		return 2;
	}
	while ((n = getline(&buf, &cap, f)) > 0) {
		json_error_t je;
		json_t *c, *want, *got = NULL;
		struct saop_schema *sc;
		const char *text;
		size_t len;
		int refuse, close, out;
		double t0;

		line++;
		if ((c = json_loadb(buf, (size_t)n, JSON_DECODE_INT_AS_REAL,
		    &je)) == NULL ||
		    (text = json_string_value(json_object_get(c, "in"))) ==
		    NULL) {
			fprintf(stderr, "repair-corpus: line %ld: not a case\n",
			    line);
			return 2;
		}
		len = json_string_length(json_object_get(c, "in"));
		want = json_object_get(c, "want");
		refuse = json_is_true(json_object_get(c, "refuse"));
		close = json_is_true(json_object_get(c, "close"));
		sc = schema_of(c, line);
		t0 = now();
		for (r = 0; r < repeat; r++) {
			json_decref(got);
			got = value_of(text, len, sc, close);
		}
		seconds += now() - t0;
		bytes += len * (size_t)repeat;
		if (got == NULL)
			out = refuse ? RIGHT : REFUSED;
		else if (refuse || want == NULL || !same(got, want))
			out = WRONG;
		else
			out = RIGHT;
		count[out]++;
		if (out != RIGHT && !as_json) {
			char *g = got ? json_dumps(got, JSON_ENCODE_ANY |
			    JSON_COMPACT) : NULL;

			printf("%s line %ld (%s): %s -> %s\n", out == WRONG ?
			    "WRONG" : "REFUSED", line,
			    json_string_value(json_object_get(c, "kind")),
			    buf[n - 1] == '\n' ? (buf[n - 1] = '\0', buf) :
			    buf, g ? g : "(refused)");
			free(g);
		}
		if (out == WRONG)
			json_array_append_new(wrong, json_integer(line));
		json_decref(got);
		saop_schema_free(sc);
		json_decref(c);
	}
	free(buf);
	fclose(f);
	if (as_json) {
		json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:O}",
		    "right", (json_int_t)count[RIGHT], "wrong",
		    (json_int_t)count[WRONG], "refused",
		    (json_int_t)count[REFUSED], "cases", (json_int_t)line,
		    "bytes", (json_int_t)bytes, "seconds", seconds,
		    "wrong_lines", wrong);

		json_dumpf(o, stdout, JSON_COMPACT);
		putchar('\n');
		json_decref(o);
	} else {
		printf("right %ld wrong %ld refused %ld of %ld\n",
		    count[RIGHT], count[WRONG], count[REFUSED], line);
	}
	json_decref(wrong);
	if (count[WRONG] > 0)
		return 1;
	return !report && count[REFUSED] > 0 ? 1 : 0;
}
