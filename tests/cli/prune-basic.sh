#!/bin/sh
# saop-prune: a conversation over several turns, in both shapes, with large
# and small tool outputs: old large ones are summarised, every one comes
# back byte for byte with --get, nothing else changes, a second run
# changes nothing and stores nothing.
. "$top_srcdir/tests/cli/lib.sh"
py=${PYTHON3:-python3}
helper="$data/prune/prune.py"

"$py" "$helper" gen 1 >"$tmp/in.ndjson"
expect_status 0 saop-prune <"$tmp/in.ndjson" >"$tmp/out.ndjson"
mkdir "$tmp/raw"
"$py" "$helper" check "$tmp/in.ndjson" "$tmp/out.ndjson" "$SAOP_DB" \
    "$tmp/raw" >"$tmp/ids" || fail "pruned output does not hold"
n=$(wc -l <"$tmp/ids")
# Pruned: OpenAI turns 1, 3, 4 and 6 (in several records, stored once
# each) and Anthropic 0, 2 and 3; 51200 bytes and the newest are not.
[ "$n" -eq 7 ] || fail "expected 7 stored outputs, got $n"
[ "$(sql 'SELECT count(*) FROM tool_outputs')" -eq 7 ] ||
    fail "rows: $(sql 'SELECT count(*) FROM tool_outputs')"
for id in $(cat "$tmp/ids"); do
	expect_status 0 saop-prune --get "$id" >"$tmp/got"
	cmp "$tmp/got" "$tmp/raw/$id.raw" || fail "--get $id differs"
done
[ "$(sql "SELECT count(*) FROM events WHERE event = 'TOOL_OUTPUT_PRUNED'")" -gt 7 ] ||
    fail "no TOOL_OUTPUT_PRUNED events"

# Idempotent: pruning the output again changes nothing, stores nothing.
expect_status 0 saop-prune <"$tmp/out.ndjson" >"$tmp/out2.ndjson"
cmp "$tmp/out.ndjson" "$tmp/out2.ndjson" || fail "second run changed output"
[ "$(sql 'SELECT count(*) FROM tool_outputs')" -eq 7 ] || fail "stored twice"

# --min-age: with a turn age of 1000 nothing is old enough: nothing stored.
expect_status 0 saop-prune --min-age 1000 --db "$tmp/age.sqlite" \
    <"$tmp/in.ndjson" >"$tmp/age.ndjson"
[ "$(jq -cS . "$tmp/in.ndjson")" = "$(jq -cS . "$tmp/age.ndjson")" ] ||
    fail "--min-age 1000 pruned"
[ ! -e "$tmp/age.sqlite" ] || [ "$(sqlite3 "$tmp/age.sqlite" \
    'SELECT count(*) FROM tool_outputs')" -eq 0 ] || fail "--min-age 1000 stored"

# --get-latest: the output captured last of a tool; unknown ids and tools: 1.
id=$(sql "SELECT id FROM tool_outputs WHERE tool_name = 'read' ORDER BY id DESC LIMIT 1")
expect_status 0 saop-prune --get-latest read >"$tmp/got"
cmp "$tmp/got" "$tmp/raw/$id.raw" || fail "--get-latest read differs"
expect_status 1 saop-prune --get 999 >/dev/null 2>"$tmp/err"
grep -q 'no stored output with id 999' "$tmp/err" || fail "$(cat "$tmp/err")"
expect_status 1 saop-prune --get-latest nosuchtool >/dev/null 2>&1

# --list: a header and one line per row, of one task when named.
expect_status 0 saop-prune --list >"$tmp/list"
[ "$(head -1 "$tmp/list")" = "$(printf 'ID\tTASK\tTOOL\tCALL\tBYTES\tAGE\tCAPTURED\tSTORED')" ] ||
    fail "--list header: $(head -1 "$tmp/list")"
[ "$(wc -l <"$tmp/list")" -eq 8 ] || fail "--list: $(cat "$tmp/list")"
expect_status 0 saop-prune --list conv-anthropic >"$tmp/list"
[ "$(wc -l <"$tmp/list")" -eq 4 ] || fail "--list TASK: $(cat "$tmp/list")"
grep -q "	conv-anthropic	read	toolu_0	90000	" "$tmp/list" ||
    fail "--list row: $(cat "$tmp/list")"

# -R: a bare messages array and a bare request give the same shape back.
jq -c '.request.messages' "$tmp/in.ndjson" | tail -1 >"$tmp/msgs.json"
expect_status 0 saop-prune -R --task bare <"$tmp/msgs.json" >"$tmp/msgs.out"
jqf 'type == "array" and (.[2].content[0].content | test("id [0-9]+\\]$"))' "$tmp/msgs.out"
jq -c '.request' "$tmp/in.ndjson" | tail -1 >"$tmp/req.json"
expect_status 0 saop-prune -R --task bare <"$tmp/req.json" >"$tmp/req.out"
jqf '.max_tokens == 10 and (.messages | length) == 10' "$tmp/req.out"
[ "$(sql "SELECT count(*) FROM tool_outputs WHERE task_id = 'bare'")" -eq 3 ] ||
    fail "-R stored $(sql "SELECT count(*) FROM tool_outputs WHERE task_id = 'bare'")"

# A record's numeric task_id is its digits, as its events are logged.
jq -c '.task_id = 42' "$tmp/in.ndjson" | tail -1 >"$tmp/num.ndjson"
SAOP_DB="$tmp/num.sqlite" expect_status 0 saop-prune <"$tmp/num.ndjson" \
    >/dev/null
n=$(SAOP_DB="$tmp/num.sqlite" sql "SELECT count(*) FROM tool_outputs WHERE task_id = '42'")
[ "$n" -eq 3 ] || fail "task 42: $n rows: $(SAOP_DB="$tmp/num.sqlite" sql 'SELECT task_id FROM tool_outputs')"

# --entries: NDJSON entries, pruned by the turn age they state.
jq -c '.request.messages[] | select(.role == "tool") |
    {tool_name: "t", tool_call_id, raw_content: (.content | if type == "array" then map(.text) | add else . end)}' \
    "$tmp/in.ndjson" | tail -8 | awk '{ sub(/^\{/, "{\"turn_age\":" (9 - NR) ","); print }' >"$tmp/entries"
expect_status 0 saop-prune --entries --task ent <"$tmp/entries" >"$tmp/entries.out"
[ "$(jq -s 'map(select(.stored_id)) | length' "$tmp/entries.out")" -eq 4 ] ||
    fail "--entries pruned $(jq -s 'map(select(.stored_id)) | length' "$tmp/entries.out")"
id=$(jq -s '.[1].stored_id' "$tmp/entries.out")
saop-prune --get "$id" >"$tmp/got"
jq -j -s '.[1].raw_content' "$tmp/entries" | cmp - "$tmp/got" ||
    fail "--entries: --get $id differs"

# --dry-run: says what it would prune, stores and changes nothing.
rm -f "$SAOP_DB"*
expect_status 0 saop-prune --dry-run <"$tmp/in.ndjson" >"$tmp/dry" 2>"$tmp/err"
cmp "$tmp/dry" "$tmp/in.ndjson" >/dev/null 2>&1 ||
    "$py" -c 'import json,sys; a=[json.loads(l) for l in open(sys.argv[1])]; b=[json.loads(l) for l in open(sys.argv[2])]; sys.exit(a != b)' \
    "$tmp/in.ndjson" "$tmp/dry" || fail "--dry-run changed records"
grep -q 'would be pruned' "$tmp/err" || fail "--dry-run said nothing"
[ ! -e "$SAOP_DB" ] || [ "$(sql 'SELECT count(*) FROM tool_outputs')" -eq 0 ] ||
    fail "--dry-run stored something"

# Bad input: exit 65 naming the line and the field; every record out,
# the bad one with its error.
printf '%s\n' '{"request":{"messages":[]}}' \
    '{"request":{"messages":[{"role":"tool","content":5}]}}' >"$tmp/bad"
expect_status 65 saop-prune <"$tmp/bad" >"$tmp/out" 2>"$tmp/err"
grep -q 'line 2.*/request/messages/0/content' "$tmp/err" || fail "$(cat "$tmp/err")"
[ "$(wc -l <"$tmp/out")" -eq 2 ] || fail "a record was not passed on"
sed -n 2p "$tmp/out" >"$tmp/l2"
jqf '.error.line == 2 and .error.field == "/request/messages/0/content" and
    .error.status == 65 and .request.messages[0].content == 5' "$tmp/l2"
printf '{"raw_content":"x","turn_age":"old"}\n' >"$tmp/bad"
expect_status 65 saop-prune --entries <"$tmp/bad" >/dev/null 2>"$tmp/err"
grep -q 'line 1.*/turn_age' "$tmp/err" || fail "$(cat "$tmp/err")"
expect_status 64 saop-prune --get 1 --list </dev/null >/dev/null 2>&1
exit 0
