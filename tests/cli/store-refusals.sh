#!/bin/sh
# What the state database and --log refuse, each 74 with its words and
# nothing written (issue 25: lib/store.c): a directory every user may
# write to; as root (CI), a directory, a database, a -journal and a --log
# file of another user; a -wal beside the database and a --log that are
# symbolic links.
. "$top_srcdir/tests/cli/lib.sh"

cd "$tmp"
mkdir ww && chmod 777 ww
SAOP_DB=ww/state.sqlite expect_status 74 saop-prune --list >out 2>err
grep -q -x 'saop-prune: state database: the directory ww is writable by every user: refused (keep the database in a private directory, such as the default .saop/)' err ||
    fail "world-writable: $(cat err)"
[ ! -e ww/state.sqlite ] || fail "a database made in ww"
[ ! -s out ] || fail "a table printed: $(cat out)"

# A database of ours, then its -wal a symbolic link to a file of ours.
mkdir db
echo precious >target
SAOP_DB=db/state.sqlite expect_status 0 saop-prune --list >/dev/null
ln -s ../target db/state.sqlite-wal
SAOP_DB=db/state.sqlite expect_status 74 saop-prune --list >out 2>err
grep -q -x 'saop-prune: state database: db/state.sqlite-wal is a symbolic link: refused (it could point anywhere)' err ||
    fail "-wal link: $(cat err)"
rm db/state.sqlite-wal
[ "$(cat target)" = precious ] || fail "the link's target changed"

# --log a symbolic link: saop-detect's record still written, 74.
printf '%s\n' '{"task_id":"t","raw":"{\"a\":"}' >cut.ndjson
ln -s target lk
expect_status 74 saop-detect -q --log lk cut.ndjson >out 2>err
grep -q -x 'saop-detect: line 1: --log: lk is a symbolic link: refused (it could point anywhere)' err ||
    fail "--log link: $(cat err)"
[ "$(cat target)" = precious ] || fail "--log wrote through its link"
jqf '.state == "TRUNCATED"' out

if [ "$(id -u)" -ne 0 ]; then
	skip_part "the files of another user need root to make"
	exit 0
fi
mkdir other && chown 65534 other
SAOP_DB=other/state.sqlite expect_status 74 saop-prune --list >out 2>err
grep -q -x 'saop-prune: state database: the directory other belongs to uid 65534, not to you (uid 0): refused' err ||
    fail "another's directory: $(cat err)"
[ ! -e other/state.sqlite ] || fail "a database made in another's directory"
chown 65534 db/state.sqlite
SAOP_DB=db/state.sqlite expect_status 74 saop-prune --list >out 2>err
grep -q -x 'saop-prune: state database: db/state.sqlite belongs to uid 65534, not to you (uid 0): refused' err ||
    fail "another's database: $(cat err)"
chown 0 db/state.sqlite
: >db/state.sqlite-journal
chown 65534 db/state.sqlite-journal
SAOP_DB=db/state.sqlite expect_status 74 saop-prune --list >out 2>err
grep -q -x 'saop-prune: state database: db/state.sqlite-journal belongs to uid 65534, not to you (uid 0): refused' err ||
    fail "another's journal: $(cat err)"
: >lg
chown 65534 lg
expect_status 74 saop-detect -q --log lg cut.ndjson >out 2>err
grep -q -x 'saop-detect: line 1: --log: lg belongs to uid 65534, not to you (uid 0): refused' err ||
    fail "another's --log: $(cat err)"
[ ! -s lg ] || fail "another's --log written to"
exit 0
