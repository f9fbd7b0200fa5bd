package io.strato.hadoop;

import java.io.IOException;
import java.net.URI;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.Test;

/**
 * A small timing of erasure coded (RS-3-2, 1 MiB cells) against replicated
 * (THREE) files through the connector, on five datanode processes on this
 * host: write, read back, and (EC) read with a data member's datanode
 * killed. Not a test (surefire's patterns skip it): run it alone, on an idle
 * machine, with -Dtest=ErasureCodingTiming (-Dstrato.timing.mb=N).
 */
public class ErasureCodingTiming {
  @Test
  public void time() throws Exception {
    int mb = Integer.getInteger("strato.timing.mb", 256);
    try (StratoProcesses cluster = new StratoProcesses(1, 5)) {
      cluster.waitHealthyDatanodes(5, 60_000);
      Configuration conf = new Configuration();
      conf.set(StratoFileSystem.META_ADDRESSES, cluster.metaList());
      conf.setBoolean("fs.strato.impl.disable.cache", true);
      try (FileSystem fs = FileSystem.get(URI.create(cluster.uri()), conf)) {
        cli(cluster, "sh", "volume", "create", "timing");
        cli(cluster, "sh", "bucket", "create", "/timing/three", "--replication", "THREE");
        cli(cluster, "sh", "bucket", "create", "/timing/rs32", "--replication", "rs-3-2-1024k");
        byte[] buf = new byte[1 << 20];
        new Random(1).nextBytes(buf);
        // Alternating rounds, one warm-up each not counted.
        for (int round = 0; round < 3; round++) {
          for (String b : new String[] {"three", "rs32"}) {
            Path p = new Path("/timing/" + b + "/f" + round);
            long t0 = System.nanoTime();
            try (FSDataOutputStream out = fs.create(p, true)) {
              for (int i = 0; i < mb; i++) {
                out.write(buf);
              }
            }
            long t1 = System.nanoTime();
            long n = readAll(fs, p);
            long t2 = System.nanoTime();
            if (n != (long) mb << 20) {
              throw new IOException(p + ": read " + n + " bytes");
            }
            System.out.printf("TIMING round %d %-5s write %.1f MB/s read %.1f MB/s%n", round, b,
                mbps(n, t1 - t0), mbps(n, t2 - t1));
          }
        }
        // Degraded: member 0 of the last EC file's last group killed.
        Path p = new Path("/timing/rs32/f2");
        String info = cli(cluster, "sh", "key", "info", p.toUri().getPath());
        String[] last = info.strip().lines().reduce((x, y) -> y).get().trim().split("\\s+");
        String m0 = last[last.length - 1].split(",")[0];
        cluster.datanodes.get(cluster.datanodeIndex(m0)).kill();
        long t0 = System.nanoTime();
        long n = readAll(fs, p);
        System.out.printf("TIMING degraded rs32 read %.1f MB/s (data member 0 gone)%n", mbps(n, System.nanoTime() - t0));
      }
    }
    // The Java code alone, one thread: parity of 64 MiB of full stripes.
    io.strato.client.ErasureCode ec = io.strato.client.ErasureCode.parse("rs-3-2-1024k");
    byte[] data = new byte[64 << 20];
    new Random(2).nextBytes(data);
    ec.encodeGroup(data);
    long t0 = System.nanoTime();
    ec.encodeGroup(data);
    System.out.printf("TIMING java encode rs-3-2-1024k %.1f MB/s of data (one thread)%n",
        mbps(data.length, System.nanoTime() - t0));
  }

  private static String cli(StratoProcesses cluster, String... args) throws Exception {
    java.util.List<String> cmd = new java.util.ArrayList<>();
    cmd.add(System.getProperty("strato.bin", "../bin/strato"));
    cmd.addAll(java.util.List.of(args));
    cmd.addAll(java.util.List.of("--meta", cluster.metaList()));
    Process pr = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(pr.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (pr.waitFor() != 0) {
      throw new IOException(String.join(" ", cmd) + " failed: " + out);
    }
    return out;
  }

  private static double mbps(long bytes, long nanos) {
    return bytes / 1e6 / (nanos / 1e9);
  }

  private static long readAll(FileSystem fs, Path p) throws IOException {
    byte[] b = new byte[1 << 20];
    long n = 0;
    try (FSDataInputStream in = fs.open(p)) {
      int k;
      while ((k = in.read(b)) > 0) {
        n += k;
      }
    }
    return n;
  }
}
