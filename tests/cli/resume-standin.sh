#!/bin/sh
# saop-resume against a model stand-in (saop-mock --oracle) that knows
# the whole intended answer and carries on from the partial output it is
# shown, at most N characters an answer: every cut (inside a long string,
# a number, true, null, a \u escape; between tokens; right after a key's
# colon) resumes byte for byte, in the four wire formats, prefill and
# user form, --context tail, and with a model that re-sends the open
# string; the cost on the record and in the log is what the stand-in
# sent.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/oracle-lib.sh"

# The intended answer: a write_file envelope with a 3,000-character
# string (escapes, \u escapes, multi-byte and 4-byte characters), a
# number, true and null; and one record per cut.
"$PYTHON3" - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
# (Each line numbered: text that repeats itself exactly at a cut reads
# as a repeat too, and a merge with two readings is not taken.)
line = 'x%d = \\"caf\\u00e9\\" + \\"\\u2603\\\\\\"; /* \u00e9\U0001F600 ok */\\n'
body = "".join(line % i for i in range(200))[:3000]
body = body[:body.rfind("\\n") + 2]
answer = ('{"saop": "1.0", "turn_index": 3, "agent_role": "developer", '
          '"thought": "write it", "action": {"tool": "write_file", '
          '"parameters": {"path": "a.c", "content": "' + body + '", '
          '"size": 12345.678, "ok": true, "none": null}}}')
json.loads(answer)
cuts = {
    "string": answer.index('"content": "') + 12 + 1000,
    "number": answer.index('"size": 123') + 11,
    "true": answer.index('"ok": tr') + 8,
    "null": answer.index('"none": nu') + 10,
    "uescape": answer.index("\\u00e9", 3000) + 4,
    "between": answer.index('"turn_index": 3, ') + 17,
    "colon": answer.index('"thought":') + 10,
}
with open(tmp + "/answers", "w") as f:
    f.write(json.dumps(answer) + "\n")
with open(tmp + "/answer.txt", "w") as f:
    f.write(answer)
with open(tmp + "/in.ndjson", "w") as f:
    for i, (k, at) in enumerate(cuts.items()):
        f.write(json.dumps({"task_id": "s", "turn": i, "cut": k,
                            "request": {"messages": [{"role": "user",
                                        "content": "write a.c"}]},
                            "raw": answer[:at],
                            "finish_reason": "length"}) + "\n")
PY
n=$(wc -l <"$tmp/in.ndjson")

# check NAME: every record of $tmp/out is the whole answer, RESOLVED; the
# costs add up to what the stand-in logged.
check() {
	jq -r '.raw' "$tmp/out" >"$tmp/raws"
	i=0
	while [ "$i" -lt "$n" ]; do
		i=$((i + 1))
		sed -n "${i}p" "$tmp/out" | jq -j '.raw' >"$tmp/got"
		cmp -s "$tmp/answer.txt" "$tmp/got" ||
		    fail "$1: the $(sed -n "${i}p" "$tmp/out" | jq -r .cut) cut merged into $(head -c 300 "$tmp/got")... ($(sed -n "${i}p" "$tmp/out" | jq -c .resume))"
	done
	[ "$(jq -s 'map(select(.resume.status == "RESOLVED" and .state == "OK")) | length' "$tmp/out")" -eq "$n" ] ||
	    fail "$1: not all RESOLVED: $(jq -c '.resume' "$tmp/out")"
	oracle_unplaced
	got=$(jq -s '[map(.resume.received_bytes), map(.resume.sent_bytes),
	    map(.resume.prompt_tokens), map(.resume.completion_tokens),
	    map(.resume.attempts)] | map(add)' "$tmp/out" | tr -d ' \n')
	want=$(jq -s 'map(.oracle) | [(map(.text_bytes), map(.turn_bytes),
	    map(.usage.input), map(.usage.output) | add), length]' \
	    "$tmp/log" | tr -d ' \n')
	[ "$got" = "$want" ] || fail "$1: cost on the records $got, the stand-in's $want"
	# The log rows hold the same.
	dbgot=$(sql "SELECT sum(received_bytes), sum(sent_bytes),
	    sum(prompt_tokens), sum(completion_tokens), sum(resume_attempts)
	    FROM partial_completion_log WHERE final_status = 'RESOLVED'" |
	    tr '|' ',')
	[ "[$dbgot]" = "$got" ] || fail "$1: partial_completion_log $dbgot, records $got"
}

for provider in openai openai-responses anthropic gemini; do
	for form in prefill user; do
		rm -f "$SAOP_DB"
		oracle_start --provider "$provider" --max-chars 400
		expect_status 0 saop-resume --max-attempts 10 \
		    --continuation "$form" "$tmp/in.ndjson" >"$tmp/out"
		check "$provider $form"
		jq -e --arg f "$form" 'select(.oracle.form != $f)' "$tmp/log" \
		    >/dev/null && fail "$provider $form: a request in another form"
		# The long string: 2,000 missing characters, 400 an answer.
		jq -s -e 'map(select(.cut == "string"))[0].resume.attempts == 6' \
		    "$tmp/out" >/dev/null ||
		    fail "$provider $form: string cut in $(jq -s -c 'map(select(.cut == "string"))[0].resume' "$tmp/out")"
		# A model that re-sends the open string from its quote.
		rm -f "$SAOP_DB"
		oracle_start --provider "$provider" --max-chars 400 \
		    --manner restart-string
		expect_status 0 saop-resume --max-attempts 10 \
		    --continuation "$form" "$tmp/in.ndjson" >"$tmp/out"
		check "$provider $form restart-string"
		jq -s -e 'any(.[].oracle; .from < .at)' "$tmp/log" >/dev/null ||
		    fail "$provider $form restart-string: no string re-sent"
	done
done

# --context tail: only the last valid token and the partial token after
# it are sent (the stand-in finds them in its answer: the cuts where they
# occur once in it, not a lone ',' or ':').
rm -f "$SAOP_DB"
oracle_start --max-chars 5000
head -n 5 "$tmp/in.ndjson" >"$tmp/in5.ndjson"
n=5
expect_status 0 saop-resume --context tail "$tmp/in5.ndjson" >"$tmp/out"
check "--context tail"
n=$(wc -l <"$tmp/in.ndjson")
jq -e 'select(.oracle.form != "tail")' "$tmp/log" >/dev/null &&
    fail "--context tail sent the whole partial output"
# Not one request held the first member of the envelope.
jq -e 'select(.body | tostring | contains("agent_role"))' "$tmp/log" \
    >/dev/null && fail "--context tail sent the start"

# No usage reported: the tokens are null, on the record and in the log.
rm -f "$SAOP_DB"
oracle_start --max-chars 5000 --no-usage
expect_status 0 saop-resume "$tmp/in.ndjson" >"$tmp/out"
jq -s -e 'all(.[]; .resume.prompt_tokens == null and
    .resume.completion_tokens == null and .resume.received_bytes > 0)' \
    "$tmp/out" >/dev/null || fail "no usage: $(jq -c .resume "$tmp/out")"
[ "$(sql 'SELECT count(*) FROM partial_completion_log WHERE prompt_tokens IS NULL AND completion_tokens IS NULL AND received_bytes > 0')" -eq "$n" ] ||
    fail "no usage: the log rows"
jq -s -e 'length > 0 and all(.[]; .oracle.usage == null)' "$tmp/log" \
    >/dev/null || fail "no usage: the oracle's log: $(head -c 500 "$tmp/log")"
