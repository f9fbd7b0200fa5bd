#!/usr/bin/env bash
# bench-crc-teragen.sh [ROUNDS] [ROWS]: what CRC32C costs the datanodes on
# the Go write path. One `strato dev` (three datanodes); `bench teragen` of
# ROWS rows (100 bytes each, two writers) into a CRC32C bucket and a NONE
# bucket (THREE replicas, FSO), alternating the order each round; prints the
# dev process's CPU seconds (datanodes and meta) and the writer's for each
# run. Keys are kept (deletions would run into the next run's CPU); the
# dev's data goes when it ends. The first round of a dev runs on an empty
# cluster and is cheaper for both settings: compare the later ones.
#
#   STRATO_BIN  the binary (default bin/strato, built by make build)
#   WORK        a folder for the dev's data (default a temporary one)
set -euo pipefail
rounds=${1:-3}
rows=${2:-10m}
S=${STRATO_BIN:-bin/strato}
D=${WORK:-$(mktemp -d)}
mkdir -p "$D"
meta=127.0.0.1:29881
"$S" dev --data "$D/data" --meta-addr $meta --s3-addr 127.0.0.1:29882 --http "" --datanodes 3 > "$D/dev.log" 2>&1 &
dev=$!
trap 'kill $dev 2>/dev/null; wait $dev 2>/dev/null; rm -rf "$D/data"' EXIT
for _ in $(seq 300); do grep -q "strato dev: ready" "$D/dev.log" && break; sleep 0.1; done
"$S" sh volume create bench --meta $meta >/dev/null
"$S" sh bucket create /bench/crc --layout FSO --checksum CRC32C --replication THREE --meta $meta >/dev/null
"$S" sh bucket create /bench/nocrc --layout FSO --checksum NONE --replication THREE --meta $meta >/dev/null
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
tck=$(getconf CLK_TCK)
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order="crc nocrc"; else order="nocrc crc"; fi
  for b in $order; do
    c0=$(cpu $dev)
    out=$( { /usr/bin/time -f "client %U %S" "$S" bench teragen "$rows" /bench/$b/r$r --writers 2 --meta $meta \
      --no-checksum --progress-interval 1h; } 2>&1 )
    c1=$(cpu $dev)
    echo "round $r $b dev_cpu_s=$(awk -v a="$c0" -v b="$c1" -v t="$tck" 'BEGIN{printf "%.2f",(b-a)/t}')" \
      "$(echo "$out" | grep '^client') $(echo "$out" | grep -i 'MB/s' | tail -1)"
    sleep 3
  done
done
