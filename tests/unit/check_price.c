/* check_price.c: unit tests for price.c (the embedded price table). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saop-private.h"
#include "unit.h"

/* A model by an equals rule, in its provider: its prices; none for cache
 * writes is -1, never 0. */
START_TEST(test_equals)
{
	struct saop__price p;

	ck_assert_int_eq(saop__price_find("openai", "gpt-4o-2024-08-06", &p),
	    1);
	ck_assert_double_eq(p.input, 2.5);
	ck_assert_double_eq(p.output, 10);
	ck_assert_double_eq(p.cached_input, 1.25);
	ck_assert_double_eq(p.cache_write, -1);
	ck_assert_double_eq(p.reasoning, -1);
	ck_assert_int_eq(saop__price_find("openai", "GPT-4o-mini", &p), 1);
	ck_assert_double_eq(p.input, 0.15);
	ck_assert_double_eq(p.output, 0.6);
}
END_TEST

/* A starts_with rule inside an or; a provider not in the table or not
 * holding the model: every provider searched. */
START_TEST(test_starts_any_provider)
{
	struct saop__price p;

	ck_assert_int_eq(saop__price_find(NULL,
	    "claude-3-5-sonnet-20241022", &p), 1);
	ck_assert_double_eq(p.input, 3);
	ck_assert_double_eq(p.output, 15);
	ck_assert_double_eq(p.cached_input, 0.3);
	ck_assert_double_eq(p.cache_write, 3.75);
	ck_assert_int_eq(saop__price_find("nobody",
	    "claude-3.5-sonnet-latest", &p), 1);
	ck_assert_double_eq(p.input, 3);
}
END_TEST

/* Reasoning priced where the table prices it. */
START_TEST(test_reasoning)
{
	struct saop__price p;

	ck_assert_int_eq(saop__price_find(NULL, "sonar-deep-research", &p),
	    1);
	ck_assert_double_eq(p.input, 2);
	ck_assert_double_eq(p.output, 8);
	ck_assert_double_eq(p.reasoning, 3);
}
END_TEST

/* A model no rule meets: not found (its cost is null, never 0); an
 * equals rule met by its whole name. */
START_TEST(test_unknown)
{
	struct saop__price p;

	ck_assert_int_eq(saop__price_find(NULL, "fake-model-xyz", &p), 0);
	ck_assert_int_eq(saop__price_find("openai", "gpt-4", &p), 1);
	ck_assert_double_eq_tol(p.input, 30, 1e-9);
}
END_TEST

/* One call's USD: each kind of token at its own price, cached and
 * reasoning tokens at input's and output's where not given. */
START_TEST(test_usd)
{
	struct saop__price p = { 2, 8, 0.5, -1, 3 };

	/* 1000 in (200 cached), 500 out (100 reasoning). */
	ck_assert_double_eq_tol(saop__price_usd(&p, 1000, 200, 500, 100),
	    (800 * 2 + 200 * 0.5 + 400 * 8 + 100 * 3) / 1e6, 1e-12);
	p.cached_input = p.reasoning = -1;
	ck_assert_double_eq_tol(saop__price_usd(&p, 1000, 200, 500, 100),
	    (1000 * 2 + 500 * 8) / 1e6, 1e-12);
	/* Counts not reported as none; zero tokens cost exactly 0. */
	ck_assert_double_eq_tol(saop__price_usd(&p, 10, -1, 5, -1),
	    (10 * 2 + 5 * 8) / 1e6, 1e-12);
	ck_assert_double_eq(saop__price_usd(&p, 0, 0, 0, 0), 0);
}
END_TEST

/* A cost not known is -1 (null on the record), never 0: a price not
 * given, or input or output not reported. */
START_TEST(test_usd_unknown)
{
	struct saop__price p = { -1, 8, -1, -1, -1 };

	ck_assert_double_eq(saop__price_usd(&p, 10, 0, 5, 0), -1);
	p.input = 2;
	ck_assert_double_eq(saop__price_usd(&p, -1, 0, 5, 0), -1);
	ck_assert_double_eq(saop__price_usd(&p, 10, 0, -1, 0), -1);
	p.output = -1;
	ck_assert_double_eq(saop__price_usd(&p, 0, 0, 0, 0), -1);
}
END_TEST

/*
 * An answer priced by its model and provider: gpt-4o-mini's usage at its
 * prices, cached input at the cached price; an unknown model, no model or
 * an answer without usage left unpriced (never 0).
 */
START_TEST(test_answer)
{
	struct saop_llm_answer a;

	memset(&a, 0, sizeof(a));
	a.prompt_tokens = 1000000;
	a.completion_tokens = 1000000;
	a.cached_tokens = 400000;
	a.reasoning_tokens = -1;
	saop__price_answer(SAOP_PROVIDER_OPENAI, "gpt-4o-mini", &a);
	ck_assert_int_eq(a.priced, 1);
	ck_assert_double_eq_tol(a.cost, 0.6 * 0.15 + 0.4 * 0.075 + 0.6,
	    1e-12);
	saop__price_answer(SAOP_PROVIDER_OPENAI, "my-local-model", &a);
	ck_assert_int_eq(a.priced, 0);
	saop__price_answer(SAOP_PROVIDER_ANTHROPIC, NULL, &a);
	ck_assert_int_eq(a.priced, 0);
	a.completion_tokens = -1;
	saop__price_answer(SAOP_PROVIDER_OPENAI, "gpt-4o-mini", &a);
	ck_assert_int_eq(a.priced, 0);
	a.completion_tokens = 0;
	a.cached_tokens = -1;
	saop__price_answer(SAOP_PROVIDER_ANTHROPIC,
	    "claude-3-5-haiku-20241022", &a);
	ck_assert_int_eq(a.priced, 1);
	ck_assert_double_eq_tol(a.cost, 0.8, 1e-12);
}
END_TEST

/*
 * The budget of a record's recovery: started from the record's
 * cost.recovery; a request priced at worst (its bytes as input tokens,
 * max_tokens, else 4096, of output) may not take it past the limit; an
 * answer's cost, else that worst, counted; no limit or a model without
 * price lets everything through, the latter noted.
 */
START_TEST(test_budget)
{
	struct saop_budget b;
	struct saop_llm_answer a;
	struct saop_err e;
	json_t *rec, *req;
	size_t bytes;

	memset(&b, 0, sizeof(b));
	memset(&a, 0, sizeof(a));
	b.max_usd = 0.1;
	b.provider = SAOP_PROVIDER_OPENAI;
	rec = json_pack("{s:{s:f}}", "cost", "recovery", 0.02);
	saop_budget_record(&b, rec);
	ck_assert_double_eq_tol(b.spent, 0.02, 1e-12);
	/* gpt-4o-mini: output $0.6 a million; 100000 tokens $0.06. */
	req = json_pack("{s:s, s:i, s:[]}", "model", "gpt-4o-mini",
	    "max_tokens", 100000, "messages");
	bytes = json_dumpb(req, NULL, 0, JSON_COMPACT);
	ck_assert_int_eq(saop_budget_check(&b, req, &e), 0);
	ck_assert_double_eq_tol(b.worst, 0.06 + (double)bytes * 0.15 / 1e6,
	    1e-12);
	a.priced = 1;
	a.cost = 0.01;
	saop_budget_spend(&b, &a);
	ck_assert_double_eq_tol(b.spent, 0.03, 1e-12);
	ck_assert_int_eq(saop_budget_check(&b, req, &e), 0);
	a.priced = 0;	/* no usage: counted at its worst */
	saop_budget_spend(&b, &a);
	ck_assert(b.spent > 0.09);
	ck_assert_int_eq(saop_budget_check(&b, req, &e), -SAOP_EBUDGET);
	ck_assert_int_eq(e.code, SAOP_EBUDGET);
	ck_assert_ptr_nonnull(strstr(e.msg, "--max-cost"));
	ck_assert_ptr_nonnull(strstr(e.msg, "$0.100000"));
	ck_assert_int_eq(saop_err_exit_status(SAOP_EBUDGET), 3);
	/* No max_tokens: 4096 of output, within what is left. */
	json_object_del(req, "max_tokens");
	saop_budget_record(&b, rec);
	ck_assert_int_eq(saop_budget_check(&b, req, &e), 0);
	ck_assert(b.worst < 0.003);
	/* A model without price: let through, noted. */
	json_object_set_new(req, "model", json_string("my-local-model"));
	b.max_usd = 0;
	ck_assert_int_eq(saop_budget_check(&b, req, &e), 0);
	ck_assert_int_eq(b.unpriced, 1);
	/* No limit: nothing checked. */
	b.max_usd = -1;
	b.unpriced = 0;
	ck_assert_int_eq(saop_budget_check(&b, req, &e), 0);
	ck_assert_int_eq(b.unpriced, 0);
	json_decref(req);
	json_decref(rec);
}
END_TEST

/*
 * $SAOP_PRICES: its table searched first (a model of its own, a price
 * of the embedded table replaced), the embedded one after; a file that
 * is not a table: no price found (-1), and saop_prices_check() names
 * the variable and the file (78).
 */
START_TEST(test_user_table)
{
	char path[] = "/tmp/check-price.XXXXXX";
	struct saop__price p;
	struct saop_err e;
	FILE *f;
	int fd;

	ck_assert_int_ge(fd = mkstemp(path), 0);
	ck_assert_ptr_nonnull(f = fdopen(fd, "w"));
	fputs("{\"providers\": [{\"id\": \"openai\", \"models\": ["
	    "{\"id\": \"a\", \"match\": {\"equals\": \"my-model\"}, "
	    "\"input\": 1, \"output\": 2}, "
	    "{\"id\": \"b\", \"match\": {\"equals\": \"gpt-4o-mini\"}, "
	    "\"input\": 5, \"output\": 6}]}]}", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(setenv("SAOP_PRICES", path, 1), 0);
	ck_assert_int_eq(saop_prices_check(&e), 0);
	ck_assert_int_eq(saop__price_find("openai", "my-model", &p), 1);
	ck_assert_double_eq(p.input, 1);
	ck_assert_double_eq(p.output, 2);
	ck_assert_int_eq(saop__price_find("openai", "gpt-4o-mini", &p), 1);
	ck_assert_double_eq(p.input, 5);
	ck_assert_int_eq(saop__price_find("anthropic",
	    "claude-3-5-haiku-latest", &p), 1);
	ck_assert_double_eq(p.input, 0.8);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs("[1, 2]", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(saop__price_find("openai", "gpt-4o-mini", &p), -1);
	ck_assert_int_eq(saop_prices_check(&e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "SAOP_PRICES"));
	ck_assert_ptr_nonnull(strstr(e.msg, path));
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(saop_prices_check(&e), -SAOP_ECONFIG);
	ck_assert_int_eq(unsetenv("SAOP_PRICES"), 0);
	ck_assert_int_eq(saop_prices_check(&e), 0);
	ck_assert_int_eq(saop__price_find("openai", "gpt-4o-mini", &p), 1);
	ck_assert_double_eq(p.input, 0.15);
}
END_TEST

/* The suite. */
int
main(void)
{
	Suite *s = suite_create("price");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_equals);
	tcase_add_test(tc, test_starts_any_provider);
	tcase_add_test(tc, test_reasoning);
	tcase_add_test(tc, test_unknown);
	tcase_add_test(tc, test_usd);
	tcase_add_test(tc, test_usd_unknown);
	tcase_add_test(tc, test_answer);
	tcase_add_test(tc, test_budget);
	tcase_add_test(tc, test_user_table);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
