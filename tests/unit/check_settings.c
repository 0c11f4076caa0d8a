/* check_settings.c: unit tests for settings.c (the configuration file). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "saop-private.h"
#include "unit.h"

static char dir[64];
static char path[128];

/* A fresh directory for the file, no SAOP_ variable the tests set. */
static void
setup(void)
{
	strcpy(dir, "/tmp/check_settings.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/config", dir);
	unsetenv("SAOP_MODEL");
	unsetenv("SAOP_API_KEY");
	unsetenv("SAOP_API_BASE");
	unsetenv("SAOP_PROFILE");
	unsetenv("SAOP_HEADERS");
	unsetenv("OPENAI_API_KEY");
	unsetenv("SAOP_PROVIDER");
}

/* The file and directory removed, the settings forgotten. */
static void
teardown(void)
{
	char cmd[160];

	saop_settings_free();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Write text to the file with mode. */
static void
put(const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(environment_over_profile_over_default_section)
{
	struct saop_setting_from from;
	struct saop_err e;

	put("model = d\ntimeout_ms = 9\n[profile p]\nmodel = p\n"
	    "[profile q]\nmodel = q\napi_base = http://q\n", 0644);
	ck_assert_int_eq(saop_settings_load(path, "p", &e), 0);
	ck_assert_str_eq(saop_setting("model", &from), "p");
	ck_assert_str_eq(from.file, path);
	ck_assert_int_eq(from.line, 4);
	ck_assert_str_eq(from.profile, "p");
	ck_assert_ptr_null(from.env);
	ck_assert_str_eq(saop_setting("timeout_ms", &from), "9");
	ck_assert_int_eq(from.line, 2);
	ck_assert_ptr_null(from.profile);
	/* Another profile's keys are not in force. */
	ck_assert_ptr_null(saop_setting("api_base", &from));
	ck_assert_ptr_null(from.file);
	setenv("SAOP_MODEL", "env", 1);
	ck_assert_str_eq(saop_setting("model", &from), "env");
	ck_assert_str_eq(from.env, "SAOP_MODEL");
	ck_assert_ptr_null(from.file);
	/* An empty variable is unset: the file's value holds. */
	setenv("SAOP_MODEL", "", 1);
	ck_assert_str_eq(saop_setting("model", NULL), "p");
	/* No profile: the default section alone; SAOP_PROFILE names one. */
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), 0);
	ck_assert_str_eq(saop_setting("model", NULL), "d");
	setenv("SAOP_PROFILE", "q", 1);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), 0);
	ck_assert_str_eq(saop_setting("model", NULL), "q");
	ck_assert_int_eq(saop_settings_load(path, "p", &e), 0);
	ck_assert_str_eq(saop_setting("model", NULL), "p");
	/* Forgotten: the environment alone. */
	saop_settings_free();
	ck_assert_ptr_null(saop_setting("timeout_ms", NULL));
}
END_TEST

START_TEST(the_model_config_reads_the_file)
{
	struct saop_llm_config cfg;
	struct saop_err e;

	put("api_base = http://base\n[profile p]\napi_key = file-key\n"
	    "model = m\nheaders = A: 1\n  B: 2\nprovider = anthropic\n", 0600);
	ck_assert_int_eq(saop_settings_load(path, "p", &e), 0);
	setenv("OPENAI_API_KEY", "provider-var", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert_ptr_null(cfg.problem);
	ck_assert_int_eq(cfg.provider, SAOP_PROVIDER_ANTHROPIC);
	ck_assert_str_eq(cfg.base, "http://base");
	ck_assert_str_eq(cfg.model, "m");
	/* The file's key before the provider's own variable. */
	ck_assert_str_eq(cfg.key, "file-key");
	ck_assert_uint_eq(cfg.nheaders, 2);
	ck_assert_str_eq(cfg.headers[0], "A: 1");
	ck_assert_str_eq(cfg.headers[1], "B: 2");
	saop_llm_config_free(&cfg);
	/* $SAOP_API_KEY before the file's. */
	setenv("SAOP_API_KEY", "env-key", 1);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert_str_eq(cfg.key, "env-key");
	saop_llm_config_free(&cfg);
	/* A bad value names the file and line. */
	put("[profile p]\nprovider = nope\n", 0600);
	ck_assert_int_eq(saop_settings_load(path, "p", &e), 0);
	ck_assert_int_eq(saop_llm_config_from_env(&cfg, &e), 0);
	ck_assert_ptr_nonnull(cfg.problem);
	ck_assert_ptr_nonnull(strstr(cfg.problem, ", line 2: provider: "
	    "unknown provider 'nope'"));
	saop_llm_config_free(&cfg);
}
END_TEST

START_TEST(a_key_others_may_read_is_refused)
{
	struct saop_err e;

	put("[profile other]\napi_key = k\n", 0640);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "holds an api_key and others may "
	    "read it (mode 640): not read; chmod 600"));
	ck_assert_ptr_null(strstr(e.msg, "= k"));
	ck_assert_ptr_null(saop_setting("api_key", NULL));
	put("[profile other]\napi_key = k\n", 0600);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), 0);
	/* A command is no secret; a file others may write is refused. */
	put("api_key_cmd = echo k\n", 0644);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), 0);
	put("model = m\n", 0646);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "others may write it (mode 646)"));
	put("model = m\n", 0620);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), -SAOP_ECONFIG);
}
END_TEST

START_TEST(api_key_cmd_runs_once)
{
	struct saop_setting_from from;
	struct saop_err e;
	const char *key;
	char text[512], runs[160];
	FILE *f;
	int n = 0, c;

	snprintf(runs, sizeof(runs), "%s/runs", dir);
	snprintf(text, sizeof(text), "[profile p]\napi_key_cmd = echo run "
	    ">>%s; printf 'the-key\\n\\n'\n", runs);
	put(text, 0600);
	ck_assert_int_eq(saop_settings_load(path, "p", &e), 0);
	ck_assert_int_eq(saop_settings_api_key(&key, &from, &e), 0);
	ck_assert_str_eq(key, "the-key");
	ck_assert_int_eq(from.cmd, 1);
	ck_assert_int_eq(from.line, 2);
	ck_assert_int_eq(saop_settings_api_key(&key, &from, &e), 0);
	ck_assert_str_eq(key, "the-key");
	ck_assert_ptr_nonnull(f = fopen(runs, "r"));
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	ck_assert_int_eq(n, 1);
	/* A failure: said, its output not. */
	put("api_key_cmd = echo secret-out; exit 2\n", 0600);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), 0);
	ck_assert_int_eq(saop_settings_api_key(&key, &from, &e),
	    -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "line 1: api_key_cmd failed"));
	ck_assert_ptr_null(strstr(e.msg, "secret-out"));
	/* Said again, not run again. */
	ck_assert_int_eq(saop_settings_api_key(&key, &from, &e),
	    -SAOP_ECONFIG);
	put("api_key_cmd = true\n", 0600);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), 0);
	ck_assert_int_eq(saop_settings_api_key(&key, &from, &e),
	    -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "wrote no key"));
}
END_TEST

START_TEST(faults_are_named_by_line)
{
	struct saop_err e;
	char text[600];

	put("model = m\n\n[profile p]\nbogus = 1\n", 0600);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, ", line 4: 'bogus' is not a key"));
	put("[prof p]\nmodel = m\n", 0600);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, ", line 2: [prof p] is not a "
	    "section"));
	put("model = m\nno equals sign\n", 0600);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, ", line 2: not 'key = value'"));
	memset(text, 'a', sizeof(text));
	memcpy(text, "model = ", 8);
	strcpy(text + 400, "\nx = 1\n");
	put(text, 0600);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, ", line 1: a line of more than"));
	put("model = m\n", 0600);
	ck_assert_int_eq(saop_settings_load(path, "absent", &e),
	    -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "profile 'absent' is not in"));
	/* No file: nothing, unless a profile is named. */
	unlink(path);
	ck_assert_int_eq(saop_settings_load(path, NULL, &e), -SAOP_ECONFIG);
	ck_assert_ptr_nonnull(strstr(e.msg, "No such file"));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("settings");
	TCase *tc = tcase_create("settings");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, environment_over_profile_over_default_section);
	tcase_add_test(tc, the_model_config_reads_the_file);
	tcase_add_test(tc, a_key_others_may_read_is_refused);
	tcase_add_test(tc, api_key_cmd_runs_once);
	tcase_add_test(tc, faults_are_named_by_line);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
