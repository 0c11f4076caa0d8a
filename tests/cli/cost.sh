#!/bin/sh
# What a turn costs in money (saop(7), Money), against saop-mock whose
# answers carry usage: each call's usage, resume and validate with their
# cost in USD at the price table's prices, the record's cost with the
# answer and the recovery apart, and saop-report's money per task and
# overall (--json and text); a model the table does not price has cost
# null, never 0.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/mock-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"

# gpt-4o-mini: $0.15 input, $0.6 output per million tokens (data/prices.json).
cat >"$tmp/schema.json" <<'EOF'
{"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}
EOF
# rec TASK MODEL: a turn's record for MODEL.
rec() {
	jq -nc --arg t "$1" --arg m "$2" '{task_id: $t, turn: 0,
	    request: {model: $m, max_tokens: 100,
	    messages: [{role: "user", content: "Answer."}]}}'
}
# near A B: A and B are numbers within 1e-12 of each other.
near='def near($a; $b): ($a | type) == "number" and
    ($a - $b | fabs) < 1e-12;'

# 1. A cut answer ($0.75), resumed into a value of the wrong type ($0.09),
# corrected once ($0.045).
mock_start openai \
    '{"text": "{\"a\": ", "finish": "length",
      "usage": {"input": 1000000, "output": 1000000}}' \
    '{"text": "\"x\"}", "usage": {"input": 200000, "output": 100000}}' \
    '{"text": "{\"a\": 1}", "usage": {"input": 100000, "output": 50000}}'
rec t1 gpt-4o-mini | saop-suspend | saop-detect | saop-resume |
    saop-validate --schema "$tmp/schema.json" >"$tmp/r1" ||
    fail "pipeline: $(cat "$tmp/r1")"
jq -e "$near"' .state == "OK" and
    near(.usage.cost; 0.75) and near(.resume.cost; 0.09) and
    .resume.prompt_tokens == 200000 and near(.validate.cost; 0.045) and
    near(.cost.answer; 0.75) and near(.cost.recovery; 0.135)' \
    "$tmp/r1" >/dev/null || fail "record: $(cat "$tmp/r1")"
# The same cost in the events.
sqlite3 "$SAOP_DB" "SELECT data FROM events WHERE task_id = 't1' AND
    event IN ('RESUME_SUCCEEDED', 'CORRECTION_ANSWERED')
    ORDER BY id" >"$tmp/ev" 2>/dev/null ||
    skip "no sqlite3"
jq -s -e "$near"' length == 2 and near(.[0].cost; 0.09) and
    near(.[1].cost; 0.045)' "$tmp/ev" >/dev/null ||
    fail "events: $(cat "$tmp/ev")"

# 2. A model the price table does not have: null, never 0, everywhere.
mock_start openai \
    '{"text": "{\"a\": ", "finish": "length",
      "usage": {"input": 10, "output": 10}}' \
    '{"text": "2}", "usage": {"input": 10, "output": 10}}'
rec t2 no-such-model-anywhere | saop-suspend | saop-resume \
    >"$tmp/r2" || fail "unknown model: $(cat "$tmp/r2")"
jq -e '.state == "OK" and .usage.prompt_tokens == 10 and
    .usage.cost == null and .resume.cost == null and
    .cost == {answer: null, recovery: null}' "$tmp/r2" >/dev/null ||
    fail "unknown model: $(cat "$tmp/r2")"

# 3. A turn the network broke off: saop-suspend's call after the first is
# recovery ($0.15); the first, cut before its usage came, is not known.
long=$(seq 0 199 | paste -sd, -)
mock_start openai "$(jq -nc --arg t "{\"a\": [$long" '{text: ($t + "]}"),
    drop_after: 600, usage: {input: 1000000, output: 1000000}}')" \
    '{"text": "0]}", "usage": {"input": 1000000, "output": 0}}'
rec t4 gpt-4o-mini | SAOP_NETWORK_POLL_INTERVAL_MS=50 saop-suspend \
    >"$tmp/r4" 2>"$tmp/err" || fail "suspend: $(cat "$tmp/r4" "$tmp/err")"
jq -e "$near"' .suspend.resumes == 1 and .cost.answer == null and
    near(.cost.recovery; 0.15) and .usage.cost == null' "$tmp/r4" \
    >/dev/null || fail "suspension retries: $(cat "$tmp/r4")"

# SAOP_PRICES: a table of the user's, searched before the embedded one:
# a model of its own priced ($1 and $2 a million); one not a table: 78.
cat >"$tmp/prices.json" <<'EOF'
{"providers": [{"id": "openai", "models": [{"id": "mine",
  "match": {"equals": "my-own-model"}, "input": 1, "output": 2}]}]}
EOF
mock_start openai \
    '{"text": "{\"a\": 5}", "usage": {"input": 1000000, "output": 500000}}'
rec t11 my-own-model | SAOP_PRICES="$tmp/prices.json" saop-suspend \
    >"$tmp/r11" || fail "SAOP_PRICES: $(cat "$tmp/r11")"
jq -e "$near"' near(.usage.cost; 2) and near(.cost.answer; 2)' \
    "$tmp/r11" >/dev/null || fail "SAOP_PRICES: $(cat "$tmp/r11")"
echo '[]' >"$tmp/bad.json"
rec t12 my-own-model | SAOP_PRICES="$tmp/bad.json" expect_status 78 \
    saop-suspend >/dev/null 2>"$tmp/err"
grep -q "SAOP_PRICES: $tmp/bad.json is not a price table" "$tmp/err" ||
    fail "SAOP_PRICES not a table: $(cat "$tmp/err")"
[ "$(mock_log | wc -l)" -eq 1 ] || fail "SAOP_PRICES: a call with a bad table"

# 4. saop-report: money per task and overall, recovery apart; the null
# parts counted as not known.
expect_status 0 saop-report --json "$tmp/r1" "$tmp/r2" >"$tmp/rep"
jq -e "$near"' (.tasks[] | select(.task_id == "t1") | .money) as $m |
    (.tasks[] | select(.task_id == "t2") | .money) as $u |
    near($m.answer; 0.75) and near($m.recovery; 0.135) and
    near($m.total; 0.885) and $m.unpriced == 0 and
    $u.total == 0 and $u.unpriced == 2 and
    near(.overall.money.total; 0.885) and
    near(.overall.money.recovery; 0.135) and
    .overall.money.unpriced == 2' "$tmp/rep" >/dev/null ||
    fail "report --json: $(jq -c '[.tasks[].money, .overall.money]' \
    "$tmp/rep")"
expect_status 0 saop-report "$tmp/r1" "$tmp/r2" >"$tmp/text"
want='  money            \$0.885000 (\$0.750000 answer, \$0.135000 recovery)'
sed -n '/^task t1/,/^task t2/p' "$tmp/text" | grep -qx "$want" ||
    fail "text report, t1: $(cat "$tmp/text")"
# Two parts not known: the sums are what is known, at least the cost.
sed -n '/^overall/,$p' "$tmp/text" | grep -qx "  money            at least ${want#*money            }, 2 costs not known" ||
    fail "text report, overall: $(cat "$tmp/text")"

# 5. --max-cost: a model that never fixes its answer.  Each correction
# turn costs $0.03015 (1000 tokens in, 50000 out); at worst, with
# max_tokens 100000, one could cost over $0.06.  Under $0.10 the third
# would pass it: two turns, then the record's state, an error naming the
# limit, exit 3 (as for an exhausted correction).
bad='{"text": "{\"a\": \"x\"}", "usage": {"input": 1000, "output": 50000}}'
mock_start openai "$bad" "$bad" "$bad" "$bad" "$bad"
big() {
	rec "$1" "$2" | jq -c '.request.max_tokens = 100000 |
	    .raw = "{\"a\": \"y\"}"'
}
big t5 gpt-4o-mini | expect_status 3 saop-validate --max-retries 5 \
    --max-cost 0.10 --schema "$tmp/schema.json" >"$tmp/r5" 2>"$tmp/err"
jq -e "$near"' .state == "USER_ESCALATION" and .validate.attempts == 2 and
    .validate.valid == false and near(.cost.recovery; 0.0603) and
    .error.status == 3 and (.error.message | test("max-cost.*0\\.100000"))' \
    "$tmp/r5" >/dev/null || fail "--max-cost: $(cat "$tmp/r5")"
[ "$(mock_log | wc -l)" -eq 2 ] || fail "--max-cost: $(mock_log | wc -l) calls"
sqlite3 "$SAOP_DB" "SELECT status, reason FROM tasks WHERE task_id = 't5'" \
    | grep -qx 'USER_ESCALATION|MAX_COST_EXCEEDED' ||
    fail "--max-cost: task $(sqlite3 "$SAOP_DB" "SELECT * FROM tasks")"
# The environment (or the file) sets it too; the recovery already spent
# on the record counts: $0.0603 of it leaves room for no further turn.
mock_start openai "$bad"
jq -c '.raw = "{\"a\": \"z\"}" | del(.state, .error)' "$tmp/r5" |
    SAOP_MAX_COST=0.10 expect_status 3 saop-validate --max-retries 5 \
    --schema "$tmp/schema.json" >"$tmp/r6" 2>"$tmp/err"
jq -e '.validate.attempts == 0 and (.error.message | test("max-cost"))' \
    "$tmp/r6" >/dev/null || fail "SAOP_MAX_COST: $(cat "$tmp/r6")"
[ ! -s "$MOCK_LOG" ] || fail "SAOP_MAX_COST: a call was made"
# The configuration file's max_cost, shown by --show-config with its line.
mkdir -p "$XDG_CONFIG_HOME/saop"
printf 'max_cost = 0.10\n' >"$XDG_CONFIG_HOME/saop/config"
cfg="$XDG_CONFIG_HOME/saop/config"
saop-validate --show-config >"$tmp/show"
grep -qx "max_cost = 0.10	# $cfg:1 (default section)" "$tmp/show" ||
    fail "--show-config: $(cat "$tmp/show")"
saop-resume --max-cost 2 --show-config >"$tmp/show"
grep -qx 'max_cost = 2	# --max-cost' "$tmp/show" ||
    fail "--show-config --max-cost: $(cat "$tmp/show")"
jq -c '.raw = "{\"a\": \"z\"}" | del(.state, .error)' "$tmp/r5" |
    expect_status 3 saop-validate --max-retries 5 \
    --schema "$tmp/schema.json" >"$tmp/r6" 2>"$tmp/err"
jq -e '.validate.attempts == 0 and (.error.message | test("max-cost"))' \
    "$tmp/r6" >/dev/null || fail "max_cost, the file: $(cat "$tmp/r6")"
rm "$XDG_CONFIG_HOME/saop/config"
[ ! -s "$MOCK_LOG" ] || fail "max_cost in the file: a call was made"
# Not an amount: a usage error.
echo '{}' | SAOP_MAX_COST=lots expect_status 64 saop-validate >/dev/null \
    2>"$tmp/err"
grep -q "SAOP_MAX_COST: 'lots' is not an amount" "$tmp/err" ||
    fail "SAOP_MAX_COST=lots: $(cat "$tmp/err")"
expect_status 64 saop-resume --max-cost -1 </dev/null >/dev/null 2>&1

# saop-resume: continuations that stay cut, each $0.03015, stop alike.
cut='{"text": "1, ", "finish": "length",
    "usage": {"input": 1000, "output": 50000}}'
mock_start openai "$cut" "$cut" "$cut" "$cut"
rec t9 gpt-4o-mini | jq -c '.request.max_tokens = 100000 |
    .raw = "[0, "' | expect_status 3 saop-resume --max-attempts 4 \
    --max-cost 0.10 >"$tmp/r9" 2>"$tmp/err"
jq -e "$near"' .state == "RESUME_EXHAUSTED" and .resume.attempts == 2 and
    .resume.status == "EXHAUSTED" and near(.cost.recovery; 0.0603) and
    .error.status == 3 and (.error.message | test("max-cost"))' \
    "$tmp/r9" >/dev/null || fail "resume --max-cost: $(cat "$tmp/r9")"
[ "$(mock_log | wc -l)" -eq 2 ] || fail "resume --max-cost: calls"

# saop-suspend: the turn's first call is its answer, never limited; a
# continuation after a lost network is recovery: under --max-cost 0 it is
# not made, the turn stays saved.
mock_start openai "$(jq -nc --arg t "{\"a\": [$long" '{text: ($t + "]}"),
    drop_after: 600}')" '{"text": "0]}"}'
rec t10 gpt-4o-mini | SAOP_NETWORK_POLL_INTERVAL_MS=50 expect_status 3 \
    saop-suspend --max-cost 0 >"$tmp/r10" 2>"$tmp/err"
jq -e '.state == "USER_ESCALATION" and
    .suspend.limit == "max-cost" and .suspend.received > 0 and
    .error.status == 3 and (.error.message | test("max-cost"))' \
    "$tmp/r10" >/dev/null || fail "suspend --max-cost: $(cat "$tmp/r10")"
[ "$(mock_log | wc -l)" -eq 1 ] || fail "suspend --max-cost: calls"
[ "$(sqlite3 "$SAOP_DB" "SELECT count(*) FROM agent_turn_states WHERE
    task_id = 't10'")" -eq 1 ] || fail "suspend --max-cost: not saved"

# 6. A model without price is not limited, said once per process.
mock_start openai "$bad" "$bad" "$bad" "$bad"
{ big t7 no-such-model-anywhere; big t8 no-such-model-anywhere; } |
    expect_status 3 saop-validate --max-retries 2 --max-cost 0 \
    --schema "$tmp/schema.json" >"$tmp/r7" 2>"$tmp/err"
jq -s -e 'length == 2 and all(.validate.attempts == 2 and
    .state == "USER_ESCALATION" and .cost.recovery == null)' "$tmp/r7" \
    >/dev/null || fail "unpriced: $(cat "$tmp/r7")"
[ "$(grep -c 'no price in the price table' "$tmp/err")" -eq 1 ] ||
    fail "unpriced warning: $(cat "$tmp/err")"
exit 0
