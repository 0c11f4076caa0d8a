#!/bin/sh
# One neutral request of every shape (a system message, text, image and
# other parts, tool calls with and without JSON arguments, tool results
# as text parts and as a string, function tools of both forms, built-in
# tools, a json_schema response format) as each wire format's body, and
# tool_choice in each of its forms as each format's own (issue 25:
# llm-request.c).  Read from saop-suspend --dry-run: nothing is sent.
. "$top_srcdir/tests/cli/lib.sh"

export SAOP_MODEL=m SAOP_API_BASE=http://127.0.0.1:9/v1
export SAOP_API_KEY=sk-test-request-shapes-0123
cat >"$tmp/rec.json" <<'JSON'
{"task_id": "t", "turn": 1, "request": {"messages": [
 {"role": "system", "content": "be brief"},
 {"role": "user", "content": [{"type": "text", "text": "look"},
  {"type": "image_url", "image_url": {"url": "http://i/x.png"}},
  {"type": "input_audio", "x": 1}]},
 {"role": "assistant", "content": "", "tool_calls": [
  {"id": "c1", "type": "function", "function": {"name": "get", "arguments": "{\"q\":1}"}},
  {"id": "c2", "type": "function", "function": {"name": "put", "arguments": "not json"}}]},
 {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "{\"ok\":"},
  {"type": "text", "text": "true}"}]},
 {"role": "tool", "tool_call_id": "c2", "content": "plain"},
 {"role": "assistant", "content": [{"type": "text", "text": "done"}], "tool_calls": [
  {"id": "c3", "type": "function", "function": {"name": "get", "arguments": "{}"}}]},
 {"role": "tool", "tool_call_id": "c3", "content": ""}],
 "tools": [{"type": "function", "function": {"name": "get", "description": "d",
   "parameters": {"type": "object"}, "strict": true}},
  {"name": "put", "description": "p", "input_schema": {"type": "object"}},
  {"type": "web_search"}],
 "tool_choice": {"type": "tool", "name": "get"},
 "response_format": {"type": "json_schema", "json_schema": {"name": "s",
  "schema": {"type": "object"}}}}}
JSON
jq -c . "$tmp/rec.json" >"$tmp/rec"

# body PROVIDER [TOOL_CHOICE]: the body --dry-run shows for $tmp/rec (or
# the file $rec names), in $tmp/body.
body() {
	if [ $# -gt 1 ]; then
		jq -c --argjson c "$2" '.request.tool_choice = $c' "${rec:-$tmp/rec}"
	else
		cat "${rec:-$tmp/rec}"
	fi | SAOP_PROVIDER=$1 expect_status 0 saop-suspend --dry-run >"$tmp/out"
	sed '1,/^$/d' "$tmp/out" >"$tmp/body"
	grep -q -F "$SAOP_API_KEY" "$tmp/out" && fail "$1: the key shown"
	return 0
}

# Anthropic: the system message apart, tool results as user tool_result
# blocks, tool calls as tool_use blocks (arguments that are not a JSON
# object as {}), the assistant's text parts before them, both tool forms
# as {name, description, input_schema}.
body anthropic
jqf '.system == "be brief" and (.messages | length) == 6 and
    .messages[1] == {"role": "assistant", "content": [
      {"type": "tool_use", "id": "c1", "name": "get", "input": {"q": 1}},
      {"type": "tool_use", "id": "c2", "name": "put", "input": {}}]} and
    .messages[2].content[0].tool_use_id == "c1" and
    .messages[3] == {"role": "user", "content": [{"type": "tool_result",
      "tool_use_id": "c2", "content": "plain"}]} and
    .messages[4].content == [{"type": "text", "text": "done"},
      {"type": "tool_use", "id": "c3", "name": "get", "input": {}}] and
    .tools[0:2] == [{"name": "get", "description": "d", "input_schema":
      {"type": "object"}}, {"name": "put", "description": "p",
      "input_schema": {"type": "object"}}] and
    .tools[2] == {"type": "web_search"} and
    .tool_choice == {"type": "tool", "name": "get"}' "$tmp/body"

# Responses: input items; text parts as input_text / output_text by role,
# an image as input_image with its URL, another part copied; calls as
# function_call items (the empty text before them left out), results as
# function_call_output with the parts joined; the schema as text.format.
body openai-responses
jqf '.input[1].content == [{"type": "input_text", "text": "look"},
      {"type": "input_image", "image_url": "http://i/x.png"},
      {"type": "input_audio", "x": 1}] and
    .input[2] == {"type": "function_call", "call_id": "c1", "name": "get",
      "arguments": "{\"q\":1}"} and
    .input[4] == {"type": "function_call_output", "call_id": "c1",
      "output": "{\"ok\":true}"} and
    .input[6] == {"role": "assistant", "content": [{"type": "output_text",
      "text": "done"}]} and
    .input[8] == {"type": "function_call_output", "call_id": "c3",
      "output": ""} and (.input | length) == 9 and
    .text.format == {"type": "json_schema", "name": "s", "schema":
      {"type": "object"}} and
    .tools[0] == {"type": "function", "name": "get", "description": "d",
      "parameters": {"type": "object"}, "strict": true} and
    .tools[1] == {"type": "function", "name": "put", "description": "p",
      "parameters": {"type": "object"}} and
    .tool_choice == {"type": "function", "name": "get"}' "$tmp/body"

# Gemini: system as systemInstruction, only text parts, calls as
# functionCall parts of a model turn, results as functionResponse parts
# named after their call (a JSON object result as it is, other text as
# {"result"}), function tools as one functionDeclarations list, a Gemini
# tool copied (the built-in tool of another API is refused: below).
jq -c '.request.tools[2] = {"googleSearch": {}}' "$tmp/rec" >"$tmp/rec.g"
rec=$tmp/rec.g body gemini
jqf '.systemInstruction == {"parts": [{"text": "be brief"}]} and
    .contents[0] == {"role": "user", "parts": [{"text": "look"}]} and
    .contents[1].role == "model" and
    .contents[1].parts[1] == {"functionCall": {"id": "c2", "name": "put",
      "args": {}}} and
    .contents[2].parts == [{"functionResponse": {"id": "c1", "name": "get",
      "response": {"ok": true}}}] and
    .contents[3].parts[0].functionResponse.response == {"result": "plain"} and
    .contents[5].parts[0].functionResponse == {"id": "c3", "name": "get",
      "response": {"result": ""}} and
    .generationConfig.responseJsonSchema == {"type": "object"} and
    (.tools | map(.functionDeclarations // empty) | .[0] | map(.name)) ==
      ["get", "put"] and
    .tools[-1].functionDeclarations[0].parametersJsonSchema ==
      {"type": "object"} and .tools[0] == {"googleSearch": {}}' "$tmp/body"

# tool_choice: each form (chat completions', Anthropic's, Responses')
# as each format's own.
cp "$tmp/rec.g" "$tmp/rec"
while read -r c openai anthropic responses gemini; do
	for p in openai anthropic openai-responses gemini; do
		case $p in
		openai) want=$openai ;;
		anthropic) want=$anthropic ;;
		openai-responses) want=$responses ;;
		gemini) want=$gemini ;;
		esac
		body "$p" "$c"
		got=$(jq -c '.tool_choice // .toolConfig.functionCallingConfig' "$tmp/body")
		[ "$got" = "$want" ] || fail "tool_choice $c as $p: $got, not $want"
	done
done <<'TABLE'
"required" "required" {"type":"any"} "required" {"mode":"ANY"}
"auto" "auto" {"type":"auto"} "auto" {"mode":"AUTO"}
"none" "none" {"type":"none"} "none" {"mode":"NONE"}
{"type":"any"} "required" {"type":"any"} "required" {"mode":"ANY"}
{"type":"auto"} "auto" {"type":"auto"} "auto" {"mode":"AUTO"}
{"type":"none"} "none" {"type":"none"} "none" {"mode":"NONE"}
{"type":"tool","name":"get"} {"type":"function","function":{"name":"get"}} {"type":"tool","name":"get"} {"type":"function","name":"get"} {"mode":"ANY","allowedFunctionNames":["get"]}
{"type":"function","function":{"name":"get"}} {"type":"function","function":{"name":"get"}} {"type":"tool","name":"get"} {"type":"function","name":"get"} {"mode":"ANY","allowedFunctionNames":["get"]}
{"type":"function","name":"get"} {"type":"function","function":{"name":"get"}} {"type":"tool","name":"get"} {"type":"function","name":"get"} {"mode":"ANY","allowedFunctionNames":["get"]}
{"type":"tool","name":"get","disable_parallel_tool_use":true} {"type":"function","function":{"name":"get"}} {"type":"tool","name":"get","disable_parallel_tool_use":true} {"type":"function","name":"get"} {"mode":"ANY","allowedFunctionNames":["get"]}
TABLE

# Anthropic's disable_parallel_tool_use is OpenAI's parallel_tool_calls
# false, unless the request says otherwise.
for p in openai openai-responses; do
	body "$p" '{"type":"any","disable_parallel_tool_use":true}'
	jqf '.parallel_tool_calls == false and .tool_choice == "required"' \
	    "$tmp/body"
done
jq -c '.request.parallel_tool_calls = true' "$tmp/rec" >"$tmp/rec.p"
rec=$tmp/rec.p body openai '{"type":"auto","disable_parallel_tool_use":true}'
jqf '.parallel_tool_calls == true and .tool_choice == "auto"' "$tmp/body"

# refused PROVIDER FIELD WORDS: the request in $tmp/req.json is refused by
# --dry-run (65) with a message naming FIELD and saying WORDS.
refused() {
	jq -c '{task_id: "t", request: .}' "$tmp/req.json" |
	    SAOP_PROVIDER=$1 expect_status 65 saop-suspend --dry-run \
	    >"$tmp/out" 2>"$tmp/err"
	grep -q -F -e "$2: " "$tmp/err" && grep -q -F -e "$3" "$tmp/err" ||
	    fail "$1: $(cat "$tmp/req.json"): $(cat "$tmp/err")"
}

# A tool_choice that forces a tool but names none has no reading in any
# format: refused, naming the member that is missing (not "out of
# memory").
for p in openai anthropic openai-responses gemini; do
	while read -r c field; do
		echo "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}],
		    \"tool_choice\": $c}" >"$tmp/req.json"
		refused "$p" "$field" "names no tool"
	done <<'TABLE'
{"type":"tool"} /request/tool_choice/name
{"type":"tool","name":7} /request/tool_choice/name
{"type":"function"} /request/tool_choice/name
{"type":"function","function":{}} /request/tool_choice/function/name
{"type":"function","function":{"name":null}} /request/tool_choice/function/name
TABLE
done

# Function tools in Responses' flat form ({"type":"function", name,
# parameters}) are function tools to every format.
jq -nc '{task_id: "t", request: {messages: [{role: "user", content: "x"}],
    tools: [{type: "function", name: "f", description: "d", parameters:
    {type: "object", properties: {a: {type: "string"}}}, strict: true}]}}' \
    >"$tmp/rec.flat"
rec=$tmp/rec.flat body openai
jqf '.tools == [{"type": "function", "function": {"name": "f",
    "description": "d", "parameters": {"type": "object", "properties":
    {"a": {"type": "string"}}}, "strict": true}}]' "$tmp/body"
rec=$tmp/rec.flat body anthropic
jqf '.tools == [{"name": "f", "description": "d", "input_schema":
    {"type": "object", "properties": {"a": {"type": "string"}}}}]' "$tmp/body"
rec=$tmp/rec.flat body openai-responses
jqf '.tools == [{"type": "function", "name": "f", "description": "d",
    "parameters": {"type": "object", "properties": {"a": {"type":
    "string"}}}, "strict": true}]' "$tmp/body"
rec=$tmp/rec.flat body gemini
jqf '.tools == [{"functionDeclarations": [{"name": "f", "description": "d",
    "parametersJsonSchema": {"type": "object", "properties": {"a":
    {"type": "string"}}}}]}]' "$tmp/body"

# A function tool without a name, and for Gemini a tool of another API
# (OpenAI's or Anthropic's built-in tools, a tool choice Gemini cannot
# say): refused, the entry named.  Gemini takes only its own tools.
for p in openai anthropic openai-responses gemini; do
	for t in '{"type": "function", "function": {"description": "d"}}' \
	    '{"input_schema": {"type": "object"}}' \
	    '{"type": "function", "parameters": {"type": "object"}}'; do
		echo "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}],
		    \"tools\": [{\"googleSearch\": {}}, $t]}" >"$tmp/req.json"
		refused "$p" /request/tools/1 "function tool without a name"
	done
done
for t in '{"type": "web_search"}' '{"type": "code_interpreter"}' \
    '{"type": "web_search_20250305", "name": "web_search"}' \
    '{"type": "custom", "custom": {"name": "g"}}'; do
	echo "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}],
	    \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}},
	    $t]}" >"$tmp/req.json"
	refused gemini /request/tools/1 "not a tool Gemini takes"
done
# A tool_choice of a form saop does not know is sent as it is (the
# provider judges it); Gemini's toolConfig cannot carry it: refused.
for p in openai anthropic openai-responses; do
	body "$p" '{"foo":1}'
	jqf '.tool_choice == {"foo": 1}' "$tmp/body"
done
for c in '{"foo": 1}' '"sometimes"' \
    '{"type": "allowed_tools", "mode": "auto", "tools": []}'; do
	echo "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}],
	    \"tool_choice\": $c}" >"$tmp/req.json"
	refused gemini /request/tool_choice "Gemini"
done

# Anthropic: developer messages (OpenAI's newer name for system) are
# system text too, in order; beside a system of blocks they are more
# blocks.
jq -nc '{task_id: "t", request: {messages: [{role: "system", content: "s1"},
    {role: "developer", content: [{type: "text", text: "d1"}]},
    {role: "user", content: "x"}, {role: "developer", content: "d2"}]}}' \
    >"$tmp/rec.dev"
rec=$tmp/rec.dev body anthropic
jqf '.system == "s1\n\nd1\n\nd2" and
    .messages == [{"role": "user", "content": "x"}]' "$tmp/body"
jq -c '.request.system = [{type: "text", text: "blk"}]' "$tmp/rec.dev" \
    >"$tmp/rec.devb"
rec=$tmp/rec.devb body anthropic
jqf '.system == [{"type": "text", "text": "blk"}, {"type": "text", "text":
    "s1"}, {"type": "text", "text": "d1"}, {"type": "text", "text": "d2"}]
    and .messages == [{"role": "user", "content": "x"}]' "$tmp/body"

# The other request members: a system of blocks, the token limit (the
# first of max_tokens / max_completion_tokens), stop as one string or a
# list, a function tool without parameters (an empty object schema where
# the format needs one), an assistant's text before its calls.
jq -nc '{task_id: "t", request: {system: [{type: "text", text: "sys"}],
    messages: [{role: "user", content: "x"}, {role: "assistant", content:
    "thinking", tool_calls: [{id: "c", type: "function", function: {name:
    "f", arguments: "{}"}}]}], tools: [{type: "function", function: {name:
    "f"}}], stop: "END", max_tokens: 5, max_completion_tokens: 9,
    temperature: 0.5}}' >"$tmp/rec"
body anthropic
jqf '.system == [{"type": "text", "text": "sys"}] and .max_tokens == 5 and
    .stop_sequences == ["END"] and .temperature == 0.5 and
    .tools == [{"name": "f", "input_schema": {"type": "object"}}] and
    .messages[1].content[0] == {"type": "text", "text": "thinking"}' "$tmp/body"
body openai-responses
jqf '.instructions == "sys" and .max_output_tokens == 5 and
    .tools == [{"type": "function", "name": "f", "parameters":
      {"type": "object"}}] and
    .input[1] == {"role": "assistant", "content": "thinking"}' "$tmp/body"
body gemini
jqf '.generationConfig == {"maxOutputTokens": 5, "temperature": 0.5,
      "stopSequences": ["END"]} and
    .systemInstruction.parts == [{"text": "sys"}] and
    .contents[1].parts[0] == {"text": "thinking"}' "$tmp/body"
jq -c '.request.stop_sequences = ["a", "b"]' "$tmp/rec" >"$tmp/rec2"
mv "$tmp/rec2" "$tmp/rec"
body gemini
jqf '.generationConfig.stopSequences == ["a", "b"]' "$tmp/body"

# A request that is not an object: 65, named.
echo '{"task_id": "t", "request": [1]}' |
    expect_status 65 saop-suspend --dry-run >"$tmp/out" 2>"$tmp/err"
grep -q 'request is not a JSON object' "$tmp/err" || fail "$(cat "$tmp/err")"

# The user's headers as --dry-run shows them: the key's own header
# (SAOP_AUTH_HEADER) masked even under a harmless name, a Bearer
# credential masked after its scheme, any other header whole.
echo '{"task_id": "t", "request": {"messages": [{"role": "user", "content": "x"}]}}' |
    SAOP_AUTH_HEADER=X-Pass expect_status 0 saop-suspend --dry-run \
    --header 'X-Pass: hunter22' --header 'X-Trace: 1' \
    --header 'Authorization: Bearer abcdefghijklmnopq' >"$tmp/out"
sed '/^$/q' "$tmp/out" >"$tmp/heads"
grep -q -x 'X-Pass: \*\*\*\*' "$tmp/heads" || fail "X-Pass: $(cat "$tmp/heads")"
grep -q -x 'X-Trace: 1' "$tmp/heads" || fail "X-Trace: $(cat "$tmp/heads")"
grep -q -x 'Authorization: Bearer abc\.\.\.\*\*\*\*' "$tmp/heads" ||
    fail "Authorization: $(cat "$tmp/heads")"
grep -q -e hunter22 -e defghij "$tmp/out" && fail "a secret shown: $(cat "$tmp/out")"

# --schema-mode prompt: the schema as words where each format keeps its
# system text: after the leading system and developer messages (OpenAI),
# after the system text or as one more system block (Anthropic), after
# the instructions (Responses), as one more systemInstruction part
# (Gemini, made when there is none).
echo '{"type": "object"}' >"$tmp/o.json"
prompt='Answer with JSON only: one value that follows this JSON Schema.

```json
{
  "type": "object"
}
```'
pbody() {
	echo "$2" | SAOP_PROVIDER=$1 expect_status 0 saop-suspend --dry-run \
	    --schema "$tmp/o.json" --schema-mode prompt >"$tmp/out"
	sed '1,/^$/d' "$tmp/out" >"$tmp/body"
}
lead='{"task_id": "t", "request": {"messages": [{"role": "system", "content": "s1"}, {"role": "developer", "content": "d1"}, {"role": "user", "content": "x"}]}}'
blocks='{"task_id": "t", "request": {"system": [{"type": "text", "text": "blk"}], "messages": [{"role": "user", "content": "x"}]}}'
bare='{"task_id": "t", "request": {"messages": [{"role": "user", "content": "x"}]}}'
pbody openai "$lead"
jq -e --arg p "$prompt" '[.messages[] | .role] == ["system", "developer",
    "system", "user"] and .messages[2].content == $p' "$tmp/body" >/dev/null ||
    fail "prompt, openai: $(cat "$tmp/body")"
pbody anthropic "$lead"
jq -e --arg p "$prompt" '.system == "s1\n\nd1\n\n" + $p' "$tmp/body" >/dev/null ||
    fail "prompt, anthropic: $(cat "$tmp/body")"
pbody anthropic "$blocks"
jq -e --arg p "$prompt" '.system == [{"type": "text", "text": "blk"},
    {"type": "text", "text": $p}]' "$tmp/body" >/dev/null ||
    fail "prompt, anthropic blocks: $(cat "$tmp/body")"
pbody openai-responses "$blocks"
jq -e --arg p "$prompt" '.instructions == "blk\n\n" + $p' "$tmp/body" \
    >/dev/null || fail "prompt, responses: $(cat "$tmp/body")"
pbody gemini "$bare"
jq -e --arg p "$prompt" '.systemInstruction == {"parts": [{"text": $p}]}' \
    "$tmp/body" >/dev/null || fail "prompt, gemini: $(cat "$tmp/body")"
pbody gemini "$lead"
jq -e --arg p "$prompt" '.systemInstruction.parts == [{"text": "s1"},
    {"text": "d1"}, {"text": $p}]' "$tmp/body" >/dev/null ||
    fail "prompt, gemini after the system text: $(cat "$tmp/body")"
exit 0
