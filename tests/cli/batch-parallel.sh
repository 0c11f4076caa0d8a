#!/bin/sh
# The batch (bench/gen-batch: an evaluation run's saved outputs, every case)
# through the five-stage pipeline, once in one process per stage and once
# split by GNU parallel --pipe -j4 across processes sharing one state.sqlite:
# the same records (sorted; a pruned output's row id aside) and the same
# rows, every record OK, and no SQLITE_BUSY (or any error) reaching the user.
. "$top_srcdir/tests/cli/lib.sh"
command -v parallel >/dev/null 2>&1 || skip "GNU parallel is not installed (scripts/deps)"
: "${PYTHON3:=python3}"
n=${SAOP_BATCH_N:-1200}
"$PYTHON3" "$top_srcdir/bench/gen-batch" "$n" "$tmp/answers" >"$tmp/batch"
batch_oracle "$tmp/answers"
pipe='saop-prune | saop-suspend | saop-detect | saop-resume | saop-validate'

SAOP_DB="$tmp/one.sqlite" sh -c "$pipe" <"$tmp/batch" >"$tmp/one" 2>"$tmp/one.err" ||
    fail "single run exited $?: $(head -5 "$tmp/one.err")"
SAOP_DB="$tmp/par.sqlite" parallel --pipe -j4 --block 200k "$pipe" \
    <"$tmp/batch" >"$tmp/par" 2>"$tmp/par.err" ||
    fail "parallel run exited $?: $(head -5 "$tmp/par.err")"
[ ! -s "$tmp/one.err" ] || fail "single run said: $(head -5 "$tmp/one.err")"
[ ! -s "$tmp/par.err" ] || fail "parallel run said: $(head -5 "$tmp/par.err")"
[ "$(wc -l <"$tmp/one")" -eq "$n" ] || fail "single: not $n records"
jq -e -s 'all(.state == "OK")' "$tmp/par" >/dev/null || fail "not all OK"
# The same records, sorted, a summary's row id aside.
norm() {
	sed 's/full output in state\.sqlite, id [0-9]*\]/full output in state.sqlite, id N]/' "$1" | sort
}
norm "$tmp/one" >"$tmp/one.s"
norm "$tmp/par" >"$tmp/par.s"
cmp -s "$tmp/one.s" "$tmp/par.s" || fail "records differ: $(diff "$tmp/one.s" "$tmp/par.s" | head -c 1500)"
# The same rows (ids and times aside).
rows() {
	sqlite3 "$1" "SELECT task_id, tool_name, byte_size, turn_age, hex(raw_content) FROM tool_outputs ORDER BY 1, 5;
	    SELECT task_id, turn_number, truncation_index, initial_chunk_length, resume_attempts, final_status, sent_bytes, received_bytes, prompt_tokens, completion_tokens FROM partial_completion_log ORDER BY 1, 2;
	    SELECT task_id, turn, event FROM events ORDER BY 1, 2, 3;
	    SELECT task_id, status, reason FROM tasks ORDER BY 1;
	    SELECT count(*) FROM agent_turn_states" | md5sum
}
[ "$(rows "$tmp/one.sqlite")" = "$(rows "$tmp/par.sqlite")" ] || fail "rows differ"
[ "$(sqlite3 "$tmp/par.sqlite" 'SELECT count(*) FROM partial_completion_log')" -gt 0 ] ||
    fail "no resumes logged"
exit 0
