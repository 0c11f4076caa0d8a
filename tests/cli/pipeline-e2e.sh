#!/bin/sh
# The five-stage pipeline end to end, as scripts/demo runs it:
#	saop-prune | saop-suspend | saop-detect | saop-resume | saop-validate
# on a batch mixing every case (examples/pipeline.ndjson and
# examples/disk-cleanup.ndjson), against the stand-in with the answers of
# examples/disk-cleanup-model.ndjson and examples/model-script.ndjson.
# Asserts each record's final state, the exit status of each stage (status
# files: a POSIX sh has no PIPESTATUS) and the rows in state.sqlite.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

ex="$top_srcdir/examples"
cat "$ex/disk-cleanup-model.ndjson" "$ex/model-script.ndjson" |
    grep -v '^#' >"$tmp/script"
[ "$(wc -l <"$tmp/script")" -eq 9 ] || fail "expected 9 answers"
# fake_llm_start takes the steps as arguments, one line each.
set --
while IFS= read -r line; do
	set -- "$@" "$line"
done <"$tmp/script"
fake_llm_start "$@"
SAOP_NETWORK_POLL_INTERVAL_MS=100
export SAOP_NETWORK_POLL_INTERVAL_MS
cat "$ex/pipeline.ndjson" "$ex/disk-cleanup.ndjson" >"$tmp/in"

set +e
{ saop-prune <"$tmp/in"; echo $? >"$tmp/st.prune"; } |
    { saop-suspend; echo $? >"$tmp/st.suspend"; } |
    { saop-detect --db "$SAOP_DB"; echo $? >"$tmp/st.detect"; } |
    { saop-resume; echo $? >"$tmp/st.resume"; } |
    { saop-validate; echo $? >"$tmp/st.validate"; } >"$tmp/out" 2>"$tmp/err"
set -e
st=""
for s in prune suspend detect resume validate; do
	st="$st $(cat "$tmp/st.$s")"
done
# prune and suspend: all fine; detect: truncations seen, and resume: a
# record it passes on still invalid, both handed on through a pipe to the
# stage that judges them again (0); validate: one escalation (3).
[ "$st" = " 0 0 0 0 3" ] || fail "stage statuses:$st; $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/out")" -eq 8 ] || fail "not 8 records out"

# Each record's final state and what brought it there.
jq -c '[.task_id, .turn, .state, .resume.status, .validate.attempts,
    (.validate.repairs | length), (.suspend.resumes // 0),
    (.tool_call.name // null), (.error != null)]' "$tmp/out" >"$tmp/got"
cat >"$tmp/want" <<'EOF'
["nightly-build",3,"OK","SKIPPED",0,0,0,null,false]
["nightly-build",4,"OK","RESOLVED",0,0,0,null,false]
["nightly-build",5,"OK","SKIPPED",0,3,0,null,false]
["nightly-build",6,"OK","SKIPPED",1,0,0,null,false]
["nightly-build",7,"OK","RESOLVED",0,0,0,null,false]
["disk-cleanup",1,"OK","SKIPPED",0,0,1,null,false]
["disk-cleanup",2,"OK","RESOLVED",0,0,0,"submit_turn",false]
["disk-cleanup",3,"USER_ESCALATION","SKIPPED",2,0,0,null,false]
EOF
diff -u "$tmp/want" "$tmp/got" >&9 || fail "records differ (above)"

# The suspended turn is the whole answer, received once; the resumed tool
# call's arguments are the whole envelope.
want1=$(grep -v '^#' "$ex/disk-cleanup-model.ndjson" | jq -r 'select(.drop_after) | .text')
[ "$(jq -r 'select(.turn == 1 and .task_id == "disk-cleanup") | .raw' "$tmp/out")" = "$want1" ] ||
    fail "the suspended turn's raw is not the whole answer"
# jqr TASK TURN FILTER: FILTER on that record of the output, or fail.
jqr() {
	jq -e -s --arg t "$1" --argjson n "$2" \
	    "map(select(.task_id == \$t and .turn == \$n))[0] | $3" \
	    "$tmp/out" >/dev/null || fail "$1 turn $2: jq '$3' is false"
}
jqr disk-cleanup 1 '.suspend.received == (.raw | utf8bytelength)'
jqr disk-cleanup 2 '.envelope.action.tool == "edit_file" and
    .finish_reason == "length" and .tool_call.id != null'
jqr disk-cleanup 3 '.envelope == null and .validate.valid == false'
jqr nightly-build 5 '.validate.repairs == ["code_fence", "prose", "trailing_comma"]'


# Nine model calls: 2 for the dropped turn, 1+1 for the tool call, 2 resumes,
# 1+2 correction turns.
[ "$(fake_llm_requests | wc -l)" -eq 9 ] || fail "$(fake_llm_requests | wc -l) model calls, not 9"

# The rows.
q() {
	r=$(sql "$1")
	[ "$r" = "$2" ] || fail "sql: $1: got '$r', want '$2'"
}
q "SELECT task_id || ':' || turn_number || ':' || final_status || ':' ||
    resume_attempts FROM partial_completion_log ORDER BY task_id, turn_number" \
    "disk-cleanup:2:RESOLVED:1
nightly-build:4:RESOLVED:1
nightly-build:7:RESOLVED:1"
q "SELECT count(*) FROM partial_completion_log WHERE sent_bytes > 0 AND
    received_bytes > 0 AND prompt_tokens > 0 AND completion_tokens > 0" 3
q "SELECT event FROM events WHERE task_id = 'disk-cleanup' AND turn = 1
    ORDER BY id" "NETWORK_LOST
NETWORK_RESTORED
TURN_RESUMED"
q "SELECT event || ':' || count(*) FROM events WHERE event IN
    ('MALFORMED_RESPONSE', 'MAX_RETRIES_EXCEEDED', 'RESUME_SUCCEEDED',
    'TOOL_OUTPUT_PRUNED') GROUP BY event ORDER BY event" \
    "MALFORMED_RESPONSE:3
MAX_RETRIES_EXCEEDED:1
RESUME_SUCCEEDED:3
TOOL_OUTPUT_PRUNED:2"
q "SELECT count(*) FROM tool_outputs" 1
q "SELECT count(*) FROM agent_turn_states" 0
q "SELECT task_id || ':' || status || ':' || coalesce(reason, '') FROM tasks
    ORDER BY task_id" "disk-cleanup:USER_ESCALATION:MAX_RETRIES_EXCEEDED"

# saop-report says the same.
saop-report --json "$tmp/out" >"$tmp/rep"
jqf '.overall | .turns == 8 and .states == {"OK": 7, "USER_ESCALATION": 1}
    and .truncations.resumed == 3 and .truncations.exhausted == 0 and
    .corrections == 3 and .escalations == 1 and .suspensions.count == 1 and
    .suspensions.restored == 1 and .pruned.outputs == 2 and
    .repairs == {"code_fence": 1, "prose": 1, "trailing_comma": 1} and
    .recovery_tokens > 0' "$tmp/rep"
exit 0
