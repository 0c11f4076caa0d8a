#!/bin/sh
# saop-mock itself: a bad script is refused at the start naming the line
# and the member (65); the options (--script needed, --exhausted an error
# status, --port, --port-file, --max-seconds, --tls-cert and --tls-key);
# SIGTERM and SIGINT end it with 0; a path that is no model's (404)
# takes no reply; the log never holds the key (headers, ?key=,
# --key-header) but says one came;
# delay_ms and chunk_delay_ms wait; a tool call streamed reaches
# saop-suspend's record; split sizes the pieces, finish null ends a
# stream with no finish in each format, no_answer closes with no status;
# stream_error, stream and comments.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/mock-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"

# 1. Bad scripts: the line and the member named, exit 65, nothing heard.
# bad LINE... : a script of these lines; prints the message.
bad() {
	printf '%s\n' "$@" >"$tmp/bad.ndjson"
	expect_status 65 saop-mock --script "$tmp/bad.ndjson" \
	    --port-file "$tmp/bad.port" 2>&1
	[ ! -e "$tmp/bad.port" ] || fail "a bad script was served: $*"
}
# want MESSAGE LINE...: bad LINE... says MESSAGE (after "FILE: ").
want() {
	_w=$1
	shift
	got=$(bad "$@")
	[ "$got" = "saop-mock: $tmp/bad.ndjson: $_w" ] ||
	    fail "script $*: said '$got', not '$_w'"
}
want 'line 2: member "finish": not "stop", "length" nor null' \
    '{"text": "a"}' '{"finish": "lenght"}'
want 'line 3: member "colour": not a member of a reply' \
    '# a comment' '' '{"colour": 1}'
want 'line 1: member "text": not a string' '{"text": 1}'
want 'line 1: member "status": 302 is not an error status (400 to 599)' \
    '{"status": 302}'
want 'line 1: member "status": not a whole number from 200 to 599' \
    '{"status": "429"}'
want 'line 1: member "retry_after": only with a status 429 or 5xx' \
    '{"status": 400, "retry_after": 1}'
want 'line 1: member "reset": only with "drop_after" or "no_answer"' \
    '{"reset": true}'
want 'line 1: member "drop_after": not a whole number from 0 to 9223372036854775807' \
    '{"drop_after": -1}'
want 'line 1: member "tool_call": no "name" (a string)' \
    '{"tool_call": {"arguments": "{}"}}'
want 'line 1: member "tool_call": unknown member "args"' \
    '{"tool_call": {"name": "f", "args": {}}}'
want 'line 1: member "usage": unknown member "prompt"' \
    '{"usage": {"prompt": 1}}'
want 'line 1: member "refusal": neither a string nor true' \
    '{"refusal": 1}'
want 'line 1: member "delay_ms": not a whole number from 0 to 3600000' \
    '{"delay_ms": 1.5}'
want 'line 2: a reply is a JSON object' '{}' '[1]'
bad '{"text": "a",}' | grep -q '^saop-mock: .*: line 1: not JSON: ' ||
    fail "not JSON: $(bad '{"text": "a",}')"
want 'line 1: the script has no reply' '# nothing'
expect_status 66 saop-mock --script "$tmp/none.ndjson" 2>/dev/null

# 2. Options.
echo '{"text": "{}"}' >"$tmp/s.ndjson"
expect_status 64 saop-mock 2>"$tmp/err"
grep -q -- 'one of --script FILE, --oracle FILE and --replay DIR is needed' "$tmp/err" || fail "$(cat "$tmp/err")"
expect_status 64 saop-mock --script "$tmp/s.ndjson" --exhausted 200 \
    2>"$tmp/err"
grep -q 'not an error status' "$tmp/err" || fail "$(cat "$tmp/err")"
expect_status 64 saop-mock --script "$tmp/s.ndjson" --port 70000 2>/dev/null
expect_status 64 saop-mock --script "$tmp/s.ndjson" extra 2>/dev/null
# --tls-cert and --tls-key: both or neither; unreadable 66; not PEM 69
# (HTTPS itself: check_llm's tls_certificates_are_verified).
expect_status 64 saop-mock --script "$tmp/s.ndjson" \
    --tls-cert "$tmp/s.ndjson" 2>"$tmp/err"
grep -q -- '--tls-cert and --tls-key go together' "$tmp/err" ||
    fail "$(cat "$tmp/err")"
expect_status 66 saop-mock --script "$tmp/s.ndjson" \
    --tls-cert "$tmp/none" --tls-key "$tmp/none" 2>"$tmp/err"
grep -q -- "--tls-cert $tmp/none: " "$tmp/err" || fail "$(cat "$tmp/err")"
expect_status 69 saop-mock --script "$tmp/s.ndjson" --tls-cert \
    "$tmp/s.ndjson" --tls-key "$tmp/s.ndjson" --port-file "$tmp/tls.port" \
    2>"$tmp/err"
grep -q 'not a PEM certificate and its key' "$tmp/err" ||
    fail "$(cat "$tmp/err")"
[ ! -e "$tmp/tls.port" ] || fail "listening with a certificate that is none"
# --max-seconds: it ends by itself; 1 when --max-requests did not come.
expect_status 0 saop-mock --script "$tmp/s.ndjson" --max-seconds 1
expect_status 1 saop-mock --script "$tmp/s.ndjson" --max-seconds 1 \
    --max-requests 3 2>"$tmp/err"
grep -q '0 of 3 requests answered' "$tmp/err" || fail "$(cat "$tmp/err")"
# --port N: on that port (the one a first run found free).
mock_start openai '{"text": "{}"}'
p=$MOCK_PORT
mock_stop
saop-mock --script "$tmp/s.ndjson" --port "$p" --port-file "$tmp/p2" \
    --max-seconds 600 &
pid=$!
wait_port "$tmp/p2" "$pid" saop-mock
[ "$(cat "$tmp/p2")" = "$p" ] || fail "--port $p: listened on $(cat "$tmp/p2")"
# A second one on the same port cannot listen: 69.
expect_status 69 saop-mock --script "$tmp/s.ndjson" --port "$p" 2>/dev/null
# SIGINT ends it cleanly: 0.
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "SIGINT: exit $rc"

# 3. Another path: 404 in OpenAI's error form, no reply taken; the key
#    never logged, wherever it came.
if ! command -v curl >/dev/null 2>&1; then
	skip_part "no curl: the paths, the log, the delays"
	exit 0
fi
mock_start openai '{"text": "one"}' '{"text": "two"}'
code=$(curl -s -o "$tmp/b" -w '%{http_code}' -d '{}' \
    "http://127.0.0.1:$MOCK_PORT/v1/embeddings")
[ "$code" = 404 ] || fail "another path: $code"
jqf '.error.type == "not_found_error"' "$tmp/b"
code=$(curl -s -o "$tmp/b" -w '%{http_code}' \
    "http://127.0.0.1:$MOCK_PORT/v1/chat/completions")
[ "$code" = 405 ] || fail "GET: $code"
curl -s -H "x-api-key: sk-secret-1" -H "X-My-Key: sk-secret-2" \
    -H 'Content-Type: application/json' -d '{"model": "m1"}' \
    "http://127.0.0.1:$MOCK_PORT/v1/chat/completions?key=sk-secret-3&x=1" \
    >"$tmp/b"
jqf '.choices[0].message.content == "one"' "$tmp/b"
curl -s -d '{}' "http://127.0.0.1:$MOCK_PORT/v1/chat/completions" >"$tmp/b"
jqf '.choices[0].message.content == "two"' "$tmp/b"
# The last reply repeats.
curl -s -d '{}' "http://127.0.0.1:$MOCK_PORT/v1/chat/completions" >"$tmp/b"
jqf '.choices[0].message.content == "two"' "$tmp/b"
jq -s -e '[.[] | [.n, .path, .key, .reply]] == [[1, "/v1/embeddings",
    false, 0], [2, "/v1/chat/completions", false, 0],
    [3, "/v1/chat/completions", true, 1],
    [4, "/v1/chat/completions", false, 2],
    [5, "/v1/chat/completions", false, 2]] and .[2].query == {"x": "1"} and
    .[2].headers["x-my-key"] == "sk-secret-2" and
    (.[2].headers | has("x-api-key") | not)' "$MOCK_LOG" >/dev/null ||
    fail "log: $(cat "$MOCK_LOG")"
! grep -q -e sk-secret-1 -e sk-secret-3 "$MOCK_LOG" || fail "a key is in the log"
# --key-header: that header is the key too.
mock_stop
saop-mock --script "$tmp/s.ndjson" --port-file "$tmp/p3" --log "$tmp/l3" \
    --key-header x-my-key --max-seconds 600 &
MOCK_PID=$!
wait_port "$tmp/p3" "$MOCK_PID" saop-mock
curl -s -H "X-My-Key: sk-secret-2" -d '{}' \
    "http://127.0.0.1:$(cat "$tmp/p3")/v1/messages" >/dev/null
jqf '.key == true and (.headers | has("x-my-key") | not)' "$tmp/l3"
! grep -q sk-secret "$tmp/l3" || fail "--key-header: the key is in the log"
mock_stop

# 4. delay_ms before the first byte, chunk_delay_ms between the events.
mock_start anthropic '{"text": "abcdefgh", "delay_ms": 600}' \
    '{"text": "abcdefghijklmnop", "chunk_delay_ms": 100}'
for i in 1 2; do
	curl -s -N -o "$tmp/b$i" -w '%{time_starttransfer} %{time_total}\n' \
	    -d '{"stream": true}' "http://127.0.0.1:$MOCK_PORT/v1/messages" \
	    >"$tmp/t$i"
done
# The first waits 0.6 s before its status line; the second's 10 events
# come 0.1 s apart (0.9 s), its first at once.
awk '{ exit !($1 >= 0.6) }' "$tmp/t1" || fail "delay_ms: $(cat "$tmp/t1")"
awk '{ exit !($1 < 0.5 && $2 >= 0.9) }' "$tmp/t2" ||
    fail "chunk_delay_ms: $(cat "$tmp/t2")"
[ "$(grep -c '^event: ' "$tmp/b2")" -eq 10 ] || fail "events: $(cat "$tmp/b2")"

# 5. A streamed tool call, malformed arguments and all, reaches the record.
mock_start anthropic \
    '{"tool_call": {"name": "ls", "arguments": "{\"path\": \".\""}}'
echo '{"request":{"model":"m1","max_tokens":9,"messages":[{"role":"user",
    "content":"ls"}]}}' | jq -c . | saop-suspend >"$tmp/out"
jqf '.finish_reason == "tool_calls" and .tool_call.name == "ls" and
    .tool_call.id == "toolu_mock1" and .raw == "{\"path\": \".\""' "$tmp/out"
# 6. A raw body (its status, type and headers), a recording (relative to
#    the script), a reply kept for the request holding its "match", and
#    --key-env: a wrong or missing key gets 401 but for "any_key"; the log
#    says key_ok and where the key came.
mkdir "$tmp/raw"
cp "$top_srcdir/tests/fixtures/llm/openrouter-429.json" \
    "$top_srcdir/tests/fixtures/llm/openrouter-429.headers.json" "$tmp/raw"
cat >"$tmp/raw/s.ndjson" <<'EOF'
{"match": "second", "text": "two"}
{"body": "<html>busy</html>", "type": "text/html", "status": 503, "headers": {"x-should-retry": "false"}}
{"recording": "openrouter-429.json", "headers": {"x-extra": "1"}}
{"text": "any", "any_key": true}
EOF
MOCK_KEY=k1 saop-mock --script "$tmp/raw/s.ndjson" --key-env MOCK_KEY \
    --port-file "$tmp/raw/port" --log "$tmp/raw/log" --max-seconds 60 &
MOCK_PID=$!
wait_port "$tmp/raw/port" "$MOCK_PID" saop-mock
u="http://127.0.0.1:$(cat "$tmp/raw/port")/v1/chat/completions"
curl -s -D "$tmp/h1" -o "$tmp/b1" -H 'Authorization: Bearer k1' \
    -d '{"model": "m1", "x": "first"}' "$u"
curl -s -o "$tmp/b2" -H 'x-api-key: k1' -d '{"model": "m1", "x": "second"}' "$u"
curl -s -D "$tmp/h3" -o "$tmp/b3" -H 'x-api-key: k1' -d '{"model": "m1"}' "$u"
curl -s -o "$tmp/b4" -w '%{http_code}\n' -d '{"model": "m1"}' "$u" >"$tmp/c4"
curl -s -o "$tmp/b5" -w '%{http_code}\n' -H 'api-key: bad' \
    -d '{"model": "m1"}' "$u" >"$tmp/c5"
mock_stop
head -1 "$tmp/h1" | grep -q '^HTTP/1.1 503 ' &&
    grep -qi '^content-type: text/html' "$tmp/h1" &&
    grep -qi '^x-should-retry: false' "$tmp/h1" &&
    [ "$(cat "$tmp/b1")" = '<html>busy</html>' ] ||
    fail "body: $(cat "$tmp/h1" "$tmp/b1")"
jqf '.choices[0].message.content == "two"' "$tmp/b2"
head -1 "$tmp/h3" | grep -q '^HTTP/1.1 429 ' &&
    grep -qi '^x-extra: 1' "$tmp/h3" && grep -qi '^referrer-policy: ' "$tmp/h3" &&
    cmp -s "$tmp/b3" "$tmp/raw/openrouter-429.json" ||
    fail "recording: $(cat "$tmp/h3" "$tmp/b3")"
# The script used up, its last reply (any_key) is served with no key.
[ "$(cat "$tmp/c4")" = 200 ] || fail "any_key: $(cat "$tmp/c4")"
jqf '.choices[0].message.content == "any"' "$tmp/b4"
[ "$(cat "$tmp/c5")" = 200 ] || fail "any_key: $(cat "$tmp/c5")"
jq -s -e '[.[] | [.reply, .key_ok, .key_in]] ==
    [[2, true, ["authorization"]], [1, true, ["x-api-key"]],
    [3, true, ["x-api-key"]], [4, false, null], [4, false, ["api-key"]]]' \
    "$tmp/raw/log" >/dev/null || fail "raw log: $(cat "$tmp/raw/log")"
# A wrong key gets 401 in the path's format; an empty script with
# --exhausted answers every request with that status.
printf '{"text": "x"}\n' >"$tmp/raw/k.ndjson"
MOCK_KEY=k1 saop-mock --script "$tmp/raw/k.ndjson" --key-env MOCK_KEY \
    --port-file "$tmp/raw/port2" --max-seconds 60 &
MOCK_PID=$!
wait_port "$tmp/raw/port2" "$MOCK_PID" saop-mock
curl -s -o "$tmp/b6" -w '%{http_code}\n' -H 'x-api-key: k2' -d '{}' \
    "http://127.0.0.1:$(cat "$tmp/raw/port2")/v1/messages" >"$tmp/c6"
mock_stop
[ "$(cat "$tmp/c6")" = 401 ] || fail "wrong key: $(cat "$tmp/c6")"
jqf '.type == "error" and .error.type == "authentication_error" and
    .error.message == "saop-mock: wrong key"' "$tmp/b6"
echo '# none' >"$tmp/raw/e.ndjson"
saop-mock --script "$tmp/raw/e.ndjson" --exhausted 500 \
    --port-file "$tmp/raw/port3" --max-seconds 60 &
MOCK_PID=$!
wait_port "$tmp/raw/port3" "$MOCK_PID" saop-mock
[ "$(curl -s -o /dev/null -w '%{http_code}' -d '{}' \
    "http://127.0.0.1:$(cat "$tmp/raw/port3")/v1/messages")" = 500 ] ||
    fail "an empty script with --exhausted"
mock_stop
expect_status 64 saop-mock --script "$tmp/raw/k.ndjson" --key-env \
    SAOP_NO_SUCH_VARIABLE 2>/dev/null
want 'line 1: member "recording": not with "body" nor "status"' \
    '{"status": 500, "recording": "x.json"}'
want 'line 1: member "text": not with "body"' '{"body": "x", "text": "y"}'
want 'line 1: member "type": a string, only with "body"' '{"type": "text/html"}'
want 'line 1: member "headers": "a" is not a string' '{"headers": {"a": 1}}'
want 'line 1: member "split": not a whole number from 1 to 1000000000' \
    '{"split": 0}'
want 'line 1: member "no_answer": not true or false' '{"no_answer": 1}'

# 7. split: the streamed text in pieces of that many characters (a
#    character never cut); finish null: the stream ends cleanly, with no
#    finish (nor usage, [DONE], message_stop, response.completed,
#    finishReason); no_answer: the request read, no status line.
mock_start openai '{"text": "abcdéfghij", "split": 3, "finish": null}' \
    '{"text": "abcdéfghij", "split": 3, "finish": null}' \
    '{"text": "abcdéfghij", "split": 3, "finish": null}' \
    '{"text": "abcdéfghij", "split": 3, "finish": null}' \
    '{"text": "abcdéfghij", "finish": null}' '{"no_answer": true}'
b="http://127.0.0.1:$MOCK_PORT/v1"
for p in chat/completions messages responses \
    "models/m1:streamGenerateContent?alt=sse"; do
	curl -sS -N -d '{"stream": true}' "$b/$p" >>"$tmp/nofin"
done
curl -sS -d '{}' "$b/chat/completions" >"$tmp/nofin.json"
code=0
curl -sS -d '{}' "$b/chat/completions" >"$tmp/none" 2>"$tmp/none.err" ||
    code=$?
[ "$code" -eq 52 ] && [ ! -s "$tmp/none" ] ||
    fail "no_answer: curl $code: $(cat "$tmp/none" "$tmp/none.err")"
[ "$(mock_log | jq -s 'length')" -eq 6 ] || fail "no_answer: not logged"
sed -n 's/^data: //p' "$tmp/nofin" | grep -v '^\[DONE\]$' >"$tmp/nofin.d" ||
    fail "no events: $(cat "$tmp/nofin")"
# The text of each format, its pieces: 4 formats, abc déf ghi j.
jq -s -e '[.[] | if .type == "content_block_delta" then .delta.text
    elif .type == "response.output_text.delta" then .delta
    else .choices[0].delta.content // .candidates[0].content.parts[0].text
    end | select(. != null and . != "")]
    == [range(4) | "abc", "déf", "ghi", "j"]' "$tmp/nofin.d" >/dev/null ||
    fail "split: $(cat "$tmp/nofin.d")"
! grep -q 'DONE\|message_delta\|message_stop\|response.completed\|response.incomplete\|finishReason\|"finish_reason":"' \
    "$tmp/nofin" || fail "finish null: a finish: $(cat "$tmp/nofin")"
jqf '.choices[0].finish_reason == null and
    .choices[0].message.content == "abcdéfghij"' "$tmp/nofin.json"
mock_stop
# 8. chunks: the body written in chunks of at most N bytes (each a chunk
#    of the chunked encoding; never two events in one), or of 1 to max
#    bytes drawn from a seed (the same each run); until_close: HTTP/1.0,
#    no length nor chunks, the body ended by the close; a recording cut
#    by drop_after.
# sizes FILE: the sizes (decimal) of the chunks of curl --raw's FILE.
sizes() {
	awk 'BEGIN { RS = "\r\n" } NR % 2 == 1 && $0 != "" && $0 != "0"' \
	    "$1" | while read -r _h; do echo $((0x$_h)); done
}
cp "$top_srcdir/tests/fixtures/llm/openrouter-429.json" "$tmp/raw/rec.json"
t='"text": "abcdefghijklmnopqrstuvwxyz"'
printf '%s\n' "{$t, \"chunks\": 5}" \
    "{$t, \"chunks\": {\"seed\": 7, \"max\": 9}}" \
    "{$t, \"chunks\": {\"seed\": 7, \"max\": 9}}" \
    "{$t, \"chunks\": {\"seed\": 8, \"max\": 9}}" "{$t}" \
    "{$t, \"until_close\": true}" \
    '{"recording": "rec.json", "drop_after": 10}' >"$tmp/raw/c.ndjson"
saop-mock --script "$tmp/raw/c.ndjson" --port-file "$tmp/raw/cport" \
    --max-seconds 60 &
MOCK_PID=$!
wait_port "$tmp/raw/cport" "$MOCK_PID" saop-mock
u="http://127.0.0.1:$(cat "$tmp/raw/cport")/v1/chat/completions"
for i in 1 2 3 4; do
	curl -sS --raw -d '{"stream": true}' "$u" >"$tmp/c$i"
done
curl -sS -d '{"stream": true}' "$u" >"$tmp/c5"
curl -sS -i -d '{"stream": true}' "$u" >"$tmp/c6"
code=0
curl -sS -o "$tmp/c7" -d '{}' "$u" 2>/dev/null || code=$?
mock_stop
sizes "$tmp/c1" >"$tmp/s1"
[ "$(sort -n "$tmp/s1" | tail -1)" -eq 5 ] &&
    [ "$(wc -l <"$tmp/s1")" -gt 40 ] || fail "chunks 5: $(cat "$tmp/s1")"
sizes "$tmp/c2" >"$tmp/s2"
sizes "$tmp/c3" >"$tmp/s3"
sizes "$tmp/c4" >"$tmp/s4"
cmp -s "$tmp/s2" "$tmp/s3" || fail "a seed's chunks differ between runs"
! cmp -s "$tmp/s2" "$tmp/s4" || fail "seeds 7 and 8 cut alike"
[ "$(sort -n "$tmp/s2" | head -1)" -ge 1 ] &&
    [ "$(sort -n "$tmp/s2" | tail -1)" -le 9 ] &&
    [ "$(sort -u "$tmp/s2" | wc -l)" -gt 3 ] ||
    fail "chunks 1 to 9: $(cat "$tmp/s2")"
# Chunked or not, the same body.
for i in 1 2; do
	awk 'BEGIN { RS = "\r\n"; ORS = "" } NR % 2 == 0' "$tmp/c$i" |
	    cmp -s - "$tmp/c5" || fail "chunks $i: another body"
done
head -1 "$tmp/c6" | grep -q '^HTTP/1.0 200' &&
    ! grep -qi '^content-length:\|^transfer-encoding:' "$tmp/c6" &&
    tr -d '\r' <"$tmp/c6" | sed '1,/^$/d' | cmp -s - "$tmp/c5" ||
    fail "until_close: $(cat "$tmp/c6")"
[ "$code" -eq 18 ] && [ "$(wc -c <"$tmp/c7")" -eq 10 ] &&
    [ "$(cat "$tmp/c7")" = "$(head -c 10 "$tmp/raw/rec.json")" ] ||
    fail "a recording's drop_after: curl $code: $(cat "$tmp/c7")"
want 'line 1: member "chunks": unknown member "min"' \
    '{"chunks": {"min": 1}}'
want 'line 1: member "until_close": not true or false' '{"until_close": 1}'
# 9. stream_error: after the text, an error inside the 200 stream as each
#    format sends one, in place of the finish; stream: whole or streamed
#    whatever was asked; comments: SSE comment lines first.
e='{"text": "abcd", "stream_error": {"status": 429, "message": "slow"}}'
mock_start openai "$e" "$e" "$e" "$e" "$e" \
    '{"text": "ab", "stream": false}' \
    '{"text": "ab", "stream": true, "comments": 2}' \
    '{"text": "ab", "comments": 3}'
b="http://127.0.0.1:$MOCK_PORT/v1"
i=0
for p in chat/completions messages responses \
    "models/m1:streamGenerateContent?alt=sse" \
    "models/m1:streamGenerateContent"; do
	i=$((i + 1))
	curl -sS -N -D "$tmp/se$i.h" -d '{"stream": true}' "$b/$p" \
	    >"$tmp/se$i" || fail "stream_error $p: curl failed"
	grep -q '^HTTP/1.1 200' "$tmp/se$i.h" || fail "$p: $(cat "$tmp/se$i.h")"
	! grep -q 'message_delta\|message_stop\|response.completed\|response.incomplete\|finishReason\|"finish_reason":"stop"' \
	    "$tmp/se$i" || fail "stream_error $p: a finish: $(cat "$tmp/se$i")"
done
last() { sed -n 's/^data: //p' "$1" | grep -v '^\[DONE\]$' | tail -n 1; }
last "$tmp/se1" | jq -e '.error == {code: 429, message: "slow"} and
    .choices[0].finish_reason == "error"' >/dev/null &&
    tail -n 2 "$tmp/se1" | grep -q '^data: \[DONE\]' ||
    fail "stream_error openai: $(cat "$tmp/se1")"
grep -q '^event: error$' "$tmp/se2" && last "$tmp/se2" | jq -e '. ==
    {type: "error", error: {type: "rate_limit_error", message: "slow"}}' \
    >/dev/null || fail "stream_error anthropic: $(cat "$tmp/se2")"
last "$tmp/se3" | jq -e '.type == "error" and .code == "rate_limit_error"
    and .message == "slow"' >/dev/null ||
    fail "stream_error responses: $(cat "$tmp/se3")"
last "$tmp/se4" | jq -e '.error == {code: 429, message: "slow",
    status: "RESOURCE_EXHAUSTED"}' >/dev/null ||
    fail "stream_error gemini: $(cat "$tmp/se4")"
jq -e '.[-1].error.status == "RESOURCE_EXHAUSTED" and
    ([.[0:-1][].candidates[0].content.parts[0].text] | add) == "abcd"' \
    "$tmp/se5" >/dev/null || fail "stream_error gemini array: $(cat "$tmp/se5")"
# The text came before the error, whole, in each format.
for i in 1 2 3 4; do
	sed -n 's/^data: //p' "$tmp/se$i" | grep -v '^\[DONE\]$' |
	    jq -j 'if .type == "response.output_text.delta" then .delta
	    elif .type == "content_block_delta" then .delta.text
	    else .choices[0].delta.content //
	    .candidates[0].content.parts[0].text // empty end' \
	    >"$tmp/se.t"
	[ "$(cat "$tmp/se.t")" = abcd ] ||
	    fail "stream_error $i: text $(cat "$tmp/se.t")"
done
curl -sS -D "$tmp/w.h" -d '{"stream": true}' "$b/chat/completions" >"$tmp/w"
grep -qi '^content-type: application/json' "$tmp/w.h" &&
    jq -e '.object == "chat.completion" and
    .choices[0].message.content == "ab"' "$tmp/w" >/dev/null ||
    fail "stream false: $(cat "$tmp/w.h" "$tmp/w")"
curl -sS -d '{}' "$b/messages" >"$tmp/w"
[ "$(head -n 2 "$tmp/w")" = ": keep-alive" ] &&
    [ "$(grep -c '^: keep-alive$' "$tmp/w")" -eq 2 ] &&
    grep -q '^event: message_stop$' "$tmp/w" ||
    fail "stream true, comments 2: $(cat "$tmp/w")"
curl -sS -d '{"stream": true}' "$b/chat/completions" >"$tmp/w"
[ "$(grep -c '^: keep-alive$' "$tmp/w")" -eq 3 ] &&
    [ "$(sed -n 7p "$tmp/w" | cut -c1-6)" = "data: " ] ||
    fail "comments 3: $(cat "$tmp/w")"
mock_stop
want 'line 1: member "stream_error": unknown member "type"' \
    '{"stream_error": {"type": "x"}}'
want 'line 1: member "stream_error": "status" is not a whole number from'\
' 400 to 599' \
    '{"stream_error": {"status": 200}}'
want 'line 1: member "stream": not true or false' '{"stream": 1}'
want 'line 1: member "stream_error": not with "body"' \
    '{"body": "x", "stream_error": {}}'
exit 0
