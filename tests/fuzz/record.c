/*
 * record.c: fuzz target for the record reader (saop_reader_* in
 * lib/record.c, and the fast parser it tries first, lib/fastjson.c).  The
 * input is the NDJSON text, read from a memfd as from a file, once with
 * the default line limit and once with a small one.  Properties:
 *  - it never crashes, and reading always comes to an end;
 *  - every line is a record (a JSON object), an error naming that line
 *    (SAOP_EDATA, SAOP_ELIMIT), or blank, and the reader goes on after an
 *    error: records + errors + blank lines = lines;
 *  - a record is the tree jansson builds from its line, or, when jansson
 *    cannot hold it (too deep, a number too large), the line is valid
 *    JSON for the scanner.
 */
#include "config.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "saop.h"
#include "fuzz.h"

/* A blank line, as the reader skips it: only spaces, tabs and CRs. */
static int
blank(const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

/*
 * The lines of data: their count in *nlines, the blank ones in *nblank
 * (a blank line longer than max_line is not one: the reader names any
 * line over its limit without holding it), and (into start, end, at most
 * cap of them) where each starts and ends.
 */
static void
split_lines(const uint8_t *data, size_t size, size_t max_line,
    size_t *nlines, size_t *nblank, size_t *start, size_t *end, size_t cap)
{
	size_t pos = 0, n = 0, b = 0, e;
	const uint8_t *nl;

	while (pos < size) {
		nl = memchr(data + pos, '\n', size - pos);
		e = nl != NULL ? (size_t)(nl - data) : size;
		if (n < cap) {
			start[n] = pos;
			end[n] = e;
		}
		b += blank(data + pos, e - pos) && e - pos <= max_line;
		n++;
		pos = e + 1;
	}
	*nlines = n;
	*nblank = b;
}

/* 1 when the scanner finds s (n bytes) complete JSON. */
static int
complete(const uint8_t *s, size_t n)
{
	struct saop_detect_result r;
	int v;

	FUZZ_CHECK(saop_detect_buffer((const char *)s, n, 0, &r) == 0);
	v = r.verdict == SAOP_COMPLETE;
	saop_detect_result_free(&r);
	return v;
}

/* Read data through a reader with limit max_line and check every line. */
static void
read_all(const char *path, const uint8_t *data, size_t size, size_t max_line)
{
	enum { CAP = 4096 };
	static size_t start[CAP], end[CAP];
	struct saop_reader *r;
	struct saop_err e;
	json_error_t je;
	json_t *rec, *want;
	size_t nlines, nblank, records = 0, errors = 0, ln;
	long last = 0;
	int rc;

	split_lines(data, size, max_line ? max_line : SAOP_MAX_RECORD_BYTES,
	    &nlines, &nblank, start, end, CAP);
	FUZZ_CHECK((r = saop_reader_open(path, max_line, &e)) != NULL);
	for (;;) {
		rc = saop_reader_next(r, &rec, &e);
		if (rc == 0)
			break;
		FUZZ_CHECK(records + errors < nlines);
		if (rc == 1) {
			FUZZ_CHECK(json_is_object(rec));
			ln = (size_t)saop_reader_line(r);
			FUZZ_CHECK(ln > (size_t)last && ln <= nlines);
			last = (long)ln;
			records++;
			if (ln <= CAP) {
				/* The fast path builds jansson's tree. */
				want = json_loadb((const char *)data +
				    start[ln - 1], end[ln - 1] - start[ln - 1],
				    JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL,
				    &je);
				if (want != NULL)
					FUZZ_CHECK(json_equal(rec, want));
				else	/* Beyond jansson: valid JSON still. */
					FUZZ_CHECK(complete(data +
					    start[ln - 1], end[ln - 1] -
					    start[ln - 1]));
				json_decref(want);
			}
			json_decref(rec);
			continue;
		}
		FUZZ_CHECK(rec == NULL);
		FUZZ_CHECK(e.code == SAOP_EDATA || e.code == SAOP_ELIMIT);
		FUZZ_CHECK(e.line > last && (size_t)e.line <= nlines);
		FUZZ_CHECK(e.msg[0] != '\0');
		last = e.line;
		errors++;
	}
	FUZZ_CHECK(records + errors + nblank == nlines);
	saop_reader_close(r);
}

/* libFuzzer's entry point: read data as a record file, twice. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	size_t done = 0;
	ssize_t w;
	int fd;

	FUZZ_CHECK((fd = memfd_create("saop-fuzz-record", 0)) >= 0);
	while (done < size) {
		w = write(fd, data + done, size - done);
		FUZZ_CHECK(w > 0);
		done += (size_t)w;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	read_all(path, data, size, 0);
	read_all(path, data, size, 48);
	close(fd);
	return 0;
}
