# oracle-lib.sh: sourced by the shell tests that run saop against
# saop-mock --oracle (a model that knows the whole intended answers and
# carries on from the partial output it is shown), after lib.sh.
#
# oracle_start [--provider P] ARGS...
#	Starts saop-mock --oracle "$tmp/answers" with ARGS (--max-chars,
#	--manner, --no-usage...) on a free port of 127.0.0.1, logging to
#	$tmp/log (one line a request; what the oracle made of it in its
#	"oracle" member), and exports SAOP_API_BASE, SAOP_API_KEY,
#	SAOP_PROVIDER (P, default openai) and SAOP_MODEL for it.  Calling it
#	again stops the previous one first; the last is stopped when the
#	test ends.  saop-mock must end with 0 on SIGTERM.
# oracle_unplaced
#	Fails when a request could not be placed in an answer (a 400).
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY \
    2>/dev/null || true

ORACLE_PID=""
oracle_stop() {
	if [ -n "$ORACLE_PID" ]; then
		kill -TERM "$ORACLE_PID" 2>/dev/null || true
		_os_rc=0
		wait "$ORACLE_PID" || _os_rc=$?
		ORACLE_PID=""
		[ "$_os_rc" -eq 0 ] || fail "saop-mock --oracle exited $_os_rc on SIGTERM"
	fi
}
at_exit oracle_stop
oracle_start() {
	_op=openai
	if [ "$1" = --provider ]; then
		_op=$2
		shift 2
	fi
	oracle_stop
	rm -f "$tmp/port" "$tmp/log"
	saop-mock --oracle "$tmp/answers" --port-file "$tmp/port" \
	    --log "$tmp/log" --max-seconds 600 "$@" &
	ORACLE_PID=$!
	wait_port "$tmp/port" "$ORACLE_PID" "saop-mock --oracle"
	SAOP_API_BASE="http://127.0.0.1:$(cat "$tmp/port")/v1"
	SAOP_API_KEY=sk-oracle
	SAOP_PROVIDER=$_op
	SAOP_MODEL=oracle
	export SAOP_API_BASE SAOP_API_KEY SAOP_PROVIDER SAOP_MODEL
}
oracle_unplaced() {
	! jq -e 'select(.oracle.error)' "$tmp/log" >/dev/null 2>&1 ||
	    fail "the oracle could not place a request: $(jq -c 'select(.oracle.error) | .oracle' "$tmp/log" | head -1)"
}
