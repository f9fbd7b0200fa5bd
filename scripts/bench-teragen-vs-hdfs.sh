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
# The disk: three `dd oflag=direct` of a replica's bytes at once (what the
# three replicas of a writer's data make the one disk write: 6 GB for 2
# writers of 1 GB), the floor of a writer's time when every replica is on
# this disk, set beside 0.5x HDFS's time.
# The page cache: the most dirty memory (bytes written, not yet on the disk)
# during each system's writes and what is still dirty when they return: what
# an hsync left to write. strato's hsync makes every byte of the writer
# durable on every replica; HDFS's syncs the block being written, its
# earlier blocks having been finalized without a sync
# (dfs.datanode.synconclose, false by default).
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
rm -f "$out"/*.log "$out"/*.txt "$HDFS_ANCHOR_WORK/writebench/results.tsv"

dirty_mb() { awk '/^Dirty:/ {print int($2 / 1024)}' /proc/meminfo; }
# watch FILE CMD...: runs CMD with the page cache's dirty MB sampled every
# 0.2 s; FILE gets "most-dirty dirty-at-the-end".
watch() {
	local file=$1 max=0 d pid rc=0
	shift
	"$@" & pid=$!
	while kill -0 "$pid" 2>/dev/null; do d=$(dirty_mb); [ "$d" -gt "$max" ] && max=$d; sleep 0.2; done
	wait "$pid" || rc=$?
	echo "$max $(dirty_mb)" > "$file"
	return "$rc"
}

for r in $(seq 1 "$RUNS"); do
	echo "== round $r/$RUNS: HDFS writebench (1 and 2 writers, read-back)"
	watch "$out/dirty-hdfs-$r.txt" env RUNS=1 RECORDS="$ROWS" TERAGEN=0 "$anchor/writebench.sh" > "$out/hdfs-$r.log" 2>&1 || { tail -40 "$out/hdfs-$r.log"; exit 1; }
	echo "== round $r/$RUNS: strato bench teragen ($((2 * ROWS)) rows, 2 writers of $ROWS rows each, as each HDFS writer; read-back)"
	watch "$out/dirty-strato-$r.txt" ./bin/strato bench teragen "$((2 * ROWS))" "/vol1/bench/tg$r" --writers 2 --no-checksum --read-back 1MiB --read-back-checksum=false > "$out/strato-$r.log" 2>&1 || { tail -40 "$out/strato-$r.log"; exit 1; }
	echo "== round $r/$RUNS: extra: strato bench teragen ($ROWS rows, 2 writers: half of an HDFS writer's bytes each)"
	./bin/strato bench teragen "$ROWS" "/vol1/bench/tgx$r" --writers 2 > "$out/strato-x$r.log" 2>&1 || { tail -40 "$out/strato-x$r.log"; exit 1; }
	echo "== round $r/$RUNS: strato bench ockg (100 x 10 MiB, 10 threads)"
	./bin/strato bench ockg > "$out/ockg-$r.log" 2>&1 || { tail -40 "$out/ockg-$r.log"; exit 1; }
	# Two writers' replicas: 3 x 2 x ROWS x 100 bytes, as three streams.
	count=$((2 * ROWS * 100 / 4194304))
	echo "== round $r/$RUNS: the disk: 3 x dd bs=4M count=$count oflag=direct at once"
	ddd=$(mktemp -d "${TMPDIR:-/tmp}/teragen-dd.XXXXXX")
	t0=$(date +%s%N)
	for i in 1 2 3; do dd if=/dev/zero of="$ddd/dd$i" bs=4M count="$count" oflag=direct conv=fsync 2>/dev/null & done
	wait
	t1=$(date +%s%N)
	rm -rf "$ddd"
	echo "$(((t1 - t0) / 1000000)) $((3 * count * 4194304))" > "$out/disk-$r.txt"
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
s_wr, s_rd, s_wmb, o_mb, x_wr, d_ms, d_mb = [], [], [], [], [], [], []
dirty = {'hdfs': [], 'strato': []}
for r in range(1, runs + 1):
    log = open(f"{out}/strato-{r}.log").read()
    for blk in re.findall(r"write\.allTime: (\d+)\nhsync\.call: \d+\nhsync\.allTime: (\d+)\nclose\.call: \d+\nclose\.allTime: (\d+)", log):
        s_wr.append(sum(map(float, blk)))
    s_wmb += [float(x) for x in re.findall(r"^MB/s: ([\d.]+)", log, re.M)]
    s_rd += [float(x) for x in re.findall(r"^read back: .* ([\d.]+) MB/s", log, re.M)]
    for blk in re.findall(r"write\.allTime: (\d+)\nhsync\.call: \d+\nhsync\.allTime: (\d+)\nclose\.call: \d+\nclose\.allTime: (\d+)", open(f"{out}/strato-x{r}.log").read()):
        x_wr.append(sum(map(float, blk)))
    o_mb += [float(x) for x in re.findall(r"Throughput\s*: ([\d.]+) MB/s", open(f"{out}/ockg-{r}.log").read())]
    for sys_ in dirty:
        dirty[sys_].append(list(map(int, open(f"{out}/dirty-{sys_}-{r}.txt").read().split())))
    ms, n = map(int, open(f"{out}/disk-{r}.txt").read().split())
    d_ms.append(ms)
    d_mb.append(n / 1e6 / (ms / 1e3))
print(f"medians of {runs} rounds ({len(h_wr)} HDFS and {len(s_wr)} strato writers)")
print(f"| measure | HDFS | strato | ratio |")
print(f"|---|---|---|---|")
print(f"| write+hsync+close per writer, 2 writers of the same bytes (ms) | {med(h_wr):.0f} | {med(s_wr):.0f} | strato/HDFS {med(s_wr)/med(h_wr):.2f} |")
print(f"| extra: strato writers of half those bytes (TeraGen's rows split in 2) (ms) | {med(h_wr):.0f} | {med(x_wr):.0f} | not comparable: half the work |")
print(f"| write+hsync+close, 1 writer (HDFS, ms) | {med(h_wr1):.0f} | | |")
print(f"| write MB/s, 2 writers | {med(h_wmb):.1f} | {med(s_wmb):.1f} | {med(s_wmb)/med(h_wmb):.2f}x |")
print(f"| read-back MB/s, 2 readers | {med(h_rd):.1f} | {med(s_rd):.1f} | {med(s_rd)/med(h_rd):.2f}x |")
print(f"| the disk: 3 dd of 2 writers' bytes at once, direct, all replicas' bytes (ms; MB/s) | 0.5x HDFS's writer: {med(h_wr)/2:.0f} | {med(d_ms):.0f}; {med(d_mb):.1f} | floor/target {med(d_ms)/(med(h_wr)/2):.2f} |")
print(f"| page cache dirty during the run, most / at its end (MB) | {med([d[0] for d in dirty['hdfs']]):.0f} / {med([d[1] for d in dirty['hdfs']]):.0f} | {med([d[0] for d in dirty['strato']]):.0f} / {med([d[1] for d in dirty['strato']]):.0f} | |")
print(f"| ockg 100 x 10 MiB, 10 threads, MB/s | (stream write above: {med(h_wmb):.1f}) | {med(o_mb):.1f} | {med(o_mb)/med(h_wmb):.2f}x |")
PY
