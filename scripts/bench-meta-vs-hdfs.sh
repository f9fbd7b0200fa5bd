#!/usr/bin/env bash
# strato bench meta beside Hadoop's NNThroughputBenchmark, op by op in one
# run, each mode against the same mode: for each op, HDFS's standalone runs
# and its remote runs (../shared/anchors/hdfs/nnbench.sh, REMOTE=1: a
# NameNode process called over Hadoop RPC), then strato's standalone runs
# (in-process meta) and its remote runs (a `strato meta` process called over
# gRPC on loopback), so that all see the same machine load. Prints medians,
# standalone/standalone and remote/remote ratios, the fsync-bound ceiling of
# each mutation and strato's peak RSS.
#
# Env: RUNS (3) THREADS (16) CREATE_FILES (100000) MKDIR_DIRS (100000)
#      READ_FILES (1000000) WRITE_OPS (100000) OPS ("create mkdirs open
#      fileStatus delete rename") OUT (results dir, default /tmp/strato-nnbench)
#      HDFS_ANCHOR_WORK (where the anchor keeps its jars and data; required)
#      SKIP_HDFS=1 runs strato only.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-3}"; THREADS="${THREADS:-16}"
CREATE_FILES="${CREATE_FILES:-100000}"; MKDIR_DIRS="${MKDIR_DIRS:-100000}"
READ_FILES="${READ_FILES:-1000000}"; WRITE_OPS="${WRITE_OPS:-100000}"
OPS="${OPS:-create mkdirs open fileStatus delete rename}"
OUT="${OUT:-/tmp/strato-nnbench}"
ANCHOR="${ANCHOR:-$(cd .. && pwd)/shared/anchors/hdfs}"
export RUNS THREADS CREATE_FILES MKDIR_DIRS READ_FILES WRITE_OPS
mkdir -p "$OUT"
RES="$OUT/strato.tsv"
printf 'op\tmode\trun\tops_per_sec\tavg_ms\tpeak_rss_mib\n' > "$RES"
make -s build
S=./bin/strato

fsync_ms() { # median of 3 x 500 4 KiB O_DSYNC writes on $OUT's disk
  for i in 1 2 3; do
    dd if=/dev/zero of="$OUT/dsync.test" bs=4k count=500 oflag=dsync 2>&1 | tail -1 | awk '{print $(NF-3)*1000/500}'
  done | sort -n | sed -n 2p
  rm -f "$OUT/dsync.test"
}

# strato_run OP MODE RUN args...: one run, its figures appended to $RES.
strato_run() {
  local op="$1" mode="$2" run="$3"; shift 3
  local log="$OUT/strato-$op-$mode-$run.log"
  echo "$(date +%T) strato $op $mode run $run: $*" >&2
  "$S" bench meta -op "$op" -threads "$THREADS" "$@" > "$log" 2> "$log.err"
  local blk ops avg rss
  blk=$(awk -v op="$op" '$0 ~ "--- "op" stats" {f=1} f' "$log")
  ops=$(echo "$blk" | sed -n 's/^Ops per sec: \([0-9.]*\).*/\1/p' | tail -1)
  avg=$(echo "$blk" | sed -n 's/^Average Time: \([0-9.]*\).*/\1/p' | tail -1)
  rss=$(sed -n 's/^Peak RSS: \([0-9.]*\) MiB/\1/p' "$log" | tail -1)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$op" "$mode" "$run" "$ops" "$avg" "${rss:-}" >> "$RES"
  echo "   -> ops/s=$ops avg_ms=$avg rss_mib=${rss:-}" >&2
}

SNAP="$OUT/snapshot"
need_snapshot() {
  [ -f "$SNAP/.files" ] && [ "$(cat "$SNAP/.files")" = "$READ_FILES" ] && return 0
  echo "$(date +%T) strato: preparing a namespace of $READ_FILES files (one-off)" >&2
  rm -rf "$SNAP"
  "$S" bench meta -op create -threads "$THREADS" -files "$READ_FILES" -filesPerDir 4 -close -keepResults --data "$SNAP" > "$OUT/snapshot.log" 2>&1
  echo "$READ_FILES" > "$SNAP/.files"
}

RUNDIR="$OUT/run"
fresh() { rm -rf "$RUNDIR"; mkdir -p "$RUNDIR"; }
restore() { rm -rf "$RUNDIR"; cp -a "$SNAP" "$RUNDIR"; }

op_args() { # the op's own arguments
  case "$1" in
    create) echo "-files $CREATE_FILES -filesPerDir 4 -close" ;;
    mkdirs) echo "-dirs $MKDIR_DIRS -dirsPerDir 2" ;;
    open|fileStatus) echo "-files $READ_FILES -filesPerDir 4 -useExisting -keepResults" ;;
    delete|rename) echo "-files $WRITE_OPS -filesPerDir 4 -useExisting -keepResults" ;;
  esac
}

prepare() { case "$1" in create|mkdirs) fresh ;; *) need_snapshot; restore ;; esac; }

remote_run() {
  local op="$1"
  prepare "$op"
  local port=$((20000 + RANDOM % 20000))
  "$S" meta --auth none --data "$RUNDIR" --listen "127.0.0.1:$port" > "$OUT/meta-$op.log" 2>&1 &
  local pid=$!
  sleep 1
  strato_run "$op" remote "$2" $(op_args "$op") --meta "127.0.0.1:$port" || true
  kill -TERM "$pid"; wait "$pid" || true
}

# The anchor appends to its results file: only the rows of this run count.
HDFS_TSV="${HDFS_ANCHOR_WORK:-}/nnbench/results.tsv"
HDFS_SKIP=$( [ -f "$HDFS_TSV" ] && wc -l < "$HDFS_TSV" || echo 0 )
FSYNC_MS=$(fsync_ms)
echo "fsync (4 KiB O_DSYNC) on $OUT: ${FSYNC_MS} ms" | tee "$OUT/fsync.txt"
for op in $OPS; do
  if [ "${SKIP_HDFS:-0}" != 1 ]; then
    for remote in 0 1; do
      echo "$(date +%T) HDFS $op (REMOTE=$remote)" >&2
      HDFS_ANCHOR_WORK="${HDFS_ANCHOR_WORK:?set HDFS_ANCHOR_WORK}" OPS="$op" REMOTE=$remote "$ANCHOR/nnbench.sh" > "$OUT/hdfs-$op-$remote.log" 2>&1 || { echo "HDFS $op failed: $OUT/hdfs-$op-$remote.log" >&2; }
    done
  fi
  for r in $(seq 1 "$RUNS"); do
    prepare "$op"
    strato_run "$op" standalone "$r" $(op_args "$op") --data "$RUNDIR"
  done
  for r in $(seq 1 "$RUNS"); do
    remote_run "$op" "$r"
  done
done
echo "fsync after: $(fsync_ms) ms" | tee -a "$OUT/fsync.txt"
rm -rf "$RUNDIR"

python3 - "$RES" "$HDFS_TSV" "$FSYNC_MS" "$THREADS" "$HDFS_SKIP" <<'PY'
import csv, statistics, sys
res, hdfs_tsv, fsync_ms, threads, skip = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rows = list(csv.DictReader(open(res), delimiter='\t'))
hdfs = {}
try:
    for i, r in enumerate(csv.DictReader(open(hdfs_tsv), delimiter='\t')):
        if i + 1 < skip:  # rows of earlier runs (line 1 is the header)
            continue
        if r['run'] != 'setup' and r['ops_per_sec']:
            mode = 'remote' if r['namespace'].endswith(',remote') else 'standalone'
            hdfs.setdefault((r['op'], mode), []).append(float(r['ops_per_sec']))
except FileNotFoundError:
    pass
fsyncs = {'create': 1, 'mkdirs': 1, 'delete': 1, 'rename': 1}  # create -close: one Raft entry (deferred create)
med = lambda xs: statistics.median(xs) if xs else float('nan')
print()
print(f"{'':<11}{'--------------- standalone ---------------':>42}{'---------------- remote ----------------':>42}")
print(f"{'op':<11}{'HDFS ops/s':>12}{'strato ops/s':>14}{'ratio':>8}{'fsync bound':>13}{'of bound':>10}{'HDFS ops/s':>12}{'strato ops/s':>14}{'ratio':>8}")
for op in ['create', 'mkdirs', 'open', 'fileStatus', 'delete', 'rename']:
    s = [float(r['ops_per_sec']) for r in rows if r['op'] == op and r['mode'] == 'standalone' and r['ops_per_sec']]
    rm = [float(r['ops_per_sec']) for r in rows if r['op'] == op and r['mode'] == 'remote' and r['ops_per_sec']]
    if not s and not rm:
        continue
    h, hr = med(hdfs.get((op, 'standalone'), [])), med(hdfs.get((op, 'remote'), []))
    bound = threads / (fsyncs[op] * fsync_ms / 1000) if op in fsyncs else float('nan')
    f = lambda x: f"{x:,.0f}" if x == x else "-"
    r = lambda a, b: f"{a/b:.2f}x" if a == a and b == b and b else "-"
    print(f"{op:<11}{f(h):>12}{f(med(s)):>14}{r(med(s), h):>8}{f(bound):>13}{(f'{med(s)/bound:.0%}' if bound == bound else '-'):>10}"
          f"{f(hr):>12}{f(med(rm)):>14}{r(med(rm), hr):>8}")
rss = [float(r['peak_rss_mib']) for r in rows if r['op'] in ('open', 'fileStatus') and r['mode'] == 'standalone' and r['peak_rss_mib']]
if rss:
    print(f"\nstrato peak RSS over the read runs: {max(rss):.0f} MiB")
print(f"(medians of the runs; fsync {fsync_ms} ms; bound = threads / (fsyncs per op x fsync latency))")
PY
