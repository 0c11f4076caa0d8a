#!/bin/sh
# Each fault of the state database has its own message, naming the path
# and the way on, and exit 74: a missing directory, a directory, a file
# that is not SQLite (and /dev/null), a read-only file, a read-only
# directory, a database of a newer saop.  The record still passes on.
. "$top_srcdir/tests/cli/lib.sh"
printf '{"raw": "[1, "}\n' >"$tmp/in"
chmod 0755 "$tmp"
chmod 0644 "$tmp/in"

# db_fault DB PATTERN [RUNNER...]: saop-detect with --db DB exits 74,
# passes the record on, and says PATTERN (grep -E) on stderr.
db_fault() {
	_db=$1 _pat=$2
	shift 2
	expect_status 74 "$@" saop-detect --db "$_db" "$tmp/in" >"$tmp/out" 2>"$tmp/err"
	grep -q -E -- "$_pat" "$tmp/err" || fail "--db $_db: $(cat "$tmp/err")"
	[ "$(jq -r .detect.truncated "$tmp/out")" = true ] ||
	    fail "--db $_db: the record did not pass on: $(cat "$tmp/out")"
}

db_fault "$tmp/no/such/state.sqlite" \
    "cannot create the state database $tmp/no/such/state.sqlite: the directory above $tmp/no/such does not exist; make it"
mkdir "$tmp/dir"
db_fault "$tmp/dir" "$tmp/dir is a directory, not a saop state database; give the database file's path"
echo 'some text' >"$tmp/text"
db_fault "$tmp/text" "$tmp/text is not a saop state database \(it is not SQLite\); move it away"
[ "$(cat "$tmp/text")" = 'some text' ] || fail "the text file was changed"
db_fault /dev/null "/dev/null is not a saop state database \(it is not a regular file\)"
sqlite3 "$tmp/newer.sqlite" 'PRAGMA user_version = 9999'
db_fault "$tmp/newer.sqlite" "$tmp/newer.sqlite was made by a newer saop \(schema version 9999; this saop knows up to [0-9]+\): upgrade saop"

# Read-only: root ignores file modes, so as root the program runs as
# nobody (setpriv); else chmod is enough.
as=""
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv >/dev/null 2>&1 || skip "root without setpriv(1)"
	as="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
mkdir "$tmp/ro" "$tmp/rodir"
saop-detect --db "$tmp/ro/state.sqlite" "$tmp/in" >/dev/null || true
[ -s "$tmp/ro/state.sqlite" ] || fail "setup: no database"
# The files are the runner's own: another's would be refused as such.
[ -z "$as" ] || chown -R 65534:65534 "$tmp/ro" "$tmp/rodir"
chmod 0755 "$tmp/ro"
chmod 0444 "$tmp/ro/state.sqlite"
db_fault "$tmp/ro/state.sqlite" "cannot write $tmp/ro/state.sqlite: read-only; make $tmp/ro/state.sqlite writable" $as
chmod 0555 "$tmp/rodir"
db_fault "$tmp/rodir/state.sqlite" "cannot write $tmp/rodir/state.sqlite: read-only directory $tmp/rodir; make $tmp/rodir writable" $as
chmod 0755 "$tmp/rodir"
exit 0
