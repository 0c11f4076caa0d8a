#!/bin/sh
# examples/ci-resume.sh against the stand-in: a first job loses the
# network (75, two turns of two tasks saved); the CI step run while the
# endpoint is still down says 75 and keeps them; run once it is back, it
# resumes both through the rest of the pipeline (0, records OK, nothing
# saved); with nothing saved it does nothing and exits 0.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

step="$top_srcdir/examples/ci-resume.sh"
cd "$tmp"
expect_status 0 sh "$step" >log
grep -q '0 saved' log || fail "nothing saved: $(cat log)"

for t in a b; do
	jq -nc --arg t "$t" '{task_id: "ci-\($t)", turn: 4, request:
	    {messages: [{role: "user", content: "Job \($t)?"}]}}'
done >turns
export SAOP_MAX_AUTO_RESUME=0 SAOP_NETWORK_POLL_INTERVAL_MS=50
fake_llm_start --repeat-last '{"refuse": true}'
set +e
saop-prune <turns | saop-suspend >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 75 ] || fail "the first job exited $rc, not 75"
[ "$(saop-suspend --list | sed 1d | wc -l)" -eq 2 ] || fail "not 2 turns saved"

# Still down: 75, both kept, nothing written as done.
expect_status 75 sh "$step" out >log 2>&1
grep -q '2 turn(s) still saved, status 75' log || fail "down: $(cat log)"

env='{"saop": "1.0", "turn_index": 4, "agent_role": "developer", "thought": "Job %s done.", "action": null}'
# shellcheck disable=SC2059
fake_llm_start "$(jq -nc --arg t "$(printf "$env" a)" '{match: "Job a?", text: $t}')" \
    "$(jq -nc --arg t "$(printf "$env" b)" '{match: "Job b?", text: $t}')"
expect_status 0 sh "$step" out >log 2>&1
grep -q '0 turn(s) still saved, status 0' log || fail "back: $(cat log)"
jq -e -s 'map(select(.state == "OK")) | map(.envelope.thought) | sort ==
    ["Job a done.", "Job b done."]' out >/dev/null || fail "records: $(cat out)"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] || fail "turns kept"
exit 0
