# lib.sh: sourced by every shell test.  Gives a private temp dir ($tmp)
# with its own state database, the test data ($data), the corpora
# ($corpora), the recorded provider answers ($fixtures), the fault kit
# ($kit), and helpers.  Exit 0 pass, 1 fail, 77 skip.
set -eu

# fd 9 is the test's own stderr, the log: fail() writes there, so its
# message shows even when called with stderr sent elsewhere (as in
# `expect_status 65 prog 2>"$tmp/err"`).  9, not 3: tests use 3 and 4.
exec 9>&2

: "${top_srcdir:?run the tests through make check}"
data="$top_srcdir/tests/data"
corpora="$top_srcdir/tests/corpora"	# tests/corpora/README
fixtures="$top_srcdir/tests/fixtures"	# tests/fixtures/llm/README.md
kit="$top_srcdir/tests/kit"		# tests/kit/README.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/saop-test.XXXXXX")
SAOP_DB="$tmp/state.sqlite"
export SAOP_DB
unset SAOP_TASK_ID SAOP_API_KEY OPENAI_API_KEY ANTHROPIC_API_KEY \
    SAOP_PROVIDER SAOP_API_BASE SAOP_MODEL SAOP_SCHEMA SAOP_SCHEMA_MODE \
    2>/dev/null || true
LC_ALL=C
export LC_ALL
# No user's configuration file: a test that wants one writes it here.
XDG_CONFIG_HOME="$tmp/config"
export XDG_CONFIG_HOME
unset SAOP_PROFILE 2>/dev/null || true

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
# exit 77 saying why; under SAOP_REQUIRE_ALL (CI, which installs every
# tool and runs as root) a skip is a failure.
skip() {
	if [ -n "${SAOP_REQUIRE_ALL:-}" ]; then
		fail "would skip, and SAOP_REQUIRE_ALL is set: $*"
	fi
	echo "SKIP: $*" >&2
	exit 77
}

# skip_part WHY: a part of the test cannot run here; the rest goes on.
# Writes "SKIP-PART: WHY" on the log, which scripts/test counts as a skip;
# under SAOP_REQUIRE_ALL it fails the test instead.
skip_part() {
	if [ -n "${SAOP_REQUIRE_ALL:-}" ]; then
		fail "would skip a part, and SAOP_REQUIRE_ALL is set: $*"
	fi
	echo "SKIP-PART: $*" >&9
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

# wait_for COND WHAT [SECS]: poll the shell command COND (eval'ed) every
# 50 ms until it succeeds; fail naming WHAT after SECS seconds (default
# 120).  A test waits for the event itself this way, never for a fixed
# time: a loaded machine makes the wait longer, not the test fail.
wait_for() {
	_wf_end=$(($(date +%s) + ${3:-120}))
	until eval "$1"; do
		[ "$(date +%s)" -le "$_wf_end" ] ||
		    fail "waited ${3:-120} s for $2"
		sleep 0.05
	done
}

# wait_port FILE PID WHAT: wait until the server PID (named WHAT) has
# written its port to FILE (whole, by rename) once it listens; fail if it
# exits first.
wait_port() {
	wait_for "[ -s '$1' ] || ! kill -0 $2 2>/dev/null" "$3 to listen"
	[ -s "$1" ] || fail "$3 exited before it listened"
}

# jqf FILTER FILE: the jq filter on FILE, or fail.
jqf() {
	jq -e "$1" "$2" >/dev/null || fail "jq '$1' is false on $2: $(head -c 2000 "$2")"
}

# batch_oracle ANSWERS: saop-mock --oracle on loopback continuing the
# cuts of bench/gen-batch's ANSWERS (stopped when the test ends); the
# model's environment pointed at it.
batch_oracle() {
	saop-mock --oracle "$1" --port-file "$tmp/port" --max-chars 100000 \
	    --max-seconds 300 &
	_bs_pid=$!
	at_exit "kill $_bs_pid"
	wait_port "$tmp/port" "$_bs_pid" "saop-mock --oracle"
	SAOP_API_BASE="http://127.0.0.1:$(cat "$tmp/port")/v1" SAOP_API_KEY=k SAOP_MODEL=m
	export SAOP_API_BASE SAOP_API_KEY SAOP_MODEL
	unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY 2>/dev/null || :
}

# sql QUERY: one query on the test's state database (a SQLite file, or
# PostgreSQL: tests/cli/pg-lib.sh).
sql() {
	case $SAOP_DB in
	postgres://*|postgresql://*) pg_sql "$SAOP_DB" "$1" ;;
	*) sqlite3 "$SAOP_DB" "$1" ;;
	esac
}

# With SAOP_TEST_DB=postgresql (tests/cli/store-both.sh runs a test so),
# the state is a PostgreSQL database of the test's own server.
if [ "${SAOP_TEST_DB:-sqlite}" = postgresql ]; then
	. "$top_srcdir/tests/cli/pg-lib.sh"
	pg_start
	SAOP_DB=$(pg_newdb state)
fi
