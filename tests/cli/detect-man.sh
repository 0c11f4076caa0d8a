#!/bin/sh
# The pages of saop-detect: groff and mandoc -Tlint say nothing, and the
# EXAMPLES of saop-detect(1) run and print what the page shows.
. "$top_srcdir/tests/cli/lib.sh"

for page in "$top_srcdir/man/saop-detect.1" "$top_srcdir/man/saop.7"; do
	groff -mdoc -ww -z "$page" 2>"$tmp/groff" || fail "groff failed on $page"
	[ ! -s "$tmp/groff" ] || fail "groff on $page: $(cat "$tmp/groff")"
	if command -v mandoc >/dev/null 2>&1; then
		# .Os saop is our style; the other pages need not be installed.
		mandoc -Tlint "$page" 2>&1 | grep -v -e 'Os saop' \
		    -e 'referenced manual not found' -e 'mandoc.db' \
		    >"$tmp/lint" || true
		[ ! -s "$tmp/lint" ] || fail "mandoc -Tlint: $(cat "$tmp/lint")"
	fi
done

groff -mdoc -Tascii -P-cbou "$top_srcdir/man/saop-detect.1" 2>/dev/null \
    >"$tmp/page.txt"
# Split EXAMPLES into examples: "$ command" (a line ending in | goes on),
# then the lines it prints, up to the next command or the block's end.
"${PYTHON3:-python3}" - "$tmp/page.txt" "$tmp" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
i = lines.index("EXAMPLES") + 1
n = 0
cmd = None
out = []
def flush():
    global cmd, out, n
    if cmd is not None:
        n += 1
        open("%s/ex%d.sh" % (sys.argv[2], n), "w").write(cmd + "\n")
        open("%s/ex%d.out" % (sys.argv[2], n), "w").write(
            "".join(l + "\n" for l in out))
    cmd, out = None, []
while i < len(lines) and not (lines[i][:1].isalpha()):
    l = lines[i]
    lit = len(l) - len(l.lstrip()) > 6
    s = l.strip()
    if lit and s.startswith("$ "):
        flush()
        cmd = s[2:]
        while cmd.endswith("|"):
            i += 1
            cmd += " " + lines[i].strip()
    elif lit and cmd is not None:
        out.append(s)
    else:
        flush()
    i += 1
flush()

PY
n=$(ls "$tmp"/ex*.sh | wc -l)
[ "$n" -ge 5 ] || fail "only $n examples found in saop-detect(1)"
for sh in "$tmp"/ex*.sh; do
	(cd "$tmp" && sh "$sh") >"${sh%.sh}.got" 2>&1 || true
	# An output without a final newline is shown with one.
	[ -z "$(tail -c 1 "${sh%.sh}.got")" ] || echo >>"${sh%.sh}.got"
	diff -u "${sh%.sh}.out" "${sh%.sh}.got" ||
	    fail "example $(cat "$sh")"
done
