#!/bin/sh
# The README's main job as a test: the recovery pipeline
#	saop-prune | saop-detect | saop-resume | saop-validate
# on examples/pipeline.ndjson, against the fake LLM server with the answers
# of examples/model-script.ndjson (the stages call it at the same time;
# each answer is matched to its request).  Every record ends OK with the
# expected envelope, the large tool output is in state.sqlite byte for
# byte, and the events and resume log say what happened.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

ex="$top_srcdir/examples"
grep -v '^#' "$ex/model-script.ndjson" >"$tmp/script"
[ "$(wc -l <"$tmp/script")" -eq 3 ] ||
    fail "examples/model-script.ndjson: expected 3 answers"
# fake_llm_start takes the steps as arguments, one line each.
s1=$(sed -n 1p "$tmp/script")
s2=$(sed -n 2p "$tmp/script")
s3=$(sed -n 3p "$tmp/script")
fake_llm_start "$s1" "$s2" "$s3"
SAOP_TASK_ID=demo
export SAOP_TASK_ID

# jqs FILTER FILE: the jq filter on all of FILE's records as one array.
jqs() {
	jq -e -s "$1" "$2" >/dev/null || fail "jq -s '$1' is false on $2"
}

set +e
saop-prune <"$ex/pipeline.ndjson" | saop-detect | saop-resume |
    saop-validate >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "the pipeline exited $rc: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/out")" -eq 5 ] || fail "not 5 records out"

# Every record OK, in order, with the verdict of each stage.
jqs '[.[] | .turn] == [3, 4, 5, 6, 7] and all(.state == "OK")' "$tmp/out"
jqs '[.[] | .resume.status] ==
    ["SKIPPED", "RESOLVED", "SKIPPED", "SKIPPED", "RESOLVED"]' "$tmp/out"
jqs '[.[] | .validate.attempts] == [0, 0, 0, 1, 0]' "$tmp/out"
jqs '.[2].validate.repairs == ["code_fence", "prose", "trailing_comma"]' \
    "$tmp/out"
# The resumed turns keep every byte up to the last valid token (the model
# restates the cut token itself).
saop-detect <"$ex/pipeline.ndjson" >"$tmp/detected" || :
for t in 4 7; do
	ti=$(jq --argjson t "$t" 'select(.turn == $t) |
	    .detect.truncation_index' "$tmp/detected")
	[ "$ti" -gt 0 ] || fail "turn $t: not truncated in the example"
	jq -j --argjson t "$t" 'select(.turn == $t) | .raw' \
	    "$ex/pipeline.ndjson" | head -c "$ti" >"$tmp/cut"
	jq -j --argjson t "$t" 'select(.turn == $t) | .raw' "$tmp/out" |
	    head -c "$ti" >"$tmp/head"
	cmp -s "$tmp/cut" "$tmp/head" ||
	    fail "turn $t: resumed raw changed the first $ti bytes"
done
jqs '[.[] | .envelope.turn_index] == [3, 4, 5, 6, 7] and
    .[1].envelope.thought == .[0].envelope.thought and
    .[3].envelope.agent_role == "reviewer" and .[4].envelope.action == null' \
    "$tmp/out"

# Three model calls: two resumes, one correction.
[ "$(fake_llm_requests | wc -l)" -eq 3 ] || fail "not 3 model calls"
fake_llm_requests >"$tmp/requests"
jqs 'all(.step > 0)' "$tmp/requests"

# The large tool output: pruned in the records, whole in the database.
jqs '[.[] | .request.messages[] | select(.role == "tool") | .content] |
    length == 2 and all(test("full output in state.sqlite"))' "$tmp/out"
id=$(sql "SELECT id FROM tool_outputs LIMIT 1")
[ -n "$id" ] || fail "no tool output stored"
jq -j 'select(.turn == 3) | .request.messages[] | select(.role == "tool") |
    .content' "$ex/pipeline.ndjson" >"$tmp/orig"
saop-prune --get "$id" >"$tmp/got"
cmp -s "$tmp/orig" "$tmp/got" || fail "saop-prune --get $id differs"

[ "$(sql "SELECT count(*) FROM partial_completion_log
    WHERE final_status = 'RESOLVED'")" -eq 2 ] || fail "resume log"
[ "$(sql "SELECT count(*) FROM events WHERE event = 'RESUME_SUCCEEDED'")" \
    -eq 2 ] || fail "RESUME_SUCCEEDED events"
[ "$(sql "SELECT count(*) FROM events WHERE event = 'MALFORMED_RESPONSE'")" \
    -eq 1 ] || fail "MALFORMED_RESPONSE events"
exit 0
