#!/bin/sh
# SIGINT and SIGTERM under the suspend policy, whose handlers are the
# programs' (src/cli.c), not the library's: while saop-suspend,
# saop-resume or saop-validate waits for a lost endpoint, the signal
# stops the wait: exit 75, the turn saved with the program's stage,
# "stopped by a signal"; during a call (not waiting) the process dies of
# the signal, the turn saved before the call kept.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"

export SAOP_NETWORK_POLL_INTERVAL_MS=50 SAOP_MAX_WAIT=inf
printf '%s\n' '{"task_id":"s","turn":2,"request":{"messages":[{"role":"user","content":"What next?"}]},"raw":"{\"saop\": \"1.0\", \"turn_index\": \"zero\"}"}' \
    >"$tmp/validate.in"
jq -c '.task_id = "s"' "$data/resume/trunc.ndjson" >"$tmp/resume.in"
record s 2 >"$tmp/suspend.in"

waiting() {
	grep -q 'endpoint http:[^ ]* is unreachable; waiting' "$tmp/err"
}
saved() {
	[ -s "$SAOP_DB" ] && [ "$(sql 'SELECT count(*) FROM agent_turn_states' 2>/dev/null)" = 1 ]
}
[ -d /proc/self/fd ] || skip "no /proc/PID/fd to see a call in progress"

# signalled STEP WHEN CHECK: run $prog on its input against a server
# doing STEP (or, for "paused", not listening at all), send $sig once
# CHECK says WHEN has come; $st its status.  (Not the step down=SECS: the
# server's accept may still take a probe for 0.1 s after it went down,
# and the program then resumes its call before the signal comes.)
signalled() {
	rm -f "$SAOP_DB" "$SAOP_DB-wal" "$SAOP_DB-shm"
	if [ "$1" = paused ]; then
		srv_start hang
		srv_pause
	else
		srv_start "$1"
	fi
	: >"$tmp/err"
	"$prog" "$tmp/${prog#saop-}.in" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	wait_for "$3 || ! kill -0 $pid 2>/dev/null" "$what: $2"
	kill -0 "$pid" 2>/dev/null || fail "exited before $what: $2: $(cat "$tmp/err")"
	kill -s "$sig" "$pid"
	st=0
	wait "$pid" || st=$?
}

for sig in TERM INT; do
	for prog in saop-suspend saop-resume saop-validate; do
		what="$prog, SIG$sig"
		# 1. While waiting for the endpoint: the wait stops, exit 75.
		signalled paused 'the wait' waiting
		[ "$st" -eq 75 ] || fail "$what while waiting: exit $st: $(cat "$tmp/err")"
		grep -q 'stopped by a signal' "$tmp/err" ||
		    fail "$what: stderr: $(cat "$tmp/err")"
		[ "$(sql 'SELECT task_id || " " || stage FROM agent_turn_states')" = "s $prog" ] ||
		    fail "$what: saved: $(sql 'SELECT * FROM agent_turn_states')"
		# 2. During a call that hangs: dies of the signal; saop-suspend
		# saved the turn before the call, and it is kept.
		signalled hang 'the call' 'in_call $pid'
		case $sig in TERM) n=143 ;; INT) n=130 ;; esac
		[ "$st" -eq "$n" ] || fail "$what during the call: exit $st, not $n: $(cat "$tmp/err")"
		[ "$prog" != saop-suspend ] || saved ||
		    fail "$what: the turn was not kept"
	done
done
exit 0
