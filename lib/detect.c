/*
 * detect.c: the streaming scanner that tells complete, truncated and
 * invalid JSON apart (RFC 8259, strict UTF-8), with the closing suffix
 * of a truncated input.
 *
 * The scanner is a push state machine: it never builds a tree and never
 * recurses; its memory is the container stack (one byte per level) and
 * two 256-byte token tails.  The hot loops keep the state in locals and
 * skip through string contents 16 (SSE2) or 8 (SWAR) bytes at a time.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "saop-private.h"

#define TAIL	256		/* bytes of a token's text kept */

enum state {
	ST_BOM,			/* at the start, maybe inside a BOM */
	ST_START,		/* before the top-level value */
	ST_ARR_FIRST,		/* after '[': a value or ']' */
	ST_ARR_VALUE,		/* after ',' in an array: a value */
	ST_OBJ_FIRST,		/* after '{': a key or '}' */
	ST_OBJ_KEY,		/* after ',' in an object: a key */
	ST_COLON,		/* after a key: ':' */
	ST_OBJ_VALUE,		/* after ':': a value */
	ST_AFTER,		/* after a value in a container: ',' or close */
	ST_DONE,		/* the top-level value is complete */
	ST_STR,			/* inside a string */
	ST_STR_ESC,		/* after a backslash */
	ST_STR_U,		/* inside a \u escape */
	ST_STR_HIGH,		/* after a high surrogate escape: '\\' */
	ST_STR_HIGH_BS,		/* after a high surrogate escape and '\\' */
	ST_STR_UTF8,		/* inside a multi-byte UTF-8 character */
	ST_NUM_MINUS,		/* number: after '-' */
	ST_NUM_ZERO,		/* number: a leading 0 */
	ST_NUM_INT,		/* number: in the integer digits */
	ST_NUM_DOT,		/* number: after '.' */
	ST_NUM_FRAC,		/* number: in the fraction digits */
	ST_NUM_E,		/* number: after 'e' */
	ST_NUM_ESIGN,		/* number: after the exponent's sign */
	ST_NUM_EXP,		/* number: in the exponent digits */
	ST_LIT,			/* inside true, false or null */
	ST_INVALID
};

struct saop_detector {
	enum state st;
	int key;		/* the string is an object key */
	int nomem;
	int bom;		/* a BOM was skipped */
	int bompos;		/* BOM bytes seen (ST_BOM) */
	/* \u escapes */
	unsigned uval;		/* hex digits seen, as a number */
	int ucount;		/* how many */
	int ulow;		/* this escape must be a low surrogate */
	/* a multi-byte UTF-8 character cut by a chunk's end */
	int u8need;		/* continuation bytes still to come */
	unsigned char u8lo, u8hi;	/* range of the next one */
	unsigned char u8lead;
	/* literals */
	const char *lit;
	int litpos;
	/* the container stack */
	unsigned char *stack;
	size_t depth, cap, max_depth;
	/* position */
	uint64_t base;		/* bytes fed before the current chunk */
	long line;
	uint64_t line_start;
	/* tokens */
	uint64_t cur_start;	/* the token being scanned starts here */
	uint64_t last_start, last_end;	/* the last complete token */
	uint64_t safe;		/* end of the last complete value, or of the
				   opening bracket, in the innermost open
				   container: where a closing may cut back to */
	uint64_t saved_end;	/* last_end whose text is in last[] */
	unsigned char pend[TAIL];	/* tail of the token being scanned */
	size_t pend_len;
	unsigned char last[TAIL];	/* tail of the last complete token */
	size_t last_len;
	/* the first invalid byte */
	enum state err_state;
	uint64_t err_off;
	long err_line, err_col;
	char err[128];
};

/* Character classes of bytes outside strings. */
#define C_WS	1		/* space, tab, CR, LF */
#define C_DIGIT	2
#define C_ESC	4		/* a one-character escape after '\\' */

static const unsigned char cls[256] = {
	['\t'] = C_WS, ['\n'] = C_WS, ['\r'] = C_WS, [' '] = C_WS,
	['"'] = C_ESC, ['\\'] = C_ESC, ['/'] = C_ESC, ['b'] = C_ESC,
	['f'] = C_ESC, ['n'] = C_ESC, ['r'] = C_ESC, ['t'] = C_ESC,
	['0'] = C_DIGIT, ['1'] = C_DIGIT, ['2'] = C_DIGIT, ['3'] = C_DIGIT,
	['4'] = C_DIGIT, ['5'] = C_DIGIT, ['6'] = C_DIGIT, ['7'] = C_DIGIT,
	['8'] = C_DIGIT, ['9'] = C_DIGIT
};

/* Hex digit values, 16 for "not one". */
static unsigned char hexval[256];
static int hex_ready;

/* Fill hexval[] (16 for a byte that is not a hex digit) once. */
static void
hex_init(void)
{
	int i;

	if (hex_ready)
		return;
	for (i = 0; i < 256; i++)
		hexval[i] = 16;
	for (i = 0; i < 10; i++)
		hexval['0' + i] = (unsigned char)i;
	for (i = 0; i < 6; i++) {
		hexval['a' + i] = (unsigned char)(10 + i);
		hexval['A' + i] = (unsigned char)(10 + i);
	}
	hex_ready = 1;
}

/* See saop.h.  Returns a new detector, or NULL out of memory. */
struct saop_detector *
saop_detector_new(size_t max_depth)
{
	struct saop_detector *d;

	hex_init();
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->max_depth = max_depth ? max_depth : SAOP_MAX_DEPTH;
	d->cap = d->max_depth < 64 ? d->max_depth : 64;
	if ((d->stack = malloc(d->cap)) == NULL) {
		free(d);
		return NULL;
	}
	d->st = ST_BOM;
	d->line = 1;
	return d;
}

/* See saop.h.  Frees d (NULL: nothing); returns nothing. */
void
saop_detector_free(struct saop_detector *d)
{
	if (d == NULL)
		return;
	free(d->stack);
	free(d);
}

/* What the scanner expects in state st (top: the innermost container). */
static const char *
expected_in(enum state st, int top, const char *lit)
{
	switch (st) {
	case ST_BOM:
	case ST_START:
		return "a JSON value";
	case ST_ARR_FIRST:
		return "a value or ']'";
	case ST_ARR_VALUE:
	case ST_OBJ_VALUE:
		return "a value";
	case ST_OBJ_FIRST:
		return "a string key or '}'";
	case ST_OBJ_KEY:
		return "a string key";
	case ST_COLON:
		return "':'";
	case ST_AFTER:
		return top == '[' ? "',' or ']'" : "',' or '}'";
	case ST_DONE:
		return "nothing after the value but white space";
	case ST_STR:
		return "more of the string or its closing '\"'";
	case ST_STR_ESC:
		return "an escape character after '\\'";
	case ST_STR_U:
		return "a hex digit of a \\u escape";
	case ST_STR_HIGH:
	case ST_STR_HIGH_BS:
		return "a \\u escape of a low surrogate after the high one";
	case ST_STR_UTF8:
		return "a UTF-8 continuation byte";
	case ST_NUM_MINUS:
		return "a digit after '-'";
	case ST_NUM_DOT:
		return "a digit after '.'";
	case ST_NUM_E:
		return "a digit or sign of the exponent";
	case ST_NUM_ESIGN:
		return "a digit of the exponent";
	case ST_NUM_ZERO:
	case ST_NUM_INT:
	case ST_NUM_FRAC:
	case ST_NUM_EXP:
		return "more of the number or what follows it";
	case ST_LIT:
		if (lit != NULL && lit[0] == 't')
			return "the rest of 'true'";
		if (lit != NULL && lit[0] == 'f')
			return "the rest of 'false'";
		return "the rest of 'null'";
	case ST_INVALID:
		break;
	}
	return "nothing";
}

/* Describe byte c as found where it does not belong, into buf. */
static void
byte_words(char *buf, size_t size, unsigned c)
{
	if (c > 0x20 && c < 0x7f && c != '\'')
		snprintf(buf, size, "'%c'", (int)c);
	else
		snprintf(buf, size, "byte 0x%02x", c);
}

/* Mark d invalid at absolute offset off, in state st, with a message. */
static void SAOP__PRINTF(4, 5)
bad(struct saop_detector *d, enum state st, uint64_t off, const char *fmt,
    ...)
{
	va_list ap;

	d->err_state = st;
	d->err_off = off;
	d->err_line = d->line;
	d->err_col = (long)(off - d->line_start) + 1;
	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
}

/* Mark d invalid for an unexpected byte c at off in state st. */
static void
unexpected(struct saop_detector *d, enum state st, uint64_t off, unsigned c)
{
	char w[16];

	byte_words(w, sizeof(w), c);
	if (st == ST_DONE)
		bad(d, st, off, "unexpected %s after the end of the JSON value",
		    w);
	else
		bad(d, st, off, "unexpected %s, expected %s", w,
		    expected_in(st, d->depth ? d->stack[d->depth - 1] : 0,
		    d->lit));
}

/* Mark d invalid for a bad UTF-8 byte c at off: lead is the character's
 * first byte, second is set when c was its second byte. */
static void
bad_utf8(struct saop_detector *d, uint64_t off, unsigned lead, unsigned c,
    int second)
{
	if (!second) {
		if (c >= 0x80 && c <= 0xbf)
			bad(d, ST_STR, off, "invalid UTF-8: unexpected "
			    "continuation byte 0x%02x", c);
		else if (c == 0xc0 || c == 0xc1)
			bad(d, ST_STR, off, "invalid UTF-8: overlong "
			    "encoding (byte 0x%02x)", c);
		else
			bad(d, ST_STR, off, "invalid UTF-8: byte 0x%02x "
			    "cannot start a character", c);
		return;
	}
	if (c >= 0x80 && c <= 0xbf) {
		if (lead == 0xe0 || lead == 0xf0)
			bad(d, ST_STR_UTF8, off, "invalid UTF-8: overlong "
			    "encoding (0x%02x 0x%02x)", lead, c);
		else if (lead == 0xed)
			bad(d, ST_STR_UTF8, off, "invalid UTF-8: encoded "
			    "surrogate (0x%02x 0x%02x)", lead, c);
		else
			bad(d, ST_STR_UTF8, off, "invalid UTF-8: above "
			    "U+10FFFF (0x%02x 0x%02x)", lead, c);
		return;
	}
	bad(d, ST_STR_UTF8, off, "invalid UTF-8: byte 0x%02x where a "
	    "continuation byte belongs", c);
}

/* Keep the last TAIL bytes of dst[0..*n) followed by src[0..len). */
static void
tail_append(unsigned char *dst, size_t *n, const unsigned char *src,
    size_t len)
{
	if (len >= TAIL) {
		memcpy(dst, src + len - TAIL, TAIL);
		*n = TAIL;
		return;
	}
	if (*n + len > TAIL) {
		size_t drop = *n + len - TAIL;

		memmove(dst, dst + drop, *n - drop);
		*n -= drop;
	}
	memcpy(dst + *n, src, len);
	*n += len;
}

/*
 * The first byte in [p, end) that ends a run of plain string contents:
 * '"', '\\', a control byte, or a byte >= 0x80; end when none.
 */
static inline const unsigned char *
skip_plain(const unsigned char *p, const unsigned char *end)
{
#ifdef __SSE2__
	const __m128i q = _mm_set1_epi8('"');
	const __m128i bs = _mm_set1_epi8('\\');
	const __m128i sp = _mm_set1_epi8(0x20);

	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		/* Signed: bytes >= 0x80 are negative, so < 0x20 too. */
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q),
		    _mm_cmpeq_epi8(v, bs)), _mm_cmplt_epi8(v, sp));
		unsigned mask = (unsigned)_mm_movemask_epi8(m);

		if (mask != 0)
			return p + __builtin_ctz(mask);
		p += 16;
	}
#else
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t high = 0x8080808080808080ULL;

	while (end - p >= 8) {
		uint64_t w, x, y, m;

		memcpy(&w, p, 8);
		x = w ^ (ones * '"');
		y = w ^ (ones * '\\');
		m = (w | ((w - ones * 0x20) & ~w) | ((x - ones) & ~x) |
		    ((y - ones) & ~y)) & high;
		if (m != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return p + (__builtin_ctzll(m) >> 3);
#else
			break;
#endif
		}
		p += 8;
	}
#endif
	while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' &&
	    *p < 0x80)
		p++;
	return p;
}

#ifdef __SSE2__
/*
 * Skip string contents 64 bytes at a time, simple escapes (\" \\ \/ \b
 * \f \n \r \t) included: p is inside a string, not after a backslash.
 * The first byte where the byte-wise code must take over: an unescaped
 * '"', a control byte or a byte >= 0x80, the backslash of any other
 * escape; or, with fewer than 64 bytes left, a byte where the block scan
 * stopped (perhaps a backslash of a simple escape, perhaps end).
 */
static inline const unsigned char *
skip_string(const unsigned char *p, const unsigned char *end)
{
	const __m128i q = _mm_set1_epi8('"');
	const __m128i bs = _mm_set1_epi8('\\');
	const __m128i sp = _mm_set1_epi8(0x20);
	const uint64_t odd = 0xaaaaaaaaaaaaaaaaULL;

	/* Short strings (keys, small values) end within 16 bytes: one
	 * block, as skip_plain() would. */
	if (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q),
		    _mm_cmpeq_epi8(v, bs)), _mm_cmplt_epi8(v, sp));
		unsigned mask = (unsigned)_mm_movemask_epi8(m);

		if (mask != 0) {
			p += __builtin_ctz(mask);
			if (*p != '\\')
				return p;
		} else {
			p += 16;
		}
	}
	while (end - p >= 64) {
		uint64_t quote = 0, bsl = 0, other = 0, simple = 0;
		uint64_t code, escaped, stop;
		int i;

		for (i = 0; i < 4; i++) {
			__m128i v = _mm_loadu_si128((const __m128i *)
			    (const void *)(p + 16 * i));
			/* Signed: bytes >= 0x80 are negative, so < 0x20. */
			__m128i s = _mm_or_si128(_mm_or_si128(
			    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')),
			    _mm_cmpeq_epi8(v, _mm_set1_epi8('b'))),
			    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('f')),
			    _mm_cmpeq_epi8(v, _mm_set1_epi8('n')))),
			    _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('r')),
			    _mm_cmpeq_epi8(v, _mm_set1_epi8('t'))));

			quote |= (uint64_t)(unsigned)_mm_movemask_epi8(
			    _mm_cmpeq_epi8(v, q)) << (16 * i);
			bsl |= (uint64_t)(unsigned)_mm_movemask_epi8(
			    _mm_cmpeq_epi8(v, bs)) << (16 * i);
			other |= (uint64_t)(unsigned)_mm_movemask_epi8(
			    _mm_cmplt_epi8(v, sp)) << (16 * i);
			simple |= (uint64_t)(unsigned)_mm_movemask_epi8(s) <<
			    (16 * i);
		}
		/*
		 * The bytes after odd runs of backslashes are escaped (the
		 * carry trick of simdjson): code has the escaping
		 * backslashes and the escaped bytes.
		 */
		code = (((bsl << 1) | odd) - bsl) ^ odd;
		escaped = code ^ bsl;
		stop = ((quote | other) & ~escaped) |
		    ((escaped & ~(simple | quote | bsl)) >> 1);
		if (stop != 0)
			return p + __builtin_ctzll(stop);
		/* A backslash at the end escapes the next block's first
		 * byte: start that block with it. */
		p += 64 - ((code & bsl) >> 63);
	}
	return skip_plain(p, end);
}
#else
#define skip_string skip_plain
#endif

/* 1 when st is inside a string, number or literal token, else 0. */
static int
in_token(enum state st)
{
	return st >= ST_STR && st <= ST_LIT;
}

/* Double the container stack (up to max_depth); -1 when out of memory. */
static int
grow(struct saop_detector *d)
{
	size_t ncap = d->cap * 2 > d->max_depth ? d->max_depth : d->cap * 2;
	unsigned char *ns = realloc(d->stack, ncap);

	if (ns == NULL) {
		d->nomem = 1;
		return -1;
	}
	d->stack = ns;
	d->cap = ncap;
	return 0;
}

/* Scan one chunk: the state machine proper. */
static void
scan(struct saop_detector *d, const unsigned char *buf, size_t len)
{
	const unsigned char *p = buf, *const end = buf + len;
	const uint64_t base = d->base;
	uint64_t ls = d->last_start, le = d->last_end, sf = d->safe;
	enum state st = d->st;
	unsigned c;

	/*
	 * Each state is a label; the common transitions jump straight to
	 * the next state's label, and every label copes with p == end.
	 */
#define OFF(q)	(base + (uint64_t)((q) - buf))
#define FAIL(...) do { bad(d, st, OFF(p), __VA_ARGS__); goto invalid; } \
	while (0)
#define UNEXPECTED() do { unexpected(d, st, OFF(p), *p); goto invalid; } \
	while (0)
#define TOKEN(s, e) do { ls = (s); le = (e); } while (0)
#define AFTER_VALUE() do { \
	if (d->depth != 0) { \
		sf = le; \
		st = ST_AFTER; \
		goto after; \
	} \
	st = ST_DONE; \
	goto done; \
} while (0)
#define SKIP_WS() do { \
	while (p < end && (cls[*p] & C_WS)) { \
		if (*p == '\n') { \
			d->line++; \
			d->line_start = OFF(p) + 1; \
		} \
		p++; \
	} \
	if (p == end) \
		goto out; \
} while (0)
#define PUSH(ch) do { \
	if (d->depth == d->max_depth) \
		FAIL("nesting deeper than %zu", d->max_depth); \
	if (d->depth == d->cap && grow(d) != 0) \
		goto invalid; \
	d->stack[d->depth++] = (ch); \
} while (0)

	if (p == end)
		goto out;
	switch (st) {
	case ST_BOM:
		goto bom;
	case ST_START:
	case ST_ARR_FIRST:
	case ST_ARR_VALUE:
	case ST_OBJ_VALUE:
		goto value;
	case ST_OBJ_FIRST:
	case ST_OBJ_KEY:
		goto key;
	case ST_COLON:
		goto colon;
	case ST_AFTER:
		goto after;
	case ST_DONE:
		goto done;
	case ST_STR:
		goto string;
	case ST_STR_ESC:
	case ST_STR_U:
	case ST_STR_HIGH:
	case ST_STR_HIGH_BS:
	case ST_STR_UTF8:
		goto string_slow;
	case ST_NUM_MINUS:
	case ST_NUM_ZERO:
	case ST_NUM_INT:
	case ST_NUM_DOT:
	case ST_NUM_FRAC:
	case ST_NUM_E:
	case ST_NUM_ESIGN:
	case ST_NUM_EXP:
		goto number;
	case ST_LIT:
		goto literal;
	case ST_INVALID:
		goto out;
	}
	goto out;

bom:
	/* Only at offset 0: EF BB BF, skipped and reported. */
	while (p < end) {
		if (d->bompos == 0 && *p != 0xef) {
			st = ST_START;
			goto value;
		}
		if (*p != (unsigned char)"\xef\xbb\xbf"[d->bompos]) {
			if (d->bompos == 0)
				UNEXPECTED();
			FAIL("a broken UTF-8 byte order mark (byte 0x%02x)",
			    *p);
		}
		p++;
		if (++d->bompos == 3) {
			d->bom = 1;
			st = ST_START;
			goto value;
		}
	}
	goto out;

value:
	/* st: ST_START, ST_ARR_FIRST, ST_ARR_VALUE or ST_OBJ_VALUE. */
	SKIP_WS();
	c = *p;
	switch (c) {
	case '"':
		d->key = 0;
		d->cur_start = OFF(p);
		p++;
		st = ST_STR;
		goto string;
	case '{':
		PUSH('{');
		TOKEN(OFF(p), OFF(p) + 1);
		sf = le;
		p++;
		st = ST_OBJ_FIRST;
		goto key;
	case '[':
		PUSH('[');
		TOKEN(OFF(p), OFF(p) + 1);
		sf = le;
		p++;
		st = ST_ARR_FIRST;
		goto value;
	case '-':
		st = ST_NUM_MINUS;
		break;
	case '0':
		st = ST_NUM_ZERO;
		break;
	case '1': case '2': case '3': case '4': case '5':
	case '6': case '7': case '8': case '9':
		st = ST_NUM_INT;
		break;
	case 't':
	case 'f':
	case 'n':
		d->cur_start = OFF(p);
		d->lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
		d->litpos = 1;
		p++;
		st = ST_LIT;
		goto literal;
	case ']':
		if (st != ST_ARR_FIRST)
			UNEXPECTED();
		d->depth--;
		TOKEN(OFF(p), OFF(p) + 1);
		p++;
		AFTER_VALUE();
	default:
		UNEXPECTED();
	}
	/* A number starts. */
	d->cur_start = OFF(p);
	p++;
	goto number;

key:
	/* st: ST_OBJ_FIRST or ST_OBJ_KEY. */
	SKIP_WS();
	if (*p == '"') {
		d->key = 1;
		d->cur_start = OFF(p);
		p++;
		st = ST_STR;
		goto string;
	}
	if (*p != '}' || st != ST_OBJ_FIRST)
		UNEXPECTED();
	d->depth--;
	TOKEN(OFF(p), OFF(p) + 1);
	p++;
	AFTER_VALUE();

colon:
	SKIP_WS();
	if (*p != ':')
		UNEXPECTED();
	TOKEN(OFF(p), OFF(p) + 1);
	p++;
	st = ST_OBJ_VALUE;
	goto value;

after:
	SKIP_WS();
	c = *p;
	TOKEN(OFF(p), OFF(p) + 1);
	if (c == ',') {
		p++;
		if (d->stack[d->depth - 1] == '[') {
			st = ST_ARR_VALUE;
			goto value;
		}
		st = ST_OBJ_KEY;
		goto key;
	}
	if (c == ']' || c == '}') {
		if (d->stack[d->depth - 1] != (c == ']' ? '[' : '{'))
			UNEXPECTED();
		d->depth--;
		p++;
		AFTER_VALUE();
	}
	UNEXPECTED();

done:
	SKIP_WS();
	UNEXPECTED();

string:
	for (;;) {
		unsigned char lo, hi;
		int n;

		p = skip_string(p, end);
		if (p == end)
			goto out;
		c = *p;
		if (c == '"') {
			TOKEN(d->cur_start, OFF(p) + 1);
			p++;
			if (d->key) {
				st = ST_COLON;
				goto colon;
			}
			AFTER_VALUE();
		}
		if (c == '\\') {
			/* Common escapes inline; the rest, and escapes cut by
			 * the chunk's end, one byte at a time. */
			if (end - p >= 2 && (cls[p[1]] & C_ESC)) {
				/* Runs of escapes (\n\t\t) without the
				 * block scan. */
				p += 2;
				while (end - p >= 2 && p[0] == '\\' &&
				    (cls[p[1]] & C_ESC))
					p += 2;
				continue;
			}
			if (end - p >= 6 && p[1] == 'u' &&
			    (hexval[p[2]] | hexval[p[3]] | hexval[p[4]] |
			    hexval[p[5]]) < 16 &&
			    (hexval[p[2]] != 0xd || hexval[p[3]] < 8)) {
				p += 6;
				continue;
			}
			p++;
			st = ST_STR_ESC;
			goto string_slow;
		}
		if (c < 0x20)
			FAIL("control character 0x%02x in a string (it must "
			    "be escaped)", c);
		/* c >= 0x80: a UTF-8 character. */
		if ((n = (int)saop__utf8_lead(c, &lo, &hi)) == 0) {
			bad_utf8(d, OFF(p), c, c, 0);
			goto invalid;
		}
		if (end - p > n) {
			if (p[1] < lo || p[1] > hi) {
				p++;
				bad_utf8(d, OFF(p), c, *p, 1);
				goto invalid;
			}
			if (n >= 2 && (p[2] & 0xc0) != 0x80) {
				p += 2;
				bad_utf8(d, OFF(p), c, *p, 1);
				goto invalid;
			}
			if (n == 3 && (p[3] & 0xc0) != 0x80) {
				p += 3;
				bad_utf8(d, OFF(p), c, *p, 1);
				goto invalid;
			}
			p += n + 1;
			continue;
		}
		d->u8lead = (unsigned char)c;
		d->u8need = n;
		d->u8lo = lo;
		d->u8hi = hi;
		p++;
		st = ST_STR_UTF8;
		goto string_slow;
	}

string_slow:
	/* Escapes and characters cut by a chunk's end: byte by byte. */
	while (p < end) {
		c = *p;
		switch (st) {
		case ST_STR_UTF8:
			if (c < d->u8lo || c > d->u8hi) {
				bad_utf8(d, OFF(p), d->u8lead, c, 1);
				goto invalid;
			}
			p++;
			d->u8lo = 0x80;
			d->u8hi = 0xbf;
			if (--d->u8need == 0) {
				st = ST_STR;
				goto string;
			}
			break;
		case ST_STR_ESC:
			if (c == 'u') {
				d->ucount = 0;
				d->uval = 0;
				d->ulow = 0;
				st = ST_STR_U;
				p++;
				break;
			}
			if (cls[c] & C_ESC) {
				p++;
				st = ST_STR;
				goto string;
			} else {
				char w[16];

				byte_words(w, sizeof(w), c);
				FAIL("invalid escape %s after '\\' in a string",
				    w);
			}
		case ST_STR_U:
			if (hexval[c] == 16) {
				char w[16];

				byte_words(w, sizeof(w), c);
				FAIL("unexpected %s in a \\u escape, expected "
				    "a hex digit", w);
			}
			d->uval = d->uval << 4 | hexval[c];
			d->ucount++;
			if (d->ulow) {
				if ((d->ucount == 1 && d->uval != 0xd) ||
				    (d->ucount == 2 && d->uval < 0xdc))
					FAIL("a high surrogate escape not "
					    "followed by a low one (\\udc00 to "
					    "\\udfff)");
			} else if (d->ucount == 2 && d->uval >= 0xdc &&
			    d->uval <= 0xdf) {
				FAIL("a lone low surrogate escape (\\u%02x..)",
				    d->uval);
			}
			p++;
			if (d->ucount == 4) {
				if (!d->ulow && d->uval >= 0xd800 &&
				    d->uval <= 0xdbff) {
					st = ST_STR_HIGH;
					break;
				}
				st = ST_STR;
				goto string;
			}
			break;
		case ST_STR_HIGH:
			if (c != '\\')
				FAIL("a lone high surrogate escape (\\u%04x) "
				    "not followed by a low one", d->uval);
			p++;
			st = ST_STR_HIGH_BS;
			break;
		case ST_STR_HIGH_BS:
			if (c != 'u')
				FAIL("a lone high surrogate escape (\\u%04x) "
				    "not followed by a low one", d->uval);
			p++;
			d->ucount = 0;
			d->uval = 0;
			d->ulow = 1;
			st = ST_STR_U;
			break;
		default:
			/* Every state has its case above. */
			assert(!"a scanner state without a case");
			goto out;
		}
	}
	goto out;

number:
	while (p < end) {
		c = *p;
		switch (st) {
		case ST_NUM_MINUS:
			if (c == '0')
				st = ST_NUM_ZERO;
			else if (cls[c] & C_DIGIT)
				st = ST_NUM_INT;
			else
				UNEXPECTED();
			p++;
			break;
		case ST_NUM_INT:
			while (cls[*p] & C_DIGIT)
				if (++p == end)
					goto out;
			c = *p;
			/* FALLTHROUGH */
		case ST_NUM_ZERO:
			if (c == '.') {
				st = ST_NUM_DOT;
				p++;
			} else if (c == 'e' || c == 'E') {
				st = ST_NUM_E;
				p++;
			} else if (cls[c] & C_DIGIT) {
				FAIL("a number with a leading zero");
			} else {
				TOKEN(d->cur_start, OFF(p));
				AFTER_VALUE();
			}
			break;
		case ST_NUM_DOT:
			if (!(cls[c] & C_DIGIT))
				UNEXPECTED();
			p++;
			st = ST_NUM_FRAC;
			break;
		case ST_NUM_FRAC:
			while (cls[*p] & C_DIGIT)
				if (++p == end)
					goto out;
			c = *p;
			if (c == 'e' || c == 'E') {
				st = ST_NUM_E;
				p++;
				break;
			}
			TOKEN(d->cur_start, OFF(p));
			AFTER_VALUE();
		case ST_NUM_E:
			if (c == '+' || c == '-')
				st = ST_NUM_ESIGN;
			else if (cls[c] & C_DIGIT)
				st = ST_NUM_EXP;
			else
				UNEXPECTED();
			p++;
			break;
		case ST_NUM_ESIGN:
			if (!(cls[c] & C_DIGIT))
				UNEXPECTED();
			p++;
			st = ST_NUM_EXP;
			break;
		case ST_NUM_EXP:
			while (cls[*p] & C_DIGIT)
				if (++p == end)
					goto out;
			TOKEN(d->cur_start, OFF(p));
			AFTER_VALUE();
		default:
			/* Every state has its case above. */
			assert(!"a scanner state without a case");
			goto out;
		}
	}
	goto out;

literal:
	while (p < end) {
		if (*p != (unsigned char)d->lit[d->litpos])
			UNEXPECTED();
		p++;
		if (d->lit[++d->litpos] == '\0') {
			TOKEN(d->cur_start, OFF(p));
			AFTER_VALUE();
		}
	}
	goto out;

invalid:
	st = ST_INVALID;
out:
	d->st = st;
	d->last_start = ls;
	d->last_end = le;
	d->safe = sf;
	/* The text of the last complete token, when it ended in this chunk
	 * (or at its start): from the pending tail and this chunk. */
	if (le != d->saved_end) {
		uint64_t s = ls;
		size_t n = 0;

		if (s < base) {
			memcpy(d->last, d->pend, d->pend_len);
			n = d->pend_len;
			s = base;
		}
		tail_append(d->last, &n, buf + (s - base), (size_t)(le - s));
		d->last_len = n;
		d->saved_end = le;
	}
	if (in_token(st)) {
		if (d->cur_start < base) {
			tail_append(d->pend, &d->pend_len, buf, len);
		} else {
			d->pend_len = 0;
			tail_append(d->pend, &d->pend_len,
			    buf + (d->cur_start - base),
			    (size_t)(len - (d->cur_start - base)));
		}
	}
#undef OFF
#undef FAIL
#undef UNEXPECTED
#undef TOKEN
#undef AFTER_VALUE
#undef SKIP_WS
#undef PUSH
}

/* The verdict of d as things stand. */
static int
verdict(const struct saop_detector *d)
{
	switch (d->st) {
	case ST_INVALID:
		return d->nomem ? -SAOP_ENOMEM : SAOP_INVALID;
	case ST_DONE:
		return SAOP_COMPLETE;
	case ST_NUM_ZERO:
	case ST_NUM_INT:
	case ST_NUM_FRAC:
	case ST_NUM_EXP:
		return d->depth == 0 ? SAOP_COMPLETE : SAOP_TRUNCATED;
	default:
		return SAOP_TRUNCATED;
	}
}

/*
 * See saop.h: scan len more bytes.  Returns the verdict so far (as
 * verdict()), or a negative code out of memory.
 */
int
saop_detector_feed(struct saop_detector *d, const char *buf, size_t len)
{
	if (d->st != ST_INVALID && len > 0)
		scan(d, (const unsigned char *)buf, len);
	d->base += len;
	return verdict(d);
}

/*
 * How many bytes at the end of the input of d (in a string) belong to an
 * escape or a UTF-8 character that is not complete: "\\", "\\u12", a
 * cut character.  A high surrogate escape waiting for its low half is
 * counted only with high set (6 bytes, and 7 after its '\\').
 */
static uint64_t
cut_escape(const struct saop_detector *d, int high)
{
	unsigned char lo, hi;

	switch (d->st) {
	case ST_STR_ESC:
		return 1;
	case ST_STR_U:
		return 2 + (uint64_t)d->ucount + (d->ulow && high ? 6 : 0);
	case ST_STR_HIGH:
		return high ? 6 : 0;
	case ST_STR_HIGH_BS:
		return high ? 7 : 1;
	case ST_STR_UTF8:
		/* The lead and the continuation bytes already there. */
		return 1 + (uint64_t)((int)saop__utf8_lead(d->u8lead, &lo,
		    &hi) - d->u8need);
	default:
		return 0;
	}
}

/*
 * The resume point of the truncated input of d: all of it but a cut
 * escape or UTF-8 character at its end (a high surrogate escape stays:
 * its low half can follow), and a cut byte order mark.
 */
static uint64_t
resume_point(const struct saop_detector *d)
{
	if (d->st == ST_BOM)
		return 0;
	return d->base - cut_escape(d, 0);
}

/*
 * Where the closing of the truncated input of d starts (*at) and the
 * suffix that follows (new string, or NULL when out of memory): no
 * character and no member the input does not determine is added.  The
 * close point drops a cut escape or UTF-8 character (a lone high
 * surrogate escape too), a key and everything after it when its value
 * never started, a comma, and a number's dangling '-', '.', 'e' or sign;
 * a cut literal is finished.  Returns 1 with the suffix, 0 when the input
 * determines no value at all (nothing, a BOM, a lone '-'), -1 when out of
 * memory.
 */
static int
closing(const struct saop_detector *d, uint64_t *at, char **suffix)
{
	const char *lit = "", *quote = "";
	size_t n, i, k;
	char *s;

	*at = d->safe;
	*suffix = NULL;
	switch (d->st) {
	case ST_STR:
	case ST_STR_ESC:
	case ST_STR_U:
	case ST_STR_HIGH:
	case ST_STR_HIGH_BS:
	case ST_STR_UTF8:
		if (!d->key) {
			*at = d->base - cut_escape(d, 1);
			quote = "\"";
		}
		break;
	case ST_NUM_ZERO:
	case ST_NUM_INT:
	case ST_NUM_FRAC:
	case ST_NUM_EXP:
		*at = d->base;
		break;
	case ST_NUM_DOT:
	case ST_NUM_E:
		*at = d->base - 1;
		break;
	case ST_NUM_ESIGN:
		*at = d->base - 2;
		break;
	case ST_LIT:
		*at = d->base;
		lit = d->lit + d->litpos;
		break;
	case ST_BOM:
	case ST_START:
		return 0;
	case ST_NUM_MINUS:
		if (d->depth == 0)
			return 0;
		break;
	default:
		/* Between tokens: back to the last complete value. */
		break;
	}
	k = strlen(lit) + strlen(quote);
	if ((s = malloc(k + d->depth + 1)) == NULL)
		return -1;
	memcpy(s, quote, strlen(quote));
	memcpy(s + strlen(quote), lit, strlen(lit));
	n = k;
	for (i = d->depth; i > 0; i--)
		s[n++] = d->stack[i - 1] == '{' ? '}' : ']';
	s[n] = '\0';
	*suffix = s;
	return 1;
}

/* A new NUL-terminated copy of the open containers, outermost first. */
static char *
open_stack(const struct saop_detector *d)
{
	char *s;

	if ((s = malloc(d->depth + 1)) == NULL)
		return NULL;
	memcpy(s, d->stack, d->depth);
	s[d->depth] = '\0';
	return s;
}

/*
 * See saop.h: the verdict of all the bytes fed, with where and how a
 * truncated text stops and closes, into res.  Returns 0, or -1 out of
 * memory.
 */
int
saop_detector_finish(struct saop_detector *d, struct saop_detect_result *res)
{
	const unsigned char *t = d->last;
	size_t n = d->last_len;
	int v;

	memset(res, 0, sizeof(*res));
	if ((v = verdict(d)) < 0)
		return v;
	res->verdict = (enum saop_verdict)v;
	res->bom = d->bom;
	res->length = d->base;
	if ((res->open = open_stack(d)) == NULL)
		goto nomem;
	if (v == SAOP_INVALID) {
		res->error_offset = d->err_off;
		res->error_line = d->err_line;
		res->error_column = d->err_col;
		snprintf(res->error, sizeof(res->error), "%s", d->err);
		res->expected = expected_in(d->err_state, d->depth ?
		    d->stack[d->depth - 1] : 0, d->lit);
		return 0;
	}
	if (v == SAOP_COMPLETE)
		return 0;
	res->empty = d->st == ST_START || (d->st == ST_BOM && d->bompos == 0);
	res->truncation_index = d->last_end;
	res->expected = expected_in(d->st, d->depth ?
	    d->stack[d->depth - 1] : 0, d->lit);
	if (d->last_end > 0) {
		/* A tail cut inside a character starts at the next one. */
		if (d->last_end - d->last_start > TAIL)
			while (n > 0 && (*t & 0xc0) == 0x80) {
				t++;
				n--;
			}
		if ((res->last_valid_token = malloc(n + 1)) == NULL)
			goto nomem;
		memcpy(res->last_valid_token, t, n);
		res->last_valid_token[n] = '\0';
	}
	res->resume_index = resume_point(d);
	switch (closing(d, &res->close_index, &res->closing)) {
	case -1:
		goto nomem;
	case 1:
		res->has_close = 1;
		break;
	default:
		break;
	}
	return 0;
nomem:
	saop_detect_result_free(res);
	return -SAOP_ENOMEM;
}

/* See saop.h: scan buf whole into res.  Returns 0, or -1 out of memory. */
int
saop_detect_buffer(const char *buf, size_t len, size_t max_depth,
    struct saop_detect_result *res)
{
	struct saop_detector *d;
	int rc;

	memset(res, 0, sizeof(*res));
	if ((d = saop_detector_new(max_depth)) == NULL)
		return -SAOP_ENOMEM;
	if ((rc = saop_detector_feed(d, buf, len)) >= 0)
		rc = saop_detector_finish(d, res);
	saop_detector_free(d);
	return rc < 0 ? rc : 0;
}

/* See saop.h.  Frees what res holds and clears it; returns nothing. */
void
saop_detect_result_free(struct saop_detect_result *res)
{
	if (res == NULL)
		return;
	free(res->last_valid_token);
	free(res->open);
	free(res->closing);
	memset(res, 0, sizeof(*res));
}

/* A new JSON string of s, or null for NULL. */
static json_t *
str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

/* See saop.h.  Returns res as a new detect object, or NULL (ENOMEM). */
json_t *
saop_detect_result_json(const struct saop_detect_result *res)
{
	json_t *o, *open, *bytes, *err = NULL;
	const char *cl = res->closing;
	size_t i;
	int ok = 0;

	if ((o = json_object()) == NULL)
		return NULL;
	open = json_array();
	bytes = json_array();
	if (open == NULL || bytes == NULL)
		goto fail;
	for (i = 0; res->open != NULL && res->open[i] != '\0'; i++)
		ok |= json_array_append_new(open,
		    json_string(res->open[i] == '{' ? "{" : "["));
	if (res->verdict == SAOP_INVALID) {
		err = json_pack("{s:I,s:I,s:I,s:s}",
		    "offset", (json_int_t)res->error_offset,
		    "line", (json_int_t)res->error_line,
		    "column", (json_int_t)res->error_column,
		    "message", res->error);
		if (err == NULL)
			goto fail;
	}
	ok |= json_object_set_new(o, "complete",
	    json_boolean(res->verdict == SAOP_COMPLETE));
	ok |= json_object_set_new(o, "truncated",
	    json_boolean(res->verdict == SAOP_TRUNCATED));
	ok |= json_object_set_new(o, "empty", json_boolean(res->empty));
	ok |= json_object_set_new(o, "bom", json_boolean(res->bom));
	ok |= json_object_set_new(o, "length",
	    json_integer((json_int_t)res->length));
	ok |= json_object_set_new(o, "truncation_index",
	    res->verdict == SAOP_TRUNCATED ?
	    json_integer((json_int_t)res->truncation_index) : json_null());
	ok |= json_object_set_new(o, "resume_index",
	    res->verdict == SAOP_TRUNCATED ?
	    json_integer((json_int_t)res->resume_index) : json_null());
	ok |= json_object_set_new(o, "last_valid_token",
	    str_or_null(res->last_valid_token));
	ok |= json_object_set_new(o, "open", open);
	ok |= json_object_set_new(o, "expected", str_or_null(res->expected));
	ok |= json_object_set_new(o, "close_index",
	    res->verdict == SAOP_TRUNCATED && res->has_close ?
	    json_integer((json_int_t)res->close_index) : json_null());
	ok |= json_object_set_new(o, "closing", str_or_null(cl));
	ok |= json_object_set_new(o, "closing_bytes", bytes);
	ok |= json_object_set_new(o, "error", err != NULL ? err : json_null());
	ok |= json_object_set_new(o, "json_start",
	    json_integer((json_int_t)res->json_start));
	ok |= json_object_set_new(o, "wrapper",
	    str_or_null(saop_detect_wrapper_name(res->wrapper)));
	if (ok != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
fail:
	json_decref(open);
	json_decref(bytes);
	json_decref(o);
	return NULL;
}

/* ---- Wrapped answers: where the JSON begins (saop-detect(1)) ---- */

/* Candidate starts tried after leading prose before the text is called
 * too ambiguous to read (each is a scan of the rest). */
#define MAX_STARTS	64

/* 1 when c is JSON white space, else 0. */
static int
wrap_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The first offset at or after i of buf[0..len) that is not white space. */
static size_t
skip_ws(const char *buf, size_t len, size_t i)
{
	while (i < len && wrap_ws((unsigned char)buf[i]))
		i++;
	return i;
}

/* 1 when buf[i..len) starts with the NUL-terminated s, else 0. */
static int
starts(const char *buf, size_t len, size_t i, const char *s)
{
	size_t n = strlen(s);

	return len - i >= n && memcmp(buf + i, s, n) == 0;
}

/* The length of the run of the fence character (` or ~) at buf[i], 0 when
 * fewer than three of them (no fence). */
static size_t
fence_run(const char *buf, size_t len, size_t i)
{
	size_t n = 0;

	if (i >= len || (buf[i] != '`' && buf[i] != '~'))
		return 0;
	while (i + n < len && buf[i + n] == buf[i])
		n++;
	return n >= 3 ? n : 0;
}

/* 1 when buf[i] begins a line (only spaces or tabs since the last line
 * feed, or the start at i == from), else 0. */
static int
line_start(const char *buf, size_t from, size_t i)
{
	while (i > from && (buf[i - 1] == ' ' || buf[i - 1] == '\t'))
		i--;
	return i == from || buf[i - 1] == '\n';
}

/*
 * The text after a complete value: white space, then (FENCE) a closing
 * fence, cut or whole, and anything after it, or (any wrapper) past a
 * line feed anything (a closing line of prose).  1 when t[0..n) is such a
 * trailer for wrapper w, else 0.
 */
static int
trailer_ok(const char *t, size_t n, unsigned w)
{
	size_t i = 0;
	int lf = 0;

	while (i < n && wrap_ws((unsigned char)t[i]))
		lf |= t[i++] == '\n';
	if (i == n)
		return 1;
	if ((w & SAOP_WRAP_FENCE) && t[i] == '`')
		return 1;
	if ((w & SAOP_WRAP_FENCE) && n - i >= 3 && memcmp(t + i, "~~~", 3) == 0)
		return 1;
	return w != 0 && lf;
}

/* The line and column (from 1, in bytes) of offset off of buf. */
static void
line_col(const char *buf, uint64_t off, long *line, long *col)
{
	uint64_t i, bol = 0;

	*line = 1;
	for (i = 0; i < off; i++)
		if (buf[i] == '\n') {
			(*line)++;
			bol = i + 1;
		}
	*col = (long)(off - bol) + 1;
}

/* See saop-private.h.  Returns 0 or -SAOP_ENOMEM. */
int
saop__detect_part(const char *buf, size_t len, size_t start,
    unsigned wrapper, size_t max_depth, struct saop_detect_result *res)
{
	struct saop_detect_result c;
	size_t n = len - start, end;
	int rc;

	if ((rc = saop_detect_buffer(buf + start, n, max_depth, res)) != 0)
		return rc;
	end = n;
	if (res->verdict == SAOP_INVALID && wrapper != 0 &&
	    res->error_offset < n) {
		/* A complete value, then a closing fence or prose? */
		end = (size_t)res->error_offset;
		while (end > 0 && wrap_ws((unsigned char)buf[start + end - 1]))
			end--;
		if (end > 0 && trailer_ok(buf + start + end, n - end,
		    wrapper)) {
			if ((rc = saop_detect_buffer(buf + start, end,
			    max_depth, &c)) != 0)
				return rc;
			if (c.verdict == SAOP_COMPLETE) {
				saop_detect_result_free(res);
				*res = c;
			} else {
				saop_detect_result_free(&c);
			}
		}
	}
	if (res->verdict == SAOP_COMPLETE) {
		while (end > 0 && wrap_ws((unsigned char)buf[start + end - 1]))
			end--;
		res->json_end = start + end;
	}
	res->json_start = start;
	res->wrapper = wrapper;
	res->length = len;
	if (start == 0)
		return 0;
	res->truncation_index += start;
	res->resume_index += start;
	res->close_index += start;
	if (res->verdict == SAOP_INVALID) {
		res->error_offset += start;
		line_col(buf, res->error_offset, &res->error_line,
		    &res->error_column);
	}
	return 0;
}

/* Make the message of res (the INVALID scan of the whole text) why, then
 * the bare scan's own (clipped); the error's place stays the bare scan's. */
static void
no_reading(struct saop_detect_result *res, const char *why)
{
	char first[sizeof(res->error)];
	size_t n = strlen(why), m;

	memcpy(first, res->error, sizeof(first));
	first[sizeof(first) - 1] = '\0';
	if (n > sizeof(res->error) - 1)
		n = sizeof(res->error) - 1;
	memcpy(res->error, why, n);
	m = strlen(first);
	if (n + 2 + m > sizeof(res->error) - 1)
		m = n + 2 < sizeof(res->error) - 1 ?
		    sizeof(res->error) - 1 - n - 2 : 0;
	if (m > 0) {
		memcpy(res->error + n, ": ", 2);
		memcpy(res->error + n + 2, first, m);
		n += 2 + m;
	}
	res->error[n] = '\0';
}

/* 1 when the scan r reads a value (complete or cut), else 0. */
static int
reads(const struct saop_detect_result *r)
{
	return r->verdict != SAOP_INVALID;
}

/*
 * After leading prose from p: the first start (a '{' or '[' that begins a
 * line or follows ": ", or a code fence that begins a line) whose value
 * scans, into *res; none, or a second start after that value that scans
 * too, leave bare (the whole text's scan) INVALID with why.  Returns 0 or
 * -SAOP_ENOMEM.
 */
static int
after_prose(const char *buf, size_t len, size_t p, unsigned w,
    size_t max_depth, struct saop_detect_result *bare,
    struct saop_detect_result *res)
{
	struct saop_detect_result r;
	size_t i, at, f, found = 0;
	int tried = 0, have = 0, said = 0, rc;
	char why[96];

	for (i = p; i < len; i++) {
		unsigned ww = w | SAOP_WRAP_PROSE;

		if ((buf[i] == '{' || buf[i] == '[') && (line_start(buf, p,
		    i) || (i >= 2 && buf[i - 1] == ' ' && buf[i - 2] == ':')))
			at = i;
		else if ((f = fence_run(buf, len, i)) > 0 &&
		    line_start(buf, p, i)) {
			const char *nl = memchr(buf + i + f, '\n', len - i - f);

			if (nl == NULL)
				continue;
			at = (size_t)(nl - buf) + 1;
			ww |= SAOP_WRAP_FENCE;
		} else {
			continue;
		}
		if (++tried > MAX_STARTS) {
			no_reading(bare, "too many possible starts of JSON "
			    "after the prose");
			said = 1;
			break;
		}
		if ((rc = saop__detect_part(buf, len, at, ww, max_depth,
		    &r)) != 0)
			return rc;
		if (!reads(&r) || r.empty) {
			saop_detect_result_free(&r);
			continue;
		}
		if (have) {
			snprintf(why, sizeof(why), "two possible starts of "
			    "JSON, at bytes %zu and %zu", found, at);
			saop_detect_result_free(&r);
			saop_detect_result_free(res);
			have = 0;
			no_reading(bare, why);
			said = 1;
			break;
		}
		*res = r;
		have = 1;
		found = at;
		if (r.verdict != SAOP_COMPLETE)
			break;
		/* On after the value and its closing fence. */
		i = skip_ws(buf, len, (size_t)r.json_end);
		if ((ww & SAOP_WRAP_FENCE) && (f = fence_run(buf, len, i)) > 0)
			i += f;
		i--;
	}
	if (!have && !said)
		no_reading(bare, "no '{' or '[' after the prose begins a "
		    "line or follows \": \" and reads as JSON");
	if (!have)
		*res = *bare;
	else
		saop_detect_result_free(bare);
	return 0;
}

/*
 * The JSON at start after wrapper w into *res when it reads (bare, the
 * whole text's scan, freed): 1; when it does not, 0 with *res empty and
 * bare kept; -SAOP_ENOMEM with both freed.
 */
static int
read_at(const char *buf, size_t len, size_t start, unsigned w,
    size_t max_depth, struct saop_detect_result *bare,
    struct saop_detect_result *res)
{
	int rc;

	if ((rc = saop__detect_part(buf, len, start, w, max_depth,
	    res)) != 0) {
		saop_detect_result_free(bare);
		return rc;
	}
	if (reads(res)) {
		saop_detect_result_free(bare);
		return 1;
	}
	saop_detect_result_free(res);
	return 0;
}

/* See saop.h: the verdict on a text answer, wrapped or bare.  Returns 0 or
 * -SAOP_ENOMEM. */
int
saop_detect_text(const char *buf, size_t len, size_t max_depth,
    struct saop_detect_result *res)
{
	struct saop_detect_result bare;
	size_t p, f;
	unsigned w = 0;
	int rc;

	if ((rc = saop_detect_buffer(buf, len, max_depth, &bare)) != 0)
		return rc;
	if (bare.verdict != SAOP_INVALID) {
		*res = bare;
		return 0;
	}
	p = starts(buf, len, 0, "\xef\xbb\xbf") ? 3 : 0;
	p = skip_ws(buf, len, p);
	if (starts(buf, len, p, "<think>") ||
	    starts(buf, len, p, "<reasoning>")) {
		const char *end = buf[p + 1] == 't' ? "</think>" :
		    "</reasoning>";
		size_t close;

		for (close = p; close < len && !starts(buf, len, close, end);
		    close++)
			;
		if (close == len) {
			no_reading(&bare, "cut inside the leading reasoning "
			    "block: no JSON yet");
			*res = bare;
			return 0;
		}
		w |= SAOP_WRAP_THINK;
		p = skip_ws(buf, len, close + strlen(end));
	}
	if ((f = fence_run(buf, len, p)) > 0) {
		const char *nl = memchr(buf + p + f, '\n', len - p - f);

		if (nl == NULL) {
			no_reading(&bare, "cut in the opening line of the code "
			    "fence: no JSON yet");
			*res = bare;
			return 0;
		}
		if ((rc = read_at(buf, len, (size_t)(nl - buf) + 1,
		    w | SAOP_WRAP_FENCE, max_depth, &bare, res)) != 0)
			return rc < 0 ? rc : 0;
		no_reading(&bare, "the text in the code fence is not JSON");
		*res = bare;
		return 0;
	}
	if (w == 0 && p < len && strchr("{[\"-0123456789", buf[p]) != NULL) {
		*res = bare;	/* Bare JSON gone wrong, no wrapper. */
		return 0;
	}
	if (p < len && (buf[p] == '{' || buf[p] == '[') && w != 0 &&
	    (rc = read_at(buf, len, p, w, max_depth, &bare, res)) != 0)
		return rc < 0 ? rc : 0;
	return after_prose(buf, len, p, w, max_depth, &bare, res);
}

/* See saop.h: a top-level number at the very end of a cut answer is cut.
 * Returns 1 when res changed, 0, or -SAOP_ENOMEM. */
int
saop_detect_mark_cut(struct saop_detect_result *res, const char *buf,
    size_t len)
{
	size_t start = (size_t)res->json_start, end;
	char *none;

	if (res->verdict != SAOP_COMPLETE || len == 0)
		return 0;
	end = res->json_end != 0 ? (size_t)res->json_end : len;
	if (end != len || buf[len - 1] < '0' || buf[len - 1] > '9')
		return 0;
	if (start == 0 && starts(buf, len, 0, "\xef\xbb\xbf"))
		start = 3;
	start = skip_ws(buf, len, start);
	if (start >= len || (buf[start] != '-' &&
	    (buf[start] < '0' || buf[start] > '9')))
		return 0;
	if ((none = strdup("")) == NULL)
		return -SAOP_ENOMEM;
	res->verdict = SAOP_TRUNCATED;
	res->truncation_index = start;
	res->resume_index = res->close_index = len;
	res->closing = none;
	res->has_close = 1;
	res->json_end = 0;
	res->expected = "more digits, '.', 'e', or the end";
	return 1;
}

/* See saop.h.  Returns the words of wrapper bits w, or NULL for 0. */
const char *
saop_detect_wrapper_name(unsigned w)
{
	static const char *const names[8] = {
		NULL, "fence", "prose", "prose+fence",
		"think", "think+fence", "think+prose", "think+prose+fence"
	};

	return names[w & 7u];
}
