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
	check $p '{"name": "saop", "tags": ["a", "b"]}' "$want"
	# Fenced, in a sentence, after white space.
	check $p '```json
"b"]}
```' "$want
"
	check $p 'Here is the rest: "b"]}' "$want"
	check $p '"b"]}

Let me know if you need anything else.' "$want"
	# One line break is kept as it came; blank lines put first are
	# dropped (with the space prefill did not show, on anthropic).
	check $p '
   "b"]}' '{"name": "saop", "tags": ["a", 
   "b"]}'
	if [ $p = openai ]; then sp='    '; else sp='   '; fi
	check $p '

   "b"]}' "{\"name\": \"saop\", \"tags\": [\"a\",$sp\"b\"]}"
	# Both readings are complete with two values ('"a", ' written again,
	# or one more "a"): not taken; asked once more with the tail shown,
	# the same answer: RESUME_EXHAUSTED, the received text kept.
	fake_llm_start --provider $p --repeat-last \
	    "$(jq -cn '{text: "\"a\", \"b\"]}"}')"
	expect_status 1 saop-resume "$data/resume/trunc.ndjson" >"$tmp/out"
	jqf '.resume.status == "EXHAUSTED" and .resume.ambiguous == 2 and
	    .state == "RESUME_EXHAUSTED" and
	    .raw == "{\"name\": \"saop\", \"tags\": [\"a\", "' "$tmp/out"
	fake_llm_requests | tail -n 1 | grep -q 'could be read two ways' ||
	    fail "$p: the second request does not show the tail"
done

# Overlap and truncation together: the repeated key is dropped and the
# rest is resumed again.
fake_llm_start '{"text": "\"b\": [1, ", "finish": "length"}' \
    '{"text": "2]}"}'
printf '{"a": 1, "b": ' | expect_status 0 saop-resume -r >"$tmp/out"
jqf '.raw == "{\"a\": 1, \"b\": [1, 2]}"' "$tmp/out"
jqf '.resume.attempts == 2' "$tmp/out"

# An answer that can only merge into invalid JSON: never RESOLVED; the
# original text is kept and the record is EXHAUSTED (exit 1).
fake_llm_start --repeat-last '{"text": "\"b\"]}}"}'
expect_status 1 saop-resume "$data/resume/trunc.ndjson" >"$tmp/out"
jqf '(.resume | {attempts, status}) == {"attempts": 2, "status": "EXHAUSTED"}' "$tmp/out"
jqf '.raw == "{\"name\": \"saop\", \"tags\": [\"a\", "' "$tmp/out"
jqf '.state == "RESUME_EXHAUSTED"' "$tmp/out"
