#!/bin/sh
# saop-prune's other paths, each with its documented status (issue 25):
# --raw-input and --raw-output, -v's account, usage errors (64), input
# that is not JSON or not an entry (65, passed on, the rest goes on),
# tool outputs of every shape (parts, images, empty, null, an object),
# --list quoting what it prints, --get of a row that is not there.
. "$top_srcdir/tests/cli/lib.sh"

big=$(head -c 60000 /dev/zero | tr '\0' q)

# --raw-input --raw-output -v: a chat request in, its messages out.
printf '{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"a"},{"role":"tool","tool_call_id":"x","content":"%s"},{"role":"assistant","content":"b"},{"role":"assistant","content":"c"}]}' "$big" |
    expect_status 0 saop-prune -v --task T --raw-input --raw-output --keep 5 >"$tmp/out" 2>"$tmp/err"
jqf 'type == "array" and length == 5 and
    (.[2].content | startswith("qqqqq\n\n[... 60000 bytes total"))' "$tmp/out"
grep -q -F '/messages/2/content (tool -, call x): 60000 bytes, turn age 3: stored as id 1' "$tmp/err" ||
    fail "-v: $(cat "$tmp/err")"
grep -q -F '1 outputs, 1 pruned (1 stored), 0 already pruned' "$tmp/err" ||
    fail "-v account: $(cat "$tmp/err")"
# The same again: already stored.
printf '{"messages":[{"role":"tool","tool_call_id":"x","content":"%s"},{"role":"assistant","content":"b"},{"role":"assistant","content":"c"}]}' "$big" |
    expect_status 0 saop-prune -v --task T --raw-input --keep 5 >"$tmp/out" 2>"$tmp/err"
grep -q 'already stored as id 1' "$tmp/err" || fail "-v again: $(cat "$tmp/err")"
printf '{"messages": [' | expect_status 65 saop-prune --raw-input >"$tmp/out" 2>"$tmp/err"
grep -q 'not JSON' "$tmp/err" || fail "--raw-input, not JSON: $(cat "$tmp/err")"
printf '[1]' | expect_status 65 saop-prune --raw-input >"$tmp/out" 2>"$tmp/err"

# Usage errors.
expect_status 64 saop-prune --entries --raw-output </dev/null 2>"$tmp/err"
grep -q -- '-r does not apply to --entries' "$tmp/err" || fail "$(cat "$tmp/err")"
expect_status 64 saop-prune --get 0 2>"$tmp/err"
grep -q 'ids start at 1' "$tmp/err" || fail "$(cat "$tmp/err")"
expect_status 64 saop-prune --get-latest '' 2>"$tmp/err"
expect_status 64 saop-prune --threshold x </dev/null 2>/dev/null
expect_status 64 saop-prune --min-age -1 </dev/null 2>/dev/null

# Entries: lines that are not entries are passed on, named, 65; the
# rest is pruned.  A tool name with control characters, listed quoted.
printf '%s\n' 'not json' '[1]' \
    '{"task_id":"t","tool_name":"x","turn_age":-1,"raw_content":"x"}' \
    '{"task_id":"t","tool_name":"x","turn_age":1,"raw_content":5}' \
    '{"task_id":"t","tool_name":"x","turn_age":1,"raw_content":"abc","byte_size":4}' \
    '{"task_id":"t","tool_name":"x","turn_age":1,"raw_content":"abc","byte_size":3}' \
    '{"task_id":"t","tool_name":"a\\b\tc\nd\u0001","tool_call_id":"c1","turn_age":2,"raw_content":"'"$big"'"}' \
    '7' | expect_status 65 saop-prune --entries >"$tmp/out" 2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" -eq 8 ] || fail "entries: $(wc -l <"$tmp/out") lines out of 8"
[ "$(sed -n 1p "$tmp/out")" = "not json" ] || fail "a bad line not passed on"
[ "$(sed -n '3,5p' "$tmp/out" | jq -r .error.status | tr '\n' ' ')" = "65 65 65 " ] ||
    fail "entries: errors on the records: $(cat "$tmp/out")"
for f in /turn_age /raw_content /byte_size; do
	grep -q "line [345]: $f: " "$tmp/err" || fail "$f not named: $(cat "$tmp/err")"
done
grep -q 'line 1, byte 1: not a JSON record' "$tmp/err" || fail "$(cat "$tmp/err")"
[ "$(sed -n 7p "$tmp/out" | jq -r .stored_id)" -ge 1 ] || fail "the good entry not pruned"
expect_status 0 saop-prune --list >"$tmp/list"
grep -q -F 'a\\b\tc\nd\x01	c1	60000	2' "$tmp/list" ||
    fail "--list quoting: $(cat "$tmp/list")"
expect_status 0 saop-prune --list t >"$tmp/list"
[ "$(wc -l <"$tmp/list")" -eq 2 ] || fail "--list t: $(cat "$tmp/list")"

# Tool outputs of every shape: an image part, no parts, null, parts of
# text, and an object (65, named).
printf '{"task_id":"t","request":{"messages":[{"role":"tool","tool_call_id":"a","content":[{"type":"image","x":1}]},{"role":"tool","tool_call_id":"b","content":[]},{"role":"tool","tool_call_id":"b2","content":null},{"role":"tool","tool_call_id":"p","content":[{"type":"text","text":"%s"},{"type":"text","text":"%s"}]},{"role":"assistant","content":"x"},{"role":"assistant","content":"x"}]}}\n' "$big" "$big" |
    expect_status 0 saop-prune --threshold 0 >"$tmp/out"
jqf '.request.messages[0].content == [{"type":"image","x":1}] and
    .request.messages[1].content == [] and .request.messages[2].content == null and
    (.request.messages[3].content | length == 1 and (.[0].text | test("120000 bytes total")))' "$tmp/out"
printf '{"task_id":"t","request":{"messages":[{"role":"tool","tool_call_id":"c","content":{"a":1}},{"role":"assistant","content":"x"},{"role":"assistant","content":"x"}]}}\n' |
    expect_status 65 saop-prune --threshold 0 >"$tmp/out" 2>"$tmp/err"
jqf '.error.field == "/request/messages/0/content"' "$tmp/out"
echo '{"task_id":"t","request":[1]}' | expect_status 65 saop-prune >"$tmp/out" 2>/dev/null
jqf '.error.field == "/request"' "$tmp/out"
echo '{"task_id":"t","request":{"messages":5}}' | expect_status 65 saop-prune >"$tmp/out" 2>/dev/null
jqf '.error.field == "/request/messages"' "$tmp/out"
exit 0
