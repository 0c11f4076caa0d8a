#!/bin/sh
# saop-validate without a model: valid, repaired and invalid records, -r,
# -R, --schema, --no-repair, errors on stderr, exit statuses.
. "$top_srcdir/tests/cli/lib.sh"
in="$data/validate/records.ndjson"

# Four records: valid, repaired, schema-invalid, not JSON: exit 1.
expect_status 1 saop-validate "$in" >"$tmp/out" 2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" -eq 4 ] || fail "not 4 records: $(cat "$tmp/out")"
sed -n 1p "$tmp/out" >"$tmp/r1"
jqf '.state == "OK" and .validate == {"valid": true, "attempts": 0,
    "repairs": []} and .envelope.action.parameters.path == "."' "$tmp/r1"
# The record is kept as it was, with the new fields after it.
jqf 'keys_unsorted == ["task_id", "turn", "raw", "envelope", "validate",
    "state"]' "$tmp/r1"
sed -n 2p "$tmp/out" >"$tmp/r2"
jqf '.state == "OK" and .validate.repairs == ["code_fence", "prose",
    "trailing_comma"] and .envelope.agent_role == "reviewer"' "$tmp/r2"
# raw stays what the model wrote.
jqf '.raw | startswith("Here you go:")' "$tmp/r2"
sed -n 3p "$tmp/out" >"$tmp/r3"
jqf '.state == "INVALID" and .validate.valid == false and
    .validate.attempts == 0 and (.envelope | not) and
    ([.validate.errors[].path] | index("/turn_index") != null) and
    (.validate.errors | all(has("path") and has("keyword") and
    has("message")))' "$tmp/r3"
sed -n 4p "$tmp/out" >"$tmp/r4"
jqf '.state == "INVALID" and .validate.errors[0].keyword == "syntax" and
    (.validate.errors[0].message | test("line 1, column [0-9]+ \\(byte 0\\)"))
    and .extra == {"kept": [1, 2]}' "$tmp/r4"
# One stderr line per error, naming the record's line and the pointer.
grep -q '^saop-validate: line 3: /turn_index' "$tmp/err" ||
    fail "no line-3 /turn_index error on stderr: $(cat "$tmp/err")"
grep -q '^saop-validate: line 4: (root): invalid JSON' "$tmp/err" ||
    fail "no line-4 syntax error on stderr: $(cat "$tmp/err")"
n3=$(jq '.validate.errors | length' "$tmp/r3")
[ "$(grep -c '^saop-validate: line 3: ' "$tmp/err")" -eq "$n3" ] ||
    fail "not one stderr line per error: $(cat "$tmp/err")"
# No model, no database.
[ ! -e "$SAOP_DB" ] || fail "a database was made without a model"

# -q: nothing at all, the same status.
expect_status 1 saop-validate -q "$in" >"$tmp/out" 2>"$tmp/err"
[ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] || fail "-q printed something"

# -r: the envelopes of the valid records only, one compact line each.
expect_status 1 saop-validate -r "$in" >"$tmp/out" 2>/dev/null
[ "$(wc -l <"$tmp/out")" -eq 2 ] || fail "-r: $(cat "$tmp/out")"
jq -c . "$data/validate/good.json" >"$tmp/want"
head -n 1 "$tmp/out" | diff -u "$tmp/want" - || fail "-r: envelope differs"
sed -n 2p "$tmp/out" | jq -e '.action == null' >/dev/null ||
    fail "-r: second envelope"

# --no-repair: the fenced record is invalid now.
expect_status 1 saop-validate -q --no-repair "$in"
sed -n 2p "$in" | expect_status 1 saop-validate --no-repair 2>/dev/null >"$tmp/out"
jqf '.state == "INVALID" and .validate.repairs == []' "$tmp/out"

# All valid: exit 0.
head -n 2 "$in" | saop-validate -q || fail "valid records did not exit 0"

# -R: all of the input is one answer.
expect_status 0 saop-validate -R -q <"$data/validate/good.json"
# -R FILE reads FILE, as jq -R . FILE does: the same record as from stdin.
saop-validate -R --task t <"$data/validate/good.json" >"$tmp/stdin.out"
saop-validate -R --task t "$data/validate/good.json" >"$tmp/file.out" ||
    fail "-R FILE: exit $?"
cmp -s "$tmp/stdin.out" "$tmp/file.out" ||
    fail "-R FILE: $(cat "$tmp/file.out") for $(cat "$tmp/stdin.out")"
expect_status 66 saop-validate -R "$tmp/nothing.json" 2>"$tmp/err"
grep -q "nothing.json: No such file" "$tmp/err" || fail "-R missing: $(cat "$tmp/err")"
expect_status 66 saop-resume -R "$tmp" 2>"$tmp/err"
grep -q "Is a directory" "$tmp/err" || fail "-R dir: $(cat "$tmp/err")"
printf '{"saop": "1.0"}' | saop-validate -R >"$tmp/out" 2>"$tmp/err" &&
    fail "-R: an incomplete envelope was valid"
jqf '.state == "INVALID" and .raw == "{\"saop\": \"1.0\"}"' "$tmp/out"
grep -q '^saop-validate: line 1: ' "$tmp/err" || fail "-R: no error line"

# --schema: a schema of one's own.
schema="$data/validate/custom-schema.json"
printf '{"city": "Paris", "population": 2102650}' |
    saop-validate -R -r --schema "$schema" >"$tmp/out" ||
    fail "--schema: a valid instance was refused"
[ "$(cat "$tmp/out")" = '{"city":"Paris","population":2102650}' ] ||
    fail "--schema -r: $(cat "$tmp/out")"
printf "{'city': 'Paris', population: 2102650.5}" |
    saop-validate -R --schema "$schema" >"$tmp/out" 2>"$tmp/err" &&
    fail "--schema: a bad population was accepted"
jqf '.validate.repairs == ["single_quotes", "unquoted_key"] and
    .validate.errors[0].path == "/population"' "$tmp/out"

# An unreadable schema is a configuration error (78).
expect_status 78 saop-validate -q --schema "$tmp/nonexistent.json" </dev/null
printf '{"type": 12}' >"$tmp/bad-schema.json"
expect_status 78 saop-validate -q --schema "$tmp/bad-schema.json" </dev/null
# A record line that is not JSON: 65 naming the line.
printf '{"raw": "{}"}\nnot json\n' | expect_status 65 saop-validate -q \
    2>"$tmp/err"
grep -q 'line 2' "$tmp/err" || fail "65 without the line: $(cat "$tmp/err")"
# A missing input file: 66.  A bad count: 64.
expect_status 66 saop-validate "$tmp/missing.ndjson"
expect_status 64 saop-validate --max-retries x </dev/null

# A record saop-detect flagged TRUNCATED and no one resumed stays so.
jq -nc '{raw: "{\"saop\": \"1.", state: "TRUNCATED"}' |
    saop-validate 2>/dev/null >"$tmp/out" && fail "TRUNCATED exit 0"
jqf '.state == "TRUNCATED" and .validate.valid == false' "$tmp/out"

# A record without raw is invalid, and says so.
echo '{"turn": 1}' | saop-validate 2>"$tmp/err" >"$tmp/out" &&
    fail "no raw: exit 0"
jqf '.state == "INVALID" and .validate.errors[0].keyword == "raw"' "$tmp/out"
exit 0
