#!/bin/sh
# saop-resume: a truncated record is continued and merged (RESOLVED, one
# log row with resume_attempts 1) over both wire formats; the server got
# the conversation, the exact resume prompt, the prefix and the model.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

prompt='Continue the JSON payload from the last valid token. Output ONLY the remaining JSON. Do not repeat any content before the last valid token.'
want='{"name": "saop", "tags": ["a", "b"]}'

for provider in openai anthropic; do
	rm -f "$SAOP_DB"
	fake_llm_start --provider "$provider" '{"text": "\"b\"]}"}'
	# openai: auto is the user form; ask for prefill to see the prefix
	# as an assistant turn (anthropic: auto is prefill).
	form=auto
	[ "$provider" = openai ] && form=prefill
	expect_status 0 saop-resume --continuation "$form" \
	    "$data/resume/trunc.ndjson" >"$tmp/out"
	[ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "$provider: not one record"
	jq -e --arg w "$want" '.raw == $w' "$tmp/out" >/dev/null ||
	    fail "$provider: raw is $(jq -c .raw "$tmp/out")"
	jqf '(.resume | {attempts, status}) == {"attempts": 1, "status": "RESOLVED"}' "$tmp/out"
	jqf '.state == "OK" and .detect.complete == true' "$tmp/out"
	jqf '.task_id == "t1" and .turn == 3 and .request.max_tokens == 100' \
	    "$tmp/out"
	[ "$(sql 'SELECT task_id, turn_number, truncation_index,
	    initial_chunk_length, resume_attempts, final_status
	    FROM partial_completion_log')" = "t1|3|30|31|1|RESOLVED" ] ||
	    fail "$provider: log row: $(sql 'SELECT * FROM partial_completion_log')"
	[ "$(sql "SELECT group_concat(event, ' ') FROM
	    (SELECT event FROM events ORDER BY rowid)")" = \
	    "PARTIAL_COMPLETION_DETECTED RESUME_SUCCEEDED" ] ||
	    fail "$provider: events: $(sql 'SELECT event FROM events')"
	# What the server received.
	fake_llm_bodies >"$tmp/bodies"
	[ "$(wc -l <"$tmp/bodies")" -eq 1 ] || fail "$provider: not one call"
	jqf '.model == "fake-model-x"' "$tmp/bodies"
	jqf '.messages[0].role == "user"' "$tmp/bodies"
	jq -e '.messages[0].content | tostring | test("Give JSON")' \
	    "$tmp/bodies" >/dev/null || fail "$provider: no conversation"
	jq -r '.messages[1].content | if type == "string" then .
	    else .[0].text end' "$tmp/bodies" >"$tmp/p"
	printf '%s\n\nLast valid token: ,\n' "$prompt" | cmp -s - "$tmp/p" ||
	    fail "$provider: resume prompt: $(cat "$tmp/p")"
	jqf '.messages[2].role == "assistant"' "$tmp/bodies"
	jq -r '.messages[2].content | if type == "string" then .
	    else .[0].text end' "$tmp/bodies" >"$tmp/a"
	printf '%s\n' '{"name": "saop", "tags": ["a",' | cmp -s - "$tmp/a" ||
	    fail "$provider: prefill: $(cat "$tmp/a")"
	jqf '.messages | length == 3' "$tmp/bodies"
done

# -R and -r: raw text in, merged text out; the openai default is the
# user form, which quotes the partial output.
fake_llm_start '{"text": "3]}"}'
printf '{"a": [1, 2, ' | saop-resume -R -r >"$tmp/out" ||
    fail "-R -r exited $?"
printf '%s\n' '{"a": [1, 2, 3]}' | cmp -s - "$tmp/out" ||
    fail "-R -r wrote $(cat "$tmp/out")"
fake_llm_bodies >"$tmp/bodies"
jqf '.model == "fake-model" and (.messages | length) == 1' "$tmp/bodies"
jq -r '.messages[0].content' "$tmp/bodies" >"$tmp/p"
printf '%s\n\nLast valid token: ,\n\nYour partial output so far:\n\n{"a": [1, 2, \n' \
    "$prompt" | cmp -s - "$tmp/p" || fail "user form: $(cat "$tmp/p")"

# Complete and invalid records pass through without a call: exit 1 for
# the invalid one; the truncated ones are resumed.
fake_llm_start '{"text": "\"b\"]}"}' '{"text": "3]"}'
expect_status 1 saop-resume "$data/resume/mixed.ndjson" >"$tmp/out"
[ "$(wc -l <"$tmp/out")" -eq 4 ] || fail "mixed: not four records"
jq -c '[.turn, .state, .resume.status, .resume.attempts]' "$tmp/out" \
    >"$tmp/got"
cat >"$tmp/exp" <<'EOT'
[1,"OK","SKIPPED",0]
[2,"INVALID","SKIPPED",0]
[3,"OK","RESOLVED",1]
[4,"OK","RESOLVED",1]
EOT
diff -u "$tmp/exp" "$tmp/got" || fail "mixed records"
head -n 1 "$tmp/out" | jq -e '.raw == "{\"done\": true}" and
    (has("detect") | not)' >/dev/null || fail "a complete record changed"
[ "$(fake_llm_requests | wc -l)" -eq 2 ] || fail "mixed: not two calls"

# The worked example of the man page runs and prints what the page shows.
fake_llm_stop
rm -f "$SAOP_DB"
man="$top_srcdir/man/saop-resume.1"
groff -mdoc -Tascii -P-cbou "$man" 2>/dev/null |
    sed -n '/^EXAMPLES/,/^SEE ALSO/p' |
    sed 's/^           //' | sed -n '/^\$ echo/,/^}$/p' >"$tmp/ex"
sed -n '/^\$ echo/,/--dry-run$/p' "$tmp/ex" | sed 's/^\$ //' >"$tmp/ex.sh"
sed '1,/--dry-run$/d' "$tmp/ex" >"$tmp/ex.want"
[ -s "$tmp/ex.sh" ] && [ -s "$tmp/ex.want" ] || fail "no example in $man"
(unset SAOP_API_KEY SAOP_MODEL; sh "$tmp/ex.sh") >"$tmp/ex.got" ||
    fail "the man page example exited $?"
diff -u "$tmp/ex.want" "$tmp/ex.got" || fail "the man page example differs"
[ ! -e "$SAOP_DB" ] || fail "--dry-run opened the database"
