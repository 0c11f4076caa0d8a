/*
 * repair-read.c: the readings of local repair and their costs (see
 * repair-private.h for the rooms).  A pass of the lexer is one reading;
 * where the text can be read more than one way, the pass takes a choice
 * (saop__rep_choose()) and the search runs it again for every other
 * choice (a depth-first walk, replayed from the start).  Every reading
 * passes through keep(), which holds the invariant (no string swallows
 * structure, saop__rep_swallowed()) and keeps those at the least cost;
 * then the candidates: the values the readings give, closed when cut.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "repair-private.h"

/*
 * Start a pass over s[0..n), writing into out (emptied first).  The lexer
 * borrows out until saop__rep_pass_end().
 */
void
saop__rep_pass_begin(struct lex *lx, const char *s, size_t n,
    struct saop__buf *out)
{
	lx->s = s;
	lx->n = n;
	lx->i = 0;
	lx->out = out;
	lx->repairs = 0;
	lx->cost = 0;
	lx->tokens = 0;
	lx->truncated = 0;
	lx->last_string = 0;
	lx->doubt = 0;
	lx->nmarks = 0;
	lx->nvals = 0;
	lx->cpos = 0;
	out->len = 0;
}

/* End the pass: the lexer no longer holds its output buffer. */
void
saop__rep_pass_end(struct lex *lx)
{
	lx->out = NULL;
}

/* Forget the readings kept. */
void
saop__rep_readings_clear(struct lex *lx)
{
	size_t k;

	for (k = 0; k < lx->nrd; k++) {
		free(lx->rd[k].text);
		free(lx->rd[k].spans);
	}
	lx->nrd = 0;
	lx->overflow = 0;
}

/*
 * Keep the reading the pass just made (out), when it costs no more than
 * those kept: a cheaper one replaces them.  A reading the schema does not
 * anchor is not kept; one with a string that swallows structure
 * (saop__rep_swallowed()) is doubtful.  Returns 0, or -1 out of memory.
 */
static int
keep(struct lex *lx, struct saop__buf *out)
{
	struct reading *r;
	size_t k;
	int a, sw;

	/* Nothing written (a wrapper's name, then the cut): no value. */
	if (out->len == 0)
		return 0;
	if ((a = saop__rep_anchor_check(lx, out)) == 0)
		return 0;
	if ((sw = saop__rep_swallowed(lx, out, a)) < 0) {
		lx->nomem = 1;
		return -1;
	}
	if (lx->doubt || sw) {
		if (lx->cost < lx->doubt_best)
			lx->doubt_best = lx->cost;
		return 0;
	}
	if (lx->cost < lx->best) {
		saop__rep_readings_clear(lx);
		lx->best = lx->cost;
	}
	for (k = 0; k < lx->nrd; k++)
		if (lx->rd[k].len == out->len && lx->rd[k].end == lx->i &&
		    memcmp(lx->rd[k].text, out->data, out->len) == 0)
			return 0;
	if (lx->nrd == MAX_READINGS) {
		lx->overflow = 1;
		return 0;
	}
	r = &lx->rd[lx->nrd];
	memset(r, 0, sizeof(*r));
	if ((r->text = malloc(out->len + 1)) == NULL ||
	    (r->spans = malloc(2 * lx->nvals * sizeof(size_t))) == NULL) {
		free(r->text);
		lx->nomem = 1;
		return -1;
	}
	memcpy(r->text, out->data, out->len);
	r->text[out->len] = '\0';
	r->len = out->len;
	r->repairs = lx->repairs;
	r->cost = lx->cost;
	r->truncated = lx->truncated;
	r->nvals = lx->nvals;
	memcpy(r->spans, lx->vals, 2 * lx->nvals * sizeof(size_t));
	memcpy(r->gap, lx->gap, sizeof(r->gap));
	r->end = lx->i;
	lx->nrd++;
	return 0;
}

/*
 * Every reading of s[0..n) at the least cost (see one_pass), into lx->rd
 * (cleared first): the search tries each choice of each pass in turn,
 * depth first.  Returns the number kept (lx->overflow when it is not all
 * of them), or -1 out of memory.
 */
int
saop__rep_search(struct lex *lx, const char *s, size_t n)
{
	struct saop__buf out = { NULL, 0, 0 };
	size_t runs = 0, max_runs = SEARCH_BYTES / (n + 1), k;

	if (max_runs > MAX_RUNS)
		max_runs = MAX_RUNS;
	if (max_runs < MIN_RUNS)
		max_runs = MIN_RUNS;
	saop__rep_readings_clear(lx);
	lx->best = SIZE_MAX;
	lx->doubt_best = SIZE_MAX;
	lx->ndec = 0;
	for (;;) {
		int rc;

		saop__rep_pass_begin(lx, s, n, &out);
		rc = saop__rep_one_pass(lx);
		saop__rep_pass_end(lx);
		if (lx->nomem)
			break;
		if (rc == 0 && keep(lx, &out) != 0)
			break;
		lx->ndec = lx->cpos;
		/* The next choice: the last one with another option. */
		for (k = lx->ndec; k > 0; k--)
			if (lx->dec[k - 1] + 1 < lx->opts[k - 1])
				break;
		if (k == 0)
			break;
		lx->dec[k - 1]++;
		lx->ndec = k;
		if (++runs >= max_runs) {
			lx->overflow = 1;
			break;
		}
	}
	free(out.data);
	if (lx->nomem) {
		saop__rep_readings_clear(lx);
		return -1;
	}
	/* A doubtful reading as good as the best: no single reading. */
	if (lx->nrd > 0 && lx->doubt_best <= lx->best)
		lx->overflow = 1;
	return (int)lx->nrd;
}

/*
 * Is out[0..n) strict JSON by the scanner's judgement (complete, no BOM)?
 * The tokenizer passes the bytes of strings and their \u escapes through,
 * so without this a "repair" could hand on invalid UTF-8 or a lone
 * surrogate escape, which no reading makes JSON.  1, 0, or -1 when the
 * scanner ran out of memory.
 */
static int
strict(const char *out, size_t n)
{
	struct saop_detect_result d;
	int ok;

	memset(&d, 0, sizeof(d));
	if (saop_detect_buffer(out, n, 0, &d) != 0)
		return -1;
	ok = d.verdict == SAOP_COMPLETE && !d.bom;
	saop_detect_result_free(&d);
	return ok;
}

/*
 * Is the end of the strict JSON prefix t[0..n) inside a member that holds
 * a call to run: "action", "parameters", "arguments", "tool_call",
 * "tool_calls", "function" (at any depth)?  Such a cut is never closed:
 * a shell command cut mid-string must not be run.  1 or 0.
 */
static int
cut_in_call(const char *t, size_t n)
{
	static const char *const calls[] = { "action", "parameters",
	    "arguments", "tool_call", "tool_calls", "function" };
	size_t i = 0, depth = 0, k, ks = 0, kl = 0;
	int in_key = 0, bad[64];

	memset(bad, 0, sizeof(bad));
	while (i < n) {
		char c = t[i];

		if (c == '"') {
			size_t st = ++i;

			while (i < n && t[i] != '"')
				i += t[i] == '\\' ? 2 : 1;
			ks = st;
			kl = (i < n ? i : n) - st;
			in_key = 1;
			i++;
			continue;
		}
		if (c == ':' && in_key && depth > 0 && depth <= 64) {
			size_t v = i + 1;

			while (v < n && strchr(" \t\r\n", t[v]) != NULL)
				v++;
			bad[depth - 1] = 0;
			/* A whole literal or number (null: no call) is no cut. */
			for (k = 0; k < sizeof(calls) / sizeof(calls[0]); k++)
				if (kl == strlen(calls[k]) &&
				    memcmp(t + ks, calls[k], kl) == 0 &&
				    (v >= n || strchr("{[\"", t[v]) != NULL))
					bad[depth - 1] = 1;
		} else if (c == '{' || c == '[') {
			if (depth < 64)
				bad[depth] = 0;
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth > 0)
				depth--;
		} else if (c == ',' && depth > 0 && depth <= 64) {
			bad[depth - 1] = 0;
		}
		if (c != ' ' && c != '\n' && c != '\t' && c != '\r')
			in_key = 0;
		i++;
	}
	for (k = 0; k < depth && k < 64; k++)
		if (bad[k])
			return 1;
	return 0;
}

/*
 * Close the cut reading r by the scanner's rules (the text up to its
 * close index, then its closing): 1 closed, 0 when nothing received
 * determines a value or the cut is inside a call (cut_in_call()), -1 out
 * of memory.
 */
static int
close_reading(struct reading *r)
{
	struct saop_detect_result d;
	size_t cl;
	char *t;

	if (cut_in_call(r->text, r->len))
		return 0;
	memset(&d, 0, sizeof(d));
	if (saop_detect_buffer(r->text, r->len, 0, &d) != 0)
		return -1;
	if (d.verdict != SAOP_TRUNCATED || !d.has_close || d.closing == NULL) {
		saop_detect_result_free(&d);
		return 0;
	}
	cl = strlen(d.closing);
	if ((t = malloc((size_t)d.close_index + cl + 1)) == NULL) {
		saop_detect_result_free(&d);
		return -1;
	}
	memcpy(t, r->text, (size_t)d.close_index);
	memcpy(t + d.close_index, d.closing, cl + 1);
	free(r->text);
	r->text = t;
	r->len = (size_t)d.close_index + cl;
	r->nvals = 1;
	r->spans[0] = 0;
	r->spans[1] = r->len;
	r->truncated = 0;
	r->repairs |= R_CLOSED;
	saop_detect_result_free(&d);
	return 1;
}

/* Free the candidates c[0..n). */
void
saop__rep_cands_free(struct cand *c, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++) {
		free(c[k].text);
		json_decref(c[k].v);
	}
}

/*
 * Add the text t[0..len) (copied) as a candidate, unless one with the
 * same value is there or it is not strict JSON.  Returns 0, 1 when the
 * list is full, -1 out of memory.
 */
static int
cand_add(struct cand *c, size_t *nc, size_t max, const char *t, size_t len,
    repairs_t repairs)
{
	json_error_t je;
	json_t *v;
	size_t k;
	int ok;

	if ((ok = strict(t, len)) < 0)
		return -1;
	if (ok == 0)
		return 0;
	v = json_loadb(t, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	for (k = 0; k < *nc; k++)
		if (v != NULL && c[k].v != NULL ? json_equal(v, c[k].v) :
		    c[k].len == len && memcmp(c[k].text, t, len) == 0) {
			json_decref(v);
			c[k].repairs |= repairs;
			return 0;
		}
	if (*nc == max) {
		json_decref(v);
		return 1;
	}
	if ((c[*nc].text = malloc(len + 1)) == NULL) {
		json_decref(v);
		return -1;
	}
	memcpy(c[*nc].text, t, len);
	c[*nc].text[len] = '\0';
	c[*nc].len = len;
	c[*nc].v = v;
	c[*nc].repairs = repairs;
	(*nc)++;
	return 0;
}

/*
 * Are the values of r (several, one after the other) all the same text?
 * 1 or 0.
 */
static int
all_equal(const struct reading *r)
{
	size_t j, l0 = r->spans[1] - r->spans[0];

	for (j = 1; j < r->nvals; j++)
		if (r->spans[2 * j + 1] - r->spans[2 * j] != l0 ||
		    memcmp(r->text + r->spans[2 * j], r->text + r->spans[0],
		    l0) != 0)
			return 0;
	return 1;
}

/*
 * Is the strict JSON text t[0..len) (a value of a reading) an empty
 * object or array?  Returns '{' or '[' when it is, else 0.
 */
static char
empty_container(const char *t, size_t len)
{
	size_t i = next_nonspace(t, len, 0), j;

	if (i >= len || (t[i] != '{' && t[i] != '['))
		return 0;
	j = next_nonspace(t, len, i + 1);
	return j < len && t[j] == (t[i] == '{' ? '}' : ']') &&
	    next_nonspace(t, len, j + 1) == len ? t[i] : 0;
}

/*
 * The kind of the strict JSON text t[0..len): '{', '[', or 0 for a
 * scalar.
 */
static char
kind_of(const char *t, size_t len)
{
	size_t i = next_nonspace(t, len, 0);

	return i < len && (t[i] == '{' || t[i] == '[') ? t[i] : 0;
}

/*
 * The one reading of the several values of r with no schema (the rule of
 * saop-validate(1), "concatenated_values"): the empty objects and arrays
 * among them dropped ("empty_value"), one value left is that value,
 * several are the array of all of them, as `jq -s` reads them.  Two
 * objects or two arrays with no comma between them (empty ones dropped
 * aside) may also be a second answer that replaces the first, and values
 * that are all empty and not all the same leave no value: no single
 * reading.  Writes the text into arr (emptied first) and returns 1 with
 * *dropped set when an empty value went, 0 for no single reading, -1 out
 * of memory.
 */
static int
slurp(const struct reading *r, struct saop__buf *arr, int *dropped)
{
	size_t j, kept = 0, last = 0;
	int comma = 1;

	arr->len = 0;
	*dropped = 0;
	for (j = 0; j < r->nvals; j++) {
		const char *t = r->text + r->spans[2 * j];
		size_t len = r->spans[2 * j + 1] - r->spans[2 * j];

		if (j > 0 && r->gap[j] == GAP_PROSE)
			return 0;	/* ```{...}``` or ```[...]```? */
		if (j > 0 && r->gap[j] != GAP_COMMA)
			comma = 0;
		if (empty_container(t, len)) {
			*dropped = 1;
			continue;
		}
		if (kept > 0 && !comma && kind_of(t, len) != 0 &&
		    kind_of(t, len) == kind_of(r->text + r->spans[2 * last],
		    r->spans[2 * last + 1] - r->spans[2 * last]))
			return 0;	/* {...}{...}: a list or an update? */
		if (saop__buf_putc(arr, kept > 0 ? ',' : '[') != 0 ||
		    saop__buf_append(arr, t, len) != 0)
			return -1;
		kept++;
		last = j;
		comma = 1;
	}
	if (kept == 0)
		return 0;	/* []{}: which one? */
	if (kept == 1) {
		/* The one value left, without the '[' before it. */
		memmove(arr->data, arr->data + 1, arr->len - 1);
		arr->len--;
		return 1;
	}
	return saop__buf_putc(arr, ']') != 0 ? -1 : 1;
}

/*
 * The candidates of the readings in lx->rd: each as it is; several
 * values one after the other, with no schema, as slurp() reads them,
 * else (a schema, or no single reading) as the array of all of them and
 * as each one (the rule of saop-validate(1): the one that fits the
 * schema).  Returns 0 (lx->overflow set when the list is full) or -1.
 */
int
saop__rep_candidates(struct lex *lx, struct cand *c, size_t *nc, size_t max)
{
	struct saop__buf arr = { NULL, 0, 0 };
	size_t k, j;
	int rc = 0, dropped;

	for (k = 0; k < lx->nrd && rc == 0; k++) {
		struct reading *r = &lx->rd[k];

		if (r->truncated && (rc = close_reading(r)) <= 0) {
			if (rc < 0)
				break;
			rc = 0;
			continue;
		}
		if (r->nvals <= 1) {
			rc = cand_add(c, nc, max, r->text, r->len, r->repairs);
			continue;
		}
		if (all_equal(r)) {
			rc = cand_add(c, nc, max, r->text + r->spans[0],
			    r->spans[1] - r->spans[0], r->repairs);
			continue;
		}
		if (lx->schema == NULL &&
		    (rc = slurp(r, &arr, &dropped)) != 0) {
			if (rc < 0)
				break;
			rc = cand_add(c, nc, max, arr.data, arr.len,
			    r->repairs | (dropped ? R_EMPTY_VALUE : 0));
			continue;
		}
		arr.len = 0;
		rc = saop__buf_putc(&arr, '[');
		for (j = 0; j < r->nvals && rc == 0; j++)
			rc = (j > 0 ? saop__buf_putc(&arr, ',') : 0) ||
			    saop__buf_append(&arr, r->text + r->spans[2 * j],
			    r->spans[2 * j + 1] - r->spans[2 * j]);
		if (rc != 0 || saop__buf_putc(&arr, ']') != 0) {
			rc = -1;
			break;
		}
		rc = cand_add(c, nc, max, arr.data, arr.len, r->repairs);
		for (j = 0; j < r->nvals && rc == 0; j++)
			rc = cand_add(c, nc, max, r->text + r->spans[2 * j],
			    r->spans[2 * j + 1] - r->spans[2 * j],
			    r->repairs);
	}
	free(arr.data);
	if (rc == 1)
		lx->overflow = 1;
	return rc < 0 ? -1 : 0;
}
