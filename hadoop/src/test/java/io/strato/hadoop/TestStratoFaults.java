package io.strato.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Faults through the connector, on a cluster of processes (three meta
 * replicas, four datanodes): a datanode killed during a write (the write
 * completes, every byte reads back), a corrupted replica (reads return the
 * right bytes from another), the meta leader killed during a write and
 * namespace calls (they retry and nothing is lost or applied twice).
 */
public class TestStratoFaults {
  private static StratoProcesses cluster;
  private static FileSystem fs;

  @BeforeClass
  public static void start() throws Exception {
    cluster = new StratoProcesses(3, 4);
    Configuration conf = new Configuration();
    conf.set(StratoFileSystem.META_ADDRESSES, cluster.metaList());
    conf.set(StratoFileSystem.CHUNK_SIZE, "1m");
    conf.setLong(StratoFileSystem.META_ATTEMPT_TIMEOUT, 2000);
    conf.setLong(StratoFileSystem.DATA_TIMEOUT, 20000);
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    fs = FileSystem.get(URI.create(cluster.uri()), conf);
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (true) {
      try {
        fs.mkdirs(new org.apache.hadoop.fs.Path("/faults/bucket"));
        write(new org.apache.hadoop.fs.Path("/faults/bucket/probe"), bytes(1000, 1), 0);
        // Writes need three datanodes; the tests kill one of four.
        cluster.waitHealthyDatanodes(4, 60_000);
        return;
      } catch (IOException e) {
        if (System.nanoTime() > deadline) {
          throw new IOException("cluster not ready: " + e + "\n" + cluster.logs(), e);
        }
        Thread.sleep(500);
      }
    }
  }

  @AfterClass
  public static void stop() throws IOException {
    if (fs != null) {
      fs.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  static byte[] bytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  static void write(org.apache.hadoop.fs.Path p, byte[] data, int flushAt) throws IOException {
    try (FSDataOutputStream out = fs.create(p, true)) {
      out.write(data, 0, flushAt);
      if (flushAt > 0) {
        out.hflush();
      }
      out.write(data, flushAt, data.length - flushAt);
    }
  }

  static byte[] readAll(org.apache.hadoop.fs.Path p) throws IOException {
    return readAll(fs, p);
  }

  static byte[] readAll(FileSystem fs, org.apache.hadoop.fs.Path p) throws IOException {
    FileStatus st = fs.getFileStatus(p);
    byte[] b = new byte[(int) st.getLen()];
    try (FSDataInputStream in = fs.open(p)) {
      in.readFully(0, b);
    }
    // and the stream, sequentially
    byte[] s = new byte[b.length];
    try (FSDataInputStream in = fs.open(p)) {
      in.readFully(s);
    }
    assertArrayEquals("positioned and sequential reads of " + p, b, s);
    return b;
  }

  /**
   * fs.strato.meta.follower-reads: a file written through the leader is
   * there, whole, when a file system with follower reads stats, lists and
   * reads it right after, and the followers serve some of those reads.
   */
  @Test
  public void followerReads() throws Exception {
    Configuration conf = new Configuration(fs.getConf());
    conf.setBoolean(StratoFileSystem.META_FOLLOWER_READS, true);
    try (FileSystem reader = FileSystem.newInstance(URI.create(cluster.uri()), conf)) {
      for (int i = 0; i < 6; i++) {
        org.apache.hadoop.fs.Path dir = new org.apache.hadoop.fs.Path("/faults/bucket/fr" + i);
        org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(dir, "f");
        byte[] data = bytes(100_000 + i, 40 + i);
        write(p, data, 0);
        assertEquals(data.length, reader.getFileStatus(p).getLen());
        assertEquals(1, reader.listStatus(dir).length);
        assertArrayEquals(data, readAll(reader, p));
      }
      long served = ((StratoFileSystem) reader).client().meta().followerReadsServed();
      assertTrue("reads served by followers: " + served, served > 0);
    }
  }

  @Test
  public void datanodeKilledDuringWrite() throws Exception {
    org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path("/faults/bucket/dn-killed");
    byte[] data = bytes(24 << 20, 2);
    int at = 6 << 20;
    // A meta leader elected by another test learns the datanodes' health from
    // their next heartbeats: the new pipeline below needs three of them.
    cluster.waitHealthyDatanodes(4, 60_000);
    StratoProcesses.Node killed = null;
    try (FSDataOutputStream out = fs.create(p, true)) {
      out.write(data, 0, at);
      out.hflush();
      BlockLocation[] locs = fs.getFileBlockLocations(fs.getFileStatus(p), 0, at);
      assertEquals(1, locs.length);
      assertEquals(3, locs[0].getNames().length);
      // Kill a follower of the pipeline being written: the writer must notice
      // it in the leader's failed list and move to a pipeline without it.
      String follower = locs[0].getNames()[1];
      for (int i = 0; i < cluster.datanodes.size(); i++) {
        if (cluster.datanodes.get(i).cmd.contains(follower)) {
          killed = cluster.datanodes.get(i);
        }
      }
      assertTrue("no datanode listens on " + follower, killed != null);
      killed.kill();
      out.write(data, at, data.length - at);
    }
    try {
      assertArrayEquals(data, readAll(p));
      BlockLocation[] locs = fs.getFileBlockLocations(fs.getFileStatus(p), 0, data.length);
      assertTrue("a new block after the failure, got " + locs.length, locs.length >= 2);
      String dead = killed.cmd.get(killed.cmd.indexOf("--listen") + 1);
      for (String n : locs[locs.length - 1].getNames()) {
        assertNotEquals("the last block avoids the killed datanode", dead, n);
      }
    } finally {
      killed.start();
    }
  }

  /**
   * A corrupted replica, read from its file (a local read: the datanodes
   * are on this host) and over TCP (fs.strato.read.local false): the reader
   * gets the right bytes from another replica either way.
   */
  @Test
  public void corruptReplicaIsSkipped() throws Exception {
    Configuration tcpConf = new Configuration(fs.getConf());
    tcpConf.setBoolean(StratoFileSystem.READ_LOCAL, false);
    try (FileSystem tcp = FileSystem.newInstance(URI.create(cluster.uri()), tcpConf)) {
      for (FileSystem reader : new FileSystem[] {fs, tcp}) {
        StratoFileSystem sr = (StratoFileSystem) reader;
        long local = sr.client().localBytesRead();
        org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path("/faults/bucket/corrupt-" + (reader == fs));
        byte[] data = bytes(3 << 20, 3);
        write(p, data, 0);
        corrupt(p);
        assertArrayEquals(data, readAll(reader, p));
        if (reader == fs) {
          assertTrue("read from the block files", sr.client().localBytesRead() - local >= 2L * data.length);
        } else {
          assertEquals("read over TCP", local, sr.client().localBytesRead());
        }
      }
    }
  }

  /** Flips a byte of the first block's replica on the pipeline's leader. */
  private static void corrupt(org.apache.hadoop.fs.Path p) throws Exception {
    StratoFileSystem sfs = (StratoFileSystem) fs;
    io.strato.proto.v1.KeyInfo k = sfs.client().lookupKey("faults", "bucket", p.getName());
    io.strato.proto.v1.BlockLocation bl = k.getBlocks(0);
    // The replica a reader asks first is the pipeline's leader.
    String id = bl.getPipeline().getMembers(0).getId();
    int dn = cluster.datanodeIndex(id);
    assertTrue("datanode " + id + " not found", dn >= 0);
    Path f = cluster.datanodeDirs.get(dn).resolve("containers")
        .resolve(Long.toUnsignedString(bl.getBlockId().getContainerId())).resolve("chunks")
        .resolve(Long.toUnsignedString(bl.getBlockId().getLocalId()) + ".block");
    assertTrue("block file " + f, Files.exists(f));
    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
      raf.seek(12345);
      int b = raf.read();
      raf.seek(12345);
      raf.write(b ^ 0x5a);
    }
  }

  @Test
  public void metaLeaderKilled() throws Exception {
    StratoFileSystem sfs = (StratoFileSystem) fs;
    fs.getFileStatus(new org.apache.hadoop.fs.Path("/faults/bucket"));
    String leader = sfs.client().meta().leader();
    org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path("/faults/bucket/leader-killed/file");
    byte[] data = bytes(5 << 20, 4);
    StratoProcesses.Node killed = cluster.metaAt(leader);
    try {
      try (FSDataOutputStream out = fs.create(p, true)) {
        out.write(data, 0, 2 << 20);
        out.hflush();
        killed.kill();
        out.write(data, 2 << 20, data.length - (2 << 20));
      }
      assertArrayEquals(data, readAll(p));
      assertNotEquals("a new leader answered", leader, sfs.client().meta().leader());
      // Namespace calls go on, each applied once.
      org.apache.hadoop.fs.Path d = new org.apache.hadoop.fs.Path("/faults/bucket/leader-killed");
      org.apache.hadoop.fs.Path moved = new org.apache.hadoop.fs.Path("/faults/bucket/leader-killed-moved");
      assertTrue(fs.rename(d, moved));
      assertEquals(1, fs.listStatus(moved).length);
      assertArrayEquals(data, readAll(new org.apache.hadoop.fs.Path(moved, "file")));
    } finally {
      killed.start();
    }
  }
}
