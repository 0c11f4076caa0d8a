#!/bin/sh
# saop-validate short of memory: a 6 MB record under a 14-19 MB limit on
# address space (ulimit -v) is not read whole by the fast parser, and
# jansson's reader, which aborts or reads past its buffer when an
# allocation fails on so long a text, is not asked: the line is named
# ("line 1: out of memory"), handed on unchanged, the next record is
# validated, and the run ends with 70.  Under ASan (no limit on address
# space possible) the same with allocations over 4 MB refused, on a
# record whose array jansson cannot grow.
. "$top_srcdir/tests/cli/lib.sh"

xs=$(head -c 6000000 /dev/zero | tr '\0' x)
printf '{"task_id": "big", "turn": 1, "raw": "{\\"saop\\": \\"1.0\\", \\"turn_index\\": 0, \\"agent_role\\": \\"developer\\", \\"thought\\": \\"%s\\", \\"action\\": {\\"tool\\": \\"ls\\", \\"parameters\\": {}}}"}\n' "$xs" >"$tmp/in"
unset xs
printf '{"task_id": "small", "turn": 2, "raw": "{\\"saop\\": \\"1.0\\"}"}\n' >>"$tmp/in"

# check WHAT: line 1 handed on as it came, line 2 validated, the error said.
check() {
	head -1 "$tmp/in" | cmp -s - "$tmp/out.1" ||
	    fail "$1: the record short of memory not handed on unchanged"
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

if grep -q -e '--enable-sanitizers' "$top_builddir/config.status" 2>/dev/null; then
	# A million items: jansson's table of them is 8 MB.
	items=$(head -c 1000000 /dev/zero | tr '\0' 0 | sed 's/0/0,/g')
	printf '{"task_id": "big", "turn": 1, "raw": "[%s0]"}\n' "$items" >"$tmp/in"
	unset items
	printf '{"task_id": "small", "turn": 2, "raw": "{\\"saop\\": \\"1.0\\"}"}\n' >>"$tmp/in"
	expect_status 70 env ASAN_OPTIONS="${ASAN_OPTIONS:-}:allocator_may_return_null=1:max_allocation_size_mb=4:log_path=$tmp/san" \
	    UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$tmp/san" \
	    saop-validate "$tmp/in" >"$tmp/out" 2>"$tmp/err"
	split_out asan
	check asan
	for f in "$tmp"/san.*; do
		[ -f "$f" ] || continue
		! grep -v -e 'AddressSanitizer failed to allocate' -e '^$' "$f" >&2 ||
		    fail "a sanitizer report: $f"
	done
	exit 0
fi

(ulimit -v 14336) 2>/dev/null || skip "ulimit -v cannot be set here"
for kb in 14336 15360 16384 17408 18432 19456; do
	set +e
	(ulimit -v $kb && exec saop-validate "$tmp/in" >"$tmp/out" 2>"$tmp/err")
	rc=$?
	set -e
	[ "$rc" -eq 70 ] || fail "ulimit -v $kb: exited $rc, not 70: $(head -c 500 "$tmp/err")"
	split_out "ulimit -v $kb"
	check "ulimit -v $kb"
done
exit 0
