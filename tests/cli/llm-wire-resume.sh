#!/bin/sh
# SAOP_PROVIDER=openai-responses and gemini end to end: the request goes
# out in the provider's form (Gemini: the model in the path, alt=sse, the
# key in x-goog-api-key and never in the URL); a stream cut in the middle
# of the answer is continued from the part received, the continuation as
# a user turn (neither API takes an unfinished assistant turn); the record
# gets the merged answer once; a call without arguments is {}; errors and
# rate limits are classified like the others (403, 503, Gemini's 429
# RESOURCE_EXHAUSTED with its RetryInfo, a spent quota).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/llm-lib.sh"
command -v jq >/dev/null 2>&1 || skip "no jq"
SAOP_DB="$tmp/state.sqlite"
SAOP_NETWORK_POLL_INTERVAL_MS=50
export SAOP_DB SAOP_NETWORK_POLL_INTERVAL_MS

full='{"answer": "hello world, this is long", "n": [1, 2, 3]}'
rec='{"task_id":"t","turn":0,"request":{"system":"be brief","max_tokens":64,"messages":[{"role":"user","content":"answer in JSON"}],"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}]}}'
printf '%s\n' "$rec" >"$tmp/rec"

# call: saop-suspend on the record, its output in $tmp/out.
call() {
	saop-suspend "$@" <"$tmp/rec" >"$tmp/out" 2>"$tmp/err"
}

for prov in openai-responses gemini; do
	fake_llm_start --provider "$prov" \
	    '{"text": "{\"answer\": \"hello world, this is long\", \"n\": [1, 2, 3]}", "split": 14}'
	call || fail "$prov: whole: $(cat "$tmp/err")"
	[ "$(jq -r .raw "$tmp/out")" = "$full" ] ||
	    fail "$prov: whole raw: $(cat "$tmp/out")"
	jqf '.finish_reason == "stop" and .usage.prompt_tokens == 7' "$tmp/out"
	fake_llm_requests >"$tmp/req"
	if [ "$prov" = gemini ]; then
		jqf '.path == "/v1/models/fake-model:streamGenerateContent?alt=sse"
		    and .key_in == ["x-goog-api-key"] and .key == "ok"
		    and (.headers | has("authorization") | not)
		    and .body.systemInstruction.parts[0].text == "be brief"
		    and .body.contents == [{"role": "user", "parts":
		      [{"text": "answer in JSON"}]}]
		    and .body.generationConfig.maxOutputTokens == 64
		    and .body.tools[0].functionDeclarations[0].name == "f"
		    and (.body | has("model") | not)' "$tmp/req"
	else
		jqf '.path == "/v1/responses" and .key == "ok"
		    and .body.instructions == "be brief"
		    and .body.input == [{"role": "user",
		      "content": "answer in JSON"}]
		    and .body.max_output_tokens == 64 and .body.stream == true
		    and .body.tools[0] == {"type": "function", "name": "f",
		      "description": "d", "parameters": {"type": "object"}}
		    and (.body | has("messages") | not)' "$tmp/req"
	fi
	! grep -q "$SAOP_API_KEY" "$tmp/req" "$tmp/out" "$tmp/err" ||
	    fail "$prov: the key is shown"

	# The stream stops after 'world, ' with no finish (a cut): the
	# rest comes in a second call that continues from the part received.
	fake_llm_start --provider "$prov" \
	    '{"text": "{\"answer\": \"hello world, ", "finish": null}' \
	    '{"text": "this is long\", \"n\": [1, 2, 3]}"}'
	call || fail "$prov: resumed: $(cat "$tmp/err")"
	[ "$(jq -r .raw "$tmp/out")" = "$full" ] ||
	    fail "$prov: merged raw: $(cat "$tmp/out")"
	jqf '.suspend.resumes == 1 and .finish_reason == "stop"' "$tmp/out"
	fake_llm_requests | sed -n 2p >"$tmp/req2"
	if [ "$prov" = gemini ]; then
		# One user turn carries the continuation: the last content.
		jqf '(.body.contents | length) == 2 and
		    .body.contents[-1].role == "user" and
		    (.body.contents[-1].parts[0].text |
		      contains("{\"answer\": \"hello world, ")) and
		    (.body.contents[-1].parts[0].text |
		      startswith("Continue the JSON payload"))' "$tmp/req2"
	else
		jqf '(.body.input | length) == 2 and
		    .body.input[-1].role == "user" and
		    (.body.input[-1].content |
		      contains("{\"answer\": \"hello world, ")) and
		    (.body.input[-1].content |
		      startswith("Continue the JSON payload"))' "$tmp/req2"
	fi

	# A tool call, whole and without arguments.
	fake_llm_start --provider "$prov" \
	    '{"tool": {"name": "get_time", "arguments": ""}, "finish": "tool_calls"}'
	call || fail "$prov: no-argument call: $(cat "$tmp/err")"
	jqf '.raw == "{}" and .tool_call.name == "get_time" and
	    .finish_reason == "tool_calls"' "$tmp/out"

	# Cut at max tokens: length, the text kept.
	fake_llm_start --provider "$prov" \
	    '{"text": "{\"a\": [1, 2", "finish": "length"}'
	call || fail "$prov: length: $(cat "$tmp/err")"
	jqf '.raw == "{\"a\": [1, 2" and .finish_reason == "length"' "$tmp/out"

	# Refused for good: no retry, 69, the key not shown.
	fake_llm_start --provider "$prov" '{"status": 403}'
	expect_status 69 call
	[ "$(fake_llm_requests | wc -l)" -eq 1 ] || fail "$prov: 403 retried"
	! grep -q "$SAOP_API_KEY" "$tmp/out" "$tmp/err" ||
	    fail "$prov: the key is shown"

	# 503 (Gemini: UNAVAILABLE) is a loss, waited out, then answered.
	fake_llm_start --provider "$prov" '{"status": 503}' '{"text": "{}"}'
	call || fail "$prov: 503: $(cat "$tmp/err")"
	jqf '.raw == "{}" and .suspend.resumes == 1' "$tmp/out"
done

# Gemini's 429 RESOURCE_EXHAUSTED: with a RetryInfo it is a rate limit
# waited out (its retryDelay); without one, a spent quota is refused.
msg='You exceeded your current quota, please check your plan and billing details.'
fake_llm_start --provider gemini \
    "{\"status\": 429, \"body\": {\"error\": {\"code\": 429, \"message\": \"$msg\", \"status\": \"RESOURCE_EXHAUSTED\", \"details\": [{\"@type\": \"type.googleapis.com/google.rpc.RetryInfo\", \"retryDelay\": \"0.2s\"}]}}}" \
    '{"text": "{}"}'
call || fail "gemini 429 with RetryInfo: $(cat "$tmp/err")"
jqf '.raw == "{}"' "$tmp/out"
[ "$(fake_llm_requests | wc -l)" -eq 2 ] || fail "429 not retried"
fake_llm_start --provider gemini \
    "{\"status\": 429, \"body\": {\"error\": {\"code\": 429, \"message\": \"$msg\", \"status\": \"RESOURCE_EXHAUSTED\"}}}"
expect_status 69 call
grep -q "quota" "$tmp/err" || fail "quota: $(cat "$tmp/err")"

# --dry-run shows Gemini's key header masked, and no key in the URL.
SAOP_API_KEY=AIzaSyTESTKEY0123456789abcdefghijklmnop SAOP_PROVIDER=gemini \
    SAOP_API_BASE= SAOP_MODEL=gemini-2.5-flash call --dry-run ||
    fail "dry run: $(cat "$tmp/err")"
grep -q '^POST https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=' "$tmp/out" ||
    fail "dry-run URL: $(cat "$tmp/out")"
grep -q '^x-goog-api-key: AIz\.\.\.\*\*\*\*$' "$tmp/out" ||
    fail "dry-run key: $(cat "$tmp/out")"
! grep -q TESTKEY "$tmp/out" || fail "the key is shown"
exit 0
