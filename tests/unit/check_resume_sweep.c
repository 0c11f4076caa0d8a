/*
 * check_resume_sweep.c: the merge of a continuation, swept.  Every cut of
 * three envelopes (C code with escapes in a string, numbers, non-ASCII
 * text) x the manners a model carries on in (tests/resume-sim.h), on the
 * first answer and on the next, some cut again x both forms (user turn,
 * prefill) x both protocols that continue a cut answer (saop-resume's,
 * saop-suspend's), the model simulated at the model-call seam.  For every
 * case: never RESOLVED (or complete) with another value than the
 * envelope's, never OK without RESOLVED, never a received byte lost.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saop-private.h"
#include "resume-sim.h"
#include "unit.h"

static const char *const envelopes[] = {
	/* C code in a string: escapes, \" and \\n. */
	"{\"saop\": \"1.0\", \"turn_index\": 2, \"agent_role\": \"developer\""
	", \"thought\": \"Write the program.\", \"action\": {\"tool\": \"writ"
	"e_file\", \"parameters\": {\"path\": \"src/p.c\", \"content\": \"#in"
	"clude <stdio.h>\\n\\nint\\nmain(void)\\n{\\n\\tprintf(\\\"%d\\\\n\\"
	"\", 42);\\n\\treturn 0;\\n}\\n\"}}}",
	/* Numbers. */
	"{\"saop\": \"1.0\", \"turn_index\": 7, \"agent_role\": \"analyst\", "
	"\"values\": [0, -1, 22, 333, 4444, 3.14159, -2.5e-3, 1E10, 100, 1000"
	", 10000, 0.5], \"stats\": {\"mean\": 123.456, \"n\": 12, \"min\": -0"
	".0025, \"max\": 1e10, \"ok\": true, \"skip\": null}}",
	/* Non-ASCII text: 2-, 3- and 4-byte characters, a \u escape. */
	"{\"saop\": \"1.0\", \"turn_index\": 4, \"agent_role\": \"writer\", "
	"\"thought\": \"Caf\xc3\xa9 au lait \xe2\x80\x94 na\xc3\xafve r\xc3"
	"\xa9sum\xc3\xa9; \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae"
	"\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88 \xf0\x9f\x98\x80 \\"
	"u00e9\", \"action\": {\"tool\": \"say\", \"parameters\": {\"text\": "
	"\"Gr\xc3\xbc\xc3\x9f" "e aus K\xc3\xb6ln, \xd0\xbf\xd1\x80\xd0\xb8"
	"\xd0\xb2\xd0\xb5\xd1\x82 \xd0\xbc\xd0\xb8\xd1\x80! \xe2\x9c\x93\"}}}"
};
#define N_ENVELOPES	(sizeof(envelopes) / sizeof(envelopes[0]))

/* Bytes of an answer cut by its limit (the first, in the cut kinds):
 * past a line of prose first (30 bytes).  A cut answer that is nothing
 * but the start of a line of words, inside a string, reads as the
 * string's text: no merge can tell (tests/fuzz/resume-protocol.c). */
#define CUT_LIMIT	40

/* What the model does on its first continuation and on the next. */
enum kind {
	K_SAME,			/* one manner throughout */
	K_REPEAT_THEN_HONEST,	/* repeats k bytes, then honest */
	K_CUT_REPEAT_THEN_HONEST, /* repeats k bytes, cut at CUT_LIMIT,
				   then honest */
	K_CUT_THEN_SAME,	/* cut at CUT_LIMIT, then the same manner */
	K_KINDS
};
static const char *const kind_names[K_KINDS] = {
	"", "then honest", "cut, then honest", "cut, then the same"
};

/* The counts of one line of the table. */
struct tally {
	size_t runs, resolved, wrong;
};

/* The whole sweep's counts: [protocol][kind][manner]. */
struct sweep {
	struct tally t[2][K_KINDS][SIM_MANNERS];
	size_t runs, wrong;
	int shown;		/* wrong cases printed */
	struct saop_store *store;
};

/* Count one run r of protocol p (0 resume, 1 suspend) into s, printing
 * the first wrong ones. */
static void
count(struct sweep *s, int p, enum kind k, const struct sim_step *st,
    const struct sim_result *r, size_t env, size_t cut, int form)
{
	struct tally *t = &s->t[p][k][st->manner];

	t->runs++;
	s->runs++;
	if (r->resolved)
		t->resolved++;
	if (!r->wrong)
		return;
	t->wrong++;
	s->wrong++;
	if (s->shown++ < 12)
		fprintf(stderr, "WRONG: %s, envelope %zu cut at %zu, %s, %s "
		    "k=%zu %s: %s\n", p ? "suspend" : "resume", env, cut,
		    form == SAOP_RESUME_PREFILL ? "prefill" : "user",
		    sim_manner_name(st->manner), st->k, kind_names[k], r->why);
}

/* The repeats swept on saop-suspend (each of its runs saves its turn
 * three times: a sample of k, to keep the sweep fast). */
static int
suspend_k(size_t k)
{
	return k == 1 || k == 2 || k == 3 || k == 6 || k == 12 || k == 20;
}

/* Run protocol p (0 saop-resume, 1 saop-suspend) on envelope env cut at
 * cut, the model's steps first and then, in both forms, into s. */
static void
run_case(struct sweep *s, int p, size_t env, size_t cut, enum kind k,
    const struct sim_step *first, const struct sim_step *then)
{
	struct sim_model m;
	struct sim_result r;
	int form;

	for (form = SAOP_RESUME_PREFILL; form <= SAOP_RESUME_USER; form++) {
		memset(&m, 0, sizeof(m));
		m.answer = envelopes[env];
		m.len = strlen(envelopes[env]);
		m.first = *first;
		m.then = *then;
		if (p == 0) {
			ck_assert_int_eq(sim_run_resume(&m, cut,
			    (enum saop_resume_form)form, 0, &r), 0);
		} else {
			/* Its continuation cut by the network. */
			m.first.net = 1;
			ck_assert_int_eq(sim_run_suspend(&m, cut,
			    (enum saop_resume_form)form, 3, s->store, &r), 0);
		}
		count(s, p, k, first, &r, env, cut, form);
	}
}

/* Every manner and kind at cut of envelope env for protocol p, into s.
 * (saop-suspend makes one continuation unless it is cut: there the
 * first answer whole is the only kind of its own.) */
static void
sweep_cut(struct sweep *s, int p, size_t env, size_t cut)
{
	struct sim_step a, b, honest;
	int mn;
	size_t kk;

	memset(&honest, 0, sizeof(honest));
	for (mn = 0; mn < SIM_MANNERS; mn++)
	for (kk = 1; kk <= (mn == SIM_REPEAT ? 20 : 1); kk++) {
		memset(&a, 0, sizeof(a));
		a.manner = (enum sim_manner)mn;
		a.k = mn == SIM_REPEAT ? kk : 0;
		/* A repeat of k bytes as a model writes it: whole
		 * characters, no more than it was shown. */
		if (mn == SIM_REPEAT && (kk > cut || ((unsigned char)
		    envelopes[env][cut - kk] & 0xc0) == 0x80))
			continue;
		if (p == 1 && mn == SIM_REPEAT && !suspend_k(kk))
			continue;
		b = a;
		b.limit = CUT_LIMIT;
		run_case(s, p, env, cut, K_SAME, &a, &a);
		run_case(s, p, env, cut, K_CUT_THEN_SAME, &b, &a);
		if (mn != SIM_REPEAT)
			continue;
		if (p == 0)
			run_case(s, p, env, cut, K_REPEAT_THEN_HONEST, &a,
			    &honest);
		run_case(s, p, env, cut, K_CUT_REPEAT_THEN_HONEST, &b,
		    &honest);
	}
}

/* The sweep of protocol p over every cut of every envelope: the table on
 * stderr, and no wrong case. */
static void
sweep(int p)
{
	struct sweep *s = calloc(1, sizeof(*s));
	struct saop_detect_result d;
	struct saop_err e;
	char dir[64], path[96], cmd[128];
	size_t env, cut, n;
	int k, mn;

	ck_assert_ptr_nonnull(s);
	if (p == 1) {
		/* saop-suspend saves its turns: in memory where there is
		 * room. */
		snprintf(dir, sizeof(dir), "%s/check_resume_sweep.XXXXXX",
		    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		ck_assert_ptr_nonnull(mkdtemp(dir));
		snprintf(path, sizeof(path), "%s/state.sqlite", dir);
		ck_assert_ptr_nonnull(s->store = saop_store_open(path, &e));
	}
	for (env = 0; env < N_ENVELOPES; env++) {
		n = strlen(envelopes[env]);
		for (cut = 1; cut < n; cut++) {
			/* A raw is whole characters. */
			if (((unsigned char)envelopes[env][cut] & 0xc0) ==
			    0x80)
				continue;
			ck_assert_int_eq(saop_detect_text(envelopes[env], cut,
			    0, &d), 0);
			k = d.verdict == SAOP_TRUNCATED;
			saop_detect_result_free(&d);
			if (k)
				sweep_cut(s, p, env, cut);
		}
	}
	for (k = 0; k < K_KINDS; k++)
	for (mn = 0; mn < SIM_MANNERS; mn++) {
		struct tally *t = &s->t[p][k][mn];
		char name[80];

		if (t->runs == 0)
			continue;
		snprintf(name, sizeof(name), "%s%s%s", sim_manner_name(
		    (enum sim_manner)mn), k ? ", " : "", kind_names[k]);
		fprintf(stderr, "sweep %-7s %-44s %6zu runs %6zu resolved "
		    "%5zu wrong\n", p ? "suspend" : "resume", name, t->runs,
		    t->resolved, t->wrong);
	}
	fprintf(stderr, "sweep %s: %zu runs, %zu wrong\n", p ? "suspend" :
	    "resume", s->runs, s->wrong);
	/* Not a refusal of everything: an honest model is resolved. */
	ck_assert_uint_gt(s->t[p][K_SAME][SIM_HONEST].resolved * 10,
	    s->t[p][K_SAME][SIM_HONEST].runs * 9);
	ck_assert_uint_ge(s->runs, 40000);
	ck_assert_msg(s->wrong == 0, "%zu of %zu runs wrong", s->wrong,
	    s->runs);
	if (p == 1) {
		saop_store_close(s->store);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		ck_assert_int_eq(system(cmd), 0);
	}
	free(s);
}

START_TEST(saop_resume_never_merges_wrong)
{
	sweep(0);
}
END_TEST

START_TEST(saop_suspend_never_merges_wrong)
{
	sweep(1);
}
END_TEST

static Suite *
sweep_suite(void)
{
	Suite *s = suite_create("resume_sweep");
	TCase *t = tcase_create("sweep");

	tcase_add_test(t, saop_resume_never_merges_wrong);
	tcase_add_test(t, saop_suspend_never_merges_wrong);
	tcase_set_timeout(t, 600);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	return unit_run(sweep_suite());
}
