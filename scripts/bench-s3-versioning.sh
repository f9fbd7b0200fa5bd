#!/usr/bin/env bash
# bench-s3-versioning.sh: a versioned bucket against an unversioned one on
# the gateway of one strato dev (docs/s3.md "Versioning"): PUT 1 KiB, PUT
# 64 MiB and GET 64 MiB (strato bench s3), ROUNDS rounds alternating which
# bucket goes first, medians and the ratio versioned / unversioned; then
# ListObjectVersions against ListObjectsV2 over the same N keys (LIST_KEYS,
# default 20,000, put by one client so that both puts name the same keys),
# each key of the versioned bucket with two versions.
# Environment: ROUNDS (3), DURATION (15s per run), CLIENTS (16), LIST_KEYS.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
rounds=${ROUNDS:-3}
duration=${DURATION:-15s}
clients=${CLIENTS:-16}
list_keys=${LIST_KEYS:-20000}
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
	out=$("$strato" bench s3 --op "$1" --size "$2" --bucket "$3" -c "$clients" --duration "$duration" 2>&1 | grep '^summary' || true)
	echo "$out" | tr ' ' '\n' | grep -E '^(ops_per_sec|mb_per_sec|p50_ms|p99_ms)=' | tr '\n' ' '
}
declare -A res
for w in "put 1KiB" "put 64MiB" "get 64MiB"; do
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
echo "== medians (ops/s)"
for w in "put 1KiB" "put 64MiB" "get 64MiB"; do
	u=$(echo "${res["$w|bench-unv"]}" | median) v=$(echo "${res["$w|bench-ver"]}" | median)
	printf '%-10s unversioned %10.1f versioned %10.1f versioned/unversioned %.2f\n' "$w" "$u" "$v" "$(echo "$v / $u" | bc -l)"
done

echo "== listing $list_keys keys: ListObjectsV2 (one version each) against ListObjectVersions (two each)"
"$strato" bench s3 --op put --size 1B --bucket bench-unv -c 1 --count "$list_keys" --prefix l/ --keep >/dev/null 2>&1
for i in 1 2; do
	"$strato" bench s3 --op put --size 1B --bucket bench-ver -c 1 --count "$list_keys" --prefix l/ --keep >/dev/null 2>&1
done
python3 - "$s3" "$list_keys" <<'PY'
import sys, time, urllib.request
# boto3 is in .cache/s3-venv when make s3-deps ran; fall back to the aws cli's botocore otherwise.
sys.path[:0] = [p for p in __import__("glob").glob(".cache/s3-venv/lib/python3*/site-packages")]
import boto3
s3 = boto3.client("s3", endpoint_url="http://" + sys.argv[1], region_name="us-east-1",
                  aws_access_key_id="strato-dev", aws_secret_access_key="strato-dev-secret")
def timed(name, pages):
    t0 = time.monotonic(); n = 0
    for p in pages:
        n += len(p.get("Contents", [])) + len(p.get("Versions", [])) + len(p.get("DeleteMarkers", []))
    dt = time.monotonic() - t0
    print(f"{name}: {n} entries in {dt:.2f} s, {n / dt:,.0f} entries/s")
    return n / dt
a = timed("ListObjectsV2 bench-unv", s3.get_paginator("list_objects_v2").paginate(Bucket="bench-unv", Prefix="l/"))
b = timed("ListObjectVersions bench-ver", s3.get_paginator("list_object_versions").paginate(Bucket="bench-ver", Prefix="l/"))
print(f"ListObjectVersions / ListObjectsV2 entries/s: {b / a:.2f}")
PY
