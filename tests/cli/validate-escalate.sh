#!/bin/sh
# saop-validate: invalid three times is USER_ESCALATION (exit 3) with the
# tasks row and the events; the count of retries is per record, and
# --max-retries / SAOP_MAX_CORRECTION_RETRIES set it.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

good=$(jq -c . "$data/validate/good.json")
record() {
	jq -nc --arg raw "$1" --arg task "$2" '{task_id: $task, turn: 7,
	    request: {messages: [{role: "user", content: "Go on."}]},
	    raw: $raw}'
}

# Three invalid answers: the original and two corrections.
fake_llm_start '{"text": "Sorry, I cannot answer in JSON."}' \
    '{"text": "{\"saop\": \"2.0\"}"}'
record 'not json' t-esc | expect_status 3 saop-validate >"$tmp/out" \
    2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "the record was not written"
jqf '.state == "USER_ESCALATION" and .validate.valid == false and
    .validate.attempts == 2 and .validate.original_raw == "not json" and
    .raw == "{\"saop\": \"2.0\"}" and (.envelope | not) and
    ([.validate.errors[].path] | index("/saop") != null)' "$tmp/out"
[ "$(fake_llm_requests | wc -l)" -eq 2 ] || fail "not 2 correction turns"
# An escalated record says what its two turns cost too: the stand-in's
# default usage is 7 prompt tokens and one completion token a piece of 4
# characters (8 and 4 pieces here).
jqf '.validate.received_bytes == 46 and .validate.prompt_tokens == 14 and
    .validate.completion_tokens == 12 and .validate.sent_bytes > 0' \
    "$tmp/out"
# The last errors are on stderr too.
grep -q '^saop-validate: line 1: /saop' "$tmp/err" ||
    fail "stderr: $(cat "$tmp/err")"
[ "$(sql "SELECT status || ' ' || reason FROM tasks
    WHERE task_id = 't-esc'")" = "USER_ESCALATION MAX_RETRIES_EXCEEDED" ] ||
    fail "tasks row: $(sql 'SELECT * FROM tasks')"
[ "$(sql "SELECT group_concat(event, ' ') FROM (SELECT event FROM events
    WHERE task_id = 't-esc' AND turn = 7 ORDER BY rowid)")" = \
    "MALFORMED_RESPONSE CORRECTION_ANSWERED MALFORMED_RESPONSE \
CORRECTION_ANSWERED MAX_RETRIES_EXCEEDED" ] ||
    fail "events: $(sql 'SELECT event, data FROM events')"
sql "SELECT data FROM events WHERE event = 'MAX_RETRIES_EXCEEDED'" |
    jq -e '.attempts == 2 and any(.errors[]; .path == "/saop")' >/dev/null ||
    fail "MAX_RETRIES_EXCEEDED data"
sql "SELECT data FROM events WHERE event = 'MALFORMED_RESPONSE'
    ORDER BY rowid LIMIT 1" | jq -e '.attempt == 1 and
    .errors[0].keyword == "syntax"' >/dev/null || fail "first event data"

# The count is per record: two records, each may use two turns.
fake_llm_start '{"text": "still not json"}' "$(jq -nc --arg t "$good" \
    '{text: $t}')" '{"text": "nope"}' "$(jq -nc --arg t "$good" \
    '{text: $t}')"
{ record 'bad one' t-a; record 'bad two' t-b; } |
    expect_status 0 saop-validate >"$tmp/out"
jq -s -e '[.[].validate.attempts] == [2, 2] and
    ([.[].state] | unique) == ["OK"]' "$tmp/out" >/dev/null ||
    fail "per record: $(cat "$tmp/out")"
[ "$(fake_llm_requests | wc -l)" -eq 4 ] || fail "per record: not 4 calls"

# --max-retries 1, and the environment variable.
fake_llm_start --repeat-last '{"text": "no"}'
record 'bad' t-one | expect_status 3 saop-validate --max-retries 1 \
    >"$tmp/out" 2>/dev/null
jqf '.validate.attempts == 1' "$tmp/out"
[ "$(fake_llm_requests | wc -l)" -eq 1 ] || fail "--max-retries 1: calls"
fake_llm_start --repeat-last '{"text": "no"}'
record 'bad' t-zero | SAOP_MAX_CORRECTION_RETRIES=0 expect_status 3 \
    saop-validate >"$tmp/out" 2>/dev/null
jqf '.state == "USER_ESCALATION" and .validate.attempts == 0' "$tmp/out"
[ ! -s "$FAKE_LLM_LOG" ] || fail "0 retries made a call"
# The escalated record still flows: -r prints nothing for it.
fake_llm_start --repeat-last '{"text": "no"}'
{ record 'bad' t-r; record "$good" t-r; } |
    expect_status 3 saop-validate -r --max-retries 1 >"$tmp/out" 2>/dev/null
[ "$(cat "$tmp/out")" = "$good" ] || fail "-r: $(cat "$tmp/out")"
exit 0
