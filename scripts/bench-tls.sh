#!/usr/bin/env bash
# What TLS costs on the data path, in one run: `strato bench teragen` (2
# writers x 1 GB, write+hsync+close per writer) and `strato bench ockg`
# (64 MiB keys, then a read-back) on in-process clusters with and without
# --tls, in alternating rounds (the order flips every round). Prints the
# medians and the TLS/plain ratios.
#
# Run it alone on the machine: flock /tmp/strato-bench.lock scripts/bench-tls.sh
# Env: ROUNDS (3) ROWS (20m) KEYS (32) SIZE (64MiB) THREADS (4) OUT (/tmp/strato-bench-tls)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; ROWS="${ROWS:-20m}"; KEYS="${KEYS:-32}"; SIZE="${SIZE:-64MiB}"; THREADS="${THREADS:-4}"
OUT="${OUT:-/tmp/strato-bench-tls}"
mkdir -p "$OUT"
RES="$OUT/results.tsv"
: > "$RES"
echo "$(date +%T) building bin/strato" >&2
make -s build

run() { # run MODE ROUND: MODE is plain or tls
  local mode="$1" r="$2" flag=() log
  [ "$mode" = tls ] && flag=(--tls)
  echo "$(date +%T) round $r: $mode (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  log="$OUT/teragen-$mode-$r.log"
  bin/strato bench teragen "$ROWS" /vol1/bench/tg --writers 2 --no-checksum "${flag[@]}" > "$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
  # the slower writer's write+hsync+close
  local tg
  tg=$(awk '/write.allTime/ {w[n]=$2} /hsync.allTime/ {h[n]=$2} /close.allTime/ {c[n]=$2; n++}
    END {m=0; for (i=0;i<n;i++) {t=w[i]+h[i]+c[i]; if (t>m) m=t}; print m}' "$log")
  log="$OUT/ockg-$mode-$r.log"
  bin/strato bench ockg --keys "$KEYS" --size "$SIZE" --threads "$THREADS" --read-back "${flag[@]}" > "$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
  local w rb
  w=$(sed -n 's/^Throughput *: \([0-9.]*\) MB\/s/\1/p' "$log")
  rb=$(sed -n 's/^Read back *:.* \([0-9.]*\) MB\/s, all identical.*/\1/p' "$log")
  printf '%s\t%s\t%s\t%s\t%s\n' "$mode" "$r" "$tg" "$w" "$rb" >> "$RES"
  echo "    teragen ${tg} ms per writer, ockg write ${w} MB/s, read ${rb} MB/s" >&2
}

for r in $(seq 1 "$ROUNDS"); do
  if (( r % 2 )); then run plain "$r"; run tls "$r"; else run tls "$r"; run plain "$r"; fi
done

python3 - "$RES" "$ROUNDS" "$ROWS" "$KEYS" "$SIZE" <<'PY'
import csv, statistics, sys
res, rounds, rows, keys, size = sys.argv[1:6]
data = list(csv.reader(open(res), delimiter="\t"))
m = {}
for mode in ("plain", "tls"):
    rs = [r for r in data if r[0] == mode]
    m[mode] = [statistics.median(float(r[i]) for r in rs) for i in (2, 3, 4)]
    m[mode + "-runs"] = "; ".join(f"{r[2]}/{float(r[3]):.0f}/{float(r[4]):.0f}" for r in rs)
print(f"\n== TLS on the data path; medians of {rounds} rounds\n")
print(f"| cluster | teragen {rows} rows, 2 writers: write+hsync+close ms (slower writer) | ockg {keys} x {size} write MB/s | read MB/s | rounds |")
print("|---|---:|---:|---:|---|")
for mode in ("plain", "tls"):
    t, w, r = m[mode]
    print(f"| {mode} | {t:.0f} | {w:.1f} | {r:.1f} | {m[mode + '-runs']} |")
t0, w0, r0 = m["plain"]
t1, w1, r1 = m["tls"]
print(f"\n- teragen time TLS/plain = {t1 / t0:.2f} (target: at most 1.10 with tokens too)")
print(f"- ockg write MB/s TLS/plain = {w1 / w0:.2f}, read = {r1 / r0:.2f}")
PY
echo "(raw: $OUT)" >&2
