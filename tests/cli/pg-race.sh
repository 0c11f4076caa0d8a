#!/bin/sh
# Exactly once across machines: turns saved in one PostgreSQL database,
# three saop-suspend --resume at once, each in its own working directory
# (standing for three machines): every saved turn called once and
# delivered once.  One of them killed (-9) in the middle of its call, its
# claim made to look like another machine's (only the lease then tells):
# no other takes the turn while the lease runs, one finishes it after.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"
. "$top_srcdir/tests/cli/pg-lib.sh"
pg_start
N=24
sse_openai "$tmp/a.sse" '{"ok": ' 'true}'

# save_turns DB STEP...: N turns of task "race" saved in DB (the endpoint
# down); the server then does the STEPs.
save_turns() {
	_db=$1
	shift
	i=0
	while [ "$i" -lt "$N" ]; do
		i=$((i + 1))
		record race "$i"
	done >"$tmp/in"
	srv_start 'status=503' "$@"
	SAOP_DB=$_db expect_status 75 saop-suspend --no-wait "$tmp/in" >/dev/null 2>&1
	[ "$(pg_sql "$_db" 'SELECT count(*) FROM agent_turn_states')" -eq "$N" ] ||
	    fail "saved: $(pg_sql "$_db" 'SELECT count(*) FROM agent_turn_states')"
	base=$(srv_requests)
}
calls() {
	echo $(($(srv_requests) - base))
}
# check_delivered DB FILE...: every turn once in the FILEs, none left.
check_delivered() {
	_db=$1
	shift
	cat "$@" | jq -r 'select(.raw == "{\"ok\": true}") | .turn' | sort -n >"$tmp/turns"
	[ "$(wc -l <"$tmp/turns")" -eq "$N" ] || fail "$(wc -l <"$tmp/turns") records for $N turns"
	[ -z "$(uniq -d "$tmp/turns")" ] || fail "twice: $(uniq -d "$tmp/turns" | tr '\n' ' ')"
	[ "$(pg_sql "$_db" 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] ||
	    fail "left saved: $(pg_sql "$_db" 'SELECT turn, claim_pid FROM agent_turn_states')"
}
# machine N CMD...: become CMD in working directory $tmp/mN (called with
# & or in a subshell: $! is then CMD's pid).
machine() {
	mkdir -p "$tmp/m$1"
	cd "$tmp/m$1"
	shift
	exec "$@"
}

db=$(pg_newdb race)
export SAOP_DB="$db"
save_turns "$db" 'body=@a.sse delay=20'
machine 1 saop-suspend --resume >"$tmp/out.1" 2>"$tmp/err.1" &
p1=$!
machine 2 saop-suspend --resume >"$tmp/out.2" 2>"$tmp/err.2" &
p2=$!
machine 3 saop-suspend --resume >"$tmp/out.3" 2>"$tmp/err.3" &
p3=$!
for p in $p1 $p2 $p3; do
	wait "$p" || fail "a resumer failed: $(cat "$tmp"/err.*)"
done
# The server logs a request once it has answered it: its last
# line may come after the client is done.
wait_for '[ "$(calls)" -ge "$N" ]' "the server to log $N calls" 60
[ "$(calls)" -eq "$N" ] || fail "$(calls) model calls for $N turns"
check_delivered "$db" "$tmp/out.1" "$tmp/out.2" "$tmp/out.3"
[ ! -e "$tmp/m1/.saop" ] || fail "a state.sqlite was made beside the URI"

# A resumer killed in its call (the first after the turns were saved,
# which never ends); its claim looks like another host's.
db=$(pg_newdb kill)
export SAOP_DB="$db"
save_turns "$db" hang 'body=@a.sse delay=100'
# A lease far longer than the other resumers' work (about 23 x 100 ms),
# however slow the machine; the test ends it itself below.
SAOP_CLAIM_LEASE_MS=3600000
export SAOP_CLAIM_LEASE_MS
machine 1 saop-suspend --resume >"$tmp/k.1" 2>/dev/null &
victim=$!
wait_for '! kill -0 $victim 2>/dev/null || { in_call $victim &&
    [ "$(pg_sql "$db" "SELECT count(*) > 0 FROM agent_turn_states WHERE
    claim_pid = $victim" 2>/dev/null)" = t ]; }' \
    "the resumer to claim a turn and call"
kill -0 "$victim" || fail "the resumer ended"
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
held=$(pg_sql "$db" "UPDATE agent_turn_states SET claim_host = 'another-machine'
    WHERE claim_pid = $victim RETURNING turn")
[ -n "$held" ] || fail "no turn held by the killed resumer"
machine 2 saop-suspend --resume >"$tmp/k.2" 2>"$tmp/k.err" &
p2=$!
machine 3 saop-suspend --resume >"$tmp/k.3" 2>>"$tmp/k.err" &
p3=$!
wait "$p2" || fail "resumer 2: $(cat "$tmp/k.err")"
wait "$p3" || fail "resumer 3: $(cat "$tmp/k.err")"
# The held turns are left while the lease runs: still saved, not delivered.
for t in $held; do
	cat "$tmp/k.2" "$tmp/k.3" |
	    jq -s -e "any(.[]; .turn == $t and .raw != null)" >/dev/null &&
	    fail "turn $t taken while another machine's lease ran"
done
[ "$(pg_sql "$db" 'SELECT count(*) FROM agent_turn_states')" -eq "$(echo "$held" | wc -w)" ] ||
    fail "left: $(pg_sql "$db" 'SELECT turn, claim_host FROM agent_turn_states')"
[ "$(pg_sql "$db" "SELECT count(*) FROM agent_turn_states WHERE
    claim_until > (extract(epoch FROM now()) * 1000)::bigint")" -gt 0 ] ||
    fail "the lease ran out before the others were done: the test proves nothing"
# After the lease: one more --resume on a third machine finishes them.
# The lease is made to end now, as the clock would end it in an hour.
pg_sql "$db" "UPDATE agent_turn_states SET claim_until =
    (extract(epoch FROM now()) * 1000)::bigint - 1" >/dev/null
(machine 4 saop-suspend --resume) >"$tmp/k.4" 2>"$tmp/k.err" || fail "after the lease: $(cat "$tmp/k.err")"
# The killed resumer's only call was never answered: it wrote nothing.
[ ! -s "$tmp/k.1" ] || fail "the killed resumer wrote: $(cat "$tmp/k.1")"
check_delivered "$db" "$tmp/k.2" "$tmp/k.3" "$tmp/k.4"
# Every turn answered once (the killed call, never answered, is not in
# the server's log until it stops).
# The server logs a request once it has answered it: its last
# line may come after the client is done.
wait_for '[ "$(calls)" -ge "$N" ]' "the server to log $N calls" 60
[ "$(calls)" -eq "$N" ] || fail "killed resumer: $(calls) calls"
exit 0
