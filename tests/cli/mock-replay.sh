#!/bin/sh
# saop-mock --replay: the recorded answers of tests/data/llm served raw,
# one file each, read by saop-suspend as it reads the real ones (the
# records of replay-cases.txt, in the four wire formats); a body sent
# byte for byte with its recorded status and headers (but the
# transfer's), a status from the name when no headers file says it; a
# directory served in name order, the last one repeated or --exhausted;
# --match model: each request the next recording of its model (a dated
# snapshot's too, STEM.request.json's model first), a 404 for a model
# with none; a 529 then the answer, retried by saop-suspend; bad
# options and directories refused.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/mock-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
command -v sqlite3 >/dev/null 2>&1 || skip "no sqlite3"
llm="$top_srcdir/tests/data/llm"
fx="$top_srcdir/tests/fixtures/llm"
SAOP_DB="$tmp/state.sqlite"
export SAOP_DB

# replay_start PROVIDER ARG...: saop-mock --replay ARG... on a free port,
# its log in MOCK_LOG; exports SAOP_PROVIDER, SAOP_API_BASE, a key.
replay_start() {
	_rp_prov=$1
	shift
	mock_stop
	_ms_n=$((${_ms_n:-0} + 1))
	MOCK_LOG="$tmp/replay.$_ms_n.log"
	saop-mock --port-file "$tmp/replay.$_ms_n.port" --log "$MOCK_LOG" \
	    --max-seconds 600 "$@" &
	MOCK_PID=$!
	at_exit mock_stop
	wait_port "$tmp/replay.$_ms_n.port" "$MOCK_PID" saop-mock
	MOCK_PORT=$(cat "$tmp/replay.$_ms_n.port")
	SAOP_PROVIDER=$_rp_prov
	SAOP_API_BASE="http://127.0.0.1:$MOCK_PORT/v1"
	SAOP_MODEL=${SAOP_MODEL:-m1}
	SAOP_API_KEY="sk-replay-$$"
	export SAOP_PROVIDER SAOP_API_BASE SAOP_MODEL SAOP_API_KEY
}

# turn TASK: one record asking for a turn, on stdout.
turn() {
	printf '{"task_id":"%s","turn":0,"request":{"messages":[{"role":"user","content":"hi"}]}}\n' "$1"
}

# 1. Every recorded answer of the table, in its wire format, read as
#    the real one: the exit status and the record replay-cases.txt says.
n=0
grep -v '^#' "$top_srcdir/tests/cli/replay-cases.txt" >"$tmp/cases"
while IFS='	' read -r f prov status expr; do
	n=$((n + 1))
	replay_start "$prov" --replay "$llm/$f"
	turn "t$n" | expect_status "$status" saop-suspend --no-wait \
	    >"$tmp/out" 2>"$tmp/err"
	jq -e "$expr" "$tmp/out" >/dev/null ||
	    fail "$f ($prov): $(cat "$tmp/out" "$tmp/err")"
	jq -e --arg f "$f" '.reply == 1 and .replay == $f' "$MOCK_LOG" \
	    >/dev/null || fail "$f: the log: $(cat "$MOCK_LOG")"
done <"$tmp/cases"
[ "$n" -ge 19 ] || fail "only $n cases read"
for prov in openai openai-responses anthropic gemini; do
	cut -f2 "$tmp/cases" | grep -qx "$prov" || fail "no case of $prov"
done
mock_stop

command -v curl >/dev/null 2>&1 || { echo "no curl: the rest skipped"; exit 0; }

# 2. The body byte for byte (an SSE one chunked, a JSON one with its
#    length), the recorded status and headers, those of the transfer
#    (content-length, connection, date) MHD's own.
replay_start anthropic --replay "$fx/anthropic-529-overloaded.json"
curl -s -D "$tmp/h" -o "$tmp/b" -d '{"model": "m1"}' "$SAOP_API_BASE/messages"
cmp -s "$tmp/b" "$fx/anthropic-529-overloaded.json" || fail "529: body differs"
head -1 "$tmp/h" | grep -q '^HTTP/1.1 529 ' || fail "529: $(cat "$tmp/h")"
grep -qi '^x-should-retry: true' "$tmp/h" || fail "529: $(cat "$tmp/h")"
grep -qi '^request-id: req_01RCc7MbLyQNtGKzBTv8VCep' "$tmp/h" ||
    fail "529: $(cat "$tmp/h")"
[ "$(grep -ci '^content-length: ' "$tmp/h")" -eq 1 ] &&
    grep -qi '^content-length: 76' "$tmp/h" && ! grep -qi '^date: Fri' "$tmp/h" ||
    fail "529: the transfer's headers: $(cat "$tmp/h")"
replay_start anthropic --replay "$fx/anthropic-prefill-stop-sequence.sse"
curl -s -D "$tmp/h" -o "$tmp/b" -d '{"model": "m1"}' "$SAOP_API_BASE/messages"
cmp -s "$tmp/b" "$fx/anthropic-prefill-stop-sequence.sse" || fail "sse: body differs"
grep -qi '^transfer-encoding: chunked' "$tmp/h" &&
    grep -qi '^content-type: text/event-stream; charset=utf-8' "$tmp/h" &&
    grep -qi '^anthropic-ratelimit-requests-remaining: 19999' "$tmp/h" &&
    ! grep -qi '^content-encoding' "$tmp/h" || fail "sse: $(cat "$tmp/h")"
# A Retry-After on a 200, as recorded.
replay_start openai --replay "$fx/together-deepseek-length.json"
curl -s -D "$tmp/h" -o "$tmp/b" -d '{"model": "m1"}' "$SAOP_API_BASE/chat/completions"
head -1 "$tmp/h" | grep -q '^HTTP/1.1 200 ' && grep -qi '^retry-after: 30' "$tmp/h" ||
    fail "retry-after on a 200: $(cat "$tmp/h")"
# No headers file: the status from the name, the type from the extension.
replay_start anthropic --replay "$fx/anthropic-429-rate-limit.json"
curl -s -D "$tmp/h" -o "$tmp/b" -d '{"model": "m1"}' "$SAOP_API_BASE/messages"
head -1 "$tmp/h" | grep -q '^HTTP/1.1 429 ' &&
    grep -qi '^content-type: application/json' "$tmp/h" ||
    fail "status from the name: $(cat "$tmp/h")"
cmp -s "$tmp/b" "$fx/anthropic-429-rate-limit.json" || fail "429: body differs"
# The headers file's status over the name's.
mkdir "$tmp/h1"
cp "$fx/anthropic-429-rate-limit.json" "$tmp/h1/a-429-b.json"
echo '{"status": 503}' >"$tmp/h1/a-429-b.headers.json"
replay_start anthropic --replay "$tmp/h1"
curl -s -D "$tmp/h" -o "$tmp/b" -d '{"model": "m1"}' "$SAOP_API_BASE/messages"
head -1 "$tmp/h" | grep -q '^HTTP/1.1 503 ' ||
    fail "the headers file's status: $(cat "$tmp/h")"

# 3. A directory in name order (not *.headers.json, *.request.json nor
#    README.md), the last one repeated; with --exhausted its status.
mkdir "$tmp/d"
cp "$fx/anthropic-529-overloaded.json" "$fx/anthropic-529-overloaded.headers.json" \
    "$fx/anthropic-prefill-stop-sequence.sse" \
    "$fx/anthropic-prefill-stop-sequence.headers.json" \
    "$fx/anthropic-prefill-stop-sequence.request.json" "$fx/README.md" "$tmp/d"
replay_start anthropic --replay "$tmp/d"
SAOP_NETWORK_POLL_INTERVAL_MS=50
export SAOP_NETWORK_POLL_INTERVAL_MS
# The 529 is retried; the answer is the recorded continuation.
turn d1 | expect_status 0 saop-suspend >"$tmp/out" 2>"$tmp/err"
jqf '.raw == "\ndef pelican_to_pelecanus():\n    return \"Pelecanus\"\n" or (.raw | startswith("\ndef pel"))' "$tmp/out"
turn d2 | expect_status 0 saop-suspend >"$tmp/out2" 2>"$tmp/err"
jq -s -e '[.[].replay] == ["anthropic-529-overloaded.json",
    "anthropic-prefill-stop-sequence.sse",
    "anthropic-prefill-stop-sequence.sse"] and [.[].reply] == [1, 2, 2]' \
    "$MOCK_LOG" >/dev/null || fail "in order: $(cat "$MOCK_LOG")"
replay_start anthropic --replay "$tmp/d" --exhausted 503 --max-requests 3
for i in 1 2 3; do
	curl -s -o /dev/null -w '%{http_code}\n' -d '{"model": "m1"}' \
	    "$SAOP_API_BASE/messages"
done >"$tmp/codes"
[ "$(cat "$tmp/codes" | tr '\n' ' ')" = "529 200 503 " ] ||
    fail "--exhausted: $(cat "$tmp/codes")"
jq -s -e '[.[].reply] == [1, 2, 0]' "$MOCK_LOG" >/dev/null ||
    fail "--exhausted log: $(cat "$MOCK_LOG")"
_rc=0
wait "$MOCK_PID" || _rc=$?
MOCK_PID=""
[ "$_rc" -eq 0 ] || fail "--max-requests: exit $_rc"

# Every recording of tests/data/llm, in the order of their names.
replay_start openai --replay "$llm" --exhausted 503
(cd "$llm" && ls | grep -E '\.(sse|json|ndjson)$') >"$tmp/names"
while read -r f; do
	curl -s -o /dev/null -d '{"model": "m1"}' "$SAOP_API_BASE/chat/completions"
done <"$tmp/names"
jq -r .replay "$MOCK_LOG" | cmp -s - "$tmp/names" ||
    fail "name order: $(jq -r .replay "$MOCK_LOG" | diff "$tmp/names" -)"

# 4. --match model: each request the next recording of its model (gpt-4o
#    answered by gpt-4o-2024-08-06's, the Anthropic one by its
#    request.json's model, Gemini's model from the path), a model with
#    none a 404 in the request's format.
cp "$fx/openai-chat-length.sse" "$llm/gemini-stream.sse" "$tmp/d"
replay_start openai --replay "$tmp/d" --match model
turn m1 | expect_status 0 env SAOP_MODEL=gpt-4o saop-suspend >"$tmp/out" 2>"$tmp/err"
jqf '.raw == "{\"" and .finish_reason == "length"' "$tmp/out"
turn m2 | expect_status 0 env SAOP_PROVIDER=gemini \
    SAOP_MODEL=gemini-2.0-flash-exp saop-suspend >"$tmp/out" 2>"$tmp/err"
jqf '.raw == "The capital of France is Paris.\n"' "$tmp/out"
turn m3 | expect_status 0 env SAOP_PROVIDER=anthropic \
    SAOP_MODEL=claude-haiku-4-5 saop-suspend >"$tmp/out" 2>"$tmp/err"
jqf '.raw | startswith("\ndef pel")' "$tmp/out"
turn m4 | expect_status 69 env SAOP_MODEL=gpt-4o-mini saop-suspend --no-wait \
    >"$tmp/out" 2>"$tmp/err"
grep -q 'no recorded answer for model gpt-4o-mini' "$tmp/err" ||
    fail "no such model: $(cat "$tmp/err" "$tmp/out")"
# A recording's model is its STEM.request.json's when there is one.
mkdir "$tmp/q"
cp "$fx/openai-chat-length.sse" "$tmp/q/own.sse"
echo '{"model": "my-model"}' >"$tmp/q/own.request.json"
replay_start openai --replay "$tmp/q" --match model
turn m6 | expect_status 0 env SAOP_MODEL=my-model saop-suspend >"$tmp/out" \
    2>"$tmp/err"
jqf '.raw == "{\"" and .finish_reason == "length"' "$tmp/out"
replay_start openai --replay "$tmp/d" --match model
turn m1 | expect_status 0 env SAOP_MODEL=gpt-4o saop-suspend >"$tmp/out" \
    2>"$tmp/err"
turn m2 | expect_status 0 env SAOP_PROVIDER=gemini \
    SAOP_MODEL=gemini-2.0-flash-exp saop-suspend >"$tmp/out" 2>"$tmp/err"
turn m3 | expect_status 0 env SAOP_PROVIDER=anthropic \
    SAOP_MODEL=claude-haiku-4-5 saop-suspend >"$tmp/out" 2>"$tmp/err"
turn m4 | expect_status 69 env SAOP_MODEL=gpt-4o-mini saop-suspend \
    --no-wait >"$tmp/out" 2>"$tmp/err"
# The last one of a model repeats.
turn m5 | expect_status 0 env SAOP_MODEL=gpt-4o saop-suspend >"$tmp/out" 2>"$tmp/err"
jq -s -e '[.[].replay] == ["openai-chat-length.sse", "gemini-stream.sse",
    "anthropic-prefill-stop-sequence.sse", null, "openai-chat-length.sse"]' \
    "$MOCK_LOG" >/dev/null || fail "--match model: $(cat "$MOCK_LOG")"
mock_stop

# 5. Refused: --script and --replay, neither, --match without --replay or
#    unknown (64); a directory with no recording or a bad headers file
#    (65); no such path (66).
expect_status 64 saop-mock --replay "$tmp/d" --script "$tmp/d" 2>/dev/null
expect_status 64 saop-mock 2>/dev/null
echo '{}' >"$tmp/s.ndjson"
expect_status 64 saop-mock --script "$tmp/s.ndjson" --match model 2>/dev/null
expect_status 64 saop-mock --replay "$tmp/d" --match name 2>"$tmp/err"
grep -q '"name" is neither "order" nor "model"' "$tmp/err" || fail "$(cat "$tmp/err")"
mkdir "$tmp/empty"
cp "$fx/README.md" "$tmp/empty"
expect_status 65 saop-mock --replay "$tmp/empty" 2>/dev/null
mkdir "$tmp/badh"
echo '{"text": 1}' >"$tmp/badh/x.json"
echo '{"headers": {}}' >"$tmp/badh/x.headers.json"
expect_status 65 saop-mock --replay "$tmp/badh" 2>"$tmp/err"
grep -q 'x.headers.json: not {"status"' "$tmp/err" || fail "$(cat "$tmp/err")"
expect_status 66 saop-mock --replay "$tmp/nothing" 2>/dev/null
exit 0
