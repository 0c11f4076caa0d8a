#!/bin/sh
# The shell tests whose state assertions are plain SQL, run again with the
# state in PostgreSQL (SAOP_TEST_DB=postgresql: tests/cli/lib.sh gives each
# a fresh database of one server started here, and its sql helper asks
# psql): every program and every assertion must hold on both backends.
# Left out: tests that look at the database file itself (its mode, its
# size, a kill mid-write checked with PRAGMA integrity_check), use SQLite's
# rowid or SQLite-only SQL in their assertions, or give their own --db;
# and suspend-outage, whose count of resumptions depends on how loaded the
# machine is (on either backend).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/pg-lib.sh"
pg_start
SAOP_TEST_PG="$pg_dir $pg_port $pg_bin"
SAOP_TEST_DB=postgresql
export SAOP_TEST_PG SAOP_TEST_DB
ran=0
for t in detect-records examples-agent-loop examples-ci-resume \
    examples-make pipeline-e2e pipeline-examples refusal-usage \
    resume-prefill resume-overlap suspend-503 suspend-basic suspend-cut \
    suspend-down \
    suspend-refused suspend-tool validate-basic; do
	set +e
	sh "$top_srcdir/tests/cli/$t.sh" >"$tmp/$t.log" 2>&1
	rc=$?
	set -e
	case $rc in
	0) ran=$((ran + 1)) ;;
	77) [ -z "${SAOP_REQUIRE_ALL:-}" ] || fail "$t skipped on PostgreSQL: $(tail -n 3 "$tmp/$t.log")"
	    echo "SKIP (part): $t: $(tail -n 1 "$tmp/$t.log")" >&2 ;;
	*) fail "$t on PostgreSQL (exit $rc): $(tail -n 15 "$tmp/$t.log")" ;;
	esac
done
# Each test did use the server: one database per test.
[ "$(pg_sql "postgresql:///postgres?host=$pg_dir&port=$pg_port&user=saop" \
    "SELECT count(*) FROM pg_database WHERE datname LIKE 'state_%'")" -ge "$ran" ] ||
    fail "the tests did not make their databases on the server"
echo "$ran tests passed on PostgreSQL" >&2
exit 0
