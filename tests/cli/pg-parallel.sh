#!/bin/sh
# The batch (bench/gen-batch) through the five-stage pipeline once in one
# process per stage on SQLite, once split by GNU parallel --pipe -j4 over
# one PostgreSQL database: the same records (sorted; a pruned output's row
# id aside), the same rows, every record OK, no error reaching the user.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/pg-lib.sh"
command -v parallel >/dev/null 2>&1 || skip "GNU parallel is not installed (scripts/deps)"
pg_start
: "${PYTHON3:=python3}"
n=${SAOP_BATCH_N:-600}
"$PYTHON3" "$top_srcdir/bench/gen-batch" "$n" "$tmp/answers" >"$tmp/batch"
batch_oracle "$tmp/answers"
pipe='saop-prune | saop-suspend | saop-detect | saop-resume | saop-validate'
pg=$(pg_newdb par)

SAOP_DB="$tmp/one.sqlite" sh -c "$pipe" <"$tmp/batch" >"$tmp/one" 2>"$tmp/one.err" ||
    fail "single run exited $?: $(head -5 "$tmp/one.err")"
SAOP_DB="$pg" parallel --pipe -j4 --block 100k "$pipe" \
    <"$tmp/batch" >"$tmp/par" 2>"$tmp/par.err" ||
    fail "parallel run exited $?: $(head -5 "$tmp/par.err")"
[ ! -s "$tmp/one.err" ] || fail "single run said: $(head -5 "$tmp/one.err")"
[ ! -s "$tmp/par.err" ] || fail "parallel run said: $(head -5 "$tmp/par.err")"
[ "$(wc -l <"$tmp/par")" -eq "$n" ] || fail "parallel: not $n records"
jq -e -s 'all(.state == "OK")' "$tmp/par" >/dev/null || fail "not all OK"
norm() {
	sed 's/full output in state\.sqlite, id [0-9]*\]/full output in state.sqlite, id N]/' "$1" | sort
}
norm "$tmp/one" >"$tmp/one.s"
norm "$tmp/par" >"$tmp/par.s"
cmp -s "$tmp/one.s" "$tmp/par.s" || fail "records differ: $(diff "$tmp/one.s" "$tmp/par.s" | head -c 1500)"
# The same rows (ids and times aside), in the same order on both.
q="SELECT task_id, tool_name, byte_size, turn_age, HEX FROM tool_outputs ORDER BY 1, 5;
SELECT task_id, turn_number, truncation_index, initial_chunk_length, resume_attempts,
    final_status, sent_bytes, received_bytes, prompt_tokens, completion_tokens
    FROM partial_completion_log ORDER BY 1, 2;
SELECT task_id, turn, event FROM events ORDER BY 1, 2 NULLS FIRST, 3;
SELECT task_id, status, reason FROM tasks ORDER BY 1;
SELECT count(*) FROM agent_turn_states"
sqlite3 "$tmp/one.sqlite" "$(printf '%s' "$q" | sed 's/HEX/hex(raw_content)/')" >"$tmp/rows.one"
pg_sql "$pg" "$(printf '%s' "$q" | sed "s/HEX/upper(encode(raw_content, 'hex'))/")" >"$tmp/rows.par"
cmp -s "$tmp/rows.one" "$tmp/rows.par" ||
    fail "rows differ: $(diff "$tmp/rows.one" "$tmp/rows.par" | head -c 1500)"
[ "$(pg_sql "$pg" 'SELECT count(*) FROM partial_completion_log')" -gt 0 ] ||
    fail "no resumes logged"
[ "$(pg_sql "$pg" 'SELECT count(*) FROM tool_outputs')" -gt 0 ] ||
    fail "no outputs stored"

# Moving over: the single run's state.sqlite copied into PostgreSQL holds
# the same rows, ids too; the report reads the same; new rows get new ids.
cp=$(pg_newdb copy)
saop-report --db "$tmp/one.sqlite" --copy-to "$cp" 2>"$tmp/copy.err" ||
    fail "--copy-to: $(cat "$tmp/copy.err")"
grep -q "copied [0-9]* rows" "$tmp/copy.err" || fail "--copy-to said: $(cat "$tmp/copy.err")"
q="SELECT id, task_id, byte_size, HEX FROM tool_outputs ORDER BY id;
SELECT id, time, task_id, turn, event, data FROM events ORDER BY id;
SELECT * FROM partial_completion_log ORDER BY id;
SELECT * FROM tasks ORDER BY 1; SELECT * FROM agent_turn_states ORDER BY 1"
sqlite3 "$tmp/one.sqlite" "$(printf '%s' "$q" | sed 's/HEX/hex(raw_content)/')" >"$tmp/rows.one"
pg_sql "$cp" "$(printf '%s' "$q" | sed "s/HEX/upper(encode(raw_content, 'hex'))/")" >"$tmp/rows.cp"
cmp -s "$tmp/rows.one" "$tmp/rows.cp" ||
    fail "copied rows differ: $(diff "$tmp/rows.one" "$tmp/rows.cp" | head -c 1500)"
saop-report --db "$tmp/one.sqlite" --json | jq -S . >"$tmp/rep.one"
saop-report --db "$cp" --json | jq -S . >"$tmp/rep.cp"
cmp -s "$tmp/rep.one" "$tmp/rep.cp" || fail "reports differ: $(diff "$tmp/rep.one" "$tmp/rep.cp" | head -c 1500)"
expect_status 65 saop-report --db "$tmp/one.sqlite" --copy-to "$cp" 2>"$tmp/copy.err"
grep -q "not empty" "$tmp/copy.err" || fail "second copy: $(cat "$tmp/copy.err")"
max=$(pg_sql "$cp" 'SELECT max(id) FROM events')
printf '%s\n' '{"task_id":"new","turn":1,"raw":"{\"a\": 1"}' | saop-detect --db "$cp" >/dev/null || true
[ "$(pg_sql "$cp" "SELECT min(id) > $max FROM events WHERE task_id = 'new'")" = t ] ||
    fail "new events after the copy: $(pg_sql "$cp" "SELECT id FROM events WHERE task_id = 'new'")"
# And back: PostgreSQL into a new state.sqlite.
saop-report -q --db "$cp" --copy-to "$tmp/back.sqlite" || fail "copy back"
[ "$(sqlite3 "$tmp/back.sqlite" 'SELECT count(*) FROM events')" = "$(pg_sql "$cp" 'SELECT count(*) FROM events')" ] ||
    fail "copied back: not the same events"
q='SELECT id, byte_size, hex(raw_content) FROM tool_outputs ORDER BY id'
[ "$(sqlite3 "$tmp/back.sqlite" "$q" | md5sum)" = "$(sqlite3 "$tmp/one.sqlite" "$q" | md5sum)" ] ||
    fail "copied back: the raw outputs differ"
exit 0
