#!/bin/sh
# The environment is read in one place per layer: lib/settings.c (where a
# setting comes from), lib/llm-config.c (the
# model), lib/config.c (the library's other settings), src/cli-env.c (what
# only the programs know; src/cli-loop.c names two it reads through
# cli_env_named()); saop(7)'s ENVIRONMENT lists exactly what they
# read; and a variable read there is honoured by every program that
# needs it (saop-report's database is the library's rule, not its own).
. "$top_srcdir/tests/cli/lib.sh"

# 1. getenv in the three files alone.
others=$(cd "$top_srcdir" && grep -l 'getenv' lib/*.c src/*.c |
    grep -vx 'lib/llm-config.c\|lib/config.c\|lib/settings.c\|src/cli-env.c' || true)
[ -z "$others" ] || fail "getenv outside its three places: $others"

# 2. The page and the code name the same variables: every name the three
# files read is an .Ev of ENVIRONMENT, and every .Ev there (but libpq's)
# is read by them.
(cd "$top_srcdir" && grep -ohE '"([A-Z][A-Z0-9]*_[A-Z0-9_]+|[a-z]+_proxy|PATH)"' \
    lib/llm-config.c lib/config.c lib/settings.c src/cli-env.c src/cli-loop.c) | tr -d '"' | sort -u >"$tmp/code"
awk '/^\.Sh ENVIRONMENT/ { on = 1; next } /^\.Sh / { on = 0 } on' \
    "$top_srcdir/man/saop.7" | grep -oE 'Ev [A-Za-z_][A-Za-z0-9_]*' |
    cut -c4- | grep -v '^PG' | sort -u >"$tmp/page"
[ -s "$tmp/code" ] && [ -s "$tmp/page" ] || fail "nothing read: code $(wc -l <"$tmp/code"), page $(wc -l <"$tmp/page")"
missing=$(comm -23 "$tmp/code" "$tmp/page" | tr '\n' ' ')
[ -z "$missing" ] || fail "read but not in saop(7) ENVIRONMENT: $missing"
stale=$(comm -13 "$tmp/code" "$tmp/page" | tr '\n' ' ')
[ -z "$stale" ] || fail "in saop(7) ENVIRONMENT but read nowhere: $stale"

# 3. SAOP_DB: saop-report takes the library's rule (saop_config_db()):
# $SAOP_DB, --db over it, .saop/state.sqlite when empty.
export SAOP_DB="$tmp/elsewhere.sqlite"
expect_status 66 saop-report 2>"$tmp/err"
grep -qF "no state database at $tmp/elsewhere.sqlite," "$tmp/err" ||
    fail "saop-report without \$SAOP_DB's file: $(cat "$tmp/err")"
expect_status 66 saop-report --db "$tmp/given.sqlite" 2>"$tmp/err"
grep -qF "no state database at $tmp/given.sqlite," "$tmp/err" ||
    fail "--db not over \$SAOP_DB: $(cat "$tmp/err")"
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && SAOP_DB= expect_status 66 saop-report 2>"$tmp/err")
grep -qF "no state database at .saop/state.sqlite," "$tmp/err" ||
    fail "an empty \$SAOP_DB: $(cat "$tmp/err")"
# The database at $SAOP_DB is the one saop-report reads (a task put in
# it is in the report).
: >"$SAOP_DB"
expect_status 0 saop-report >/dev/null
sql "INSERT INTO tasks VALUES ('e1', 'IN_PROGRESS', NULL, '2026-01-01T00:00:00Z')"
expect_status 0 saop-report --json >"$tmp/rep"
grep -q '"e1"' "$tmp/rep" || fail "the task at \$SAOP_DB not reported: $(cat "$tmp/rep")"

# 4. The suspension policy (lib/config.c) is honoured, and refused by
# name, by each program with the policy, before any record is read.
for p in saop-suspend saop-resume saop-validate; do
	SAOP_MAX_WAIT=soon expect_status 78 "$p" </dev/null 2>"$tmp/err"
	grep -qF "SAOP_MAX_WAIT: 'soon' is not a duration" "$tmp/err" ||
	    fail "$p: $(cat "$tmp/err")"
	SAOP_MAX_AUTO_RESUME=1001 expect_status 78 "$p" </dev/null 2>"$tmp/err"
	grep -qF "SAOP_MAX_AUTO_RESUME: '1001' is not a whole number from 0 to 1000" \
	    "$tmp/err" || fail "$p: $(cat "$tmp/err")"
done
# 5. What only the programs know (src/cli-env.c, src/cli-loop.c).
SAOP_MAX_CORRECTION_RETRIES=x expect_status 64 saop-validate </dev/null 2>"$tmp/err"
grep -qF "SAOP_MAX_CORRECTION_RETRIES: 'x'" "$tmp/err" || fail "$(cat "$tmp/err")"
SAOP_SCHEMA_MODE=loud expect_status 64 saop-suspend </dev/null 2>"$tmp/err"
grep -qF "'loud' is not native, prompt or off" "$tmp/err" || fail "$(cat "$tmp/err")"
printf '%s\n' '{"n": 1}' >"$tmp/n.json"
printf '%s\n' '{"type": "object"}' >"$tmp/s.json"
# Not an envelope, but valid by $SAOP_SCHEMA.
expect_status 1 saop-validate --raw-input --no-retry <"$tmp/n.json" \
    >/dev/null 2>&1
SAOP_SCHEMA="$tmp/s.json" expect_status 0 saop-validate --raw-input \
    --no-retry <"$tmp/n.json" >/dev/null 2>&1
SAOP_TASK_ID=from-env saop-detect --raw-input <"$tmp/n.json" >"$tmp/out"
jqf '.task_id == "from-env"' "$tmp/out"
exit 0
