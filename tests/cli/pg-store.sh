#!/bin/sh
# The state in PostgreSQL holds what state.sqlite holds: raw outputs byte
# for byte (NUL, multi-byte text, megabytes), --get, --get-latest, --list
# and saop-report as on SQLite; the migrations apply once however many
# programs start at once on an empty database, and again change nothing.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/pg-lib.sh"
pg_start
py=${PYTHON3:-python3}
lite="$tmp/state.sqlite"
pg=$(pg_newdb store)

# Outputs: 3 MB of text, one with NUL and control bytes, multi-byte UTF-8.
"$py" - >"$tmp/in" <<'PY'
import json
outs = ["x" * 3000000, "a\u0000b\u0001\u007f" * 20000,
        "\u00e9\u4e2d\U0001f600 " * 9000, "small"]
for r, o in enumerate(outs):
    msgs = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c", "type": "function",
                 "function": {"name": "fetch%d" % (r % 2), "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": o},
            {"role": "assistant", "content": "ok"}]
    print(json.dumps({"task_id": "t%d" % (r % 2), "turn": 2,
                      "request": {"messages": msgs}}))
# The same output again: stored once.
print(json.dumps({"task_id": "t0", "turn": 3, "request": {"messages": msgs[:0] + [
    {"role": "user", "content": "go"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "d", "type": "function", "function": {"name": "fetch0", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "d", "content": outs[0]},
    {"role": "assistant", "content": "ok"}]}}))
PY
for db in "$lite" "$pg"; do
	saop-prune --db "$db" --threshold 4096 <"$tmp/in" >"$tmp/out" ||
	    fail "prune on $db"
	i=0
	while read -r line; do
		i=$((i + 1))
		printf '%s\n' "$line" | jq -j '.request.messages[2].content' >"$tmp/raw.$i"
	done <"$tmp/in"
	for id in 1 2 3; do
		saop-prune --db "$db" --get "$id" >"$tmp/get.$id" ||
		    fail "--get $id on $db"
		cmp -s "$tmp/get.$id" "$tmp/raw.$id" || fail "row $id differs on $db"
	done
	expect_status 1 saop-prune --db "$db" --get 4 >/dev/null 2>&1
	saop-prune --db "$db" --get-latest fetch1 >"$tmp/latest" || fail "--get-latest on $db"
	cmp -s "$tmp/latest" "$tmp/raw.2" || fail "--get-latest on $db"
	saop-prune --db "$db" --list | cut -f 1-6 >"$tmp/list.$(basename "$db" | tr -c 'a-z\n' _)"
	saop-prune --db "$db" --list t0 | cut -f 1-6 >>"$tmp/list.$(basename "$db" | tr -c 'a-z\n' _)"
	saop-report --db "$db" --json "$tmp/out" |
	    jq -S 'del(.tasks[].reason)' >"$tmp/report.$(basename "$db" | tr -c 'a-z\n' _)"
done
ls "$tmp"/list.* | wc -l | grep -q 2 || fail "lists: $(ls "$tmp")"
set -- "$tmp"/list.*
cmp -s "$1" "$2" || fail "--list differs: $(diff "$1" "$2")"
set -- "$tmp"/report.*
cmp -s "$1" "$2" || fail "reports differ: $(diff "$1" "$2")"
jq -e '.overall.pruned.outputs == 4' "$1" >/dev/null || fail "report: $(cat "$1")"
[ "$(pg_sql "$pg" "SELECT count(*) FROM tool_outputs")" = 3 ] ||
    fail "rows: $(pg_sql "$pg" "SELECT id, task_id FROM tool_outputs")"

# The same tables and columns as state.sqlite.
cols_lite=$(sqlite3 "$lite" "SELECT m.name || '.' || p.name FROM sqlite_master m,
    pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY 1")
cols_pg=$(pg_sql "$pg" "SELECT table_name || '.' || column_name FROM
    information_schema.columns WHERE table_schema = 'public' AND
    table_name <> 'saop_schema_version' ORDER BY 1")
[ "$cols_lite" = "$cols_pg" ] || fail "columns differ: $(printf '%s\n' "$cols_lite" >"$tmp/a";
    printf '%s\n' "$cols_pg" >"$tmp/b"; diff "$tmp/a" "$tmp/b")"

# Programs starting at once on empty databases migrate each once.
last=$(ls "$top_srcdir"/migrations/postgresql/*.sql | wc -l)
for n in 1 2 3 4; do
	db=$(pg_newdb "race$n")
	for p in 1 2 3 4; do
		saop-report --db "$db" --json >/dev/null 2>"$tmp/race.$p" &
	done
	wait
	for p in 1 2 3 4; do
		[ ! -s "$tmp/race.$p" ] || fail "race $n: $(cat "$tmp/race.$p")"
	done
	[ "$(pg_sql "$db" "SELECT count(*) || ' ' || max(version) FROM saop_schema_version")" = "$last $last" ] ||
	    fail "race $n: $(pg_sql "$db" 'SELECT * FROM saop_schema_version')"
done
# A program that has nothing to store never connects, nor loads libpq:
# the URI of a server that is not there costs it nothing.
printf '%s\n' '{"raw": "{\"a\": 1}"}' >"$tmp/one"
SAOP_DB="postgresql://saop:pw@127.0.0.1:1/none" LD_DEBUG=libs \
    saop-detect <"$tmp/one" >"$tmp/one.out" 2>"$tmp/ld" || fail "detect: $(tail -3 "$tmp/ld")"
grep -q 'libpq' "$tmp/ld" && fail "libpq loaded by a program that stores nothing"
grep -q 'libsqlite3\|libjansson' "$tmp/ld" || fail "LD_DEBUG shows no libraries: $(head -3 "$tmp/ld")"
SAOP_DB="postgresql://saop:pw@127.0.0.1:1/none" saop-prune <"$tmp/one" >/dev/null ||
    fail "prune with nothing to prune touched the database"

# Again: nothing to do, nothing changed.
saop-report --db "$db" --json >/dev/null || fail "second start"
[ "$(pg_sql "$db" "SELECT count(*) FROM saop_schema_version")" = "$last" ] ||
    fail "migrated twice"
exit 0
