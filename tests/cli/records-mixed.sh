#!/bin/sh
# One record's trouble never costs another record: every program, on a
# file mixing good records, records without raw, lines that are not
# records (not JSON, not an object, not UTF-8, over --max-record) and
# records jansson cannot hold (integers past 64 bits, reals past double,
# nesting past 2048, a NUL in a key), writes as many lines as it reads,
# hands the lines that are not records on unchanged, keeps every value it
# does not know byte for byte, names each bad line on stderr and exits
# 65.  A numeric task_id is kept.  saop-suspend, with nothing to ask,
# writes the file back as it came.
. "$top_srcdir/tests/cli/lib.sh"

"$PYTHON3" - "$tmp/mixed.ndjson" <<'EOF'
import sys
deep = "[" * 3000 + "]" * 3000
lines = [
    b'{"task_id":"a","turn":1,"raw":"{\\"x\\":1}"}',
    b'{"task_id":"b","turn":2}',
    b'[1,2]',
    b'5',
    b'{"raw": ',
    b'{"raw":"\xff\xfe"}',
    b'{"task_id":"c","big":123456789012345678901234567890,"raw":"{}","real":-1.5e400}',
    ('{"task_id":"d","deep":%s,"raw":"{}"}' % deep).encode(),
    b'{"task_id":"e","k\\u0000ey":{"n":18446744073709551616},"raw":"{}"}',
    b'{"task_id":42,"raw":"{}"}',
    b'{"raw":"' + b'z' * 10000 + b'"}',
    b'{"task_id":"f","turn":3,"raw":"[1, 2"}',
]
with open(sys.argv[1], "wb") as f:
    f.write(b"\n".join(lines) + b"\n")
EOF

# check OUT PROGRAM: the output of PROGRAM keeps every line in place.
check() {
	"$PYTHON3" - "$tmp/mixed.ndjson" "$1" "$2" <<'EOF' || fail "$2: see above"
import sys
inp = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
out = open(sys.argv[2], "rb").read().split(b"\n")[:-1]
prog = sys.argv[3]
def bad(msg):
    print("%s: %s" % (prog, msg), file=sys.stderr)
    sys.exit(1)
if len(out) != len(inp):
    bad("%d lines in, %d out" % (len(inp), len(out)))
# Lines 3-6 and 11 are not records: handed on unchanged.
for i in (2, 3, 4, 5, 10):
    if out[i] != inp[i]:
        bad("line %d changed: %r" % (i + 1, out[i][:80]))
# Values jansson cannot hold come out as they came in.
for i, part in ((6, b'"big":123456789012345678901234567890'),
                (6, b'"real":-1.5e400'),
                (7, b'"deep":' + b"[" * 3000 + b"]" * 3000),
                (8, b'"k\\u0000ey":{"n":18446744073709551616}')):
    if part not in out[i]:
        bad("line %d lost %r" % (i + 1, part[:60]))
if b'"task_id":42' not in out[9]:
    bad("the numeric task_id of line 10 was replaced")
if b'"task_id":"b"' not in out[1]:
    bad("line 2 lost its task_id")
EOF
}

# saop-resume has no model for the truncated last record: 78 is worse.
# saop-suspend calls nothing here (every record has raw, or no request).
for p in saop-detect saop-resume "saop-validate --no-retry" saop-prune \
    saop-suspend; do
	want=65
	[ "$p" = saop-resume ] && want=78
	expect_status $want $p --max-record 8192 "$tmp/mixed.ndjson" \
	    >"$tmp/out" 2>"$tmp/err"
	check "$tmp/out" "$p"
	for l in 3 4 5 6 11; do
		grep -q "line $l" "$tmp/err" || fail "$p: line $l not named"
	done
	grep -q "line 5, byte" "$tmp/err" || fail "$p: no byte for line 5"
done
# Records it has nothing to ask for are not touched: byte for byte.
cmp -s "$tmp/mixed.ndjson" "$tmp/out" ||
	fail "saop-suspend changed records it had nothing to ask for"

# Records without raw carry the error of the program that could not
# judge them; the others do not.
saop-detect "$tmp/mixed.ndjson" 2>/dev/null | sed -n 2p >"$tmp/l2" || true
jqf '.error.program == "saop-detect" and .error.line == 2 and
    .error.field == "/raw" and .error.status == 65' "$tmp/l2"
saop-detect "$tmp/mixed.ndjson" 2>/dev/null | sed -n 1p >"$tmp/l1" || true
jqf 'has("error") | not' "$tmp/l1"

# The whole pipeline: 12 in, 12 out, in order.
set +e
saop-detect --max-record 8192 "$tmp/mixed.ndjson" 2>/dev/null |
    saop-resume --max-record 8192 2>/dev/null |
    saop-validate --no-retry --max-record 8192 >"$tmp/out" 2>/dev/null
set -e
check "$tmp/out" pipeline

# The issue's own case: 5 records in, 5 out.
printf '{"raw":"{}"}\n{"task_id":"noraw"}\n{"raw":"[1]"}\n{"raw":5}\n{"raw":"{\\"b\\":1}"}\n' |
    saop-detect 2>/dev/null | saop-resume 2>/dev/null |
    expect_status 1 saop-validate --no-retry 2>/dev/null >"$tmp/out"
[ "$(wc -l <"$tmp/out")" -eq 5 ] || fail "5 records in, $(wc -l <"$tmp/out") out"

# -R input that is not UTF-8 names the byte.
for p in saop-resume "saop-validate --no-retry"; do
	printf '{"a": "\xc3\x28"}' >"$tmp/bad-utf8"
	expect_status 65 $p -R <"$tmp/bad-utf8" >/dev/null 2>"$tmp/err"
	grep -q "line 1, byte 7: " "$tmp/err" ||
	    fail "$p -R: no byte offset: $(cat "$tmp/err")"
done
exit 0
