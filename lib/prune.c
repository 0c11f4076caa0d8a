/* prune.c: tool-output pruning: raw output into state.sqlite, then a summary. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

/* The marker after the kept characters: HEAD N MID ID TAIL. */
#define MARK_HEAD	"\n\n[... "
#define MARK_MID	" bytes total \xe2\x80\x94 full output in state.sqlite, id "
#define MARK_TAIL	"]"

/* One output to store and summarise. */
struct cand {
	json_t *holder;		/* the object whose member key holds it */
	const char *key;
	int parts;		/* held as an array of text parts */
	const char *raw;	/* its bytes: borrowed, or buf */
	size_t len;
	char *buf;		/* the text parts joined (owned) */
	const char *task_id, *tool_name, *tool_call_id, *captured_at;
	char field[256];
	long age;
	long long id;		/* row in tool_outputs */
	int reused;
	int replaced;		/* the summary took its place */
};

struct batch {
	const struct saop_prune_opts *o;
	struct saop_prune_stats *st;
	const char *id_key;	/* member that gets the row id, or NULL */
	struct cand *c;
	size_t n, cap;
	char now[32];
};

/*
 * Fill o with DESIGN's defaults: threshold, minimum turn age, summary
 * length, turn -1, nothing else (see saop.h).
 */
void
saop_prune_opts_init(struct saop_prune_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->threshold = SAOP_LARGE_OUTPUT_THRESHOLD_BYTES;
	o->min_age = SAOP_PRUNE_MIN_TURN_AGE;
	o->keep = SAOP_SUMMARY_CHARS;
	o->turn = -1;
}

/*
 * The summary of a raw output of len bytes stored as row id: its first
 * keep characters and the marker (see saop.h).  Returns a new string (its
 * length in *out_len), or NULL when out of memory.
 */
char *
saop_prune_summary(const char *raw, size_t len, size_t keep, long long id,
    size_t *out_len)
{
	size_t head = saop__utf8_prefix(raw, len, keep), n;
	char mark[160], *s;
	int m;

	m = snprintf(mark, sizeof(mark), MARK_HEAD "%zu" MARK_MID "%lld"
	    MARK_TAIL, len, id);
	if (m < 0 || (size_t)m >= sizeof(mark))
		return NULL;
	n = head + (size_t)m;
	if ((s = malloc(n + 1)) == NULL)
		return NULL;
	memcpy(s, raw, head);
	memcpy(s + head, mark, (size_t)m + 1);
	if (out_len)
		*out_len = n;
	return s;
}

/*
 * Parse the decimal digits (no leading zero, at most 19) that end just
 * before s[*end] into *v, moving *end to the first.  Returns 1, or 0 when
 * there are none.
 */
static int
digits_before(const char *s, size_t *end, unsigned long long *v)
{
	size_t i = *end, start;
	unsigned long long x = 0;

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (i == *end || *end - i > 19 || (s[i] == '0' && *end - i > 1))
		return 0;
	for (start = i; start < *end; start++)
		x = x * 10 + (unsigned long long)(s[start] - '0');
	*end = i;
	*v = x;
	return 1;
}

/* 1 when s[0..*end) ends with lit; *end moves before it. */
static int
ends_with(const char *s, size_t *end, const char *lit)
{
	size_t n = strlen(lit);

	if (*end < n || memcmp(s + *end - n, lit, n) != 0)
		return 0;
	*end -= n;
	return 1;
}

/*
 * 1 when s (len bytes) ends with a summary's marker, with the total in
 * *bytes and the row in *id (either may be NULL); else 0.
 */
int
saop_prune_is_summary(const char *s, size_t len, unsigned long long *bytes,
    long long *id)
{
	unsigned long long b, i;
	size_t end = len;

	if (!ends_with(s, &end, MARK_TAIL) || !digits_before(s, &end, &i) ||
	    i == 0 || i > (unsigned long long)INT64_MAX ||
	    !ends_with(s, &end, MARK_MID) || !digits_before(s, &end, &b) ||
	    !ends_with(s, &end, MARK_HEAD))
		return 0;
	if (bytes)
		*bytes = b;
	if (id)
		*id = (long long)i;
	return 1;
}

/* x rotated left by r bits (0 < r < 64). */
static uint64_t
rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/*
 * A 64-bit hash of the raw output, to find an equal one already stored
 * (equal hashes are compared byte for byte, so this needs no strength,
 * only speed: one multiply-rotate round per 8 bytes, mixed at the end).
 * Returns the hash.
 */
static uint64_t
hash64(const char *p, size_t len)
{
	const uint64_t k1 = 0x9e3779b185ebca87ULL, k2 = 0xc2b2ae3d27d4eb4fULL;
	uint64_t h[4] = { k1 + k2, k2, 0, -k1 }, w, t;
	size_t i = 0;
	int l;

	for (; i + 32 <= len; i += 32)
		for (l = 0; l < 4; l++) {
			memcpy(&w, p + i + 8 * l, 8);
			h[l] = rotl(h[l] + w * k2, 31) * k1;
		}
	t = rotl(h[0], 1) + rotl(h[1], 7) + rotl(h[2], 12) + rotl(h[3], 18);
	t += (uint64_t)len;
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		t ^= rotl(w * k2, 31) * k1;
		t = rotl(t, 27) * k1 + 0x85ebca77c2b2ae63ULL;
	}
	for (; i < len; i++) {
		t ^= (unsigned char)p[i] * 0x27d4eb2f165667c5ULL;
		t = rotl(t, 11) * k1;
	}
	t ^= t >> 33;
	t *= k2;
	t ^= t >> 29;
	t *= 0x165667b19e3779f9ULL;
	t ^= t >> 32;
	return t;
}

/* Free b's candidates and their buffers; b is empty after. */
static void
batch_free(struct batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		free(b->c[i].buf);
	free(b->c);
	b->c = NULL;
	b->n = b->cap = 0;
}

/*
 * A new zeroed candidate at the end of b.  Returns it, or NULL with e set
 * (SAOP_ENOMEM).
 */
static struct cand *
batch_add(struct batch *b, struct saop_err *e)
{
	struct cand *c;

	if (b->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 8;

		if ((c = realloc(b->c, ncap * sizeof(*c))) == NULL) {
			saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
			return NULL;
		}
		b->c = c;
		b->cap = ncap;
	}
	c = &b->c[b->n++];
	memset(c, 0, sizeof(*c));
	return c;
}

/*
 * Fail with SAOP_EDATA and msg, naming the input line and field.
 * Returns -SAOP_EDATA.
 */
static int
bad(struct batch *b, struct saop_err *e, const char *field, const char *msg)
{
	if (b->o->line > 0)
		saop__fail_at(e, SAOP_EDATA, b->o->line, 0, "%s", msg);
	else
		saop__fail(e, SAOP_EDATA, 0, "%s", msg);
	if (e != NULL) {
		e->has_offset = 0;
		snprintf(e->field, sizeof(e->field), "%s", field);
	}
	return -SAOP_EDATA;
}

/* The string value of o[key] (borrowed), or NULL when it is not a string. */
static const char *
str_member(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/*
 * Look at one output, holder[key], of turn age age.  Adds it to b when
 * the rule prunes it; counts it either way.  Returns 0 or SAOP_EDATA for
 * content that no tool output has (a number, an object).
 */
static int
consider(struct batch *b, json_t *holder, const char *key, long age,
    const char *field, const char *task_id, const char *tool_name,
    const char *tool_call_id, struct saop_err *e)
{
	const struct saop_prune_opts *o = b->o;
	json_t *v = json_object_get(holder, key), *part;
	const char *raw = NULL;
	size_t len = 0, i, nparts = 0;
	struct cand *c;
	char *buf = NULL;

	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		raw = json_string_value(v);
		len = json_string_length(v);
	} else if (json_is_array(v)) {
		/* Only arrays of text parts: anything else (an image) could
		 * not be given back from a text summary. */
		json_array_foreach(v, i, part) {
			const char *type = str_member(part, "type");
			json_t *text = json_object_get(part, "text");

			if (type == NULL || strcmp(type, "text") != 0 ||
			    !json_is_string(text))
				return 0;
			len += json_string_length(text);
			nparts++;
		}
		if (nparts == 0)
			return 0;
		if (nparts == 1) {
			part = json_array_get(v, 0);
			raw = json_string_value(json_object_get(part, "text"));
		}
	} else {
		return bad(b, e, field, json_is_object(v) ?
		    "a tool output is a string or an array of text parts,"
		    " not an object" : "a tool output is a string or an array"
		    " of text parts, not a number or true or false");
	}
	b->st->outputs++;
	b->st->bytes_in += len;
	b->st->bytes_out += len;
	/* A summary of an earlier run ends its last text with the marker. */
	if (nparts > 1)
		part = json_object_get(json_array_get(v, nparts - 1), "text");
	if (nparts > 1 ? saop_prune_is_summary(json_string_value(part),
	    json_string_length(part), NULL, NULL) :
	    saop_prune_is_summary(raw, len, NULL, NULL)) {
		b->st->already++;
		return 0;
	}
	if (age < o->min_age || len <= o->threshold)
		return 0;
	if (nparts > 1) {
		size_t at = 0;

		if ((buf = malloc(len + 1)) == NULL)
			return saop__fail(e, SAOP_ENOMEM, errno,
			    "out of memory");
		json_array_foreach(v, i, part) {
			json_t *text = json_object_get(part, "text");

			memcpy(buf + at, json_string_value(text),
			    json_string_length(text));
			at += json_string_length(text);
		}
		raw = buf;
	}
	if ((c = batch_add(b, e)) == NULL) {
		free(buf);
		return -SAOP_ENOMEM;
	}
	c->holder = holder;
	c->key = key;
	c->parts = json_is_array(v);
	c->raw = raw;
	c->len = len;
	c->buf = buf;
	c->task_id = task_id ? task_id : o->task_id;
	c->tool_name = tool_name;
	c->tool_call_id = tool_call_id;
	c->captured_at = str_member(holder, "captured_at");
	c->age = age;
	snprintf(c->field, sizeof(c->field), "%s", field);
	if (c->task_id == NULL)
		return saop__fail(e, SAOP_EINTERNAL, 0,
		    "pruning without a task id");
	return 0;
}

/*
 * The transaction: every candidate of the batch stored (an equal raw
 * output of the same task reused), or none.  Returns 0, or a negative
 * saop_errcode with e set.
 */
static int
store_batch(struct saop__db *db, void *arg, struct saop_err *e)
{
	struct batch *b = arg;
	struct saop__db_output o;
	size_t i;
	int rc = 0;

	for (i = 0; i < b->n && rc == 0; i++) {
		struct cand *c = &b->c[i];
		long long id;

		o.task_id = c->task_id;
		o.tool_name = c->tool_name;
		o.tool_call_id = c->tool_call_id;
		o.raw = c->raw;
		o.len = c->len;
		o.age = c->age;
		o.captured_at = c->captured_at ? c->captured_at : b->now;
		o.stored_at = b->now;
		o.hash = (long long)hash64(c->raw, c->len);
		rc = saop__db_output_put(db, &o, &id, &c->reused, e);
		c->id = id;
	}
	return rc;
}

/*
 * Replace c's output by its summary (and name its row in id_key).
 * Returns 0, or -SAOP_ENOMEM with e set.
 */
static int
replace(const struct batch *b, struct cand *c, struct saop_err *e)
{
	char *sum;
	size_t n;
	json_t *v;

	if ((sum = saop_prune_summary(c->raw, c->len, b->o->keep, c->id,
	    &n)) == NULL)
		return saop__fail(e, SAOP_ENOMEM, errno, "out of memory");
	v = json_stringn_nocheck(sum, n);
	free(sum);
	if (v != NULL && c->parts)
		v = json_pack("[{s:s, s:o}]", "type", "text", "text", v);
	if (v == NULL || json_object_set_new(c->holder, c->key, v) != 0 ||
	    (b->id_key != NULL && json_object_set_new(c->holder, b->id_key,
	    json_integer(c->id)) != 0))
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
	c->replaced = 1;
	b->st->bytes_out -= c->len;
	b->st->bytes_out += n;
	return 0;
}

/* Hand candidate c to the caller's on_output callback, when there is one. */
static void
tell(const struct batch *b, const struct cand *c)
{
	struct saop_prune_item it;

	if (b->o->on_output == NULL)
		return;
	it.task_id = c->task_id;
	it.tool_name = c->tool_name;
	it.tool_call_id = c->tool_call_id;
	it.field = c->field;
	it.byte_size = c->len;
	it.turn_age = c->age;
	it.id = c->id;
	it.reused = c->reused;
	b->o->on_output(b->o->on_output_arg, &it);
}

/*
 * Store the batch durably, record the events, then (and only then)
 * replace each output by its summary.  Returns 0, or a negative
 * saop_errcode with e set.
 */
static int
batch_run(struct batch *b, struct saop_err *e)
{
	const struct saop_prune_opts *o = b->o;
	struct saop_store *s = o->store;
	int rc = 0;
	size_t i;

	if (b->n == 0)
		return 0;
	if (o->dry_run) {
		for (i = 0; i < b->n; i++)
			tell(b, &b->c[i]);
		return 0;
	}
	if (s == NULL && o->open_store != NULL)
		s = o->open_store(o->store_arg, e);
	if (s == NULL)
		return e && e->code ? -e->code : saop__fail(e, SAOP_EDB, 0,
		    "no state database to store tool outputs in");
	saop_now_iso8601(b->now);
	if ((rc = saop__store_tx(s, 1, store_batch, b, e)) != 0)
		return rc;
	/* Committed: from here on every output may be replaced. */
	for (i = 0; i < b->n; i++) {
		struct cand *c = &b->c[i];
		json_t *data;

		data = json_pack("{s:I, s:s?, s:s?, s:I, s:i, s:b}", "id",
		    (json_int_t)c->id, "tool_name", c->tool_name,
		    "tool_call_id", c->tool_call_id, "byte_size",
		    (json_int_t)c->len, "turn_age", (int)c->age, "reused",
		    c->reused);
		/* The outputs are stored: an event that cannot be
		 * written (kept in s) never undoes that. */
		if (data != NULL)
			saop_event(s, c->task_id, o->turn,
			    SAOP_EVENT_TOOL_OUTPUT_PRUNED, data, NULL);
		json_decref(data);
	}
	for (i = 0; i < b->n; i++) {
		struct cand *c = &b->c[i];
		int erc;

		tell(b, c);
		b->st->pruned++;
		if (!c->reused)
			b->st->stored++;
		if ((erc = replace(b, c, rc ? NULL : e)) != 0 && rc == 0)
			rc = erc;
	}
	return rc;
}

/*
 * Prune the tool outputs in the conversation messages in place (see
 * saop.h).  Returns 0, or a negative saop_errcode with e set.
 */
int
saop_prune_messages(json_t *messages, const struct saop_prune_opts *o,
    struct saop_prune_stats *st, struct saop_err *e)
{
	struct batch b = { 0 };
	struct saop_prune_stats dummy = { 0 };
	const char *base = o->field ? o->field : "";
	json_t *names = NULL, *m, *v, *blk;
	size_t i, j, total = 0, seen = 0;
	char field[256];
	int rc = 0;

	saop_err_clear(e);
	b.o = o;
	b.st = st ? st : &dummy;
	if (!json_is_array(messages))
		return bad(&b, e, base, "the messages are not an array");
	json_array_foreach(messages, i, m) {
		const char *role = str_member(m, "role");

		if (!json_is_object(m)) {
			snprintf(field, sizeof(field), "%s/%zu", base, i);
			return bad(&b, e, field,
			    "a message is not an object");
		}
		if (role != NULL && strcmp(role, "assistant") == 0)
			total++;
	}
	if ((names = json_object()) == NULL)
		return saop__fail(e, SAOP_ENOMEM, 0, "out of memory");
	json_array_foreach(messages, i, m) {
		const char *role = str_member(m, "role"), *id;
		json_t *content = json_object_get(m, "content");

		if (role == NULL)
			continue;
		if (strcmp(role, "assistant") == 0) {
			seen++;
			/* Remember tool names by call id: OpenAI tool_calls,
			 * Anthropic tool_use blocks. */
			json_array_foreach(json_object_get(m, "tool_calls"), j,
			    v)
				if ((id = str_member(v, "id")) != NULL)
					json_object_set(names, id, json_object_get(
					    json_object_get(v, "function"), "name"));
			json_array_foreach(content, j, blk)
				if ((id = str_member(blk, "id")) != NULL &&
				    json_is_string(json_object_get(blk, "name")))
					json_object_set(names, id,
					    json_object_get(blk, "name"));
			continue;
		}
		if (strcmp(role, "tool") == 0 || strcmp(role, "function") == 0) {
			const char *call = str_member(m, "tool_call_id");
			const char *name = str_member(m, "name");

			if (name == NULL && call != NULL)
				name = json_string_value(json_object_get(names,
				    call));
			snprintf(field, sizeof(field), "%s/%zu/content", base,
			    i);
			rc = consider(&b, m, "content", (long)(1 + total - seen),
			    field, NULL, name, call, e);
		} else if (strcmp(role, "user") == 0 && json_is_array(content)) {
			json_array_foreach(content, j, blk) {
				const char *type = str_member(blk, "type");
				const char *call;

				if (type == NULL || strcmp(type, "tool_result") != 0)
					continue;
				call = str_member(blk, "tool_use_id");
				snprintf(field, sizeof(field),
				    "%s/%zu/content/%zu/content", base, i, j);
				rc = consider(&b, blk, "content",
				    (long)(1 + total - seen), field, NULL,
				    call ? json_string_value(json_object_get(
				    names, call)) : NULL, call, e);
				if (rc != 0)
					break;
			}
		}
		if (rc != 0)
			goto out;
	}
	rc = batch_run(&b, e);
out:
	batch_free(&b);
	json_decref(names);
	return rc;
}

/*
 * Prune the n tool-output entries in place, as saop_prune_messages does
 * (see saop.h).  Returns 0, or a negative saop_errcode with e set.
 */
int
saop_prune_entries(json_t *const *entries, const long *lines, size_t n,
    const struct saop_prune_opts *o, struct saop_prune_stats *st,
    struct saop_err *e)
{
	struct batch b = { 0 };
	struct saop_prune_stats dummy = { 0 };
	struct saop_prune_opts lo = *o;
	size_t i;
	int rc = 0;

	saop_err_clear(e);
	b.o = &lo;
	b.st = st ? st : &dummy;
	b.id_key = "stored_id";
	for (i = 0; i < n && rc == 0; i++) {
		json_t *en = entries[i], *age = json_object_get(en, "turn_age");
		json_t *size = json_object_get(en, "byte_size");
		json_t *raw = json_object_get(en, "raw_content");

		if (lines != NULL)
			lo.line = lines[i];
		if (!json_is_object(en))
			rc = bad(&b, e, "", "an entry is not an object");
		else if (!json_is_string(raw))
			rc = bad(&b, e, "/raw_content", "an entry needs"
			    " raw_content, a string");
		else if (!json_is_integer(age) || json_integer_value(age) < 0)
			rc = bad(&b, e, "/turn_age", "an entry needs"
			    " turn_age, a whole number >= 0");
		else if (size != NULL && !json_is_null(size) &&
		    (!json_is_integer(size) || (json_integer_value(size) !=
		    (json_int_t)json_string_length(raw) &&
		    !saop_prune_is_summary(json_string_value(raw),
		    json_string_length(raw), NULL, NULL))))
			rc = bad(&b, e, "/byte_size", "byte_size is not "
			    "the number of bytes of raw_content");
		else
			rc = consider(&b, en, "raw_content",
			    (long)json_integer_value(age), "/raw_content",
			    str_member(en, "task_id"), str_member(en,
			    "tool_name"), str_member(en, "tool_call_id"), e);
	}
	if (rc == 0)
		rc = batch_run(&b, e);
	batch_free(&b);
	return rc;
}

/* saop__db_output_read() callback: write n bytes at p to the FILE arg.
 * Returns 0, or -SAOP_EIO. */
static int
put_file(void *arg, const void *p, size_t n)
{
	return fwrite(p, 1, n, arg) == n ? 0 : -SAOP_EIO;
}

/*
 * Write the raw output stored as row id to f (see saop.h).  Returns 0, 1
 * when there is no such row, or -SAOP_EDB / -SAOP_EIO with e set.
 */
int
saop_tool_output_get(struct saop_store *s, long long id, FILE *f,
    struct saop_err *e)
{
	struct saop__db *db;
	int rc;

	if ((rc = saop__store_conn(s, &db, e)) != 0)
		return rc;
	saop_err_clear(e);
	rc = saop__db_output_read(db, id, put_file, f, e);
	if (rc == -SAOP_EIO)
		return saop__fail(e, SAOP_EIO, errno, "write error: %s",
		    strerror(errno));
	return rc;
}

/*
 * The row of tool's most recently captured output (of task, when not
 * NULL) in *id.  Returns 0, 1 when there is none, or -SAOP_EDB with e set.
 */
int
saop_tool_output_latest(struct saop_store *s, const char *tool,
    const char *task, long long *id, struct saop_err *e)
{
	struct saop__db *db;
	int rc;

	*id = 0;
	if ((rc = saop__store_conn(s, &db, e)) != 0)
		return rc;
	saop_err_clear(e);
	rc = saop__db_output_latest(db, tool, task, id, e);
	if (rc == 1)
		*id = 0;
	return rc;
}

/*
 * Write s (NULL: "-") as a table cell to f: tabs, newlines and controls
 * escaped.  Returns 0, or -1 on a write error.
 */
static int
put_cell(FILE *f, const unsigned char *s)
{
	if (s == NULL)
		return fputs("-", f) < 0 ? -1 : 0;
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\t')
			fputs("\\t", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (*s < 0x20 || *s == 0x7f)
			fprintf(f, "\\x%02x", *s);
		else
			putc(*s, f);
	}
	return ferror(f) ? -1 : 0;
}

/* saop__db_output_each() callback: one line of the table to the FILE
 * arg.  Returns 0. */
static int
list_row(void *arg, const struct saop__db_row *r)
{
	FILE *f = arg;
	int col;

	for (col = 0; col < 8; col++) {
		if (col > 0)
			putc('\t', f);
		put_cell(f, (const unsigned char *)saop__db_col_text(r, col));
	}
	putc('\n', f);
	return 0;
}

/*
 * Write the table of stored outputs (of task, when not NULL) to f.
 * Returns 0, or -SAOP_EDB / -SAOP_EIO with e set.
 */
int
saop_tool_output_list(struct saop_store *s, const char *task, FILE *f,
    struct saop_err *e)
{
	struct saop__db *db;
	int rc;

	if ((rc = saop__store_conn(s, &db, e)) != 0)
		return rc;
	saop_err_clear(e);
	fputs("ID\tTASK\tTOOL\tCALL\tBYTES\tAGE\tCAPTURED\tSTORED\n", f);
	if ((rc = saop__db_output_each(db, task, list_row, f, e)) != 0)
		return rc;
	if (ferror(f))
		return saop__fail(e, SAOP_EIO, errno, "write error: %s",
		    strerror(errno));
	return 0;
}
