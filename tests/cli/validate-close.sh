#!/bin/sh
# saop-validate --close: a cut answer closed locally (validate.closed, the
# "closed" repair), a cut answer in a fence closed in the same pass, no
# closing without --close or when nothing else is wrong, a cut tool call
# never closed (a record with tool_call goes on to the correction turn,
# even when TRUNCATED), and several readings named on the record.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

head='{"saop": "1.0", "turn_index": 2, "agent_role": "developer", "action": null, '
cut="$head\"thought\": \"Done, the tests"
# A record of raw $1 in state TRUNCATED, with $2 merged in.
record() {
	jq -nc --arg raw "$1" --argjson more "${2:-{\}}" \
	    '{task_id: "t-close", state: "TRUNCATED", raw: $raw} + $more'
}

# 1. Closed locally: OK, with the repair named and closed true.
record "$cut" | expect_status 0 saop-validate --close --no-retry >"$tmp/out"
jqf '.state == "OK" and .validate.closed == true and
    .validate.repairs == ["closed"] and
    .envelope.thought == "Done, the tests"' "$tmp/out"

# 2. Without --close the record stays TRUNCATED, with no "closed" member.
record "$cut" | expect_status 1 saop-validate --no-retry >"$tmp/out"
jqf '.state == "TRUNCATED" and (.validate | has("closed") | not)' "$tmp/out"

# 3. A valid answer under --close: closed false, nothing repaired.
record "$head\"thought\": \"ok\"}" |
    expect_status 0 saop-validate --close --no-retry >"$tmp/out"
jqf '.state == "OK" and .validate.closed == false and
    .validate.repairs == []' "$tmp/out"

# 4. Cut inside a fence, with a trailing comma before: repaired, closed.
record "\`\`\`json
{\"saop\": \"1.0\", \"turn_index\": 2, \"agent_role\": \"developer\",
 \"action\": null,, \"thought\": \"half" |
    expect_status 0 saop-validate --close --no-retry >"$tmp/out"
jqf '.state == "OK" and .validate.closed == true and
    (.validate.repairs | index("code_fence") and index("extra_comma") and
    index("closed")) and .envelope.thought == "half"' "$tmp/out"

# 5. A shell command cut mid-string is never closed into a call.
record "{\"saop\": \"1.0\", \"turn_index\": 2, \"agent_role\": \"developer\", \"thought\": \"clean\", \"action\": {\"tool\": \"sh\", \"parameters\": {\"cmd\": \"rm -rf /tmp/bu" |
    expect_status 1 saop-validate --close --no-retry >"$tmp/out"
jqf '.state == "TRUNCATED" and .validate.closed == false and
    (.envelope == null)' "$tmp/out"

# 6. A record with tool_call is refused by --close: without a model it
#    stays as it was; with one it goes on to the correction turn.
record "$cut" '{"tool_call": {"id": "c1", "name": "sh"}}' |
    expect_status 1 saop-validate --close --no-retry >"$tmp/out"
jqf '.state == "TRUNCATED" and .validate.closed == false' "$tmp/out"
good=$(jq -c . "$data/validate/good.json")
fake_llm_start "$(jq -nc --arg t "$good" '{text: $t}')"
record "$cut" '{"tool_call": {"id": "c1", "name": "sh"}}' |
    expect_status 0 saop-validate --close >"$tmp/out"
jqf '.state == "OK" and .validate.attempts == 1 and
    .validate.closed == false' "$tmp/out"
[ "$(fake_llm_requests | wc -l)" -eq 1 ] || fail "no correction turn"
fake_llm_stop

# 7. Two readings the schema cannot tell apart: named, nothing taken.
record "$head\"thought\": \"a\"}$head\"thought\": \"b\"}" |
    expect_status 1 saop-validate --no-retry >"$tmp/out"
jqf '(.validate.readings | length) == 3 and .validate.valid == false' \
    "$tmp/out"
