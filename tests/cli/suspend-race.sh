#!/bin/sh
# saop-suspend --resume, exactly once: 3 and 8 resumers at once on 30
# saved turns make exactly 30 model calls and write 30 records, each turn
# once; with one resumer killed in the middle of its call, the turn it
# held is taken over (its pid is gone) and still delivered once; a lease
# shorter than a call is renewed, so a live claim is never taken.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

N=30
sse_openai "$tmp/a.sse" '{"ok": ' 'true}'

# save_turns [STEP...]: N turns of task "race" saved (the endpoint down,
# --no-wait); the server then does the STEPs (default: answers after 50
# ms).
save_turns() {
	rm -f "$SAOP_DB"*
	i=0
	while [ "$i" -lt "$N" ]; do
		i=$((i + 1))
		record race "$i"
	done >"$tmp/in"
	[ $# -gt 0 ] || set -- 'body=@a.sse delay=50'
	srv_start 'status=503' "$@"
	expect_status 75 saop-suspend --no-wait "$tmp/in" >/dev/null 2>&1
	[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq "$N" ] ||
	    fail "saved: $(sql 'SELECT count(*) FROM agent_turn_states')"
	base=$(srv_requests)
}

# calls: the model calls answered since save_turns().
calls() {
	echo $(($(srv_requests) - base))
}

# check_delivered FILE...: every turn exactly once in the FILEs, and
# nothing left saved.
check_delivered() {
	cat "$@" | jq -r 'select(.raw == "{\"ok\": true}") | .turn' | sort -n >"$tmp/turns"
	[ "$(wc -l <"$tmp/turns")" -eq "$N" ] ||
	    fail "$(wc -l <"$tmp/turns") records for $N turns"
	[ -z "$(uniq -d "$tmp/turns")" ] || fail "twice: $(uniq -d "$tmp/turns" | tr '\n' ' ')"
	[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] ||
	    fail "left saved: $(sql 'SELECT turn, claim_pid FROM agent_turn_states')"
}

for k in 3 8; do
	save_turns
	pids="" j=0
	while [ "$j" -lt "$k" ]; do
		j=$((j + 1))
		saop-suspend --resume >"$tmp/out.$j" 2>"$tmp/err.$j" &
		pids="$pids $!"
	done
	for p in $pids; do
		wait "$p" || fail "a resumer failed: $(cat "$tmp"/err.*)"
	done
	# The server logs a request once it has answered it: its last
	# line may come after the client is done.
	wait_for '[ "$(calls)" -ge "$N" ]' "the server to log $N calls" 60
	[ "$(calls)" -eq "$N" ] || fail "$k resumers: $(calls) model calls for $N turns"
	j=0 outs=""
	while [ "$j" -lt "$k" ]; do
		j=$((j + 1))
		outs="$outs $tmp/out.$j"
	done
	# shellcheck disable=SC2086
	check_delivered $outs
	echo "suspend-race: $k resumers, $N turns: $(calls) calls" >&2
done

# claimed PID: PID holds a claim and is in its call (or is gone).
claimed() {
	! kill -0 "$1" 2>/dev/null || { in_call "$1" &&
	    [ "$(sql "SELECT count(*) > 0 FROM agent_turn_states WHERE
	    claim_pid = $1" 2>/dev/null)" = 1 ]; }
}

# One of three resumers killed while it holds a turn in its call.  Its
# call (the first after the turns were saved) never ends: the others
# start once it holds its turn, and the kill finds it holding it,
# however slow the machine.
save_turns hang 'body=@a.sse delay=50'
saop-suspend --resume >"$tmp/k.1" 2>/dev/null &
victim=$!
wait_for 'claimed $victim' "the first resumer to claim a turn and call"
kill -0 "$victim" || fail "the first resumer ended"
saop-suspend --resume >"$tmp/k.2" 2>/dev/null &
p2=$!
saop-suspend --resume >"$tmp/k.3" 2>/dev/null &
p3=$!
held=$(sql "SELECT turn FROM agent_turn_states WHERE claim_pid = $victim")
[ -n "$held" ] || fail "no turn held by the killed resumer"
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
# Its only call never answered, it wrote nothing.
[ ! -s "$tmp/k.1" ] || fail "the killed resumer wrote: $(cat "$tmp/k.1")"
wait "$p2" || fail "resumer 2 failed"
wait "$p3" || fail "resumer 3 failed"
# Whatever the dead one held is free again: a last --resume takes it.
saop-suspend --resume >"$tmp/k.4" 2>"$tmp/k.err" || fail "$(cat "$tmp/k.err")"
check_delivered "$tmp/k.2" "$tmp/k.3" "$tmp/k.4"
# Every turn answered once (the killed call, never answered, is not in
# the server's log until it stops).
# The server logs a request once it has answered it: its last
# line may come after the client is done.
wait_for '[ "$(calls)" -ge "$N" ]' "the server to log $N calls" 60
[ "$(calls)" -eq "$N" ] || fail "killed resumer: $(calls) calls"
echo "suspend-race: one resumer killed: $(calls) calls, $N records" >&2

# A claim outlives its lease while its process works: the lease (here
# 2 s, renewed every third of it) is renewed, so a resumer coming after
# the first lease ran out, into a call that has not ended, skips it.  The
# call ends when the test has seen that: the server goes away and comes
# back (srv_restart), and the first resumer makes its call again.
export SAOP_CLAIM_LEASE_MS=2000 SAOP_NETWORK_POLL_INTERVAL_MS=50
rm -f "$SAOP_DB"*
srv_start 'status=503' hang
record slow 1 | expect_status 75 saop-suspend --no-wait >/dev/null 2>&1
saop-suspend --resume >"$tmp/s.1" 2>"$tmp/s.1.err" &
first=$!
wait_for 'claimed $first' "the first resumer to claim the turn and call"
kill -0 "$first" || fail "the first resumer ended: $(cat "$tmp/s.1.err")"
until0=$(sql "SELECT claim_until FROM agent_turn_states WHERE claim_pid = $first")
# Its lease is renewed (every third of it; given ten leases, however
# loaded the machine) ...
wait_for '[ "$(sql "SELECT count(*) > 0 FROM agent_turn_states WHERE
    claim_pid = $first AND claim_until > $until0" 2>/dev/null)" = 1 ]' \
    "the claim's lease to be renewed" 20
# ... and its first lease has run out: only the renewal holds it now.
wait_for '[ "$(sql "SELECT (julianday('"'now'"') - 2440587.5) * 86400000 >
    $until0")" = 1 ]' "the first lease to run out"
saop-suspend --resume -v >"$tmp/s.2" 2>"$tmp/s.err" || fail "second: $(cat "$tmp/s.err")"
grep -q 'is being worked on by pid' "$tmp/s.err" || fail "not skipped: $(cat "$tmp/s.err")"
srv_restart 'body=@a.sse'
wait "$first" || fail "first resumer: $(cat "$tmp/s.1.err")"
[ "$(cat "$tmp/s.1" "$tmp/s.2" | wc -l)" -eq 1 ] || fail "lease: $(cat "$tmp/s.1" "$tmp/s.2")"
# One call since the server came back: the first resumer's, made again.
[ "$(srv_requests)" -eq 1 ] || fail "lease: $(srv_requests) calls after the restart"
exit 0
