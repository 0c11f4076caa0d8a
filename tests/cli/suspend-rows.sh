#!/bin/sh
# saop-suspend: saved turns read back byte for byte (a \u0000 and a
# 30-digit number), a task_id that is a number or null, one unreadable
# row that is only that row's trouble (named, skipped: 65), and a refusal
# during --resume that keeps the turn (the record written with its
# error) until a later --resume delivers it; control characters of a task
# id escaped by --list.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

sse_openai "$tmp/a.sse" '{"ok": ' 'true}'
srv_start 'status=503' 'status=401' 'body=@a.sse'
req='"request":{"messages":[{"role":"user","content":"hi"}]}'
odd='"big":123456789012345678901234567890,"s":"a\u0000b","k\u0000":1'
{
	printf '{"task_id":"n","turn":1,%s,%s}\n' "$odd" "$req"
	printf '{"task_id":"n","turn":2,%s}\n' "$req"
	printf '{"task_id":42,"turn":3,%s}\n' "$req"
	printf '{"task_id":null,"turn":4,%s}\n' "$req"
} >"$tmp/in"
expect_status 75 saop-suspend --no-wait "$tmp/in" >/dev/null 2>&1
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 4 ] ||
    fail "saved: $(sql 'SELECT task_id, turn FROM agent_turn_states')"
[ "$(sql "SELECT group_concat(task_id, ' ') FROM (SELECT task_id FROM agent_turn_states ORDER BY turn)")" = \
    "n n 42 null" ] || fail "task keys: $(sql 'SELECT task_id FROM agent_turn_states')"
# A row nobody can read, saved last.
sql "INSERT INTO agent_turn_states (task_id, turn, stage, turn_state_json,
    saved_at) VALUES ('bad', 1, 'saop-suspend', '{\"record\": ', 'z')"

# --list: every row, the bad one named on stderr (65), never fatal.
expect_status 65 saop-suspend --list >"$tmp/list" 2>"$tmp/err"
[ "$(wc -l <"$tmp/list")" -eq 6 ] || fail "--list: $(cat "$tmp/list")"
grep -q 'task bad turn 1 (saop-suspend) cannot be read' "$tmp/err" ||
    fail "--list stderr: $(cat "$tmp/err")"
# --json: the same rows, the bad one with its error and no bytes.
expect_status 65 saop-suspend --list --json >"$tmp/json" 2>/dev/null
jqf 'length == 5 and ([.[] | select(.task == "bad")][0] |
    .received == null and (.error | test("cannot be read")))' "$tmp/json"

# A refusal during --resume: the record with its error, the turn kept.
expect_status 69 saop-suspend --resume >"$tmp/out1" 2>"$tmp/err"
# (The first turn taken is the oldest saved; rows saved within one
# millisecond come in task_id order, so it may be any of them.)
[ "$(wc -l <"$tmp/out1")" -eq 1 ] || fail "after the refusal: $(cat "$tmp/out1")"
jqf '.error.status == 69 and .state == "PAUSED_FOR_INTERVENTION" and (.raw | not)' "$tmp/out1"
[ "$(sql 'SELECT count(*) FROM agent_turn_states WHERE claim_host IS NULL')" -eq 5 ] ||
    fail "after the refusal: $(sql 'SELECT task_id, turn, claim_pid FROM agent_turn_states')"

# Fixed: every readable turn delivered, the bad row skipped (65).
expect_status 65 saop-suspend --resume >"$tmp/out2" 2>"$tmp/err"
grep -q 'task bad turn 1 (saop-suspend) cannot be read' "$tmp/err" ||
    fail "--resume stderr: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/out2")" -eq 4 ] || fail "delivered: $(cat "$tmp/out2")"
grep -qF "{\"task_id\":\"n\",\"turn\":1,$odd,$req,\"raw\":\"{\\\"ok\\\": true}\"" "$tmp/out2" ||
    fail "not byte for byte: $(grep "\"turn\":1," "$tmp/out2")"
grep -q '^{"task_id":42,"turn":3,' "$tmp/out2" || fail "numeric task_id: $(cat "$tmp/out2")"
grep -q '^{"task_id":null,"turn":4,' "$tmp/out2" || fail "null task_id: $(cat "$tmp/out2")"
[ "$(sql 'SELECT task_id FROM agent_turn_states')" = bad ] ||
    fail "left: $(sql 'SELECT task_id, turn FROM agent_turn_states')"
saop-suspend --clear bad || fail "--clear"
# Control characters of a task id are shown escaped by --list.
sql "INSERT INTO agent_turn_states (task_id, turn, stage, turn_state_json,
    saved_at) VALUES ('c' || char(27) || '[2J', 1, 'saop-suspend',
    '{\"record\":{},\"received\":0}', 'z')"
saop-suspend --list >"$tmp/list" || fail "--list"
grep -qF 'c\x1b[2J	1	saop-suspend	z	0	-' "$tmp/list" || fail "--list: $(cat -v "$tmp/list")"
! grep -q "$(printf '\033')" "$tmp/list" || fail "a raw ESC in --list"
exit 0
