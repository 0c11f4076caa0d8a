#!/bin/sh
# --header 'Name: value' (repeatable) and SAOP_HEADERS reach the model;
# SAOP_AUTH_HEADER names the key's header (Azure: api-key); a header named
# as one saop sends replaces it; --dry-run shows them with the key and
# secret-looking values masked; a bad header is a usage error (64), a bad
# SAOP_HEADERS line a configuration error (78).  --timeout and
# --connect-timeout are taken, a bad value refused.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"
key=sk-headers-test-0123456789
printf '{"task_id": "h", "request": {"messages": [{"role": "user", "content": "hi"}]}}\n' >"$tmp/in"

# --dry-run: every header shown, the key masked.
SAOP_API_BASE=http://127.0.0.1:9/v1 SAOP_MODEL=m SAOP_API_KEY=$key \
    SAOP_HEADERS='X-From-Env: e1' \
    saop-suspend --dry-run --header 'X-Org: acme' \
    --header 'X-Api-Token: tok-0123456789abcdef' <"$tmp/in" >"$tmp/dry" ||
    fail "--dry-run exited $?"
grep -qx 'X-Org: acme' "$tmp/dry" || fail "no X-Org: $(cat "$tmp/dry")"
grep -qx 'X-From-Env: e1' "$tmp/dry" || fail "no SAOP_HEADERS: $(cat "$tmp/dry")"
grep -q '^X-Api-Token: tok\.\.\.\*\*\*\*$' "$tmp/dry" ||
    fail "a token header is not masked: $(cat "$tmp/dry")"
grep -q '^Authorization: Bearer sk-\.\.\.\*\*\*\*$' "$tmp/dry" ||
    fail "no masked Authorization: $(cat "$tmp/dry")"
! grep -q -e "$key" -e 0123456789abcdef "$tmp/dry" || fail "a secret in --dry-run"
# SAOP_AUTH_HEADER: the key alone under that name, no Authorization.
SAOP_API_BASE=http://127.0.0.1:9/v1 SAOP_MODEL=m SAOP_API_KEY=$key \
    SAOP_AUTH_HEADER=api-key saop-resume --dry-run --header 'X-A: 1' \
    <<EOR >"$tmp/dry2" || fail "resume --dry-run exited $?"
{"raw": "[1, ", "request": {"messages": [{"role": "user", "content": "n"}]}}
EOR
grep -q '^api-key: sk-\.\.\.\*\*\*\*$' "$tmp/dry2" || fail "no api-key: $(cat "$tmp/dry2")"
! grep -q '^Authorization' "$tmp/dry2" || fail "Authorization beside api-key"
grep -qx 'X-A: 1' "$tmp/dry2" || fail "saop-resume: no X-A: $(cat "$tmp/dry2")"

# A real call: the server gets them; one of the user's replaces saop's own.
FAKE_LLM_KEY=$key fake_llm_start '{"text": "{\"ok\": true}"}' \
    '{"text": "{\"ok\": true}"}'
SAOP_API_KEY=$key SAOP_AUTH_HEADER=api-key SAOP_HEADERS="X-Env: 2
X-Other: 3" saop-suspend --header 'X-Org: acme' --header 'Accept: text/event-stream, */*' \
    --timeout 30 --connect-timeout 5 <"$tmp/in" >"$tmp/out" ||
    fail "the call failed: $?"
fake_llm_requests >"$tmp/req"
jqf '.headers["x-org"] == "acme" and .headers["x-env"] == "2" and .headers["x-other"] == "3"' "$tmp/req"
# The server checks the key (FAKE_LLM_KEY) and logs where it came.
jq -e '.key == "ok" and .key_in == ["api-key"]' "$tmp/req" >/dev/null ||
    fail "the key is not in api-key alone: $(jq -c '[.key, .key_in]' "$tmp/req")"
jqf '.headers["accept"] == "text/event-stream, */*"' "$tmp/req"
# saop-validate sends them too (a correction turn).
printf '{"raw": "{\\"saop\\": 1}", "request": {"messages": [{"role": "user", "content": "n"}]}}\n' >"$tmp/bad"
SAOP_API_KEY=$key saop-validate --header 'X-Val: v' --max-retries 1 <"$tmp/bad" >/dev/null 2>&1 || true
fake_llm_requests | tail -n 1 >"$tmp/req2"
jqf '.headers["x-val"] == "v"' "$tmp/req2"

# --timeout is the limit of the call: a model that would answer in ten
# minutes (longer than any load makes the call) is given up at 0.5 s
# (suspended with --no-wait), and said as a timeout.
fake_llm_start --no-key '{"text": "{}", "delay_ms": 600000}'
expect_status 75 saop-suspend --no-wait --timeout 0.5 --db "$tmp/t.sqlite" \
    <"$tmp/in" >/dev/null 2>"$tmp/err"
grep -q -i 'timed out\|timeout' "$tmp/err" || fail "--timeout: $(cat "$tmp/err")"

# Bad headers and timeouts.
expect_status 64 saop-suspend --header 'no colon' <"$tmp/in" >/dev/null 2>"$tmp/err"
grep -q -- "--header: 'no colon' is not 'Name: value'" "$tmp/err" || fail "$(cat "$tmp/err")"
SAOP_HEADERS='bad header' expect_status 78 saop-suspend <"$tmp/in" >/dev/null 2>"$tmp/err"
grep -q 'SAOP_HEADERS' "$tmp/err" || fail "$(cat "$tmp/err")"
expect_status 64 saop-suspend --timeout 0 <"$tmp/in" >/dev/null 2>&1
expect_status 64 saop-suspend --connect-timeout x <"$tmp/in" >/dev/null 2>&1
exit 0
