/*
 * repair-rules.c: the rules of structure of local repair (see
 * repair-private.h for the rooms): one value read as containers, members
 * and items, with the commas, colons and brackets a model loses or
 * doubles, the wrappers it adds (a Python tuple or set, a MongoDB shell
 * wrapper) and several values one after the other (one_pass()).  Each
 * state of the reader (a value, a key, what comes after a value) is a
 * function of its own; the tokens are the lexer's (repair-lex.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "repair-private.h"

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
	size_t n = saop__rep_ident_len(lx), k, j;

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
		if ((k = saop__rep_choose(lx, 2)) < 0)
			return -1;
		if (k == 1) {
			lx->i++;
			return fix(lx, R_SURPLUS_BRACKET);
		}
	}
	if (lx->depth < 2 || c != (lx->stack[lx->depth - 2] == '{' ? '}' :
	    ']'))
		k = 1;
	else if ((k = saop__rep_choose(lx, 2)) < 0)
		return -1;
	if (fix(lx, R_MISMATCHED_BRACKET) != 0 || putc_(lx, closer(lx)) != 0)
		return -1;
	lx->depth--;
	if (k == 1)
		lx->i++;
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
	return saop__rep_key_starts(lx, j) && !quote_at(s, n, j);
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
	size_t n = saop__rep_ident_len(lx), j;

	if (n == 0 || saop__rep_literal_at(lx) || lx->i + n >= lx->n ||
	    !is_space((unsigned char)lx->s[lx->i + n]))
		return 0;
	j = next_nonspace(lx->s, lx->n, lx->i + n);
	if (j >= lx->n || (lx->s[j] != '"' && lx->s[j] != '\'') ||
	    !saop__rep_quoted_key_at(lx, j))
		return 0;
	lx->i = j;
	return fix(lx, R_STRAY_WORD) != 0 ? -1 : 1;
}

/*
 * The states of the reader of one value: a value to read (VALUE), a value
 * or the end of an array or tuple just opened (VALUE_OR_END), a key to
 * read (KEY), a key or the end of an object just opened (KEY_OR_END),
 * what comes after a value (AFTER).
 */
enum state { VALUE, VALUE_OR_END, KEY, KEY_OR_END, AFTER };

/*
 * What a state's step returns: the value is read (value() returns 0 with
 * lx->i past it, or cut), or go on with the next step.  A step that finds
 * no reading returns -1.
 */
#define STEP_DONE	1
#define STEP_ON		0

/*
 * {"a": "b"```: a closing fence right after a cut value (nothing but
 * white space after it), dropped ("code_fence").  Returns 0, or -1 when
 * the pass now costs too much.
 */
static int
cut_fence(struct lex *lx)
{
	if (lx->close && lx->depth > 0 && lx->i + 3 <= lx->n &&
	    memcmp(lx->s + lx->i, "```", 3) == 0 &&
	    next_nonspace(lx->s, lx->n, lx->i + 3) >= lx->n) {
		if (fix(lx, R_CODE_FENCE) != 0)
			return -1;
		lx->i = lx->n;
	}
	return 0;
}

/*
 * The input ends in state st: the value is cut there (with close, inside
 * a container or after a whole value), STEP_DONE, else -1.
 */
static int
input_ends(struct lex *lx, enum state st)
{
	if (!lx->close || (lx->depth == 0 && st != AFTER))
		return -1;
	lx->truncated = 1;
	return STEP_DONE;
}

/*
 * An elision ("...") where an item or a member starts: skipped
 * ("ellipsis") with the ',' after it; where there is none, only one of
 * the closing brackets ends may follow it.  *st becomes next.  Returns 1
 * skipped, 0 when there is none, -1 when no reading.
 */
static int
elision(struct lex *lx, enum state next, const char *ends, enum state *st)
{
	char c;

	if (!ellipsis(lx))
		return 0;
	if (fix(lx, R_ELLIPSIS) != 0)
		return -1;
	*st = next;
	if (saop__rep_skip_space(lx) != 0)
		return -1;
	if (lx->i >= lx->n)
		return 1;
	c = lx->s[lx->i];
	if (c == ',')
		lx->i++;
	else if (c == '\0' || strchr(ends, c) == NULL)
		return -1;
	return 1;
}

/*
 * VALUE_OR_END, right after '[' or '(': the bracket that closes it ([]
 * or ()), or a ',' before the first item ([,1], "extra_comma").  Returns
 * 1 when it was one of those (*st set), 0 when a value is to be read,
 * -1 when no reading.
 */
static int
empty_or_comma(struct lex *lx, unsigned char c, enum state *st)
{
	if (c == (in_tuple(lx) ? ')' : ']')) {
		lx->i++;
		lx->depth--;
		if (putc_(lx, ']') != 0)
			return -1;
		*st = AFTER;
		return 1;
	}
	if (c != ',')
		return 0;
	lx->i++;
	return fix(lx, R_EXTRA_COMMA) != 0 ? -1 : 1;
}

/*
 * A container opened at c where a value starts: '{' (or a Python set,
 * python_set()), '[', '(' (a Python tuple, "python_tuple"), or the
 * missing '{' of an object first in an array (["a": 1], a key and its
 * ':' first: "missing_bracket"; that object holds one member, with more
 * where would it end?  Not after an item: in [{"a": 1}, "b": 2] the '}'
 * may be the slip).  Returns 1 opened (*st set), 0 when no container
 * starts there, -1 when no reading.
 */
static int
container(struct lex *lx, unsigned char c, enum state *st)
{
	int k;

	if (c == '{' && (k = saop__rep_python_set(lx)) != 0) {
		if (k < 0)
			return -1;
		*st = AFTER;
		return 1;
	}
	if (c == '{') {
		lx->i++;
		if (push(lx, '{') != 0)
			return -1;
		*st = KEY_OR_END;
		return 1;
	}
	if (*st == VALUE_OR_END && lx->depth > 0 &&
	    lx->stack[lx->depth - 1] == '[' && (c == '"' || c == '\'') &&
	    saop__rep_quoted_key_at(lx, lx->i)) {
		if (lx->implicit != 0 || fix(lx, R_MISSING_BRACKET) != 0 ||
		    push(lx, '{') != 0)
			return -1;
		lx->implicit = lx->depth;
		*st = KEY;
		return 1;
	}
	if (c == '[' || c == '(') {
		lx->i++;
		if ((c == '(' && fix(lx, R_PYTHON_TUPLE) != 0) ||
		    push(lx, c == '(' ? TUPLE : '[') != 0)
			return -1;
		*st = VALUE_OR_END;
		return 1;
	}
	return 0;
}

/*
 * A scalar where a value starts: a string in any quotes, a number (or,
 * in a container, a word that starts as one: 2024-10-18T10:00Z, 1/3,
 * 0.0.1, word_string()), a literal, a MongoDB shell wrapper (its one
 * value read next: *st stays VALUE), or in a container a bare string.
 * Returns STEP_DONE when the input cut it, STEP_ON (*st set), -1 when no
 * reading.
 */
static int
scalar(struct lex *lx, unsigned char c, enum state *st)
{
	int k;

	if (c == '"' || c == '\'' || ((lx->depth > 0 || !lx->prefix) &&
	    quote_at(lx->s, lx->n, lx->i))) {
		if (saop__rep_string(lx, 0, 0) != 0)
			return -1;
	} else if (c == '-' || c == '+' || c == '.' || is_digit(c)) {
		size_t at = lx->out->len;

		if (saop__rep_number(lx) != 0) {
			lx->out->len = at;
			if (lx->depth == 0 || lx->prefix ||
			    saop__rep_word_string(lx) != 0)
				return -1;
		}
	} else if ((k = saop__rep_literal(lx)) < 0) {
		return -1;
	} else if (k == 0 && !lx->prefix &&
	    (k = shell_wrapper(lx)) != 0) {
		if (k < 0)
			return -1;
		*st = VALUE;
		return STEP_ON;
	} else if (k == 0 && (lx->depth == 0 || lx->prefix ||
	    saop__rep_bare_string(lx) != 0)) {
		return -1;
	}
	if (lx->truncated)
		return STEP_DONE;
	*st = AFTER;
	return STEP_ON;
}

/*
 * VALUE (and VALUE_OR_END past its own cases): an elision in a container,
 * a closing bracket of the wrong kind where an array's item may end ([}
 * or {]: the wrong bracket closes it, wrong_bracket()), a container, or a
 * scalar.  Returns STEP_DONE, STEP_ON (*st set), or -1.
 */
static int
value_step(struct lex *lx, unsigned char c, enum state *st)
{
	int k;

	if (lx->depth > 0 && (k = elision(lx, lx->stack[lx->depth - 1] !=
	    '{' ? VALUE_OR_END : KEY_OR_END, "]}", st)) != 0)
		return k < 0 ? -1 : STEP_ON;
	if (c == ']' || c == '}') {
		if ((*st != VALUE_OR_END && !(*st == VALUE && lx->depth > 0 &&
		    lx->stack[lx->depth - 1] == '[')) || (lx->depth > 0 &&
		    strchr("{[", lx->stack[lx->depth - 1]) == NULL))
			return -1;
		if (wrong_bracket(lx, c) != 0)
			return -1;
		*st = AFTER;
		return STEP_ON;
	}
	if ((k = container(lx, c, st)) != 0)
		return k < 0 ? -1 : STEP_ON;
	return scalar(lx, c, st);
}

/*
 * KEY_OR_END, right after '{': the '}' that closes it.  Returns 1 when it
 * was one (*st set), 0 when a key is to be read, -1 when no reading.
 */
static int
empty_object(struct lex *lx, unsigned char c, enum state *st)
{
	if (c != '}')
		return 0;
	lx->i++;
	lx->depth--;
	if (putc_(lx, '}') != 0)
		return -1;
	*st = AFTER;
	return 1;
}

/*
 * A key with no quotes at lx->i: a word, or digits ({2: "b"}), written
 * quoted ("unquoted_key"); a '"' right after it is its closing quote, the
 * opening one missing ("missing_opening_quote").  Returns 0, or -1 when
 * there is none.
 */
static int
bare_key(struct lex *lx)
{
	const char *s = lx->s;
	size_t n = saop__rep_ident_len(lx);

	if (n == 0)
		while (lx->i + n < lx->n &&
		    is_digit((unsigned char)s[lx->i + n]))
			n++;
	if (n == 0 || (lx->i + n < lx->n &&
	    is_ident((unsigned char)s[lx->i + n])))
		return -1;
	if (fix(lx, R_UNQUOTED_KEY) != 0 || putc_(lx, '"') != 0 ||
	    put(lx, s + lx->i, n) != 0 || putc_(lx, '"') != 0)
		return -1;
	lx->i += n;
	if (lx->i < lx->n && s[lx->i] == '"') {
		lx->i++;
		if (fix(lx, R_MISSING_OPEN) != 0)
			return -1;
	}
	return 0;
}

/*
 * The ':' after a key: there, or missing before a value ("missing_colon";
 * "a""b", two strings run together, is a doubtful reading).  Writes it.
 * Returns STEP_DONE when the input ends first (cut, with close), STEP_ON,
 * or -1 when no reading.
 */
static int
colon(struct lex *lx)
{
	const char *s = lx->s;

	if (saop__rep_skip_space(lx) != 0)
		return -1;
	if (lx->i >= lx->n) {
		if (!lx->close)
			return -1;
		lx->truncated = 1;
		return STEP_DONE;
	}
	if (s[lx->i] == ':') {
		lx->i++;
	} else if (quote_at(s, lx->n, lx->i) ||
	    strchr("{[-0123456789", s[lx->i]) != NULL ||
	    is_ident_start((unsigned char)s[lx->i])) {
		if (s[lx->i] == '"' && s[lx->i - 1] == '"')
			lx->doubt = 1;
		if (fix(lx, R_MISSING_COLON) != 0)
			return -1;
	} else {
		return -1;
	}
	return putc_(lx, ':') != 0 ? -1 : STEP_ON;
}

/*
 * KEY (and KEY_OR_END past its own case): a ',' where a member starts
 * ({,"a":1} or doubled: "extra_comma"), an elision, a ']' closing an
 * object just opened ({]: "mismatched_bracket"), a stray word
 * (stray_word()), else a key, quoted or not, and its ':'.  Returns
 * STEP_DONE, STEP_ON (*st set), or -1.
 */
static int
key_step(struct lex *lx, unsigned char c, enum state *st)
{
	int k;

	if (c == ',') {
		lx->i++;
		return fix(lx, R_EXTRA_COMMA) != 0 ? -1 : STEP_ON;
	}
	if ((k = elision(lx, KEY_OR_END, "}", st)) != 0)
		return k < 0 ? -1 : STEP_ON;
	if (c == ']' && *st == KEY_OR_END) {
		if (fix(lx, R_MISMATCHED_BRACKET) != 0 || putc_(lx, '}') != 0)
			return -1;
		lx->i++;
		lx->depth--;
		*st = AFTER;
		return STEP_ON;
	}
	if ((k = stray_word(lx)) != 0)
		return k < 0 ? -1 : STEP_ON;
	if (quote_at(lx->s, lx->n, lx->i)) {
		if (saop__rep_string(lx, 1, 0) != 0)
			return -1;
		if (lx->truncated)
			return STEP_DONE;
	} else if (bare_key(lx) != 0) {
		return -1;
	}
	if ((k = colon(lx)) != STEP_ON)
		return k;
	*st = VALUE;
	return STEP_ON;
}

/*
 * A '+' after a string, and another string after it (comments between
 * counted): the two are one ("string_concatenation"), the first one's
 * closing quote taken off and the second read on from it (a doubt on
 * that quote stays one).  Returns STEP_DONE when the input cut it,
 * STEP_ON, or -1 when no reading.
 */
static int
concat(struct lex *lx)
{
	size_t j = after_plus(lx, lx->i + 1);

	if (j >= lx->n || !quote_at(lx->s, lx->n, j))
		return -1;
	lx->i = j;
	/* Take off the white space, then the '"'. */
	while (is_space((unsigned char)lx->out->data[lx->out->len - 1]))
		lx->out->len--;
	lx->out->len--;
	if (saop__rep_marks_cut(lx, lx->out->len))
		lx->doubt = 1;
	if (fix(lx, R_STRING_CONCAT) != 0 || saop__rep_string(lx, 0, 1) != 0)
		return -1;
	return lx->truncated ? STEP_DONE : STEP_ON;
}

/*
 * After a value in a tuple or a MongoDB shell wrapper: a ')' closes it
 * (close_paren()); a closing bracket, or a ',' in a wrapper (it holds one
 * value), has no reading; a ',' makes a tuple one with a comma (an
 * array).  Returns 1 when the ')' closed it, 0 when the value goes on
 * being read as in an array, -1 when no reading.
 */
static int
after_in_paren(struct lex *lx, unsigned char c)
{
	if (c == ')')
		return close_paren(lx) != 0 ? -1 : 1;
	if (c == '}' || c == ']' || (c == ',' &&
	    lx->stack[lx->depth - 1] == WRAPPER))
		return -1;
	if (lx->stack[lx->depth - 1] == TUPLE)
		lx->stack[lx->depth - 1] = TUPLE_COMMA;
	return 0;
}

/*
 * The ',' after a value in a container: written, then more commas
 * ("extra_comma") and elisions skipped.  A '{' after it in an array of
 * objects closes the one before ([{"a": 1, {: its '}' missing,
 * "missing_bracket"); a closing bracket after it makes it a trailing one,
 * taken out ("trailing_comma").  *st becomes what comes next.  Returns
 * STEP_ON, or -1 when no reading (the one member of an object whose '{'
 * was missing may have no ',' after it: ["a": 1, "b": 2]).
 */
static int
after_comma(struct lex *lx, enum state *st)
{
	const char *s = lx->s;
	size_t comma;

	lx->i++;
	comma = lx->out->len;
	if (putc_(lx, ',') != 0 || saop__rep_skip_space(lx) != 0)
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
		if (saop__rep_skip_space(lx) != 0)
			return -1;
	}
	if (lx->depth == lx->implicit)
		return -1;
	if (lx->i < lx->n && s[lx->i] == '{' && object_in_array(lx)) {
		lx->depth--;
		if (fix(lx, R_MISSING_BRACKET) != 0 || putc_(lx, '}') != 0)
			return -1;
		memmove(lx->out->data + comma + 1, lx->out->data + comma,
		    lx->out->len - comma - 1);
		lx->out->data[comma] = '}';
		*st = VALUE;
		return STEP_ON;
	}
	if (lx->i < lx->n && (s[lx->i] == '}' || s[lx->i] == ']' ||
	    (s[lx->i] == ')' && in_tuple(lx)))) {
		memmove(lx->out->data + comma, lx->out->data + comma + 1,
		    lx->out->len - comma - 1);
		lx->out->data[--lx->out->len] = '\0';
		/* AFTER again: the bracket closes the container. */
		return fix(lx, R_TRAILING_COMMA) != 0 ? -1 : STEP_ON;
	}
	*st = lx->stack[lx->depth - 1] == '{' ? KEY : VALUE;
	return STEP_ON;
}

/*
 * A closing bracket c after a value: the stray '}' of {"a": 1}, "b": 2}
 * closing the whole too soon (a choice, "surplus_bracket"; deeper, a
 * surplus '}' at the end would read as well: not there), the one that
 * closes the container, or one of the wrong kind (wrong_bracket()).
 * Returns 1 read, 0 when c is no closing bracket, -1 when no reading.
 */
static int
after_close(struct lex *lx, unsigned char c)
{
	if (c == '}' && lx->depth == 1 && !lx->close && member_follows(lx)) {
		int k;

		if ((k = saop__rep_choose(lx, 2)) < 0)
			return -1;
		if (k == 1) {
			lx->i++;
			return fix(lx, R_SURPLUS_BRACKET) != 0 ? -1 : 1;
		}
	}
	if (c == (unsigned char)closer(lx)) {
		lx->i++;
		lx->depth--;
		return putc_(lx, (char)c) != 0 ? -1 : 1;
	}
	if (c == '}' || c == ']')
		return wrong_bracket(lx, c) != 0 ? -1 : 1;
	return 0;
}

/*
 * What comes after a value in a container is no ',' and no closing
 * bracket: a '{' in an array of objects ([{"a": 1 {: its '}' and ','
 * missing), or an item or a member that starts there, its ',' missing
 * ("missing_comma"; not after the one member of an object whose '{' was
 * missing, nor in a wrapper).  *st becomes what comes next.  Returns
 * STEP_ON, or -1 when no reading.
 */
static int
missing_comma(struct lex *lx, unsigned char c, enum state *st)
{
	char top;

	if (c == '{' && object_in_array(lx)) {
		lx->depth--;
		if (fix(lx, R_MISSING_BRACKET) != 0 ||
		    fix(lx, R_MISSING_COMMA) != 0 || put(lx, "},", 2) != 0)
			return -1;
		*st = VALUE;
		return STEP_ON;
	}
	if (lx->depth == lx->implicit)
		return -1;	/* ["a": 1 "b": 2] */
	top = lx->stack[lx->depth - 1];
	if (top == WRAPPER || !(top == '{' ? saop__rep_key_starts(lx, lx->i) :
	    saop__rep_item_starts(lx, lx->i) || (is_ident_start(c) &&
	    saop__rep_line_before(lx)) || saop__rep_bare_item_at(lx, lx->i)))
		return -1;
	if (fix(lx, R_MISSING_COMMA) != 0 || putc_(lx, ',') != 0)
		return -1;
	*st = top == '{' ? KEY : VALUE;
	return STEP_ON;
}

/*
 * AFTER a value: at the top the value is read (unless a '+' concatenates
 * a string: concat()); in a container a ')' of a tuple or wrapper, a ',',
 * a closing bracket, or an item or member with its ',' missing.  Returns
 * STEP_DONE, STEP_ON (*st set), or -1.
 */
static int
after_step(struct lex *lx, unsigned char c, enum state *st)
{
	int k;

	if (c == '+' && lx->last_string)
		return concat(lx);
	if (lx->depth == 0)
		return STEP_DONE;
	if (strchr("{[", lx->stack[lx->depth - 1]) == NULL &&
	    (k = after_in_paren(lx, c)) != 0)
		return k < 0 ? -1 : STEP_ON;
	if (c == ',')
		return after_comma(lx, st);
	if ((k = after_close(lx, c)) != 0)
		return k < 0 ? -1 : STEP_ON;
	return missing_comma(lx, c, st);
}

/*
 * Read one value at lx->i (after white space and comments), writing it out
 * as strict JSON: a step of its state at each token, until the value is
 * read.  Iterative, so deep nesting needs no C stack.  Returns 0 with
 * lx->i just past the value (lx->truncated when the input ended in it and
 * the pass may close it), or -1.
 */
int
saop__rep_value(struct lex *lx)
{
	enum state st = VALUE;
	int k;

	lx->depth = 0;
	lx->implicit = 0;
	for (;;) {
		unsigned char c;

		if (saop__rep_skip_space(lx) != 0)
			return -1;
		if (lx->implicit > lx->depth)
			lx->implicit = 0;	/* that object closed */
		if (cut_fence(lx) != 0)
			return -1;
		if (lx->i >= lx->n)
			return input_ends(lx, st) < 0 ? -1 : 0;
		c = (unsigned char)lx->s[lx->i];
		if (lx->depth > 0)
			lx->tokens++;
		if (st != AFTER)
			lx->last_string = 0;
		switch (st) {
		case VALUE_OR_END:
			if ((k = empty_or_comma(lx, c, &st)) != 0) {
				k = k < 0 ? -1 : STEP_ON;
				break;
			}
			/* FALLTHROUGH */
		case VALUE:
			k = value_step(lx, c, &st);
			break;
		case KEY_OR_END:
			if ((k = empty_object(lx, c, &st)) != 0) {
				k = k < 0 ? -1 : STEP_ON;
				break;
			}
			/* FALLTHROUGH */
		case KEY:
			k = key_step(lx, c, &st);
			break;
		default:
			k = after_step(lx, c, &st);
			break;
		}
		if (k < 0)
			return -1;
		if (k == STEP_DONE)
			return 0;
		if (st == AFTER && lx->depth == 0 && !(lx->last_string &&
		    plus_follows(lx)))
			return 0;
	}
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
int
saop__rep_one_pass(struct lex *lx)
{
	if (saop__rep_skip_space(lx) != 0 || lx->i >= lx->n)
		return -1;
	for (;;) {
		size_t start = lx->out->len;

		if (saop__rep_value(lx) != 0)
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
		if (saop__rep_skip_space(lx) != 0)
			return -1;
		if (lx->i >= lx->n)
			break;
		/* {...}{...}, or one value a line (NDJSON of scalars too). */
		if (lx->s[lx->i] == '{' || lx->s[lx->i] == '[' ||
		    (saop__rep_line_before(lx) &&
		    (saop__rep_item_starts(lx, lx->i) ||
		    saop__rep_literal_at(lx)))) {
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
			    putc_(lx, '\n') != 0 ||
			    saop__rep_skip_space(lx) != 0)
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
