/*
 * utf8.c: strict UTF-8 (RFC 3629), the one place lib/ reads it: no
 * overlong forms, no encoded surrogates, nothing above U+10FFFF.  The
 * rule for a lead byte is saop__utf8_lead() in saop-private.h (inline, as
 * the scanner asks it for every character); here are the whole-sequence
 * readers built on it.
 */
#include "config.h"

#include "saop-private.h"

/*
 * The length of the UTF-8 sequence at s (at most n bytes there): 1 to 4,
 * or 0 when it is not strict UTF-8 or is cut short.
 */
size_t
saop__utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char lo, hi;
	size_t more, i;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if ((more = saop__utf8_lead(s[0], &lo, &hi)) == 0 || n <= more ||
	    s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i <= more; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return more + 1;
}

/*
 * Decode the UTF-8 sequence at s (at most n bytes) into *cp.  Returns its
 * length, 1 to 4, or 0 (and *cp U+FFFD) when it is not strict UTF-8 or is
 * cut short.
 */
size_t
saop__utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len = saop__utf8_seq(s, n), i;
	uint32_t c;

	*cp = 0xfffd;
	if (len == 0)
		return 0;
	c = len == 1 ? s[0] : s[0] & (0x7fu >> len);
	for (i = 1; i < len; i++)
		c = c << 6 | (s[i] & 0x3fu);
	*cp = c;
	return len;
}

/*
 * The length of the start of a character cut off by the end of the n
 * bytes at s: 1 to 3 when they end with a lead byte and fewer continuation
 * bytes than it needs (each in its allowed range), else 0.  s[0..n - the
 * result) then ends on a whole character, or on a byte that is not UTF-8.
 */
size_t
saop__utf8_tail(const unsigned char *s, size_t n)
{
	unsigned char lo, hi;
	size_t k, more;

	/* A lead byte is among the last three, or none is cut. */
	for (k = 1; k <= 3 && k <= n; k++) {
		unsigned c = s[n - k];

		if (c >= 0x80 && c <= 0xbf)
			continue;
		if (c < 0x80 || (more = saop__utf8_lead(c, &lo, &hi)) == 0 ||
		    more < k)
			return 0;
		/* The bytes after the lead, as far as they go, must fit. */
		if (k >= 2 && (s[n - k + 1] < lo || s[n - k + 1] > hi))
			return 0;
		return k;
	}
	return 0;
}

/*
 * Bytes taken by the first chars characters of the UTF-8 text at s (len
 * bytes; a continuation byte counts with the character before it).
 * Returns len when the text has fewer.
 */
size_t
saop__utf8_prefix(const char *s, size_t len, size_t chars)
{
	size_t i = 0;

	while (i < len && chars > 0) {
		i++;
		while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		chars--;
	}
	return i;
}

/*
 * The number of characters in the UTF-8 text at s (len bytes): the bytes
 * that are not continuation bytes.
 */
size_t
saop__utf8_count(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/*
 * See saop.h.  Returns the length of the longest prefix of the n bytes at s
 * that is strict UTF-8: n when all of it is.
 */
size_t
saop_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t at = 0, k;

	while (at < n) {
		if (p[at] < 0x80) {
			at++;
			continue;
		}
		if ((k = saop__utf8_seq(p + at, n - at)) == 0)
			break;
		at += k;
	}
	return at;
}
