#!/bin/sh
# saop-validate short of memory: a 6 MB record under a limit on address
# space (ulimit -v) just above what reading it takes is not parsed whole
# by the fast parser, and jansson's reader, which aborts or reads past
# its buffer when an allocation fails on so long a text, is not asked:
# the line is named ("line 1: out of memory"), handed on unchanged, the
# next record is validated, and the run ends with 70.  A record read
# whole whose answer has no memory to be parsed is written with its
# error (70, "out of memory"), not judged invalid.  Under ASan (no limit
# on address space possible) only the latter, with allocations over 4 MB
# refused.
. "$top_srcdir/tests/cli/lib.sh"

xs=$(head -c 6000000 /dev/zero | tr '\0' x)
printf '{"task_id": "big", "turn": 1, "raw": "{\\"saop\\": \\"1.0\\", \\"turn_index\\": 0, \\"agent_role\\": \\"developer\\", \\"thought\\": \\"%s\\", \\"action\\": {\\"tool\\": \\"ls\\", \\"parameters\\": {}}}"}\n' "$xs" >"$tmp/in"
unset xs
printf '{"task_id": "small", "turn": 2, "raw": "{\\"saop\\": \\"1.0\\"}"}\n' >>"$tmp/in"

# check WHAT: line 2 validated, line 1's want of memory said.
check() {
	jqf '.task_id == "small" and .state == "INVALID" and
	    .validate.valid == false' "$tmp/out.2"
	grep -q '^saop-validate: line 1: out of memory$' "$tmp/err" ||
	    fail "$1: $(head -c 500 "$tmp/err")"
}

# split: the output's two lines into out.1 and out.2.
split_out() {
	[ "$(wc -l <"$tmp/out")" -eq 2 ] || fail "$1: $(wc -l <"$tmp/out") lines out"
	head -1 "$tmp/out" >"$tmp/out.1"
	tail -1 "$tmp/out" >"$tmp/out.2"
}

# The answer short of memory: a record whose answer is an array of a
# million items (jansson's table of them alone is 8 MB), then a small one.
items=$(head -c 1000000 /dev/zero | tr '\0' 0 | sed 's/0/0,/g')
printf '{"task_id": "big", "turn": 1, "raw": "[%s0]"}\n' "$items" >"$tmp/arr"
unset items
tail -1 "$tmp/in" >>"$tmp/arr"

# arr_check WHAT: the big record written with its error (70), not judged.
arr_check() {
	split_out "$1"
	jqf '.task_id == "big" and .error.status == 70 and
	    .error.message == "out of memory" and (.raw | startswith("[0,0,")) and
	    (has("validate") | not)' "$tmp/out.1"
	check "$1"
}

if grep -q -e '--enable-sanitizers' "$top_builddir/config.status" 2>/dev/null; then
	expect_status 70 env ASAN_OPTIONS="${ASAN_OPTIONS:-}:allocator_may_return_null=1:max_allocation_size_mb=4:log_path=$tmp/san" \
	    UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$tmp/san" \
	    saop-validate "$tmp/arr" >"$tmp/out" 2>"$tmp/err"
	arr_check asan
	for f in "$tmp"/san.*; do
		[ -f "$f" ] || continue
		! grep -v -e 'AddressSanitizer failed to allocate' -e '^$' "$f" >&2 ||
		    fail "a sanitizer report: $f"
	done
	exit 0
fi

(ulimit -v 14336) 2>/dev/null || skip "ulimit -v cannot be set here"
# Where the window begins (the limit at which the 6 MB line can be read
# whole but not parsed) depends on the build (shared or static, gcov's
# runtime) and the machine's libraries: found first, in 256 KB steps from
# 8 MB; below it the line cannot even be read ("out of memory reading
# line 1", 70, the run ends: nothing can be handed on).
lo=8192
while :; do
	set +e
	(ulimit -v $lo && exec saop-validate "$tmp/in" >"$tmp/out" 2>"$tmp/err")
	rc=$?
	set -e
	[ "$rc" -eq 70 ] || fail "ulimit -v $lo: exited $rc, not 70: $(head -c 500 "$tmp/err")"
	[ "$(wc -l <"$tmp/out")" -eq 0 ] || break
	grep -q '^saop-validate: out of memory reading line 1$' "$tmp/err" ||
	    fail "ulimit -v $lo: $(head -c 500 "$tmp/err")"
	lo=$((lo + 256))
	[ "$lo" -le 40960 ] || fail "no limit up to 40 MB reads the 6 MB line"
done
echo "validate-memory: the line is read whole from ulimit -v $lo" >&2
for kb in $lo $((lo + 1024)) $((lo + 2048)) $((lo + 3072)) $((lo + 4096)) $((lo + 5120)); do
	set +e
	(ulimit -v $kb && exec saop-validate "$tmp/in" >"$tmp/out" 2>"$tmp/err")
	rc=$?
	set -e
	[ "$rc" -eq 70 ] || fail "ulimit -v $kb: exited $rc, not 70: $(head -c 500 "$tmp/err")"
	split_out "ulimit -v $kb"
	head -1 "$tmp/in" | cmp -s - "$tmp/out.1" ||
	    fail "ulimit -v $kb: the line short of memory not handed on unchanged"
	check "ulimit -v $kb"
done
kb=$((lo + 2048))
set +e
(ulimit -v $kb && exec saop-validate "$tmp/arr" >"$tmp/out" 2>"$tmp/err")
rc=$?
set -e
[ "$rc" -eq 70 ] || fail "the array under ulimit -v $kb: exited $rc, not 70"
arr_check "the array under ulimit -v $kb"
exit 0
