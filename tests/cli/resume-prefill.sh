#!/bin/sh
# saop-resume and assistant prefill: an Anthropic model that refuses it
# (HTTP 400) gets the same attempt again in the user-turn form, which is
# kept for the rest of the run; --continuation prefill makes the refusal
# an error (69); --context tail sends no byte of the partial output.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

prompt='Continue the JSON payload from the last valid token. Output ONLY the remaining JSON. Do not repeat any content before the last valid token.'
refusal='{"status": 400, "body": {"type": "error", "error": {"type": "invalid_request_error", "message": "This model does not support assistant message prefill. The conversation must end with a user message."}, "request_id": "req_011CcmtaL3xqBqxxxxxx"}}'

# The 400, then the user form: one attempt; the second record goes
# straight to the user form (3 requests in all).
fake_llm_start --provider anthropic "$refusal" '{"text": "\"b\"]}"}' \
    '{"text": "3]"}'
expect_status 1 saop-resume -v "$data/resume/mixed.ndjson" >"$tmp/out" \
    2>"$tmp/err"
grep -q 'prefill' "$tmp/err" || fail "-v did not say prefill was refused"
jq -c 'select(.turn >= 3) | [.raw, (.resume | {attempts, status})]' "$tmp/out" >"$tmp/got"
cat >"$tmp/exp" <<'EOT'
["{\"name\": \"saop\", \"tags\": [\"a\", \"b\"]}",{"attempts":1,"status":"RESOLVED"}]
["[1, 2, 3]",{"attempts":1,"status":"RESOLVED"}]
EOT
diff -u "$tmp/exp" "$tmp/got" || fail "records after the refusal"
[ "$(sql 'SELECT group_concat(resume_attempts) FROM partial_completion_log')" = "1,1" ] ||
    fail "log: $(sql 'SELECT * FROM partial_completion_log')"
fake_llm_bodies >"$tmp/bodies"
[ "$(wc -l <"$tmp/bodies")" -eq 3 ] || fail "not 3 requests"
sed -n 1p "$tmp/bodies" | jq -e '.messages[-1].role == "assistant"' \
    >/dev/null || fail "the first request was not prefill"
sed -n 2p "$tmp/bodies" | jq -e '.messages | length == 2 and
    .[-1].role == "user"' >/dev/null || fail "the retry is not the user form"
sed -n 2p "$tmp/bodies" | jq -r '.messages[-1].content |
    if type == "string" then . else .[0].text end' >"$tmp/p"
printf '%s\n\nLast valid token: ,\n\nYour partial output so far:\n\n%s\n' \
    "$prompt" '{"name": "saop", "tags": ["a", ' | cmp -s - "$tmp/p" ||
    fail "user form: $(cat "$tmp/p")"
sed -n 3p "$tmp/bodies" | jq -e '.messages[-1].role == "user" and
    .model == "fake-model-x"' >/dev/null ||
    fail "the next record went back to prefill"

# Forced prefill: the refusal is final (69), the record is kept.
fake_llm_start --provider anthropic "$refusal"
expect_status 69 saop-resume --continuation prefill \
    "$data/resume/trunc.ndjson" >"$tmp/out" 2>"$tmp/err"
grep -q 'prefill' "$tmp/err" || fail "69 without a word: $(cat "$tmp/err")"
jqf '.resume.status == "SUSPENDED" and .state == "TRUNCATED"' "$tmp/out"
[ "$(fake_llm_requests | wc -l)" -eq 1 ] || fail "forced prefill retried"

# --continuation user on anthropic: never an assistant turn at the end.
fake_llm_start --provider anthropic '{"text": "\"b\"]}"}'
expect_status 0 saop-resume --continuation user \
    "$data/resume/trunc.ndjson" >/dev/null
fake_llm_bodies | jq -e '.messages[-1].role == "user"' >/dev/null ||
    fail "--continuation user sent prefill"

# --context tail: no byte of the partial output, only the token.
for provider in openai anthropic; do
	fake_llm_start --provider "$provider" '{"text": "\"b\"]}"}'
	expect_status 0 saop-resume --context tail \
	    "$data/resume/trunc.ndjson" >"$tmp/out"
	jqf '.raw == "{\"name\": \"saop\", \"tags\": [\"a\", \"b\"]}"' \
	    "$tmp/out"
	fake_llm_bodies >"$tmp/bodies"
	! grep -q 'saop' "$tmp/bodies" ||
	    fail "$provider: --context tail sent the prefix"
	jqf '.messages | length == 2 and .[-1].role == "user"' "$tmp/bodies"
done

# --dry-run prints the request for each truncated record and nothing else.
expect_status 0 saop-resume --dry-run "$data/resume/mixed.ndjson" \
    >"$tmp/out"
[ "$(grep -c '^POST ' "$tmp/out")" -eq 2 ] || fail "--dry-run: $(cat "$tmp/out")"
! grep -q -F -- "$SAOP_API_KEY" "$tmp/out" || fail "--dry-run printed the key"
[ "$(fake_llm_requests | wc -l)" -eq 1 ] || fail "--dry-run called the model"

expect_status 64 saop-resume --continuation sideways </dev/null 2>/dev/null
expect_status 64 saop-resume --context half </dev/null 2>/dev/null
