#!/bin/sh
# -o FILE: the output goes to a temporary file beside FILE, renamed over it
# only when the run ends with status 0, 1 or 3; a failed run (64 and up)
# leaves no file, or the old one as it was, and no temporary file.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"
mkdir "$tmp/d"
printf '{"raw": "[1]"}\n{"raw": "[2"}\n' >"$tmp/in"

# no_temp: nothing but the named files in $tmp/d.
no_temp() {
	[ -z "$(ls -A "$tmp/d" | grep -v -x -e out -e old)" ] ||
	    fail "$1: files left: $(ls -A "$tmp/d")"
}

# A run that goes through: the file holds what stdout would.
expect_status 1 saop-detect --output "$tmp/d/out" "$tmp/in" >"$tmp/stdout"
[ ! -s "$tmp/stdout" ] || fail "-o: records also on stdout"
saop-detect "$tmp/in" >"$tmp/want" || true
cmp -s "$tmp/want" "$tmp/d/out" || fail "-o: $(cat "$tmp/d/out")"
[ "$(stat -c %a "$tmp/d/out")" = "$(umask 0022; : >"$tmp/m"; stat -c %a "$tmp/m")" ] ||
    [ "$(stat -c %a "$tmp/d/out")" != 600 ] || fail "-o: made 0600, not as > would"
no_temp "a good run"
rm -f "$tmp/d/out"

# A line that is not a record: 65, no file.
printf '{"raw": "[1]"}\nnot a record\n' >"$tmp/bad"
expect_status 65 saop-detect -o "$tmp/d/out" "$tmp/bad" 2>/dev/null
[ ! -e "$tmp/d/out" ] || fail "a failed run (65) left $tmp/d/out"
no_temp "65"

# A missing input (66) and a usage error after -o (64): no file.
expect_status 66 saop-detect -o "$tmp/d/out" "$tmp/no-such" 2>/dev/null
[ ! -e "$tmp/d/out" ] || fail "a failed run (66) left $tmp/d/out"
expect_status 64 saop-detect -o "$tmp/d/out" --max-depth 0 "$tmp/in" 2>/dev/null
[ ! -e "$tmp/d/out" ] || fail "a usage error left $tmp/d/out"
no_temp "66 and 64"

# An old target is kept as it was when the run fails.
echo old >"$tmp/d/old"
expect_status 65 saop-detect -o "$tmp/d/old" "$tmp/bad" 2>/dev/null
[ "$(cat "$tmp/d/old")" = old ] || fail "a failed run changed the old file"
expect_status 1 saop-detect -o "$tmp/d/old" "$tmp/in"
cmp -s "$tmp/want" "$tmp/d/old" || fail "a good run did not replace the old file"
no_temp "old"
rm -f "$tmp/d/old"

# A model that refuses for good (69): the records pass on, but no file.
fake_llm_start '{"status": 401}'
printf '{"request": {"messages": [{"role": "user", "content": "hi"}]}}\n' >"$tmp/req"
expect_status 69 saop-suspend -o "$tmp/d/out" "$tmp/req" 2>/dev/null
[ ! -e "$tmp/d/out" ] || fail "a refused call (69) left $tmp/d/out"
no_temp "69"

# A directory that cannot be written: 73, said.
expect_status 73 saop-detect -o "$tmp/no-dir/out" "$tmp/in" 2>"$tmp/err"
grep -q "cannot write $tmp/no-dir/out" "$tmp/err" || fail "no message: $(cat "$tmp/err")"
exit 0
