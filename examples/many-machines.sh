#!/bin/sh
# many-machines.sh: two working directories standing for two machines,
# one PostgreSQL database between them.  "Machine" a prunes a turn (its
# large tool output goes to the database); "machine" b, with nothing of
# a's on its disk, reads that output back and reports on a's task.
#
#	SAOP_DB=postgresql://user@host/db examples/many-machines.sh
#
# Prints what b sees; exits non-zero when b does not see a's work.
set -eu
case ${SAOP_DB:-} in
postgres://* | postgresql://*) ;;
*) echo "many-machines: set SAOP_DB to a postgresql:// URI" >&2; exit 64 ;;
esac
a=$(mktemp -d "${TMPDIR:-/tmp}/machine-a.XXXXXX")
b=$(mktemp -d "${TMPDIR:-/tmp}/machine-b.XXXXXX")
trap 'rm -rf "$a" "$b"' EXIT
task=fleet-$$

# Machine a: a turn whose old, 60 KB tool output is pruned into the database.
(cd "$a" && python3 -c '
import json, sys
out = "".join("line %05d of the build log\n" % i for i in range(2300))
print(json.dumps({"task_id": sys.argv[1], "turn": 3, "request": {"messages": [
    {"role": "user", "content": "Fix the build."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1",
        "type": "function", "function": {"name": "build", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": out},
    {"role": "assistant", "content": "Reading the log."}]}}))' "$task" |
    saop-prune >turn.ndjson)
echo "a: $(jq -r '.request.messages[2].content' "$a/turn.ndjson" | tail -n 1)"

# Machine b: the raw output, byte for byte, and a's task in the report.
(cd "$b" && saop-prune --get-latest build --task "$task" | tail -n 1 |
    sed 's/^/b: the raw output ends: /')
(cd "$b" && saop-report --task "$task" | grep -m 1 pruned |
    sed 's/^ *pruned */b: pruned /')
(cd "$b" && saop-report --json --task "$task" |
    jq -e '.overall.pruned.outputs == 1' >/dev/null)
