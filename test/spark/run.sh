#!/usr/bin/env bash
# make spark-test: test/spark/spark_test.py (PySpark, from make spark-deps)
# against a strato dev of bin/strato on free loopback ports in a temporary
# directory: through strato:// (the connector's jar, make hadoop) and through
# s3a:// on the dev's S3 gateway, with Spark's default committer and with
# Hadoop's S3A magic committer; through strato:// into an erasure coded
# (RS-3-2) bucket too. Fails with the first failed check.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/spark-env.sh
work="$(mktemp -d /tmp/strato-spark-test.XXXXXX)"
cleanup() { spark_dev_stop; [ "${KEEP:-0}" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT
start=$SECONDS
# Five datanodes: room for the erasure coded bucket's RS-3-2 groups.
SPARK_DEV_DATANODES=5 spark_dev_start "$work"
export AWS_ACCESS_KEY_ID=strato-dev AWS_SECRET_ACCESS_KEY=strato-dev-secret AWS_ENDPOINT_URL="$DEV_S3"
bin/strato s3 mb s3://spark-test >/dev/null
bin/strato sh volume create spark --meta "$DEV_META" >/dev/null
bin/strato sh bucket create /spark/ecbkt --replication rs-3-2-1024k --meta "$DEV_META" >/dev/null
# Spark's scratch space in the temporary directory too.
export SPARK_LOCAL_DIRS="$work/spark-local"
rc=0
"$SPARK_PYTHON" test/spark/spark_test.py "strato://$DEV_META/spark/test/out" "strato://$DEV_META/spark/ecbkt/out" \
  "s3a://spark-test/out" \
  >"$work/spark.log" 2>&1 || rc=$?
[ "$rc" != 0 ] || "$SPARK_PYTHON" test/spark/spark_test.py --s3a-committer magic "s3a://spark-test/magic" \
  >>"$work/spark.log" 2>&1 || rc=$?
grep -v -E '^SLF4J|^WARNING: Using incubator' "$work/spark.log" | grep -E '^(==|  |FAIL|spark_test)' || true
if [ "$rc" != 0 ]; then
  echo "spark-test FAILED (exit $rc); the last lines of Spark's output:"
  grep -v -E '^SLF4J' "$work/spark.log" | tail -40
  echo "strato dev's log: $work/dev.log (kept)"; KEEP=1
  exit 1
fi
echo "spark-test: ok ($((SECONDS - start)) s)"
