#!/bin/sh
# A cut answer whose JSON follows prose holding quoted words (issue 31,
# item 3): "Sure, here's ... the "Contact Form" page:\n{...}", with and
# without a closing remark, with and without a fence.  saop-detect finds
# where its JSON begins, saop-resume continues it with the stand-in model
# (saop-mock --oracle), and saop-validate reads the JSON where saop-detect
# found it (one rule of where JSON starts): OK with no correction turn,
# never escalated.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/oracle-lib.sh"

"$PYTHON3" - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
env = ('{"saop": "1.0", "turn_index": %d, "agent_role": "researcher", '
       '"thought": "Read the \\"Contact Form\\" page first.", '
       '"action": null}')
pre = ('Sure, here\'s an example of a JSON response for the '
       '"Contact Form" page:\n')
wraps = {
    "remark": pre + "%s\nHope this helps!",
    "bare": pre + "%s",
    "fence": pre + "```json\n%s\n```\nHope this helps!",
    "fence-only": pre + "```json\n%s\n```",
}
answers, recs = [], []
for i, (w, form) in enumerate(wraps.items()):
    a = form % (env % i)
    answers.append(a)
    js = a.index('{"saop"')
    j = a[js:]
    for c, at in {"string": js + j.index("first.") + 3,
                  "between": js + j.index(', "action"') + 1}.items():
        recs.append({"task_id": "q", "turn": len(recs), "wrapper": w,
                     "cut": c, "want": a,
                     "request": {"messages": [{"role": "user",
                                 "content": "the contact form"}]},
                     "raw": a[:at], "finish_reason": "length"})
with open(tmp + "/answers", "w") as f:
    for a in answers:
        f.write(json.dumps(a) + "\n")
with open(tmp + "/in.ndjson", "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
PY

oracle_start --max-chars 100000
# saop-detect | saop-resume | saop-validate, as a pipeline runs them; no
# model is reachable for a correction turn (validate has its own base,
# and --no-wait: a turn it would send fails at once).
saop-detect "$tmp/in.ndjson" 2>"$tmp/det.err" |
    saop-resume 2>"$tmp/res.err" >"$tmp/res" || true
jq -s -e 'length == 8 and all(.[]; .raw == .want and .state == "OK" and
    .resume.status == "RESOLVED")' "$tmp/res" >/dev/null ||
    fail "resume: $(jq -c '[.wrapper, .cut, .state, .resume.status]' "$tmp/res") $(cat "$tmp/res.err")"
SAOP_API_BASE=http://127.0.0.1:9/v1 expect_status 0 saop-validate --no-wait \
    "$tmp/res" >"$tmp/val"
jq -s -e 'length == 8 and all(.[]; .state == "OK" and .validate.valid and
    .validate.attempts == 0 and (.validate.repairs | index("prose")) and
    .envelope.thought == "Read the \"Contact Form\" page first." and
    .envelope.action == null)' "$tmp/val" >/dev/null ||
    fail "validate: $(jq -c '[.wrapper, .cut, .state, .validate]' "$tmp/val")"
# The fenced ones name the fence too.
jq -s -e '[.[] | select(.wrapper | startswith("fence")) |
    .validate.repairs | index("code_fence")] | length == 4 and all' \
    "$tmp/val" >/dev/null ||
    fail "fence: $(jq -c '[.wrapper, .validate.repairs]' "$tmp/val")"

# The answer of the issue, whole, through -R: OK, the envelope taken.
printf '%s\n%s\n%s' \
    'Sure, here'"'"'s an example of a JSON response for the "Contact Form" page:' \
    '{"saop": "1.0", "turn_index": 0, "agent_role": "researcher", "thought": "x", "action": null}' \
    'Hope this helps!' >"$tmp/whole"
expect_status 0 saop-detect -R "$tmp/whole" >"$tmp/whole.det"
jqf '.state == "OK" and .detect.wrapper == "prose"' "$tmp/whole.det"
SAOP_API_BASE=http://127.0.0.1:9/v1 expect_status 0 saop-validate --no-wait -R \
    "$tmp/whole" >"$tmp/whole.val"
jqf '.state == "OK" and .validate.attempts == 0 and
    .envelope.agent_role == "researcher" and .envelope.thought == "x"' \
    "$tmp/whole.val"
