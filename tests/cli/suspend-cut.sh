#!/bin/sh
# saop-suspend: the connection is dropped mid-stream after half the
# answer: the resumed call continues from the half (resume protocol, the
# original messages once), the final raw is the full answer exactly once,
# and the bytes received are the answer's length and nothing more.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

full='{"answer": "hello world, this is long", "n": [1, 2, 3]}'
sse_openai "$tmp/a.sse" '{"answer": "hello ' 'world, ' 'this is long", "n": [1, 2, 3]}'
sse_openai "$tmp/b.sse" 'this is long", "n": [1, 2, 3]}'
# Cut the first answer right after "world, ".
cut=$(grep -b 'this is long' "$tmp/a.sse" | cut -d: -f1)
srv_start "body=@a.sse cut=$cut how=reset" 'body=@b.sse'
record t 1 | SAOP_NETWORK_POLL_INTERVAL_MS=50 saop-suspend >"$tmp/out"
jq -r .raw "$tmp/out" >"$tmp/raw"
[ "$(cat "$tmp/raw")" = "$full" ] || fail "raw is $(cat "$tmp/raw")"
jqf ".suspend.resumes == 1 and .suspend.received == ${#full}" "$tmp/out"
[ "$(srv_requests)" -eq 2 ] || fail "$(srv_requests) requests"
b2=$(ls "$SRV_SAVE" | sed -n 2p)
jq -e '(.messages | length) == 2 and .messages[0].content == "answer in JSON"
    and (.messages[1].content | contains("{\"answer\": \"hello world, "))
    and (.messages[1].content | startswith("Continue the JSON payload"))' \
    "$SRV_SAVE/$b2" >/dev/null || fail "continuation request: $(cat "$SRV_SAVE/$b2")"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] || fail "row kept"

# Cut with a plain close (a short body) and the continuation cut again.
sse_openai "$tmp/c.sse" 'this is ' 'long", "n": [1, 2, 3]}'
cut2=$(grep -b 'long' "$tmp/c.sse" | head -1 | cut -d: -f1)
sse_openai "$tmp/b2.sse" 'long", "n": [1, 2, 3]}'
srv_start "body=@a.sse cut=$cut how=close chunked=1" \
    "body=@c.sse cut=$cut2 how=reset" 'body=@b2.sse'
record t2 1 | SAOP_NETWORK_POLL_INTERVAL_MS=50 saop-suspend >"$tmp/out"
[ "$(jq -r .raw "$tmp/out")" = "$full" ] || fail "raw is $(jq -r .raw "$tmp/out")"
jqf ".suspend.resumes == 2 and .suspend.received == ${#full}" "$tmp/out"
exit 0
