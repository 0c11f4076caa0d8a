#!/bin/sh
# saop-suspend: the endpoint refuses connections, then listens again: the
# turn is paused (row saved, task PAUSED_FOR_INTERVENTION, NETWORK_LOST),
# then resumed by itself (NETWORK_RESTORED, TURN_RESUMED), the row is
# deleted and the task is IN_PROGRESS again, DONE once the record is out.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

sse_openai "$tmp/a.sse" '{"ok": ' 'true}'
srv_start 'body=@a.sse'
srv_pause
SAOP_NETWORK_POLL_INTERVAL_MS=100 SAOP_MAX_AUTO_RESUME=50 \
    saop-suspend --log "$tmp/ev" <<EOF2 >"$tmp/out" 2>"$tmp/err" &
$(record t1 3)
EOF2
pid=$!
wait_for 'grep -q NETWORK_LOST "$tmp/ev" 2>/dev/null || ! kill -0 $pid 2>/dev/null' \
    "NETWORK_LOST"
grep -q NETWORK_LOST "$tmp/ev" || fail "no NETWORK_LOST: $(cat "$tmp/err")"
[ "$(sql "SELECT status || ' ' || reason FROM tasks")" = \
    "PAUSED_FOR_INTERVENTION NETWORK_LOSS" ] || fail "paused: $(sql 'SELECT * FROM tasks')"
[ "$(sql "SELECT json_extract(turn_state_json, '\$.record.turn') || ' ' ||
    json_extract(turn_state_json, '\$.stage') FROM agent_turn_states
    WHERE task_id = 't1'")" = "3 saop-suspend" ] || fail "no saved turn"
kill -0 $pid || fail "saop-suspend did not wait"
srv_resume
wait $pid || fail "saop-suspend exited $?: $(cat "$tmp/err")"
jqf '.raw == "{\"ok\": true}" and .suspend.resumes == 1' "$tmp/out"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] || fail "row kept"
[ "$(sql 'SELECT status FROM tasks')" = DONE ] || fail "status"
[ "$(sql 'SELECT group_concat(event) FROM events')" = \
    "NETWORK_LOST,NETWORK_RESTORED,TURN_RESUMED" ] ||
    fail "events: $(sql 'SELECT group_concat(event) FROM events')"
exit 0
