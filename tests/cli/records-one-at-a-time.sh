#!/bin/sh
# A program driven a record at a time (an agent loop writing one turn and
# waiting for its verdict before the next) gets each record back as soon
# as it is read, though the programs write in blocks: the reader flushes
# before it waits for more input.  Here the writer sends the second record
# only after it has read the first one back, through FIFOs; a program that
# held its output back would deadlock, which the timeout turns into a
# failure.
. "$top_srcdir/tests/cli/lib.sh"

# one_at_a_time PROG ARGS...: two records, the second sent after the
# first came back; prints what came back.
one_at_a_time() {
	rm -f "$tmp/in" "$tmp/out"
	mkfifo "$tmp/in" "$tmp/out"
	"$@" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	timeout 60 sh -c '
		exec 3>"$1" 4<"$2"
		printf "%s\n" "{\"turn\": 1, \"raw\": \"{\\\"a\\\": 1}\"}" >&3
		IFS= read -r first <&4 || exit 1
		printf "%s\n" "$first"
		printf "%s\n" "{\"turn\": 2, \"raw\": \"[1, 2\"}" >&3
		exec 3>&-
		IFS= read -r second <&4 || exit 1
		printf "%s\n" "$second"
	' sh "$tmp/in" "$tmp/out" >"$tmp/got" || {
		kill "$pid" 2>/dev/null || :
		fail "$*: the first record did not come back before the second was sent"
	}
	wait "$pid" || :
}

one_at_a_time saop-detect
jq -e -s '.[0].turn == 1 and .[0].state == "OK" and
    .[1].turn == 2 and .[1].state == "TRUNCATED"' "$tmp/got" >/dev/null ||
    fail "saop-detect: $(cat "$tmp/got")"

echo '{}' >"$tmp/any.json"
one_at_a_time saop-validate --no-retry --schema "$tmp/any.json"
jq -e -s '.[0].turn == 1 and .[0].state == "OK" and
    .[1].turn == 2 and .[1].state == "INVALID"' "$tmp/got" >/dev/null ||
    fail "saop-validate: $(cat "$tmp/got")"

one_at_a_time saop-prune
jq -e -s '[.[].turn] == [1, 2]' "$tmp/got" >/dev/null ||
    fail "saop-prune: $(cat "$tmp/got")"
exit 0
