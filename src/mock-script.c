/* mock-script.c: saop-mock's --script: the replies read and handed out. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock.h"
#include "mock-lines.h"
#include "mock-replay.h"

/* The script (the replies' served flags under the server's lock). */
static struct reply *replies;
static size_t nreplies;
static json_t *script_json;	/* the parsed lines: the strings' owner */

/* A line of the script refused (mock_line_error()): exits 65. */
#define script_error(line, member, ...) \
	mock_line_error(script_path, (line), (member), __VA_ARGS__)

/*
 * The integer member name of o in [min, max], or def when o lacks it;
 * exits 65 naming line and member when it is not one.
 */
static long
int_member(const json_t *o, const char *name, long min, long max, long def,
    long line)
{
	const json_t *v = json_object_get(o, name);

	if (v == NULL)
		return def;
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		script_error(line, name, "not a whole number from %ld to %ld",
		    min, max);
	return (long)json_integer_value(v);
}

/*
 * The boolean member name of o: 1 when true, 0 when false or missing;
 * exits 65 naming line and member when it is neither.
 */
static int
bool_member(const json_t *o, const char *name, long line)
{
	const json_t *v = json_object_get(o, name);

	if (v != NULL && !json_is_boolean(v))
		script_error(line, name, "not true or false");
	return json_is_true(v);
}

/* Refuse (exit 65) any member of o not in the NULL-ended list known. */
static void
only_members(const json_t *o, const char *const *known, const char *in,
    long line)
{
	const char *key;
	const json_t *v;
	size_t i;

	json_object_foreach((json_t *)o, key, v) {
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (known[i] == NULL) {
			if (in != NULL)
				script_error(line, in, "unknown member \"%s\"",
				    key);
			script_error(line, key, "not a member of a reply");
		}
	}
}

/*
 * Fill r's members of a raw answer and of its choice from the script
 * line o (line): body, type, headers, recording, match, any_key.  Exits
 * 65 on a bad member, 66 when a recording cannot be read.
 */
static void
parse_raw(struct reply *r, const json_t *o, long line)
{
	static const char *const not_raw[] = { "text", "tool_call",
	    "refusal", "finish", "usage", "stream_error", "stream",
	    "comments", NULL };
	const json_t *v;
	size_t i;

	if ((v = json_object_get(o, "body")) != NULL) {
		r->body = json_is_string(v) ? strdup(json_string_value(v)) :
		    json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (r->body == NULL)
			cli_die_nomem();
	}
	r->type = "application/json";
	if ((v = json_object_get(o, "type")) != NULL) {
		if (!json_is_string(v) || r->body == NULL)
			script_error(line, "type", "a string, only with "
			    "\"body\"");
		r->type = json_string_value(v);
	}
	if ((v = json_object_get(o, "headers")) != NULL) {
		const char *key;
		const json_t *h;

		json_object_foreach((json_t *)v, key, h)
			if (!json_is_string(h))
				script_error(line, "headers", "\"%s\" is not "
				    "a string", key);
		if (!json_is_object(v))
			script_error(line, "headers", "not an object");
		r->headers = v;
	}
	if ((v = json_object_get(o, "match")) != NULL) {
		if (!json_is_string(v))
			script_error(line, "match", "not a string");
		r->match = json_string_value(v);
	}
	r->any_key = bool_member(o, "any_key", line);
	if ((v = json_object_get(o, "recording")) != NULL) {
		char *path;
		const char *slash = strrchr(script_path, '/');

		if (!json_is_string(v))
			script_error(line, "recording", "not a string");
		if (r->body != NULL || r->status != 0)
			script_error(line, "recording", "not with \"body\" "
			    "nor \"status\"");
		if (asprintf(&path, "%.*s%s", json_string_value(v)[0] ==
		    '/' || slash == NULL ? 0 : (int)(slash - script_path + 1),
		    script_path, json_string_value(v)) < 0)
			cli_die_nomem();
		r->rec = replay_load_file(path);
		free(path);
	}
	if (r->body == NULL && r->rec == NULL)
		return;
	for (i = 0; not_raw[i] != NULL; i++)
		if (json_object_get(o, not_raw[i]) != NULL)
			script_error(line, not_raw[i], "not with \"%s\"",
			    r->body != NULL ? "body" : "recording");
}

/* Fill r from the script line o (line): exits 65 on a bad member. */
static void
parse_reply(struct reply *r, const json_t *o, long line)
{
	static const char *const known[] = { "text", "finish", "tool_call",
	    "status", "retry_after", "drop_after", "reset", "delay_ms",
	    "chunk_delay_ms", "refusal", "usage", "body", "type", "headers",
	    "recording", "match", "any_key", "split", "no_answer", "chunks",
	    "until_close", "stream_error", "stream", "comments", NULL };
	static const char *const error_known[] = { "status", "message",
	    NULL };
	static const char *const tool_known[] = { "name", "arguments", NULL };
	static const char *const usage_known[] = { "input", "output", NULL };
	const json_t *v;

	only_members(o, known, NULL, line);
	memset(r, 0, sizeof(*r));
	r->line = line;
	r->text = "";
	if ((v = json_object_get(o, "text")) != NULL) {
		if (!json_is_string(v))
			script_error(line, "text", "not a string");
		r->text = json_string_value(v);
	}
	if ((v = json_object_get(o, "finish")) != NULL) {
		const char *f = json_string_value(v);

		if (!json_is_null(v) && (f == NULL || (strcmp(f, "stop") !=
		    0 && strcmp(f, "length") != 0)))
			script_error(line, "finish", "not \"stop\", "
			    "\"length\" nor null");
		r->length = f != NULL && strcmp(f, "length") == 0;
		r->no_finish = json_is_null(v);
	}
	if ((v = json_object_get(o, "tool_call")) != NULL) {
		const json_t *a;

		if (!json_is_object(v))
			script_error(line, "tool_call", "not an object");
		only_members(v, tool_known, "tool_call", line);
		r->tool_name = json_string_value(json_object_get(v, "name"));
		if (r->tool_name == NULL || *r->tool_name == '\0')
			script_error(line, "tool_call", "no \"name\" (a "
			    "string)");
		a = json_object_get(v, "arguments");
		if (a == NULL)
			r->tool_args = strdup("{}");
		else if (json_is_string(a))
			r->tool_args = strdup(json_string_value(a));
		else if (json_is_object(a))
			r->tool_args = json_dumps(a, JSON_COMPACT);
		else
			script_error(line, "tool_call", "\"arguments\" is "
			    "neither a string nor an object");
		if (r->tool_args == NULL)
			cli_die_nomem();
	}
	r->status = (int)int_member(o, "status", 200, 599, 0, line);
	if (r->status == 200)
		r->status = 0;
	else if (r->status != 0 && r->status < 400)
		script_error(line, "status", "%d is not an error status "
		    "(400 to 599)", r->status);
	r->retry_after = int_member(o, "retry_after", 0, 86400, -1, line);
	if (r->retry_after >= 0 && r->status != 429 && r->status < 500)
		script_error(line, "retry_after", "only with a status 429 or "
		    "5xx");
	r->drop_after = int_member(o, "drop_after", 0, LONG_MAX, -1, line);
	r->reset = bool_member(o, "reset", line);
	if (json_object_get(o, "reset") != NULL && r->drop_after < 0 &&
	    json_object_get(o, "no_answer") == NULL)
		script_error(line, "reset", "only with \"drop_after\" or "
		    "\"no_answer\"");
	r->split = int_member(o, "split", 1, 1000000000, 4, line);
	if ((v = json_object_get(o, "chunks")) != NULL) {
		static const char *const chunks_known[] = { "seed", "max",
		    NULL };

		if (json_is_object(v)) {
			only_members(v, chunks_known, "chunks", line);
			r->random_chunks = 1;
			r->seed = (unsigned long)int_member(v, "seed", 0,
			    LONG_MAX, 1, line);
			r->chunks = int_member(v, "max", 1, 1000000000, 40,
			    line);
		} else {
			r->chunks = int_member(o, "chunks", 1, 1000000000, 0,
			    line);
		}
	}
	r->until_close = bool_member(o, "until_close", line);
	r->no_answer = bool_member(o, "no_answer", line);
	r->delay_ms = int_member(o, "delay_ms", 0, 3600000, 0, line);
	r->chunk_delay_ms = int_member(o, "chunk_delay_ms", 0, 3600000, 0,
	    line);
	if ((v = json_object_get(o, "refusal")) != NULL) {
		if (json_is_true(v))
			r->refusal = "I'm sorry, I can't help with that.";
		else if (json_is_string(v))
			r->refusal = json_string_value(v);
		else
			script_error(line, "refusal", "neither a string nor "
			    "true");
	}
	if ((v = json_object_get(o, "stream_error")) != NULL) {
		const json_t *st;

		if (!json_is_object(v))
			script_error(line, "stream_error", "not an object");
		only_members(v, error_known, "stream_error", line);
		st = json_object_get(v, "status");
		if (st != NULL && (!json_is_integer(st) ||
		    json_integer_value(st) < 400 ||
		    json_integer_value(st) > 599))
			script_error(line, "stream_error", "\"status\" is not "
			    "a whole number from 400 to 599");
		r->stream_error = st != NULL ? (int)json_integer_value(st) :
		    529;
		r->stream_error_msg = "saop-mock: an error in the stream";
		if (json_object_get(v, "message") != NULL &&
		    (r->stream_error_msg = json_string_value(json_object_get(v,
		    "message"))) == NULL)
			script_error(line, "stream_error", "\"message\" is not "
			    "a string");
	}
	r->stream = -1;
	if ((v = json_object_get(o, "stream")) != NULL) {
		if (!json_is_boolean(v))
			script_error(line, "stream", "not true or false");
		r->stream = json_is_true(v);
	}
	r->comments = int_member(o, "comments", 0, 1000, 0, line);
	r->usage_in = r->usage_out = -1;
	if ((v = json_object_get(o, "usage")) != NULL) {
		if (!json_is_object(v))
			script_error(line, "usage", "not an object");
		only_members(v, usage_known, "usage", line);
		r->usage_in = int_member(v, "input", 0, LONG_MAX, -1, line);
		r->usage_out = int_member(v, "output", 0, LONG_MAX, -1, line);
	}
	parse_raw(r, o, line);
}

/* mock_read_lines()'s callback: the script's line o (line) a reply. */
static void
script_line(void *arg, json_t *o, long line)
{
	struct reply *nr;

	(void)arg;
	if (!json_is_object(o))
		script_error(line, NULL, "a reply is a JSON object");
	if ((nr = realloc(replies, (nreplies + 1) * sizeof(*nr))) == NULL)
		cli_die_nomem();
	replies = nr;
	parse_reply(&replies[nreplies++], o, line);
}

/*
 * Read the script at path: one reply per line, blank lines and lines
 * starting with '#' skipped.  Exits 66 when it cannot be read, 65 when a
 * line is not a reply or there is none.
 */
void
script_load(const char *path)
{
	long line;

	script_json = mock_read_lines(path, 0, script_line, NULL, &line);
	if (nreplies == 0 && exhausted_status == 0)
		script_error(line, NULL, "the script has no reply");
}

/*
 * The reply for a request of body, under lock: the first not taken yet
 * whose "match" (when it has one) is in body; when none is left, the
 * last reply, or NULL with --exhausted.
 */
const struct reply *
script_take(const char *body)
{
	size_t i;

	for (i = 0; i < nreplies; i++) {
		if (replies[i].served || (replies[i].match != NULL &&
		    (body == NULL || strstr(body, replies[i].match) == NULL)))
			continue;
		replies[i].served = 1;
		return &replies[i];
	}
	return exhausted_status == 0 ? &replies[nreplies - 1] : NULL;
}

/* Free what script_load() read. */
void
script_free(void)
{
	size_t i;

	for (i = 0; i < nreplies; i++) {
		free(replies[i].tool_args);
		free(replies[i].body);
	}
	free(replies);
	replies = NULL;
	nreplies = 0;
	json_decref(script_json);
	script_json = NULL;
}
