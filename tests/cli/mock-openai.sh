#!/bin/sh
# saop-mock as OpenAI chat completions (SAOP_PROVIDER=openai): saop-suspend, saop-resume and
# saop-validate against it (mock_cases in mock-lib.sh: a cut answer
# resumed, a dropped connection suspended, a 429 waited out, a malformed
# answer corrected, a refusal, --exhausted, the log of every request),
# and its whole JSON body of a cut answer with a tool call.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/mock-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
command -v sqlite3 >/dev/null 2>&1 || skip "no sqlite3"
mock_cases openai
mock_whole openai /v1/chat/completions '.object == "chat.completion" and .model == "m1" and
    .choices[0].finish_reason == "length" and
    .choices[0].message.content == "{\"a\":" and
    .choices[0].message.tool_calls[0].function ==
    {name: "ls", arguments: "{\"path\":\".\"}"} and
    .usage == {prompt_tokens: 5, completion_tokens: 3, total_tokens: 8}'
exit 0
