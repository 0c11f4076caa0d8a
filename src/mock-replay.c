/* mock-replay.c: saop-mock's --replay: recorded answers served raw. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "mock-replay.h"

/*
 * A recording is a body file as the provider sent it (SSE, NDJSON or
 * JSON), with beside it, optionally, STEM.headers.json ({"status": N,
 * "headers": {...}}, the recorded status line and headers) and
 * STEM.request.json (the request that asked for it: its "model" is the
 * recording's).  The body is served byte for byte; of the headers, those
 * that describe the recorded transfer (length, chunks, compression,
 * connection, date) are left to MHD, which sends its own.
 */

struct recorded {
	char *name;		/* the file's name */
	long number;		/* from 1, in name order */
	char *body;		/* the bytes as recorded */
	size_t len;
	unsigned status;
	json_t *headers;	/* {name: value}, or NULL */
	char *model;		/* the recorded model, or NULL */
	int stream;		/* SSE or NDJSON: sent chunked */
	int served;
};

static struct recorded *recs;
static size_t nrecs;
static const struct recorded *last_served;
static struct recorded **singles;	/* replay_load_file()'s */
static size_t nsingles;

/*
 * The contents of the file path (malloc, NUL after its *len bytes), or
 * NULL with errno set.
 */
static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL, *nb;
	size_t cap = 0, n = 0, got;

	if (f == NULL)
		return NULL;
	do {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			if ((nb = realloc(buf, cap + 1)) == NULL) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* 1 when s ends with suffix, else 0. */
static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* 1 when the file name is a recorded body, else 0. */
static int
is_body(const char *name)
{
	if (name[0] == '.' || ends_with(name, ".headers.json") ||
	    ends_with(name, ".request.json"))
		return 0;
	return ends_with(name, ".sse") || ends_with(name, ".ndjson") ||
	    ends_with(name, ".json");
}

/*
 * The stem of the body file path (malloc): without its extension and
 * without a ".response" before it.
 */
static char *
stem_of(const char *path)
{
	const char *dot = strrchr(path, '.');
	size_t n = strlen(path);
	char *s;

	if (dot != NULL && strchr(dot, '/') == NULL)
		n = (size_t)(dot - path);
	if (n >= 9 && strncmp(path + n - 9, ".response", 9) == 0)
		n -= 9;
	if (asprintf(&s, "%.*s", (int)n, path) < 0)
		cli_die_nomem();
	return s;
}

/*
 * The first "model" (or Gemini's "modelVersion") string member of v,
 * depth first, an object's own members before those inside; or NULL.
 */
static const char *
find_model(const json_t *v)
{
	const char *m;
	const json_t *x;
	size_t i;

	if (json_is_object(v)) {
		const char *key;

		if ((m = json_string_value(json_object_get(v, "model"))) ||
		    (m = json_string_value(json_object_get(v,
		    "modelVersion"))))
			return m;
		json_object_foreach((json_t *)v, key, x)
			if ((m = find_model(x)) != NULL)
				return m;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if ((m = find_model(x)) != NULL)
				return m;
	}
	return NULL;
}

/*
 * The model of the body b (len bytes): that of its JSON, or of the first
 * SSE data line or NDJSON line that names one.  Returns a malloc'd copy
 * or NULL.
 */
static char *
body_model(const char *b, size_t len)
{
	json_t *j = json_loadb(b, len, 0, NULL);
	const char *p = b, *end = b + len;
	char *m = NULL;

	if (j != NULL) {
		const char *f = find_model(j);

		m = f != NULL ? strdup(f) : NULL;
		json_decref(j);
		return m;
	}
	while (p < end && m == NULL) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *q = p, *e = nl != NULL ? nl : end;

		if (e - q >= 5 && strncmp(q, "data:", 5) == 0)
			q += 5;
		if ((j = json_loadb(q, (size_t)(e - q), 0, NULL)) != NULL) {
			const char *f = find_model(j);

			m = f != NULL ? strdup(f) : NULL;
			json_decref(j);
		}
		p = e + 1;
	}
	return m;
}

/*
 * The status a name implies when no headers file says it: its first
 * dash-separated field of three digits from 400 to 599
 * (anthropic-429-rate-limit.json), else 200.
 */
static unsigned
status_of_name(const char *name)
{
	const char *p = name;

	while ((p = strchr(p, '-')) != NULL) {
		p++;
		if (isdigit((unsigned char)p[0]) &&
		    isdigit((unsigned char)p[1]) &&
		    isdigit((unsigned char)p[2]) &&
		    (p[3] == '-' || p[3] == '.')) {
			unsigned st = (unsigned)atoi(p);

			if (st >= 400 && st <= 599)
				return st;
		}
	}
	return 200;
}

/* Fill rec from the body file path (name: its base name). */
static void
load_recording(struct recorded *rec, const char *path, const char *name)
{
	char *stem = stem_of(path), *side;
	json_t *h, *req;

	memset(rec, 0, sizeof(*rec));
	if ((rec->name = strdup(name)) == NULL)
		cli_die_nomem();
	if ((rec->body = slurp(path, &rec->len)) == NULL) {
		cli_warn("%s: %s", path, strerror(errno));
		exit(EX_NOINPUT);
	}
	rec->stream = ends_with(name, ".sse") || ends_with(name, ".ndjson");
	rec->status = status_of_name(name);
	if (asprintf(&side, "%s.headers.json", stem) < 0)
		cli_die_nomem();
	if ((h = json_load_file(side, 0, NULL)) != NULL) {
		json_t *st = json_object_get(h, "status");
		json_t *hd = json_object_get(h, "headers");

		if (!json_is_integer(st) || json_integer_value(st) < 100 ||
		    json_integer_value(st) > 599 ||
		    (hd != NULL && !json_is_object(hd))) {
			cli_warn("%s: not {\"status\": 100 to 599, "
			    "\"headers\": {...}}", side);
			exit(EX_DATAERR);
		}
		rec->status = (unsigned)json_integer_value(st);
		rec->headers = json_incref(hd);
		json_decref(h);
	} else if (access(side, F_OK) == 0) {
		cli_warn("%s: not JSON", side);
		exit(EX_DATAERR);
	}
	free(side);
	if (asprintf(&side, "%s.request.json", stem) < 0)
		cli_die_nomem();
	req = json_load_file(side, 0, NULL);
	if (json_string_value(json_object_get(req, "model")) != NULL)
		rec->model = strdup(json_string_value(json_object_get(req,
		    "model")));
	else
		rec->model = body_model(rec->body, rec->len);
	json_decref(req);
	free(side);
	free(stem);
}

/* scandir()'s choice: 1 when the entry e is a recorded body. */
static int
body_entry(const struct dirent *e)
{
	return is_body(e->d_name);
}

/* scandir()'s order: the names' bytes (strcmp(), whatever the locale). */
static int
by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* See mock-replay.h. */
void
replay_load(const char *path)
{
	struct stat sb;
	struct dirent **names = NULL;
	size_t i;
	int n;

	if (stat(path, &sb) != 0) {
		cli_warn("%s: %s", path, strerror(errno));
		exit(EX_NOINPUT);
	}
	if (!S_ISDIR(sb.st_mode)) {
		const char *base = strrchr(path, '/');

		if ((recs = calloc(1, sizeof(*recs))) == NULL)
			cli_die_nomem();
		load_recording(&recs[0], path, base != NULL ? base + 1 : path);
		recs[0].number = 1;
		nrecs = 1;
		return;
	}
	if ((n = scandir(path, &names, body_entry, by_name)) < 0) {
		cli_warn("%s: %s", path, strerror(errno));
		exit(EX_NOINPUT);
	}
	if (n == 0) {
		cli_warn("%s: no recorded answer (*.sse, *.ndjson, *.json)",
		    path);
		exit(EX_DATAERR);
	}
	if ((recs = calloc((size_t)n, sizeof(*recs))) == NULL)
		cli_die_nomem();
	for (i = 0; i < (size_t)n; i++) {
		char *full;

		if (asprintf(&full, "%s/%s", path, names[i]->d_name) < 0)
			cli_die_nomem();
		load_recording(&recs[i], full, names[i]->d_name);
		recs[i].number = (long)i + 1;
		free(full);
		free(names[i]);
	}
	free(names);
	nrecs = (size_t)n;
}

/*
 * 1 when the recorded model rec answers a request for model: the same,
 * or model and a dated snapshot's suffix ("-" and a digit: gpt-4o asked,
 * gpt-4o-2024-08-06 recorded); a recording that names no model (an
 * error's body with no STEM.request.json) answers none.
 */
static int
model_matches(const char *rec, const char *model)
{
	size_t n;

	if (rec == NULL || model == NULL)
		return 0;
	n = strlen(model);
	return strncmp(rec, model, n) == 0 && (rec[n] == '\0' ||
	    (rec[n] == '-' && isdigit((unsigned char)rec[n + 1])));
}

/* See mock-replay.h. */
const struct recorded *
replay_load_file(const char *path)
{
	const char *base = strrchr(path, '/');
	struct recorded **nl;

	struct recorded *rec = malloc(sizeof(*rec));

	if (rec == NULL || (nl = realloc(singles, (nsingles + 1) *
	    sizeof(*nl))) == NULL) {
		free(rec);
		cli_die_nomem();
		return NULL;	/* not reached: for cppcheck */
	}
	singles = nl;
	load_recording(rec, path, base != NULL ? base + 1 : path);
	rec->number = 1;
	singles[nsingles++] = rec;
	return rec;
}

/* See mock-replay.h. */
const struct recorded *
replay_pick(const char *model, int by_model, int repeat, int *matched)
{
	const struct recorded *last = NULL;
	size_t i;

	*matched = 1;
	for (i = 0; i < nrecs; i++) {
		if (by_model && !model_matches(recs[i].model, model))
			continue;
		if (!recs[i].served) {
			recs[i].served = 1;
			last_served = &recs[i];
			return &recs[i];
		}
		last = &recs[i];
	}
	if (by_model && last == NULL)
		*matched = 0;
	if (!repeat)
		return NULL;
	return by_model ? last : last_served;
}

/* See mock-replay.h. */
const char *
replay_name(const struct recorded *rec)
{
	return rec->name;
}

/* See mock-replay.h. */
long
replay_number(const struct recorded *rec)
{
	return rec->number;
}

/* MHD's content reader of a recording: its bytes from pos, at most max. */
static ssize_t
read_recorded(void *cls, uint64_t pos, char *buf, size_t max)
{
	const struct recorded *rec = cls;
	size_t n;

	if (pos >= rec->len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = rec->len - (size_t)pos;
	if (n > max)
		n = max;
	memcpy(buf, rec->body + pos, n);
	return (ssize_t)n;
}

/* 1 when the recorded header name is the transfer's (MHD's own). */
static int
transfer_header(const char *name)
{
	static const char *const skip[] = { "content-length",
	    "transfer-encoding", "content-encoding", "connection",
	    "keep-alive", "date", NULL };
	size_t i;

	for (i = 0; skip[i] != NULL; i++)
		if (strcasecmp(name, skip[i]) == 0)
			return 1;
	return 0;
}

/* See mock-replay.h. */
struct MHD_Response *
replay_response(const struct recorded *rec, unsigned *status)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_callback(rec->stream ?
	    MHD_SIZE_UNKNOWN : rec->len, 64 * 1024, read_recorded,
	    (void *)rec, NULL);
	if (resp == NULL)
		return NULL;
	replay_headers(rec, resp);
	*status = rec->status;
	return resp;
}

/* See mock-replay.h. */
const char *
replay_body(const struct recorded *rec, size_t *len, int *stream,
    unsigned *status)
{
	*len = rec->len;
	*stream = rec->stream;
	*status = rec->status;
	return rec->body;
}

/* See mock-replay.h. */
void
replay_headers(const struct recorded *rec, struct MHD_Response *resp)
{
	const char *key;
	json_t *v;
	int typed = 0;

	json_object_foreach(rec->headers, key, v) {
		if (!json_is_string(v) || transfer_header(key))
			continue;
		if (strcasecmp(key, "content-type") == 0)
			typed = 1;
		MHD_add_response_header(resp, key, json_string_value(v));
	}
	if (!typed)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		    ends_with(rec->name, ".sse") ? "text/event-stream" :
		    ends_with(rec->name, ".ndjson") ? "application/x-ndjson" :
		    "application/json");
}

/* Free what rec holds (not rec). */
static void
recorded_free(struct recorded *rec)
{
	free(rec->name);
	free(rec->body);
	free(rec->model);
	json_decref(rec->headers);
}

/* See mock-replay.h. */
void
replay_free(void)
{
	size_t i;

	for (i = 0; i < nrecs; i++)
		recorded_free(&recs[i]);
	for (i = 0; i < nsingles; i++) {
		recorded_free(singles[i]);
		free(singles[i]);
	}
	free(singles);
	singles = NULL;
	nsingles = 0;
	free(recs);
	recs = NULL;
	nrecs = 0;
}
