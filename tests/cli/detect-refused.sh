#!/bin/sh
# A turn the model refused (finish_reason "refusal": saop-suspend writes
# what it said as "refusal", state USER_ESCALATION and an error naming the
# refusal, and no raw) has nothing to judge: saop-detect hands it on as it
# came, with its state and its error, and exits 3 (a person must decide),
# not 65 "no string raw"; the other records are judged as ever.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

path=$(printf '%s' "$top_srcdir/tests/data/llm/openai-chat-refusal.sse" | jq -Rs .)
fake_llm_start "{\"fixture\": $path}"
printf '{"task_id":"r","turn":0,"request":{"messages":[{"role":"user","content":"hi"}]}}\n' |
    expect_status 69 saop-suspend --no-wait >"$tmp/refused" 2>"$tmp/err"
fake_llm_stop
jqf '.finish_reason == "refusal" and .state == "USER_ESCALATION" and
    (has("raw") | not) and (.error.message | test("refus"))' "$tmp/refused"

# Alone: handed on as it came, 3.
expect_status 3 saop-detect "$tmp/refused" >"$tmp/out" 2>"$tmp/err"
[ "$(jq -cS . "$tmp/out")" = "$(jq -cS . "$tmp/refused")" ] ||
    fail "the refused record changed: $(cat "$tmp/out")"
[ ! -s "$tmp/err" ] || fail "a refused record is not an error of saop-detect: $(cat "$tmp/err")"

# Among others: each judged, the refusal kept; 3 is worse than 1.
{ printf '{"task_id":"a","raw":"{}"}\n'; cat "$tmp/refused";
  printf '{"task_id":"b","raw":"[1"}\n'; } >"$tmp/in"
expect_status 3 saop-detect "$tmp/in" >"$tmp/out" 2>"$tmp/err"
[ "$(jq -r .state "$tmp/out" | tr '\n' ' ')" = "OK USER_ESCALATION TRUNCATED " ] ||
    fail "states: $(jq -r .state "$tmp/out")"
[ "$(sed -n 2p "$tmp/out" | jq -cS .)" = "$(jq -cS . "$tmp/refused")" ] ||
    fail "the refused record changed among others"

# A record without raw that is no refusal is still 65, with its error.
printf '{"task_id":"n","turn":1}\n' |
    expect_status 65 saop-detect >"$tmp/out" 2>"$tmp/err"
jqf '.error.field == "/raw" and .error.status == 65' "$tmp/out"
exit 0
