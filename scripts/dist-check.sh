#!/usr/bin/env bash
# make dist-check: make dist twice, into two folders, and compare their
# SHA256SUMS: the same sources must give the same bytes (scripts/dist.sh).
# The second build runs after `mvn clean` (make dist cleans hadoop/target)
# and relinks every binary; with DIST_CHECK_FRESH=1 it also compiles from
# an empty Go build cache (slower: every package of four platforms).
# Both builds get the version, commit and date of the tree when the check
# starts (a commit made meanwhile changes neither). Leaves the two folders
# in dist-check/ when they differ.
set -euo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
work=dist-check
rm -rf "$work"
mkdir -p "$work"
stamp=(VERSION="$(git describe --tags --always --dirty)" COMMIT="$(git rev-parse HEAD)"
	SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}")
"$make" --no-print-directory dist DIST_DIR="$work/a" "${stamp[@]}"
if [ "${DIST_CHECK_FRESH:-0}" = 1 ]; then
	cache=$(mktemp -d)
	GOCACHE=$cache "$make" --no-print-directory dist DIST_DIR="$work/b" "${stamp[@]}"
	rm -rf "$cache"
else
	"$make" --no-print-directory dist DIST_DIR="$work/b" "${stamp[@]}"
fi
if diff -u "$work/a/SHA256SUMS" "$work/b/SHA256SUMS"; then
	echo "dist-check: the two builds are identical ($(wc -l <"$work/a/SHA256SUMS") artifacts)"
	rm -rf "$work"
else
	echo "dist-check: the two builds differ (kept in $work/)" >&2
	exit 1
fi
