#!/bin/sh
# saop-validate against the fake LLM server: a record recovers after two
# correction turns, the exact correction request, a valid record makes no
# call, a RESUME_EXHAUSTED record is corrected, --no-retry, --dry-run, and
# a network failure (75) and a refusal (69) keep the record.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

good=$(jq -c . "$data/validate/good.json")
# A record with a conversation; $1 is its raw answer, $2 its state.
record() {
	jq -nc --arg raw "$1" --arg state "${2:-}" '{task_id: "t-fix", turn: 5,
	    request: {model: "m1", max_tokens: 300, messages: [{role: "user",
	    content: "What next?"}]}, raw: $raw} +
	    (if $state == "" then {} else {state: $state} end)'
}
bad_json='{"saop": "1.0", "turn_index": 0,: "thought": "x"}'
bad_schema='{"saop": "1.0", "turn_index": "zero", "agent_role": "developer", "thought": "x", "action": null}'

# 1. Invalid JSON, then schema-invalid, then valid: recovers in 2 turns.
#    The stand-in reports usage 11+5 and 13+7 tokens.
fake_llm_start "$(jq -nc --arg t "$bad_schema" '{text: $t, usage: [11, 5]}')" \
    "$(jq -nc --arg t "$good" '{text: $t, usage: [13, 7]}')"
record "$bad_json" | expect_status 0 saop-validate >"$tmp/out"
jq -e --arg raw "$bad_json" '.state == "OK" and (.validate | del(.sent_bytes,
    .received_bytes, .prompt_tokens, .completion_tokens, .cost)) ==
    {"valid": true, "attempts": 2, "repairs": [], "original_raw": $raw} and
    .validate.cost == null and .cost == {recovery: null} and
    .envelope.action.tool == "ls"' "$tmp/out" >/dev/null ||
    fail "not recovered: $(cat "$tmp/out")"
jq -e --arg g "$good" '.raw == $g' "$tmp/out" >/dev/null ||
    fail "raw is not the corrected answer"
[ "$(fake_llm_requests | wc -l)" -eq 2 ] || fail "not 2 requests"
fake_llm_bodies >"$tmp/bodies"

# The first correction request: the conversation, the raw answer as the
# assistant's turn, then the prompt of DESIGN.md with the errors.
sed -n 1p "$tmp/bodies" >"$tmp/b1"
jqf '.model == "m1" and .max_tokens == 300 and (.messages | length) == 3
    and .messages[0] == {"role": "user", "content": "What next?"}
    and .messages[1].role == "assistant" and .messages[2].role == "user"' \
    "$tmp/b1"
jq -e --arg raw "$bad_json" '.messages[1].content == $raw' "$tmp/b1" \
    >/dev/null || fail "the assistant turn is not the raw answer"
jq -r '.messages[2].content' "$tmp/b1" >"$tmp/prompt1"
cat >"$tmp/want1" <<'EOF'
Your previous response was not valid SAOP JSON. Errors: (root): invalid JSON at line 1, column 33 (byte 32): unexpected ':', expected a string key. Please restate your complete response starting from '{'.

```json
[{"path":"","keyword":"syntax","message":"invalid JSON at line 1, column 33 (byte 32): unexpected ':', expected a string key"}]
```
EOF
diff -u "$tmp/want1" "$tmp/prompt1" || fail "first correction prompt"
# The errors sent are those of the MALFORMED_RESPONSE event, attempt 1.
ev1=$(sql "SELECT data FROM events WHERE event = 'MALFORMED_RESPONSE'
    ORDER BY rowid LIMIT 1")
[ "$(printf '%s' "$ev1" | jq -c '.attempt')" = 1 ] || fail "event: $ev1"
printf '%s' "$ev1" | jq -c '.errors' >"$tmp/ev1"
sed -n '/^\[/p' "$tmp/prompt1" | diff -u "$tmp/ev1" - ||
    fail "the JSON list of the prompt is not the event's errors"

# The second: the first answer as the assistant's turn, its schema errors.
sed -n 2p "$tmp/bodies" >"$tmp/b2"
jq -e --arg raw "$bad_schema" '(.messages | length) == 3 and
    .messages[1] == {"role": "assistant", "content": $raw}' "$tmp/b2" \
    >/dev/null || fail "second request: $(cat "$tmp/b2")"
jq -r '.messages[2].content' "$tmp/b2" | head -n 1 >"$tmp/prompt2"
grep -q "^Your previous response was not valid SAOP JSON. Errors: /turn_index: .*\. Please restate your complete response starting from '{'\.\$" \
    "$tmp/prompt2" || fail "second prompt: $(cat "$tmp/prompt2")"
[ "$(sql "SELECT count(*) FROM events WHERE event = 'MALFORMED_RESPONSE'
    AND task_id = 't-fix' AND turn = 5")" -eq 2 ] || fail "not 2 events"
sql "SELECT data FROM events WHERE event = 'MALFORMED_RESPONSE'
    ORDER BY rowid" | jq -s -e '[.[].attempt] == [1, 2] and
    .[1].errors[0].path == "/turn_index"' >/dev/null ||
    fail "MALFORMED_RESPONSE data"
[ "$(sql "SELECT count(*) FROM events WHERE event = 'MAX_RETRIES_EXCEEDED'")" \
    -eq 0 ] || fail "MAX_RETRIES_EXCEEDED after a recovery"

# What the two turns cost, as the stand-in saw it: sent, the bytes of the
# two turns each request adds (the answer, the correction text); received,
# the bytes of its answers; the tokens, its usage.  On the record summed,
# in a CORRECTION_ANSWERED event each.
jq -s --arg a1 "$bad_schema" --arg a2 "$good" '[.[] |
    (.messages[1].content | utf8bytelength) +
    (.messages[2].content | utf8bytelength)] as $sent |
    [{attempt: 1, sent_bytes: $sent[0], received_bytes: ($a1 |
    utf8bytelength), prompt_tokens: 11, completion_tokens: 5, cost: null},
    {attempt: 2, sent_bytes: $sent[1], received_bytes: ($a2 |
    utf8bytelength), prompt_tokens: 13, completion_tokens: 7,
    cost: null}]' \
    "$tmp/bodies" >"$tmp/want-cost"
sql "SELECT data FROM events WHERE event = 'CORRECTION_ANSWERED' AND
    task_id = 't-fix' AND turn = 5 ORDER BY rowid" | jq -s . >"$tmp/ev-cost"
diff -u "$tmp/want-cost" "$tmp/ev-cost" || fail "CORRECTION_ANSWERED data"
jq -e --slurpfile w "$tmp/want-cost" '.validate | .sent_bytes ==
    ($w[0] | map(.sent_bytes) | add) and .received_bytes ==
    ($w[0] | map(.received_bytes) | add) and .prompt_tokens == 24 and
    .completion_tokens == 12' "$tmp/out" >/dev/null ||
    fail "validate cost: $(jq -c .validate "$tmp/out")"
[ "$(sql "SELECT group_concat(event, ' ') FROM (SELECT event FROM events
    WHERE task_id = 't-fix' ORDER BY id)")" = "MALFORMED_RESPONSE \
CORRECTION_ANSWERED MALFORMED_RESPONSE CORRECTION_ANSWERED" ] ||
    fail "events: $(sql 'SELECT event FROM events')"

# 2. Valid the first time (or after a local repair): no call at all.
fake_llm_start '{"text": "{}"}'
{ record "$good"; record "\`\`\`json
$good
\`\`\`"; } | expect_status 0 saop-validate >"$tmp/out"
[ ! -s "$FAKE_LLM_LOG" ] || fail "a call was made: $(fake_llm_requests)"
jq -s -e '[.[].validate.attempts] == [0, 0] and
    .[1].validate.repairs == ["code_fence"] and
    ([.[].validate.sent_bytes] == [null, null])' "$tmp/out" >/dev/null ||
    fail "valid records: $(cat "$tmp/out")"

# 3. A record saop-resume gave up on is corrected too.
fake_llm_start "$(jq -nc --arg t "$good" '{text: $t}')"
record '{"saop": "1.0", "turn_index": 0, "thought": "I was cut' \
    RESUME_EXHAUSTED | expect_status 0 saop-validate >"$tmp/out"
jqf '.state == "OK" and .validate.attempts == 1' "$tmp/out"
[ "$(fake_llm_requests | wc -l)" -eq 1 ] || fail "RESUME_EXHAUSTED: calls"
fake_llm_bodies | jq -e '.messages[2].content | test("cut off after byte")' \
    >/dev/null || fail "the truncation is not named in the prompt"

# 4. --no-retry: only validate, even with a model; no call.
fake_llm_start '{"text": "{}"}'
record "$bad_json" | expect_status 1 saop-validate --no-retry >"$tmp/out" \
    2>"$tmp/err"
[ ! -s "$FAKE_LLM_LOG" ] || fail "--no-retry made a call"
jqf '.state == "INVALID" and .validate.attempts == 0' "$tmp/out"
grep -q '^saop-validate: line 1: (root): invalid JSON' "$tmp/err" ||
    fail "--no-retry: stderr $(cat "$tmp/err")"

# 5. --dry-run: the request that would be sent; nothing is sent.
record "$bad_json" | expect_status 1 saop-validate --dry-run >"$tmp/out"
[ ! -s "$FAKE_LLM_LOG" ] || fail "--dry-run made a call"
grep -q '^POST http://127.0.0.1:' "$tmp/out" || fail "dry run: $(cat "$tmp/out")"
grep -F -q 'Your previous response was not valid SAOP JSON. Errors: ' \
    "$tmp/out" || fail "dry run without the prompt"
grep -F -q "$SAOP_API_KEY" "$tmp/out" && fail "dry run shows the key"

# 6. The network drops during a correction turn: with --no-wait 75, the
#    record written as it stands, the records after it only validated
#    (waiting and resuming: validate-suspend.sh).
fake_llm_start '{"text": "{\"saop\":", "cut": 10, "how": "reset"}'
{ record "$bad_json"; record "$good"; record "$bad_json"; } |
    expect_status 75 saop-validate --no-wait >"$tmp/out" 2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" -eq 3 ] || fail "75: records lost: $(cat "$tmp/out")"
sed -n 1p "$tmp/out" >"$tmp/r1"
jq -e --arg raw "$bad_json" '.raw == $raw and .state == "INVALID" and
    .validate.attempts == 0 and (.validate.errors | length) == 1' "$tmp/r1" \
    >/dev/null || fail "75: first record $(cat "$tmp/r1")"
sed -n 2p "$tmp/out" | jq -e '.state == "OK"' >/dev/null || fail "75: second"
sed -n 3p "$tmp/out" | jq -e '.state == "INVALID"' >/dev/null ||
    fail "75: third"
[ "$(fake_llm_requests | wc -l)" -eq 1 ] || fail "75: calls after the failure"

# 7. The endpoint refuses for good: 69, and the record is still written.
fake_llm_start '{"status": 401}'
record "$bad_json" | expect_status 69 saop-validate >"$tmp/out" 2>/dev/null
jqf '.state == "INVALID"' "$tmp/out"
exit 0
