package io.strato.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonPathCapabilities;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.hdfs.protocol.SnapshotDiffReport;
import org.apache.hadoop.hdfs.protocol.SnapshotDiffReport.DiffReportEntry;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.tools.DistCp;
import org.apache.hadoop.util.ToolRunner;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Bucket snapshots through the connector (docs/hadoop.md "Snapshots"):
 * createSnapshot, renameSnapshot and deleteSnapshot of a bucket's root;
 * the old files read at /VOLUME/BUCKET/.snapshot/NAME through the
 * FileSystem API and Hadoop's shell (-ls, -cat, -cp), and refused for
 * writing; getSnapshotDiffReport in HDFS's terms; and DistCp's
 * -update -diff between two strato buckets, which copies only what changed.
 */
public class TestSnapshots {
  private static StratoCluster cluster;
  private static FileSystem fs;

  @BeforeClass
  public static void start() throws IOException {
    cluster = StratoCluster.get();
    fs = cluster.fs();
  }

  private static void write(Path p, String s) throws IOException {
    try (FSDataOutputStream out = fs.create(p, true)) {
      out.write(s.getBytes(StandardCharsets.UTF_8));
    }
  }

  private static String read(Path p) throws IOException {
    try (FSDataInputStream in = fs.open(p)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static Set<String> names(Path dir) throws IOException {
    Set<String> out = new TreeSet<>();
    for (FileStatus st : fs.listStatus(dir)) {
      out.add(st.getPath().getName());
    }
    return out;
  }

  /** The report as "TYPE path" or "R path -> target" lines, HDFS's labels. */
  private static Set<String> lines(SnapshotDiffReport r) {
    Set<String> out = new TreeSet<>();
    for (DiffReportEntry e : r.getDiffList()) {
      String line = e.getType().getLabel() + " " + new String(e.getSourcePath(), StandardCharsets.UTF_8);
      if (e.getTargetPath() != null) {
        line += " -> " + new String(e.getTargetPath(), StandardCharsets.UTF_8);
      }
      out.add(line);
    }
    return out;
  }

  @Test
  public void createReadDiffRenameDelete() throws Exception {
    Path b = fs.makeQualified(new Path("/snap/api"));
    write(new Path(b, "dir/a.txt"), "alpha");
    write(new Path(b, "dir/b.txt"), "beta");
    write(new Path(b, "c.txt"), "gamma");

    StratoFileSystem sfs = (StratoFileSystem) fs;
    assertTrue(fs.hasPathCapability(b, CommonPathCapabilities.FS_SNAPSHOTS));
    assertTrue(fs.hasPathCapability(new Path(b, "dir"), CommonPathCapabilities.FS_SNAPSHOTS));
    assertFalse(fs.hasPathCapability(new Path("/snap"), CommonPathCapabilities.FS_SNAPSHOTS));

    Path s1 = fs.createSnapshot(b, "s1");
    assertEquals(new Path(b, ".snapshot/s1"), s1);
    assertTrue(cluster.cli("sh", "snapshot", "list", "/snap/api").contains("s1"));

    // Change everything after s1.
    assertTrue(fs.delete(new Path(b, "dir/a.txt"), false));
    assertTrue(fs.rename(new Path(b, "dir/b.txt"), new Path(b, "dir/b2.txt")));
    write(new Path(b, "c.txt"), "gamma, rewritten");
    write(new Path(b, "new.txt"), "new");
    assertTrue(fs.rename(new Path(b, "dir"), new Path(b, "dir2")));
    write(new Path(b, "dir2/n.txt"), "n");

    // The bucket as it was, under .snapshot/s1.
    assertEquals(Set.of("s1"), names(new Path(b, ".snapshot")));
    assertEquals(Set.of("c.txt", "dir"), names(s1));
    assertEquals(Set.of("a.txt", "b.txt"), names(new Path(s1, "dir")));
    assertEquals("alpha", read(new Path(s1, "dir/a.txt")));
    assertEquals("beta", read(new Path(s1, "dir/b.txt")));
    assertEquals("gamma", read(new Path(s1, "c.txt")));
    assertEquals("gamma, rewritten", read(new Path(b, "c.txt")));
    FileStatus st = fs.getFileStatus(new Path(s1, "dir/b.txt"));
    assertTrue(st.isFile());
    assertEquals(4, st.getLen());
    assertEquals(new Path(s1, "dir/b.txt"), st.getPath());
    assertTrue(fs.getFileStatus(new Path(s1, "dir")).isDirectory());
    assertTrue(fs.getFileStatus(new Path(b, ".snapshot")).isDirectory());
    for (FileStatus c : fs.listStatus(new Path(s1, "dir"))) {
      assertEquals(new Path(s1, "dir/" + c.getPath().getName()), c.getPath());
      assertEquals(c.getPath(), fs.getFileStatus(c.getPath()).getPath());
    }
    Set<Path> files = new TreeSet<>();
    RemoteIterator<LocatedFileStatus> it = fs.listFiles(s1, true);
    while (it.hasNext()) {
      LocatedFileStatus f = it.next();
      files.add(f.getPath());
      assertTrue(f.getPath() + " has block locations", f.getBlockLocations().length > 0);
    }
    assertEquals(Set.of(new Path(s1, "c.txt"), new Path(s1, "dir/a.txt"), new Path(s1, "dir/b.txt")), files);
    assertEquals(fs.getFileChecksum(new Path(s1, "dir/a.txt")), checksumOf("alpha"));
    assertThrows(FileNotFoundException.class, () -> fs.getFileStatus(new Path(s1, "new.txt")));
    assertThrows(FileNotFoundException.class, () -> fs.open(new Path(s1, "dir/n.txt")));
    assertEquals("the live tree does not list .snapshot", Set.of("c.txt", "dir2", "new.txt"), names(b));

    // Read-only.
    assertThrows(AccessControlException.class, () -> fs.create(new Path(s1, "x.txt")));
    assertThrows(AccessControlException.class, () -> fs.delete(new Path(s1, "c.txt"), false));
    assertThrows(AccessControlException.class, () -> fs.rename(new Path(s1, "c.txt"), new Path(b, "x.txt")));
    assertThrows(AccessControlException.class, () -> fs.mkdirs(new Path(s1, "d")));
    assertEquals("gamma", read(new Path(s1, "c.txt")));

    // The diff, in HDFS's terms: n.txt, created in the renamed dir, under dir's old path.
    Path s2 = fs.createSnapshot(b, "s2");
    Set<String> want = Set.of("- dir/a.txt", "R dir/b.txt -> dir2/b2.txt", "R dir -> dir2", "- c.txt", "+ c.txt",
        "+ new.txt", "+ dir/n.txt");
    assertEquals(want, lines(sfs.getSnapshotDiffReport(b, "s1", "s2")));
    assertEquals(want, lines(sfs.getSnapshotDiffReport(b, "s1", "")));
    assertEquals(want, lines(sfs.getSnapshotDiffReport(b, "s1", ".")));
    assertEquals(Set.of(), lines(sfs.getSnapshotDiffReport(b, "s2", "")));
    assertEquals(Set.of(), lines(sfs.getSnapshotDiffReport(b, "s1", "s1")));
    // From the newer to the older: the inverse, paths still named in the older (as HDFS's).
    assertEquals(Set.of("+ dir/a.txt", "R dir2/b2.txt -> dir/b.txt", "R dir2 -> dir", "+ c.txt", "- c.txt",
        "- new.txt", "- dir/n.txt"), lines(sfs.getSnapshotDiffReport(b, "s2", "s1")));
    assertThrows(FileNotFoundException.class, () -> sfs.getSnapshotDiffReport(b, "nope", "s1"));
    assertEquals(new Path(s2, "dir2/n.txt"), fs.getFileStatus(new Path(s2, "dir2/n.txt")).getPath());
    // A snapshot's root has the time it was taken, in its status as in .snapshot's listing.
    for (FileStatus s : fs.listStatus(new Path(b, ".snapshot"))) {
      FileStatus root = fs.getFileStatus(s.getPath());
      assertEquals(s.getPath(), root.getPath());
      assertTrue(root.isDirectory());
      assertEquals(s.getPath().toString(), s.getModificationTime(), root.getModificationTime());
    }
    assertTrue(fs.getFileStatus(s1).getModificationTime() <= fs.getFileStatus(s2).getModificationTime());

    // Rename and delete.
    fs.renameSnapshot(b, "s1", "before");
    assertEquals(Set.of("before", "s2"), names(new Path(b, ".snapshot")));
    assertEquals("alpha", read(new Path(b, ".snapshot/before/dir/a.txt")));
    assertThrows(FileNotFoundException.class, () -> fs.getFileStatus(s1));
    assertThrows(FileNotFoundException.class, () -> fs.renameSnapshot(b, "s1", "again"));
    fs.deleteSnapshot(b, "before");
    fs.deleteSnapshot(b, "s2");
    assertEquals(Set.of(), names(new Path(b, ".snapshot")));
    assertThrows(FileNotFoundException.class, () -> fs.open(new Path(b, ".snapshot/before/dir/a.txt")));
    assertThrows(FileNotFoundException.class, () -> fs.deleteSnapshot(b, "before"));
    assertEquals("gamma, rewritten", read(new Path(b, "c.txt")));

    // A name from meta; FileContext too.
    Path auto = fs.createSnapshot(b);
    assertTrue(auto.getName(), auto.getName().startsWith("s"));
    FileContext fc = FileContext.getFileContext(fs.getUri(), cluster.conf());
    fc.renameSnapshot(b, auto.getName(), "fc");
    assertEquals("new", read(new Path(b, ".snapshot/fc/new.txt")));
    fc.deleteSnapshot(b, "fc");
  }

  private static org.apache.hadoop.fs.FileChecksum checksumOf(String s) throws IOException {
    Path p = fs.makeQualified(new Path("/snap/api-sums/" + s));
    write(p, s);
    return fs.getFileChecksum(p);
  }

  @Test
  public void onlyBuckets() throws Exception {
    Path b = fs.makeQualified(new Path("/snap/only"));
    write(new Path(b, "dir/f"), "f");
    IOException e = assertThrows(IOException.class, () -> fs.createSnapshot(new Path(b, "dir"), "s"));
    assertTrue(e.getMessage(), e.getMessage().contains("not a snapshottable directory"));
    assertThrows(IOException.class, () -> fs.createSnapshot(new Path("/snap"), "s"));
    assertThrows(FileNotFoundException.class, () -> fs.createSnapshot(new Path("/snap/missing"), "s"));
    assertThrows(FileNotFoundException.class, () -> fs.createSnapshot(new Path(b, "nothing"), "s"));
    fs.createSnapshot(b, "s");
    assertThrows(org.apache.hadoop.fs.FileAlreadyExistsException.class, () -> fs.createSnapshot(b, "s"));
    fs.deleteSnapshot(b, "s");
  }

  /** hadoop fs ARGS in this JVM: exit code and what it printed. */
  private static String[] shell(String... args) throws Exception {
    PrintStream out0 = System.out;
    PrintStream err0 = System.err;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    synchronized (TestSnapshots.class) {
      try {
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        int code = ToolRunner.run(new FsShell(cluster.conf()), args);
        return new String[] {Integer.toString(code), out.toString(StandardCharsets.UTF_8),
            err.toString(StandardCharsets.UTF_8)};
      } finally {
        System.setOut(out0);
        System.setErr(err0);
      }
    }
  }

  private static String ok(String... args) throws Exception {
    String[] r = shell(args);
    assertEquals("hadoop fs " + String.join(" ", args) + ": " + r[1] + r[2], "0", r[0]);
    return r[1];
  }

  @Test
  public void shell() throws Exception {
    Path b = fs.makeQualified(new Path("/snap/shell"));
    write(new Path(b, "d/f.txt"), "first");
    ok("-createSnapshot", "/snap/shell", "s1");
    write(new Path(b, "d/f.txt"), "second");
    assertTrue(fs.delete(new Path(b, "d"), true));

    String ls = ok("-ls", "/snap/shell/.snapshot");
    assertTrue(ls, ls.contains("/snap/shell/.snapshot/s1"));
    String lsr = ok("-ls", "-R", "/snap/shell/.snapshot/s1");
    assertTrue(lsr, lsr.contains("/snap/shell/.snapshot/s1/d/f.txt"));
    assertEquals("first", ok("-cat", "/snap/shell/.snapshot/s1/d/f.txt"));
    ok("-cp", "/snap/shell/.snapshot/s1/d", "/snap/shell/restored");
    assertEquals("first", read(new Path(b, "restored/f.txt")));
    assertTrue(fs.mkdirs(new Path("/snap/other")));
    ok("-cp", "/snap/shell/.snapshot/s1/d/f.txt", cluster.uri() + "snap/other/f.txt");
    assertEquals("first", read(new Path("/snap/other/f.txt")));

    assertNotEquals("-rm under .snapshot must fail", "0", shell("-rm", "/snap/shell/.snapshot/s1/d/f.txt")[0]);
    String[] rm = shell("-rm", "-skipTrash", "/snap/shell/.snapshot/s1/d/f.txt");
    assertNotEquals("-rm -skipTrash under .snapshot must fail", "0", rm[0]);
    assertTrue(rm[2], rm[2].contains("read-only"));
    assertEquals("first", ok("-cat", "/snap/shell/.snapshot/s1/d/f.txt"));

    ok("-renameSnapshot", "/snap/shell", "s1", "s1b");
    assertEquals("first", ok("-cat", "/snap/shell/.snapshot/s1b/d/f.txt"));
    ok("-deleteSnapshot", "/snap/shell", "s1b");
    assertNotEquals("0", shell("-ls", "/snap/shell/.snapshot/s1b")[0]);
  }

  /**
   * distcp -update -rdiff s2 s1: the target, changed since its snapshot s1
   * (and snapshot s2 taken of the change), is put back as it was at s1:
   * the report from s2 to s1 (the inverse) replayed on it, and what s1 had
   * that the target lost copied from the source's s1.
   */
  @Test
  public void distcpRdiff() throws Exception {
    java.nio.file.Path tmp = Files.createTempDirectory("strato-distcp-rdiff");
    Configuration conf = new Configuration(cluster.conf());
    conf.set("fs.defaultFS", "file:///");
    conf.set("hadoop.tmp.dir", tmp.resolve("hadoop-tmp").toString());
    conf.set("mapreduce.framework.name", "local");
    Path src = fs.makeQualified(new Path("/rdcp/src"));
    Path dst = fs.makeQualified(new Path("/rdcp/dst"));
    for (Path b : new Path[] {src, dst}) {
      write(new Path(b, "a"), "a");
      write(new Path(b, "d/b"), "b");
      write(new Path(b, "d/c"), "c");
      fs.createSnapshot(b, "s1");
    }
    Map<String, String> want = tree(new Path(src, ".snapshot/s1"));

    assertTrue(fs.delete(new Path(dst, "a"), false));
    assertTrue(fs.rename(new Path(dst, "d"), new Path(dst, "d2")));
    write(new Path(dst, "d2/new"), "new");
    write(new Path(dst, "d2/b"), "b, rewritten");
    write(new Path(dst, "g"), "g");
    fs.createSnapshot(dst, "s2");
    String etagC = StratoFileStatus.etagOf(fs.getFileStatus(new Path(dst, "d2/c")));

    assertEquals(0, ToolRunner.run(conf, new DistCp(conf, null),
        new String[] {"-update", "-rdiff", "s2", "s1", src.toString(), dst.toString()}));
    assertEquals(want, tree(dst));
    assertEquals("d2/c was renamed back, not copied", etagC,
        StratoFileStatus.etagOf(fs.getFileStatus(new Path(dst, "d/c"))));
  }

  /** Every file under dir (not .snapshot) with its contents. */
  private static Map<String, String> tree(Path dir) throws IOException {
    Map<String, String> out = new TreeMap<>();
    RemoteIterator<LocatedFileStatus> it = fs.listFiles(dir, true);
    while (it.hasNext()) {
      Path p = it.next().getPath();
      String rel = p.toUri().getPath().substring(dir.toUri().getPath().length() + 1);
      out.put(rel, read(p));
    }
    return out;
  }

  /**
   * distcp -update -diff s1 s2 from one strato bucket to another: Hadoop
   * 3.4's DistCpSync takes any file system with the snapshot path
   * capability and a getSnapshotDiffReport method, source and target. The
   * target's renames and deletes are replayed, and only created and
   * modified files are copied.
   */
  @Test
  public void distcpDiff() throws Exception {
    java.nio.file.Path tmp = Files.createTempDirectory("strato-distcp-diff");
    Configuration conf = new Configuration(cluster.conf());
    conf.set("fs.defaultFS", "file:///");
    conf.set("hadoop.tmp.dir", tmp.resolve("hadoop-tmp").toString());
    conf.set("mapreduce.framework.name", "local");
    Path src = fs.makeQualified(new Path("/dcp/src"));
    Path dst = fs.makeQualified(new Path("/dcp/dst"));
    write(new Path(src, "a"), "a");
    write(new Path(src, "d/b"), "b");
    write(new Path(src, "d/c"), "c");
    write(new Path(src, "e/f"), "f");
    fs.createSnapshot(src, "s1");
    fs.mkdirs(dst);
    assertEquals(0, ToolRunner.run(conf, new DistCp(conf, null),
        new String[] {"-update", new Path(src, ".snapshot/s1").toString(), dst.toString()}));
    assertEquals(tree(src), tree(dst));
    fs.createSnapshot(dst, "s1");

    assertTrue(fs.delete(new Path(src, "a"), false));
    assertTrue(fs.rename(new Path(src, "d"), new Path(src, "d2")));
    write(new Path(src, "d2/new"), "new");
    write(new Path(src, "e/f"), "f, rewritten");
    write(new Path(src, "g"), "g");
    fs.createSnapshot(src, "s2");
    write(new Path(src, "after-s2"), "not copied");

    // An untouched file of the target keeps its object (etag): only what changed is copied.
    String etagC = StratoFileStatus.etagOf(fs.getFileStatus(new Path(dst, "d/c")));
    assertEquals(0, ToolRunner.run(conf, new DistCp(conf, null),
        new String[] {"-update", "-diff", "s1", "s2", src.toString(), dst.toString()}));
    Map<String, String> want = tree(new Path(src, ".snapshot/s2"));
    assertEquals(Map.of("d2/b", "b", "d2/c", "c", "d2/new", "new", "e/f", "f, rewritten", "g", "g"), want);
    assertEquals(want, tree(dst));
    assertEquals("d/c was renamed on the target, not copied", etagC,
        StratoFileStatus.etagOf(fs.getFileStatus(new Path(dst, "d2/c"))));
    List<String> left = new ArrayList<>(names(dst));
    assertFalse("no distcp temporary directory left: " + left, left.stream().anyMatch(n -> n.startsWith(".distcp")));
  }
}
