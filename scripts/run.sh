#!/usr/bin/env bash
# make run: show strato doing its job on this machine. For now that is the
# chunk-write benchmark (Ozone's freon cmdw) on a temporary directory:
#   1. 4 MiB chunks, FILE_PER_BLOCK, 16 threads, fsync included, next to
#      dd with direct I/O (the disk's sequential write rate);
#   2. 1 KiB chunks, FILE_PER_BLOCK, 16 threads, next to RAW (a bare loop of
#      pwrite calls on the same threads and files).
# Arguments, if any (make run ARGS="..."), replace both runs and go to
# `strato bench chunk-write` as flags.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/strato
[ -x "$bin" ] || { echo "run.sh: $bin is missing; run 'make run' (it builds it first)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/strato-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [ $# -gt 0 ]; then
	exec_args=("$@")
	"$bin" bench chunk-write --dir "$tmp" "${exec_args[@]}"
	exit 0
fi

echo "== strato bench chunk-write: 4 MiB chunks, FILE_PER_BLOCK, 16 threads, sync, vs dd oflag=direct (data in $tmp)"
"$bin" bench chunk-write --dir "$tmp" -l FILE_PER_BLOCK -s 4M -n 256 -c 16 -t 16 --sync --dd --dd-count 256
echo
echo "== strato bench chunk-write: 1 KiB chunks, FILE_PER_BLOCK vs RAW pwrite, 16 threads"
"$bin" bench chunk-write --dir "$tmp" -l FILE_PER_BLOCK -s 1k -n 200000 -c 256 -t 16 --with-raw
echo
echo "More: bin/strato bench chunk-write --help; the full grid: bin/strato bench chunk-write --matrix --dd"
