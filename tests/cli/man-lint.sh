#!/bin/sh
# Every page: groff -ww and mandoc -Tlint say nothing.  (Their EXAMPLES
# run in man-examples.sh; their options are checked in usage-all.sh.)
. "$top_srcdir/tests/cli/lib.sh"

n=0
for page in "$top_srcdir"/man/*.[17]; do
	n=$((n + 1))
	groff -mdoc -ww -z "$page" 2>"$tmp/groff" || fail "groff failed on $page"
	[ ! -s "$tmp/groff" ] || fail "groff on $page: $(cat "$tmp/groff")"
	if command -v mandoc >/dev/null 2>&1; then
		# .Os saop is our style; the other pages need not be installed.
		mandoc -Tlint "$page" 2>&1 | grep -v -e 'Os saop' \
		    -e 'referenced manual not found' -e 'mandoc.db' \
		    >"$tmp/lint" || true
		[ ! -s "$tmp/lint" ] || fail "mandoc -Tlint: $(cat "$tmp/lint")"
	else
		skip_part "no mandoc: $page not linted by mandoc -Tlint"
	fi
done
[ "$n" -ge 5 ] || fail "only $n pages in man/"
exit 0
