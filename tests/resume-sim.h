/*
 * resume-sim.h: a model simulated in-process, at the model-call seam
 * (struct saop_model), for the sweeps of the resume merge
 * (tests/unit/check_resume_sweep.c) and its fuzz target
 * (tests/fuzz/resume-protocol.c), with the two protocols that continue a
 * cut answer run against it and their outcome judged.
 *
 * The model knows the whole intended answer and believes it has written
 * the text it is shown as its own: the assistant prefill, or what follows
 * SAOP_RESUME_PARTIAL_LABEL to the end of the user turn.  It carries on
 * at that many bytes into the answer (whatever the text was: a model
 * shown more than it wrote still carries on from the end of what it was
 * shown), in one manner.
 */
#ifndef SAOP_RESUME_SIM_H
#define SAOP_RESUME_SIM_H

#include <stddef.h>

#include "saop.h"

/* How the model carries on from where it believes it stopped. */
enum sim_manner {
	SIM_HONEST,		/* exactly the rest */
	SIM_REPEAT,		/* the last k bytes it was shown again */
	SIM_RESTART_STRING,	/* the open string again from its quote */
	SIM_RESTART_TOKEN,	/* again from its last valid token */
	SIM_BLANK,		/* two blank lines, then the rest */
	SIM_FENCE,		/* the rest in a ```json fence */
	SIM_PROSE,		/* a line of prose, then the rest */
	SIM_WHOLE,		/* the whole answer again from the start */
	SIM_MANNERS
};

/* One answer's manner: its repeat (SIM_REPEAT), and a limit (bytes, whole
 * characters; 0: none) after which it is cut, by finish_reason length,
 * or, with net, by a broken stream (ENETWORK). */
struct sim_step {
	enum sim_manner manner;
	size_t k;
	size_t limit;
	int net;
};

/* The model. */
struct sim_model {
	const char *answer;	/* the whole intended answer */
	size_t len;
	size_t cut;		/* > 0: the first call (a request that shows
				   nothing) breaks after cut bytes */
	struct sim_step first;	/* the first continuation */
	struct sim_step then;	/* the ones after it */
	int calls, conts;
	size_t sent;		/* bytes answered, over all calls */
};

/* The name of manner m (static). */
const char *sim_manner_name(enum sim_manner m);

/*
 * The text a resume request shows the model as its own (the prefill, or
 * the quoted partial output of the user turn), *n bytes, borrowed from
 * request; NULL when it shows none.
 */
const char *sim_own_text(const json_t *request, size_t *n);

/* The model's call (struct saop_model's call; arg: struct sim_model). */
int sim_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e);

/* What one run came to. */
struct sim_result {
	int wrong;		/* a property broken (why says which) */
	int resolved;		/* complete with the intended value */
	int calls;
	char why[512];
};

/*
 * saop-resume's protocol on a record whose raw is answer[0..cut) (cut by
 * its limit) with the model m (its answer and steps set; cut, calls and
 * counts are set here), in form (PREFILL or USER), max_attempts calls at
 * most (0: the default).  Judged: RESOLVED only with the intended value;
 * state OK only when RESOLVED; the raw written begins with every byte
 * received up to the resume point; resume.received_bytes is every byte
 * the model sent.  Returns 0, or -1 when the protocol itself failed.
 */
int sim_run_resume(struct sim_model *m, size_t cut,
    enum saop_resume_form form, int max_attempts, struct sim_result *r);

/*
 * saop-suspend's continuation of an answer whose stream broke after cut
 * bytes, with the model m, in form, up to max_resumes resumptions, its
 * turns saved in store.  Judged: a raw that scans complete holds the
 * intended value; the raw begins with every byte the broken stream
 * brought up to its resume point (a cut escape the model writes again
 * whole); suspend's count of bytes received is every byte the model
 * sent; the state is never OK.  Returns 0, or -1 when the turn failed
 * otherwise than as suspended.
 */
int sim_run_suspend(struct sim_model *m, size_t cut,
    enum saop_resume_form form, int max_resumes, struct saop_store *store,
    struct sim_result *r);

#endif /* SAOP_RESUME_SIM_H */
