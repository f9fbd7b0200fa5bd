#!/usr/bin/env bash
# The seed's write test through the Hadoop FileSystem API, HDFS beside
# strato, measured by the same code: ../shared/anchors/hdfs/writebench.sh
# (one writer per file, RECORDS write calls of 100 bytes, one hsync, close,
# with the time in write, hsync and close per writer; 1 and 2 writers; then
# a read-back; with TERAGEN=1 Hadoop's own TeraGen, local mode) against a
# MiniDFSCluster (3 datanodes, replication 3), then against `strato dev`
# (replication THREE) through the connector's jar (hadoop/, docs/hadoop.md),
# then the Go path at equal bytes (`strato bench teragen`, the same rows
# through the Go client) — in alternating rounds, so that all see the same
# machine load. Prints the medians and the ratios the issue sets targets for:
# write+hsync+close per writer strato/HDFS (<= 0.5), read-back MB/s
# strato/HDFS (>= 1.5), and the Java path against the Go path (within 20%).
#
# Env: ROUNDS (3) RECORDS (10000000 per writer: 1 GB) TERAGEN (1)
#      BIG=1: one more round of 10x RECORDS (10 GB per writer), no TeraGen
#      OUT (results dir, default /tmp/strato-hadoopfs-bench)
#      HDFS_ANCHOR_WORK (the anchor's jars and data; default /work/anchor-work
#      if it exists, else .cache/hdfs-anchor; fetched once by its fetch-deps.sh)
#      SKIP_HDFS=1 runs strato only; KEEP=1 keeps strato's data in OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
ROUNDS="${ROUNDS:-3}"; RECORDS="${RECORDS:-10000000}"; TERAGEN="${TERAGEN:-1}"
OUT="${OUT:-/tmp/strato-hadoopfs-bench}"
ANCHOR="${ANCHOR:-$(cd .. && pwd)/shared/anchors/hdfs}"
if [ -z "${HDFS_ANCHOR_WORK:-}" ]; then
  if [ -d /work/anchor-work ]; then HDFS_ANCHOR_WORK=/work/anchor-work; else HDFS_ANCHOR_WORK="$ROOT/.cache/hdfs-anchor"; fi
fi
export HDFS_ANCHOR_WORK
mkdir -p "$OUT" "$HDFS_ANCHOR_WORK"
if ! ls "$HDFS_ANCHOR_WORK"/lib/hadoop-hdfs-client-*.jar >/dev/null 2>&1; then
  "$ANCHOR/fetch-deps.sh"
fi

echo "$(date +%T) building bin/strato and the connector's jar" >&2
make -s hadoop HADOOP_MVN_ARGS="-q -DskipTests" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
JAR="$(ls "$ROOT"/hadoop/target/strato-hadoop-*.jar | grep -v original | head -1)"
S="$ROOT/bin/strato"

# The anchor appends to its results files: start them afresh, keeping old ones.
for d in writebench writebench-strato; do
  for f in results.tsv teragen.tsv; do
    [ -f "$HDFS_ANCHOR_WORK/$d/$f" ] && mv "$HDFS_ANCHOR_WORK/$d/$f" "$OUT/$d-$f.before-$(date +%s)"
  done
done

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
DEV="$OUT/strato-data"
rm -rf "$DEV"
"$S" dev --data "$DEV" --meta-addr "127.0.0.1:$PORT" > "$OUT/strato-dev.log" 2>&1 &
DEVPID=$!
# strato's data (up to 3 x the bytes written) goes with the cluster unless KEEP=1.
trap 'kill $DEVPID 2>/dev/null; wait $DEVPID 2>/dev/null || true; [ "${KEEP:-0}" = 1 ] || rm -rf "$DEV"' EXIT
for _ in $(seq 1 300); do grep -q "strato dev: ready" "$OUT/strato-dev.log" && break; sleep 0.1; done
grep -q "strato dev: ready" "$OUT/strato-dev.log" || { cat "$OUT/strato-dev.log"; exit 1; }
echo "$(date +%T) strato dev on 127.0.0.1:$PORT (data in $DEV)" >&2

GO="$OUT/go.tsv"
printf 'run\twriters\tbytes_each\tMBps\twrite_ms\thsync_ms\tclose_ms\tread_MBps\tload1\n' > "$GO"
# go_round TAG WRITERS ROWS_EACH: the Go path (strato bench teragen) at the same bytes per writer.
go_round() {
  local tag="$1" w="$2" rows="$3" log="$OUT/go-w$2-$1.log"
  echo "$(date +%T) Go path: $w writer(s) x $rows rows [$tag]" >&2
  local l; l=$(cut -d' ' -f1 /proc/loadavg)
  "$S" bench teragen "$((w * rows))" "/bench/gopath/$tag-w$w" --writers "$w" --meta "127.0.0.1:$PORT" \
      --no-checksum --read-back 1MiB --read-back-checksum=false > "$log" 2> "$log.err"
  awk -v run="$tag" -v w="$w" -v b="$((rows * 100))" -v l="$l" '
    /^write.allTime:/ {wr+=$2} /^hsync.allTime:/ {hs+=$2} /^close.allTime:/ {cl+=$2}
    /^MB\/s:/ {mb=$2} /^read back:/ {for(i=1;i<=NF;i++) if ($i=="MB/s," || $i=="MB/s") rb=$(i-1)}
    END {printf "%s\t%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%s\t%s\n", run, w, b, mb, wr/w, hs/w, cl/w, rb, l}' "$log" >> "$GO"
  tail -1 "$GO" >&2
  "$S" fs rm -r --skip-trash "/bench/gopath/$tag-w$w" --meta "127.0.0.1:$PORT" > /dev/null 2>&1 || true
}

for r in $(seq 1 "$ROUNDS"); do
  echo "=== round $r of $ROUNDS" >&2
  if [ "${SKIP_HDFS:-0}" != 1 ]; then
    RUNS=1 RECORDS="$RECORDS" TERAGEN="$TERAGEN" TERAGEN_PAR="1 2" "$ANCHOR/writebench.sh" > "$OUT/hdfs-round$r.log" 2>&1 \
      || { tail -30 "$OUT/hdfs-round$r.log"; exit 1; }
  fi
  TARGET_FS="strato://127.0.0.1:$PORT/" TARGET_PREFIX=/bench/hadoopfs EXTRA_CP="$JAR" \
    RUNS=1 RECORDS="$RECORDS" TERAGEN="$TERAGEN" TERAGEN_PAR="1 2" "$ANCHOR/writebench.sh" > "$OUT/strato-round$r.log" 2>&1 \
    || { tail -30 "$OUT/strato-round$r.log"; exit 1; }
  go_round "$r" 1 "$RECORDS"
  go_round "$r" 2 "$RECORDS"
done
if [ "${BIG:-0}" = 1 ]; then
  echo "=== 10x: $((RECORDS * 10)) records per writer, once" >&2
  big="$OUT/big"; mkdir -p "$big"
  if [ "${SKIP_HDFS:-0}" != 1 ]; then
    RUNS=1 RECORDS="$((RECORDS * 10))" TERAGEN=0 CLIENT_HEAP=2g "$ANCHOR/writebench.sh" > "$big/hdfs.log" 2>&1 || { tail -30 "$big/hdfs.log"; exit 1; }
  fi
  TARGET_FS="strato://127.0.0.1:$PORT/" TARGET_PREFIX=/bench/hadoopfs EXTRA_CP="$JAR" \
    RUNS=1 RECORDS="$((RECORDS * 10))" TERAGEN=0 CLIENT_HEAP=2g "$ANCHOR/writebench.sh" > "$big/strato.log" 2>&1 || { tail -30 "$big/strato.log"; exit 1; }
  go_round big 1 "$((RECORDS * 10))"
fi

for d in writebench writebench-strato; do
  for f in results.tsv teragen.tsv; do
    [ -f "$HDFS_ANCHOR_WORK/$d/$f" ] && cp "$HDFS_ANCHOR_WORK/$d/$f" "$OUT/$d-$f"
  done
done

python3 - "$OUT" "$RECORDS" <<'PY'
import csv, statistics, sys, os
out, records = sys.argv[1], int(sys.argv[2])
def rows(name):
    p = os.path.join(out, name)
    return list(csv.DictReader(open(p), delimiter="\t")) if os.path.exists(p) else []
def med(xs):
    xs = [float(x) for x in xs if x not in ("", None)]
    return statistics.median(xs) if xs else float("nan")
hdfs, strato, go = rows("writebench-results.tsv"), rows("writebench-strato-results.tsv"), rows("go.tsv")
def pick(rs, mode, streams, bytes_each):
    return [r for r in rs if r["run"].isdigit() and r["mode"] == mode and r["streams"] == str(streams)
            and r["worker"] != "all" and int(r["bytes"]) == bytes_each]
be = records * 100
print(f"\n== per writer, {be/1e9:g} GB each; medians over rounds (ms per writer; MB/s = 1e6 B/s, all writers together)\n")
print("| path | writers | write ms | hsync ms | close ms | write+hsync+close ms | write MB/s | read MB/s |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
res = {}
for name, rs in (("HDFS (Java)", hdfs), ("strato (Java, connector)", strato)):
    for w in (1, 2):
        wr = pick(rs, "write", w, be)
        wall = [r for r in rs if r["run"].isdigit() and r["mode"] == "write" and r["streams"] == str(w) and r["worker"] == "all"]
        rd = [r for r in rs if r["run"].isdigit() and r["mode"] == "read" and r["streams"] == str(w) and r["worker"] == "all"]
        if not wr:
            continue
        tot = med([float(r["write_sum_ms"]) + float(r["hsync_ms"]) + float(r["close_ms"]) for r in wr])
        res[(name, w)] = (tot, med(r["MBps"] for r in rd))
        print(f"| {name} | {w} | {med(r['write_sum_ms'] for r in wr):.0f} | {med(r['hsync_ms'] for r in wr):.0f} | "
              f"{med(r['close_ms'] for r in wr):.0f} | {tot:.0f} | {med(r['MBps'] for r in wall):.1f} | {res[(name, w)][1]:.1f} |")
for w in (1, 2):
    g = [r for r in go if r["writers"] == str(w) and r["run"].isdigit()]
    if g:
        tot = med([float(r["write_ms"]) + float(r["hsync_ms"]) + float(r["close_ms"]) for r in g])
        res[("Go", w)] = (tot, med(r["read_MBps"] for r in g))
        print(f"| strato (Go, bench teragen) | {w} | {med(r['write_ms'] for r in g):.0f} | {med(r['hsync_ms'] for r in g):.0f} | "
              f"{med(r['close_ms'] for r in g):.0f} | {tot:.0f} | {med(r['MBps'] for r in g):.1f} | {res[('Go', w)][1]:.1f} |")
print("\n== targets\n")
for w in (1, 2):
    h, s, g = res.get(("HDFS (Java)", w)), res.get(("strato (Java, connector)", w)), res.get(("Go", w))
    if h and s:
        print(f"- {w} writer(s): write+hsync+close strato/HDFS = {s[0]/h[0]:.2f} (target <= 0.5); "
              f"read-back strato/HDFS = {s[1]/h[1]:.2f} (target >= 1.5)")
    if s and g:
        print(f"- {w} writer(s): Java path / Go path time = {s[0]/g[0]:.2f} (target <= 1.2)")
for name in ("writebench-teragen.tsv", "writebench-strato-teragen.tsv"):
    t = rows(name)
    for j in ("1", "2"):
        tj = [r for r in t if r["jobs"] == j and r["run"].isdigit()]
        if tj:
            print(f"- TeraGen local, {j} job(s), {name.split('-teragen')[0].replace('writebench', 'HDFS').replace('HDFS-strato', 'strato')}: "
                  f"median job {med(r['job_s_max'] for r in tj):.1f} s, {med(r['MBps'] for r in tj):.1f} MB/s aggregate")
PY
echo "(raw: $OUT)" >&2
