#!/bin/sh
# saop-mock as Amazon Bedrock (SAOP_PROVIDER=bedrock, ConverseStream's
# binary event stream): saop-suspend, saop-resume and saop-validate
# against it (mock_cases in mock-lib.sh: a cut answer resumed, a dropped
# connection suspended, a 429 waited out, a malformed answer corrected, a
# refusal, --exhausted, the log of every request), a Bedrock API key as
# the bearer token; and its whole Converse body of a cut answer with a
# tool call.  tests/cli/bedrock.sh has what is Bedrock's own (SigV4, the
# profiles, exceptions in the stream, a frame cut).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/mock-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
command -v sqlite3 >/dev/null 2>&1 || skip "no sqlite3"
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE \
    AWS_BEARER_TOKEN_BEDROCK AWS_DEFAULT_REGION
AWS_REGION=us-east-1
HOME=$tmp
export AWS_REGION HOME
mock_cases bedrock
mock_whole bedrock /v1/model/m1/converse '.stopReason == "max_tokens" and
    .output.message.role == "assistant" and
    .output.message.content[0] == {text: "{\"a\":"} and
    .output.message.content[1].toolUse == {toolUseId: "tooluse_mock1",
    name: "ls", input: {path: "."}} and
    .usage == {inputTokens: 5, outputTokens: 3, totalTokens: 8}'
exit 0
