#!/bin/sh
# Progress is for long work, as curl's meter: on a terminal, from one
# second into the run, "N records, R/s" (and for a file of known size the
# share done and an ETA) on one line of stderr, redrawn and cleared at the
# end; nothing for a run shorter than a second, nothing when stderr is not
# a terminal, nothing when the records go to the same terminal.  A
# stand-in model slow enough (0.7 s a call) that the run lasts past a
# second whatever the machine.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"
command -v script >/dev/null 2>&1 || skip "no script(1) to give the program a terminal"

i=0
: >"$tmp/in"
while [ $i -lt 4 ]; do
	printf '{"task_id":"p","turn":%d,"raw":"[1, "}\n' $i >>"$tmp/in"
	i=$((i + 1))
done
fake_llm_start --repeat-last '{"text": "2]", "delay_ms": 700}'

# A terminal, the records to a file: lines with the ETA, then cleared.
script -qec "saop-resume '$tmp/in' >'$tmp/out'" /dev/null >"$tmp/tty" 2>&1 ||
    fail "saop-resume under script: $(cat "$tmp/tty")"
tr '\r' '\n' <"$tmp/tty" >"$tmp/lines"
grep -q '^saop-resume: [1-3] records, [0-9.]*/s, [0-9]*%, ETA [0-9]*:[0-5][0-9]' \
    "$tmp/lines" || fail "no progress with an ETA: $(cat "$tmp/lines")"
# The last thing drawn is the clearing: spaces between two CRs.
tail -c 2 "$tmp/tty" | od -An -c | grep -q '\\r' ||
    fail "the progress line is not cleared at the end: $(od -c "$tmp/tty" | tail -3)"
[ -z "$(tail -n 1 "$tmp/lines" | tr -d ' ')" ] ||
    fail "a line is left: $(tail -n 1 "$tmp/lines")"
[ "$(jq -s 'map(select(.raw == "[1, 2]")) | length' "$tmp/out")" -eq 4 ] ||
    fail "records: $(cat "$tmp/out")"

# The records to the same terminal: no meter among them (curl's rule).
script -qec "saop-resume '$tmp/in'" /dev/null >"$tmp/tty2" 2>&1 ||
    fail "saop-resume to the terminal: $(cat "$tmp/tty2")"
[ "$(grep -c '"raw"' "$tmp/tty2")" -eq 4 ] || fail "records: $(cat "$tmp/tty2")"
! grep -q 'records, ' "$tmp/tty2" ||
    fail "progress among the records: $(cat "$tmp/tty2")"

# A run shorter than a second: not a byte on the terminal.
printf '{"raw": "[1]"}\n{"raw": "[2"}\n' >"$tmp/two"
script -qec "saop-detect '$tmp/two' >'$tmp/out2'" /dev/null >"$tmp/tty3" 2>&1 ||
    true
[ ! -s "$tmp/tty3" ] || fail "progress for a short run: $(od -c "$tmp/tty3" | head)"
[ "$(wc -l <"$tmp/out2")" -eq 2 ] || fail "detect records: $(cat "$tmp/out2")"

# Not a terminal: not a byte of progress.
saop-resume "$tmp/in" >"$tmp/out" 2>"$tmp/err" || fail "$(cat "$tmp/err")"
[ ! -s "$tmp/err" ] || fail "progress on a pipe: $(cat "$tmp/err")"
exit 0
