#!/bin/bash
# Checks that the assembly files of the working tree assemble to the same
# machine code as at a git revision: for every function the two versions
# share, the bytes and relocations that go tool asm -S lists must match
# (line numbers, labels, comments and layout may differ). Run it after a
# change to the generator that should not change the code:
#
#   internal/asmgen/samecode.sh [REV]     (default HEAD)
#
# Functions and files only one side has are listed, not compared. Exits 1
# if any shared function differs.
set -euo pipefail
rev=${1:-HEAD}
cd "$(git rev-parse --show-toplevel)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inc="$(go env GOROOT)/pkg/include"
mkdir "$tmp/old"
git archive "$rev" | tar -x -C "$tmp/old" --wildcards '*.s' '*.h' 2>/dev/null || true
listing() { # DIR FILE PKG: "function<TAB>line" for the bytes and relocations of each function
	(cd "$1" && go tool asm -I "$inc" -I . -p "$3" -D GOOS_linux -D GOARCH_amd64 -S -o "$tmp/o" "$2") |
		grep -vE '^	0x[0-9a-f]+ [0-9]+ \(' | awk '/^[^ \t]/ {name = $1} {print name "\t" $0}'
}
status=0
while read -r f; do
	dir=$(dirname "$f") base=$(basename "$f")
	pkg=$(basename "$dir")
	if [ ! -f "$tmp/old/$f" ]; then
		echo "$f: new since $rev"
		continue
	fi
	if [ ! -f "$f" ]; then
		echo "$f: removed since $rev"
		continue
	fi
	listing "$tmp/old/$dir" "$base" "$pkg" >"$tmp/a"
	listing "$dir" "$base" "$pkg" >"$tmp/b"
	for fn in $(cut -f1 "$tmp/a" "$tmp/b" | sort -u); do
		if ! grep -q "^$fn	" "$tmp/a"; then
			echo "$f: $fn is new"
		elif ! grep -q "^$fn	" "$tmp/b"; then
			echo "$f: $fn is gone"
		elif ! cmp -s <(grep "^$fn	" "$tmp/a") <(grep "^$fn	" "$tmp/b"); then
			echo "$f: $fn assembles differently"
			status=1
		fi
	done
done < <( (git ls-files '*.s'; cd "$tmp/old" && find . -name '*.s' | sed 's|^\./||') | sort -u)
exit $status
