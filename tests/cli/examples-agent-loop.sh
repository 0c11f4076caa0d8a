#!/bin/sh
# examples/agent-loop.sh against the stand-in: a tool turn then the end
# (exit 0, the conversation grown by the answers and the tool's output);
# a lost network (exit 75, the turn saved), then the same command again
# once the endpoint is back resumes the saved turn and finishes; a model
# that stays outside the envelope stops the loop with exit 3.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

loop="$top_srcdir/examples/agent-loop.sh"
cd "$tmp"
env0='{"saop": "1.0", "turn_index": 0, "agent_role": "researcher", "thought": "Count the words first.", "action": {"tool": "word_count", "parameters": {"text": "one two three"}}}'
env1='{"saop": "1.0", "turn_index": 1, "agent_role": "reviewer", "thought": "Three words.", "action": null}'
fake_llm_start "$(jq -nc --arg t "$env0" '{text: $t}')" \
    "$(jq -nc --arg t "$env1" '{match: "Tool word_count returned:\\n3", text: $t}')"
expect_status 0 sh "$loop" count "How many words?" 2>err
grep -q 'done after 2 turns' err || fail "no end: $(cat err)"
jq -e 'length == 5 and .[3].content == "Tool word_count returned:\n3" and
    (.[4].content | fromjson | .action == null)' .agent/count/messages.json \
    >/dev/null || fail "conversation: $(cat .agent/count/messages.json)"
[ "$(fake_llm_requests | wc -l)" -eq 2 ] || fail "not 2 model calls"

# The endpoint refuses: suspended (75), the turn saved.
fake_llm_start '{"refuse": true}'
SAOP_MAX_AUTO_RESUME=0 SAOP_NETWORK_POLL_INTERVAL_MS=50 \
    expect_status 75 sh "$loop" later "Say done." 2>err
grep -q 'run again later' err || fail "75 not said: $(cat err)"
[ "$(sql "SELECT count(*) FROM agent_turn_states WHERE task_id = 'later'")" -eq 1 ] ||
    fail "turn not saved"
# Back: the same command resumes the saved turn and ends.
fake_llm_start "$(jq -nc --arg t "$env1" '{text: $t}')"
expect_status 0 sh "$loop" later 2>err
grep -q 'resuming the saved turn' err || fail "not resumed: $(cat err)"
[ "$(sql "SELECT count(*) FROM agent_turn_states")" -eq 0 ] || fail "turn kept"
jq -e 'length == 3' .agent/later/messages.json >/dev/null ||
    fail "conversation after resume: $(cat .agent/later/messages.json)"

# Outside the envelope every time: a person is needed (3).
bad='{"saop": "1.0", "turn_index": 0, "agent_role": "boss", "thought": "No."}'
s=$(jq -nc --arg t "$bad" '{text: $t}')
fake_llm_start "$s" "$s" "$s"
expect_status 3 sh "$loop" stuck "Do it." 2>err
grep -q 'needs a person' err || fail "3 not said: $(cat err)"
exit 0
