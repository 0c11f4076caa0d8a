#!/usr/bin/env python3
"""check-pruned.py IN OUT: nothing half-stored after a fault.

Every record of IN is in OUT, in order.  Each tool output of a record of
OUT is either the input's, unchanged (then the record carries saop-prune's
error, status 74, or the output was too small to prune), or a summary
naming a row that `saop-prune --get ID` (on $SAOP_DB) gives back byte for
byte.  Prints "pruned N kept M"; exits 1 naming the first breach.
"""
import json
import re
import subprocess
import sys


def fail(msg):
    print("check-pruned: " + msg, file=sys.stderr)
    sys.exit(1)


ins = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
outs = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
if len(ins) != len(outs):
    fail("%d records in, %d out" % (len(ins), len(outs)))
pruned = kept = 0
for n, (a, b) in enumerate(zip(ins, outs), 1):
    ma, mb = a["request"]["messages"], b["request"]["messages"]
    if len(ma) != len(mb):
        fail("record %d: messages changed in number" % n)
    for x, y in zip(ma, mb):
        if x.get("role") != "tool" or x["content"] == y["content"]:
            if x.get("role") == "tool" and len(x["content"]) > 4096:
                err = b.get("error")
                if not err or err.get("status") != 74:
                    fail("record %d: unpruned without error 74: %r" % (n, err))
                kept += 1
            continue
        m = re.search(r"id (\d+)\]", y["content"])
        if not m:
            fail("record %d: neither raw nor a summary: %.80r" % (n, y["content"]))
        got = subprocess.run(["saop-prune", "--get", m.group(1)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if got.returncode != 0:
            fail("record %d: --get %s: exit %d %s" % (n, m.group(1), got.returncode, got.stderr))
        if got.stdout != x["content"].encode("utf-8"):
            fail("record %d: row %s is not the raw output" % (n, m.group(1)))
        pruned += 1
print("pruned %d kept %d" % (pruned, kept))
