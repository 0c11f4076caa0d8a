#!/bin/sh
# A cut answer wrapped in a code fence, after a line of prose, after a
# <think> block, or in a fence after prose: saop-detect finds where its
# JSON begins, saop-resume continues it from the cut in one model call
# (saop-mock --oracle, in the four wire formats), byte for byte with the
# closing fence the model sends, what the model is sent back for is the
# missing tail only, and saop-validate takes it as it is (no correction
# turn).  A text with two possible starts is never resumed from the wrong
# one.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/oracle-lib.sh"

# Four wrapped envelopes, each cut inside a string, inside a number and
# between members: one record per cut, the whole answers for the stand-in.
"$PYTHON3" - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
env = ('{"saop": "1.0", "turn_index": %d, "agent_role": "developer", '
       '"thought": "List the files of src, then read the largest one.", '
       '"action": {"tool": "list_files", "parameters": {"path": "src", '
       '"depth": 12345}}}')
wraps = {
    "fence": "```json\n%s\n```",
    "prose": "Sure! Here is the envelope:\n%s",
    "think": "<think>\nThe user wants {files}; I answer with [JSON].\n"
             "</think>\n%s",
    "prose+fence": "Here it is:\n\n```json\n%s\n```\n",
}
answers, recs = [], []
for i, (w, form) in enumerate(wraps.items()):
    a = form % (env % i)
    answers.append(a)
    js = a.index('{"saop"')
    j = a[js:]
    cuts = {"string": js + j.index("then read") + 4,
            "number": js + j.index("12345") + 2,
            "between": js + j.index(', "action"') + 1}
    for c, at in cuts.items():
        recs.append({"task_id": "w", "turn": len(recs), "wrapper": w,
                     "cut": c, "want": a, "json_start": js,
                     "request": {"messages": [{"role": "user",
                                 "content": "list the files"}]},
                     "raw": a[:at], "finish_reason": "length"})
with open(tmp + "/answers", "w") as f:
    for a in answers:
        f.write(json.dumps(a) + "\n")
with open(tmp + "/in.ndjson", "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
PY
n=$(wc -l <"$tmp/in.ndjson")

# saop-detect: each is TRUNCATED with its wrapper named and its JSON's
# start; the indexes count in the whole raw text.
expect_status 1 saop-detect "$tmp/in.ndjson" >"$tmp/det"
jq -s -e 'all(.[]; .state == "TRUNCATED" and
    .detect.wrapper == .wrapper and .detect.json_start == .json_start and
    .detect.resume_index == (.raw | utf8bytelength))' "$tmp/det" \
    >/dev/null || fail "detect: $(jq -c '[.wrapper, .cut, .detect.wrapper, .detect.json_start, .detect.error]' "$tmp/det")"
# The first cut, as the issue shows it, through -R.
printf '```json\n{"saop": "1.0", "thought": "List the fi' |
    expect_status 1 saop-detect --raw-input >"$tmp/one"
jqf '.state == "TRUNCATED" and .detect.wrapper == "fence" and
    .detect.json_start == 8 and .detect.closing == "\"}"' "$tmp/one"

for provider in openai anthropic openai-responses gemini; do
	rm -f "$SAOP_DB"
	oracle_start --provider "$provider" --max-chars 100000
	expect_status 0 saop-resume "$tmp/det" >"$tmp/out"
	# Byte for byte, the closing fence too, in one call each.
	jq -s -e 'all(.[]; .raw == .want and .state == "OK" and
	    .resume.status == "RESOLVED" and .resume.attempts == 1 and
	    .detect.json_start == .json_start)' "$tmp/out" >/dev/null ||
	    fail "$provider: $(jq -c 'select(.raw != .want) | [.wrapper, .cut, .resume, .raw[-60:]]' "$tmp/out")"
	[ "$(wc -l <"$tmp/log")" -eq "$n" ] || fail "$provider: not one call a record"
	oracle_unplaced
	# What came back is the missing tail: within 1.15 times its bytes.
	jq -n -e --slurpfile d "$tmp/det" --slurpfile o "$tmp/out" '
	    [range(0; $o | length) | $o[.].resume.received_bytes * 100 <=
	    (($o[.].want | utf8bytelength) - ($d[.].raw | utf8bytelength)) *
	    115] | all' >/dev/null ||
	    fail "$provider: received $(jq -c .resume.received_bytes "$tmp/out")"
	# saop-validate: OK as it is, the wrapper stripped, no correction
	# turn (no model is reachable for one).
	SAOP_API_BASE=http://127.0.0.1:9/v1 expect_status 0 saop-validate \
	    "$tmp/out" >"$tmp/val"
	jq -s -e 'all(.[]; .state == "OK" and .validate.valid and
	    .validate.attempts == 0 and .envelope.action.parameters.depth == 12345
	    and (.envelope.thought | startswith("List the files")))' \
	    "$tmp/val" >/dev/null ||
	    fail "$provider validate: $(jq -c '[.wrapper, .state, .validate]' "$tmp/val")"
done

# Two possible starts are never resumed from the wrong one: a value in
# the prose and another after it (INVALID, why said, SKIPPED, no call); a
# '{' inside the <think> block (cut inside it: no JSON yet); a fence
# inside a string of the JSON (bare: the JSON's own verdict).
rm -f "$tmp/log"
oracle_start --max-chars 100000
for raw in 'Use this: {"a": 1}
{"b": 2, "c": "x' '<think>
{"a": 1, "b": "x' '{"code": "```json\n{\"a\": 1", "b": "x'; do
	jq -cn --arg r "$raw" '{task_id: "a", raw: $r, finish_reason: "length"}'
done >"$tmp/amb.ndjson"
expect_status 1 saop-detect "$tmp/amb.ndjson" >"$tmp/amb.det"
jq -s -e '.[0].state == "INVALID" and
    (.[0].detect.error.message | test("two possible starts")) and
    .[1].state == "INVALID" and
    (.[1].detect.error.message | test("reasoning block")) and
    .[2].state == "TRUNCATED" and .[2].detect.wrapper == null' \
    "$tmp/amb.det" >/dev/null || fail "two starts: $(jq -c '[.state, .detect.wrapper, .detect.error.message]' "$tmp/amb.det")"
head -n 2 "$tmp/amb.det" >"$tmp/amb2.det"
expect_status 1 saop-resume "$tmp/amb2.det" >"$tmp/amb.out"
jq -s -e '.[0].resume.status == "SKIPPED" and .[1].resume.status == "SKIPPED"' \
    "$tmp/amb.out" >/dev/null || fail "two starts resumed: $(jq -c .resume "$tmp/amb.out")"
[ ! -s "$tmp/log" ] || fail "a call for a text with two starts: $(cat "$tmp/log")"

# Tool-call arguments are never wrapped: prose before them is invalid.
jq -cn '{task_id: "t", raw: "Sure:\n{\"a\": 1", tool_call: {id: "c1", name: "f"}}' |
    expect_status 1 saop-detect >"$tmp/tool"
jqf '.state == "INVALID" and .detect.wrapper == null' "$tmp/tool"

# --context tail on a wrapped answer: the open string after the last
# valid token, not the fence.
printf '```json\n{"a": "hello wor' | SAOP_MODEL=m \
    SAOP_API_BASE=http://127.0.0.1:9/v1 saop-resume --raw-input --dry-run \
    --context tail | sed '1,/^$/d' | jq -r '.messages[-1].content' >"$tmp/tail"
tail -n 1 "$tmp/tail" | grep -qx ' "hello wor' || fail "tail: $(cat "$tmp/tail")"
! grep -q '```' "$tmp/tail" || fail "tail: the fence was sent"
