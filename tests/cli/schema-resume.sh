#!/bin/sh
# A truncation is still a truncation under --schema: an answer constrained
# by the schema and cut at max_tokens is detected and resumed byte-exact,
# in each wire format (OpenAI chat, Anthropic Messages, OpenAI Responses,
# Gemini), and the continuation request carries no
# structured-output field (it would make the model start a new document);
# the same when saop-suspend itself resumes a turn whose stream was cut.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

cat >"$tmp/s.json" <<'JSON'
{"type": "object", "properties": {"start": {"type": "string"},
 "end": {"type": "string"}}, "required": ["start", "end"],
 "additionalProperties": false}
JSON
whole='{"start": "2026-03-01", "end": "2026-04-01"}'
head='{"start": "2026-03-01", "en'
rest='d": "2026-04-01"}'
req='{"task_id": "t-r", "turn": 1, "request": {"max_tokens": 12, "messages": [{"role": "user", "content": "When?"}]}}'
# has_field: the jq test for any structured-output field in a body.
has_field='has("response_format") or has("output_config") or has("output_format") or
    has("text") or (.generationConfig // {} | has("responseMimeType") or
    has("responseJsonSchema"))'

for p in openai anthropic openai-responses gemini; do
	fake_llm_start --provider "$p" \
	    "$(jq -nc --arg t "$head" '{text: $t, finish: "length"}')" \
	    "$(jq -nc --arg t "$rest" '{text: $t}')"
	echo "$req" | saop-suspend --schema "$tmp/s.json" | saop-detect |
	    saop-resume | expect_status 0 saop-validate --schema "$tmp/s.json" \
	    >"$tmp/out"
	jq -e --arg w "$whole" '.raw == $w and .state == "OK" and
	    .resume.status == "RESOLVED"' "$tmp/out" >/dev/null ||
	    fail "$p: not resumed byte-exact: $(cat "$tmp/out")"
	[ "$(fake_llm_requests | wc -l)" -eq 2 ] || fail "$p: not 2 calls"
	fake_llm_bodies | sed -n 1p | jq -e "$has_field" >/dev/null ||
	    fail "$p: the first call had no field"
	fake_llm_bodies | sed -n 2p | jq -e "$has_field | not" >/dev/null ||
	    fail "$p: the continuation carried a field: $(fake_llm_bodies | sed -n 2p)"
done

# A request with its own field: its continuation leaves the field out.
fake_llm_start "$(jq -nc --arg t "$head" '{text: $t, finish: "length"}')" \
    "$(jq -nc --arg t "$rest" '{text: $t}')"
echo "$req" | jq -c '.request.response_format = {type: "json_object"}' |
    saop-suspend | saop-detect | saop-resume >"$tmp/out"
jq -e --arg w "$whole" '.raw == $w' "$tmp/out" >/dev/null || fail "own field: not resumed"
fake_llm_bodies | sed -n 1p | jq -e '.response_format.type == "json_object"' \
    >/dev/null || fail "own field: not sent on the first call"
fake_llm_bodies | sed -n 2p | jq -e "$has_field | not" >/dev/null ||
    fail "own field: the continuation carried it"

# saop-suspend resuming a broken stream by itself: the continuation it
# sends carries no field either, and the answer comes whole.
SAOP_NETWORK_POLL_INTERVAL_MS=20
export SAOP_NETWORK_POLL_INTERVAL_MS
for p in openai anthropic openai-responses gemini; do
	# The stream ends inside the text with no finish reason: a broken
	# call with the text so far, which saop-suspend continues.
	fake_llm_start --provider "$p" \
	    "$(jq -nc --arg t "$head" '{text: $t, finish: null}')" \
	    "$(jq -nc --arg t "$rest" '{match: "Continue the JSON", text: $t}')"
	echo "$req" | expect_status 0 saop-suspend --schema "$tmp/s.json" >"$tmp/out"
	[ "$(fake_llm_requests | wc -l)" -eq 2 ] || fail "$p: not 2 calls"
	fake_llm_bodies | sed -n 1p | jq -e "$has_field" >/dev/null ||
	    fail "$p: the first call had no field"
	fake_llm_bodies | sed -n 2p >"$tmp/b2"
	grep -q "Continue the JSON" "$tmp/b2" ||
	    fail "$p: the second call is no continuation"
	jqf "$has_field | not" "$tmp/b2"
	jqf '.structured_output.sent == true' "$tmp/out"
	jq -e --arg w "$whole" '.raw == $w' "$tmp/out" >/dev/null ||
	    fail "$p: not whole after the cut: $(cat "$tmp/out")"
done
exit 0
