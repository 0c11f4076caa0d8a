#!/bin/sh
# How the model's configuration is read, at its edges (issue 25:
# lib/llm-config.c), as --dry-run shows it: SAOP_HEADERS with CRLF line
# ends and empty lines, one of its lines too long (78); --header with a
# line break (64); SAOP_AUTH_HEADER that is no header name (78); Gemini's
# key from GEMINI_API_KEY or GOOGLE_API_KEY, a model named "models/...",
# a base with slashes and a query of its own.  No key is shown.
. "$top_srcdir/tests/cli/lib.sh"

export SAOP_MODEL=m SAOP_API_BASE=http://127.0.0.1:9/v1
export SAOP_API_KEY=sk-test-config-edges-0123
echo '{"task_id":"t","request":{"messages":[{"role":"user","content":"x"}]}}' >"$tmp/rec"
# heads: the request line and headers --dry-run printed, in $tmp/heads.
heads() {
	sed '/^$/q' "$tmp/out" >"$tmp/heads"
}

SAOP_HEADERS=$(printf 'X-A: 1\r\n\r\nX-B: 2\n') \
    expect_status 0 saop-suspend --dry-run <"$tmp/rec" >"$tmp/out"
heads
[ "$(grep -c '^X-' "$tmp/heads")" -eq 2 ] && grep -q -x 'X-A: 1' "$tmp/heads" &&
    grep -q -x 'X-B: 2' "$tmp/heads" || fail "SAOP_HEADERS: $(cat "$tmp/heads")"

SAOP_HEADERS="X-L: $(head -c 1100 /dev/zero | tr '\0' a)" \
    expect_status 78 saop-suspend --dry-run <"$tmp/rec" >"$tmp/out" 2>"$tmp/err"
grep -q 'SAOP_HEADERS: a line of more than 1023 bytes' "$tmp/err" ||
    fail "long line: $(cat "$tmp/err")"

expect_status 64 saop-suspend --dry-run --header "$(printf 'X-A: 1\rX-B: 2')" \
    <"$tmp/rec" >"$tmp/out" 2>"$tmp/err"
grep -q -x 'saop-suspend: --header: a header may not hold a line break' "$tmp/err" ||
    fail "--header: $(cat "$tmp/err")"

SAOP_AUTH_HEADER='X Bad' expect_status 78 saop-suspend --dry-run <"$tmp/rec" \
    >"$tmp/out" 2>"$tmp/err"
grep -q "SAOP_AUTH_HEADER: 'X Bad' is not a header name" "$tmp/err" ||
    fail "SAOP_AUTH_HEADER: $(cat "$tmp/err")"

# Gemini: its own key variables, "models/" named once, the base's own
# query kept before saop's (values redacted when shown).
unset SAOP_API_KEY
GEMINI_API_KEY=gk-abcdefghijklmnop SAOP_PROVIDER=gemini SAOP_MODEL=models/gem-1 \
    SAOP_API_BASE='http://h//v1beta///?foo=1' \
    expect_status 0 saop-suspend --dry-run <"$tmp/rec" >"$tmp/out"
heads
grep -q -x 'POST http://h//v1beta/models/gem-1:streamGenerateContent?foo=\*\*\*\*&alt=\*\*\*\*' \
    "$tmp/heads" || fail "gemini URL: $(cat "$tmp/heads")"
grep -q -x 'x-goog-api-key: gk-\.\.\.\*\*\*\*' "$tmp/heads" ||
    fail "GEMINI_API_KEY: $(cat "$tmp/heads")"
GOOGLE_API_KEY=go-abcdefghijklmnop SAOP_PROVIDER=gemini \
    expect_status 0 saop-suspend --dry-run <"$tmp/rec" >"$tmp/out"
heads
grep -q -x 'x-goog-api-key: go-\.\.\.\*\*\*\*' "$tmp/heads" ||
    fail "GOOGLE_API_KEY: $(cat "$tmp/heads")"
grep -q -e abcdefghijklmnop "$tmp/out" && fail "a key shown"
exit 0
