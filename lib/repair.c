/*
 * repair.c: local repair of a model's near-JSON before a correction turn
 * is spent on it -- where the JSON is, and saop_repair_with().  A lenient
 * tokenizer (aware of strings) reads the text and writes it back as
 * strict JSON; every rule it applies is named and counted.  Where the
 * text can be read more than one way the search tries every reading; the
 * readings that need the fewest repairs are kept; when they give more
 * than one value, the schema (when there is one) picks the one that
 * fits, else nothing is repaired and the readings are handed back to be
 * shown.  Valid JSON never comes here (validate.c parses first), and
 * would come back unchanged: no rule fires on it.
 *
 * This file holds what stands around the JSON: a <think> block, JSONP,
 * stringified JSON, fences, prose, the start saop-detect(1) finds, bare
 * text (read_all()); and the repair's entry.  The rest are rooms of their
 * own, by what they read (repair-private.h): the lexer (repair-lex.c),
 * the rules of structure (repair-rules.c), the readings and their costs
 * (repair-read.c), the schema's anchoring (repair-anchor.c).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "repair-private.h"

static const char *const repair_names[] = {
	"bom", "think_block", "code_fence", "prose", "jsonp", "comment",
	"trailing_comma", "extra_comma", "missing_comma", "missing_colon",
	"single_quotes", "typographic_quotes", "backticks",
	"missing_closing_quote", "missing_opening_quote", "unescaped_quote",
	"unquoted_key", "unquoted_string", "python_literal", "literal_case",
	"not_json_value", "invalid_escape", "number_form", "control_character",
	"unicode_space", "mismatched_bracket", "surplus_bracket",
	"string_concatenation", "concatenated_values", "schema_choice", "closed",
	"ellipsis", "python_tuple", "shell_wrapper", "stringified_json",
	"bare_text", "empty_value", "doubled_quote", "missing_bracket",
	"stray_word", "python_set"
};


/* Is s[0..n) white space only?  1 or 0. */
static int
blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_space((unsigned char)s[i]))
			return 0;
	return 1;
}

/*
 * A fence line at s[i] (the start of a line): up to ind + 3 spaces, then
 * ``` or ~~~.  Returns the fence character, or 0.
 */
static char
fence_at(const char *s, size_t n, size_t i, size_t ind)
{
	size_t k = 0;

	while (k < ind + 3 && i < n && s[i] == ' ') {
		i++;
		k++;
	}
	if (i + 3 <= n && (memcmp(s + i, "```", 3) == 0 ||
	    memcmp(s + i, "~~~", 3) == 0))
		return s[i];
	return 0;
}

/* The index of the newline ending the line at s[i], or n. */
static size_t
line_end(const char *s, size_t n, size_t i)
{
	while (i < n && s[i] != '\n')
		i++;
	return i;
}

/* Does s[i..] start with a '{' or '[' after white space?  1 or 0. */
static int
json_like_at(const char *s, size_t n, size_t i)
{
	i = next_nonspace(s, n, i);
	return i < n && (s[i] == '{' || s[i] == '[');
}

/*
 * Is s[0..n) a fenced block in a pair of braces ({```json ... ```}, white
 * space aside)?  Then the text inside them is s[*at..*at + *len): 1, else
 * 0.  (In brackets, [``` ... ```] may as well be an array whose fence
 * marks are astray: no.)
 */
static int
braced_fence(const char *s, size_t n, size_t *at, size_t *len)
{
	size_t a = next_nonspace(s, n, 0), c = n, e;

	while (c > a && is_space((unsigned char)s[c - 1]))
		c--;
	/* {``` ... ```}: eight bytes at the least. */
	if (c < a + 8 || s[a] != '{' || s[--c] != '}' ||
	    fence_at(s, c, a + 1, 0) == 0)
		return 0;
	for (e = c; e > a && is_space((unsigned char)s[e - 1]); e--)
		;
	if (e - a < 7 || memcmp(s + e - 3, "```", 3) != 0)
		return 0;
	*at = a + 1;	/* s[c] is the closing brace */
	*len = c - a - 1;
	return 1;
}

/*
 * The indentation (in spaces) that every line of s[0..n) with more than
 * white space on it shares: a text indented as a whole (quoted in code,
 * pasted from a log) keeps its fences.
 */
static size_t
common_indent(const char *s, size_t n)
{
	size_t i = 0, ind = SIZE_MAX;

	while (i < n) {
		size_t eol = line_end(s, n, i), k = i;

		while (k < eol && s[k] == ' ')
			k++;
		if (!blank(s + k, eol - k) && k - i < ind)
			ind = k - i;
		i = eol + 1;
	}
	return ind == SIZE_MAX ? 0 : ind;
}

/*
 * Several fenced blocks s[at[k]..at[k] + len[k]) (k < nb), each of one
 * reading, as one reading of all their values in lx->rd[0]
 * ("concatenated_values"): what stood between two blocks is gap[k]
 * (GAP_NONE for white space only, else GAP_PROSE), for
 * saop__rep_candidates() to judge.  Returns 1, 0 when a block has no
 * single whole reading or there are too many values, -1 out of memory.
 */
static int
fences_joined(struct lex *lx, const char *s, const size_t *at,
    const size_t *len, const unsigned char *gap, size_t nb)
{
	struct saop__buf all = { NULL, 0, 0 };
	struct reading r;
	size_t k, j, nv = 0;
	int rc = 1;

	memset(&r, 0, sizeof(r));
	if ((r.spans = malloc(2 * MAX_VALUES * sizeof(size_t))) == NULL)
		return -1;
	r.repairs = R_CONCATENATED;
	for (k = 0; k < nb && rc == 1; k++) {
		const struct reading *b;

		if ((rc = saop__rep_search(lx, s + at[k], len[k])) < 0)
			break;
		b = &lx->rd[0];
		if (rc != 1 || lx->overflow || b->truncated ||
		    nv + b->nvals > MAX_VALUES) {
			rc = 0;
			break;
		}
		if (k > 0 && saop__buf_putc(&all, '\n') != 0) {
			rc = -1;
			break;
		}
		for (j = 0; j < b->nvals; j++) {
			r.spans[2 * (nv + j)] = all.len + b->spans[2 * j];
			r.spans[2 * (nv + j) + 1] = all.len +
			    b->spans[2 * j + 1];
			r.gap[nv + j] = j > 0 ? b->gap[j] : gap[k];
		}
		nv += b->nvals;
		r.repairs |= b->repairs;
		r.cost += b->cost;
		if (saop__buf_append(&all, b->text, b->len) != 0)
			rc = -1;
	}
	saop__rep_readings_clear(lx);
	if (rc == 1 && saop__buf_putc(&all, '\0') != 0)
		rc = -1;
	if (rc != 1) {
		free(all.data);
		free(r.spans);
		return rc;
	}
	r.text = all.data;
	r.len = all.len - 1;
	r.nvals = nv;
	lx->rd[0] = r;
	lx->nrd = 1;
	return 1;
}

/*
 * Markdown code fences: the one fenced block that reads as JSON; a block
 * that opens with a bracket and does not read is a second reading;
 * several that read are several values (fences_joined()).  The
 * indentation all the lines share is no part of a fence line's.  A pair
 * of braces around the whole is dropped ("surplus_bracket").  Returns 1
 * with its readings in lx->rd, 0 when there is no fence or no single
 * block, -1 on no memory.
 */
static int
from_fences(struct lex *lx, const char *s, size_t n, repairs_t *extra)
{
	size_t i = 0, ind, at[MAX_VALUES],
	    len[MAX_VALUES];
	unsigned char gap[MAX_VALUES];
	int found = 0, blocks = 0, rc, outside = 0, between = 0;
	repairs_t braces = 0;
	size_t bat = 0, blen = 0;

	if (braced_fence(s, n, &bat, &blen)) {
		s += bat;
		n = blen;
		braces = R_SURPLUS_BRACKET;
	}
	ind = common_indent(s, n);

	while (i < n) {
		size_t eol = line_end(s, n, i), body, end;
		char f = fence_at(s, n, i, ind);

		if (f == 0) {
			if (!blank(s + i, eol - i))
				outside = between = 1;
			i = eol + 1;
			continue;
		}
		/* The block runs to a closing fence line, or to the end. */
		body = eol < n ? eol + 1 : n;
		end = body;
		while (end < n && fence_at(s, n, end, ind) != f)
			end = line_end(s, n, end) + 1;
		if (end > n)
			end = n;
		blocks++;
		if ((rc = saop__rep_search(lx, s + body, end - body)) < 0)
			return -1;
		if (rc > 0 && found < MAX_VALUES) {
			at[found] = body;
			len[found] = end - body;
			gap[found++] = between ? GAP_PROSE : GAP_NONE;
			between = 0;
		} else if (rc > 0 || json_like_at(s, end, body)) {
			found = MAX_VALUES + 1;	/* broken JSON: no guess */
		} else {
			between = 1;	/* another block between */
		}
		i = end < n ? line_end(s, n, end) + 1 : n;
	}
	if (blocks == 0 || found == 0 || found > MAX_VALUES)
		return 0;
	if (found == 1)
		rc = saop__rep_search(lx, s + at[0], len[0]);
	else
		rc = fences_joined(lx, s, at, len, gap, (size_t)found);
	if (rc <= 0)
		return rc;
	*extra = R_CODE_FENCE | (outside ? R_PROSE : 0) | braces;
	return 1;
}

/*
 * Does the prose s[0..n) dropped around a value look like JSON: a double
 * quote or a bracket anywhere, or (at the edge next to the value, when
 * after it) a comma, a colon or a single quote?  1 or 0.
 */
static int
prose_looks_json(const char *s, size_t n, int before)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '"' || s[i] == '{' || s[i] == '}' || s[i] == '[' ||
		    s[i] == ']')
			return 1;
	if (before)
		return 0;
	i = next_nonspace(s, n, 0);
	return i < n && strchr("',:", s[i]) != NULL;
}

/*
 * Prose around one JSON object or array.  Every '{' or '[' starts a try;
 * a try that reads a value is a candidate, one that breaks after a few
 * tokens is a broken candidate.  Exactly one candidate and no broken one,
 * and prose that does not look like JSON: that is the answer.  Returns 1
 * with its readings in lx->rd, 0 or -1 as from_fences.
 */
static int
from_prose(struct lex *lx, const char *s, size_t n, repairs_t *extra)
{
	size_t i = 0, at = 0, end = 0, k;
	int found = 0, rc;

	lx->prefix = 1;
	while (i < n && found < 2) {
		if (s[i] != '{' && s[i] != '[') {
			i++;
			continue;
		}
		if ((rc = saop__rep_search(lx, s + i, n - i)) < 0) {
			lx->prefix = 0;
			return -1;
		}
		if (rc > 0) {
			found++;
			at = i;
			end = lx->rd[0].end;
			for (k = 1; k < lx->nrd; k++)
				if (lx->rd[k].end != end)
					found += 2;	/* where does it end? */
			i += end;
		} else {
			/* How far the plain pass got, for the next try. */
			struct saop__buf tmp = { NULL, 0, 0 };

			saop__rep_pass_begin(lx, s + i, n - i, &tmp);
			lx->best = SIZE_MAX;
			lx->ndec = 0;
			(void)saop__rep_value(lx);
			saop__rep_pass_end(lx);
			free(tmp.data);
			if (lx->nomem) {
				lx->prefix = 0;
				return -1;
			}
			if (lx->tokens >= 3)
				found += 2;	/* broken JSON: no guess */
			i += lx->i > 0 ? lx->i : 1;
		}
	}
	rc = 0;
	if (found == 1 && !(at == 0 && at + end == n) &&
	    !prose_looks_json(s, at, 1) &&
	    !prose_looks_json(s + at + end, n - at - end, 0)) {
		rc = saop__rep_search(lx, s + at, n - at);
		if (rc > 0) {
			*extra = R_PROSE;
			rc = 1;
		}
	}
	lx->prefix = 0;
	return rc;
}

/*
 * The JSON of a wrapped answer where saop-detect(1) finds it: the one rule
 * of where the JSON of an answer starts is saop_detect_text()'s (so what
 * saop-resume resumes, saop-validate reads).  When it calls s[0..n)
 * complete inside a wrapper, the value s[json_start..json_end) is read and
 * the wrapper named: a <think> block "think_block", a fence "code_fence",
 * prose before it, or text after it other than a closing fence, "prose".
 * Returns 1 with its readings in lx->rd, 0 when the scanner finds no
 * wrapped value, -1 out of memory.
 */
static int
from_detect(struct lex *lx, const char *s, size_t n, repairs_t *extra)
{
	struct saop_detect_result d;
	size_t a, b, t;
	unsigned w;
	int rc;

	memset(&d, 0, sizeof(d));
	if (saop_detect_text(s, n, 0, &d) != 0)
		return -1;
	w = d.wrapper;
	a = (size_t)d.json_start;
	b = d.json_end != 0 ? (size_t)d.json_end : n;
	rc = d.verdict == SAOP_COMPLETE && w != 0 && a < b && b <= n;
	saop_detect_result_free(&d);
	if (!rc)
		return 0;
	if ((rc = saop__rep_search(lx, s + a, b - a)) <= 0)
		return rc;
	/* After the value: white space, a closing fence, or prose. */
	t = next_nonspace(s, n, b);
	if ((w & SAOP_WRAP_FENCE) && fence_at(s, n, t, 0) != 0)
		t = next_nonspace(s, n, line_end(s, n, t));
	*extra |= (w & SAOP_WRAP_THINK ? R_THINK : 0) |
	    (w & SAOP_WRAP_FENCE ? R_CODE_FENCE : 0) |
	    (w & SAOP_WRAP_PROSE || t < n ? R_PROSE : 0);
	return 1;
}

/*
 * A <think>, <thinking> or <reasoning> block at the start of s[0..n)
 * (after white space): the length up to the end of its closing tag, 0
 * when there is none, SIZE_MAX when it is never closed.
 */
static size_t
think_len(const char *s, size_t n)
{
	static const char *const tags[] = { "think", "thinking", "reasoning" };
	size_t i = next_nonspace(s, n, 0), k;
	char close[16];

	for (k = 0; k < 3; k++) {
		size_t t = strlen(tags[k]);

		if (i + t + 2 > n || s[i] != '<' ||
		    memcmp(s + i + 1, tags[k], t) != 0 || s[i + 1 + t] != '>')
			continue;
		snprintf(close, sizeof(close), "</%s>", tags[k]);
		for (i += t + 2; i + strlen(close) <= n; i++)
			if (memcmp(s + i, close, strlen(close)) == 0)
				return i + strlen(close);
		return SIZE_MAX;	/* all of it is thinking */
	}
	return 0;
}

/*
 * A JSONP wrapper: name(...) around the whole of s[0..n), an optional ';'
 * after.  Returns 1 with the inside in *at, *len, else 0.
 */
static int
jsonp(const char *s, size_t n, size_t *at, size_t *len)
{
	size_t i = next_nonspace(s, n, 0), e = n;

	if (i >= n || !is_ident_start((unsigned char)s[i]))
		return 0;
	while (i < n && (is_ident((unsigned char)s[i]) || s[i] == '.'))
		i++;
	i = next_nonspace(s, n, i);
	if (i >= n || s[i] != '(')
		return 0;
	while (e > i && is_space((unsigned char)s[e - 1]))
		e--;
	if (e > i && s[e - 1] == ';')
		e--;
	while (e > i && is_space((unsigned char)s[e - 1]))
		e--;
	if (e <= i + 1 || s[e - 1] != ')')
		return 0;
	*at = i + 1;
	*len = e - 1 - (i + 1);
	return 1;
}

/* The names of the repairs in r as a new array, or NULL. */
static json_t *
names(repairs_t r)
{
	json_t *a = json_array();
	size_t k;

	for (k = 0; a != NULL && k < sizeof(repair_names) /
	    sizeof(repair_names[0]); k++)
		if ((r & ((repairs_t)1 << k)) && json_array_append_new(a,
		    json_string(repair_names[k])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/*
 * Stringified JSON: s[0..n) starts (white space aside) with \" or with
 * '{' or '[' and then \" (the inside of a JSON string holding JSON).
 * Takes one level of escapes off into out: \" \\ \/ \b \f \n \r \t
 * become what they stand for, \uXXXX stays (the same character inside
 * the strings within), a '"' with no backslash stays.  Returns 1, 0 when
 * s is not such a text or has an escape with no single reading (another
 * one, \u0022 or \u005c, a backslash at the end), -1 out of memory.
 */
static int
unstringify(const char *s, size_t n, struct saop__buf *out)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	size_t i = next_nonspace(s, n, 0);

	if (i < n && (s[i] == '{' || s[i] == '['))
		i = next_nonspace(s, n, i + 1);
	if (i + 1 >= n || s[i] != '\\' || s[i + 1] != '"')
		return 0;
	out->len = 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\') {
			const char *p;

			if (++i >= n)
				return 0;
			if (s[i] == 'u') {
				if (i + 5 > n || strncasecmp(s + i + 1, "0022", 4)
				    == 0 || strncasecmp(s + i + 1, "005c", 4) == 0)
					return 0;
				if (saop__buf_putc(out, '\\') != 0)
					return -1;
				c = 'u';
			} else if ((p = strchr(from, s[i])) != NULL &&
			    s[i] != '\0') {
				c = to[p - from];
			} else {
				return 0;
			}
		}
		if (saop__buf_putc(out, c) != 0)
			return -1;
	}
	return 1;
}

/*
 * Does the lexer read s[0..n) as a value (or several) on its own, with
 * lx->close as given?  1, 0, or -1 out of memory.  It leaves its readings
 * in lx->rd.
 */
static int
reads_with(struct lex *lx, const char *s, size_t n, int close)
{
	int was = lx->close, rc;

	lx->close = close;
	rc = saop__rep_search(lx, s, n);
	lx->close = was;
	return rc < 0 ? -1 : rc > 0;
}

/*
 * Bare text: the whole of s[0..n) (white space around aside) is one line
 * with nothing JSON-like in it (no bracket, brace, parenthesis, quote,
 * backtick or comma; no comment or fence at its start) and at least one
 * letter or digit; of several words, none starts like a number or is a
 * literal (The answer is 42, 1 2: a value in prose, or several values);
 * it is not a value cut by the end of the answer (tru, 1e, what --close
 * would read); with a schema, a string fits it.  Then it is one string,
 * every byte kept ("bare_text"): 0789 -> "0789", hello world ->
 * "hello world".  Returns 1 with its reading in lx->rd, 0 when s is no
 * such text, -1 out of memory.
 */
static int
bare_text(struct lex *lx, const char *s, size_t n, repairs_t *extra)
{
	static const char *const cut[] = { "true", "false", "null", "none" };
	struct saop__buf q = { NULL, 0, 0 };
	size_t a = next_nonspace(s, n, 0), b = n, i, w;
	int alnum = 0, rc = 0;

	while (b > a && is_space((unsigned char)s[b - 1]))
		b--;
	if (a == b || s[a] == '#' || (b - a >= 2 && s[a] == '/' &&
	    (s[a + 1] == '/' || s[a + 1] == '*')) ||
	    (b - a >= 3 && memcmp(s + a, "~~~", 3) == 0))
		return 0;
	for (i = a; i < b; i++) {
		unsigned char c = (unsigned char)s[i];

		if (strchr("{}[]()\"'`,", c) != NULL || c == '\n' ||
		    c == '\r' || c == 0x7f || (c < 0x20 && c != '\t') ||
		    typo_quote(s, n, i) != 0)
			return 0;
		if ((is_ident(c) && c != '_' && c != '$') || c >= 0x80)
			alnum = 1;
	}
	if (!alnum)
		return 0;
	/* tru, nul: a literal cut short. */
	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
		if (b - a < strlen(cut[i]) &&
		    strncasecmp(s + a, cut[i], b - a) == 0)
			return 0;
	/* The answer is 42: a value in prose, or several values (1 2)? */
	for (i = a; i < b; i = w) {
		for (w = i; w < b && !is_space((unsigned char)s[w]); w++)
			;
		if (i > a || w < b) {
			size_t d = i + (s[i] == '-' || s[i] == '+'), k;

			if (d < w && (is_digit((unsigned char)s[d]) ||
			    (s[d] == '.' && d + 1 < w &&
			    is_digit((unsigned char)s[d + 1]))))
				return 0;
			for (k = i; k < w && is_ident((unsigned char)s[k]); k++)
				;
			if (saop__rep_literal_word(s + i, k - i))
				return 0;
		}
		w = next_nonspace(s, b, w);
	}
	if ((rc = reads_with(lx, s + a, b - a, 1)) != 0)
		return rc < 0 ? -1 : 0;
	rc = saop__buf_putc(&q, '"');
	for (i = a; i < b && rc == 0; i++)
		rc = s[i] == '\\' ? saop__buf_append(&q, "\\\\", 2) :
		    s[i] == '\t' ? saop__buf_append(&q, "\\t", 2) :
		    saop__buf_putc(&q, s[i]);
	if (rc == 0)
		rc = saop__buf_putc(&q, '"');
	if (rc == 0)
		rc = saop__rep_search(lx, q.data, q.len);
	free(q.data);
	/* With a schema, only where it asks for a string: {} asks nothing. */
	if (rc > 0 && lx->schema != NULL &&
	    ((rc = saop__rep_fits_string(lx->schema, s + a, b - a)) <= 0 ||
	    (rc = saop__rep_asks_string(lx->schema, lx->schema->root)) <= 0))
		saop__rep_readings_clear(lx);
	if (rc < 0)
		return -1;
	if (rc > 0)
		*extra |= R_BARE_TEXT;
	return rc > 0;
}

/* Does one of the readings in lx->rd hold several values?  1 or 0. */
static int
several_values(const struct lex *lx)
{
	size_t k;

	for (k = 0; k < lx->nrd; k++)
		if (lx->rd[k].nvals > 1)
			return 1;
	return 0;
}

/*
 * The readings of text without its BOM (s[0..n)), by the rules in order:
 * a whole value, a JSONP wrapper, stringified JSON, the one fenced block,
 * the value where saop-detect(1) finds it (from_detect()), the one value
 * in prose, bare text; each after a <think> block.  Returns 1 with readings in lx->rd
 * and the repairs of the wrapping in *extra, 0 for none, -1 no memory.
 */
static int
read_all(struct lex *lx, const char *s, size_t n, repairs_t *extra)
{
	struct saop__buf un = { NULL, 0, 0 };
	const char *whole = s;
	size_t t = think_len(s, n), at, len, nwhole = n;
	int rc;

	*extra = 0;
	if (t == SIZE_MAX)
		return 0;	/* the JSON in it is the model's draft */
	if (t > 0) {
		*extra |= R_THINK;
		s += t;
		n -= t;
	}
	if ((rc = saop__rep_search(lx, s, n)) != 0)
		return rc < 0 ? -1 : 1;
	if (jsonp(s, n, &at, &len)) {
		/* One argument: f(1, 2) is a call, no JSONP. */
		if ((rc = saop__rep_search(lx, s + at, len)) > 0 &&
		    several_values(lx))
			rc = 0;
		if (rc != 0) {
			*extra |= R_JSONP;
			return rc < 0 ? -1 : 1;
		}
	}
	if ((rc = unstringify(s, n, &un)) != 0) {
		if (rc > 0)
			rc = saop__rep_search(lx, un.data, un.len);
		free(un.data);
		if (rc != 0) {
			*extra |= R_STRINGIFIED;
			return rc < 0 ? -1 : 1;
		}
	} else {
		free(un.data);
	}
	if ((rc = from_fences(lx, s, n, extra)) != 0)
		return rc;
	/* Where saop-detect(1) finds the JSON, before any rule of ours. */
	*extra = 0;
	if ((rc = from_detect(lx, whole, nwhole, extra)) != 0)
		return rc;
	if (t > 0)
		*extra |= R_THINK;
	if ((rc = from_prose(lx, s, n, extra)) != 0)
		return rc;
	return bare_text(lx, s, n, extra);
}

/*
 * Repair text[0..len) (see saop.h), with o (NULL: no schema, no close).
 * Returns 1 with *out and *repairs, 0 when nothing changes (with
 * *readings when several readings were possible), or -SAOP_ENOMEM.
 */
int
saop_repair_with(const char *text, size_t len,
    const struct saop_repair_opts *o, char **out, size_t *out_len,
    json_t **repairs, json_t **readings, struct saop_err *e)
{
	struct lex lx;
	struct cand c[MAX_READINGS * 2];
	const char *s = text;
	size_t n = len, nc = 0, k;
	repairs_t bom = 0, extra = 0, r = 0;
	int rc, pick = -1, pass;

	memset(&lx, 0, sizeof(lx));
	lx.schema = o != NULL ? o->schema : NULL;
	*out = NULL;
	*out_len = 0;
	*repairs = NULL;
	if (readings != NULL)
		*readings = NULL;
	saop_err_clear(e);
	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
		s += 3;
		n -= 3;
		bom = R_BOM;
	}
	/* Closing is the last resort: only when nothing else reads. */
	for (pass = 0; pass < (o != NULL && o->close ? 2 : 1); pass++) {
		lx.close = pass;
		if ((rc = read_all(&lx, s, n, &extra)) < 0)
			goto oom;
		if (rc == 0)
			continue;
		if (saop__rep_candidates(&lx, c, &nc, MAX_READINGS * 2) != 0)
			goto oom;
		if (nc > 0)
			break;
	}
	/*
	 * With a schema, a reading that moved where a string ends must be
	 * anchored: its strings end before a key the schema knows.
	 */
	if (o != NULL && o->schema != NULL)
		for (k = 0; k < nc; k++)
			if ((c[k].repairs & (R_UNESCAPED_QUOTE | R_MISSING_CLOSE |
			    R_MISSING_OPEN)) && c[k].v != NULL &&
			    !saop__rep_anchored(o->schema, c[k].v)) {
				free(c[k].text);
				json_decref(c[k].v);
				c[k--] = c[--nc];
			}
	if (nc == 1 && !lx.overflow) {
		pick = 0;
	} else if (nc > 1 && o != NULL && o->schema != NULL) {
		if ((pick = saop__rep_schema_pick(o->schema, c, nc)) == -2)
			goto oom;
		if (pick >= 0 && lx.overflow)
			pick = -1;
		if (pick >= 0)
			c[pick].repairs |= R_SCHEMA_CHOICE;
	}
	if (pick < 0 && nc > 1 && readings != NULL) {
		if ((*readings = json_array()) == NULL)
			goto oom;
		for (k = 0; k < nc; k++)
			if (json_array_append_new(*readings,
			    json_stringn(c[k].text, c[k].len)) != 0)
				goto oom;
	}
	if (pick >= 0) {
		r = c[pick].repairs | extra | bom;
		*out = c[pick].text;
		*out_len = c[pick].len;
		c[pick].text = NULL;
	} else if (bom && !(n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)) {
		/*
		 * No single reading; only a BOM can still go, unless another
		 * follows it: that one would go in a repair of the repair.
		 */
		if ((*out = malloc(n + 1)) == NULL)
			goto oom;
		memcpy(*out, s, n);
		(*out)[n] = '\0';
		*out_len = n;
		r = bom;
	}
	saop__rep_cands_free(c, nc);
	saop__rep_readings_clear(&lx);
	free(lx.stack);
	free(lx.opened);
	free(lx.dec);
	free(lx.opts);
	free(lx.marks);
	if (r == 0) {
		free(*out);
		*out = NULL;
		*out_len = 0;
		return 0;
	}
	if ((*repairs = names(r)) == NULL) {
		free(*out);
		*out = NULL;
		*out_len = 0;
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	return 1;
oom:
	saop__rep_cands_free(c, nc);
	saop__rep_readings_clear(&lx);
	free(lx.stack);
	free(lx.opened);
	free(lx.dec);
	free(lx.opts);
	free(lx.marks);
	if (readings != NULL) {
		json_decref(*readings);
		*readings = NULL;
	}
	return saop__fail(e, SAOP_ENOMEM, ENOMEM,
	    "out of memory repairing %zu bytes", len);
}

/* Repair text[0..len) with no schema (see saop.h). */
int
saop_repair(const char *text, size_t len, char **out, size_t *out_len,
    json_t **repairs, struct saop_err *e)
{
	return saop_repair_with(text, len, NULL, out, out_len, repairs, NULL,
	    e);
}
