#!/bin/sh
# The API key never shows: not on argv, not in stderr, stdout, the event
# log or the database, not even when the endpoint echoes it back in its
# error message; --dry-run masks it.  Runs every program that calls the
# model (saop-resume, saop-validate) against the fake server.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

# One record each program must send to the model.
printf '%s\n' '{"task_id":"k1","turn":1,"request":{"messages":[{"role":"user","content":"JSON please"}]},"raw":"{\"saop\": \"1.0\", \"turn_index\": 0, \"thought\": \"a"}' \
    >"$tmp/trunc.ndjson"
printf '%s\n' '{"task_id":"k2","turn":1,"request":{"messages":[{"role":"user","content":"JSON please"}]},"raw":"{\"saop\": \"1.0\"}"}' \
    >"$tmp/invalid.ndjson"

check_clean() {	# check_clean WHAT KEY FILE...
	_what=$1
	_key=$2
	shift 2
	for _f in "$@"; do
		[ -f "$_f" ] || continue
		! grep -q -F -- "$_key" "$_f" || fail "$_what: the key is in $_f"
		# Even the part after the first 8 characters.
		! grep -q -F -- "${_key#????????}" "$_f" ||
		    fail "$_what: part of the key is in $_f"
	done
	if [ -f "$SAOP_DB" ]; then
		! sqlite3 "$SAOP_DB" .dump | grep -q -F -- "${_key#????????}" ||
		    fail "$_what: the key is in the database"
	fi
}

n=0
for prog in saop-resume saop-validate; do
	command -v "$prog" >/dev/null 2>&1 || continue
	case $prog in
	saop-resume) in=$tmp/trunc.ndjson ;;
	*) in=$tmp/invalid.ndjson ;;
	esac
	for provider in openai anthropic; do
		n=$((n + 1))
		rm -f "$SAOP_DB" "$tmp/events"
		# The endpoint echoes the key it got, as some proxies do.
		FAKE_LLM_KEY="sk-test-echo-$$-$(od -An -N6 -tx1 /dev/urandom |
		    tr -d ' \n')"
		key=$FAKE_LLM_KEY
		fake_llm_start --provider "$provider" --repeat-last \
		    '{"status": 401, "check_key": false, "body": {"error": {"type": "authentication_error", "message": "Incorrect API key provided: '"$key"'"}}}'
		[ "$SAOP_API_KEY" = "$key" ] || fail "FAKE_LLM_KEY is not used"
		set +e
		"$prog" --log "$tmp/events" "$in" >"$tmp/out" 2>"$tmp/err" &
		pid=$!
		tr '\0' ' ' <"/proc/$pid/cmdline" >"$tmp/argv" 2>/dev/null
		wait "$pid"
		rc=$?
		set -e
		[ "$rc" -eq 69 ] ||
		    fail "$prog $provider: a 401 exited $rc: $(cat "$tmp/err")"
		grep -q 'Incorrect API key provided' "$tmp/err" ||
		    fail "$prog $provider: the 401 message is not shown: $(cat "$tmp/err")"
		fake_llm_requests | jq -e -s 'length >= 1' >/dev/null ||
		    fail "$prog $provider: no request was made"
		check_clean "$prog $provider" "$key" "$tmp/out" "$tmp/err" \
		    "$tmp/events" "$tmp/argv"

		# --dry-run: the key masked, nothing sent.
		: >"$FAKE_LLM_LOG"
		set +e
		"$prog" --dry-run "$in" >"$tmp/dry" 2>"$tmp/err"
		set -e
		grep -q "^POST $SAOP_API_BASE/" "$tmp/dry" ||
		    fail "$prog $provider --dry-run: no POST line: $(cat "$tmp/dry" "$tmp/err")"
		grep -q -e '^Authorization: Bearer sk-\.\.\.\*\*\*\*$' \
		    -e '^x-api-key: sk-\.\.\.\*\*\*\*$' "$tmp/dry" ||
		    fail "$prog $provider --dry-run: no masked key: $(cat "$tmp/dry")"
		check_clean "$prog $provider --dry-run" "$key" "$tmp/dry" \
		    "$tmp/err"
		[ ! -s "$FAKE_LLM_LOG" ] ||
		    fail "$prog $provider --dry-run sent a request"
	done
done
[ "$n" -gt 0 ] || skip "no program that calls the model is built"
