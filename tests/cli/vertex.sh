#!/bin/sh
# SAOP_PROVIDER=vertex-gemini and vertex-anthropic (Google Vertex AI)
# against saop-mock, which checks every call's bearer token (--key-env):
# for each, a plain answer, a tool call, a cut by the token limit resumed
# and validated, a cut by the network kept and resumed; the path
# (.../projects/P/locations/L/publishers/google|anthropic/models/M:
# streamGenerateContent | streamRawPredict), Claude's anthropic_version in
# the body and no model there, the token in Authorization alone, all in
# saop-mock's --log; saop-mock's :rawPredict (one JSON body) and
# :streamRawPredict (a stream) whatever the body's "stream"; a 401 runs
# api_key_cmd once more and the call is made once more (a second 401 is
# the answer; a key not of a command is not retried); no project is a
# configuration error naming SAOP_VERTEX_PROJECT; --dry-run's URL (the
# location's host, "global"'s) with the token masked.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/mock-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
command -v sqlite3 >/dev/null 2>&1 || skip "no sqlite3"

good=$(jq -c . "$data/validate/good.json")
token="ya29.vertex-$$-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
SAOP_NETWORK_POLL_INTERVAL_MS=50
export SAOP_NETWORK_POLL_INTERVAL_MS

# vx_start PROVIDER REPLY...: saop-mock with the REPLYs, wanting the
# bearer token $want (default $token); the model's environment is Vertex
# AI's (project proj-1, location europe-west4) with the host saop-mock's.
vx_start() {
	_vx_prov=$1
	shift
	MOCK_TOKEN=${want:-$token}
	export MOCK_TOKEN
	MOCK_KEY_ENV=MOCK_TOKEN mock_serve "$@"
	SAOP_PROVIDER=$_vx_prov
	SAOP_API_BASE="http://127.0.0.1:$MOCK_PORT"
	SAOP_API_KEY=$token
	SAOP_VERTEX_PROJECT=proj-1
	SAOP_VERTEX_LOCATION=europe-west4
	export SAOP_PROVIDER SAOP_API_BASE SAOP_API_KEY SAOP_VERTEX_PROJECT \
	    SAOP_VERTEX_LOCATION
	unset SAOP_MODEL
}

# vx_logged N WHAT: the log has N lines, each a POST to the provider's
# Vertex path with the bearer token alone (right unless $2 of the line
# says otherwise: key_ok as given in $3, a jq array), the body the
# format's with no model (Claude's with anthropic_version), the token
# never written.
vx_logged() {
	[ "$(wc -l <"$MOCK_LOG")" -eq "$1" ] ||
	    fail "$2: $(wc -l <"$MOCK_LOG") requests, not $1: $(cat "$MOCK_LOG")"
	! grep -qF "$token" "$MOCK_LOG" || fail "$2: the token is in the log"
	case $SAOP_PROVIDER in
	vertex-gemini) p=google/models/m1:streamGenerateContent ;;
	*) p=anthropic/models/m1:streamRawPredict ;;
	esac
	jq -s -e --arg p "/v1/projects/proj-1/locations/europe-west4/publishers/$p" \
	    --arg prov "$SAOP_PROVIDER" --argjson ok "${3:-null}" '
	    [.[].key_ok] == ($ok // [.[] | true]) and
	    all(.[]; .method == "POST" and .path == $p and
	        .key_in == ["authorization"] and
	        (.headers | has("x-api-key") or has("x-goog-api-key") or
	         has("anthropic-version") | not) and
	        (.body | has("model") | not) and
	        (if $prov == "vertex-gemini" then .query.alt == "sse" and
	             (.body.contents | type) == "array"
	         else .body.anthropic_version == "vertex-2023-10-16" and
	             .body.stream == true and
	             (.body.messages | type) == "array" end))' \
	    "$MOCK_LOG" >/dev/null || fail "$2: the log: $(cat "$MOCK_LOG")"
}

for prov in vertex-gemini vertex-anthropic; do
	# 1. A plain answer: the path, the token, the body.
	vx_start $prov "$(jq -nc --arg t "$good" '{text: $t,
	    usage: {input: 31, output: 12}}')"
	mock_record plain | expect_status 0 saop-suspend >"$tmp/out"
	jq -e --arg g "$good" '.raw == $g and .finish_reason == "stop" and
	    .usage == {prompt_tokens: 31, completion_tokens: 12, cost: null}' \
	    "$tmp/out" >/dev/null || fail "$prov: plain: $(cat "$tmp/out")"
	vx_logged 1 "$prov: plain"

	# 2. A tool call.
	vx_start $prov '{"tool_call": {"name": "ls",
	    "arguments": {"path": "."}}}'
	mock_record tool | expect_status 0 saop-suspend >"$tmp/out"
	jqf '.finish_reason == "tool_calls" and .tool_call.name == "ls" and
	    (.raw | fromjson) == {path: "."}' "$tmp/out"
	vx_logged 1 "$prov: tool call"

	# 3. Cut by the token limit: saop-resume asks for the rest,
	#    saop-validate takes the whole.
	head=$(printf '%s' "$good" | cut -c1-60)
	tail=$(printf '%s' "$good" | cut -c61-)
	vx_start $prov "$(jq -nc --arg t "$head" '{text: $t,
	    finish: "length"}')" "$(jq -nc --arg t "$tail" '{text: $t}')"
	mock_record cut | expect_status 0 saop-suspend >"$tmp/s.out"
	jqf '.finish_reason == "length"' "$tmp/s.out"
	expect_status 0 saop-resume <"$tmp/s.out" >"$tmp/r.out"
	jq -e --arg g "$good" '.state == "OK" and .raw == $g and
	    .resume.status == "RESOLVED"' "$tmp/r.out" >/dev/null ||
	    fail "$prov: resumed: $(cat "$tmp/r.out")"
	expect_status 0 saop-validate <"$tmp/r.out" >"$tmp/v.out"
	jqf '.state == "OK" and .validate.valid' "$tmp/v.out"
	vx_logged 2 "$prov: cut"
	sed -n 2p "$MOCK_LOG" | jq -e --arg h "$head" '[.body | .. | strings] |
	    any(contains($h[20:50]))' >/dev/null ||
	    fail "$prov: the continuation: $(sed -n 2p "$MOCK_LOG")"

	# 4. Cut by the network after 1500 bytes: the text kept and the
	#    rest asked for, the answer whole once.
	vx_start $prov "$(jq -nc --arg t "$good" '{text: $t,
	    drop_after: 1500, reset: true}')" \
	    "$(jq -nc --arg t "$good" '{text: $t}')"
	mock_record drop | expect_status 0 saop-suspend >"$tmp/d.out" \
	    2>"$tmp/err"
	jq -e --arg g "$good" '.raw == $g and .suspend.resumes == 1 and
	    .finish_reason == "stop"' "$tmp/d.out" >/dev/null ||
	    fail "$prov: drop: $(cat "$tmp/d.out" "$tmp/err")"
	expect_status 0 saop-validate <"$tmp/d.out" >"$tmp/v.out"
	jqf '.state == "OK" and .validate.valid' "$tmp/v.out"
	vx_logged 2 "$prov: drop"
	sed -n 2p "$MOCK_LOG" | jq -e --arg g "$good" '[.body | .. | strings] |
	    any(contains($g[0:30]))' >/dev/null ||
	    fail "$prov: the network's continuation: $(sed -n 2p "$MOCK_LOG")"
done

# 5. saop-mock: :rawPredict is one JSON body and :streamRawPredict a
#    stream, whatever the body's "stream".
if command -v curl >/dev/null 2>&1; then
	vx_start vertex-anthropic '{"text": "{\"a\":", "finish": "length"}' \
	    '{"text": "{\"a\": 1}"}'
	u="$SAOP_API_BASE/v1/projects/p/locations/l/publishers/anthropic/models/m1"
	curl -s -D "$tmp/h1" -H "Authorization: Bearer $token" \
	    -d '{"stream": true}' "$u:rawPredict" >"$tmp/w.json" ||
	    fail "curl failed"
	grep -qi '^content-type: application/json' "$tmp/h1" ||
	    fail "rawPredict: $(cat "$tmp/h1")"
	jqf '.type == "message" and .stop_reason == "max_tokens" and
	    .content[0].text == "{\"a\":"' "$tmp/w.json"
	curl -s -D "$tmp/h2" -H "Authorization: Bearer $token" -d '{}' \
	    "$u:streamRawPredict" >"$tmp/w.sse" || fail "curl failed"
	grep -qi '^content-type: text/event-stream' "$tmp/h2" ||
	    fail "streamRawPredict: $(cat "$tmp/h2")"
	grep -q '^event: message_stop' "$tmp/w.sse" ||
	    fail "streamRawPredict: $(cat "$tmp/w.sse")"
fi

# 6. A token of api_key_cmd refused (401, the script's line 1): the
#    command is run once more and the call made again with its new
#    token (saop-mock wants the second).
cat >"$tmp/tokcmd" <<EOF
#!/bin/sh
n=\$(cat "$tmp/count" 2>/dev/null || echo 0)
n=\$((n + 1))
echo "\$n" >"$tmp/count"
echo "$token-\$n"
EOF
chmod 700 "$tmp/tokcmd"
mkdir -p "$XDG_CONFIG_HOME/saop"
printf 'api_key_cmd = %s\n' "$tmp/tokcmd" >"$XDG_CONFIG_HOME/saop/config"
chmod 600 "$XDG_CONFIG_HOME/saop/config"
for prov in vertex-gemini vertex-anthropic; do
	rm -f "$tmp/count"
	want="$token-2"
	vx_start $prov '{"status": 401, "text": "token expired"}' \
	    "$(jq -nc --arg t "$good" '{text: $t}')"
	unset SAOP_API_KEY
	mock_record refresh | expect_status 0 saop-suspend >"$tmp/out" \
	    2>"$tmp/err"
	jq -e --arg g "$good" '.raw == $g' "$tmp/out" >/dev/null ||
	    fail "$prov: refreshed: $(cat "$tmp/out" "$tmp/err")"
	[ "$(cat "$tmp/count")" = 2 ] ||
	    fail "$prov: api_key_cmd ran $(cat "$tmp/count") times"
	jq -s -e '[.[].key_ok] == [false, true]' "$MOCK_LOG" >/dev/null ||
	    fail "$prov: refreshed: $(cat "$MOCK_LOG")"

	# A second 401 is the answer: refused (69), the command run twice,
	# two calls.
	rm -f "$tmp/count"
	want="$token-never"
	vx_start $prov "$(jq -nc --arg t "$good" '{text: $t}')" \
	    "$(jq -nc --arg t "$good" '{text: $t}')"
	unset SAOP_API_KEY
	mock_record twice | expect_status 69 saop-suspend --no-wait \
	    >"$tmp/out" 2>"$tmp/err"
	grep -q 'HTTP 401' "$tmp/err" || fail "$prov: 401 twice: $(cat "$tmp/err")"
	[ "$(cat "$tmp/count")" = 2 ] && [ "$(wc -l <"$MOCK_LOG")" -eq 2 ] ||
	    fail "$prov: 401 twice: $(cat "$tmp/count") runs: $(cat "$MOCK_LOG")"
	! grep -qF "$token" "$tmp/err" "$tmp/out" || fail "$prov: a token shown"
done
rm -f "$XDG_CONFIG_HOME/saop/config"

# A key not of a command: a 401 is not retried.
vx_start vertex-gemini "$(jq -nc --arg t "$good" '{text: $t}')" \
    "$(jq -nc --arg t "$good" '{text: $t}')"
want=
SAOP_API_KEY="$token-wrong"
mock_record fixed | expect_status 69 saop-suspend --no-wait >"$tmp/out" \
    2>"$tmp/err"
[ "$(wc -l <"$MOCK_LOG")" -eq 1 ] || fail "SAOP_API_KEY's 401 retried"

# 7. No project: a configuration error naming the variable.
for prov in vertex-gemini vertex-anthropic; do
	mock_record np | SAOP_PROVIDER=$prov SAOP_VERTEX_PROJECT= \
	    expect_status 78 saop-suspend >/dev/null 2>"$tmp/err"
	grep -qF "$prov: no project: set SAOP_VERTEX_PROJECT" "$tmp/err" ||
	    fail "$prov: no project: $(cat "$tmp/err")"
done

# 8. --dry-run: Vertex AI's URL (the location's host, or global's), the
#    token masked.
mock_record dry | SAOP_PROVIDER=vertex-anthropic SAOP_API_BASE= \
    saop-suspend --dry-run >"$tmp/dry" 2>&1 || fail "dry run: $(cat "$tmp/dry")"
grep -qx 'POST https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-1/locations/europe-west4/publishers/anthropic/models/m1:streamRawPredict' \
    "$tmp/dry" || fail "dry run URL: $(cat "$tmp/dry")"
grep -qx 'Authorization: Bearer ya2\.\.\.\*\*\*\*' "$tmp/dry" ||
    fail "dry run's token: $(cat "$tmp/dry")"
grep -q '"anthropic_version": "vertex-2023-10-16"' "$tmp/dry" ||
    fail "dry run's body: $(cat "$tmp/dry")"
! grep -qi 'anthropic-version' "$tmp/dry" || fail "dry run: a version header"
mock_record dry | SAOP_PROVIDER=vertex-gemini SAOP_API_BASE= \
    SAOP_VERTEX_LOCATION=global saop-suspend --dry-run >"$tmp/dry" 2>&1 ||
    fail "dry run: $(cat "$tmp/dry")"
grep -q '^POST https://aiplatform.googleapis.com/v1/projects/proj-1/locations/global/publishers/google/models/m1:streamGenerateContent?alt=' \
    "$tmp/dry" || fail "dry run URL (global): $(cat "$tmp/dry")"
! grep -qF "${token#ya2}" "$tmp/dry" || fail "dry run: the token shown"
exit 0
