#!/bin/sh
# --max-record limits a model's answer too, in saop-suspend and in
# saop-resume: past it, 65 naming the limit, never an out-of-memory
# crash; saop-suspend keeps the turn saved for a --resume with a larger
# limit.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

long=$(printf '%0300d' 0)
sse_openai "$tmp/a.sse" "{\"a\": \"$long\"}"
sse_openai "$tmp/b.sse" "$long\"]}"
srv_start 'body=@a.sse' 'body=@a.sse' 'body=@b.sse'
record L 1 | expect_status 65 saop-suspend --max-record 200 >"$tmp/out" 2>"$tmp/err"
grep -q 'over the --max-record limit of 200' "$tmp/err" || fail "stderr: $(cat "$tmp/err")"
jqf '.raw == null and .error.status == 65' "$tmp/out"
[ "$(sql 'SELECT count(*) FROM agent_turn_states WHERE claim_host IS NULL')" -eq 1 ] ||
    fail "turn not kept: $(sql 'SELECT turn, claim_pid FROM agent_turn_states')"
saop-suspend --resume --max-record 4000 >"$tmp/out2" || fail "--resume"
jqf '.raw | length > 300' "$tmp/out2"
printf '{"task_id":"L","turn":2,"raw":"{\\"a\\": [\\"","request":{"messages":[{"role":"user","content":"x"}]}}\n' >"$tmp/cut"
expect_status 65 saop-resume --max-record 200 "$tmp/cut" >"$tmp/out3" 2>"$tmp/err"
grep -q 'over the --max-record limit of 200' "$tmp/err" || fail "saop-resume: $(cat "$tmp/err")"
exit 0
