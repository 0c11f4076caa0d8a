/*
 * validate.c: checking a model's answer (local repair, parse, JSON Schema)
 * and the formatting-correction protocol: at most max_retries correction
 * turns per record, a MALFORMED_RESPONSE event before each, then
 * MAX_RETRIES_EXCEEDED and USER_ESCALATION.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "saop-private.h"

/* Fill e with an out-of-memory error: returns -SAOP_ENOMEM. */
static int
nomem(struct saop_err *e)
{
	return saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
}

/*
 * Did jansson refuse the text for one of its own limits (nesting, numbers,
 * \u0000 in a key) rather than for its syntax?  1 or 0.
 */
static int
jansson_limit(const json_error_t *je)
{
	switch (json_error_code(je)) {
	case json_error_stack_overflow:
	case json_error_numeric_overflow:
	case json_error_null_byte_in_key:
		return 1;
	default:
		return 0;
	}
}

/* A new error object {"path", "keyword", "message"}, or NULL. */
static json_t *
error_new(const char *path, const char *keyword, const char *message)
{
	return json_pack("{s:s, s:s, s:s}", "path", path, "keyword", keyword,
	    "message", message);
}

/*
 * Why no tree could be built out of text (len bytes), as one error.  The
 * scanner judges the JSON (strict RFC 8259): an invalid byte or a
 * truncation is a "syntax" error naming where; JSON the scanner finds
 * complete is one of jansson's limits, a "limit" error naming it.
 */
static json_t *
parse_error(const char *text, size_t len, const json_error_t *je)
{
	struct saop_detect_result d;
	char msg[512];
	const char *kw = "limit";
	int scanned;

	memset(&d, 0, sizeof(d));
	scanned = saop_detect_buffer(text, len, 0, &d) == 0;
	switch (json_error_code(je)) {
	case json_error_stack_overflow:
		snprintf(msg, sizeof(msg), "nesting deeper than jansson's "
		    "limit of 2048 levels at line %d, column %d: saop cannot "
		    "build this value", je->line, je->column);
		break;
	case json_error_numeric_overflow:
		snprintf(msg, sizeof(msg), "a number beyond what jansson "
		    "holds (64-bit integers, doubles) at line %d, "
		    "column %d: %s",
		    je->line, je->column, je->text);
		break;
	case json_error_null_byte_in_key:
		snprintf(msg, sizeof(msg), "an object key holding \\u0000, "
		    "which jansson cannot hold, at line %d, column %d",
		    je->line, je->column);
		break;
	default:
		kw = "syntax";
		if (scanned && d.verdict == SAOP_INVALID)
			snprintf(msg, sizeof(msg), "invalid JSON at line %ld, "
			    "column %ld (byte %llu): %s", d.error_line,
			    d.error_column,
			    (unsigned long long)d.error_offset, d.error);
		else if (scanned && d.verdict == SAOP_TRUNCATED && d.empty)
			snprintf(msg, sizeof(msg), "the response is empty");
		else if (scanned && d.verdict == SAOP_TRUNCATED)
			snprintf(msg, sizeof(msg), "the JSON is cut off after "
			    "byte %llu%s%s", (unsigned long long)
			    d.truncation_index, d.expected ? ": expected " : "",
			    d.expected ? d.expected : "");
		else if (scanned && d.verdict == SAOP_COMPLETE) {
			kw = "limit";
			snprintf(msg, sizeof(msg), "valid JSON that jansson "
			    "cannot read (line %d, column %d): %s", je->line,
			    je->column, je->text);
		} else
			snprintf(msg, sizeof(msg), "invalid JSON at line %d, "
			    "column %d: %s", je->line, je->column, je->text);
		break;
	}
	if (scanned)
		saop_detect_result_free(&d);
	return error_new("", kw, msg);
}

/* Is text (len bytes) complete JSON by the scanner's judgement?  1 or 0. */
static int
scanner_complete(const char *text, size_t len)
{
	struct saop_detect_result d;
	int ok;

	memset(&d, 0, sizeof(d));
	if (saop_detect_buffer(text, len, 0, &d) != 0)
		return 0;
	ok = d.verdict == SAOP_COMPLETE;
	saop_detect_result_free(&d);
	return ok;
}

/*
 * Valid JSON jansson cannot hold for its numbers (an integer beyond 64
 * bits): checked against s with integers read as doubles, kept exactly
 * (the big number verbatim, as the record reader keeps it).  Returns 1
 * valid (*value new when keep), 0 invalid (*errors), 2 when even so no
 * tree can be built (the caller reports the limit), or a negative code
 * with e filled.
 */
static int
big_numbers(const struct saop_schema *s, int keep, const char *text,
    size_t len, json_t **value, json_t **errors, struct saop_err *e)
{
	json_error_t je;
	json_t *v;
	int rc;

	v = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL |
	    JSON_DECODE_INT_AS_REAL, &je);
	if (v == NULL)
		return 2;
	rc = saop_schema_validate(s, v, errors, e);
	json_decref(v);
	if (rc < 0)
		return rc;
	if (rc == 1 && keep && (*value = saop__record_lenient(text, len)) ==
	    NULL)
		return nomem(e);
	return rc;
}

/*
 * saop_validate_text; with keep 0 the value is not wanted (*value stays
 * NULL when it is valid), so a large array may be streamed.  With close,
 * a cut answer may be closed locally (saop_repair_with()); *readings (when
 * readings is not NULL) the texts of the readings when several were
 * possible and none was taken, else NULL.
 */
static int
validate_text(const struct saop_schema *s, int no_repair, int close,
    int keep, const char *text, size_t len, json_t **value,
    json_t **errors, json_t **repairs, json_t **readings,
    struct saop_err *e)
{
	struct saop_repair_opts ro;
	json_error_t je;
	json_t *v, *err;
	char *fixed = NULL;
	size_t fixed_len;
	int rc;

	*value = NULL;
	*errors = NULL;
	*repairs = NULL;
	if (readings != NULL)
		*readings = NULL;
	saop_err_clear(e);
	if (!keep && saop_schema_valid_items(s, text, len)) {
		if ((*repairs = json_array()) == NULL ||
		    (*errors = json_array()) == NULL)
			goto oom;
		return 1;
	}
	/*
	 * Valid JSON needs no repair: parse first, repair only on failure.
	 * The fast parser reads what it can; jansson judges the rest.
	 */
	if (saop__json_parse(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &v,
	    &je) < 0)
		goto oom;
	if (v == NULL && !no_repair && !jansson_limit(&je)) {
		ro.schema = s;
		ro.close = close;
		if ((rc = saop_repair_with(text, len, &ro, &fixed, &fixed_len,
		    repairs, readings, e)) < 0)
			return rc;
		if (rc == 1) {
			json_error_t jr;

			v = json_loadb(fixed, fixed_len,
			    JSON_DECODE_ANY | JSON_ALLOW_NUL, &jr);
			/*
			 * A repair writes strict JSON, so a repaired text that
			 * does not parse is either over one of jansson's
			 * limits (the error is about the repaired value), or
			 * no more than the answer without its BOM, when no
			 * single reading was found: the error is then about
			 * what the model wrote, at the line, column and byte
			 * saop-detect names (the scanner skips a BOM itself).
			 */
			if (v == NULL && jansson_limit(&jr)) {
				text = fixed;
				len = fixed_len;
				je = jr;
			}
		}
	}
	if (*repairs == NULL && (*repairs = json_array()) == NULL) {
		free(fixed);
		json_decref(v);
		return nomem(e);
	}
	if (v == NULL && json_error_code(&je) ==
	    json_error_numeric_overflow && scanner_complete(text, len)) {
		rc = big_numbers(s, keep, text, len, value, errors, e);
		if (rc != 2) {
			free(fixed);
			if (rc < 0)
				goto fail;
			if (*errors == NULL && (*errors = json_array()) ==
			    NULL) {
				json_decref(*value);
				*value = NULL;
				goto oom;
			}
			return rc;
		}
	}
	if (v == NULL) {
		err = parse_error(text, len, &je);
		free(fixed);
		if ((*errors = json_array()) == NULL) {
			json_decref(err);
			goto oom;
		}
		if (err == NULL || json_array_append_new(*errors, err) != 0)
			goto oom;
		return 0;
	}
	free(fixed);
	rc = saop_schema_validate(s, v, errors, e);
	if (rc < 0) {
		json_decref(v);
		goto fail;
	}
	if (*errors == NULL && (*errors = json_array()) == NULL) {
		json_decref(v);
		goto oom;
	}
	if (rc == 1 && keep)
		*value = v;
	else
		json_decref(v);
	return rc == 1 ? 1 : 0;
oom:
	nomem(e);
	rc = -SAOP_ENOMEM;
fail:
	json_decref(*repairs);
	json_decref(*errors);
	*repairs = *errors = NULL;
	if (readings != NULL) {
		json_decref(*readings);
		*readings = NULL;
	}
	return rc;
}

/* Check one answer, keeping the value (see saop.h). */
int
saop_validate_text(const struct saop_schema *s, int no_repair,
    const char *text, size_t len, json_t **value, json_t **errors,
    json_t **repairs, struct saop_err *e)
{
	return validate_text(s, no_repair, 0, 1, text, len, value, errors,
	    repairs, NULL, e);
}

/* Does message m begin with "path:" already ("(root):" for "")? */
static int
names_path(const char *m, const char *path)
{
	size_t n;

	if (path[0] == '\0')
		path = "(root)";
	n = strlen(path);
	return strncmp(m, path, n) == 0 && m[n] == ':';
}

/* One error as "path: message" (see saop.h): new string or NULL. */
char *
saop_validate_error_text(const json_t *err)
{
	const char *path = json_string_value(json_object_get(err, "path"));
	const char *msg = json_string_value(json_object_get(err, "message"));
	size_t n;
	char *out;

	if (path == NULL)
		path = "";
	if (msg == NULL)
		msg = "invalid";
	if (names_path(msg, path))
		return strdup(msg);
	n = strlen(path) + strlen(msg) + 16;
	if ((out = malloc(n)) == NULL)
		return NULL;
	snprintf(out, n, "%s: %s", path[0] != '\0' ? path : "(root)", msg);
	return out;
}

/*
 * Every error joined by "; " (see saop.h), without the full stops at its
 * end.  Returns a new string (free()), "" for none, or NULL on ENOMEM.
 */
char *
saop_validate_errors_text(const json_t *errors)
{
	struct saop__buf b;
	const json_t *err;
	size_t i;

	saop__buf_init(&b);
	json_array_foreach(errors, i, err) {
		char *one;
		int r;

		if ((one = saop_validate_error_text(err)) == NULL) {
			saop__buf_free(&b);
			return NULL;
		}
		r = i > 0 ? saop__buf_append(&b, "; ", 2) : 0;
		if (r == 0)
			r = saop__buf_append(&b, one, strlen(one));
		free(one);
		if (r != 0) {
			saop__buf_free(&b);
			return NULL;
		}
	}
	/* The prompt puts its own full stop after the list. */
	while (b.len > 0 && b.data[b.len - 1] == '.')
		b.data[--b.len] = '\0';
	return saop__buf_steal(&b, NULL);
}

/*
 * A JSON string of text that may not be UTF-8 (a model's bytes): each
 * byte that does not start a strict UTF-8 character (saop__utf8_seq())
 * becomes U+FFFD.  Returns a new reference, or NULL on ENOMEM.
 */
static json_t *
string_lossy(const char *text, size_t len)
{
	struct saop__buf b;
	json_t *s;
	size_t i, n;
	int r = 0;

	if ((s = json_stringn(text, len)) != NULL)
		return s;
	saop__buf_init(&b);
	for (i = 0; i < len && r == 0; i += n > 0 ? n : 1) {
		n = saop__utf8_seq((const unsigned char *)text + i, len - i);
		r = n > 0 ? saop__buf_append(&b, text + i, n) :
		    saop__buf_append(&b, "\xef\xbf\xbd", 3);
	}
	s = r == 0 && b.data != NULL ? json_stringn(b.data, b.len) : NULL;
	saop__buf_free(&b);
	return s;
}

/*
 * The value at the JSON Pointer ptr in doc (RFC 6901), or NULL when
 * there is none.  Borrowed.
 */
static const json_t *
pointer_get(const json_t *doc, const char *ptr)
{
	char key[256];
	size_t n;

	while (doc != NULL && *ptr == '/') {
		ptr++;
		for (n = 0; *ptr != '\0' && *ptr != '/' && n < sizeof(key) - 1;
		    ptr++) {
			if (ptr[0] == '~' && (ptr[1] == '0' || ptr[1] == '1'))
				key[n++] = *++ptr == '0' ? '~' : '/';
			else
				key[n++] = *ptr;
		}
		key[n] = '\0';
		if (json_is_array(doc)) {
			char *end;
			unsigned long i = strtoul(key, &end, 10);

			doc = *key != '\0' && *end == '\0' ?
			    json_array_get(doc, i) : NULL;
		} else {
			doc = json_object_get(doc, key);
		}
	}
	return *ptr == '\0' ? doc : NULL;
}

/*
 * What the correction turn asks the answer to start with, from the type
 * the schema doc fixes at its root: " starting from '{'" and the like, or
 * "" when it fixes none.  A static string.
 */
static const char *
expected_start(const json_t *doc)
{
	static const char *const starts[][2] = {
		{ "object", " starting from '{'" },
		{ "array", " starting from '['" },
		{ "string", " as one JSON string, starting from '\"'" },
		{ "integer", " as one JSON number" },
		{ "number", " as one JSON number" },
		{ "boolean", " as true or false" },
		{ "null", " as null" },
		{ NULL, NULL }
	};
	const char *t = json_string_value(json_object_get(doc, "type"));
	size_t i;

	for (i = 0; t != NULL && starts[i][0] != NULL; i++)
		if (strcmp(t, starts[i][0]) == 0)
			return starts[i][1];
	return "";
}

/*
 * Append to b the schema doc as the correction turn quotes it: whole
 * when its compact JSON fits SAOP_CORRECTION_SCHEMA_MAX, else the
 * subschemas the errors' schema_path point into, as one object keyed by
 * their JSON Pointers, as many as fit.  Returns 0, or -1 on ENOMEM.
 */
static int
quote_schema(struct saop__buf *b, const json_t *doc, const json_t *errors)
{
	static const char whole[] = "\n\nThe JSON Schema it must follow:"
	    SAOP_CORRECTION_LIST_HEAD;
	static const char parts_head[] = "\n\nThe parts of the JSON Schema "
	    "the errors point at:" SAOP_CORRECTION_LIST_HEAD;
	char *js = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_t *parts = NULL, *err;
	size_t i, used = 2;
	int r = -1;

	if (js == NULL)
		return -1;
	if (strlen(js) <= SAOP_CORRECTION_SCHEMA_MAX) {
		r = saop__buf_append(b, whole, strlen(whole)) != 0 ||
		    saop__buf_append(b, js, strlen(js)) != 0 ||
		    saop__buf_append(b, SAOP_CORRECTION_LIST_TAIL,
		    strlen(SAOP_CORRECTION_LIST_TAIL)) != 0 ? -1 : 0;
		goto out;
	}
	if ((parts = json_object()) == NULL)
		goto out;
	json_array_foreach(errors, i, err) {
		const char *sp = json_string_value(json_object_get(err,
		    "schema_path"));
		char ptr[512], *cut, *one;
		const json_t *part;
		size_t n;

		/* The subschema holding the keyword: the pointer's parent. */
		if (sp == NULL || *sp != '/' || strlen(sp) >= sizeof(ptr))
			continue;
		strcpy(ptr, sp);
		if ((cut = strrchr(ptr, '/')) == NULL || cut == ptr ||
		    json_object_get(parts, ptr) != NULL)
			continue;
		*cut = '\0';
		if (json_object_get(parts, ptr) != NULL ||
		    (part = pointer_get(doc, ptr)) == NULL)
			continue;
		if ((one = json_dumps(part, JSON_COMPACT | JSON_ENCODE_ANY |
		    JSON_PRESERVE_ORDER)) == NULL)
			goto out;
		n = strlen(one) + strlen(ptr) + 4;
		free(one);
		if (used + n > SAOP_CORRECTION_SCHEMA_MAX)
			continue;
		used += n;
		if (json_object_set(parts, ptr, (json_t *)part) != 0)
			goto out;
	}
	r = 0;
	if (json_object_size(parts) > 0) {
		free(js);
		js = json_dumps(parts, JSON_COMPACT | JSON_PRESERVE_ORDER);
		r = js == NULL || saop__buf_append(b, parts_head,
		    strlen(parts_head)) != 0 || saop__buf_append(b, js,
		    strlen(js)) != 0 || saop__buf_append(b,
		    SAOP_CORRECTION_LIST_TAIL,
		    strlen(SAOP_CORRECTION_LIST_TAIL)) != 0 ? -1 : 0;
	}
out:
	json_decref(parts);
	free(js);
	return r;
}

/*
 * The text of the correction turn for errors under schema s (see
 * saop.h).  Returns a new string (free()), or NULL on ENOMEM.
 */
char *
saop_correction_text(const struct saop_schema *s, const json_t *errors)
{
	const json_t *doc = saop_schema_document(s);
	struct saop__buf b;
	char *words, *list = NULL;
	int r;

	if ((words = saop_validate_errors_text(errors)) == NULL)
		return NULL;
	if ((list = json_dumps(errors, JSON_COMPACT)) == NULL) {
		free(words);
		return NULL;
	}
	saop__buf_init(&b);
	if (s == NULL || saop_schema_is_envelope(s)) {
		/* The SAOP envelope's own words (DESIGN.md, saop-validate(1)). */
		r = saop__buf_append(&b, SAOP_CORRECTION_PROMPT_HEAD,
		    strlen(SAOP_CORRECTION_PROMPT_HEAD)) != 0 ||
		    saop__buf_append(&b, words, strlen(words)) != 0 ||
		    saop__buf_append(&b, SAOP_CORRECTION_PROMPT_TAIL,
		    strlen(SAOP_CORRECTION_PROMPT_TAIL)) != 0;
	} else {
		const char *start = expected_start(doc);

		r = saop__buf_append(&b, SAOP_CORRECTION_SCHEMA_HEAD,
		    strlen(SAOP_CORRECTION_SCHEMA_HEAD)) != 0 ||
		    saop__buf_append(&b, words, strlen(words)) != 0 ||
		    saop__buf_append(&b, SAOP_CORRECTION_SCHEMA_TAIL,
		    strlen(SAOP_CORRECTION_SCHEMA_TAIL)) != 0 ||
		    saop__buf_append(&b, start, strlen(start)) != 0 ||
		    saop__buf_append(&b, ".", 1) != 0;
	}
	if (r == 0)
		r = saop__buf_append(&b, SAOP_CORRECTION_LIST_HEAD,
		    strlen(SAOP_CORRECTION_LIST_HEAD)) != 0 ||
		    saop__buf_append(&b, list, strlen(list)) != 0 ||
		    saop__buf_append(&b, SAOP_CORRECTION_LIST_TAIL,
		    strlen(SAOP_CORRECTION_LIST_TAIL)) != 0;
	if (r == 0 && s != NULL && !saop_schema_is_envelope(s))
		r = quote_schema(&b, doc, errors);
	free(words);
	free(list);
	if (r != 0 || b.data == NULL) {
		saop__buf_free(&b);
		return NULL;
	}
	return saop__buf_steal(&b, NULL);
}

/*
 * The correction request for the answer raw and its errors under schema
 * s (NULL: the envelope's words; see saop_correction_request() in
 * saop.h); when sent is not NULL, the bytes of the two turns it adds (the
 * answer, lossy, and the correction text) are added to *sent.  Returns a
 * new reference, or NULL with e filled.
 */
static json_t *
correction_counted(const struct saop_schema *s, const json_t *request,
    const char *raw, size_t raw_len, const json_t *errors, size_t *sent,
    struct saop_err *e)
{
	json_t *req, *msgs, *old, *content;
	char *text = NULL;

	saop_err_clear(e);
	if (request != NULL && !json_is_object(request)) {
		saop__fail(e, SAOP_EDATA, 0, "request is not an object");
		return NULL;
	}
	req = request != NULL ? json_deep_copy(request) : json_object();
	if (req == NULL)
		goto oom;
	old = json_object_get(req, "messages");
	if (old != NULL && !json_is_array(old)) {
		json_decref(req);
		saop__fail(e, SAOP_EDATA, 0,
		    "request.messages is not an array");
		return NULL;
	}
	if (old == NULL) {
		if (json_object_set_new(req, "messages", json_array()) != 0)
			goto oom;
		old = json_object_get(req, "messages");
	}
	msgs = old;
	if ((text = saop_correction_text(s, errors)) == NULL)
		goto oom;
	if ((content = string_lossy(raw, raw_len)) != NULL && sent != NULL)
		*sent += json_string_length(content) + strlen(text);
	if (content == NULL ||
	    json_array_append_new(msgs, json_pack("{s:s, s:o}", "role",
	    "assistant", "content", content)) != 0 ||
	    json_array_append_new(msgs, json_pack("{s:s, s:s}", "role",
	    "user", "content", text)) != 0)
		goto oom;
	free(text);
	return req;
oom:
	free(text);
	json_decref(req);
	nomem(e);
	return NULL;
}

/*
 * The correction request for the answer raw and its errors (see saop.h):
 * new reference, or NULL with e filled.
 */
json_t *
saop_correction_request(const json_t *request, const char *raw,
    size_t raw_len, const json_t *errors, struct saop_err *e)
{
	return correction_counted(NULL, request, raw, raw_len, errors, NULL,
	    e);
}

/*
 * What the protocol reads of a record, once, before it starts: every
 * later step works on this and on its own outcome (struct work), never on
 * the record.
 */
struct given {
	enum saop_state state;	/* the state it came with */
	int tool;		/* it carries a tool call */
	const char *raw;	/* its answer (borrowed), NULL: it has none */
	size_t len;
	const json_t *request;	/* its request (borrowed), NULL: none */
	int bad_request;	/* it has one, but not an object */
	const char *task_id;	/* its task (borrowed, or in tbuf), NULL:
				   none */
	long turn;		/* its turn, -1: none */
	char tbuf[32];
};

/* Read into g what the protocol needs of rec (g then borrows from rec). */
static void
read_given(const json_t *rec, struct given *g)
{
	g->state = saop_record_state(rec);
	g->tool = saop_record_tool_call(rec) != NULL;
	g->raw = saop_record_raw(rec, &g->len);
	g->request = saop_record_request(rec);
	g->bad_request = g->request == NULL &&
	    saop_record_has(rec, SAOP_RECORD_REQUEST);
	g->task_id = saop_record_task_id(rec, g->tbuf);
	g->turn = saop_record_turn(rec);
}

/*
 * The outcome of the protocol while it runs: what the record is to
 * become, written on it once, at the end (write_outcome()).
 */
struct work {
	json_t *validate;	/* rec.validate to be (own); NULL: none */
	json_t *envelope;	/* the valid value kept (own); NULL: none */
	json_t *raw;		/* the last correction turn's answer, a
				   string (own); NULL: the record's own */
	json_t *orig;		/* the record's own answer once replaced
				   (validate.original_raw); NULL: not */
	enum saop_state state;	/* the state to write; NONE: as it came */
	int valid, attempts, closed;
	size_t repairs;
	struct saop_llm_cost cost;	/* the correction turns answered */
};

/*
 * Make w.validate what is known now: {valid, attempts, repairs, errors
 * when invalid, original_raw when replaced} (repairs and errors borrowed;
 * NULL repairs: none).  Returns 0, or -1 with no memory (w unchanged).
 */
static int
set_validate(struct work *w, int valid, int attempts, json_t *repairs,
    json_t *errors)
{
	json_t *v;

	/* "o" steals: a new empty array, or a new reference to repairs. */
	v = json_pack("{s:b, s:i, s:o}", "valid", valid, "attempts",
	    attempts, "repairs", repairs ? json_incref(repairs) :
	    json_array());
	if (v == NULL)
		return -1;
	if (!valid && errors != NULL &&
	    json_object_set(v, "errors", errors) != 0) {
		json_decref(v);
		return -1;
	}
	if (w->orig != NULL &&
	    json_object_set(v, "original_raw", w->orig) != 0) {
		json_decref(v);
		return -1;
	}
	json_decref(w->validate);
	w->validate = v;
	w->valid = valid;
	w->attempts = attempts;
	w->repairs = json_array_size(repairs);
	w->closed = 0;
	return 0;
}

/*
 * Add to w.validate (made by set_validate()) what --close and the search
 * over readings add: "closed" (with close: whether the answer was closed
 * locally) and "readings" (borrowed; NULL: none).  Returns 0, or -1 out
 * of memory.
 */
static int
set_readings(struct work *w, int close, const json_t *repairs,
    json_t *readings)
{
	json_t *r;
	int closed = 0;
	size_t i;

	json_array_foreach(repairs, i, r)
		if (strcmp(json_string_value(r), "closed") == 0)
			closed = 1;
	if (close && json_object_set_new(w->validate, "closed",
	    json_boolean(closed)) != 0)
		return -1;
	if (readings != NULL &&
	    json_object_set(w->validate, "readings", readings) != 0)
		return -1;
	w->closed = close && closed;
	return 0;
}

/*
 * Put the counts of w's cost into w.validate (made by set_validate()).
 * Returns 0, or -1 out of memory.
 */
static int
set_cost(struct work *w)
{
	return saop_llm_cost_put(w->validate, &w->cost);
}

/*
 * The data of a CORRECTION_ANSWERED event: the attempt and what its call
 * cost (one).  Returns a new object, or NULL out of memory.
 */
static json_t *
answered_data(int attempt, const struct saop_llm_cost *one)
{
	json_t *d = json_pack("{s:i}", "attempt", attempt);

	if (saop_llm_cost_put(d, one) != 0) {
		json_decref(d);
		d = NULL;
	}
	return d;
}

/*
 * d (stolen), the data of a CORRECTION_ANSWERED event, marked as a refused
 * answer ("refused": true).  Returns it, or NULL out of memory.
 */
static json_t *
refused_data(json_t *d)
{
	if (d != NULL && json_object_set_new(d, "refused", json_true()) != 0) {
		json_decref(d);
		d = NULL;
	}
	return d;
}

/*
 * Log the event name with data (stolen) for the record g was read from,
 * when there is a store.  Returns 0, or -SAOP_ENOMEM when data could not
 * be made; a failure to write it is kept in the store (saop_event()).
 */
static int
event(const struct saop_validate_opts *o, const struct given *g,
    const char *name, json_t *data, struct saop_err *e)
{
	if (o->store == NULL) {
		json_decref(data);
		return 0;
	}
	if (data == NULL)
		return nomem(e);
	saop_event(o->store, g->task_id != NULL ? g->task_id : "", g->turn,
	    name, data, NULL);
	json_decref(data);
	return 0;
}

/*
 * Run o's checks on v, the answer the schema passed (g gives the task
 * and turn).  Returns 1 when all pass; 0 when one fails, *errors then
 * replaced by its one error (path "check:N"); or a negative code.
 */
static int
run_checks(const struct saop_validate_opts *o, const struct given *g,
    const json_t *v, json_t **errors, struct saop_err *e)
{
	char *text, *msg, path[32];
	size_t i;
	int rc = 1;

	if ((text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY |
	    JSON_PRESERVE_ORDER)) == NULL)
		return nomem(e);
	for (i = 0; i < o->nchecks && rc == 1; i++) {
		rc = saop_check_run(o->checks[i], g->task_id, g->turn, text,
		    strlen(text), &msg, e);
		if (rc != 0)
			continue;
		snprintf(path, sizeof(path), "check:%zu", i + 1);
		json_decref(*errors);
		*errors = json_pack("[{s:s, s:s, s:s++}]", "path", path,
		    "keyword", "check", "message", path, ": ", msg);
		free(msg);
		if (*errors == NULL)
			rc = nomem(e);
	}
	free(text);
	return rc;
}

/*
 * correction_counted() for the request g read: -SAOP_EDATA (NULL, e
 * filled) when the record has one that is not an object.
 */
static json_t *
correction_for(const struct saop_schema *s, const struct given *g,
    const char *raw, size_t len, const json_t *errors, size_t *sent,
    struct saop_err *e)
{
	if (g->bad_request) {
		saop__fail(e, SAOP_EDATA, 0, "request is not an object");
		return NULL;
	}
	return correction_counted(s, g->request, raw, len, errors, sent, e);
}

/*
 * The correction request rec's answer would need (see saop.h): 1 with
 * *request (new), 0 when none is needed, or a negative code.
 */
int
saop_validate_plan(const json_t *rec, const struct saop_validate_opts *o,
    json_t **request, struct saop_err *e)
{
	struct given g;
	json_t *v, *errors, *repairs;
	int rc;

	*request = NULL;
	read_given(rec, &g);
	if (g.raw == NULL)
		return saop__fail(e, SAOP_EDATA, 0, "the record has no raw "
		    "text");
	rc = saop_validate_text(o->schema, o->no_repair, g.raw, g.len, &v,
	    &errors, &repairs, e);
	if (rc == 1 && o->nchecks > 0)
		rc = run_checks(o, &g, v, &errors, e);
	json_decref(v);
	json_decref(repairs);
	if (rc != 0) {
		json_decref(errors);
		return rc < 0 ? rc : 0;
	}
	*request = correction_for(o->schema, &g, g.raw, g.len, errors, NULL,
	    e);
	json_decref(errors);
	return *request != NULL ? 1 : -e->code;
}

/*
 * The protocol on the answer g holds, into w: judge it (repair, parse,
 * schema, checks); while it is invalid and a model is given, log
 * MALFORMED_RESPONSE, send a correction turn and judge its answer, at
 * most o->max_retries times, then escalate (MAX_RETRIES_EXCEEDED, the
 * task's status).  keep: keep the valid value for the envelope.  Returns
 * 0, or a negative code with e filled (w then holds what was known).
 */
static int
correct(const struct given *g, const struct saop_validate_opts *o,
    int keep, struct work *w, struct saop_err *e)
{
	struct saop_llm_answer a;
	struct saop_err be;
	struct saop_llm_cost one;
	json_t *v = NULL, *errors = NULL, *repairs = NULL, *readings = NULL;
	json_t *req;
	const char *raw = g->raw;
	size_t sent, len = g->len, max = o->max_answer ? o->max_answer :
	    SAOP_MAX_RECORD_BYTES;
	/* A tool call's arguments are never closed into a call that runs. */
	int rc, attempts = 0, close = o->close && !g->tool;

	saop_err_clear(e);
	if (raw == NULL) {
		errors = json_pack("[{s:s, s:s, s:s}]", "path", "", "keyword",
		    "raw", "message", "the record has no raw text to validate");
		if (errors == NULL || set_validate(w, 0, 0, NULL, errors) != 0)
			goto oom;
		w->state = SAOP_STATE_INVALID;
		rc = 0;
		goto out;
	}
	for (;;) {
		json_decref(readings);
		rc = validate_text(o->schema, o->no_repair, close, keep ||
		    o->nchecks > 0, raw, len, &v, &errors, &repairs, &readings,
		    e);
		if (rc == 1 && o->nchecks > 0)
			rc = run_checks(o, g, v, &errors, e);
		if (rc < 0)
			goto out;
		if (rc == 1) {
			if (set_validate(w, 1, attempts, repairs, NULL) != 0 ||
			    set_readings(w, o->close, repairs, NULL) != 0)
				goto oom;
			if (keep) {
				w->envelope = v;
				v = NULL;
			}
			w->state = SAOP_STATE_OK;
			rc = 0;
			goto out;
		}
		json_decref(v);
		v = NULL;
		if (set_validate(w, 0, attempts, repairs, errors) != 0 ||
		    set_readings(w, o->close, repairs, readings) != 0)
			goto oom;
		/* A bare truncation is saop-resume's to fix, not ours. */
		if (o->model.call == NULL) {
			w->state = g->state == SAOP_STATE_TRUNCATED ?
			    SAOP_STATE_TRUNCATED : SAOP_STATE_INVALID;
			goto out;
		}
		/* Under --close, a cut tool call goes on to correction. */
		if (g->state == SAOP_STATE_TRUNCATED && !(o->close && g->tool))
			goto out;
		if (attempts >= o->max_retries) {
			w->state = SAOP_STATE_USER_ESCALATION;
			if ((rc = event(o, g, SAOP_EVENT_MAX_RETRIES_EXCEEDED,
			    json_pack("{s:i, s:O}", "attempts", attempts,
			    "errors", errors), e)) < 0)
				goto out;
			if (o->store != NULL && (rc = saop_task_set_status(
			    o->store, g->task_id, SAOP_TASK_USER_ESCALATION,
			    SAOP_REASON_MAX_RETRIES_EXCEEDED, e)) < 0)
				goto out;
			rc = 0;
			goto out;
		}
		attempts++;
		if ((rc = event(o, g, SAOP_EVENT_MALFORMED_RESPONSE,
		    json_pack("{s:i, s:O}", "attempt", attempts, "errors",
		    errors), e)) < 0)
			goto out;
		sent = 0;
		if ((req = correction_for(o->schema, g, raw, len, errors, &sent,
		    e)) == NULL) {
			rc = -e->code;
			goto out;
		}
		if (o->budget != NULL &&
		    saop_budget_check(o->budget, req, &be) != 0) {
			/* Over --max-cost: a person decides, as when the
			 * retries are spent; the error names the limit. */
			json_decref(req);
			if (set_validate(w, 0, attempts - 1, repairs,
			    errors) != 0)
				goto oom;
			w->state = SAOP_STATE_USER_ESCALATION;
			if (o->store != NULL && (rc = saop_task_set_status(
			    o->store, g->task_id, SAOP_TASK_USER_ESCALATION,
			    SAOP_REASON_MAX_COST_EXCEEDED, e)) < 0)
				goto out;
			*e = be;
			rc = -SAOP_EBUDGET;
			goto out;
		}
		memset(&a, 0, sizeof(a));
		a.prompt_tokens = a.completion_tokens = -1;
		a.cached_tokens = a.reasoning_tokens = -1;
		rc = saop_model_call(&o->model, req, &a, e);
		json_decref(req);
		if (o->budget != NULL)
			saop_budget_spend(o->budget, &a);
		if (rc == 0 && a.raw_len > max)
			rc = saop__fail(e, SAOP_ELIMIT, 0, "the answer to "
			    "correction turn %d is %zu bytes, over the limit "
			    "of %zu (raise it with --max-record)", attempts,
			    a.raw_len, max);
		if (rc < 0 && strcmp(a.finish_reason, "refusal") == 0) {
			/* A refusal is an answer, and paid: its cost counted
			 * (on the record and in an event) as any answer's. */
			saop_llm_cost_init(&one);
			saop_llm_cost_add(&one, sent, &a);
			saop_llm_cost_add(&w->cost, sent, &a);
			if (event(o, g, SAOP_EVENT_CORRECTION_ANSWERED,
			    refused_data(answered_data(attempts, &one)),
			    e) < 0) {
				saop_llm_answer_free(&a);
				rc = -SAOP_ENOMEM;
				goto out;
			}
		}
		if (rc < 0) {
			saop_llm_answer_free(&a);
			/* The record stays as it stands: the turns answered. */
			if (set_validate(w, 0, attempts - 1, repairs,
			    errors) != 0)
				goto oom;
			w->state = SAOP_STATE_INVALID;
			goto out;
		}
		/* What this turn cost: on the record and in an event. */
		saop_llm_cost_init(&one);
		saop_llm_cost_add(&one, sent, &a);
		saop_llm_cost_add(&w->cost, sent, &a);
		if ((rc = event(o, g, SAOP_EVENT_CORRECTION_ANSWERED,
		    answered_data(attempts, &one), e)) < 0) {
			saop_llm_answer_free(&a);
			goto out;
		}
		/* The answer replaces the record's; the first is kept. */
		if (w->orig == NULL &&
		    (w->orig = json_stringn(g->raw, g->len)) == NULL) {
			saop_llm_answer_free(&a);
			goto oom;
		}
		json_decref(w->raw);
		w->raw = string_lossy(a.raw, a.raw_len);
		saop_llm_answer_free(&a);
		if (w->raw == NULL)
			goto oom;
		raw = json_string_value(w->raw);
		len = json_string_length(w->raw);
		json_decref(errors);
		json_decref(repairs);
		errors = repairs = NULL;
	}
oom:
	rc = nomem(e);
out:
	/* The cost goes on whatever validate the record ends with. */
	if (w->cost.calls > 0 && set_cost(w) != 0 && rc >= 0)
		rc = nomem(e);
	json_decref(v);
	json_decref(errors);
	json_decref(repairs);
	json_decref(readings);
	return rc;
}

/*
 * Write w on rec, once and whole (saop__record_put_all()): raw (when a
 * correction replaced it), envelope and validate (the envelope first when
 * the answer was valid as it came, as the keys fall in the order they are
 * known), state; and fill out from w (g: what rec came with).  With write
 * 0, or when there is no memory to write it all, rec stays as it came and
 * out says so (its state, no errors).  Returns 0, or -1 out of memory.
 */
static int
write_outcome(json_t *rec, const struct given *g, const struct work *w,
    int write, struct saop_validate_outcome *out)
{
	enum saop_record_member m[5];
	json_t *v[5], *state = NULL, *cost;
	size_t n = 0;
	int first = w->valid && w->attempts == 0;

	memset(out, 0, sizeof(*out));
	out->state = g->state;
	out->cost = w->cost;
	if (!write)
		return 0;
	if (w->state != SAOP_STATE_NONE &&
	    (state = json_string(saop_state_name(w->state))) == NULL)
		return -1;
	/* What the correction turns cost, on the record's recovery. */
	if (saop__record_cost_with(rec, "recovery", &w->cost, &cost) != 0) {
		json_decref(state);
		return -1;
	}
	if (w->raw != NULL) {
		m[n] = SAOP_RECORD_RAW;
		v[n++] = json_incref(w->raw);
	}
	if (w->envelope != NULL && first) {
		m[n] = SAOP_RECORD_ENVELOPE;
		v[n++] = json_incref(w->envelope);
	}
	if (w->validate != NULL) {
		m[n] = SAOP_RECORD_VALIDATE;
		v[n++] = json_incref(w->validate);
	}
	if (w->envelope != NULL && !first) {
		m[n] = SAOP_RECORD_ENVELOPE;
		v[n++] = json_incref(w->envelope);
	}
	if (cost != NULL) {
		m[n] = SAOP_RECORD_COST;
		v[n++] = cost;
	}
	if (state != NULL) {
		m[n] = SAOP_RECORD_STATE;
		v[n++] = state;
	}
	if (saop__record_put_all(rec, m, v, n) != 0)
		return -1;
	if (w->state != SAOP_STATE_NONE)
		out->state = w->state;
	out->valid = w->valid;
	out->attempts = w->attempts;
	out->repairs = w->repairs;
	out->closed = w->closed;
	out->errors = w->valid ? NULL : json_object_get(w->validate,
	    "errors");
	return 0;
}

/*
 * Validate rec and correct it (see saop.h): read it, run the protocol,
 * write the outcome.  Returns 0 with out filled, or a negative code.
 */
int
saop_validate_record(json_t *rec, const struct saop_validate_opts *o,
    struct saop_validate_outcome *out, struct saop_err *e)
{
	struct given g;
	struct work w = { NULL, NULL, NULL, NULL, SAOP_STATE_NONE, 0, 0, 0,
	    0, { 0, 0, 0, 0, 0, 0, 0 } };
	int rc;

	saop_llm_cost_init(&w.cost);
	read_given(rec, &g);
	if (o->budget != NULL)
		saop_budget_record(o->budget, rec);
	rc = correct(&g, o, !o->no_envelope, &w, e);
	/* Out of memory, w may be half made: rec stays as it came. */
	if (write_outcome(rec, &g, &w, rc != -SAOP_ENOMEM, out) != 0 &&
	    rc >= 0)
		rc = nomem(e);
	json_decref(w.validate);
	json_decref(w.envelope);
	json_decref(w.raw);
	json_decref(w.orig);
	return rc;
}
