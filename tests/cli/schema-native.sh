#!/bin/sh
# saop-suspend --schema: --dry-run shows the user's schema in each wire
# format's native structured-output field, checked against the providers'
# documented request shapes:
#  - OpenAI chat completions: "response_format": {"type": "json_schema",
#    "json_schema": {"name", "strict", "schema"}}, name [a-zA-Z0-9_-]{1,64},
#    strict only within the strict subset (root an object, every object
#    "additionalProperties": false with all its properties required):
#    https://platform.openai.com/docs/guides/structured-outputs and
#    https://platform.openai.com/docs/api-reference/chat/create
#  - Anthropic Messages: "output_config": {"format": {"type":
#    "json_schema", "schema"}}, generally available, no beta header (the
#    beta "output_format" with "anthropic-beta: structured-outputs-
#    2025-11-13" is deprecated):
#    https://platform.claude.com/docs/en/build-with-claude/structured-outputs
#  - OpenAI Responses: "text": {"format": {"type": "json_schema", "name",
#    "strict", "schema"}}:
#    https://platform.openai.com/docs/api-reference/responses/create and
#    https://platform.openai.com/docs/guides/structured-outputs?api-mode=responses
#  - Gemini generateContent: "generationConfig": {"responseMimeType":
#    "application/json", "responseJsonSchema": {...}} (responseJsonSchema
#    takes JSON Schema; responseSchema an OpenAPI subset):
#    https://ai.google.dev/api/generate-content#generationconfig and
#    https://ai.google.dev/gemini-api/docs/structured-output
# Also: a request's own field is left as it is, a continuation carries no
# field, --schema-mode prompt and off, $SAOP_SCHEMA, --schema envelope,
# and the correction request of saop-validate --schema carries the field.
. "$top_srcdir/tests/cli/lib.sh"

export SAOP_API_KEY=sk-test-0123456789 SAOP_MODEL=m1
cat >"$tmp/event.json" <<'JSON'
{"$schema": "https://json-schema.org/draft/2020-12/schema",
 "$id": "https://example.com/event.json", "title": "Calendar event",
 "type": "object",
 "properties": {"start": {"type": "string", "format": "date"},
                "end": {"type": "string", "format": "date"}},
 "required": ["start", "end"], "additionalProperties": false}
JSON
cat >"$tmp/todo.json" <<'JSON'
{"type": "array", "items": {"type": "object",
 "properties": {"task": {"type": "string"}}, "required": ["task"]}}
JSON
req='{"task_id": "t1", "turn": 0, "request": {"messages": [{"role": "user", "content": "When?"}]}}'
# body FILE: the JSON body of a --dry-run output (after the blank line).
body() {
	sed '1,/^$/d' "$1"
}

# 1. OpenAI, a schema within the strict subset: strict true, named by
#    its title; "$schema" and "$id" stay home.
echo "$req" | expect_status 0 saop-suspend --dry-run --schema "$tmp/event.json" >"$tmp/out"
body "$tmp/out" >"$tmp/b"
jq -e --slurpfile s "$tmp/event.json" '.response_format == {"type":
    "json_schema", "json_schema": {"name": "Calendar_event", "strict": true,
    "schema": ($s[0] | del(."$schema", ."$id"))}}' "$tmp/b" >/dev/null ||
    fail "openai strict: $(cat "$tmp/b")"
grep -q '^POST .*/chat/completions$' "$tmp/out" || fail "not the chat endpoint"

# 2. OpenAI, outside the strict subset (array root, an open object):
#    strict false, named by the file.
echo "$req" | expect_status 0 saop-suspend --dry-run --schema "$tmp/todo.json" >"$tmp/out"
body "$tmp/out" >"$tmp/b"
jq -e --slurpfile s "$tmp/todo.json" '.response_format == {"type":
    "json_schema", "json_schema": {"name": "todo", "strict": false,
    "schema": $s[0]}}' "$tmp/b" >/dev/null || fail "openai not strict: $(cat "$tmp/b")"
# An object that is not closed is not strict either.
jq '.additionalProperties = true' "$tmp/event.json" >"$tmp/open.json"
echo "$req" | saop-suspend --dry-run --schema "$tmp/open.json" | body /dev/stdin >"$tmp/b"
jqf '.response_format.json_schema.strict == false' "$tmp/b"
# Nor one with a property not required.
jq '.required = ["start"]' "$tmp/event.json" >"$tmp/opt.json"
echo "$req" | saop-suspend --dry-run --schema "$tmp/opt.json" | body /dev/stdin >"$tmp/b"
jqf '.response_format.json_schema.strict == false' "$tmp/b"

# 3. Anthropic: output_config.format, no beta header.
echo "$req" | SAOP_PROVIDER=anthropic expect_status 0 saop-suspend --dry-run \
    --schema "$tmp/todo.json" >"$tmp/out"
body "$tmp/out" >"$tmp/b"
jq -e --slurpfile s "$tmp/todo.json" '.output_config == {"format": {"type":
    "json_schema", "schema": $s[0]}} and (has("output_format") | not) and
    (has("response_format") | not)' "$tmp/b" >/dev/null ||
    fail "anthropic: $(cat "$tmp/b")"
grep -qi '^anthropic-beta' "$tmp/out" && fail "a beta header for a GA field"
grep -q '^POST .*/messages$' "$tmp/out" || fail "not the messages endpoint"

# 3b. OpenAI Responses: text.format, name and strict beside the type.
echo "$req" | SAOP_PROVIDER=openai-responses expect_status 0 saop-suspend --dry-run \
    --schema "$tmp/event.json" >"$tmp/out"
body "$tmp/out" >"$tmp/b"
jq -e --slurpfile s "$tmp/event.json" '.text == {"format": {"type":
    "json_schema", "name": "Calendar_event", "strict": true, "schema":
    ($s[0] | del(."$schema", ."$id"))}} and (has("response_format") | not)' \
    "$tmp/b" >/dev/null || fail "responses: $(cat "$tmp/b")"
grep -q '^POST .*/responses$' "$tmp/out" || fail "not the responses endpoint"

# 3c. Gemini: generationConfig.responseMimeType and responseJsonSchema.
echo "$req" | SAOP_PROVIDER=gemini expect_status 0 saop-suspend --dry-run \
    --schema "$tmp/todo.json" >"$tmp/out"
body "$tmp/out" >"$tmp/b"
jq -e --slurpfile s "$tmp/todo.json" '.generationConfig == {"responseMimeType":
    "application/json", "responseJsonSchema": $s[0]}' "$tmp/b" >/dev/null ||
    fail "gemini: $(cat "$tmp/b")"
grep -q '^POST .*:streamGenerateContent' "$tmp/out" || fail "not the gemini endpoint"

# 4. A request with its own field keeps it, and gets nothing added.
own='{"task_id": "t1", "request": {"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_object"}}}'
echo "$own" | saop-suspend --dry-run --schema "$tmp/event.json" | body /dev/stdin >"$tmp/b"
jqf '.response_format == {"type": "json_object"}' "$tmp/b"
own_a='{"task_id": "t1", "request": {"messages": [{"role": "user", "content": "x"}], "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}}}}'
echo "$own_a" | SAOP_PROVIDER=anthropic saop-suspend --dry-run --schema "$tmp/todo.json" |
    body /dev/stdin >"$tmp/b"
jqf '.output_config.format.schema == {"type": "object"}' "$tmp/b"

# 5. A continuation (the answer so far as the assistant's turn, or the
#    resume prompt last) carries no structured-output field, not even
#    the request's own: it would start a new document.
fields='has("response_format") or has("output_config") or has("text") or
    (.generationConfig // {} | has("responseMimeType") or has("responseJsonSchema"))'
for p in openai anthropic openai-responses gemini; do
	jq -nc '{task_id: "t1", request: {messages: [{role: "user", content: "x"},
	    {role: "assistant", content: "{\"start\": \"2026"}],
	    response_format: {type: "json_object"}}}' |
	    SAOP_PROVIDER=$p saop-suspend --dry-run --schema "$tmp/event.json" |
	    body /dev/stdin >"$tmp/b"
	jqf "$fields | not" "$tmp/b"
	# saop-resume's own continuation request (its user form).
	jq -nc '{task_id: "t1", request: {messages: [{role: "user", content: "x"}]},
	    raw: "{\"start\": \"2026"}' | SAOP_PROVIDER=$p saop-resume --dry-run \
	    --continuation user | body /dev/stdin | jq -c '{task_id: "t1", request: .}' |
	    SAOP_PROVIDER=$p saop-suspend --dry-run --schema "$tmp/event.json" |
	    body /dev/stdin >"$tmp/b"
	jqf "$fields | not" "$tmp/b"
done

# 6. --schema-mode prompt: the schema in the system prompt, no field;
#    off: nowhere.  $SAOP_SCHEMA_MODE says the same.
echo "$req" | saop-suspend --dry-run --schema-mode prompt --schema "$tmp/todo.json" |
    body /dev/stdin >"$tmp/b"
jqf '(has("response_format") | not) and .messages[0].role == "system" and
    (.messages[0].content | startswith("Answer with JSON only")) and
    (.messages[0].content | contains("\"items\"")) and
    .messages[1].content == "When?"' "$tmp/b"
echo "$req" | SAOP_PROVIDER=anthropic SAOP_SCHEMA_MODE=prompt saop-suspend --dry-run \
    --schema "$tmp/todo.json" | body /dev/stdin >"$tmp/b"
jqf '(has("output_config") | not) and (.system | contains("\"items\""))' "$tmp/b"
echo "$req" | SAOP_PROVIDER=openai-responses saop-suspend --dry-run --schema-mode prompt \
    --schema "$tmp/todo.json" | body /dev/stdin >"$tmp/b"
jqf '(has("text") | not) and (.instructions | contains("\"items\""))' "$tmp/b"
echo "$req" | SAOP_PROVIDER=gemini saop-suspend --dry-run --schema-mode prompt \
    --schema "$tmp/todo.json" | body /dev/stdin >"$tmp/b"
jqf '(has("generationConfig") | not) and
    (.systemInstruction.parts[-1].text | contains("\"items\""))' "$tmp/b"
echo "$req" | saop-suspend --dry-run --schema-mode off --schema "$tmp/todo.json" |
    body /dev/stdin >"$tmp/b"
jqf '(has("response_format") | not) and (.messages | length) == 1' "$tmp/b"
echo "$req" | expect_status 64 saop-suspend --dry-run --schema-mode loud \
    --schema "$tmp/todo.json" 2>"$tmp/err" >/dev/null
grep -q "schema-mode" "$tmp/err" || fail "bad mode not named"

# 7. $SAOP_SCHEMA; --schema envelope is the built-in envelope (not
#    strict: its action is a oneOf).
echo "$req" | SAOP_SCHEMA="$tmp/event.json" saop-suspend --dry-run | body /dev/stdin >"$tmp/b"
jqf '.response_format.json_schema.name == "Calendar_event"' "$tmp/b"
echo "$req" | saop-suspend --dry-run --schema envelope | body /dev/stdin >"$tmp/b"
jqf '.response_format.json_schema.name == "SAOP_envelope_v1" and
    .response_format.json_schema.strict == false and
    (.response_format.json_schema.schema.required | index("thought"))' "$tmp/b"
# Without a schema: no field.
echo "$req" | saop-suspend --dry-run | body /dev/stdin >"$tmp/b"
jqf 'has("response_format") | not' "$tmp/b"

# 8. An unreadable schema is a configuration error (78), naming the file.
echo "$req" | expect_status 78 saop-suspend --dry-run --schema "$tmp/nope.json" \
    2>"$tmp/err" >/dev/null
grep -q "nope.json" "$tmp/err" || fail "the file is not named: $(cat "$tmp/err")"

# 9. saop-validate --schema: the correction request carries the field
#    too; with the envelope by default it does not.
jq -nc '{task_id: "t1", request: {messages: [{role: "user", content: "x"}]},
    raw: "{\"start\": 1}"}' >"$tmp/bad"
saop-validate --dry-run --schema "$tmp/event.json" <"$tmp/bad" | body /dev/stdin >"$tmp/b"
jqf '.response_format.json_schema.strict == true' "$tmp/b"
SAOP_PROVIDER=anthropic saop-validate --dry-run --schema "$tmp/event.json" <"$tmp/bad" |
    body /dev/stdin >"$tmp/b"
jqf '.output_config.format.type == "json_schema"' "$tmp/b"
saop-validate --dry-run <"$tmp/bad" | body /dev/stdin >"$tmp/b"
jqf 'has("response_format") | not' "$tmp/b"
exit 0
