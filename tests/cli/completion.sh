#!/bin/sh
# The bash and zsh completion made from the option tables: for each
# program, completing "--" offers every long option its --help lists (and
# a prefix narrows them), and an option's value completes its words.
. "$top_srcdir/tests/cli/lib.sh"
comp="$top_builddir/completion"
[ -f "$comp/saop.bash" ] && [ -f "$comp/_saop" ] || fail "no completion files in $comp"
command -v bash >/dev/null 2>&1 || skip "no bash"
for p in saop-detect saop-prune saop-suspend saop-resume saop-validate saop-report saop-mock; do
	"$p" --help | sed -n 's/^  \(-., \)\{0,1\} *\(--[a-z][a-z0-9-]*\).*/\2/p' |
	    sort >"$tmp/want"
	[ "$(wc -l <"$tmp/want")" -ge 5 ] || fail "$p: options not read from --help"
	bash -c '. "$1"; COMP_WORDS=("$2" --); COMP_CWORD=1; _saop
	    printf "%s\n" "${COMPREPLY[@]}"' sh "$comp/saop.bash" "$p" |
	    sort >"$tmp/got"
	diff -u "$tmp/want" "$tmp/got" >"$tmp/diff" ||
	    fail "bash: $p --<TAB>: $(cat "$tmp/diff")"
	# zsh: the same options in the program's _arguments specs.
	sed -n "/^$p)/,/^	;;/p" "$comp/_saop" |
	    grep -o -e "'--[a-z][a-z0-9-]*\[" -e ',--[a-z][a-z0-9-]*}' |
	    tr -d "'[,}" | sort >"$tmp/zgot"
	diff -u "$tmp/want" "$tmp/zgot" >"$tmp/diff" ||
	    fail "zsh: $p: $(cat "$tmp/diff")"
done
got=$(bash -c '. "$1"; COMP_WORDS=(saop-detect --max-d); COMP_CWORD=1; _saop
    printf "%s\n" "${COMPREPLY[@]}"' sh "$comp/saop.bash")
[ "$got" = --max-depth ] || fail "bash: --max-d<TAB> gave '$got'"
got=$(bash -c '. "$1"; COMP_WORDS=(saop-resume --context ""); COMP_CWORD=2; _saop
    printf "%s " "${COMPREPLY[@]}"' sh "$comp/saop.bash")
[ "$got" = "full tail " ] || fail "bash: --context <TAB> gave '$got'"
got=$(bash -c '. "$1"; COMP_WORDS=(saop-suspend --schema-mode ""); COMP_CWORD=2; _saop
    printf "%s " "${COMPREPLY[@]}"' sh "$comp/saop.bash")
[ "$got" = "native prompt off " ] || fail "bash: --schema-mode <TAB> gave '$got'"
sed -n '/^saop-suspend)/,/^	;;/p' "$comp/_saop" |
    grep -q "'--schema-mode\[.*\]:MODE:(native prompt off)'" ||
    fail "zsh: --schema-mode's words: $(grep -e --schema-mode "$comp/_saop")"
# zsh: the file parses, and compinit binds every program to it.
if command -v zsh >/dev/null 2>&1; then
	zsh -n "$comp/_saop" || fail "zsh: _saop does not parse"
	zsh -f -c 'fpath=("$1" $fpath); autoload -U compinit
	    compinit -u -d "$2/zcompdump"
	    for p in saop-detect saop-prune saop-suspend saop-resume saop-validate saop-report saop-mock; do
		[[ $_comps[$p] == _saop ]] || { print -u2 "$p: $_comps[$p]"; exit 1; }
	    done' zsh "$comp" "$tmp" || fail "zsh: compinit does not bind the programs to _saop"
elif [ -n "${SAOP_REQUIRE_ALL:-}" ]; then
	fail "no zsh (scripts/deps installs it)"
fi
exit 0
