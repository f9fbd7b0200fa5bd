#!/usr/bin/env bash
# The seed's Spark benchmark (scripts/bench-spark.py: generate Parquet,
# then copy it) on HDFS beside strato, in one run: a MiniDFSCluster (1
# NameNode, 3 DataNodes, replication 3: ../shared/anchors/hdfs/cluster.sh)
# and a `strato dev` (3 datanodes, replication THREE) run side by side, and
# each round runs every configuration once, in an order that rotates from
# round to round, so that all see the same machine:
#   HDFS    checksums on  (dfs.checksum.type=CRC32C, HDFS's default)
#   HDFS    checksums off (dfs.checksum.type=NULL)
#   strato  checksums on  (strato://, a bucket with --checksum CRC32C)
#   strato  checksums off (strato://, a bucket with --checksum NONE)
#   s3a     checksums on  (s3a:// on strato dev's gateway, an OBS bucket, CRC32C)
#   s3a     checksums off (the same with --checksum NONE)
# s3a runs with Hadoop's S3A magic committer (what Hadoop prescribes for S3;
# scripts/bench-spark.py); CONFIGS may add s3a-file-crc, s3a with Spark's
# default FileOutputCommitter, whose renames S3 does as copy + delete.
# Each step's log (OUT/CONFIG-roundR.log) splits the Spark JVM's CPU by its
# threads: Spark's tasks, garbage collection, the JIT compilers, the storage
# client's own threads, the rest.
# Prints one table of medians over the rounds (wall time, MB/s, CPU per GB
# of the Spark JVM and of the storage's processes), the ratios the issue sets
# targets for, and writes a chart of the step times (PNG).
#
# Run it under the benchmark lock:
#   flock /tmp/strato-bench.lock scripts/bench-spark-vs-hdfs.sh
# Env: ROUNDS (3) ITERATIONS (5) MB (100: MB per iteration) MASTER (local[2])
#      CONFIGS (default the six above: hdfs-crc hdfs-nocrc strato-crc strato-nocrc
#      s3a-crc s3a-nocrc; s3a-file-crc is a seventh)
#      OUT (results dir, default /tmp/strato-spark-bench) CHART (OUT/spark-bench.png)
#      HDFS_ANCHOR_WORK (the anchor's jars and data; default /work/anchor-work
#      if it exists, else .cache/hdfs-anchor; fetched once by its fetch-deps.sh)
#      STRATO_BIN, STRATO_JAR: a strato binary and connector jar to use instead of
#      building bin/strato (and hadoop/target's jar, when missing) from the work tree
#      EXTRA: more arguments for bench-spark.py (e.g. "--conf spark.x=y")
#      SPARK_DEV_ARGS: more flags for strato dev (e.g. --no-write-cache);
#      HDFS_CONF: more settings for the MiniDFSCluster's servers ("key=value,...",
#      e.g. dfs.datanode.drop.cache.behind.writes=true; ../shared/anchors/README.md)
#      REPLICAS (3): 1 writes every system's files once — strato's
#      buckets (the s3a ones too) ONE, HDFS's files with dfs.replication=1 —
#      equal work at a size whose three replicas would not fit the disk (the
#      seed's 20 GB: ITERATIONS=200). Each step's data is deleted when the
#      step's configuration is done, so at most gen + copy are on disk.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
ROUNDS="${ROUNDS:-3}"; ITERATIONS="${ITERATIONS:-5}"; MB="${MB:-100}"; MASTER="${MASTER:-local[2]}"
REPLICAS="${REPLICAS:-3}"
case "$REPLICAS" in
  1) STRATO_REPL=ONE ;;
  3) STRATO_REPL=THREE ;;
  *) echo "REPLICAS is 1 or 3, not $REPLICAS" >&2; exit 2 ;;
esac
CONFIGS="${CONFIGS:-hdfs-crc hdfs-nocrc strato-crc strato-nocrc s3a-crc s3a-nocrc}"
OUT="${OUT:-/tmp/strato-spark-bench}"
CHART="${CHART:-$OUT/spark-bench.png}"
ANCHOR="${ANCHOR:-$(cd .. && pwd)/shared/anchors/hdfs}"
if [ -z "${HDFS_ANCHOR_WORK:-}" ]; then
  if [ -d /work/anchor-work ]; then HDFS_ANCHOR_WORK=/work/anchor-work; else HDFS_ANCHOR_WORK="$ROOT/.cache/hdfs-anchor"; fi
fi
export HDFS_ANCHOR_WORK
. scripts/spark-env.sh
mkdir -p "$OUT"
RES="$OUT/results.tsv"
: > "$RES"

need_hdfs=0
case " $CONFIGS " in *" hdfs-"*) need_hdfs=1 ;; esac
if [ "$need_hdfs" = 1 ] && ! ls "$HDFS_ANCHOR_WORK"/lib/hadoop-hdfs-client-*.jar >/dev/null 2>&1; then
  mkdir -p "$HDFS_ANCHOR_WORK"; "$ANCHOR/fetch-deps.sh"
fi

if [ -z "${STRATO_BIN:-}" ]; then
  echo "$(date +%T) building bin/strato" >&2
  make -s build > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
if [ -z "${STRATO_JAR:-}" ] && ! ls hadoop/target/strato-hadoop-*.jar >/dev/null 2>&1; then
  echo "$(date +%T) building the connector's jar" >&2
  make -s hadoop HADOOP_MVN_ARGS="-q -DskipTests" >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
S="${STRATO_BIN:-bin/strato}"

hdfs_started=0
cleanup() {
  spark_dev_stop
  if [ "$hdfs_started" = 1 ]; then "$ANCHOR/cluster.sh" stop >&2 || true; fi
}
trap cleanup EXIT

rm -rf "$OUT/dev"
spark_dev_start "$OUT/dev"
echo "$(date +%T) strato dev: meta $DEV_META, s3 $DEV_S3 (pid $DEV_PID)" >&2
$S sh volume create bench --meta "$DEV_META" >/dev/null
$S sh bucket create /bench/crc --layout FSO --checksum CRC32C --replication "$STRATO_REPL" --meta "$DEV_META" >/dev/null
$S sh bucket create /bench/nocrc --layout FSO --checksum NONE --replication "$STRATO_REPL" --meta "$DEV_META" >/dev/null
export AWS_ACCESS_KEY_ID=strato-dev AWS_SECRET_ACCESS_KEY=strato-dev-secret AWS_ENDPOINT_URL="$DEV_S3"
$S s3 ls s3:// >/dev/null 2>&1 || true
# The gateway serves the buckets of volume s3v; made here, they can carry
# NONE and the replication asked for.
$S sh bucket create /s3v/spark-crc --layout OBS --checksum CRC32C --replication "$STRATO_REPL" --meta "$DEV_META" >/dev/null
$S sh bucket create /s3v/spark-nocrc --layout OBS --checksum NONE --replication "$STRATO_REPL" --meta "$DEV_META" >/dev/null

if [ "$need_hdfs" = 1 ]; then
  if "$ANCHOR/cluster.sh" status | grep -q "^running"; then
    echo "a MiniDFSCluster is already running in $HDFS_ANCHOR_WORK: another benchmark? (run under flock /tmp/strato-bench.lock)" >&2
    exit 1
  fi
  "$ANCHOR/cluster.sh" start >&2
  hdfs_started=1
  HDFS_URI="$(sed -n 's|.*<name>fs.defaultFS</name><value>\([^<]*\)</value>.*|\1|p' "$HDFS_ANCHOR_WORK/cluster/conf/core-site.xml")"
  HDFS_PID="$(cat "$HDFS_ANCHOR_WORK/cluster/pid")"
  echo "$(date +%T) MiniDFSCluster: $HDFS_URI (pid $HDFS_PID)" >&2
fi

run() { # run CONFIG ROUND
  local c="$1" r="$2" target pid extra=()
  case "$c" in
    hdfs-crc)     target="$HDFS_URI/bench/spark"; pid="$HDFS_PID"
                  extra=(--conf spark.hadoop.dfs.checksum.type=CRC32C --conf spark.hadoop.dfs.replication="$REPLICAS") ;;
    hdfs-nocrc)   target="$HDFS_URI/bench/spark"; pid="$HDFS_PID"
                  extra=(--conf spark.hadoop.dfs.checksum.type=NULL --conf spark.hadoop.dfs.replication="$REPLICAS") ;;
    strato-crc)   target="strato://$DEV_META/bench/crc/spark"; pid="$DEV_PID" ;;
    strato-nocrc) target="strato://$DEV_META/bench/nocrc/spark"; pid="$DEV_PID" ;;
    s3a-crc)      target="s3a://spark-crc/spark"; pid="$DEV_PID"; extra=(--s3-endpoint "$DEV_S3") ;;
    s3a-nocrc)    target="s3a://spark-nocrc/spark"; pid="$DEV_PID"; extra=(--s3-endpoint "$DEV_S3") ;;
    s3a-file-crc) target="s3a://spark-crc/spark-file"; pid="$DEV_PID"; extra=(--s3-endpoint "$DEV_S3" --s3a-committer file) ;;
    *) echo "unknown config $c" >&2; exit 2 ;;
  esac
  echo "$(date +%T) round $r: $c ($target)" >&2
  # shellcheck disable=SC2086
  SPARK_LOCAL_DIRS="$OUT/spark-local" "$SPARK_PYTHON" scripts/bench-spark.py "$target" \
    --iterations "$ITERATIONS" --mb-per-iteration "$MB" --master "$MASTER" \
    --server-pid "$pid" --label "$c" --results "$RES" "${extra[@]}" ${EXTRA:-} \
    > "$OUT/$c-round$r.log" 2>&1 || { grep -v SLF4J "$OUT/$c-round$r.log" | tail -30 >&2; exit 1; }
  grep -E '^(generate|copy)( spark CPU by thread)?:' "$OUT/$c-round$r.log" | sed 's/^/    /' >&2
}

read -r -a cfgs <<< "$CONFIGS"
n=${#cfgs[@]}
for r in $(seq 1 "$ROUNDS"); do
  echo "=== round $r of $ROUNDS (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  for i in $(seq 0 $((n - 1))); do
    run "${cfgs[$(( (i + r - 1) % n ))]}" "$r"
  done
done

"$SPARK_PYTHON" - "$RES" "$CHART" "$ROUNDS" "$ITERATIONS" "$MB" "$MASTER" "$REPLICAS" <<'PY'
import csv, statistics, sys
res, chart, rounds, its, mb, master, replicas = sys.argv[1:8]
cols = ["label", "target", "step", "iterations", "mb", "secs", "bytes", "MBps", "rows", "spark_cpu", "storage_cpu", "checksum"]
rows = [dict(zip(cols, r)) for r in csv.reader(open(res), delimiter="\t")]
order = ["hdfs-crc", "hdfs-nocrc", "strato-crc", "strato-nocrc", "s3a-crc", "s3a-nocrc", "s3a-file-crc"]
names = {"hdfs-crc": ("HDFS", "CRC32C"), "hdfs-nocrc": ("HDFS", "NULL"),
         "strato-crc": ("strato://", "CRC32C"), "strato-nocrc": ("strato://", "NONE"),
         "s3a-crc": ("s3a:// (strato gateway)", "CRC32C"), "s3a-nocrc": ("s3a:// (strato gateway)", "NONE"),
         "s3a-file-crc": ("s3a:// (strato gateway), FileOutputCommitter", "CRC32C")}
labels = [l for l in order if any(r["label"] == l for r in rows)]
med = lambda xs: statistics.median(xs) if xs else float("nan")
m = {}
for l in labels:
    for step in ("generate", "copy"):
        rs = [r for r in rows if r["label"] == l and r["step"] == step]
        gb = [int(r["bytes"]) / 1e9 for r in rs]
        m[(l, step)] = dict(
            secs=med([float(r["secs"]) for r in rs]), MBps=med([float(r["MBps"]) for r in rs]),
            mb=med([int(r["bytes"]) / 1e6 for r in rs]), n=len(rs),
            spark=med([float(r["spark_cpu"]) / g for r, g in zip(rs, gb)]),
            storage=med([float(r["storage_cpu"]) / g for r, g in zip(rs, gb)]))
sums = {r["checksum"] for r in rows}
rowcounts = {r["rows"] for r in rows}
print(f"\n== Spark {master}, {its} iterations x {mb} MB, {replicas} replica(s); medians of {rounds} rounds "
      f"(MB/s = 1e6 bytes of Parquet written per second; CPU in seconds per GB written)\n")
print("| storage | checksums | generate s | generate MB/s | copy s | copy MB/s | Spark CPU s/GB (gen, copy) | storage CPU s/GB (gen, copy) |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for l in labels:
    g, c = m[(l, "generate")], m[(l, "copy")]
    print(f"| {names[l][0]} | {names[l][1]} | {g['secs']:.2f} | {g['MBps']:.1f} | {c['secs']:.2f} | {c['MBps']:.1f} | "
          f"{g['spark']:.0f}, {c['spark']:.0f} | {g['storage']:.0f}, {c['storage']:.0f} |")
print(f"\nrows read back: {', '.join(sorted(rowcounts))}; checksums: "
      f"{'all equal' if len(sums) == 1 else 'DIFFER: ' + repr(sums)} ({len(rows)} steps)")
print("\n== targets\n")
def ratio(a, b, step):
    if (a, step) in m and (b, step) in m:
        return m[(a, step)]["secs"] / m[(b, step)]["secs"]
for step in ("generate", "copy"):
    r = ratio("strato-crc", "hdfs-crc", step)
    if r is not None:
        print(f"- {step}, checksums on: strato/HDFS time = {r:.2f} (target <= 0.9): {'met' if r <= 0.9 else 'NOT met'}")
for step in ("generate", "copy"):
    for side, on, off in (("strato", "strato-crc", "strato-nocrc"), ("HDFS", "hdfs-crc", "hdfs-nocrc"), ("s3a", "s3a-crc", "s3a-nocrc")):
        r = ratio(on, off, step)
        if r is not None:
            tgt = f" (target <= 5%): {'met' if r - 1 <= 0.05 else 'NOT met'}" if side == "strato" else ""
            print(f"- {step}, cost of checksums on {side}: {100 * (r - 1):+.1f}% of the step time{tgt}")
for step in ("generate", "copy"):
    r = ratio("s3a-crc", "strato-crc", step)
    if r is not None:
        print(f"- {step}, s3a/strato:// time = {r:.2f} (target <= 1.5): {'met' if r <= 1.5 else 'NOT met'}")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.2))
    w = 0.38
    xs = range(len(labels))
    for k, step in enumerate(("generate", "copy")):
        vals = [m[(l, step)]["secs"] for l in labels]
        bars = ax.bar([x + (k - 0.5) * w for x in xs], vals, w, label=step)
        ax.bar_label(bars, fmt="%.1f", fontsize=8)
    ax.set_xticks(list(xs))
    short = {"HDFS": "HDFS", "strato://": "strato://", "s3a:// (strato gateway)": "s3a://\n(gateway)",
             "s3a:// (strato gateway), FileOutputCommitter": "s3a://, file\ncommitter"}
    ax.set_xticklabels([f"{short[names[l][0]]}\n{names[l][1]}" for l in labels], fontsize=8)
    ax.set_ylabel("seconds (median)")
    ax.set_title(f"Spark Parquet generate and copy, {its} x {mb} MB, {replicas} replica(s), {master}, medians of {rounds} rounds",
                 fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(chart, dpi=110)
    print(f"\nchart: {chart}")
except ImportError:
    print("\n(no matplotlib: no chart)")
if len(sums) != 1:
    sys.exit("bench-spark-vs-hdfs: the checksums of the rows read back differ between storages")
PY
echo "(raw: $OUT)" >&2
