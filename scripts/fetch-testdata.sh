#!/usr/bin/env bash
# Downloads the public test data (HTCondor event logs, Stampede accounting
# months, the rainbow experiments' data) from the original sources listed in
# scripts/testdata.tsv (pinned commits), verifies every file's SHA-256 and
# size, and lays it out as the tests expect:
#
#   $CROSSCLUSTER_TESTDATA (if set), else ../shared/testdata beside the checkout
#     fresco/    htcondor/    rainbow/
#
# Usage: scripts/fetch-testdata.sh [--check] [DIR]
#   --check  verify an existing copy only (no network); exit 1 on any mismatch
#   DIR      destination (overrides the default above)
#
# Files already present with the right checksum are not downloaded again. A
# download that does not match its checksum is discarded, never installed.
# The first download that fails (no network, a source gone) stops the script
# at once with the URL: no retries, so an offline machine learns it in
# seconds, not after minutes of timeouts.
set -euo pipefail
cd "$(dirname "$0")/.."
manifest=scripts/testdata.tsv

check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
dest=${1:-${CROSSCLUSTER_TESTDATA:-../shared/testdata}}

sha() { sha256sum "$1" | cut -d' ' -f1; }
ok=0 fetched=0 bad=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

while IFS=$'\t' read -r path sum size urls; do
	case "$path" in ''|'#'*) continue ;; esac
	target=$dest/$path
	if [ -f "$target" ] && [ "$(sha "$target")" = "$sum" ]; then
		ok=$((ok + 1))
		continue
	fi
	if [ $check -eq 1 ]; then
		if [ -f "$target" ]; then echo "MISMATCH $target (sha256 $(sha "$target"), want $sum)"; else echo "MISSING  $target"; fi
		bad=$((bad + 1))
		continue
	fi
	part=$tmp/part
	: > "$part"
	# Several sources joined by " + " are concatenated in order, an empty
	# line between them (as the licence files that join two upstream files).
	rest=$urls
	first=1
	while [ -n "$rest" ]; do
		url=${rest%% + *}
		if [ "$url" = "$rest" ]; then rest=; else rest=${rest#* + }; fi
		[ $first -eq 1 ] || printf '\n' >> "$part"
		first=0
		if ! curl -fsSL --connect-timeout 10 --max-time 300 "$url" >> "$part"; then
			echo "fetch-testdata: cannot download $url (for $path); stopping ($ok present, $fetched downloaded so far)" >&2
			exit 1
		fi
	done
	got=$(sha "$part")
	if [ "$got" != "$sum" ] || [ "$(stat -c %s "$part")" != "$size" ]; then
		echo "fetch-testdata: $path: sha256 $got, want $sum (from $urls); not installed" >&2
		bad=$((bad + 1))
		continue
	fi
	mkdir -p "$(dirname "$target")"
	mv "$part" "$target"
	fetched=$((fetched + 1))
	echo "fetched $path"
done < "$manifest"

echo "fetch-testdata: $dest: $ok already present, $fetched downloaded, $bad failed"
[ $bad -eq 0 ]
