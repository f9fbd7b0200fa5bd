#!/usr/bin/env bash
# bench-s3-versioning.sh: a versioned bucket against an unversioned one on
# the gateway of one strato dev (docs/s3.md "Versioning"): PUT 1 KiB, PUT
# 64 MiB and GET 64 MiB (strato bench s3), ROUNDS rounds alternating which
# bucket goes first, medians and the ratio versioned / unversioned; then
# ListObjectVersions over LIST_KEYS versions against ListObjectsV2 over
# LIST_KEYS keys (see the listing below; issue 37's measure is at
# LIST_KEYS=1000000). LISTING_ONLY=1 skips the PUT/GET rounds.
# Environment: ROUNDS (3), DURATION (15s per run), CLIENTS (16), LIST_KEYS
# (20000), LIST_VERSIONS (versions per key, 2), LIST_RUNS (listings timed,
# 3), FILL_CLIENTS (64), LISTING_ONLY.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
rounds=${ROUNDS:-3}
duration=${DURATION:-15s}
clients=${CLIENTS:-16}
list_keys=${LIST_KEYS:-20000}
list_versions=${LIST_VERSIONS:-2}
list_runs=${LIST_RUNS:-3}
fill_clients=${FILL_CLIENTS:-64}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-s3v.XXXXXX")
dev=
cleanup() { [ -z "$dev" ] || { kill "$dev" 2>/dev/null; wait "$dev" 2>/dev/null || true; }; rm -rf "$work"; }
trap cleanup EXIT
make -s build
strato=$repo/bin/strato
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
meta=127.0.0.1:$(port) s3=127.0.0.1:$(port)
"$strato" dev --data "$work/data" --meta-addr "$meta" --s3-addr "$s3" --http "" >"$work/dev.log" 2>&1 &
dev=$!
for _ in $(seq 300); do grep -q "strato dev: ready" "$work/dev.log" && break; sleep 0.2; done
export AWS_ACCESS_KEY_ID=strato-dev AWS_SECRET_ACCESS_KEY=strato-dev-secret AWS_ENDPOINT_URL=http://$s3
"$strato" s3 mb s3://bench-unv >/dev/null
"$strato" s3 mb s3://bench-ver >/dev/null
"$strato" sh bucket update /s3v/bench-ver --versioning enabled --meta "$meta" >/dev/null

# run OP SIZE BUCKET: the summary's ops/s and MB/s
run() {
	local out
	# A run that ends without its summary line (a client error) counts as
	# no result rather than stopping the whole comparison.
	local versioning=
	[ "$3" = bench-ver ] && versioning=--versioning # its cleanup deletes every version
	out=$("$strato" bench s3 --op "$1" --size "$2" --bucket "$3" $versioning -c "$clients" --duration "$duration" 2>&1 | grep '^summary' || true)
	echo "$out" | tr ' ' '\n' | grep -E '^(ops_per_sec|mb_per_sec|p50_ms|p99_ms)=' | tr '\n' ' '
}
declare -A res
workloads=("put 1KiB" "put 64MiB" "get 64MiB")
[ "${LISTING_ONLY:-0}" = 1 ] && workloads=()
for w in "${workloads[@]}"; do
	for r in $(seq 1 "$rounds"); do
		order="bench-unv bench-ver"
		[ $((r % 2)) = 0 ] && order="bench-ver bench-unv"
		for b in $order; do
			line=$(run $w "$b")
			echo "round $r $w $b: $line"
			res["$w|$b"]+="$(echo "$line" | sed -n 's/.*ops_per_sec=\([0-9.]*\).*/\1/p') "
		done
	done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
[ ${#workloads[@]} = 0 ] || echo "== medians (ops/s)"
for w in "${workloads[@]}"; do
	u=$(echo "${res["$w|bench-unv"]}" | median) v=$(echo "${res["$w|bench-ver"]}" | median)
	printf '%-10s unversioned %10.1f versioned %10.1f versioned/unversioned %.2f\n' "$w" "$u" "$v" "$(echo "$v / $u" | bc -l)"
done

# The listing: LIST_KEYS keys in the unversioned bucket against LIST_KEYS
# versions in the versioned one (LIST_KEYS / LIST_VERSIONS keys, each put
# LIST_VERSIONS times), both filled through the S3 PUT path by FILL_CLIENTS
# concurrent clients (untimed; at 1M that is two million 1-byte PUTs, some
# minutes each), then listed whole LIST_RUNS times by one client (pages of
# 1,000). Issue 37's target: ListObjectVersions' versions/s at least half of
# ListObjectsV2's keys/s, at LIST_KEYS=1000000.
echo "== listing: $list_keys keys (ListObjectsV2) against $list_keys versions, $list_versions per key (ListObjectVersions)"
# list OP BUCKET OBJECTS VERSIONS: the entries listed per second
list() {
	local out
	out=$("$strato" bench s3 --op "$1" --bucket "$2" --objects "$3" --versions "$4" --size 1B --prefix l/ --keep \
		--fill-clients "$fill_clients" -c 1 --count "$list_runs" 2>>"$work/list.log") || { echo "$out" >&2; return 1; }
	sed -n 's/^summary .* items=\([0-9]*\) items_per_sec=\([0-9.]*\).*/\2 \1/p' <<<"$out"
}
read -r keys_rate keys_n < <(list list bench-unv "$list_keys" 1)
read -r vers_rate vers_n < <(list listversions bench-ver $((list_keys / list_versions)) "$list_versions")
printf 'ListObjectsV2      bench-unv: %10d keys listed     %12.0f keys/s\n' "$keys_n" "$keys_rate"
printf 'ListObjectVersions bench-ver: %10d versions listed %12.0f versions/s\n' "$vers_n" "$vers_rate"
printf 'ListObjectVersions / ListObjectsV2: %.2f (target >= 0.50)\n' "$(echo "$vers_rate / $keys_rate" | bc -l)"
