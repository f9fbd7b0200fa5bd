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
import java.text.SimpleDateFormat;
import java.util.Collection;
import org.apache.hadoop.fs.CommonPathCapabilities;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.fs.FsStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.QuotaUsage;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.ToolRunner;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Hadoop's shell (FsShell, run in this JVM) on the test JVM's strato dev
 * cluster: -chmod, -chown, -chgrp, -touch and -setrep either change what
 * meta stores, which -ls and getFileStatus then show, or fail saying why;
 * -df shows the datanodes' space. What the Go CLI changes shows too.
 */
public class TestFsShell {
  private static StratoCluster cluster;
  private static FileSystem fs;

  @BeforeClass
  public static void start() throws IOException {
    cluster = StratoCluster.get();
    fs = cluster.fs();
  }

  /** What one FsShell command printed, and its exit code. */
  private static final class Run {
    final int code;
    final String out;
    final String err;

    Run(int code, String out, String err) {
      this.code = code;
      this.out = out;
      this.err = err;
    }

    @Override
    public String toString() {
      return "exit " + code + "\nstdout: " + out + "\nstderr: " + err;
    }
  }

  /** hadoop fs ARGS, in this JVM (FsShell prints to System.out and System.err). */
  private static synchronized Run shell(String... args) throws Exception {
    PrintStream out0 = System.out;
    PrintStream err0 = System.err;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try {
      System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
      System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
      int code = ToolRunner.run(new FsShell(cluster.conf()), args);
      return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    } finally {
      System.setOut(out0);
      System.setErr(err0);
    }
  }

  private static Run ok(String... args) throws Exception {
    Run r = shell(args);
    assertEquals("hadoop fs " + String.join(" ", args) + ": " + r, 0, r.code);
    return r;
  }

  private static Run fails(String... args) throws Exception {
    Run r = shell(args);
    assertNotEquals("hadoop fs " + String.join(" ", args) + " must fail: " + r, 0, r.code);
    return r;
  }

  private static void touchFile(Path p) throws IOException {
    try (FSDataOutputStream out = fs.create(p, true)) {
      out.write(new byte[] {1, 2, 3});
    }
  }

  private static short perm(Path p) throws IOException {
    return fs.getFileStatus(p).getPermission().toShort();
  }

  @Test
  public void chmod() throws Exception {
    Path dir = new Path("/shell/bkt/chmod");
    Path f = new Path(dir, "f");
    touchFile(f);
    assertEquals("a new file: 0666 less the umask 022", 0644, perm(f));
    assertEquals(0755, perm(dir));

    ok("-chmod", "600", f.toString());
    assertEquals(0600, perm(f));
    ok("-chmod", "g+r,o+r", f.toString());
    assertEquals(0644, perm(f));
    ok("-chmod", "-R", "750", dir.toString());
    assertEquals(0750, perm(dir));
    assertEquals(0750, perm(f));
    ok("-chmod", "1777", dir.toString());
    assertEquals(01777, perm(dir));
    assertTrue(fs.getFileStatus(dir).getPermission().getStickyBit());
    // A bucket's root has its own.
    ok("-chmod", "711", "/shell/bkt");
    assertEquals(0711, perm(new Path("/shell/bkt")));
    assertTrue(ok("-ls", "/shell").out.contains("drwx--x--x"));

    Run r = fails("-chmod", "700", "/shell/bkt/nope");
    assertTrue(r.err, r.err.contains("No such file or directory"));
    r = fails("-chmod", "700", "/shell");
    assertTrue(r.err, r.err.contains("a volume has no permission"));
    assertTrue(fs.hasPathCapability(f, CommonPathCapabilities.FS_PERMISSIONS));
  }

  @Test
  public void chownAndChgrp() throws Exception {
    Path dir = new Path("/shell/bkt/chown");
    Path f = new Path(dir, "f");
    touchFile(f);
    String me = fs.getFileStatus(f).getOwner();

    ok("-chown", "alice:eng", f.toString());
    FileStatus st = fs.getFileStatus(f);
    assertEquals("alice", st.getOwner());
    assertEquals("eng", st.getGroup());
    ok("-chgrp", "ops", f.toString());
    st = fs.getFileStatus(f);
    assertEquals("alice", st.getOwner());
    assertEquals("ops", st.getGroup());
    ok("-chown", "-R", "bob", dir.toString());
    assertEquals("bob", fs.getFileStatus(dir).getOwner());
    assertEquals("bob", fs.getFileStatus(f).getOwner());
    assertEquals("the group stays", "ops", fs.getFileStatus(f).getGroup());
    String ls = ok("-ls", dir.toString()).out;
    assertTrue(ls, ls.contains(" bob ops "));

    // A file created in a directory takes its group (HDFS's rule).
    ok("-chgrp", "hadoop", dir.toString());
    Path g = new Path(dir, "g");
    touchFile(g);
    assertEquals("hadoop", fs.getFileStatus(g).getGroup());
    assertEquals(me, fs.getFileStatus(g).getOwner());

    assertThrows(IOException.class, () -> fs.setOwner(f, null, null));
    assertThrows(FileNotFoundException.class, () -> fs.setOwner(new Path(dir, "nope"), "x", null));
  }

  @Test
  public void touchSetsTimes() throws Exception {
    Path f = new Path("/shell/bkt/touch/f");
    touchFile(f);
    FileStatus before = fs.getFileStatus(f);
    assertEquals("a write sets both", before.getModificationTime(), before.getAccessTime());

    SimpleDateFormat hadoopFormat = new SimpleDateFormat("yyyyMMdd:HHmmss");
    long t1 = hadoopFormat.parse("20200102:030405").getTime();
    long t2 = hadoopFormat.parse("20210607:080910").getTime();
    ok("-touch", "-m", "-t", "20200102:030405", f.toString());
    FileStatus st = fs.getFileStatus(f);
    assertEquals(t1, st.getModificationTime());
    assertEquals("-m leaves the access time", before.getAccessTime(), st.getAccessTime());
    ok("-touch", "-a", "-t", "20210607:080910", f.toString());
    st = fs.getFileStatus(f);
    assertEquals(t1, st.getModificationTime());
    assertEquals(t2, st.getAccessTime());
    // A listing says the same.
    FileStatus listed = fs.listStatus(f.getParent())[0];
    assertEquals(t1, listed.getModificationTime());
    assertEquals(t2, listed.getAccessTime());

    // setTimes itself: -1 leaves a time unchanged; directories and a bucket's root too.
    fs.setTimes(f, 5_000, -1);
    assertEquals(5_000, fs.getFileStatus(f).getModificationTime());
    assertEquals(t2, fs.getFileStatus(f).getAccessTime());
    fs.setTimes(f, -1, 6_000);
    assertEquals(5_000, fs.getFileStatus(f).getModificationTime());
    assertEquals(6_000, fs.getFileStatus(f).getAccessTime());
    for (Path d : new Path[] {f.getParent(), new Path("/shell/bkt")}) {
      fs.setTimes(d, 7_000, 8_000);
      assertEquals(d.toString(), 7_000, fs.getFileStatus(d).getModificationTime());
      assertEquals(d.toString(), 8_000, fs.getFileStatus(d).getAccessTime());
    }
    assertThrows(FileNotFoundException.class, () -> fs.setTimes(new Path("/shell/bkt/touch/nope"), 1, 1));
    assertThrows(IOException.class, () -> fs.setTimes(new Path("/shell"), 1, 1));

    // -touch of a missing file makes an empty one.
    Path g = new Path("/shell/bkt/touch/g");
    ok("-touch", g.toString());
    assertEquals(0, fs.getFileStatus(g).getLen());
  }

  @Test
  public void setrep() throws Exception {
    Path dir = new Path("/shell/bkt/setrep");
    Path f = new Path(dir, "f");
    touchFile(f);
    assertEquals(3, fs.getFileStatus(f).getReplication());

    // The replication the file has: nothing to do, and true.
    ok("-setrep", "3", f.toString());
    assertTrue(fs.setReplication(f, (short) 3));
    // Another: refused, saying why, and the file keeps its replication.
    Run r = fails("-setrep", "1", f.toString());
    assertTrue(r.err, r.err.startsWith("setrep: strato: cannot change the replication of"));
    assertTrue(r.err, r.err.contains("from 3 to 1"));
    assertEquals(3, fs.getFileStatus(f).getReplication());
    IOException e = assertThrows(IOException.class, () -> fs.setReplication(f, (short) 2));
    assertTrue(e.getMessage(), e.getMessage().contains("replication 1 or 3, chosen at create"));

    // A file created with replication 1 is ONE, and stays so.
    Path one = new Path(dir, "one");
    try (FSDataOutputStream out = fs.create(one, true, 4096, (short) 1, 1 << 20)) {
      out.write(1);
    }
    assertEquals(1, fs.getFileStatus(one).getReplication());
    assertTrue(fs.setReplication(one, (short) 1));
    assertThrows(IOException.class, () -> fs.setReplication(one, (short) 3));

    // Directories answer false, as on HDFS; nothing there is FileNotFoundException.
    assertFalse(fs.setReplication(dir, (short) 3));
    assertFalse(fs.setReplication(new Path("/shell/bkt"), (short) 3));
    assertThrows(FileNotFoundException.class, () -> fs.setReplication(new Path(dir, "nope"), (short) 3));
  }

  @Test
  public void df() throws Exception {
    fs.mkdirs(new Path("/shell/bkt"));
    FsStatus st = fs.getStatus();
    assertTrue("capacity " + st.getCapacity(), st.getCapacity() > 0 && st.getCapacity() < Long.MAX_VALUE / 2);
    assertTrue(st.getRemaining() > 0 && st.getRemaining() <= st.getCapacity());
    assertTrue(st.getUsed() >= 0 && st.getUsed() <= st.getCapacity());
    assertEquals(st.getCapacity(), fs.getStatus(new Path("/shell/bkt")).getCapacity());

    // Size, used, available and use%, in bytes; the datanodes' file system
    // sizes do not change between the two calls.
    String out = ok("-df", "/shell/bkt").out;
    assertTrue(out, out.contains("Filesystem"));
    assertTrue(out, out.contains(" " + st.getCapacity() + " "));
    String human = ok("-df", "-h", "/").out;
    assertFalse("not Hadoop's default of 8 EiB: " + human, human.contains(" E "));
  }

  /**
   * With meta's trash on (strato dev keeps meta's default, 24h), -rm moves
   * into the bucket's .Trash/USER/Current under the full path, as on HDFS
   * and Ozone's ofs; -skipTrash deletes; -expunge makes Current a
   * checkpoint, and -expunge -immediate deletes the trash.
   */
  @Test
  public void rmMovesIntoTrash() throws Exception {
    Path dir = new Path("/shell/trash/dir");
    Path f = new Path(dir, "f");
    touchFile(f);
    assertEquals(24 * 60, fs.getServerDefaults(f).getTrashInterval());
    String me = UserGroupInformation.getCurrentUser().getShortUserName();
    Path root = fs.makeQualified(new Path("/shell/trash/.Trash/" + me));
    assertEquals(root, fs.getTrashRoot(f));

    ok("-rm", f.toString());
    assertFalse(fs.exists(f));
    Path inTrash = new Path(root, "Current/shell/trash/dir/f");
    assertEquals(3, fs.getFileStatus(inTrash).getLen());
    Collection<FileStatus> roots = fs.getTrashRoots(false);
    assertTrue(roots.toString(), roots.stream().anyMatch(st -> st.getPath().equals(root)));
    assertTrue(fs.getTrashRoots(true).size() >= roots.size());

    // -skipTrash deletes; so does -rm of what is in the trash already.
    Path g = new Path(dir, "g");
    touchFile(g);
    ok("-rm", "-skipTrash", g.toString());
    assertFalse(fs.exists(g));
    assertFalse(fs.exists(new Path(root, "Current/shell/trash/dir/g")));

    // Restore: a rename out of the trash.
    assertTrue(fs.rename(inTrash, f));
    assertEquals(3, fs.getFileStatus(f).getLen());
    // The directory's name is taken in Current (f's parent, made by the
    // first -rm): it goes beside it, suffixed with the time.
    ok("-rm", "-r", dir.toString());
    FileStatus[] moved = fs.listStatus(new Path(root, "Current/shell/trash"));
    assertEquals(java.util.Arrays.toString(moved), 2, moved.length);
    assertTrue(moved[1].getPath().getName(), moved[1].getPath().getName().matches("dir\\d{13}"));
    assertEquals(3, fs.getFileStatus(new Path(moved[1].getPath(), "f")).getLen());

    ok("-expunge");
    FileStatus[] cps = fs.listStatus(root);
    assertEquals(java.util.Arrays.toString(cps), 1, cps.length);
    assertTrue(cps[0].getPath().getName(), cps[0].getPath().getName().matches("\\d{12}"));
    assertTrue(fs.exists(new Path(cps[0].getPath(), "shell/trash/" + moved[1].getPath().getName() + "/f")));
    ok("-expunge", "-immediate");
    assertEquals(0, fs.listStatus(root).length);
  }

  /** What the Go CLI (strato fs chmod, chown) stores, Hadoop's listings show. */
  @Test
  public void lsShowsWhatTheCliStored() throws Exception {
    Path dir = new Path("/shell/bkt/cli");
    Path f = new Path(dir, "f");
    touchFile(f);
    cluster.cli("fs", "chmod", "700", "/shell/bkt/cli/f");
    cluster.cli("fs", "chown", "carol:analysts", "/shell/bkt/cli/f");
    cluster.cli("fs", "chmod", "1777", "/shell/bkt/cli");

    String ls = ok("-ls", dir.toString()).out;
    assertTrue(ls, ls.contains("-rwx------"));
    assertTrue(ls, ls.contains(" carol analysts "));
    ls = ok("-ls", "-d", dir.toString()).out;
    assertTrue(ls, ls.startsWith("drwxrwxrwt"));
    FileStatus st = fs.listStatus(dir)[0];
    assertEquals(new FsPermission((short) 0700), st.getPermission());
    assertEquals("carol", st.getOwner());
    assertEquals("analysts", st.getGroup());
  }

  /**
   * A bucket's quotas, set with the Go CLI (strato sh bucket setquota),
   * show in getQuotaUsage, -count -q and -count -u; clrquota clears them.
   */
  @Test
  public void countShowsTheBucketsQuota() throws Exception {
    Path bucket = new Path("/shell/quota");
    Path dir = new Path(bucket, "d");
    touchFile(new Path(dir, "f"));
    cluster.cli("sh", "bucket", "setquota", "/shell/quota", "--bytes", "1MiB", "--namespace", "100");

    QuotaUsage u = fs.getQuotaUsage(bucket);
    assertEquals(100, u.getQuota());
    assertEquals(1 << 20, u.getSpaceQuota());
    assertEquals(2, u.getFileAndDirectoryCount()); // d and d/f
    assertEquals(3, u.getSpaceConsumed());
    assertEquals("no quota of its own below a bucket", -1, fs.getQuotaUsage(dir).getQuota());

    // QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME
    String[] q = ok("-count", "-q", bucket.toString()).out.trim().split("\\s+");
    assertEquals(String.join(" ", q), "100", q[0]);
    assertEquals(String.join(" ", q), "1048576", q[2]);
    assertEquals(String.join(" ", q), "1048573", q[3]);
    assertEquals(String.join(" ", q), "1", q[5]);
    assertEquals(String.join(" ", q), "3", q[6]);
    // QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA PATHNAME
    String[] uq = ok("-count", "-u", bucket.toString()).out.trim().split("\\s+");
    assertEquals(String.join(" ", uq), "100 98 1048576 1048573", String.join(" ", java.util.Arrays.copyOf(uq, 4)));

    cluster.cli("sh", "bucket", "clrquota", "/shell/quota");
    u = fs.getQuotaUsage(bucket);
    assertEquals(-1, u.getQuota());
    assertEquals(-1, u.getSpaceQuota());
    String[] none = ok("-count", "-u", bucket.toString()).out.trim().split("\\s+");
    assertEquals(String.join(" ", none), "none inf none inf", String.join(" ", java.util.Arrays.copyOf(none, 4)));
  }

  /**
   * hadoop fs -count and -du -s of a tree, added up by meta
   * (getContentSummary): directories (each counting itself), files, bytes,
   * and for -du the bytes on the datanodes (three replicas each); a volume
   * counts itself and its buckets.
   */
  @Test
  public void countAndDuOfATree() throws Exception {
    Path root = new Path("/shellsum/bkt/tree");
    byte[] data = new byte[1000];
    for (String f : new String[] {"a/f1", "a/b/f2", "c/f3", "f4"}) {
      try (org.apache.hadoop.fs.FSDataOutputStream out = fs.create(new Path(root, f))) {
        out.write(data);
      }
    }
    assertTrue(fs.mkdirs(new Path(root, "empty")));
    // DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME: tree, a, a/b, c and empty
    String[] c = ok("-count", root.toString()).out.trim().split("\\s+");
    assertEquals(String.join(" ", c), "5 4 4000", c[0] + " " + c[1] + " " + c[2]);
    // SIZE DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS PATH
    String[] du = ok("-du", "-s", root.toString()).out.trim().split("\\s+");
    assertEquals(String.join(" ", du), "4000 12000", du[0] + " " + du[1]);
    org.apache.hadoop.fs.ContentSummary s = fs.getContentSummary(new Path("/shellsum"));
    assertEquals(4, s.getFileCount());
    assertEquals(7, s.getDirectoryCount()); // the volume, the bucket and the tree's five
    assertEquals(4000, s.getLength());
    assertEquals(1, fs.getContentSummary(new Path(root, "a/f1")).getFileCount());
  }
}
