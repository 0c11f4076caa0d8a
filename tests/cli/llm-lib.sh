# llm-lib.sh: start and stop the fake LLM server (tests/fake-llm.py) from a
# shell test.  Source it after lib.sh:
#
#	. "$top_srcdir/tests/cli/lib.sh"
#	. "$top_srcdir/tests/cli/llm-lib.sh"
#	fake_llm_start --provider anthropic \
#	    '{"text": "{\"a\":", "finish": "length"}' \
#	    '{"text": "1}"}'
#	saop-resume < in > out
#	fake_llm_requests | jq -s 'length'       # 2 requests were made
#
# fake_llm_start [--provider openai|anthropic] [--repeat-last] [--no-key]
#     [--max-seconds S] STEP...
#	Writes the STEPs (one JSON object each, the step syntax is documented
#	at the top of tests/fake-llm.py) to a script, starts the server on a
#	free port of 127.0.0.1, waits until it listens (wait_port), and
#	exports SAOP_API_BASE=http://127.0.0.1:PORT/v1, SAOP_API_KEY (a fresh
#	test key that the server checks: a wrong or missing key gets a 401),
#	SAOP_PROVIDER (default openai) and SAOP_MODEL=fake-model (a test
#	that must know the key in advance sets FAKE_LLM_KEY).  The server
#	is stopped when the test exits (at_exit).  When the steps run out the
#	server answers 500 "script exhausted", unless --repeat-last.  --no-key
#	exports no key and makes the server accept any.  Also sets:
#	  FAKE_LLM_LOG   the request log (NDJSON)
#	  FAKE_LLM_PORT  the port
#	  FAKE_LLM_PID   the server's process id
#	Calling it again stops the previous server first.
#
# fake_llm_stop
#	Stops the server now (idempotent).
#
# fake_llm_requests
#	Prints the requests received so far, one JSON object per line:
#	{"n", "method", "path", "headers" (the key replaced by a hash), "key"
#	("ok", "wrong", "missing", "unchecked"), "body" (the parsed JSON),
#	"step"}.
#
# fake_llm_bodies
#	Prints only the request bodies, one per line.

: "${PYTHON3:=python3}"
# The interpreter itself, not a pyenv shim (a second per start).
_fl_py=$("$PYTHON3" -c 'import sys; print(sys.executable)' 2>/dev/null) &&
    [ -n "$_fl_py" ] && PYTHON3=$_fl_py
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY \
    2>/dev/null || true
FAKE_LLM_PID=""

fake_llm_stop() {
	if [ -n "$FAKE_LLM_PID" ]; then
		kill "$FAKE_LLM_PID" 2>/dev/null || true
		wait "$FAKE_LLM_PID" 2>/dev/null || true
		FAKE_LLM_PID=""
	fi
}

fake_llm_start() {
	_fl_provider=openai
	_fl_exh=fail
	_fl_key=yes
	_fl_max=600
	while [ $# -gt 0 ]; do
		case $1 in
		--provider) _fl_provider=$2; shift 2 ;;
		--repeat-last) _fl_exh=repeat; shift ;;
		--no-key) _fl_key=no; shift ;;
		--max-seconds) _fl_max=$2; shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	fake_llm_stop
	_fl_dir="$tmp/fake-llm.$$.${_fl_n:=0}"
	_fl_n=$((_fl_n + 1))
	mkdir -p "$_fl_dir"
	: >"$_fl_dir/script"
	for _fl_s in "$@"; do
		printf '%s\n' "$_fl_s" >>"$_fl_dir/script"
	done
	FAKE_LLM_LOG="$_fl_dir/requests.ndjson"
	: >"$FAKE_LLM_LOG"
	set -- --script "$_fl_dir/script" --port-file "$_fl_dir/port" \
	    --log "$FAKE_LLM_LOG" --exhausted "$_fl_exh" \
	    --max-seconds "$_fl_max"
	if [ "$_fl_key" = yes ]; then
		_fl_rnd=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
		SAOP_API_KEY=${FAKE_LLM_KEY:-"sk-test-$$-$_fl_rnd"}
		export SAOP_API_KEY
		# The key reaches the server through its environment, not argv.
		"$PYTHON3" "$top_srcdir/tests/fake-llm.py" "$@" \
		    --key-env SAOP_API_KEY &
	else
		unset SAOP_API_KEY
		"$PYTHON3" "$top_srcdir/tests/fake-llm.py" "$@" &
	fi
	FAKE_LLM_PID=$!
	at_exit fake_llm_stop
	wait_port "$_fl_dir/port" "$FAKE_LLM_PID" fake-llm
	FAKE_LLM_PORT=$(cat "$_fl_dir/port")
	SAOP_API_BASE="http://127.0.0.1:$FAKE_LLM_PORT/v1"
	SAOP_PROVIDER=$_fl_provider
	SAOP_MODEL=fake-model
	export SAOP_API_BASE SAOP_PROVIDER SAOP_MODEL FAKE_LLM_LOG FAKE_LLM_PORT
}

fake_llm_requests() {
	cat "$FAKE_LLM_LOG"
}

fake_llm_bodies() {
	jq -c '.body' "$FAKE_LLM_LOG"
}
