package io.strato.hadoop;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.Test;

/**
 * Erasure coded (RS-3-2, 1 MiB cells) against replicated (THREE) files
 * through the connector, and the connector's erasure coded write and read
 * against the Go client's (strato sh key put/get of a file in /dev/shm), on
 * one meta and five datanode processes on this host. Rounds alternate the
 * order of the four paths; a warm-up round is not counted; the summary gives
 * medians and their ratios. Then a degraded read (data member 0's datanode
 * killed) and the Java code's encode alone.
 *
 * <p>A benchmark, not a test (surefire's patterns skip it): run it alone, on
 * an idle machine, with scripts/bench-ec-hadoop.sh (-Dtest=ErasureCodingTiming
 * -Dstrato.timing.mb=N -Dstrato.timing.rounds=R).
 */
public class ErasureCodingTiming {
  private static final String[] PATHS = {"java three", "java rs32", "go three", "go rs32"};

  @Test
  public void time() throws Exception {
    int mb = Integer.getInteger("strato.timing.mb", 256);
    int rounds = Integer.getInteger("strato.timing.rounds", 3);
    java.nio.file.Path shm = Files.createTempDirectory(java.nio.file.Paths.get("/dev/shm"), "ec-timing");
    byte[] buf = new byte[1 << 20];
    new Random(1).nextBytes(buf);
    java.nio.file.Path src = shm.resolve("src");
    try (java.io.OutputStream o = Files.newOutputStream(src)) {
      for (int i = 0; i < mb; i++) {
        o.write(buf);
      }
    }
    double[][] write = new double[PATHS.length][rounds];
    double[][] read = new double[PATHS.length][rounds];
    try (StratoProcesses cluster = new StratoProcesses(1, 5)) {
      cluster.waitHealthyDatanodes(5, 60_000);
      Configuration conf = new Configuration();
      conf.set(StratoFileSystem.META_ADDRESSES, cluster.metaList());
      conf.setBoolean("fs.strato.impl.disable.cache", true);
      try (FileSystem fs = FileSystem.get(URI.create(cluster.uri()), conf)) {
        cli(cluster, "sh", "volume", "create", "timing");
        cli(cluster, "sh", "bucket", "create", "/timing/three", "--replication", "THREE");
        cli(cluster, "sh", "bucket", "create", "/timing/rs32", "--replication", "rs-3-2-1024k");
        for (int round = -1; round < rounds; round++) {
          for (int k = 0; k < PATHS.length; k++) {
            int p = Math.floorMod(round % 2 == 0 ? k : PATHS.length - 1 - k, PATHS.length);
            double[] t = timePath(cluster, fs, PATHS[p], round, buf, mb, src, shm);
            System.out.printf("TIMING round %d %-10s write %7.1f MB/s read %7.1f MB/s%n", round, PATHS[p], t[0], t[1]);
            if (round >= 0) {
              write[p][round] = t[0];
              read[p][round] = t[1];
            }
          }
        }
        for (int p = 0; p < PATHS.length; p++) {
          System.out.printf("TIMING median %-10s write %7.1f MB/s read %7.1f MB/s%n", PATHS[p], median(write[p]),
              median(read[p]));
        }
        System.out.printf("TIMING ratio java rs32/java three: write %.2f read %.2f%n",
            median(write[1]) / median(write[0]), median(read[1]) / median(read[0]));
        System.out.printf("TIMING ratio java rs32 time/go rs32 time: write %.2f read %.2f%n",
            median(write[3]) / median(write[1]), median(read[3]) / median(read[1]));
        // Degraded: member 0 of the last EC file's last group killed.
        Path p = new Path("/timing/rs32/java-" + (rounds - 1));
        String info = cli(cluster, "sh", "key", "info", p.toUri().getPath());
        String[] last = info.strip().lines().reduce((x, y) -> y).get().trim().split("\\s+");
        String m0 = last[last.length - 1].split(",")[0];
        cluster.datanodes.get(cluster.datanodeIndex(m0)).kill();
        long t0 = System.nanoTime();
        long n = readAll(fs, p);
        System.out.printf("TIMING degraded java rs32 read %.1f MB/s (data member 0 gone)%n", mbps(n, System.nanoTime() - t0));
      }
    } finally {
      try (var s = Files.list(shm)) {
        for (java.nio.file.Path f : (Iterable<java.nio.file.Path>) s::iterator) {
          Files.deleteIfExists(f);
        }
      }
      Files.deleteIfExists(shm);
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

  /** Writes and reads one file by one path; returns {write MB/s, read MB/s}. */
  private static double[] timePath(StratoProcesses cluster, FileSystem fs, String path, int round, byte[] buf, int mb,
      java.nio.file.Path src, java.nio.file.Path shm) throws Exception {
    String[] f = path.split(" ");
    String key = "/timing/" + f[1] + "/" + f[0] + "-" + round;
    long bytes = (long) mb << 20;
    long t0 = System.nanoTime();
    if (f[0].equals("java")) {
      try (FSDataOutputStream out = fs.create(new Path(key), true)) {
        for (int i = 0; i < mb; i++) {
          out.write(buf);
        }
      }
    } else {
      cli(cluster, "sh", "key", "put", key, src.toString());
    }
    long t1 = System.nanoTime();
    long n;
    if (f[0].equals("java")) {
      n = readAll(fs, new Path(key));
    } else {
      java.nio.file.Path got = shm.resolve("got");
      cli(cluster, "sh", "key", "get", key, got.toString());
      n = Files.size(got);
      Files.delete(got);
    }
    long t2 = System.nanoTime();
    if (n != bytes) {
      throw new IOException(key + ": read " + n + " bytes");
    }
    return new double[] {mbps(n, t1 - t0), mbps(n, t2 - t1)};
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  private static String cli(StratoProcesses cluster, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("strato.bin", "../bin/strato"));
    cmd.addAll(List.of(args));
    cmd.addAll(List.of("--meta", cluster.metaList()));
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
