/* unit.c: what the check unit tests share (see unit.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "saop-private.h"
#include "unit.h"

/* See unit.h.  Returns EXIT_SUCCESS or EXIT_FAILURE. */
int
unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* See unit.h.  Returns 0, or the call's failure (-code). */
int
unit_model_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct unit_model *m = arg;
	const json_t *msgs = json_object_get(request, "messages");
	const char *role = json_string_value(json_object_get(json_array_get(
	    msgs, json_array_size(msgs) - 1), "role"));
	const char *t;
	int k = ++m->calls;

	json_decref(m->last);
	m->last = json_deep_copy(request);
	memset(a, 0, sizeof(*a));
	a->prompt_tokens = a->completion_tokens = -1;
	a->cached_tokens = a->reasoning_tokens = -1;
	if (m->refuse_prefill && role != NULL &&
	    strcmp(role, "assistant") == 0) {
		a->raw = strdup("");
		return saop__fail(e, SAOP_EPREFILL, 0, "prefill refused");
	}
	t = k <= m->n ? m->answers[k - 1] : "";
	a->raw = strdup(t);
	a->raw_len = strlen(t);
	if (k == m->fail_at)
		return saop__fail(e, m->fail_code != 0 ? m->fail_code :
		    SAOP_ENETWORK, 0, "connection reset");
	if (m->usage) {
		a->prompt_tokens = 10L * k;
		a->completion_tokens = k;
	}
	strcpy(a->finish_reason, "stop");
	return 0;
}

/* See unit.h.  Returns nothing. */
void
unit_watch_begin(struct unit_watch *w, json_t *rec)
{
	w->rec = rec;
	w->before = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	w->changed = 0;
	ck_assert_ptr_nonnull(w->before);
}

/* See unit.h.  Returns nothing. */
void
unit_watch_end(struct unit_watch *w)
{
	free(w->before);
	w->before = NULL;
}

/* See unit.h.  Returns the watched model's return. */
int
unit_watch_call(void *arg, const json_t *request, struct saop_llm_answer *a,
    struct saop_err *e)
{
	struct unit_watch *w = arg;
	char *now = json_dumps(w->rec, JSON_COMPACT | JSON_SORT_KEYS);

	ck_assert_ptr_nonnull(now);
	if (strcmp(now, w->before) != 0)
		w->changed++;
	free(now);
	return w->model.call(w->model.arg, request, a, e);
}
