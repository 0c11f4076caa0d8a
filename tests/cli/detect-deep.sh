#!/bin/sh
# 10,000-deep nesting is followed (no recursion); --max-depth limits it.
. "$top_srcdir/tests/cli/lib.sh"

python3 -c 'import sys; sys.stdout.write("[" * 10000 + "]" * 10000)' >"$tmp/deep.json"
saop-detect -R -q "$tmp/deep.json" || fail "10000-deep complete nesting is not OK"
head -c 10000 "$tmp/deep.json" >"$tmp/open.json"
expect_status 1 saop-detect -R --close "$tmp/open.json" >"$tmp/out"
jqf '.state == "TRUNCATED" and (.detect.open | length) == 10000' "$tmp/out"
jq -j .raw "$tmp/out" >"$tmp/closed.json"
cmp "$tmp/deep.json" "$tmp/closed.json" || fail "--close did not give back the whole"
# The same inside a record.
jq -cn --rawfile r "$tmp/open.json" '{raw: $r}' >"$tmp/rec.ndjson"
expect_status 1 saop-detect "$tmp/rec.ndjson" >"$tmp/rec.out"
jqf '.detect.closing | length == 10000' "$tmp/rec.out"

# Past --max-depth: invalid, saying so, at the first byte too deep.
expect_status 1 saop-detect -R --max-depth 100 "$tmp/deep.json" >"$tmp/lim"
jqf '.state == "INVALID" and .detect.error.message == "nesting deeper than 100" and .detect.error.offset == 100' "$tmp/lim"
