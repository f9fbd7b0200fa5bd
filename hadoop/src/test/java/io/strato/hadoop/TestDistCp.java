package io.strato.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import java.nio.file.Files;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.tools.DistCp;
import org.apache.hadoop.util.ToolRunner;
import org.junit.Test;

/**
 * distcp from HDFS (a MiniDFSCluster on 127.0.0.1) to strato with its
 * checksum comparison on (no -skipcrccheck): with
 * dfs.checksum.combine.mode=COMPOSITE_CRC, HDFS's getFileChecksum is the
 * composite CRC32C of the file, which strato computes from its own window
 * CRCs; they must be equal for the same bytes whatever the block and
 * chunk sizes (HDFS: 4 MiB blocks, 512-byte chunks; strato: 256 MiB blocks,
 * 16 KiB windows).
 */
public class TestDistCp {
  @Test
  public void distcpFromHdfsComparesCompositeCrcs() throws Exception {
    StratoCluster strato = StratoCluster.get();
    java.nio.file.Path tmp = Files.createTempDirectory("strato-distcp");
    Configuration conf = new HdfsConfiguration(strato.conf());
    conf.set("fs.defaultFS", "file:///");
    conf.set("dfs.checksum.combine.mode", "COMPOSITE_CRC");
    conf.setLong("dfs.blocksize", 4 << 20);
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, tmp.resolve("dfs").toString());
    conf.set("hadoop.tmp.dir", tmp.resolve("hadoop-tmp").toString());
    conf.set("mapreduce.framework.name", "local");
    MiniDFSCluster dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    try {
      dfs.waitActive();
      FileSystem hdfs = dfs.getFileSystem();
      Path src = new Path(hdfs.getUri().toString() + "/src");
      byte[][] data = {bytes(9 << 20 | 4321, 1), bytes(100, 2), new byte[0]};
      String[] names = {"big", "dir/small", "empty"};
      for (int i = 0; i < data.length; i++) {
        try (FSDataOutputStream out = hdfs.create(new Path(src, names[i]))) {
          out.write(data[i]);
        }
      }
      Path dst = new Path(strato.uri() + "distcp/bkt/dst");
      assertEquals(0, ToolRunner.run(conf, new DistCp(conf, null), new String[] {src.toString(), dst.toString()}));

      FileSystem sfs = dst.getFileSystem(conf);
      for (int i = 0; i < data.length; i++) {
        Path s = new Path(src, names[i]);
        Path d = new Path(dst, names[i]);
        FileChecksum hc = hdfs.getFileChecksum(s);
        FileChecksum sc = sfs.getFileChecksum(d);
        if (data[i].length > 0) {
          // (HDFS answers an empty file with a fixed MD5-of-0MD5-of-0CRC32, whatever
          // the combine mode; distcp compares no checksums of empty files.)
          assertEquals(names[i], "COMPOSITE-CRC32C", hc.getAlgorithmName());
          assertEquals(names[i] + ": HDFS " + hc + ", strato " + sc, hc, sc);
        }
        byte[] back = new byte[data[i].length];
        try (FSDataInputStream in = sfs.open(d)) {
          in.readFully(0, back);
        }
        assertArrayEquals(data[i], back);
      }
    } finally {
      dfs.shutdown();
    }
  }

  /**
   * distcp -update -diff s1 s2 from an HDFS snapshottable directory to a
   * strato bucket (disaster recovery onto strato): DistCpSync takes any file
   * system with fs.capability.paths.snapshots and getSnapshotDiffReport on
   * both sides, replays HDFS's renames and deletes on the bucket (which has
   * snapshot s1, taken after the first copy, and no change since), and
   * copies what was created or modified.
   */
  @Test
  public void distcpDiffFromHdfs() throws Exception {
    StratoCluster strato = StratoCluster.get();
    java.nio.file.Path tmp = Files.createTempDirectory("strato-distcp-diff");
    Configuration conf = new HdfsConfiguration(strato.conf());
    conf.set("fs.defaultFS", "file:///");
    conf.set("dfs.checksum.combine.mode", "COMPOSITE_CRC");
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, tmp.resolve("dfs").toString());
    conf.set("hadoop.tmp.dir", tmp.resolve("hadoop-tmp").toString());
    conf.set("mapreduce.framework.name", "local");
    MiniDFSCluster dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    try {
      dfs.waitActive();
      org.apache.hadoop.hdfs.DistributedFileSystem hdfs = dfs.getFileSystem();
      Path src = new Path(hdfs.getUri().toString() + "/src");
      write(hdfs, new Path(src, "a"), "a");
      write(hdfs, new Path(src, "d/b"), "b");
      write(hdfs, new Path(src, "d/c"), "c");
      hdfs.allowSnapshot(src);
      hdfs.createSnapshot(src, "s1");
      Path dst = new Path(strato.uri() + "distcp/diffdst");
      FileSystem sfs = dst.getFileSystem(conf);
      sfs.mkdirs(dst);
      assertEquals(0, ToolRunner.run(conf, new DistCp(conf, null),
          new String[] {"-update", new Path(src, ".snapshot/s1").toString(), dst.toString()}));
      sfs.createSnapshot(dst, "s1");
      String etagC = StratoFileStatus.etagOf(sfs.getFileStatus(new Path(dst, "d/c")));

      hdfs.delete(new Path(src, "a"), false);
      hdfs.rename(new Path(src, "d"), new Path(src, "d2"));
      write(hdfs, new Path(src, "d2/new"), "new");
      write(hdfs, new Path(src, "g"), "g");
      hdfs.createSnapshot(src, "s2");
      assertEquals(0, ToolRunner.run(conf, new DistCp(conf, null),
          new String[] {"-update", "-diff", "s1", "s2", src.toString(), dst.toString()}));

      assertEquals(java.util.Set.of("d2", "g"), names(sfs, dst));
      assertEquals(java.util.Set.of("b", "c", "new"), names(sfs, new Path(dst, "d2")));
      assertEquals("new", read(sfs, new Path(dst, "d2/new")));
      assertEquals("d/c was renamed on strato, not copied", etagC,
          StratoFileStatus.etagOf(sfs.getFileStatus(new Path(dst, "d2/c"))));
      sfs.deleteSnapshot(dst, "s1");
    } finally {
      dfs.shutdown();
    }
  }

  /**
   * The other way: distcp -update -diff s1 s2 from a strato bucket to an HDFS
   * snapshottable directory; the bucket's report (HDFS's naming) replayed on
   * HDFS, whose renamed file keeps its inode.
   */
  @Test
  public void distcpDiffToHdfs() throws Exception {
    StratoCluster strato = StratoCluster.get();
    java.nio.file.Path tmp = Files.createTempDirectory("strato-distcp-diff-to-hdfs");
    Configuration conf = new HdfsConfiguration(strato.conf());
    conf.set("fs.defaultFS", "file:///");
    conf.set("dfs.checksum.combine.mode", "COMPOSITE_CRC");
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, tmp.resolve("dfs").toString());
    conf.set("hadoop.tmp.dir", tmp.resolve("hadoop-tmp").toString());
    conf.set("mapreduce.framework.name", "local");
    MiniDFSCluster dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    try {
      dfs.waitActive();
      org.apache.hadoop.hdfs.DistributedFileSystem hdfs = dfs.getFileSystem();
      Path src = new Path(strato.uri() + "distcp/diffsrc");
      FileSystem sfs = src.getFileSystem(conf);
      write(sfs, new Path(src, "a"), "a");
      write(sfs, new Path(src, "d/b"), "b");
      write(sfs, new Path(src, "d/c"), "c");
      sfs.createSnapshot(src, "s1");
      Path dst = new Path(hdfs.getUri().toString() + "/dst");
      hdfs.mkdirs(dst);
      assertEquals(0, ToolRunner.run(conf, new DistCp(conf, null),
          new String[] {"-update", new Path(src, ".snapshot/s1").toString(), dst.toString()}));
      hdfs.allowSnapshot(dst);
      hdfs.createSnapshot(dst, "s1");
      long inodeC = ((org.apache.hadoop.hdfs.protocol.HdfsFileStatus) hdfs.getFileStatus(new Path(dst, "d/c")))
          .getFileId();

      sfs.delete(new Path(src, "a"), false);
      sfs.rename(new Path(src, "d"), new Path(src, "d2"));
      write(sfs, new Path(src, "d2/new"), "new");
      write(sfs, new Path(src, "g"), "g");
      sfs.createSnapshot(src, "s2");
      assertEquals(0, ToolRunner.run(conf, new DistCp(conf, null),
          new String[] {"-update", "-diff", "s1", "s2", src.toString(), dst.toString()}));

      assertEquals(java.util.Set.of("d2", "g"), names(hdfs, dst));
      assertEquals(java.util.Set.of("b", "c", "new"), names(hdfs, new Path(dst, "d2")));
      assertEquals("new", read(hdfs, new Path(dst, "d2/new")));
      assertEquals("d/c was renamed on HDFS, not copied", inodeC,
          ((org.apache.hadoop.hdfs.protocol.HdfsFileStatus) hdfs.getFileStatus(new Path(dst, "d2/c"))).getFileId());
      sfs.deleteSnapshot(src, "s1");
      sfs.deleteSnapshot(src, "s2");
    } finally {
      dfs.shutdown();
    }
  }

  private static void write(FileSystem fs, Path p, String s) throws java.io.IOException {
    try (FSDataOutputStream out = fs.create(p, true)) {
      out.write(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
  }

  private static String read(FileSystem fs, Path p) throws java.io.IOException {
    try (FSDataInputStream in = fs.open(p)) {
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  private static java.util.Set<String> names(FileSystem fs, Path dir) throws java.io.IOException {
    java.util.Set<String> out = new java.util.TreeSet<>();
    for (org.apache.hadoop.fs.FileStatus st : fs.listStatus(dir)) {
      out.add(st.getPath().getName());
    }
    return out;
  }

  static byte[] bytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }
}
