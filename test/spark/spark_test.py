#!/usr/bin/env python3
"""PySpark against strato: Parquet through strato:// (the connector) and s3a:// (the gateway).

For each target directory given on the command line:
  - write: a few MB of rows (scripts/bench-spark.py's schema) as Parquet in 4 tasks; the output
    committer must leave _SUCCESS, 4 part files and nothing temporary (no _temporary, no
    hidden files);
  - read back: the same row count, the same checksum, and no row missing or extra (exceptAll
    both ways);
  - overwrite: a second write of other rows replaces the first, whole;
  - a failed task attempt: one task fails in its first attempt after writing half its rows, and
    is retried; the output holds every row once (the attempt's partial file is nowhere);
  - a failed job: one task fails in every attempt; the job fails, and its output directory shows
    no part file and no _SUCCESS.

With --s3a-committer magic first, s3a:// targets are written with Hadoop's S3A magic committer
(scripts/bench-spark.py's S3A_MAGIC, what the benchmark's s3a runs use): task attempts write
multipart uploads that only the job commit completes, so nothing may show before it, and
_SUCCESS is the committer's JSON manifest.

Run by test/spark/run.sh (make spark-test), which starts a strato dev. Exits non-zero, naming
the check, at the first failure.
"""

import importlib.util
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench_spark", os.path.join(here, "..", "..", "scripts", "bench-spark.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

ROWS = 60_000  # about 5 MB of Parquet
PARTS = 4


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def visible(fs, name):
    """every file under the output directory (relative names), directories included"""
    base = fs.child(name)
    out = []

    def walk(p, rel):
        for st in fs.fs.listStatus(p):
            n = rel + st.getPath().getName()
            out.append(n + ("/" if st.isDirectory() else ""))
            if st.isDirectory():
                walk(st.getPath(), n + "/")

    if fs.fs.exists(base):
        walk(base, "")
    return sorted(out)


def check_committed(fs, name, parts):
    files = visible(fs, name)
    check("_SUCCESS" in files, f"{name}: no _SUCCESS after the job: {files}")
    bad = [f for f in files if f != "_SUCCESS" and (f.startswith("_") or f.startswith(".") or "/" in f)]
    check(not bad, f"{name}: temporary or hidden entries left behind: {bad}")
    data = [f for f in files if f.startswith("part-")]
    check(len(data) == parts, f"{name}: {len(data)} part files, not {parts}: {files}")
    st = fs.fs.getFileStatus(fs.child(name + "/_SUCCESS"))
    check(st.isFile(), f"{name}/_SUCCESS is not a file")


def compare(spark, expected, path, what):
    back = spark.read.parquet(path)
    n, csum = bench.checksum(back)
    en, ecsum = bench.checksum(expected)
    check(n == en, f"{what}: read back {n} rows, wrote {en}")
    check(csum == ecsum, f"{what}: checksum of the rows read back\n  {csum}\nnot the written rows'\n  {ecsum}")
    check(back.exceptAll(expected).count() == 0, f"{what}: rows read back that were not written")
    check(expected.exceptAll(back).count() == 0, f"{what}: rows written that were not read back")


def failing_rows(spark, start, always):
    """the rows of bench.rows_df, through a Python task that fails in partition 1 after half its
    rows: in its first attempt only, or in every attempt (always)"""
    from pyspark import TaskContext

    src = bench.rows_df(spark, start, ROWS, 7, PARTS)

    def fail_half(it):
        ctx = TaskContext.get()
        rows = list(it)
        for i, r in enumerate(rows):
            if ctx.partitionId() == 1 and (always or ctx.attemptNumber() == 0) and i == len(rows) // 2:
                raise RuntimeError(f"spark_test: task attempt {ctx.attemptNumber()} of partition 1 fails on purpose")
            yield r

    return spark.createDataFrame(src.rdd.mapPartitions(fail_half), src.schema), src


def check_magic(fs, name):
    """_SUCCESS is the S3A committers' JSON manifest, naming the magic committer."""
    stream = fs.fs.open(fs.child(name + "/_SUCCESS"))
    try:
        text = fs.jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
    finally:
        stream.close()
    check("SuccessData" in text and '"magic"' in text,
          f"{name}/_SUCCESS is not the magic committer's manifest: {text[:300]!r}")


def run_target(spark, target, magic=False):
    fs = bench.Fs(spark, target)
    if fs.fs.exists(fs.path):  # from an earlier run
        fs.fs.delete(fs.path, True)
    t0 = time.monotonic()

    rows = bench.rows_df(spark, 0, ROWS, 7, PARTS)
    rows.write.parquet(f"{target}/t1")
    check_committed(fs, "t1", PARTS)
    if magic:
        check_magic(fs, "t1")
    size = fs.size("t1")
    check(size > 2_000_000, f"t1: only {size} bytes of Parquet")
    ec = [st.isErasureCoded() for st in fs.fs.listStatus(fs.child("t1")) if st.getPath().getName().startswith("part-")]
    if "/ecbkt/" in target:  # the erasure coded bucket of test/spark/run.sh
        check(ec and all(ec), f"t1: part files not erasure coded in an erasure coded bucket: {ec}")
    else:
        check(not any(ec), f"t1: erasure coded part files in a replicated bucket: {ec}")
    compare(spark, rows, f"{target}/t1", "write")
    success = "_SUCCESS (the magic committer's manifest)" if magic else "_SUCCESS"
    print(f"  write and read back: {ROWS} rows, {size / 1e6:.1f} MB, {success} and {PARTS} part files", flush=True)

    other = bench.rows_df(spark, ROWS, ROWS // 2, 8, PARTS)
    other.write.mode("overwrite").parquet(f"{target}/t1")
    check_committed(fs, "t1", PARTS)
    compare(spark, other, f"{target}/t1", "overwrite")
    print("  overwrite: the second write's rows only", flush=True)

    df, src = failing_rows(spark, 2 * ROWS, always=False)
    df.write.parquet(f"{target}/t2")
    check_committed(fs, "t2", PARTS)
    compare(spark, src, f"{target}/t2", "a failed task attempt")
    print("  a task attempt failed halfway and retried: every row once, nothing partial", flush=True)

    df, _ = failing_rows(spark, 3 * ROWS, always=True)
    try:
        df.write.parquet(f"{target}/t3")
    except Exception as e:  # py4j's Py4JJavaError or pyspark's wrapped error
        check("fails on purpose" in str(e), f"t3: the job failed for another reason: {str(e)[:2000]}")
    else:
        raise Failed("t3: the job succeeded although a task failed in every attempt")
    files = visible(fs, "t3")
    leaked = [f for f in files if f.startswith("part-") or f == "_SUCCESS"]
    check(not leaked, f"t3: a failed job left visible output: {leaked}")
    print(f"  a failed job: no part file, no _SUCCESS ({files or 'no entries'})", flush=True)

    fs.fs.delete(fs.path, True)
    print(f"  {target}: ok ({time.monotonic() - t0:.1f} s)", flush=True)


def main():
    targets = sys.argv[1:]
    s3a_committer = "file"  # Spark's default, unless asked
    if targets[:1] == ["--s3a-committer"] and len(targets) > 1:
        s3a_committer, targets = targets[1], targets[2:]
    if not targets:
        sys.exit("usage: spark_test.py [--s3a-committer magic|file] TARGET_DIR_URI...")
    # local[2,2]: two cores, and a task may be tried twice.
    args = bench.parse_args(["unused", "--master", "local[2,2]", "--s3a-committer", s3a_committer])
    spark = bench.session(args, app="strato-spark-test")
    failed = 0
    for t in targets:
        magic = s3a_committer == "magic" and t.startswith("s3a://")
        print(f"== {t}{' (S3A magic committer)' if magic else ''}", flush=True)
        try:
            run_target(spark, t, magic)
        except Failed as e:
            failed += 1
            print(f"FAIL {t}: {e}", flush=True)
    spark.stop()
    print(f"spark_test: {len(targets) - failed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
