#!/bin/sh
# No secret shows, not even in part (issue 8, defects 5 and 7):
#  - an endpoint error message that echoes the key is masked before it is
#    cut, and any 8 characters of the key are masked, so a key straddling
#    the cut does not survive in stderr, --log or the events table;
#  - credentials in SAOP_API_BASE (user:password@, query values such as
#    ?key= or api_key=) are shown as "****" in errors, --log, the events
#    table and --dry-run.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
# Nobody listening is waited out for at most this long (the default is
# half an hour), polled often.
SAOP_MAX_WAIT=300ms
SAOP_NETWORK_POLL_INTERVAL_MS=50
export SAOP_MAX_WAIT SAOP_NETWORK_POLL_INTERVAL_MS

printf '%s\n' '{"task_id":"k1","turn":1,"request":{"messages":[{"role":"user","content":"JSON please"}]},"raw":"{\"saop\": \"1.0\", \"turn_index\": 0, \"thought\": \"a"}' \
    >"$tmp/trunc.ndjson"
printf '%s\n' '{"task_id":"k2","turn":1,"request":{"messages":[{"role":"user","content":"JSON please"}]},"raw":"{\"saop\": \"1.0\"}"}' \
    >"$tmp/invalid.ndjson"

# key_run FILE KEY: fail when FILE holds any 8 characters in a row of KEY.
key_run() {
	[ -f "$1" ] || return 0
	awk -v k="$2" -v f="$1" '{
		for (i = 1; i + 7 <= length(k); i++)
			if (index($0, substr(k, i, 8)) > 0) {
				print f ": " substr(k, i, 8) " of the key: " $0
				bad = 1
				exit
			}
	} END { exit bad }' "$1" >&2 || fail "part of the key is in $1"
}

# no_secret WHAT FILE...: fail when a FILE (or the database) shows one
# of the base URL's credentials.
no_secret() {
	_what=$1
	shift
	for _f in "$@"; do
		[ -f "$_f" ] || continue
		! grep -q 's3cr3t' "$_f" ||
		    fail "$_what: a credential of the URL is in $_f: $(grep s3cr3t "$_f")"
	done
	if [ -f "$SAOP_DB" ] && command -v sqlite3 >/dev/null 2>&1; then
		! sqlite3 "$SAOP_DB" .dump | grep -q 's3cr3t' ||
		    fail "$_what: a credential of the URL is in the database"
	fi
}

pad=$(printf '%0300d' 0 | tr 0 x)
n=0
for prog in saop-resume saop-validate; do
	command -v "$prog" >/dev/null 2>&1 || continue
	case $prog in
	saop-resume) in=$tmp/trunc.ndjson ;;
	*) in=$tmp/invalid.ndjson ;;
	esac
	for provider in openai anthropic; do
		# The key straddles the cut of the message (300 bytes), of a
		# plain body (120), or the cut of the whole error line.
		for len in 280 291 297 110 117 455; do
			n=$((n + 1))
			rm -f "$SAOP_DB" "$tmp/events"
			FAKE_LLM_KEY="sk-test-leak-$$-$(od -An -N6 -tx1 /dev/urandom |
			    tr -d ' \n')"
			key=$FAKE_LLM_KEY
			msg=$(printf '%s' "$pad$pad" | cut -c1-"$len")
			case $len in
			11?) st='{"status": 401, "check_key": false, "type": "text/plain", "body": "'"$msg $key"' and more"}' ;;
			*) st='{"status": 401, "check_key": false, "body": {"error": {"type": "authentication_error", "message": "'"$msg $key"' and more"}}}' ;;
			esac
			fake_llm_start --provider "$provider" "$st"
			set +e
			"$prog" --log "$tmp/events" "$in" >"$tmp/out" 2>"$tmp/err"
			rc=$?
			set -e
			[ "$rc" -eq 69 ] ||
			    fail "$prog $provider $len: exited $rc: $(cat "$tmp/err")"
			grep -q 'xxxxxxxx' "$tmp/err" ||
			    fail "$prog $provider $len: no message: $(cat "$tmp/err")"
			for f in "$tmp/out" "$tmp/err" "$tmp/events"; do
				key_run "$f" "$key"
			done
			if [ -f "$SAOP_DB" ] && command -v sqlite3 >/dev/null 2>&1
			then
				sqlite3 "$SAOP_DB" .dump >"$tmp/dump"
				key_run "$tmp/dump" "$key"
			fi
		done

		# Credentials in the base URL.
		rm -f "$SAOP_DB" "$tmp/events"
		unset FAKE_LLM_KEY
		fake_llm_start --provider "$provider" '{"status": 404}'
		SAOP_API_BASE="http://s3cr3t-user:s3cr3t-pass@127.0.0.1:$FAKE_LLM_PORT/v1?key=s3cr3t-query&api_key=s3cr3t-tok&x"
		set +e
		"$prog" --log "$tmp/events" "$in" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		set -e
		[ "$rc" -eq 69 ] ||
		    fail "$prog $provider: a 404 exited $rc: $(cat "$tmp/err")"
		case $provider in
		openai) path=chat/completions ;;
		*) path=messages ;;
		esac
		grep -q -F "http://****@127.0.0.1:$FAKE_LLM_PORT/v1/$path?key=****&api_key=****&****: HTTP 404" \
		    "$tmp/err" ||
		    fail "$prog $provider: the URL is not shown redacted: $(cat "$tmp/err")"
		[ -s "$tmp/events" ] || fail "$prog $provider: no events logged"
		no_secret "$prog $provider" "$tmp/out" "$tmp/err" "$tmp/events"
		set +e
		"$prog" --dry-run "$in" >"$tmp/dry" 2>"$tmp/err"
		set -e
		grep -q -F "POST http://****@127.0.0.1:$FAKE_LLM_PORT/v1/$path?key=****" \
		    "$tmp/dry" ||
		    fail "$prog $provider --dry-run: $(cat "$tmp/dry" "$tmp/err")"
		no_secret "$prog $provider --dry-run" "$tmp/dry" "$tmp/err"
		# Nobody listening: the transport error does not show them.
		fake_llm_stop
		set +e
		"$prog" --log "$tmp/events" "$in" >"$tmp/out" 2>"$tmp/err"
		set -e
		grep -q "http://\*\*\*\*@127.0.0.1" "$tmp/err" ||
		    fail "$prog $provider: no transport error: $(cat "$tmp/err")"
		no_secret "$prog $provider, refused" "$tmp/out" "$tmp/err" \
		    "$tmp/events"
		unset SAOP_API_BASE
	done
done
[ "$n" -gt 0 ] || skip "no program that calls the model is built"
