#!/bin/sh
# ci-resume.sh: a CI step (any CI system's plain shell step) that finishes
# the turns an earlier job left suspended.  The earlier job ran the
# pipeline and exited 75 (the network was lost; saop-suspend saved the
# turn in state.sqlite); the CI system kept .saop/ as a cache or artifact
# and restores it before this step.
#
#	SAOP_DB=.saop/state.sqlite examples/ci-resume.sh [OUT]
#
# Resumes every saved turn (saop-suspend --resume), runs what it answers
# through the rest of the pipeline, appends the records to OUT (default
# resumed.ndjson) and ends with the pipeline's verdict: 0 all done (also
# when nothing was saved), 75 still suspended (the step should be retried
# later: keep .saop/ again), 3 a person is needed, anything else a failure.
set -eu
out=${1:-resumed.ndjson}
st=$(mktemp -d "${TMPDIR:-/tmp}/ci-resume.XXXXXX")
trap 'rm -rf "$st"' EXIT
saved=$(saop-suspend --list | sed 1d | wc -l)
echo "ci-resume: $saved saved turn(s)"
[ "$saved" -gt 0 ] || exit 0
set +e
{ saop-suspend --resume; echo $? >"$st/suspend"; } |
    { saop-detect; echo $? >"$st/detect"; } |
    { saop-resume; echo $? >"$st/resume"; } |
    { saop-validate; echo $? >"$st/validate"; } >>"$out"
set -e
# The worst verdict: 75 (still suspended) or a failure first, then 3.
rc=0
for s in suspend detect resume validate; do
	v=$(cat "$st/$s")
	case $v in
	0 | 1) ;;
	3) [ "$rc" -ne 0 ] || rc=3 ;;
	*) rc=$v ;;
	esac
done
# 1 (flagged) from the last stage is an output left invalid: a failure.
[ "$rc" -ne 0 ] || [ "$(cat "$st/validate")" -eq 0 ] || rc=1
echo "ci-resume: $(saop-suspend --list | sed 1d | wc -l) turn(s) still saved, status $rc"
exit "$rc"
