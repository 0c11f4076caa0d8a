/*
 * mock-oracle.h: saop-mock's --oracle, a model that knows the whole
 * intended answers and carries on from what a request shows as already
 * written (the assistant's prefill, or the partial output quoted in the
 * user turn, whole or as its tail), at most so many characters a call, in
 * a manner (honest, repeating, restarting the open token, blank lines or
 * a fence or prose first, the whole answer again).  See saop-mock(1).
 */
#ifndef SAOP_MOCK_ORACLE_H
#define SAOP_MOCK_ORACLE_H

#include <stddef.h>

#include <jansson.h>

/* The oracle's answer to one request. */
struct oracle_reply {
	long line;		/* the answer's line in the file; 0: none */
	char *text;		/* the text to send (malloc), NULL: an error */
	size_t len;
	int length;		/* finish "length": the answer goes on */
	char error[512];	/* why the request could not be placed */
	json_t *log;		/* the log's "oracle" member (new), or NULL */
};

/*
 * Set the manner (saop-mock(1): honest, repeat:K, restart...) and the
 * most characters a call (0: no limit) of every answer that names none
 * of its own.  Returns 0, or -1 when manner is not one.
 */
int oracle_defaults(const char *manner, long max_chars);

/*
 * Read the answers at path: one a line, a JSON string or an object with
 * "text" and maybe "manner" and "max_chars"; blank lines and lines
 * starting with '#' skipped.  Exits 66 when it cannot be read, 65 naming
 * the line (and the member) when a line is not an answer or there is
 * none.
 */
void oracle_load(const char *path);

/*
 * The answer to the request body (of any of the four wire formats; may be
 * NULL): r filled (r->log too).  Returns 0, 1 when the request shows a
 * partial output that begins no answer (r->error says what; r->text
 * NULL), -1 when out of memory.  Safe in several threads at once.
 */
int oracle_answer(const json_t *body, struct oracle_reply *r);

/* Free what r holds (not r). */
void oracle_reply_free(struct oracle_reply *r);

/* Free the answers. */
void oracle_free(void);

#endif
