#!/bin/sh
# saop-resume: continuations as models really write them: repeating the
# tail of the prefix, or all of it, in a code fence, in a sentence,
# after white space; and one that merges into invalid JSON is never
# passed off as resolved.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

want='{"name": "saop", "tags": ["a", "b"]}'

# check PROVIDER TEXT WANT: one call answering TEXT merges into WANT.
check() {
	fake_llm_start --provider "$1" "$(jq -cn --arg t "$2" '{text: $t}')"
	expect_status 0 saop-resume "$data/resume/trunc.ndjson" >"$tmp/out"
	jq -e --arg w "$3" '.raw == $w and .resume.status == "RESOLVED" and
	    .resume.attempts == 1' "$tmp/out" >/dev/null ||
	    fail "$1: '$2' merged into $(jq -c '[.raw, .resume]' "$tmp/out")"
}

for p in openai anthropic; do
	# A repeat of the prefix's tail, of all of it, with other spacing.
	check $p '["a", "b"]}' "$want"
	# Both readings are complete here: the literal one is kept.
	check $p '"a", "b"]}' '{"name": "saop", "tags": ["a", "a", "b"]}'
	check $p '{"name": "saop", "tags": ["a", "b"]}' "$want"
	# Fenced, in a sentence, after white space.
	check $p '```json
"b"]}
```' "$want
"
	check $p 'Here is the rest: "b"]}' "$want"
	check $p '"b"]}

Let me know if you need anything else.' "$want"
	# Leading white space is kept as it came.
	check $p '

   "b"]}' '{"name": "saop", "tags": ["a", 

   "b"]}'
done

# Overlap and truncation together: the repeated key is dropped and the
# rest is resumed again.
fake_llm_start '{"text": "\"b\": [1, ", "finish": "length"}' \
    '{"text": "2]}"}'
printf '{"a": 1, "b": ' | expect_status 0 saop-resume -R >"$tmp/out"
jqf '.raw == "{\"a\": 1, \"b\": [1, 2]}"' "$tmp/out"
jqf '.resume.attempts == 2' "$tmp/out"

# An answer that can only merge into invalid JSON: never RESOLVED; the
# original text is kept and the record is EXHAUSTED (exit 1).
fake_llm_start --repeat-last '{"text": "\"b\"]}}"}'
expect_status 1 saop-resume "$data/resume/trunc.ndjson" >"$tmp/out"
jqf '(.resume | {attempts, status}) == {"attempts": 2, "status": "EXHAUSTED"}' "$tmp/out"
jqf '.raw == "{\"name\": \"saop\", \"tags\": [\"a\", "' "$tmp/out"
jqf '.state == "RESUME_EXHAUSTED"' "$tmp/out"
