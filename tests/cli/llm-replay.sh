#!/bin/sh
# Recorded provider answers (tests/data/llm, README.md there names each
# source) replayed through the real saop-suspend by the fake server: whole,
# in chunks cut at random offsets (three seeds), and cut at several
# offsets, reset (RST) or closed by a server that sent no length and no
# chunks (FIN in the middle of an event).  Whole and chunked give the same
# record; a cut is never an OK record with a broken value: it is the whole
# record (the end had come), or suspended (75) with the part received
# saved in agent_turn_states.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
command -v sqlite3 >/dev/null 2>&1 || skip "no sqlite3"
data="$top_srcdir/tests/data/llm"
SAOP_DB="$tmp/state.sqlite"
export SAOP_DB

# cases: FIXTURE PROVIDER STATUS JQ lines, what the whole answer gives.
cases() {
	grep -v '^#' "$top_srcdir/tests/cli/replay-cases.txt"
}

rec='"request":{"messages":[{"role":"user","content":"hi"}]}'

# run TASK STATUS...: saop-suspend --no-wait on one record of task TASK;
# its output in $tmp/out; fails unless it exits with one of STATUS.
run() {
	_task=$1
	shift
	set +e
	printf '{"task_id":"%s","turn":0,%s}\n' "$_task" "$rec" |
	    saop-suspend --no-wait >"$tmp/out" 2>"$tmp/err"
	_rc=$?
	set -e
	for _w in "$@"; do
		[ "$_rc" -eq "$_w" ] && return 0
	done
	fail "$_task: exit $_rc, not $*: $(cat "$tmp/err" "$tmp/out")"
}

n=0
cases >"$tmp/cases"
while IFS='	' read -r fx prov status expr; do
	n=$((n + 1))
	size=$(wc -c <"$data/$fx")
	path=$(printf '%s' "$data/$fx" | jq -Rs .)
	cuts="$((size / 5)) $((size / 2)) $((size * 4 / 5)) $((size - 3))"
	set -- "{\"fixture\": $path}"
	for seed in 1 2 3; do
		set -- "$@" "{\"fixture\": $path, \"chunks\": \"random\", \"seed\": $seed}"
	done
	for c in $cuts; do
		set -- "$@" "{\"fixture\": $path, \"cut\": $c, \"how\": \"reset\"}" \
		    "{\"fixture\": $path, \"cut\": $c, \"how\": \"close\", \"framing\": \"close\"}"
	done
	fake_llm_start --provider "$prov" "$@"
	run "w$n" "$status"
	jqf "$expr" "$tmp/out"
	jq -S 'del(.task_id)' "$tmp/out" >"$tmp/whole"
	whole_raw=$(jq -r '.raw // ""' "$tmp/out")
	for seed in 1 2 3; do
		run "c$n-$seed" "$status"
		jq -S 'del(.task_id)' "$tmp/out" >"$tmp/chunked"
		cmp -s "$tmp/whole" "$tmp/chunked" ||
		    fail "$fx in random chunks (seed $seed): $(diff "$tmp/whole" "$tmp/chunked")"
	done
	for c in $cuts; do
		for how in reset close; do
			t="x$n-$c-$how"
			run "$t" 0 69 75
			if [ "$_rc" -ne 75 ]; then
				# The end had come before the cut: the whole
				# record, nothing less.
				# (The usage may come after the end; when
				# only the end marker was lost finish_reason
				# is null, as saop-suspend(1) says, and the
				# other choices may be cut: checked below.)
				# An RST drops what the client had not read
				# yet, so a reset stream may stop anywhere
				# before the cut: when the end marker is lost
				# with several tool calls, the last one read
				# is the record's (saop-suspend(1)): its raw
				# one of the whole record's strings (a call's
				# arguments), the calls compared no further.
				lost=$(jq '.finish_reason == null' "$tmp/out")
				jq -S --argjson l "$lost" 'del(.task_id, .usage) |
				    if $l then del(.finish_reason, .choices,
				    .raw, .tool_call, .tool_calls)
				    else . end' "$tmp/out" >"$tmp/cut"
				jq -S --argjson l "$lost" 'del(.usage) |
				    if $l then del(.finish_reason, .choices,
				    .raw, .tool_call, .tool_calls)
				    else . end' "$tmp/whole" >"$tmp/whole2"
				[ "$lost" = false ] ||
				    jq -e --slurpfile w "$tmp/whole" '.raw as $r |
				    [$w[0] | .. | strings] | index($r) != null' \
				    "$tmp/out" >/dev/null ||
				    fail "$fx cut at $c ($how): raw not the whole's: $(cat "$tmp/out")"
				jq -e --slurpfile w "$tmp/whole" '[.choices // [] |
				    to_entries[] | .key as $k | .value |
				    .raw as $r |
				    (.finish_reason == $w[0].choices[$k].finish_reason
				    or .finish_reason == null) and
				    ($w[0].choices[$k].raw | startswith($r))] | all' \
				    "$tmp/out" >/dev/null ||
				    fail "$fx cut at $c ($how): choices: $(cat "$tmp/out")"
				cmp -s "$tmp/cut" "$tmp/whole2" ||
				    fail "$fx cut at $c ($how) is not the whole record: $(diff "$tmp/whole2" "$tmp/cut")"
				continue
			fi
			jqf '.state == "PAUSED_FOR_INTERVENTION" and
			    (.finish_reason == null) and .error.status == 75' \
			    "$tmp/out"
			# The part received is saved, and it is the start
			# of the whole answer's text or call.
			part=$(sql "SELECT json_extract(turn_state_json,
			    '\$.partial') FROM agent_turn_states
			    WHERE task_id = '$t'")
			ix=$(sql "SELECT json_extract(turn_state_json,
			    '\$.tool_call.index') FROM agent_turn_states
			    WHERE task_id = '$t'")
			want=$whole_raw
			[ -z "$ix" ] || [ "$ix" -eq 0 ] ||
			    want=$(jq -r ".tool_calls[$ix].function.arguments" \
			    "$tmp/whole")
			case $want in
			"$part"*) ;;
			*) fail "$fx cut at $c ($how): saved '$part' is not the start of the answer" ;;
			esac
			grep -q "after [0-9]* bytes" "$tmp/err" ||
			    grep -q "in the middle of the answer" "$tmp/err" ||
			    fail "$fx cut at $c ($how): $(cat "$tmp/err")"
		done
	done
done <"$tmp/cases"
[ "$n" -eq "$(wc -l <"$tmp/cases")" ] || fail "only $n cases ran"
