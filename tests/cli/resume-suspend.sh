#!/bin/sh
# saop-resume under the suspend policy: the network lost during a
# continuation call pauses the task, saves the turn (stage saop-resume),
# waits for the endpoint and makes the call again; with --no-wait, or once
# --max-resumes is spent, it exits 75 with the turn kept, and run again on
# its output once the endpoint is back it finishes and deletes the row.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

in="$data/resume/trunc.ndjson"
full='{"name": "saop", "tags": ["a", "b"]}'
sse_openai "$tmp/b.sse" '"b"]}'
export SAOP_NETWORK_POLL_INTERVAL_MS=50
# The requests the server got (its log also has "down" and "up" lines).
posts() {
	grep -c '"method"' "$SRV_LOG" || true
}

# 1. Down for a second (a reset, then refused), then up: paused, resumed.
srv_start 'down=1' 'body=@b.sse'
SAOP_MAX_AUTO_RESUME=100 expect_status 0 saop-resume "$in" >"$tmp/out" \
    2>"$tmp/err"
[ "$(jq -r .raw "$tmp/out")" = "$full" ] || fail "raw: $(cat "$tmp/out")"
jqf '.state == "OK" and .resume.status == "RESOLVED" and
    .resume.attempts == 1' "$tmp/out"
# While the server refuses, a probe can still get through (then the call
# is lost again): one pause or more, each resumed.
[ "$(posts)" -ge 2 ] || fail "requests: $(posts)"
sql "SELECT group_concat(event, ',') FROM (SELECT event FROM events
    ORDER BY id)" | grep -Eq '^PARTIAL_COMPLETION_DETECTED(,NETWORK_LOST,NETWORK_RESTORED,TURN_RESUMED)+,RESUME_SUCCEEDED$' ||
    fail "events: $(sql 'SELECT event FROM events')"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] || fail "row kept"
[ "$(sql "SELECT status FROM tasks WHERE task_id = 't1'")" = DONE ] ||
    fail "task: $(sql 'SELECT * FROM tasks')"

# 2. --no-wait: 75 at once, the record written, the turn kept.
rm -f "$SAOP_DB"
srv_start 'down=30'
expect_status 75 saop-resume --no-wait "$in" >"$tmp/out" 2>"$tmp/err"
grep -q 'suspended (--no-wait.*run saop-resume again on its output' \
    "$tmp/err" || fail "stderr: $(cat "$tmp/err")"
jqf '.resume.status == "SUSPENDED" and .state == "TRUNCATED"' "$tmp/out"
[ "$(posts)" -eq 1 ] || fail "--no-wait: requests $(posts)"
[ "$(sql "SELECT json_extract(turn_state_json, '\$.stage') || ' ' ||
    json_extract(turn_state_json, '\$.record.raw') FROM agent_turn_states
    WHERE task_id = 't1'")" = 'saop-resume {"name": "saop", "tags": ["a", ' ] ||
    fail "row: $(sql 'SELECT * FROM agent_turn_states')"
[ "$(sql "SELECT status || ' ' || reason FROM tasks")" = \
    "PAUSED_FOR_INTERVENTION NETWORK_LOSS" ] || fail "task: $(sql 'SELECT * FROM tasks')"
# saop-suspend --resume points at the program that saved it.
expect_status 1 saop-suspend --resume >/dev/null 2>"$tmp/err"
grep -q 'saved by saop-resume; resume it with saop-resume' "$tmp/err" ||
    fail "saop-suspend --resume: $(cat "$tmp/err")"
# Back up: run again on the output, it finishes and the row goes.
srv_start 'body=@b.sse'
expect_status 0 saop-resume "$tmp/out" >"$tmp/out2"
[ "$(jq -r .raw "$tmp/out2")" = "$full" ] || fail "again: $(cat "$tmp/out2")"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] ||
    fail "row kept after the turn finished"

# 3. Up for a probe but every call reset: past --max-resumes, 75, kept.
rm -f "$SAOP_DB"
srv_start 'reset'
expect_status 75 saop-resume --max-resumes 2 "$in" >"$tmp/out" 2>"$tmp/err"
grep -q 'resumptions spent' "$tmp/err" || fail "stderr: $(cat "$tmp/err")"
[ "$(posts)" -eq 3 ] || fail "--max-resumes 2: requests $(posts)"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 1 ] || fail "row lost"
[ "$(sql "SELECT count(*) FROM events WHERE event = 'TURN_RESUMED'")" -eq 2 ] ||
    fail "resumptions: $(sql 'SELECT event FROM events')"
exit 0
