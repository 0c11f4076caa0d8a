#!/bin/sh
# A refused answer is paid for: its usage is kept, in every wire format
# (OpenAI chat completions, Responses, Anthropic Messages, Gemini; SSE and
# whole JSON, tests/data/llm/README.md names each fixture) and by every
# program that calls: saop-suspend's record ("usage"), saop-resume's
# record ("resume" cost) and RESUME_FAILED event, saop-validate's record
# ("validate" cost) and CORRECTION_ANSWERED event ("refused": true); and
# saop-report sums them (--json and text).  Each program still exits 69.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
command -v sqlite3 >/dev/null 2>&1 || skip "no sqlite3"
llm="$top_srcdir/tests/data/llm"

# FIXTURE PROVIDER PROMPT COMPLETION ("null": not reported).
cat >"$tmp/cases" <<'EOF'
openai-chat-refusal.sse	openai	79	11
openai-chat-refusal.json	openai	79	11
anthropic-refusal.sse	anthropic	20	0
anthropic-refusal.json	anthropic	20	4
responses-refusal.sse	openai-responses	278	11
responses-refusal.json	openai-responses	278	11
gemini-safety.sse	gemini	13	5
gemini-safety.json	gemini	13	null
EOF

req='{"model":"m1","max_tokens":300,"messages":[{"role":"user","content":"hi"}]}'
# rec TASK [RAW]: a record of task TASK (with raw RAW when given).
rec() {
	jq -nc --arg t "$1" --arg raw "${2-}" --argjson req "$req" \
	    '{task_id: $t, turn: 1, request: $req} +
	    (if $raw == "" then {} else {raw: $raw} end)'
}

n=0
: >"$tmp/suspended"
while IFS='	' read -r fx prov p c; do
	n=$((n + 1))
	path=$(printf '%s' "$llm/$fx" | jq -Rs .)
	fake_llm_start --repeat-last --provider "$prov" "{\"fixture\": $path}"
	want=$(jq -nc --argjson p "$p" --argjson c "$c" \
	    '{prompt_tokens: $p} + if $c == null then {}
	    else {completion_tokens: $c} end + {cost: null}')

	# saop-suspend: the record's usage, where a normal answer's goes.
	rec "s$n" | expect_status 69 saop-suspend --no-wait >"$tmp/out" \
	    2>"$tmp/err"
	jq -e --argjson w "$want" '.finish_reason == "refusal" and
	    .state == "USER_ESCALATION" and .usage == $w' "$tmp/out" \
	    >/dev/null || fail "$fx: saop-suspend: $(cat "$tmp/out")"
	cat "$tmp/out" >>"$tmp/suspended"

	# saop-resume: the continuation refused; its cost on the record and
	# in RESUME_FAILED (no partial_completion_log row is written).
	rec "r$n" '{"a": [1, ' | expect_status 69 saop-resume \
	    --continuation user >"$tmp/out" 2>"$tmp/err"
	jq -e --argjson p "$p" --argjson c "$c" '.resume.status ==
	    "SUSPENDED" and .resume.attempts == 1 and .state == "TRUNCATED"
	    and .resume.prompt_tokens == $p and
	    .resume.completion_tokens == $c and .resume.sent_bytes > 0' \
	    "$tmp/out" >/dev/null ||
	    fail "$fx: saop-resume: $(cat "$tmp/out")"
	sql "SELECT data FROM events WHERE task_id = 'r$n' AND
	    event = 'RESUME_FAILED'" >"$tmp/ev"
	jq -e --argjson p "$p" --argjson c "$c" --slurpfile r "$tmp/out" \
	    '.status == "SUSPENDED" and .prompt_tokens == $p and
	    .completion_tokens == $c and
	    .sent_bytes == $r[0].resume.sent_bytes' "$tmp/ev" >/dev/null ||
	    fail "$fx: RESUME_FAILED: $(cat "$tmp/ev")"

	# saop-validate: the correction turn refused; its cost on the
	# record and in CORRECTION_ANSWERED.
	rec "v$n" '{"saop": "1.0",: 1}' | expect_status 69 saop-validate \
	    >"$tmp/out" 2>"$tmp/err"
	jq -e --argjson p "$p" --argjson c "$c" '.validate.valid == false
	    and .validate.prompt_tokens == $p and
	    .validate.completion_tokens == $c and .validate.sent_bytes > 0' \
	    "$tmp/out" >/dev/null || fail "$fx: saop-validate: $(cat "$tmp/out")"
	sql "SELECT data FROM events WHERE task_id = 'v$n' AND
	    event = 'CORRECTION_ANSWERED'" >"$tmp/ev"
	jq -e --argjson p "$p" --argjson c "$c" --slurpfile r "$tmp/out" \
	    '.refused == true and .attempt == 1 and .prompt_tokens == $p and
	    .completion_tokens == $c and
	    .sent_bytes == $r[0].validate.sent_bytes' "$tmp/ev" >/dev/null ||
	    fail "$fx: CORRECTION_ANSWERED: $(cat "$tmp/ev")"
done <"$tmp/cases"
[ "$n" -eq 8 ] || fail "only $n cases ran"
fake_llm_stop

# saop-report: every refused call summed.  The tokens of all the cases.
P=$(awk -F'\t' '{ s += $3 } END { print s }' "$tmp/cases")
C=$(awk -F'\t' '$4 != "null" { s += $4 } END { print s }' "$tmp/cases")
expect_status 0 saop-report --json "$tmp/suspended" >"$tmp/rep"
jq -e --argjson p "$P" --argjson c "$C" '.overall as $o |
    $o.usage == {prompt_tokens: $p, completion_tokens: $c} and
    $o.recovery.resume.prompt_tokens == $p and
    $o.recovery.resume.completion_tokens == $c and
    $o.recovery.correction.prompt_tokens == $p and
    $o.recovery.correction.completion_tokens == $c and
    $o.recovery_tokens == 2 * ($p + $c) and
    ([.tasks[] | select(.task_id == "s1")][0].usage ==
    {prompt_tokens: 79, completion_tokens: 11}) and
    ([.tasks[] | select(.task_id == "r5")][0].recovery.resume.prompt_tokens
    == 278)' "$tmp/rep" >/dev/null || fail "report: $(cat "$tmp/rep")"
# The correction turns refused add no correction turn, no resume.
jq -e '.overall.truncations.resumed == 0 and
    .overall.truncations.exhausted == 0' "$tmp/rep" >/dev/null ||
    fail "report counts: $(jq -c .overall "$tmp/rep")"
expect_status 0 saop-report "$tmp/suspended" >"$tmp/text"
sed -n '/^overall/,$p' "$tmp/text" >"$tmp/all"
grep -q "^  resume cost .* $P+$C tokens\$" "$tmp/all" &&
    grep -q "^  correction cost .* $P+$C tokens\$" "$tmp/all" &&
    grep -q "^  recovery tokens  $((2 * (P + C)))\$" "$tmp/all" &&
    grep -q "^  answer tokens    $P+$C (the records' usage)\$" "$tmp/all" ||
    fail "text report: $(cat "$tmp/all")"

# One task, two resumes: one exhausted (its cost in partial_completion_log
# and in its RESUME_FAILED), one refused (in its RESUME_FAILED only): each
# counted once.
fake_llm_start '{"text": "2, ", "usage": [100, 3]}'
rec mix '{"a": [1, ' | expect_status 1 saop-resume --continuation user \
    --max-attempts 1 >"$tmp/out" 2>"$tmp/err"
jqf '.resume.status == "EXHAUSTED"' "$tmp/out"
fake_llm_start "{\"fixture\": $(printf '%s' "$llm/openai-chat-refusal.sse" |
    jq -Rs .)}"
rec mix '{"b": [1, ' | jq -c '.turn = 2' | expect_status 69 saop-resume \
    --continuation user >"$tmp/out" 2>"$tmp/err"
[ "$(sql "SELECT count(*) FROM events WHERE task_id = 'mix' AND
    event = 'RESUME_FAILED'")" = 2 ] || fail "not two RESUME_FAILED events"
expect_status 0 saop-report --json --task mix >"$tmp/rep"
jq -e '.tasks[0].recovery.resume as $r | $r == {sent_bytes: $r.sent_bytes,
    received_bytes: 3, prompt_tokens: 179, completion_tokens: 14} and
    .tasks[0].truncations.exhausted == 1' "$tmp/rep" >/dev/null ||
    fail "report of two resumes: $(jq -c .tasks "$tmp/rep")"
