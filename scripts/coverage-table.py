#!/usr/bin/env python3
"""coverage-table.py: scripts/coverage's table and floors.

    coverage-table.py COVERAGE.json FLOORS [--raise]

COVERAGE.json is gcovr's --json report.  FLOORS (tests/coverage-floors)
has one entry a line:

    PATH  LINES  BRANCHES  [TARGET-LINES TARGET-BRANCHES]  [# comment]

PATH is a file (lib/detect.c), a folder as a whole (lib/), or a file's
functions taken together (lib/resume.c:merge,judge); a figure is a
percentage or '-' for none.  The floors fail the run when a figure is
below them; the targets (what the protocols ask) are only shown.  A floor
may never go below the one the file's previous committed version set,
unless its line says '# lowered: WHY'.  Prints the table; exits 0 when
every figure is at or above its floor, 1 when one is below, 2 when FLOORS
is malformed or a floor went down.
"""
import json
import math
import os
import re
import subprocess
import sys


def pct(hit, total):
    """Percentage of hit in total (100 when there is nothing to count)."""
    return 100.0 * hit / total if total else 100.0


def parse_floors(text, name):
    """[(path, floors, targets, comment)] of a floors file's text."""
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        line, _, comment = raw.partition("#")
        f = line.split()
        if not f:
            continue
        if len(f) not in (3, 5):
            sys.exit("coverage: %s:%d: want PATH LINES BRANCHES "
                     "[TARGET-LINES TARGET-BRANCHES]" % (name, n))
        vals = []
        for v in f[1:]:
            if v == "-":
                vals.append(None)
                continue
            try:
                vals.append(float(v))
            except ValueError:
                print("coverage: %s:%d: '%s' is not a percentage" % (name, n, v))
                sys.exit(2)
        out.append((f[0], vals[0:2], vals[2:4] if len(f) == 5 else [None, None],
                    comment.strip()))
    return out


def counts(files, path):
    """(lines hit, lines, branches hit, branches) of PATH in the report."""
    fname, _, funcs = path.partition(":")
    lh = lt = bh = bt = 0
    for name, data in files.items():
        if fname.endswith("/"):
            if not name.startswith(fname):
                continue
        elif name != fname:
            continue
        lines = data["lines"]
        if funcs:
            lines = [l for l in lines if data["fn"].get(l["line_number"]) in
                     funcs.split(",")]
        for l in lines:
            if l.get("gcovr/noncode") or l.get("gcovr/excluded"):
                continue
            lt += 1
            lh += l["count"] > 0
            for b in l.get("branches", []):
                bt += 1
                bh += b["count"] > 0
    return lh, lt, bh, bt


def function_of_lines(data, source):
    """Map line number -> name of the function it lies in (by the
    functions' first lines, each running to the next one's)."""
    starts = sorted((f["lineno"], f["name"]) for f in data.get("functions", []))
    fn = {}
    for i, (start, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else 1 << 30
        for l in data["lines"]:
            if start <= l["line_number"] < end:
                fn[l["line_number"]] = name
    return fn


def markers(path):
    """How many GCOVR_EXCL markers PATH holds (STOP not counted)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return 0
    return len(re.findall(r"GCOVR_EXCL_(?:LINE|BR_LINE|START|BR_START)", text))


def history_check(floors_path, current):
    """Messages for floors lower than in the file's previous version.

    Versions are taken along the first parents (what landed, merge by
    merge): two branches raising the same floor apart are not a fall."""
    try:
        revs = subprocess.run(
            ["git", "log", "--first-parent", "--format=%H", "--",
             floors_path],
            capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return []
    versions = []
    for r in revs:
        try:
            versions.append((r[:10], subprocess.run(
                ["git", "show", "%s:%s" % (r, floors_path)],
                capture_output=True, text=True, check=True).stdout))
        except subprocess.CalledProcessError:
            pass
    versions.insert(0, ("working tree", current))
    bad = []
    for (newer, ntext), (older, otext) in zip(versions, versions[1:]):
        old = {p: fl for p, fl, _, _ in parse_floors(otext, older)}
        for p, fl, _, comment in parse_floors(ntext, newer):
            if p not in old or comment.startswith("lowered:"):
                continue
            for kind, a, b in zip(("lines", "branches"), fl, old[p]):
                if b is not None and (a is None or a < b):
                    bad.append("%s: %s %s floor went down (%s -> %s) in %s "
                               "without '# lowered: WHY'" %
                               (floors_path, p, kind, b, a, newer))
    return bad


def main():
    args = [a for a in sys.argv[1:] if a != "--raise"]
    do_raise = "--raise" in sys.argv[1:]
    report, floors_path = args
    with open(report) as f:
        rep = json.load(f)
    files = {}
    for data in rep["files"]:
        name = data["file"]
        if os.path.isabs(name):
            name = os.path.relpath(name)
        data["fn"] = function_of_lines(data, name)
        files[name] = data
    with open(floors_path) as f:
        ftext = f.read()
    entries = parse_floors(ftext, floors_path)
    listed = {e[0]: e for e in entries}

    rows = sorted(files) + ["lib/", "src/"]
    rows += [p for p, _, _, _ in entries if p not in rows]
    fmt = "%-36s %17s %17s %4s %11s %11s  %s"
    print(fmt % ("file", "lines", "branches", "excl", "floor L/B",
                 "target L/B", ""))
    below = []
    measured = {}
    for p in rows:
        lh, lt, bh, bt = counts(files, p)
        lp, bp = pct(lh, lt), pct(bh, bt)
        measured[p] = (lp, bp)
        fl, tg = ([None, None], [None, None])
        if p in listed:
            fl, tg = listed[p][1], listed[p][2]
        note = []
        for kind, m, floor, target in (("lines", lp, fl[0], tg[0]),
                                       ("branches", bp, fl[1], tg[1])):
            if floor is not None and m + 1e-9 < floor:
                note.append("BELOW FLOOR (%s)" % kind)
                below.append("%s %s %.1f%% < floor %.1f%%" % (p, kind, m, floor))
            elif target is not None and m + 1e-9 < target:
                note.append("target %s not met" % kind)
        if p.endswith("/"):
            excl = sum(markers(n) for n in files if n.startswith(p))
        else:
            excl = markers(p.partition(":")[0])

        def show(v):
            return "-" if v is None else "%g" % v
        label = p
        if ":" in p and "," in p:
            fns = p.partition(":")[2].split(",")
            label = "%s:%s+%d" % (p.partition(":")[0], fns[-1], len(fns) - 1)
        print(fmt % (label, "%d/%d %5.1f%%" % (lh, lt, lp),
                     "%d/%d %5.1f%%" % (bh, bt, bp), excl,
                     "%s/%s" % (show(fl[0]), show(fl[1])),
                     "%s/%s" % (show(tg[0]), show(tg[1])), ", ".join(note)))
    status = 1 if below else 0
    for b in below:
        print("coverage: %s" % b)
    bad = history_check(floors_path, ftext)
    for b in bad:
        print("coverage: %s" % b)
    if bad:
        status = 2

    if do_raise:
        out = []
        for raw in ftext.splitlines():
            line, sep, comment = raw.partition("#")
            f = line.split()
            if len(f) in (3, 5) and f[0] in measured:
                for i, m in ((1, measured[f[0]][0]), (2, measured[f[0]][1])):
                    if f[i] == "-":
                        continue
                    f[i] = "%.1f" % max(float(f[i]), math.floor(m * 10) / 10)
                raw = "%-34s %5s %5s" % tuple(f[:3])
                if len(f) == 5:
                    raw += "   %5s %5s" % tuple(f[3:])
                if sep:
                    raw += "  #" + comment
            out.append(raw)
        with open(floors_path, "w") as f:
            f.write("\n".join(out) + "\n")
        print("coverage: floors raised to the figures measured in %s" % floors_path)
    sys.exit(status)


if __name__ == "__main__":
    main()
