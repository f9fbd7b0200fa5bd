#!/usr/bin/env python3
"""The on-CPU Java samples of a JFR recording (jdk.ExecutionSample) by the owner of the top frame, and the share with a storage client, Parquet or Spark anywhere on the stack. Usage: jfr-owners.py REC.jfr [JFR_BIN]"""
import re, sys, collections, subprocess
jfr = sys.argv[1]
jfrbin = sys.argv[2] if len(sys.argv) > 2 else "jfr"
out = subprocess.run([jfrbin, "print", "--events", "jdk.ExecutionSample", jfr], capture_output=True, text=True).stdout
evs = re.split(r'\njdk\.(?:ExecutionSample|NativeMethodSample) ', out)
def owner(f):
    for p, name in (("io.strato.", "strato connector"), ("org.apache.hadoop.hdfs.", "HDFS client"),
                    ("org.apache.hadoop.util.DataChecksum", "HDFS client"), ("org.apache.hadoop.util.NativeCrc32", "HDFS client"),
                    ("org.apache.hadoop.ipc.", "Hadoop IPC"), ("org.apache.parquet.", "Parquet"),
                    ("org.apache.spark.", "Spark"), ("java.util.zip.", "java.util.zip"), ("sun.nio.", "JDK nio"),
                    ("java.", "JDK"), ("jdk.", "JDK"), ("sun.", "JDK"), ("org.apache.hadoop.", "Hadoop other"),
                    ("scala.", "Scala"), ("io.netty", "netty"), ("io.strato.hadoop.shaded", "strato connector")):
        if f.startswith(p):
            return name
    return "other"
top = collections.Counter(); incl = collections.Counter(); n = 0
for e in evs:
    fr = re.findall(r'^\s+([\w\.$<>]+)\(', e, re.M)
    if not fr:
        continue
    n += 1
    top[owner(fr[0])] += 1
    owners = {owner(f) for f in fr}
    for o in ("strato connector", "HDFS client", "Parquet", "Spark"):
        if o in owners:
            incl[o] += 1
print(f"samples {n}")
for k, v in top.most_common():
    print(f"  top frame {k}: {100 * v / n:.1f}%")
for k, v in incl.most_common():
    print(f"  anywhere on the stack {k}: {100 * v / n:.1f}%")
