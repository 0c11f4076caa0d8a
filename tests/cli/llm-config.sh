#!/bin/sh
# A bad SAOP_PROVIDER or SAOP_TIMEOUT_MS fails only a run that calls the
# model, or --dry-run (issue 8, defect 13): then with its message and
# exit 78, before anything is sent; a run that never calls a model is
# not disturbed by it.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"

req='"request":{"messages":[{"role":"user","content":"JSON please"}]}'
printf '{%s,"raw":"{\\"a\\": 1}"}\n' "$req" >"$tmp/complete.ndjson"
printf '{%s,"raw":"{\\"a\\": [1"}\n' "$req" >"$tmp/trunc.ndjson"
printf '{%s,"raw":"{\\"saop\\": \\"1.0\\", \\"turn_index\\": 0, \\"agent_role\\": \\"developer\\", \\"thought\\": \\"t\\", \\"action\\": null}"}\n' \
    "$req" >"$tmp/valid.ndjson"
printf '{%s,"raw":"{\\"saop\\": \\"1.0\\"}"}\n' "$req" >"$tmp/invalid.ndjson"

# runs WANT PROG ARGS...: PROG exits WANT; its stderr is in $tmp/err.
runs() {
	_want=$1
	shift
	set +e
	"$@" >"$tmp/out" 2>"$tmp/err"
	_rc=$?
	set -e
	[ "$_rc" -eq "$_want" ] ||
	    fail "$* (SAOP_PROVIDER=${SAOP_PROVIDER:-} SAOP_TIMEOUT_MS=${SAOP_TIMEOUT_MS:-}): exited $_rc, not $_want: $(cat "$tmp/err")"
}

for bad in provider timeout; do
	unset SAOP_PROVIDER SAOP_TIMEOUT_MS SAOP_API_KEY SAOP_API_BASE
	case $bad in
	provider) SAOP_PROVIDER=vertex-ai; export SAOP_PROVIDER
	    want="SAOP_PROVIDER: unknown provider 'vertex-ai'" ;;
	*) SAOP_TIMEOUT_MS=10s; export SAOP_TIMEOUT_MS
	    want="SAOP_TIMEOUT_MS: '10s' is not a positive number" ;;
	esac

	# No model is called: no failure, with or without a key.
	for key in "" sk-test-config; do
		if [ -n "$key" ]; then
			SAOP_API_KEY=$key
			export SAOP_API_KEY
		fi
		runs 0 saop-resume "$tmp/complete.ndjson"
		jq -e '.resume.status == "SKIPPED"' "$tmp/out" >/dev/null ||
		    fail "$bad: saop-resume: $(cat "$tmp/out")"
		runs 0 saop-validate "$tmp/valid.ndjson"
		runs 0 saop-validate --no-retry "$tmp/valid.ndjson"
		runs 1 saop-validate --no-retry "$tmp/invalid.ndjson"
		! grep -q "$want" "$tmp/err" ||
		    fail "$bad: saop-validate --no-retry: $(cat "$tmp/err")"
	done

	# A model is called: the error, exit 78, and nothing sent.
	fake_llm_start --repeat-last '{"text": "]}"}'
	case $bad in
	provider) SAOP_PROVIDER=vertex-ai ;;
	esac
	runs 78 saop-resume "$tmp/trunc.ndjson"
	grep -q "$want" "$tmp/err" || fail "$bad: saop-resume: $(cat "$tmp/err")"
	jq -e '.raw == "{\"a\": [1"' "$tmp/out" >/dev/null ||
	    fail "$bad: saop-resume lost the record: $(cat "$tmp/out")"
	runs 78 saop-validate "$tmp/invalid.ndjson"
	grep -q "$want" "$tmp/err" ||
	    fail "$bad: saop-validate: $(cat "$tmp/err")"
	runs 78 saop-resume --dry-run "$tmp/trunc.ndjson"
	grep -q "$want" "$tmp/err" ||
	    fail "$bad: saop-resume --dry-run: $(cat "$tmp/err")"
	runs 78 saop-validate --dry-run "$tmp/invalid.ndjson"
	grep -q "$want" "$tmp/err" ||
	    fail "$bad: saop-validate --dry-run: $(cat "$tmp/err")"
	[ ! -s "$FAKE_LLM_LOG" ] || fail "$bad: a request was sent"
	fake_llm_stop
done
