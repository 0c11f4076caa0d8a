#!/bin/sh
# scripts/demo (issue 34): it keeps the build's noise (autoreconf's
# "installing build-aux/...") to itself unless the build fails, and ends
# saying where the programs are and how to put them on PATH.  Run in a
# copy of the tree whose scripts/deps does nothing and whose
# scripts/build is a stand-in that makes that noise and links build/src
# to the programs built here.
. "$top_srcdir/tests/cli/lib.sh"
for t in jq sqlite3; do
	command -v "$t" >/dev/null 2>&1 || skip "no $t"
done
unset SAOP_API_KEY OPENAI_API_KEY ANTHROPIC_API_KEY SAOP_DB 2>/dev/null || true
src=$(cd "$top_builddir/src" && pwd)
t="$tmp/tree"
mkdir -p "$t/scripts" "$t/tests"
cp "$top_srcdir/scripts/demo" "$t/scripts/demo"
ln -s "$top_srcdir/examples" "$t/examples"
printf '#!/bin/sh\nexit 0\n' >"$t/scripts/deps"
cat >"$t/scripts/build" <<BUILD
#!/bin/sh
echo "autoreconf: installing 'build-aux/compile'" >&2
echo "libtoolize: copying file 'build-aux/ltmain.sh'"
mkdir -p "$t/build"
ln -sfn "$src" "$t/build/src"
[ ! -e "$tmp/fail-build" ] || { echo "configure: error: no jansson" >&2; exit 1; }
BUILD
chmod +x "$t/scripts/demo" "$t/scripts/deps" "$t/scripts/build"
sh "$t/scripts/demo" >"$tmp/out" 2>"$tmp/err" ||
    fail "scripts/demo exited $?: $(tail -5 "$tmp/err")"
! grep -n -e installing -e build-aux "$tmp/out" "$tmp/err" ||
    fail "the build's noise came through"
tail -2 "$tmp/out" >"$tmp/end"
grep -qF "demo: the programs are in $t/build/src;" "$tmp/end" ||
    fail "no word of where the programs are: $(cat "$tmp/end")"
grep -qF "export PATH=\"$t/build/src:\$PATH\"" "$tmp/end" ||
    fail "no word of PATH: $(cat "$tmp/end")"
grep -q 'saop-report' "$tmp/out" || fail "the demo did not run: $(cat "$tmp/out")"
# A build that fails shows all it said, and the demo stops.
: >"$tmp/fail-build"
expect_status 1 sh "$t/scripts/demo" >"$tmp/out" 2>"$tmp/err"
grep -q 'installing' "$tmp/err" && grep -q 'no jansson' "$tmp/err" ||
    fail "a failed build's words: $(cat "$tmp/err")"
exit 0
