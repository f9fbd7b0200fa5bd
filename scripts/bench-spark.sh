#!/usr/bin/env bash
# Runs scripts/bench-spark.py (the seed's Spark generate-and-copy benchmark)
# with the venv and jars of `make spark-deps` and the connector's jar
# (`make hadoop`), all under this work tree. Arguments go to bench-spark.py:
#   scripts/bench-spark.sh strato://127.0.0.1:9860/bench/spark/run1 --iterations 5
#   scripts/bench-spark.sh s3a://bench/run1 --s3-endpoint http://127.0.0.1:9878
#   scripts/bench-spark.sh hdfs://127.0.0.1:PORT/bench/run1
# See docs/spark.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/spark-env.sh"
exec "$SPARK_PYTHON" "$root/scripts/bench-spark.py" "$@"
