/*
 * price.c: the price table (data/prices.json, a snapshot of pydantic's
 * genai-prices made by scripts/update-prices, embedded in libsaop) and
 * the look-up of a model's prices in it.
 */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "saop-private.h"

/* Whether s (case-insensitive) begins with pre.  Returns 1 or 0. */
static int
starts(const char *s, const char *pre)
{
	return strncasecmp(s, pre, strlen(pre)) == 0;
}

/* Whether s (case-insensitive) ends with suf.  Returns 1 or 0. */
static int
ends(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return k <= n && strcasecmp(s + n - k, suf) == 0;
}

/* Whether s (case-insensitive) holds sub.  Returns 1 or 0. */
static int
holds(const char *s, const char *sub)
{
	size_t k = strlen(sub);

	for (; *s != '\0'; s++)
		if (strncasecmp(s, sub, k) == 0)
			return 1;
	return k == 0;
}

/*
 * Whether model meets the match rule m (equals, starts_with, ends_with,
 * contains, or, and; a regex rule, or one not known, matches nothing).
 * Returns 1 or 0.
 */
static int
matches(const json_t *m, const char *model)
{
	const char *s;
	json_t *v;
	size_t i;

	if ((v = json_object_get(m, "or")) != NULL) {
		json_array_foreach(v, i, m)
			if (matches(m, model))
				return 1;
		return 0;
	}
	if ((v = json_object_get(m, "and")) != NULL) {
		json_array_foreach(v, i, m)
			if (!matches(m, model))
				return 0;
		return json_array_size(v) > 0;
	}
	if ((s = json_string_value(json_object_get(m, "equals"))) != NULL)
		return strcasecmp(model, s) == 0;
	if ((s = json_string_value(json_object_get(m, "starts_with"))) != NULL)
		return starts(model, s);
	if ((s = json_string_value(json_object_get(m, "ends_with"))) != NULL)
		return ends(model, s);
	if ((s = json_string_value(json_object_get(m, "contains"))) != NULL)
		return holds(model, s);
	return 0;
}

/* The price named key in row, or -1 when it has none.  Returns it. */
static double
price_of(const json_t *row, const char *key)
{
	const json_t *v = json_object_get(row, key);

	return json_is_number(v) ? json_number_value(v) : -1;
}

/*
 * The first model of provider prov (a table provider) that model meets,
 * its prices into p.  Returns 1 found, 0 not.
 */
static int
find_in(const json_t *prov, const char *model, struct saop__price *p)
{
	const json_t *row;
	size_t i;

	json_array_foreach(json_object_get(prov, "models"), i, row) {
		if (!matches(json_object_get(row, "match"), model))
			continue;
		p->input = price_of(row, "input");
		p->output = price_of(row, "output");
		p->cached_input = price_of(row, "cached_input");
		p->cache_write = price_of(row, "cache_write");
		p->reasoning = price_of(row, "reasoning");
		return 1;
	}
	return 0;
}

/*
 * model's prices from table t into p, from provider's models first (a
 * table provider id, or NULL), then from every provider's in table order.
 * Returns 1 found, 0 not.
 */
static int
find_table(const json_t *t, const char *provider, const char *model,
    struct saop__price *p)
{
	json_t *prov;
	size_t i;
	int found = 0;

	if (provider != NULL)
		json_array_foreach(json_object_get(t, "providers"), i, prov) {
			const char *id = json_string_value(json_object_get(prov,
			    "id"));

			if (id != NULL && strcasecmp(id, provider) == 0) {
				found = find_in(prov, model, p);
				break;
			}
		}
	if (!found)
		json_array_foreach(json_object_get(t, "providers"), i, prov)
			if ((found = find_in(prov, model, p)) != 0)
				break;
	return found;
}

/*
 * The user's price table ($SAOP_PRICES, the file's prices), or NULL with
 * *set 0 when none is set, or NULL with *set 1 and je filled when it
 * cannot be read as one (an object with a providers array).  Returns a
 * new reference.
 */
static json_t *
user_table(int *set, json_error_t *je)
{
	const char *path = saop__setting("prices");
	json_t *t;

	*set = path != NULL && *path != '\0';
	if (!*set)
		return NULL;
	if ((t = json_load_file(path, 0, je)) != NULL &&
	    !json_is_array(json_object_get(t, "providers"))) {
		json_decref(t);
		t = NULL;
		snprintf(je->text, sizeof(je->text), "no \"providers\" "
		    "array (the shape of data/prices.json)");
	}
	return t;
}

/* The embedded table, parsed once a process (embedded_load()). */
static json_t *embedded;
static pthread_once_t embedded_once = PTHREAD_ONCE_INIT;

/*
 * Parse the embedded table (data/prices.json, 200 KB) into embedded:
 * once, as every priced call searches it.  Returns nothing; embedded
 * stays NULL when it cannot be parsed (out of memory).
 */
static void
embedded_load(void)
{
	embedded = json_loadb(saop__prices_json.text, saop__prices_json.len,
	    0, NULL);
}

/*
 * See saop-private.h: model's prices into p, from the user's table
 * ($SAOP_PRICES) first, then from the embedded one.  Returns 1 found, 0
 * not in either, -1 a table unreadable.
 */
int
saop__price_find(const char *provider, const char *model,
    struct saop__price *p)
{
	json_error_t je;
	json_t *t;
	int set;

	t = user_table(&set, &je);
	if (set && t == NULL)
		return -1;
	if (t != NULL) {
		int found = find_table(t, provider, model, p);

		json_decref(t);
		if (found)
			return found;
	}
	/* The user's table is read at each call (it may change); the
	 * embedded one is the program's, read once. */
	pthread_once(&embedded_once, embedded_load);
	if (embedded == NULL)
		return -1;
	return find_table(embedded, provider, model, p);
}

/*
 * See saop.h: whether the user's price table, when one is set, can be
 * read.  Returns 0, or -SAOP_ECONFIG with e naming the setting and the
 * file.
 */
int
saop_prices_check(struct saop_err *e)
{
	json_error_t je;
	char name[300];
	json_t *t;
	int set;

	if ((t = user_table(&set, &je)) != NULL || !set) {
		json_decref(t);
		return 0;
	}
	return saop__fail(e, SAOP_ECONFIG, 0, "%s: %.200s is not a price "
	    "table: %.200s", saop__setting_name("prices", name, sizeof(name)),
	    saop__setting("prices"), je.text);
}

/*
 * The USD of n tokens at usd per million (-1: not given) into *sum.
 * Returns 0, or -1 when tokens are counted at a price not given.
 */
static int
priced(double *sum, long n, double usd)
{
	if (n <= 0)
		return 0;
	if (usd < 0)
		return -1;
	*sum += (double)n * usd / 1e6;
	return 0;
}

/* See saop-private.h.  Returns the cost in USD, or -1 not known. */
double
saop__price_usd(const struct saop__price *p, long input, long cached,
    long output, long reasoning)
{
	double sum = 0;

	if (input < 0 || output < 0 || p->input < 0 || p->output < 0)
		return -1;
	cached = cached < 0 ? 0 : cached > input ? input : cached;
	reasoning = reasoning < 0 ? 0 : reasoning > output ? output :
	    reasoning;
	if (priced(&sum, input - cached, p->input) != 0 ||
	    priced(&sum, cached, p->cached_input < 0 ? p->input :
	    p->cached_input) != 0 ||
	    priced(&sum, output - reasoning, p->output) != 0 ||
	    priced(&sum, reasoning, p->reasoning < 0 ? p->output :
	    p->reasoning) != 0)
		return -1;
	return sum;
}

/*
 * The price table's provider id of provider (the Responses API is
 * OpenAI's, Gemini Google's, Bedrock AWS's).  Returns a static string.
 */
static const char *
table_id(enum saop_provider provider)
{
	switch (provider) {
	case SAOP_PROVIDER_ANTHROPIC:
		return "anthropic";
	case SAOP_PROVIDER_GEMINI:
		return "google";
	case SAOP_PROVIDER_BEDROCK:
		return "aws";
	case SAOP_PROVIDER_OPENAI:
	case SAOP_PROVIDER_RESPONSES:
	default:
		return "openai";
	}
}

/*
 * See saop-private.h: a's cost at the prices of model (provider's own
 * first) set on a (a->priced 1), when the table prices the model and the
 * answer reported its usage; else a left unpriced.  Returns nothing.
 */
void
saop__price_answer(enum saop_provider provider, const char *model,
    struct saop_llm_answer *a)
{
	struct saop__price p;
	double usd;

	a->priced = 0;
	if (model == NULL || saop__price_find(table_id(provider), model,
	    &p) != 1)
		return;
	usd = saop__price_usd(&p, a->prompt_tokens, a->cached_tokens,
	    a->completion_tokens, a->reasoning_tokens);
	if (usd < 0)
		return;
	a->cost = usd;
	a->priced = 1;
}

/* ---- the budget of a record's recovery ---- */

/* See saop.h: b started on rec.  Returns nothing. */
void
saop_budget_record(struct saop_budget *b, const json_t *rec)
{
	const json_t *v = json_object_get(saop_record_cost(rec), "recovery");

	b->spent = json_is_number(v) && json_number_value(v) > 0 ?
	    json_number_value(v) : 0;
	b->worst = -1;
}

/*
 * See saop.h: whether request may go under b.  Returns 0, or
 * -SAOP_EBUDGET with e filled.
 */
int
saop_budget_check(struct saop_budget *b, const json_t *request,
    struct saop_err *e)
{
	const json_t *m = json_object_get(request, "model");
	const json_t *mt = json_object_get(request, "max_tokens");
	const char *model = json_is_string(m) ? json_string_value(m) :
	    b->model;
	struct saop__price p;
	size_t bytes;
	long out;

	b->worst = -1;
	if (b->max_usd < 0)
		return 0;
	if (model == NULL || saop__price_find(table_id(b->provider), model,
	    &p) != 1 || p.input < 0 || p.output < 0) {
		b->unpriced = 1;
		return 0;
	}
	bytes = json_dumpb(request, NULL, 0, JSON_COMPACT);
	out = json_is_integer(mt) && json_integer_value(mt) > 0 &&
	    json_integer_value(mt) < LONG_MAX ? (long)json_integer_value(mt) :
	    SAOP_LLM_DEFAULT_MAX_TOKENS;
	/* At worst: no token read from a cache, every output token at the
	 * dearer of output and reasoning. */
	if (p.reasoning > p.output)
		p.output = p.reasoning;
	p.cached_input = p.input;
	p.reasoning = p.output;
	b->worst = saop__price_usd(&p, (long)bytes, 0, out, 0);
	if (b->worst >= 0 && b->spent + b->worst > b->max_usd) {
		saop_err_clear(e);
		e->code = SAOP_EBUDGET;
		snprintf(e->msg, sizeof(e->msg), "stopped at the cost limit "
		    "(--max-cost, SAOP_MAX_COST) of $%.6f: the recovery of "
		    "this record has cost $%.6f, and the next call (%.100s, %zu "
		    "bytes, max_tokens %ld) could cost up to $%.6f",
		    b->max_usd, b->spent, model, bytes, out, b->worst);
		return -SAOP_EBUDGET;
	}
	return 0;
}

/* See saop.h: a's cost (else the call's worst) into b.  Returns nothing. */
void
saop_budget_spend(struct saop_budget *b, const struct saop_llm_answer *a)
{
	if (a->priced)
		b->spent += a->cost;
	else if (b->worst > 0)
		b->spent += b->worst;
	b->worst = -1;
}
