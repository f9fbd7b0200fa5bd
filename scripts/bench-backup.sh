#!/usr/bin/env bash
# What an online backup of meta costs (docs/operations.md "Backup and
# restore"): one `strato meta` (a single voter, --auth none) is filled with
# FILES keys by `strato bench meta -op create -close`; then
#   1. `strato admin meta backup` alone: its time and size;
#   2. a create load of LOAD files alone (ops/s);
#   3. the same load (a fresh bucket) with one backup started 5s into it:
#      the load's ops/s, and the creates it lost to the backup (its time
#      x the rate alone - LOAD), also as seconds of the load alone;
#   4. the same load with backups taken back to back throughout (the
#      worst case: ops/s, backups done).
# Prints one summary line per measurement.
#
# Run it alone on the machine: flock /tmp/strato-bench.lock scripts/bench-backup.sh
# Env: FILES (300000: about a minute of creates here) LOAD (100000) THREADS (16) OUT (/tmp/strato-bench-backup)
#      FILL=standalone fills meta in process first (strato bench meta --dir), then serves it: for 10M keys
set -euo pipefail
cd "$(dirname "$0")/.."
FILES="${FILES:-300000}"; LOAD="${LOAD:-100000}"; THREADS="${THREADS:-16}"; FILL="${FILL:-}"
OUT="${OUT:-/tmp/strato-bench-backup}"
rm -rf "$OUT"
mkdir -p "$OUT"
echo "$(date +%T) building bin/strato" >&2
make -s build
S=bin/strato
metapid=
cleanup() { [ -n "$metapid" ] && kill "$metapid" 2>/dev/null && wait "$metapid" 2>/dev/null; true; }
trap cleanup EXIT
addr=127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if [ "$FILL" = standalone ]; then
  # Filled in process (no RPC: several times faster), then served.
  echo "$(date +%T) filling meta with $FILES keys (standalone)" >&2
  t0=$(date +%s)
  $S bench meta -op create -close -threads "$THREADS" -files "$FILES" -filesPerDir 1000 -keepResults \
    --dir "$OUT/meta" --keep --bucket fill > "$OUT/bench-fill.log" 2>&1 || { tail -20 "$OUT/bench-fill.log" >&2; exit 1; }
  echo "fill (standalone): $FILES keys at $(grep -i "ops per sec" "$OUT/bench-fill.log" | head -1 | awk '{print $NF}') creates/s in $(( $(date +%s) - t0 ))s"
fi
$S meta --auth none --data "$OUT/meta" --listen "$addr" > "$OUT/meta.log" 2>&1 &
metapid=$!
for _ in $(seq 300); do $S admin meta status --meta "$addr" 2>/dev/null | grep -q leader && break; sleep 0.1; done

# bench BUCKET FILES: prints the create ops/s.
bench() {
  $S bench meta -op create -close -threads "$THREADS" -files "$2" -filesPerDir 1000 -keepResults \
    --meta "$addr" --bucket "$1" > "$OUT/bench-$1.log" 2>&1 || { tail -20 "$OUT/bench-$1.log" >&2; exit 1; }
  grep -i "ops per sec" "$OUT/bench-$1.log" | head -1 | awk '{print $NF}'
}
# backup N: one backup into $OUT/backup-N; prints its seconds.
backup() {
  local t0 t1
  t0=$(date +%s.%N)
  $S admin meta backup "$OUT/backup-$1" --meta "$addr" --quiet > "$OUT/backup-$1.log" 2>&1 ||
    { cat "$OUT/backup-$1.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1-$t0:.2f}')"
}

if [ "$FILL" != standalone ]; then
  echo "$(date +%T) filling meta with $FILES keys" >&2
  t0=$(date +%s)
  fill=$(bench fill "$FILES")
  echo "fill: $FILES keys at $fill creates/s in $(( $(date +%s) - t0 ))s"
fi

echo "$(date +%T) backup alone" >&2
secs=$(backup alone)
pairs=$(python3 -c "import json; m=json.load(open('$OUT/backup-alone/manifest.json')); print(m['pairs'], m['bytes'], m['applied_index'])")
echo "backup alone: ${secs}s; pairs bytes index: $pairs; state.kv $(du -sh "$OUT/backup-alone/state.kv" | cut -f1)"
rm -rf "$OUT/backup-alone"

echo "$(date +%T) create load alone" >&2
alone=$(bench load1 "$LOAD")
echo "create load alone: $alone creates/s"

echo "$(date +%T) create load with one backup" >&2
(sleep 5; backup one > "$OUT/one.txt") &
bpid=$!
one=$(bench load2 "$LOAD")
wait "$bpid"
b=$(cat "$OUT/one.txt")
ms=$(grep "Elapsed Time" "$OUT/bench-load2.log" | head -1 | awk '{print $NF}')
lost=$(python3 -c "T=$ms/1000; l=$alone*T-$LOAD; print(f'{l:.0f} creates ({l/$alone:.2f}s of the load alone)')")
echo "create load with one backup (${b}s): $one creates/s (alone: $alone); lost to the backup: $lost"
rm -rf "$OUT/backup-one"

echo "$(date +%T) create load with back-to-back backups" >&2
(
  n=0
  while [ ! -e "$OUT/stop" ]; do
    n=$((n + 1))
    s=$(backup "during-$n")
    rm -rf "$OUT/backup-during-$n"
    echo "$s" >> "$OUT/during.txt"
  done
) &
bpid=$!
with=$(bench load3 "$LOAD")
touch "$OUT/stop"
wait "$bpid"
echo "create load with backups: $with creates/s (alone: $alone); backups during it: $(wc -l < "$OUT/during.txt"), seconds each: $(tr '\n' ' ' < "$OUT/during.txt")"
