#!/bin/sh
# No symbolic link is followed for the state directory, the database and
# --log, and nobody else's directory or file is used: the attacks of
# another user in a sticky, world-writable directory, run as an
# unprivileged user (nobody).  Root only (it must be two users); skipped
# otherwise, and a failure under SAOP_REQUIRE_ALL.
. "$top_srcdir/tests/cli/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	[ -z "${SAOP_REQUIRE_ALL:-}" ] ||
	    fail "needs root and setpriv (SAOP_REQUIRE_ALL is set)"
	skip "needs root and setpriv: the attacks take two users"
fi
victim=65534 attacker=65533
prog=$(command -v saop-suspend)
saop-suspend --version >/dev/null	# a libtool wrapper links it now
chmod 0755 "$tmp"
shared="$tmp/shared"
mkdir -m 1777 "$shared"
mine="$tmp/mine"		# the victim's own files
mkdir -m 0700 "$mine"
echo precious >"$mine/precious"
chown -R "$victim:$victim" "$mine"
rec='{"task_id":"v","turn":1,"request":{"messages":[{"role":"user","content":"hi"}]}}'

# as_victim CMD...: run CMD as the victim, in the shared directory, with
# the endpoint down (nothing is ever sent).
as_victim() {
	(cd "$shared" && env -u SAOP_DB SAOP_API_BASE=http://127.0.0.1:9/v1 \
	    SAOP_API_KEY=sk-victim SAOP_MODEL=m \
	    setpriv --reuid=$victim --regid=$victim --clear-groups "$@")
}

# unchanged: the victim's file is as it was.
unchanged() {
	[ "$(cat "$mine/precious")" = precious ] || fail "$1: the victim's file changed"
}

# 1. .saop is the attacker's symbolic link to a directory of the victim.
ln -s "$mine" "$shared/.saop"
chown -h "$attacker:$attacker" "$shared/.saop"
echo "$rec" | expect_status 74 as_victim "$prog" --no-wait >/dev/null 2>"$tmp/err"
grep -q 'symbolic link' "$tmp/err" || fail "1: $(cat "$tmp/err")"
[ ! -e "$mine/state.sqlite" ] || fail "1: a database made through the link"
rm "$shared/.saop"

# 2. .saop is the attacker's directory, with a planted saved turn.
mkdir -m 0777 "$shared/.saop"
sqlite3 "$shared/.saop/state.sqlite" 'CREATE TABLE x (a)'
chown -R "$attacker:$attacker" "$shared/.saop"
expect_status 74 as_victim "$prog" --resume >/dev/null 2>"$tmp/err"
grep -q "belongs to uid $attacker, not to you" "$tmp/err" || fail "2: $(cat "$tmp/err")"
rm -rf "$shared/.saop"

# 3. A database straight in the world-writable directory.
echo "$rec" | expect_status 74 as_victim "$prog" --no-wait --db "$shared/state.sqlite" \
    >/dev/null 2>"$tmp/err"
grep -q 'writable by every user' "$tmp/err" || fail "3: $(cat "$tmp/err")"
[ ! -e "$shared/state.sqlite" ] || fail "3: database made"

# 4. The database file is a symbolic link (in the victim's own directory:
# planted before, say, by a tool that followed a link).
mkdir -m 0700 "$mine/db"
ln -s "$mine/precious" "$mine/db/state.sqlite"
chown -R -h "$victim:$victim" "$mine/db"
echo "$rec" | expect_status 74 as_victim "$prog" --no-wait --db "$mine/db/state.sqlite" \
    >/dev/null 2>"$tmp/err"
grep -q 'state.sqlite is a symbolic link' "$tmp/err" || fail "4: $(cat "$tmp/err")"
unchanged 4
rm "$mine/db/state.sqlite"
# ... and a -wal file planted beside a good database.
as_victim "$prog" --db "$mine/db/state.sqlite" --list >/dev/null 2>&1 ||
    fail "4: the database cannot be made"
rm -f "$mine/db/state.sqlite-wal"
ln -s "$mine/precious" "$mine/db/state.sqlite-wal"
chown -h "$victim:$victim" "$mine/db/state.sqlite-wal"
expect_status 74 as_victim "$prog" --db "$mine/db/state.sqlite" --list >/dev/null 2>"$tmp/err"
grep -q 'state.sqlite-wal is a symbolic link' "$tmp/err" || fail "4 wal: $(cat "$tmp/err")"
unchanged "4 wal"

# 5. --log is the attacker's symbolic link to the victim's file.
mkdir -m 0700 "$mine/ok"
chown "$victim:$victim" "$mine/ok"
ln -s "$mine/precious" "$shared/events.log"
chown -h "$attacker:$attacker" "$shared/events.log"
# (75: the endpoint is down; the --log failure is named beside it.)
echo "$rec" | expect_status 75 as_victim "$prog" --no-wait --db "$mine/ok/state.sqlite" \
    --log "$shared/events.log" >/dev/null 2>"$tmp/err"
# (Linux's fs.protected_symlinks may refuse it first: EACCES.)
grep -q -- '--log: .*events.log\( is a symbolic link\|: Permission denied\)' "$tmp/err" ||
    fail "5: $(cat "$tmp/err")"
unchanged 5
# ... and a link where the kernel does not step in: our own directory.
ln -s "$mine/precious" "$mine/ok/link.log"
chown -h "$victim:$victim" "$mine/ok/link.log"
echo "$rec" | expect_status 75 as_victim "$prog" --no-wait --db "$mine/ok/state.sqlite" \
    --log "$mine/ok/link.log" >/dev/null 2>"$tmp/err"
grep -q -- '--log: .*link.log is a symbolic link' "$tmp/err" || fail "5b: $(cat "$tmp/err")"
unchanged 5b

# 6. --log is the attacker's file, open to all: nothing appended to it.
: >"$shared/open.log"
chmod 0666 "$shared/open.log"
chown "$attacker:$attacker" "$shared/open.log"
echo "$rec" | expect_status 75 as_victim "$prog" --no-wait --db "$mine/ok/state.sqlite" \
    --log "$shared/open.log" >/dev/null 2>"$tmp/err"
grep -q "open.log belongs to uid $attacker" "$tmp/err" || fail "6: $(cat "$tmp/err")"
[ ! -s "$shared/open.log" ] || fail "6: events appended to the attacker's file"

# The victim's own private directory works.
echo "$rec" | expect_status 75 as_victim "$prog" --no-wait --db "$mine/ok/state.sqlite" \
    --log "$mine/ok/events.log" >/dev/null 2>"$tmp/err"
[ -s "$mine/ok/events.log" ] || fail "own --log not written: $(cat "$tmp/err")"
exit 0
