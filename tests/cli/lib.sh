# lib.sh: sourced by every shell test.  Gives a private temp dir ($tmp)
# with its own state database, the test data ($data), the shared corpora
# ($SAOP_SHARED), and helpers.  Exit 0 pass, 1 fail, 77 skip.
set -eu

# fd 9 is the test's own stderr, the log: fail() writes there, so its
# message shows even when called with stderr sent elsewhere (as in
# `expect_status 65 prog 2>"$tmp/err"`).  9, not 3: tests use 3 and 4.
exec 9>&2

: "${top_srcdir:?run the tests through make check}"
data="$top_srcdir/tests/data"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/saop-test.XXXXXX")
SAOP_DB="$tmp/state.sqlite"
export SAOP_DB
unset SAOP_TASK_ID SAOP_API_KEY OPENAI_API_KEY ANTHROPIC_API_KEY \
    SAOP_PROVIDER SAOP_API_BASE SAOP_MODEL 2>/dev/null || true
LC_ALL=C
export LC_ALL

# Things to run when the test ends (the fake server's stop, say).
_cleanups=""
at_exit() {
	_cleanups="$1; $_cleanups"
}
_finish() {
	rc=$?
	eval "$_cleanups" 2>/dev/null || true
	rm -rf "$tmp"
	exit "$rc"
}
trap _finish EXIT
trap 'exit 1' HUP INT TERM

# With SAOP_TEST_WRAPPER (valgrind, say), run the tools under it.
if [ -n "${SAOP_TEST_WRAPPER:-}" ]; then
	for _t in saop-detect saop-resume saop-validate saop-prune saop-suspend; do
		eval "$_t() { \$SAOP_TEST_WRAPPER \"\$(command -v $_t)\" \"\$@\"; }"
	done
fi

# fail MESSAGE: say why on the log (fd 9, above) and end the test, failed.
fail() {
	echo "FAIL: $*" >&9
	exit 1
}

# skip WHY: the test cannot run here (a tool or privilege is absent):
# exit 77 saying why; under SAOP_REQUIRE_SHARED (CI, which installs every
# tool and runs as root) a skip is a failure.
skip() {
	if [ -n "${SAOP_REQUIRE_SHARED:-}" ]; then
		fail "would skip, and SAOP_REQUIRE_SHARED is set: $*"
	fi
	echo "SKIP: $*" >&2
	exit 77
}

# skip_part WHY: a part of the test cannot run here; the rest goes on.
# Writes "SKIP-PART: WHY" on the log, which scripts/test counts as a skip;
# under SAOP_REQUIRE_SHARED it fails the test instead.
skip_part() {
	if [ -n "${SAOP_REQUIRE_SHARED:-}" ]; then
		fail "would skip a part, and SAOP_REQUIRE_SHARED is set: $*"
	fi
	echo "SKIP-PART: $*" >&9
}

# need_shared PATH: the shared corpus PATH (under $SAOP_SHARED) must be
# there; else skip, or fail when SAOP_REQUIRE_SHARED is set (CI).
need_shared() {
	if [ ! -e "${SAOP_SHARED:-/nonexistent}/$1" ]; then
		if [ -n "${SAOP_REQUIRE_SHARED:-}" ]; then
			fail "missing ${SAOP_SHARED:-\$SAOP_SHARED}/$1 (SAOP_REQUIRE_SHARED is set)"
		fi
		skip "no ${SAOP_SHARED:-\$SAOP_SHARED}/$1: set SAOP_SHARED to the shared corpora"
	fi
}

# expect_status N CMD...: run CMD, fail unless it exits N.
expect_status() {
	_want=$1
	shift
	set +e
	"$@"
	_got=$?
	set -e
	[ "$_got" -eq "$_want" ] || fail "'$*' exited $_got, expected $_want"
}

# jqf FILTER FILE: the jq filter on FILE, or fail.
jqf() {
	jq -e "$1" "$2" >/dev/null || fail "jq '$1' is false on $2: $(head -c 2000 "$2")"
}

# sql QUERY: one query on the test's state database.
sql() {
	sqlite3 "$SAOP_DB" "$1"
}
