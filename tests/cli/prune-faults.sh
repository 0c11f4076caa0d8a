#!/bin/sh
# saop-prune: a read-only database and a full disk leave every record
# unpruned and passed on, exit 74, and lose nothing already stored.
. "$top_srcdir/tests/cli/lib.sh"
py=${PYTHON3:-python3}
helper="$data/prune/prune.py"

"$py" "$helper" gen 2 >"$tmp/in.ndjson"
"$py" "$helper" big 1 2 60000 >"$tmp/small.ndjson"

# Prune fails: every record comes out unchanged but for the error it
# carries, exit 74, the error said.
unpruned() {
	"$py" "$helper" same "$tmp/in.ndjson" "$tmp/out" --unstored ||
	    fail "$1: the records did not pass on unchanged"
	grep -q 'state database' "$tmp/err" || fail "$1: no error: $(cat "$tmp/err")"
}

# 1. A read-only database file.  Root ignores file modes, so as root the
# program runs as nobody (setpriv); else chmod is enough.
db="$tmp/ro/state.sqlite"
mkdir "$tmp/ro"
SAOP_DB=$db saop-prune <"$tmp/small.ndjson" >/dev/null || fail "setup"
before=$(sqlite3 "$db" 'SELECT count(*) FROM tool_outputs')
chmod 0444 "$db" "$db-wal" "$db-shm" 2>/dev/null || chmod 0444 "$db"
chmod 0555 "$tmp/ro"
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || skip "root, and no setpriv to drop it"
	chmod 0755 "$tmp"
	prog=$(command -v saop-prune)
	saop-prune --version >/dev/null	# a libtool wrapper links it now
	as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
else
	as_nobody=""
fi
expect_status 74 env SAOP_DB="$db" $as_nobody ${prog:-saop-prune} \
    <"$tmp/in.ndjson" >"$tmp/out" 2>"$tmp/err"
unpruned "read-only database"
chmod 0755 "$tmp/ro"
chmod 0644 "$db"
[ "$(sqlite3 "$db" 'SELECT count(*) FROM tool_outputs')" = "$before" ] ||
    fail "read-only database: rows changed"

# 2. A read-only filesystem and a full disk (a small tmpfs; root only).
if ! "$kit/fs-fault.sh" check 2>"$tmp/why"; then
	skip_part "full disk: $(cat "$tmp/why")"
	exit 0
fi
fs="$tmp/fs"
"$kit/fs-fault.sh" mount "$fs" 3m
at_exit "'$kit/fs-fault.sh' umount '$fs'"
db="$fs/state.sqlite"
SAOP_DB=$db saop-prune <"$tmp/small.ndjson" >/dev/null || fail "setup on tmpfs"
sqlite3 "$db" 'SELECT id, hex(raw_content) FROM tool_outputs' >"$tmp/rows.before"

"$kit/fs-fault.sh" ro "$fs"
expect_status 74 env SAOP_DB="$db" saop-prune <"$tmp/in.ndjson" >"$tmp/out" 2>"$tmp/err"
unpruned "read-only filesystem"
"$kit/fs-fault.sh" rw "$fs"

left=$("$kit/fs-fault.sh" fill "$fs" 0)
expect_status 74 env SAOP_DB="$db" saop-prune <"$tmp/in.ndjson" >"$tmp/out" 2>"$tmp/err"
unpruned "full disk ($left bytes left)"
# Some room, but not enough for the outputs to store.
"$kit/fs-fault.sh" unfill "$fs"
left=$("$kit/fs-fault.sh" fill "$fs" 100000)
expect_status 74 env SAOP_DB="$db" saop-prune <"$tmp/in.ndjson" >"$tmp/out" 2>"$tmp/err"
unpruned "nearly full disk ($left bytes left)"
"$kit/fs-fault.sh" unfill "$fs"
[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || fail "database damaged"
sqlite3 "$db" 'SELECT id, hex(raw_content) FROM tool_outputs' >"$tmp/rows.after"
cmp "$tmp/rows.before" "$tmp/rows.after" || fail "stored rows changed"
# With room again, the same input is pruned.
expect_status 0 env SAOP_DB="$db" saop-prune <"$tmp/in.ndjson" >"$tmp/out"
mkdir "$tmp/raw"
"$py" "$helper" check "$tmp/in.ndjson" "$tmp/out" "$db" "$tmp/raw" >/dev/null ||
    fail "pruning after the disk had room again"
exit 0
