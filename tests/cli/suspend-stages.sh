#!/bin/sh
# One saved row per suspended turn: two pipelines suspending turns of the
# same task at once, and two stages (saop-suspend, saop-resume)
# suspending the same turn, keep a row each; every suspended turn is then
# delivered once, by the stage that saved it.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

sse_openai "$tmp/a.sse" '{"ok": ' 'true}'
sse_openai "$tmp/b.sse" '2]}'
srv_start 'body=@a.sse' 'body=@a.sse' 'body=@b.sse'
srv_pause
req() {
	printf '{"task_id":"T","turn":%s,"request":{"messages":[{"role":"user","content":"turn-%s"}]}%s}\n' \
	    "$1" "$1" "${2:-}"
}
# Two pipelines, one task, at once; the endpoint down.
req 1 | saop-suspend --no-wait >"$tmp/p1" 2>/dev/null &
p1=$!
req 2 | saop-suspend --no-wait >"$tmp/p2" 2>/dev/null &
p2=$!
wait $p1 || [ $? -eq 75 ] || fail "pipeline 1"
wait $p2 || [ $? -eq 75 ] || fail "pipeline 2"
# The next stage of turn 1 (a cut answer to continue), suspended too.
req 1 ',"raw":"{\"a\": [1, "' >"$tmp/cut"
expect_status 75 saop-resume --no-wait "$tmp/cut" >"$tmp/r1" 2>/dev/null
[ "$(sql "SELECT group_concat(turn || ' ' || stage, ',') FROM (SELECT * FROM
    agent_turn_states ORDER BY turn, stage)")" = \
    "1 saop-resume,1 saop-suspend,2 saop-suspend" ] ||
    fail "rows: $(sql 'SELECT task_id, turn, stage FROM agent_turn_states')"
[ "$(sql "SELECT json_extract(turn_state_json, '\$.record.raw') FROM
    agent_turn_states WHERE stage = 'saop-resume'")" = '{"a": [1, ' ] ||
    fail "the saop-resume row lost its part"

srv_resume
# saop-suspend's own turns, each once; the other stage's row left to it.
expect_status 1 saop-suspend --resume >"$tmp/out" 2>"$tmp/err"
[ "$(jq -r 'select(.raw == "{\"ok\": true}") | .turn' "$tmp/out" | sort | tr '\n' ' ')" = "1 2 " ] ||
    fail "delivered: $(cat "$tmp/out")"
grep -q 'saved by saop-resume' "$tmp/err" || fail "stderr: $(cat "$tmp/err")"
# saop-resume again on its output finishes its own.
saop-resume "$tmp/r1" >"$tmp/r2" || fail "saop-resume again"
jqf '.raw == "{\"a\": [1, 2]}"' "$tmp/r2"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] ||
    fail "left: $(sql 'SELECT turn, stage FROM agent_turn_states')"
# Nothing twice.
expect_status 0 saop-suspend --resume >"$tmp/again" 2>/dev/null
[ ! -s "$tmp/again" ] || fail "delivered again: $(cat "$tmp/again")"
exit 0
