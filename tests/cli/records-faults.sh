#!/bin/sh
# Nothing lost when the state database or the log cannot be written: a
# program opens the database only when it has something to store; a
# read-only database, a full disk or an unwritable --log cost the events,
# never a record (each such record carries the error, exit 74).  Also:
# --log is created 0600 whatever the umask, a full stdout says "write
# error" once, a directory named as input is 66.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

complete='{"task_id":"t","turn":1,"raw":"{\"saop\":\"1.0\",\"turn_index\":1,\"agent_role\":\"developer\",\"thought\":\"x\",\"action\":null}"}'
printf '%s\n%s\n%s\n' "$complete" "$complete" "$complete" >"$tmp/complete"
printf '%s\n' '{"task_id":"t","turn":1,"raw":"{\"a\": [1, 2"}' \
    '{"task_id":"t","turn":2,"raw":"{\"b\": tr"}' \
    '{"task_id":"t","turn":3,"raw":"[\"x\", "}' >"$tmp/trunc"

# as_other CMD...: run CMD as a user that cannot write $tmp/ro (root
# ignores modes, so root runs it as nobody).
mkdir "$tmp/ro"
chmod 755 "$tmp" "$tmp/ro"
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv >/dev/null || skip "root without setpriv"
	as_other() {
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	}
else
	chmod 555 "$tmp/ro"
	as_other() { "$@"; }
fi
chmod a+r "$tmp/complete" "$tmp/trunc"

# 1. A read-only working directory, a model configured, nothing to
# store: every record out, exit 0, no database made.
for p in saop-resume saop-validate; do
	(cd "$tmp/ro" && unset SAOP_DB &&
	    SAOP_API_BASE=http://127.0.0.1:9/v1 SAOP_API_KEY=k \
	    as_other "$(command -v $p)" <"$tmp/complete" >"$tmp/out" \
	    2>"$tmp/err") || fail "$p in a read-only directory: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/out")" -eq 3 ] || fail "$p: 3 in, $(wc -l <"$tmp/out") out"
	[ ! -e "$tmp/ro/.saop" ] || fail "$p made a database it had no use for"
done

# 2. A read-only database and truncated records: saop-detect --db loses
# the events, not the records.
(cd "$tmp/ro" && as_other "$(command -v saop-detect)" --db \
    "$tmp/ro/state.sqlite" <"$tmp/trunc" >"$tmp/out" 2>"$tmp/err") &&
    fail "saop-detect: a database it cannot open, exit 0"
[ "$(wc -l <"$tmp/out")" -eq 3 ] || fail "saop-detect --db read-only: records lost"
[ "$(jq -s 'map(select(.error.status == 74 and .state == "TRUNCATED")) |
    length' "$tmp/out")" -eq 3 ] ||
    fail "saop-detect --db read-only: $(cat "$tmp/out")"

# 3. saop-resume with the model up and the database read-only: the
# records are resumed and written; the log row and events are lost and
# said so (74).
fake_llm_start --repeat-last '{"text": "3]}"}'
chmod a+r "$FAKE_LLM_LOG" 2>/dev/null || true
printf '%s\n' "$complete" '{"task_id":"t","turn":2,"raw":"{\"a\": [1, 2, "}' \
    "$complete" >"$tmp/in3"
chmod a+r "$tmp/in3"
set +e
(cd "$tmp/ro" && SAOP_DB="$tmp/ro/state.sqlite" as_other \
    "$(command -v saop-resume)" <"$tmp/in3" >"$tmp/out" 2>"$tmp/err")
rc=$?
set -e
[ "$rc" -eq 74 ] || fail "saop-resume, read-only db: exit $rc: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/out")" -eq 3 ] || fail "saop-resume, read-only db: records lost"
sed -n 2p "$tmp/out" >"$tmp/l2"
jqf '.raw == "{\"a\": [1, 2, 3]}" and .error.status == 74' "$tmp/l2"
sed -n 1p "$tmp/out" >"$tmp/l1"
jqf 'has("error") | not' "$tmp/l1"
fake_llm_stop

# 4. An unwritable --log: the records go on, exit 74.
expect_status 74 saop-detect --log "$tmp" <"$tmp/trunc" >"$tmp/out" 2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" -eq 3 ] || fail "saop-detect --log DIR: records lost"
grep -q -- "--log" "$tmp/err" || fail "saop-detect --log DIR: not said"

printf '{"a": [1' | expect_status 74 saop-detect -R --log "$tmp" >"$tmp/out" 2>"$tmp/err"
jqf '.state == "TRUNCATED" and .error.status == 74' "$tmp/out"

# 5. --log is made 0600 whatever the umask.
(umask 000 && expect_status 1 saop-detect --log "$tmp/events.ndjson" <"$tmp/trunc" >/dev/null)
[ "$(stat -c %a "$tmp/events.ndjson")" = 600 ] ||
    fail "--log made with mode $(stat -c %a "$tmp/events.ndjson")"
[ "$(wc -l <"$tmp/events.ndjson")" -eq 3 ] || fail "--log: 3 events expected"

# 6. Trivia: a full stdout says "write error" once; a directory as input
# is 66.
[ -w /dev/full ] || skip_part "no /dev/full: a full stdout not tried"
if [ -w /dev/full ]; then
	set +e
	saop-detect <"$tmp/trunc" >/dev/full 2>"$tmp/err"
	rc=$?
	set -e
	[ "$rc" -eq 74 ] || fail "stdout full: exit $rc"
	[ "$(grep -c 'write error' "$tmp/err")" -eq 1 ] ||
	    fail "stdout full: $(cat "$tmp/err")"
fi
for p in saop-detect saop-resume saop-validate saop-prune; do
	expect_status 66 $p "$tmp/ro" >/dev/null 2>&1
done

# 7. A full disk (root, a small tmpfs; skipped elsewhere).
set +e
"$kit/fs-fault.sh" check 2>/dev/null
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
	skip_part "the full-disk cases: no tmpfs to fill here"
	exit 0
fi
fs="$tmp/fs"
"$kit/fs-fault.sh" mount "$fs" 2m
at_exit "'$kit/fs-fault.sh' umount '$fs'"
expect_status 1 saop-detect --db "$fs/state.sqlite" <"$tmp/trunc" >/dev/null 2>&1
"$kit/fs-fault.sh" fill "$fs" 0 >/dev/null
# Truncated records make events; the database has no room for them.
for i in $(seq 1 40); do cat "$tmp/trunc"; done >"$tmp/many"
expect_status 74 saop-detect --db "$fs/state.sqlite" <"$tmp/many" \
    >"$tmp/out" 2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" -eq 120 ] ||
    fail "saop-detect --db on a full disk: 120 in, $(wc -l <"$tmp/out") out"
expect_status 74 saop-detect --log "$fs/events" <"$tmp/many" \
    >"$tmp/out" 2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" -eq 120 ] ||
    fail "saop-detect --log on a full disk: 120 in, $(wc -l <"$tmp/out") out"
exit 0
