/*
 * fastjson.c: a fast path for turning one JSON text in memory into a
 * jansson tree.  It reads the buffer directly (no stream, no per-byte
 * buffer growth), so it is several times faster than json_loadb() on
 * model answers; anything it does not accept (bad JSON, and whatever
 * jansson must judge: nesting past 2048, numbers past its types, \u0000 in
 * a key) makes it give up, and the caller asks json_loadb() for the
 * verdict and the error.  It only accepts RFC 8259 JSON with strict UTF-8,
 * and builds the tree json_loadb(JSON_DECODE_ANY | JSON_ALLOW_NUL) would.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"

/* jansson's own depth limit (JSON_PARSER_MAX_DEPTH). */
#define FAST_MAX_DEPTH	2048

struct fp {
	const unsigned char *s;
	const unsigned char *end;
	struct saop__buf tmp;	/* unescaped string bytes (len unused) */
	int nomem;		/* gave up for want of memory */
};

/* Move p->s past JSON whitespace. */
static void
skip_ws(struct fp *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\n' ||
	    *p->s == '\r' || *p->s == '\t'))
		p->s++;
}

/*
 * Skip the plain bytes at s: printable ASCII other than '"' and '\\',
 * eight at a time.  Returns the first byte that needs a look.
 */
static const unsigned char *
plain_run(const unsigned char *s, const unsigned char *end)
{
	const uint64_t ones = 0x0101010101010101ull;
	const uint64_t highs = 0x8080808080808080ull;

	while (end - s >= 8) {
		uint64_t w, q, b, c;

		memcpy(&w, s, 8);
		q = w ^ (ones * '"');
		b = w ^ (ones * '\\');
		/* A byte below 0x20, a quote, a backslash or a high bit. */
		c = ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) |
		    ((b - ones) & ~b) | w;
		if ((c & highs) != 0)
			break;
		s += 8;
	}
	while (s < end && *s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
		s++;
	return s;
}

/* Make p->tmp hold at least n bytes.  Returns 0, or -1 when out of memory
 * (p->nomem set). */
static int
tmp_reserve(struct fp *p, size_t n)
{
	if (n <= p->tmp.cap || saop__buf_reserve(&p->tmp, n) == 0)
		return 0;
	p->nomem = 1;
	return -1;
}

/* v, or NULL with p->nomem set when v is NULL (a failed allocation). */
static json_t *
made(struct fp *p, json_t *v)
{
	if (v == NULL)
		p->nomem = 1;
	return v;
}

/* The four hex digits at s into *v.  Returns 0, or -1 at a non-hex digit. */
static int
hex4(const unsigned char *s, unsigned *v)
{
	int k;

	*v = 0;
	for (k = 0; k < 4; k++) {
		unsigned c = s[k], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

/*
 * The string whose opening quote is at p->s: its bytes in *out (p->tmp,
 * or straight in the input when it has no escapes), *len.  Returns 0 or
 * -1.
 */
static int
string(struct fp *p, const char **out, size_t *len)
{
	const unsigned char *s = ++p->s, *run;
	size_t n = 0;

	/* The common case: no escape, so the bytes are the string. */
	s = plain_run(s, p->end);
	while (s < p->end) {
		if (*s == '"') {
			*out = (const char *)p->s;
			*len = (size_t)(s - p->s);
			p->s = s + 1;
			return 0;
		}
		if (*s == '\\' || *s < 0x20)
			break;
		if (*s < 0x80) {
			s = plain_run(s + 1, p->end);
		} else {
			size_t k = saop__utf8_seq(s, (size_t)(p->end - s));

			if (k == 0)
				return -1;
			s = plain_run(s + k, p->end);
		}
	}
	if (s >= p->end || *s < 0x20)
		return -1;
	/* Escapes: copy into p->tmp (an escape never grows the text). */
	run = p->s;
	for (;;) {
		unsigned u, lo;

		if (s >= p->end)
			return -1;
		if (*s == '"')
			break;
		if (*s < 0x20)
			return -1;
		if (*s != '\\') {
			size_t k = saop__utf8_seq(s, (size_t)(p->end - s));

			if (k == 0)
				return -1;
			s = plain_run(s + k, p->end);
			continue;
		}
		if (tmp_reserve(p, n + (size_t)(s - run) + 8) != 0)
			return -1;
		memcpy(p->tmp.data + n, run, (size_t)(s - run));
		n += (size_t)(s - run);
		if (s + 1 >= p->end)
			return -1;
		switch (s[1]) {
		case '"': p->tmp.data[n++] = '"'; break;
		case '\\': p->tmp.data[n++] = '\\'; break;
		case '/': p->tmp.data[n++] = '/'; break;
		case 'b': p->tmp.data[n++] = '\b'; break;
		case 'f': p->tmp.data[n++] = '\f'; break;
		case 'n': p->tmp.data[n++] = '\n'; break;
		case 'r': p->tmp.data[n++] = '\r'; break;
		case 't': p->tmp.data[n++] = '\t'; break;
		case 'u':
			if (p->end - s < 6 || hex4(s + 2, &u) != 0)
				return -1;
			if (u >= 0xdc00 && u <= 0xdfff)
				return -1;	/* a lone low surrogate */
			if (u >= 0xd800 && u <= 0xdbff) {
				if (p->end - s < 12 || s[6] != '\\' ||
				    s[7] != 'u' || hex4(s + 8, &lo) != 0 ||
				    lo < 0xdc00 || lo > 0xdfff)
					return -1;
				u = 0x10000 + ((u - 0xd800) << 10) +
				    (lo - 0xdc00);
				s += 6;
			}
			if (u < 0x80) {
				p->tmp.data[n++] = (char)u;
			} else if (u < 0x800) {
				p->tmp.data[n++] = (char)(0xc0 | u >> 6);
				p->tmp.data[n++] = (char)(0x80 | (u & 0x3f));
			} else if (u < 0x10000) {
				p->tmp.data[n++] = (char)(0xe0 | u >> 12);
				p->tmp.data[n++] = (char)(0x80 | (u >> 6 & 0x3f));
				p->tmp.data[n++] = (char)(0x80 | (u & 0x3f));
			} else {
				p->tmp.data[n++] = (char)(0xf0 | u >> 18);
				p->tmp.data[n++] = (char)(0x80 | (u >> 12 & 0x3f));
				p->tmp.data[n++] = (char)(0x80 | (u >> 6 & 0x3f));
				p->tmp.data[n++] = (char)(0x80 | (u & 0x3f));
			}
			s += 4;
			break;
		default:
			return -1;
		}
		s += 2;
		run = s;
	}
	if (tmp_reserve(p, n + (size_t)(s - run) + 1) != 0)
		return -1;
	memcpy(p->tmp.data + n, run, (size_t)(s - run));
	n += (size_t)(s - run);
	p->tmp.data[n] = '\0';
	*out = p->tmp.data;
	*len = n;
	p->s = s + 1;
	return 0;
}

/* A number: a new integer or real, or NULL (bad, or beyond jansson). */
static json_t *
number(struct fp *p)
{
	const unsigned char *s = p->s, *start = p->s;
	int real = 0, neg = 0;
	unsigned long long v = 0;
	char buf[64], *endp;
	double d;

	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (s >= p->end || *s < '0' || *s > '9')
		return NULL;
	if (*s == '0') {
		s++;
	} else {
		while (s < p->end && *s >= '0' && *s <= '9') {
			if (v > (ULLONG_MAX - 9) / 10)
				return NULL;
			v = v * 10 + (unsigned)(*s++ - '0');
		}
	}
	if (s < p->end && *s == '.') {
		real = 1;
		if (++s >= p->end || *s < '0' || *s > '9')
			return NULL;
		while (s < p->end && *s >= '0' && *s <= '9')
			s++;
	}
	if (s < p->end && (*s == 'e' || *s == 'E')) {
		real = 1;
		s++;
		if (s < p->end && (*s == '+' || *s == '-'))
			s++;
		if (s >= p->end || *s < '0' || *s > '9')
			return NULL;
		while (s < p->end && *s >= '0' && *s <= '9')
			s++;
	}
	p->s = s;
	if (!real) {
		if (neg ? v > (unsigned long long)LLONG_MAX + 1 :
		    v > (unsigned long long)LLONG_MAX)
			return NULL;	/* jansson says: too big */
		return made(p, json_integer(neg ? (json_int_t)(0 - v) :
		    (json_int_t)v));
	}
	if ((size_t)(s - start) >= sizeof(buf))
		return NULL;		/* rare: let jansson read it */
	memcpy(buf, start, (size_t)(s - start));
	buf[s - start] = '\0';
	errno = 0;
	d = strtod(buf, &endp);
	if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL))
		return NULL;		/* jansson: real number overflow */
	return made(p, json_real(d));
}

/* The literal word at p->s: true, false or null, or NULL when none. */
static json_t *
word(struct fp *p)
{
	size_t left = (size_t)(p->end - p->s);

	if (left >= 4 && memcmp(p->s, "true", 4) == 0) {
		p->s += 4;
		return json_true();
	}
	if (left >= 5 && memcmp(p->s, "false", 5) == 0) {
		p->s += 5;
		return json_false();
	}
	if (left >= 4 && memcmp(p->s, "null", 4) == 0) {
		p->s += 4;
		return json_null();
	}
	return NULL;
}

/* A scalar at p->s, or NULL. */
static json_t *
scalar(struct fp *p)
{
	const char *str;
	size_t len;

	switch (*p->s) {
	case '"':
		if (string(p, &str, &len) != 0)
			return NULL;
		return made(p, json_stringn_nocheck(str, len));
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return number(p);
	default:
		return word(p);
	}
}

/*
 * The value at p->s (no space before it), nested at most maxdepth deep:
 * a new reference, p->s just after it; NULL when it is bad or jansson
 * must judge it.
 */
static json_t *
value(struct fp *pp, size_t maxdepth)
{
	struct fp p = *pp;
	json_t *stack[FAST_MAX_DEPTH + 1], *v = NULL, *child;
	const char *key[FAST_MAX_DEPTH + 1];
	size_t key_len[FAST_MAX_DEPTH + 1];
	char *owned[FAST_MAX_DEPTH + 1];	/* a key copied out of tmp */
	size_t depth = 0, k;
	int rc;

	for (;;) {
		/* Here a value is expected. */
		if (p.s >= p.end)
			goto fail;
		if (*p.s == '{' || *p.s == '[') {
			int obj = *p.s == '{';

			if (depth >= maxdepth)
				goto fail;
			if ((v = made(&p, obj ? json_object() :
			    json_array())) == NULL)
				goto fail;
			p.s++;
			skip_ws(&p);
			if (p.s < p.end && *p.s == (obj ? '}' : ']')) {
				p.s++;		/* empty: a plain value */
			} else {
				owned[depth] = NULL;
				stack[depth++] = v;
				v = NULL;
				if (obj)
					goto key;
				continue;
			}
		} else if ((v = scalar(&p)) == NULL) {
			goto fail;
		}
		/* Put v in its container, then close what ends here. */
		for (;;) {
			json_t *top;

			if (depth == 0) {
				*pp = p;
				return v;
			}
			top = stack[depth - 1];
			child = v;
			v = NULL;
			if (json_is_object(top)) {
				rc = json_object_setn_new_nocheck(top,
				    key[depth - 1], key_len[depth - 1], child);
				free(owned[depth - 1]);
				owned[depth - 1] = NULL;
			} else {
				rc = json_array_append_new(top, child);
			}
			if (rc != 0) {
				p.nomem = 1;
				goto fail;
			}
			skip_ws(&p);
			if (p.s >= p.end)
				goto fail;
			if (*p.s == ',') {
				p.s++;
				skip_ws(&p);
				if (json_is_object(top))
					goto key;
				break;
			}
			if (*p.s != (json_is_object(top) ? '}' : ']'))
				goto fail;
			p.s++;
			v = top;
			depth--;
		}
		continue;
key:
		{
			const char *str;
			size_t n;

			if (p.s >= p.end || *p.s != '"' ||
			    string(&p, &str, &n) != 0 ||
			    memchr(str, '\0', n) != NULL)
				goto fail;
			if (str == p.tmp.data) {
				/* tmp is reused by the value: keep a copy. */
				if ((owned[depth - 1] = malloc(n + 1)) == NULL) {
					p.nomem = 1;
					goto fail;
				}
				memcpy(owned[depth - 1], str, n + 1);
				str = owned[depth - 1];
			}
			key[depth - 1] = str;
			key_len[depth - 1] = n;
			skip_ws(&p);
			if (p.s >= p.end || *p.s != ':')
				goto fail;
			p.s++;
			skip_ws(&p);
		}
	}
fail:
	json_decref(v);
	/* Open containers are not in their parents yet: free each. */
	for (k = 0; k < depth; k++) {
		free(owned[k]);
		json_decref(stack[k]);
	}
	pp->tmp = p.tmp;
	pp->nomem = p.nomem;
	return NULL;
}

/*
 * Parse buf (len bytes) as one JSON text the fast way.  Returns a new
 * reference, or NULL when the fast path gives up (*nomem set when for want
 * of memory).
 */
static json_t *
fast(const char *buf, size_t len, int *nomem)
{
	struct fp p;
	json_t *root;

	p.s = (const unsigned char *)buf;
	p.end = p.s + len;
	p.nomem = 0;
	saop__buf_init(&p.tmp);
	skip_ws(&p);
	if ((root = value(&p, FAST_MAX_DEPTH)) != NULL) {
		skip_ws(&p);
		if (p.s != p.end) {
			json_decref(root);
			root = NULL;
		}
	}
	saop__buf_free(&p.tmp);
	*nomem = p.nomem;
	return root;
}

/*
 * Parse buf (len bytes) as one JSON text (see saop-private.h).  Returns a
 * new reference, or NULL when the fast path gives up.
 */
json_t *
saop__json_fast(const char *buf, size_t len)
{
	int nomem;

	return fast(buf, len, &nomem);
}

/*
 * Parse buf (len bytes) as one JSON text (see saop-private.h): the fast
 * path, then json_loadb() with flags for what it gives up on, but never
 * after a failed allocation: jansson's reader does not survive one on a
 * long text (it aborts or reads past its buffer), so a text the fast path
 * had no memory for is out of memory.  Returns 1 with *v a new reference
 * read by the fast path (the whole of buf); 0 with *v from json_loadb(), or
 * NULL, *je saying why; or -SAOP_ENOMEM.
 */
int
saop__json_parse(const char *buf, size_t len, size_t flags, json_t **v,
    json_error_t *je)
{
	int nomem;

	if ((*v = fast(buf, len, &nomem)) != NULL)
		return 1;
	if (nomem)
		return -SAOP_ENOMEM;
	if ((*v = json_loadb(buf, len, flags, je)) == NULL &&
	    json_error_code(je) == json_error_out_of_memory)
		return -SAOP_ENOMEM;
	return 0;
}

/*
 * Hand each item of the JSON array in buf to each (see saop-private.h).
 * Returns 0 (the item count in *count), what each returned when not 0,
 * or -1 when buf is not an array read whole.
 */
int
saop__json_fast_items(const char *buf, size_t len,
    int (*each)(void *arg, json_t *item, size_t i), void *arg,
    size_t *count)
{
	struct fp p;
	json_t *item;
	size_t n = 0;
	int rc = -1;

	*count = 0;
	p.s = (const unsigned char *)buf;
	p.end = p.s + len;
	p.nomem = 0;
	saop__buf_init(&p.tmp);
	skip_ws(&p);
	if (p.s >= p.end || *p.s != '[')
		return -1;
	p.s++;
	skip_ws(&p);
	if (p.s < p.end && *p.s == ']') {
		p.s++;
		goto end;
	}
	for (;;) {
		/* The array is one level: its items nest one less. */
		if ((item = value(&p, FAST_MAX_DEPTH - 1)) == NULL)
			goto out;
		rc = each(arg, item, n++);
		json_decref(item);
		if (rc != 0)
			goto out;
		rc = -1;
		skip_ws(&p);
		if (p.s >= p.end)
			goto out;
		if (*p.s == ']') {
			p.s++;
			break;
		}
		if (*p.s != ',')
			goto out;
		p.s++;
		skip_ws(&p);
	}
end:
	skip_ws(&p);
	rc = p.s == p.end ? 0 : -1;
	*count = n;
out:
	saop__buf_free(&p.tmp);
	return rc;
}
