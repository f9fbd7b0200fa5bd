#!/usr/bin/env bash
# bench-count.sh: `hadoop fs -count` and `hadoop fs -du -s` of a directory of
# FILES closed files (default 1,000,000, in directories of 1,000) through the
# connector, against the walk a client does without meta's summary
# (docs/benchmarks.md "du and count at 1M files").
#
#   1. strato bench meta -op create -close --keep builds the namespace in
#      WORK/meta (standalone);
#   2. strato meta --auth none serves it on a free loopback port;
#   3. ContentSummaryTiming (hadoop/src/test) runs FsShell -count, -du -s and
#      the client's walk in one JVM, ROUNDS rounds in alternating order;
#   4. `hadoop fs -count` as a process of its own, end to end (Hadoop's
#      FsShell with the connector's jar: the JVM's start included), beside
#      `hadoop fs -test -d` of the same directory (the JVM's start and one
#      call), ROUNDS times each.
#
# Needs bin/strato (make build), the connector built with its test classes
# (mvn -DskipTests package in hadoop/, or make hadoop), the Hadoop jars of
# test/hadoop/fetch.sh, and about 1 GB of disk in WORK (default: a temporary
# directory under /tmp, removed at the end unless KEEP=1).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/bin/strato"
FILES="${FILES:-1000000}"
ROUNDS="${ROUNDS:-5}"
work="${WORK:-$(mktemp -d /tmp/strato-bench-count.XXXXXX)}"
mkdir -p "$work"
lib="$("$root/test/hadoop/fetch.sh")"
jar="$(ls "$root"/hadoop/target/strato-hadoop-*.jar | grep -v original | head -1)"
cp_file="$work/test-classpath.txt"
meta_pid=
cleanup() {
  [ -z "$meta_pid" ] || { kill "$meta_pid" 2>/dev/null; wait "$meta_pid" 2>/dev/null || true; }
  [ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

if [ ! -d "$work/meta" ]; then
  echo "== building the namespace: $FILES files"
  "$bin" bench meta -op create -threads 16 -files "$FILES" -filesPerDir 1000 -close -keepResults --dir "$work/meta" --keep |
    grep -E "ops/s|Elapsed|elapsed|Throughput" || true
fi
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$bin" meta --data "$work/meta" --auth none --listen "127.0.0.1:$port" >"$work/meta.log" 2>&1 &
meta_pid=$!
for _ in $(seq 1 100); do "$bin" sh volume list --meta "127.0.0.1:$port" >/dev/null 2>&1 && break; sleep 0.2; done
uri="strato://127.0.0.1:$port/bench/nnbench/nnThroughputBenchmark/create"

echo "== in one JVM: FsShell -count, -du -s, and the client's walk ($ROUNDS rounds)"
(cd "$root/hadoop" && mvn -q -B -Dmaven.repo.local="$root/.cache/m2" dependency:build-classpath \
  -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=test >/dev/null)
java -cp "$root/hadoop/target/test-classes:$root/hadoop/target/classes:$(cat "$cp_file")" \
  -Dstrato.timing.uri="$uri" -Dstrato.timing.rounds="$ROUNDS" \
  org.junit.runner.JUnitCore io.strato.hadoop.ContentSummaryTiming 2>&1 | grep -E "^TIMING|^OK|Failures|Exception" | grep -v "ManagedChannel allocation site"

echo "== hadoop fs as a process, end to end ($ROUNDS rounds)"
mkdir -p "$work/conf" # FsShell wants a core-site.xml on its class path
echo '<?xml version="1.0"?><configuration/>' >"$work/conf/core-site.xml"
fs() { java -cp "$work/conf:$lib/*:$jar" org.apache.hadoop.fs.FsShell "$@" 2> >(grep -v -E "^SLF4J|NativeCodeLoader|^log4j:" >&2); }
for r in $(seq 1 "$ROUNDS"); do
  for op in count test; do
    t0=$(date +%s.%N)
    if [ "$op" = count ]; then out="$(fs -count "$uri")"; else fs -test -d "$uri"; out="(exit 0)"; fi
    t1=$(date +%s.%N)
    printf 'PROCESS round %d hadoop fs -%-5s %.3f s: %s\n' "$r" "$op" "$(echo "$t1 - $t0" | bc)" "$(echo "$out" | xargs)"
  done
done
