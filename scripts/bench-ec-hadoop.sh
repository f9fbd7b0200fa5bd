#!/usr/bin/env bash
# bench-ec-hadoop.sh: erasure coded files through the Hadoop connector
# (hadoop/src/test/.../ErasureCodingTiming): RS-3-2-1024k beside THREE, and
# the connector's erasure coded write and read beside the Go client's
# (strato sh key put/get), one meta and five datanode processes on this
# host, ROUNDS alternating rounds after a warm-up, medians and ratios; then a
# degraded read. MB (default 512) per file. The JVM runs with the Vector API
# (--add-modules jdk.incubator.vector) unless SCALAR=1.
# Needs bin/strato (make build) and the connector built with its test
# classes (mvn -DskipTests package in hadoop/, or make hadoop).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
MB="${MB:-512}"
ROUNDS="${ROUNDS:-3}"
cp_file="$(mktemp)"
trap 'rm -f "$cp_file"' EXIT
(cd "$root/hadoop" && mvn -q -B -Dmaven.repo.local="$root/.cache/m2" dependency:build-classpath \
  -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=test >/dev/null)
vector=(--add-modules jdk.incubator.vector)
[ "${SCALAR:-0}" = 1 ] && vector=()
cd "$root/hadoop"
java "${vector[@]}" --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED \
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED -Dstrato.bin="$root/bin/strato" -Dstrato.timing.mb="$MB" \
  -Dstrato.timing.rounds="$ROUNDS" -cp "target/test-classes:target/classes:$(cat "$cp_file")" \
  org.junit.runner.JUnitCore io.strato.hadoop.ErasureCodingTiming 2>&1 | grep -E "^TIMING|^OK|Failures|Exception"
