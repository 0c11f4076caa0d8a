#!/bin/sh
# saop-mock --oracle: a model that knows the whole intended answers and
# carries on from what a request shows it wrote.  In each of the four
# wire formats (saop-suspend as the client: its request's turns in the
# format's own shape, its answer read back from the stream): every form
# (the assistant's prefill, the partial output quoted in the user turn,
# the last valid token with the tail after it, with and without the
# note that the last continuation read two ways, no partial output: the
# first answer) and every manner (honest, repeat:K counting characters,
# restart, restart-string, restart-noquote, blank, fence, prose, whole)
# gives the text each says, cut at --max-chars characters (finish length)
# or not (stop); the whole (not streamed) bodies too; a cut answer is
# resumed end to end by saop-resume in the three forms it sends; the
# answer file's own manner and max_chars; usage as logged, none with
# --no-usage; a request it cannot place is a 400; a bad answer file is
# refused naming line and member (65), bad options 64.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/oracle-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"

# The answers: A, and B (the second line, its own manner and limit).
A='{"a": "hello wörld", "n": 12345, "ok": true, "e": "😀 end"}'
B='{"b": [1, 2, 3], "c": "xyz"}'
{
	echo '# the answers'
	jq -nc --arg a "$A" '$a'
	echo
	jq -nc --arg b "$B" '{text: $b, manner: "blank", max_chars: 5}'
} >"$tmp/answers"

# The labels saop-resume writes (lib/saop.h).
prompt='Continue the JSON payload from the last valid token.'
tok_l='

Last valid token: '
part_l='

Your partial output so far:

'
tail_l='

Your output after it so far:

'
again_l='

Your last continuation could be read two ways. Do not repeat anything already written: go on right after the last character of your partial output.'

# rec FORM SHOWN [WANT FINISH]: a turn record whose request shows SHOWN
# in FORM (prefill, user, tail, again: SHOWN is TOKEN|TAIL; first:
# nothing), and what the oracle must answer (its text and finish).
rec() {
	case $1 in
	prefill) jq -nc --arg s "$2" '[{role: "user", content: "go"},
	    {role: "assistant", content: $s}]' ;;
	user) jq -nc --arg s "$prompt$tok_l\"x$part_l$2" \
	    '[{role: "user", content: $s}]' ;;
	tail) jq -nc --arg s "$prompt$tok_l${2%%|*}$tail_l${2#*|}" \
	    '[{role: "user", content: $s}]' ;;
	again) jq -nc --arg s "$prompt$tok_l${2%%|*}$again_l$tail_l${2#*|}" \
	    '[{role: "user", content: $s}]' ;;
	first) jq -nc '[{role: "system", content: "be brief"},
	    {role: "user", content: "go"}]' ;;
	esac | jq -c --arg w "${3-}" --arg f "${4-}" --arg t "o$nrec" \
	    '{task_id: $t, turn: 1, request: {model: "m1", max_tokens: 100,
	    messages: .}, want: $w, want_finish: $f}'
	nrec=$((nrec + 1))
}

# cut TEXT FROM [TO]: TEXT's characters FROM..TO (code points).
cut_chars() {
	jq -rnj --arg t "$1" --argjson f "$2" --argjson e "${3:-null}" \
	    '$t[$f:$e]'
}

# want FORM SHOWN WANT FINISH: rec's record, added to $tmp/batch.
want() {
	rec "$@" >>"$tmp/batch"
}

# expect PROVIDER...: saop-suspend against the running oracle on
# $tmp/batch in the wire format of each PROVIDER: every record gets the
# text and finish it wants.
expect() {
	for _p in "$@"; do
		SAOP_PROVIDER=$_p saop-suspend --no-wait <"$tmp/batch" \
		    >"$tmp/got" 2>"$tmp/err" || [ $? -eq 1 ] ||
		    fail "$_p $manner: saop-suspend: $(cat "$tmp/err")"
		[ "$(wc -l <"$tmp/got")" -eq "$(wc -l <"$tmp/batch")" ] ||
		    fail "$_p $manner: records lost: $(cat "$tmp/err")"
		jq -s -e 'all(.[]; .raw == .want and
		    .finish_reason == .want_finish)' "$tmp/got" >/dev/null ||
		    fail "$_p $manner: $(jq -c 'select(.raw != .want or .finish_reason != .want_finish) | {want, raw, want_finish, finish_reason}' "$tmp/got")"
	done
	: >"$tmp/batch"
}
all4='openai openai-responses anthropic gemini'
nrec=0
: >"$tmp/batch"

P=$(cut_chars "$A" 0 15)	# {"a": "hello wö
[ "$P" = '{"a": "hello wö' ] || fail "P is '$P'"
rest=$(cut_chars "$A" 15)
# The tail form: the last valid token "a": and after it ' "hello wö'.
T='"a":| "hello wö'

# 1. Every manner, every form, every wire format: whole answers.  (The
#    records once, each manner's wants added to them.)
for f in prefill user tail again first; do
	case $f in
	prefill | user) rec $f "$P" ;;
	tail | again) rec $f "$T" ;;
	first) rec first "" ;;
	esac
done >"$tmp/forms"
for manner in honest repeat:3 restart restart-string restart-noquote \
    blank fence prose whole; do
	oracle_start --manner "$manner" --max-chars 1000
	case $manner in
	repeat:3) from=12 ;;		# ' wö' again: three characters
	restart | restart-string) from=6 ;;	# the string from its quote
	restart-noquote) from=7 ;;
	whole) from=0 ;;
	*) from=15 ;;
	esac
	lead= close=
	case $manner in
	blank) lead='

' ;;
	fence) lead='```json
' close='
```' ;;
	prose) lead='Here is the rest of the JSON:
' ;;
	esac
	# The tail shows no token's start: repeat and restart cannot move.
	case $manner in
	repeat:* | restart* | whole) moves=false ;;
	*) moves=true ;;
	esac
	jq -c --arg a "$A" --argjson from "$from" --arg lead "$lead" \
	    --arg close "$close" --argjson moves "$moves" '.want =
	    (.request.messages[-1].content as $c |
	    if .request.messages[-1].role == "assistant" or
	        ($c | contains("partial output so far")) then
		$lead + $a[$from:] + $close
	    elif $c | contains("Last valid token") then
		if $moves then $lead + $a[15:] + $close else $a[15:] end
	    else $lead + $a + $close end) | .want_finish = "stop"' \
	    "$tmp/forms" >"$tmp/batch"
	# shellcheck disable=SC2086
	expect $all4
	jq -s -e --arg m "$manner" 'length == 20 and all(.[].oracle;
	    .manner == $m and .answer == 2 and .finish == "stop" and
	    .text_bytes == (.text | utf8bytelength)) and
	    [.[].oracle.form] == (["prefill", "user", "tail", "tail",
	    "first"] | . + . + . + .)' "$tmp/log" >/dev/null ||
	    fail "$manner: the log: $(jq -c .oracle "$tmp/log" | head -5)"
	oracle_unplaced
done
# The paths: each format's own.
jq -s -e '["/v1/chat/completions", "/v1/responses", "/v1/messages",
    "/v1/models/m1:streamGenerateContent"] as $p |
    [range(0; 4) as $i | .[$i * 5].path] == $p' "$tmp/log" >/dev/null ||
    fail "paths: $(jq -c .path "$tmp/log" | sort -u)"

# 2. --max-chars counts characters: a cut answer is finish length, the
#    4-byte character whole; its end is stop.
oracle_start --max-chars 5
manner=honest
want prefill "$P" 'rld",' length
want first "" '{"a":' length
E=$(cut_chars "$A" 0 51)
want prefill "$E" '😀 end' length
want user "$E😀 end" '"}' stop
want tail '"e":| "' '😀 end' length
# shellcheck disable=SC2086
expect $all4
jq -s -e '.[2].oracle | .text_bytes == 8 and .at == (.shown_bytes)' \
    "$tmp/log" >/dev/null || fail "4-byte: $(sed -n 3p "$tmp/log" | jq -c .oracle)"

# 3. The answer file's own manner and max_chars (B: blank, 5), and the
#    answer begun chosen by what is shown; usage as logged.
manner=B
want prefill '{"b": [1, ' '

2, 3]' length
want user '{"b": [1, 2, 3], "c": "xy' '

z"}' stop
# shellcheck disable=SC2086
expect $all4
jq -s -e 'all(.[-8:][].oracle; .answer == 4 and .manner == "blank")' \
    "$tmp/log" >/dev/null || fail "B: $(jq -c .oracle "$tmp/log" | tail -2)"
rec user '{"b": ' | SAOP_PROVIDER=anthropic saop-suspend >"$tmp/got"
tail -n 1 "$tmp/log" | jq -e --slurpfile r "$tmp/got" '.oracle.usage as $u |
    $r[0].usage == {prompt_tokens: $u.input, completion_tokens: $u.output,
    cost: null} and $u.output > 0' >/dev/null ||
    fail "usage: $(jq -c .usage "$tmp/got") $(tail -n 1 "$tmp/log" | jq -c .oracle.usage)"

# 4. The whole bodies (no "stream"), each format's own members.
command -v curl >/dev/null 2>&1 || skip "no curl"
port=$(cat "$tmp/port")
body=$(rec prefill "$P" | jq -c '.request')
post() {
	curl -s -H 'Content-Type: application/json' -d "$2" \
	    "http://127.0.0.1:$port$1"
}
post /v1/chat/completions "$body" | jq -e '.choices[0].message.content ==
    "rld\"," and .choices[0].finish_reason == "length" and
    .usage.completion_tokens > 0' >/dev/null || fail "openai whole"
post /v1/messages "$body" | jq -e '.content[0].text == "rld\"," and
    .stop_reason == "max_tokens"' >/dev/null || fail "anthropic whole"
post /v1/responses "$(printf '%s' "$body" | jq -c '{model, input: .messages}')" |
    jq -e '.output[0].content[0].text == "rld\"," and .status ==
    "incomplete"' >/dev/null || fail "responses whole"
post /v1/models/m1:generateContent "$(printf '%s' "$body" | jq -c '{contents:
    [.messages[] | {role: (if .role == "assistant" then "model" else .role
    end), parts: [{text: .content}]}]}')" | jq -e '.candidates[0] |
    .content.parts[0].text == "rld\"," and .finishReason == "MAX_TOKENS"' \
    >/dev/null || fail "gemini whole"

# 5. A request it cannot place: a 400 in the format's error form, said in
#    the log; saop-suspend refuses the turn (69).
for p in openai openai-responses anthropic gemini; do
	rec prefill '{"zzz' | SAOP_PROVIDER=$p expect_status 69 saop-suspend \
	    --no-wait >/dev/null 2>"$tmp/err"
	grep -q 'no answer begins with the text shown' "$tmp/err" ||
	    fail "$p unplaced: $(cat "$tmp/err")"
done
tail -n 1 "$tmp/log" | jq -e '.reply == 0 and .oracle.form == "prefill" and
    (.oracle.error | test("no answer begins"))' >/dev/null ||
    fail "unplaced log: $(tail -n 1 "$tmp/log")"
rec tail '"q":| "nothing' | expect_status 69 saop-suspend --no-wait \
    >/dev/null 2>"$tmp/err"
grep -q 'the tail shown is in no answer' "$tmp/err" || fail "tail: $(cat "$tmp/err")"

# 6. --no-usage: none reported in any format, none logged.
oracle_start --no-usage
for p in openai openai-responses anthropic gemini; do
	rec prefill "$P" | SAOP_PROVIDER=$p saop-suspend >"$tmp/got"
	jq -e --arg r "$rest" '.raw == $r and (.usage == null or
	    .usage == {prompt_tokens: null, completion_tokens: null})' \
	    "$tmp/got" >/dev/null || fail "$p --no-usage: $(cat "$tmp/got")"
done
jq -s -e 'length == 4 and all(.oracle.usage == null)' "$tmp/log" >/dev/null ||
    fail "--no-usage log: $(jq -c .oracle.usage "$tmp/log")"
# On the wire: no usage member in any body, streamed or whole.
port=$(cat "$tmp/port")
for st in true false; do
	b=$(printf '%s' "$body" | jq -c --argjson st "$st" '.stream = $st')
	post /v1/chat/completions "$b" >"$tmp/w.openai"
	post /v1/messages "$b" >"$tmp/w.anthropic"
	post /v1/responses "$(printf '%s' "$b" | jq -c '{model, stream,
	    input: .messages}')" >"$tmp/w.responses"
	if [ "$st" = true ]; then
		g='/v1/models/m1:streamGenerateContent?alt=sse'
	else
		g=/v1/models/m1:generateContent
	fi
	post "$g" "$(printf '%s' "$b" | jq -c '{contents: [.messages[] |
	    {role: (if .role == "assistant" then "model" else .role end),
	    parts: [{text: .content}]}]}')" >"$tmp/w.gemini"
	for f in openai anthropic responses gemini; do
		grep -q 'rld' "$tmp/w.$f" || fail "--no-usage $f: $(cat "$tmp/w.$f")"
		! grep -q -i 'usage\|tokens' "$tmp/w.$f" ||
		    fail "--no-usage $f (stream $st): $(grep -i 'usage\|tokens' "$tmp/w.$f")"
	done
done

# 7. A cut answer resumed end to end: saop-suspend gets the first 20
#    characters, saop-resume the rest in each of the forms it sends.
for p in openai openai-responses anthropic gemini; do
	oracle_start --provider "$p" --max-chars 20
	for how in '--continuation prefill' '--continuation user' \
	    '--context tail'; do
		rm -f "$SAOP_DB"
		n0=$(wc -l <"$tmp/log")
		rec first "" | saop-suspend >"$tmp/s.out"
		jq -e '.finish_reason == "length"' "$tmp/s.out" >/dev/null ||
		    fail "$p: not cut: $(cat "$tmp/s.out")"
		# shellcheck disable=SC2086
		expect_status 0 saop-resume --max-attempts 10 $how \
		    <"$tmp/s.out" >"$tmp/r.out"
		jq -e --arg a "$A" '.raw == $a and .state == "OK" and
		    .resume.status == "RESOLVED"' "$tmp/r.out" >/dev/null ||
		    fail "$p $how: $(jq -c '[.raw, .resume]' "$tmp/r.out")"
		case $how in
		*prefill) f=prefill ;; *user) f=user ;; *) f=tail ;;
		esac
		jq -s -e --arg f "$f" --argjson n0 "$n0" '.[$n0:] |
		    .[0].oracle.form == "first" and
		    (.[1:] | length >= 2 and all(.oracle.form == $f))' \
		    "$tmp/log" >/dev/null ||
		    fail "$p $how: $(jq -c .oracle.form "$tmp/log" | tr '\n' ' ')"
		oracle_unplaced
	done
done
oracle_stop

# 8. Bad answer files: the line and the member named, 65; bad options 64.
bad() {
	printf '%s\n' "$@" >"$tmp/bad"
	_got=$(saop-mock --oracle "$tmp/bad" --port-file "$tmp/bad.port" 2>&1)
	_rc=$?
	[ "$_rc" -eq 65 ] || fail "answers $*: exit $_rc"
	[ ! -e "$tmp/bad.port" ] || fail "answers $* were served"
	[ "$_got" = "saop-mock: $tmp/bad: $_w" ] ||
	    fail "answers $*: said '$_got', not '$_w'"
}
set +e
_w='line 2: an answer is a JSON string or an object with "text"' bad '"a"' 1
_w='line 1: member "manner": not a manner (honest, repeat:K, restart, restart-string, restart-noquote, blank, fence, prose, whole)' \
    bad '{"text": "a", "manner": "repeat:0"}'
_w='line 1: member "max_chars": not a whole number from 0 to 1000000000' \
    bad '{"text": "a", "max_chars": -1}'
_w='line 1: member "txt": not a member of an answer' bad '{"txt": "a"}'
_w='line 1: an answer object needs "text"' bad '{"manner": "blank"}'
_w='line 2: the file has no answer' bad '# none' ''
set -e
printf '"a",\n' >"$tmp/bad"
saop-mock --oracle "$tmp/bad" 2>&1 | grep -q 'line 1: not JSON' ||
    fail "not JSON"
expect_status 66 saop-mock --oracle "$tmp/none" 2>/dev/null
echo '"x"' >"$tmp/one"
echo '{"text": "x"}' >"$tmp/s.ndjson"
for args in "--manner sideways" "--manner repeat:" "--manner repeat:2x" \
    "--script $tmp/s.ndjson" "--exhausted 500"; do
	# shellcheck disable=SC2086
	expect_status 64 saop-mock --oracle "$tmp/one" $args 2>/dev/null
done
expect_status 64 saop-mock --script "$tmp/s.ndjson" --manner blank 2>/dev/null
expect_status 64 saop-mock --script "$tmp/s.ndjson" --max-chars 5 2>/dev/null
exit 0
