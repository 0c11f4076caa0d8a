#!/bin/sh
# Migration 0006 moves the saved turns of a database made before it (one
# row per task) to one row per turn: the turn and the stage read from the
# saved state, an unreadable one kept (turn -1) for --list to name; the
# moved turn then resumes as before.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

m="$top_srcdir/migrations"
cat "$m/0001-init.sql" "$m/0002-partial-completion-log.sql" \
    "$m/0003-tool-outputs.sql" "$m/0004-resume-cost.sql" \
    "$m/0005-agent-turn-states.sql" | sqlite3 "$SAOP_DB"
sqlite3 "$SAOP_DB" "PRAGMA user_version = 5;
INSERT INTO agent_turn_states VALUES ('old', '{\"record\":{\"task_id\":\"old\",\"turn\":7,\"request\":{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}},\"stage\":\"saop-suspend\",\"received\":0,\"partial\":\"\",\"resumes\":1}', '2026-01-01T00:00:00.000Z');
INSERT INTO agent_turn_states VALUES ('junk', 'not json', '2026-01-01T00:00:01.000Z');"
expect_status 65 saop-suspend --list >"$tmp/list" 2>"$tmp/err"
[ "$(sql 'PRAGMA user_version')" -ge 6 ] || fail "not migrated"
[ "$(sql "SELECT turn || ' ' || stage FROM agent_turn_states WHERE task_id = 'old'")" = \
    "7 saop-suspend" ] || fail "moved: $(sql 'SELECT task_id, turn, stage FROM agent_turn_states')"
[ "$(sql "SELECT turn FROM agent_turn_states WHERE task_id = 'junk'")" = -1 ] ||
    fail "junk: $(sql 'SELECT task_id, turn FROM agent_turn_states')"
grep -q '^old	7	saop-suspend	' "$tmp/list" || fail "--list: $(cat "$tmp/list")"
grep -q 'task junk turn -1 (saop-suspend) cannot be read' "$tmp/err" || fail "stderr: $(cat "$tmp/err")"
sse_openai "$tmp/a.sse" '{"ok": true}'
srv_start 'body=@a.sse'
expect_status 65 saop-suspend --resume >"$tmp/out" 2>/dev/null
jqf '.task_id == "old" and .turn == 7 and .raw == "{\"ok\": true}"' "$tmp/out"
exit 0
