#!/usr/bin/env bash
# strato s3 cp beside the aws cli (aws-cli v1 from PyPI in .cache/s3-venv,
# default settings), both against one strato dev's S3 gateway: a SIZE file
# uploaded and downloaded by each, ROUNDS rounds alternating which goes
# first; prints every transfer's MB/s and the medians. The bucket keeps one
# copy (--replication ONE), so the disk holds at most the file, one object
# and one download. Run it alone: flock /tmp/strato-bench.lock scripts/bench-s3cp-vs-awscli.sh
# Env: SIZE (10G, a dd count of 1M blocks) ROUNDS (3) OUT (/tmp/strato-bench-s3cp)
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE="${SIZE:-10G}"; ROUNDS="${ROUNDS:-3}"; OUT="${OUT:-/tmp/strato-bench-s3cp}"
venv=.cache/s3-venv
[ -x "$venv/bin/aws" ] || { echo "run make s3-deps first"; exit 1; }
rm -rf "$OUT"; mkdir -p "$OUT"
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$OUT"; }
trap cleanup EXIT
make -s build
free_port() { "$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
export AWS_ACCESS_KEY_ID=strato-dev AWS_SECRET_ACCESS_KEY=strato-dev-secret AWS_DEFAULT_REGION=us-east-1
export AWS_CONFIG_FILE="$OUT/aws-config" AWS_SHARED_CREDENTIALS_FILE="$OUT/aws-credentials"
: >"$AWS_CONFIG_FILE"
meta=127.0.0.1:$(free_port); s3=127.0.0.1:$(free_port)
bin/strato dev --data "$OUT/data" --meta-addr "$meta" --s3-addr "$s3" --http "" >"$OUT/dev.log" 2>&1 &
pid=$!
for _ in $(seq 150); do grep -q "strato dev: ready" "$OUT/dev.log" && break; sleep 0.2; done
bin/strato sh bucket create /s3v/bench --layout obs --replication ONE --meta "$meta"
n=${SIZE%G}
echo "$(date +%T) writing a ${n} GiB file" >&2
head -c "$((n << 30))" /dev/urandom > "$OUT/src"
bytes=$(stat -c %s "$OUT/src")
ep="http://$s3"
# timed NAME CMD...: runs CMD, prints NAME and MB/s.
timed() {
  local name=$1 t0 t1; shift
  t0=$(date +%s.%N); "$@" >/dev/null 2>"$OUT/err" || { cat "$OUT/err" >&2; exit 1; }; t1=$(date +%s.%N)
  python3 -c "print(f'$name {$bytes/1e6/($t1-$t0):.0f}')"
}
strato_run() {
  timed strato-put bin/strato s3 cp "$OUT/src" s3://bench/obj --endpoint "$ep" --quiet
  timed strato-get bin/strato s3 cp s3://bench/obj "$OUT/dst" --endpoint "$ep" --quiet
  cmp "$OUT/src" "$OUT/dst"; rm -f "$OUT/dst"
  bin/strato s3 rm s3://bench/obj --endpoint "$ep" >/dev/null
}
aws_run() {
  timed aws-put "$venv/bin/aws" s3 cp "$OUT/src" s3://bench/obj --endpoint-url "$ep" --only-show-errors
  timed aws-get "$venv/bin/aws" s3 cp s3://bench/obj "$OUT/dst" --endpoint-url "$ep" --only-show-errors
  cmp "$OUT/src" "$OUT/dst"; rm -f "$OUT/dst"
  "$venv/bin/aws" s3 rm s3://bench/obj --endpoint-url "$ep" --only-show-errors
}
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then strato_run; aws_run; else aws_run; strato_run; fi
done | tee "$OUT/results"
python3 - "$OUT/results" <<'PY'
import sys, statistics
rates = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    rates.setdefault(k, []).append(float(v))
for op in ("put", "get"):
    s, a = statistics.median(rates["strato-" + op]), statistics.median(rates["aws-" + op])
    print(f"{op}: strato s3 cp {s:.0f} MB/s, aws s3 cp {a:.0f} MB/s (medians of {len(rates['aws-'+op])}): {s/a:.2f}x")
PY
