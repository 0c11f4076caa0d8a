#!/bin/sh
# saop-report on a database anybody could have written: control
# characters in a task id or a reason are shown escaped (never sent to the
# terminal), and sums past 64 bits stay at the largest number instead of
# overflowing (undefined behaviour, a negative total).
. "$top_srcdir/tests/cli/lib.sh"

saop-suspend --list >/dev/null	# makes the database
esc=$(printf '\033')
sql "INSERT INTO tasks VALUES ('t${esc}[2Jx', 'PAUSED_FOR_INTERVENTION',
    'why${esc}]0;owned', '2026-01-01T00:00:00.000Z')"
big=9223372036854775807
for i in 1 2 3; do
	sql "INSERT INTO partial_completion_log (task_id, turn_number,
	    truncation_index, initial_chunk_length, resume_attempts,
	    final_status, timestamp, prompt_tokens, completion_tokens)
	    VALUES ('big', $i, 0, 0, 1, 'RESOLVED', '2026-01-01', $big, $big)"
done
saop-report >"$tmp/out" 2>"$tmp/err" || fail "saop-report: $(cat "$tmp/err")"
! grep -q "$esc" "$tmp/out" || fail "a raw ESC on the terminal"
grep -qF 'task t\x1b[2Jx: PAUSED_FOR_INTERVENTION (why\x1b]0;owned)' "$tmp/out" ||
    fail "escaped: $(cat -v "$tmp/out")"
saop-report --json >"$tmp/json" || fail "--json"
# (grep, not jq: jq 1.6 reads numbers as doubles.)
tr -d ' \n' <"$tmp/json" >"$tmp/flat"
# The task "big" and the overall sum, both held at the largest number.
[ "$(grep -o "\"recovery_tokens\":$big[,}]" "$tmp/flat" | wc -l)" -eq 2 ] || fail "sums: $(grep -o '"recovery_tokens":[-0-9]*' "$tmp/flat")"
grep -q "\"prompt_tokens\":$big" "$tmp/flat" || fail "prompt_tokens: $(cat "$tmp/flat")"
! grep -q '"[a-z_]*tokens":-' "$tmp/flat" || fail "a negative sum: $(cat "$tmp/flat")"
exit 0
