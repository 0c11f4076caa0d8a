#!/bin/sh
# saop-mock as OpenAI Responses (SAOP_PROVIDER=openai-responses): saop-suspend, saop-resume and
# saop-validate against it (mock_cases in mock-lib.sh: a cut answer
# resumed, a dropped connection suspended, a 429 waited out, a malformed
# answer corrected, a refusal, --exhausted, the log of every request),
# and its whole JSON body of a cut answer with a tool call.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/mock-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
command -v sqlite3 >/dev/null 2>&1 || skip "no sqlite3"
mock_cases openai-responses
mock_whole openai-responses /v1/responses '.object == "response" and .status == "incomplete" and
    .incomplete_details.reason == "max_output_tokens" and
    .output[0].content[0] == {type: "output_text", text: "{\"a\":",
    annotations: []} and .output[1].type == "function_call" and
    .output[1].name == "ls" and .output[1].arguments == "{\"path\":\".\"}"
    and .usage == {input_tokens: 5, output_tokens: 3, total_tokens: 8}'
exit 0
