#!/bin/sh
# saop-mock as Anthropic Messages (SAOP_PROVIDER=anthropic): saop-suspend, saop-resume and
# saop-validate against it (mock_cases in mock-lib.sh: a cut answer
# resumed, a dropped connection suspended, a 429 waited out, a malformed
# answer corrected, a refusal, --exhausted, the log of every request),
# and its whole JSON body of a cut answer with a tool call.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/mock-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
command -v sqlite3 >/dev/null 2>&1 || skip "no sqlite3"
mock_cases anthropic
mock_whole anthropic /v1/messages '.type == "message" and .stop_reason == "max_tokens" and
    .content[0] == {type: "text", text: "{\"a\":"} and
    .content[1].type == "tool_use" and .content[1].name == "ls" and
    .content[1].input == {path: "."} and
    .usage == {input_tokens: 5, output_tokens: 3}'
exit 0
