package io.strato.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.util.ToolRunner;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.FixMethodOrder;
import org.junit.Test;
import org.junit.runners.MethodSorters;

/**
 * Erasure coded files through the connector, on a cluster of processes (one
 * meta, six datanodes).
 * Files of several shapes (empty, under a cell, a cell, a stripe, stripes and
 * a partial one, three block groups) written by the connector are read back
 * by the Go CLI and the reverse, byte for byte; hflush and hsync are refused;
 * the composite CRC is the replicated file's; FsShell -put and -cat; and,
 * every file read back with two datanodes killed (degraded reads), and
 * refused, never wrong, with three; last, a write whose pipeline has a dead
 * member moves to a group without it.
 */
@FixMethodOrder(MethodSorters.NAME_ASCENDING)
public class TestErasureCoding {
  private static StratoProcesses cluster;
  private static FileSystem fs;
  private static Configuration conf;
  private static Path tmp;
  /** Cells of 64 KiB, blocks of 256 KiB: a group holds 4 stripes, 768 KiB. */
  static final String BUCKET = "/ecvol/rs32";
  static final int CELL = 64 << 10;
  static final int STRIPE = 3 * CELL;
  static final int GROUP = 4 * STRIPE;
  static final int[] SHAPES = {0, 100, CELL, STRIPE, 3 * STRIPE + 5000, 2 * GROUP + 12345};
  private static final List<org.apache.hadoop.fs.Path> written = new ArrayList<>();

  @BeforeClass
  public static void start() throws Exception {
    tmp = Files.createTempDirectory("strato-ec-test");
    cluster = new StratoProcesses(1, 6);
    conf = new Configuration();
    conf.set(StratoFileSystem.META_ADDRESSES, cluster.metaList());
    conf.setLong(StratoFileSystem.DATA_TIMEOUT, 10000);
    // Streams read pieces of 100 KiB: several per file, read ahead, across cells and groups.
    conf.set(StratoFileSystem.CHUNK_SIZE, "100k");
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    conf.set("fs.defaultFS", cluster.uri());
    fs = FileSystem.get(URI.create(cluster.uri()), conf);
    cluster.waitHealthyDatanodes(6, 60_000);
    cli("sh", "volume", "create", "ecvol");
    cli("sh", "bucket", "create", BUCKET, "--replication", "rs-3-2-64k", "--block-size", "256KiB");
    cli("sh", "bucket", "create", "/ecvol/big", "--replication", "rs-3-2-1024k");
    cli("sh", "bucket", "create", "/ecvol/three", "--replication", "THREE");
  }

  @AfterClass
  public static void stop() throws IOException {
    if (fs != null) {
      fs.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (tmp != null) {
      try (java.util.stream.Stream<Path> s = Files.walk(tmp)) {
        s.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
  }

  /** strato ARGS --meta CLUSTER; its output, or an IOException with it. */
  static String cli(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("strato.bin", "../bin/strato"));
    cmd.addAll(List.of(args));
    cmd.addAll(List.of("--meta", cluster.metaList()));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IOException(String.join(" ", cmd) + " failed: " + out);
    }
    return out;
  }

  static byte[] bytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  static void write(org.apache.hadoop.fs.Path p, byte[] data) throws IOException {
    try (FSDataOutputStream out = fs.create(p, true)) {
      // In uneven pieces, so that writes cross cells, stripes and batches.
      for (int off = 0; off < data.length;) {
        int n = Math.min(data.length - off, 7777 + off % 50000);
        out.write(data, off, n);
        off += n;
      }
    }
  }

  static byte[] readAll(org.apache.hadoop.fs.Path p) throws IOException {
    try (FSDataInputStream in = fs.open(p)) {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      byte[] buf = new byte[50_000];
      int n;
      while ((n = in.read(buf)) > 0) {
        b.write(buf, 0, n);
      }
      return b.toByteArray();
    }
  }

  /** The file read whole, then in positioned ranges across cells, stripes and groups. */
  static void checkReads(org.apache.hadoop.fs.Path p, byte[] want) throws IOException {
    assertArrayEquals(p.toString(), want, readAll(p));
    assertEquals(p.toString(), want.length, fs.getFileStatus(p).getLen());
    Random rnd = new Random(want.length);
    try (FSDataInputStream in = fs.open(p)) {
      for (int i = 0; i < 8 && want.length > 0; i++) {
        int off = rnd.nextInt(want.length);
        int len = Math.min(want.length - off, 1 + rnd.nextInt(2 * STRIPE));
        byte[] got = new byte[len];
        in.readFully(off, got);
        assertArrayEquals(p + " [" + off + ", +" + len + ")", java.util.Arrays.copyOfRange(want, off, off + len), got);
      }
    }
  }

  /** The datanode IDs of the members of p's last block group, in member order (strato sh key info). */
  static String[] lastGroupMembers(org.apache.hadoop.fs.Path p) throws Exception {
    String info = cli("sh", "key", "info", local(p));
    String[] last = info.strip().lines().reduce((x, y) -> y).get().trim().split("\\s+");
    String[] members = last[last.length - 1].split(",");
    assertEquals(info, 5, members.length);
    return members;
  }

  private static String local(org.apache.hadoop.fs.Path p) {
    return p.toUri().getPath();
  }

  @Test
  public void a_javaWritesGoReads() throws Exception {
    for (int n : SHAPES) {
      org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(BUCKET + "/java-" + n);
      byte[] data = bytes(n, n);
      write(p, data);
      written.add(p);
      String info = cli("sh", "key", "info", local(p));
      assertTrue(info, info.contains("rs-3-2-64k"));
      assertTrue(info, info.contains("Blocks:") && info.matches("(?s).*Blocks:\\s+" + (n + GROUP - 1) / GROUP + "\\n.*"));
      Path f = tmp.resolve("got-java-" + n);
      cli("sh", "key", "get", local(p), f.toString());
      assertArrayEquals("the Go client reads " + p, data, Files.readAllBytes(f));
      checkReads(p, data);
    }
  }

  @Test
  public void b_goWritesJavaReads() throws Exception {
    for (int n : SHAPES) {
      org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(BUCKET + "/go-" + n);
      byte[] data = bytes(n, 1000 + n);
      Path f = tmp.resolve("put-go-" + n);
      Files.write(f, data);
      cli("sh", "key", "put", local(p), f.toString());
      written.add(p);
      checkReads(p, data);
    }
  }

  @Test
  public void c_hflushAndHsyncDoNothing() throws Exception {
    org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(BUCKET + "/nosync");
    byte[] data = bytes(1000, 7);
    try (FSDataOutputStream out = fs.create(p, true)) {
      assertFalse(out.hasCapability(StreamCapabilities.HFLUSH));
      assertFalse(out.hasCapability(StreamCapabilities.HSYNC));
      out.write(data);
      // As HDFS's striped streams: they do nothing (Parquet's writer calls hflush without asking).
      out.hflush();
      out.hsync();
      assertFalse("nothing is visible before close", fs.exists(p) && fs.getFileStatus(p).getLen() > 0);
      out.write(data);
    }
    byte[] twice = new byte[2 * data.length];
    System.arraycopy(data, 0, twice, 0, data.length);
    System.arraycopy(data, 0, twice, data.length, data.length);
    assertArrayEquals(twice, readAll(p));
    IOException e = assertThrows(IOException.class, () -> fs.append(p).close());
    assertTrue(e.getMessage(), e.getMessage().contains("erasure coded"));
  }

  @Test
  public void d_checksumIsTheReplicatedFilesChecksum() throws Exception {
    byte[] data = bytes(2 * GROUP + 999, 11);
    org.apache.hadoop.fs.Path ec = new org.apache.hadoop.fs.Path(BUCKET + "/sum");
    org.apache.hadoop.fs.Path three = new org.apache.hadoop.fs.Path("/ecvol/three/sum");
    write(ec, data);
    write(three, data);
    FileChecksum a = fs.getFileChecksum(ec);
    assertNotNull(a);
    // The status says which file is erasure coded, as HDFS's does (replication 1 for a striped file).
    FileStatus ecs = fs.getFileStatus(ec);
    assertTrue(ecs.isErasureCoded());
    assertEquals(1, ecs.getReplication());
    assertTrue(fs.listStatus(ec)[0].isErasureCoded());
    assertFalse(fs.getFileStatus(three).isErasureCoded());
    assertEquals(3, fs.getFileStatus(three).getReplication());
    assertEquals(fs.getFileChecksum(three), a);
    assertEquals(fs.getFileChecksum(three, 300_000), fs.getFileChecksum(ec, 300_000));
  }

  @Test
  public void e_fsShellPutAndCat() throws Exception {
    byte[] data = bytes(5 << 20 | 4321, 13); // a stripe and a partial one of 1 MiB cells
    Path f = tmp.resolve("shell-put");
    Files.write(f, data);
    assertEquals(0, ToolRunner.run(new FsShell(conf), new String[] {"-put", f.toString(), "/ecvol/big/put"}));
    PrintStream out0 = System.out;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int code;
    try {
      System.setOut(new PrintStream(out, true));
      code = ToolRunner.run(new FsShell(conf), new String[] {"-cat", "/ecvol/big/put"});
    } finally {
      System.setOut(out0);
    }
    assertEquals(0, code);
    assertArrayEquals(data, out.toByteArray());
    String info = cli("sh", "key", "info", "/ecvol/big/put");
    assertTrue(info, info.contains("rs-3-2-1024k"));
    written.add(new org.apache.hadoop.fs.Path("/ecvol/big/put"));
  }

  /**
   * Hadoop's TeraGen, TeraSort and TeraValidate (LocalJobRunner) with their
   * input and output in the erasure coded bucket: every file written is
   * erasure coded, and the sorted rows are the generated ones.
   */
  @Test
  public void ea_teraSortOnErasureCodedBucket() throws Exception {
    long rows = 100_000; // 10 MB: groups of 768 KiB in this bucket
    Configuration jc = new Configuration(conf);
    jc.set("fs.defaultFS", "file:///");
    jc.set("hadoop.tmp.dir", tmp.resolve("hadoop-tmp").toString());
    jc.set("mapreduce.framework.name", "local");
    jc.setInt("mapreduce.job.reduces", 2);
    // TeraSort writes its output with replication 1 unless told (a ONE file in any strato bucket).
    jc.setInt("mapreduce.terasort.output.replication", 3);
    String base = cluster.uri() + BUCKET.substring(1) + "/tera/";
    String gen = base + "gen";
    String sorted = base + "sorted";
    assertEquals(0, ToolRunner.run(jc, new org.apache.hadoop.examples.terasort.TeraGen(),
        new String[] {Long.toString(rows), gen}));
    assertEquals(0, ToolRunner.run(jc, new org.apache.hadoop.examples.terasort.TeraSort(), new String[] {gen, sorted}));
    assertEquals(0, ToolRunner.run(jc, new org.apache.hadoop.examples.terasort.TeraValidate(),
        new String[] {sorted, base + "report"}));
    assertEquals(0, ToolRunner.run(jc, new org.apache.hadoop.examples.terasort.TeraValidate(),
        new String[] {gen, base + "report-gen"}));
    FileSystem jfs = new org.apache.hadoop.fs.Path(base).getFileSystem(jc);
    List<String> report = TestTeraSort.lines(jfs, new org.apache.hadoop.fs.Path(base + "report"));
    for (String l : report) {
      assertTrue("TeraValidate found an error: " + report, l.startsWith("checksum"));
    }
    assertEquals("the sorted rows are the generated rows",
        TestTeraSort.checksum(TestTeraSort.lines(jfs, new org.apache.hadoop.fs.Path(base + "report-gen"))),
        TestTeraSort.checksum(report));
    long bytes = 0;
    for (String dir : new String[] {gen, sorted}) {
      for (FileStatus st : jfs.listStatus(new org.apache.hadoop.fs.Path(dir))) {
        if (st.getPath().getName().startsWith("part-")) {
          assertTrue(st.getPath() + " is erasure coded", st.isErasureCoded());
          bytes += st.getLen();
        }
      }
    }
    assertEquals(2 * rows * 100, bytes);
  }

  @Test
  public void f_degradedReads() throws Exception {
    List<byte[]> want = new ArrayList<>();
    for (org.apache.hadoop.fs.Path p : written) {
      want.add(readAll(p));
    }
    // Two datanodes gone: a stripe has lost at most two members. The two are
    // data members 0 and 1 of the three-group file's last group, whose cells
    // must then be rebuilt.
    org.apache.hadoop.fs.Path big = written.get(SHAPES.length - 1);
    String[] members = lastGroupMembers(big);
    List<Integer> killed = new ArrayList<>();
    for (int m = 0; m < 2; m++) {
      int i = cluster.datanodeIndex(members[m]);
      assertTrue(members[m], i >= 0);
      cluster.datanodes.get(i).kill();
      killed.add(i);
    }
    for (int i = 0; i < written.size(); i++) {
      checkReads(written.get(i), want.get(i));
    }
    // A third: too many lost. The read fails; it never returns wrong bytes.
    int third = cluster.datanodeIndex(members[2]);
    cluster.datanodes.get(third).kill();
    killed.add(third);
    try {
      readAll(big);
      fail("read " + big + " with three of its group's five members gone");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("too many members lost"));
    }
    for (int i : killed) {
      cluster.datanodes.get(i).start();
    }
    cluster.waitHealthyDatanodes(6, 60_000);
  }

  @Test
  public void g_writeSurvivesADeadMember() throws Exception {
    // A member of the pipeline the last writes used, killed (meta still
    // lists it: it is dead only after 10 minutes here). The writer's first
    // batch to it fails; the batch moves to a group without it.
    org.apache.hadoop.fs.Path probe = new org.apache.hadoop.fs.Path(BUCKET + "/probe");
    write(probe, bytes(1000, 3));
    String[] members = lastGroupMembers(probe);
    int victim = cluster.datanodeIndex(members[0]);
    cluster.datanodes.get(victim).kill();
    try {
      org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(BUCKET + "/survivor");
      byte[] data = bytes(2 * GROUP + 4321, 21);
      write(p, data);
      checkReads(p, data);
      String info = cli("sh", "key", "info", local(p));
      assertFalse("no group of the new file on the dead datanode:\n" + info, info.contains(members[0]));
      Path f = tmp.resolve("survivor");
      cli("sh", "key", "get", local(p), f.toString());
      assertArrayEquals(data, Files.readAllBytes(f));
    } finally {
      cluster.datanodes.get(victim).start();
      cluster.waitHealthyDatanodes(6, 60_000);
    }
  }

  @Test
  public void h_corruptCellIsRebuiltAndReported() throws Exception {
    org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(BUCKET + "/corrupt");
    byte[] data = bytes(3 * STRIPE + 5000, 31);
    write(p, data);
    // A byte of data member 1's block flipped on disk: the reader finds
    // its checksum wrong, rebuilds the cell from the others and reports it.
    StratoFileSystem sfs = (StratoFileSystem) fs;
    io.strato.proto.v1.KeyInfo k = sfs.client().lookupKey("ecvol", BUCKET.substring(BUCKET.lastIndexOf('/') + 1),
        "corrupt");
    io.strato.proto.v1.BlockLocation bl = k.getBlocks(0);
    String id = bl.getPipeline().getMembers(1).getId();
    int dn = cluster.datanodeIndex(id);
    Path f = cluster.datanodeDirs.get(dn).resolve("containers")
        .resolve(Long.toUnsignedString(bl.getBlockId().getContainerId())).resolve("chunks")
        .resolve(Long.toUnsignedString(bl.getBlockId().getLocalId()) + ".block");
    assertTrue("block file " + f, Files.exists(f));
    try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(f.toFile(), "rw")) {
      raf.seek(12345);
      int b = raf.read();
      raf.seek(12345);
      raf.write(b ^ 0x5a);
    }
    checkReads(p, data);
    String info = cli("admin", "container", "info", Long.toUnsignedString(bl.getBlockId().getContainerId()));
    assertTrue(info, info.contains("UNHEALTHY"));
  }

  @Test
  public void i_otherCodes() throws Exception {
    // XOR-2-1 and RS-4-2 (six members: every datanode), both ways.
    for (String code : new String[] {"xor-2-1-64k", "rs-4-2-64k"}) {
      String bucket = "/ecvol/" + code.replace("-64k", "");
      cli("sh", "bucket", "create", bucket, "--replication", code, "--block-size", "256KiB");
      int n = 5 * 4 * CELL + 777; // several stripes, a partial one, past a group
      byte[] data = bytes(n, code.length());
      org.apache.hadoop.fs.Path java = new org.apache.hadoop.fs.Path(bucket + "/java");
      write(java, data);
      Path f = tmp.resolve("got-" + code);
      cli("sh", "key", "get", local(java), f.toString());
      assertArrayEquals(code + ": the Go client reads the connector's file", data, Files.readAllBytes(f));
      org.apache.hadoop.fs.Path go = new org.apache.hadoop.fs.Path(bucket + "/go");
      cli("sh", "key", "put", local(go), f.toString());
      checkReads(go, data);
      assertTrue(cli("sh", "key", "info", local(go)).contains(code));
    }
  }
}
