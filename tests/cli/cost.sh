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
sed -n '/^overall/,$p' "$tmp/text" | grep -qx "$want, 2 costs not known" ||
    fail "text report, overall: $(cat "$tmp/text")"
exit 0
