#!/bin/sh
# saop-suspend --resume, exactly once: 3 and 8 resumers at once on 30
# saved turns make exactly 30 model calls and write 30 records, each turn
# once; with one resumer killed in the middle of its call, the turn it
# held is taken over (its pid is gone) and still delivered once.
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
	srv_start 'status=503' 'body=@a.sse delay=0.05'
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
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
wait "$p2" || fail "resumer 2 failed"
wait "$p3" || fail "resumer 3 failed"
# Whatever the dead one held is free again: a last --resume takes it.
saop-suspend --resume >"$tmp/k.4" 2>"$tmp/k.err" || fail "$(cat "$tmp/k.err")"
check_delivered "$tmp/k.1" "$tmp/k.2" "$tmp/k.3" "$tmp/k.4"
# The killed resumer's call may have been answered before it died: one
# call more at most, never a turn twice.
[ "$(calls)" -le $((N + 1)) ] || fail "killed resumer: $(calls) calls"
echo "suspend-race: one resumer killed: $(calls) calls, $N records" >&2
exit 0
