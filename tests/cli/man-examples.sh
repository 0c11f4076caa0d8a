#!/bin/sh
# The EXAMPLES of every page run and print what the page shows.  The
# examples of a page run in order in one shell, in a fresh directory
# (the source tree's examples/ linked in), so that a file one example
# writes is there for the next and "echo $?" sees the command before it.
# An example that shows no output runs too (it may write a file the next
# one reads), but only the output of those that show one is compared:
# the others are illustrations over the reader's own files (turns.ndjson,
# a model), whose errors here are expected.
# (Their lint is man-lint.sh.)
. "$top_srcdir/tests/cli/lib.sh"

# split PAGE.txt DIR: DIR/N.sh (the command: "$ " lines, joined while
# the line ends in | or \ or a quote is still open) and DIR/N.out (the
# lines shown after it).
split_examples() {
	"${PYTHON3:-python3}" - "$1" "$2" <<'PY'
import shlex, sys
lines = open(sys.argv[1]).read().split("\n")
i = lines.index("EXAMPLES") + 1
n, cmd, out = 0, None, []
def flush():
    global cmd, out, n
    if cmd is not None:
        n += 1
        open("%s/%03d.sh" % (sys.argv[2], n), "w").write(cmd + "\n")
        open("%s/%03d.out" % (sys.argv[2], n), "w").write(
            "".join(l + "\n" for l in out))
    cmd, out = None, []
def complete(c):
    if c.endswith("|") or c.endswith("\\"):
        return False
    try:
        shlex.split(c)
    except ValueError:
        return False
    return True
while i < len(lines) and not lines[i][:1].isalpha():
    l = lines[i]
    lit = len(l) - len(l.lstrip()) > 6
    s = l.strip()
    if lit and s.startswith("$ "):
        flush()
        cmd = s[2:]
        while not complete(cmd) and i + 1 < len(lines):
            i += 1
            cmd += "\n" + lines[i].strip()
    elif lit and cmd is not None:
        out.append(s)
    elif s == "" and cmd is not None and i + 1 < len(lines) and \
            len(lines[i + 1]) - len(lines[i + 1].lstrip()) > 6 and \
            not lines[i + 1].strip().startswith("$ "):
        out.append("")        # a blank line inside the output
    else:
        flush()
    i += 1
flush()
PY
}

for name in saop-detect.1 saop-prune.1 saop-validate.1 saop-resume.1 saop-suspend.1 \
    saop-report.1 saop-mock.1 saop.7; do
	page="$top_srcdir/man/$name"
	d="$tmp/$name"
	mkdir -p "$d/run"
	ln -s "$top_srcdir/examples" "$d/run/examples"
	groff -mdoc -Tutf8 -P-cbou "$page" 2>/dev/null >"$d/page.txt"
	split_examples "$d/page.txt" "$d"
	ls "$d"/*.sh >/dev/null 2>&1 || fail "$name: no examples found"
	# One script: each example, then a marker, keeping its status.
	: >"$d/all.sh"
	shown=0
	for sh in "$d"/[0-9]*.sh; do
		sh -n "$sh" 2>"$tmp/syntax" ||
		    fail "$name: example is not shell: $(cat "$sh") $(cat "$tmp/syntax")"
		[ ! -s "${sh%.sh}.out" ] || shown=$((shown + 1))
		{
			cat "$sh"
			echo '__s=$?; echo "@@@ '"$(basename "$sh" .sh)"'"; (exit $__s)'
		} >>"$d/all.sh"
	done
	[ "$shown" -ge 1 ] || fail "$name: no example shows its output"
	(cd "$d/run" && SAOP_DB="$d/run/state.sqlite" sh "$d/all.sh") \
	    >"$d/got" 2>&1 || true
	# Cut the output at the markers; an output without a final newline
	# is shown with one.
	"${PYTHON3:-python3}" - "$d" <<'PY'
import re, sys
d = sys.argv[1]
got = open(d + "/got").read()
for m in re.finditer(r"(?s)(.*?)@@@ (\d+)\n", got):
    text = m.group(1)
    if text and not text.endswith("\n"):
        text += "\n"
    open("%s/%s.got" % (d, m.group(2)), "w").write(
        "".join(l.strip() + "\n" for l in text.split("\n")[:-1]))
PY
	for sh in "$d"/[0-9]*.sh; do
		[ -s "${sh%.sh}.out" ] || continue
		[ -f "${sh%.sh}.got" ] || fail "$name: example did not finish: $(cat "$sh")"
		diff -b -u "${sh%.sh}.out" "${sh%.sh}.got" >"$tmp/diff" ||
		    fail "$name: example
$(cat "$sh")
$(cat "$tmp/diff")"
	done
	echo "$name: $shown examples ran as shown" >&2
done
exit 0
