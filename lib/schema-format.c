/*
 * schema-format.c: ECMA-262 regular expressions through PCRE2, and the
 * formats asserted with format_assert (date-time, date, time, email, uri,
 * uuid, ipv4, ipv6, regex).
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "schema-int.h"

/*
 * ECMA-262 semantics through PCRE2.  PCRE2 is used in UTF mode without
 * PCRE2_UCP: then \d, \w and \b are ASCII-only, as in ECMA-262 (even with
 * its u flag), while \p{...} still sees Unicode properties.  ECMA-262's \s
 * is Unicode white space, so \s and \S are rewritten to the explicit set.
 * $ only matches at the very end (PCRE2_DOLLAR_ENDONLY); \uHHHH and
 * \u{H...} escapes are read as ECMA-262 reads them (PCRE2_ALT_BSUX).
 * "[^]" (anything) and "[]" (nothing) have no PCRE2 spelling of their own.
 */
#define ECMA_WS "\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a" \
	"\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"

/* ECMA-262's long General_Category names, which PCRE2 10.42 lacks. */
static const char *const gc_names[][2] = {
	{ "Cased_Letter", "LC" }, { "Close_Punctuation", "Pe" },
	{ "Connector_Punctuation", "Pc" }, { "Control", "Cc" },
	{ "Currency_Symbol", "Sc" }, { "Dash_Punctuation", "Pd" },
	{ "Decimal_Number", "Nd" }, { "Enclosing_Mark", "Me" },
	{ "Final_Punctuation", "Pf" }, { "Format", "Cf" },
	{ "Initial_Punctuation", "Pi" }, { "Letter", "L" },
	{ "Letter_Number", "Nl" }, { "Line_Separator", "Zl" },
	{ "Lowercase_Letter", "Ll" }, { "Mark", "M" },
	{ "Math_Symbol", "Sm" }, { "Modifier_Letter", "Lm" },
	{ "Modifier_Symbol", "Sk" }, { "Nonspacing_Mark", "Mn" },
	{ "Number", "N" }, { "Open_Punctuation", "Ps" },
	{ "Other", "C" }, { "Other_Letter", "Lo" },
	{ "Other_Number", "No" }, { "Other_Punctuation", "Po" },
	{ "Other_Symbol", "So" }, { "Paragraph_Separator", "Zp" },
	{ "Private_Use", "Co" }, { "Punctuation", "P" },
	{ "Separator", "Z" }, { "Space_Separator", "Zs" },
	{ "Spacing_Mark", "Mc" }, { "Surrogate", "Cs" },
	{ "Symbol", "S" }, { "Titlecase_Letter", "Lt" },
	{ "Unassigned", "Cn" }, { "Uppercase_Letter", "Lu" },
	{ "digit", "Nd" }, { "punct", "P" }, { "Combining_Mark", "M" }
};

/*
 * Write \p{name} (or \P) of ECMA-262 as PCRE2 spells it into out; name is
 * the len bytes after the brace.  Returns the bytes written.
 */
static size_t
property(char *out, char p, const char *name, size_t len)
{
	static const char *const prefixes[] = { "General_Category=", "gc=",
	    "Script=", "sc=" };
	size_t i;

	for (i = 0; i < 4; i++) {
		size_t l = strlen(prefixes[i]);

		if (len > l && strncmp(name, prefixes[i], l) == 0) {
			name += l;
			len -= l;
			break;
		}
	}
	for (i = 0; i < sizeof(gc_names) / sizeof(gc_names[0]); i++)
		if (strlen(gc_names[i][0]) == len &&
		    strncmp(name, gc_names[i][0], len) == 0)
			return (size_t)sprintf(out, "\\%c{%s}", p,
			    gc_names[i][1]);
	return (size_t)sprintf(out, "\\%c{%.*s}", p, (int)len, name);
}

/*
 * Translate the ECMA-262 pattern src to PCRE2 and compile it into re.
 * Returns 0, or -1 (not a pattern) or SCH_RE_NOMEM with a message in msg
 * (msglen bytes).
 */
int
saop__sch_regex(struct sch_re *re, const char *src, char *msg, size_t msglen)
{
	size_t n = strlen(src), o = 0, i;
	pcre2_compile_context *cctx = NULL;
	PCRE2_SIZE erroff;
	int errcode, inclass = 0;
	char *buf;

	re->src = src;
	re->code = NULL;
	if ((buf = malloc(n * (sizeof(ECMA_WS) + 4) + 16)) == NULL) {
		snprintf(msg, msglen, "out of memory");
		return SCH_RE_NOMEM;
	}
	for (i = 0; i < n; i++) {
		char ch = src[i];

		if (ch == '\\' && i + 1 < n) {
			/* Not NUL: i < n, the length of src. */
			char nx = src[++i];

			if ((nx == 'p' || nx == 'P') && i + 1 < n &&
			    src[i + 1] == '{' && strchr(src + i, '}') != NULL) {
				const char *name = src + i + 2;
				size_t len = (size_t)(strchr(name, '}') - name);

				o += property(buf + o, nx, name, len);
				i += len + 2;
			} else if (strchr("aAeEGhHKlLNoQRuUXzZ", nx) != NULL &&
			    (nx != 'u' || i + 1 == n ||
			    !(isxdigit((unsigned char)src[i + 1]) ||
			    src[i + 1] == '{'))) {
				snprintf(msg, msglen, "invalid regular "
				    "expression '%s': \\%c is not an ECMA-262 "
				    "escape", src, nx);
				free(buf);
				return -1;
			} else if (nx == 's' || nx == 'S') {
				if (inclass && nx == 's')
					o += (size_t)sprintf(buf + o, "%s",
					    ECMA_WS);
				else if (inclass)
					o += (size_t)sprintf(buf + o, "\\S");
				else
					o += (size_t)sprintf(buf + o, "[%s%s]",
					    nx == 'S' ? "^" : "", ECMA_WS);
			} else {
				buf[o++] = '\\';
				buf[o++] = nx;
			}
			continue;
		}
		if (!inclass && ch == '[') {
			if (strncmp(src + i, "[^]", 3) == 0) {
				o += (size_t)sprintf(buf + o, "[\\s\\S]");
				i += 2;
				continue;
			}
			if (strncmp(src + i, "[]", 2) == 0) {
				o += (size_t)sprintf(buf + o, "(?!)");
				i += 1;
				continue;
			}
			inclass = 1;
			buf[o++] = ch;
			/* Copy the ^ of a negated class with its [. */
			if (i + 1 < n && src[i + 1] == '^')
				buf[o++] = src[++i];
			continue;
		}
		if (inclass && ch == ']')
			inclass = 0;
		if (!inclass && ch == '(' && i + 2 < n && src[i + 1] == '?' &&
		    strchr(":=!<", src[i + 2]) == NULL) {
			snprintf(msg, msglen, "invalid regular expression "
			    "'%s': '(?%c' is not ECMA-262 syntax", src,
			    src[i + 2]);
			free(buf);
			return -1;
		}
		buf[o++] = ch;
	}
	buf[o] = '\0';
#ifdef PCRE2_EXTRA_ALT_BSUX
	/* Without its context the pattern would compile, meaning another
	 * thing (\u...): out of memory. */
	if ((cctx = pcre2_compile_context_create(NULL)) == NULL) {
		free(buf);
		snprintf(msg, msglen, "out of memory");
		return SCH_RE_NOMEM;
	}
	pcre2_set_compile_extra_options(cctx, PCRE2_EXTRA_ALT_BSUX);
#endif
	re->code = pcre2_compile((PCRE2_SPTR)buf, o, PCRE2_UTF |
	    PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX, &errcode, &erroff, cctx);
	pcre2_compile_context_free(cctx);
	free(buf);
	if (re->code == NULL && errcode == PCRE2_ERROR_HEAP_FAILED) {
		snprintf(msg, msglen, "out of memory");
		return SCH_RE_NOMEM;
	}
	if (re->code == NULL) {
		PCRE2_UCHAR text[160];

		pcre2_get_error_message(errcode, text, sizeof(text));
		snprintf(msg, msglen, "invalid regular expression '%s': %s",
		    src, (char *)text);
		return -1;
	}
	(void)pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
	return 0;
}

/*
 * Search str (len bytes) for re, *md holding the match data from call to
 * call.  Returns 1 on a match, 0 on none, -1 when out of memory.
 */
int
saop__sch_match(const struct sch_re *re, const char *str, size_t len,
    pcre2_match_data **md)
{
	int rc;

	if (*md == NULL && (*md = pcre2_match_data_create(1, NULL)) == NULL)
		return -1;
	rc = pcre2_match(re->code, (PCRE2_SPTR)str, len, 0, 0, *md, NULL);
	if (rc >= 0)
		return 1;
	return 0;
}

/* ---- Formats. ---- */

static const char *const format_names[] = { "", "date-time", "date",
    "time", "email", "uri", "uuid", "ipv4", "ipv6", "regex" };

/*
 * The format called name.  Returns it, or SCH_FMT_NONE when it is not one
 * we assert.
 */
enum sch_format
saop__sch_format(const char *name)
{
	size_t i;

	for (i = 1; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (strcmp(name, format_names[i]) == 0)
			return (enum sch_format)i;
	return SCH_FMT_NONE;
}

/* The name of fmt (borrowed, static). */
const char *
saop__sch_format_name(enum sch_format fmt)
{
	return format_names[fmt];
}

/* The n decimal digits at s into *v.  Returns 0, or -1 at a non-digit. */
static int
digits(const char *s, size_t n, int *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/*
 * 1 when s (len bytes) is an RFC 3339 full-date (YYYY-MM-DD, a real day),
 * else 0.
 */
static int
is_date(const char *s, size_t len)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	int y, m, d;

	if (len != 10 || s[4] != '-' || s[7] != '-' || digits(s, 4, &y) ||
	    digits(s + 5, 2, &m) || digits(s + 8, 2, &d))
		return 0;
	if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return 0;
	if (m == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 ||
	    y % 400 == 0)))
		return 0;
	return 1;
}

/*
 * 1 when s (len bytes) is an RFC 3339 full-time,
 * HH:MM:SS[.frac](Z|+HH:MM|-HH:MM), a leap second only at 23:59:60 UTC;
 * else 0.
 */
static int
is_time(const char *s, size_t len)
{
	int h, m, sec, oh = 0, om = 0, sign = 0;
	size_t i = 8;

	if (len < 9 || s[2] != ':' || s[5] != ':' || digits(s, 2, &h) ||
	    digits(s + 3, 2, &m) || digits(s + 6, 2, &sec))
		return 0;
	if (i < len && s[i] == '.') {
		size_t f = ++i;

		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == f)
			return 0;
	}
	if (i < len && (s[i] == 'Z' || s[i] == 'z'))
		i++;
	else if (i < len && (s[i] == '+' || s[i] == '-')) {
		sign = s[i] == '+' ? 1 : -1;
		if (len - i != 6 || s[i + 3] != ':' ||
		    digits(s + i + 1, 2, &oh) || digits(s + i + 4, 2, &om) ||
		    oh > 23 || om > 59)
			return 0;
		i += 6;
	} else
		return 0;
	if (i != len || h > 23 || m > 59 || sec > 60)
		return 0;
	if (sec == 60) {
		/* A leap second is 23:59:60 in UTC. */
		int utc = ((h * 60 + m - sign * (oh * 60 + om)) % 1440 +
		    1440) % 1440;

		if (utc != 23 * 60 + 59)
			return 0;
	}
	return 1;
}

/* 1 when s (len bytes) is a hostname (RFC 1123 labels), else 0. */
static int
is_hostname(const char *s, size_t len)
{
	size_t i, label = 0;

	if (len == 0 || len > 253)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '.') {
			if (label == 0 || s[i - 1] == '-')
				return 0;
			label = 0;
		} else if (isalnum(ch) || (ch == '-' && label > 0)) {
			if (++label > 63)
				return 0;
		} else
			return 0;
	}
	return label > 0 && s[len - 1] != '-';
}

/*
 * 1 when s (len bytes) is an IPv4 address (no leading zeros) or, family
 * AF_INET6, an IPv6 one, else 0.
 */
static int
is_ip(const char *s, size_t len, int family)
{
	unsigned char addr[16];
	char buf[64];
	size_t i;

	if (len == 0 || len >= sizeof(buf))
		return 0;
	for (i = 0; i < len; i++)
		if (s[i] == '\0' || (unsigned char)s[i] >= 0x80)
			return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (family == AF_INET) {
		/* inet_pton takes no leading zeros already; be explicit. */
		for (i = 0; i < len; i++)
			if (buf[i] == '0' && (i == 0 || buf[i - 1] == '.') &&
			    i + 1 < len && buf[i + 1] != '.')
				return 0;
	}
	return inet_pton(family, buf, addr) == 1;
}

/*
 * 1 when s (len bytes) is an email address (a dot-atom or quoted local
 * part, then a hostname or an address literal), else 0.
 */
static int
is_email(const char *s, size_t len)
{
	const char *at = NULL;
	size_t i, local;

	for (i = len; i > 0; i--)
		if (s[i - 1] == '@') {
			at = s + i - 1;
			break;
		}
	if (at == NULL)
		return 0;
	local = (size_t)(at - s);
	if (local == 0 || local > 64)
		return 0;
	if (s[0] == '"') {
		if (local < 2 || s[local - 1] != '"')
			return 0;
	} else {
		for (i = 0; i < local; i++) {
			unsigned char ch = (unsigned char)s[i];

			if (ch == '.') {
				if (i == 0 || i + 1 == local || s[i + 1] == '.')
					return 0;
			} else if (!isalnum(ch) && ch < 0x80 && (ch == 0 ||
			    strchr("!#$%&'*+/=?^_`{|}~-", ch) == NULL))
				return 0;
		}
	}
	s = at + 1;
	len -= local + 1;
	if (len > 2 && s[0] == '[' && s[len - 1] == ']') {
		if (len > 7 && strncmp(s + 1, "IPv6:", 5) == 0)
			return is_ip(s + 6, len - 7, AF_INET6);
		return is_ip(s + 1, len - 2, AF_INET);
	}
	return is_hostname(s, len);
}

/*
 * 1 when s (len bytes) is an absolute URI (a scheme, then URI characters
 * and valid percent escapes), else 0.
 */
static int
is_uri(const char *s, size_t len)
{
	size_t i = 0;

	if (len == 0 || !isalpha((unsigned char)s[0]))
		return 0;
	while (i < len && (isalnum((unsigned char)s[i]) || s[i] == '+' ||
	    s[i] == '-' || s[i] == '.'))
		i++;
	if (i == len || s[i] != ':')
		return 0;
	for (i++; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '%') {
			if (i + 2 >= len ||
			    !isxdigit((unsigned char)s[i + 1]) ||
			    !isxdigit((unsigned char)s[i + 2]))
				return 0;
			i += 2;
		} else if (!isalnum(ch) && (ch >= 0x80 || ch == 0 ||
		    strchr("-._~:/?#[]@!$&'()*+,;=", ch) == NULL))
			return 0;
	}
	return 1;
}

/* 1 when s (len bytes) is a UUID in 8-4-4-4-12 hex form, else 0. */
static int
is_uuid(const char *s, size_t len)
{
	size_t i;

	if (len != 36)
		return 0;
	for (i = 0; i < len; i++)
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/*
 * Check s (len bytes) against format fmt.  Returns 1 when valid (or fmt is
 * not one we check), else 0.
 */
int
saop__sch_format_check(enum sch_format fmt, const char *s, size_t len)
{
	struct sch_re re;
	char msg[64], *copy;
	int ok;

	switch (fmt) {
	case SCH_FMT_DATETIME:
		return len > 11 && (s[10] == 'T' || s[10] == 't' ||
		    s[10] == ' ') && is_date(s, 10) &&
		    is_time(s + 11, len - 11);
	case SCH_FMT_DATE:
		return is_date(s, len);
	case SCH_FMT_TIME:
		return is_time(s, len);
	case SCH_FMT_EMAIL:
		return is_email(s, len);
	case SCH_FMT_URI:
		return is_uri(s, len);
	case SCH_FMT_UUID:
		return is_uuid(s, len);
	case SCH_FMT_IPV4:
		return is_ip(s, len, AF_INET);
	case SCH_FMT_IPV6:
		return is_ip(s, len, AF_INET6);
	case SCH_FMT_REGEX:
		if (memchr(s, '\0', len) != NULL ||
		    (copy = strndup(s, len)) == NULL)
			return 0;
		ok = saop__sch_regex(&re, copy, msg, sizeof(msg)) == 0;
		pcre2_code_free(re.code);
		free(copy);
		return ok;
	default:
		return 1;
	}
}
