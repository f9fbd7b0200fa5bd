#!/usr/bin/env bash
# Erasure coding beside replication in one run: `strato bench ockg` and
# `strato bench teragen` on in-process clusters of 5 datanodes, THREE and
# rs-3-2-1024k in alternating rounds (the order flips every round). ockg
# writes KEYS keys of SIZE with THREADS writers, reads them all back (every
# byte checked), stops a datanode and reads them all again (degraded), and
# the bytes its datanodes hold on disk are measured; teragen writes ROWS rows
# with 2 writers (erasure coded files skip the hsync they do not have) and
# reads them back. Prints a table of medians and the ratios the erasure
# coding targets are set on (docs/ec.md).
#
# Run it alone on the machine: flock /tmp/strato-bench.lock scripts/bench-ec.sh
# Env: ROUNDS (3) KEYS (32) SIZE (64MiB) THREADS (4) ROWS (20m) CONFIGS ("THREE rs-3-2-1024k")
#      OUT (results, default /tmp/strato-bench-ec)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; KEYS="${KEYS:-32}"; SIZE="${SIZE:-64MiB}"; THREADS="${THREADS:-4}"; ROWS="${ROWS:-20m}"
read -r -a configs <<< "${CONFIGS:-THREE rs-3-2-1024k}"
OUT="${OUT:-/tmp/strato-bench-ec}"
mkdir -p "$OUT"
RES="$OUT/results.tsv"
: > "$RES"
echo "$(date +%T) building bin/strato" >&2
make -s build

run() { # run CONFIG ROUND
  local c="$1" r="$2" dir="$OUT/cluster" log="$OUT/$1-round$2.log"
  rm -rf "$dir"
  echo "$(date +%T) round $r: $c (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  bin/strato bench ockg --datanodes 5 --replication "$c" --keys "$KEYS" --size "$SIZE" --threads "$THREADS" \
    --bucket /vol1/ockg --dir "$dir" --read-back --degraded-read > "$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
  local w rb dg bytes disk
  w=$(sed -n 's/^Throughput *: \([0-9.]*\) MB\/s/\1/p' "$log")
  rb=$(sed -n 's/^Read back *:.* \([0-9.]*\) MB\/s, all identical.*/\1/p' "$log")
  dg=$(sed -n 's/^Degraded read *:.* \([0-9.]*\) MB\/s, all identical.*/\1/p' "$log")
  bytes=$(sed -n 's/^Total bytes *: \([0-9]*\)/\1/p' "$log")
  # The datanodes' container directories: block files and their rows.
  disk=$(du -sb "$dir"/dn*/ 2>/dev/null | awk '{s += $1} END {print s}')
  rm -rf "$dir"
  log="$OUT/$1-teragen-round$2.log"
  bin/strato bench teragen "$ROWS" /vol1/bench/tg --writers 2 --no-checksum --datanodes 5 --replication "$c" \
    --read-back 4MiB --read-back-checksum=false > "$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
  local tg tgr
  tg=$(sed -n 's/^MB\/s: \([0-9.]*\)/\1/p' "$log" | head -1)
  tgr=$(sed -n 's/^read back: .* \([0-9.]*\) MB\/s.*/\1/p' "$log" | head -1)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$r" "$w" "$rb" "$dg" "$bytes" "$disk" "$tg" "$tgr" >> "$RES"
  echo "    teragen write ${tg} MB/s, read back ${tgr} MB/s" >&2
  printf '    write %s MB/s, read %s MB/s, degraded read %s MB/s, %.2f bytes on disk per byte\n' \
    "$w" "$rb" "$dg" "$(awk -v d="$disk" -v b="$bytes" 'BEGIN {print d / b}')" >&2
  rm -rf "$dir"
}

for r in $(seq 1 "$ROUNDS"); do
  if (( r % 2 )); then order=("${configs[@]}"); else order=(); for ((i=${#configs[@]}-1; i>=0; i--)); do order+=("${configs[i]}"); done; fi
  for c in "${order[@]}"; do run "$c" "$r"; done
done

python3 - "$RES" "$ROUNDS" "$KEYS" "$SIZE" "$THREADS" <<'PY'
import csv, statistics, sys
res, rounds, keys, size, threads = sys.argv[1:6]
rows = list(csv.reader(open(res), delimiter="\t"))
labels = []
for r in rows:
    if r[0] not in labels:
        labels.append(r[0])
m = {}
for l in labels:
    rs = [r for r in rows if r[0] == l]
    med = lambda i: statistics.median(float(r[i]) for r in rs)
    m[l] = dict(w=med(2), rb=med(3), dg=med(4), space=statistics.median(float(r[6]) / float(r[5]) for r in rs),
                tg=med(7), tgr=med(8),
                runs=", ".join(f"{float(r[2]):.0f}/{float(r[3]):.0f}/{float(r[4]):.0f}" for r in rs))
print(f"\n== bench ockg, 5 datanodes, {keys} keys of {size}, {threads} threads; medians of {rounds} rounds (MB/s = 1e6 bytes/s)\n")
print("| keys | ockg write MB/s | read MB/s | degraded read MB/s | bytes on disk per byte | teragen write MB/s | teragen read MB/s | ockg rounds (write/read/degraded) |")
print("|---|---:|---:|---:|---:|---:|---:|---|")
for l in labels:
    x = m[l]
    print(f"| {l} | {x['w']:.1f} | {x['rb']:.1f} | {x['dg']:.1f} | {x['space']:.2f} | {x['tg']:.1f} | {x['tgr']:.1f} | {x['runs']} |")
ec = [l for l in labels if l not in ("THREE", "ONE")]
if "THREE" in m:
    print()
    for l in ec:
        print(f"- {l} write / THREE write = {m[l]['w'] / m['THREE']['w']:.2f} (target >= 1)")
        print(f"- {l} teragen write / THREE's = {m[l]['tg'] / m['THREE']['tg']:.2f} (target >= 1)")
        print(f"- {l} read / THREE read = {m[l]['rb'] / m['THREE']['rb']:.2f} (target >= 1)")
        print(f"- {l} degraded read / its healthy read = {m[l]['dg'] / m[l]['rb']:.2f} (target >= 0.5)")
PY
echo "(raw: $OUT)" >&2
