#!/bin/sh
# saop-report: the sums per task and overall, from the rows the programs
# write (made here by the programs where no model is needed, and by hand
# for the rows of the model stages), in text and --json; --task; records
# given add turns, states and repairs; what correction turns cost, as
# saop-validate logs it against the stand-in model (and "not in
# state.sqlite" for corrections logged without it); no database: 66,
# never made.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"

ex="$top_srcdir/examples"
cd "$tmp"
expect_status 66 saop-report 2>"$tmp/err"
grep -q 'no state database' "$tmp/err" || fail "no database: $(cat "$tmp/err")"
[ ! -e "$SAOP_DB" ] || fail "saop-report made the database"
expect_status 64 saop-report --dry-run 2>/dev/null

# Pruning and detection, for real.
set +e
saop-prune <"$ex/pipeline.ndjson" | saop-detect --db "$SAOP_DB" |
    saop-validate >out 2>/dev/null
set -e
# The rows of the model stages (as lib/resume.c, lib/validate.c and
# lib/suspend.c write them), for task b.
sql "INSERT INTO partial_completion_log (task_id, turn_number,
    truncation_index, initial_chunk_length, resume_attempts, final_status,
    timestamp, sent_bytes, received_bytes, prompt_tokens, completion_tokens)
    VALUES ('b', 1, 10, 10, 1, 'RESOLVED', '2020-01-01T10:00:00.000Z',
    300, 40, 20, 10),
    ('b', 2, 10, 10, 2, 'EXHAUSTED', '2020-01-01T10:00:01.000Z',
    500, 60, 30, 12)"
sql "INSERT INTO events (time, task_id, turn, event, data) VALUES
    ('2020-01-01T10:00:00.000Z', 'b', 3, 'MALFORMED_RESPONSE', '{\"attempt\":1}'),
    ('2020-01-01T10:00:01.000Z', 'b', 3, 'MALFORMED_RESPONSE', '{\"attempt\":2}'),
    ('2020-01-01T10:00:02.000Z', 'b', 3, 'MAX_RETRIES_EXCEEDED', '{}'),
    ('2020-01-01T10:00:03.000Z', 'b', 4, 'NETWORK_LOST', '{}'),
    ('2020-01-01T10:00:04.500Z', 'b', 4, 'NETWORK_RESTORED', '{}'),
    ('2020-01-01T10:00:05.000Z', 'b', 4, 'TURN_RESUMED', '{}'),
    ('2020-01-01T10:00:06.000Z', 'b', 5, 'NETWORK_LOST', '{}')"
sql "INSERT INTO tasks VALUES ('b', 'USER_ESCALATION',
    'MAX_RETRIES_EXCEEDED', '2020-01-01T10:00:02.000Z')"
sql "INSERT INTO agent_turn_states (task_id, turn, stage, turn_state_json, saved_at) VALUES ('b', 1, 'saop-suspend', '{}', '2020-01-01T10:00:06.000Z')"

saop-report --json >rep.json
jqf '[.tasks[].task_id] == ["b", "nightly-build"] and .overall.tasks == 2' rep.json
jqf '.tasks[1] | .pruned == {"outputs": 2, "bytes": 185960} and
    .truncations.detected == 2 and .truncations.resumed == 0 and
    .status == null and .corrections == 0 and .records == 0' rep.json
jqf '.tasks[0] | .status == "USER_ESCALATION" and
    .reason == "MAX_RETRIES_EXCEEDED" and .turns == 5 and
    .truncations == {"detected": 2, "resumed": 1, "exhausted": 1, "attempts": 3}
    and .corrections == 2 and .escalations == 1 and
    .suspensions.count == 2 and .suspensions.restored == 1 and
    .suspensions.saved_turns == 1 and
    .recovery.resume == {"sent_bytes": 800, "received_bytes": 100,
    "prompt_tokens": 50, "completion_tokens": 22} and
    .recovery_tokens == 72' rep.json
# The loss not restored is down until now: more than the restored 1.5 s.
jqf '.tasks[0].suspensions.downtime_ms > 1500 + 86400000' rep.json
jqf '.overall | .corrections == 2 and .pruned.bytes == 185960 and
    .truncations.detected == 4 and .recovery_tokens == 72' rep.json

# --task, and the records: turns, states and repairs.
saop-report --json --task nightly-build out >rep2.json
jqf '(.tasks | length) == 1 and .tasks[0].records == 5 and
    .tasks[0].turns == 5 and
    .tasks[0].states == {"OK": 2, "TRUNCATED": 2, "INVALID": 1} and
    .tasks[0].repairs == {"code_fence": 1, "prose": 1, "trailing_comma": 1}
    and .overall.tasks == 1' rep2.json

# Text: one block per task and the overall one.
saop-report >rep.txt
grep -q '^task b: USER_ESCALATION (MAX_RETRIES_EXCEEDED)$' rep.txt ||
    fail "text: $(cat rep.txt)"
grep -q '^  truncations      2 detected, 1 resumed, 1 exhausted (3 resume calls)$' rep.txt ||
    fail "text truncations: $(cat rep.txt)"
grep -q '^  correction cost  not in state.sqlite' rep.txt ||
    fail "text correction cost: $(cat rep.txt)"
grep -q '^  resume cost      sent 800 B, received 100 B, 50+22 tokens$' rep.txt ||
    fail "text resume cost: $(cat rep.txt)"
grep -q '^overall: 2 tasks$' rep.txt || fail "text overall: $(cat rep.txt)"

# What two correction turns cost, from saop-validate's CORRECTION_ANSWERED
# events: the bytes and tokens the stand-in got and sent.
good=$(jq -c . "$top_srcdir/tests/data/validate/good.json")
fake_llm_start '{"text": "{\"saop\": 1}", "usage": [11, 5]}' \
    "$(jq -nc --arg t "$good" '{text: $t, usage: [13, 7]}')"
jq -nc '{task_id: "v", turn: 1, request: {messages: [{role: "user",
    content: "Go on."}]}, raw: "not json"}' |
    expect_status 0 saop-validate >vout
fake_llm_requests | jq -s --arg g "$good" '{sent_bytes: (map(.body.messages
    | (.[-2].content | utf8bytelength) + (.[-1].content | utf8bytelength))
    | add), received_bytes: (("{\"saop\": 1}" | utf8bytelength) +
    ($g | utf8bytelength)), prompt_tokens: 24, completion_tokens: 12}' \
    >want-cost.json
saop-report --json --task v >repv.json
jq -e --slurpfile w want-cost.json '.tasks[0] | .corrections == 2 and
    .recovery.correction == $w[0] and .recovery_tokens == 36' repv.json \
    >/dev/null || fail "correction cost: $(jq -c .tasks repv.json) want \
$(cat want-cost.json)"
# The record says the same.
jq -e --slurpfile w want-cost.json '.validate | {sent_bytes, received_bytes,
    prompt_tokens, completion_tokens} == $w[0]' vout >/dev/null ||
    fail "record cost: $(jq -c .validate vout)"
saop-report --task v >repv.txt
want=$(jq -r '"  correction cost  sent \(.sent_bytes) B, received " +
    "\(.received_bytes) B, \(.prompt_tokens)+\(.completion_tokens) tokens"' \
    want-cost.json)
grep -qxF "$want" repv.txt || fail "text correction cost: $(cat repv.txt)"

# A line that is not a record: named, skipped, 65; the rest counted.
printf '{"task_id": "c", "state": "OK"}\nnot json\n' >bad
expect_status 65 saop-report --json --task c bad >rep3.json 2>err
jqf '.tasks[0].records == 1' rep3.json
grep -q 'line 2' err || fail "bad line not named: $(cat err)"

# A numeric task_id is its digits, as its events are logged under them.
printf '{"task_id": 42, "state": "OK"}\n' >num
saop-report --json --task 42 num >rep4.json
jqf '.tasks[0].task_id == "42" and .tasks[0].records == 1 and
    .tasks[0].states == {"OK": 1}' rep4.json
exit 0
