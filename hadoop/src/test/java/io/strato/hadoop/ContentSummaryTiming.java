package io.strato.hadoop;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.util.ToolRunner;
import org.junit.Test;

/**
 * `hadoop fs -count` and `hadoop fs -du -s` of a big directory through the
 * connector (FsShell in this JVM, a new FileSystem each time: meta adds the
 * subtree up, GetContentSummary), against the walk a client does without
 * it (every directory listed, as FileSystem's own getContentSummary does).
 * Rounds alternate the order; the summary gives medians.
 *
 * <p>A benchmark, not a test: scripts/bench-count.sh builds the namespace,
 * starts meta and runs it (-Dstrato.timing.uri=strato://HOST:PORT/vol/bkt/dir).
 */
public class ContentSummaryTiming {
  @Test
  public void time() throws Exception {
    String uri = System.getProperty("strato.timing.uri");
    if (uri == null) {
      throw new IllegalArgumentException("-Dstrato.timing.uri=strato://HOST:PORT/VOL/BUCKET/DIR");
    }
    int rounds = Integer.getInteger("strato.timing.rounds", 5);
    Configuration conf = new Configuration();
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    String[] what = {"fs -count", "fs -du -s", "client walk"};
    double[][] secs = new double[what.length][rounds];
    for (int r = 0; r < rounds; r++) {
      for (int k = 0; k < what.length; k++) {
        int w = r % 2 == 0 ? k : what.length - 1 - k;
        long t0 = System.nanoTime();
        String out = switch (w) {
          case 0 -> shell(conf, "-count", uri);
          case 1 -> shell(conf, "-du", "-s", uri);
          default -> walk(conf, uri);
        };
        secs[w][r] = (System.nanoTime() - t0) / 1e9;
        System.out.printf("TIMING round %d %-11s %.3f s: %s%n", r, what[w], secs[w][r], out.strip());
      }
    }
    for (int w = 0; w < what.length; w++) {
      double[] s = secs[w].clone();
      Arrays.sort(s);
      System.out.printf("TIMING median %-11s %.3f s%n", what[w], s[s.length / 2]);
    }
  }

  private static String shell(Configuration conf, String... args) throws Exception {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    PrintStream old = System.out;
    System.setOut(new PrintStream(b, true, StandardCharsets.UTF_8));
    int rc;
    try {
      rc = ToolRunner.run(new FsShell(new Configuration(conf)), args);
    } finally {
      System.setOut(old);
    }
    if (rc != 0) {
      throw new IllegalStateException("fs " + String.join(" ", args) + " exited " + rc + ": " + b);
    }
    return b.toString(StandardCharsets.UTF_8);
  }

  /** Directories, files and bytes under uri, every directory listed (FileSystem's own getContentSummary's walk). */
  private static String walk(Configuration conf, String uri) throws Exception {
    try (FileSystem fs = FileSystem.newInstance(URI.create(uri), conf)) {
      long[] c = new long[3];
      walk(fs, new Path(uri), c);
      return c[0] + " " + c[1] + " " + c[2];
    }
  }

  private static void walk(FileSystem fs, Path dir, long[] c) throws Exception {
    c[0]++;
    RemoteIterator<FileStatus> it = fs.listStatusIterator(dir);
    while (it.hasNext()) {
      FileStatus s = it.next();
      if (s.isDirectory()) {
        walk(fs, s.getPath(), c);
      } else {
        c[1]++;
        c[2] += s.getLen();
      }
    }
  }
}
