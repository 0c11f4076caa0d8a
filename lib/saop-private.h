/*
 * saop-private.h: helpers shared by lib/ only (saop__ prefix, left out
 * of the exported symbols by the export regex), and the tests; saop-mock
 * takes the two marked for it (SigV4, the CRC-32).  Never installed.
 */
#ifndef SAOP_PRIVATE_H
#define SAOP_PRIVATE_H

#include "saop.h"

#if defined(__GNUC__)
#define SAOP__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SAOP__PRINTF(f, a)
#endif

/*
 * Fill e (when not NULL) with code, errno and a formatted message, and
 * return -code, so that callers write "return saop__fail(e, ...);".
 */
int saop__fail(struct saop_err *e, int code, int sys_errno,
    const char *fmt, ...) SAOP__PRINTF(4, 5);

/* Like saop__fail, also naming a line and byte offset. */
int saop__fail_at(struct saop_err *e, int code, long line, long long offset,
    const char *fmt, ...) SAOP__PRINTF(5, 6);

/* Settings (lib/settings.c): saop_setting() without where it came from. */
const char *saop__setting(const char *key);

/*
 * How a message names where key was set: its variable, or "FILE, line N:
 * key", written to buf (size bytes).  Returns buf.
 */
const char *saop__setting_name(const char *key, char *buf, size_t size);

/*
 * The key once more after a call was refused for it (HTTP 401: a token
 * expired): when the key in force is api_key_cmd's output and still stale
 * (the key that was refused), the command is run again (lib/settings.c,
 * under a lock: threads may share it).  Returns 0 with *key a new copy
 * (wipe, free()), or -SAOP_ECONFIG (no api_key_cmd gave the key, or it
 * failed: the last output is kept) or -SAOP_ENOMEM.
 */
int saop__settings_key_again(const char *stale, char **key,
    struct saop_err *e);

/* Overwrite the string s with NULs (a key, before free()). */
void saop__wipe(char *s);

/* An embedded text file: its name (as given to scripts/embed.sh) and body. */
struct saop__blob {
	const char *name;
	const char *text;
	size_t len;
};

/* The migrations/ files in number order, ending with a NULL name. */
extern const struct saop__blob saop__migrations[];
/* The SAOP envelope v1 schema (lib/envelope-v1.json). */
extern const struct saop__blob saop__envelope_v1;
/* The price table, data/prices.json (scripts/update-prices). */
extern const struct saop__blob saop__prices_json;

/* A model's prices in USD per million tokens; a price the table does not
 * give is -1. */
struct saop__price {
	double input, output, cached_input, cache_write, reasoning;
};
/* model's prices into p, from $SAOP_PRICES's table first, then from the
 * embedded one.  Returns 1 found, 0 not, -1 a table unreadable. */
int saop__price_find(const char *provider, const char *model,
    struct saop__price *p);
/*
 * What one call cost in USD at prices p: input tokens (cached among them)
 * and output tokens (reasoning among them); cached and reasoning tokens at
 * their own price where p gives one, else at input's and output's.  A
 * count of cached or reasoning tokens < 0 is none.  Returns the cost
 * (>= 0), or -1 when it is not known: input or output not reported (< 0),
 * or a price it needs not given.  Never 0 for an unknown price.
 */
double saop__price_usd(const struct saop__price *p, long input,
    long cached, long output, long reasoning);
/*
 * What answer a of model (reached through provider) cost, set on it
 * (a->cost, a->priced 1) when the table prices the model and a reports
 * its usage; else a->priced 0 (unknown, never 0).
 */
void saop__price_answer(enum saop_provider provider, const char *model,
    struct saop_llm_answer *a);

/*
 * Strict UTF-8 (lib/utf8.c).  saop__utf8_lead(): how many continuation
 * bytes follow the lead byte c (1 to 3), with the allowed range of the
 * first of them in *lo..*hi (the later ones are 0x80..0xbf); 0 when c
 * cannot lead a character of two or more bytes.  Inline: the scanner asks
 * it for every character.
 */
static inline size_t
saop__utf8_lead(unsigned c, unsigned char *lo, unsigned char *hi)
{
	*lo = 0x80;
	*hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf)
		return 1;
	if (c >= 0xe0 && c <= 0xef) {
		if (c == 0xe0)
			*lo = 0xa0;		/* no overlong form */
		else if (c == 0xed)
			*hi = 0x9f;		/* no surrogate */
		return 2;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (c == 0xf0)
			*lo = 0x90;		/* no overlong form */
		else if (c == 0xf4)
			*hi = 0x8f;		/* nothing past U+10FFFF */
		return 3;
	}
	return 0;
}
/* The length of the strict UTF-8 sequence at s (n bytes), or 0. */
size_t saop__utf8_seq(const unsigned char *s, size_t n);
/* As saop__utf8_seq(), with the code point in *cp (U+FFFD at 0). */
size_t saop__utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);
/* The length (1 to 3) of a character cut off by the end of s[0..n), or 0. */
size_t saop__utf8_tail(const unsigned char *s, size_t n);
/* Bytes taken by the first chars characters of s[0..len). */
size_t saop__utf8_prefix(const char *s, size_t len, size_t chars);
/* The number of characters in s[0..len) (the non-continuation bytes). */
size_t saop__utf8_count(const char *s, size_t len);

/*
 * The growable byte buffer (lib/buf.c): data holds len bytes and, once
 * anything was reserved, a NUL after them; cap is the room allocated.
 * The calls return 0 or a negative code and leave b unchanged on failure:
 * -SAOP_ENOMEM (also when a size would overflow), -SAOP_ELIMIT from
 * saop__buf_append_max() when b would hold more than max bytes.
 * saop__buf_steal() returns data (new: free(); "" when empty; NULL out of
 * memory) and empties b.  saop__buf_realloc is realloc(), or a test's.
 */
struct saop__buf {
	char *data;
	size_t len, cap;
};
extern void *(*saop__buf_realloc)(void *p, size_t n);
void saop__buf_init(struct saop__buf *b);
int saop__buf_reserve(struct saop__buf *b, size_t more);
int saop__buf_append(struct saop__buf *b, const void *p, size_t n);
int saop__buf_putc(struct saop__buf *b, int c);
int saop__buf_append_max(struct saop__buf *b, const void *p, size_t n,
    size_t max);
char *saop__buf_steal(struct saop__buf *b, size_t *len);
void saop__buf_free(struct saop__buf *b);

/*
 * The environment the library follows besides the model's (lib/config.c,
 * the only other file that reads it): the claim lease in ms
 * ($SAOP_CLAIM_LEASE_MS, 100 and up, else SAOP_CLAIM_LEASE_MS); the
 * proxy libcurl takes for an https (https 1) or http URL, NULL for none;
 * the hosts reached without one ($no_proxy), NULL for none; where the
 * shell looks for a program ($PATH, else /usr/bin:/bin).
 */
long long saop__config_lease_ms(void);
const char *saop__config_proxy(int https);
const char *saop__config_no_proxy(void);
const char *saop__config_path(void);

/* Open s's database if a lazy store has not yet; 0 or SAOP_EDB/EIO. */
int saop__store_connect(struct saop_store *s, struct saop_err *e);

/* The transaction and the queries: lib/db.h; the SQLite handle the unit
 * tests read: lib/db-sqlite.h. */

/*
 * The value at [p, p+n) (valid JSON, as the scanner judges it) with what
 * jansson cannot hold kept verbatim (lib/record.c).  New reference, or
 * NULL out of memory.
 */
json_t *saop__record_lenient(const char *p, size_t n);

/*
 * LLM (lib/llm.c): the wire body for a request, and the answer parser the
 * client feeds (exposed for the unit tests).
 */
struct saop__llm_parser;
json_t *saop__llm_body(const struct saop_llm_config *cfg,
    const json_t *request, struct saop_err *e);
struct saop__llm_parser *saop__llm_parser_new(size_t limit);
void saop__llm_parser_head(struct saop__llm_parser *p, int status,
    const char *ctype);
int saop__llm_parser_feed(struct saop__llm_parser *p, const char *s,
    size_t n);
int saop__llm_parser_end(struct saop__llm_parser *p, int clean,
    struct saop_llm_answer *a, struct saop_err *e);
void saop__llm_parser_free(struct saop__llm_parser *p);
/* A URL as messages may show it: no userinfo, no query values (new). */
char *saop__llm_url_redact(const char *url);

/*
 * The CRC-32 (as zlib's crc32()) of the n bytes at s, continued from crc
 * (0 to start): AWS's event-stream frames (lib/llm-eventstream.c), which
 * saop-mock also writes.
 */
uint32_t saop__crc32(uint32_t crc, const void *s, size_t n);

/*
 * AWS Signature Version 4 (lib/llm-sigv4.c), shared with saop-mock (which
 * checks a Bedrock call's signature) and the tests.  A request to sign:
 * the URL as it is sent (its path and query percent-encoded as on the
 * wire; the path is encoded once more for the canonical request), the
 * headers signed besides host, x-amz-date, x-amz-security-token (when
 * token is not NULL) and x-amz-content-sha256 (when content_sha256), and
 * what the signature is made of.
 */
struct saop__sigv4_hdr {
	const char *name, *value;
};
struct saop__sigv4 {
	const char *method;		/* "POST" */
	const char *url;		/* scheme://host[:port]/path?query */
	const struct saop__sigv4_hdr *headers;
	size_t nheaders;
	const char *payload;		/* the body, payload_len bytes */
	size_t payload_len;
	const char *amz_date;		/* YYYYMMDDTHHMMSSZ, UTC */
	const char *region, *service;	/* "us-west-2", "bedrock" */
	const char *id, *secret;	/* the access key's */
	const char *token;		/* the session token, or NULL */
	int content_sha256;		/* sign x-amz-content-sha256 */
};
/* What signing made (saop__sigv4_free() frees it). */
struct saop__sigv4_out {
	char *canonical;		/* the canonical request */
	char *to_sign;			/* the string to sign */
	char *authorization;		/* the Authorization value */
	char signature[65];		/* hex */
	char payload_hash[65];		/* hex SHA-256 of the payload */
};
/*
 * Sign in into out.  Returns 0, or -SAOP_EDATA (a URL without a host, a
 * date not YYYYMMDDTHHMMSSZ), -SAOP_ENOMEM, or -SAOP_ECONFIG (libcrypto
 * not loaded, or failed); out is then empty.
 */
int saop__sigv4_sign(const struct saop__sigv4 *in,
    struct saop__sigv4_out *out);
/* Free what out holds (the Authorization wiped) and zero it. */
void saop__sigv4_free(struct saop__sigv4_out *out);
/*
 * Why signing cannot be done (libcrypto, opened with dlopen() on the
 * first signature, not loaded: "cannot load libcrypto: ..."), or "".
 */
const char *saop__sigv4_why(void);

/*
 * validate: parse buf (len bytes) into a new jansson tree the fast way
 * (lib/fastjson.c): the tree json_loadb(JSON_DECODE_ANY | JSON_ALLOW_NUL)
 * builds, or NULL when the text is not JSON it accepts (bad JSON, or one of
 * jansson's limits): then json_loadb() gives the verdict and the error.
 */
json_t *saop__json_fast(const char *buf, size_t len);

/*
 * Parse buf (len bytes) as one JSON text: saop__json_fast(), then
 * json_loadb(flags) for what it gives up on, but not after it ran out of
 * memory (jansson's reader does not survive a failed allocation on a long
 * text).  Returns 1 with *v the tree, read whole by the fast path; 0 with
 * *v from json_loadb() (*je filled), or NULL and *je saying where the
 * text is not JSON; or -SAOP_ENOMEM (*v NULL).
 */
int saop__json_parse(const char *buf, size_t len, size_t flags, json_t **v,
    json_error_t *je);

/*
 * Read buf (len bytes) as one JSON array, an item at a time, as
 * saop__json_fast would: each(arg, item, index) gets each item, which is
 * dropped after.  Returns 0 with the count in *count when all was read
 * and each returned 0 every time; what each returned when it was not 0
 * (stopping there); -1 when buf is not an array the fast parser reads
 * whole.
 */
int saop__json_fast_items(const char *buf, size_t len,
    int (*each)(void *arg, json_t *item, size_t i), void *arg,
    size_t *count);

/*
 * Scan buf[start..len) as the JSON of an answer whose text before start
 * is wrapper (SAOP_WRAP_* bits; 0: bare, as saop_detect_buffer()): a
 * complete value may be followed by a closing fence (FENCE) or, past a
 * line break, by prose; every index of res counts in the whole text.
 * Returns 0, or -SAOP_ENOMEM (lib/detect.c).
 */
int saop__detect_part(const char *buf, size_t len, size_t start,
    unsigned wrapper, size_t max_depth, struct saop_detect_result *res);

/*
 * resume: the text of one continuation attempt, the one owner of what
 * the model is shown as its own and of what its answer is merged onto
 * (lib/resume.c; saop_resume_record() and saop-suspend's continuation of
 * a cut answer both go through it).  text is the partial output up to its
 * resume point with whatever was kept of earlier answers, decided before
 * the request is built; the request shows it (in a prefill without its
 * trailing white space, which the merge puts back) and the answer is
 * joined onto it, never onto an older text.  again: the last answer was
 * read two ways and not kept; the request says so, before the text.
 */
struct saop__shown {
	const char *text;	/* borrowed */
	size_t len;
	const char *token;	/* its last valid token (NULL: "") */
	size_t json_start;	/* where its JSON begins (detect) */
	unsigned wrapper;	/* what wraps it (SAOP_WRAP_*) */
	enum saop_resume_form form;	/* PREFILL or USER, decided */
	enum saop_resume_context context;
	size_t max_depth;	/* scanner nesting limit; 0: SAOP_MAX_DEPTH */
	int again;
};

/*
 * The continuation request showing s: a copy of request (borrowed; may be
 * NULL) with the resume turns (saop_resume_request(), and after the
 * token SAOP_RESUME_AGAIN_LABEL when s->again); *sent (when not NULL)
 * gets the bytes of their text added.  Returns it (new), or NULL with e
 * filled (EDATA, ENOMEM, EINTERNAL for a form not decided).
 */
json_t *saop__shown_request(const struct saop__shown *s,
    const json_t *request, size_t *sent, struct saop_err *e);

/*
 * The answer cont (clen bytes; cut: it was cut too) merged onto s's text
 * (saop_resume_join(), the white space a prefill did not show merged,
 * and no other text).  Returns the verdict with *out (new), res (when not
 * NULL) and *ambiguous (two readings: *out is s's text), or a negative
 * code.
 */
int saop__shown_join(const struct saop__shown *s, const char *cont,
    size_t clen, int cut, char **out, size_t *outlen,
    struct saop_detect_result *res, int *ambiguous, struct saop_err *e);

/*
 * record: parse text (len bytes) as one record, exactly as the reader
 * parses a line: values jansson cannot hold kept verbatim.  Returns 1
 * with *rec new, or -SAOP_EDATA (the byte named) / -SAOP_ENOMEM.
 */
int saop__record_parse(const char *text, size_t len, json_t **rec,
    struct saop_err *e);

/*
 * record: rec as saop_record_write() writes it (verbatim values as their
 * own text), without the LF.  Returns new text (free()), *len its
 * length, or NULL with e filled.
 */
char *saop__record_text(const json_t *rec, size_t *len, struct saop_err *e);

/*
 * record: rec without its verdict (state and error), a new object whose
 * members are rec's own (shared), keys holding a NUL kept whole.  New
 * reference, or NULL out of memory.
 */
json_t *saop__record_unjudged(const json_t *rec);

/*
 * record: set rec's members m[0..n-1] to v[0..n-1] (stolen, none NULL),
 * all or none: the members rec lacks are added in this order, the ones it
 * has replaced where they stand.  Returns 0, or -SAOP_ENOMEM with rec as
 * it was (the values released).
 */
int saop__record_put_all(json_t *rec, const enum saop_record_member *m,
    json_t *const *v, size_t n);

/*
 * record: rec's cost with the cost of c added to part (as
 * saop_record_add_cost() adds it), a new object into *out for
 * saop__record_put_all(); *out NULL when c made no call.  Returns 0, or
 * -1 out of memory.
 */
int saop__record_cost_with(const json_t *rec, const char *part,
    const struct saop_llm_cost *c, json_t **out);

/*
 * store: the checks of the state database's place, as ssh does for its
 * files: its directory (no symbolic link, ours or root's, not writable by
 * every user), the files SQLite keeps beside it (-wal, -shm, -journal:
 * no symbolic link, ours), and the message of a failed open() (a
 * symbolic link named as such).  Each returns 0 or -SAOP_EIO with e.
 */
int saop__store_check_dir(const char *path, struct saop_err *e);
int saop__store_check_companions(const char *path, struct saop_err *e);
int saop__store_open_failed(const char *what, const char *path, int why,
    struct saop_err *e);

#endif /* SAOP_PRIVATE_H */
