#!/bin/sh
# A fleet's batch with the endpoint down, on PostgreSQL over TLS: the
# batch of bench/gen-batch through saop-prune | saop-suspend --no-wait |
# saop-detect | saop-resume --no-wait | saop-validate --no-retry, split by
# GNU parallel --pipe -j4 with the state in one PostgreSQL database, gives
# the records one process per stage gives on state.sqlite: every record
# out once and whole, no process killed by a signal (parallel's job log),
# and each record the same but for what only the split decides (which
# record of each process met the lost network first and so made the call:
# its error, its suspend member, its resume attempt, bytes sent and cost).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/pg-lib.sh"
command -v parallel >/dev/null 2>&1 || pg_need "GNU parallel"
pg_start
n=${SAOP_BATCH_N:-300}
"$PYTHON3" "$top_srcdir/bench/gen-batch" "$n" >"$tmp/batch"
down=$(pg_free_port)
SAOP_API_BASE="http://127.0.0.1:$down/v1"
SAOP_MODEL=m
export SAOP_API_BASE SAOP_MODEL
pipe='saop-prune | saop-suspend --no-wait | saop-detect | saop-resume --no-wait | saop-validate --no-retry'

SAOP_DB="$tmp/one.sqlite" sh -c "$pipe" <"$tmp/batch" >"$tmp/one" 2>"$tmp/one.err" ||
    [ $? -eq 1 ] || fail "single run: $(tail -3 "$tmp/one.err")"
db=$(pg_newdb batch)
SAOP_DB=$(pg_tcp_uri batch "$pg_password") parallel --pipe -j4 --block 100k \
    --joblog "$tmp/jobs" "$pipe" <"$tmp/batch" >"$tmp/par" 2>"$tmp/par.err" || :
# The job log: Seq Host Starttime JobRuntime Send Receive Exitval Signal.
jobs=$(awk 'NR > 1' "$tmp/jobs" | wc -l)
[ "$jobs" -ge 4 ] || fail "the batch went to $jobs jobs"
awk 'NR > 1 && $8 != 0 { print }' "$tmp/jobs" >"$tmp/killed"
[ ! -s "$tmp/killed" ] || fail "jobs killed by a signal: $(cat "$tmp/killed")"
# A pipeline's status is its last stage's: 1 (flagged), nothing worse.
awk 'NR > 1 && $7 > 1 { print }' "$tmp/jobs" >"$tmp/bad"
[ ! -s "$tmp/bad" ] || fail "jobs failed: $(cat "$tmp/bad"; head -5 "$tmp/par.err")"
grep -i 'signal\|segmentation\|core dumped' "$tmp/par.err" &&
    fail "a process died"
# Every record once, each a whole JSON object.
[ "$(jq -r '.task_id' "$tmp/par" | sort | uniq | wc -l)" -eq "$n" ] ||
    fail "$(jq -r '.task_id' "$tmp/par" | sort | uniq | wc -l) of $n records"
[ "$(wc -l <"$tmp/par")" -eq "$n" ] || fail "$(wc -l <"$tmp/par") lines for $n records"
# The same records, but for what the split decides.
norm() {
	sed 's/full output in state\.sqlite, id [0-9]*\]/full output in state.sqlite, id N]/' "$1" |
	    jq -c 'del(.error, .suspend) |
	    if .resume.status == "SUSPENDED" then .resume |= del(.attempts,
	    .sent_bytes, .cost) | del(.cost) else . end' | sort
}
norm "$tmp/one" >"$tmp/one.s"
norm "$tmp/par" >"$tmp/par.s"
cmp -s "$tmp/one.s" "$tmp/par.s" ||
    fail "records differ: $(diff "$tmp/one.s" "$tmp/par.s" | head -c 1500)"
# Each call that met the loss saved its turn; nothing else was saved.
calls=$(jq -s 'map(select(.resume.attempts == 1)) | length' "$tmp/par")
[ "$calls" -ge 1 ] || fail "no call was made"
[ "$(pg_sql "$db" 'SELECT count(*) FROM agent_turn_states')" -eq "$calls" ] ||
    fail "saved: $(pg_sql "$db" 'SELECT count(*) FROM agent_turn_states') for $calls calls"
exit 0
