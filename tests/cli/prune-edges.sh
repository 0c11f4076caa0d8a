#!/bin/sh
# saop-prune at its edges (issue 25: src/saop-prune.c): --raw-output on
# records (each record's messages, none for a record without them);
# --raw-input of a file that is not there (66) and of JSON that is no
# request (65); a state database that refuses to open (a directory every
# user may write to) with --raw-input and --entries: 74, said once, the
# input passed on whole and unpruned.
. "$top_srcdir/tests/cli/lib.sh"

big=$(head -c 60000 /dev/zero | tr '\0' q)
printf '{"task_id":"a","request":{"messages":[{"role":"tool","tool_call_id":"x","content":"%s"},{"role":"assistant","content":"b"},{"role":"assistant","content":"c"}]}}\n{"task_id":"b"}\n' \
    "$big" >"$tmp/recs"
expect_status 0 saop-prune --raw-output "$tmp/recs" >"$tmp/out"
[ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "-r: $(wc -l <"$tmp/out") lines"
jqf 'length == 3 and (.[0].content | startswith("qqq") and
    test("60000 bytes total")) and .[1] == {"role": "assistant",
    "content": "b"}' "$tmp/out"

expect_status 66 saop-prune --raw-input "$tmp/none.json" >"$tmp/out" 2>"$tmp/err"
grep -q -x "saop-prune: $tmp/none.json: No such file or directory" "$tmp/err" ||
    fail "no file: $(cat "$tmp/err")"
echo '{"a": 1}' | expect_status 65 saop-prune --raw-input >"$tmp/out" 2>"$tmp/err"
grep -q -x 'saop-prune: line 1: -R reads a chat request (an object with messages) or a messages array' \
    "$tmp/err" || fail "not a request: $(cat "$tmp/err")"

# A database that cannot be opened: 74, the input whole.
mkdir "$tmp/ww" && chmod 777 "$tmp/ww"
printf '{"messages":[{"role":"tool","tool_call_id":"x","content":"%s"},{"role":"assistant","content":"b"},{"role":"assistant","content":"c"}]}' \
    "$big" >"$tmp/req.json"
SAOP_DB=$tmp/ww/s.sqlite expect_status 74 saop-prune --raw-input "$tmp/req.json" \
    >"$tmp/out" 2>"$tmp/err"
cmp -s "$tmp/out" "$tmp/req.json" || jq -e --slurpfile a "$tmp/req.json" \
    '. == $a[0]' "$tmp/out" >/dev/null || fail "-R: the request changed"
grep -q 'is writable by every user: refused' "$tmp/err" || fail "$(cat "$tmp/err")"
[ "$(grep -c 'passing the rest of the input on unpruned' "$tmp/err")" -eq 1 ] ||
    fail "not said once: $(cat "$tmp/err")"
printf '{"task_id":"t","tool_name":"x","turn_age":3,"raw_content":"%s"}\n' \
    "$big" "$big" >"$tmp/ent"
SAOP_DB=$tmp/ww/s.sqlite expect_status 74 saop-prune --entries "$tmp/ent" \
    >"$tmp/out" 2>"$tmp/err"
[ "$(jq -c '[(.raw_content | length), .stored_id]' "$tmp/out" | tr '\n' ' ')" = \
    "[60000,null] [60000,null] " ] || fail "--entries: $(head -c 300 "$tmp/out")"
[ "$(grep -c 'passing the rest of the input on unpruned' "$tmp/err")" -eq 1 ] ||
    fail "--entries: not said once: $(cat "$tmp/err")"
[ ! -e "$tmp/ww/s.sqlite" ] || fail "a database made in ww"
exit 0
