#!/bin/sh
# The README's "Many machines": examples/many-machines.sh, two working
# directories standing for two machines on one PostgreSQL database, run
# against a server of the test's own; b sees what a stored.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/pg-lib.sh"
pg_start
SAOP_DB=$(pg_newdb fleet)
export SAOP_DB
sh "$top_srcdir/examples/many-machines.sh" >"$tmp/out" 2>"$tmp/err" ||
    fail "many-machines.sh: $(cat "$tmp/err")"
grep -q '^b: the raw output ends: line 02299 of the build log$' "$tmp/out" ||
    fail "b did not read a's output: $(cat "$tmp/out")"
grep -q '^b: pruned 1 outputs' "$tmp/out" || fail "b's report: $(cat "$tmp/out")"
# Without a URI it says so.
expect_status 64 env SAOP_DB="$tmp/x.sqlite" sh "$top_srcdir/examples/many-machines.sh" 2>/dev/null
exit 0
