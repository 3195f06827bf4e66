#!/usr/bin/env bash
# Prints the tables of docs/maintenance.md, measured on the working tree:
# the exported surface per public package, the lines of Go, and the
# non-standard packages each example program links. Each table's heading
# names the command that makes it.
#
#   bash scripts/maintenance-tables.sh
set -euo pipefail
cd "$(dirname "$0")/.."

echo '### Exported surface: `go run ./internal/surface`'
echo
go run ./internal/surface
echo

lines() { xargs -r cat | wc -l; }
echo '### Lines of Go'
echo
echo '| files | lines |'
echo '|---|---:|'
echo "| Go, non-test | $(git ls-files '*.go' | grep -v '_test\.go$' | lines) |"
echo "| Go, test | $(git ls-files '*_test.go' | lines) |"
echo "| assembly | $(git ls-files '*.s' | lines) |"
echo
echo '    git ls-files '"'"'*.go'"'"' | grep -v '"'"'_test\.go$'"'"' | xargs cat | wc -l'
echo '    git ls-files '"'"'*_test.go'"'"' | xargs cat | wc -l'
echo '    git ls-files '"'"'*.s'"'"' | xargs cat | wc -l'
echo

echo "### Packages each example links: \`go list -deps ./examples/X | grep -c '\\.'\`"
echo
echo '| program | non-standard packages (this module'"'"'s included) |'
echo '|---|---:|'
for p in $(go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./examples/...); do
	rel=${p#github.com/crosscluster/crosscluster/}
	echo "| \`$rel\` | $(go list -deps "./$rel" | grep -c '\.') |"
done
