#!/bin/sh
# saop-validate's rarer paths, each checked by what it writes (issue 25):
# the correction turn quoting only the parts of a large schema the errors
# point at (pointers with ~0 and ~1, array indexes, one part once, a part
# too large left out); --dry-run of a valid record, of a record --check
# refuses, of records that cannot be corrected (no raw, request or its
# messages of the wrong type, no request at all); a TRUNCATED record left
# to saop-resume even with a model; a repaired answer over jansson's
# nesting limit; a correction answer over --max-record.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

# body: the JSON a --dry-run printed after its headers.
body() {
	sed '1,/^$/d' "$1"
}

# The model's address for the dry runs; nothing listens there, and a
# dry run sends nothing.
fake_llm_start '{"text": "{}"}'

# 1. A schema over the size the correction turn quotes whole: only the
#    subschemas the errors point at, keyed by their JSON Pointers (a
#    property named with "/" and one with "~", an array index, two errors
#    in one subschema quoted once, a subschema too large left out).
pad=$(head -c 5000 /dev/zero | tr '\0' p)
jq -n --arg pad "$pad" '{type: "object", properties: {"a/b": {type:
    "string"}, "t~x": {type: "string"}, list: {type: "array", prefixItems:
    [{type: "integer"}]}, two: {type: "string", enum: ["x"]}, big: {type:
    "string", description: $pad}}}' >"$tmp/big.json"
jq -nc --arg raw '{"a/b": 1, "t~x": 2, "list": ["x"], "two": 5, "big": 3}' \
    '{task_id: "t", raw: $raw}' |
    expect_status 1 saop-validate --schema "$tmp/big.json" --dry-run >"$tmp/out"
[ ! -s "$FAKE_LLM_LOG" ] || fail "--dry-run made a call"
body "$tmp/out" | jq -r '.messages[-1].content' >"$tmp/prompt"
grep -q "starting from '{'" "$tmp/prompt" || fail "no start: $(cat "$tmp/prompt")"
grep -q 'The JSON Schema it must follow' "$tmp/prompt" &&
    fail "a schema over the limit quoted whole"
sed -n '/^The parts of the JSON Schema the errors point at:$/,$p' "$tmp/prompt" |
    sed -n '/^{/p' >"$tmp/parts"
jqf '. == {"/properties/a~1b": {"type": "string"}, "/properties/t~0x":
    {"type": "string"}, "/properties/list/prefixItems/0": {"type":
    "integer"}, "/properties/two": {"type": "string", "enum": ["x"]}}' \
    "$tmp/parts"
# The request had no messages: the two turns are the whole of them.
body "$tmp/out" | jq -e '.messages | length == 2 and .[0].role ==
    "assistant" and .[1].role == "user"' >/dev/null ||
    fail "messages: $(body "$tmp/out")"

# 2. --dry-run of a record that needs no correction: no request, no
#    record, exit 0; one --check refuses: its words in the request.
printf '%s\n' '{"task_id":"t","raw":"{\"a\":1}"}' >"$tmp/ok.ndjson"
echo '{"type": "object"}' >"$tmp/obj.json"
expect_status 0 saop-validate --schema "$tmp/obj.json" --dry-run \
    "$tmp/ok.ndjson" >"$tmp/out"
[ ! -s "$tmp/out" ] || fail "a valid record's dry run: $(cat "$tmp/out")"
expect_status 1 saop-validate --schema "$tmp/obj.json" --check false \
    --dry-run "$tmp/ok.ndjson" >"$tmp/out"
body "$tmp/out" | jq -e '.messages[-1].content | test("Errors: check:1: ")' \
    >/dev/null || fail "--check's failure not asked about: $(cat "$tmp/out")"
[ ! -s "$FAKE_LLM_LOG" ] || fail "--dry-run made a call"

# 3. Records no correction can be planned for: 65, named, the others go on.
printf '%s\n' '{"task_id":"t","turn":1}' \
    '{"task_id":"t","raw":"nope","request":{"messages":5}}' \
    '{"task_id":"t","raw":"nope","request":[1]}' |
    expect_status 65 saop-validate --dry-run >"$tmp/out" 2>"$tmp/err"
grep -q '^saop-validate: line 1: the record has no raw text$' "$tmp/err" ||
    fail "no raw: $(cat "$tmp/err")"
grep -q '^saop-validate: line 2: request.messages is not an array$' "$tmp/err" ||
    fail "messages: $(cat "$tmp/err")"
grep -q '^saop-validate: line 3: request is not an object$' "$tmp/err" ||
    fail "request: $(cat "$tmp/err")"

# 4. A TRUNCATED record is saop-resume's: no correction turn even with a
#    model, the state kept, exit 1.
printf '%s\n' '{"task_id":"t","raw":"{\"a\":","state":"TRUNCATED"}' |
    expect_status 1 saop-validate --schema "$tmp/obj.json" >"$tmp/out" 2>"$tmp/err"
[ ! -s "$FAKE_LLM_LOG" ] || fail "a truncated record was corrected"
jqf '.state == "TRUNCATED" and .validate.attempts == 0 and
    (.validate.errors[0].message | startswith("the JSON is cut off after byte 5"))' \
    "$tmp/out"

# 5. A fenced answer nested deeper than jansson holds: the fence repaired,
#    the error about the repaired value's nesting (a "limit"), exit 1.
deep=$(awk 'BEGIN { for (i = 0; i < 3000; i++) printf "["; for (i = 0; i < 3000; i++) printf "]" }')
jq -nc --arg raw "$(printf '```json\n%s\n```' "$deep")" '{task_id: "t", raw: $raw}' |
    expect_status 1 saop-validate --no-retry >"$tmp/out" 2>"$tmp/err"
jqf '.state == "INVALID" and .validate.repairs == ["code_fence"] and
    .validate.errors[0].keyword == "limit" and
    (.validate.errors[0].message | startswith("nesting deeper than jansson"))' \
    "$tmp/out"

# 6. A correction answer over --max-record: the call's error, the record
#    as it stood before the turn (attempts 0), not the long answer.
long=$(head -c 3000 /dev/zero | tr '\0' x)
fake_llm_start "{\"text\": \"$long\"}"
printf '%s\n' '{"task_id":"t","raw":"nope"}' |
    expect_status 65 saop-validate --max-record 2000 >"$tmp/out" 2>"$tmp/err"
grep -q 'the answer to correction turn 1 is 3000 bytes, over the limit of 2000' \
    "$tmp/err" || fail "--max-record: $(cat "$tmp/err")"
jqf '.raw == "nope" and .state == "INVALID" and .validate.attempts == 0' "$tmp/out"
[ "$(wc -l <"$FAKE_LLM_LOG")" -eq 1 ] || fail "not one call: $(cat "$FAKE_LLM_LOG")"

# 7. Over the size limit, errors that point into no subschema (a --check's,
#    a type error at the root) quote no part of the schema at all.
jq -nc --arg raw '{"two": "x"}' '{task_id: "t", raw: $raw}' >"$tmp/rec"
expect_status 1 saop-validate --schema "$tmp/big.json" --check false \
    --dry-run "$tmp/rec" >"$tmp/out"
body "$tmp/out" | jq -r '.messages[-1].content' >"$tmp/prompt"
grep -q 'Errors: check:1: exited with status 1' "$tmp/prompt" ||
    fail "check: $(cat "$tmp/prompt")"
grep -q -x 'The parts of the JSON Schema the errors point at:\|The JSON Schema it must follow:' \
    "$tmp/prompt" && fail "a part quoted for a check: $(cat "$tmp/prompt")"
jq -nc '{task_id: "t", raw: "[1]"}' |
    expect_status 1 saop-validate --schema "$tmp/big.json" --dry-run >"$tmp/out"
body "$tmp/out" | jq -r '.messages[-1].content' >"$tmp/prompt"
grep -q '(root): expected object, got array' "$tmp/prompt" ||
    fail "root: $(cat "$tmp/prompt")"
grep -q -x 'The parts of the JSON Schema the errors point at:\|The JSON Schema it must follow:' \
    "$tmp/prompt" && fail "the whole schema quoted: $(cat "$tmp/prompt")"

# 8. --close closes a cut answer whose tool_call is null (no tool call).
printf '%s\n' '{"task_id":"t","raw":"{\"a\": [1, {\"b\": tr","tool_call":null}' |
    expect_status 0 saop-validate --schema "$tmp/obj.json" --no-retry --close \
    >"$tmp/out"
jqf '.state == "OK" and .validate.closed == true and
    .envelope == {"a": [1, {"b": true}]}' "$tmp/out"

# 9. A correction that cannot be built (request.messages not an array):
#    65 on its record, no call, the record as it was validated.
fake_llm_start '{"text": "{}"}'
printf '%s\n' '{"task_id":"t","raw":"nope","request":{"messages":5}}' |
    expect_status 65 saop-validate >"$tmp/out" 2>"$tmp/err"
[ ! -s "$FAKE_LLM_LOG" ] || fail "a call made: $(cat "$FAKE_LLM_LOG")"
grep -q 'request.messages is not an array' "$tmp/err" || fail "$(cat "$tmp/err")"
jqf '.raw == "nope" and .validate.valid == false and .error.status == 65' \
    "$tmp/out"
exit 0
