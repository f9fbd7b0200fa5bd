# Sourced by the Spark scripts: the venv and jars of `make spark-deps` and
# the connector's jar of `make hadoop`. Sets SPARK_PYTHON (the venv's
# python, with pyspark) and SPARK_BENCH_JARS (comma-separated jars for the
# driver's class path), and a Spark-local temporary directory.
spark_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SPARK_PYTHON="$spark_root/.cache/spark-venv/bin/python"
[ -x "$SPARK_PYTHON" ] || { echo "no Spark venv in $spark_root/.cache/spark-venv: run make spark-deps" >&2; exit 1; }
spark_jar() { # spark_jar PATTERN: the one jar matching, or fail
  local j
  j="$(ls $1 2>/dev/null | grep -v '/original-' | head -1)"
  [ -n "$j" ] || { echo "no jar $1: run make spark-deps and make hadoop" >&2; exit 1; }
  echo "$j"
}
# STRATO_JAR and STRATO_BIN replace the work tree's connector jar and bin/strato.
SPARK_BENCH_JARS="$(spark_jar "${STRATO_JAR:-$spark_root/hadoop/target/strato-hadoop-*.jar}"),$(spark_jar "$spark_root/.cache/spark-jars/hadoop-aws-*.jar"),$(spark_jar "$spark_root/.cache/spark-jars/bundle-*.jar"),$(spark_jar "$spark_root/.cache/spark-jars/spark-hadoop-cloud_*.jar")"
export SPARK_PYTHON SPARK_BENCH_JARS
# pyspark runs the driver's workers with this python too.
export PYSPARK_PYTHON="$SPARK_PYTHON" PYSPARK_DRIVER_PYTHON="$SPARK_PYTHON"
export SPARK_LOCAL_IP=127.0.0.1
unset SPARK_HOME

spark_free_port() { "$SPARK_PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# spark_dev_start DIR: starts bin/strato dev on free loopback ports with its
# data and log in DIR; sets DEV_PID, DEV_META (HOST:PORT) and DEV_S3
# (http://HOST:PORT); SPARK_DEV_ARGS are more flags for strato dev (e.g.
# --no-write-cache). spark_dev_stop stops it.
spark_dev_start() {
  local dir="$1" meta s3
  mkdir -p "$dir"
  meta="127.0.0.1:$(spark_free_port)"
  s3="127.0.0.1:$(spark_free_port)"
  "${STRATO_BIN:-$spark_root/bin/strato}" dev --data "$dir/data" --meta-addr "$meta" --s3-addr "$s3" --http "" \
    --datanodes "${SPARK_DEV_DATANODES:-3}" ${SPARK_DEV_ARGS:-} >"$dir/dev.log" 2>&1 &
  DEV_PID=$!
  for _ in $(seq 300); do
    grep -q "strato dev: ready" "$dir/dev.log" && break
    kill -0 "$DEV_PID" 2>/dev/null || break
    sleep 0.1
  done
  grep -q "  s3        http://$s3" "$dir/dev.log" || { echo "strato dev did not start:" >&2; cat "$dir/dev.log" >&2; return 1; }
  DEV_META="$meta" DEV_S3="http://$s3"
}
spark_dev_stop() {
  [ -n "${DEV_PID:-}" ] || return 0
  kill "$DEV_PID" 2>/dev/null && wait "$DEV_PID" 2>/dev/null || true
  DEV_PID=
}
