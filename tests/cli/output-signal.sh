#!/bin/sh
# -o FILE: a run ended by SIGINT, SIGTERM or SIGHUP leaves no temporary file
# beside FILE, and FILE as it was; the program still dies of the signal
# (status 128 + its number).  Each program is signalled while it waits on
# its input, once an event shows it has started: the temporary file made
# (saop-detect), or -v's line said after the suspension's handlers are
# installed (saop-validate, whose handler must hand over to -o's).
. "$top_srcdir/tests/cli/lib.sh"
mkdir "$tmp/d"

# has_temp: a temporary file is in $tmp/d.
has_temp() {
	[ -n "$(ls -A "$tmp/d" | grep -v -x out)" ]
}

# run SIG NUM EVENT PROG ARGS...: run PROG -o $tmp/d/out on a FIFO held
# open, wait for EVENT (a function), send SIG, and check what is left.
run() {
	sig=$1 num=$2 event=$3
	shift 3
	echo old >"$tmp/d/out"
	rm -f "$tmp/fifo" "$tmp/err"
	mkfifo "$tmp/fifo"
	# Started with SIGINT at its default: a shell without job control
	# has its background jobs ignore it.
	env --default-signal=INT,TERM,HUP "$@" -o "$tmp/d/out" <"$tmp/fifo" \
	    2>"$tmp/err" &
	pid=$!
	exec 3>"$tmp/fifo"
	printf '{"raw": "[1]"}\n' >&3
	wait_for "$event" "$1 to start"
	kill -s "$sig" "$pid"
	set +e
	wait "$pid"
	got=$?
	set -e
	exec 3>&-
	[ "$got" -eq $((128 + num)) ] ||
	    fail "$1 -o, SIG$sig: exited $got, not $((128 + num)): $(cat "$tmp/err")"
	! has_temp || fail "$1 -o, SIG$sig: left $(ls -A "$tmp/d")"
	[ "$(cat "$tmp/d/out")" = old ] || fail "$1 -o, SIG$sig: the file changed"
}

said_validating() {
	grep -q 'only validating' "$tmp/err"
}

run INT 2 has_temp saop-detect
run TERM 15 has_temp saop-detect
run HUP 1 has_temp saop-detect
run INT 2 said_validating saop-validate -v
run TERM 15 said_validating saop-validate -v
exit 0
