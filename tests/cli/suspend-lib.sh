# suspend-lib.sh: helpers of the saop-suspend tests, sourced after lib.sh.
# They drive the kit's scripted server ($kit/flaky-http.py, tests/kit),
# which refuses, resets, cuts bodies short and stops listening on demand.
#
# sse_openai FILE PIECE... [-- FINISH]
#	Write an OpenAI-style SSE answer whose content arrives in the PIECEs
#	(raw text, JSON-escaped here), then a finish_reason (default stop),
#	usage and [DONE].
# srv_start STEP...
#	Start flaky-http.py with the steps (files relative to $tmp) on a free
#	port of 127.0.0.1; export SAOP_API_BASE, SAOP_API_KEY, SAOP_MODEL and
#	SAOP_PROVIDER=openai; SRV_PID, SRV_LOG (NDJSON, a line per request),
#	SRV_SAVE (request bodies NNNN.body).  Stopped when the test exits.
# srv_restart STEP...
#	Stop the server (connections refused from then on) and start a new
#	one with the STEPs on the same port: the endpoint is down for as
#	long as the test wants, then back.  The log and the saved bodies
#	start afresh.
# srv_pause / srv_resume
#	Stop listening (connections refused) / listen again (SIGUSR1/2);
#	each returns once the server says it did ("down" / "up" in its log).
# srv_requests
#	How many lines the server's log has (requests, "down" and "up").
# in_call PID
#	Process PID has a socket open: its call to the model is under way
#	(Linux /proc; without it the test is skipped).
: "${PYTHON3:=python3}"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY \
    2>/dev/null || true
SRV_PID=""

sse_openai() {
	_f=$1
	shift
	_fin=stop
	: >"$_f"
	while [ $# -gt 0 ]; do
		if [ "$1" = -- ]; then
			_fin=$2
			break
		fi
		printf '%s' "$1" | jq -Rsc '{id:"c1",object:"chat.completion.chunk",choices:[{index:0,delta:{content:.},finish_reason:null}]}' |
		    sed 's/^/data: /; s/$/\n/' >>"$_f"
		shift
	done
	jq -nc --arg f "$_fin" '{id:"c1",object:"chat.completion.chunk",choices:[{index:0,delta:{},finish_reason:$f}],usage:{prompt_tokens:10,completion_tokens:5}}' |
	    sed 's/^/data: /; s/$/\n/' >>"$_f"
	printf 'data: [DONE]\n\n' >>"$_f"
}

srv_stop() {
	if [ -n "$SRV_PID" ]; then
		kill "$SRV_PID" 2>/dev/null || true
		wait "$SRV_PID" 2>/dev/null || true
		SRV_PID=""
	fi
}

srv_start() {
	srv_stop
	SRV_LOG="$tmp/srv.ndjson"
	SRV_SAVE="$tmp/srv-bodies"
	rm -rf "$SRV_SAVE" "$tmp/srv.port"
	mkdir -p "$SRV_SAVE"
	: >"$SRV_LOG"
	: >"$tmp/srv.script"
	for _s in "$@"; do
		printf '%s\n' "$_s" >>"$tmp/srv.script"
	done
	"$PYTHON3" "$kit/flaky-http.py" --port-file "$tmp/srv.port" \
	    --port "${_srv_port:-0}" \
	    --dir "$tmp" --log "$SRV_LOG" --save-dir "$SRV_SAVE" \
	    --max-seconds 3600 --script "$tmp/srv.script" 2>"$tmp/srv.err" &
	SRV_PID=$!
	_srv_port=
	at_exit srv_stop
	wait_for '[ -s "$tmp/srv.port" ] || ! kill -0 "$SRV_PID" 2>/dev/null' \
	    "flaky-http to listen"
	[ -s "$tmp/srv.port" ] || fail "flaky-http exited: $(cat "$tmp/srv.err")"
	SRV_PORT=$(cat "$tmp/srv.port")
	SAOP_API_BASE="http://127.0.0.1:$SRV_PORT/v1"
	SAOP_API_KEY=sk-test-suspend
	SAOP_MODEL=fake-model
	SAOP_PROVIDER=openai
	export SAOP_API_BASE SAOP_API_KEY SAOP_MODEL SAOP_PROVIDER
}

srv_restart() {
	_srv_port=$SRV_PORT
	srv_start "$@"
}

# srv_said WORD: how many times the server's log says {"event": WORD}.
srv_said() {
	grep -c "\"event\": \"$1\"" "$SRV_LOG" || true
}

srv_pause() {
	_n=$(srv_said down)
	kill -USR1 "$SRV_PID"
	wait_for '[ "$(srv_said down)" -gt "$_n" ]' "flaky-http to stop listening"
}

srv_resume() {
	_n=$(srv_said up)
	kill -USR2 "$SRV_PID"
	wait_for '[ "$(srv_said up)" -gt "$_n" ]' "flaky-http to listen again"
}

in_call() {
	[ -d /proc/self/fd ] || skip "no /proc/PID/fd to see a call in progress"
	for _fd in "/proc/$1/fd/"*; do
		case $(readlink "$_fd" 2>/dev/null) in
		socket:*) return 0 ;;
		esac
	done
	return 1
}

srv_requests() {
	wc -l <"$SRV_LOG" | tr -d ' '
}

# A record asking for one answer.
record() {
	printf '{"task_id":"%s","turn":%s,"request":{"messages":[{"role":"user","content":"answer in JSON"}]}}\n' "$1" "$2"
}
