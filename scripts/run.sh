#!/usr/bin/env bash
# make run: start a local strato cluster and show it doing its job.
#   1. `strato dev` in the background: meta + 3 datanodes on 127.0.0.1,
#      data under ./strato-data (log in ./strato-data/dev.log);
#   2. a volume and a bucket, a 64 MiB file put and read back (compared
#      byte for byte), a directory listing;
#   3. the same file up and down through the S3 gateway strato dev runs
#      (with the aws cli when it is installed, else with strato s3 cp);
#   4. the cluster's datanodes, pipelines and containers.
# The cluster keeps running for you afterwards (stop it: make stop);
# `make run ARGS=--demo` stops it at the end instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/strato
[ -x "$bin" ] || { echo "run.sh: $bin is missing; run 'make run' (it builds it first)" >&2; exit 1; }
demo=0
for a in "$@"; do
	case "$a" in
	--demo) demo=1 ;;
	*) echo "run.sh: unknown argument $a (only --demo)" >&2; exit 2 ;;
	esac
done

data=./strato-data
mkdir -p "$data"
pidfile="$data/dev.pid"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
	echo "== strato dev is already running (pid $(cat "$pidfile"))"
else
	echo "== starting strato dev (data in $data, log in $data/dev.log)"
	"$bin" dev --data "$data" > "$data/dev.log" 2>&1 &
	echo $! > "$pidfile"
	for _ in $(seq 1 300); do
		grep -q 'strato dev: ready' "$data/dev.log" 2>/dev/null && break
		kill -0 "$(cat "$pidfile")" 2>/dev/null || { cat "$data/dev.log"; echo "run.sh: strato dev exited" >&2; exit 1; }
		sleep 0.1
	done
	grep -q 'strato dev: ready' "$data/dev.log" || { cat "$data/dev.log"; echo "run.sh: strato dev not ready" >&2; exit 1; }
fi
cat "$data/dev.log" | sed -n '/starting/,/ready/p'
if [ "$demo" = 1 ]; then
	trap 'kill "$(cat "$pidfile")" 2>/dev/null; wait 2>/dev/null; rm -f "$pidfile"; echo "== strato dev stopped"' EXIT
fi

s() { echo "\$ strato $*"; "$bin" "$@"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/strato-run.XXXXXX")
trap_cleanup() { rm -rf "$tmp"; }
trap 'trap_cleanup; [ "$demo" = 1 ] && { kill "$(cat "$pidfile")" 2>/dev/null; wait 2>/dev/null; rm -f "$pidfile"; echo "== strato dev stopped"; }; true' EXIT

echo
echo "== a volume, a bucket (FSO, 3 replicas, CRC32C), a file in and out"
"$bin" sh volume info demo > /dev/null 2>&1 || s sh volume create demo
"$bin" sh bucket info /demo/files > /dev/null 2>&1 || s sh bucket create /demo/files
head -c $((64 << 20)) /dev/urandom > "$tmp/in.bin"
s fs mkdir -p /demo/files/run
s fs put -f "$tmp/in.bin" /demo/files/run/random-64MiB.bin
s fs get /demo/files/run/random-64MiB.bin "$tmp/out.bin"
if cmp -s "$tmp/in.bin" "$tmp/out.bin"; then
	echo "read back: identical ($(sha256sum < "$tmp/out.bin" | cut -c1-16)...)"
else
	echo "run.sh: the file read back differs" >&2; exit 1
fi
s fs put -f README.md /demo/files/run/README.md
s fs ls -R /demo/files
echo

echo "== through the S3 gateway (bucket s3://demo-s3 of the volume s3v, strato dev's development key)"
s3url=$(sed -n 's/^  s3        \(http[^ ]*\).*/\1/p' "$data/dev.log" | tail -1)
if [ -z "$s3url" ]; then
	echo "(no S3 gateway: strato dev says: $(grep '^  s3' "$data/dev.log" || echo nothing))"
else
	export AWS_ACCESS_KEY_ID=strato-dev AWS_SECRET_ACCESS_KEY=strato-dev-secret AWS_DEFAULT_REGION=us-east-1
	export AWS_CONFIG_FILE="$tmp/aws-config" AWS_SHARED_CREDENTIALS_FILE="$tmp/aws-credentials"
	unset AWS_CA_BUNDLE AWS_PROFILE AWS_ENDPOINT_URL
	: >"$AWS_CONFIG_FILE"
	if command -v aws >/dev/null 2>&1; then
		a() { echo "\$ aws --endpoint-url $s3url $*"; aws --endpoint-url "$s3url" "$@"; }
		a s3 mb s3://demo-s3 2>/dev/null || true
		a s3 cp --no-progress "$tmp/in.bin" s3://demo-s3/random-64MiB.bin
		a s3 cp --no-progress s3://demo-s3/random-64MiB.bin "$tmp/out-s3.bin"
		a s3 ls s3://demo-s3/
	else
		echo "(the aws cli is not installed: the same with strato s3, an S3 client on the AWS SDK for Go)"
		a() { echo "\$ strato s3 $* --endpoint $s3url"; "$bin" s3 "$@" --endpoint "$s3url"; }
		a mb s3://demo-s3
		a cp "$tmp/in.bin" s3://demo-s3/random-64MiB.bin
		a cp s3://demo-s3/random-64MiB.bin "$tmp/out-s3.bin"
		a ls s3://demo-s3/
	fi
	if cmp -s "$tmp/in.bin" "$tmp/out-s3.bin"; then
		echo "read back through S3: identical ($(sha256sum < "$tmp/out-s3.bin" | cut -c1-16)...)"
	else
		echo "run.sh: the file read back through S3 differs" >&2; exit 1
	fi
fi
echo
sleep 1.5 # one heartbeat, so that the datanodes have reported their new containers
echo "== the cluster (as meta sees it after the datanodes' next heartbeat)"
s admin datanode list
s admin pipeline list
s admin container list
s admin safemode status
echo
if [ "$demo" = 1 ]; then
	echo "(--demo: stopping the cluster)"
else
	echo "strato dev keeps running (pid $(cat "$pidfile"), meta at 127.0.0.1:9860, S3 at ${s3url:-none}). Try bin/strato fs ls -R /demo; stop it with: make stop"
fi
