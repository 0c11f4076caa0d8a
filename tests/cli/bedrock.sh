#!/bin/sh
# SAOP_PROVIDER=bedrock against saop-mock serving Bedrock's ConverseStream
# (src/mock-bedrock.c), which checks every call's SigV4 signature with the
# secret access key it is given (--key-env): a call signed right is
# answered (key_ok), one signed with another secret refused (401).  The
# answer, its usage and finish; the headers signed and sent (the session
# token not logged); the documentation's events (tests/fixtures/bedrock,
# framed by tests/bedrock-frames.py) served as recorded; a stream cut in
# the middle of a frame resumed; a throttling exception inside the
# stream retried; a tool call; a Bedrock API key as a bearer token; the
# profiles of ~/.aws; --dry-run with the secrets masked.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/mock-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
command -v curl >/dev/null 2>&1 || skip "no curl"

model='anthropic.claude-3-5-sonnet-20240620-v1:0'
secret=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY
token=session-token-example-123456
whole='{"city": "Paris", "days": 3}'
record() {
	jq -nc --arg m "$model" '{task_id: "t-br", turn: 1, request: {model: $m,
	    messages: [{role: "user", content: "answer in JSON"}],
	    max_tokens: 100}}'
}
# bedrock_start REPLY...: saop-mock with the REPLYs, checking each call's
# key or signature against $secret; the model's environment is Bedrock's
# with SigV4 credentials (region us-west-2, the session token).
bedrock_start() {
	MOCK_SECRET=$secret
	export MOCK_SECRET
	MOCK_KEY_ENV=MOCK_SECRET mock_serve "$@"
	SAOP_PROVIDER=bedrock
	SAOP_API_BASE="http://127.0.0.1:$MOCK_PORT/v1"
	AWS_REGION=us-west-2
	AWS_ACCESS_KEY_ID=AKIDEXAMPLE
	AWS_SECRET_ACCESS_KEY=$secret
	AWS_SESSION_TOKEN=$token
	export SAOP_PROVIDER SAOP_API_BASE AWS_REGION AWS_ACCESS_KEY_ID \
	    AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
	unset SAOP_API_KEY SAOP_MODEL AWS_BEARER_TOKEN_BEDROCK AWS_PROFILE \
	    AWS_DEFAULT_REGION
	HOME=$tmp
	export HOME
}
# The log's lines, each signed right (or, with $1 = false, not).
signed() {
	jq -s -e --argjson ok "${1:-true}" 'length > 0 and
	    all(.[]; .key_ok == $ok)' "$MOCK_LOG" >/dev/null ||
	    fail "signature ${1:-true} expected: $(cat "$MOCK_LOG")"
}

# 1. The answer, signed, the signature checked by saop-mock.
bedrock_start "$(jq -nc --arg t "$whole" '{text: $t,
    usage: {input: 31, output: 12}}')"
record | saop-suspend >"$tmp/out" || fail "saop-suspend failed"
jq -e --arg w "$whole" '.raw == $w and .finish_reason == "stop" and
    .usage.prompt_tokens == 31 and .usage.completion_tokens == 12' \
    "$tmp/out" >/dev/null || fail "answer: $(cat "$tmp/out")"
signed
# (saop-mock logs the path decoded: ':' was sent as %3A, which the
# signature checked holds, and --dry-run below shows.)
jq -e --arg m "$model" '.path == "/v1/model/\($m)/converse-stream" and
    (.key_in | sort) == ["authorization", "x-amz-security-token"] and
    (.headers["x-amz-date"] | test("^[0-9]{8}T[0-9]{6}Z$")) and
    .headers.accept == "application/vnd.amazon.eventstream" and
    (.headers | has("expect") | not) and
    .body.messages == [{role: "user", content: [{text: "answer in JSON"}]}]
    and .body.inferenceConfig.maxTokens == 100 and
    (.body | has("model") | not)' "$MOCK_LOG" >/dev/null ||
    fail "request: $(cat "$MOCK_LOG")"
for s in "$secret" "$token"; do
	grep -rqF "$s" "$tmp/out" "$MOCK_LOG" && fail "a secret shown"
	[ -z "$(sql "SELECT 1 FROM events WHERE payload LIKE '%$s%'" 2>/dev/null)" ] ||
	    fail "a secret stored"
done

# 2. Signed with another secret: saop-mock's check refuses it (401), and
#    saop-suspend does not retry a refusal.
bedrock_start "$(jq -nc --arg t "$whole" '{text: $t}')"
record | AWS_SECRET_ACCESS_KEY=not-the-secret expect_status 69 saop-suspend \
    --no-wait >"$tmp/out" 2>"$tmp/err"
grep -q 'HTTP 401' "$tmp/err" || fail "wrong secret: $(cat "$tmp/err")"
signed false
# A signature made apart (tests/sigv4-ref.py, from AWS's documentation)
# of a path with %3A is taken; the same for another path is not.
bedrock_start "$(jq -nc --arg t "$whole" '{text: $t}')"
when=$(date -u +%Y%m%dT%H%M%SZ)
body='{"messages": []}'
url="$SAOP_API_BASE/model/a.b-v1%3A0/converse"
auth=$("$PYTHON3" "$top_srcdir/tests/sigv4-ref.py" POST "$url" "$when" \
    us-west-2 bedrock AKIDEXAMPLE "$secret" - "$body") || fail "sigv4-ref.py"
for u in "$url" "$SAOP_API_BASE/model/a.b-v1%3A1/converse"; do
	curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: $auth" \
	    -H "x-amz-date: $when" -H 'Content-Type: application/json' \
	    --data-binary "$body" "$u" >>"$tmp/codes" || fail "curl failed"
done
[ "$(cat "$tmp/codes")" = "$(printf '200\n401')" ] ||
    fail "signatures made apart: $(cat "$tmp/codes")"

# 3. The documentation's events (tests/fixtures/bedrock), as recorded.
for f in text tool; do
	"$PYTHON3" "$top_srcdir/tests/bedrock-frames.py" \
	    "$fixtures/bedrock/converse-stream-$f.events" "$tmp/$f.es" ||
	    fail "cannot frame $f"
	echo '{"status": 200, "headers": {"content-type": "application/vnd.amazon.eventstream"}}' \
	    >"$tmp/$f.headers.json"
done
bedrock_start "{\"recording\": \"$tmp/text.es\"}" \
    "{\"recording\": \"$tmp/tool.es\"}"
record | saop-suspend >"$tmp/out" || fail "saop-suspend failed on text.es"
jq -e --arg w "$whole" '.raw == $w and .finish_reason == "stop" and
    .usage.prompt_tokens == 31 and .usage.completion_tokens == 12' \
    "$tmp/out" >/dev/null || fail "text.es: $(cat "$tmp/out")"
record | saop-suspend >"$tmp/out" || fail "saop-suspend failed on tool.es"
jqf '.finish_reason == "tool_calls" and .tool_call.name == "get_weather" and
    .tool_call.id == "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q" and
    .raw == "{\"city\": \"Paris\"}"' "$tmp/out"
signed

# 4. Cut in the middle of a frame (the one that holds ' "Pa'): the
#    frames before it kept, the rest asked for, the answer merged once.
bedrock_start "$(jq -nc --arg t "$whole" '{text: $t}')"
curl -s -X POST -H "Authorization: Bearer $secret" -d '{}' \
    "$SAOP_API_BASE/model/m/converse-stream" >"$tmp/whole.es" ||
    fail "curl failed"
at=$(grep -boa 'Pa"}' "$tmp/whole.es" | head -1 | cut -d: -f1)
[ -n "$at" ] || fail "no ' \"Pa' frame"
bedrock_start "$(jq -nc --arg t "$whole" --argjson at "$at" '{text: $t,
    drop_after: ($at + 1), reset: true}')" \
    "$(jq -nc '{text: " \"Paris\", \"days\": 3}"}')"
record | SAOP_NETWORK_POLL_INTERVAL_MS=50 saop-suspend >"$tmp/out" ||
    fail "saop-suspend failed on the cut"
jq -e --arg w "$whole" '.raw == $w and .suspend.resumes == 1' "$tmp/out" \
    >/dev/null || fail "cut: $(cat "$tmp/out")"
[ "$(wc -l <"$MOCK_LOG")" -eq 2 ] || fail "not two calls"
sed -n 2p "$MOCK_LOG" | jq -e '[.body | .. | strings] |
    any(contains("{\"city\":"))' >/dev/null ||
    fail "the continuation: $(sed -n 2p "$MOCK_LOG")"
signed

# 5. A throttling exception inside the stream (HTTP 200): a rate limit,
#    retried.
bedrock_start '{"status": 429, "text": "Too many tokens, please wait."}' \
    "$(jq -nc --arg t "$whole" '{text: $t}')"
curl -s -D "$tmp/h" -X POST -H "Authorization: Bearer $secret" -d '{}' \
    "$SAOP_API_BASE/model/m/converse-stream" >"$tmp/exc.es" ||
    fail "curl failed"
head -1 "$tmp/h" | grep -q ' 200' || fail "exception: $(cat "$tmp/h")"
grep -qa ':exception-type.*throttlingException' "$tmp/exc.es" ||
    fail "no exception frame"
bedrock_start '{"status": 429, "text": "Too many tokens, please wait."}' \
    "$(jq -nc --arg t "$whole" '{text: $t}')"
record | SAOP_NETWORK_POLL_INTERVAL_MS=50 saop-suspend >"$tmp/out" \
    2>"$tmp/err" || fail "saop-suspend failed after the throttling"
jqf '.raw == "{\"city\": \"Paris\", \"days\": 3}"' "$tmp/out"
[ "$(wc -l <"$MOCK_LOG")" -eq 2 ] || fail "throttling not retried"

# 6. A tool call.
bedrock_start '{"tool_call": {"name": "get_weather",
    "arguments": {"city": "Paris"}}}'
record | saop-suspend >"$tmp/out" || fail "saop-suspend failed on a tool call"
jqf '.finish_reason == "tool_calls" and .tool_call.name == "get_weather" and
    .tool_call.id == "tooluse_mock1" and
    (.raw | fromjson) == {city: "Paris"}' "$tmp/out"
signed

# 7. A Bedrock API key: a bearer token, no signature.
bedrock_start "$(jq -nc --arg t "$whole" '{text: $t}')"
AWS_BEARER_TOKEN_BEDROCK=$secret
export AWS_BEARER_TOKEN_BEDROCK
record | saop-suspend >"$tmp/out" || fail "saop-suspend failed with the key"
jq -e '.key_ok and .key_in == ["authorization"] and
    (.headers | has("x-amz-date") | not)' "$MOCK_LOG" >/dev/null ||
    fail "the key: $(cat "$MOCK_LOG")"
unset AWS_BEARER_TOKEN_BEDROCK

# 8. The profile of ~/.aws/credentials and ~/.aws/config.
bedrock_start "$(jq -nc --arg t "$whole" '{text: $t}')"
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_REGION
mkdir -p "$tmp/.aws"
printf '[default]\naws_access_key_id = AKIDDEFAULT\n[work]\naws_access_key_id = AKIDWORK\naws_secret_access_key = %s\n' \
    "$secret" >"$tmp/.aws/credentials"
printf '[profile work]\nregion = eu-central-1\n' >"$tmp/.aws/config"
AWS_PROFILE=work record | AWS_PROFILE=work saop-suspend >"$tmp/out" ||
    fail "saop-suspend failed with the profile"
signed
jq -e '.key_in == ["authorization"]' "$MOCK_LOG" >/dev/null ||
    fail "profile: a token sent: $(cat "$MOCK_LOG")"
record | AWS_PROFILE=work saop-suspend --dry-run >"$tmp/dry" 2>&1 ||
    fail "dry run: $(cat "$tmp/dry")"
grep -Eq '^Authorization: AWS4-HMAC-SHA256 Credential=\*\*\*\*/[0-9]{8}/eu-central-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=\*\*\*\*$' \
    "$tmp/dry" || fail "profile's dry run: $(cat "$tmp/dry")"

# 9. --dry-run: the signed headers, the secrets masked.
bedrock_start "$(jq -nc --arg t "$whole" '{text: $t}')"
record | SAOP_API_BASE= saop-suspend --dry-run >"$tmp/dry" 2>&1 ||
    fail "dry run: $(cat "$tmp/dry")"
grep -q '^POST https://bedrock-runtime.us-west-2.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream$' \
    "$tmp/dry" || fail "dry run URL: $(head -1 "$tmp/dry")"
grep -Eq '^Authorization: AWS4-HMAC-SHA256 Credential=\*\*\*\*/[0-9]{8}/us-west-2/bedrock/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=\*\*\*\*$' \
    "$tmp/dry" || fail "dry run: $(cat "$tmp/dry")"
grep -Eq '^x-amz-date: [0-9]{8}T[0-9]{6}Z$' "$tmp/dry" || fail "no date line"
grep -q '^x-amz-security-token: \*\*\*\*$' "$tmp/dry" || fail "no token line"
grep -qF -e "$secret" -e "$token" "$tmp/dry" && fail "a secret in the dry run"
exit 0
