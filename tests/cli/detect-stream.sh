#!/bin/sh
# saop-detect -R streams: 200 MB in constant memory, with -q and when it
# writes the record.
. "$top_srcdir/tests/cli/lib.sh"

# 4,000,000 lines of 50 bytes: an array of strings with escapes.
line='"a string with \"escapes\" \\ and \u00e9 ..ok..",'
[ ${#line} -eq 49 ] || fail "the line is ${#line} bytes, not 49"
gen() {
	printf '['
	yes "$line" | head -n 4000000
	printf '1]'
}
size=$((4000000 * 50 + 3))

# Peak RSS is checked against the same program on empty input (shared
# libraries and sanitizers have their own), when it can be measured.
rss=
if [ -x /usr/bin/time ] && [ -z "${SAOP_TEST_WRAPPER:-}" ]; then
	rss=/usr/bin/time
	# Nothing at all is truncated (empty): 1.
	printf '' | expect_status 1 /usr/bin/time -f %M -o "$tmp/rss0" saop-detect -R -q
	printf '' | expect_status 1 /usr/bin/time -f %M -o "$tmp/rss00" saop-detect -R >/dev/null
elif [ -z "${SAOP_TEST_WRAPPER:-}" ]; then
	skip_part "no /usr/bin/time (Debian package time): peak RSS not measured"
fi

if [ -n "$rss" ]; then
	gen | /usr/bin/time -f %M -o "$tmp/rss1" saop-detect -R -q ||
	    fail "200 MB complete document: not OK"
else
	gen | saop-detect -R -q || fail "200 MB complete document: not OK"
fi

# The record: raw streams out escaped, detect after it.
if [ -n "$rss" ]; then
	gen | /usr/bin/time -f %M -o "$tmp/rss2" saop-detect -R --task big >"$tmp/rec"
else
	gen | saop-detect -R --task big >"$tmp/rec"
fi
tail -c 400 "$tmp/rec" | grep -q "\"detect\":{\"complete\":true,.*\"length\":$size," ||
    fail "the record's end: $(tail -c 400 "$tmp/rec")"
head -c 40 "$tmp/rec" | grep -q '^{"task_id":"big","raw":"\[\\"a string' ||
    fail "the record's start: $(head -c 40 "$tmp/rec")"
jq -j '.raw | length' "$tmp/rec" >"$tmp/len"
# All ASCII (the \u00e9 is an escape in the text): as many characters.
[ "$(cat "$tmp/len")" -eq "$size" ] ||
    fail "raw is $(cat "$tmp/len") characters"

if [ -n "$rss" ]; then
	for f in rss1:rss0 rss2:rss00; do
		kb=$(tail -n 1 "$tmp/${f%:*}")
		kb0=$(tail -n 1 "$tmp/${f#*:}")
		echo "peak RSS: $kb KB for 200 MB, $kb0 KB for nothing"
		[ $((kb - kb0)) -lt 8192 ] ||
		    fail "peak RSS grew by $((kb - kb0)) KB for 200 MB"
	done
fi
