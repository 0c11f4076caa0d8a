#!/bin/sh
# saop-suspend: waiting is separate from resuming.  An outage of 40 poll
# intervals is waited out and the turn resumed by itself (one resumption,
# a line on stderr at each change); an endpoint that comes back and
# drops again four times ends in 75 after the third resumption
# (--max-resumes), with every byte received kept in the saved turn.  No
# core dump is left by a process that holds the key.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

export SAOP_NETWORK_POLL_INTERVAL_MS=50
sse_openai "$tmp/a.sse" '{"a": 1}'
# 1. Down for 2 s = 40 polls of 50 ms: far past 3 polls.
srv_start 'down=2' 'body=@a.sse'
record o 1 >"$tmp/in"
saop-suspend "$tmp/in" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for 'grep -q "waiting for it" "$tmp/err" || ! kill -0 $pid 2>/dev/null' \
    "the wait for the endpoint"
grep -q 'waiting for it' "$tmp/err" || fail "never waited: $(cat "$tmp/err")"
# Meanwhile: a process that holds the key leaves no core dump.
if [ -r "/proc/$pid/limits" ]; then
	grep -q '^Max core file size *0 *0 ' "/proc/$pid/limits" ||
	    fail "core dumps on: $(grep core "/proc/$pid/limits")"
fi
wait "$pid" || fail "exit $?: $(cat "$tmp/err")"
# Resumed by itself: once, or more when a probe slipped in while the
# server was going down (a loaded machine), never past --max-resumes.
jqf '.raw == "{\"a\": 1}" and .suspend.resumes >= 1 and .suspend.resumes <= 3' "$tmp/out"
grep -q 'endpoint http://[^ ]* is unreachable; waiting for it (a probe every 50 ms, for ' "$tmp/err" ||
    fail "no waiting line: $(cat "$tmp/err")"
# (In ms when it was slow to start waiting: under a second of the outage left.)
grep -q 'endpoint http://[^ ]* reachable again after [0-9.]* m\{0,1\}s: resuming' "$tmp/err" ||
    fail "no reachable line: $(cat "$tmp/err")"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] || fail "row kept"

# 2. Four drops, each after a piece of the answer: resumed three times,
# then 75 with all four pieces saved.
rm -f "$SAOP_DB"*
steps="" n=0
for p in '{"a": "one ' 'two ' 'three ' 'four '; do
	n=$((n + 1))
	sse_openai "$tmp/p$n.sse" "$p" -- length
	cut=$(grep -b '^data: ' "$tmp/p$n.sse" | sed -n 2p | cut -d: -f1)
	steps="$steps 'body=@p$n.sse cut=$cut how=reset'"
done
eval "srv_start $steps"
record d 2 | expect_status 75 saop-suspend >"$tmp/out" 2>"$tmp/err"
grep -q 'resumptions spent: --max-resumes reached, 3 resumptions' "$tmp/err" ||
    fail "stderr: $(cat "$tmp/err")"
[ "$(srv_requests)" -eq 4 ] || fail "$(srv_requests) calls"
jqf '.suspend.limit == "max-resumes" and .suspend.resumes == 3' "$tmp/out"
[ "$(sql "SELECT json_extract(turn_state_json, '\$.partial') FROM agent_turn_states")" = \
    '{"a": "one two three four ' ] ||
    fail "kept: $(sql 'SELECT turn_state_json FROM agent_turn_states')"
[ "$(sql "SELECT json_extract(data, '\$.limit') FROM events WHERE event = 'TURN_SUSPENDED'")" = max-resumes ] ||
    fail "events: $(sql 'SELECT event, data FROM events')"
exit 0
