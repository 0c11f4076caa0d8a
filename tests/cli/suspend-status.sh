#!/bin/sh
# What an HTTP status means to the suspend policy, whatever the body says.
# A 4xx but 408, 409 and 429 is the client's error: a refusal naming the
# status (exit 69) at once, one request, nothing saved, no NETWORK_LOST,
# even when the body calls it a server error or the server unavailable.
# After a 5xx or 529 the first probe waits at least one interval
# (SAOP_NETWORK_POLL_INTERVAL_MS) or the server's Retry-After, whichever
# is longer: the server's own log of when the requests came is the
# measure (a lower bound, true however loaded the machine).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

sse_openai "$tmp/a.sse" '{"ok": ' 'true}'
printf '%s' '{"error": {"message": "The server had an error while processing your request.", "type": "server_error", "param": null, "code": null}}' >"$tmp/server_error.json"
printf '%s' '{"error": {"code": 400, "message": "The service is currently unavailable.", "status": "UNAVAILABLE"}}' >"$tmp/unavailable.json"
printf '%s' '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}' >"$tmp/overloaded.json"
printf '%s' '{"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}' >"$tmp/rate.json"

n=0
for c in '400 server_error' '400 unavailable' '422 overloaded' '413 server_error' \
    '404 rate'; do
	set -- $c
	n=$((n + 1))
	srv_start "status=$1 body=@$2.json" 'body=@a.sse'
	record "c$n" 0 | expect_status 69 env SAOP_NETWORK_POLL_INTERVAL_MS=50 \
	    saop-suspend >"$tmp/out" 2>"$tmp/err"
	[ "$(srv_requests)" -eq 1 ] || fail "$c: $(srv_requests) requests"
	grep -q "HTTP $1" "$tmp/err" || fail "$c: stderr: $(cat "$tmp/err")"
	jqf ".error.status == 69 and .suspend == null" "$tmp/out"
	[ "$(sql "SELECT count(*) FROM agent_turn_states WHERE task_id = 'c$n'")" -eq 0 ] ||
	    fail "$c: the turn was saved"
	[ "$(sql "SELECT count(*) FROM events WHERE task_id = 'c$n' AND
	    event = 'NETWORK_LOST'")" -eq 0 ] || fail "$c: logged as a loss"
done
# Not with --no-wait either: 69, not 75.
srv_start 'status=400 body=@server_error.json'
record nw 0 | expect_status 69 saop-suspend --no-wait >"$tmp/out" 2>"$tmp/err"

# gap: seconds between the server's first two requests.
gap() {
	jq -s '[.[] | select(.method)] | .[1].time - .[0].time' "$SRV_LOG"
}
# A 503 with no Retry-After: one interval (800 ms) first.
srv_start 'status=503 body=busy' 'body=@a.sse'
record w1 0 | SAOP_NETWORK_POLL_INTERVAL_MS=800 saop-suspend >"$tmp/out" 2>"$tmp/err" ||
    fail "503: $(cat "$tmp/err")"
jqf '.raw == "{\"ok\": true}" and .suspend.resumes == 1' "$tmp/out"
[ "$(jq -n "$(gap) >= 0.75")" = true ] || fail "503: resent after $(gap) s, not one interval"
# A 503 (and a 529) with Retry-After: 2 and an interval of 50 ms: 2 s.
for s in 503 529; do
	srv_start "status=$s retry_after=2 body=busy" 'body=@a.sse'
	record "w$s" 0 | SAOP_NETWORK_POLL_INTERVAL_MS=50 saop-suspend >"$tmp/out" 2>"$tmp/err" ||
	    fail "$s: $(cat "$tmp/err")"
	jqf '.raw == "{\"ok\": true}" and .suspend.resumes == 1' "$tmp/out"
	[ "$(jq -n "$(gap) >= 1.95")" = true ] ||
	    fail "$s Retry-After 2: resent after $(gap) s"
done
exit 0
