#!/bin/sh
# saop-suspend: kill -9 during the call leaves the turn saved (task
# IN_PROGRESS); --resume then completes it.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

sse_openai "$tmp/a.sse" '{"k": ' '42}'
# The first answer stops after its first event and never ends: the call
# is under way when it is killed, however slow the machine.
cut=$(grep -b '^data: ' "$tmp/a.sse" | sed -n 2p | cut -d: -f1)
srv_start "body=@a.sse cut=$cut how=hang" 'body=@a.sse'
record k 2 >"$tmp/in"
saop-suspend "$tmp/in" >"$tmp/out" 2>&1 &
pid=$!
# Killed once it is in its call (the turn saved before it).
wait_for 'in_call $pid || ! kill -0 $pid 2>/dev/null' "saop-suspend to call"
kill -9 $pid
wait $pid 2>/dev/null && fail "saop-suspend was not killed"
[ "$(sql "SELECT json_extract(turn_state_json, '\$.record.turn') FROM
    agent_turn_states WHERE task_id = 'k'")" = 2 ] || fail "no saved turn"
[ "$(sql "SELECT status FROM tasks WHERE task_id = 'k'")" = IN_PROGRESS ] ||
    fail "task: $(sql 'SELECT * FROM tasks')"
[ ! -s "$tmp/out" ] || fail "a record was written: $(cat "$tmp/out")"
saop-suspend --resume k >"$tmp/out"
jqf '.raw == "{\"k\": 42}" and .task_id == "k" and .turn == 2' "$tmp/out"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] || fail "row kept"
exit 0
