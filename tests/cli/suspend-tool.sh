#!/bin/sh
# saop-suspend: tool calls.  The real Anthropic capture of a tool_use cut
# at max_tokens gives tool_call {id, name} and raw = the arguments so far,
# which saop-detect finds truncated; an OpenAI tool call whose stream is
# cut in the middle of its arguments is resumed to complete arguments.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"
fx="$fixtures/llm"

cp "$fx/anthropic-max-tokens-tool-use.sse" "$tmp/tu.sse"
srv_start 'body=@tu.sse'
record a 0 | SAOP_PROVIDER=anthropic saop-suspend >"$tmp/out"
jqf '.tool_call.id == "toolu_01EKqbqmZrGRXy18eN7m9kvY" and
    .tool_call.name == "make_file" and .finish_reason == "length" and
    (.raw | startswith("{\"")) and (.raw | endswith("Filing taxes"))' "$tmp/out"
expect_status 1 saop-detect <"$tmp/out" >"$tmp/det"
jqf '.detect.truncated == true' "$tmp/det"

# OpenAI: the stream is reset after the arguments {"city":"Ed.
cp "$fx/openai-chat-tool-calls.sse" "$tmp/tc.sse"
cut=$(awk '/^data:/ { n++; if (n == 6) { print off; exit } }
    { off += length($0) + 1 }' "$tmp/tc.sse")
sse_openai "$tmp/rest.sse" 'inburgh","country":"UK",' '"units":"c"}'
srv_start "body=@tc.sse cut=$cut how=reset" 'body=@rest.sse'
record o 0 | SAOP_NETWORK_POLL_INTERVAL_MS=50 saop-suspend >"$tmp/out"
jqf '.raw == "{\"city\":\"Edinburgh\",\"country\":\"UK\",\"units\":\"c\"}" and
    .tool_call.id == "call_c91SqDXlYFuETYv8mUHzz6pp" and
    .tool_call.name == "GetWeatherArgs" and .finish_reason == "tool_calls" and
    .suspend.resumes == 1' "$tmp/out"
last=$(ls "$SRV_SAVE" | tail -1)
jq -e '.messages[-1].content | contains("{\"city\":\"Ed")' "$SRV_SAVE/$last" \
    >/dev/null || fail "continuation: $(cat "$SRV_SAVE/$last")"
exit 0
