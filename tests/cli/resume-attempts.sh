#!/bin/sh
# saop-resume: a continuation that is truncated again is resumed from the
# merged text (2 attempts); still truncated after MAX_RESUME_ATTEMPTS it is
# EXHAUSTED, keeps the best merge, goes on down the pipe and exits 1.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

for provider in openai anthropic; do
	# Truncated again, then finished: two calls.
	rm -f "$SAOP_DB"
	fake_llm_start --provider "$provider" \
	    '{"text": "\"b\", ", "finish": "length"}' \
	    '{"text": "\"c\"]}"}'
	expect_status 0 saop-resume "$data/resume/trunc.ndjson" >"$tmp/out"
	jqf '.raw == "{\"name\": \"saop\", \"tags\": [\"a\", \"b\", \"c\"]}"' \
	    "$tmp/out"
	jqf '(.resume | {attempts, status}) == {"attempts": 2, "status": "RESOLVED"} and
	    .state == "OK"' "$tmp/out"
	[ "$(sql 'SELECT resume_attempts, final_status, count(*)
	    FROM partial_completion_log')" = "2|RESOLVED|1" ] ||
	    fail "$provider: log: $(sql 'SELECT * FROM partial_completion_log')"
	fake_llm_bodies >"$tmp/bodies"
	[ "$(wc -l <"$tmp/bodies")" -eq 2 ] || fail "$provider: not 2 calls"
	# The second call continues from the merged text.
	sed -n 2p "$tmp/bodies" | jq -e '[.messages[] | .content |
	    if type == "string" then . else .[0].text end] |
	    any(contains("[\"a\", \"b\","))' >/dev/null ||
	    fail "$provider: second call lacks the merged text"

	# Still truncated after 2: EXHAUSTED, the record passed on, exit 1.
	rm -f "$SAOP_DB"
	fake_llm_start --provider "$provider" \
	    '{"text": "\"b\", ", "finish": "length"}' \
	    '{"text": "\"c\", ", "finish": "length"}' \
	    '{"text": "\"d\"]}"}'
	expect_status 1 saop-resume "$data/resume/trunc.ndjson" >"$tmp/out"
	jqf '.raw == "{\"name\": \"saop\", \"tags\": [\"a\", \"b\", \"c\", "' \
	    "$tmp/out"
	jqf '(.resume | {attempts, status}) == {"attempts": 2, "status": "EXHAUSTED"} and
	    .state == "RESUME_EXHAUSTED" and .detect.truncated == true' \
	    "$tmp/out"
	[ "$(fake_llm_requests | wc -l)" -eq 2 ] ||
	    fail "$provider: EXHAUSTED after $(fake_llm_requests | wc -l) calls"
	[ "$(sql 'SELECT truncation_index, initial_chunk_length,
	    resume_attempts, final_status FROM partial_completion_log')" = \
	    "30|31|2|EXHAUSTED" ] ||
	    fail "$provider: log: $(sql 'SELECT * FROM partial_completion_log')"
	[ "$(sql "SELECT event FROM events ORDER BY rowid DESC LIMIT 1")" = \
	    RESUME_FAILED ] || fail "$provider: no RESUME_FAILED event"

	# --max-attempts 3 makes the third call, which finishes it.
	fake_llm_start --provider "$provider" \
	    '{"text": "\"b\", ", "finish": "length"}' \
	    '{"text": "\"c\", ", "finish": "length"}' \
	    '{"text": "\"d\"]}"}'
	expect_status 0 saop-resume --max-attempts 3 \
	    "$data/resume/trunc.ndjson" >"$tmp/out"
	jqf '(.resume | {attempts, status}) == {"attempts": 3, "status": "RESOLVED"}' "$tmp/out"
	jqf '.raw | endswith("\"c\", \"d\"]}")' "$tmp/out"
done

# The EXHAUSTED text is what -r writes.  (The second "7, ", cut, could be
# the first written again: not kept, the record left as it stood.)
fake_llm_start --repeat-last '{"text": "7, ", "finish": "length"}'
printf '[1, ' | expect_status 1 saop-resume -R -r >"$tmp/out"
printf '%s\n' '[1, 7, ' | cmp -s - "$tmp/out" || fail "-r: $(cat "$tmp/out")"

expect_status 64 saop-resume --max-attempts 0 </dev/null 2>/dev/null
expect_status 64 saop-resume --max-attempts x </dev/null 2>/dev/null
