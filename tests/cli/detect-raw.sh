#!/bin/sh
# saop-detect -R: all of the input is the raw text of one record.
. "$top_srcdir/tests/cli/lib.sh"

printf '{"a":' | expect_status 1 saop-detect -R --task T >"$tmp/out"
jqf '.task_id == "T" and .raw == "{\"a\":" and .state == "TRUNCATED"' "$tmp/out"
jqf '.detect.closing == "}" and .detect.close_index == 1 and .detect.expected == "a value"' "$tmp/out"
jqf '.detect.truncation_index == 5 and .detect.resume_index == 5' "$tmp/out"
[ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "-R: not one line"

# A file gives the same; a complete text exits 0.
printf '{"a":' >"$tmp/in.json"
expect_status 1 saop-detect -R --task T "$tmp/in.json" >"$tmp/out2"
cmp "$tmp/out" "$tmp/out2"
printf '\357\273\277 [1, "\\u00e9\303\251"]\n' | saop-detect -R >"$tmp/ok" ||
    fail "a complete text with a BOM is not OK"
jqf '.state == "OK" and .detect.bom and .raw == "\ufeff [1, \"\\u00e9é\"]\n"' "$tmp/ok"

# -R -q: the status alone; -R -r: the text itself, with --close closed.
expect_status 1 saop-detect -R -q <"$tmp/in.json" >"$tmp/q"
[ ! -s "$tmp/q" ] || fail "-R -q wrote something"
expect_status 1 saop-detect -R -r --close <"$tmp/in.json" >"$tmp/R"
[ "$(cat "$tmp/R")" = '{}' ] || fail "-R -r --close: $(cat "$tmp/R")"
expect_status 1 saop-detect -R --close <"$tmp/in.json" >"$tmp/c"
jqf '.raw == "{}" and .detect.closed == "}" and .state == "TRUNCATED"' "$tmp/c"

# --close never invents: a dangling key goes, a partial literal is
# finished, a cut escape goes; the text up to close_index, then closing.
for pair in '{"a":1,"b"|{"a":1}' '[{"key": "value", "key|[{"key": "value"}]' \
    '{"a":[tr|{"a":[true]}' '"text \u00|"text "' '"bar\|"bar"' '[1.|[1]' \
    '[-|[]' '{"a":|{}'; do
	printf '%s' "${pair%%|*}" >"$tmp/p.json"
	expect_status 1 saop-detect -R -r --close "$tmp/p.json" >"$tmp/pR"
	[ "$(cat "$tmp/pR")" = "${pair#*|}" ] ||
	    fail "--close of ${pair%%|*}: $(cat "$tmp/pR")"
	expect_status 1 saop-detect -R "$tmp/p.json" >"$tmp/pr"
	jq -j '.raw[:.detect.close_index] + .detect.closing' "$tmp/pr" >"$tmp/pj"
	[ "$(cat "$tmp/pj")" = "${pair#*|}" ] ||
	    fail "close_index + closing of ${pair%%|*}: $(cat "$tmp/pj")"
done
# Nothing that determines a value: no closing, the text as it came.
printf -- '-' >"$tmp/m.json"
expect_status 1 saop-detect -R -r --close "$tmp/m.json" >"$tmp/mR"
[ "$(cat "$tmp/mR")" = '-' ] || fail "--close of '-': $(cat "$tmp/mR")"

# A cut UTF-8 character: --close drops it (closing_bytes stays empty),
# and the resume point is before it.
printf '["\342\202' >"$tmp/cut.json"
expect_status 1 saop-detect -R --close "$tmp/cut.json" >"$tmp/cut"
jqf '.raw == "[\"\"]" and .detect.closing_bytes == [] and .detect.closing == "\"]"' "$tmp/cut"
jqf '.detect.close_index == 2 and .detect.resume_index == 2' "$tmp/cut"
expect_status 1 saop-detect -R -r --close "$tmp/cut.json" >"$tmp/cutR"
saop-detect -R -q "$tmp/cutR" || fail "-r --close of a cut character is not complete"

# Invalid UTF-8 cannot stand in a JSON string: U+FFFD, counted.
printf '["a\377b", "\300\257"]' >"$tmp/bad.json"
expect_status 1 saop-detect -R "$tmp/bad.json" >"$tmp/bad"
jqf '.state == "INVALID" and .detect.error.offset == 3 and .detect.replaced == 3' "$tmp/bad"
jqf '.raw == "[\"a\ufffdb\", \"\ufffd\ufffd\"]"' "$tmp/bad"
# ...but -r writes the bytes as they came.
expect_status 1 saop-detect -R -r "$tmp/bad.json" >"$tmp/badR"
cmp "$tmp/bad.json" "$tmp/badR"

# NUL and control bytes are escaped, not lost.
printf '"a\000b\001\tc"' >"$tmp/nul.json"
expect_status 1 saop-detect -R "$tmp/nul.json" >"$tmp/nul"
jqf '.raw == "\"a\u0000b\u0001\tc\"" and .detect.error.offset == 2' "$tmp/nul"
jqf '.detect.error.message | test("control character 0x00")' "$tmp/nul"

# Whitespace only: truncated and empty.
printf ' \n\t' | expect_status 1 saop-detect -R >"$tmp/ws"
jqf '.detect.empty and .detect.truncated and .detect.closing == null and .detect.close_index == null' "$tmp/ws"
