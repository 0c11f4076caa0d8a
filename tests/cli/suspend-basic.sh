#!/bin/sh
# saop-suspend: records with raw pass through untouched; an answer is
# written with raw, finish_reason and usage; -R reads a bare request;
# --resume with nothing saved calls nothing; --list and --clear.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

sse_openai "$tmp/a.sse" '{"ok": ' 'true}'
srv_start 'body=@a.sse'
printf '%s\n' '{"task_id":"p","raw":"{\"x\": 1}","zz":[1, 2]}' >"$tmp/in"
record t1 0 >>"$tmp/in"
saop-suspend "$tmp/in" >"$tmp/out"
[ "$(sed -n 1p "$tmp/out" | jq -cS .)" = "$(sed -n 1p "$tmp/in" | jq -cS .)" ] ||
    fail "a record with raw was changed: $(sed -n 1p "$tmp/out")"
sed -n 2p "$tmp/out" >"$tmp/o2"
jqf '.raw == "{\"ok\": true}" and .finish_reason == "stop" and
    .usage.completion_tokens == 5 and .task_id == "t1" and .turn == 0' "$tmp/o2"
[ "$(srv_requests)" -eq 1 ] || fail "$(srv_requests) requests, expected 1"
[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 0 ] ||
    fail "a row was left behind"
[ "$(sql "SELECT status FROM tasks WHERE task_id = 't1'")" = DONE ] ||
    fail "task status: $(sql 'SELECT * FROM tasks')"
# saop-report says so (it said IN_PROGRESS: issue 34).
saop-report >"$tmp/rep" || fail "saop-report exited $?"
grep -qx 'task t1: DONE' "$tmp/rep" || fail "saop-report: $(cat "$tmp/rep")"

# -R: a bare chat request; -r: the text only.
printf '{"messages":[{"role":"user","content":"hi"}]}' |
    saop-suspend -R -r >"$tmp/raw"
[ "$(cat "$tmp/raw")" = '{"ok": true}' ] || fail "-R -r wrote $(cat "$tmp/raw")"
# (input that begins with "{" and is not JSON: a plain prompt does not)
expect_status 65 sh -c 'printf "{not json" | saop-suspend -R >/dev/null 2>&1'

# Nothing saved: --resume says so, exits 0 and calls nothing.
n=$(srv_requests)
saop-suspend --resume >"$tmp/out" 2>"$tmp/err"
grep -q 'no saved turns' "$tmp/err" || fail "--resume said: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "--resume wrote records"
[ "$(srv_requests)" -eq "$n" ] || fail "--resume with nothing saved called"
# --list: its header alone; --json: an empty array (and only with --list).
[ "$(saop-suspend --list)" = "$(printf 'TASK\tTURN\tSTAGE\tSAVED_AT\tRECEIVED\tCLAIM')" ] ||
    fail "--list: $(saop-suspend --list)"
[ "$(saop-suspend --list --json)" = '[]' ] || fail "--list --json is not []"
expect_status 64 saop-suspend --json </dev/null 2>/dev/null
expect_status 1 saop-suspend --clear nope 2>/dev/null
expect_status 64 saop-suspend --list --resume 2>/dev/null
SAOP_NETWORK_POLL_INTERVAL_MS=x expect_status 78 saop-suspend --resume 2>/dev/null
exit 0
