# standin-lib.sh: sourced by the shell tests that run saop-resume against
# the model stand-in (tests/standin-llm.py), after lib.sh.
#
# standin_start [--provider P] ARGS...
#	Starts the stand-in on $tmp/answers with ARGS (--chars, --manner,
#	--resend...), logging to $tmp/log, and exports SAOP_API_BASE,
#	SAOP_API_KEY, SAOP_PROVIDER (P, default openai) and SAOP_MODEL for
#	it.  Calling it again stops the previous one first; the last is
#	stopped when the test ends.
: "${PYTHON3:=python3}"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY \
    2>/dev/null || true

STANDIN_PID=""
standin_stop() {
	if [ -n "$STANDIN_PID" ]; then
		kill "$STANDIN_PID" 2>/dev/null || true
		wait "$STANDIN_PID" 2>/dev/null || true
		STANDIN_PID=""
	fi
}
at_exit standin_stop
standin_start() {
	_sp=openai
	if [ "$1" = --provider ]; then
		_sp=$2
		shift 2
	fi
	standin_stop
	rm -f "$tmp/port" "$tmp/log"
	"$PYTHON3" "$top_srcdir/tests/standin-llm.py" --answers "$tmp/answers" \
	    --port-file "$tmp/port" --log "$tmp/log" --max-seconds 600 "$@" &
	STANDIN_PID=$!
	wait_port "$tmp/port" "$STANDIN_PID" standin-llm
	SAOP_API_BASE="http://127.0.0.1:$(cat "$tmp/port")/v1"
	SAOP_API_KEY=sk-standin
	SAOP_PROVIDER=$_sp
	SAOP_MODEL=standin
	export SAOP_API_BASE SAOP_API_KEY SAOP_PROVIDER SAOP_MODEL
}
