#!/bin/sh
# What llm(1) users reach for first (issue 34, item 4): -m/--model over
# $SAOP_MODEL (a request's own model still wins), a plain prompt read with
# -R as one user message, and the answer's text shown on a terminal as it
# comes (in pieces, before the end), the records as before elsewhere.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
: "${PYTHON3:=python3}"

# The answer comes in five pieces 300 ms apart.
step='{"text": "Hello there, friend.", "split": 4, "drip_ms": 300}'
fake_llm_start --repeat-last "$step"

# On a terminal (a pty): the text, in pieces, and no record.
cat >"$tmp/onatty.py" <<'PY'
import os, pty, subprocess, sys, time
prog = sys.argv[1:]
master, slave = pty.openpty()
p = subprocess.Popen(prog, stdin=subprocess.PIPE, stdout=slave,
    stderr=subprocess.PIPE)
os.close(slave)
p.stdin.write(b"Say hi\n")
p.stdin.close()
got, early = b"", None
while True:
    try:
        b = os.read(master, 4096)
    except OSError:
        break
    if not b:
        break
    got += b
    # The first piece: was the end of the answer already there?
    if early is None and b"Hell" in got:
        early = b"friend." not in got
err = p.stderr.read()
rc = p.wait()
sys.stdout.write("rc=%d early=%s\n%s" % (rc, early, got.decode()))
sys.stderr.write(err.decode())
PY
SAOP_MODEL=env-model "$PYTHON3" "$tmp/onatty.py" saop-suspend -R -m my-model \
    >"$tmp/tty" 2>"$tmp/err" || fail "the pty helper failed: $(cat "$tmp/err")"
head -1 "$tmp/tty" | grep -qx 'rc=0 early=True' ||
    fail "not streamed to the terminal: $(cat "$tmp/tty") $(cat "$tmp/err")"
sed 1d "$tmp/tty" | tr -d '\r' >"$tmp/text"
[ "$(cat "$tmp/text")" = "Hello there, friend." ] ||
    fail "the terminal shows '$(cat "$tmp/text")', not the text alone"
# -m beat $SAOP_MODEL; the prompt went as it is, as one user message.
fake_llm_bodies | tail -1 >"$tmp/body"
[ "$(jq -r .model "$tmp/body")" = my-model ] ||
    fail "the server was asked for $(jq -c .model "$tmp/body")"
jq -e '.messages == [{"role": "user", "content": "Say hi\n"}]' \
    "$tmp/body" >/dev/null || fail "the prompt went as $(jq -c .messages "$tmp/body")"

# Not a terminal: the record, as before; --model too.
printf 'Say hi\n' | saop-suspend -R --model other-model >"$tmp/out" ||
    fail "saop-suspend -R exited $?"
jq -e '.raw == "Hello there, friend." and .finish_reason == "stop" and
    .request.messages[0].content == "Say hi\n"' "$tmp/out" >/dev/null ||
    fail "the record is $(cat "$tmp/out")"
[ "$(fake_llm_bodies | tail -1 | jq -r .model)" = other-model ] ||
    fail "--model did not reach the server"
# A request's own model still wins over -m.
printf '{"model":"own","messages":[{"role":"user","content":"x"}]}' |
    saop-suspend -R -m my-model >/dev/null || fail "a request with -R failed"
[ "$(fake_llm_bodies | tail -1 | jq -r .model)" = own ] ||
    fail "-m overrode the request's own model"
# saop-resume and saop-validate take -m too (their dry runs show it).
for p in saop-resume saop-validate; do
	printf '{"a":' | SAOP_MODEL=env-model "$p" -R -m my-model --dry-run \
	    >"$tmp/dry" 2>&1 || true
	grep -q '"model": *"my-model"' "$tmp/dry" ||
	    fail "$p -m: $(cat "$tmp/dry")"
done
# A "{" that is not JSON is a broken request, not a prompt; nothing is 65.
printf '{"messages": [' | expect_status 65 saop-suspend -R >/dev/null 2>&1
printf ' \n' | expect_status 65 saop-suspend -R >/dev/null 2>&1
exit 0
