package io.strato.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.terasort.TeraGen;
import org.apache.hadoop.examples.terasort.TeraSort;
import org.apache.hadoop.examples.terasort.TeraValidate;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.util.ToolRunner;
import org.junit.Test;

/**
 * Hadoop's own TeraGen, TeraSort and TeraValidate (hadoop-mapreduce-examples,
 * LocalJobRunner) with their input and output on strato:// paths, the job's
 * staging on the local file system. TeraValidate must find no error, and the
 * checksum of the rows (TeraValidate's, TeraGen's CHECKSUM counter) must equal
 * `strato bench teragen`'s for the same rows. Rows: system property
 * strato.terasort.rows (default 200,000: 20 MB; docs/hadoop.md has a 10M run).
 */
public class TestTeraSort {
  @Test
  public void teraGenSortValidate() throws Exception {
    long rows = Long.getLong("strato.terasort.rows", 200_000);
    StratoCluster cluster = StratoCluster.get();
    Configuration conf = cluster.conf();
    conf.set("fs.defaultFS", "file:///");
    java.nio.file.Path tmp = Files.createTempDirectory("strato-terasort");
    conf.set("hadoop.tmp.dir", tmp.resolve("hadoop-tmp").toString());
    conf.set("mapreduce.framework.name", "local");
    conf.setInt("mapreduce.job.reduces", 2);
    String base = cluster.uri() + "tera/bkt/";
    String gen = base + "gen";
    String sorted = base + "sorted";
    String report = base + "report";
    String report2 = base + "report-gen";

    assertEquals(0, ToolRunner.run(conf, new TeraGen(), new String[] {Long.toString(rows), gen}));
    assertEquals(0, ToolRunner.run(conf, new TeraSort(), new String[] {gen, sorted}));
    assertEquals(0, ToolRunner.run(conf, new TeraValidate(), new String[] {sorted, report}));
    assertEquals(0, ToolRunner.run(conf, new TeraValidate(), new String[] {gen, report2}));

    FileSystem fs = new Path(base).getFileSystem(conf);
    List<String> sortedReport = lines(fs, new Path(report));
    List<String> genReport = lines(fs, new Path(report2));
    String sum = checksum(sortedReport);
    for (String l : sortedReport) {
      assertTrue("TeraValidate found an error: " + sortedReport, l.startsWith("checksum"));
    }
    assertEquals("the sorted rows are the generated rows", checksum(genReport), sum);
    long bytes = 0;
    for (FileStatus s : fs.listStatus(new Path(sorted))) {
      bytes += s.getLen();
    }
    assertTrue(fs.exists(new Path(sorted, "_SUCCESS")));
    assertEquals(rows * 100, bytes - fs.getFileStatus(new Path(sorted, "_partition.lst")).getLen());

    // The same rows from strato bench teragen (the Go path), locally.
    java.nio.file.Path local = tmp.resolve("go");
    Process p = new ProcessBuilder(System.getProperty("strato.bin", "../bin/strato"), "bench", "teragen",
        Long.toString(rows), "/tg", "--writers", "1", "--local-dir", local.toString())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(5, TimeUnit.MINUTES));
    assertEquals(out, 0, p.exitValue());
    String goSum = null;
    for (String l : out.split("\n")) {
      if (l.trim().startsWith("CHECKSUM=")) {
        goSum = l.trim().substring("CHECKSUM=".length());
      }
    }
    assertEquals("strato bench teragen's CHECKSUM (" + goSum + ") as TeraValidate's (hex " + sum + ")",
        Long.parseUnsignedLong(goSum), Long.parseUnsignedLong(sum, 16));
  }

  static String checksum(List<String> report) {
    for (String l : report) {
      if (l.startsWith("checksum")) {
        return l.split("\t")[1].trim();
      }
    }
    throw new AssertionError("no checksum in TeraValidate's report " + report);
  }

  static List<String> lines(FileSystem fs, Path dir) throws IOException {
    List<String> out = new ArrayList<>();
    for (FileStatus s : fs.listStatus(dir)) {
      if (!s.getPath().getName().startsWith("part-")) {
        continue;
      }
      try (FSDataInputStream in = fs.open(s.getPath());
           BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
        String l;
        while ((l = r.readLine()) != null) {
          out.add(l);
        }
      }
    }
    return out;
  }
}
