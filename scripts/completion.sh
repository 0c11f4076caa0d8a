#!/bin/sh
# completion.sh bash|zsh PROGRAM...: write the bash or zsh completion of
# saop's programs on stdout, made from their option tables (read through
# each PROGRAM's --help, which the table makes).  Run by make.
set -eu
shell=$1
shift

# opts PROGRAM: "long<TAB>letter<TAB>arg<TAB>help" for each option of its
# --help (letter and arg may be empty).
opts() {
	"$1" --help | awk '
	/^  -[A-Za-z], --|^      --/ {
		line = $0
		sub(/^ +/, "", line)
		if (match(line, /   */) && substr(line, RSTART + 1, 1) == " ") {
			left = substr(line, 1, RSTART - 1)
			help = substr(line, RSTART + RLENGTH)
		} else {
			left = line
			help = ""
			# A long left part: the help is on the next line.
			if ((getline nxt) > 0) {
				sub(/^ +/, "", nxt)
				help = nxt
			}
		}
		letter = ""
		if (left ~ /^-[A-Za-z], /) {
			letter = substr(left, 2, 1)
			left = substr(left, 5)
		}
		name = left
		arg = ""
		if ((sp = index(left, " ")) > 0) {
			name = substr(left, 1, sp - 1)
			arg = substr(left, sp + 1)
		}
		sub(/^--/, "", name)
		print name "\t" letter "\t" arg "\t" help
	}'
}

case $shell in
bash)
	cat <<'HEAD'
# bash completion of saop's programs, made from their option tables by
# scripts/completion.sh: do not edit.
_saop() {
	local cur prev prog opts takes words
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}
	prog=${COMP_WORDS[0]##*/}
	case $prog in
HEAD
	for p in "$@"; do
		name=${p##*/}
		long=$(opts "$p" | awk -F '\t' '{ printf "--%s ", $1; if ($2 != "") printf "-%s ", $2 }')
		takes=$(opts "$p" | awk -F '\t' '$3 != "" { printf "--%s ", $1; if ($2 != "") printf "-%s ", $2 }')
		printf '\t%s)\n\t\topts="%s"\n\t\ttakes=" %s"\n\t\t;;\n' \
		    "$name" "${long% }" "$takes"
	done
	cat <<'TAIL'
	*)
		return 0
		;;
	esac
	case $prev in
	--continuation)
		COMPREPLY=($(compgen -W "prefill user auto" -- "$cur"))
		return 0
		;;
	--context)
		COMPREPLY=($(compgen -W "full tail" -- "$cur"))
		return 0
		;;
	--schema-mode)
		COMPREPLY=($(compgen -W "native prompt off" -- "$cur"))
		return 0
		;;
	esac
	case $takes in
	*" $prev "*)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0
		;;
	esac
	case $cur in
	-*)
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		;;
	*)
		COMPREPLY=($(compgen -f -- "$cur"))
		;;
	esac
	return 0
}
TAIL
	printf 'complete -o filenames -F _saop'
	for p in "$@"; do
		printf ' %s' "${p##*/}"
	done
	printf '\n'
	;;
zsh)
	printf '#compdef'
	for p in "$@"; do
		printf ' %s' "${p##*/}"
	done
	printf '\n# zsh completion of saop'"'"'s programs, made from their option tables\n'
	printf '# by scripts/completion.sh: do not edit.\n'
	printf 'local -a args\ncase $service in\n'
	for p in "$@"; do
		printf '%s)\n\targs=(\n' "${p##*/}"
		# Brackets and colons would end a zsh spec's parts: left out.
		opts "$p" | tr -d '[]:' | awk -F '\t' '{
			help = $4; gsub(/'"'"'/, "", help)
			val = ""
			if ($3 != "") {
				v = $3; gsub(/'"'"'/, "", v)
				if ($1 == "continuation") val = ":" v ":(prefill user auto)"
				else if ($1 == "context") val = ":" v ":(full tail)"
				else if ($1 == "schema-mode") val = ":" v ":(native prompt off)"
				else if (v ~ /FILE|PATH/) val = ":" v ":_files"
				else val = ":" v ":"
			}
			if ($2 != "")
				printf "\t\t'"'"'(-%s --%s)'"'"'{-%s,--%s}'"'"'[%s]%s'"'"'\n", $2, $1, $2, $1, help, val
			else
				printf "\t\t'"'"'--%s[%s]%s'"'"'\n", $1, help, val
		}'
		printf "\t\t'*:file:_files'\n\t)\n\t;;\n"
	done
	printf 'esac\n_arguments -s $args\n'
	;;
*)
	echo "usage: completion.sh bash|zsh PROGRAM..." >&2
	exit 64
	;;
esac
