#!/bin/sh
# examples/first-turn.sh, the README's first turn, against the stand-in
# model with SAOP_API_BASE alone (no key, as a local server): the answer
# comes cut (100 characters a call), is resumed and validated, and the
# envelope comes out, state OK.  The README prints the same record and
# the same pipeline as the example runs.
. "$top_srcdir/tests/cli/lib.sh"
ex="$top_srcdir/examples/first-turn.sh"
readme="$top_srcdir/README.md"

# It runs as a program, as the other examples do (issue 34).
[ -x "$ex" ] || fail "$ex is not executable"
# The README shows what the example runs.
record=$(grep '^{"task_id": "first"' "$ex")
[ -n "$record" ] || fail "no record in $ex"
grep -q -x -F "    $record" "$readme" || fail "README.md does not print the example's record"
pipeline=$(grep '^saop-prune <turn.ndjson' "$ex" | sed 's/ || status=\$?$//')
grep -q -x -F "    $pipeline" "$readme" || fail "README.md does not print the pipeline: $pipeline"

answer='{"saop": "1.0", "turn_index": 0, "agent_role": "researcher", "thought": "Files older than a week that no process holds open.", "action": {"tool": "find", "parameters": {"path": "/tmp", "mtime": "+7"}}}'
jq -nc --arg a "$answer" '$a' >"$tmp/answers"
"$PYTHON3" "$top_srcdir/tests/standin-llm.py" --answers "$tmp/answers" \
    --first-turn --chars 100 --port-file "$tmp/port" --log "$tmp/log" \
    --max-seconds 600 &
pid=$!
at_exit "kill $pid"
wait_port "$tmp/port" "$pid" standin-llm
mkdir "$tmp/w"
SAOP_API_BASE="http://127.0.0.1:$(cat "$tmp/port")/v1" SAOP_MODEL=standin \
    "$ex" "$tmp/w" >"$tmp/shown" 2>"$tmp/err" ||
    fail "first-turn.sh exited $?: $(cat "$tmp/err")"
jq -e --argjson a "$answer" '.state == "OK" and .envelope == $a' "$tmp/shown" >/dev/null ||
    fail "shown: $(cat "$tmp/shown")"
jq -e '.resume.status == "RESOLVED" and .resume.attempts >= 1 and
    .validate.valid == true' "$tmp/w/out.ndjson" >/dev/null ||
    fail "out.ndjson: $(cat "$tmp/w/out.ndjson")"
# The first call was the turn itself, the next ones the resume.
[ "$(jq -s '.[0].form' "$tmp/log")" = '"first"' ] || fail "log: $(cat "$tmp/log")"
! grep -q '"error"' "$tmp/log" || fail "the stand-in could not place a request: $(cat "$tmp/log")"
exit 0
