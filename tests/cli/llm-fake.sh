#!/bin/sh
# llm-lib.sh over saop-mock: the steps made replies (finish length, a tool
# call, a 429 with Retry-After), both wire formats, plain and SSE, the
# request log as fake_llm_requests prints it (the key never stored, its
# state), the key check off argv, the end of the script.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"
command -v curl >/dev/null 2>&1 || skip "no curl"

fake_llm_start --provider anthropic \
    '{"text": "{\"a\": 1}", "finish": "length"}' \
    '{"text": "hello"}' \
    '{"status": 429, "retry_after": 3}'
[ "$SAOP_PROVIDER" = anthropic ] || fail "SAOP_PROVIDER=$SAOP_PROVIDER"
[ "$SAOP_MODEL" = fake-model ] || fail "SAOP_MODEL=$SAOP_MODEL"
case $SAOP_API_BASE in
http://127.0.0.1:*/v1) ;;
*) fail "SAOP_API_BASE=$SAOP_API_BASE" ;;
esac
# The key stays off the server's command line.
tr '\0' ' ' </proc/"$FAKE_LLM_PID"/cmdline >"$tmp/cmdline" 2>/dev/null || :
if grep -q -F -- "$SAOP_API_KEY" "$tmp/cmdline"; then
	fail "the key is on the fake server's argv"
fi
hk="x-api-key: $SAOP_API_KEY"

# SSE when asked: text in pieces, stop reason mapped to max_tokens.
curl -sS -N -H "$hk" -d '{"model": "m", "stream": true, "messages": []}' \
    "$SAOP_API_BASE/messages" >"$tmp/sse"
grep -q '^event: message_stop$' "$tmp/sse" ||
    fail "no message_stop: $(cat "$tmp/sse")"
sed -n 's/^data: //p' "$tmp/sse" | jq -e -s 'map(select(.type ==
    "message_delta"))[0].delta.stop_reason == "max_tokens"' >/dev/null ||
    fail "no max_tokens"
[ "$(grep -c '"text_delta"' "$tmp/sse")" -ge 2 ] || fail "text not split"
text=$(sed -n 's/^data: //p' "$tmp/sse" |
    jq -j 'select(.type == "content_block_delta") | .delta.text')
[ "$text" = '{"a": 1}' ] || fail "SSE text: $text"

# One JSON body otherwise.
curl -sS -H "$hk" -d '{"model": "m", "messages": []}' \
    "$SAOP_API_BASE/messages" >"$tmp/json"
jqf '.content[0].text == "hello" and .stop_reason == "end_turn"' "$tmp/json"

# 429 with Retry-After.
curl -sS -D "$tmp/h" -o "$tmp/b" -H "$hk" -d '{}' "$SAOP_API_BASE/messages"
grep -q '^HTTP/1.1 429' "$tmp/h" || fail "not 429: $(cat "$tmp/h")"
grep -qi '^retry-after: 3' "$tmp/h" || fail "no Retry-After"
jqf '.error.type == "rate_limit_error"' "$tmp/b"

# Script exhausted: 500.
code=$(curl -sS -o "$tmp/b" -w '%{http_code}' -H "$hk" -d '{}' \
    "$SAOP_API_BASE/messages")
[ "$code" = 500 ] || fail "exhausted script answered $code"

fake_llm_requests >"$tmp/log"
[ "$(wc -l <"$tmp/log")" -eq 4 ] || fail "log: $(cat "$tmp/log")"
grep -q -F -- "$SAOP_API_KEY" "$tmp/log" && fail "the key is in the request log"
jq -s -e 'map(.key) == ["ok", "ok", "ok", "ok"]' "$tmp/log" >/dev/null ||
    fail "key states: $(cat "$tmp/log")"
jq -s -e '.[0].body.stream == true and .[0].path == "/v1/messages"' \
    "$tmp/log" >/dev/null || fail "first request: $(head -1 "$tmp/log")"
[ "$(fake_llm_bodies | head -1 | jq -r .model)" = m ] || fail "bodies"

# OpenAI format, a wrong key, --repeat-last.
fake_llm_start --repeat-last \
    '{"text": "ab", "finish": "tool_calls", "tool": {"name": "f"}}'
[ "$SAOP_PROVIDER" = openai ] || fail "SAOP_PROVIDER=$SAOP_PROVIDER"
code=$(curl -sS -o "$tmp/b" -w '%{http_code}' \
    -H "Authorization: Bearer nope" -d '{}' "$SAOP_API_BASE/chat/completions")
[ "$code" = 401 ] || fail "a wrong key got $code"
for _ in 1 2; do
	curl -sS -N -H "Authorization: Bearer $SAOP_API_KEY" \
	    -d '{"stream": true}' "$SAOP_API_BASE/chat/completions" >"$tmp/sse"
	grep -q '^data: \[DONE\]$' "$tmp/sse" || fail "no [DONE]"
	sed -n 's/^data: //p' "$tmp/sse" | grep -v '^\[DONE\]$' |
	    jq -e -s 'map(.choices[0].finish_reason) | index("tool_calls")' \
	    >/dev/null || fail "no tool_calls"
done
fake_llm_requests | jq -s -e 'map(.key) == ["wrong", "ok", "ok"]' >/dev/null ||
    fail "keys: $(fake_llm_requests)"
