#!/usr/bin/env bash
# What TLS costs on the data path, in one run: `strato bench teragen` (2
# writers x 1 GB, write+hsync+close per writer) and `strato bench ockg`
# (64 MiB keys, then a read-back) on in-process clusters with and without
# --tls, in alternating rounds (the order flips every round). Prints the
# medians and the TLS/plain ratios, and the teragen process's CPU (user +
# system, /usr/bin/time: client, meta and 3 datanodes, the cluster's start
# included) per GB per replica: what the hosts of a cluster pay between
# them for each replica's GB, with TLS and without. Each round also
# measures AES-128-GCM (BenchmarkSealedRecordCipher: sealing and opening
# 128 KiB records, as sealed records do, decisions 0109 and 0110) and
# prints the least time the host's cores allow the TLS write: the plain
# write's CPU plus sealing and opening every replica's bytes once, spread
# over every core.
#
# With BASE=path/to/strato (a build before a change), each round also runs
# TLS with that binary ("tls-base"), the three orders rotating.
#
# Run it alone on the machine: flock /tmp/strato-bench.lock scripts/bench-tls.sh
# TERAGEN_ARGS adds flags to every teragen (e.g. --no-write-cache: on a VM
# whose page cache costs host faults, the leaders' page-cache copies vary
# more from run to run than TLS costs).
# Env: ROUNDS (3) ROWS (20m: in all, 100 bytes each) KEYS (32) SIZE (64MiB) THREADS (4) OUT (/tmp/strato-bench-tls) BASE TERAGEN_ARGS
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; ROWS="${ROWS:-20m}"; KEYS="${KEYS:-32}"; SIZE="${SIZE:-64MiB}"; THREADS="${THREADS:-4}"
OUT="${OUT:-/tmp/strato-bench-tls}"
mkdir -p "$OUT"
RES="$OUT/results.tsv"
: > "$RES"
echo "$(date +%T) building bin/strato" >&2
make -s build

run() { # run MODE ROUND: MODE is plain, tls or tls-base
  local mode="$1" r="$2" flag=() log bin=bin/strato
  [ "$mode" != plain ] && flag=(--tls)
  [ "$mode" = tls-base ] && bin="$BASE"
  echo "$(date +%T) round $r: $mode (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  log="$OUT/teragen-$mode-$r.log"
  /usr/bin/time -f '%e %U %S' -o "$OUT/cpu-$mode-$r.txt" "$bin" bench teragen "$ROWS" /vol1/bench/tg --writers 2 --no-checksum ${TERAGEN_ARGS:-} "${flag[@]}" > "$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
  # the slower writer's write+hsync+close
  local tg
  tg=$(awk '/write.allTime/ {w[n]=$2} /hsync.allTime/ {h[n]=$2} /close.allTime/ {c[n]=$2; n++}
    END {m=0; for (i=0;i<n;i++) {t=w[i]+h[i]+c[i]; if (t>m) m=t}; print m}' "$log")
  log="$OUT/ockg-$mode-$r.log"
  "$bin" bench ockg --keys "$KEYS" --size "$SIZE" --threads "$THREADS" --read-back "${flag[@]}" > "$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
  local w rb
  w=$(sed -n 's/^Throughput *: \([0-9.]*\) MB\/s/\1/p' "$log")
  rb=$(sed -n 's/^Read back *:.* \([0-9.]*\) MB\/s, all identical.*/\1/p' "$log")
  local cpu
  cpu=$(awk '{print $2 + $3}' "$OUT/cpu-$mode-$r.txt")
  wall=$(awk '{print $1}' "$OUT/cpu-$mode-$r.txt")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$r" "$tg" "$w" "$rb" "$cpu" "$wall" >> "$RES"
  echo "    teragen ${tg} ms per writer (${cpu} CPU-s), ockg write ${w} MB/s, read ${rb} MB/s" >&2
}

# cipher ROUND: AES-128-GCM's sealing and opening rates (MB/s), appended to
# $OUT/cipher.tsv.
cipher() {
  go test ./wire -run '^$' -bench 'BenchmarkSealedRecordCipher' -benchtime 1s -count 3 > "$OUT/cipher-$1.log" 2>&1 || { tail -20 "$OUT/cipher-$1.log" >&2; exit 1; }
  awk -v r="$1" '/SealedRecordCipher\/(seal|open)/ {split($1, a, "/"); sub(/-[0-9]+$/, "", a[2]); for (i = 1; i < NF; i++) if ($(i+1) == "MB/s") print r "\t" a[2] "\t" $i}' "$OUT/cipher-$1.log" >> "$OUT/cipher.tsv"
}
: > "$OUT/cipher.tsv"

modes=(plain tls)
[ -n "${BASE:-}" ] && modes+=(tls-base)
for r in $(seq 1 "$ROUNDS"); do
  cipher "$r"
  if [ ${#modes[@]} = 2 ]; then
    if (( r % 2 )); then run plain "$r"; run tls "$r"; else run tls "$r"; run plain "$r"; fi
  else
    for i in 0 1 2; do run "${modes[$(( (i + r - 1) % 3 ))]}" "$r"; done
  fi
done

python3 - "$RES" "$ROUNDS" "$ROWS" "$KEYS" "$SIZE" "$OUT/cipher.tsv" "$(nproc)" "${modes[*]}" <<'PY'
import csv, statistics, sys
res, rounds, rows, keys, size, cipher_tsv, ncpu, modes = sys.argv[1:9]
modes = modes.split()
ncpu = int(ncpu)
data = list(csv.reader(open(res), delimiter="\t"))
n = rows.lower()
rows_n = int(float(n[:-1]) * {"k": 1e3, "m": 1e6, "g": 1e9}[n[-1]]) if n[-1] in "kmg" else int(n)
replica_gb = rows_n * 100 * 3 / 1e9  # TeraGen rows of 100 bytes, replication THREE
m = {}
for mode in modes:
    rs = [r for r in data if r[0] == mode]
    m[mode] = [statistics.median(float(r[i]) for r in rs) for i in (2, 3, 4, 5)]
    m[mode + "-runs"] = "; ".join(f"{r[2]}/{float(r[3]):.0f}/{float(r[4]):.0f}/{float(r[5]):.1f}" for r in rs)
print(f"\n== TLS on the data path; medians of {rounds} rounds\n")
print(f"| cluster | teragen {rows} rows, 2 writers: write+hsync+close ms (slower writer) | teragen CPU-s per GB per replica | ockg {keys} x {size} write MB/s | read MB/s | rounds (ms/write/read/CPU-s) |")
print("|---|---:|---:|---:|---:|---|")
for mode in modes:
    t, w, r, c = m[mode]
    print(f"| {mode} | {t:.0f} | {c / replica_gb:.2f} | {w:.1f} | {r:.1f} | {m[mode + '-runs']} |")
t0, w0, r0, c0 = m["plain"]
t1, w1, r1, c1 = m["tls"]
print(f"\n- teragen time TLS/plain = {t1 / t0:.2f} (target: at most 1.15)")
print(f"- teragen CPU per GB per replica: {c0 / replica_gb:.2f} plain, {c1 / replica_gb:.2f} TLS (+{(c1 - c0) / replica_gb:.2f})")
print(f"- ockg write MB/s TLS/plain = {w1 / w0:.2f}, read = {r1 / r0:.2f} (target: read at least 0.85)")
if "tls-base" in m:
    t2, w2, r2, c2 = m["tls-base"]
    print(f"- BASE's TLS: teragen time TLS/plain = {t2 / t0:.2f}, CPU per GB per replica {c2 / replica_gb:.2f} "
          f"(+{(c2 - c0) / replica_gb:.2f}); ockg write {w2 / w0:.2f}, read {r2 / r0:.2f}; this build's TLS against BASE's: "
          f"teragen time {t1 / t2:.2f}, CPU {c1 / c2:.2f}")
rates = {}
for r in csv.reader(open(cipher_tsv), delimiter="\t"):
    rates.setdefault(r[1], []).append(float(r[2]))
seal, open_ = statistics.median(rates["seal"]) / 1e3, statistics.median(rates["open"]) / 1e3  # GB/s
aes = replica_gb * (1 / seal + 1 / open_)
walls = {mode: statistics.median(float(r[6]) for r in data if r[0] == mode) for mode in modes}
least = max(walls["plain"], (c0 + aes) / ncpu)
print(f"- AES-128-GCM here: sealing {seal:.2f} GB/s, opening {open_:.2f} GB/s a core (medians); "
      f"sealing and opening every replica's {replica_gb:g} GB once: {aes:.1f} CPU-s")
print(f"- the teragen process: plain {walls['plain']:.1f} s and {c0:.1f} CPU-s, TLS {walls['tls']:.1f} s and {c1:.1f} CPU-s; "
      f"the plain run's CPU plus that AES over {ncpu} cores needs at least {least:.1f} s: "
      f"TLS/plain at least {least / walls['plain']:.2f} on this host, measured {walls['tls'] / walls['plain']:.2f}")
PY
echo "(raw: $OUT)" >&2
