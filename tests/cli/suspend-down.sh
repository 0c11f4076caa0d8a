#!/bin/sh
# saop-suspend: the endpoint goes down for longer than --max-wait: exit
# 75 with the turn saved (and the part received) and the reason; --list
# shows it; --resume completes it from that part once the endpoint is back.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

full='{"a": "one two three"}'
sse_openai "$tmp/a.sse" '{"a": "one ' 'two three"}'
sse_openai "$tmp/b.sse" 'two three"}'
cut=$(grep -b 'two three' "$tmp/a.sse" | cut -d: -f1)
# Half an answer, then the server is down (refusing) until the test
# brings it back (srv_restart below): longer than --max-wait however slow
# the machine, never over by the clock.
srv_start "body=@a.sse cut=$cut how=reset" 'down=3600'
export SAOP_NETWORK_POLL_INTERVAL_MS=50
record t 7 | expect_status 75 saop-suspend --max-wait 300ms >"$tmp/out" 2>"$tmp/err"
grep -q 'suspended.*--max-wait reached' "$tmp/err" || fail "stderr: $(cat "$tmp/err")"
grep -q "endpoint $SAOP_API_BASE is unreachable; waiting" "$tmp/err" || fail "no wait line: $(cat "$tmp/err")"
jqf '.state == "PAUSED_FOR_INTERVENTION" and .raw == null and .suspend.limit == "max-wait"' "$tmp/out"
[ "$(sql "SELECT json_extract(data, '\$.limit') FROM events WHERE event = 'TURN_SUSPENDED'")" = max-wait ] ||
    fail "event: $(sql 'SELECT event, data FROM events')"
[ "$(sql "SELECT json_extract(turn_state_json, '\$.partial') FROM
    agent_turn_states WHERE task_id = 't'")" = '{"a": "one ' ] ||
    fail "saved partial: $(sql 'SELECT * FROM agent_turn_states')"
[ "$(sql "SELECT status || ' ' || reason FROM tasks")" = \
    "PAUSED_FOR_INTERVENTION NETWORK_LOSS" ] || fail "task: $(sql 'SELECT * FROM tasks')"
saop-suspend --list >"$tmp/list"
awk -F'\t' '$1 == "t" && $2 == 7 && $3 == "saop-suspend" && $5 == 11 { ok = 1 }
    END { exit !ok }' "$tmp/list" || fail "--list: $(cat "$tmp/list")"
head -1 "$tmp/list" | grep -qx 'TASK	TURN	STAGE	SAVED_AT	RECEIVED	CLAIM' ||
    fail "--list header: $(cat "$tmp/list")"
[ "$(wc -l <"$tmp/list")" -eq 2 ] || fail "--list: $(cat "$tmp/list")"
saop-suspend --list --json >"$tmp/json"
jqf 'length == 1 and (.[0] | .task == "t" and .turn == 7 and
    .stage == "saop-suspend" and .received == 11 and .claim == null and
    (.saved_at | type) == "string")' "$tmp/json"
# Still down: --resume --no-wait keeps it saved (75) ...
expect_status 75 saop-suspend --resume --no-wait >/dev/null 2>&1
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 1 ] || fail "row lost"
# ... back up: --resume finishes it from the part received.
srv_restart 'body=@b.sse'
saop-suspend --resume >"$tmp/out2"
[ "$(jq -r .raw "$tmp/out2")" = "$full" ] || fail "resumed raw: $(cat "$tmp/out2")"
jqf '.task_id == "t" and .turn == 7' "$tmp/out2"
last=$(ls "$SRV_SAVE" | tail -1)
jq -e '.messages[1].content | contains("{\"a\": \"one ")' "$SRV_SAVE/$last" \
    >/dev/null || fail "not continued from the part: $(cat "$SRV_SAVE/$last")"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] || fail "row kept"
[ "$(sql 'SELECT status FROM tasks')" = DONE ] || fail "status"
exit 0
