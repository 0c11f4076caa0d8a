# mock-lib.sh: saop-mock from a shell test, and the cases every wire
# format goes through.  Source it after lib.sh:
#
#	. "$top_srcdir/tests/cli/lib.sh"
#	. "$top_srcdir/tests/cli/mock-lib.sh"
#	mock_start anthropic '{"text": "{\"a\":", "finish": "length"}' \
#	    '{"text": "1}"}'
#	saop-suspend < in | saop-resume > out
#	mock_log | jq -s length        # 2 requests were made
#
# mock_start PROVIDER REPLY...
#	Writes the REPLYs (one JSON object each, saop-mock(1)'s script) to a
#	script, a line each, starts saop-mock on a free port of 127.0.0.1 with --log
#	(stopped when the test ends, or by the next mock_start), waits for
#	its --port-file, and exports SAOP_PROVIDER=PROVIDER,
#	SAOP_API_BASE=http://127.0.0.1:PORT/v1, SAOP_MODEL=m1 and a fresh
#	SAOP_API_KEY.  Sets MOCK_LOG (the request log), MOCK_PORT, MOCK_PID.
# mock_stop
#	Stops it (SIGTERM; it must exit 0).
# mock_log
#	The request log, one JSON line per request.
# mock_cases PROVIDER
#	What every wire format is held to, against saop-suspend, saop-resume
#	and saop-validate: a cut answer resumed, a dropped connection
#	(FIN and RST) suspended with --no-wait, a 429 waited out, a
#	malformed answer corrected, a refusal, the whole JSON bodies, and
#	the log line of every request.

MOCK_PID=""
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY \
    2>/dev/null || true

mock_stop() {
	if [ -n "$MOCK_PID" ]; then
		kill -TERM "$MOCK_PID" 2>/dev/null || true
		_ms_rc=0
		wait "$MOCK_PID" || _ms_rc=$?
		MOCK_PID=""
		[ "$_ms_rc" -eq 0 ] || fail "saop-mock exited $_ms_rc on SIGTERM"
	fi
}

# mock_serve REPLY...: saop-mock (stopped first, if one runs) serving a
# script of the REPLYs (each JSON, written compact), its requests logged
# in $MOCK_LOG; with $MOCK_KEY_ENV set, each call's key (or signature)
# checked against the value of that variable, which must be exported
# (--key-env).  Sets MOCK_PID, MOCK_PORT and MOCK_LOG.
mock_serve() {
	mock_stop
	_ms_dir="$tmp/mock.${_ms_n:=0}"
	_ms_n=$((_ms_n + 1))
	mkdir -p "$_ms_dir"
	: >"$_ms_dir/script"
	for _ms_r in "$@"; do
		printf '%s\n' "$_ms_r" | jq -c . >>"$_ms_dir/script" ||
		    fail "mock_serve: not JSON: $_ms_r"
	done
	MOCK_LOG="$_ms_dir/requests.ndjson"
	saop-mock --script "$_ms_dir/script" --port-file "$_ms_dir/port" \
	    ${MOCK_KEY_ENV:+--key-env "$MOCK_KEY_ENV"} \
	    --log "$MOCK_LOG" --max-seconds 600 &
	MOCK_PID=$!
	at_exit mock_stop
	wait_port "$_ms_dir/port" "$MOCK_PID" saop-mock
	MOCK_PORT=$(cat "$_ms_dir/port")
}

mock_start() {
	_ms_prov=$1
	shift
	mock_serve "$@"
	SAOP_PROVIDER=$_ms_prov
	SAOP_API_BASE="http://127.0.0.1:$MOCK_PORT/v1"
	SAOP_MODEL=m1
	SAOP_API_KEY="sk-mock-$$-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
	export SAOP_PROVIDER SAOP_API_BASE SAOP_MODEL SAOP_API_KEY MOCK_LOG
}

mock_log() {
	cat "$MOCK_LOG"
}

# mock_path PROVIDER: the path saop posts to, as a jq regex.
mock_path() {
	case $1 in
	openai) echo '^/v1/chat/completions$' ;;
	openai-responses) echo '^/v1/responses$' ;;
	anthropic) echo '^/v1/messages$' ;;
	gemini) echo '^/v1/models/m1:streamGenerateContent$' ;;
	bedrock) echo '^/v1/model/m1/converse-stream$' ;;
	esac
}

# mock_logged N WHAT: the log has N lines, each a POST to the provider's
# path with a key that is not written, the headers saop sends but the
# key's, a body of model m1 (Gemini's and Bedrock's in the path), and the
# script line of its reply (1..N unless given as $3, a jq array).
mock_logged() {
	[ "$(wc -l <"$MOCK_LOG")" -eq "$1" ] ||
	    fail "$2: $(wc -l <"$MOCK_LOG") requests logged, not $1: $(cat "$MOCK_LOG")"
	! grep -q -F "$SAOP_API_KEY" "$MOCK_LOG" || fail "$2: the key is in the log"
	jq -s -e --arg p "$(mock_path "$SAOP_PROVIDER")" \
	    --argjson replies "${3:-null}" --arg prov "$SAOP_PROVIDER" '
	    [.[].n] == [range(1; length + 1)] and
	    [.[].reply] == ($replies // [range(1; length + 1)]) and
	    all(.[]; .method == "POST" and (.path | test($p)) and
	        .key == true and
	        (.headers | has("authorization") or has("x-api-key") or
	         has("x-goog-api-key") | not) and
	        .headers["content-type"] == "application/json" and
	        (if $prov == "gemini" then .query.alt == "sse"
	         elif $prov == "bedrock" then (.body | has("model") | not) and
	             (.body.messages | type) == "array"
	         else .body.model == "m1" and .body.stream == true end) and
	        (.body | type) == "object")' "$MOCK_LOG" >/dev/null ||
	    fail "$2: the log: $(cat "$MOCK_LOG")"
}

# A turn record asking for an envelope.
mock_record() {
	jq -nc --arg t "$1" '{task_id: $t, turn: 1, request: {model: "m1",
	    max_tokens: 300, messages: [{role: "user",
	    content: "Answer with the next turn."}]}}'
}

mock_cases() {
	prov=$1
	good=$(jq -c . "$data/validate/good.json")
	export SAOP_NETWORK_POLL_INTERVAL_MS=50

	# 1. A cut answer (finish length), resumed to the whole envelope.
	head=$(printf '%s' "$good" | cut -c1-60)
	tail=$(printf '%s' "$good" | cut -c61-)
	mock_start "$prov" "$(jq -nc --arg t "$head" '{text: $t,
	    finish: "length", usage: {input: 21, output: 9}}')" \
	    "$(jq -nc --arg t "$tail" '{text: $t}')"
	mock_record cut | expect_status 0 saop-suspend >"$tmp/s.out"
	jq -e --arg h "$head" '.raw == $h and .finish_reason == "length" and
	    .usage == {prompt_tokens: 21, completion_tokens: 9, cost: null}' \
	    "$tmp/s.out" >/dev/null || fail "$prov: cut: $(cat "$tmp/s.out")"
	expect_status 0 saop-resume <"$tmp/s.out" >"$tmp/r.out"
	jq -e --arg g "$good" '.state == "OK" and .raw == $g and
	    .resume.status == "RESOLVED" and .resume.attempts == 1' \
	    "$tmp/r.out" >/dev/null || fail "$prov: resumed: $(cat "$tmp/r.out")"
	expect_status 0 saop-validate <"$tmp/r.out" >"$tmp/v.out"
	jqf '.state == "OK" and .validate.valid and .validate.attempts == 0 and
	    .envelope.action.tool == "ls"' "$tmp/v.out"
	mock_logged 2 "$prov: cut"
	# The continuation shows the model what it wrote.
	sed -n 2p "$MOCK_LOG" | jq -e --arg h "$head" '[.body | .. | strings] |
	    any(contains($h[20:50]))' >/dev/null ||
	    fail "$prov: the continuation: $(sed -n 2p "$MOCK_LOG")"

	# 2. The connection dropped after 1500 bytes of the body, with an RST
	#    and with a FIN: --no-wait suspends the turn (75), the text
	#    received counted on the record and kept in the saved turn.
	for reset in true false; do
		mock_start "$prov" "$(jq -nc --arg t "$good" --argjson r "$reset" \
		    '{text: $t, drop_after: 1500, reset: $r}')"
		mock_record "drop-$reset" | expect_status 75 saop-suspend \
		    --no-wait >"$tmp/d.out" 2>"$tmp/err"
		got=$(jq -r '.suspend.received' "$tmp/d.out")
		jq -e --arg g "$good" '.state == "PAUSED_FOR_INTERVENTION" and
		    .suspend.limit == "no-wait" and .suspend.received > 0 and
		    .suspend.received < ($g | length)' "$tmp/d.out" >/dev/null ||
		    fail "$prov: drop (reset $reset): $(cat "$tmp/d.out") $(cat "$tmp/err")"
		saved=$(sql "SELECT json_extract(turn_state_json, '\$.partial')
		    FROM agent_turn_states WHERE task_id = 'drop-$reset'")
		[ "${#saved}" -eq "$got" ] && [ -n "$saved" ] &&
		    [ "$(printf '%s' "$good" | cut -c1-"$got")" = "$saved" ] ||
		    fail "$prov: drop (reset $reset): saved '$saved', received $got"
		# curl tells an RST from a FIN.
		case $reset in
		true) want='Connection reset by peer' ;;
		*) want='transfer closed with outstanding read data' ;;
		esac
		jq -r .error.message "$tmp/d.out" | grep -q "$want" ||
		    fail "$prov: drop (reset $reset): $(jq -r .error.message "$tmp/d.out")"
		mock_logged 1 "$prov: drop (reset $reset)"
	done

	# 3. A 429 with Retry-After: 2 is waited out (the poll interval is
	#    50 ms: the wait is the server's), then the answer comes.
	mock_start "$prov" '{"status": 429, "retry_after": 2}' \
	    "$(jq -nc --arg t "$good" '{text: $t}')"
	t0=$(date +%s%N)
	mock_record rate | expect_status 0 saop-suspend >"$tmp/q.out" 2>"$tmp/err"
	t1=$(date +%s%N)
	[ $(((t1 - t0) / 1000000)) -ge 2000 ] ||
	    fail "$prov: 429 waited only $(((t1 - t0) / 1000000)) ms: $(cat "$tmp/err")"
	jq -e --arg g "$good" '.raw == $g and .finish_reason == "stop"' \
	    "$tmp/q.out" >/dev/null || fail "$prov: 429: $(cat "$tmp/q.out")"
	mock_logged 2 "$prov: 429"

	# 4. A malformed answer (not JSON, then not the schema's) corrected
	#    by saop-validate's correction turns.
	bad='{"saop": "1.0", "turn_index": 0,: "thought": "x"}'
	mock_start "$prov" "$(jq -nc --arg t "$bad" '{text: $t}')" \
	    '{"text": "{\"saop\": \"1.0\", \"turn_index\": \"zero\"}"}' \
	    "$(jq -nc --arg t "$good" '{text: $t}')"
	mock_record bad | expect_status 0 saop-suspend >"$tmp/m.out"
	jq -e --arg b "$bad" '.raw == $b' "$tmp/m.out" >/dev/null ||
	    fail "$prov: malformed: $(cat "$tmp/m.out")"
	expect_status 0 saop-validate <"$tmp/m.out" >"$tmp/c.out"
	jq -e --arg g "$good" '.state == "OK" and .raw == $g and
	    .validate.attempts == 2' "$tmp/c.out" >/dev/null ||
	    fail "$prov: corrected: $(cat "$tmp/c.out")"
	mock_logged 3 "$prov: corrected"

	# 5. A refusal: saop-suspend exits 69, the refusal and its usage on
	#    the record.
	mock_start "$prov" '{"refusal": "I cannot help with that.",
	    "usage": {"input": 17, "output": 6}}'
	mock_record refused | expect_status 69 saop-suspend --no-wait \
	    >"$tmp/f.out" 2>"$tmp/err"
	jqf '.finish_reason == "refusal" and .state == "USER_ESCALATION" and
	    .usage == {prompt_tokens: 17, completion_tokens: 6,
	    cost: null}' "$tmp/f.out"
	grep -q 'refused' "$tmp/err" || fail "$prov: refusal: $(cat "$tmp/err")"
	mock_logged 1 "$prov: refusal"

	# 6. After the last reply, --exhausted's status, in the provider's
	#    error form: a 400 is refused (69), with no second call.
	mock_stop
	saop-mock --script "$_ms_dir/script" --port-file "$tmp/xport" \
	    --exhausted 400 --log "$tmp/xlog" --max-requests 2 \
	    --max-seconds 600 &
	MOCK_PID=$!
	wait_port "$tmp/xport" "$MOCK_PID" saop-mock
	SAOP_API_BASE="http://127.0.0.1:$(cat "$tmp/xport")/v1"
	mock_record x1 | expect_status 69 saop-suspend --no-wait >/dev/null \
	    2>&1
	mock_record x2 | expect_status 69 saop-suspend --no-wait >"$tmp/x.out" \
	    2>"$tmp/err"
	grep -q 'saop-mock: the script is exhausted' "$tmp/err" ||
	    fail "$prov: exhausted: $(cat "$tmp/err")"
	# --max-requests 2: it ends by itself, with 0.
	_ms_rc=0
	wait "$MOCK_PID" || _ms_rc=$?
	MOCK_PID=""
	[ "$_ms_rc" -eq 0 ] || fail "$prov: --max-requests: exit $_ms_rc"
	jq -s -e '[.[].reply] == [1, 0]' "$tmp/xlog" >/dev/null ||
	    fail "$prov: exhausted log: $(cat "$tmp/xlog")"
}

# mock_whole PROVIDER PATH FILTER: a reply of finish length and a tool
# call, asked for whole (no "stream"), is one JSON body on which the jq
# FILTER (the format's own members) holds.
mock_whole() {
	mock_start "$1" '{"text": "{\"a\":", "finish": "length",
	    "tool_call": {"name": "ls", "arguments": {"path": "."}},
	    "usage": {"input": 5, "output": 3}}'
	command -v curl >/dev/null 2>&1 || { mock_stop; return 0; }
	curl -s -D "$tmp/h" -H 'Content-Type: application/json' \
	    -d '{"model": "m1"}' "http://127.0.0.1:$MOCK_PORT$2" >"$tmp/w.json" ||
	    fail "$1: curl failed"
	grep -qi '^content-type: application/json' "$tmp/h" ||
	    fail "$1: whole: $(cat "$tmp/h")"
	jq -e "$3" "$tmp/w.json" >/dev/null || fail "$1: whole: $(cat "$tmp/w.json")"
	mock_stop
}
