#!/bin/sh
# saop-validate on hostile answers and schemas (issue 8): a BOM, a fence
# and no JSON (heap corruption in local repair, defect 1); a $ref loop
# (exit 78 when the schema is read, defect 12); an answer too deep for a
# recursive schema (a record verdict, never a record without state).
. "$top_srcdir/tests/cli/lib.sh"

# A BOM, a fenced block that is no JSON and no '{' or '[': each record is
# written with its verdict, and the error is the scanner's, at the byte
# after the BOM.
zs=$(head -c 5000 /dev/zero | tr '\0' z)
printf '{"raw":"\\ufeff```\\n  abc\\n```%s"}\n{"raw":"{}"}\n' "$zs" >"$tmp/in"
expect_status 1 saop-validate --no-retry "$tmp/in" >"$tmp/out" 2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" -eq 2 ] || fail "not 2 records out: $(cat "$tmp/err")"
sed -n 1p "$tmp/out" >"$tmp/r1"
jqf '.state == "INVALID" and .validate.repairs == ["bom"] and
    (.validate.errors | length) == 1 and
    .validate.errors[0].keyword == "syntax" and
    (.validate.errors[0].message | test("line 1, column 4 \\(byte 3\\)"))' \
    "$tmp/r1"
jqf '.raw | endswith("zzz")' "$tmp/r1"
sed -n 2p "$tmp/out" >"$tmp/r2"
jqf '.state == "INVALID" and .validate.errors[0].keyword == "required"' \
    "$tmp/r2"
printf '\357\273\277```\nabc\n```' >"$tmp/raw"
expect_status 1 saop-validate -R --no-retry <"$tmp/raw" >"$tmp/out" \
    2>"$tmp/err"
grep -q 'line 1, column 4 (byte 3): unexpected' "$tmp/err" ||
    fail "-r: not the scanner's error: $(cat "$tmp/err")"
! grep -q 'empty' "$tmp/err" || fail "-r: $(cat "$tmp/err")"

# A $ref loop that never goes into the value is a schema fault: 78, naming
# the schema file and the pointer of the $ref that closes it.
printf '{"raw":"{}"}\n' >"$tmp/one"
printf '{"$ref":"#"}\n' >"$tmp/self.json"
expect_status 78 saop-validate --no-retry --schema "$tmp/self.json" \
    "$tmp/one" >"$tmp/out" 2>"$tmp/err"
grep -q '/\$ref: a \$ref loop in file://.*/self\.json' "$tmp/err" ||
    fail "{\"\$ref\":\"#\"}: $(cat "$tmp/err")"
printf '%s\n' '{"$defs": {"a": {"$ref": "#/$defs/b"},' \
    '"b": {"not": {"$ref": "#/$defs/a"}}},' \
    '"properties": {"x": {"$ref": "#/$defs/a"}}}' >"$tmp/cycle.json"
expect_status 78 saop-validate --no-retry --schema "$tmp/cycle.json" \
    "$tmp/one" >"$tmp/out" 2>"$tmp/err"
grep -q '/\$defs/b/not/\$ref: a \$ref loop in file://.*/cycle\.json' \
    "$tmp/err" || fail "a cycle of \$refs: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "records written with a broken schema"

# Recursion through "properties" is sound; an answer deeper than the
# evaluation limit is INVALID with one "limit" error where it stopped, and
# the next record is validated as usual.
printf '{"type":"object","properties":{"a":{"$ref":"#"}}}\n' >"$tmp/rec.json"
awk 'BEGIN {
	printf "{\"raw\":\""
	for (i = 0; i < 2040; i++) printf "{\\\"a\\\":"
	printf "{}"
	for (i = 0; i < 2040; i++) printf "}"
	print "\"}"
	print "{\"raw\":\"{\\\"a\\\":{}}\"}"
}' >"$tmp/deep"
expect_status 1 saop-validate --no-retry --schema "$tmp/rec.json" \
    "$tmp/deep" >"$tmp/out" 2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" -eq 2 ] || fail "not 2 records out: $(cat "$tmp/err")"
sed -n 1p "$tmp/out" >"$tmp/r1"
jqf '.state == "INVALID" and .validate.valid == false and
    (.validate.errors | length) == 1 and
    .validate.errors[0].keyword == "limit" and
    (.validate.errors[0].path | test("^(/a)+$")) and
    (.validate.errors[0].message | test("2000"))' "$tmp/r1"
sed -n 2p "$tmp/out" >"$tmp/r2"
jqf '.state == "OK" and .envelope == {"a": {}}' "$tmp/r2"
grep -q '^saop-validate: line 1: /a/a/a' "$tmp/err" ||
    fail "no line-1 limit error on stderr: $(head -c 300 "$tmp/err")"
