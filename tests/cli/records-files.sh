#!/bin/sh
# Several input files are read in turn, as cat(1) and jq(1) read them
# (issue 34): every record program writes the records of each file in
# order, a line that is not a record in the second file is named and
# handed on, with -R each file is one record, and a missing file is 66.
. "$top_srcdir/tests/cli/lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
printf '{"task_id":"a","raw":"[1]"}\n{"task_id":"b","raw":"[2]"}\n' >"$tmp/one.ndjson"
printf '{"task_id":"c","raw":"{\\"x\\": 3}"}\n' >"$tmp/two.ndjson"
for p in saop-detect saop-resume saop-validate saop-suspend saop-prune; do
	set +e
	"$p" "$tmp/one.ndjson" "$tmp/two.ndjson" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	set -e
	[ "$rc" -le 3 ] || fail "$p a b exited $rc: $(cat "$tmp/err")"
	[ "$(jq -r .task_id "$tmp/out" | tr '\n' ' ')" = "a b c " ] ||
	    fail "$p a b wrote: $(cat "$tmp/out")"
	# The same from standard input ("-") between two files.
	"$p" "$tmp/one.ndjson" - "$tmp/two.ndjson" <"$tmp/two.ndjson" \
	    >"$tmp/out" 2>"$tmp/err" || [ $? -le 3 ] ||
	    fail "$p a - b: $(cat "$tmp/err")"
	[ "$(jq -r .task_id "$tmp/out" | tr '\n' ' ')" = "a b c c " ] ||
	    fail "$p a - b wrote: $(cat "$tmp/out")"
	expect_status 66 "$p" "$tmp/one.ndjson" "$tmp/nosuch" >/dev/null 2>&1
done
# saop-detect's verdicts, file by file: the worst status of all.
printf '{"task_id":"t","raw":"[2"}\n' >"$tmp/cut.ndjson"
expect_status 1 saop-detect "$tmp/two.ndjson" "$tmp/cut.ndjson" \
    "$tmp/one.ndjson" >"$tmp/out"
[ "$(jq -r .state "$tmp/out" | tr '\n' ' ')" = "OK TRUNCATED OK OK " ] ||
    fail "states: $(cat "$tmp/out")"
# A line that is not a record, in the second file: named, handed on (65).
printf 'not a record\n{"task_id":"d","raw":"1"}\n' >"$tmp/bad.ndjson"
expect_status 65 saop-detect "$tmp/two.ndjson" "$tmp/bad.ndjson" \
    >"$tmp/out" 2>"$tmp/err"
[ "$(sed -n 2p "$tmp/out")" = "not a record" ] || fail "not handed on: $(cat "$tmp/out")"
[ "$(sed -n 3p "$tmp/out" | jq -r .task_id)" = d ] || fail "d: $(cat "$tmp/out")"
# -R: each file is one record (saop-detect's own reader, and cli_run()'s).
printf '{"a": 1}' >"$tmp/r1"
printf '{"a": ' >"$tmp/r2"
expect_status 1 saop-detect -R "$tmp/r1" "$tmp/r2" >"$tmp/out"
[ "$(jq -r .state "$tmp/out" | tr '\n' ' ')" = "OK TRUNCATED " ] ||
    fail "saop-detect -R a b: $(cat "$tmp/out")"
saop-resume -R "$tmp/r1" "$tmp/r1" >"$tmp/out" 2>"$tmp/err" ||
    fail "saop-resume -R a a: $(cat "$tmp/err")"
[ "$(jq -r .raw "$tmp/out" | tr '\n' ' ')" = '{"a": 1} {"a": 1} ' ] ||
    fail "saop-resume -R a a: $(cat "$tmp/out")"
exit 0
