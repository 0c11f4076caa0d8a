#!/bin/sh
# Every program: --help (stdout, 0), --version, a bad option (64).
. "$top_srcdir/tests/cli/lib.sh"
n=0
for t in saop-detect saop-resume saop-validate saop-prune saop-suspend \
    saop-report saop-mock; do
	command -v "$t" >/dev/null 2>&1 || continue
	n=$((n + 1))
	expect_status 0 "$t" --help >"$tmp/help"
	grep -q "^usage: $t " "$tmp/help" || fail "$t --help: no usage line"
	# The common options: a record program's (--db), or saop-mock's
	# basic ones.
	case $t in
	saop-mock) common=--verbose ;;
	*) common=--db ;;
	esac
	grep -q -- "$common" "$tmp/help" || fail "$t --help: no common options"
	expect_status 0 "$t" --version >"$tmp/ver"
	grep -qx "$t (saop) [0-9.]*" "$tmp/ver" || fail "$t --version: $(cat "$tmp/ver")"
	expect_status 64 "$t" --no-such-option </dev/null >/dev/null 2>"$tmp/err"
	grep -q 'usage:' "$tmp/err" || fail "$t: a bad option does not print usage"
	# Every option --help lists is in the man page.
	man="$top_srcdir/man/$t.1"
	[ -f "$man" ] || fail "no man page $man"
	groff -mdoc -Tascii -P-cbou "$man" 2>/dev/null >"$tmp/man.txt"
	for o in $(grep -o -- ' --[a-z][a-z-]*' "$tmp/help" | sort -u); do
		grep -q -F -- "$o" "$tmp/man.txt" ||
		    fail "$t: option $o of --help is not in $man"
	done
done
[ "$n" -gt 0 ] || fail "no saop program was found in PATH"
