#!/bin/sh
# What saop-suspend says and does when the endpoint does not answer as
# it should (saop-suspend(1), "Waiting"):
# 1. SAOP_API_BASE on a closed port (a typo): never answered since the
#    run began, so waited for 20 s alone, not --max-wait's 30 min; exit
#    75 within 30 s, the URL named (credentials masked) with the way on.
# 2. An outage after a first answer (half an answer came) is waited out
#    whole: the line says 30 min, and no "never answered".
# 3. --timeout on a slow server is called a timeout, not unreachable.
# 4. A 429 with Retry-After: 300 is said once (rate limit, URL, 5 min,
#    the way on); a signal in the wait says what it stopped, truly; with
#    --max-wait 60s it is not waited for at all.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/suspend-lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

unset SAOP_MAX_WAIT SAOP_NETWORK_POLL_INTERVAL_MS SAOP_MAX_AUTO_RESUME
record w 1 >"$tmp/in"

# 1. A port bound and let go: nothing listens there.
port=$("$PYTHON3" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export SAOP_API_BASE="http://user:secret@127.0.0.1:$port/v1" SAOP_MODEL=m
start=$(date +%s)
expect_status 75 saop-suspend "$tmp/in" >"$tmp/out" 2>"$tmp/err"
took=$(($(date +%s) - start))
[ "$took" -lt 30 ] || fail "a closed port took $took s: $(cat "$tmp/err")"
url="http://\*\*\*\*@127.0.0.1:$port/v1"
grep -q "endpoint $url is unreachable; waiting for it (a probe every 5.0 s, for 20.0 s: it never answered since this run began; Ctrl-C saves the turn and stops; --no-wait: no waiting, --max-wait: how long)" \
    "$tmp/err" || fail "waiting line: $(cat "$tmp/err")"
grep -q "endpoint $url never answered since this run began (waited 2[0-9.]* s): is SAOP_API_BASE right? (--max-wait: wait longer" \
    "$tmp/err" || fail "end line: $(cat "$tmp/err")"
! grep -q secret "$tmp/err" || fail "the password shown: $(cat "$tmp/err")"
jqf '.state == "PAUSED_FOR_INTERVENTION" and .suspend.limit == "never-answered"' \
    "$tmp/out"
# The turn is saved: --resume (a turn saved before) waits the whole wait.
export SAOP_NETWORK_POLL_INTERVAL_MS=50
expect_status 75 saop-suspend --resume --max-wait 200ms 2>"$tmp/err" >/dev/null
unset SAOP_NETWORK_POLL_INTERVAL_MS
grep -q 'still unreachable after .*--max-wait reached' "$tmp/err" ||
    fail "--resume: $(cat "$tmp/err")"
! grep -q 'never answered' "$tmp/err" || fail "--resume: $(cat "$tmp/err")"
rm -f "$SAOP_DB"

# 2. Half an answer, then down: waited for as an outage; Ctrl-C ends it.
sse_openai "$tmp/a.sse" '{"a": "one ' 'two three"}'
cut=$(grep -b 'two three' "$tmp/a.sse" | cut -d: -f1)
srv_start "body=@a.sse cut=$cut how=reset" 'down=3600'
saop-suspend "$tmp/in" >"$tmp/out" 2>"$tmp/err" &
pid=$!
# The first probe finds the port open (the "down" step is the next
# request's): the wait that counts is the one after the server went down,
# the last line said.
wait_for '{ [ "$(srv_said down)" -gt 0 ] &&
    tail -n 1 "$tmp/err" | grep -q "waiting for it"; } ||
    ! kill -0 $pid 2>/dev/null' "the wait for the endpoint gone down"
kill -s INT "$pid" 2>/dev/null || true
st=0
wait "$pid" || st=$?
[ "$st" -eq 75 ] || fail "outage: exit $st: $(cat "$tmp/err")"
grep -q "endpoint $SAOP_API_BASE broke off its answer; waiting for it (a probe every 5.0 s, for 30.0 min; Ctrl-C" \
    "$tmp/err" || fail "outage: $(cat "$tmp/err")"
! grep -q 'never answered' "$tmp/err" || fail "outage: $(cat "$tmp/err")"
grep -q "stopped by a signal after waiting [0-9.]* m\{0,1\}s for endpoint $SAOP_API_BASE" \
    "$tmp/err" || fail "outage, signal: $(cat "$tmp/err")"
srv_stop
rm -f "$SAOP_DB"

# 3. A server slower than --timeout: a timeout, said so.
fake_llm_start --repeat-last '{"text": "{}", "delay_ms": 3000}'
export SAOP_MAX_AUTO_RESUME=1
expect_status 75 saop-suspend --timeout 1 "$tmp/in" >/dev/null 2>"$tmp/err"
unset SAOP_MAX_AUTO_RESUME
grep -q "endpoint $SAOP_API_BASE gave no answer within the timeout (--timeout, SAOP_TIMEOUT_MS); waiting" \
    "$tmp/err" || fail "timeout: $(cat "$tmp/err")"
! grep -q 'unreachable' "$tmp/err" || fail "timeout: $(cat "$tmp/err")"
rm -f "$SAOP_DB"

# 4. 429, Retry-After: 300.
fake_llm_start --repeat-last '{"status": 429, "retry_after": 300}'
saop-suspend -v "$tmp/in" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for 'grep -q "rate limited" "$tmp/err" || ! kill -0 $pid 2>/dev/null' \
    "the rate limit's wait"
kill -s TERM "$pid" 2>/dev/null || true
st=0
wait "$pid" || st=$?
[ "$st" -eq 75 ] || fail "429: exit $st: $(cat "$tmp/err")"
[ "$(grep -c 'rate limited by' "$tmp/err")" -eq 1 ] ||
    fail "429 said more than once: $(cat "$tmp/err")"
grep -q "rate limited by $SAOP_API_BASE (HTTP 429): waiting 5.0 min as it asks (Ctrl-C saves the turn and stops; --no-wait: no waiting, --max-wait: how long)" \
    "$tmp/err" || fail "429: $(cat "$tmp/err")"
grep -q "stopped by a signal after waiting [0-9.]* m\{0,1\}s of the 5.0 min the rate limit of $SAOP_API_BASE asked" \
    "$tmp/err" || fail "429, signal: $(cat "$tmp/err")"
! grep -q 'unreachable\|after waiting 0 ms' "$tmp/err" ||
    fail "429, signal: $(cat "$tmp/err")"
jqf '.suspend.limit == "signal"' "$tmp/out"
[ "$(fake_llm_requests | wc -l)" -eq 1 ] || fail "429: called again"
rm -f "$SAOP_DB"
# Longer than --max-wait: not waited for.
start=$(date +%s)
expect_status 75 saop-suspend --max-wait 60s "$tmp/in" >"$tmp/out" 2>"$tmp/err"
[ $(($(date +%s) - start)) -lt 30 ] || fail "429 waited past --max-wait"
grep -q "rate limited by $SAOP_API_BASE (HTTP 429) for 5.0 min, longer than the wait allowed (60.0 s): not waiting" \
    "$tmp/err" || fail "429 --max-wait: $(cat "$tmp/err")"
grep -q 'suspended (rate limited longer than the wait allowed' "$tmp/err" ||
    fail "429 --max-wait: $(cat "$tmp/err")"
jqf '.suspend.limit == "max-wait"' "$tmp/out"
exit 0
