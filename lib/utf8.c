/*
 * utf8.c: strict UTF-8 (RFC 3629): no overlong forms, no encoded
 * surrogates, nothing above U+10FFFF.
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
	unsigned c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
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
