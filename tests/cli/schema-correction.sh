#!/bin/sh
# The correction turn speaks of the schema it was given (the request text
# as the fake server received it): for an array schema and a string
# schema no "SAOP", the errors with their JSON Pointers, the start the
# schema's type fixes, the schema itself (or, past the size limit, the
# parts the errors point at); for the envelope the SAOP words of
# DESIGN.md.  A schema with no type asks for no start.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

record() {
	jq -nc --arg raw "$1" '{task_id: "t-c", turn: 2, request: {messages:
	    [{role: "user", content: "List them."}]}, raw: $raw}'
}
# prompt: the correction text of the first request the server got.
prompt() {
	fake_llm_bodies | sed -n 1p | jq -r '.messages[-1].content'
}

# 1. An array schema.
cat >"$tmp/list.json" <<'JSON'
{"type": "array", "items": {"type": "integer"}, "maxItems": 3}
JSON
fake_llm_start '{"text": "[1, 2]"}'
record '{"items": [1, 2]}' | expect_status 0 saop-validate --schema "$tmp/list.json" >"$tmp/out"
jqf '.state == "OK" and .envelope == [1, 2] and .validate.attempts == 1' "$tmp/out"
prompt >"$tmp/got"
cat >"$tmp/want" <<'TXT'
Your previous response does not follow the JSON Schema it must follow. Errors: (root): expected array, got object. Please restate your complete response starting from '['.

```json
[{"path":"","keyword":"type","schema_path":"/type","message":"(root): expected array, got object"}]
```

The JSON Schema it must follow:

```json
{"type":"array","items":{"type":"integer"},"maxItems":3}
```
TXT
diff -u "$tmp/want" "$tmp/got" || fail "array schema correction turn"
# The correction call carries the schema natively too.
fake_llm_bodies | sed -n 1p | jq -e '.response_format.json_schema.schema.type == "array"' \
    >/dev/null || fail "no native field on the correction request"

# 2. A string schema: an error deeper than the root keeps its pointer.
cat >"$tmp/word.json" <<'JSON'
{"type": "string", "pattern": "^[a-z]+$"}
JSON
fake_llm_start '{"text": "\"ok\""}'
record '"Not one word"' | expect_status 0 saop-validate --schema "$tmp/word.json" >"$tmp/out"
prompt >"$tmp/got"
head -1 "$tmp/got" >"$tmp/got1"
cat >"$tmp/want1" <<'TXT'
Your previous response does not follow the JSON Schema it must follow. Errors: (root): must match the pattern '^[a-z]+$'. Please restate your complete response as one JSON string, starting from '"'.
TXT
diff -u "$tmp/want1" "$tmp/got1" || fail "string schema correction turn"
grep -q '^{"type":"string","pattern":"^\[a-z\]+\$"}$' "$tmp/got" || fail "the schema is not quoted"
grep -q SAOP "$tmp/got" && fail "SAOP in a correction turn for another schema"

# 3. The envelope (the default): DESIGN.md's words, no schema quoted.
fake_llm_start "$(jq -nc --slurpfile g "$data/validate/good.json" '{text: ($g[0] | tojson)}')"
record '{"saop": "1.0"}' | expect_status 0 saop-validate >"$tmp/out"
prompt >"$tmp/got"
head -1 "$tmp/got" | grep -q "^Your previous response was not valid SAOP JSON. Errors: (root): required property 'turn_index' is missing; .*Please restate your complete response starting from '{'.$" ||
    fail "envelope correction turn: $(cat "$tmp/got")"
grep -q "The JSON Schema" "$tmp/got" && fail "the envelope turn quotes the schema"
fake_llm_bodies | sed -n 1p | jq -e 'has("response_format") | not' >/dev/null ||
    fail "the envelope by default sent a field"

# 4. No type at the root: no start asked for.  Nested errors keep their
#    pointers; a schema past the size limit is quoted by the parts the
#    errors point at.
jq -n '{anyOf: [{type: "object", properties: {n: {type: "integer"}},
    required: ["n"]}, {type: "null"}], description: ("x" * 5000)}' >"$tmp/big.json"
fake_llm_start '{"text": "null"}'
record '{"n": "one"}' | expect_status 0 saop-validate --schema "$tmp/big.json" >"$tmp/out"
prompt >"$tmp/got"
head -1 "$tmp/got" | grep -q "Please restate your complete response\.$" ||
    fail "a start asked for with no type: $(head -1 "$tmp/got")"
grep -q '/n: expected integer, got string' "$tmp/got" || fail "the pointer of a nested error"
grep -q "The parts of the JSON Schema the errors point at:" "$tmp/got" ||
    fail "no parts for a large schema: $(cat "$tmp/got")"
grep -q '"/anyOf/0/properties/n":{"type":"integer"}' "$tmp/got" ||
    fail "the part an error points at is missing"
grep -q xxxxxxxxxx "$tmp/got" && fail "the whole large schema was quoted"
[ "$(wc -c <"$tmp/got")" -lt 6000 ] || fail "the turn is over the limit"
exit 0
