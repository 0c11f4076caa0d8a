#!/bin/sh
# saop-validate --check at its edges (issue 25: lib/check.c): an empty
# command and a program name too long are 78 before any record is read;
# a check the shell cannot run is 78 on its record; a check killed by a
# signal, and one whose stderr is not UTF-8, fail the record in words
# (the bytes that are not UTF-8 as '?'); an empty PATH still finds
# programs in /usr/bin:/bin; a record without a turn sets no SAOP_TURN;
# a check that closes its stdin unread kills no saop-validate by SIGPIPE:
# its status alone decides.
. "$top_srcdir/tests/cli/lib.sh"

echo '{}' >"$tmp/any.json"
printf '%s\n' '{"task_id":"t","raw":"{\"a\":1}"}' >"$tmp/rec"
v() {
	saop-validate --schema "$tmp/any.json" --no-retry "$@"
}

expect_status 78 v --check ' ' <"$tmp/rec" >"$tmp/out" 2>"$tmp/err"
grep -q -x 'saop-validate: --check: the command is empty' "$tmp/err" ||
    fail "empty: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "a record written: $(cat "$tmp/out")"
long=$(head -c 5000 /dev/zero | tr '\0' a)
expect_status 78 v --check "$long" <"$tmp/rec" >"$tmp/out" 2>"$tmp/err"
grep -q "the program name is too long" "$tmp/err" || fail "long: $(cat "$tmp/err")"
[ "$(wc -c <"$tmp/err")" -lt 300 ] || fail "the long name written whole"

expect_status 78 v --check 'true; no_such_program_saop' <"$tmp/rec" \
    >"$tmp/out" 2>"$tmp/err"
jqf '.error.status == 78 and .error.message == "--check '"'"'true; no_such_program_saop'"'"' cannot run (status 127)"' \
    "$tmp/out"

expect_status 1 v --check 'kill -9 $$' <"$tmp/rec" >"$tmp/out" 2>"$tmp/err"
jqf '.state == "INVALID" and .validate.errors == [{"path": "check:1",
    "keyword": "check", "message": "check:1: killed by signal 9"}]' "$tmp/out"
grep -q -x 'saop-validate: line 1: check:1: killed by signal 9' "$tmp/err" ||
    fail "signal: $(cat "$tmp/err")"

expect_status 1 v --check 'printf "bad \377\376 byte" >&2; exit 1' \
    <"$tmp/rec" >"$tmp/out" 2>"$tmp/err"
jqf '.validate.errors[0].message == "check:1: bad ?? byte"' "$tmp/out"

expect_status 0 env PATH= "$(command -v saop-validate)" --schema \
    "$tmp/any.json" --no-retry --check true <"$tmp/rec" >"$tmp/out"
jqf '.state == "OK"' "$tmp/out"

# A record without a turn: SAOP_TURN is not set for the check at all.
printf '%s\n' '{"task_id":"t","raw":"{}"}' '{"task_id":"t","turn":4,"raw":"{}"}' |
    expect_status 1 v --check 'test -z "${SAOP_TURN+x}"' >"$tmp/out" 2>/dev/null
[ "$(jq -r .state "$tmp/out" | tr '\n' ' ')" = "OK INVALID " ] ||
    fail "SAOP_TURN: $(cat "$tmp/out")"

# A check's long stderr clipped at 2000 bytes, "..." after; a command with
# blanks before its path; an empty PATH entry (the current directory).
expect_status 1 v --check 'head -c 5000 /dev/zero | tr "\0" e >&2; exit 1' \
    <"$tmp/rec" >"$tmp/out" 2>/dev/null
jqf '.validate.errors[0].message | length == 2012 and endswith("eee...")' "$tmp/out"
expect_status 0 v --check '  /bin/true  x' <"$tmp/rec" >"$tmp/out"
jqf '.state == "OK"' "$tmp/out"
expect_status 0 env PATH=":/usr/bin:/bin" "$(command -v saop-validate)" \
    --schema "$tmp/any.json" --no-retry --check true <"$tmp/rec" >"$tmp/out"
jqf '.state == "OK"' "$tmp/out"

# A check that closes its stdin before reading a 300 kB answer (more
# than a pipe holds): saop-validate is not killed by SIGPIPE and lives on
# to read the check's status, 0 or 1.
big=$(head -c 300000 /dev/zero | tr '\0' a)
printf '{"task_id":"t","raw":"\\"%s\\""}\n' "$big" >"$tmp/big"
expect_status 0 v --check 'true; exec 0<&-; exit 0' <"$tmp/big" >"$tmp/out"
jqf '.state == "OK"' "$tmp/out"
expect_status 1 v --check 'true; exec 0<&-; echo no >&2; exit 1' <"$tmp/big" \
    >"$tmp/out" 2>/dev/null
jqf '.state == "INVALID" and .validate.errors[0].message == "check:1: no"' \
    "$tmp/out"
exit 0
