#!/bin/sh
# saop-validate --check CMD: after the schema passes, CMD reads the
# answer's JSON; exit 0 accepts.  A check that fails once leads to one
# correction turn carrying its stderr, then OK; a passing check costs no
# call; the record names the check (validate.errors, path "check:N");
# the escalation is a schema error's; its stderr is clipped; a check that
# cannot run is 78, naming the command, before any record is read.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

cat >"$tmp/span.json" <<'JSON'
{"type": "object", "properties": {"start": {"type": "string"},
 "end": {"type": "string"}}, "required": ["start", "end"]}
JSON
# The user's rule that JSON Schema cannot say; it also notes what it saw.
cat >"$tmp/after.sh" <<SH
#!/bin/sh
cat >"$tmp/seen.json"
printf '%s %s\n' "\$SAOP_TASK_ID" "\$SAOP_TURN" >>"$tmp/env"
jq -e '.end > .start' "$tmp/seen.json" >/dev/null && exit 0
echo "the end date must be after the start date" >&2
exit 1
SH
chmod +x "$tmp/after.sh"
record() {
	jq -nc --arg raw "$1" '{task_id: "t-chk", turn: 4, request: {messages:
	    [{role: "user", content: "When?"}]}, raw: $raw}'
}
late='{"start": "2026-03-01", "end": "2026-02-01"}'
ok='{"start": "2026-03-01", "end": "2026-04-01"}'

# 1. Fails once: one correction turn carrying its message, then OK.
fake_llm_start "$(jq -nc --arg t "$ok" '{text: $t}')"
record "$late" | expect_status 0 saop-validate --schema "$tmp/span.json" \
    --check "$tmp/after.sh" >"$tmp/out"
[ "$(fake_llm_requests | wc -l)" -eq 1 ] || fail "not one call"
jqf '.state == "OK" and .validate.attempts == 1 and .envelope.end == "2026-04-01"' "$tmp/out"
fake_llm_bodies | jq -r '.messages[-1].content' >"$tmp/prompt"
head -1 "$tmp/prompt" | grep -qF "Errors: check:1: the end date must be after the start date. Please restate your complete response starting from '{'." ||
    fail "the correction turn: $(cat "$tmp/prompt")"
# The check read the answer's JSON, with the record's task and turn.
jqf '.end == "2026-04-01"' "$tmp/seen.json"
[ "$(sort -u "$tmp/env")" = "t-chk 4" ] || fail "environment: $(cat "$tmp/env")"
ev=$(sql "SELECT data FROM events WHERE event = 'MALFORMED_RESPONSE'")
printf '%s' "$ev" | jq -e '.errors == [{"path": "check:1", "keyword": "check",
    "message": "check:1: the end date must be after the start date"}]' >/dev/null ||
    fail "the event: $ev"

# 2. A passing check costs no call (any call would get a 500).
fake_llm_start
record "$ok" | expect_status 0 saop-validate --schema "$tmp/span.json" \
    --check "$tmp/after.sh" --check true >"$tmp/out"
[ "$(fake_llm_requests | wc -l)" -eq 0 ] || fail "a passing check made a call"
jqf '.state == "OK" and .validate.attempts == 0' "$tmp/out"

# 3. Without a model the record names the check: the second of two.
unset SAOP_API_KEY SAOP_API_BASE
record "$late" | expect_status 1 saop-validate --schema "$tmp/span.json" \
    --check true --check "$tmp/after.sh" >"$tmp/out" 2>"$tmp/err"
jqf '.state == "INVALID" and .validate.errors == [{"path": "check:2",
    "keyword": "check", "message": "check:2: the end date must be after the start date"}]' "$tmp/out"
grep -q "check:2: the end date" "$tmp/err" || fail "not reported on stderr"
# A check that writes nothing: its status is the message.
record "$ok" | expect_status 1 saop-validate --schema "$tmp/span.json" \
    --check "sh -c 'exit 3'" >"$tmp/out" 2>/dev/null
jqf '.validate.errors[0].message == "check:1: exited with status 3"' "$tmp/out"
# A long stderr is clipped to 2000 bytes and "...".
record "$ok" | expect_status 1 saop-validate --schema "$tmp/span.json" \
    --check "sh -c 'head -c 5000 /dev/zero | tr \"\\\\0\" x >&2; exit 1'" \
    >"$tmp/out" 2>/dev/null
jqf '(.validate.errors[0].message | length) == (9 + 2000 + 3) and
    (.validate.errors[0].message | endswith("xxx..."))' "$tmp/out"

# 4. Escalation as for schema errors: a check that never passes.
fake_llm_start --repeat-last "$(jq -nc --arg t "$late" '{text: $t}')"
record "$late" | expect_status 3 saop-validate --schema "$tmp/span.json" \
    --check "$tmp/after.sh" >"$tmp/out" 2>/dev/null
jqf '.state == "USER_ESCALATION" and .validate.attempts == 2 and
    .validate.errors[0].path == "check:1"' "$tmp/out"
[ "$(fake_llm_requests | wc -l)" -eq 2 ] || fail "not 2 correction turns"

# 5. The check runs only once the schema passes.
: >"$tmp/env"
unset SAOP_API_KEY SAOP_API_BASE
record '{"start": 1}' | expect_status 1 saop-validate --schema "$tmp/span.json" \
    --check "$tmp/after.sh" >"$tmp/out" 2>/dev/null
[ ! -s "$tmp/env" ] || fail "the check ran on a schema-invalid answer"
jqf '.validate.errors[0].path != "check:1"' "$tmp/out"

# 6. A check that cannot run: 78 naming it, before any record is read.
for c in "$tmp/missing.sh" "no-such-program-saop --x" "$tmp/span.json"; do
	record "$ok" | expect_status 78 saop-validate --check true --check "$c" \
	    >"$tmp/out" 2>"$tmp/err"
	[ ! -s "$tmp/out" ] || fail "a record was written"
	grep -qF -- "--check '$c'" "$tmp/err" || fail "not named: $(cat "$tmp/err")"
done
# No record is read: a named input that does not exist is not even opened.
expect_status 78 saop-validate --check "$tmp/missing.sh" "$tmp/no-file" 2>/dev/null
exit 0
