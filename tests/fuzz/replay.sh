#!/bin/sh
# replay.sh: every fuzz target's seed corpus and every input that ever
# broke it (tests/fuzz/regressions/<target>/) go through the target's
# properties once, with the plain driver (replay-<target>: no clang
# needed).  The corpora of the tree (JSONTestSuite's texts, the recorded
# LLM answers of tests/fixtures/llm and tests/data/llm) go through the
# targets that read such text.  Every target is
# run; the test fails when any broke, naming each.
. "$top_srcdir/tests/cli/lib.sh"
fz="$top_srcdir/tests/fuzz"
bin="$top_builddir/tests/fuzz"
broken=

# replay T PATH...: replay PATHs through target T, one input at a time when
# the whole run breaks, to name every input that breaks it.
replay() {
	_t=$1
	shift
	"$bin/replay-$_t" "$@" && return 0
	for _p in "$@"; do
		for _f in $(find "$_p" -type f ! -name README | sort); do
			"$bin/replay-$_t" "$_f" >/dev/null 2>"$tmp/err" && continue
			echo "BROKEN: $_t: $_f: $(grep -m1 -E 'property broken|ERROR|runtime error' "$tmp/err")" >&2
		done
	done
	broken="$broken $_t"
}

for t in detect record repair schema llm-answer resume-merge turn-state wrapper \
    resume-protocol eventstream; do
	set -- "$fz/$t"
	[ -d "$fz/regressions/$t" ] && set -- "$@" "$fz/regressions/$t"
	replay "$t" "$@"
done
# The recorded provider answers (tests/data/llm/README.md).
replay llm-answer "$top_srcdir/tests/data/llm"
for t in detect repair resume-merge wrapper; do
	replay "$t" "$corpora/JSONTestSuite/test_parsing"
done
replay llm-answer "$fixtures/llm"
[ -z "$broken" ] || fail "properties broken in:$broken (inputs above)"
