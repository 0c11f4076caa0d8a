#!/bin/sh
# examples/first-turn.sh: the first turn of README.md, exactly as it is
# printed there: one record, the whole pipeline, the envelope out.  The
# model is the environment's: SAOP_API_BASE alone for a local server
# (Ollama, llama.cpp, vLLM: no key), SAOP_API_KEY for a hosted one, and
# SAOP_MODEL.  Writes turn.ndjson and out.ndjson in DIR (default: here).
#
#	sh examples/first-turn.sh [DIR]
#
# Exit status: saop-validate's (0: a valid envelope; see saop(7)).
set -eu
cd "${1:-.}"

cat >turn.ndjson <<'RECORD'
{"task_id": "first", "turn": 0, "request": {"messages": [{"role": "system", "content": "Answer with one JSON object and nothing else: {\"saop\": \"1.0\", \"turn_index\": 0, \"agent_role\": \"researcher\", \"thought\": \"...\", \"action\": null}. agent_role is one of researcher, architect, developer, reviewer; action is null when you are done, else {\"tool\": \"NAME\", \"parameters\": {...}}."}, {"role": "user", "content": "Which files in /tmp are safe to delete?"}]}}
RECORD

status=0
saop-prune <turn.ndjson | saop-suspend | saop-detect | saop-resume | saop-validate >out.ndjson || status=$?
jq '{state, envelope}' out.ndjson
exit "$status"
