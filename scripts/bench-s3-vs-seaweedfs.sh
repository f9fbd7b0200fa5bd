#!/usr/bin/env bash
# strato's S3 gateway against SeaweedFS's S3 server and versitygw, with the
# same load generator (strato bench s3), in alternating rounds; prints the
# medians and the ratios (docs/benchmarks.md, issue 15's targets):
#
#   strato    strato dev (meta + 3 datanodes, replication THREE) and a
#             `strato s3` gateway process of its own (whose CPU is measured)
#   seaweedfs weed master (defaultReplication 002: three copies) + 3 weed
#             volume servers + weed filer + weed s3, on 127.0.0.1
#   versitygw versitygw posix on a local directory: one copy, no cluster —
#             the floor of what an S3 gateway costs on this machine
#
# Workloads (BENCH_WORKLOADS): "PUT 64MiB", "GET 64MiB", "PUT 1KiB", each
# for BENCH_DURATION (30s) with BENCH_CLIENTS (16) clients, BENCH_ROUNDS (3)
# rounds, the systems' order reversed every other round. Targets (issue 15,
# medians): 64 MiB PUT and GET MB/s >= 1.5x SeaweedFS's; 1 KiB PUT ops/s >=
# SeaweedFS's. The gateway's CPU seconds per GB moved are printed for each.
#
# VERSIONING=1 turns versioning on in every system's benchmark buckets
# (bench s3 --versioning: PutBucketVersioning, checked with
# GetBucketVersioning, so a system that does not keep versions fails the run
# rather than being measured unversioned; the cleanups delete every
# version). versitygw then keeps its versions in a --versioning-dir. Issue
# 37's targets, versioning on in both: PUT 1 KiB >= 1.5x SeaweedFS's, 64 MiB
# PUT and GET >= 2x. SeaweedFS has S3 bucket versioning since 3.9x (4.53,
# the proxy's latest in November 2026, has it); a weed built before is
# rebuilt by removing $STRATO_CACHE/seaweedfs-build/weed.
#
# SeaweedFS is built outside the repository (its go.mod has a replace
# directive, so `go install` refuses it): in a scratch module under
# $STRATO_CACHE/seaweedfs-build requiring github.com/seaweedfs/seaweedfs at
# SEAWEEDFS_VERSION (default: the module proxy's latest) with the same
# replace directives. versitygw is make s3-conformance's bin/tools/versitygw
# (installed here if missing).
#
# STRATO_BASE=BINARY adds the system "stratobase": strato as above, run with
# another build of strato (the load generator stays this tree's), for a
# before/after in the same alternating rounds:
# BENCH_SYSTEMS="strato stratobase seaweedfs" STRATO_BASE=/tmp/strato-old.
#
# Everything runs on 127.0.0.1 under BENCH_DIR (default a temporary
# directory, removed at the end unless BENCH_KEEP=1). Run it alone on the
# machine: benchmarks side by side measure each other.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
duration=${BENCH_DURATION:-30s}
clients=${BENCH_CLIENTS:-16}
rounds=${BENCH_ROUNDS:-3}
IFS=',' read -r -a workloads <<<"${BENCH_WORKLOADS:-PUT 64MiB,GET 64MiB,PUT 1KiB}"
systems=(${BENCH_SYSTEMS:-strato seaweedfs versitygw})
versioning=()
[ "${VERSIONING:-0}" = 1 ] && versioning=(--versioning)
cache=${STRATO_CACHE:-$repo/.cache}
work=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/bench-s3.XXXXXX")}
mkdir -p "$work" "$cache"
ak=bench-access-key
sk=bench-secret-key-0123456789
pids=()
stop_all() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
}
cleanup() { stop_all; [ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT

if ps -eo args | grep -v grep | grep -q "strato bench\|nnbench\|writebench"; then
	echo "bench-s3-vs-seaweedfs: another benchmark runs on this machine; not measuring" >&2
	exit 1
fi

# port: a free port below 55000 whose +10000 is free too (SeaweedFS serves
# gRPC on its HTTP port + 10000).
port() {
	python3 - <<-'PY'
	import random, socket
	while True:
	    p = random.randint(20000, 54999)
	    try:
	        for q in (p, p + 10000):
	            s = socket.socket(); s.bind(("127.0.0.1", q)); s.close()
	    except OSError:
	        continue
	    print(p); break
	PY
}
wait_http() { # URL: until something answers
	for _ in $(seq 300); do curl -s -o /dev/null "$1" && return 0; sleep 0.2; done
	echo "bench-s3-vs-seaweedfs: nothing answers at $1" >&2; return 1
}

# ---- the tools ----------------------------------------------------------------
make -s build
strato=$repo/bin/strato
vgw=$repo/bin/tools/versitygw
[ -x "$vgw" ] || GOBIN=$repo/bin/tools go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
weed=$cache/seaweedfs-build/weed
if [[ " ${systems[*]} " == *" seaweedfs "* ]] && [ ! -x "$weed" ]; then
	echo "== building SeaweedFS (${SEAWEEDFS_VERSION:-latest}) in $cache/seaweedfs-build"
	(
		set -e
		mkdir -p "$cache/seaweedfs-build" && cd "$cache/seaweedfs-build"
		[ -f go.mod ] || go mod init seaweedfs-build >/dev/null 2>&1
		ver=${SEAWEEDFS_VERSION:-latest}
		mod=$(go mod download -json "github.com/seaweedfs/seaweedfs@$ver" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
		# The replace directives in force in SeaweedFS's go.mod, made ours.
		grep -E '^replace ' "$mod" | sed 's/^replace //' | while read -r from _ to tver; do
			go mod edit -replace "$from=$to${tver:+@$tver}"
		done
		GOFLAGS=-mod=mod go get "github.com/seaweedfs/seaweedfs/weed@$ver"
		GOFLAGS=-mod=mod CGO_ENABLED=0 go build -o weed github.com/seaweedfs/seaweedfs/weed
	)
fi
if [[ " ${systems[*]} " == *" seaweedfs "* ]]; then
	echo "== SeaweedFS: $("$weed" version 2>&1 | head -1)"
fi

# ---- the systems ----------------------------------------------------------------
# retire DIR: a finished round's data. Its large files go at once (the
# disk space); the many small ones stay until the run ends. Removing tens of
# thousands of files between rounds would slow every file create of the next
# rounds for minutes on a file system that scans recently freed inodes at
# each create (ext4 without a journal, as on the machines these figures come
# from): the cost would land on whichever system runs next, not on the one
# that made the files.
retire() { find "$1" -type f -size +1M -delete 2>/dev/null || true; }

# start_<system> starts it (its data in $work/<system>-<round>, named by
# data), sets endpoint and gwpid (the S3 server's PID).
start_strato() {
	local meta s3p
	meta=127.0.0.1:$(port) s3p=127.0.0.1:$(port)
	data=$work/${tag:-strato}-$r
	"$strato" dev --data "$data" --meta-addr "$meta" --s3-addr "" --http "" >"$work/strato-dev.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 300); do grep -q "strato dev: ready" "$work/strato-dev.log" && break; sleep 0.2; done
	printf '%s %s\n' "$ak" "$sk" >"$work/strato-keys"
	"$strato" s3 --meta "$meta" --listen "$s3p" --credentials "$work/strato-keys" >"$work/strato-s3.log" 2>&1 &
	gwpid=$!
	pids+=($gwpid)
	endpoint=http://$s3p
	wait_http "$endpoint"
}
start_stratobase() {
	local strato=${STRATO_BASE:?set STRATO_BASE to the strato binary to compare} tag=stratobase
	start_strato
}
start_seaweedfs() {
	local mp fp sp d
	mp=$(port) fp=$(port) sp=$(port)
	data=$work/sw-$r
	mkdir -p "$data/m"
	"$weed" master -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="$mp" -mdir="$data/m" -defaultReplication=002 \
		-volumeSizeLimitMB=1024 >"$work/sw-master.log" 2>&1 &
	pids+=($!)
	wait_http "http://127.0.0.1:$mp/cluster/status"
	for i in 1 2 3; do
		d=$data/v$i && mkdir -p "$d"
		"$weed" volume -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="$(port)" -dir="$d" -max=100 \
			-master="127.0.0.1:$mp" >"$work/sw-volume$i.log" 2>&1 &
		pids+=($!)
	done
	mkdir -p "$data/f"
	"$weed" filer -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="$fp" -master="127.0.0.1:$mp" \
		-defaultStoreDir="$data/f" >"$work/sw-filer.log" 2>&1 &
	pids+=($!)
	wait_http "http://127.0.0.1:$fp/"
	cat >"$work/sw-s3.json" <<-EOF
	{"identities": [{"name": "bench", "credentials": [{"accessKey": "$ak", "secretKey": "$sk"}], "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
	EOF
	"$weed" s3 -ip.bind=127.0.0.1 -port="$sp" -filer="127.0.0.1:$fp" -config="$work/sw-s3.json" >"$work/sw-s3.log" 2>&1 &
	gwpid=$!
	pids+=($gwpid)
	endpoint=http://127.0.0.1:$sp
	wait_http "$endpoint"
	sleep 2 # the volume servers register with the master
}
start_versitygw() {
	local p
	p=$(port)
	data=$work/vgw-$r
	mkdir -p "$data"
	local vdir=()
	if [ ${#versioning[@]} -gt 0 ]; then
		mkdir -p "$data-versions"
		vdir=(--versioning-dir "$data-versions")
	fi
	"$vgw" --access "$ak" --secret "$sk" --port "127.0.0.1:$p" posix "${vdir[@]}" "$data" >"$work/vgw.log" 2>&1 &
	gwpid=$!
	pids+=($gwpid)
	endpoint=http://127.0.0.1:$p
	wait_http "$endpoint"
}

# ---- the rounds -------------------------------------------------------------------
results=$work/results.txt
: >"$results"
export AWS_ACCESS_KEY_ID=$ak AWS_SECRET_ACCESS_KEY=$sk
unset AWS_ENDPOINT_URL AWS_CA_BUNDLE
for r in $(seq "$rounds"); do
	order=("${systems[@]}")
	if [ $((r % 2)) = 0 ]; then order=($(printf '%s\n' "${systems[@]}" | tac)); fi
	for sys in "${order[@]}"; do
		echo "== round $r: $sys${versioning:+ (versioning on)}"
		"start_$sys"
		# Untimed warm-up: SeaweedFS grows its volumes at the first writes,
		# strato makes its first containers.
		"$strato" bench s3 --endpoint "$endpoint" --op put --size 1MiB -c 4 --count 40 --bucket warmup >/dev/null 2>>"$work/bench.log"
		for w in "${workloads[@]}"; do
			read -r op size <<<"$w"
			out=$("$strato" bench s3 --endpoint "$endpoint" --op "$op" --size "$size" -c "$clients" --duration "$duration" \
				--bucket "bench-$r" "${versioning[@]}" --server-pid "$gwpid" 2>>"$work/bench.log") || { echo "$out"; echo "bench failed ($sys $w)" >&2; exit 1; }
			line=$(grep '^summary ' <<<"$out" | head -1)
			echo "  $w: $(sed 's/.*ops_per_sec=\([^ ]*\) mb_per_sec=\([^ ]*\) p50_ms=\([^ ]*\) p99_ms=\([^ ]*\).*server_cpu_s_per_gb=\([^ ]*\).*server_peak_rss=\([^ ]*\).*/\1 ops\/s, \2 MB\/s, p50 \3 ms, p99 \4 ms, gateway \5 CPU-s\/GB, peak RSS \6 B/' <<<"$line")"
			echo "$sys|$w|$line" >>"$results"
		done
		stop_all
		retire "$data"
		[ ! -d "$data-versions" ] || retire "$data-versions"
	done
done

# ---- medians and ratios ------------------------------------------------------------
echo
echo "== medians of $rounds rounds ($clients clients, $duration each${versioning:+, versioning on})"
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
med() { grep "^$1|$2|" "$results" | cut -d'|' -f3 | field "$3" | median; }
printf '%-10s %-10s %12s %12s %10s %10s %14s\n' SYSTEM WORKLOAD OPS/S MB/S P50_MS P99_MS CPU-S/GB
for sys in "${systems[@]}"; do
	for w in "${workloads[@]}"; do
		printf '%-10s %-10s %12s %12s %10s %10s %14s\n' "$sys" "$w" "$(med "$sys" "$w" ops_per_sec)" "$(med "$sys" "$w" mb_per_sec)" \
			"$(med "$sys" "$w" p50_ms)" "$(med "$sys" "$w" p99_ms)" "$(med "$sys" "$w" server_cpu_s_per_gb)"
	done
done
echo
echo "== ratios (strato / reference, medians)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
for ref in seaweedfs versitygw stratobase; do
	[[ " ${systems[*]} " == *" $ref "* ]] || continue
	for w in "${workloads[@]}"; do
		key=mb_per_sec
		[[ "$w" == *KiB* ]] && key=ops_per_sec
		printf '%-10s %-10s %-12s %s' "$ref" "$w" "$key" "$(ratio "$(med strato "$w" $key)" "$(med $ref "$w" $key)")"
		case "${versioning:+v}|$ref|$w" in
		"|seaweedfs|PUT 64MiB" | "|seaweedfs|GET 64MiB") echo "   (target >= 1.50x)" ;;
		"|seaweedfs|PUT 1KiB") echo "   (target >= 1.00x; issue 41: >= 1.50x)" ;;
		"v|seaweedfs|PUT 64MiB" | "v|seaweedfs|GET 64MiB") echo "   (target, versioning on: >= 2.00x)" ;;
		"v|seaweedfs|PUT 1KiB") echo "   (target, versioning on: >= 1.50x)" ;;
		*) echo ;;
		esac
	done
done
