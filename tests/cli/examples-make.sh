#!/bin/sh
# examples/Makefile with make -j4 against the stand-in: four files of
# turns built through the five stages in parallel (one shared
# state.sqlite), one of them truncated and resumed; nothing is rebuilt on
# a second run; a turn that needs a person (saop-validate exits 3) stops
# the build at that stage and leaves no output for it.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

command -v make >/dev/null 2>&1 || skip "no make"
cd "$tmp"
mkdir turns
env='{"saop": "1.0", "turn_index": 0, "agent_role": "developer", "thought": "Q%s answered.", "action": null}'
set --
for n in 1 2 3 4; do
	jq -nc --arg n "$n" '{task_id: "make-\($n)", turn: 0, request:
	    {messages: [{role: "user", content: "Question \($n)?"}]}}' \
	    >"turns/q$n.ndjson"
	# shellcheck disable=SC2059
	e=$(printf "$env" "$n")
	if [ "$n" = 3 ]; then
		# Cut at max_tokens, then the rest (the resume call).
		set -- "$@" "$(jq -nc --arg t "$(printf '%s' "$e" | cut -c1-40)" \
		    '{match: "Question 3?", text: $t, finish: "length"}')" \
		    "$(jq -nc --arg t "$(printf '%s' "$e" | cut -c41-)" \
		    '{match: "Question 3?", text: $t}')"
	else
		set -- "$@" "$(jq -nc --arg t "$e" --arg m "Question $n?" \
		    '{match: $m, text: $t}')"
	fi
done
fake_llm_start "$@"
mk() {
	# The example as a user runs it: not a submake of make check's
	# (whose -s would hide "Nothing to be done").
	MAKEFLAGS= MFLAGS= MAKELEVEL= make -f "$top_srcdir/examples/Makefile" -j4 "$@" >make.log 2>&1
}
mk || fail "make -j4 failed: $(cat make.log)"
for n in 1 2 3 4; do
	jq -e --arg n "$n" '.state == "OK" and
	    .envelope.thought == "Q\($n) answered."' "out/q$n.ndjson" \
	    >/dev/null || fail "out/q$n.ndjson: $(cat "out/q$n.ndjson")"
done
jqf '.resume.status == "RESOLVED"' out/q3.ndjson
[ "$(fake_llm_requests | wc -l)" -eq 5 ] || fail "not 5 model calls"
[ "$(sql 'SELECT count(*) FROM partial_completion_log')" -eq 1 ] ||
    fail "resume not logged"
# Up to date: nothing runs again.
mk || fail "second make failed"
grep -q 'Nothing to be done' make.log || fail "rebuilt: $(cat make.log)"
[ "$(fake_llm_requests | wc -l)" -eq 5 ] || fail "calls on the second make"

# A turn outside the envelope, corrected wrong twice: validate exits 3,
# make stops with an error, and out/q5.ndjson is not made.
bad='{"saop": "1.0", "turn_index": 0, "agent_role": "boss", "thought": "Q5."}'
s=$(jq -nc --arg t "$bad" '{text: $t}')
fake_llm_start "$s" "$s" "$s"
jq -nc '{task_id: "make-5", turn: 0, request: {messages: [{role: "user",
    content: "Question 5?"}]}}' >turns/q5.ndjson
set +e
mk
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "make did not stop: $(cat make.log)"
[ ! -e out/q5.ndjson ] || fail "out/q5.ndjson made"
[ -e out/q5.resumed ] || fail "the stages before saop-validate did not run"
grep -q 'Error 3' make.log || fail "not stopped by saop-validate's 3: $(cat make.log)"
exit 0
