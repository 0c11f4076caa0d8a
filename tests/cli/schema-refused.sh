#!/bin/sh
# saop-suspend --schema against a server that refuses the structured-output
# field (a 400 whose error names it, as older OpenAI-compatible servers
# answer): the same turn is asked once more without the field, answered
# in one more call, with a warning, a STRUCTURED_OUTPUT_REFUSED event and
# "structured_output" on the record; later turns of the run go without
# it.  A 400 that does not name the field is not retried.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

cat >"$tmp/s.json" <<'JSON'
{"type": "object", "properties": {"n": {"type": "integer"}},
 "required": ["n"], "additionalProperties": false}
JSON
turn() {
	jq -nc --argjson t "$1" '{task_id: "t-ref", turn: $t, request:
	    {messages: [{role: "user", content: "count"}]}}'
}

# 1. OpenAI: 400 naming response_format, then the answer.
fake_llm_start '{"match": "response_format", "status": 400, "message": "Unrecognized request argument supplied: response_format"}' \
    '{"text": "{\"n\": 1}"}' '{"text": "{\"n\": 2}"}'
{ turn 1; turn 2; } | expect_status 0 saop-suspend --schema "$tmp/s.json" \
    >"$tmp/out" 2>"$tmp/err"
[ "$(fake_llm_requests | wc -l)" -eq 3 ] || fail "not 3 calls: $(fake_llm_requests)"
fake_llm_bodies >"$tmp/bodies"
sed -n 1p "$tmp/bodies" | jq -e '.response_format.type == "json_schema"' >/dev/null ||
    fail "the first call had no field"
sed -n 2p "$tmp/bodies" | jq -e 'has("response_format") | not' >/dev/null ||
    fail "the second call still had the field"
# The same turn: the bodies differ only by the field.
[ "$(sed -n 1p "$tmp/bodies" | jq -c 'del(.response_format)')" = \
    "$(sed -n 2p "$tmp/bodies" | jq -c .)" ] || fail "not the same turn"
sed -n 3p "$tmp/bodies" | jq -e 'has("response_format") | not' >/dev/null ||
    fail "a later turn sent the refused field again"
sed -n 1p "$tmp/out" >"$tmp/r1"
jqf '.raw == "{\"n\": 1}" and .structured_output.mode == "native" and
    .structured_output.field == "response_format" and
    .structured_output.sent == false and
    (.structured_output.refused | contains("Unrecognized request argument"))' "$tmp/r1"
sed -n 2p "$tmp/out" | jq -e '.raw == "{\"n\": 2}" and
    .structured_output.sent == false and (.structured_output | has("refused") | not)' \
    >/dev/null || fail "second record: $(sed -n 2p "$tmp/out")"
grep -q "refused response_format" "$tmp/err" || fail "no warning: $(cat "$tmp/err")"
[ "$(sql "SELECT count(*) FROM events WHERE event = 'STRUCTURED_OUTPUT_REFUSED'
    AND task_id = 't-ref' AND turn = 1")" = 1 ] || fail "no event"
# -q: no warning, the record still says so.
fake_llm_start '{"match": "response_format", "status": 400, "message": "response_format is not supported"}' \
    '{"text": "{\"n\": 1}"}'
turn 1 | expect_status 0 saop-suspend -q --schema "$tmp/s.json" >"$tmp/out" 2>"$tmp/err"
[ ! -s "$tmp/err" ] || fail "-q warned: $(cat "$tmp/err")"
jqf '.structured_output.refused != null' "$tmp/out"

# 2. A field the server takes: the record says it was sent; one call.
fake_llm_start '{"text": "{\"n\": 3}"}'
turn 1 | expect_status 0 saop-suspend --schema "$tmp/s.json" >"$tmp/out"
jqf '.structured_output == {"mode": "native", "field": "response_format", "sent": true}' "$tmp/out"
[ "$(fake_llm_requests | wc -l)" -eq 1 ] || fail "not 1 call"

# 3. Anthropic: 400 naming output_config.format.
fake_llm_start --provider anthropic \
    '{"match": "output_config", "status": 400, "message": "output_config.format: Extra inputs are not permitted"}' \
    '{"text": "{\"n\": 4}"}'
turn 1 | expect_status 0 saop-suspend --schema "$tmp/s.json" >"$tmp/out" 2>"$tmp/err"
[ "$(fake_llm_requests | wc -l)" -eq 2 ] || fail "anthropic: not 2 calls"
fake_llm_bodies | sed -n 2p | jq -e 'has("output_config") | not' >/dev/null ||
    fail "anthropic: the field was sent again"
jqf '.raw == "{\"n\": 4}" and .structured_output.field == "output_config.format" and
    (.structured_output.refused | contains("Extra inputs"))' "$tmp/out"

# 4. A 400 about something else is not the field's: no second call, 69.
fake_llm_start '{"status": 400, "message": "max_tokens is too large"}'
turn 1 | expect_status 69 saop-suspend --schema "$tmp/s.json" >"$tmp/out" 2>"$tmp/err"
[ "$(fake_llm_requests | wc -l)" -eq 1 ] || fail "a 400 not about the field was retried"
exit 0
