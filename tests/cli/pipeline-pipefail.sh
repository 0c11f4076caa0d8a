#!/bin/sh
# The README's pipeline under bash's set -euo pipefail, as CI scripts run
# it: an answer cut by the token limit is flagged by saop-detect and
# continued by saop-resume; the pipeline succeeds when every record ends
# OK (a middle stage's flagged record, handed on through a pipe, is the
# last stage's to report: saop(7), EXIT STATUS), and fails when one does
# not.  SAOP_STRICT=1 gives back each stage's own verdict.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

command -v bash >/dev/null 2>&1 || skip "no bash"
# README.md's turn, its system message asking for the envelope.
sed -n 's/^    \({"task_id": "first".*\)$/\1/p' "$top_srcdir/README.md" \
    >"$tmp/turn.ndjson"
[ "$(wc -l <"$tmp/turn.ndjson")" -eq 1 ] || fail "no turn in README.md"
line=$(sed -n 's/^    \(saop-prune <turn.ndjson | .*\) >out.ndjson$/\1/p' \
    "$top_srcdir/README.md" | head -1)
[ -n "$line" ] || fail "no pipeline in README.md"
head='{\"saop\": \"1.0\", \"turn_index\": 0, \"agent_role\": \"researcher\", '
ok='\"thought\": \"none\", \"action\": null}'
bad='\"thought\": 7, \"action\": null}'
pipeline() {
	(cd "$tmp" && bash -c "set -euo pipefail; $line >out.ndjson")
}
# The same, saying each stage's status in st.
statuses() {
	(cd "$tmp" && bash -c "set -uo pipefail; if $line >out.ndjson; then
	    echo \"\${PIPESTATUS[*]}\" >st; else
	    echo \"\${PIPESTATUS[*]}\" >st; exit 1; fi")
}

# Cut by the token limit, continued: every record ends OK, status 0.
fake_llm_start "{\"text\": \"$head\", \"finish\": \"length\"}" \
    "{\"text\": \"$ok\"}"
pipeline || fail "a recovered pipeline failed: $(cat "$tmp/st" 2>/dev/null)"
jqf '.state == "OK" and
    .resume.status == "RESOLVED" and .envelope.thought == "none"' \
    "$tmp/out.ndjson"

# Each stage's own verdict with SAOP_STRICT=1: saop-detect flags it.
fake_llm_start "{\"text\": \"$head\", \"finish\": \"length\"}" \
    "{\"text\": \"$ok\"}"
(export SAOP_STRICT=1; statuses) && fail "SAOP_STRICT=1: pipefail saw no flag"
[ "$(cat "$tmp/st")" = "0 0 1 0 0" ] 2>/dev/null ||
    fail "SAOP_STRICT=1 statuses: $(cat "$tmp/st" 2>/dev/null)"

# Continued into an answer that is not the envelope: the pipeline fails.
fake_llm_start --repeat-last "{\"text\": \"$head\", \"finish\": \"length\"}" \
    "{\"text\": \"$bad\"}"
pipeline && fail "a record not OK, yet the pipeline succeeded"
jqf '.state != "OK"' "$tmp/out.ndjson"
exit 0
