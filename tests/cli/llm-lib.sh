# llm-lib.sh: start and stop the fake LLM server from a shell test:
# saop-mock (saop-mock(1)), its script made from the steps below.  Source
# it after lib.sh:
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
#	Writes the STEPs (one JSON object each, see "The steps" below) as
#	saop-mock's script, starts it on a free port of 127.0.0.1, waits
#	until it listens (wait_port), and
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
#	{"n", "method", "path" (with the query), "headers" (but those that
#	carry the key), "key" ("ok", "wrong", "missing", "unchecked"),
#	"key_in" (the headers the key came in), "body" (the parsed JSON),
#	"step" (the step that answered, from 1; 0 for none)}.
#
# fake_llm_bodies
#	Prints only the request bodies, one per line.
#
# The steps: these members of saop-mock's replies (saop-mock(1), The
# script) as they are: text, finish (stop, length or null), tool_call,
# status, body, type, headers, retry_after, delay_ms, drop_after, reset,
# split, match; and these older names of the tests, each made one of its
# members (_fl_reply):
#	"tool": {...}           tool_call
#	"usage": [P, C]         usage {input: P, output: C} (default [7,
#	                        a token per 4 bytes of text])
#	"message": "..."        with a status: the error's message (text)
#	"finish": "tool_calls"  the finish of a tool call, as without it
#	"cut": N, "how": "reset"|"close"   drop_after N, reset (the default)
#	                        or not
#	"drip_ms": N            chunk_delay_ms
#	"refuse": true          no_answer
#	"chunks": "random", "seed": S      chunks {seed: S} (default 1)
#	"framing": "close"      until_close
#	"check_key": false      any_key
#	"fixture": "NAME"       recording, NAME in tests/fixtures/llm (or an
#	                        absolute path)
# A step with another member, or one that does not fit (a fixture with a
# status, a text with an error status), fails the test, naming it.

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
	if [ "$_fl_key" = yes ]; then
		_fl_rnd=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
		SAOP_API_KEY=${FAKE_LLM_KEY:-"sk-test-$$-$_fl_rnd"}
		export SAOP_API_KEY
		# The key reaches the server through its environment, not argv.
		set -- --key-env SAOP_API_KEY
	else
		unset SAOP_API_KEY
		set --
	fi
	# Each step a reply of saop-mock's script (_fl_reply below).
	jq -c -n --arg fx "$top_srcdir/tests/fixtures/llm" \
	    "[inputs | $_fl_reply] | .[]" "$_fl_dir/script" \
	    >"$_fl_dir/mock.ndjson" 2>"$_fl_dir/why" ||
	    fail "llm-lib: a step saop-mock cannot serve: $(cat "$_fl_dir/why")"
	[ "$_fl_exh" = repeat ] || set -- "$@" --exhausted 500
	saop-mock --script "$_fl_dir/mock.ndjson" \
	    --port-file "$_fl_dir/port" --log "$FAKE_LLM_LOG" \
	    --max-seconds "$_fl_max" "$@" &
	FAKE_LLM_PID=$!
	at_exit fake_llm_stop
	wait_port "$_fl_dir/port" "$FAKE_LLM_PID" saop-mock
	FAKE_LLM_PORT=$(cat "$_fl_dir/port")
	SAOP_API_BASE="http://127.0.0.1:$FAKE_LLM_PORT/v1"
	SAOP_PROVIDER=$_fl_provider
	SAOP_MODEL=fake-model
	export SAOP_API_BASE SAOP_PROVIDER SAOP_MODEL FAKE_LLM_LOG FAKE_LLM_PORT
}

fake_llm_requests() {
	jq -c "$_fl_logged" "$FAKE_LLM_LOG"
}

fake_llm_bodies() {
	jq -c '.body' "$FAKE_LLM_LOG"
}

# A step (see "The steps" above) as a reply of saop-mock's (jq; the
# fixtures' directory in $fx); an error naming what it cannot say.
_fl_reply='
	(keys - ["text", "finish", "tool", "usage", "status", "message",
	    "body", "type", "headers", "retry_after", "delay_ms", "cut",
	    "how", "fixture", "check_key", "match", "tool_call", "drop_after",
	    "reset", "split", "drip_ms", "refuse", "chunks", "seed",
	    "framing"]) as $no |
	if $no != [] then error("\($no)") else . end |
	if has("finish") and (.finish | IN("stop", "length", "tool_calls",
	    null) | not) then error("finish \(.finish)") else . end |
	if has("fixture") and (has("status") or has("body"))
	    then error("a fixture with a status") else . end |
	if has("chunks") and .chunks != "random" then
	    error("chunks \(.chunks)") else . end |
	if has("framing") and .framing != "close" then
	    error("framing \(.framing)") else . end |
	if (.status // 200) != 200 and (has("body") | not) and
	    (has("text") or has("tool") or has("finish")) then
	    error("an answer with a status") else . end |
	. as $s |
	{} + (if has("body") then {body, type} | with_entries(select(.value
	        != null))
	    elif has("fixture") then {recording: (if (.fixture |
	        startswith("/")) then .fixture else "\($fx)/\(.fixture)" end)}
	    elif (.status // 200) != 200 then
	        {text: (.message // "fake error \(.status)")}
	    else {text: (.text // "")} +
	        (if .finish == "length" then {finish: "length"} elif has("finish")
	            and .finish == null then {finish: null} else {} end) +
	        (if has("split") then {split} else {} end) +
	        (if has("tool") then {tool_call: .tool} else {} end) +
	        (if has("tool_call") then {tool_call} else {} end) +
	        {usage: (if has("usage") then {input: .usage[0],
	            output: .usage[1]} else {input: 7, output: ([1,
	            ((.text // "") | length + 3) / 4 | floor] | max)} end)}
	    end) +
	(if (.status // 200) != 200 then {status} else {} end) +
	(if has("headers") or has("retry_after") then {headers: ((.headers //
	    {}) + (if has("retry_after") then {"Retry-After":
	    (.retry_after | tostring)} else {} end))} else {} end) +
	(if has("delay_ms") then {delay_ms} else {} end) +
	(if has("drip_ms") then {chunk_delay_ms: .drip_ms} else {} end) +
	(if .refuse == true then {no_answer: true} else {} end) +
	(if has("chunks") then {chunks: {seed: (.seed // 1)}} else {} end) +
	(if .framing == "close" then {until_close: true} else {} end) +
	(if has("cut") then {drop_after: .cut, reset: ((.how // "reset") ==
	    "reset")} else {} end) +
	(if has("drop_after") then {drop_after, reset: (.reset // false)}
	    else {} end) +
	(if .check_key == false then {any_key: true} else {} end) +
	(if has("match") then {match} else {} end)'

# saop-mock's log line as fake_llm_requests prints it (jq): the path
# with its query, key "ok", "wrong", "missing" or "unchecked", step the
# script line that answered.
_fl_logged='{n, method, path: (.path + (if .query == {} then "" else "?" +
	(.query | to_entries | map("\(.key)=\(.value)") | join("&")) end)),
	headers, key: (if .key_ok == null then "unchecked" elif .key_ok then
	"ok" elif .key then "wrong" else "missing" end), body, step: .reply,
	key_in}'
