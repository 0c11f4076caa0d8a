#!/bin/sh
# Every exit status the pages document, produced and asserted exactly
# (issue 25): 3 and 75 for records that arrive needing a person or
# paused; 69 for an endpoint that refuses for good; 75 for a lost network
# and for a rate limit that holds; 76 for a broken event stream; 66, 74
# and 70 (out of memory) of each program that documents them (70: every
# program).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

req='"request":{"messages":[{"role":"user","content":"answer in JSON"}]}'
printf '{"task_id":"s1","turn":0,%s}\n' "$req" >"$tmp/ask.ndjson"
printf '{"task_id":"v1","turn":1,%s,"raw":"{\\"saop\\": \\"1.0\\"}"}\n' "$req" \
    >"$tmp/invalid.ndjson"
trunc="$data/resume/trunc.ndjson"

# 1. saop-resume: a record that arrives needing a person exits 3, one
# that arrives paused (its turn saved upstream: run again later) 75, one
# flagged 1, one OK 0 (each state's status, cli_status()); all are passed
# on as they came (the state kept), no call made.
for st in USER_ESCALATION:3 PAUSED_FOR_INTERVENTION:75 RESUME_EXHAUSTED:1 \
    INVALID:1 OK:0; do
	printf '{"task_id":"p","turn":2,"raw":"{\\"a\\": 1}","state":"%s"}\n' \
	    "${st%%:*}" >"$tmp/in"
	fake_llm_start
	expect_status "${st#*:}" saop-resume "$tmp/in" >"$tmp/out" 2>"$tmp/err"
	jqf '.state == "'"${st%%:*}"'" and .raw == "{\"a\": 1}"' "$tmp/out"
	[ "$(wc -l <"$FAKE_LLM_LOG")" -eq 0 ] || fail "${st%%:*}: a call was made"
done
# The worst status wins: 75 over 3 over 1.
printf '%s\n' '{"task_id":"a","raw":"{}","state":"USER_ESCALATION"}' \
    '{"task_id":"b","raw":"{}","state":"PAUSED_FOR_INTERVENTION"}' \
    '{"task_id":"c","raw":"{}","state":"INVALID"}' |
    expect_status 75 saop-resume >"$tmp/out" 2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" -eq 3 ] || fail "paused among others: records lost"

# 2. 69: the endpoint refuses for good (401, 403, 404), each program that
# calls it.
for code in 401 403 404; do
	fake_llm_start --repeat-last '{"status": '"$code"', "check_key": false}'
	expect_status 69 saop-suspend "$tmp/ask.ndjson" >"$tmp/out" 2>"$tmp/err"
	grep -q "HTTP $code" "$tmp/err" || fail "suspend $code: $(cat "$tmp/err")"
	expect_status 69 saop-resume "$trunc" >"$tmp/out" 2>"$tmp/err"
	expect_status 69 saop-validate "$tmp/invalid.ndjson" >"$tmp/out" 2>"$tmp/err"
done

# 3. 75: a rate limit that holds (429, --no-wait), and a lost network.
fake_llm_start --repeat-last '{"status": 429, "retry_after": 1}'
expect_status 75 saop-suspend --no-wait "$tmp/ask.ndjson" >"$tmp/out" 2>"$tmp/err"
jqf '.state == "PAUSED_FOR_INTERVENTION" and .error.status == 75' "$tmp/out"
expect_status 75 saop-resume --no-wait "$trunc" >"$tmp/out" 2>"$tmp/err"
expect_status 75 saop-validate --no-wait "$tmp/invalid.ndjson" >"$tmp/out" 2>"$tmp/err"
fake_llm_stop
for p in saop-suspend saop-resume saop-validate; do
	case $p in
	saop-suspend) in=$tmp/ask.ndjson ;;
	saop-resume) in=$trunc ;;
	*) in=$tmp/invalid.ndjson ;;
	esac
	rm -f "$SAOP_DB"
	expect_status 75 "$p" --no-wait "$in" >"$tmp/out" 2>"$tmp/err"
	[ "$(sql 'SELECT count(*) FROM agent_turn_states')" -eq 1 ] ||
	    fail "$p: a lost network, the turn not saved"
done

# 4. 76: saop-suspend given a broken event stream (the event named).
fake_llm_start '{"body": "data: {\"choices\": [{\"index\": 0, \"delta\": \"7777\"}]}\n\n", "type": "text/event-stream"}'
expect_status 76 saop-suspend "$tmp/ask.ndjson" >"$tmp/out" 2>"$tmp/err"
grep -q 'SSE event' "$tmp/err" || fail "suspend 76: $(cat "$tmp/err")"
fake_llm_stop

# 5. 66: an input file that cannot be opened.
for p in saop-suspend saop-resume saop-validate saop-detect saop-prune; do
	expect_status 66 "$p" "$tmp/no-such-file" >/dev/null 2>"$tmp/err"
	grep -q 'no-such-file' "$tmp/err" || fail "$p 66: $(cat "$tmp/err")"
done

# 6. 74: the state database cannot be written or read.
: >"$tmp/file"
expect_status 74 env SAOP_DB="$tmp/file/state.sqlite" saop-suspend --no-wait \
    "$tmp/ask.ndjson" >"$tmp/out" 2>"$tmp/err"
jqf '.error.status == 74' "$tmp/out"
echo 'not a database, not at all' >"$tmp/junk.sqlite"
expect_status 74 env SAOP_DB="$tmp/junk.sqlite" saop-report >"$tmp/out" 2>"$tmp/err"
grep -q 'state database' "$tmp/err" || fail "report 74: $(cat "$tmp/err")"
# saop-validate: a correction turn is logged; the database cannot take it.
fake_llm_start --repeat-last '{"text": "still {not json"}'
expect_status 74 env SAOP_DB="$tmp/file/state.sqlite" saop-validate \
    --max-retries 1 "$tmp/invalid.ndjson" >"$tmp/out" 2>"$tmp/err"
jqf '.error.status == 74' "$tmp/out"
expect_status 74 saop-validate --log "$tmp" --max-retries 1 \
    "$tmp/invalid.ndjson" >"$tmp/out" 2>"$tmp/err"
fake_llm_stop

# 7. 70: out of memory.  A 60 MB record line with 40 MB of address
# space: the reader's buffer cannot grow (under ASan, which cannot run
# with a limit on address space, no allocation over 32 MB succeeds).
head -c 60000000 /dev/zero | tr '\0' 1 >"$tmp/digits"
{ printf '{"task_id":"m","raw":"['; cat "$tmp/digits"; printf ']"}\n'; } >"$tmp/big.ndjson"
rm -f "$tmp/digits"
asan=
grep -q -e '--enable-sanitizers' "$top_builddir/config.status" 2>/dev/null && asan=1
# ASan's warning of the allocation refused goes to the test's own files,
# not to the run's sanitizer reports (where it would count as a finding;
# the runtime takes UBSAN_OPTIONS' log_path too); anything else there is
# a finding of this test.
asan_oom="${ASAN_OPTIONS:-}:allocator_may_return_null=1:max_allocation_size_mb=32:log_path=$tmp/san"
ubsan_oom="${UBSAN_OPTIONS:-}:log_path=$tmp/san"
# no_findings: fail when the sanitizer wrote more than that warning.
no_findings() {
	for _f in "$tmp"/san.*; do
		[ -f "$_f" ] || continue
		! grep -v -e 'AddressSanitizer failed to allocate' -e '^$' "$_f" >&2 ||
		    fail "a sanitizer report: $_f"
	done
}
for p in saop-validate saop-resume saop-prune saop-suspend saop-report; do
	mr="--max-record 100000000"
	[ "$p" = saop-report ] && mr=
	if [ -n "$asan" ]; then
		expect_status 70 env ASAN_OPTIONS="$asan_oom" UBSAN_OPTIONS="$ubsan_oom" \
		    "$p" $mr "$tmp/big.ndjson" \
		    >"$tmp/out" 2>"$tmp/err"
	else
		(ulimit -v 40000 && expect_status 70 "$p" $mr "$tmp/big.ndjson" \
		    >"$tmp/out" 2>"$tmp/err")
	fi
	grep -q 'out of memory' "$tmp/err" || fail "$p 70: $(head -c 300 "$tmp/err")"
done
# saop-detect streams: its memory is the nesting it follows, 60 million
# levels deep here.
head -c 60000000 /dev/zero | tr '\0' '[' >"$tmp/deep"
if [ -n "$asan" ]; then
	expect_status 70 env ASAN_OPTIONS="$asan_oom" UBSAN_OPTIONS="$ubsan_oom" \
	    saop-detect --raw-input --max-depth 100000000 "$tmp/deep" >"$tmp/out" 2>"$tmp/err"
else
	(ulimit -v 40000 && expect_status 70 saop-detect --raw-input \
	    --max-depth 100000000 "$tmp/deep" >"$tmp/out" 2>"$tmp/err")
fi
grep -q 'out of memory' "$tmp/err" || fail "saop-detect 70: $(head -c 300 "$tmp/err")"
no_findings
exit 0
