#!/bin/sh
# Every copy of the key masked, a short key too (issue 25): keys of 4 to
# 11 bytes (--dry-run shows "****", not their first bytes; an error
# message that echoes one has every copy masked) and a long key echoed
# twice in one message (both copies masked).  Checked in stdout, stderr,
# --log and the state database; the exit status of the 401 is exactly 69.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

printf '%s\n' '{"task_id":"k1","turn":1,"request":{"messages":[{"role":"user","content":"JSON please"}]},"raw":"{\"saop\": \"1.0\", \"turn_index\": 0, \"thought\": \"a"}' \
    >"$tmp/trunc.ndjson"

# no_key KEY FILE...: fail when a FILE (or the database) holds KEY.
no_key() {
	_k=$1
	shift
	for _f in "$@"; do
		[ -f "$_f" ] || continue
		! grep -q -F -e "$_k" "$_f" ||
		    fail "key $_k shown in $_f: $(grep -F -e "$_k" "$_f")"
	done
	if [ -f "$SAOP_DB" ]; then
		! sqlite3 "$SAOP_DB" .dump | grep -q -F -e "$_k" ||
		    fail "key $_k is in the database"
	fi
}

long="sk-long-$$-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
for key in zq4w zq4w-8 zq4w-8x-7k zq4w-8x-7ku "$long"; do
	for provider in openai anthropic; do
		rm -f "$SAOP_DB" "$tmp/events"
		FAKE_LLM_KEY=$key
		# The message names the key three times over.
		fake_llm_start --provider "$provider" '{"status": 401, "check_key": false, "body": {"error": {"type": "authentication_error", "message": "bad key ['"$key"'] you sent ['"$key"'], again ['"$key"']"}}}'
		expect_status 69 saop-resume --log "$tmp/events" \
		    "$tmp/trunc.ndjson" >"$tmp/out" 2>"$tmp/err"
		# The message is shown, every copy masked in place.
		grep -q -F 'bad key [****] you sent [****], again [****]' "$tmp/err" ||
		    fail "$provider ${#key}-byte key: not every copy masked: $(cat "$tmp/err")"
		grep -q -F 'bad key [****] you sent [****], again [****]' "$tmp/events" ||
		    fail "$provider ${#key}-byte key: --log: $(cat "$tmp/events")"
		no_key "$key" "$tmp/out" "$tmp/err" "$tmp/events"

		# --dry-run: a key under 12 bytes is all stars.
		expect_status 0 saop-resume --dry-run "$tmp/trunc.ndjson" \
		    >"$tmp/dry" 2>"$tmp/err"
		case $provider in
		openai) want="Authorization: Bearer" ;;
		*) want="x-api-key:" ;;
		esac
		if [ "${#key}" -lt 12 ]; then
			grep -q -x -F "$want ****" "$tmp/dry" ||
			    fail "--dry-run, ${#key}-byte key: $(grep -F "$want" "$tmp/dry")"
		else
			grep -q -x -F "$want $(printf '%.3s' "$key")...****" "$tmp/dry" ||
			    fail "--dry-run, long key: $(grep -F "$want" "$tmp/dry")"
		fi
		no_key "$key" "$tmp/dry" "$tmp/err"
		no_key "$(printf '%.4s' "$key")" "$tmp/dry" "$tmp/err" "$tmp/out"
	done
done
exit 0
