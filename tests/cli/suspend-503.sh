#!/bin/sh
# saop-suspend: 503 twice, then an answer: two resumptions, one record;
# a 429 with Retry-After is waited out and is not a loss.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

sse_openai "$tmp/a.sse" '[1, 2, ' '3]'
srv_start 'status=503 body=busy' 'status=503 body=busy' 'body=@a.sse'
record t 0 | SAOP_NETWORK_POLL_INTERVAL_MS=50 saop-suspend >"$tmp/out"
jqf '.raw == "[1, 2, 3]" and .suspend.resumes == 2' "$tmp/out"
[ "$(srv_requests)" -eq 3 ] || fail "$(srv_requests) requests"
[ "$(sql "SELECT count(*) FROM events WHERE event = 'NETWORK_LOST'")" -eq 2 ] ||
    fail "NETWORK_LOST not logged twice"

# Three 503s with two resumptions allowed: exit 75, the row kept.
srv_start 'status=503 body=busy'
record t2 0 | expect_status 75 env SAOP_NETWORK_POLL_INTERVAL_MS=50 \
    saop-suspend --max-resumes 2 >"$tmp/out" 2>"$tmp/err"
[ "$(srv_requests)" -eq 3 ] || fail "$(srv_requests) requests with 2 resumptions"
jqf '.state == "PAUSED_FOR_INTERVENTION" and .error.status == 75' "$tmp/out"
[ "$(sql "SELECT count(*) FROM agent_turn_states WHERE task_id = 't2'")" -eq 1 ] ||
    fail "row not kept"

# 429 Retry-After 1: waited, no NETWORK_LOST.  The wait is what the
# server recorded: its second request came at least 1 s (less the clock's
# grain) after the 429 it answered, however loaded the machine.
srv_start 'status=429 retry_after=1 body={}' 'body=@a.sse'
record t3 0 | SAOP_MAX_AUTO_RESUME=0 saop-suspend >"$tmp/out"
[ "$(srv_requests)" -eq 2 ] || fail "$(srv_requests) requests for a 429 then an answer"
jq -s -e '[.[] | select(.method)] | .[1].time - .[0].time >= 0.95' "$SRV_LOG" >/dev/null ||
    fail "429 was not waited out: $(cat "$SRV_LOG")"
jqf '.raw == "[1, 2, 3]" and (.suspend == null)' "$tmp/out"
[ "$(sql "SELECT count(*) FROM events WHERE task_id = 't3'")" -eq 0 ] ||
    fail "a 429 was logged as a loss"
exit 0
