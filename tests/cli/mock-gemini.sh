#!/bin/sh
# saop-mock as Gemini (SAOP_PROVIDER=gemini): saop-suspend, saop-resume and
# saop-validate against it (mock_cases in mock-lib.sh: a cut answer
# resumed, a dropped connection suspended, a 429 waited out, a malformed
# answer corrected, a refusal, --exhausted, the log of every request),
# and its whole JSON body of a cut answer with a tool call.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/mock-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
command -v sqlite3 >/dev/null 2>&1 || skip "no sqlite3"
mock_cases gemini
mock_whole gemini /v1/models/m1:generateContent '.candidates[0].finishReason == "MAX_TOKENS" and
    .candidates[0].content.parts[0] == {text: "{\"a\":"} and
    .candidates[0].content.parts[1].functionCall ==
    {name: "ls", args: {path: "."}} and .modelVersion == "m1" and
    .usageMetadata == {promptTokenCount: 5, candidatesTokenCount: 3,
    totalTokenCount: 8}'
exit 0
