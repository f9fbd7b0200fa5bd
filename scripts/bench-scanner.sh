#!/usr/bin/env bash
# What the background scanner costs the foreground (docs/operations.md
# "Scanning"): `strato bench teragen` writes and reads back against a
# `strato dev` cluster (meta and 3 datanodes, one process) with the scanner
# scanning at its default rate (--scan-bandwidth 32MiB per volume, the
# intervals short so that it scans throughout) and with it off
# (--scan-disable), in alternating rounds (on off off on on off ...).
#
# Each round: a fresh cluster; PREFILL rows written and their containers
# closed (what the scanner reads); with the scanner on, a wait until scans
# run on every datanode; then the measured teragen of ROWS rows, 2 writers,
# and its read-back. Prints the medians of each mode and their ratio.
#
# Run it alone on the machine: flock /tmp/strato-bench.lock scripts/bench-scanner.sh
# Env: ROUNDS (3 per mode) PREFILL (10m rows: 1 GB) ROWS (20m) OUT (/tmp/strato-bench-scanner)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; PREFILL="${PREFILL:-10m}"; ROWS="${ROWS:-20m}"
OUT="${OUT:-/tmp/strato-bench-scanner}"
rm -rf "$OUT"
mkdir -p "$OUT"
RES="$OUT/results.tsv"
: > "$RES"
echo "$(date +%T) building bin/strato" >&2
make -s build
S=bin/strato
devpid=
cleanup() { [ -n "$devpid" ] && kill "$devpid" 2>/dev/null && wait "$devpid" 2>/dev/null; true; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# round MODE R: prints "write-MB/s read-MB/s".
round() {
  local mode="$1" r="$2" addr dir flags=() log
  addr=127.0.0.1:$(free_port)
  dir="$OUT/dev-$mode-$r"
  case "$mode" in
    on) flags=(--scan-data-interval 10s --scan-meta-interval 10s) ;;
    off) flags=(--scan-disable) ;;
  esac
  $S dev --data "$dir" --meta-addr "$addr" --http "" "${flags[@]}" > "$dir.log" 2>&1 &
  devpid=$!
  for _ in $(seq 300); do $S admin datanode list --meta "$addr" 2>/dev/null | grep -c HEALTHY | grep -q 3 && break; sleep 0.1; done
  $S bench teragen "$PREFILL" /vol1/bench/prefill --meta "$addr" --no-checksum > "$OUT/prefill-$mode-$r.log" 2>&1 ||
    { tail -20 "$OUT/prefill-$mode-$r.log" "$dir.log" >&2; exit 1; }
  for id in $($S admin container list --meta "$addr" --json | python3 -c 'import json,sys; print(" ".join(str(c["id"]) for c in json.load(sys.stdin) if c.get("state") == "OPEN"))'); do
    $S admin container close "$id" --meta "$addr" > /dev/null
  done
  if [ "$mode" = on ]; then
    # Scans start an interval after the datanodes do: wait until each
    # datanode's data scan has read something.
    for _ in $(seq 600); do
      n=$($S admin datanode list --meta "$addr" --json | python3 -c '
import json, sys
print(sum(1 for d in json.load(sys.stdin) if int(d.get("stats", {}).get("scan", {}).get("bytesScanned", 0)) > 0))')
      [ "$n" -ge 3 ] && break
      sleep 0.1
    done
    [ "$n" -ge 3 ] || { echo "data scans did not start" >&2; exit 1; }
    before=$($S admin datanode list --meta "$addr" --json | python3 -c '
import json, sys
print(sum(int(d.get("stats", {}).get("scan", {}).get("bytesScanned", 0)) for d in json.load(sys.stdin)))')
  fi
  [ "$mode" = on ] || before=0
  log="$OUT/teragen-$mode-$r.log"
  $S bench teragen "$ROWS" /vol1/bench/tg --meta "$addr" --writers 2 --no-checksum --read-back 1MiB --read-back-checksum=false > "$log" 2>&1 ||
    { tail -20 "$log" >&2; exit 1; }
  scanned=$($S admin datanode list --meta "$addr" --json | python3 -c '
import json, sys
print(sum(int(d.get("stats", {}).get("scan", {}).get("bytesScanned", 0)) for d in json.load(sys.stdin)))')
  kill "$devpid"; wait "$devpid" 2>/dev/null || true; devpid=
  rm -rf "$dir"
  w=$(sed -n 's/^MB\/s: \([0-9.]*\).*/\1/p' "$log" | tail -1)
  rd=$(sed -n 's/^read back: .* s, \([0-9.]*\) MB\/s.*/\1/p' "$log" | tail -1)
  echo "$w $rd $((scanned - before))"
}

order=(on off off on)
for r in $(seq 1 "$ROUNDS"); do
  for k in 0 1; do
    mode=${order[$(( (2 * (r - 1) + k) % 4 ))]}
    echo "$(date +%T) round $r: scanner $mode (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    read -r w rd sc < <(round "$mode" "$r")
    printf '%s\t%s\t%s\t%s\t%s\n' "$mode" "$r" "$w" "$rd" "$sc" >> "$RES"
    echo "    write ${w} MB/s, read ${rd} MB/s, scanned ${sc} bytes in all" >&2
  done
done

python3 - "$RES" "$ROUNDS" "$ROWS" <<'PY'
import csv, statistics, sys
res, rounds, rows = sys.argv[1:4]
data = list(csv.reader(open(res), delimiter="\t"))
med = {}
print(f"\n== the scanner's cost to teragen ({rows} rows, 2 writers, THREE) and its read-back; medians of {rounds} rounds\n")
print("| scanner | write MB/s | read MB/s | bytes scanned during the measured run (all datanodes) | rounds (write / read) |")
print("|---|---:|---:|---:|---|")
for mode in ("off", "on"):
    rs = [r for r in data if r[0] == mode]
    med[mode] = (statistics.median(float(r[2]) for r in rs), statistics.median(float(r[3]) for r in rs))
    runs = "; ".join(f"{float(r[2]):.0f} / {float(r[3]):.0f}" for r in rs)
    sc = statistics.median(float(r[4]) for r in rs)
    print(f"| {mode} | {med[mode][0]:.0f} | {med[mode][1]:.0f} | {sc / 1e6:.0f} MB | {runs} |")
(w0, r0), (w1, r1) = med["off"], med["on"]
print(f"\n- writes: {w1 / w0:.3f}x with the scanner (cost {100 * (1 - w1 / w0):.1f}%); reads: {r1 / r0:.3f}x (cost {100 * (1 - r1 / r0):.1f}%); target: at most 5% each")
PY
