#!/bin/sh
# PostgreSQL faults are like SQLite's: the server unreachable, a wrong
# password, the connection cut mid-run (the server stopped): exit 74,
# every record out (those not stored with their error), nothing
# half-stored, the password never printed.  ~/.pgpass-style files and PG*
# variables are libpq's to read.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/pg-lib.sh"
pg_start
py=${PYTHON3:-python3}
check="$top_srcdir/tests/data/store/check-pruned.py"
secret=Sup3rSecretPw

# 40 records of 3 outputs of 20000 bytes each.
"$py" "$data/prune/prune.py" big 40 3 20000 >"$tmp/in"

# Unreachable: a port nobody listens on.
port=$(pg_free_port)
SAOP_DB="postgresql://saop:$secret@127.0.0.1:$port/x?connect_timeout=5"
export SAOP_DB
expect_status 74 saop-prune --threshold 4096 <"$tmp/in" >"$tmp/out" 2>"$tmp/err"
grep -q "cannot connect to postgresql://saop:\*\*\*@127.0.0.1:$port/x" "$tmp/err" ||
    fail "unreachable: $(head -3 "$tmp/err")"
grep -q "$secret" "$tmp/err" "$tmp/out" && fail "the password was printed"
SAOP_DB=$(pg_newdb faults)
"$py" "$check" "$tmp/in" "$tmp/out" >/dev/null || fail "unreachable: records"
[ "$(jq -s 'map(select(.error.status == 74)) | length' "$tmp/out")" -eq 40 ] ||
    fail "unreachable: not every record says why it was not pruned"

# A wrong password, given in the URI or as a password= parameter.
for uri in "$(pg_tcp_uri faults "$secret")" \
    "postgresql://saop@127.0.0.1:$pg_port/faults?password=$secret"; do
	expect_status 74 env SAOP_DB="$uri" saop-report 2>"$tmp/err" >/dev/null
	grep -q 'password authentication failed for user "saop"' "$tmp/err" ||
	    fail "wrong password: $(cat "$tmp/err")"
	grep -q "$secret" "$tmp/err" && fail "the wrong password was printed"
	grep -q '\*\*\*' "$tmp/err" || fail "no masked URI: $(cat "$tmp/err")"
done
# The right one, from a password file libpq reads (PGPASSFILE).
printf '127.0.0.1:%s:faults:saop:%s\n' "$pg_port" "$pg_password" >"$tmp/pgpass"
chmod 600 "$tmp/pgpass"
PGPASSFILE="$tmp/pgpass" saop-report --db "postgresql://saop@127.0.0.1:$pg_port/faults" \
    --json >/dev/null 2>"$tmp/err" || fail "pgpass: $(cat "$tmp/err")"

# Cut mid-run: records go in through a FIFO; once some outputs are
# stored the server is stopped, then the rest is written.
mkfifo "$tmp/fifo"
saop-prune --threshold 4096 <"$tmp/fifo" >"$tmp/out" 2>"$tmp/err" &
pid=$!
exec 3>"$tmp/fifo"
head -n 10 "$tmp/in" >&3
wait_for '[ "$(sql "SELECT count(*) FROM tool_outputs" 2>/dev/null)" = 30 ]' \
    "the first 10 records' 30 outputs stored"
pg_stop
tail -n +11 "$tmp/in" >&3
exec 3>&-
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" -eq 74 ] || fail "cut: exit $rc, expected 74: $(head -3 "$tmp/err")"
grep -q "state database" "$tmp/err" || fail "cut: no message: $(head -3 "$tmp/err")"
pg_again
out=$("$py" "$check" "$tmp/in" "$tmp/out") || fail "cut: half-stored"
case $out in "pruned 30 kept 90") ;; *) fail "cut: $out" ;; esac
# Once the server is back, the same program goes on.
saop-prune --threshold 4096 <"$tmp/in" >"$tmp/out2" || fail "after restart"
"$py" "$check" "$tmp/in" "$tmp/out2" >/dev/null || fail "after restart: records"
exit 0
