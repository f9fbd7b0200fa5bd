#!/usr/bin/env bash
# What security costs, in one run (docs/security.md): the write path and
# metadata creates with everything off, with tokens only (--auth: client
# tokens, block tokens and ACL checks) and with TLS and tokens together, in
# alternating rounds (the order rotates every round):
#
#   - `strato bench teragen` (2 writers x 1 GB, write+hsync+close per writer,
#     the slower writer's) on an in-process cluster: --auth, --tls --auth;
#   - `strato bench meta -op create -close` against a `strato meta` process
#     over gRPC (remote: TLS and tokens are on the wire), 16 threads.
#
# Prints the medians and the ratios to "off".
#
# Run it alone on the machine: flock /tmp/strato-bench.lock scripts/bench-security.sh
# Env: ROUNDS (3) ROWS (20m) FILES (20000) THREADS (16) OUT (/tmp/strato-bench-security)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; ROWS="${ROWS:-20m}"; FILES="${FILES:-20000}"; THREADS="${THREADS:-16}"
OUT="${OUT:-/tmp/strato-bench-security}"
rm -rf "$OUT"
mkdir -p "$OUT"
RES="$OUT/results.tsv"
: > "$RES"
echo "$(date +%T) building bin/strato" >&2
make -s build
S=bin/strato
$S admin ca init --dir "$OUT/ca" > /dev/null
$S admin ca issue --dir "$OUT/ca" --name meta > /dev/null
metapid=
cleanup() { [ -n "$metapid" ] && kill "$metapid" 2>/dev/null && wait "$metapid" 2>/dev/null; true; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# creates MODE ROUND: a fresh `strato meta`, then bench meta's creates over gRPC.
creates() {
  local mode="$1" r="$2" addr dir log flags=() client=()
  addr=127.0.0.1:$(free_port)
  dir="$OUT/meta-$mode-$r"
  case "$mode" in
    off) flags=(--auth none) ;;
    auth) flags=(--auth token --auth-without-tls) ;;
    secure) flags=(--auth token --tls-cert "$OUT/ca/meta.crt" --tls-key "$OUT/ca/meta.key" --tls-ca "$OUT/ca/ca.crt")
            client=(--tls-ca "$OUT/ca/ca.crt") ;;
  esac
  $S meta --data "$dir" --listen "$addr" "${flags[@]}" > "$dir.log" 2>&1 &
  metapid=$!
  for _ in $(seq 200); do (exec 3<>"/dev/tcp/${addr%:*}/${addr#*:}") 2>/dev/null && break; sleep 0.05; done
  if [ "$mode" != off ]; then
    for _ in $(seq 200); do [ -s "$dir/admin.token" ] && break; sleep 0.05; done
    client+=(--token "$(cat "$dir/admin.token")")
  fi
  log="$OUT/meta-$mode-$r.out"
  STRATO_TOKEN= $S bench meta --meta "$addr" "${client[@]}" -op create -threads "$THREADS" -files "$FILES" -close > "$log" 2> "$log.err" ||
    { tail -20 "$log.err" "$dir.log" >&2; exit 1; }
  kill "$metapid"; wait "$metapid" 2>/dev/null || true; metapid=
  sed -n 's/^Ops per sec: \([0-9.]*\).*/\1/p' "$log" | tail -1
}

# teragen MODE ROUND: the slower writer's write+hsync+close, ms.
teragen() {
  local mode="$1" r="$2" flags=() log
  case "$mode" in
    auth) flags=(--auth) ;;
    secure) flags=(--auth --tls) ;;
  esac
  log="$OUT/teragen-$mode-$r.log"
  $S bench teragen "$ROWS" /vol1/bench/tg --writers 2 --no-checksum "${flags[@]}" > "$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
  awk '/write.allTime/ {w[n]=$2} /hsync.allTime/ {h[n]=$2} /close.allTime/ {c[n]=$2; n++}
    END {m=0; for (i=0;i<n;i++) {t=w[i]+h[i]+c[i]; if (t>m) m=t}; print m}' "$log"
}

modes=(off auth secure)
for r in $(seq 1 "$ROUNDS"); do
  for k in 0 1 2; do
    mode=${modes[$(( (k + r) % 3 ))]}
    echo "$(date +%T) round $r: $mode (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    tg=$(teragen "$mode" "$r")
    ops=$(creates "$mode" "$r")
    printf '%s\t%s\t%s\t%s\n' "$mode" "$r" "$tg" "$ops" >> "$RES"
    echo "    teragen ${tg} ms per writer, creates ${ops} ops/s" >&2
  done
done

python3 - "$RES" "$ROUNDS" "$ROWS" "$FILES" "$THREADS" <<'PY'
import csv, statistics, sys
res, rounds, rows, files, threads = sys.argv[1:6]
data = list(csv.reader(open(res), delimiter="\t"))
med = {}
print(f"\n== security on the write path and on creates; medians of {rounds} rounds\n")
print(f"| security | teragen {rows} rows, 2 writers: write+hsync+close ms (slower writer) | bench meta create -close, {threads} threads, {files} files: ops/s | rounds (ms / ops/s) |")
print("|---|---:|---:|---|")
names = {"off": "off", "auth": "tokens (client, block, ACLs)", "secure": "TLS + tokens"}
for mode in ("off", "auth", "secure"):
    rs = [r for r in data if r[0] == mode]
    med[mode] = (statistics.median(float(r[2]) for r in rs), statistics.median(float(r[3]) for r in rs))
    runs = "; ".join(f"{float(r[2]):.0f} / {float(r[3]):.0f}" for r in rs)
    print(f"| {names[mode]} | {med[mode][0]:.0f} | {med[mode][1]:.0f} | {runs} |")
t0, c0 = med["off"]
for mode in ("auth", "secure"):
    t, c = med[mode]
    print(f"\n- {names[mode]}: teragen time {t / t0:.2f}x off (target for TLS + tokens: at most 1.10), creates {c / c0:.2f}x off's ops/s (cost {100 * (1 - c / c0):.0f}%; target at most 15%)")
PY
