#!/bin/sh
# saop-validate under the suspend policy: the network lost during a
# correction turn pauses the task, saves the turn (stage saop-validate),
# waits for the endpoint and sends the turn again; with --no-wait it exits
# 75 with the turn kept, and run again on its output once the endpoint is
# back it finishes and deletes the row.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

good=$(jq -c . "$data/validate/good.json")
sse_openai "$tmp/good.sse" "$good"
printf '%s\n' '{"task_id":"v","turn":2,"request":{"messages":[{"role":"user","content":"What next?"}]},"raw":"{\"saop\": \"1.0\", \"turn_index\": \"zero\"}"}' \
    >"$tmp/in"
export SAOP_NETWORK_POLL_INTERVAL_MS=50
# The requests the server got (its log also has "down" and "up" lines).
posts() {
	grep -c '"method"' "$SRV_LOG" || true
}

# 1. Down for a second (a reset, then refused), then up: paused, resumed.
srv_start 'down=1' 'body=@good.sse'
SAOP_MAX_AUTO_RESUME=100 expect_status 0 saop-validate "$tmp/in" \
    >"$tmp/out" 2>"$tmp/err"
jqf '.state == "OK" and .validate.valid and .validate.attempts == 1' \
    "$tmp/out"
# While the server refuses, a probe can still get through (then the call
# is lost again): one pause or more, each resumed.
[ "$(posts)" -ge 2 ] || fail "requests: $(posts)"
sql "SELECT group_concat(event, ',') FROM (SELECT event FROM events
    ORDER BY id)" | grep -Eq '^MALFORMED_RESPONSE(,NETWORK_LOST,NETWORK_RESTORED,TURN_RESUMED)+,CORRECTION_ANSWERED$' ||
    fail "events: $(sql 'SELECT event FROM events')"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] || fail "row kept"

# 2. --no-wait: 75 at once, the record written as it stands, the turn kept.
rm -f "$SAOP_DB"
srv_start 'down=30'
expect_status 75 saop-validate --no-wait "$tmp/in" >"$tmp/out" 2>"$tmp/err"
grep -q 'suspended (--no-wait.*run saop-validate again on its output' \
    "$tmp/err" || fail "stderr: $(cat "$tmp/err")"
jqf '.state == "INVALID" and (.validate.valid | not)' "$tmp/out"
[ "$(posts)" -eq 1 ] || fail "--no-wait: requests $(posts)"
[ "$(sql "SELECT json_extract(turn_state_json, '\$.stage') FROM
    agent_turn_states WHERE task_id = 'v'")" = saop-validate ] ||
    fail "row: $(sql 'SELECT * FROM agent_turn_states')"
[ "$(sql "SELECT status || ' ' || reason FROM tasks")" = \
    "PAUSED_FOR_INTERVENTION NETWORK_LOSS" ] || fail "task: $(sql 'SELECT * FROM tasks')"
# Back up: run again on the output, it finishes and the row goes.
srv_start 'body=@good.sse'
expect_status 0 saop-validate "$tmp/out" >"$tmp/out2"
jqf '.state == "OK"' "$tmp/out2"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] ||
    fail "row kept after the turn finished"
exit 0
