#!/bin/sh
# The bundled examples: each record's verdict, and --close on them.
. "$top_srcdir/tests/cli/lib.sh"

# jqs FILTER FILE: the filter on all of FILE's records as one array (jq
# 1.6's -e goes wrong after a select that drops the last record).
jqs() {
	jq -s -e "$1" "$2" >/dev/null || fail "jq -s '$1' is false on $2"
}
ex="$top_srcdir/examples/detect/batch.ndjson"

expect_status 1 saop-detect "$ex" >"$tmp/out"
[ "$(jq -r .state "$tmp/out" | tr '\n' ' ')" = \
    "OK TRUNCATED TRUNCATED TRUNCATED OK OK INVALID TRUNCATED TRUNCATED INVALID OK " ] ||
    fail "states: $(jq -r .state "$tmp/out" | tr '\n' ' ')"
# The fenced answer after prose is complete, its wrapper named.
jqs 'map(select(.turn == 5))[0] | .detect.wrapper == "prose+fence" and .detect.json_start == 46' "$tmp/out"
jqs 'map(select(.turn == 6))[0] | .detect.error.message == "unexpected '"'"'}'"'"', expected a string key"' "$tmp/out"
jqs 'map(select(.turn == 8))[0] | .detect.closing == "}"' "$tmp/out"
# Every truncated example closes to an envelope jq reads.
expect_status 1 saop-detect --close "$ex" >"$tmp/closed"
jq -r 'select(.state != "INVALID") | .raw[.detect.json_start:] |
    sub("\n```$"; "") | fromjson | .turn_index' \
    "$tmp/closed" | tr '\n' ' ' >"$tmp/idx"
[ "$(cat "$tmp/idx")" = "0 1 2 3 4 5 7 8 10 " ] || fail "closed envelopes: $(cat "$tmp/idx")"
# The pretty-printed example has its error-free verdict over lines.
jqs 'map(select(.turn == 10))[0] | .state == "OK"' "$tmp/out"
