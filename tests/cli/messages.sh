#!/bin/sh
# Messages that say what was wrong: too many operands named (where one
# file is all a mode reads); a schema file that is not JSON named as the
# schema file's place, not an input position; curl's text said once in a
# connection error.  (Every record program reads several files in turn:
# tests/cli/records-files.sh.)
. "$top_srcdir/tests/cli/lib.sh"
printf '{"raw": "[1]"}\n' >"$tmp/a"
cp "$tmp/a" "$tmp/b"
for mode in -R --entries; do
	expect_status 64 saop-prune "$mode" "$tmp/a" "$tmp/b" >/dev/null 2>"$tmp/err"
	grep -q "^saop-prune: one input file at most: '$tmp/b' is one too many (2 given)" \
	    "$tmp/err" || fail "saop-prune $mode a b: $(cat "$tmp/err")"
done

printf '{"type": ' >"$tmp/schema.json"
expect_status 78 saop-validate --schema "$tmp/schema.json" "$tmp/a" \
    >/dev/null 2>"$tmp/err"
grep -q "^saop-validate: schema file $tmp/schema.json is not JSON: line 1, column [0-9]*: " \
    "$tmp/err" || fail "schema file error: $(cat "$tmp/err")"

# Port 9 (discard) on loopback: nothing listens, the connection is refused.
printf '{"request": {"messages": [{"role": "user", "content": "x"}]}}\n' >"$tmp/req"
SAOP_API_BASE=http://127.0.0.1:9/v1 SAOP_MODEL=m expect_status 75 \
    saop-suspend --no-wait --db "$tmp/s.sqlite" "$tmp/req" >/dev/null 2>"$tmp/err"
grep -q "127.0.0.1" "$tmp/err" || fail "connection error: $(cat "$tmp/err")"
[ "$(grep -o "Couldn't connect to server" "$tmp/err" | wc -l)" -le 1 ] ||
    fail "curl's text twice: $(cat "$tmp/err")"
exit 0
