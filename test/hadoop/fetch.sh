#!/usr/bin/env bash
# Copies the Hadoop jars of pom.xml (and their runtime dependencies) from
# Maven Central into a cache directory, once, and prints that directory.
# The directory is named after pom.xml's hash, so editing the pom fetches
# afresh; an interrupted fetch leaves nothing behind.
#   cache: $STRATO_CACHE/hadoop-lib-<hash>, default .cache/ of the work tree
#   (ignored by git; Maven's own downloads go to .cache/m2 there too)
# Used by test/teragen_test.go and `make hadoop-deps`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${STRATO_CACHE:-$root/.cache}"
hash="$(sha256sum "$here/pom.xml" | cut -c1-12)"
lib="$cache/hadoop-lib-$hash"
if [ ! -f "$lib/.complete" ]; then
  mkdir -p "$cache"
  tmp="$(mktemp -d "$cache/.hadoop-lib-$hash.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  start=$SECONDS
  chmod 755 "$tmp"
  # (sed: Maven 3.8 prints colour resets even in batch mode)
  mvn -B -q -Dmaven.repo.local="${HADOOP_M2:-$root/.cache/m2}" -f "$here/pom.xml" dependency:copy-dependencies \
      -DoutputDirectory="$tmp" -DincludeScope=runtime 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2
  touch "$tmp/.complete"
  # Another fetch may have finished first: keep its directory.
  mv -T "$tmp" "$lib" 2>/dev/null || true
  echo "hadoop jars: $(ls "$lib"/*.jar | wc -l) in $lib ($((SECONDS - start)) s)" >&2
fi
echo "$lib"
