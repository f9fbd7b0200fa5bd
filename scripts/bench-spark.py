#!/usr/bin/env python3
"""The seed's Spark benchmark: generate Parquet, then copy it, on any Hadoop file system.

Generate: each of --iterations appends --mb-per-iteration MB of rows (a fixed schema of ints,
longs, doubles and strings, every value a function of the row number and --seed, so every
storage gets the same rows) to TARGET/gen as Parquet. Copy: read TARGET/gen whole and write it
to TARGET/copy. Each step prints its wall time, the Parquet bytes it wrote, MB/s (1e6 bytes/s)
and CPU seconds of the Spark JVM and of the storage's processes (--server-pid); then the row
count and a checksum of the rows read back, once from gen and once from copy, which must be equal
to each other and to every other storage's at the same knobs.

TARGET is a directory URI: strato://HOST:PORT/VOL/BUCKET/DIR, s3a://BUCKET/DIR,
hdfs://HOST:PORT/DIR or file:///DIR. Run through scripts/bench-spark.sh, which finds the venv of
`make spark-deps` and the jars; see docs/spark.md.
"""

import argparse
import os
import sys
import time

# About the bytes of one row in memory (8+4+4+8+8+8+8 bytes of numbers, 16+20 of strings):
# --mb-per-iteration M generates M*1e6/ROW_BYTES rows per iteration.
ROW_BYTES = 100


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("target", help="directory URI (strato://, s3a://, hdfs://, file://)")
    p.add_argument("--iterations", type=int, default=5, help="generate iterations (the seed: 200)")
    p.add_argument("--mb-per-iteration", type=int, default=100, help="MB of rows per iteration (the seed: 100)")
    p.add_argument("--master", default="local[2]", help="Spark master (one local executor: local[N])")
    p.add_argument("--partitions", type=int, default=2, help="files written per generate iteration")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--driver-memory", default="2g")
    p.add_argument("--jars", default=os.environ.get("SPARK_BENCH_JARS", ""),
                   help="comma-separated jars for the driver's class path (the connector, hadoop-aws, the AWS SDK)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting (spark.hadoop.* for Hadoop's); repeatable")
    p.add_argument("--s3-endpoint", default=os.environ.get("AWS_ENDPOINT_URL", ""),
                   help="the S3 endpoint for s3a:// (path-style, plain http)")
    p.add_argument("--s3a-committer", choices=["magic", "file"], default="magic",
                   help="the output committer on s3a://: Hadoop's S3A magic committer (multipart "
                        "uploads completed at job commit, no copies; needs spark-hadoop-cloud) or "
                        "Spark's default FileOutputCommitter (renames, which S3 does as copies)")
    p.add_argument("--server-pid", type=int, action="append", default=[],
                   help="a storage process whose CPU time is reported per step; repeatable")
    p.add_argument("--label", default="", help="a name for this run in --results")
    p.add_argument("--results", default="", help="append one TSV line per step to this file")
    p.add_argument("--keep", action="store_true", help="leave the data in place at the end")
    p.add_argument("--steps", default="generate,copy", help="steps to run (generate, copy)")
    return p.parse_args(argv)


# Hadoop's S3A magic committer, bound into Spark SQL by spark-hadoop-cloud: a task writes each
# file as a multipart upload to its final name and records it; the job commit completes them.
# Other schemes keep their FileOutputCommitter (PathOutputCommitProtocol asks each scheme's
# factory), so strato:// and hdfs:// commit as before.
S3A_MAGIC = [
    ("spark.hadoop.fs.s3a.committer.name", "magic"),
    ("spark.hadoop.fs.s3a.committer.magic.enabled", "true"),
    ("spark.hadoop.mapreduce.outputcommitter.factory.scheme.s3a",
     "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory"),
    ("spark.sql.sources.commitProtocolClass",
     "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol"),
    ("spark.sql.parquet.output.committer.class",
     "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter"),
]


def build_conf(args):
    """The Spark settings, as (key, value) pairs: what docs/spark.md shows."""
    conf = [
        ("spark.master", args.master),
        ("spark.driver.memory", args.driver_memory),
        ("spark.ui.enabled", "false"),
        ("spark.ui.showConsoleProgress", "false"),
        ("spark.sql.sources.partitionOverwriteMode", "static"),
        # Service discovery does not always see jars added at run time: name the classes.
        ("spark.hadoop.fs.strato.impl", "io.strato.hadoop.StratoFileSystem"),
        ("spark.hadoop.fs.AbstractFileSystem.strato.impl", "io.strato.hadoop.StratoFs"),
    ]
    jars = [j for j in args.jars.split(",") if j]
    if jars:
        # On the JVM's own class path: Hadoop's Configuration loads file systems with it.
        conf.append(("spark.driver.extraClassPath", os.pathsep.join(jars)))
        conf.append(("spark.executor.extraClassPath", os.pathsep.join(jars)))
    if args.s3_endpoint:
        conf += [
            ("spark.hadoop.fs.s3a.endpoint", args.s3_endpoint),
            ("spark.hadoop.fs.s3a.endpoint.region", os.environ.get("AWS_REGION", "us-east-1")),
            ("spark.hadoop.fs.s3a.path.style.access", "true"),
            ("spark.hadoop.fs.s3a.connection.ssl.enabled", "false"),
            ("spark.hadoop.fs.s3a.aws.credentials.provider",
             "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"),
            ("spark.hadoop.fs.s3a.access.key", os.environ.get("AWS_ACCESS_KEY_ID", "strato-dev")),
            ("spark.hadoop.fs.s3a.secret.key", os.environ.get("AWS_SECRET_ACCESS_KEY", "strato-dev-secret")),
        ]
        if args.s3a_committer == "magic":
            conf += S3A_MAGIC
    for kv in args.conf:
        k, sep, v = kv.partition("=")
        if not sep:
            sys.exit(f"bench-spark: --conf {kv!r}: want KEY=VALUE")
        conf.append((k, v))
    return conf


def session(args, app="strato-bench-spark"):
    from pyspark.sql import SparkSession

    b = SparkSession.builder.appName(app)
    for k, v in build_conf(args):
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def rows_df(spark, start, count, seed, partitions):
    """count rows numbered from start; every value is a hash of (row number, seed, column)."""
    from pyspark.sql import functions as F

    df = spark.range(start, start + count, 1, partitions)
    h = lambda k: F.xxhash64(F.col("id"), F.lit(seed), F.lit(k))  # noqa: E731
    two53 = float(1 << 53)
    return df.select(
        F.col("id"),
        (h(1) % F.lit(1 << 31)).cast("int").alias("i1"),
        (h(2) % F.lit(1000)).cast("int").alias("i2"),
        h(3).alias("l1"),
        (h(4) % F.lit(1 << 40)).alias("l2"),
        (F.shiftright(h(5), 11).cast("double") / F.lit(two53)).alias("d1"),
        (F.shiftright(h(6), 11).cast("double") / F.lit(two53) * F.lit(1e6) - F.lit(5e5)).alias("d2"),
        F.lower(F.hex(h(7))).alias("s1"),
        F.concat(F.hex(h(8)), F.hex(h(9))).substr(F.lit(1), F.lit(8) + F.abs(h(10) % F.lit(25)).cast("int")).alias("s2"),
    )


def checksum(df):
    """(rows, then sums that do not depend on the order rows are read in): the ints' sum, the
    longs' sums as exact decimals, and the sum of one 64-bit hash of each whole row (every
    column, strings and doubles bit for bit)."""
    from pyspark.sql import functions as F

    dec = "decimal(38,0)"
    r = df.agg(
        F.count(F.lit(1)).alias("rows"),
        F.sum(F.col("i1").cast("long")).alias("i1"),
        F.sum(F.col("i2").cast("long")).alias("i2"),
        F.sum(F.col("l1").cast(dec)).alias("l1"),
        F.sum(F.col("l2").cast(dec)).alias("l2"),
        F.sum(F.xxhash64(*[F.col(c) for c in df.columns]).cast(dec)).alias("rowhash"),
    ).collect()[0]
    return r["rows"], f"i1={r['i1']} i2={r['i2']} l1={r['l1']} l2={r['l2']} rowhash={r['rowhash']}"


def cpu_seconds(pid):
    """user+system CPU seconds of a process and its finished children (0 if it is gone)."""
    return sum(cpu_split(pid)[:2])


def proc_stat(path):
    """(name, fields after the name) of a /proc stat file (a process's or a thread's); the
    name sits in parentheses and may hold spaces. Raises OSError when it is gone."""
    with open(path) as f:
        st = f.read()
    return st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 1:].split()


def cpu_split(pid):
    """(user, system) CPU seconds of a process and its finished children, and its major page
    faults; zeros if it is gone."""
    try:
        fields = proc_stat(f"/proc/{pid}/stat")[1]
        tck = os.sysconf("SC_CLK_TCK")
        return ((int(fields[11]) + int(fields[13])) / tck, (int(fields[12]) + int(fields[14])) / tck,
                int(fields[9]))
    except OSError:
        return 0.0, 0.0, 0


# Thread names (as the kernel keeps them: their first 15 bytes) -> the part of the JVM's work
# they do; first match wins.
THREAD_PARTS = [
    ("Spark tasks", ("Executor task l",)),
    ("garbage collection", ("GC Thread", "G1 ", "VM Periodic")),
    ("JIT compilers", ("C1 CompilerThre", "C2 CompilerThre")),
    ("storage client", ("strato-", "grpc-", "DataStreamer", "ResponseProcess", "IPC ", "LeaseRenewer",
                        "s3a-", "sdk-", "aws-", "java-sdk-")),
]


def thread_cpu(pid):
    """{thread ID: (name, CPU seconds)} of the live threads of a process."""
    tck = os.sysconf("SC_CLK_TCK")
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            name, fields = proc_stat(f"/proc/{pid}/task/{tid}/stat")
        except OSError:
            continue
        out[tid] = (name, (int(fields[11]) + int(fields[12])) / tck)
    return out


def thread_parts(before, after, total):
    """The CPU seconds between two thread_cpu snapshots by THREAD_PARTS, and what threads
    that ended in between used (the process's total less the live threads')."""
    parts = {name: 0.0 for name, _ in THREAD_PARTS}
    parts["other"] = 0.0
    live = 0.0
    for tid, (name, secs) in after.items():
        d = secs - before.get(tid, (name, 0.0))[1]
        live += d
        part = next((n for n, ps in THREAD_PARTS if name.startswith(ps)), "other")
        parts[part] += d
    parts["threads that ended"] = max(total - live, 0.0)
    return parts


class Fs:
    """The Hadoop FileSystem of a URI, through Spark's JVM."""

    def __init__(self, spark, uri):
        jvm = spark._jvm
        self.jvm = jvm
        self.path = jvm.org.apache.hadoop.fs.Path(uri)
        self.fs = self.path.getFileSystem(spark._jsc.hadoopConfiguration())

    def child(self, name):
        return self.jvm.org.apache.hadoop.fs.Path(self.path, name)

    def delete(self, name):
        p = self.child(name)
        if self.fs.exists(p):
            self.fs.delete(p, True)

    def size(self, name):
        return self.fs.getContentSummary(self.child(name)).getLength()

    def listing(self, name):
        """the names under a directory, recursively, relative to it"""
        base = self.child(name)
        it = self.fs.listFiles(base, True)
        prefix = len(base.toUri().getPath().rstrip("/")) + 1
        out = []
        while it.hasNext():
            out.append(it.next().getPath().toUri().getPath()[prefix:])
        return out


def main(argv=None):
    args = parse_args(argv)
    target = args.target.rstrip("/")
    steps = set(args.steps.split(","))
    spark = session(args)
    jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    fs = Fs(spark, target)
    rows_per_it = args.mb_per_iteration * 1_000_000 // ROW_BYTES
    gen, copy = f"{target}/gen", f"{target}/copy"
    print(f"bench-spark: {target}: {args.iterations} x {args.mb_per_iteration} MB "
          f"({rows_per_it} rows of about {ROW_BYTES} bytes each), {args.master}, spark {spark.version}",
          flush=True)

    def cpu():
        """the Spark JVM's (user, system, major faults), the storage's CPU seconds, and the
        Spark JVM's threads' CPU"""
        return cpu_split(jvm_pid), sum(cpu_seconds(p) for p in args.server_pid), thread_cpu(jvm_pid)

    def report(step, secs, nbytes, rows, csum, c0, c1):
        mbps = nbytes / 1e6 / secs if secs > 0 else 0.0
        (u0, s0, f0), (u1, s1, f1) = c0[0], c1[0]
        jcpu, scpu = (u1 + s1) - (u0 + s0), c1[1] - c0[1]
        gb = nbytes / 1e9 if nbytes else float("nan")
        print(f"{step}: {secs:.2f} s, {nbytes / 1e6:.1f} MB written, {mbps:.1f} MB/s, {rows} rows, "
              f"CPU spark {jcpu:.1f} s ({jcpu / gb:.1f} s/GB; user {u1 - u0:.1f}, system {s1 - s0:.1f}, "
              f"{f1 - f0} major faults), storage {scpu:.1f} s ({scpu / gb:.1f} s/GB)",
              flush=True)
        parts = thread_parts(c0[2], c1[2], jcpu)
        print(f"{step} spark CPU by thread: " + ", ".join(f"{k} {v:.1f} s" for k, v in parts.items()), flush=True)
        print(f"{step} checksum: rows={rows} {csum}", flush=True)
        if args.results:
            with open(args.results, "a") as f:
                f.write("\t".join(str(x) for x in (
                    args.label, target, step, args.iterations, args.mb_per_iteration, f"{secs:.3f}",
                    nbytes, f"{mbps:.1f}", rows, f"{jcpu:.2f}", f"{scpu:.2f}", csum)) + "\n")

    # Untimed: the JVM's first Parquet write (class loading, code generation, the file
    # system's first connections) costs seconds that are no storage's.
    rows_df(spark, 0, 10_000, args.seed, args.partitions).write.mode("overwrite").parquet(f"{target}/warmup")
    spark.read.parquet(f"{target}/warmup").count()
    fs.delete("warmup")

    sums = {}
    if "generate" in steps:
        fs.delete("gen")
        fs.delete("copy")
        c0, t0 = cpu(), time.monotonic()
        for i in range(args.iterations):
            ti = time.monotonic()
            rows_df(spark, i * rows_per_it, rows_per_it, args.seed, args.partitions) \
                .write.mode("append").parquet(gen)
            if args.iterations <= 20 or i % 10 == 9:
                print(f"  generate iteration {i + 1}: {time.monotonic() - ti:.2f} s", flush=True)
        secs, c1 = time.monotonic() - t0, cpu()
        rows, sums["gen"] = checksum(spark.read.parquet(gen))
        report("generate", secs, fs.size("gen"), rows, sums["gen"], c0, c1)
        if rows != args.iterations * rows_per_it:
            sys.exit(f"bench-spark: {gen} holds {rows} rows, not {args.iterations * rows_per_it}")
    if "copy" in steps:
        fs.delete("copy")
        c0, t0 = cpu(), time.monotonic()
        spark.read.parquet(gen).write.mode("overwrite").parquet(copy)
        secs, c1 = time.monotonic() - t0, cpu()
        rows, sums["copy"] = checksum(spark.read.parquet(copy))
        report("copy", secs, fs.size("copy"), rows, sums["copy"], c0, c1)
        if "gen" in sums and sums["gen"] != sums["copy"]:
            sys.exit(f"bench-spark: the copy's checksum differs from the generated data's:\n"
                     f"  gen  {sums['gen']}\n  copy {sums['copy']}")
    if not args.keep:
        fs.delete("gen")
        fs.delete("copy")
    spark.stop()


if __name__ == "__main__":
    main()
