#!/bin/sh
# saop-resume when the call fails: a 401 exits 69 without printing the
# key; a connection dropped mid-stream exits 75 with --no-wait, the
# progress kept (waiting and resuming: resume-suspend.sh); no model
# configured exits 78; in every case all records pass through.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

for provider in openai anthropic; do
	# 401: the key is wrong.  Exit 69, key nowhere, records kept.
	rm -f "$SAOP_DB"
	fake_llm_start --provider "$provider" '{"text": "\"b\"]}"}'
	key=$SAOP_API_KEY
	SAOP_API_KEY="$key-wrong" expect_status 69 saop-resume --log \
	    "$tmp/events" "$data/resume/mixed.ndjson" >"$tmp/out" 2>"$tmp/err"
	grep -q . "$tmp/err" || fail "$provider: 401 said nothing"
	! grep -q -F -- "$key" "$tmp/err" "$tmp/out" "$tmp/events" ||
	    fail "$provider: the key was printed"
	! sqlite3 "$SAOP_DB" .dump | grep -q -F -- "$key" ||
	    fail "$provider: the key is in the database"
	[ "$(wc -l <"$tmp/out")" -eq 4 ] || fail "$provider: records lost"
	jq -c '[.turn, .state, .resume.status, .resume.attempts]' \
	    "$tmp/out" >"$tmp/got"
	printf '%s\n' '[1,"OK","SKIPPED",0]' '[2,"INVALID","SKIPPED",0]' \
	    '[3,"TRUNCATED","SUSPENDED",1]' '[4,"TRUNCATED","SUSPENDED",0]' |
	    diff -u - "$tmp/got" || fail "$provider: records after a 401"
	[ "$(fake_llm_requests | wc -l)" -eq 1 ] ||
	    fail "$provider: called again after a 401"
	[ "$(sql 'SELECT count(*) FROM partial_completion_log')" -eq 0 ] ||
	    fail "$provider: a log row for a suspended resume"

	# A connection dropped mid-stream: exit 75, the text received kept.
	rm -f "$SAOP_DB"
	fake_llm_start --provider "$provider" \
	    '{"text": "\"b\", \"c\", \"d\", \"e\", \"f\", \"g\"]}", "split": 5, "cut": 600, "how": "reset"}'
	expect_status 75 saop-resume --no-wait "$data/resume/trunc.ndjson" \
	    >"$tmp/out" 2>"$tmp/err"
	jqf '.resume.status == "SUSPENDED" and .resume.attempts == 1 and
	    .state == "TRUNCATED"' "$tmp/out"
	jqf '.raw | startswith("{\"name\": \"saop\", \"tags\": [\"a\", ")' \
	    "$tmp/out"
	jqf '.detect.truncated == true' "$tmp/out"
	# Some of the answer arrived before the reset, and was merged.
	jqf '.raw | startswith("{\"name\": \"saop\", \"tags\": [\"a\", \"b\"")' \
	    "$tmp/out"
	[ "$(sql "SELECT event FROM events ORDER BY rowid DESC LIMIT 1")" = \
	    RESUME_FAILED ] || fail "$provider: no RESUME_FAILED event"
	# Run again on the output: it resumes from the kept progress.
	cp "$tmp/out" "$tmp/again"
	kept=$(jq -r .raw "$tmp/again")
	fake_llm_start --provider "$provider" '{"text": "\"z\"]}"}'
	expect_status 0 saop-resume "$tmp/again" >"$tmp/out"
	jqf '.resume.status == "RESOLVED" and .detect.complete' "$tmp/out"
	jq -e --arg k "$kept" '.raw | startswith($k | rtrimstr(" ") |
	    rtrimstr(","))' "$tmp/out" >/dev/null ||
	    fail "$provider: the progress was not kept: $(jq .raw "$tmp/out")"
done

# A drop before any text: the raw text is unchanged.
fake_llm_start '{"text": "\"b\", \"c\", \"d\"]}", "cut": 0, "how": "reset"}'
expect_status 75 saop-resume --no-wait "$data/resume/trunc.ndjson" \
    >"$tmp/out" 2>/dev/null
jqf '.raw == "{\"name\": \"saop\", \"tags\": [\"a\", "' "$tmp/out"

# A rate limit that the client gives up on: 75 too.
fake_llm_start '{"status": 429, "retry_after": 1}'
expect_status 75 saop-resume --no-wait "$data/resume/trunc.ndjson" \
    >"$tmp/out" 2>/dev/null
jqf '.resume.status == "SUSPENDED"' "$tmp/out"

# No model configured: complete records are fine (0) ...
fake_llm_stop
unset SAOP_API_KEY SAOP_API_BASE SAOP_MODEL SAOP_PROVIDER
head -n 2 "$data/resume/mixed.ndjson" | expect_status 1 saop-resume >/dev/null
head -n 1 "$data/resume/mixed.ndjson" | expect_status 0 saop-resume >/dev/null
# ... truncated ones pass through unresumed with exit 78 and one warning.
expect_status 78 saop-resume "$data/resume/mixed.ndjson" >"$tmp/out" \
    2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" -eq 4 ] || fail "no model: records lost"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "no model: $(cat "$tmp/err")"
grep -q 'no model configured' "$tmp/err" || fail "no model: $(cat "$tmp/err")"
jq -s -e '[.[] | .resume.status] == ["SKIPPED", "SKIPPED", "SUSPENDED",
    "SUSPENDED"]' "$tmp/out" >/dev/null || fail "no model: $(cat "$tmp/out")"
jq -c 'select(.turn == 3) | .raw' "$tmp/out" | grep -q -F '[\"a\", "' ||
    fail "no model: raw changed"

# Bad input: a line that is not JSON names the line (65); a record with
# no raw names the field; a missing file is 66.
printf '%s\n' '{"raw":"[1]"}' '{"raw":' |
    expect_status 65 saop-resume >/dev/null 2>"$tmp/err"
grep -q 'line 2' "$tmp/err" || fail "bad line: $(cat "$tmp/err")"
printf '%s\n' '{"raw":"[1]"}' '{"turn":1}' |
    expect_status 65 saop-resume >/dev/null 2>"$tmp/err"
grep -q 'line 2.*/raw' "$tmp/err" || fail "no raw: $(cat "$tmp/err")"
expect_status 66 saop-resume "$tmp/no-such-file" 2>/dev/null
