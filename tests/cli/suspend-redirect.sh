#!/bin/sh
# saop-suspend: a 3xx redirect is a refusal (69), not a lost network:
# no retry, no wait, and the message names where it points, with the
# credentials and query values of that URL masked.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

srv_start 'status=302 header=Location:https://bob:hunter2@llm.example/v1/chat/completions?token=s3cret'
export SAOP_NETWORK_POLL_INTERVAL_MS=50
record r 1 | expect_status 69 saop-suspend >"$tmp/out" 2>"$tmp/err"
grep -q 'HTTP 302: redirected to https://\*\*\*\*@llm.example/v1/chat/completions?token=\*\*\*\*' "$tmp/err" ||
    fail "stderr: $(cat "$tmp/err")"
! grep -q 'hunter2\|s3cret' "$tmp/err" "$tmp/out" || fail "a credential shown"
[ "$(srv_requests)" -eq 1 ] || fail "$(srv_requests) requests: retried"
! grep -q 'waiting' "$tmp/err" || fail "waited: $(cat "$tmp/err")"
jqf '.error.status == 69' "$tmp/out"
exit 0
