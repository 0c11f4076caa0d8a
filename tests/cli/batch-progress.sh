#!/bin/sh
# Progress on a terminal: records done, rate, and for a file of known size
# the share done and an ETA, on stderr once a second; nothing at all when
# stderr is not a terminal.  A stand-in model slow enough (0.7 s a call)
# that the run lasts past a second boundary whatever the machine.
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

# A terminal: intermediate lines with the ETA, then the final count.
script -qec "saop-resume '$tmp/in' >'$tmp/out'" /dev/null >"$tmp/tty" 2>&1 ||
    fail "saop-resume under script: $(cat "$tmp/tty")"
tr '\r' '\n' <"$tmp/tty" >"$tmp/lines"
grep -q '^saop-resume: [1-3] records, [0-9.]*/s, [0-9]*%, ETA [0-9]*:[0-5][0-9]' \
    "$tmp/lines" || fail "no progress with an ETA: $(cat "$tmp/lines")"
grep -q '^saop-resume: 4 records, [0-9.]*/s *$' "$tmp/lines" ||
    fail "no final count: $(cat "$tmp/lines")"
[ "$(jq -s 'map(select(.raw == "[1, 2]")) | length' "$tmp/out")" -eq 4 ] ||
    fail "records: $(cat "$tmp/out")"

# Not a terminal: not a byte of progress.
saop-resume "$tmp/in" >"$tmp/out" 2>"$tmp/err" || fail "$(cat "$tmp/err")"
[ ! -s "$tmp/err" ] || fail "progress on a pipe: $(cat "$tmp/err")"
exit 0
