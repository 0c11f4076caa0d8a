#!/bin/sh
# replay.sh: every fuzz target's seed corpus and every crash ever found
# (tests/fuzz/regressions/<target>/) go through the target's properties
# once, with the plain driver (replay-<target>: no clang needed).  The
# shared corpora (JSONTestSuite's texts, the recorded LLM answers) go
# through the targets that read such text.
. "$top_srcdir/tests/cli/lib.sh"
fz="$top_srcdir/tests/fuzz"
bin="$top_builddir/tests/fuzz"
for t in detect record repair schema llm-answer resume-merge; do
	set -- "$fz/$t"
	[ -d "$fz/regressions/$t" ] && set -- "$@" "$fz/regressions/$t"
	"$bin/replay-$t" "$@" || fail "replay-$t: a seed or regression broke a property"
done
need_shared corpora/JSONTestSuite/test_parsing
need_shared fixtures/llm
for t in detect repair resume-merge; do
	"$bin/replay-$t" "$SAOP_SHARED/corpora/JSONTestSuite/test_parsing" ||
	    fail "replay-$t: a JSONTestSuite text broke a property"
done
"$bin/replay-llm-answer" "$SAOP_SHARED/fixtures/llm" ||
    fail "replay-llm-answer: a recorded answer broke a property"
