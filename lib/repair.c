/*
 * repair.c: local repair of a model's near-JSON before a correction turn
 * is spent on it.  A lenient tokenizer (aware of strings) reads the text
 * and writes it back as strict JSON; every rule it applies is named and
 * counted.  Where the text can be read more than one way (is this '"' the
 * end of the string or a quote inside it?  does this ',' end a string
 * whose closing quote is missing?) the tokenizer takes a choice, and the
 * search runs the pass again for every other choice (a depth-first walk,
 * replayed from the start: the tokenizer stays iterative, deep nesting
 * needs no C stack).  The readings that need the fewest repairs are kept;
 * when they give more than one value, the schema (when there is one)
 * picks the one that fits, else nothing is repaired and the readings are
 * handed back to be shown.  Valid JSON never comes here (validate.c
 * parses first), and would come back unchanged: no rule fires on it.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "saop-private.h"
#include "schema-int.h"

/* A set of repairs: bit k is repair_names[k]. */
typedef uint64_t repairs_t;

/* The repairs, in the order validate.repairs lists them. */
#define R_BOM	((repairs_t)1 << 0)
#define R_THINK	((repairs_t)1 << 1)
#define R_CODE_FENCE	((repairs_t)1 << 2)
#define R_PROSE	((repairs_t)1 << 3)
#define R_JSONP	((repairs_t)1 << 4)
#define R_COMMENT	((repairs_t)1 << 5)
#define R_TRAILING_COMMA	((repairs_t)1 << 6)
#define R_EXTRA_COMMA	((repairs_t)1 << 7)
#define R_MISSING_COMMA	((repairs_t)1 << 8)
#define R_MISSING_COLON	((repairs_t)1 << 9)
#define R_SINGLE_QUOTES	((repairs_t)1 << 10)
#define R_TYPO_QUOTES	((repairs_t)1 << 11)
#define R_BACKTICKS	((repairs_t)1 << 12)
#define R_MISSING_CLOSE	((repairs_t)1 << 13)
#define R_MISSING_OPEN	((repairs_t)1 << 14)
#define R_UNESCAPED_QUOTE	((repairs_t)1 << 15)
#define R_UNQUOTED_KEY	((repairs_t)1 << 16)
#define R_UNQUOTED_STRING	((repairs_t)1 << 17)
#define R_PYTHON_LITERAL	((repairs_t)1 << 18)
#define R_LITERAL_CASE	((repairs_t)1 << 19)
#define R_NOT_JSON_VALUE	((repairs_t)1 << 20)
#define R_INVALID_ESCAPE	((repairs_t)1 << 21)
#define R_NUMBER_FORM	((repairs_t)1 << 22)
#define R_CONTROL_CHARACTER	((repairs_t)1 << 23)
#define R_UNICODE_SPACE	((repairs_t)1 << 24)
#define R_MISMATCHED_BRACKET	((repairs_t)1 << 25)
#define R_SURPLUS_BRACKET	((repairs_t)1 << 26)
#define R_STRING_CONCAT	((repairs_t)1 << 27)
#define R_CONCATENATED	((repairs_t)1 << 28)
#define R_SCHEMA_CHOICE	((repairs_t)1 << 29)
#define R_CLOSED	((repairs_t)1 << 30)
#define R_ELLIPSIS	((repairs_t)1 << 31)
#define R_PYTHON_TUPLE	((repairs_t)1 << 32)
#define R_SHELL_WRAPPER	((repairs_t)1 << 33)
#define R_STRINGIFIED	((repairs_t)1 << 34)
#define R_BARE_TEXT	((repairs_t)1 << 35)
#define R_EMPTY_VALUE	((repairs_t)1 << 36)
#define R_DOUBLED_QUOTE	((repairs_t)1 << 37)
#define R_MISSING_BRACKET	((repairs_t)1 << 38)
#define R_STRAY_WORD	((repairs_t)1 << 39)
#define R_PYTHON_SET	((repairs_t)1 << 40)

/*
 * The open containers on the stack: '{', '[', and what stands for an
 * array or for no container at all: a Python tuple before its first comma
 * (a group when it closes so), one after it, a MongoDB shell wrapper.
 */
#define TUPLE		'('
#define TUPLE_COMMA	')'
#define WRAPPER		'w'

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

#define MAX_READINGS	8	/* distinct readings kept at the least cost */
#define MAX_VALUES	64	/* concatenated top-level values */
#define MIN_RUNS	64	/* passes the search may always make */
#define MAX_RUNS	1024	/* passes it may make at most */
#define SEARCH_BYTES	((size_t)8 << 20)	/* else: bytes it may scan */

/*
 * Where a quote stands in a string of the output: every '\"' a pass
 * writes inside a string, and every closing quote whose place is in
 * doubt, is marked (struct mark) with what it came from.  swallowed()
 * checks the marks of every reading before it is kept.
 */
#define M_ESCAPED	1	/* \" from \" in the input */
#define M_INNER		2	/* '"' in a string of other quotes */
#define M_PROSE		3	/* a quote read inside, between words */
#define M_ANCHOR	4	/* a quote read inside next to structure, or
				   a string's end in doubt: only where the
				   schema anchors the string */

/* One mark: the offset in the output of a '\"' or a closing quote. */
struct mark {
	size_t out;
	unsigned char kind;
};

/* What stands between two top-level values. */
#define GAP_NONE	0	/* white space only: {...}{...}, 1\n2 */
#define GAP_COMMA	1	/* a comma: 1, 2 (an array's brackets lost) */
#define GAP_PROSE	2	/* text: fenced blocks with prose between */

/* One reading: strict JSON text and how it was reached. */
struct reading {
	char *text;
	size_t len;
	repairs_t repairs;
	size_t cost;
	int truncated;		/* cut: to be closed */
	size_t nvals;		/* top-level values (concatenated) */
	size_t *spans;		/* their [start, end) in text, 2 per value */
	unsigned char gap[MAX_VALUES];	/* before value j: GAP_... */
	size_t end;		/* where in the input the reading stopped */
};

/* One pass of the lenient tokenizer over s[0..n), and the search. */
struct lex {
	const char *s;
	size_t n;
	size_t i;		/* next byte to read */
	struct saop__buf *out;
	repairs_t repairs;
	size_t cost;		/* repairs made (each counted) */
	size_t best;		/* the least cost of a reading found */
	size_t tokens;		/* tokens read after the first bracket */
	int nomem;
	int close;		/* the end of input may cut the value */
	int truncated;		/* it did */
	int prefix;		/* one value at the start; the rest is not ours */
	int last_string;	/* the last token was a string */
	int doubt;		/* this pass took a doubtful reading */
	struct mark *marks;	/* this pass's quotes in strings, in order */
	size_t nmarks, marks_cap;
	const struct saop_schema *schema;	/* NULL: none */
	size_t doubt_best;	/* the least cost of a doubtful one */
	char *stack;		/* open containers: '{' '[' TUPLE... */
	size_t *opened;		/* where each one opened in out */
	size_t depth;
	size_t stack_cap;
	size_t implicit;	/* the depth of an object whose '{' was
				   missing (in an array), 0 for none */
	/* The search: the choices of this pass, replayed then extended. */
	unsigned char *dec, *opts;
	size_t ndec, cpos, dec_cap;
	size_t vals[2 * MAX_VALUES];
	unsigned char gap[MAX_VALUES];	/* before each value: GAP_... */
	size_t nvals;
	/* The readings at the least cost. */
	struct reading rd[MAX_READINGS];
	size_t nrd;
	int overflow;		/* more readings than kept, or the search
				   stopped before it ended */
};

/*
 * Append p[0..n) to the output of the pass under way: 0, or -1 with
 * lx->nomem set.
 */
static int
put(struct lex *lx, const char *p, size_t n)
{
	if (saop__buf_append(lx->out, p, n) != 0) {
		lx->nomem = 1;
		return -1;
	}
	return 0;
}

/* Append the byte c to the output of the pass under way, as put(). */
static int
putc_(struct lex *lx, char c)
{
	return put(lx, &c, 1);
}

/*
 * Mark the output offset at (a '\\"' about to be written, or a closing
 * quote) as of kind k (M_...): 0, or -1 with lx->nomem set.
 */
static int
mark(struct lex *lx, size_t at, unsigned char k)
{
	if (lx->nmarks == lx->marks_cap) {
		size_t cap = lx->marks_cap ? lx->marks_cap * 2 : 16;
		struct mark *m;

		if ((m = realloc(lx->marks, cap * sizeof(*m))) == NULL) {
			lx->nomem = 1;
			return -1;
		}
		lx->marks = m;
		lx->marks_cap = cap;
	}
	lx->marks[lx->nmarks].out = at;
	lx->marks[lx->nmarks++].kind = k;
	return 0;
}

/*
 * Forget the marks at or after the output offset len (the output cut
 * back there).  Returns 1 when one of them was M_ANCHOR, else 0.
 */
static int
marks_cut(struct lex *lx, size_t len)
{
	int anchor = 0;

	while (lx->nmarks > 0 && lx->marks[lx->nmarks - 1].out >= len)
		if (lx->marks[--lx->nmarks].kind == M_ANCHOR)
			anchor = 1;
	return anchor;
}

/*
 * Count the repair r (2 for a quote read inside a string or a missing
 * closing quote, else 1): 0, or -1 when the pass now costs more than a
 * reading found already (it cannot be one of the least-cost readings).
 */
static int
fix(struct lex *lx, repairs_t r)
{
	lx->repairs |= r;
	/* Moving where a string ends weighs more than any other repair. */
	lx->cost += r == R_UNESCAPED_QUOTE || r == R_MISSING_CLOSE ? 2 : 1;
	return lx->cost > lx->best ? -1 : 0;
}

/*
 * A choice among nopts readings at this point of the pass: the one the
 * search replays, or 0 (the reading with no repair) at a new point.
 * Returns it, or -1 out of memory.
 */
static int
choose(struct lex *lx, unsigned char nopts)
{
	if (lx->cpos < lx->ndec)
		return lx->dec[lx->cpos++];
	if (lx->ndec == lx->dec_cap) {
		size_t cap = lx->dec_cap ? lx->dec_cap * 2 : 64;
		unsigned char *d, *o;

		if ((d = realloc(lx->dec, cap)) == NULL) {
			lx->nomem = 1;
			return -1;
		}
		lx->dec = d;
		if ((o = realloc(lx->opts, cap)) == NULL) {
			lx->nomem = 1;
			return -1;
		}
		lx->opts = o;
		lx->dec_cap = cap;
	}
	lx->dec[lx->ndec] = 0;
	lx->opts[lx->ndec] = nopts;
	lx->ndec++;
	lx->cpos++;
	return 0;
}

/* Can c start an unquoted key or a literal?  1 or 0. */
static int
is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    c == '$';
}

/* Can c go on an unquoted key or a literal?  1 or 0. */
static int
is_ident(unsigned char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* Is c an ASCII digit?  1 or 0. */
static int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* Is c a hexadecimal digit?  1 or 0. */
static int
is_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Is c JSON white space?  1 or 0. */
static int
is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * The length of the Unicode white space (NBSP, U+180E, U+2000..U+200B,
 * U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF) at s[i], or 0.
 */
static size_t
uspace_len(const char *s, size_t n, size_t i)
{
	const unsigned char *p = (const unsigned char *)s + i;

	if (i + 2 <= n && p[0] == 0xc2 && p[1] == 0xa0)
		return 2;
	if (i + 3 > n)
		return 0;
	if (p[0] == 0xe2 && p[1] == 0x80 && ((p[2] >= 0x80 && p[2] <= 0x8b) ||
	    p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf))
		return 3;
	if ((p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f) ||
	    (p[0] == 0xe1 && p[1] == 0xa0 && p[2] == 0x8e) ||
	    (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80) ||
	    (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf))
		return 3;
	return 0;
}

/*
 * The typographic quote at s[i]: 1 for U+201C/U+201D (double), 2 for
 * U+2018/U+2019 (single), 0 for none.
 */
static int
typo_quote(const char *s, size_t n, size_t i)
{
	const unsigned char *p = (const unsigned char *)s + i;

	if (i + 3 > n || p[0] != 0xe2 || p[1] != 0x80)
		return 0;
	if (p[2] == 0x9c || p[2] == 0x9d)
		return 1;
	if (p[2] == 0x98 || p[2] == 0x99)
		return 2;
	return 0;
}

/* Can a string start at s[i] ('"', '\'', '`', a typographic quote)? */
static int
quote_at(const char *s, size_t n, size_t i)
{
	return i < n && (s[i] == '"' || s[i] == '\'' || s[i] == '`' ||
	    typo_quote(s, n, i) != 0);
}

/* The index of the first byte at or after i that is not JSON space. */
static size_t
next_nonspace(const char *s, size_t n, size_t i)
{
	while (i < n && is_space((unsigned char)s[i]))
		i++;
	return i;
}

/*
 * Does s[a..b) hold an odd number of '"', or a quote and a colon after it
 * ("key": a member)?  A line comment that does took in JSON (a newline
 * missing): it is no comment.  1 or 0.
 */
static int
odd_quotes(const char *s, size_t a, size_t b)
{
	int odd = 0;

	for (; a < b; a++)
		if (s[a] == '"') {
			odd = !odd;
			if (next_nonspace(s, b, a + 1) < b &&
			    s[next_nonspace(s, b, a + 1)] == ':')
				return 1;
		}
	return odd;
}

/*
 * Copy white space and drop comments (//, block, '#') up to the next
 * token; Unicode white space becomes a space.  A block comment cut by the
 * end of the input is dropped with close (the value is cut there), unless
 * it took in JSON (odd_quotes()).  Returns 0, or -1 on an unterminated
 * block comment, no memory, or a pass now too costly.
 */
static int
skip_space(struct lex *lx)
{
	const char *s = lx->s;
	size_t start, u;

	while (lx->i < lx->n) {
		char c = s[lx->i];

		if (is_space((unsigned char)c)) {
			start = lx->i;
			while (lx->i < lx->n && is_space((unsigned char)
			    s[lx->i]))
				lx->i++;
			if (put(lx, s + start, lx->i - start) != 0)
				return -1;
		} else if ((c == '/' && lx->i + 1 < lx->n &&
		    s[lx->i + 1] == '/') || c == '#') {
			start = lx->i;
			while (lx->i < lx->n && s[lx->i] != '\n')
				lx->i++;
			if (odd_quotes(s, start, lx->i) ||
			    fix(lx, R_COMMENT) != 0)
				return -1;
		} else if (c == '/' && lx->i + 1 < lx->n &&
		    s[lx->i + 1] == '*') {
			lx->i += 2;
			start = lx->i;
			while (lx->i + 1 < lx->n &&
			    !(s[lx->i] == '*' && s[lx->i + 1] == '/'))
				lx->i++;
			if (lx->i + 1 >= lx->n) {
				if (!lx->close || odd_quotes(s, start, lx->n))
					return -1;
				lx->i = lx->n;
				return fix(lx, R_COMMENT);
			}
			lx->i += 2;
			/* Keep the tokens on either side apart. */
			if (fix(lx, R_COMMENT) != 0 || putc_(lx, ' ') != 0)
				return -1;
		} else if ((u = uspace_len(s, lx->n, lx->i)) > 0) {
			lx->i += u;
			if (fix(lx, R_UNICODE_SPACE) != 0 || putc_(lx, ' ') != 0)
				return -1;
		} else {
			break;
		}
	}
	return 0;
}

/*
 * The index of the first byte at or after i that is neither white space
 * nor in a block comment; n when a block comment is never closed.
 */
static size_t
past_comments(const char *s, size_t n, size_t i)
{
	size_t k = next_nonspace(s, n, i);

	while (k + 1 < n && s[k] == '/' && s[k + 1] == '*') {
		for (k += 2; k + 1 < n && !(s[k] == '*' && s[k + 1] == '/'); k++)
			;
		if (k + 1 >= n)
			return n;
		k = next_nonspace(s, n, k + 2);
	}
	return k;
}

/*
 * Would a string closed before s[i] ("," "}" "]" or a line end, its
 * closing quote missing) be followed by what can follow a value there?
 * After a ',', block comments are passed over: ["abc,<comment>"def"];
 * a fence's closing ``` with nothing after it is the end of the text.
 * 1 or 0.
 */
static int
closes_before(const char *s, size_t n, size_t i)
{
	size_t k = s[i] == ',' ? past_comments(s, n, i + 1) :
	    next_nonspace(s, n, i + 1);

	if (k + 3 <= n && memcmp(s + k, "```", 3) == 0 &&
	    next_nonspace(s, n, k + 3) == n)
		k = n;

	if (s[i] == ',')
		return k < n && (s[k] == '"' || s[k] == '\'' || s[k] == '{' ||
		    s[k] == '[' || s[k] == '-' || is_digit((unsigned char)s[k]) ||
		    is_ident_start((unsigned char)s[k]));
	if (s[i] == '\n')
		return k >= n || s[k] == '"' || s[k] == '}' || s[k] == ']';
	return k >= n || s[k] == ',' || s[k] == '}' || s[k] == ']';
}

/*
 * Is s[i..n) closing brackets and white space only, starting with one:
 * the end of the text?  A string whose closing quote is missing there
 * may hold quotes read inside ({"a": "x "y" z}): nothing else can end
 * it.  1 or 0.
 */
static int
ends_text(const char *s, size_t n, size_t i)
{
	if (i >= n || (s[i] != '}' && s[i] != ']'))
		return 0;
	for (; i < n; i++)
		if (s[i] != '}' && s[i] != ']' && !is_space((unsigned char)s[i]))
			return 0;
	return 1;
}

/*
 * Does s[a..b), trailing white space aside, end with ',' '+' or ':' (or
 * hold nothing)?  1 or 0.
 */
static int
ends_badly(const char *s, size_t a, size_t b)
{
	while (b > a && is_space((unsigned char)s[b - 1]))
		b--;
	return b == a || s[b - 1] == ',' || s[b - 1] == '+' || s[b - 1] == ':';
}

/*
 * Is the quote at s[q] (in the string opened at s[open]) an inch mark:
 * right after a number that stands alone (a 24" screen, not value1")?
 * 1 or 0.
 */
static int
inch_mark(const char *s, size_t open, size_t q)
{
	size_t k = q;

	while (k > open + 1 && (is_digit((unsigned char)s[k - 1]) ||
	    s[k - 1] == '.'))
		k--;
	return k < q && is_digit((unsigned char)s[q - 1]) &&
	    (k == open + 1 || !is_ident((unsigned char)s[k - 1]));
}

/*
 * Does a JSON literal (true, false, null as a whole word) or a number
 * (a digit, or '-' and a digit) start at s[i]?  1 or 0.
 */
static int
scalar_at(const char *s, size_t n, size_t i)
{
	static const char *const lits[] = { "true", "false", "null" };
	size_t k;

	if (i >= n)
		return 0;
	if (is_digit((unsigned char)s[i]) || (s[i] == '-' && i + 1 < n &&
	    is_digit((unsigned char)s[i + 1])))
		return 1;
	for (k = 0; k < 3; k++) {
		size_t w = strlen(lits[k]);

		if (i + w <= n && memcmp(s + i, lits[k], w) == 0 &&
		    (i + w == n || !is_ident((unsigned char)s[i + w])))
			return 1;
	}
	return 0;
}

/*
 * Does the quote at s[q], read inside the string opened at s[open], stand
 * next to structure: followed (white space aside) by ',' ':' ']' '}' '['
 * '{', by another quote after white space, by a literal or a number, or
 * by nothing; or preceded (white space aside, in the string) by ':' '['
 * ']' '{' '}' '+' or the end of a block comment?  Such a quote is a
 * string's end or start, not prose: 1 or 0.
 */
static int
quote_structural(const char *s, size_t n, size_t open, size_t q)
{
	size_t f = next_nonspace(s, n, q + 1), p = q;

	if (f >= n || strchr(",:]}[{", s[f]) != NULL ||
	    (s[f] == '"' && f > q + 1) || scalar_at(s, n, f))
		return 1;
	while (p > open + 1 && is_space((unsigned char)s[p - 1]))
		p--;
	return p > open + 1 && (strchr(":[]{}+", s[p - 1]) != NULL ||
	    (p > open + 2 && s[p - 1] == '/' && s[p - 2] == '*'));
}

/*
 * Does the string s[open..end) (its closing quote missing at end) open
 * with a quote that stands before structure (',' ':' ']' '}' after it,
 * white space aside: the end of a string before, not a start), or trail
 * off in an ellipsis (".." or U+2026 before the end, white space aside:
 * the text goes on)?  Then where it ends is in doubt: 1, else 0.
 */
static int
end_in_doubt(const char *s, size_t open, size_t end)
{
	size_t f = next_nonspace(s, end, open + 1), b = end;

	if (f < end && strchr(",:]}", s[f]) != NULL)
		return 1;
	while (b > open + 1 && is_space((unsigned char)s[b - 1]))
		b--;
	return (b >= open + 3 && s[b - 1] == '.' && s[b - 2] == '.') ||
	    (b >= open + 4 && memcmp(s + b - 3, "\xe2\x80\xa6", 3) == 0);
}

static int quoted_key_at(const struct lex *lx, size_t i);

/*
 * Can the quote at s[q] (in the string opened at s[open]) be a quote
 * inside it: not right after the opening quote, nor after a ':' '{' or
 * '[' (white space aside), where a value would start, nor after a '+'
 * (a string concatenated: "a +" "b"), nor after a ','
 * where a member or an item could: in an array, or in an object where a
 * quoted key and its ':' start at the quote ({"a": "x, "b": 1}); after a
 * ',' in an object with no key there ("lorem, "ipsum" sic"), no member
 * can start at the quote.  1 or 0.
 */
static int
inner_quote_ok(const struct lex *lx, size_t open, size_t q)
{
	const char *s = lx->s;
	size_t p = q;

	while (p > open + 1 && is_space((unsigned char)s[p - 1]))
		p--;
	if (p <= open + 1 || strchr(":{[+", s[p - 1]) != NULL)
		return 0;
	if (s[p - 1] != ',')
		return 1;
	return lx->depth > 0 && lx->stack[lx->depth - 1] == '{' &&
	    s[q] == '"' && !quoted_key_at(lx, q);
}

/*
 * Can a value start after the ':' at s[i] (white space aside): a quote,
 * a bracket, a digit, a '-' or a word?  1 or 0.
 */
static int
value_after_colon(const char *s, size_t n, size_t i)
{
	size_t k = next_nonspace(s, n, i + 1);

	return k < n && (quote_at(s, n, k) || s[k] == '{' || s[k] == '[' ||
	    s[k] == '-' || is_digit((unsigned char)s[k]) ||
	    is_ident_start((unsigned char)s[k]));
}

/*
 * Is the quote at s[i] (right after an opening quote q) a doubled one:
 * another q, then (white space aside) neither the end, nor a quote, nor
 * ',' ':' '}' ']' (after which "" is an empty string)?  1 or 0.
 */
static int
doubled_at(const char *s, size_t n, size_t i, char q)
{
	size_t k;

	if (i >= n || s[i] != q)
		return 0;
	k = next_nonspace(s, n, i + 1);
	return k < n && !quote_at(s, n, k) && strchr(",:}]", s[k]) == NULL;
}

/*
 * Does the cut string s[a..b) end (white space aside) with '}' ']' '\''
 * '`' or '+'?  1 or 0.
 */
static int
cut_badly(const char *s, size_t a, size_t b)
{
	while (b > a && is_space((unsigned char)s[b - 1]))
		b--;
	return b > a && strchr("}]'`+", s[b - 1]) != NULL;
}

static int key_starts(const struct lex *lx, size_t i);
static int item_starts(const struct lex *lx, size_t i);

/*
 * Could a member (in an object) or an item (in an array) start after the
 * ',' at s[i] in a string (block comments passed over): could the string
 * have ended there?  1 or 0.
 */
static int
member_after(const struct lex *lx, size_t i)
{
	size_t j = past_comments(lx->s, lx->n, i + 1);

	if (j >= lx->n || lx->depth == 0)
		return 1;
	return lx->stack[lx->depth - 1] == '{' ? key_starts(lx, j) :
	    item_starts(lx, j) || is_ident_start((unsigned char)lx->s[j]);
}

/*
 * A string opened at lx->i by a quote ('"', '\'', '`', typographic),
 * written out with double quotes; with cont, the string already written
 * goes on (its closing quote taken off by the caller).  A closing quote is
 * a choice: the end (0) or a quote inside (1, "unescaped_quote"); a ',',
 * '}', ']' or line end where a value may end is a choice too: go on (0)
 * or end the string there ("missing_closing_quote", the spaces before a
 * '}' or ']' left out), and so is a ':' in a key with a value after it.
 * A second quote right after the opening one is a choice between the
 * empty string (0) and a doubled quote (1, "doubled_quote").  Returns 0,
 * or -1 when there is no such string here.
 */
static int
string(struct lex *lx, int key, int cont)
{
	const char *s = lx->s;
	size_t n = lx->n;
	char quote = s[lx->i], esc[8];
	int typo = typo_quote(s, n, lx->i), k, inside = 0, odd_ok = 1;
	int comma = 0, top = lx->depth == 0, qd = 0, qend = 0;
	size_t start = lx->i, m;

	if (typo != 0) {
		if (fix(lx, R_TYPO_QUOTES) != 0)
			return -1;
		lx->i += 3;
	} else {
		if ((quote == '\'' && fix(lx, R_SINGLE_QUOTES) != 0) ||
		    (quote == '`' && fix(lx, R_BACKTICKS) != 0))
			return -1;
		/* ``` is a fence, not a string. */
		if (quote == '`' && lx->i + 1 < n && s[lx->i + 1] == '`')
			return -1;
		lx->i++;
	}
	if (!cont && putc_(lx, '"') != 0)
		return -1;
	/*
	 * {"key": ""value"}: a doubled opening quote ("doubled_quote"), a
	 * choice beside the empty string, inside a container.
	 */
	if (!cont && !top && typo == 0 && (quote == '"' || quote == '\'') &&
	    doubled_at(s, n, lx->i, quote)) {
		if ((k = choose(lx, 2)) < 0)
			return -1;
		if (k == 1) {
			if (fix(lx, R_DOUBLED_QUOTE) != 0)
				return -1;
			lx->i++;
		}
	}
	for (;;) {
		unsigned char c;
		int ends;

		if (lx->i >= n) {
			/* A cut string with a quote read inside: no. */
			if (!lx->close || inside)
				return -1;	/* unterminated */
			/*
			 * Cut after a bracket, a quote or a '+': was that its
			 * end (a closing quote missing before it)?  Doubtful.
			 */
			if (cut_badly(s, start + 1, n))
				lx->doubt = 1;
			lx->truncated = 1;
			return 0;
		}
		c = (unsigned char)s[lx->i];
		ends = typo != 0 ? typo_quote(s, n, lx->i) == typo :
		    c == (unsigned char)quote || (quote == '`' &&
		    lx->i + 2 <= n && (unsigned char)s[lx->i] == 0xc2 &&
		    (unsigned char)s[lx->i + 1] == 0xb4);
		if (ends) {
			size_t j = next_nonspace(s, n, lx->i + (typo ? 3 : 1));

			/*
			 * A key ends at its first closing quote, and so does
			 * a string where a key would end (a ':' after it).
			 * Where a bracket or another string follows, or a
			 * value would start before it, a quote inside is a
			 * doubtful reading: it may not be taken, and when it
			 * reads as well as the others, nothing is taken.  (A
			 * bracket after it is no doubt in a string that is the
			 * whole text: see qend below.)
			 */
			if ((k = key || (j < n && s[j] == ':') ? 0 :
			    choose(lx, 2)) < 0)
				return -1;
			if (k == 1 && j < n && (s[j] == '}' || s[j] == ']'))
				qend = 1;
			if (k == 1 && ((j < n && s[j] == '"' &&
			    j > lx->i + 1) || !inner_quote_ok(lx, start, lx->i)))
				qd = 1;
			if (k == 0) {
				lx->i += typo != 0 ? 3 : c == '`' || c == '\'' ||
				    c == '"' ? 1 : 2;
				break;
			}
			if (fix(lx, R_UNESCAPED_QUOTE) != 0)
				return -1;
			/*
			 * An odd number of quotes inside, each an inch mark
			 * (a 24" screen) or, in '...', an apostrophe (don't),
			 * or pairs: else no.
			 */
			inside ^= 2;
			inside |= 1;
			if (quote == '\'' ? !is_ident((unsigned char)
			    s[lx->i - 1]) : !inch_mark(s, start, lx->i))
				odd_ok = 0;
			if (typo != 0) {
				if (put(lx, s + lx->i, 3) != 0)
					return -1;
				lx->i += 3;
			} else {
				if (c == '"' && mark(lx, lx->out->len,
				    quote_structural(s, n, start, lx->i) ?
				    M_ANCHOR : M_PROSE) != 0)
					return -1;
				if (c == '"' ? put(lx, "\\\"", 2) :
				    putc_(lx, (char)c))
					return -1;
				lx->i++;
			}
			continue;
		}
		/*
		 * {"key:"value"}: a key's closing quote missing before its
		 * ':' with a value after it, a choice ("missing_closing_quote";
		 * a key that reads on and ends in ':' has no reading).
		 */
		if (key && c == ':' && typo == 0 && quote != '`' && !inside &&
		    lx->i > start + 1 && !is_space((unsigned char)
		    s[lx->i - 1]) && value_after_colon(s, n, lx->i)) {
			if ((k = choose(lx, 2)) < 0)
				return -1;
			if (k == 1) {
				if (end_in_doubt(s, start, lx->i))
					qd = 1;
				if (fix(lx, R_MISSING_CLOSE) != 0)
					return -1;
				break;
			}
		}
		/*
		 * A missing closing quote: not in a key, not at the top, not
		 * after a quote read inside (but for the brackets that end the
		 * text: see ends_text()).  After a ',' in the string that
		 * a member or item could follow (which one was the end?),
		 * or leaving the string empty or
		 * ending in ',' '+' ':' or white space (was it the value's?),
		 * a doubtful reading.  Before a '}' or ']' the spaces before
		 * it are the layout's, as in { "a": 1 }: the string ends
		 * before them.
		 */
		if (!key && !top && (!inside || ends_text(s, n, lx->i)) &&
		    typo == 0 &&
		    quote != '`' && (c == ',' || c == '}' || c == ']' ||
		    c == '\n') && closes_before(s, n, lx->i)) {
			if ((k = choose(lx, 2)) < 0)
				return -1;
			if (k == 1) {
				m = 0;
				if (c == '}' || c == ']')
					while (lx->i - m > start + 1 &&
					    s[lx->i - m - 1] == ' ')
						m++;
				lx->out->len -= m;
				if (comma || ends_badly(s, start + 1, lx->i) ||
				    is_space((unsigned char)s[lx->i - m - 1]) ||
				    end_in_doubt(s, start, lx->i - m))
					qd = 1;
				if (fix(lx, R_MISSING_CLOSE) != 0)
					return -1;
				break;
			}
		}
		if (c == ',' && member_after(lx, lx->i))
			comma = 1;
		if (c == '"') {			/* inside '...' or typographic */
			if (mark(lx, lx->out->len, M_INNER) != 0 ||
			    put(lx, "\\\"", 2) != 0)
				return -1;
			lx->i++;
		} else if (c == '\\') {
			unsigned char d;
			int j;

			if (lx->i + 1 >= n) {
				if (!lx->close)
					return -1;
				lx->i = n;
				continue;
			}
			d = (unsigned char)s[lx->i + 1];
			if (d == '\'') {
				if (quote != '\'' &&
				    fix(lx, R_INVALID_ESCAPE) != 0)
					return -1;
				if (putc_(lx, '\'') != 0)
					return -1;
				lx->i += 2;
			} else if (d == 'u') {
				for (j = 0; j < 4; j++)
					if (lx->i + 2 + (size_t)j >= n ||
					    !is_hex((unsigned char)
					    s[lx->i + 2 + j]))
						break;
				if (j < 4) {
					if (!lx->close ||
					    lx->i + 2 + (size_t)j < n)
						return -1;
					lx->i = n;
					continue;
				}
				if (put(lx, s + lx->i, 6) != 0)
					return -1;
				lx->i += 6;
			} else if (d == 'x' && lx->i + 3 < n &&
			    is_hex((unsigned char)s[lx->i + 2]) &&
			    is_hex((unsigned char)s[lx->i + 3])) {
				if (fix(lx, R_INVALID_ESCAPE) != 0)
					return -1;
				snprintf(esc, sizeof(esc), "\\u00%c%c",
				    s[lx->i + 2], s[lx->i + 3]);
				if (put(lx, esc, 6) != 0)
					return -1;
				lx->i += 4;
			} else if (strchr("\"\\/bfnrt", d) != NULL &&
			    d != '\0') {
				if ((d == '"' && mark(lx, lx->out->len,
				    M_ESCAPED) != 0) ||
				    put(lx, s + lx->i, 2) != 0)
					return -1;
				lx->i += 2;
			} else {
				return -1;	/* no single reading */
			}
		} else if (c < 0x20) {		/* a raw control character */
			/* "key\n": where does that key end? */
			if (key && lx->i + 1 < n && s[lx->i + 1] == quote)
				return -1;
			switch (c) {
			case '\n':
				strcpy(esc, "\\n");
				break;
			case '\r':
				strcpy(esc, "\\r");
				break;
			case '\t':
				strcpy(esc, "\\t");
				break;
			default:
				snprintf(esc, sizeof(esc), "\\u%04x", c);
				break;
			}
			if (fix(lx, R_CONTROL_CHARACTER) != 0 ||
			    put(lx, esc, strlen(esc)) != 0)
				return -1;
			lx->i++;
			continue;
		} else {
			if (putc_(lx, (char)c) != 0)
				return -1;
			lx->i++;
		}
	}
	/*
	 * A lone quote inside (an odd number, not all inch marks or
	 * apostrophes) counts twice: itself and the partner it lost.
	 */
	if ((inside & 2) && !odd_ok) {
		if (fix(lx, R_UNESCAPED_QUOTE) != 0)
			return -1;
		qend = 1;
	}
	/*
	 * A string that is the whole text ends at its last quote: no other
	 * reading puts its end elsewhere, so a lone quote or a bracket after
	 * a quote inside is no doubt there.  A doubt is marked on the closing
	 * quote: only the schema's anchor lifts it (swallowed()).
	 */
	if ((qd || (qend && !(top && next_nonspace(s, n, lx->i) >= n))) &&
	    mark(lx, lx->out->len, M_ANCHOR) != 0)
		return -1;
	/* "key:" "value": the quote after the colon is missing. */
	if (key && lx->out->data[lx->out->len - 1] == ':')
		return -1;
	lx->last_string = 1;
	return putc_(lx, '"');
}

/*
 * The end of the digits at s[i]: a '_' between two digits goes on them
 * (1_000, as in Python and JavaScript).  Returns the index after them.
 */
static size_t
digits(const char *s, size_t n, size_t i)
{
	while (i < n && (is_digit((unsigned char)s[i]) || (s[i] == '_' &&
	    i > 0 && is_digit((unsigned char)s[i - 1]) && i + 1 < n &&
	    is_digit((unsigned char)s[i + 1]))))
		i++;
	return i;
}

/*
 * Write the number p[0..len), its '_' separators taken out
 * ("number_form"): 0, or -1.
 */
static int
put_digits(struct lex *lx, const char *p, size_t len)
{
	size_t k;

	if (memchr(p, '_', len) == NULL)
		return put(lx, p, len);
	if (fix(lx, R_NUMBER_FORM) != 0)
		return -1;
	for (k = 0; k < len; k++)
		if (p[k] != '_' && putc_(lx, p[k]) != 0)
			return -1;
	return 0;
}

/*
 * A number cut at the end of the input, s[d..i): written as it is, for
 * the scanner to drop its dangling '.', 'e' or sign.  Returns 0, or -1.
 */
static int
cut_number(struct lex *lx, size_t d, size_t i)
{
	if (put_digits(lx, lx->s + d, i - d) != 0)
		return -1;
	lx->i = i;
	lx->truncated = 1;
	return 0;
}

/*
 * A number: RFC 8259's, or with a '+' sign, no digit before the '.' or
 * none after it, or an exponent with no digit in a container (2e, 2e+:
 * the 'e' and sign dropped) ("number_form"), or a signed Infinity (null,
 * "not_json_value").  Cut by the end of the input (white space aside),
 * with close, it is left for the scanner to drop what dangles.  Returns
 * 0 or -1.
 */
static int
number(struct lex *lx)
{
	const char *s = lx->s;
	size_t i = lx->i, n = lx->n, d;

	if (s[i] == '+') {
		if (fix(lx, R_NUMBER_FORM) != 0)
			return -1;
		i++;
	} else if (s[i] == '-') {
		if (putc_(lx, '-') != 0)
			return -1;
		i++;
	}
	if (i + 8 <= n && memcmp(s + i, "Infinity", 8) == 0 &&
	    (i + 8 == n || !is_ident((unsigned char)s[i + 8]))) {
		if (s[lx->i] == '-')
			lx->out->len--;
		if (fix(lx, R_NOT_JSON_VALUE) != 0 || put(lx, "null", 4) != 0)
			return -1;
		lx->i = i + 8;
		return 0;
	}
	if (i < n && s[i] == '.' && i + 1 < n &&
	    is_digit((unsigned char)s[i + 1])) {
		if (fix(lx, R_NUMBER_FORM) != 0 || putc_(lx, '0') != 0)
			return -1;
	} else if (i >= n || !is_digit((unsigned char)s[i])) {
		if (next_nonspace(s, n, i) >= n && lx->close &&
		    lx->depth > 0) {
			lx->truncated = 1;	/* a cut sign */
			lx->i = n;
			return 0;
		}
		return -1;
	} else if (s[i] == '0' && i + 1 < n &&
	    is_digit((unsigned char)s[i + 1])) {
		return -1;			/* 01: octal or a slip? */
	}
	d = i;
	i = digits(s, n, i);
	if (i < n && s[i] == '.') {
		i++;
		if (i >= n || !is_digit((unsigned char)s[i])) {
			/* Cut after the point: the scanner drops it. */
			if (i >= n && lx->close)
				return cut_number(lx, d, i);
			if (i < n && (is_ident((unsigned char)s[i]) ||
			    s[i] == '.'))
				return -1;
			if (put_digits(lx, s + d, i - d) != 0 ||
			    fix(lx, R_NUMBER_FORM) != 0 || putc_(lx, '0') != 0)
				return -1;
			lx->i = i;
			return 0;
		}
		i = digits(s, n, i);
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t e = i++, k;

		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n && lx->close)
			return cut_number(lx, d, i);
		/*
		 * 2e, 2e+ before a ',' '}' ']' or the end (white space
		 * aside; not 2e -3: a space astray?), in a container:
		 * dropped.
		 */
		k = next_nonspace(s, n, i);
		if (i < n && lx->depth > 0 && (k >= n || (s[k] != '\0' &&
		    strchr(",}]", s[k]) != NULL))) {
			if (put_digits(lx, s + d, e - d) != 0 ||
			    fix(lx, R_NUMBER_FORM) != 0)
				return -1;
			lx->i = i;
			return 0;
		}
		if (i >= n || !is_digit((unsigned char)s[i]))
			return -1;
		i = digits(s, n, i);
	}
	/* 1.2.3, 2024-10-18, 1/3, 12:30: no number. */
	if (i < n && (is_ident((unsigned char)s[i]) || s[i] == '.' ||
	    s[i] == '-' || s[i] == ':' || (s[i] == '/' && !(i + 1 < n &&
	    (s[i + 1] == '*' || s[i + 1] == '/')))))
		return -1;
	if (put_digits(lx, s + d, i - d) != 0)
		return -1;
	lx->i = i;
	return 0;
}

/* The identifier at lx->i: its length (0 when there is none). */
static size_t
ident_len(const struct lex *lx)
{
	size_t i = lx->i;

	if (i >= lx->n || !is_ident_start((unsigned char)lx->s[i]))
		return 0;
	while (i < lx->n && is_ident((unsigned char)lx->s[i]))
		i++;
	return i - lx->i;
}

/* Is s[0..n) w in any letter case?  1 or 0. */
static int
same_word(const char *s, size_t n, const char *w)
{
	size_t k;

	if (n != strlen(w))
		return 0;
	for (k = 0; k < n; k++)
		if ((s[k] | 0x20) != w[k])
			return 0;
	return 1;
}

/*
 * Is s[0..n) a word JSON, Python or JavaScript has for a value (true,
 * None, NaN, undefined...), in any letter case?  1 or 0.
 */
static int
literal_word(const char *s, size_t n)
{
	static const char *const words[] = { "nan", "infinity", "undefined",
	    "true", "false", "null", "none" };
	size_t k;

	for (k = 0; k < sizeof(words) / sizeof(words[0]); k++)
		if (same_word(s, n, words[k]))
			return 1;
	return 0;
}

/*
 * Write the literal at lx->i as JSON: true, false, null as they are;
 * True, False, None ("python_literal"); those words in another letter
 * case ("literal_case"); NaN, Infinity, undefined as null
 * ("not_json_value").  Returns 1 written, 0 when there is no literal
 * there, -1 on failure.
 */
static int
literal(struct lex *lx)
{
	static const char *const json[] = { "true", "false", "null", "null" };
	static const char *const py[] = { "True", "False", "None", NULL };
	static const char *const words[] = { "true", "false", "null", "none" };
	const char *p = lx->s + lx->i;
	size_t n = ident_len(lx), k;

	if (n == 0)
		return 0;
	for (k = 0; k < 4; k++) {
		if (n == strlen(words[k]) && memcmp(p, words[k], n) == 0 &&
		    k < 3)
			break;
		if (py[k] != NULL && n == strlen(py[k]) &&
		    memcmp(p, py[k], n) == 0) {
			if (fix(lx, R_PYTHON_LITERAL) != 0)
				return -1;
			break;
		}
		if (same_word(p, n, words[k])) {
			if (fix(lx, R_LITERAL_CASE) != 0)
				return -1;
			break;
		}
	}
	if (k == 4) {
		if ((n == 3 && memcmp(p, "NaN", 3) == 0) ||
		    (n == 8 && memcmp(p, "Infinity", 8) == 0) ||
		    (n == 9 && memcmp(p, "undefined", 9) == 0)) {
			if (fix(lx, R_NOT_JSON_VALUE) != 0)
				return -1;
			k = 2;
		} else if (lx->close && lx->i + n == lx->n && lx->depth > 0) {
			/* A cut literal: the scanner finishes it. */
			for (k = 0; k < 3; k++)
				if (n < strlen(json[k]) &&
				    memcmp(p, json[k], n) == 0)
					break;
			if (k == 3)
				return 0;
			lx->i += n;
			lx->truncated = 1;
			return put(lx, p, n) == 0 ? 1 : -1;
		} else {
			return 0;
		}
	}
	lx->i += n;
	return put(lx, json[k], strlen(json[k])) == 0 ? 1 : -1;
}

/*
 * Is there a quoted key and its ':' at s[i] (a '"' or '\'', no backslash
 * or line end before the same quote again, then white space and ':')?
 * 1 or 0.
 */
static int
quoted_key_at(const struct lex *lx, size_t i)
{
	const char *s = lx->s;
	size_t n = lx->n, j;

	for (j = i + 1; j < n && s[j] != s[i]; j++)
		if (s[j] == '\\' || s[j] == '\n')
			return 0;
	if (j >= n || j == i + 1)
		return 0;
	j = next_nonspace(s, n, j + 1);
	return j < n && s[j] == ':';
}

/* Is there a ':' right before lx->i (white space aside)?  1 or 0. */
static int
after_colon(const struct lex *lx)
{
	size_t i = lx->i;

	while (i > 0 && is_space((unsigned char)lx->s[i - 1]))
		i--;
	return i > 0 && lx->s[i - 1] == ':';
}

/*
 * May the bare word at s[i] hold the character c: not a bracket, a quote
 * other than '"', a '(' at its start (i == at), a ':' before white space
 * or the end?  1 or 0.
 */
static int
bare_char_ok(const struct lex *lx, size_t at, size_t i)
{
	const char *s = lx->s;

	if (s[i] == '{' || s[i] == '[' || s[i] == '\'' || s[i] == '`' ||
	    (s[i] == '(' && i == at) || typo_quote(s, lx->n, i))
		return 0;
	return !(s[i] == ':' && (i + 1 >= lx->n ||
	    is_space((unsigned char)s[i + 1])));
}

/*
 * The closing quote of a value whose opening quote is missing, read on
 * over ',' from s[i]: the index of the first '"' (no bracket, line end or
 * other quote before it, as bare_char_ok()), when a ',' comes before it
 * and a ',' '}' ']' or the end after it; else 0.
 */
static size_t
quote_after_commas(const struct lex *lx, size_t i)
{
	const char *s = lx->s;
	size_t at = i, k;
	int comma = 0;

	for (; i < lx->n && s[i] != '"'; i++) {
		if (strchr("}]\n\r", s[i]) != NULL || s[i] == '\0' ||
		    !bare_char_ok(lx, at, i))
			return 0;
		if (s[i] == ',')
			comma = 1;
	}
	if (i >= lx->n || !comma)
		return 0;
	k = next_nonspace(s, lx->n, i + 1);
	return k >= lx->n || strchr(",}]", s[k]) != NULL ? i : 0;
}

/*
 * Does an array item whose opening quote is missing start at s[i]: a
 * word after white space (right after a quote it is "x"y": a quote
 * inside), then (no ',', bracket, line end or other quote before it) a '"'
 * with a ',' or ']' after it, white space aside ("consectetur" comment")?
 * Then its comma before it is missing too.  1 or 0.
 */
static int
bare_item_at(const struct lex *lx, size_t i)
{
	const char *s = lx->s;
	size_t at = i, k;

	if (i >= lx->n || !is_ident_start((unsigned char)s[i]) ||
	    !is_space((unsigned char)s[i - 1]))
		return 0;
	for (; i < lx->n && s[i] != '"'; i++)
		if (strchr(",}]\n\r", s[i]) != NULL || s[i] == '\0' ||
		    !bare_char_ok(lx, at, i))
			return 0;
	if (i >= lx->n)
		return 0;
	k = next_nonspace(s, lx->n, i + 1);
	return k < lx->n && (s[k] == ',' || s[k] == ']');
}

/*
 * A bracketed part glued to a bare word (words{in brackets}, f[x]): s[i]
 * opens it right after a letter, digit or '_' of the word that began at
 * s[at], and it closes on the same line before any quote, colon or other
 * bracket.  A bracket so glued cannot start a value (no comma or key
 * came before it), so it is text.  Returns the index just past its
 * closing bracket, else 0.
 */
static size_t
glued_brackets(const struct lex *lx, size_t at, size_t i)
{
	const char *s = lx->s;
	char close;
	size_t j;

	if (i == at || (s[i] != '{' && s[i] != '[') ||
	    !is_ident((unsigned char)s[i - 1]))
		return 0;
	close = s[i] == '{' ? '}' : ']';
	for (j = i + 1; j < lx->n; j++) {
		if (s[j] == close)
			return j + 1;
		if (strchr("{[]}\"'`:\n\r", s[j]) != NULL ||
		    typo_quote(s, lx->n, j))
			return 0;
	}
	return 0;
}

/*
 * A string value with no quotes, up to the next ',' '}' ']' line end or
 * comment ("unquoted_string"); a '"' right before that end is a missing
 * opening quote ("missing_opening_quote").  Only inside a container, never
 * holding a bracket or a quote; cut by the end of the input, only with
 * close (then it is cut there).  In an object, a value that runs over ','
 * to a '"' that ends it ({"a": x, y, z."}, see quote_after_commas()) is a
 * choice: it ends at the first ',' (0) or at that quote (1; a ',' there
 * must start a member, so at most one of them reads).  Returns 0, or -1.
 */
static int
bare_string(struct lex *lx)
{
	const char *s = lx->s;
	size_t i = lx->i, end, k;
	int over = 0;

	if (lx->stack[lx->depth - 1] == '{' &&
	    quote_after_commas(lx, i) != 0 && (over = choose(lx, 2)) < 0)
		return -1;
	while (i < lx->n && strchr("}]\n\r", s[i]) == NULL && s[i] != '\0' &&
	    (s[i] != ',' || over)) {
		size_t g = glued_brackets(lx, lx->i, i);

		if (g != 0) {
			i = g;
			continue;
		}
		if (!bare_char_ok(lx, lx->i, i))
			return -1;
		if (s[i] == ' ' && i + 1 < lx->n && (s[i + 1] == '#' ||
		    (s[i + 1] == '/' && i + 2 < lx->n && s[i + 2] == '/')))
			break;
		if (s[i] == '"')
			break;
		i++;
	}
	/* Cut: with close, it ends there as a cut string would. */
	if (i >= lx->n && !lx->close)
		return -1;
	/* Read on over ',': only to the quote that ends it. */
	if (over && (i >= lx->n || s[i] != '"'))
		return -1;
	end = i;
	/*
	 * {"a": hello "b": 1}: the quote starts the next member (its comma
	 * missing; only after a ':' written, not one put back), else it is
	 * the closing one of a string not opened.
	 */
	if (i < lx->n && s[i] == '"' && !(lx->stack[lx->depth - 1] == '{' &&
	    after_colon(lx) && quoted_key_at(lx, i))) {
		k = next_nonspace(s, lx->n, i + 1);
		if (k < lx->n && strchr(",}]", s[k]) == NULL)
			return -1;
		if (k >= lx->n && !lx->close)
			return -1;
		if (fix(lx, R_MISSING_OPEN) != 0)
			return -1;
		i++;
	}
	while (end > lx->i && (s[end - 1] == ' ' || s[end - 1] == '\t'))
		end--;
	/* A cut or misspelt literal ("tru", "nul") is no string. */
	for (k = 0; k < 3; k++) {
		static const char *const lits[] = { "true", "false", "null" };

		if (end - lx->i < strlen(lits[k]) &&
		    strncasecmp(s + lx->i, lits[k], end - lx->i) == 0)
			return -1;
	}
	if (end == lx->i || fix(lx, R_UNQUOTED_STRING) != 0 ||
	    putc_(lx, '"') != 0)
		return -1;
	for (k = lx->i; k < end; k++) {
		if (s[k] == '\\' ? put(lx, "\\\\", 2) : s[k] == '\t' ?
		    put(lx, "\\t", 2) : putc_(lx, s[k]))
			return -1;
	}
	lx->i = i;
	lx->last_string = 1;
	if (i >= lx->n)
		lx->truncated = 1;
	return putc_(lx, '"');
}

/*
 * A value that starts as a number but is none (a date, a version, a
 * fraction, an id, a code with leading zeros): one word with no space, up
 * to ',' '}' ']' (white space before it allowed), holding a letter no
 * number holds (not a hex digit, x or _: 0x1F, 1e1x stay refused), a
 * ':' or '/', a '-' after its start, more than one '.', or starting with
 * a 0 and a digit (0789, 007: kept as written, since a number would lose
 * the zeros); written as a string ("unquoted_string").  Returns 0, or -1
 * when there is none.
 */
static int
word_string(struct lex *lx)
{
	const char *s = lx->s;
	size_t i = lx->i, k, dash = 0, dot = 0;
	int other = 0;

	while (i < lx->n && !is_space((unsigned char)s[i]) &&
	    strchr(",}]", s[i]) == NULL) {
		if (s[i] == '"' || s[i] == '\'' || s[i] == '{' ||
		    s[i] == '[' || s[i] == '\\' || s[i] == '#' ||
		    (unsigned char)s[i] < 0x20 || (s[i] == '/' && i + 1 <
		    lx->n && (s[i + 1] == '*' || s[i + 1] == '/')))
			return -1;
		if (s[i] == '-' && i > lx->i)
			dash++;
		else if (s[i] == '.')
			dot++;
		else if (s[i] == ':' || s[i] == '/' ||
		    (is_ident_start((unsigned char)s[i]) && !is_hex(
		    (unsigned char)s[i]) && s[i] != 'x' && s[i] != 'X' &&
		    s[i] != '_'))
			other = 1;
		i++;
	}
	k = next_nonspace(s, lx->n, i);
	if (k >= lx->n || strchr(",}]", s[k]) == NULL)
		return -1;
	k = lx->i + (s[lx->i] == '-');
	if (k + 1 < i && s[k] == '0' && is_digit((unsigned char)s[k + 1]))
		other = 1;
	if (!other && dash < 2 && dot < 2 && !(dash == 1 && dot == 0))
		return -1;
	if (fix(lx, R_UNQUOTED_STRING) != 0 || putc_(lx, '"') != 0 ||
	    put(lx, s + lx->i, i - lx->i) != 0 || putc_(lx, '"') != 0)
		return -1;
	lx->i = i;
	lx->last_string = 1;
	return 0;
}

/*
 * Open a container c ('{', '[', TUPLE or WRAPPER) and write it ('[' for
 * a tuple, nothing for a wrapper): 0, or -1 past SAOP_MAX_DEPTH or with
 * no memory (lx->nomem set).
 */
static int
push(struct lex *lx, char c)
{
	if (lx->depth >= SAOP_MAX_DEPTH)
		return -1;
	if (lx->depth == lx->stack_cap) {
		size_t cap = lx->stack_cap ? lx->stack_cap * 2 : 64;
		char *p;
		size_t *o;

		if ((p = realloc(lx->stack, cap)) == NULL) {
			lx->nomem = 1;
			return -1;
		}
		lx->stack = p;
		if ((o = realloc(lx->opened, cap * sizeof(*o))) == NULL) {
			lx->nomem = 1;
			return -1;
		}
		lx->opened = o;
		lx->stack_cap = cap;
	}
	lx->opened[lx->depth] = lx->out->len;
	lx->stack[lx->depth++] = c;
	if (c == WRAPPER)
		return 0;
	return putc_(lx, c == TUPLE ? '[' : c);
}

/* Is the innermost open container a tuple?  1 or 0. */
static int
in_tuple(const struct lex *lx)
{
	return lx->depth > 0 && (lx->stack[lx->depth - 1] == TUPLE ||
	    lx->stack[lx->depth - 1] == TUPLE_COMMA);
}

/*
 * Close the tuple or wrapper on top at the ')' at lx->i: a tuple with a
 * comma is an array, one with none a group (its value alone: (1) is 1),
 * a wrapper leaves its value.  Returns 0, or -1.
 */
static int
close_paren(struct lex *lx)
{
	char c = lx->stack[--lx->depth];
	size_t at = lx->opened[lx->depth];

	lx->i++;
	if (c == TUPLE_COMMA)
		return putc_(lx, ']');
	if (c == TUPLE) {	/* take the '[' out */
		memmove(lx->out->data + at, lx->out->data + at + 1,
		    lx->out->len - at - 1);
		lx->out->data[--lx->out->len] = '\0';
	}
	return 0;
}

/*
 * A MongoDB shell wrapper at lx->i: ObjectId, ISODate, NumberLong,
 * NumberInt, NumberDecimal or UUID, then '(' (white space aside), its one
 * value to be kept ("shell_wrapper").  Skips past the '(' and opens it:
 * 1, 0 when there is none, -1 on failure.
 */
static int
shell_wrapper(struct lex *lx)
{
	static const char *const wrappers[] = { "ObjectId", "ISODate",
	    "NumberLong", "NumberInt", "NumberDecimal", "UUID" };
	size_t n = ident_len(lx), k, j;

	for (k = 0; k < sizeof(wrappers) / sizeof(wrappers[0]); k++)
		if (n == strlen(wrappers[k]) &&
		    memcmp(lx->s + lx->i, wrappers[k], n) == 0)
			break;
	if (k == sizeof(wrappers) / sizeof(wrappers[0]))
		return 0;
	j = next_nonspace(lx->s, lx->n, lx->i + n);
	if (j >= lx->n || lx->s[j] != '(')
		return 0;
	lx->i = j + 1;
	if (fix(lx, R_SHELL_WRAPPER) != 0 || push(lx, WRAPPER) != 0)
		return -1;
	return 1;
}

/* Is "..." at lx->i (an elision)?  Then skip it: 1, else 0. */
static int
ellipsis(struct lex *lx)
{
	if (lx->i + 3 > lx->n || memcmp(lx->s + lx->i, "...", 3) != 0)
		return 0;
	lx->i += 3;
	return 1;
}

/* The closing bracket of the innermost open container. */
static char
closer(const struct lex *lx)
{
	return lx->stack[lx->depth - 1] == '{' ? '}' : ']';
}

/*
 * The closing bracket c at lx->i is of the wrong kind for the innermost
 * container: a choice between the right one missing before it (when c
 * closes the container around: then c is read again) and c standing for
 * the right one ("mismatched_bracket").  The container is closed.  When
 * no container of c's kind is open and c doubles the bracket before it
 * ([{"a": 1}}, ...]), c may be a surplus one instead, dropped
 * ("surplus_bracket"; the container stays open).  Returns 0, or -1.
 */
static int
wrong_bracket(struct lex *lx, unsigned char c)
{
	size_t d, p = lx->i;
	int k;

	while (p > 0 && is_space((unsigned char)lx->s[p - 1]))
		p--;
	for (d = 0; d < lx->depth && lx->stack[d] != (c == '}' ? '{' :
	    '['); d++)
		;
	if (d == lx->depth && p > 0 && lx->s[p - 1] == (char)c) {
		if ((k = choose(lx, 2)) < 0)
			return -1;
		if (k == 1) {
			lx->i++;
			return fix(lx, R_SURPLUS_BRACKET);
		}
	}
	if (lx->depth < 2 || c != (lx->stack[lx->depth - 2] == '{' ? '}' :
	    ']'))
		k = 1;
	else if ((k = choose(lx, 2)) < 0)
		return -1;
	if (fix(lx, R_MISMATCHED_BRACKET) != 0 || putc_(lx, closer(lx)) != 0)
		return -1;
	lx->depth--;
	if (k == 1)
		lx->i++;
	return 0;
}

/*
 * Can an object member start at s[i]: a quoted key, or a bare key with a
 * ':' after it?  1 or 0.
 */
static int
key_starts(const struct lex *lx, size_t i)
{
	size_t k = i;

	if (quote_at(lx->s, lx->n, i))
		return 1;
	if (i >= lx->n || !is_ident((unsigned char)lx->s[i]))
		return 0;
	while (k < lx->n && is_ident((unsigned char)lx->s[k]))
		k++;
	k = next_nonspace(lx->s, lx->n, k);
	return k < lx->n && lx->s[k] == ':';
}

/*
 * Does a literal JSON does not have (NaN, Infinity, undefined, TRUE...)
 * start at lx->i?  1 or 0.
 */
static int
literal_at(const struct lex *lx)
{
	return literal_word(lx->s + lx->i, ident_len(lx));
}

/* Can an array item (not a bare string) start at s[i]?  1 or 0. */
static int
item_starts(const struct lex *lx, size_t i)
{
	static const char *const words[] = { "true", "false", "null",
	    "True", "False", "None" };
	unsigned char c = (unsigned char)lx->s[i];
	size_t k;

	for (k = 0; k < 6; k++) {
		size_t w = strlen(words[k]);

		if (i + w <= lx->n && memcmp(lx->s + i, words[k], w) == 0 &&
		    (i + w == lx->n || !is_ident((unsigned char)lx->s[i + w])))
			return 1;
	}
	return quote_at(lx->s, lx->n, i) || c == '{' || c == '[' ||
	    is_digit(c) || c == '-';
}

/*
 * Is there a line end in the white space right before lx->i (an array's
 * items one a line, a bare word starting the next)?  1 or 0.
 */
static int
line_before(const struct lex *lx)
{
	size_t i = lx->i;

	while (i > 0 && is_space((unsigned char)lx->s[i - 1]))
		if (lx->s[--i] == '\n')
			return 1;
	return 0;
}

/*
 * Does a member come after the '}' at lx->i: a ',' and a quoted or bare
 * key with its ':', or a quoted key with a quoted value right after it
 * (its ':' missing: {"a": 1}, "b" "c"}), then that '}' may be a stray
 * one?  1 or 0.
 */
static int
member_follows(const struct lex *lx)
{
	const char *s = lx->s;
	size_t n = lx->n, j = next_nonspace(s, n, lx->i + 1);

	if (j >= n || s[j] != ',')
		return 0;
	j = next_nonspace(s, n, j + 1);
	if (j < n && s[j] == '"') {
		for (j++; j < n && s[j] != '"'; j++)
			if (s[j] == '\\')
				j++;
		j = next_nonspace(s, n, j + 1);
		return j < n && (s[j] == ':' || s[j] == '"');
	}
	return key_starts(lx, j) && !quote_at(s, n, j);
}

/*
 * The index of the first byte at or after i that is neither white space
 * nor inside a // or block comment (a comment there is counted).
 */
static size_t
after_plus(struct lex *lx, size_t i)
{
	const char *s = lx->s;
	size_t n = lx->n;

	for (;;) {
		i = next_nonspace(s, n, i);
		if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
			for (i += 2; i + 1 < n && !(s[i] == '*' &&
			    s[i + 1] == '/'); i++)
				;
			i += 2;
		} else if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				i++;
		} else {
			return i;
		}
		lx->repairs |= R_COMMENT;
	}
}

/* Does a '+' come next (after white space and comments)?  1 or 0. */
static int
plus_follows(struct lex *lx)
{
	repairs_t r = lx->repairs;
	size_t i = after_plus(lx, lx->i);

	lx->repairs = r;
	return i < lx->n && lx->s[i] == '+';
}

/*
 * Is the innermost container an object in an array (its items objects,
 * one of which may lack a bracket)?  1 or 0.  ([{{"a": 1}] is not read:
 * a '{' doubled, or an empty object?)
 */
static int
object_in_array(const struct lex *lx)
{
	return lx->depth >= 2 && lx->stack[lx->depth - 1] == '{' &&
	    lx->stack[lx->depth - 2] == '[';
}

/*
 * A stray word where an object's member starts: one identifier (no
 * literal: true, null, NaN... in any case) at lx->i, white space, then a
 * quoted key and its ':' ({"a": 1, COMMENT "b": 2}).  Not after a value
 * ({"a": "John" Smith}: a quote misplaced, not a word astray).  Skips it,
 * counted as "stray_word": 1, 0 when there is none, -1 when the pass
 * costs too much.
 */
static int
stray_word(struct lex *lx)
{
	size_t n = ident_len(lx), j;

	if (n == 0 || literal_at(lx) || lx->i + n >= lx->n ||
	    !is_space((unsigned char)lx->s[lx->i + n]))
		return 0;
	j = next_nonspace(lx->s, lx->n, lx->i + n);
	if (j >= lx->n || (lx->s[j] != '"' && lx->s[j] != '\'') ||
	    !quoted_key_at(lx, j))
		return 0;
	lx->i = j;
	return fix(lx, R_STRAY_WORD) != 0 ? -1 : 1;
}

/*
 * The end of a plain JSON number at s[i] (-?int(.digits)?(e[+-]?digits)?,
 * no leading zero), or i when there is none.
 */
static size_t
plain_number(const char *s, size_t n, size_t i)
{
	size_t j = i + (i < n && s[i] == '-'), k;

	if (j >= n || !is_digit((unsigned char)s[j]))
		return i;
	if (s[j] == '0')
		j++;
	else
		while (j < n && is_digit((unsigned char)s[j]))
			j++;
	if (j < n && s[j] == '.') {
		for (k = j + 1; k < n && is_digit((unsigned char)s[k]); k++)
			;
		if (k == j + 1)
			return i;
		j = k;
	}
	if (j < n && (s[j] == 'e' || s[j] == 'E')) {
		k = j + 1 + (j + 1 < n && (s[j + 1] == '+' || s[j + 1] == '-'));
		if (k >= n || !is_digit((unsigned char)s[k]))
			return i;
		while (k < n && is_digit((unsigned char)s[k]))
			k++;
		j = k;
	}
	return j;
}

/*
 * A Python set at lx->i: '{', two or more items with ',' between them
 * and no ':', '}'; each item a plain number or a string in ' or " with
 * no backslash, no other quote and no control character ({'a', 'b'}, as
 * Python prints a set).  Two items the first of them in double quotes
 * are no set: {"a" , 1} may be an object whose ':' became a ',' (Python
 * writes a set's strings in single quotes).  Writes it as an array
 * ("python_set"; single quotes named too) and returns 1 with lx->i past
 * its '}'; returns 0, writing nothing, when there is no such set; -1 on
 * no memory.
 */
static int
python_set(struct lex *lx)
{
	const char *s = lx->s;
	size_t i = lx->i + 1, items = 0, at[2 * 64];
	repairs_t r = R_PYTHON_SET;
	size_t k;

	for (;;) {
		size_t j;

		i = next_nonspace(s, lx->n, i);
		if (i >= lx->n || items == 64)
			return 0;
		if (s[i] == '"' || s[i] == '\'') {
			for (j = i + 1; j < lx->n && s[j] != s[i]; j++)
				if (s[j] == '"' || s[j] == '\'' ||
				    s[j] == '\\' || (unsigned char)s[j] < 0x20)
					return 0;
			if (j >= lx->n)
				return 0;
			if (s[i] == '\'')
				r |= R_SINGLE_QUOTES;
			j++;
		} else if ((j = plain_number(s, lx->n, i)) == i) {
			return 0;
		}
		at[2 * items] = i;
		at[2 * items++ + 1] = j;
		i = next_nonspace(s, lx->n, j);
		if (i < lx->n && s[i] == ',') {
			i++;
			continue;
		}
		if (i < lx->n && s[i] == '}' && items >= 2 &&
		    !(items == 2 && s[at[0]] == '"'))
			break;
		return 0;
	}
	if (fix(lx, r) != 0 || putc_(lx, '[') != 0)
		return -1;
	for (k = 0; k < items; k++) {
		size_t a = at[2 * k], b = at[2 * k + 1];
		int q = s[a] == '\'';

		if ((k > 0 && putc_(lx, ',') != 0) ||
		    (q && putc_(lx, '"') != 0) ||
		    put(lx, s + a + q, b - a - 2 * q) != 0 ||
		    (q && putc_(lx, '"') != 0))
			return -1;
	}
	lx->i = i + 1;
	return putc_(lx, ']') != 0 ? -1 : 1;
}

/*
 * Read one value at lx->i (after white space and comments), writing it out
 * as strict JSON.  Iterative, so deep nesting needs no C stack.  Returns 0
 * with lx->i just past the value (lx->truncated when the input ended in it
 * and the pass may close it), or -1.
 */
static int
value(struct lex *lx)
{
	enum { VALUE, VALUE_OR_END, KEY, KEY_OR_END, AFTER } st = VALUE;
	const char *s = lx->s;
	size_t comma;
	int k;

	lx->depth = 0;
	lx->implicit = 0;
	for (;;) {
		unsigned char c;

		if (skip_space(lx) != 0)
			return -1;
		if (lx->implicit > lx->depth)
			lx->implicit = 0;	/* that object closed */
		/* {"a": "b"```: a closing fence after a cut value, dropped */
		if (lx->close && lx->depth > 0 && lx->i + 3 <= lx->n &&
		    memcmp(s + lx->i, "```", 3) == 0 &&
		    next_nonspace(s, lx->n, lx->i + 3) >= lx->n) {
			if (fix(lx, R_CODE_FENCE) != 0)
				return -1;
			lx->i = lx->n;
		}
		if (lx->i >= lx->n) {
			/* It ends before the value does. */
			if (!lx->close || (lx->depth == 0 && st != AFTER))
				return -1;
			lx->truncated = 1;
			return 0;
		}
		c = (unsigned char)s[lx->i];
		if (lx->depth > 0)
			lx->tokens++;
		if (st != AFTER)
			lx->last_string = 0;
		switch (st) {
		case VALUE_OR_END:
			/* [] or () */
			if (c == (in_tuple(lx) ? ')' : ']')) {
				lx->i++;
				lx->depth--;
				if (putc_(lx, ']') != 0)
					return -1;
				st = AFTER;
				break;
			}
			if (c == ',') {		/* [,1] */
				lx->i++;
				if (fix(lx, R_EXTRA_COMMA) != 0)
					return -1;
				break;
			}
			/* FALLTHROUGH */
		case VALUE:
			if (lx->depth > 0 && ellipsis(lx)) {
				if (fix(lx, R_ELLIPSIS) != 0)
					return -1;
				st = lx->stack[lx->depth - 1] != '{' ?
				    VALUE_OR_END : KEY_OR_END;
				if (skip_space(lx) != 0)
					return -1;
				if (lx->i < lx->n && s[lx->i] == ',')
					lx->i++;
				else if (lx->i < lx->n && s[lx->i] != ']' &&
				    s[lx->i] != '}')
					return -1;
				break;
			}
			if (c == ']' || c == '}') {
				/* [} or {]: the wrong bracket closes it. */
				if ((st != VALUE_OR_END && !(st == VALUE &&
				    lx->depth > 0 && lx->stack[lx->depth - 1] ==
				    '[')) || (lx->depth > 0 && strchr("{[",
				    lx->stack[lx->depth - 1]) == NULL))
					return -1;
				if (wrong_bracket(lx, c) != 0)
					return -1;
				st = AFTER;
				break;
			}
			if (c == '{' && (k = python_set(lx)) != 0) {
				if (k < 0)
					return -1;
				st = AFTER;
				break;
			}
			if (c == '{') {
				lx->i++;
				if (push(lx, '{') != 0)
					return -1;
				st = KEY_OR_END;
				break;
			}
			/*
			 * ["a": 1]: a key and its ':' first in an array, the
			 * '{' of an object missing; that object holds one
			 * member (with more, where would it end?).  Not after
			 * an item: in [{"a": 1}, "b": 2] the '}' may be the
			 * slip.
			 */
			if (st == VALUE_OR_END && lx->depth > 0 &&
			    lx->stack[lx->depth - 1] == '[' &&
			    (c == '"' || c == '\'') && quoted_key_at(lx, lx->i)) {
				if (lx->implicit != 0 ||
				    fix(lx, R_MISSING_BRACKET) != 0 ||
				    push(lx, '{') != 0)
					return -1;
				lx->implicit = lx->depth;
				st = KEY;
				break;
			}
			if (c == '[') {
				lx->i++;
				if (push(lx, '[') != 0)
					return -1;
				st = VALUE_OR_END;
				break;
			}
			if (c == '(') {		/* (1, 2): a Python tuple */
				lx->i++;
				if (fix(lx, R_PYTHON_TUPLE) != 0 ||
				    push(lx, TUPLE) != 0)
					return -1;
				st = VALUE_OR_END;
				break;
			}
			if (c == '"' || c == '\'' || ((lx->depth > 0 ||
			    !lx->prefix) && quote_at(s, lx->n, lx->i))) {
				if (string(lx, 0, 0) != 0)
					return -1;
			} else if (c == '-' || c == '+' || c == '.' ||
			    is_digit(c)) {
				size_t at = lx->out->len;

				if (number(lx) != 0) {
					/* 2024-10-18T10:00Z, 1/3, 0.0.1 */
					lx->out->len = at;
					if (lx->depth == 0 || lx->prefix ||
					    word_string(lx) != 0)
						return -1;
				}
			} else if ((k = literal(lx)) < 0) {
				return -1;
			} else if (k == 0 && !lx->prefix &&
			    (k = shell_wrapper(lx)) != 0) {
				if (k < 0)
					return -1;
				st = VALUE;	/* its one value */
				break;
			} else if (k == 0 && (lx->depth == 0 || lx->prefix ||
			    bare_string(lx) != 0)) {
				return -1;
			}
			if (lx->truncated)
				return 0;
			st = AFTER;
			break;
		case KEY_OR_END:
			if (c == '}') {
				lx->i++;
				lx->depth--;
				if (putc_(lx, '}') != 0)
					return -1;
				st = AFTER;
				break;
			}
			/* FALLTHROUGH */
		case KEY:
			if (c == ',') {		/* {,"a":1} or doubled */
				lx->i++;
				if (fix(lx, R_EXTRA_COMMA) != 0)
					return -1;
				break;
			}
			if (ellipsis(lx)) {
				if (fix(lx, R_ELLIPSIS) != 0)
					return -1;
				st = KEY_OR_END;
				if (skip_space(lx) != 0)
					return -1;
				if (lx->i < lx->n && s[lx->i] == ',')
					lx->i++;
				else if (lx->i < lx->n && s[lx->i] != '}')
					return -1;
				break;
			}
			if (c == ']' && st == KEY_OR_END) {	/* {] */
				if (fix(lx, R_MISMATCHED_BRACKET) != 0 ||
				    putc_(lx, '}') != 0)
					return -1;
				lx->i++;
				lx->depth--;
				st = AFTER;
				break;
			}
			if ((k = stray_word(lx)) != 0) {
				if (k < 0)
					return -1;
				break;
			}
			if (quote_at(s, lx->n, lx->i)) {
				if (string(lx, 1, 0) != 0)
					return -1;
				if (lx->truncated)
					return 0;
			} else {
				size_t n = ident_len(lx);

				/* A key of digits: {2: "b"}. */
				if (n == 0)
					while (lx->i + n < lx->n &&
					    is_digit((unsigned char)s[lx->i + n]))
						n++;
				if (n == 0 || (lx->i + n < lx->n &&
				    is_ident((unsigned char)s[lx->i + n])))
					return -1;
				if (fix(lx, R_UNQUOTED_KEY) != 0 ||
				    putc_(lx, '"') != 0 ||
				    put(lx, s + lx->i, n) != 0 ||
				    putc_(lx, '"') != 0)
					return -1;
				lx->i += n;
				if (lx->i < lx->n && s[lx->i] == '"') {
					lx->i++;
					if (fix(lx, R_MISSING_OPEN) != 0)
						return -1;
				}
			}
			if (skip_space(lx) != 0)
				return -1;
			if (lx->i >= lx->n) {
				if (!lx->close)
					return -1;
				lx->truncated = 1;
				return 0;
			}
			if (s[lx->i] == ':') {
				lx->i++;
			} else if (quote_at(s, lx->n, lx->i) ||
			    strchr("{[-0123456789", s[lx->i]) != NULL ||
			    is_ident_start((unsigned char)s[lx->i])) {
				/* "a""b": two strings run together, doubtful. */
				if (s[lx->i] == '"' && s[lx->i - 1] == '"')
					lx->doubt = 1;
				if (fix(lx, R_MISSING_COLON) != 0)
					return -1;
			} else {
				return -1;
			}
			if (putc_(lx, ':') != 0)
				return -1;
			st = VALUE;
			break;
		case AFTER:
			if (lx->depth == 0 && !(c == '+' && lx->last_string))
				return 0;
			if (c == '+' && lx->last_string) {
				size_t j = after_plus(lx, lx->i + 1);

				if (j >= lx->n || !quote_at(s, lx->n, j))
					return -1;
				lx->i = j;
				/* Take off the white space, then the '"'. */
				while (is_space((unsigned char)lx->out->data[
				    lx->out->len - 1]))
					lx->out->len--;
				lx->out->len--;
				/* A doubt on that end stays one. */
				if (marks_cut(lx, lx->out->len))
					lx->doubt = 1;
				if (fix(lx, R_STRING_CONCAT) != 0 ||
				    string(lx, 0, 1) != 0)
					return -1;
				if (lx->truncated)
					return 0;
				break;
			}
			if (strchr("{[", lx->stack[lx->depth - 1]) == NULL) {
				/* A tuple or wrapper: ')' closes it. */
				if (c == ')') {
					if (close_paren(lx) != 0)
						return -1;
					break;
				}
				if (c == '}' || c == ']' || (c == ',' &&
				    lx->stack[lx->depth - 1] == WRAPPER))
					return -1;
				if (lx->stack[lx->depth - 1] == TUPLE)
					lx->stack[lx->depth - 1] = TUPLE_COMMA;
			}
			if (c == ',') {
				lx->i++;
				comma = lx->out->len;
				if (putc_(lx, ',') != 0 || skip_space(lx) != 0)
					return -1;
				for (;;) {
					if (lx->i < lx->n && s[lx->i] == ',') {
						lx->i++;
						if (fix(lx, R_EXTRA_COMMA) != 0)
							return -1;
					} else if (ellipsis(lx)) {
						if (fix(lx, R_ELLIPSIS) != 0)
							return -1;
					} else {
						break;
					}
					if (skip_space(lx) != 0)
						return -1;
				}
				if (lx->depth == lx->implicit)
					return -1;	/* ["a": 1, "b": 2] */
				if (lx->i < lx->n && s[lx->i] == '{' &&
				    object_in_array(lx)) {
					/* [{"a": 1, {: its '}' missing */
					lx->depth--;
					if (fix(lx, R_MISSING_BRACKET) != 0 ||
					    putc_(lx, '}') != 0)
						return -1;
					memmove(lx->out->data + comma + 1,
					    lx->out->data + comma,
					    lx->out->len - comma - 1);
					lx->out->data[comma] = '}';
					st = VALUE;
					break;
				}
				if (lx->i < lx->n && (s[lx->i] == '}' ||
				    s[lx->i] == ']' || (s[lx->i] == ')' &&
				    in_tuple(lx)))) {
					/* A trailing comma: take it out. */
					memmove(lx->out->data + comma,
					    lx->out->data + comma + 1,
					    lx->out->len - comma - 1);
					lx->out->data[--lx->out->len] = '\0';
					if (fix(lx, R_TRAILING_COMMA) != 0)
						return -1;
					break;	/* AFTER again: closes */
				}
				st = lx->stack[lx->depth - 1] == '{' ? KEY :
				    VALUE;
				break;
			}
			if (c == '}' && lx->depth == 1 && !lx->close &&
			    member_follows(lx)) {
				/*
				 * {"a": 1}, "b": 2}: a stray '}' closing the
				 * whole too soon?  (Deeper, a surplus '}' at
				 * the end would read as well: no.)
				 */
				if ((k = choose(lx, 2)) < 0)
					return -1;
				if (k == 1) {
					lx->i++;
					if (fix(lx, R_SURPLUS_BRACKET) != 0)
						return -1;
					break;
				}
			}
			if (c == (unsigned char)closer(lx)) {
				lx->i++;
				lx->depth--;
				if (putc_(lx, (char)c) != 0)
					return -1;
				break;
			}
			if (c == '}' || c == ']') {
				/*
				 * The wrong bracket: the right one is missing
				 * before it (when it closes the container
				 * around), or it stands for the right one.
				 */
				if (wrong_bracket(lx, c) != 0)
					return -1;
				break;
			}
			if (c == '{' && object_in_array(lx)) {
				/* [{"a": 1 {: its '}' and ',' missing */
				lx->depth--;
				if (fix(lx, R_MISSING_BRACKET) != 0 ||
				    fix(lx, R_MISSING_COMMA) != 0 ||
				    put(lx, "},", 2) != 0)
					return -1;
				st = VALUE;
				break;
			}
			if (lx->depth == lx->implicit)
				return -1;	/* ["a": 1 "b": 2] */
			if (lx->stack[lx->depth - 1] != WRAPPER &&
			    (lx->stack[lx->depth - 1] == '{' ?
			    key_starts(lx, lx->i) : item_starts(lx, lx->i) ||
			    (is_ident_start(c) && line_before(lx)) ||
			    bare_item_at(lx, lx->i))) {
				if (fix(lx, R_MISSING_COMMA) != 0 ||
				    putc_(lx, ',') != 0)
					return -1;
				st = lx->stack[lx->depth - 1] == '{' ? KEY :
				    VALUE;
				break;
			}
			return -1;
		}
		if (st == AFTER && lx->depth == 0 && !(lx->last_string &&
		    plus_follows(lx)))
			return 0;
	}
}

/*
 * Start a pass over s[0..n), writing into out (emptied first).  The lexer
 * borrows out until pass_end().
 */
static void
pass_begin(struct lex *lx, const char *s, size_t n, struct saop__buf *out)
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
static void
pass_end(struct lex *lx)
{
	lx->out = NULL;
}

/* Was a comma between two of the top-level values read so far?  1 or 0. */
static int
comma_gap(const struct lex *lx)
{
	size_t j;

	for (j = 1; j < lx->nvals && j < MAX_VALUES; j++)
		if (lx->gap[j] == GAP_COMMA)
			return 1;
	return 0;
}

/*
 * One pass: s[0..n) as one value with white space and comments around it,
 * or (lx->prefix) one value at its start; several values (objects or
 * arrays one after the other, values one a line, values separated by
 * commas) are kept as spans with what stood between them in lx->gap
 * ("concatenated_values"), a comma after the last one dropped
 * ("trailing_comma"), closing brackets after it too ("surplus_bracket").
 * Returns 0 or -1.
 */
static int
one_pass(struct lex *lx)
{
	if (skip_space(lx) != 0 || lx->i >= lx->n)
		return -1;
	for (;;) {
		size_t start = lx->out->len;

		if (value(lx) != 0)
			return -1;
		/* A cut (1 is a group or a tuple: which? */
		if (lx->truncated && lx->depth > 0 &&
		    memchr(lx->stack, TUPLE, lx->depth) != NULL)
			return -1;
		if (lx->nvals < MAX_VALUES) {
			lx->vals[2 * lx->nvals] = start;
			lx->vals[2 * lx->nvals + 1] = lx->out->len;
		}
		lx->nvals++;
		if (lx->truncated || lx->prefix)
			return lx->nvals <= MAX_VALUES ? 0 : -1;
		if (skip_space(lx) != 0)
			return -1;
		if (lx->i >= lx->n)
			break;
		/* {...}{...}, or one value a line (NDJSON of scalars too). */
		if (lx->s[lx->i] == '{' || lx->s[lx->i] == '[' ||
		    (line_before(lx) && (item_starts(lx, lx->i) ||
		    literal_at(lx)))) {
			if ((lx->nvals == 1 && fix(lx, R_CONCATENATED) != 0) ||
			    putc_(lx, '\n') != 0)
				return -1;
			if (lx->nvals < MAX_VALUES)
				lx->gap[lx->nvals] = GAP_NONE;
			continue;
		}
		if (lx->s[lx->i] == ',' && next_nonspace(lx->s, lx->n,
		    lx->i + 1) == lx->n) {
			lx->i = lx->n;	/* 4, */
			if (fix(lx, R_TRAILING_COMMA) != 0)
				return -1;
			break;
		}
		if (lx->s[lx->i] == ',') {
			/* 1, 2, 3: the next value after the comma. */
			lx->i++;
			if ((lx->nvals == 1 && fix(lx, R_CONCATENATED) != 0) ||
			    putc_(lx, '\n') != 0 || skip_space(lx) != 0)
				return -1;
			if (lx->nvals < MAX_VALUES)
				lx->gap[lx->nvals] = GAP_COMMA;
			continue;
		}
		if (lx->s[lx->i] != '}' && lx->s[lx->i] != ']')
			return -1;
		if (fix(lx, R_SURPLUS_BRACKET) != 0)
			return -1;
		if (comma_gap(lx))
			return -1;	/* 1, 2]: those were items */
		while (lx->i < lx->n && (lx->s[lx->i] == '}' ||
		    lx->s[lx->i] == ']' || is_space((unsigned char)
		    lx->s[lx->i])))
			lx->i++;
		if (lx->i < lx->n)
			return -1;
		break;
	}
	/*
	 * {"a": [1}, 2]}: a bracket that closed a value too soon makes
	 * the items after it look like values of their own.
	 */
	if ((lx->repairs & R_MISMATCHED_BRACKET) && comma_gap(lx))
		return -1;
	return lx->nvals <= MAX_VALUES ? 0 : -1;
}

/* Forget the readings kept. */
static void
readings_clear(struct lex *lx)
{
	size_t k;

	for (k = 0; k < lx->nrd; k++) {
		free(lx->rd[k].text);
		free(lx->rd[k].spans);
	}
	lx->nrd = 0;
	lx->overflow = 0;
}

static int anchored(const struct saop_schema *s, const json_t *v);

/*
 * The schema anchors strings: a reading of one whole value that moved
 * where a string ends (a quote read inside, a quote missing) must have
 * its strings end before a key the schema knows (anchored()).  Judged
 * here, during the search, so that a reading the schema rules out never
 * makes a reading it keeps look too costly.  Returns 1 anchored, 0 ruled
 * out, 2 when there is nothing to judge (no schema, no such repair, a
 * cut or several values, or a text jansson cannot hold).
 */
static int
anchor_check(const struct lex *lx, const struct saop__buf *out)
{
	json_error_t je;
	json_t *v;
	int a;

	if (lx->schema == NULL || lx->truncated || lx->nvals != 1 ||
	    !(lx->repairs & (R_UNESCAPED_QUOTE | R_MISSING_CLOSE |
	    R_MISSING_OPEN)))
		return 2;
	if ((v = json_loadb(out->data, out->len, JSON_DECODE_ANY |
	    JSON_ALLOW_NUL, &je)) == NULL)
		return 2;
	a = anchored(lx->schema, v);
	json_decref(v);
	return a;
}

/*
 * Does the schema s ask for a string where its subschema n applies: does
 * n reject each of {}, [], null, true and 0?  (With {} as the schema,
 * anything fits: it asks for nothing.)  1 or 0, -1 out of memory.
 */
static int
asks_string(const struct saop_schema *s, const struct sch_node *n)
{
	static const char *const probes[] = { "{}", "[]", "null", "true",
	    "0" };
	pcre2_match_data *md = NULL;
	json_error_t je;
	size_t k;
	int rc = 1;

	for (k = 0; k < sizeof(probes) / sizeof(probes[0]) && rc == 1; k++) {
		json_t *v = json_loads(probes[k], JSON_DECODE_ANY, &je);

		if (v == NULL)
			rc = -1;
		else if (saop__sch_item_valid(s, n, v, 0, &md))
			rc = 0;
		json_decref(v);
	}
	if (md != NULL)
		pcre2_match_data_free(md);
	return rc;
}

/*
 * Does the schema s name the property key[0..len) (strict JSON string
 * text, without its quotes) and ask for a string wherever it names it
 * (asks_string())?  A key with an escape is not looked up.  1 or 0, -1
 * out of memory.
 */
static int
key_asks_string(const struct saop_schema *s, const char *key, size_t len)
{
	const struct sch_node *nd;
	size_t k, i;
	int found = 0, rc;

	if (memchr(key, '\\', len) != NULL)
		return 0;
	for (nd = s->all; nd != NULL; nd = nd->next_all)
		for (k = 0; k < nd->nkw; k++) {
			const struct sch_kw *kw = &nd->kw[k];

			if (kw->type != KW_PROPS)
				continue;
			for (i = 0; i < kw->u.props.nprops; i++) {
				const struct sch_named *p;

				p = &kw->u.props.props[i];
				if (strlen(p->name) != len ||
				    memcmp(p->name, key, len) != 0)
					continue;
				if ((rc = asks_string(s, p->node)) != 1)
					return rc;
				found = 1;
			}
		}
	return found;
}

/*
 * The invariant of every reading, checked in keep() (which every reading
 * of every rule passes): no string swallows structure.  Each '\\"' inside
 * a string of the output out must be marked (struct mark) as an escaped
 * quote of the input (M_ESCAPED), a '"' in a string of other quotes
 * (M_INNER) or a quote read inside between words (M_PROSE).  A quote read
 * inside next to structure, or a closing quote whose place is in doubt
 * (M_ANCHOR), only stands in a string the schema anchors: the reading is
 * anchored (a is 1, see anchor_check()) and the string is the value of a
 * member whose key the schema names and asks a string for, or the whole
 * value where the schema asks for a string (asks_string()).  Returns 1
 * when a string breaks it, 0 when none does, -1 out of memory.
 */
static int
swallowed(const struct lex *lx, const struct saop__buf *out, int a)
{
	const char *t = out->data;
	size_t n = out->len, i, m = 0, depth = 0, ks = 0, kl = 0, open;
	char prev = 0;
	int need, rc;

	for (i = 0; i < n; i++) {
		if (t[i] != '"') {
			if (t[i] == '{' || t[i] == '[')
				depth++;
			else if ((t[i] == '}' || t[i] == ']') && depth > 0)
				depth--;
			if (!is_space((unsigned char)t[i]))
				prev = t[i];
			continue;
		}
		open = i;
		need = 0;
		for (i++; i < n && t[i] != '"'; i++) {
			if (t[i] != '\\')
				continue;
			if (i + 1 < n && t[i + 1] == '"') {
				while (m < lx->nmarks && lx->marks[m].out < i)
					m++;
				/* A quote from nowhere: no. */
				if (m == lx->nmarks || lx->marks[m].out != i)
					return 1;
				if (lx->marks[m].kind == M_ANCHOR)
					need = 1;
			}
			i++;
		}
		while (m < lx->nmarks && lx->marks[m].out < i)
			m++;
		if (m < lx->nmarks && lx->marks[m].out == i &&
		    lx->marks[m].kind == M_ANCHOR)
			need = 1;
		if (need) {
			if (a != 1 || (depth > 0 && prev != ':'))
				return 1;
			rc = depth == 0 ? asks_string(lx->schema,
			    lx->schema->root) : key_asks_string(lx->schema,
			    t + ks, kl);
			if (rc != 1)
				return rc < 0 ? -1 : 1;
		}
		ks = open + 1;
		kl = i > open ? i - open - 1 : 0;
		prev = '"';
	}
	return 0;
}

/*
 * Keep the reading the pass just made (out), when it costs no more than
 * those kept: a cheaper one replaces them.  A reading the schema does not
 * anchor is not kept; one with a string that swallows structure
 * (swallowed()) is doubtful.  Returns 0, or -1 out of memory.
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
	if ((a = anchor_check(lx, out)) == 0)
		return 0;
	if ((sw = swallowed(lx, out, a)) < 0) {
		lx->nomem = 1;
		return -1;
	}
	if (lx->doubt || sw) {
		if (lx->cost < lx->doubt_best)
			lx->doubt_best = lx->cost;
		return 0;
	}
	if (lx->cost < lx->best) {
		readings_clear(lx);
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
static int
search(struct lex *lx, const char *s, size_t n)
{
	struct saop__buf out = { NULL, 0, 0 };
	size_t runs = 0, max_runs = SEARCH_BYTES / (n + 1), k;

	if (max_runs > MAX_RUNS)
		max_runs = MAX_RUNS;
	if (max_runs < MIN_RUNS)
		max_runs = MIN_RUNS;
	readings_clear(lx);
	lx->best = SIZE_MAX;
	lx->doubt_best = SIZE_MAX;
	lx->ndec = 0;
	for (;;) {
		int rc;

		pass_begin(lx, s, n, &out);
		rc = one_pass(lx);
		pass_end(lx);
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
		readings_clear(lx);
		return -1;
	}
	/* A doubtful reading as good as the best: no single reading. */
	if (lx->nrd > 0 && lx->doubt_best <= lx->best)
		lx->overflow = 1;
	return (int)lx->nrd;
}

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
 * (GAP_NONE for white space only, else GAP_PROSE), for candidates() to
 * judge.  Returns 1, 0 when a block has no single whole reading or there
 * are too many values, -1 out of memory.
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

		if ((rc = search(lx, s + at[k], len[k])) < 0)
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
	readings_clear(lx);
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
		if ((rc = search(lx, s + body, end - body)) < 0)
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
		rc = search(lx, s + at[0], len[0]);
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
		if ((rc = search(lx, s + i, n - i)) < 0) {
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

			pass_begin(lx, s + i, n - i, &tmp);
			lx->best = SIZE_MAX;
			lx->ndec = 0;
			(void)value(lx);
			pass_end(lx);
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
		rc = search(lx, s + at, n - at);
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
	if ((rc = search(lx, s + a, b - a)) <= 0)
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

/* A candidate value: its text (owned), the tree when jansson holds it. */
struct cand {
	char *text;
	size_t len;
	json_t *v;
	repairs_t repairs;
};

/* Free the candidates c[0..n). */
static void
cands_free(struct cand *c, size_t n)
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
static int
candidates(struct lex *lx, struct cand *c, size_t *nc, size_t max)
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

/*
 * Does every object of v that has a key the schema names anywhere
 * (properties) have only such keys?  The anchor of saop-validate(1): a
 * string that swallowed a member, or a member made of a string's inside,
 * shows as a key the schema does not know beside keys it knows.  1 or 0.
 */
static int
anchored(const struct saop_schema *s, const json_t *v)
{
	const char *key;
	json_t *m;
	size_t i, known = 0, unknown = 0;
	const struct sch_node *nd;

	if (json_is_array(v)) {
		json_array_foreach(v, i, m)
			if (!anchored(s, m))
				return 0;
		return 1;
	}
	if (!json_is_object(v))
		return 1;
	json_object_foreach((json_t *)v, key, m) {
		int found = 0;

		for (nd = s->all; nd != NULL && !found; nd = nd->next_all)
			for (i = 0; i < nd->nkw && !found; i++)
				if (nd->kw[i].type == KW_PROPS &&
				    nd->kw[i].u.props.propobj != NULL &&
				    json_object_get(nd->kw[i].u.props.propobj,
				    key) != NULL)
					found = 1;
		if (found)
			known++;
		else
			unknown++;
		if (!anchored(s, m))
			return 0;
	}
	return known == 0 || unknown == 0;
}

/*
 * Of the candidates c[0..n), the one the schema takes: the only one that
 * fits, or of those that fit the only one anchored (see anchored()).
 * Returns its index, -1 when none or several, -2 out of memory.
 */
static int
schema_pick(const struct saop_schema *s, struct cand *c, size_t n)
{
	struct saop_err e;
	int fit[MAX_READINGS * 2], nfit = 0, pick = -1, nanch = 0;
	size_t k;

	for (k = 0; k < n; k++) {
		json_t *errors = NULL;
		int rc;

		fit[k] = 0;
		if (c[k].v == NULL)
			continue;
		rc = saop_schema_validate(s, c[k].v, &errors, &e);
		json_decref(errors);
		if (rc == -SAOP_ENOMEM)
			return -2;
		if (rc == 1) {
			fit[k] = 1;
			nfit++;
			pick = (int)k;
		}
	}
	if (nfit <= 1)
		return pick;
	pick = -1;
	for (k = 0; k < n; k++)
		if (fit[k] && anchored(s, c[k].v)) {
			nanch++;
			pick = (int)k;
		}
	return nanch == 1 ? pick : -1;
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
	rc = search(lx, s, n);
	lx->close = was;
	return rc < 0 ? -1 : rc > 0;
}

/*
 * Does the string t[0..len) fit the schema s?  1, 0 (or not UTF-8), -1
 * out of memory.
 */
static int
fits_string(const struct saop_schema *s, const char *t, size_t len)
{
	struct saop_err e;
	json_t *v, *errors = NULL;
	int rc;

	if ((v = json_stringn(t, len)) == NULL) {
		/* Not UTF-8 (no string), or no memory? */
		rc = (v = json_stringn_nocheck(t, len)) != NULL ? 0 : -1;
		json_decref(v);
		return rc;
	}
	rc = saop_schema_validate(s, v, &errors, &e);
	json_decref(errors);
	json_decref(v);
	return rc == -SAOP_ENOMEM ? -1 : rc == 1;
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
			if (literal_word(s + i, k - i))
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
		rc = search(lx, q.data, q.len);
	free(q.data);
	/* With a schema, only where it asks for a string: {} asks nothing. */
	if (rc > 0 && lx->schema != NULL && ((rc = fits_string(lx->schema,
	    s + a, b - a)) <= 0 || (rc = asks_string(lx->schema,
	    lx->schema->root)) <= 0))
		readings_clear(lx);
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
	if ((rc = search(lx, s, n)) != 0)
		return rc < 0 ? -1 : 1;
	if (jsonp(s, n, &at, &len)) {
		/* One argument: f(1, 2) is a call, no JSONP. */
		if ((rc = search(lx, s + at, len)) > 0 && several_values(lx))
			rc = 0;
		if (rc != 0) {
			*extra |= R_JSONP;
			return rc < 0 ? -1 : 1;
		}
	}
	if ((rc = unstringify(s, n, &un)) != 0) {
		if (rc > 0)
			rc = search(lx, un.data, un.len);
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
		if (candidates(&lx, c, &nc, MAX_READINGS * 2) != 0)
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
			    !anchored(o->schema, c[k].v)) {
				free(c[k].text);
				json_decref(c[k].v);
				c[k--] = c[--nc];
			}
	if (nc == 1 && !lx.overflow) {
		pick = 0;
	} else if (nc > 1 && o != NULL && o->schema != NULL) {
		if ((pick = schema_pick(o->schema, c, nc)) == -2)
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
	cands_free(c, nc);
	readings_clear(&lx);
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
	cands_free(c, nc);
	readings_clear(&lx);
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
