/*
 * repair-lex.c: the lexer of local repair (see repair-private.h for the
 * rooms).  It reads the tokens of a model's near-JSON at lx->i -- white
 * space and comments, strings in any quotes, numbers, literals, bare words
 * -- and writes each out as strict JSON, counting the repairs it takes
 * (fix()).  Where a token can be read more than one way (is this quote
 * the string's end?) it asks the search for a choice (saop__rep_choose()).
 * Every '\\"' it writes inside a string, and every closing quote whose
 * place is in doubt, is marked with what it came from (mark()): the
 * invariant that no string swallows structure is checked on those marks
 * (saop__rep_swallowed()).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "repair-private.h"

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
int
saop__rep_marks_cut(struct lex *lx, size_t len)
{
	int anchor = 0;

	while (lx->nmarks > 0 && lx->marks[lx->nmarks - 1].out >= len)
		if (lx->marks[--lx->nmarks].kind == M_ANCHOR)
			anchor = 1;
	return anchor;
}

/*
 * A choice among nopts readings at this point of the pass: the one the
 * search replays, or 0 (the reading with no repair) at a new point.
 * Returns it, or -1 out of memory.
 */
int
saop__rep_choose(struct lex *lx, unsigned char nopts)
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
int
saop__rep_skip_space(struct lex *lx)
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
	    s[q] == '"' && !saop__rep_quoted_key_at(lx, q);
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
	return lx->stack[lx->depth - 1] == '{' ? saop__rep_key_starts(lx, j) :
	    saop__rep_item_starts(lx, j) ||
	    is_ident_start((unsigned char)lx->s[j]);
}

/*
 * A string being read (saop__rep_string()): how it opened and what was
 * read in it so far.
 */
struct str {
	size_t start;		/* its opening quote in the input */
	char quote;		/* that quote ('"', '\'', '`'; typographic:
				   its first byte) */
	int typo;		/* typographic: 1 double, 2 single, else 0 */
	int key;		/* it is a key */
	int top;		/* no container is open: the whole text */
	int inside;		/* quotes read inside: bit 0 one at least,
				   bit 1 an odd number */
	int odd_ok;		/* each one an inch mark or an apostrophe */
	int comma;		/* a ',' in it that a member or item could
				   follow */
	int qd;			/* where it ends is in doubt */
	int qend;		/* a quote inside before a bracket, or a lone
				   one: in doubt but in the whole text */
};

/* What a step of the reader of a string returns (else -1: no reading). */
#define STR_ON		0	/* the byte is read: the next one */
#define STR_END		1	/* the string ended */
#define STR_PASS	2	/* not this step's byte: the next step */

/*
 * The opening quote at lx->i of the string st: a typographic one
 * ("typographic_quotes"), '\'' ("single_quotes"), '`' ("backticks"; not
 * ``` a fence) or '"', written as '"' unless cont (the string already
 * written goes on).  Returns 0, or -1 when no string opens here.
 */
static int
open_quote(struct lex *lx, struct str *st, int cont)
{
	const char *s = lx->s;

	if (st->typo != 0) {
		if (fix(lx, R_TYPO_QUOTES) != 0)
			return -1;
		lx->i += 3;
	} else {
		if ((st->quote == '\'' && fix(lx, R_SINGLE_QUOTES) != 0) ||
		    (st->quote == '`' && fix(lx, R_BACKTICKS) != 0))
			return -1;
		/* ``` is a fence, not a string. */
		if (st->quote == '`' && lx->i + 1 < lx->n &&
		    s[lx->i + 1] == '`')
			return -1;
		lx->i++;
	}
	return !cont && putc_(lx, '"') != 0 ? -1 : 0;
}

/*
 * {"key": ""value"}: a doubled opening quote, inside a container, is a
 * choice beside the empty string: skipped (1, "doubled_quote") or the
 * end (0).  Returns 0, or -1.
 */
static int
doubled_open(struct lex *lx, const struct str *st)
{
	int k;

	if (st->top || st->typo != 0 || (st->quote != '"' &&
	    st->quote != '\'') || !doubled_at(lx->s, lx->n, lx->i, st->quote))
		return 0;
	if ((k = saop__rep_choose(lx, 2)) < 0)
		return -1;
	if (k == 1) {
		if (fix(lx, R_DOUBLED_QUOTE) != 0)
			return -1;
		lx->i++;
	}
	return 0;
}

/*
 * The string st cut by the end of the input: with close it ends there (a
 * string cut after a bracket, a quote or a '+', where its closing quote
 * may have been missing, is doubtful); a cut string with a quote read
 * inside has no reading.  Returns 0 (lx->truncated set), or -1.
 */
static int
cut_string(struct lex *lx, const struct str *st)
{
	if (!lx->close || st->inside)
		return -1;
	if (cut_badly(lx->s, st->start + 1, lx->n))
		lx->doubt = 1;
	lx->truncated = 1;
	return 0;
}

/* Is the byte at lx->i a quote that can close the string st?  1 or 0. */
static int
closes_at(const struct lex *lx, const struct str *st)
{
	const unsigned char *p = (const unsigned char *)lx->s + lx->i;

	if (st->typo != 0)
		return typo_quote(lx->s, lx->n, lx->i) == st->typo;
	return p[0] == (unsigned char)st->quote || (st->quote == '`' &&
	    lx->i + 2 <= lx->n && p[0] == 0xc2 && p[1] == 0xb4);
}

/*
 * A quote that can close the string st, at lx->i: a choice between its
 * end (0) and a quote inside (1, "unescaped_quote"); a key, and a string
 * where a key would end (a ':' after it), end there.  A quote inside is
 * doubtful where another string follows, or where a value would start
 * before it (inner_quote_ok()); before a bracket it is no doubt only in
 * the whole text (qend).  Every '"' so read inside is marked: M_ANCHOR
 * next to structure (quote_structural()), else M_PROSE.  Returns STR_END,
 * STR_ON, or -1.
 */
static int
closing_quote(struct lex *lx, struct str *st)
{
	const char *s = lx->s;
	size_t n = lx->n, j;
	unsigned char c = (unsigned char)s[lx->i];
	int k;

	j = next_nonspace(s, n, lx->i + (st->typo ? 3 : 1));
	if ((k = st->key || (j < n && s[j] == ':') ? 0 :
	    saop__rep_choose(lx, 2)) < 0)
		return -1;
	if (k == 1 && j < n && (s[j] == '}' || s[j] == ']'))
		st->qend = 1;
	if (k == 1 && ((j < n && s[j] == '"' && j > lx->i + 1) ||
	    !inner_quote_ok(lx, st->start, lx->i)))
		st->qd = 1;
	if (k == 0) {
		lx->i += st->typo != 0 ? 3 : c == '`' || c == '\'' ||
		    c == '"' ? 1 : 2;
		return STR_END;
	}
	if (fix(lx, R_UNESCAPED_QUOTE) != 0)
		return -1;
	/*
	 * An odd number of quotes inside, each an inch mark (a 24" screen)
	 * or, in '...', an apostrophe (don't), or pairs: else no.
	 */
	st->inside ^= 2;
	st->inside |= 1;
	if (st->quote == '\'' ? !is_ident((unsigned char)s[lx->i - 1]) :
	    !inch_mark(s, st->start, lx->i))
		st->odd_ok = 0;
	if (st->typo != 0) {
		if (put(lx, s + lx->i, 3) != 0)
			return -1;
		lx->i += 3;
		return STR_ON;
	}
	if (c == '"' && mark(lx, lx->out->len,
	    quote_structural(s, n, st->start, lx->i) ?
	    M_ANCHOR : M_PROSE) != 0)
		return -1;
	if (c == '"' ? put(lx, "\\\"", 2) : putc_(lx, (char)c))
		return -1;
	lx->i++;
	return STR_ON;
}

/*
 * {"key:"value"}: a key's closing quote missing before its ':' with a
 * value after it, a choice: read on (0) or end there (1,
 * "missing_closing_quote"; a key that reads on and ends in ':' has no
 * reading).  Returns STR_END, STR_PASS, or -1.
 */
static int
key_colon(struct lex *lx, struct str *st)
{
	const char *s = lx->s;
	int k;

	if (!st->key || s[lx->i] != ':' || st->typo != 0 ||
	    st->quote == '`' || st->inside || lx->i <= st->start + 1 ||
	    is_space((unsigned char)s[lx->i - 1]) ||
	    !value_after_colon(s, lx->n, lx->i))
		return STR_PASS;
	if ((k = saop__rep_choose(lx, 2)) < 0)
		return -1;
	if (k == 0)
		return STR_PASS;
	if (end_in_doubt(s, st->start, lx->i))
		st->qd = 1;
	return fix(lx, R_MISSING_CLOSE) != 0 ? -1 : STR_END;
}

/*
 * A missing closing quote before the ',' '}' ']' or line end at lx->i,
 * where a value may end (closes_before()): a choice, read on (0) or end
 * there (1, "missing_closing_quote").  Not in a key, not at the top, not
 * after a quote read inside (but for the brackets that end the text:
 * ends_text()).  After a ',' in the string that a member or item could
 * follow (which one was the end?), or leaving the string empty or ending
 * in ',' '+' ':' or white space (was it the value's?), or in doubt
 * (end_in_doubt()), a doubtful reading.  Before a '}' or ']' the spaces
 * before it are the layout's, as in { "a": 1 }: the string ends before
 * them.  Returns STR_END, STR_PASS, or -1.
 */
static int
missing_close(struct lex *lx, struct str *st)
{
	const char *s = lx->s;
	char c = s[lx->i];
	size_t m = 0;
	int k;

	if (st->key || st->top || (st->inside && !ends_text(s, lx->n,
	    lx->i)) || st->typo != 0 || st->quote == '`' || (c != ',' &&
	    c != '}' && c != ']' && c != '\n') ||
	    !closes_before(s, lx->n, lx->i))
		return STR_PASS;
	if ((k = saop__rep_choose(lx, 2)) < 0)
		return -1;
	if (k == 0)
		return STR_PASS;
	if (c == '}' || c == ']')
		while (lx->i - m > st->start + 1 && s[lx->i - m - 1] == ' ')
			m++;
	lx->out->len -= m;
	if (st->comma || ends_badly(s, st->start + 1, lx->i) ||
	    is_space((unsigned char)s[lx->i - m - 1]) ||
	    end_in_doubt(s, st->start, lx->i - m))
		st->qd = 1;
	return fix(lx, R_MISSING_CLOSE) != 0 ? -1 : STR_END;
}

/*
 * The escape at lx->i (a backslash): \' as ' ("invalid_escape" outside
 * '...'), \uXXXX, \xXX as \u00XX ("invalid_escape"), the escapes of JSON
 * as they are (\" marked M_ESCAPED); cut by the end of the input, with
 * close, the string ends there.  Returns STR_ON, or -1 for any other
 * escape (no single reading).
 */
static int
escape(struct lex *lx, const struct str *st)
{
	const char *s = lx->s;
	size_t n = lx->n;
	unsigned char d;
	char esc[8];
	int j;

	if (lx->i + 1 >= n) {
		if (!lx->close)
			return -1;
		lx->i = n;
		return STR_ON;
	}
	d = (unsigned char)s[lx->i + 1];
	if (d == '\'') {
		if ((st->quote != '\'' && fix(lx, R_INVALID_ESCAPE) != 0) ||
		    putc_(lx, '\'') != 0)
			return -1;
		lx->i += 2;
	} else if (d == 'u') {
		for (j = 0; j < 4; j++)
			if (lx->i + 2 + (size_t)j >= n ||
			    !is_hex((unsigned char)s[lx->i + 2 + j]))
				break;
		if (j < 4) {
			if (!lx->close || lx->i + 2 + (size_t)j < n)
				return -1;
			lx->i = n;
			return STR_ON;
		}
		if (put(lx, s + lx->i, 6) != 0)
			return -1;
		lx->i += 6;
	} else if (d == 'x' && lx->i + 3 < n &&
	    is_hex((unsigned char)s[lx->i + 2]) &&
	    is_hex((unsigned char)s[lx->i + 3])) {
		if (fix(lx, R_INVALID_ESCAPE) != 0)
			return -1;
		snprintf(esc, sizeof(esc), "\\u00%c%c", s[lx->i + 2],
		    s[lx->i + 3]);
		if (put(lx, esc, 6) != 0)
			return -1;
		lx->i += 4;
	} else if (strchr("\"\\/bfnrt", d) != NULL && d != '\0') {
		if ((d == '"' && mark(lx, lx->out->len, M_ESCAPED) != 0) ||
		    put(lx, s + lx->i, 2) != 0)
			return -1;
		lx->i += 2;
	} else {
		return -1;
	}
	return STR_ON;
}

/*
 * A raw control character at lx->i, escaped ("control_character"); a line
 * end right before a key's closing quote has no reading ("key\n": where
 * does that key end?).  Returns STR_ON, or -1.
 */
static int
control(struct lex *lx, const struct str *st)
{
	unsigned char c = (unsigned char)lx->s[lx->i];
	char esc[8];

	if (st->key && lx->i + 1 < lx->n && lx->s[lx->i + 1] == st->quote)
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
	if (fix(lx, R_CONTROL_CHARACTER) != 0 || put(lx, esc, strlen(esc)) != 0)
		return -1;
	lx->i++;
	return STR_ON;
}

/*
 * One byte of the string st at lx->i that neither closes it nor ends it
 * where its closing quote is missing: a '"' inside other quotes (marked
 * M_INNER), an escape, a control character, or itself.  Notes a ',' that
 * a member or item could follow.  Returns STR_ON, or -1.
 */
static int
string_byte(struct lex *lx, struct str *st)
{
	unsigned char c = (unsigned char)lx->s[lx->i];

	if (c == ',' && member_after(lx, lx->i))
		st->comma = 1;
	if (c == '"') {
		if (mark(lx, lx->out->len, M_INNER) != 0 ||
		    put(lx, "\\\"", 2) != 0)
			return -1;
	} else if (c == '\\') {
		return escape(lx, st);
	} else if (c < 0x20) {
		return control(lx, st);
	} else if (putc_(lx, (char)c) != 0) {
		return -1;
	}
	lx->i++;
	return STR_ON;
}

/*
 * The end of the string st, its body read: a lone quote inside (an odd
 * number, not all inch marks or apostrophes) counts twice, itself and the
 * partner it lost.  A string that is the whole text ends at its last
 * quote: no other reading puts its end elsewhere, so a lone quote or a
 * bracket after a quote inside is no doubt there.  A doubt is marked on
 * the closing quote (M_ANCHOR): only the schema's anchor lifts it
 * (saop__rep_swallowed()).  "key:" "value": a key ending in ':' has no
 * reading (the quote after the colon is missing).  Writes the closing
 * quote: 0, or -1.
 */
static int
close_string(struct lex *lx, struct str *st)
{
	if ((st->inside & 2) && !st->odd_ok) {
		if (fix(lx, R_UNESCAPED_QUOTE) != 0)
			return -1;
		st->qend = 1;
	}
	if ((st->qd || (st->qend && !(st->top &&
	    next_nonspace(lx->s, lx->n, lx->i) >= lx->n))) &&
	    mark(lx, lx->out->len, M_ANCHOR) != 0)
		return -1;
	if (st->key && lx->out->data[lx->out->len - 1] == ':')
		return -1;
	lx->last_string = 1;
	return putc_(lx, '"');
}

/*
 * A string opened at lx->i by a quote ('"', '\'', '`', typographic),
 * written out with double quotes; with cont, the string already written
 * goes on (its closing quote taken off by the caller).  Where it ends is
 * a choice at each quote that can close it (closing_quote()), at a ':'
 * in a key (key_colon()) and where its closing quote may be missing
 * (missing_close()); a second quote right after the opening one is a
 * choice too (doubled_open()).  Returns 0, or -1 when there is no such
 * string here.
 */
int
saop__rep_string(struct lex *lx, int key, int cont)
{
	struct str st;
	int k;

	memset(&st, 0, sizeof(st));
	st.start = lx->i;
	st.quote = lx->s[lx->i];
	st.typo = typo_quote(lx->s, lx->n, lx->i);
	st.key = key;
	st.top = lx->depth == 0;
	st.odd_ok = 1;
	if (open_quote(lx, &st, cont) != 0 ||
	    (!cont && doubled_open(lx, &st) != 0))
		return -1;
	for (;;) {
		if (lx->i >= lx->n)
			return cut_string(lx, &st);
		if (closes_at(lx, &st))
			k = closing_quote(lx, &st);
		else if ((k = key_colon(lx, &st)) == STR_PASS &&
		    (k = missing_close(lx, &st)) == STR_PASS)
			k = string_byte(lx, &st);
		if (k < 0)
			return -1;
		if (k == STR_END)
			break;
	}
	return close_string(lx, &st);
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
int
saop__rep_number(struct lex *lx)
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
size_t
saop__rep_ident_len(const struct lex *lx)
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
int
saop__rep_literal_word(const char *s, size_t n)
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
int
saop__rep_literal(struct lex *lx)
{
	static const char *const json[] = { "true", "false", "null", "null" };
	static const char *const py[] = { "True", "False", "None", NULL };
	static const char *const words[] = { "true", "false", "null", "none" };
	const char *p = lx->s + lx->i;
	size_t n = saop__rep_ident_len(lx), k;

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
int
saop__rep_quoted_key_at(const struct lex *lx, size_t i)
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
int
saop__rep_bare_item_at(const struct lex *lx, size_t i)
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
int
saop__rep_bare_string(struct lex *lx)
{
	const char *s = lx->s;
	size_t i = lx->i, end, k;
	int over = 0;

	if (lx->stack[lx->depth - 1] == '{' &&
	    quote_after_commas(lx, i) != 0 &&
	    (over = saop__rep_choose(lx, 2)) < 0)
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
	    after_colon(lx) && saop__rep_quoted_key_at(lx, i))) {
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
int
saop__rep_word_string(struct lex *lx)
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
 * Can an object member start at s[i]: a quoted key, or a bare key with a
 * ':' after it?  1 or 0.
 */
int
saop__rep_key_starts(const struct lex *lx, size_t i)
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
int
saop__rep_literal_at(const struct lex *lx)
{
	return saop__rep_literal_word(lx->s + lx->i, saop__rep_ident_len(lx));
}

/* Can an array item (not a bare string) start at s[i]?  1 or 0. */
int
saop__rep_item_starts(const struct lex *lx, size_t i)
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
int
saop__rep_line_before(const struct lex *lx)
{
	size_t i = lx->i;

	while (i > 0 && is_space((unsigned char)lx->s[i - 1]))
		if (lx->s[--i] == '\n')
			return 1;
	return 0;
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
int
saop__rep_python_set(struct lex *lx)
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
