#!/bin/sh
# agent-loop.sh: a complete agent loop in POSIX sh on top of saop.
#
#	examples/agent-loop.sh TASK "what the user asks"
#
# Each turn: build the turn record from the conversation with jq, run it
# through the pipeline
#	saop-prune | saop-suspend | saop-detect | saop-resume | saop-validate
# act on the envelope's action (run the tool it names), append the answer and
# the tool's output to the conversation, and go on until the action is null.
#
# Exit 0: the agent finished (action null).  Exit 3: a person is needed
# (USER_ESCALATION: the model kept answering outside the envelope).  Exit 75:
# the network was lost and the turn is saved in state.sqlite: run the same
# command again later; it resumes the saved turn (saop-suspend --resume)
# before going on.  Any other status is a stage's own failure (see saop(7)).
#
# The conversation lives in $AGENT_DIR (default .agent/TASK/): messages.json
# and turn.  The model is the one saop(7) configures (SAOP_API_BASE...).
# Tools: "word_count" {"text"} and "date" {}; anything else is answered
# "unknown tool".  AGENT_MAX_TURNS (default 20) bounds the loop.
set -eu
[ $# -ge 1 ] || { echo "usage: agent-loop.sh TASK [REQUEST]" >&2; exit 64; }
task=$1
dir=${AGENT_DIR:-.agent/$task}
mkdir -p "$dir"
export SAOP_TASK_ID="$task"

if [ ! -f "$dir/messages.json" ]; then
	[ $# -ge 2 ] || { echo "agent-loop: a new task needs a request" >&2; exit 64; }
	jq -n --arg q "$2" '[{role: "system", content:
	    "You are a SAOP agent. Answer with one SAOP envelope v1 JSON object."},
	    {role: "user", content: $q}]' >"$dir/messages.json"
	echo 0 >"$dir/turn"
fi

# run_tool NAME PARAMETERS: the tool's output on stdout.
run_tool() {
	case $1 in
	word_count) printf '%s' "$2" | jq -j '.text // ""' | wc -w | tr -d ' ' ;;
	date) date -u +%Y-%m-%dT%H:%M:%SZ ;;
	*) echo "unknown tool: $1" ;;
	esac
}

# pipeline: the stages after saop-suspend, each status in $dir/st.NAME
# (a POSIX sh has no PIPESTATUS); reads the record on stdin.
after_call() {
	{ saop-detect; echo $? >"$dir/st.detect"; } |
	    { saop-resume; echo $? >"$dir/st.resume"; } |
	    { saop-validate; echo $? >"$dir/st.validate"; }
}

# worst: the worst status of the stages (75 and 3 win over 1).
worst() {
	w=0
	for s in "$dir"/st.*; do
		v=$(cat "$s")
		case $v in
		0) ;;
		1) [ "$w" -ne 0 ] || w=1 ;;
		3) [ "$w" -eq 75 ] || w=3 ;;
		*) w=$v ;;
		esac
	done
	echo "$w"
}

max=${AGENT_MAX_TURNS:-20}
while :; do
	turn=$(cat "$dir/turn")
	[ "$turn" -lt "$max" ] || { echo "agent-loop: $max turns, stopping" >&2; exit 1; }
	rm -f "$dir"/st.*
	set +e
	if saop-suspend --list 2>/dev/null | sed 1d | cut -f 1 |
	    grep -qx -- "$task"; then
		# A turn saved by an earlier run: finish it first.
		echo "agent-loop: resuming the saved turn of $task" >&2
		{ saop-suspend --resume "$task"; echo $? >"$dir/st.suspend"; } |
		    after_call >"$dir/out.ndjson"
	else
		jq -c -n --arg t "$task" --argjson n "$turn" \
		    --slurpfile m "$dir/messages.json" \
		    '{task_id: $t, turn: $n, request: {max_tokens: 1024,
		    messages: $m[0]}}' |
		    { saop-prune; echo $? >"$dir/st.prune"; } |
		    { saop-suspend; echo $? >"$dir/st.suspend"; } |
		    after_call >"$dir/out.ndjson"
	fi
	set -e
	status=$(worst)
	case $status in
	0) ;;
	75) echo "agent-loop: network lost, turn $turn saved: run again later" >&2
	    exit 75 ;;
	3) echo "agent-loop: turn $turn needs a person (USER_ESCALATION)" >&2
	    exit 3 ;;
	*) echo "agent-loop: turn $turn: the pipeline exited $status" >&2
	    exit "$status" ;;
	esac
	rec=$(cat "$dir/out.ndjson")
	action=$(printf '%s\n' "$rec" | jq -c '.envelope.action')
	echo "agent-loop: turn $turn: $(printf '%s\n' "$rec" | jq -r '.envelope.thought')" >&2
	printf '%s\n' "$rec" | jq -c '{role: "assistant", content: (.envelope | tojson)}' \
	    >"$dir/answer.json"
	if [ "$action" = null ]; then
		jq --slurpfile a "$dir/answer.json" '. + $a' "$dir/messages.json" \
		    >"$dir/m.t" && mv "$dir/m.t" "$dir/messages.json"
		echo "agent-loop: done after $((turn + 1)) turns" >&2
		exit 0
	fi
	tool=$(printf '%s' "$action" | jq -r '.tool')
	output=$(run_tool "$tool" "$(printf '%s' "$action" | jq -c '.parameters')")
	jq --slurpfile a "$dir/answer.json" --arg tool "$tool" --arg out "$output" \
	    '. + $a + [{role: "user", content: "Tool \($tool) returned:\n\($out)"}]' \
	    "$dir/messages.json" >"$dir/m.t" && mv "$dir/m.t" "$dir/messages.json"
	echo $((turn + 1)) >"$dir/turn"
done
