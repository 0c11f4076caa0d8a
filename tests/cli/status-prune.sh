#!/bin/sh
# saop-prune's two boundaries, exactly (issue 25): an output of exactly
# --threshold bytes is kept and one byte more is pruned; an output exactly
# --min-age turns old is pruned and one turn younger is kept.  The same
# with the defaults (51200 bytes, 2 turns) and in the message shape.
. "$top_srcdir/tests/cli/lib.sh"

# entry AGE BYTES: a tool-output entry of BYTES bytes, AGE turns old.
entry() {
	printf '{"task_id":"t","tool_name":"x","tool_call_id":"c%s-%s","turn_age":%s,"raw_content":"%s"}\n' \
	    "$1" "$2" "$1" "$(head -c "$2" /dev/zero | tr '\0' z)"
}

# pruned FILE: the tool_call_ids whose output was pruned, in order.
pruned() {
	jq -r 'select(.stored_id) | .tool_call_id' "$1" | tr '\n' ' '
}

{ entry 2 10; entry 2 11; entry 1 11; entry 3 11; entry 0 11; } >"$tmp/in"
expect_status 0 saop-prune --entries --threshold 10 --min-age 2 --keep 3 \
    "$tmp/in" >"$tmp/out"
[ "$(pruned "$tmp/out")" = "c2-11 c3-11 " ] ||
    fail "--threshold 10 --min-age 2: pruned $(pruned "$tmp/out")"
# The two pruned outputs are the same bytes: stored once.
[ "$(sql 'SELECT count(*) FROM tool_outputs')" -eq 1 ] || fail "rows stored"
[ "$(jq -r 'select(.tool_call_id == "c2-10") | .raw_content | length' "$tmp/out")" = 10 ] ||
    fail "the output of exactly 10 bytes changed"

# The defaults.
rm -f "$SAOP_DB"
{ entry 2 51200; entry 2 51201; entry 1 51201; } >"$tmp/in"
expect_status 0 saop-prune --entries "$tmp/in" >"$tmp/out"
[ "$(pruned "$tmp/out")" = "c2-51201 " ] ||
    fail "defaults: pruned $(pruned "$tmp/out")"

# Messages (the turn age is 1 plus the assistant messages after it): a
# is 3 turns old and 101 bytes, b 3 turns and 100 bytes, c 2 turns and
# 101 bytes: with --threshold 100 --min-age 3 only a is pruned.
big=$(head -c 101 /dev/zero | tr '\0' y)
edge=$(head -c 100 /dev/zero | tr '\0' y)
printf '%s' '{"task_id":"m","request":{"messages":[' \
    '{"role":"user","content":"go"},' \
    '{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},' \
    '{"role":"tool","tool_call_id":"a","content":"'"$big"'"},' \
    '{"role":"tool","tool_call_id":"b","content":"'"$edge"'"},' \
    '{"role":"assistant","content":"ok"},' \
    '{"role":"tool","tool_call_id":"c","content":"'"$big"'"},' \
    '{"role":"assistant","content":"ok"},' \
    '{"role":"user","content":"more"}]}}' >"$tmp/msgs"
echo >>"$tmp/msgs"
rm -f "$SAOP_DB"
expect_status 0 saop-prune --threshold 100 --min-age 3 --keep 3 "$tmp/msgs" >"$tmp/out"
jqf '[.request.messages[] | select(.role == "tool") | .content] as $c |
    ($c[0] | startswith("yyy\n\n[... 101 bytes total")) and
    $c[1] == "'"$edge"'" and $c[2] == "'"$big"'"' "$tmp/out"
[ "$(sql 'SELECT tool_call_id FROM tool_outputs')" = a ] ||
    fail "messages: stored $(sql 'SELECT tool_call_id FROM tool_outputs')"
exit 0
