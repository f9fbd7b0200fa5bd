#!/usr/bin/env bash
# make dist: strato's release artifacts in $DIST_DIR (default dist/):
#   strato-VERSION-OS-ARCH.tar.gz  for each of $DIST_PLATFORMS: one folder
#                                  strato-VERSION-OS-ARCH/ holding the static
#                                  binary strato, README.md, LICENSE (if
#                                  any), docs/ and deploy/ (as committed);
#   strato-hadoop-VERSION.jar      the Hadoop connector (make dist builds
#                                  it into hadoop/target first);
#   SHA256SUMS                     sha256sum's lines for the files above.
# The same sources give the same bytes: binaries built with -trimpath and
# without VCS stamping (the Makefile's -X flags carry version, commit and
# date); every tar entry sorted by name, owned by 0:0, with mode 0755 or
# 0644 and the commit's date (SOURCE_DATE_EPOCH); gzip without name or
# time. make dist-check builds twice and compares.
# Environment (the Makefile sets it): VERSION, LDFLAGS, SOURCE_DATE_EPOCH,
# DIST_DIR, DIST_PLATFORMS, GO.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${VERSION:?}" "${LDFLAGS:?}" "${SOURCE_DATE_EPOCH:?}"
out=${DIST_DIR:-dist}
platforms=${DIST_PLATFORMS:-linux/amd64 linux/arm64}
go=${GO:-go}
export LC_ALL=C TZ=UTC

rm -rf "$out"
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# What every archive holds beside the binary: the committed files (so that
# stray files of a work tree never ship), but the deploy/ Go modules that
# only check deploy/.
mapfile -d '' files < <(git ls-files -z -- README.md 'LICENSE*' docs deploy \
	':!:deploy/validate' ':!:deploy/prometheus/check')

for p in $platforms; do
	os=${p%/*} arch=${p#*/}
	name=strato-$VERSION-$os-$arch
	dir=$stage/$name
	mkdir -p "$dir"
	echo "dist: $name"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$go" build -trimpath -buildvcs=false -ldflags "$LDFLAGS" -o "$dir/strato" ./cmd/strato
	cp --parents -t "$dir" -- "${files[@]}"
	chmod -R u=rwX,go=rX "$dir"
	tar --sort=name --format=gnu --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
		-C "$stage" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
done

jar=$(ls hadoop/target/strato-hadoop-*.jar 2>/dev/null | grep -v '/original-' | head -1 || true)
if [ -n "$jar" ]; then
	cp "$jar" "$out/strato-hadoop-$VERSION.jar"
else
	echo "dist: no connector jar in hadoop/target (make hadoop)" >&2
	exit 1
fi

(cd "$out" && sha256sum -- *.tar.gz *.jar >SHA256SUMS)
echo "dist: $(ls "$out" | wc -l) files in $out:"
cat "$out/SHA256SUMS"
