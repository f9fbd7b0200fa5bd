package io.strato.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IOUtils;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * append, truncate and lease recovery through the connector, the way HBase
 * uses them on a region server's write-ahead log: one file system writes
 * and hsyncs edits; another (the master) recovers the lease, waits for
 * isFileClosed and reads every hsynced edit; the first writer's late hsync
 * and close are refused.
 */
public class TestAppendLeaseRecovery {
  private static StratoCluster cluster;
  private static FileSystem fs;

  @BeforeClass
  public static void start() throws IOException {
    cluster = StratoCluster.get();
    fs = cluster.fs();
  }

  private static byte[] read(FileSystem f, Path p) throws IOException {
    int n = (int) f.getFileStatus(p).getLen();
    byte[] b = new byte[n];
    try (FSDataInputStream in = f.open(p)) {
      IOUtils.readFully(in, b, 0, n);
    }
    return b;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Test
  public void walRecoveredByAnotherClient() throws Exception {
    Path wal = new Path("/applr/bkt/wal/region1.log");
    byte[] edit1 = TestStratoFileSystem.bytes(5000, 1);
    byte[] edit2 = TestStratoFileSystem.bytes(7000, 2);
    byte[] lost = TestStratoFileSystem.bytes(3000, 3);
    FSDataOutputStream out = fs.create(wal, false);
    out.write(edit1);
    out.hsync();
    out.write(edit2);
    out.hsync();
    out.write(lost); // never hsynced: the writer "dies" here

    Configuration conf = new Configuration(cluster.conf());
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    try (FileSystem master = FileSystem.get(URI.create(cluster.uri()), conf)) {
      LeaseRecoverable lr = (LeaseRecoverable) master;
      assertFalse(lr.isFileClosed(wal));
      assertTrue(lr.recoverLease(wal));
      long deadline = System.currentTimeMillis() + 30_000;
      while (!lr.isFileClosed(wal)) {
        assertTrue("the log never closed", System.currentTimeMillis() < deadline);
        Thread.sleep(100);
      }
      assertArrayEquals(concat(edit1, edit2), read(master, wal));
    }
    // The old writer is fenced.
    assertThrows(IOException.class, out::hsync);
    assertThrows(IOException.class, out::close);
    assertEquals(edit1.length + edit2.length, fs.getFileStatus(wal).getLen());

    // Append after recovery, then truncate mid-block and append again.
    try (FSDataOutputStream app = fs.append(wal)) {
      assertEquals(edit1.length + edit2.length, app.getPos());
      app.write(lost);
    }
    byte[] all = concat(concat(edit1, edit2), lost);
    assertArrayEquals(all, read(fs, wal));
    assertTrue(fs.truncate(wal, 1234));
    try (FSDataOutputStream app = fs.append(wal)) {
      app.write(edit2);
      app.hsync(); // fsyncs the file's blocks too, the one cut inside included
    }
    assertArrayEquals(concat(Arrays.copyOf(edit1, 1234), edit2), read(fs, wal));
  }

  @Test
  public void oneWriterAtATime() throws Exception {
    Path p = new Path("/applr/bkt/onewriter");
    TestStratoFileSystem.write(fs, p, TestStratoFileSystem.bytes(100, 4));
    try (FSDataOutputStream a = fs.append(p)) {
      assertThrows(IOException.class, () -> fs.append(p));
      a.write(1);
    }
    assertEquals(101, fs.getFileStatus(p).getLen());
  }
}
