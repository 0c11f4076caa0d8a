#!/bin/sh
# A damaged answer is never merged (issue 8, defect 4): an SSE event in the
# middle of the stream that does not parse, or has no known shape, makes
# the call fail as not the protocol (76), naming the event; saop-resume
# leaves the record as it was and saop-validate takes no envelope from it.
# Both wire formats.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"

# step PROVIDER BAD TEXT...: a step of saop-mock's script serving an SSE
# stream that has each TEXT as a delta, with the event BAD (its lines)
# after the second.
step() {
	_st_prov=$1
	_st_bad=$2
	shift 2
	jq -nc --arg prov "$_st_prov" --arg bad "$_st_bad" '
	def ev(t): if $prov == "openai" then "data: " + ({choices: [{index: 0,
	    delta: {content: t}}]} | tojson) + "\n\n"
	    else "event: content_block_delta\ndata: " + ({type:
	    "content_block_delta", index: 0, delta: {type: "text_delta",
	    text: t}} | tojson) + "\n\n" end;
	(if $bad == "" then "" else ($bad | sub("\n+$"; "")) + "\n\n" end)
	    as $b |
	(if $prov == "openai" then "" else
	    "event: message_start\ndata: {\"type\":\"message_start\"," +
	    "\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}" +
	    "\n\nevent: content_block_start\ndata: {\"type\":" +
	    "\"content_block_start\",\"index\":0,\"content_block\":" +
	    "{\"type\":\"text\",\"text\":\"\"}}\n\nevent: ping\n" +
	    "data: {\"type\": \"ping\"}\n\n" end) +
	([$ARGS.positional | to_entries[] | ev(.value) +
	    (if .key == 1 then $b else "" end)] | add // "") +
	(if $prov == "openai" then "data: {\"choices\":[{\"index\":0," +
	    "\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	else "event: content_block_stop\ndata: {\"type\":" +
	    "\"content_block_stop\",\"index\":0}\n\nevent: message_delta\n" +
	    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":" +
	    "\"end_turn\"},\"usage\":{\"output_tokens\":4}}\n\n" +
	    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	end) | {body: ., type: "text/event-stream"}' --args "$@"
}

req='"request":{"messages":[{"role":"user","content":"JSON please"}]}'
# Cut between tokens: a cut inside a number would leave it open whether
# the model carries the number on or sends it again (saop-resume(1)).
printf '{%s,"raw":"{\\"a\\": ["}\n' "$req" >"$tmp/trunc.ndjson"
printf '{%s,"raw":"{\\"saop\\": \\"1.0\\""}\n' "$req" >"$tmp/invalid.ndjson"
env='{"saop": "1.0", "turn_index": 0, "agent_role": "developer", '
env=$env'"thought": "t", "action": null}'

for provider in openai anthropic; do
	# The stream without the bad event: merged, as before.
	fake_llm_start --provider "$provider" \
	    "$(step "$provider" '' 1 ', 2' '3]}')"
	saop-resume "$tmp/trunc.ndjson" >"$tmp/out" 2>"$tmp/err" ||
	    fail "$provider: a sound stream: $(cat "$tmp/err")"
	jq -e '.raw == "{\"a\": [1, 23]}" and .resume.status == "RESOLVED"' \
	    "$tmp/out" >/dev/null || fail "$provider: $(cat "$tmp/out")"

	for bad in 'data: {"delta":"7777"}' 'data: {"delta":"77' \
	    'data: {"choices":[{"index":0,"delta":"7777"}]}' \
	    'data: {"type":"content_block_delta","index":0,"delta":"7777"}' \
	    'data: {"type":"content_block_delta","index":0,"delta":{"type":"new_delta","text":"7777"}}' \
	    'data: {"type":"text_delta","text":"7777"}'; do
		case $provider in
		openai) n=3 ;;
		*) n=6 ;;	# message_start, content_block_start, ping
		esac
		fake_llm_start --provider "$provider" \
		    "$(step "$provider" "$bad" 1 ', 2' '3]}')"
		set +e
		saop-resume --log "$tmp/events" "$tmp/trunc.ndjson" \
		    >"$tmp/out" 2>"$tmp/err"
		rc=$?
		set -e
		[ "$rc" -eq 76 ] ||
		    fail "$provider, $bad: saop-resume exited $rc: $(cat "$tmp/err" "$tmp/out")"
		grep -q "SSE event $n (byte [0-9]* of the answer)" "$tmp/err" ||
		    fail "$provider, $bad: the event is not named: $(cat "$tmp/err")"
		jq -e '.raw == "{\"a\": [" and .resume.status != "RESOLVED" and
		    .state == "TRUNCATED"' "$tmp/out" >/dev/null ||
		    fail "$provider, $bad: merged: $(cat "$tmp/out")"
		! grep -q '23\]' "$tmp/out" ||
		    fail "$provider, $bad: text after the bad event was kept"
	done

	# saop-validate: a damaged correction is not taken either.
	fake_llm_start --provider "$provider" \
	    "$(step "$provider" 'data: {"delta":"7777"}' "$(printf '%s' "$env" | cut -c1-20)" \
	    "$(printf '%s' "$env" | cut -c21-40)" \
	    "$(printf '%s' "$env" | cut -c41-)")"
	set +e
	saop-validate "$tmp/invalid.ndjson" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	set -e
	[ "$rc" -eq 76 ] ||
	    fail "$provider: saop-validate exited $rc: $(cat "$tmp/err")"
	grep -q "SSE event" "$tmp/err" ||
	    fail "$provider: saop-validate: $(cat "$tmp/err")"
	jq -e '.raw == "{\"saop\": \"1.0\"" and (has("envelope") | not)' \
	    "$tmp/out" >/dev/null ||
	    fail "$provider: saop-validate took a damaged answer: $(cat "$tmp/out")"
done
