#!/bin/sh
# examples/first-turn.sh, the README's first turn, against the stand-in
# model (saop-mock --oracle) with SAOP_API_BASE alone (no key, as a local server): the answer
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
saop-mock --oracle "$tmp/answers" --max-chars 100 --port-file "$tmp/port" \
    --log "$tmp/log" --max-seconds 600 &
pid=$!
at_exit "kill $pid"
wait_port "$tmp/port" "$pid" "saop-mock --oracle"
mkdir "$tmp/w"
SAOP_API_BASE="http://127.0.0.1:$(cat "$tmp/port")/v1" SAOP_MODEL=oracle \
    "$ex" "$tmp/w" >"$tmp/shown" 2>"$tmp/err" ||
    fail "first-turn.sh exited $?: $(cat "$tmp/err")"
jq -e --argjson a "$answer" '.state == "OK" and .envelope == $a' "$tmp/shown" >/dev/null ||
    fail "shown: $(cat "$tmp/shown")"
jq -e '.resume.status == "RESOLVED" and .resume.attempts >= 1 and
    .validate.valid == true' "$tmp/w/out.ndjson" >/dev/null ||
    fail "out.ndjson: $(cat "$tmp/w/out.ndjson")"
# The first call was the turn itself, the next ones the resume.
jq -s -e '.[0].oracle.form == "first" and .[0].oracle.finish == "length"
    and (.[1:] | length > 0 and all(.oracle.form == "user"))' "$tmp/log" \
    >/dev/null || fail "log: $(jq -c .oracle "$tmp/log")"
# The key: none came (a local server), none asked for.
jq -s -e 'all(.key == false)' "$tmp/log" >/dev/null ||
    fail "a key came: $(jq -c '[.key, .headers]' "$tmp/log")"
exit 0
