#!/bin/sh
# saop-suspend: kill -9 during the call leaves the turn saved (task
# IN_PROGRESS); --resume then completes it.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

sse_openai "$tmp/a.sse" '{"k": ' '42}'
# The first answer drips slowly: the call is under way when it is killed.
srv_start 'body=@a.sse drip=10/200' 'body=@a.sse'
record k 2 >"$tmp/in"
saop-suspend "$tmp/in" >"$tmp/out" 2>&1 &
pid=$!
i=0
until [ -s "$SAOP_DB" ] && [ "$(sql 'SELECT count(*) FROM agent_turn_states' 2>/dev/null)" = 1 ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no saved turn before the call"
	sleep 0.05
done
sleep 0.3
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
