#!/bin/sh
# saop-prune -v and --dry-run name what they prune on standard error: the
# place, tool name and call id come from the input, so a control character
# in them (an escape sequence, a bell, a carriage return) is written as
# \xHH and a backslash doubled, never sent raw to the terminal.
. "$top_srcdir/tests/cli/lib.sh"

big=$(head -c 60000 /dev/zero | tr '\0' q)
esc=$(printf '\033')
bel=$(printf '\007')

for mode in -v --dry-run; do
	printf '{"task_id":"t","tool_name":"ev\\u001b[31mil\\\\x","tool_call_id":"c\\u0007\\r1","turn_age":2,"raw_content":"%s"}\n' "$big" |
	    expect_status 0 saop-prune $mode --entries --db "$tmp/$mode.sqlite" \
	    >"$tmp/out" 2>"$tmp/err"
	grep -q -F '(tool ev\x1b[31mil\\x, call c\x07\x0d1): 60000 bytes, turn age 2: ' \
	    "$tmp/err" || fail "$mode: names not escaped: $(od -c "$tmp/err" | head -20)"
	! grep -q "[$esc$bel]" "$tmp/err" || fail "$mode: a control character reached stderr"
	[ "$(grep -c "$(printf '\r')" "$tmp/err")" -eq 0 ] ||
	    fail "$mode: a carriage return reached stderr"
done

# A record: the tool name is the assistant's call's function name.
printf '{"task_id":"t","request":{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"k\\u001b","type":"function","function":{"name":"r\\u001bd","arguments":"{}"}}]},{"role":"tool","tool_call_id":"k\\u001b","content":"%s"},{"role":"assistant","content":"b"},{"role":"assistant","content":"c"}]}}\n' "$big" |
    expect_status 0 saop-prune -v >"$tmp/out" 2>"$tmp/err"
grep -q -F '/request/messages/1/content (tool r\x1bd, call k\x1b): 60000 bytes' \
    "$tmp/err" || fail "record: names not escaped: $(od -c "$tmp/err" | head -20)"
! grep -q "[$esc]" "$tmp/err" || fail "record: an escape reached stderr"
exit 0
