#!/bin/sh
# The end of a process that claimed turns on PostgreSQL over TLS: its lease
# renewer (a thread with a connection of its own) is stopped and joined,
# and the store closed, before exit() runs OpenSSL's cleanup.  It used to
# be left running, and about one run in three died of SIGSEGV at exit,
# its buffered records lost.  Two truncated records, the endpoint down,
# --no-wait, 50 times: every run exits 75, never of a signal, with both
# records out whole and the first turn saved (the second passes on
# without a call once the first found the network lost); saop-suspend
# --no-wait (which saves every turn before its call) and saop-validate
# --no-wait the same, 10 times each.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/pg-lib.sh"
pg_start
down=$(pg_free_port)
SAOP_API_BASE="http://127.0.0.1:$down/v1"
SAOP_MODEL=m
# The shortest lease: the renewer connects and renews every 33 ms, so
# that the end of the process often finds it in the middle of a call.
SAOP_CLAIM_LEASE_MS=100
export SAOP_API_BASE SAOP_MODEL SAOP_CLAIM_LEASE_MS
t1=$(cat "$data/resume/trunc.ndjson")
{ printf '%s\n' "$t1"; printf '%s\n' "$t1" | sed 's/"t1"/"t2"/'; } >"$tmp/two"
saop-detect <"$tmp/two" >"$tmp/det" || [ $? -eq 1 ] || fail "saop-detect"

# runs N DB EXPECT JQ SAVED PROG ARGS...: N runs of PROG ARGS <$tmp/det on
# a new database; each exits EXPECT with two records out for which JQ
# holds, and the turns of the tasks SAVED (a list) saved.
runs() {
	n=$1 name=$2 want=$3 cond=$4 saved=$5
	shift 5
	i=0
	while [ "$i" -lt "$n" ]; do
		i=$((i + 1))
		pg_newdb "$name$i" >/dev/null
		SAOP_DB=$(pg_tcp_uri "$name$i" "$pg_password")
		export SAOP_DB
		set +e
		"$@" <"$tmp/det" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		set -e
		[ "$rc" -lt 128 ] || fail "$1, run $i: killed by signal $((rc - 128)): $(cat "$tmp/err")"
		[ "$rc" -eq "$want" ] || fail "$1, run $i: exit $rc: $(cat "$tmp/err")"
		[ "$(jq -c "select($cond) | .task_id" "$tmp/out" | tr -d '\n')" = '"t1""t2"' ] ||
		    fail "$1, run $i: records: $(cat "$tmp/out")"
		[ "$(pg_sql "$SAOP_DB" 'SELECT task_id FROM agent_turn_states
		    ORDER BY task_id' | tr '\n' ' ')" = "$saved " ] ||
		    fail "$1, run $i: saved: $(pg_sql "$SAOP_DB" 'SELECT task_id FROM agent_turn_states')"
	done
}

cp "$tmp/det" "$tmp/cut"
runs 50 r 75 '.resume.status == "SUSPENDED"' t1 saop-resume --no-wait
# saop-suspend makes the call; saop-validate a correction turn.
jq -c 'del(.raw, .detect, .state)' "$tmp/cut" >"$tmp/det"
runs 10 s 75 '.raw == null' "t1 t2" saop-suspend --no-wait
jq -c 'del(.detect, .state) | .raw = "{\"saop\": 1}"' "$tmp/cut" >"$tmp/det"
runs 10 v 75 '.validate != null' t1 saop-validate --no-wait
