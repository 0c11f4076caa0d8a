/*
 * repair.c: local repair of a model's JSON output before a correction turn
 * is spent on it.  A lenient tokenizer (aware of strings) reads the text and
 * writes it back as strict JSON; every rule it applies is named.  Valid JSON
 * passes through the same tokenizer without a single rule firing, so it
 * comes back unchanged; text with no single reading is left as it is.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"

/* The repairs, in the order validate.repairs lists them. */
enum {
	R_BOM = 1 << 0,
	R_CODE_FENCE = 1 << 1,
	R_PROSE = 1 << 2,
	R_COMMENT = 1 << 3,
	R_TRAILING_COMMA = 1 << 4,
	R_SINGLE_QUOTES = 1 << 5,
	R_PYTHON_LITERAL = 1 << 6,
	R_UNQUOTED_KEY = 1 << 7,
	R_CONTROL_CHARACTER = 1 << 8
};

static const char *const repair_names[] = {
	"bom", "code_fence", "prose", "comment", "trailing_comma",
	"single_quotes", "python_literal", "unquoted_key", "control_character"
};

/* One pass of the lenient tokenizer over s[0..n). */
struct lex {
	const char *s;
	size_t n;
	size_t i;		/* next byte to read */
	struct saop__buf *out;
	unsigned repairs;
	size_t tokens;		/* tokens read after the first bracket */
	int nomem;
	char *stack;		/* open containers: '{' or '[' */
	size_t depth;
	size_t stack_cap;
};

/*
 * Append p[0..n) to the output of the pass under way: 0, or -1 with
 * lx->nomem set.  lx->out is only valid during a pass (see pass_begin).
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

/*
 * Copy white space and drop comments up to the next token.  Returns 0, or
 * -1 on an unterminated block comment (or no memory).
 */
static int
skip_space(struct lex *lx)
{
	const char *s = lx->s;
	size_t start;

	while (lx->i < lx->n) {
		char c = s[lx->i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			start = lx->i;
			while (lx->i < lx->n && strchr(" \t\n\r", s[lx->i]) &&
			    s[lx->i] != '\0')
				lx->i++;
			if (put(lx, s + start, lx->i - start) != 0)
				return -1;
		} else if (c == '/' && lx->i + 1 < lx->n &&
		    s[lx->i + 1] == '/') {
			while (lx->i < lx->n && s[lx->i] != '\n')
				lx->i++;
			lx->repairs |= R_COMMENT;
		} else if (c == '/' && lx->i + 1 < lx->n &&
		    s[lx->i + 1] == '*') {
			lx->i += 2;
			while (lx->i + 1 < lx->n &&
			    !(s[lx->i] == '*' && s[lx->i + 1] == '/'))
				lx->i++;
			if (lx->i + 1 >= lx->n)
				return -1;
			lx->i += 2;
			lx->repairs |= R_COMMENT;
			/* Keep the tokens on either side apart. */
			if (putc_(lx, ' ') != 0)
				return -1;
		} else {
			break;
		}
	}
	return 0;
}

/*
 * A string opened by quote ('"' or '\'') at lx->i, written out with double
 * quotes.  Escapes must be JSON's; raw control characters are escaped.
 * Returns 0, or -1 when it is not a string this tokenizer can read.
 */
static int
string(struct lex *lx)
{
	const char *s = lx->s;
	char quote = s[lx->i];
	size_t run;
	char esc[8];

	if (quote == '\'')
		lx->repairs |= R_SINGLE_QUOTES;
	if (putc_(lx, '"') != 0)
		return -1;
	lx->i++;
	run = lx->i;
	for (;;) {
		unsigned char c;

		if (lx->i >= lx->n)
			return -1;		/* unterminated */
		c = (unsigned char)s[lx->i];
		if (c != quote && c != '\\' && c >= 0x20 &&
		    !(quote == '\'' && c == '"')) {
			lx->i++;
			continue;
		}
		if (put(lx, s + run, lx->i - run) != 0)
			return -1;
		if (c == (unsigned char)quote) {
			lx->i++;
			break;
		}
		if (c == '"') {			/* inside '...' */
			if (put(lx, "\\\"", 2) != 0)
				return -1;
			lx->i++;
		} else if (c == '\\') {
			unsigned char d;
			int k;

			if (lx->i + 1 >= lx->n)
				return -1;
			d = (unsigned char)s[lx->i + 1];
			if (d == '\'' && quote == '\'') {
				if (putc_(lx, '\'') != 0)
					return -1;
				lx->i += 2;
			} else if (d == 'u') {
				for (k = 0; k < 4; k++)
					if (lx->i + 2 + (size_t)k >= lx->n ||
					    !is_hex((unsigned char)
					    s[lx->i + 2 + k]))
						return -1;
				if (put(lx, s + lx->i, 6) != 0)
					return -1;
				lx->i += 6;
			} else if (strchr("\"\\/bfnrt", d) != NULL &&
			    d != '\0') {
				if (put(lx, s + lx->i, 2) != 0)
					return -1;
				lx->i += 2;
			} else {
				return -1;	/* not a JSON escape */
			}
		} else {			/* a raw control character */
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
			if (put(lx, esc, strlen(esc)) != 0)
				return -1;
			lx->repairs |= R_CONTROL_CHARACTER;
			lx->i++;
		}
		run = lx->i;
	}
	return putc_(lx, '"');
}

/* A number, exactly as RFC 8259 writes it.  Returns 0 or -1. */
static int
number(struct lex *lx)
{
	const char *s = lx->s;
	size_t i = lx->i;

	if (i < lx->n && s[i] == '-')
		i++;
	if (i >= lx->n || !is_digit((unsigned char)s[i]))
		return -1;
	if (s[i] == '0')
		i++;
	else
		while (i < lx->n && is_digit((unsigned char)s[i]))
			i++;
	if (i < lx->n && s[i] == '.') {
		i++;
		if (i >= lx->n || !is_digit((unsigned char)s[i]))
			return -1;
		while (i < lx->n && is_digit((unsigned char)s[i]))
			i++;
	}
	if (i < lx->n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < lx->n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= lx->n || !is_digit((unsigned char)s[i]))
			return -1;
		while (i < lx->n && is_digit((unsigned char)s[i]))
			i++;
	}
	if (i < lx->n && (is_ident((unsigned char)s[i]) || s[i] == '.'))
		return -1;
	if (put(lx, s + lx->i, i - lx->i) != 0)
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

/*
 * Write the literal at lx->i (true, false, null, or Python's True, False,
 * None) as JSON.  Returns 0, -1 when there is none there or with
 * lx->nomem set.
 */
static int
literal(struct lex *lx)
{
	static const char *const json[] = { "true", "false", "null" };
	static const char *const py[] = { "True", "False", "None" };
	size_t n = ident_len(lx), k;

	for (k = 0; k < 3; k++) {
		if (n == strlen(json[k]) &&
		    memcmp(lx->s + lx->i, json[k], n) == 0)
			break;
		if (n == strlen(py[k]) &&
		    memcmp(lx->s + lx->i, py[k], n) == 0) {
			lx->repairs |= R_PYTHON_LITERAL;
			break;
		}
	}
	if (k == 3)
		return -1;
	lx->i += n;
	return put(lx, json[k], n);
}

/*
 * Open a container c ('{' or '[') and write it: 0, or -1 past
 * SAOP_MAX_DEPTH or with no memory (lx->nomem set).
 */
static int
push(struct lex *lx, char c)
{
	if (lx->depth >= SAOP_MAX_DEPTH)
		return -1;
	if (lx->depth == lx->stack_cap) {
		size_t cap = lx->stack_cap ? lx->stack_cap * 2 : 64;
		char *p;

		if ((p = realloc(lx->stack, cap)) == NULL) {
			lx->nomem = 1;
			return -1;
		}
		lx->stack = p;
		lx->stack_cap = cap;
	}
	lx->stack[lx->depth++] = c;
	return putc_(lx, c);
}

/*
 * Read one value at lx->i (after white space and comments), writing it out
 * as strict JSON.  Iterative, so deep nesting needs no C stack.  Returns 0
 * with lx->i just past the value, or -1.
 */
static int
value(struct lex *lx)
{
	enum { VALUE, VALUE_OR_END, KEY, KEY_OR_END, AFTER } st = VALUE;
	const char *s = lx->s;
	size_t comma;

	lx->depth = 0;
	for (;;) {
		unsigned char c;

		if (skip_space(lx) != 0)
			return -1;
		if (lx->i >= lx->n)
			return -1;	/* it ends before the value does */
		c = (unsigned char)s[lx->i];
		if (lx->depth > 0)
			lx->tokens++;
		switch (st) {
		case VALUE_OR_END:
			if (c == ']') {
				lx->i++;
				lx->depth--;
				if (putc_(lx, ']') != 0)
					return -1;
				st = AFTER;
				break;
			}
			/* FALLTHROUGH */
		case VALUE:
			if (c == '{') {
				lx->i++;
				if (push(lx, '{') != 0)
					return -1;
				st = KEY_OR_END;
				break;
			}
			if (c == '[') {
				lx->i++;
				if (push(lx, '[') != 0)
					return -1;
				st = VALUE_OR_END;
				break;
			}
			if (c == '"' || c == '\'') {
				if (string(lx) != 0)
					return -1;
			} else if (c == '-' || is_digit(c)) {
				if (number(lx) != 0)
					return -1;
			} else if (literal(lx) != 0) {
				return -1;
			}
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
			if (c == '"' || c == '\'') {
				if (string(lx) != 0)
					return -1;
			} else {
				size_t n = ident_len(lx);

				if (n == 0)
					return -1;
				if (putc_(lx, '"') != 0 ||
				    put(lx, s + lx->i, n) != 0 ||
				    putc_(lx, '"') != 0)
					return -1;
				lx->i += n;
				lx->repairs |= R_UNQUOTED_KEY;
			}
			if (skip_space(lx) != 0 || lx->i >= lx->n ||
			    s[lx->i] != ':')
				return -1;
			lx->i++;
			if (putc_(lx, ':') != 0)
				return -1;
			st = VALUE;
			break;
		case AFTER:
			if (lx->depth == 0)
				return 0;
			if (c == ',') {
				lx->i++;
				comma = lx->out->len;
				if (putc_(lx, ',') != 0 || skip_space(lx) != 0)
					return -1;
				if (lx->i < lx->n && (s[lx->i] == '}' ||
				    s[lx->i] == ']')) {
					/* A trailing comma: take it out. */
					memmove(lx->out->data + comma,
					    lx->out->data + comma + 1,
					    lx->out->len - comma - 1);
					lx->out->data[--lx->out->len] = '\0';
					lx->repairs |= R_TRAILING_COMMA;
					if (s[lx->i] != (lx->stack[lx->depth -
					    1] == '{' ? '}' : ']'))
						return -1;
					break;	/* AFTER again: closes */
				}
				st = lx->stack[lx->depth - 1] == '{' ? KEY :
				    VALUE;
				break;
			}
			if (c == (lx->stack[lx->depth - 1] == '{' ? '}' :
			    ']')) {
				lx->i++;
				lx->depth--;
				if (putc_(lx, (char)c) != 0)
					return -1;
				break;
			}
			return -1;
		}
		if (st == AFTER && lx->depth == 0)
			return 0;
	}
}

/*
 * Start a pass of the tokenizer over s[0..n), writing into out (emptied
 * first).  The lexer borrows out until pass_end(): callers keep their
 * output buffers in different places (saop_repair's, from_fences' own
 * scratch buffer on its stack), so no pointer to one may outlive the pass
 * that wrote it.
 */
static void
pass_begin(struct lex *lx, const char *s, size_t n, struct saop__buf *out)
{
	lx->s = s;
	lx->n = n;
	lx->i = 0;
	lx->out = out;
	lx->repairs = 0;
	lx->tokens = 0;
	out->len = 0;
}

/* End the pass: the lexer no longer holds its output buffer. */
static void
pass_end(struct lex *lx)
{
	lx->out = NULL;
}

/*
 * Read s[0..n) as exactly one value with white space and comments around
 * it, into out (emptied first).  Returns 1 and the repairs in *repairs, 0
 * when it is not one value, -1 on no memory.  *tokens: how far it got.
 */
static int
whole(struct lex *lx, const char *s, size_t n, struct saop__buf *out,
    unsigned *repairs, size_t *tokens)
{
	int ok;

	pass_begin(lx, s, n, out);
	ok = value(lx) == 0 && skip_space(lx) == 0 && lx->i == lx->n;
	pass_end(lx);
	if (tokens != NULL)
		*tokens = lx->tokens;
	if (lx->nomem)
		return -1;
	*repairs = lx->repairs;
	return ok;
}

/* Is s[0..n) white space only?  1 or 0. */
static int
blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strchr(" \t\n\r", s[i]) == NULL || s[i] == '\0')
			return 0;
	return 1;
}

/*
 * A fence line at s[i] (the start of a line): up to 3 spaces, then ```
 * or ~~~.  Returns the fence character, or 0.
 */
static char
fence_at(const char *s, size_t n, size_t i)
{
	size_t k = 0;

	while (k < 3 && i < n && s[i] == ' ') {
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

/*
 * Markdown code fences: the one fenced block that holds one JSON value.
 * Returns 1 with it in out and *repairs, 0 when there is no fence or no
 * single block, -1 on no memory.
 */
static int
from_fences(struct lex *lx, const char *s, size_t n, struct saop__buf *out,
    unsigned *repairs)
{
	size_t i = 0, found_at = 0, found_len = 0, outside = 0;
	unsigned r, found_r = 0;
	int found = 0, blocks = 0, rc;
	struct saop__buf tmp = { NULL, 0, 0 };

	while (i < n) {
		size_t eol = line_end(s, n, i), body, end;
		char f = fence_at(s, n, i);

		if (f == 0) {
			if (!blank(s + i, eol - i))
				outside = 1;
			i = eol + 1;
			continue;
		}
		/* The block runs to a closing fence line, or to the end. */
		body = eol < n ? eol + 1 : n;
		end = body;
		while (end < n && fence_at(s, n, end) != f)
			end = line_end(s, n, end) + 1;
		if (end > n)
			end = n;
		blocks++;
		rc = whole(lx, s + body, end - body, &tmp, &r, NULL);
		if (rc < 0) {
			free(tmp.data);
			return -1;
		}
		if (rc == 1) {
			found++;
			found_at = body;
			found_len = end - body;
			found_r = r;
		} else {
			size_t k = body;

			/* A broken block that looks like JSON: two readings. */
			while (k < end && strchr(" \t\r\n", s[k]) != NULL)
				k++;
			if (k < end && (s[k] == '{' || s[k] == '['))
				found += 2;
		}
		i = end < n ? line_end(s, n, end) + 1 : n;
	}
	free(tmp.data);
	if (blocks == 0 || found != 1)
		return 0;
	if ((rc = whole(lx, s + found_at, found_len, out, &r, NULL)) != 1)
		return rc;
	*repairs = found_r | R_CODE_FENCE | (outside ? R_PROSE : 0);
	return 1;
}

/*
 * Prose around one JSON object or array.  Every '{' or '[' starts a try;
 * a try that reads a whole value is a candidate, one that breaks after
 * reading a few tokens is a broken candidate.  Exactly one candidate and
 * no broken one: that is the answer.  Returns 1, 0 or -1 as from_fences.
 */
static int
from_prose(struct lex *lx, const char *s, size_t n, struct saop__buf *out,
    unsigned *repairs)
{
	size_t i = 0, at = 0, len = 0;
	int found = 0, rc;
	unsigned r = 0;

	while (i < n && found < 2) {
		if (s[i] != '{' && s[i] != '[') {
			i++;
			continue;
		}
		pass_begin(lx, s + i, n - i, out);
		rc = value(lx);
		pass_end(lx);
		if (rc == 0) {
			found++;
			at = i;
			len = lx->i;
			r = lx->repairs;
			i += lx->i;
		} else {
			if (lx->nomem)
				return -1;
			if (lx->tokens >= 3)
				found += 2;	/* broken JSON: no guess */
			i += lx->i > 0 ? lx->i : 1;
		}
	}
	if (found != 1 || (at == 0 && len == n))
		return 0;
	if (whole(lx, s + at, len, out, &r, NULL) != 1)
		return lx->nomem ? -1 : 0;
	*repairs = r | R_PROSE;
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
 * Repair text[0..len) (see saop.h): a whole value first, then the one
 * fenced block that holds JSON, then the one value in prose; else only a
 * BOM goes.  Returns 1 with *out (new, free()) and *repairs (new), 0 when
 * nothing changes, or -SAOP_ENOMEM.
 */
int
saop_repair(const char *text, size_t len, char **out, size_t *out_len,
    json_t **repairs, struct saop_err *e)
{
	struct lex lx = { 0 };
	struct saop__buf b = { NULL, 0, 0 };
	unsigned r = 0, bom = 0;
	const char *s = text;
	char *got;
	size_t n = len, k;
	int rc;

	*out = NULL;
	*out_len = 0;
	*repairs = NULL;
	saop_err_clear(e);
	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
		s += 3;
		n -= 3;
		bom = R_BOM;
	}
	rc = whole(&lx, s, n, &b, &r, NULL);
	if (rc == 0)
		rc = from_fences(&lx, s, n, &b, &r);
	if (rc == 0)
		rc = from_prose(&lx, s, n, &b, &r);
	free(lx.stack);
	if (rc == 1)
		rc = strict(b.data, b.len);
	if (rc < 0) {
		free(b.data);
		return saop__fail(e, SAOP_ENOMEM, ENOMEM,
		    "out of memory repairing %zu bytes", len);
	}
	if (rc == 0) {
		/*
		 * No single reading; only a BOM can still go, unless another
		 * follows it: that one would go in a repair of the repair.
		 */
		r = 0;
		b.len = 0;
		if (bom && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
			bom = 0;
		if (bom && saop__buf_append(&b, s, n) != 0) {
			free(b.data);
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		}
	}
	r |= bom;
	if (r == 0) {
		free(b.data);
		return 0;
	}
	if ((got = saop__buf_steal(&b, &n)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	if ((*repairs = json_array()) == NULL) {
		free(got);
		return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	}
	for (k = 0; k < sizeof(repair_names) / sizeof(repair_names[0]); k++)
		if ((r & (1u << k)) &&
		    json_array_append_new(*repairs,
		    json_string(repair_names[k])) != 0) {
			json_decref(*repairs);
			*repairs = NULL;
			free(got);
			return saop__fail(e, SAOP_ENOMEM, ENOMEM,
			    "out of memory");
		}
	*out = got;
	*out_len = n;
	return 1;
}
