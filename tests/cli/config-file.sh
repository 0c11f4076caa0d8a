#!/bin/sh
# The configuration file (saop(7), CONFIGURATION): a profile alone, with
# no SAOP_ variable, runs the README's first turn against the fake
# server; the order settings come in (option > environment > profile >
# default section > built in), each named by --show-config with its file
# and line; the key never printed (--show-config, -vv); api_key_cmd run
# once per process; the file refused as ssh refuses its own (another's,
# writable by others, a key readable by others), and its faults named by
# line; --help reads no file.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

# A lost endpoint is a failure here, not a wait.
SAOP_MAX_WAIT=0
export SAOP_MAX_WAIT
conf=$XDG_CONFIG_HOME/saop/config
mkdir -p "$XDG_CONFIG_HOME/saop"
envelope='{\"saop\": \"1.0\", \"turn_index\": 0, \"agent_role\": \"researcher\", \"thought\": \"none\", \"action\": null}'
FAKE_LLM_KEY="sk-conf-$$-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
key=$FAKE_LLM_KEY
fake_llm_start --repeat-last "{\"text\": \"$envelope\"}"
base=$SAOP_API_BASE
unset SAOP_API_BASE SAOP_API_KEY SAOP_MODEL SAOP_PROVIDER

# 1. The README's first turn from a profile alone.
cat >"$conf" <<EOF
# saop's settings
model = default-model
timeout_ms = 50000

[profile local]
api_base = $base
api_key = $key
model = fake-model
max_wait = 90s
headers = X-One: first-secret-value
  X-Two: second-secret-value

[profile other]
model = other-model
EOF
chmod 600 "$conf"
printf '%s\n' '{"task_id": "first", "turn": 0, "request": {"messages": [{"role": "user", "content": "Which files?"}]}}' >"$tmp/turn.ndjson"
saop-prune <"$tmp/turn.ndjson" | saop-suspend --profile local |
    saop-detect | saop-resume --profile local |
    saop-validate --profile local >"$tmp/out.ndjson" 2>"$tmp/err" ||
    fail "the first turn by the profile: $(cat "$tmp/err")"
jqf '.state == "OK" and .envelope.thought == "none"' "$tmp/out.ndjson"
fake_llm_bodies | jq -e -s 'length == 1 and .[0].model == "fake-model"' \
    >/dev/null || fail "the profile's model not sent: $(fake_llm_bodies)"
fake_llm_requests | jq -e -s '.[0].key == "ok" and
    (.[0].headers | to_entries | map(.key | ascii_downcase) |
    index("x-two") != null)' >/dev/null ||
    fail "the profile's key or headers not sent: $(fake_llm_requests)"
# SAOP_PROFILE names it as well.
SAOP_PROFILE=local saop-suspend --dry-run <"$tmp/turn.ndjson" \
    >"$tmp/dry" 2>&1 || fail "SAOP_PROFILE: $(cat "$tmp/dry")"
grep -q "^POST $base/chat/completions" "$tmp/dry" ||
    fail "SAOP_PROFILE not read: $(head -3 "$tmp/dry")"

# 2. --show-config: each setting, where it came from, by file and line.
show() {	# show PROG ARGS...: --show-config into $tmp/show
	"$@" --show-config >"$tmp/show" 2>"$tmp/err" ||
	    fail "$* --show-config exited $?: $(cat "$tmp/err")"
}
line() {	# line KEY: the line of $tmp/show for KEY
	grep "^$1 = " "$tmp/show" || fail "no $1 in: $(cat "$tmp/show")"
}
SAOP_MAX_WAIT= show saop-validate --profile local	# empty: unset
line model | grep -qxF "model = fake-model	# $conf:8 [profile local]" ||
    fail "profile over default section: $(line model)"
line timeout_ms | grep -qxF "timeout_ms = 50000	# $conf:3 (default section)" ||
    fail "default section: $(line timeout_ms)"
line max_wait | grep -qxF "max_wait = 90s	# $conf:9 [profile local]" ||
    fail "max_wait: $(line max_wait)"
line provider | grep -qxF "provider = openai	# built in" ||
    fail "built in: $(line provider)"
line api_key | grep -qF "# $conf:7 [profile local]" ||
    fail "the key's place: $(line api_key)"
# Environment over the profile, the option over the environment.
SAOP_MODEL=env-model SAOP_TIMEOUT_MS=7000 show saop-resume --profile local \
    --timeout 3
line model | grep -qxF "model = env-model	# environment SAOP_MODEL" ||
    fail "environment over profile: $(line model)"
line timeout_ms | grep -qxF "timeout_ms = 3000	# --timeout" ||
    fail "option over environment: $(line timeout_ms)"
# --profile over SAOP_PROFILE; the default section alone without one.
SAOP_PROFILE=local show saop-suspend --profile other
line model | grep -qF "model = other-model	# $conf:14 [profile other]" ||
    fail "--profile over SAOP_PROFILE: $(line model)"
show saop-suspend
line model | grep -qxF "model = default-model	# $conf:2 (default section)" ||
    fail "no profile: $(line model)"
# What the file sets is read: a bad value in it refused by its line.
printf 'max_auto_resume = 1001\n' >>"$conf"
expect_status 78 saop-suspend --profile other </dev/null 2>"$tmp/err"
grep -qF "$conf, line 15: max_auto_resume: '1001' is not a whole number" \
    "$tmp/err" || fail "a bad value is not named by line: $(cat "$tmp/err")"
sed -i '$d' "$conf"

# 3. The key never printed: --show-config masks it (and the headers'
# values), -vv does not show it.
show saop-validate --profile local
for secret in "$key" "${key#????????}" first-secret-value \
    second-secret-value; do
	! grep -qF -- "$secret" "$tmp/show" ||
	    fail "--show-config printed a secret: $(cat "$tmp/show")"
done
line api_key | grep -qxF "api_key = *** (${#key} bytes)	# $conf:7 [profile local]" ||
    fail "the key not masked as said: $(line api_key)"
printf '%s\n' '{"task_id": "v", "turn": 0, "request": {"messages": [{"role": "user", "content": "x"}]}, "raw": "{\"saop\": \"1.0\"}"}' >"$tmp/bad.ndjson"
saop-validate -vv --profile local --log "$tmp/events" "$tmp/bad.ndjson" \
    >"$tmp/out" 2>"$tmp/err" || true
jqf '.validate.attempts >= 1 or .state == "OK"' "$tmp/out"
fake_llm_requests | jq -e -s 'length == 2 and .[1].key == "ok"' >/dev/null ||
    fail "-vv: no correction call with the file's key: $(cat "$tmp/err")"
for f in "$tmp/err" "$tmp/out" "$tmp/events"; do
	! grep -qF -- "${key#????????}" "$f" || fail "-vv: the key is in $f"
done

# 4. api_key_cmd: its output is the key, run once per process however
# many calls; never shown, even when it fails.
cat >"$tmp/keycmd" <<EOF
#!/bin/sh
echo run >>"$tmp/runs"
cat >/dev/null	# the records are not its input
printf '%s\n' "$key"
EOF
chmod 700 "$tmp/keycmd"
fake_llm_start --repeat-last '{"text": "{\"saop\": \"1.0\"}"}'
base=$SAOP_API_BASE
unset SAOP_API_BASE SAOP_API_KEY SAOP_MODEL SAOP_PROVIDER
cat >"$conf" <<EOF
[profile cmd]
api_base = $base
api_key_cmd = $tmp/keycmd
model = fake-model
EOF
chmod 644 "$conf"	# no key in it: others may read it
printf '%s\n' '{"task_id": "c1", "turn": 0, "request": {"messages": [{"role": "user", "content": "x"}]}, "raw": "{\"saop\": 1}"}' \
    '{"task_id": "c2", "turn": 0, "request": {"messages": [{"role": "user", "content": "x"}]}, "raw": "{\"saop\": 1}"}' \
    >"$tmp/two.ndjson"
saop-validate --profile cmd --max-retries 2 <"$tmp/two.ndjson" >"$tmp/out" \
    2>"$tmp/err" || true
[ "$(jq -s length "$tmp/out")" -eq 2 ] ||
    fail "api_key_cmd took the records: $(cat "$tmp/out" "$tmp/err")"
calls=$(fake_llm_requests | jq -s 'map(select(.key == "ok")) | length')
[ "$calls" -ge 4 ] || fail "api_key_cmd's key not sent ($calls calls with it): $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/runs")" -eq 1 ] ||
    fail "api_key_cmd ran $(wc -l <"$tmp/runs") times for $calls calls"
show saop-suspend --profile cmd	# reads the key twice: one run
[ "$(wc -l <"$tmp/runs")" -eq 2 ] ||
    fail "api_key_cmd ran $(($(wc -l <"$tmp/runs") - 1)) times for --show-config"
line api_key | grep -qxF "api_key = *** (${#key} bytes)	# $conf:3 [profile cmd], api_key_cmd's output" ||
    fail "api_key_cmd in --show-config: $(line api_key)"
! grep -qF -- "${key#????????}" "$tmp/show" || fail "--show-config: the command's key"
# A failing command: the call fails with 78, its output not shown.
printf '#!/bin/sh\necho %s\nexit 3\n' "$key" >"$tmp/keycmd"
expect_status 78 saop-suspend --profile cmd <"$tmp/turn.ndjson" \
    >"$tmp/out" 2>"$tmp/err"
grep -qF "$conf, line 3: api_key_cmd failed" "$tmp/err" ||
    fail "a failed api_key_cmd: $(cat "$tmp/err")"
! grep -qF -- "${key#????????}" "$tmp/err" "$tmp/out" ||
    fail "a failed api_key_cmd's output shown"

# 5. Refused as ssh refuses its own.
printf '[profile k]\napi_key = %s\n' "$key" >"$conf"
chmod 640 "$conf"
for p in saop-suspend saop-resume saop-validate saop-detect saop-report; do
	expect_status 78 "$p" </dev/null >/dev/null 2>"$tmp/err"
	grep -qF "$conf: holds an api_key and others may read it (mode 640): not read; chmod 600 $conf" \
	    "$tmp/err" || fail "$p: a key others may read: $(cat "$tmp/err")"
	! grep -qF -- "${key#????????}" "$tmp/err" || fail "$p: the key shown"
done
printf 'model = m\n' >"$conf"
chmod 664 "$conf"
expect_status 78 saop-detect </dev/null 2>"$tmp/err"
grep -qF "$conf: others may write it (mode 664): not read; chmod go-w $conf" \
    "$tmp/err" || fail "a file others may write: $(cat "$tmp/err")"
chmod 600 "$conf"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	chown 65534 "$conf"
	expect_status 78 saop-detect </dev/null 2>"$tmp/err"
	grep -qF "$conf: owned by another user (uid 65534): not read" \
	    "$tmp/err" || fail "another user's file: $(cat "$tmp/err")"
	chown 0 "$conf"
else
	skip_part "another user's file (needs root)"
fi

# 6. Faults named by line; --help and --version read no file.
printf 'model = m\n[profile p]\nmodle = x\n' >"$conf"
expect_status 78 saop-detect </dev/null 2>"$tmp/err"
grep -qF "$conf, line 3: 'modle' is not a key of the file" "$tmp/err" ||
    fail "an unknown key: $(cat "$tmp/err")"
saop-detect --help >/dev/null || fail "--help read the file"
saop-validate --version >/dev/null || fail "--version read the file"
printf 'model = m\n[other]\nmodel = x\n' >"$conf"
expect_status 78 saop-detect </dev/null 2>"$tmp/err"
grep -qF "$conf, line 3: [other] is not a section" "$tmp/err" ||
    fail "an unknown section: $(cat "$tmp/err")"
printf 'model = m\nmodel = n\n' >"$conf"
expect_status 78 saop-detect </dev/null 2>"$tmp/err"
grep -qF "$conf, line 2: 'model' given twice in its section (line 1" \
    "$tmp/err" || fail "a key twice: $(cat "$tmp/err")"
printf 'model = m\n' >"$conf"
expect_status 78 saop-detect --profile nowhere </dev/null 2>"$tmp/err"
grep -qF "profile 'nowhere' is not in $conf" "$tmp/err" ||
    fail "a missing profile: $(cat "$tmp/err")"
rm "$conf"
SAOP_PROFILE=gone expect_status 78 saop-detect </dev/null 2>"$tmp/err"
grep -qF "profile 'gone': no configuration file ($conf)" "$tmp/err" ||
    fail "a profile with no file: $(cat "$tmp/err")"
# No file and no profile: nothing to read, nothing refused.
printf '{}' | saop-detect -R >/dev/null || fail "no file refused"
exit 0
