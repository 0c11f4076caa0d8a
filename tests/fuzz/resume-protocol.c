/*
 * resume-protocol.c: fuzz target for the continuation of a cut answer,
 * the whole protocol against a scripted model (tests/resume-sim.h):
 * saop-resume's (saop_resume_record()) and saop-suspend's
 * (saop_suspend_turn() after a broken stream).  The input is 8 bytes of
 * script, then the intended answer (kept only when it scans complete and
 * jansson reads it):
 *   0, 1  where it is cut (a 16-bit number, modulo its length; moved to
 *         a cut the answer is truncated at, whole characters)
 *   2     the manner of the first continuation (modulo the manners) and,
 *         in bit 7, cut it too (after 40 + byte 3 bytes)
 *   3     its repeat k (1..20), and the limit of a cut one
 *   4     the manner of the answers after it
 *   5     their repeat k
 *   6     bit 0: the prefill form, else the user turn; bit 1: saop-suspend,
 *         else saop-resume
 *   7     unused
 * Properties (for every script):
 *  - never RESOLVED (saop-suspend: never a complete raw) with another
 *    value than the intended answer's;
 *  - never state OK without RESOLVED;
 *  - never a received byte lost: the raw begins with every byte received
 *    up to the resume point, and the bytes the model sent are all counted.
 * Not asked: a cut answer that is nothing but the start of a line of prose
 * ("Here is ", cut before its line feed) inside a string reads as that
 * string's text, and no merge can tell the two apart; a cut answer here
 * holds 40 bytes or more, past the model's line of prose (30 bytes), as
 * any answer cut by a real max_tokens does.  Nor an answer with a string
 * that goes on, after 8 bytes or more of its text, with all of that text
 * again ("}}}|}}}}" then "}}}|}}}}..."): a model restarting the string
 * writes just that, and saop-resume(1) reads the restart, the likelier
 * (the rule of "How the pieces are joined"); such answers are skipped.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saop-private.h"
#include "resume-sim.h"
#include "fuzz.h"

static struct saop_store *store;
static char dir[64];

/* At exit: the store closed, its files and directory removed. */
static void
remove_store(void)
{
	static const char *const files[] = {
		"state.sqlite", "state.sqlite-wal", "state.sqlite-shm"
	};
	char path[96];
	size_t i;

	saop_store_close(store);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* The store of the run (saop-suspend saves its turns): made once, in
 * /dev/shm when there is one, removed at exit. */
static struct saop_store *
the_store(void)
{
	char path[96];
	struct saop_err e;

	if (store != NULL)
		return store;
	snprintf(dir, sizeof(dir), "%s/saop-fuzz-protocol.XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	FUZZ_CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/state.sqlite", dir);
	FUZZ_CHECK((store = saop_store_open(path, &e)) != NULL);
	atexit(remove_store);
	return store;
}

/* 1 when a (n bytes) is an answer the model could mean: complete, bare
 * JSON that jansson reads, else 0. */
static int
intended(const char *a, size_t n)
{
	struct saop_detect_result r;
	json_t *v;
	int ok;

	FUZZ_CHECK(saop_detect_buffer(a, n, 0, &r) == 0);
	ok = r.verdict == SAOP_COMPLETE;
	saop_detect_result_free(&r);
	if (!ok || memchr(a, '\0', n) != NULL)
		return 0;
	v = json_loadb(a, n, JSON_DECODE_ANY, NULL);
	json_decref(v);
	return v != NULL && saop_utf8_valid(a, n) == n;
}

/* 1 when a string of a (n bytes) goes on, after 8 bytes or more of its
 * text, with all of that text again (see above), else 0. */
static int
restarts_itself(const char *a, size_t n)
{
	size_t i, start = 0, len;
	int str = 0, esc = 0;

	for (i = 0; i < n; i++) {
		if (!str) {
			if (a[i] == '"') {
				str = 1;
				start = i + 1;
			}
			continue;
		}
		len = i - start;
		if (!esc && len >= 8 && len <= n - i &&
		    memcmp(a + i, a + start, len) == 0)
			return 1;
		if (esc)
			esc = 0;
		else if (a[i] == '\\')
			esc = 1;
		else if (a[i] == '"')
			str = 0;
	}
	return 0;
}

/* Where a (n bytes) is cut for the number c: the first cut from c (mod n)
 * on, whole characters, that leaves it truncated; 0 when none. */
static size_t
cut_at(const char *a, size_t n, size_t c)
{
	struct saop_detect_result r;
	size_t i, k;
	int t;

	for (i = 0; i < n; i++) {
		k = 1 + (c + i) % (n - 1);
		if (((unsigned char)a[k] & 0xc0) == 0x80)
			continue;
		FUZZ_CHECK(saop_detect_text(a, k, 0, &r) == 0);
		t = r.verdict == SAOP_TRUNCATED;
		saop_detect_result_free(&r);
		if (t)
			return k;
	}
	return 0;
}

/* libFuzzer's entry point: one script run and judged. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sim_model m;
	struct sim_result r;
	enum saop_resume_form form;
	size_t n, cut;

	if (size < 8 + 2)
		return 0;
	n = size - 8;
	if (n > 4096 || !intended((const char *)data + 8, n) ||
	    restarts_itself((const char *)data + 8, n))
		return 0;
	if ((cut = cut_at((const char *)data + 8, n, (size_t)data[0] << 8 |
	    data[1])) == 0)
		return 0;
	memset(&m, 0, sizeof(m));
	m.answer = (const char *)data + 8;
	m.len = n;
	m.first.manner = (enum sim_manner)((data[2] & 0x7f) % SIM_MANNERS);
	m.first.k = 1 + data[3] % 20;
	m.first.limit = data[2] & 0x80 ? 40 + (size_t)data[3] : 0;
	m.then.manner = (enum sim_manner)(data[4] % SIM_MANNERS);
	m.then.k = 1 + data[5] % 20;
	form = data[6] & 1 ? SAOP_RESUME_PREFILL : SAOP_RESUME_USER;
	if (data[6] & 2) {
		m.first.net = 1;
		FUZZ_CHECK(sim_run_suspend(&m, cut, form, 3, the_store(),
		    &r) == 0);
	} else {
		FUZZ_CHECK(sim_run_resume(&m, cut, form, 3, &r) == 0);
	}
	if (r.wrong)
		fprintf(stderr, "resume-protocol: %s\n", r.why);
	FUZZ_CHECK(!r.wrong);
	return 0;
}
