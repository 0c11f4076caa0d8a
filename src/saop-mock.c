/* saop-mock: a stand-in model for tests, its answers and faults scripted. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cli.h"
#include "mock-bedrock.h"
#include "mock-oracle.h"
#include "mock-replay.h"

/*
 * One process, libmicrohttpd's thread per connection: a reply's delays
 * are sleeps in the connection's own thread, its body is handed to MHD
 * one piece (one SSE event) per call of the content reader, and MHD asks
 * for the next piece only once the last one has been written to the
 * socket, so that drop_after cuts after exactly that many bytes of the
 * body.  A drop is a FIN (shutdown() of the connection's socket, which
 * MHD_get_connection_info() gives) or, with "reset", an RST (see drop()),
 * then MHD_CONTENT_READER_END_WITH_ERROR: MHD closes the connection.
 */

enum {
	OPT_EXHAUSTED = CLI_OPT_FIRST_OWN,
	OPT_LOG
};

static const char *script_path;		/* --script */
static const char *oracle_path;		/* --oracle */
static const char *manner_arg;		/* --manner */
static long max_chars = -1;		/* --max-chars, -1: not given */
static int no_usage;			/* --no-usage */
static const char *replay_path;		/* --replay */
static const char *match_arg;		/* --match */
static int by_model;			/* --match model */
static const char *exhausted_arg;	/* --exhausted */
static const char *port_file;		/* --port-file */
static const char *host = "127.0.0.1";	/* --host */
static const char *log_path;		/* --log */
static const char *key_header;		/* --key-header */
static const char *key_env;		/* --key-env */
static const char *want_key;		/* its variable's value */
static long port;			/* --port */
static long max_requests;		/* --max-requests, 0: none */
static long max_seconds;		/* --max-seconds, 0: none */

/* The options of saop-mock: getopt, --help, usage, completion, page. */
static const struct cli_option options[] = {
	CLI_VALUE("script", "FILE", &script_path,
	    "the replies, one JSON object a line, served in order"),
	CLI_VALUE("oracle", "FILE", &oracle_path,
	    "the whole intended answers, carried on from what a request "
	    "shows"),
	CLI_VALUE("manner", "MANNER", &manner_arg,
	    "how --oracle carries on (honest, repeat:K, restart, blank, "
	    "fence...)"),
	CLI_COUNT("max-chars", "N", &max_chars, 1000000000,
	    "--oracle answers at most N characters a call (default 400, "
	    "0: all)"),
	CLI_FLAG("no-usage", &no_usage, "report no token usage"),
	CLI_VALUE("replay", "DIR", &replay_path,
	    "answer with the recorded answers of DIR (or one file), raw"),
	CLI_VALUE("match", "WHAT", &match_arg,
	    "with --replay: order (default, by name) or model (the "
	    "request's)"),
	CLI_OPT("exhausted", 0, OPT_EXHAUSTED, "STATUS",
	    "after the last reply answer this HTTP status (default: the "
	    "last reply again)"),
	CLI_COUNT("port", "N", &port, 65535,
	    "listen on port N (default 0: any free port)"),
	CLI_VALUE("port-file", "FILE", &port_file,
	    "once listening, write the port to FILE (whole, by rename)"),
	CLI_VALUE("host", "ADDRESS", &host,
	    "listen on ADDRESS (default 127.0.0.1)"),
	CLI_OPT("log", 0, OPT_LOG, "FILE",
	    "append one JSON line per request to FILE (never the key)"),
	CLI_VALUE("key-header", "NAME", &key_header,
	    "a header that carries the key (as $SAOP_AUTH_HEADER): not "
	    "logged"),
	CLI_VALUE("key-env", "VAR", &key_env,
	    "answer 401 to a request whose key is not $VAR's"),
	CLI_COUNT("max-requests", "N", &max_requests, LONG_MAX,
	    "end once N requests are answered (0: no limit)"),
	CLI_COUNT("max-seconds", "N", &max_seconds, 31536000,
	    "end after N seconds (0: no limit)"),
	CLI_OPTS_BASIC,
	CLI_OPTS_END
};

/* What a reply ends with, as saop reads it; each format writes its own. */
enum finish { FIN_STOP, FIN_LENGTH, FIN_TOOL, FIN_REFUSAL };

/* One reply of the script (one line). */
struct reply {
	long line;		/* its line in the script */
	const char *text;	/* the answer ("" when none) */
	int length;		/* "finish": "length" */
	const char *tool_name;	/* tool_call.name, or NULL */
	char *tool_args;	/* tool_call.arguments as text (malloc) */
	int status;		/* 0: 200 and an answer */
	long retry_after;	/* seconds, or -1 */
	long drop_after;	/* bytes of the body, or -1 */
	int reset;		/* the drop is an RST */
	long delay_ms;		/* before the first byte */
	long chunk_delay_ms;	/* between the pieces of the body */
	const char *refusal;	/* refusal text, or NULL */
	long usage_in, usage_out;	/* -1: estimated */
	char *body;		/* "body": sent as it is (malloc), or NULL */
	const char *type;	/* its Content-Type */
	const json_t *headers;	/* more response headers, or NULL */
	const struct recorded *rec;	/* "recording", or NULL */
	const char *match;	/* only for a request body holding it */
	int any_key;		/* served whatever key came */
	int served;		/* taken already (under lock) */
};

/* The script and the run's counts (under lock). */
static struct reply *replies;
static size_t nreplies;
static json_t *script_json;	/* the parsed lines: the strings' owner */
static int exhausted_status;	/* 0: the last reply repeats */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long requests;		/* requests received */
static long answered;		/* requests answered (--max-requests) */
static FILE *log_file;
static int wake[2] = { -1, -1 };	/* the main loop's self-pipe */
static volatile sig_atomic_t got_signal;
static struct cli cli_opts;

/* The wire format a request's path asks for. */
enum wire { W_OPENAI, W_RESPONSES, W_ANTHROPIC, W_GEMINI, W_BEDROCK };

/*
 * Say "saop-mock: FILE: line L: member M: msg" on stderr and exit 65: the
 * script is refused as a whole before anything listens.
 */
static _Noreturn void __attribute__((format(printf, 3, 4)))
script_error(long line, const char *member, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: line %ld: ", cli_name(), script_path, line);
	if (member != NULL)
		fprintf(stderr, "member \"%s\": ", member);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EX_DATAERR);
}

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
	    "refusal", "finish", "usage", NULL };
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
	if ((v = json_object_get(o, "any_key")) != NULL) {
		if (!json_is_boolean(v))
			script_error(line, "any_key", "not true or false");
		r->any_key = json_is_true(v);
	}
	if ((v = json_object_get(o, "recording")) != NULL) {
		char *path;
		const char *slash = strrchr(script_path, '/');

		if (!json_is_string(v))
			script_error(line, "recording", "not a string");
		if (r->body != NULL || r->status != 0 || r->drop_after >= 0)
			script_error(line, "recording", "not with \"body\", "
			    "\"status\" nor \"drop_after\"");
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
static void parse_raw(struct reply *r, const json_t *o, long line);

static void
parse_reply(struct reply *r, const json_t *o, long line)
{
	static const char *const known[] = { "text", "finish", "tool_call",
	    "status", "retry_after", "drop_after", "reset", "delay_ms",
	    "chunk_delay_ms", "refusal", "usage", "body", "type", "headers",
	    "recording", "match", "any_key", NULL };
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

		if (f == NULL || (strcmp(f, "stop") != 0 &&
		    strcmp(f, "length") != 0))
			script_error(line, "finish", "not \"stop\" nor "
			    "\"length\"");
		r->length = strcmp(f, "length") == 0;
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
	if ((v = json_object_get(o, "reset")) != NULL) {
		if (!json_is_boolean(v))
			script_error(line, "reset", "not true or false");
		if (r->drop_after < 0)
			script_error(line, "reset", "only with \"drop_after\"");
		r->reset = json_is_true(v);
	}
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

/*
 * Read the script at path: one reply per line, blank lines and lines
 * starting with '#' skipped.  Exits 66 when it cannot be read, 65 when a
 * line is not a reply or there is none.
 */
static void
load_script(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	long line = 0;

	if (f == NULL) {
		cli_warn("%s: %s", path, strerror(errno));
		exit(EX_NOINPUT);
	}
	if ((script_json = json_array()) == NULL)
		cli_die_nomem();
	while ((n = getline(&buf, &cap, f)) != -1) {
		const char *p = buf;
		json_error_t je;
		json_t *o;
		struct reply *nr;

		line++;
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		o = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &je);
		if (o == NULL)
			script_error(line, NULL, "not JSON: %s (column %d)",
			    je.text, je.column);
		if (!json_is_object(o))
			script_error(line, NULL, "a reply is a JSON object");
		if (json_array_append_new(script_json, o) != 0 ||
		    (nr = realloc(replies, (nreplies + 1) *
		    sizeof(*nr))) == NULL)
			cli_die_nomem();
		replies = nr;
		parse_reply(&replies[nreplies++], o, line);
	}
	if (ferror(f)) {
		cli_warn("%s: %s", path, strerror(errno));
		exit(EX_NOINPUT);
	}
	free(buf);
	fclose(f);
	if (nreplies == 0 && exhausted_status == 0)
		script_error(line, NULL, "the script has no reply");
}

/* ---- the body, in pieces ---- */

/* A body to send: pieces handed to MHD one by one, and the faults. */
struct answer {
	char **piece;
	size_t npiece, cap;
	size_t at, off;		/* the piece being sent, and how far */
	unsigned long long sent;	/* bytes of the body sent */
	long drop_after, chunk_delay_ms;
	int reset;
	struct MHD_Connection *conn;
	int oom;		/* a piece could not be made */
};

/* Append s (taken: freed here on failure) as a piece of a. */
static void
add_piece(struct answer *a, char *s)
{
	if (s == NULL) {
		a->oom = 1;
		return;
	}
	if (a->npiece == a->cap) {
		size_t ncap = a->cap ? a->cap * 2 : 16;
		char **np = realloc(a->piece, ncap * sizeof(*np));

		if (np == NULL) {
			free(s);
			a->oom = 1;
			return;
		}
		a->piece = np;
		a->cap = ncap;
	}
	a->piece[a->npiece++] = s;
}

/* Append o (taken) as JSON text, compact, a piece of its own. */
static void
add_json(struct answer *a, json_t *o)
{
	if (o == NULL) {
		a->oom = 1;
		return;
	}
	add_piece(a, json_dumps(o, JSON_COMPACT));
	json_decref(o);
}

/* Append o (taken) as one SSE event, with "event: name" when not NULL. */
static void
add_event(struct answer *a, const char *name, json_t *o)
{
	char *data, *ev;

	if (o == NULL || (data = json_dumps(o, JSON_COMPACT)) == NULL) {
		json_decref(o);
		a->oom = 1;
		return;
	}
	/* name may be o's own (add_typed()): o is let go after. */
	if (name != NULL ? asprintf(&ev, "event: %s\ndata: %s\n\n", name,
	    data) < 0 : asprintf(&ev, "data: %s\n\n", data) < 0)
		ev = NULL;
	json_decref(o);
	free(data);
	add_piece(a, ev);
}

/* Free a and its pieces. */
static void
answer_free(void *cls)
{
	struct answer *a = cls;
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->npiece; i++)
		free(a->piece[i]);
	free(a->piece);
	free(a);
}

/* Sleep ms milliseconds (signals do not cut it short). */
static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * End the connection of a in the middle of its body: an RST (SO_LINGER 0,
 * then MHD's close()) when a->reset, else a FIN (shutdown()).
 */
static void
drop(struct answer *a)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(a->conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);

	if (ci == NULL)
		return;
	if (a->reset) {
		struct linger lg = { 1, 0 };
		struct sockaddr none;

		/* MHD's connection thread ends with shutdown(SHUT_WR), a FIN,
		 * before its close(): the RST is sent here, by disconnecting
		 * the socket (connect() to AF_UNSPEC: Linux resets an
		 * established connection); SO_LINGER 0 makes the close an
		 * RST should the disconnect fail. */
		setsockopt(ci->connect_fd, SOL_SOCKET, SO_LINGER, &lg,
		    sizeof(lg));
		memset(&none, 0, sizeof(none));
		none.sa_family = AF_UNSPEC;
		if (connect(ci->connect_fd, &none, sizeof(none)) != 0 &&
		    cli_opts.verbose > 0)
			cli_warn("cannot reset the connection: %s",
			    strerror(errno));
	} else {
		shutdown(ci->connect_fd, SHUT_RDWR);
	}
}

/*
 * MHD's content reader: the next bytes of a's body into buf (at most
 * max), one piece at most per call, a piece after the first waited for
 * by chunk_delay_ms; the connection dropped once drop_after bytes are
 * out.  Returns the bytes given, or MHD's end of stream or error.
 */
static ssize_t
read_answer(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct answer *a = cls;
	size_t len, n;

	if (a->drop_after >= 0 && a->sent >=
	    (unsigned long long)a->drop_after) {
		drop(a);
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	if (a->at == a->npiece)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (a->off == 0 && a->at > 0 && a->chunk_delay_ms > 0)
		sleep_ms(a->chunk_delay_ms);
	len = strlen(a->piece[a->at]);
	n = len - a->off;
	if (n > max)
		n = max;
	if (a->drop_after >= 0 && n > (unsigned long long)a->drop_after -
	    a->sent)
		n = (size_t)((unsigned long long)a->drop_after - a->sent);
	memcpy(buf, a->piece[a->at] + a->off, n);
	a->off += n;
	a->sent += n;
	if (a->off == len) {
		a->at++;
		a->off = 0;
	}
	return (ssize_t)n;
}

/* ---- the four formats ---- */

/* What one answer is made of, whatever its format. */
struct said {
	const struct reply *r;
	enum finish fin;
	const char *model;
	long in, out;		/* usage; -1: none reported */
	int stream;		/* pieces as SSE events (or Gemini's array) */
	int gemini_array;	/* Gemini streaming without alt=sse */
};

/*
 * The length in bytes of the first piece of s (at most 4 characters,
 * never a character cut); 0 at the end.
 */
static size_t
piece_len(const char *s)
{
	size_t n = 0;
	int chars = 0;

	while (s[n] != '\0' && chars < 4) {
		n++;
		while ((s[n] & 0xc0) == 0x80)
			n++;
		chars++;
	}
	return n;
}

/* The next piece of *s as a new JSON string (advancing *s), or NULL. */
static json_t *
next_piece(const char **s)
{
	size_t n = piece_len(*s);
	json_t *j;

	if (n == 0)
		return NULL;
	j = json_stringn(*s, n);
	*s += n;
	return j;
}

/* The tool's arguments as a JSON object ({} when they are not one). */
static json_t *
args_object(const struct reply *r)
{
	json_t *o = json_loads(r->tool_args, 0, NULL);

	if (!json_is_object(o)) {
		json_decref(o);
		o = json_object();
	}
	return o;
}

/* An OpenAI chat completion chunk with one choice of delta and fin. */
static json_t *
openai_chunk(const struct said *s, json_t *delta, const char *fin)
{
	return json_pack("{s:s, s:s, s:i, s:s, s:[{s:i, s:o, s:o}]}",
	    "id", "chatcmpl-mock", "object", "chat.completion.chunk",
	    "created", 1700000000, "model", s->model, "choices", "index", 0,
	    "delta", delta, "finish_reason", fin != NULL ? json_string(fin) :
	    json_null());
}

/* OpenAI's finish_reason (a refusal ends "stop", the refusal beside). */
static const char *
openai_finish(enum finish f)
{
	return f == FIN_LENGTH ? "length" : f == FIN_TOOL ? "tool_calls" :
	    "stop";
}

/* OpenAI chat completions: SSE chunks, or one chat.completion. */
static void
write_openai(struct answer *a, const struct said *s)
{
	const struct reply *r = s->r;
	const char *p;
	json_t *x, *usage = s->in < 0 ? NULL : json_pack("{s:I, s:I, s:I}",
	    "prompt_tokens", (json_int_t)s->in, "completion_tokens",
	    (json_int_t)s->out, "total_tokens", (json_int_t)(s->in + s->out));

	if (!s->stream) {
		json_t *msg = json_pack("{s:s}", "role", "assistant");

		json_object_set_new(msg, "content", r->refusal != NULL ||
		    (r->tool_name != NULL && *r->text == '\0') ?
		    json_null() : json_string(r->text));
		if (r->refusal != NULL)
			json_object_set_new(msg, "refusal",
			    json_string(r->refusal));
		if (r->tool_name != NULL)
			json_object_set_new(msg, "tool_calls", json_pack(
			    "[{s:s, s:s, s:{s:s, s:s}}]", "id", "call_mock1",
			    "type", "function", "function", "name",
			    r->tool_name, "arguments", r->tool_args));
		add_json(a, json_pack("{s:s, s:s, s:i, s:s, "
		    "s:[{s:i, s:o, s:s}], s:o*}", "id", "chatcmpl-mock",
		    "object", "chat.completion", "created", 1700000000,
		    "model", s->model, "choices", "index", 0, "message", msg,
		    "finish_reason", openai_finish(s->fin), "usage", usage));
		return;
	}
	add_event(a, NULL, openai_chunk(s, r->refusal != NULL ?
	    json_pack("{s:s, s:n, s:s}", "role", "assistant", "content",
	    "refusal", "") : json_pack("{s:s, s:s}", "role", "assistant",
	    "content", ""), NULL));
	for (p = r->text; (x = next_piece(&p)) != NULL; )
		add_event(a, NULL, openai_chunk(s, json_pack("{s:o}",
		    "content", x), NULL));
	for (p = r->refusal != NULL ? r->refusal : "";
	    (x = next_piece(&p)) != NULL; )
		add_event(a, NULL, openai_chunk(s, json_pack("{s:o}",
		    "refusal", x), NULL));
	if (r->tool_name != NULL) {
		add_event(a, NULL, openai_chunk(s, json_pack(
		    "{s:[{s:i, s:s, s:s, s:{s:s, s:s}}]}", "tool_calls",
		    "index", 0, "id", "call_mock1", "type", "function",
		    "function", "name", r->tool_name, "arguments", ""), NULL));
		for (p = r->tool_args; (x = next_piece(&p)) != NULL; )
			add_event(a, NULL, openai_chunk(s, json_pack(
			    "{s:[{s:i, s:{s:o}}]}", "tool_calls", "index", 0,
			    "function", "arguments", x), NULL));
	}
	add_event(a, NULL, openai_chunk(s, json_object(),
	    openai_finish(s->fin)));
	if (usage != NULL)
		add_event(a, NULL, json_pack("{s:s, s:s, s:i, s:s, s:[], "
		    "s:o}", "id", "chatcmpl-mock", "object",
		    "chat.completion.chunk", "created", 1700000000, "model",
		    s->model, "choices", "usage", usage));
	add_piece(a, strdup("data: [DONE]\n\n"));
}

/* Anthropic's stop_reason. */
static const char *
anthropic_stop(enum finish f)
{
	static const char *const w[] = { "end_turn", "max_tokens", "tool_use",
	    "refusal" };

	return w[f];
}

/* Anthropic Messages: its SSE events, or one message. */
static void
write_anthropic(struct answer *a, const struct said *s)
{
	const struct reply *r = s->r;
	const char *p;
	json_t *x;

	if (!s->stream) {
		json_t *content = json_array();

		if (*r->text != '\0')
			json_array_append_new(content, json_pack("{s:s, s:s}",
			    "type", "text", "text", r->text));
		if (r->tool_name != NULL)
			json_array_append_new(content, json_pack(
			    "{s:s, s:s, s:s, s:o}", "type", "tool_use", "id",
			    "toolu_mock1", "name", r->tool_name, "input",
			    args_object(r)));
		add_json(a, json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:n, "
		    "s:o*}", "id", "msg_mock", "type", "message", "role",
		    "assistant", "model", s->model, "content", content,
		    "stop_reason", anthropic_stop(s->fin), "stop_sequence",
		    "usage", s->in < 0 ? NULL : json_pack("{s:I, s:I}",
		    "input_tokens", (json_int_t)s->in, "output_tokens",
		    (json_int_t)s->out)));
		return;
	}
	add_event(a, "message_start", json_pack("{s:s, s:{s:s, s:s, s:s, "
	    "s:s, s:[], s:n, s:n, s:o*}}", "type", "message_start",
	    "message", "id", "msg_mock", "type", "message", "role",
	    "assistant", "model", s->model, "content", "stop_reason",
	    "stop_sequence", "usage", s->in < 0 ? NULL : json_pack("{s:I, "
	    "s:i}", "input_tokens", (json_int_t)s->in, "output_tokens", 1)));
	add_event(a, "content_block_start", json_pack("{s:s, s:i, "
	    "s:{s:s, s:s}}", "type", "content_block_start", "index", 0,
	    "content_block", "type", "text", "text", ""));
	add_event(a, "ping", json_pack("{s:s}", "type", "ping"));
	for (p = r->text; (x = next_piece(&p)) != NULL; )
		add_event(a, "content_block_delta", json_pack("{s:s, s:i, "
		    "s:{s:s, s:o}}", "type", "content_block_delta", "index", 0,
		    "delta", "type", "text_delta", "text", x));
	add_event(a, "content_block_stop", json_pack("{s:s, s:i}", "type",
	    "content_block_stop", "index", 0));
	if (r->tool_name != NULL) {
		add_event(a, "content_block_start", json_pack("{s:s, s:i, "
		    "s:{s:s, s:s, s:s, s:{}}}", "type", "content_block_start",
		    "index", 1, "content_block", "type", "tool_use", "id",
		    "toolu_mock1", "name", r->tool_name, "input"));
		for (p = r->tool_args; (x = next_piece(&p)) != NULL; )
			add_event(a, "content_block_delta", json_pack(
			    "{s:s, s:i, s:{s:s, s:o}}", "type",
			    "content_block_delta", "index", 1, "delta", "type",
			    "input_json_delta", "partial_json", x));
		add_event(a, "content_block_stop", json_pack("{s:s, s:i}",
		    "type", "content_block_stop", "index", 1));
	}
	add_event(a, "message_delta", json_pack("{s:s, s:{s:s, s:n}, "
	    "s:o*}", "type", "message_delta", "delta", "stop_reason",
	    anthropic_stop(s->fin), "stop_sequence", "usage", s->out < 0 ?
	    NULL : json_pack("{s:I}", "output_tokens", (json_int_t)s->out)));
	add_event(a, "message_stop", json_pack("{s:s}", "type",
	    "message_stop"));
}

/* A Responses response object with status by fin (-1: in progress). */
static json_t *
responses_obj(const struct said *s, int fin, json_t *output)
{
	const char *status = fin < 0 ? "in_progress" : fin == FIN_LENGTH ?
	    "incomplete" : "completed";

	return json_pack("{s:s, s:s, s:i, s:s, s:n, s:o, s:s, s:o, s:o*}",
	    "id", "resp_mock", "object", "response", "created_at",
	    1700000000, "status", status, "error", "incomplete_details",
	    fin == FIN_LENGTH ? json_pack("{s:s}", "reason",
	    "max_output_tokens") : json_null(), "model", s->model, "output",
	    output, "usage", s->in < 0 ? NULL : json_pack("{s:I, s:I, s:I}",
	    "input_tokens", (json_int_t)s->in, "output_tokens",
	    (json_int_t)s->out, "total_tokens", (json_int_t)(s->in +
	    s->out)));
}

/* Append the Responses event o (taken) named by its own type. */
static void
add_typed(struct answer *a, json_t *o)
{
	add_event(a, json_string_value(json_object_get(o, "type")), o);
}

/* OpenAI Responses: its SSE events, or one response. */
static void
write_responses(struct answer *a, const struct said *s)
{
	const struct reply *r = s->r;
	const char *p;
	json_t *x;
	int n = 0;

	if (!s->stream) {
		json_t *out = json_array();

		if (*r->text != '\0' || r->refusal != NULL)
			json_array_append_new(out, json_pack("{s:s, s:s, s:s, "
			    "s:s, s:[o]}", "type", "message", "id", "msg_mock",
			    "status", "completed", "role", "assistant",
			    "content", r->refusal != NULL ? json_pack(
			    "{s:s, s:s}", "type", "refusal", "refusal",
			    r->refusal) : json_pack("{s:s, s:s, s:[]}", "type",
			    "output_text", "text", r->text, "annotations")));
		if (r->tool_name != NULL)
			json_array_append_new(out, json_pack("{s:s, s:s, s:s, "
			    "s:s, s:s, s:s}", "type", "function_call", "id",
			    "fc_mock", "call_id", "call_mock1", "name",
			    r->tool_name, "arguments", r->tool_args, "status",
			    "completed"));
		add_json(a, responses_obj(s, (int)s->fin, out));
		return;
	}
	add_typed(a, json_pack("{s:s, s:o}", "type", "response.created",
	    "response", responses_obj(s, -1, json_array())));
	if (*r->text != '\0' || r->refusal != NULL) {
		add_typed(a, json_pack("{s:s, s:i, s:{s:s, s:s, s:s, s:s, "
		    "s:[]}}", "type", "response.output_item.added",
		    "output_index", 0, "item", "type", "message", "id",
		    "msg_mock", "status", "in_progress", "role", "assistant",
		    "content"));
		for (p = r->text; (x = next_piece(&p)) != NULL; )
			add_typed(a, json_pack("{s:s, s:s, s:i, s:i, s:o}",
			    "type", "response.output_text.delta", "item_id",
			    "msg_mock", "output_index", 0, "content_index", 0,
			    "delta", x));
		for (p = r->refusal != NULL ? r->refusal : "";
		    (x = next_piece(&p)) != NULL; )
			add_typed(a, json_pack("{s:s, s:s, s:i, s:i, s:o}",
			    "type", "response.refusal.delta", "item_id",
			    "msg_mock", "output_index", 0, "content_index", 0,
			    "delta", x));
		n = 1;
	}
	if (r->tool_name != NULL) {
		add_typed(a, json_pack("{s:s, s:i, s:{s:s, s:s, s:s, s:s, "
		    "s:s, s:s}}", "type", "response.output_item.added",
		    "output_index", n, "item", "type", "function_call", "id",
		    "fc_mock", "call_id", "call_mock1", "name", r->tool_name,
		    "arguments", "", "status", "in_progress"));
		for (p = r->tool_args; (x = next_piece(&p)) != NULL; )
			add_typed(a, json_pack("{s:s, s:s, s:i, s:o}", "type",
			    "response.function_call_arguments.delta",
			    "item_id", "fc_mock", "output_index", n, "delta",
			    x));
	}
	add_typed(a, json_pack("{s:s, s:o}", "type", s->fin == FIN_LENGTH ?
	    "response.incomplete" : "response.completed", "response",
	    responses_obj(s, (int)s->fin, json_array())));
}

/* Gemini's finishReason. */
static const char *
gemini_finish(enum finish f)
{
	static const char *const w[] = { "STOP", "MAX_TOKENS", "STOP",
	    "SAFETY" };

	return w[f];
}

/*
 * A Gemini GenerateContentResponse of parts (taken), the last of an
 * answer (finishReason, usageMetadata) when last.
 */
static json_t *
gemini_obj(const struct said *s, json_t *parts, int last)
{
	json_t *cand = json_pack("{s:{s:o, s:s}, s:i}", "content", "parts",
	    parts, "role", "model", "index", 0);
	json_t *o;

	if (last)
		json_object_set_new(cand, "finishReason",
		    json_string(gemini_finish(s->fin)));
	o = json_pack("{s:[o], s:s, s:s}", "candidates", cand, "modelVersion",
	    s->model, "responseId", "mock");
	if (last && s->in >= 0)
		json_object_set_new(o, "usageMetadata", json_pack("{s:I, s:I, "
		    "s:I}", "promptTokenCount", (json_int_t)s->in,
		    "candidatesTokenCount", (json_int_t)s->out,
		    "totalTokenCount", (json_int_t)(s->in + s->out)));
	return o;
}

/* Append a Gemini chunk o (taken) as an event or an array's member. */
static void
add_gemini(struct answer *a, const struct said *s, json_t *o)
{
	if (!s->gemini_array) {
		add_event(a, NULL, o);
		return;
	}
	add_piece(a, strdup(a->npiece == 0 ? "[" : ",\r\n"));
	add_json(a, o);
}

/* Gemini: chunks as SSE (alt=sse) or a JSON array, or one response. */
static void
write_gemini(struct answer *a, const struct said *s)
{
	const struct reply *r = s->r;
	const char *p = r->text;
	json_t *x;

	if (!s->stream) {
		json_t *parts = json_array();

		if (*r->text != '\0')
			json_array_append_new(parts, json_pack("{s:s}", "text",
			    r->text));
		if (r->tool_name != NULL)
			json_array_append_new(parts, json_pack("{s:{s:s, s:o}}",
			    "functionCall", "name", r->tool_name, "args",
			    args_object(r)));
		add_json(a, gemini_obj(s, parts, 1));
		return;
	}
	while ((x = next_piece(&p)) != NULL) {
		int last = *p == '\0' && r->tool_name == NULL;

		add_gemini(a, s, gemini_obj(s, json_pack("[{s:o}]", "text", x),
		    last));
	}
	if (r->tool_name != NULL)
		add_gemini(a, s, gemini_obj(s, json_pack("[{s:{s:s, s:o}}]",
		    "functionCall", "name", r->tool_name, "args",
		    args_object(r)), 1));
	else if (*r->text == '\0')
		add_gemini(a, s, gemini_obj(s, json_array(), 1));
	if (s->gemini_array)
		add_piece(a, strdup("]"));
}

/* The type of an error body of HTTP status st (Anthropic's, OpenAI's). */
static const char *
error_type(int st)
{
	switch (st) {
	case 401: return "authentication_error";
	case 403: return "permission_error";
	case 404: return "not_found_error";
	case 413: return "request_too_large";
	case 429: return "rate_limit_error";
	case 503:
	case 529: return "overloaded_error";
	default: return st >= 500 ? "api_error" : "invalid_request_error";
	}
}

/* Gemini's status word of HTTP status st. */
static const char *
gemini_status(int st)
{
	switch (st) {
	case 400: return "INVALID_ARGUMENT";
	case 401: return "UNAUTHENTICATED";
	case 403: return "PERMISSION_DENIED";
	case 404: return "NOT_FOUND";
	case 429: return "RESOURCE_EXHAUSTED";
	case 500: return "INTERNAL";
	case 503: return "UNAVAILABLE";
	case 504: return "DEADLINE_EXCEEDED";
	default: return "UNKNOWN";
	}
}

/* The error body of status st with msg, as the format w writes it. */
static void
write_error(struct answer *a, enum wire w, int st, const char *msg)
{
	if (w == W_BEDROCK)
		add_json(a, bedrock_error_body(msg));
	else if (w == W_ANTHROPIC)
		add_json(a, json_pack("{s:s, s:{s:s, s:s}}", "type", "error",
		    "error", "type", error_type(st), "message", msg));
	else if (w == W_GEMINI)
		add_json(a, json_pack("{s:{s:i, s:s, s:s}}", "error", "code",
		    st, "message", msg, "status", gemini_status(st)));
	else
		add_json(a, json_pack("{s:{s:s, s:s, s:n, s:o}}", "error",
		    "message", msg, "type", error_type(st), "param", "code",
		    st == 429 ? json_string(error_type(st)) : json_null()));
}

/* ---- a request ---- */

/* A request being received: its body. */
struct call {
	char *body;
	size_t len, cap;
	int answered;		/* a reply (or an error) was queued */
};

/* The wire format of path, or -1 when it is none of the four. */
static int
wire_of(const char *path, int *gemini_stream)
{
	size_t n = strlen(path);

#define ENDS(s) (n >= sizeof(s) - 1 && \
	strcmp(path + n - (sizeof(s) - 1), (s)) == 0)
	*gemini_stream = 0;
	/* Bedrock's stream is named by its path too (src/mock-bedrock.c). */
	if (bedrock_path(path, gemini_stream))
		return W_BEDROCK;
	if (ENDS("/chat/completions"))
		return W_OPENAI;
	if (ENDS("/responses"))
		return W_RESPONSES;
	if (ENDS("/messages"))
		return W_ANTHROPIC;
	if (strstr(path, "/models/") != NULL && ENDS(":generateContent"))
		return W_GEMINI;
	if (strstr(path, "/models/") != NULL &&
	    ENDS(":streamGenerateContent")) {
		*gemini_stream = 1;
		return W_GEMINI;
	}
#undef ENDS
	return -1;
}

/* 1 when the header name (any case) carries the key, else 0. */
static int
key_name(const char *name)
{
	static const char *const keys[] = { "authorization", "x-api-key",
	    "x-goog-api-key", "api-key", "x-amz-security-token", NULL };
	size_t i;

	for (i = 0; keys[i] != NULL; i++)
		if (strcasecmp(name, keys[i]) == 0)
			return 1;
	return key_header != NULL && strcasecmp(name, key_header) == 0;
}

/* What the log gathers of a request's headers or query. */
struct seen {
	json_t *obj;
	int key;		/* a key came */
	int query;		/* the query's arguments, not headers */
	json_t *via;		/* the names it came in (lower case) */
};

/*
 * MHD's iterator over a request's headers (or query arguments): each
 * into seen's object (names lower-cased, repeats joined by ", "), the
 * key only noted.  Returns MHD_YES (go on).
 */
static enum MHD_Result
see_value(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct seen *s = cls;
	const char *had;
	char name[256];
	size_t i;

	if (s->query ? strcmp(key, "key") == 0 : key_name(key)) {
		s->key = 1;
		for (i = 0; key[i] != '\0' && i + 1 < sizeof(name); i++)
			name[i] = (char)tolower((unsigned char)key[i]);
		name[i] = '\0';
		json_array_append_new(s->via, json_string(s->query ? "?key" :
		    name));
		return MHD_YES;
	}
	for (i = 0; key[i] != '\0' && i + 1 < sizeof(name); i++)
		name[i] = s->query ? key[i] : (char)(key[i] >= 'A' &&
		    key[i] <= 'Z' ? key[i] + 32 : key[i]);
	name[i] = '\0';
	had = json_string_value(json_object_get(s->obj, name));
	if (had != NULL) {
		char *both;

		if (asprintf(&both, "%s, %s", had, value ? value : "") >= 0) {
			json_object_set_new(s->obj, name, json_string(both));
			free(both);
		}
	} else {
		json_object_set_new(s->obj, name, json_string(value ? value :
		    ""));
	}
	return MHD_YES;
}

static int key_state(struct MHD_Connection *c);

/*
 * Append the log line of request n (its reply's script line, or the
 * number of its recording, 0 when none) to --log: method, path, query,
 * headers but the key, whether a key came, the body (as JSON when it
 * is), what --oracle made of it (oracle, when not NULL) and with --replay
 * the recording's file name (fixture).  Under lock.
 */
static void
log_request(struct MHD_Connection *c, long n, const char *method,
    const char *url, const struct call *k, long line, json_t *oracle,
    const char *fixture)
{
	json_t *via = json_array();
	struct seen h = { json_object(), 0, 0, via },
	    q = { json_object(), 0, 1, via };
	json_t *body, *o;
	char *text;
	int bs;

	MHD_get_connection_values(c, MHD_HEADER_KIND, see_value, &h);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, see_value, &q);
	body = json_loadb(k->body != NULL ? k->body : "", k->len, 0, NULL);
	if (body == NULL)
		body = json_stringn_nocheck(k->body != NULL ? k->body : "",
		    k->len);
	o = json_pack("{s:I, s:s, s:s, s:o, s:o, s:b, s:o, s:I, s:O*}", "n",
	    (json_int_t)n, "method", method, "path", url, "query", q.obj,
	    "headers", h.obj, "key", h.key || q.key, "body", body, "reply",
	    (json_int_t)line, "oracle", oracle);
	if (o != NULL && json_array_size(via) > 0)
		json_object_set(o, "key_in", via);
	json_decref(via);
	if (o != NULL && fixture != NULL)
		json_object_set_new(o, "replay", json_string(fixture));
	if (o != NULL && want_key != NULL)
		json_object_set_new(o, "key_ok", json_boolean((bedrock_path(url,
		    &bs) ? bedrock_key_state(c, method, url, k->body, k->len,
		    want_key) : key_state(c)) == 1));
	if (o == NULL || (text = json_dumps(o, JSON_COMPACT)) == NULL) {
		json_decref(o);
		return;
	}
	fprintf(log_file, "%s\n", text);
	fflush(log_file);
	free(text);
	json_decref(o);
}

/* The model a request names (its body's, or Gemini's path's). */
static const char *
model_of(const json_t *body, const char *url, char *buf, size_t size)
{
	const char *m = json_string_value(json_object_get(body, "model"));
	const char *p = strstr(url, "/models/");

	if (m != NULL)
		return m;
	if (p != NULL) {
		const char *end = strchr(p + 8, ':');

		snprintf(buf, size, "%.*s", end != NULL ? (int)(end - p - 8) :
		    0, p + 8);
		if (*buf != '\0')
			return buf;
	}
	return "saop-mock";
}

/* Add the headers of the object extra (NULL: none) to resp. */
static void
add_headers(struct MHD_Response *resp, const json_t *extra)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)extra, key, v)
		MHD_add_response_header(resp, key, json_string_value(v));
}

/*
 * Queue the response of a (taken) with status st and content type
 * ctype, with Retry-After when retry_after >= 0 and the headers of extra
 * (an object, or NULL).  Returns MHD's result.
 */
static enum MHD_Result
queue(struct MHD_Connection *c, struct answer *a, int st, const char *ctype,
    long retry_after, int chunked, const json_t *extra)
{
	struct MHD_Response *resp;
	unsigned long long total = 0;
	enum MHD_Result rc;
	size_t i;

	a->conn = c;
	for (i = 0; i < a->npiece; i++)
		total += strlen(a->piece[i]);
	resp = MHD_create_response_from_callback(chunked ? MHD_SIZE_UNKNOWN :
	    total, 64 * 1024, read_answer, a, answer_free);
	if (resp == NULL) {
		answer_free(a);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (chunked)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
		    "no-cache");
	if (retry_after >= 0) {
		char v[32];

		snprintf(v, sizeof(v), "%ld", retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
	}
	add_headers(resp, extra);
	rc = MHD_queue_response(c, (unsigned)st, resp);
	MHD_destroy_response(resp);
	return rc;
}

/* The tokens of n bytes, as saop-mock estimates them: about 4 bytes each. */
static long
tokens_of(size_t n)
{
	return (long)(n / 4) + 1;
}

/*
 * The reply r (filled, its strings o's) to a request of len bytes of
 * --oracle's answer o: its text and finish, or a 400 that says why the
 * request could not be placed; the usage reported is put on o's log.
 * Returns r.
 */
static const struct reply *
oracle_reply(struct oracle_reply *o, size_t len, struct reply *r)
{
	memset(r, 0, sizeof(*r));
	r->line = o->line;
	r->retry_after = r->drop_after = -1;
	r->usage_in = tokens_of(len);
	r->usage_out = tokens_of(o->len);
	if (o->text == NULL) {
		r->status = 400;
		r->text = o->error;
		return r;
	}
	r->text = o->text;
	r->length = o->length;
	json_object_set_new(o->log, "usage", no_usage ? json_null() :
	    json_pack("{s:I, s:I}", "input", (json_int_t)r->usage_in,
	    "output", (json_int_t)r->usage_out));
	return r;
}

/*
 * The reply for the request k, under lock: the first not taken yet
 * whose "match" (when it has one) is in k's body; when none is left, the
 * last reply, or NULL with --exhausted.
 */
static const struct reply *
take_reply(const struct call *k)
{
	size_t i;

	for (i = 0; i < nreplies; i++) {
		if (replies[i].served || (replies[i].match != NULL &&
		    (k->body == NULL || strstr(k->body, replies[i].match) ==
		    NULL)))
			continue;
		replies[i].served = 1;
		return &replies[i];
	}
	return exhausted_status == 0 ? &replies[nreplies - 1] : NULL;
}

/* The key of a request: an Authorization: Bearer's, or a key header's. */
static const char *
key_of(struct MHD_Connection *c)
{
	static const char *const names[] = { "x-api-key", "x-goog-api-key",
	    "api-key", NULL };
	const char *v;
	size_t i;

	if (key_header != NULL && (v = MHD_lookup_connection_value(c,
	    MHD_HEADER_KIND, key_header)) != NULL)
		return v;
	for (i = 0; names[i] != NULL; i++)
		if ((v = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		    names[i])) != NULL)
			return v;
	v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "authorization");
	if (v != NULL && strncmp(v, "Bearer ", 7) == 0)
		return v + 7;
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "key");
}

/* With --key-env: 1 when the request's key is $VAR's, 0 none, -1 another. */
static int
key_state(struct MHD_Connection *c)
{
	const char *got = key_of(c);

	if (got == NULL)
		return 0;
	return strcmp(got, want_key) == 0 ? 1 : -1;
}

/*
 * Answer with the raw body of r (its status, type and headers) or its
 * recording (as --replay does, r's headers added).  a (taken) carries
 * the drop.  Returns MHD's result.
 */
static enum MHD_Result
respond_raw(struct MHD_Connection *c, const struct reply *r,
    struct answer *a)
{
	struct MHD_Response *resp;
	enum MHD_Result rc;
	unsigned st;

	if (r->body != NULL) {
		char *b = strdup(r->body);

		add_piece(a, b);
		if (a->oom) {
			answer_free(a);
			return MHD_NO;
		}
		return queue(c, a, r->status != 0 ? r->status : 200, r->type,
		    r->retry_after, 0, r->headers);
	}
	answer_free(a);
	if ((resp = replay_response(r->rec, &st)) == NULL)
		return MHD_NO;
	add_headers(resp, r->headers);
	rc = MHD_queue_response(c, st, resp);
	MHD_destroy_response(resp);
	return rc;
}

/*
 * Answer a request of --replay whose body is all in k: take its
 * recording (the next one, or the next of the request's model), log the
 * request, and queue the recording raw; a 404 in the path's format when
 * no recording is for its model, --exhausted's status when they are all
 * served.  a (taken) holds an error's body.  Returns MHD's result.
 */
static enum MHD_Result
respond_replay(struct MHD_Connection *c, const char *url, const char *method,
    struct call *k, struct answer *a)
{
	json_t *body = json_loadb(k->body != NULL ? k->body : "", k->len, 0,
	    NULL);
	const struct recorded *rec = NULL;
	char mbuf[128], *msg = NULL;
	const char *model;
	int gemini_stream, w = wire_of(url, &gemini_stream), matched = 1;
	unsigned st;
	long n;
	enum MHD_Result rc;

	model = model_of(body, url, mbuf, sizeof(mbuf));
	pthread_mutex_lock(&lock);
	n = ++requests;
	if (w >= 0 && strcmp(method, "POST") == 0)
		rec = replay_pick(model, by_model, exhausted_status == 0,
		    &matched);
	if (log_file != NULL)
		log_request(c, n, method, url, k, rec != NULL ?
		    replay_number(rec) : 0, NULL, rec != NULL ?
		    replay_name(rec) : NULL);
	pthread_mutex_unlock(&lock);
	if (cli_opts.verbose > 0)
		cli_warn("%s %s: %s", method, url, rec != NULL ?
		    replay_name(rec) : "error");
	if (rec != NULL) {
		struct MHD_Response *resp;

		json_decref(body);
		answer_free(a);
		if ((resp = replay_response(rec, &st)) == NULL)
			return MHD_NO;
		rc = MHD_queue_response(c, st, resp);
		MHD_destroy_response(resp);
		return rc;
	}
	if (w < 0 || strcmp(method, "POST") != 0)
		st = w < 0 ? 404 : 405;
	else
		st = matched ? (unsigned)exhausted_status : 404;
	if (st == 404 && w >= 0 && asprintf(&msg, "saop-mock: no recorded "
	    "answer for model %s", model) < 0)
		msg = NULL;
	write_error(a, w < 0 ? W_OPENAI : (enum wire)w, (int)st,
	    msg != NULL ? msg : st == 404 ? "saop-mock: no model at this "
	    "path" : st == 405 ? "saop-mock: only POST" :
	    "saop-mock: the recordings are exhausted");
	free(msg);
	json_decref(body);
	return queue(c, a, (int)st, "application/json", -1, 0, NULL);
}

/*
 * Answer a request whose body is all in k: take the next reply (or
 * --oracle's), log the request, wait delay_ms, and queue the reply in the
 * format of the path.  Returns MHD's result.
 */
static enum MHD_Result
respond(struct MHD_Connection *c, const char *url, const char *method,
    struct call *k)
{
	struct answer *a = calloc(1, sizeof(*a));
	const struct reply *r = NULL;
	json_t *body = json_loadb(k->body != NULL ? k->body : "", k->len, 0,
	    NULL);
	struct said s;
	struct oracle_reply o;
	struct reply orep;
	char mbuf[128];
	int gemini_stream = 0, w = wire_of(url, &gemini_stream), ks;
	long n;
	enum MHD_Result rc;

	k->answered = 1;
	memset(&o, 0, sizeof(o));
	if (a != NULL && oracle_path != NULL && w >= 0 &&
	    strcmp(method, "POST") == 0) {
		if (oracle_answer(body, &o) < 0) {
			free(a);
			a = NULL;
		} else {
			r = oracle_reply(&o, k->len, &orep);
		}
	}
	if (a == NULL) {
		json_decref(body);
		return MHD_NO;
	}
	a->drop_after = -1;
	if (replay_path != NULL) {
		json_decref(body);
		return respond_replay(c, url, method, k, a);
	}
	pthread_mutex_lock(&lock);
	n = ++requests;
	if (oracle_path == NULL && w >= 0 && strcmp(method, "POST") == 0)
		r = take_reply(k);
	if (log_file != NULL)
		log_request(c, n, method, url, k, r != NULL ? r->line : 0,
		    o.log, NULL);
	pthread_mutex_unlock(&lock);
	if (cli_opts.verbose > 0)
		cli_warn("%s %s: %s", method, url, r != NULL ? "reply" :
		    "error");
	if (w < 0 || strcmp(method, "POST") != 0) {
		int st = w < 0 ? 404 : 405;

		write_error(a, w < 0 ? W_OPENAI : (enum wire)w, st, w < 0 ?
		    "saop-mock: no model at this path" :
		    "saop-mock: only POST");
		json_decref(body);
		oracle_reply_free(&o);
		return queue(c, a, st, "application/json", -1, 0, NULL);
	}
	if (r == NULL) {
		write_error(a, (enum wire)w, exhausted_status,
		    "saop-mock: the script is exhausted");
		json_decref(body);
		oracle_reply_free(&o);
		return queue(c, a, exhausted_status, "application/json", -1, 0,
		    NULL);
	}
	a->drop_after = r->drop_after;
	a->reset = r->reset;
	a->chunk_delay_ms = r->chunk_delay_ms;
	if (r->delay_ms > 0)
		sleep_ms(r->delay_ms);
	if (want_key != NULL && !r->any_key && (ks = w == W_BEDROCK ?
	    bedrock_key_state(c, method, url, k->body, k->len, want_key) :
	    key_state(c)) != 1) {
		write_error(a, (enum wire)w, 401, ks == 0 ?
		    "saop-mock: no key" : "saop-mock: wrong key");
		json_decref(body);
		return queue(c, a, 401, "application/json", -1, 0, NULL);
	}
	if (r->body != NULL || r->rec != NULL) {
		json_decref(body);
		return respond_raw(c, r, a);
	}
	if (r->status != 0 && w != W_BEDROCK) {
		write_error(a, (enum wire)w, r->status, *r->text != '\0' ?
		    r->text : "saop-mock: the script's error");
		json_decref(body);
		oracle_reply_free(&o);
		return queue(c, a, r->status, "application/json",
		    r->retry_after, 0, r->headers);
	}
	memset(&s, 0, sizeof(s));
	s.r = r;
	s.fin = r->refusal != NULL ? FIN_REFUSAL : r->length ? FIN_LENGTH :
	    r->tool_name != NULL ? FIN_TOOL : FIN_STOP;
	s.model = model_of(body, url, mbuf, sizeof(mbuf));
	s.in = r->usage_in >= 0 ? r->usage_in : tokens_of(k->len);
	s.out = r->usage_out >= 0 ? r->usage_out : tokens_of(strlen(r->text) +
	    (r->refusal ? strlen(r->refusal) : 0) + (r->tool_args ?
	    strlen(r->tool_args) : 0));
	if (no_usage)
		s.in = s.out = -1;
	if (w == W_GEMINI) {
		const char *alt = MHD_lookup_connection_value(c,
		    MHD_GET_ARGUMENT_KIND, "alt");

		s.stream = gemini_stream;
		s.gemini_array = gemini_stream && (alt == NULL ||
		    strcmp(alt, "sse") != 0);
	} else {
		s.stream = json_is_true(json_object_get(body, "stream"));
	}
	switch (w) {
	case W_ANTHROPIC:
		write_anthropic(a, &s);
		break;
	case W_RESPONSES:
		write_responses(a, &s);
		break;
	case W_GEMINI:
		write_gemini(a, &s);
		break;
	case W_BEDROCK:
		json_decref(body);
		oracle_reply_free(&o);
		answer_free(a);
		return bedrock_queue(c, &(const struct bedrock_answer){ r->text,
		    r->tool_name, r->tool_args, r->refusal, (int)s.fin, s.in,
		    s.out, r->status, r->retry_after, r->drop_after,
		    r->chunk_delay_ms, r->reset, gemini_stream, r->headers });
	default:
		write_openai(a, &s);
		break;
	}
	oracle_reply_free(&o);
	if (a->oom) {
		answer_free(a);
		json_decref(body);
		return MHD_NO;
	}
	rc = queue(c, a, 200, s.stream && !s.gemini_array ?
	    "text/event-stream" : "application/json", -1, s.stream,
	    r->headers);
	json_decref(body);
	return rc;
}

/*
 * MHD's handler of a request: gather the body over the calls, then
 * respond().  Returns MHD_YES to go on, MHD_NO to close the connection.
 */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **con_cls)
{
	struct call *k = *con_cls;

	if (k == NULL) {
		if ((k = calloc(1, sizeof(*k))) == NULL)
			return MHD_NO;
		*con_cls = k;
		return MHD_YES;
	}
	if (*upload_size > 0) {
		if (k->len + *upload_size + 1 > k->cap) {
			size_t ncap = (k->len + *upload_size + 1) * 2;
			char *nb;

			if (ncap > 256u * 1024 * 1024 ||
			    (nb = realloc(k->body, ncap)) == NULL)
				return MHD_NO;
			k->body = nb;
			k->cap = ncap;
		}
		memcpy(k->body + k->len, upload, *upload_size);
		k->len += *upload_size;
		k->body[k->len] = '\0';
		*upload_size = 0;
		return MHD_YES;
	}
	if (k->answered)
		return MHD_YES;
	return respond(c, url, method, k);
}

/*
 * MHD's end of a request: count it answered (and wake the main loop at
 * --max-requests), free its call.  Returns nothing.
 */
static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode why)
{
	struct call *k = *con_cls;
	int wakeup = 0;

	if (k == NULL)
		return;
	if (k->answered) {
		pthread_mutex_lock(&lock);
		answered++;
		wakeup = max_requests > 0 && answered == max_requests;
		pthread_mutex_unlock(&lock);
	}
	if (wakeup && write(wake[1], "r", 1) < 0)
		cli_warn("cannot wake the main loop: %s", strerror(errno));
	free(k->body);
	free(k);
	*con_cls = NULL;
}

/* SIGTERM, SIGINT: end the run (the main loop wakes). */
static void
on_signal(int sig)
{
	int err = errno;

	got_signal = sig;
	if (write(wake[1], "s", 1) < 0) {
		/* The pipe is full: the loop is awake already. */
	}
	errno = err;
}

/* Write port to port_file, whole: a temporary file renamed over it. */
static void
write_port_file(unsigned port_no)
{
	char *tmp;
	FILE *f;

	if (asprintf(&tmp, "%s.%ld.t", port_file, (long)getpid()) < 0)
		cli_die_nomem();
	if ((f = fopen(tmp, "w")) == NULL ||
	    fprintf(f, "%u\n", port_no) < 0 || fclose(f) != 0 ||
	    rename(tmp, port_file) != 0) {
		cli_warn("cannot write %s: %s", port_file, strerror(errno));
		unlink(tmp);
		exit(EX_CANTCREAT);
	}
	free(tmp);
}

/* Start MHD on --host and --port; exits 69 when it cannot listen. */
static struct MHD_Daemon *
start(void)
{
	struct addrinfo hints, *ai = NULL;
	struct MHD_Daemon *d;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION |
	    MHD_USE_INTERNAL_POLLING_THREAD;
	char service[16];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(service, sizeof(service), "%ld", port);
	if ((rc = getaddrinfo(host, service, &hints, &ai)) != 0) {
		cli_warn("--host %s: %s", host, gai_strerror(rc));
		exit(EX_UNAVAILABLE);
	}
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (cli_opts.verbose > 1)
		flags |= MHD_USE_ERROR_LOG;
	d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request,
	    NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
	    MHD_OPTION_END);
	freeaddrinfo(ai);
	if (d == NULL) {
		cli_warn("cannot listen on %s port %ld", host, port);
		exit(EX_UNAVAILABLE);
	}
	return d;
}

/* saop-mock's own option: --exhausted, --log.  Returns 1 (taken). */
static int
own_opt(void *arg, int ch, const char *optarg)
{
	if (ch == OPT_EXHAUSTED)
		exhausted_arg = optarg;
	else if (ch == OPT_LOG)
		log_path = optarg;
	else
		return 0;
	return 1;
}

/*
 * Serve the script until a signal, --max-requests or --max-seconds.
 * Exits 0; 1 when --max-seconds came before --max-requests requests.
 */
int
main(int argc, char *argv[])
{
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *di;
	struct sigaction sa;
	struct timespec t0, now;
	int first, status = 0;

	cli_init("saop-mock", options, "",
	    "Answer as a model would, in the four wire formats saop speaks\n"
	    "(OpenAI chat completions and Responses, Anthropic Messages,\n"
	    "Gemini), from a script of replies: text, finish reasons, tool\n"
	    "calls, refusals, HTTP errors, delays and dropped connections;\n"
	    "or, with --oracle, as a model that knows the whole answers and\n"
	    "carries on from what a request shows it wrote, or with recorded\n"
	    "answers, raw (--replay).");
	cli_help_exits("Exit status: 0 stopped (signal, --max-requests, "
	    "--max-seconds), 1 --max-seconds\nbefore --max-requests, "
	    "65 a bad script, oracle file or recording;");
	first = cli_getopt(&cli_opts, argc, argv, own_opt, NULL);
	cli_operands(argc, argv, first, 0);
	if ((script_path != NULL) + (oracle_path != NULL) +
	    (replay_path != NULL) != 1)
		cli_usage_error(script_path == NULL && oracle_path == NULL &&
		    replay_path == NULL ? "one of --script FILE, --oracle "
		    "FILE and --replay DIR is needed" : "--script, --oracle "
		    "and --replay: one of them only");
	if (oracle_path == NULL && (manner_arg != NULL || max_chars >= 0))
		cli_usage_error("--manner and --max-chars are --oracle's");
	if (oracle_path != NULL && exhausted_arg != NULL)
		cli_usage_error("--exhausted is --script's");
	if (oracle_path != NULL && oracle_defaults(manner_arg,
	    max_chars >= 0 ? max_chars : 400) != 0)
		cli_usage_error("--manner %s: not honest, repeat:K, restart, "
		    "restart-string, restart-noquote, blank, fence, prose nor "
		    "whole", manner_arg);
	if (match_arg != NULL) {
		if (replay_path == NULL)
			cli_usage_error("--match is for --replay");
		if (strcmp(match_arg, "model") == 0)
			by_model = 1;
		else if (strcmp(match_arg, "order") != 0)
			cli_usage_error("--match: \"%s\" is neither \"order\" "
			    "nor \"model\"", match_arg);
	}
	if (exhausted_arg != NULL) {
		exhausted_status = (int)cli_count("--exhausted", exhausted_arg,
		    599);
		if (exhausted_status < 400)
			cli_usage_error("--exhausted: %d is not an error "
			    "status (400 to 599)", exhausted_status);
	}
	if (key_env != NULL && (want_key = cli_env_named(key_env)) == NULL)
		cli_usage_error("--key-env: $%s is not set", key_env);
	if (replay_path != NULL)
		replay_load(replay_path);
	else if (oracle_path != NULL)
		oracle_load(oracle_path);
	else
		load_script(script_path);
	if (log_path != NULL && (log_file = fopen(log_path, "a")) == NULL) {
		cli_warn("cannot write %s: %s", log_path, strerror(errno));
		exit(EX_CANTCREAT);
	}
	if (pipe(wake) != 0) {
		cli_warn("pipe: %s", strerror(errno));
		exit(EX_OSERR);
	}
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	d = start();
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	if (port_file != NULL)
		write_port_file(di != NULL ? di->port : (unsigned)port);
	if (cli_opts.verbose > 0)
		cli_warn("listening on %s port %u", host, di != NULL ?
		    di->port : (unsigned)port);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!got_signal) {
		struct pollfd pf = { wake[0], POLLIN, 0 };
		long ms = -1;
		char c;

		if (max_seconds > 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			ms = max_seconds * 1000 - ((now.tv_sec - t0.tv_sec) *
			    1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
			if (ms <= 0) {
				if (max_requests > 0)
					status = 1;
				break;
			}
		}
		if (poll(&pf, 1, ms > INT_MAX ? INT_MAX : (int)ms) > 0 &&
		    read(wake[0], &c, 1) == 1 && c == 'r')
			break;
	}
	MHD_stop_daemon(d);
	if (status != 0 && !cli_opts.quiet)
		cli_warn("%ld seconds passed with %ld of %ld requests answered",
		    max_seconds, answered, max_requests);
	if (log_file != NULL)
		fclose(log_file);
	for (size_t i = 0; i < nreplies; i++) {
		free(replies[i].tool_args);
		free(replies[i].body);
	}
	free(replies);
	json_decref(script_json);
	oracle_free();
	replay_free();
	return cli_exit(status);
}
