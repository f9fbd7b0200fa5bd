#!/usr/bin/env bash
# The S3 gateway driven by boto3 and the aws cli (installed from PyPI into
# .cache/s3-venv by `make s3-deps`) with their default settings, against a
# `strato dev` on free loopback ports: the boto3 script of s3/testdata
# (SigV4, SigV2 presigned URLs and SigV2 headers), then aws s3 cp of a
# 100 MiB file up and down (multipart), aws s3 sync of a tree, aws s3 ls
# --recursive and a presigned URL (SigV2) fetched with curl; twice:
# on a plain strato dev, and over HTTPS on a strato dev --secure (TLS and
# tokens), the clients trusting the cluster CA through AWS_CA_BUNDLE.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.cache/s3-venv
[ -x "$venv/bin/aws" ] || { echo "run make s3-deps first"; exit 1; }
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
free_port() { "$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
export AWS_ACCESS_KEY_ID=strato-dev AWS_SECRET_ACCESS_KEY=strato-dev-secret AWS_DEFAULT_REGION=us-east-1
export AWS_CONFIG_FILE="$work/aws-config" AWS_SHARED_CREDENTIALS_FILE="$work/aws-credentials"
unset AWS_CA_BUNDLE AWS_PROFILE
# No signature_version: boto3 and aws-cli v1 presign with SigV2 for
# us-east-1 by default (docs/s3.md), and the gateway takes it.
: >"$AWS_CONFIG_FILE"

# suite MODE [DEV FLAGS...]: a fresh strato dev, then boto3 and the aws cli
# against its gateway.
suite() {
mode=$1
shift
meta=127.0.0.1:$(free_port)
s3=127.0.0.1:$(free_port)
rm -rf "$work/data" "$work/access.log"
bin/strato dev --data "$work/data" --meta-addr "$meta" --s3-addr "$s3" --s3-access-log "$work/access.log" --http "" --lifecycle-interval 1s "$@" >"$work/dev.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "strato dev: ready" "$work/dev.log" && break; sleep 0.2; done
scheme=http
curl_ca=()
if [ "$mode" = https ]; then
  # The gateway's certificate is of the cluster CA: the clients trust it
  # through AWS_CA_BUNDLE, as an operator's would.
  scheme=https
  export AWS_CA_BUNDLE="$work/data/tls/ca.crt"
  curl_ca=(--cacert "$AWS_CA_BUNDLE")
fi
grep -q "  s3        $scheme://$s3" "$work/dev.log" || { cat "$work/dev.log"; exit 1; }
endpoint=$scheme://$s3
echo "== boto3 ($mode)"
"$venv/bin/python" s3/testdata/boto3_test.py "$endpoint" "$work/access.log" # and one access log line per request
echo "== aws cli ($mode)"
aws() { "$venv/bin/aws" --endpoint-url "$endpoint" "$@"; }
aws s3 mb s3://cli-bucket >/dev/null
head -c $((100 << 20)) /dev/urandom >"$work/big"
aws s3 cp "$work/big" s3://cli-bucket/big >/dev/null
aws s3 cp s3://cli-bucket/big "$work/big.back" >/dev/null
cmp "$work/big" "$work/big.back"
mkdir -p "$work/tree/a/b" "$work/tree/c"
for f in a/1 a/b/2 a/b/3 c/4 5; do echo "$f" >"$work/tree/$f"; done
aws s3 sync "$work/tree" s3://cli-bucket/tree >/dev/null
aws s3 sync "$work/tree" s3://cli-bucket/tree >/dev/null # nothing to do the second time
n=$(aws s3 ls --recursive s3://cli-bucket/tree/ | wc -l)
[ "$n" -eq 5 ] || { echo "ls --recursive listed $n keys, not 5"; exit 1; }
url=$(aws s3 presign s3://cli-bucket/tree/a/b/2 --expires-in 60)
[[ $url == *AWSAccessKeyId=*Signature=* ]] || { echo "aws s3 presign signed with SigV4, not its default SigV2: $url"; exit 1; }
[ "$(curl -sf "${curl_ca[@]}" "$url")" = "a/b/2" ] || { echo "presigned GET failed"; exit 1; }
aws s3 rm --recursive s3://cli-bucket >/dev/null
aws s3 rb s3://cli-bucket >/dev/null
# The bucket configurations through aws s3api: versioning, lifecycle,
# a policy, object lock.
aws s3api create-bucket --bucket cli-config >/dev/null
aws s3api put-bucket-versioning --bucket cli-config --versioning-configuration Status=Enabled
[ "$(aws s3api get-bucket-versioning --bucket cli-config --query Status --output text)" = Enabled ] || { echo "versioning not enabled"; exit 1; }
aws s3api put-bucket-lifecycle-configuration --bucket cli-config --lifecycle-configuration \
  '{"Rules": [{"ID": "old", "Status": "Enabled", "Filter": {"Prefix": "logs/"}, "NoncurrentVersionExpiration": {"NoncurrentDays": 30}}]}'
[ "$(aws s3api get-bucket-lifecycle-configuration --bucket cli-config --query 'Rules[0].NoncurrentVersionExpiration.NoncurrentDays' --output text)" = 30 ] || { echo "lifecycle not read back"; exit 1; }
aws s3api put-bucket-policy --bucket cli-config --policy \
  '{"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteBucket", "Resource": "arn:aws:s3:::cli-config"}]}'
if aws s3api delete-bucket --bucket cli-config 2>/dev/null; then echo "the policy's Deny did not hold"; exit 1; fi
aws s3api delete-bucket-policy --bucket cli-config
aws s3api delete-bucket --bucket cli-config
aws s3api create-bucket --bucket cli-lock --object-lock-enabled-for-bucket >/dev/null
aws s3api put-object-lock-configuration --bucket cli-lock --object-lock-configuration \
  '{"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}}'
[ "$(aws s3api get-object-lock-configuration --bucket cli-lock --query 'ObjectLockConfiguration.Rule.DefaultRetention.Mode' --output text)" = GOVERNANCE ] || { echo "object lock not read back"; exit 1; }
v=$(aws s3api put-object --bucket cli-lock --key k --body "$work/tree/5" --query VersionId --output text)
if aws s3api delete-object --bucket cli-lock --key k --version-id "$v" >/dev/null 2>&1; then echo "a locked version was deleted"; exit 1; fi
aws s3api delete-object --bucket cli-lock --key k --version-id "$v" --bypass-governance-retention >/dev/null
aws s3api delete-bucket --bucket cli-lock
echo "aws cli ($mode): 12 passed, 0 failed"
kill "$pid" && wait "$pid" 2>/dev/null || true
pid=
unset AWS_CA_BUNDLE
}

suite http
# strato dev --secure: TLS everywhere and tokens; the gateway speaks HTTPS.
suite https --secure
