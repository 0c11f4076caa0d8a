#!/bin/sh
# saop-prune: killed (SIGKILL) at any moment of a large prune, it never
# leaves a pruned message whose raw output is not in the database: every
# summary in the output written so far names a row holding its raw output.
. "$top_srcdir/tests/cli/lib.sh"
py=${PYTHON3:-python3}
helper="$data/prune/prune.py"

# 12 records of 6 outputs of 200 KB: 72 outputs, 14 MB.
"$py" "$helper" big 12 6 200000 >"$tmp/in.ndjson"
prog=$(command -v saop-prune)

# Random moments: kill 0 to 400 ms after the database was made (the
# program's first write, waited for however slow the start).  A kill
# counts only when it found the program still running (a run that ends
# first checks nothing): the loop goes on until 10 such kills were
# checked, and fails past 60 tries.
floor=10
i=0 checked=0
seed=$(( $$ % 1000 ))
while [ "$checked" -lt "$floor" ]; do
	i=$((i + 1))
	[ "$i" -le 60 ] ||
	    fail "only $checked kills of 60 hit a running prune (at least $floor wanted)"
	rm -f "$tmp"/db* "$tmp/out"
	ms=$(( (seed * 7919 + i * 104729) % 400 ))
	SAOP_DB="$tmp/db" "$prog" <"$tmp/in.ndjson" >"$tmp/out" 2>/dev/null &
	pid=$!
	wait_for '[ -e "$tmp/db" ] || ! kill -0 $pid 2>/dev/null' \
	    "saop-prune to make its database"
	sleep "$(printf '0.%03d' "$ms")"
	hit=0
	kill -9 "$pid" 2>/dev/null && hit=1
	wait "$pid" 2>/dev/null || true
	[ -e "$tmp/db" ] || continue
	mkdir -p "$tmp/raw"
	"$py" "$helper" check "$tmp/in.ndjson" "$tmp/out" "$tmp/db" "$tmp/raw" \
	    --partial >/dev/null || fail "after a kill at ${ms} ms"
	[ "$(sqlite3 "$tmp/db" 'PRAGMA integrity_check')" = ok ] ||
	    fail "database damaged by a kill at ${ms} ms"
	checked=$((checked + hit))
done
echo "random kills: $checked of $i runs killed mid-prune and checked" >&2

# Every write and sync: crash-loop kills at sampled calls, when strace works.
# (LeakSanitizer cannot run under ptrace: off for these runs in ASan builds.)
if "$kit/syscall-fault.sh" check 2>/dev/null; then
	"$py" "$helper" big 4 3 80000 >"$tmp/in2.ndjson"
	"$kit/crash-loop.sh" -s fdatasync -s pwrite64 -s write -k 5 -n 80 -t 60 \
	    -r "rm -f '$tmp'/cl*" \
	    -v "'$py' '$helper' check '$tmp/in2.ndjson' '$tmp/cl.out' '$tmp/cl.db' '$tmp' --partial >/dev/null" \
	    -- sh -c "ASAN_OPTIONS='${ASAN_OPTIONS:-}:detect_leaks=0' SAOP_DB='$tmp/cl.db' '$prog' <'$tmp/in2.ndjson' >'$tmp/cl.out'" \
	    >"$tmp/crash.log" 2>&1 || fail "crash-loop: $(tail -5 "$tmp/crash.log")"
	tail -1 "$tmp/crash.log" >&2
	# At least 10 crash points checked (80 calls, every 5th, 3 calls).
	n=$(sed -n 's/^crash-loop: \([0-9]*\) passed.*/\1/p' "$tmp/crash.log" | tail -1)
	[ "${n:-0}" -ge 10 ] ||
	    fail "crash-loop checked ${n:-no} crash points (at least 10 wanted): $(tail -3 "$tmp/crash.log")"
else
	skip_part "no strace-based crash-loop here (strace, ptrace allowed)"
fi
exit 0
