#!/bin/sh
# The repair corpus (tests/repair/corpus.ndjson: 400 and more cases, each
# an answer and its intended value or a refusal) through saop's local
# repair.  Prints right / wrong / refused; fails on any wrong value and on
# any case that is not as intended (a repair lost, a refusal turned into a
# guess).
. "$top_srcdir/tests/cli/lib.sh"
out=$(repair-corpus "$top_srcdir/tests/repair/corpus.ndjson") ||
	fail "repair corpus: $out"
echo "$out"
n=$(wc -l < "$top_srcdir/tests/repair/corpus.ndjson")
[ "$n" -ge 400 ] || fail "the corpus has $n cases, fewer than 400"
