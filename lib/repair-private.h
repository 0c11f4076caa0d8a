/*
 * repair-private.h: what only the rooms of local repair share (lib/repair*.c;
 * saop__rep_ names).  The rooms, each reading one thing and using only
 * those above it:
 *
 *   repair-lex.c     the lexer: white space and comments, the tokens (a
 *                    string, a number, a literal, a bare word), each written
 *                    out as strict JSON with the repairs it takes and the
 *                    choices it asks of the search; every quote it writes
 *                    inside a string marked with where it came from
 *                    (struct mark)
 *   repair-rules.c   the rules of structure: containers, commas, colons,
 *                    brackets, wrappers, concatenated values (one pass)
 *   repair-anchor.c  the schema's anchoring: which strings the schema
 *                    anchors, the invariant that no string swallows
 *                    structure, the schema's pick among readings
 *   repair-read.c    the readings and their costs: the search over the
 *                    choices of a pass (saop__rep_choose()), the readings
 *                    kept (keep(), the one place every reading passes
 *                    through: the invariant is checked there), candidates
 *   repair.c         where the JSON is (fences, prose, <think>, JSONP,
 *                    stringified, bare text) and saop_repair_with()
 *
 * Never installed.
 */
#ifndef SAOP_REPAIR_PRIVATE_H
#define SAOP_REPAIR_PRIVATE_H

#include <stdint.h>
#include <string.h>

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

/* A candidate value: its text (owned), the tree when jansson holds it. */
struct cand {
	char *text;
	size_t len;
	json_t *v;
	repairs_t repairs;
};

/*
 * Append p[0..n) to the output of the pass under way: 0, or -1 with
 * lx->nomem set.
 */
static inline int
put(struct lex *lx, const char *p, size_t n)
{
	if (saop__buf_append(lx->out, p, n) != 0) {
		lx->nomem = 1;
		return -1;
	}
	return 0;
}

/* Append the byte c to the output of the pass under way, as put(). */
static inline int
putc_(struct lex *lx, char c)
{
	return put(lx, &c, 1);
}

/*
 * Count the repair r (2 for a quote read inside a string or a missing
 * closing quote, else 1): 0, or -1 when the pass now costs more than a
 * reading found already (it cannot be one of the least-cost readings).
 */
static inline int
fix(struct lex *lx, repairs_t r)
{
	lx->repairs |= r;
	/* Moving where a string ends weighs more than any other repair. */
	lx->cost += r == R_UNESCAPED_QUOTE || r == R_MISSING_CLOSE ? 2 : 1;
	return lx->cost > lx->best ? -1 : 0;
}

/* Can c start an unquoted key or a literal?  1 or 0. */
static inline int
is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    c == '$';
}

/* Can c go on an unquoted key or a literal?  1 or 0. */
static inline int
is_ident(unsigned char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* Is c an ASCII digit?  1 or 0. */
static inline int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* Is c a hexadecimal digit?  1 or 0. */
static inline int
is_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Is c JSON white space?  1 or 0. */
static inline int
is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * The typographic quote at s[i]: 1 for U+201C/U+201D (double), 2 for
 * U+2018/U+2019 (single), 0 for none.
 */
static inline int
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
static inline int
quote_at(const char *s, size_t n, size_t i)
{
	return i < n && (s[i] == '"' || s[i] == '\'' || s[i] == '`' ||
	    typo_quote(s, n, i) != 0);
}

/* The index of the first byte at or after i that is not JSON space. */
static inline size_t
next_nonspace(const char *s, size_t n, size_t i)
{
	while (i < n && is_space((unsigned char)s[i]))
		i++;
	return i;
}

/* repair-lex.c: the lexer (see there). */
int saop__rep_marks_cut(struct lex *lx, size_t len);
int saop__rep_choose(struct lex *lx, unsigned char nopts);
int saop__rep_skip_space(struct lex *lx);
int saop__rep_string(struct lex *lx, int key, int cont);
int saop__rep_number(struct lex *lx);
size_t saop__rep_ident_len(const struct lex *lx);
int saop__rep_literal_word(const char *s, size_t n);
int saop__rep_literal(struct lex *lx);
int saop__rep_quoted_key_at(const struct lex *lx, size_t i);
int saop__rep_bare_item_at(const struct lex *lx, size_t i);
int saop__rep_bare_string(struct lex *lx);
int saop__rep_word_string(struct lex *lx);
int saop__rep_key_starts(const struct lex *lx, size_t i);
int saop__rep_literal_at(const struct lex *lx);
int saop__rep_item_starts(const struct lex *lx, size_t i);
int saop__rep_line_before(const struct lex *lx);
int saop__rep_python_set(struct lex *lx);

/* repair-rules.c: the rules of structure (see there). */
int saop__rep_value(struct lex *lx);
int saop__rep_one_pass(struct lex *lx);

/* repair-anchor.c: the schema's anchoring (see there). */
int saop__rep_anchor_check(const struct lex *lx, const struct saop__buf *out);
int saop__rep_asks_string(const struct saop_schema *s,
    const struct sch_node *n);
int saop__rep_swallowed(const struct lex *lx, const struct saop__buf *out,
    int a);
int saop__rep_anchored(const struct saop_schema *s, const json_t *v);
int saop__rep_schema_pick(const struct saop_schema *s, struct cand *c,
    size_t n);
int saop__rep_fits_string(const struct saop_schema *s, const char *t,
    size_t len);

/* repair-read.c: the readings and their costs (see there). */
void saop__rep_pass_begin(struct lex *lx, const char *s, size_t n,
    struct saop__buf *out);
void saop__rep_pass_end(struct lex *lx);
void saop__rep_readings_clear(struct lex *lx);
int saop__rep_search(struct lex *lx, const char *s, size_t n);
void saop__rep_cands_free(struct cand *c, size_t n);
int saop__rep_candidates(struct lex *lx, struct cand *c, size_t *nc,
    size_t max);

#endif /* SAOP_REPAIR_PRIVATE_H */
