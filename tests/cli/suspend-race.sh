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

# save_turns: N turns of task "race" saved (the endpoint down, --no-wait).
save_turns() {
	rm -f "$SAOP_DB"*
	i=0
	while [ "$i" -lt "$N" ]; do
		i=$((i + 1))
		record race "$i"
	done >"$tmp/in"
	srv_start 'status=503' 'body=@a.sse delay=50'
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
	if [ -n "${again:-}" ]; then
		# The documented window: killed after its record was written,
		# before its row's deletion was committed: that one turn may
		# come twice (once when the deletion reached the log).
		[ "$(grep -c -x -- "$again" "$tmp/turns")" -le 2 ] ||
		    fail "turn $again more than twice"
		awk -v t="$again" '$0 == t && seen++ { next } { print }' \
		    "$tmp/turns" >"$tmp/turns.1"
		mv "$tmp/turns.1" "$tmp/turns"
	fi
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

# One of three resumers killed while it holds a turn in its call.
save_turns
saop-suspend --resume >"$tmp/k.1" 2>/dev/null &
victim=$!
saop-suspend --resume >"$tmp/k.2" 2>/dev/null &
p2=$!
saop-suspend --resume >"$tmp/k.3" 2>/dev/null &
p3=$!
i=0
until [ "$(sql "SELECT count(*) FROM agent_turn_states WHERE claim_pid = $victim")" -gt 0 ]; do
	i=$((i + 1))
	[ "$i" -lt 400 ] || fail "the resumer never claimed a turn"
	sleep 0.01
done
# Stopped first, so that what it holds and what it wrote are seen at the
# moment it dies.
kill -STOP "$victim"
held=$(sql "SELECT turn FROM agent_turn_states WHERE claim_pid = $victim")
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
again=
for t in $held; do
	# A turn it held whose record it had already written (and flushed)
	# is the window saop-suspend(1) documents: written, not yet
	# forgotten.  Any other turn twice is a failure.
	if jq -e --argjson t "$t" 'select(.turn == $t and .raw == "{\"ok\": true}")' \
	    "$tmp/k.1" >/dev/null 2>&1; then
		[ -z "$again" ] || fail "two turns written and not forgotten: $again $t"
		again=$t
		echo "suspend-race: killed between writing turn $t and forgetting it" >&2
	fi
done
wait "$p2" || fail "resumer 2 failed"
wait "$p3" || fail "resumer 3 failed"
# Whatever the dead one held is free again: a last --resume takes it.
saop-suspend --resume >"$tmp/k.4" 2>"$tmp/k.err" || fail "$(cat "$tmp/k.err")"
check_delivered "$tmp/k.1" "$tmp/k.2" "$tmp/k.3" "$tmp/k.4"
again=
# The killed resumer's call may have been answered before it died: one
# call more at most, never a turn twice.
[ "$(calls)" -le $((N + 1)) ] || fail "killed resumer: $(calls) calls"
echo "suspend-race: one resumer killed: $(calls) calls, $N records" >&2

# A claim outlives its lease while its process works: the lease (here
# 300 ms) is renewed, so a resumer coming 1 s into a 2 s call skips it.
export SAOP_CLAIM_LEASE_MS=300
rm -f "$SAOP_DB"*
srv_start 'status=503' 'body=@a.sse delay=2000'
record slow 1 | expect_status 75 saop-suspend --no-wait >/dev/null 2>&1
base=$(srv_requests)
saop-suspend --resume >"$tmp/s.1" 2>/dev/null &
first=$!
i=0
until [ "$(sql "SELECT count(*) FROM agent_turn_states WHERE claim_pid = $first")" -gt 0 ]; do
	i=$((i + 1)); [ "$i" -lt 400 ] || fail "the first resumer never claimed"
	sleep 0.01
done
sleep 1
saop-suspend --resume -v >"$tmp/s.2" 2>"$tmp/s.err" || fail "second: $(cat "$tmp/s.err")"
grep -q 'is being worked on by pid' "$tmp/s.err" || fail "not skipped: $(cat "$tmp/s.err")"
wait "$first" || fail "first resumer"
[ "$(cat "$tmp/s.1" "$tmp/s.2" | wc -l)" -eq 1 ] || fail "lease: $(cat "$tmp/s.1" "$tmp/s.2")"
[ "$(calls)" -eq 1 ] || fail "lease: $(calls) calls"
exit 0
