#!/bin/sh
# saop-detect on records: files and pipes, the detect object and state,
# unknown fields kept in place, -q, -r and --close; events only where a
# database is named (--db, $SAOP_DB) or --log asks.
. "$top_srcdir/tests/cli/lib.sh"
in="$data/detect/records.ndjson"
# No database named (an empty $SAOP_DB is none) until the events' part.
db=$SAOP_DB
SAOP_DB=
cd "$tmp"

# A file and a pipe give the reviewed output, exit 1 (some flagged).
expect_status 1 saop-detect "$in" >"$tmp/file.out"
diff -u "$data/detect/records.out" "$tmp/file.out"
expect_status 1 saop-detect <"$in" >"$tmp/pipe.out"
cmp "$tmp/file.out" "$tmp/pipe.out"
cat "$in" | saop-detect - >"$tmp/dash.out" || [ $? -eq 1 ] ||
    fail "saop-detect - on a pipe"
cmp "$tmp/file.out" "$tmp/dash.out"

# The fields, one record at a time.
sed -n 1p "$tmp/file.out" >"$tmp/r1"
jqf '.state == "OK" and .detect.complete and (.detect.error == null)' "$tmp/r1"
jqf 'keys_unsorted[:4] == ["task_id", "turn", "raw", "keep"] and .keep.x == 1' "$tmp/r1"
sed -n 2p "$tmp/file.out" >"$tmp/r2"
jqf '.state == "TRUNCATED" and .detect.truncated and .detect.truncation_index == 9' "$tmp/r2"
jqf '.detect.open == ["{", "["] and .detect.closing == "]}" and .detect.last_valid_token == ","' "$tmp/r2"
jqf '.finish_reason == "length"' "$tmp/r2"
sed -n 4p "$tmp/file.out" >"$tmp/r4"
# An existing state is replaced in place; the error names the byte.
jqf 'keys_unsorted == ["turn", "raw", "state", "detect"] and .state == "INVALID"' "$tmp/r4"
jqf '.detect.error.offset == 7 and .detect.error.line == 1 and .detect.error.column == 8' "$tmp/r4"
sed -n 5p "$tmp/file.out" >"$tmp/r5"
jqf '.detect.empty and .detect.truncated' "$tmp/r5"

# -q: nothing on stdout, the status alone.
expect_status 1 saop-detect -q "$in" >"$tmp/q.out"
[ ! -s "$tmp/q.out" ] || fail "-q wrote something"
printf '{"raw":"[1]"}\n{"raw":"{}"}\n' | saop-detect -q || fail "-q on complete records"

# --close: raw completed, state stays TRUNCATED, detect.closed says what.
expect_status 1 saop-detect --close "$in" >"$tmp/close.out"
jq -c 'select(.state == "TRUNCATED" and .detect.closing != null)' \
    "$tmp/close.out" >"$tmp/trunc"
[ "$(wc -l <"$tmp/trunc")" -eq 3 ] || fail "--close: not 3 closable records"
# The empty raw determines no value: no closing, raw left as it is.
jq -c 'select(.turn == 4)' "$tmp/close.out" >"$tmp/c4"
jqf '.raw == "" and .detect.closing == null and .detect.close_index == null
    and (.detect | has("closed") | not)' "$tmp/c4"
# The lone high surrogate escape is dropped, not finished.
jq -c 'select(.turn == 5)' "$tmp/close.out" >"$tmp/c5"
jqf '.raw == "{\"k\": \"café \\u00e9 \"}"' "$tmp/c5"
while IFS= read -r line; do
	printf '%s\n' "$line" >"$tmp/one"
	jqf '.detect.closed == .detect.closing' "$tmp/one"
	# The closed raw is complete JSON: jq parses it, saop-detect agrees.
	jq -j '.raw' "$tmp/one" >"$tmp/closed.json"
	jq . "$tmp/closed.json" >/dev/null || fail "--close: raw is not JSON: $(cat "$tmp/closed.json")"
	saop-detect -R -q "$tmp/closed.json" || fail "--close: raw not complete"
done <"$tmp/trunc"
jq -j 'select(.turn == 1) | .raw' "$tmp/close.out" >"$tmp/t1"
[ "$(cat "$tmp/t1")" = '{"a": [1, 2]}' ] || fail "--close: turn 1 raw is $(cat "$tmp/t1")"
# Complete and invalid records keep their raw.
jq -j 'select(.turn == 3) | .raw' "$tmp/close.out" >"$tmp/t3"
[ "$(cat "$tmp/t3")" = '[1, 2] trailing' ] || fail "--close changed an invalid raw"

# -r: the raw texts, one a line; with --close, closed.
expect_status 1 saop-detect -r --close "$in" >"$tmp/R.out"
sed -n 2p "$tmp/R.out" >"$tmp/R2"
[ "$(cat "$tmp/R2")" = '{"a": [1, 2]}' ] || fail "-r --close: $(cat "$tmp/R2")"
[ "$(wc -l <"$tmp/R.out")" -eq 6 ] || fail "-r: not 6 lines"

# No database is touched without --db, $SAOP_DB or --log.
[ ! -e "$db" ] && [ ! -e "$tmp/.saop" ] ||
    fail "saop-detect created a database"
SAOP_DB=$db
# With --log, a truncation is an event.
expect_status 1 saop-detect -q --log "$tmp/events.ndjson" "$in"
[ "$(grep -c PARTIAL_COMPLETION_DETECTED "$tmp/events.ndjson")" -eq 4 ] ||
    fail "--log: not 4 PARTIAL_COMPLETION_DETECTED events"
[ "$(sql "SELECT count(*) FROM events WHERE event = 'PARTIAL_COMPLETION_DETECTED' AND task_id = 't1' AND turn = 1")" -eq 1 ] ||
    fail "the event of t1 turn 1 is not in the database"

# $SAOP_DB names a database as --db does: the events go there (the report
# counts them), and a directory is the same clear error (74) for both.
mkdir -m 700 "$tmp/priv"
SAOP_DB="$tmp/priv/named.sqlite" expect_status 1 saop-detect -q "$in"
[ "$(sqlite3 "$tmp/priv/named.sqlite" "SELECT count(*) FROM events WHERE
    event = 'PARTIAL_COMPLETION_DETECTED'")" -eq 4 ] ||
    fail "\$SAOP_DB: not 4 events"
mkdir -m 700 "$tmp/priv/dir"
SAOP_DB="$tmp/priv/dir" expect_status 74 saop-detect "$in" >/dev/null \
    2>"$tmp/err.env"
expect_status 74 saop-detect --db "$tmp/priv/dir" "$in" >/dev/null \
    2>"$tmp/err.opt"
for how in env opt; do
	grep -q "$tmp/priv/dir is a directory, not a saop state database" \
	    "$tmp/err.$how" || fail "$how DIR: $(cat "$tmp/err.$how")"
done
