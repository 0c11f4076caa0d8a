#!/bin/sh
# Every page: groff -ww and mandoc -Tlint -W warning say nothing; all pages
# carry one date; the rendering has no stray words made of macro names
# (a "-when -given" or "-closed" from an argument Fl took) and no lone
# quoted quote.
# (Their EXAMPLES run in man-examples.sh; their options are checked in
# options-tables.sh.)
. "$top_srcdir/tests/cli/lib.sh"

n=0
for page in "$top_srcdir"/man/*.[17]; do
	n=$((n + 1))
	groff -mdoc -ww -z "$page" 2>"$tmp/groff" || fail "groff failed on $page"
	[ ! -s "$tmp/groff" ] || fail "groff on $page: $(cat "$tmp/groff")"
	if command -v mandoc >/dev/null 2>&1; then
		mandoc -Tlint -W warning "$page" >"$tmp/lint" 2>&1 || true
		[ ! -s "$tmp/lint" ] || fail "mandoc -Tlint -W warning: $(cat "$tmp/lint")"
		mandoc -Tascii "$page" | col -b >"$tmp/txt"
	else
		[ -z "${SAOP_REQUIRE_ALL:-}" ] || fail "no mandoc (scripts/deps installs it)"
		groff -mdoc -Tascii -P-cbou "$page" >"$tmp/txt" 2>/dev/null
	fi
	# Words that a macro line turned into flags: "-when", "-given", a
	# "-closed" after "Fl Fl close ,"; saop's short options are one
	# letter, so a word of three after one dash is never one.
	! grep -n -E '(^|[ (])-((when|given|of|the|and|or|a|if)([ ,.)]|$)|[a-z][a-z-]{2,})' \
	    "$tmp/txt" >"$tmp/stray" || fail "$page: stray flags: $(cat "$tmp/stray")"
	# A quoted lone double quote renders as `"' and reads unbalanced.
	! grep -n -F "\`\"'" "$tmp/txt" >"$tmp/q" || fail "$page: $(cat "$tmp/q")"
	sed -n 's/^\.Dd //p' "$page" >>"$tmp/dates"
done
[ "$n" -ge 5 ] || fail "only $n pages in man/"
[ "$(sort -u "$tmp/dates" | wc -l)" -eq 1 ] ||
    fail "the pages carry different dates: $(sort "$tmp/dates" | uniq -c)"
exit 0
