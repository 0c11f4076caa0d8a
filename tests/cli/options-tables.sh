#!/bin/sh
# One option table per program: what --help lists (made from the table)
# is what getopt accepts, what the usage line shows, what the man page's
# SYNOPSIS lists, and what the page describes; an option of another
# program is refused (64).  New entries of a table are checked as they
# come: the test reads the tables through --help.
. "$top_srcdir/tests/cli/lib.sh"
py=${PYTHON3:-python3}
command -v "$py" >/dev/null 2>&1 || skip "no python3"
progs="saop-detect saop-prune saop-suspend saop-resume saop-validate saop-report saop-mock"
for p in $progs; do
	"$p" --help >"$tmp/$p.help" || fail "$p --help exited $?"
done
cat >"$tmp/check.py" <<'PY'
import os, re, subprocess, sys
tmp, man, progs = sys.argv[1], sys.argv[2], sys.argv[3:]
bad = []
def opts(help_text):
    """(letter or None, long, arg or None) of each option line of --help."""
    out = []
    for line in help_text.split('\n'):
        m = re.match(r"^  (?:-(\w), )?(?:    )?--([a-z][a-z0-9-]*)(?: ('[^']*'|\S+))?(?:  |$)", line)
        if m:
            out.append((m.group(1), m.group(2), m.group(3)))
    return out
def sample(arg):
    """A value the option takes, made from the argument's name."""
    if arg is None: return []
    if '|' in arg: return [arg.split('|')[0]]
    if '=' in arg: return ['a=b']
    if ':' in arg: return ['X-Test: 1']
    return ['1']
def run(args):
    r = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr
tables = {p: opts(open(os.path.join(tmp, p + '.help')).read()) for p in progs}
every = {o[1]: o for t in tables.values() for o in t}
for p in progs:
    text = open(os.path.join(tmp, p + '.help')).read()
    table = tables[p]
    if len(table) < 5:
        bad.append('%s: only %d options in --help' % (p, len(table)))
    names = {o[1] for o in table}
    usage = text.split('\n\n')[0]
    cluster = re.search(r'\[-([A-Za-z]+)\]', usage)
    cluster = cluster.group(1) if cluster else ''
    page = open(os.path.join(man, p + '.1')).read()
    syn = page[page.index('.Sh SYNOPSIS'):page.index('.Sh DESCRIPTION')]
    syn_long = set(re.findall(r'Fl Fl ([a-z][a-z0-9-]*)', syn))
    syn_letters = set(''.join(re.findall(r'(?<!Fl )Fl (?!Fl\s)([A-Za-z]+)(?=\s|$)', syn, re.M)))
    for letter, name, arg in table:
        # getopt takes it (then --help ends the run with 0).
        for form in (['--' + name], ['-' + letter] if letter else None):
            if form is None: continue
            rc, out, err = run([p] + form + sample(arg) + ['--help'])
            if rc != 0 or not (out.startswith('usage: ' + p) or
                    (name == 'version' and out.startswith(p + ' (saop) '))):
                bad.append('%s: %s of --help is not accepted (%d: %s)' % (p, form[0], rc, err.strip()[:200]))
        # The usage line shows it.
        if letter and arg is None:
            if letter not in cluster:
                bad.append('%s: -%s is not in the usage line' % (p, letter))
        elif letter:
            if '[-%s %s]' % (letter, arg) not in usage:
                bad.append('%s: -%s %s is not in the usage line' % (p, letter, arg))
        elif '[--' + name not in usage:
            bad.append('%s: --%s is not in the usage line' % (p, name))
        # The page's SYNOPSIS lists it, and the page says what it does.
        if letter:
            if letter not in syn_letters:
                bad.append('%s: -%s is not in the SYNOPSIS of %s.1' % (p, letter, p))
        elif name not in syn_long:
            bad.append('%s: --%s is not in the SYNOPSIS of %s.1' % (p, name, p))
        if not re.search(r'Fl Fl %s\b' % re.escape(name), page):
            bad.append('%s: --%s is not in %s.1' % (p, name, p))
    # Nothing in the SYNOPSIS that the program does not take.
    for name in syn_long - names:
        bad.append('%s: --%s is in the SYNOPSIS but not an option' % (p, name))
    for letter in syn_letters - {o[0] for o in table if o[0]}:
        bad.append('%s: -%s is in the SYNOPSIS but not an option' % (p, letter))
    # An option of another program is refused, as a usage error.
    for name, (letter, _, arg) in sorted(every.items()):
        if name in names: continue
        rc, out, err = run([p, '--' + name] + sample(arg))
        if rc != 64 or 'not an option' not in err:
            bad.append('%s: --%s (not in its --help) gives %d: %s' % (p, name, rc, err.strip()[:200]))
for b in bad: print(b)
sys.exit(1 if bad else 0)
PY
"$py" "$tmp/check.py" "$tmp" "$top_srcdir/man" $progs >"$tmp/bad" ||
    fail "options, help, usage and pages differ:
$(cat "$tmp/bad")"
exit 0
