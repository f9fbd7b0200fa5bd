#!/usr/bin/env bash
# TeraGen write test and read-back, strato beside HDFS in one run.
#
# HDFS: ../shared/anchors/hdfs/writebench.sh (a 3-datanode MiniDFSCluster,
#   replication 3; per writer create, 10M x 100-byte writes, one hsync,
#   close; 1 and 2 writers; read-back with 1 MiB read() calls), twice a
#   round: with dfs.datanode.synconclose=true (every finished block fsynced:
#   with the hsync before close, every byte on disk when close returns,
#   strato's promise) and with HDFS's default (finished blocks reach the disk
#   when the kernel writes them back; its hsync syncs the block being
#   written).
# strato, the same bytes per writer: `strato bench teragen 20000000 ...
#   --writers 2 --no-checksum --read-back 1MiB` (TeraGen's rows split
#   between the two writers: 10M rows, 1 GB each, as each HDFS writer writes;
#   no CHECKSUM counter, as the anchor's writers compute nothing; an in-process
#   cluster: meta + 3 datanodes on loopback, replication THREE, CRC32C; one
#   write call per key and one per value, one hsync, close). With EXTRAS=1
#   (the default), labelled extras: TeraGen's 10M rows split between 2
#   writers (0.5 GB each), and `strato bench ockg` (100 keys x 10 MiB, 10
#   threads).
# The disk: the three replicas' bytes of both writers (6 GB for 2 writers
# of 1 GB) as three concurrent `dd` streams, once with oflag=direct and once
# through the page cache with conv=fsync; the faster is the round's floor,
# the least time a writer can take when every replica is on this disk.
# The page cache: the most dirty memory (bytes written, not yet on the disk)
# during each system's writes and what is still dirty when they return: what
# an hsync left to write.
# With NO_WRITE_CACHE=1, strato runs a second time each round with its
# datanodes' --no-write-cache (every replica around the page cache, the
# pipeline leader's too: reads then come from the disk), reported beside.
# The order of the systems turns each round, so that all see the same
# machine load.
#
# Env: HDFS_ANCHOR_WORK (required: a folder for the anchor's jars and data;
# run ../shared/anchors/hdfs/fetch-deps.sh with it once), ANCHOR (the
# anchor's folder; default ../shared/anchors/hdfs), RUNS (default 3),
# ROWS (default 10000000: rows per writer, 100 bytes each), EXTRAS (1),
# NO_WRITE_CACHE (0).
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
rm -f "$out"/*.log "$out"/*.txt "$out"/*.tsv "$HDFS_ANCHOR_WORK/writebench/results.tsv"

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

# hdfs_round TAG CONF R: the anchor's writebench (2 writers, read-back) on a
# fresh MiniDFSCluster with the extra server settings CONF; its rows go to
# $out/TAG-R.tsv.
hdfs_round() {
	local tag=$1 conf=$2 r=$3
	echo "== round $r/$RUNS: HDFS writebench${conf:+ with $conf} (1 and 2 writers, read-back)"
	rm -f "$HDFS_ANCHOR_WORK/writebench/results.tsv"
	watch "$out/dirty-$tag-$r.txt" env HDFS_CONF="$conf" RUNS=1 RECORDS="$ROWS" TERAGEN=0 "$anchor/writebench.sh" > "$out/$tag-$r.log" 2>&1 || { tail -40 "$out/$tag-$r.log"; exit 1; }
	cp "$HDFS_ANCHOR_WORK/writebench/results.tsv" "$out/$tag-$r.tsv"
}
# strato_round TAG R [FLAGS...]: strato bench teragen with FLAGS; its log
# goes to $out/TAG-R.log.
strato_round() {
	local tag=$1 r=$2
	shift 2
	echo "== round $r/$RUNS: strato bench teragen ($((2 * ROWS)) rows, 2 writers of $ROWS rows each, as each HDFS writer; read-back)${*:+ $*}"
	watch "$out/dirty-$tag-$r.txt" ./bin/strato bench teragen "$((2 * ROWS))" "/vol1/bench/tg$r" --writers 2 --no-checksum --read-back 1MiB --read-back-checksum=false "$@" > "$out/$tag-$r.log" 2>&1 || { tail -40 "$out/$tag-$r.log"; exit 1; }
}
# disk_round R: the replicas' bytes of two writers (3 x 2 x ROWS x 100) as
# three concurrent streams, timed two ways: direct I/O, and through the
# page cache with one fsync at the end (on some days this disk takes the
# page cache's larger writes faster than 4 MiB direct ones). The faster is
# the round's floor.
disk_round() {
	local r=$1 count=$((2 * ROWS * 100 / 4194304)) ddd t0 t1 t1b t2
	echo "== round $r/$RUNS: the disk: 3 x dd bs=4M count=$count at once, oflag=direct, then buffered with conv=fsync"
	ddd=$(mktemp -d "${TMPDIR:-/tmp}/teragen-dd.XXXXXX")
	t0=$(date +%s%N)
	for i in 1 2 3; do dd if=/dev/zero of="$ddd/dd$i" bs=4M count="$count" oflag=direct conv=fsync 2>/dev/null & done
	wait
	t1=$(date +%s%N)
	rm -f "$ddd"/dd*
	sync
	t1b=$(date +%s%N)
	for i in 1 2 3; do dd if=/dev/zero of="$ddd/dd$i" bs=4M count="$count" conv=fsync 2>/dev/null & done
	wait
	t2=$(date +%s%N)
	rm -rf "$ddd"
	echo "$(((t1 - t0) / 1000000)) $((3 * count * 4194304)) $(((t2 - t1b) / 1000000))" > "$out/disk-$r.txt"
}

for r in $(seq 1 "$RUNS"); do
	# The order turns each round: HDFS default, HDFS synconclose, strato;
	# then strato first; then synconclose first.
	case $((r % 3)) in
	1) order="hdfs hdfssync strato" ;;
	2) order="strato hdfs hdfssync" ;;
	0) order="hdfssync strato hdfs" ;;
	esac
	if [ "${NO_WRITE_CACHE:-0}" = 1 ]; then
		if [ $((r % 2)) = 1 ]; then order=${order/strato/strato stratonc}; else order=${order/strato/stratonc strato}; fi
	fi
	for sys_ in $order; do
		case $sys_ in
		hdfs) hdfs_round hdfs "" "$r" ;;
		hdfssync) hdfs_round hdfssync dfs.datanode.synconclose=true "$r" ;;
		strato) strato_round strato "$r" ;;
		stratonc) strato_round stratonc "$r" --no-write-cache ;;
		esac
	done
	if [ "${EXTRAS:-1}" = 1 ]; then
		echo "== round $r/$RUNS: extra: strato bench teragen ($ROWS rows, 2 writers: half of an HDFS writer's bytes each)"
		./bin/strato bench teragen "$ROWS" "/vol1/bench/tgx$r" --writers 2 > "$out/strato-x$r.log" 2>&1 || { tail -40 "$out/strato-x$r.log"; exit 1; }
		echo "== round $r/$RUNS: strato bench ockg (100 x 10 MiB, 10 threads)"
		./bin/strato bench ockg > "$out/ockg-$r.log" 2>&1 || { tail -40 "$out/ockg-$r.log"; exit 1; }
	fi
	disk_round "$r"
done

python3 - "$out" "$RUNS" "$ROWS" <<'PY'
import csv, os, re, statistics, sys
out, runs, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def med(xs): return statistics.median(xs) if xs else float('nan')
def hdfs(tag):
    """per-writer write+hsync+close (ms), the slower writer of each round,
    2-writer write MB/s, 2-reader read MB/s."""
    wr, slow, wmb, rd = [], [], [], []
    for r in range(1, runs + 1):
        rows = [x for x in csv.DictReader(open(f"{out}/{tag}-{r}.tsv"), delimiter='\t') if x['run'] != 'warmup']
        w = [float(x['write_sum_ms']) + float(x['hsync_ms']) + float(x['close_ms'])
             for x in rows if x['mode'] == 'write' and x['streams'] == '2' and x['worker'] != 'all']
        wr += w
        slow.append(max(w))
        wmb += [float(x['MBps']) for x in rows if x['mode'] == 'write' and x['streams'] == '2' and x['worker'] == 'all']
        rd += [float(x['MBps']) for x in rows if x['mode'] == 'read' and x['streams'] == '2' and x['worker'] == 'all']
    return wr, slow, wmb, rd
h, hs = hdfs('hdfs'), hdfs('hdfssync')
blk_re = r"write\.allTime: (\d+)\nhsync\.call: \d+\nhsync\.allTime: (\d+)\nclose\.call: \d+\nclose\.allTime: (\d+)"
def strato(tag):
    """per-writer write+hsync+close (ms), the slower writer of each round,
    2-writer write MB/s, 2-reader read MB/s."""
    wr, slow, wmb, rd = [], [], [], []
    for r in range(1, runs + 1):
        log = open(f"{out}/{tag}-{r}.log").read()
        w = [sum(map(float, b)) for b in re.findall(blk_re, log)]
        wr += w
        slow.append(max(w))
        wmb += [float(x) for x in re.findall(r"^MB/s: ([\d.]+)", log, re.M)]
        rd += [float(x) for x in re.findall(r"^read back: .* ([\d.]+) MB/s", log, re.M)]
    return wr, slow, wmb, rd
s_wr, s_slow, s_wmb, s_rd = strato('strato')
nc = strato('stratonc') if os.path.exists(f"{out}/stratonc-1.log") else None
o_mb, x_wr, floor_ms, direct_ms, buf_ms, nbytes = [], [], [], [], [], 0
dirty = {k: [] for k in ('hdfs', 'hdfssync', 'strato') + (('stratonc',) if nc else ())}
for r in range(1, runs + 1):
    if os.path.exists(f"{out}/strato-x{r}.log"):
        x_wr += [sum(map(float, b)) for b in re.findall(blk_re, open(f"{out}/strato-x{r}.log").read())]
        o_mb += [float(x) for x in re.findall(r"Throughput\s*: ([\d.]+) MB/s", open(f"{out}/ockg-{r}.log").read())]
    for k in dirty:
        dirty[k].append(list(map(int, open(f"{out}/dirty-{k}-{r}.txt").read().split())))
    d, nbytes, b = map(int, open(f"{out}/disk-{r}.txt").read().split())
    direct_ms.append(d); buf_ms.append(b); floor_ms.append(min(d, b))
ratio_floor = [s / f for s, f in zip(s_slow, floor_ms)]
print(f"medians of {runs} rounds ({len(h[0])} + {len(hs[0])} HDFS and {len(s_wr)} strato writers)")
print("| measure | HDFS synconclose=true (strato's promise) | HDFS default | strato | strato / HDFS synconclose | strato / HDFS default |")
print("|---|---:|---:|---:|---:|---:|")
print(f"| write+hsync+close per writer, 2 writers of {rows * 100 / 1e9:g} GB (ms) | {med(hs[0]):.0f} | {med(h[0]):.0f} | {med(s_wr):.0f} | **{med(s_wr)/med(hs[0]):.2f}** | **{med(s_wr)/med(h[0]):.2f}** |")
print(f"| write MB/s, 2 writers | {med(hs[2]):.1f} | {med(h[2]):.1f} | {med(s_wmb):.1f} | {med(s_wmb)/med(hs[2]):.2f}x | {med(s_wmb)/med(h[2]):.2f}x |")
print(f"| read-back MB/s, 2 readers | {med(hs[3]):.1f} | {med(h[3]):.1f} | {med(s_rd):.1f} | {med(s_rd)/med(hs[3]):.2f}x | {med(s_rd)/med(h[3]):.2f}x |")
if nc:
    print(f"| strato --no-write-cache: write+hsync+close per writer (ms) | | | {med(nc[0]):.0f} | **{med(nc[0])/med(hs[0]):.2f}** | **{med(nc[0])/med(h[0]):.2f}** |")
    print(f"| strato --no-write-cache: write MB/s, 2 writers | | | {med(nc[2]):.1f} | {med(nc[2])/med(hs[2]):.2f}x | {med(nc[2])/med(h[2]):.2f}x |")
    print(f"| strato --no-write-cache: read-back MB/s, 2 readers | | | {med(nc[3]):.1f} | {med(nc[3])/med(hs[3]):.2f}x | {med(nc[3])/med(h[3]):.2f}x |")
print(f"| page cache dirty during the run, most / at its end (MB) | {med([d[0] for d in dirty['hdfssync']]):.0f} / {med([d[1] for d in dirty['hdfssync']]):.0f} | {med([d[0] for d in dirty['hdfs']]):.0f} / {med([d[1] for d in dirty['hdfs']]):.0f} | {med([d[0] for d in dirty['strato']]):.0f} / {med([d[1] for d in dirty['strato']]):.0f} | | |")
print()
print(f"the disk, the replicas' bytes of both writers ({nbytes / 1e9:.1f} GB) as 3 concurrent streams, each round:")
for r in range(runs):
    print(f"  round {r + 1}: direct {direct_ms[r]} ms, buffered+fsync {buf_ms[r]} ms: floor {floor_ms[r]} ms ({nbytes / 1e6 / (floor_ms[r] / 1e3):.1f} MB/s); strato's slower writer {s_slow[r]:.0f} ms: **{ratio_floor[r]:.2f}x** the floor")
print(f"strato / floor, median of the rounds: **{med(ratio_floor):.2f}**")
if nc:
    nc_floor = [s / f for s, f in zip(nc[1], floor_ms)]
    print(f"strato --no-write-cache's slower writer: {', '.join(f'{s:.0f} ms ({x:.2f}x)' for s, x in zip(nc[1], nc_floor))}; / floor, median: **{med(nc_floor):.2f}**")
if x_wr:
    print(f"extra: strato writers of half those bytes (TeraGen's rows split in 2): {med(x_wr):.0f} ms per writer (not comparable: half the work)")
    print(f"extra: strato ockg 100 x 10 MiB, 10 threads: {med(o_mb):.1f} MB/s")
PY
