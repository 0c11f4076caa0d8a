#!/usr/bin/env python3
"""Test helper for saop-prune: make conversations, check pruned output.

  prune.py gen SEED            records: OpenAI and Anthropic conversations
                               over several turns, large and small outputs
  prune.py big R N SIZE        R records (one task each): N tool outputs
                               of SIZE bytes, one assistant turn after each
  prune.py same A B [--unstored]
                               A and B hold equal records (as JSON);
                               --unstored: B's records may carry
                               saop-prune's error 74 (at least one does)
  prune.py check IN OUT DB DIR [--partial]
                               OUT is IN pruned by the rule (threshold
                               51200, age 2, 500 characters): same records,
                               every non-tool message untouched, every
                               summary names a row of DB holding the raw
                               output byte for byte.  Writes DIR/ID.raw
                               (the raw each id must give back) and prints
                               the ids.  --partial: OUT may end early (a
                               killed run); only its complete lines count,
                               and the rule is not required to have run.
"""
import json
import random
import re
import sqlite3
import sys

THRESHOLD, MIN_AGE, KEEP = 51200, 2, 500
MARK = re.compile(r"\n\n\[\.\.\. (\d+) bytes total \u2014 full output in "
                  r"state\.sqlite, id (\d+)\]\Z")


def text(rng, n):
    """n bytes of text with some multibyte characters."""
    words = ["alpha", "beta", "\u00e9t\u00e9", "\u4e2d\u6587", "\U0001f600",
             "line\n", "tab\t", "quote\"", "back\\slash", "0123456789"]
    out, size = [], 0
    while size < n:
        w = rng.choice(words) + " "
        out.append(w)
        size += len(w.encode())
    s = "".join(out).encode()[:n].decode("utf-8", "ignore")
    return s + "x" * (n - len(s.encode()))


def gen(seed):
    rng = random.Random(seed)
    sizes = [1000, 60000, 51200, 51201, 200000, 300, 120000, 75000]
    # OpenAI shape, one record per turn, each the conversation so far.
    msgs = [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "start \u00e9"}]
    for turn, size in enumerate(sizes):
        call = "call_%d" % turn
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call, "type": "function",
             "function": {"name": "tool%d" % (turn % 3), "arguments": "{}"}}]})
        content = text(rng, size)
        if turn == 6:
            content = [{"type": "text", "text": content[:50000]},
                       {"type": "text", "text": content[50000:]}]
        msgs.append({"role": "tool", "tool_call_id": call, "content": content})
        print(json.dumps({"task_id": "conv-openai", "turn": turn,
                          "request": {"model": "m", "messages": msgs},
                          "extra": {"kept": [1, 2.5, None]}},
                         ensure_ascii=False))
    # Anthropic shape: tool_result blocks in user messages.
    msgs = [{"role": "user", "content": "go"}]
    for turn, size in enumerate([90000, 10, 52000, 99999]):
        tid = "toolu_%d" % turn
        msgs.append({"role": "assistant", "content": [
            {"type": "text", "text": "calling"},
            {"type": "tool_use", "id": tid, "name": "read", "input": {}}]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid,
             "content": text(rng, size)},
            {"type": "text", "text": "and?"}]})
    msgs.append({"role": "assistant", "content": [{"type": "text",
                                                  "text": "done"}]})
    print(json.dumps({"task_id": "conv-anthropic", "turn": 4,
                      "request": {"model": "c", "max_tokens": 10,
                                  "messages": msgs}}, ensure_ascii=False))


def big(records, n, size):
    rng = random.Random(n)
    filler = text(rng, size)
    for r in range(records):
        msgs = [{"role": "user", "content": "go"}]
        for i in range(n):
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": "c%d" % i, "type": "function",
                 "function": {"name": "t", "arguments": "{}"}}]})
            msgs.append({"role": "tool", "tool_call_id": "c%d" % i,
                         "content": "%06d %06d " % (r, i) + filler})
        msgs.append({"role": "assistant", "content": "end"})
        print(json.dumps({"task_id": "big%d" % r, "turn": n,
                          "request": {"messages": msgs}}))


def same(a, b, unstored=False):
    ra = [json.loads(l) for l in open(a, encoding="utf-8")]
    rb = [json.loads(l) for l in open(b, encoding="utf-8")]
    if unstored:
        # Records left unpruned because nothing could be stored carry
        # saop-prune's error (status 74); the rest of them is unchanged.
        marked = 0
        for r in rb:
            err = r.pop("error", None)
            if err is not None:
                if err.get("program") != "saop-prune" or err.get("status") != 74:
                    fail("%s: an unexpected error %r" % (b, err))
                marked += 1
        if marked == 0:
            fail("%s: no record says it was left unpruned" % b)
    if ra != rb:
        fail("%s and %s differ (%d and %d records)" % (a, b, len(ra), len(rb)))


def outputs(msgs):
    """(index path, content, turn age) of every tool output."""
    total = sum(1 for m in msgs if m.get("role") == "assistant")
    seen = 0
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role == "assistant":
            seen += 1
        elif role == "tool":
            yield (i,), m.get("content"), 1 + total - seen
        elif role == "user" and isinstance(m.get("content"), list):
            for j, b in enumerate(m["content"]):
                if b.get("type") == "tool_result":
                    yield (i, j), b.get("content"), 1 + total - seen


def as_text(c):
    if isinstance(c, str):
        return c
    return "".join(p["text"] for p in c)


def strip_outputs(msgs):
    """msgs with every tool output's content replaced by None."""
    out = json.loads(json.dumps(msgs))
    for path, _, _ in outputs(msgs):
        if len(path) == 1:
            out[path[0]]["content"] = None
        else:
            out[path[0]]["content"][path[1]]["content"] = None
    return out


def fail(msg):
    print("prune.py: " + msg, file=sys.stderr)
    sys.exit(1)


def check(inp, outp, dbpath, outdir, partial):
    ins = [json.loads(l) for l in open(inp, encoding="utf-8")]
    data = open(outp, "rb").read()
    lines = data.split(b"\n")
    complete = lines[:-1]               # the last piece has no LF
    if not partial and lines[-1] != b"":
        fail("output does not end with a newline")
    if not partial and len(complete) != len(ins):
        fail("%d records in, %d out" % (len(ins), len(complete)))
    db = sqlite3.connect(dbpath)
    ids = {}
    for n, (a, line) in enumerate(zip(ins, complete), 1):
        b = json.loads(line)
        ma, mb = a["request"]["messages"], b["request"]["messages"]
        if strip_outputs(ma) != strip_outputs(mb):
            fail("record %d: a message other than a tool output changed" % n)
        ra = {k: v for k, v in a.items() if k not in ("request", "task_id")}
        rb = {k: v for k, v in b.items() if k not in ("request", "task_id")}
        if ra != rb or {k: v for k, v in a["request"].items()
                        if k != "messages"} != {
                k: v for k, v in b["request"].items() if k != "messages"}:
            fail("record %d: a field other than the messages changed" % n)
        for (path, ca, age), (_, cb, _) in zip(outputs(ma), outputs(mb)):
            raw, now = as_text(ca), as_text(cb)
            size = len(raw.encode())
            m = MARK.search(now)
            if m is None:
                if now != raw:
                    fail("record %d %s: changed but no summary" % (n, path))
                if not partial and age >= MIN_AGE and size > THRESHOLD:
                    fail("record %d %s: %d bytes, age %d, not pruned"
                         % (n, path, size, age))
                continue
            if age < MIN_AGE or size <= THRESHOLD:
                fail("record %d %s: %d bytes, age %d, pruned"
                     % (n, path, size, age))
            if int(m.group(1)) != size:
                fail("record %d %s: summary says %s bytes, raw has %d"
                     % (n, path, m.group(1), size))
            if now[:m.start()] != raw[:KEEP]:
                fail("record %d %s: summary is not the first %d characters"
                     % (n, path, KEEP))
            row = db.execute("SELECT raw_content, byte_size FROM tool_outputs"
                             " WHERE id = ?", (int(m.group(2)),)).fetchone()
            if row is None:
                fail("record %d %s: pruned, but id %s is not in the database"
                     % (n, path, m.group(2)))
            if bytes(row[0]) != raw.encode() or row[1] != size:
                fail("record %d %s: id %s does not hold the raw output"
                     % (n, path, m.group(2)))
            ids[int(m.group(2))] = raw.encode()
    for i, raw in ids.items():
        with open("%s/%d.raw" % (outdir, i), "wb") as f:
            f.write(raw)
        print(i)


def main():
    a = sys.argv[1:]
    if a[:1] == ["gen"]:
        gen(int(a[1]))
    elif a[:1] == ["big"]:
        big(int(a[1]), int(a[2]), int(a[3]))
    elif a[:1] == ["same"]:
        same(a[1], a[2], "--unstored" in a[3:])
    elif a[:1] == ["check"]:
        check(a[1], a[2], a[3], a[4], "--partial" in a)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


main()
