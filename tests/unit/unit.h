/*
 * unit.h: what the check unit tests share (tests/unit/unit.c), so that a
 * test file holds its cases and nothing else: the run of a suite, the
 * stand-in model the protocols' tests call, and a watch on the record
 * while they call it.
 */
#ifndef SAOP_UNIT_H
#define SAOP_UNIT_H

#include <check.h>
#include <jansson.h>

#include "saop.h"

/*
 * Run every case of the suite s (taken: freed with its runner), each in
 * a process of its own as check does by default, and report as check
 * does.  Returns main()'s status: EXIT_SUCCESS when none failed, else
 * EXIT_FAILURE.
 */
int unit_run(Suite *s);

/*
 * A stand-in model (unit_model_call(), its arg one of these): call k
 * (from 1) answers answers[k - 1] ("" past the n given) with
 * finish_reason "stop" and, with usage set, 10k prompt and k completion
 * tokens.  The call fail_at fails with fail_code (0: SAOP_ENETWORK) once
 * its answer's text came, before its usage: a connection cut at the end.
 * With refuse_prefill, a request whose last turn is the assistant's is
 * refused (SAOP_EPREFILL).
 */
struct unit_model {
	const char *const *answers;	/* one a call */
	int n;				/* how many */
	int calls;			/* calls made (refused ones too) */
	int fail_at;			/* this call (from 1) fails ... */
	int fail_code;			/* ... with this code */
	int refuse_prefill;
	json_t *last;			/* a copy of the last request (the
					   test frees it) */
	int usage;
};

/* The count of the elements of the array a (its n). */
#define UNIT_N(a)	((int)(sizeof(a) / sizeof((a)[0])))

/* The call of struct unit_model at arg.  Returns 0 or -code. */
int unit_model_call(void *arg, const json_t *request,
    struct saop_llm_answer *a, struct saop_err *e);

/*
 * A watch on a record while a protocol works on it (unit_watch_call(),
 * its arg one of these): each call first counts in changed whether rec's
 * text is other than it was at unit_watch_begin(), then goes to call
 * (arg): a protocol must write its record once, at the end.
 */
struct unit_watch {
	struct saop_model model;	/* the model called */
	json_t *rec;			/* the record watched */
	char *before;			/* its text at the start */
	int changed;			/* calls that found it changed */
};

/* Watch rec (borrowed) from now on, changed 0. */
void unit_watch_begin(struct unit_watch *w, json_t *rec);

/* End the watch: its text freed; rec is the caller's. */
void unit_watch_end(struct unit_watch *w);

/* The call of struct unit_watch at arg.  Returns model's return. */
int unit_watch_call(void *arg, const json_t *request,
    struct saop_llm_answer *a, struct saop_err *e);

#endif
