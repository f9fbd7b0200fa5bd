#!/usr/bin/env bash
# TeraGen write test and read-back, strato beside HDFS in one run.
#
# HDFS: ../shared/anchors/hdfs/writebench.sh (a 3-datanode MiniDFSCluster,
#   replication 3; per writer create, 10M x 100-byte writes, one hsync,
#   close; 1 and 2 writers; read-back with 1 MiB read() calls).
# strato, the same bytes per writer: `strato bench teragen 20000000 ...
#   --writers 2 --no-checksum --read-back 1MiB` (TeraGen's rows split
#   between the two writers: 10M rows, 1 GB each, as each HDFS writer writes;
#   no CHECKSUM counter, as the anchor's writers compute nothing; an in-process
#   cluster: meta + 3 datanodes on loopback, replication THREE, CRC32C; one
#   write call per key and one per value, one hsync, close); as a labelled
#   extra, TeraGen's 10M rows split between 2 writers (0.5 GB each); then
#   `strato bench ockg` (100 keys x 10 MiB, 10 threads).
# Rounds alternate HDFS and strato so that both see the same machine load.
#
# Env: HDFS_ANCHOR_WORK (required: a folder for the anchor's jars and data;
# run ../shared/anchors/hdfs/fetch-deps.sh with it once), ANCHOR (the
# anchor's folder; default ../shared/anchors/hdfs), RUNS (default 3),
# ROWS (default 10000000: rows per writer, 100 bytes each).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${HDFS_ANCHOR_WORK:?set HDFS_ANCHOR_WORK to the anchor work folder}"
export HDFS_ANCHOR_WORK
RUNS="${RUNS:-3}"
ROWS="${ROWS:-10000000}"
anchor=${ANCHOR:-../shared/anchors/hdfs}
out="${OUT:-$HDFS_ANCHOR_WORK/teragen-vs-hdfs}"
mkdir -p "$out"
make -s build
rm -f "$out"/*.log "$HDFS_ANCHOR_WORK/writebench/results.tsv"

for r in $(seq 1 "$RUNS"); do
	echo "== round $r/$RUNS: HDFS writebench (1 and 2 writers, read-back)"
	RUNS=1 RECORDS="$ROWS" TERAGEN=0 "$anchor/writebench.sh" > "$out/hdfs-$r.log" 2>&1 || { tail -40 "$out/hdfs-$r.log"; exit 1; }
	echo "== round $r/$RUNS: strato bench teragen ($((2 * ROWS)) rows, 2 writers of $ROWS rows each, as each HDFS writer; read-back)"
	./bin/strato bench teragen "$((2 * ROWS))" "/vol1/bench/tg$r" --writers 2 --no-checksum --read-back 1MiB --read-back-checksum=false > "$out/strato-$r.log" 2>&1 || { tail -40 "$out/strato-$r.log"; exit 1; }
	echo "== round $r/$RUNS: extra: strato bench teragen ($ROWS rows, 2 writers: half of an HDFS writer's bytes each)"
	./bin/strato bench teragen "$ROWS" "/vol1/bench/tgx$r" --writers 2 > "$out/strato-x$r.log" 2>&1 || { tail -40 "$out/strato-x$r.log"; exit 1; }
	echo "== round $r/$RUNS: strato bench ockg (100 x 10 MiB, 10 threads)"
	./bin/strato bench ockg > "$out/ockg-$r.log" 2>&1 || { tail -40 "$out/ockg-$r.log"; exit 1; }
done

python3 - "$out" "$HDFS_ANCHOR_WORK/writebench/results.tsv" "$RUNS" <<'PY'
import csv, re, statistics, sys
out, tsv, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [r for r in csv.DictReader(open(tsv), delimiter='\t') if r['run'] != 'warmup']
def med(xs): return statistics.median(xs) if xs else float('nan')
# HDFS, 2 writers: per writer write+hsync+close (ms); read MB/s of 2 readers.
h_wr = [float(r['write_sum_ms']) + float(r['hsync_ms']) + float(r['close_ms'])
        for r in rows if r['mode'] == 'write' and r['streams'] == '2' and r['worker'] != 'all']
h_wr1 = [float(r['write_sum_ms']) + float(r['hsync_ms']) + float(r['close_ms'])
        for r in rows if r['mode'] == 'write' and r['streams'] == '1' and r['worker'] != 'all']
h_rd = [float(r['MBps']) for r in rows if r['mode'] == 'read' and r['streams'] == '2' and r['worker'] == 'all']
h_wmb = [float(r['MBps']) for r in rows if r['mode'] == 'write' and r['streams'] == '2' and r['worker'] == 'all']
s_wr, s_rd, s_wmb, o_mb, x_wr = [], [], [], [], []
for r in range(1, runs + 1):
    log = open(f"{out}/strato-{r}.log").read()
    for blk in re.findall(r"write\.allTime: (\d+)\nhsync\.call: \d+\nhsync\.allTime: (\d+)\nclose\.call: \d+\nclose\.allTime: (\d+)", log):
        s_wr.append(sum(map(float, blk)))
    s_wmb += [float(x) for x in re.findall(r"^MB/s: ([\d.]+)", log, re.M)]
    s_rd += [float(x) for x in re.findall(r"^read back: .* ([\d.]+) MB/s", log, re.M)]
    for blk in re.findall(r"write\.allTime: (\d+)\nhsync\.call: \d+\nhsync\.allTime: (\d+)\nclose\.call: \d+\nclose\.allTime: (\d+)", open(f"{out}/strato-x{r}.log").read()):
        x_wr.append(sum(map(float, blk)))
    o_mb += [float(x) for x in re.findall(r"Throughput\s*: ([\d.]+) MB/s", open(f"{out}/ockg-{r}.log").read())]
print(f"medians of {runs} rounds ({len(h_wr)} HDFS and {len(s_wr)} strato writers)")
print(f"| measure | HDFS | strato | ratio |")
print(f"|---|---|---|---|")
print(f"| write+hsync+close per writer, 2 writers of the same bytes (ms) | {med(h_wr):.0f} | {med(s_wr):.0f} | strato/HDFS {med(s_wr)/med(h_wr):.2f} |")
print(f"| extra: strato writers of half those bytes (TeraGen's rows split in 2) (ms) | {med(h_wr):.0f} | {med(x_wr):.0f} | not comparable: half the work |")
print(f"| write+hsync+close, 1 writer (HDFS, ms) | {med(h_wr1):.0f} | | |")
print(f"| write MB/s, 2 writers | {med(h_wmb):.1f} | {med(s_wmb):.1f} | {med(s_wmb)/med(h_wmb):.2f}x |")
print(f"| read-back MB/s, 2 readers | {med(h_rd):.1f} | {med(s_rd):.1f} | {med(s_rd)/med(h_rd):.2f}x |")
print(f"| ockg 100 x 10 MiB, 10 threads, MB/s | (stream write above: {med(h_wmb):.1f}) | {med(o_mb):.1f} | {med(o_mb)/med(h_wmb):.2f}x |")
PY
