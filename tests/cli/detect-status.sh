#!/bin/sh
# saop-detect's exit statuses: 0, 1, 64, 65 (naming the line), 66, 74.
. "$top_srcdir/tests/cli/lib.sh"

# jqs FILTER FILE: the filter on all of FILE's records as one array (jq
# 1.6's -e goes wrong after a select that drops the last record).
jqs() {
	jq -s -e "$1" "$2" >/dev/null || fail "jq -s '$1' is false on $2"
}

printf '{"raw":"{}"}\n\n{"raw":" [1] "}\n' | saop-detect >/dev/null ||
    fail "complete records: not 0"
printf '' | saop-detect >"$tmp/empty" || fail "no records: not 0"
[ ! -s "$tmp/empty" ] || fail "no records: output"
printf '{"raw":"{}"}\n{"raw":"[1"}\n' | expect_status 1 saop-detect >/dev/null
printf '{"raw":"[1]x"}\n' | expect_status 1 saop-detect >/dev/null

# A bad record line: 65, naming line 2; the other records still go out.
expect_status 65 saop-detect "$data/detect/bad-lines.ndjson" >"$tmp/out" 2>"$tmp/err"
grep -q '^saop-detect: line 2, byte [0-9]*: not a JSON record' "$tmp/err" ||
    fail "no line 2 in: $(cat "$tmp/err")"
grep -q '^saop-detect: line 4, byte 0: .*JSON object' "$tmp/err" ||
    fail "no line 4 in: $(cat "$tmp/err")"
grep -q '^saop-detect: line 5: .*no string "raw"' "$tmp/err" ||
    fail "no line 5 in: $(cat "$tmp/err")"
# Every line goes on: the records (line 5 with its error) and, unchanged,
# the lines that are not records.
[ "$(wc -l <"$tmp/out")" -eq 6 ] || fail "not 6 lines written"
for l in 2 4; do
	[ "$(sed -n ${l}p "$tmp/out")" = "$(sed -n ${l}p "$data/detect/bad-lines.ndjson")" ] ||
	    fail "line $l was not handed on unchanged"
done
sed -n 5p "$tmp/out" >"$tmp/l5"
jqf '.error.line == 5 and .error.status == 65' "$tmp/l5"
jq -R -c 'fromjson? | objects' "$tmp/out" >"$tmp/recs"
jqs 'map(select(.turn == 4))[0] | has("detect") | not' "$tmp/recs"
[ "$(jq -s 'map(.turn)' "$tmp/recs" | tr -d ' \n')" = '[0,2,4,5]' ] ||
    fail "records lost or reordered"
# A line over --max-record is 65 too, naming it.
printf '{"raw":"[1]"}\n{"raw":"%s"}\n' "$(head -c 300 /dev/zero | tr '\0' a)" |
    expect_status 65 saop-detect --max-record 100 >/dev/null 2>"$tmp/err"
grep -q 'line 2' "$tmp/err" || fail "--max-record: $(cat "$tmp/err")"

# A missing file: 66, in both modes.
expect_status 66 saop-detect "$tmp/no-such.ndjson" 2>"$tmp/err"
grep -q 'no-such.ndjson' "$tmp/err" || fail "66 does not name the file"
expect_status 66 saop-detect -R "$tmp/no-such.json" 2>/dev/null

# Usage errors: 64.
expect_status 64 saop-detect --max-depth 0 </dev/null 2>/dev/null
expect_status 64 saop-detect --max-depth x </dev/null 2>/dev/null
expect_status 64 saop-detect --dry-run </dev/null 2>/dev/null

# A write error: 74.
if [ -w /dev/full ]; then
	printf '{"raw":"{}"}\n' | expect_status 74 saop-detect >/dev/full 2>/dev/null
	printf '{}' | expect_status 74 saop-detect -R >/dev/full 2>/dev/null
else
	skip_part "no /dev/full: a write error not tried"
fi
