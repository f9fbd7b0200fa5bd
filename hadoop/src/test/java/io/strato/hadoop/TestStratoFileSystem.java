package io.strato.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strato.client.StratoClient;
import io.strato.proto.v1.CreateBucketRequest;
import io.strato.proto.v1.ErasureCodec;
import io.strato.proto.v1.ErasureCoding;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.CommonPathCapabilities;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.util.CrcUtil;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The connector's own behaviour beyond Hadoop's contract suite, on the test
 * JVM's strato dev cluster: the rooted view, paged listings, blocks and their
 * locations, hsync visibility, composite CRCs, FileContext, clear errors.
 */
public class TestStratoFileSystem {
  private static StratoCluster cluster;
  private static FileSystem fs;

  @BeforeClass
  public static void start() throws IOException {
    cluster = StratoCluster.get();
    fs = cluster.fs();
  }

  static byte[] bytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  static void write(FileSystem f, Path p, byte[] data) throws IOException {
    try (FSDataOutputStream out = f.create(p, true)) {
      out.write(data);
    }
  }

  /**
   * Meta named by an IP address is dialed directly, by a host name through
   * gRPC's resolver: both reach the same cluster.
   */
  @Test
  public void metaByAddressAndByName() throws IOException {
    assertTrue(io.strato.client.MetaClient.isIpLiteral("127.0.0.1"));
    assertTrue(io.strato.client.MetaClient.isIpLiteral("::1"));
    assertFalse(io.strato.client.MetaClient.isIpLiteral("localhost"));
    assertFalse(io.strato.client.MetaClient.isIpLiteral("meta-1.example"));
    assertTrue(fs.mkdirs(new Path("/byname/bkt")));
    String port = cluster.metaAddress().substring(cluster.metaAddress().lastIndexOf(':') + 1);
    Configuration conf = new Configuration(cluster.conf());
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    try (FileSystem byName = FileSystem.get(URI.create("strato://localhost:" + port + "/"), conf)) {
      assertEquals(List.of("bkt"), names(byName.listStatus(new Path("/byname"))));
    }
    assertTrue(fs.delete(new Path("/byname"), true));
  }

  /**
   * Writers of one file system take their chunk buffers from one pool and
   * give them back once committed: two threads writing 40 files of six
   * chunks allocate no more buffers than both can hold at once, every file
   * reads back as written (a buffer reused too early would show here), and
   * with fs.strato.chunk.pool.size 0 every chunk gets a new buffer.
   */
  @Test
  public void chunkBuffersReusedAcrossFiles() throws Exception {
    assertTrue(fs.mkdirs(new Path("/chunkpool/bkt")));
    int chunk = 64 << 10;
    for (long poolSize : new long[] {64L << 20, 0}) {
      Configuration conf = new Configuration(cluster.conf());
      conf.setBoolean("fs.strato.impl.disable.cache", true);
      conf.setInt(StratoFileSystem.CHUNK_SIZE, chunk);
      conf.setLong(StratoFileSystem.CHUNK_POOL, poolSize);
      conf.setInt(StratoFileSystem.CHUNKS_IN_FLIGHT, 4); // the bound below counts on it
      try (FileSystem f = FileSystem.newInstance(fs.getUri(), conf)) {
        List<Throwable> failed = Collections.synchronizedList(new ArrayList<>());
        writeInThreads(f, "/chunkpool/bkt/" + poolSize, 2, 20, 6 * chunk - 100, poolSize, failed);
        assertEquals(List.of(), failed);
        org.apache.hadoop.fs.statistics.IOStatistics st = ((StratoFileSystem) f).getIOStatistics();
        long allocated = st.counters().get("chunk_buffers_allocated");
        long pooled = st.gauges().get("chunk_pool_bytes");
        assertEquals(poolSize, (long) st.gauges().get("chunk_pool_max_bytes"));
        assertTrue("pool holds " + pooled + " bytes, over its bound " + poolSize, pooled <= poolSize);
        if (poolSize == 0) {
          assertEquals("every chunk a new buffer without a pool", 2 * 20 * 6, allocated);
        } else {
          // A writer holds at most 4 chunks unacknowledged (fs.strato.chunks.in-flight), twice FLUSH_CHUNKS
          // acknowledged and uncommitted, and the one it fills.
          assertTrue("allocated " + allocated + " chunk buffers for 240 chunks", allocated > 0 && allocated <= 2 * (4 + 8 + 1));
          assertTrue("nothing given back to the pool", pooled > 0);
        }
      }
    }
    assertTrue(fs.delete(new Path("/chunkpool"), true));
  }

  /**
   * Writes files files of size bytes from each of threads threads at once, named
   * PREFIX-THREAD-I, and reads each back; what fails is added to failed.
   */
  static void writeInThreads(FileSystem f, String prefix, int threads, int files, int size, long seed,
      List<Throwable> failed) throws InterruptedException {
    List<Thread> started = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int th = t;
      started.add(new Thread(() -> {
        try {
          for (int i = 0; i < files; i++) {
            Path p = new Path(prefix + "-" + th + "-" + i);
            byte[] data = bytes(size, seed + 100 * th + i);
            write(f, p, data);
            try (FSDataInputStream in = f.open(p)) {
              byte[] got = new byte[data.length];
              in.readFully(got);
              assertArrayEquals(p.toString(), data, got);
            }
          }
        } catch (Throwable e) {
          failed.add(e);
        }
      }));
    }
    started.forEach(Thread::start);
    for (Thread th : started) {
      th.join();
    }
  }

  /**
   * Writers share the chunks in flight beyond their own four: three threads
   * writing files of 24 chunks through a window of 6 chunk slots never hold
   * more than the window (sampled while they write), every slot is back when
   * they are done, and every file reads back as written.
   */
  @Test
  public void sharedWriteWindow() throws Exception {
    assertTrue(fs.mkdirs(new Path("/window/bkt")));
    int chunk = 64 << 10;
    Configuration conf = new Configuration(cluster.conf());
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    conf.setInt(StratoFileSystem.CHUNK_SIZE, chunk);
    conf.setLong(StratoFileSystem.SHARED_WINDOW, 6L * chunk);
    try (FileSystem f = FileSystem.newInstance(fs.getUri(), conf)) {
      StratoClient client = ((StratoFileSystem) f).client();
      List<Throwable> failed = Collections.synchronizedList(new ArrayList<>());
      AtomicLong most = new AtomicLong();
      AtomicBoolean done = new AtomicBoolean();
      Thread sampler = new Thread(() -> {
        while (!done.get()) {
          long held = client.sharedWindowBytes();
          most.accumulateAndGet(held, Math::max);
          if (held < 0 || held > 6L * chunk) {
            failed.add(new AssertionError("the writers hold " + held + " bytes of a window of " + 6L * chunk));
          }
          Thread.onSpinWait();
        }
      });
      sampler.start();
      writeInThreads(f, "/window/bkt/w", 3, 4, 24 * chunk - 7, 7, failed);
      done.set(true);
      sampler.join();
      assertEquals(List.of(), failed);
      assertEquals("every slot back (at most " + most.get() + " bytes were held)", 0, client.sharedWindowBytes());
      assertEquals(6L * chunk, (long) ((StratoFileSystem) f).getIOStatistics().gauges().get("write_window_max_bytes"));
    }
    assertTrue(fs.delete(new Path("/window"), true));
  }

  /**
   * Reads land in the client's pooled buffers and give them back: after
   * reading a file over TCP the pool holds some, never more than
   * fs.strato.read.pool.size, and with 0 it holds none and reads still work.
   */
  @Test
  public void readBuffersPooled() throws Exception {
    assertTrue(fs.mkdirs(new Path("/readpool/bkt")));
    Path p = new Path("/readpool/bkt/f");
    byte[] data = bytes(3 << 20, 7);
    write(fs, p, data);
    for (long poolSize : new long[] {8L << 20, 0}) {
      Configuration conf = new Configuration(cluster.conf());
      conf.setBoolean("fs.strato.impl.disable.cache", true);
      conf.setBoolean(StratoFileSystem.READ_LOCAL, false);
      conf.set(StratoFileSystem.CHUNK_SIZE, "256k");
      conf.setLong(StratoFileSystem.READ_POOL, poolSize);
      try (FileSystem f = FileSystem.newInstance(fs.getUri(), conf)) {
        try (FSDataInputStream in = f.open(p)) {
          byte[] got = new byte[data.length];
          in.readFully(got);
          assertArrayEquals(data, got);
        }
        org.apache.hadoop.fs.statistics.IOStatistics st = ((StratoFileSystem) f).getIOStatistics();
        long pooled = st.gauges().get("read_pool_bytes");
        assertEquals(poolSize, (long) st.gauges().get("read_pool_max_bytes"));
        assertTrue("read pool holds " + pooled + " bytes, bound " + poolSize, pooled <= poolSize);
        if (poolSize > 0) {
          assertTrue("no read buffer given back", pooled > 0);
        }
      }
    }
    assertTrue(fs.delete(new Path("/readpool"), true));
  }

  @Test
  public void rootedView() throws IOException {
    assertTrue(fs.mkdirs(new Path("/rooted/bkt/a/b")));
    assertTrue(fs.getFileStatus(new Path("/")).isDirectory());
    assertTrue(fs.getFileStatus(new Path("/rooted")).isDirectory());
    assertTrue(fs.getFileStatus(new Path("/rooted/bkt")).isDirectory());
    List<String> vols = names(fs.listStatus(new Path("/")));
    assertTrue(vols.toString(), vols.contains("rooted"));
    assertEquals(List.of("bkt"), names(fs.listStatus(new Path("/rooted"))));
    assertEquals(List.of("a"), names(fs.listStatus(new Path("/rooted/bkt"))));
    assertEquals(System.getProperty("user.name"), fs.getFileStatus(new Path("/rooted/bkt/a")).getOwner());
    // A file cannot live above a bucket's root.
    assertThrows(FileAlreadyExistsException.class, () -> fs.create(new Path("/rooted/file")));
    assertThrows(FileNotFoundException.class, () -> fs.getFileStatus(new Path("/nosuchvol")));
    assertThrows(FileNotFoundException.class, () -> fs.listStatus(new Path("/rooted/nosuchbkt")));
    // A bucket and a volume go with delete -r.
    write(fs, new Path("/rooted/bkt/a/b/f"), bytes(10, 1));
    assertTrue(fs.delete(new Path("/rooted"), true));
    assertFalse(fs.exists(new Path("/rooted")));
  }

  @Test
  public void badInputFailsClearly() throws IOException {
    IOException e = assertThrows(IOException.class, () -> fs.mkdirs(new Path("/badnames/b1")));
    assertTrue(e.getMessage(), e.getMessage().contains("INVALID_NAME") && e.getMessage().contains("b1"));
    fs.mkdirs(new Path("/badnames/one/d"));
    fs.mkdirs(new Path("/badnames/two"));
    e = assertThrows(IOException.class, () -> fs.rename(new Path("/badnames/one/d"), new Path("/badnames/two/d")));
    assertTrue(e.getMessage(), e.getMessage().contains("within one bucket"));
    // A directory cannot be appended to, as on HDFS.
    assertThrows(FileNotFoundException.class, () -> fs.append(new Path("/badnames/one/d")));
    IOException noMeta = assertThrows(IOException.class,
        () -> FileSystem.newInstance(URI.create("strato:///"), new Configuration()));
    assertTrue(noMeta.getMessage(), noMeta.getMessage().contains("fs.strato.meta.addresses"));
  }

  static List<String> names(FileStatus[] sts) {
    List<String> out = new ArrayList<>();
    for (FileStatus s : sts) {
      out.add(s.getPath().getName());
    }
    return out;
  }

  @Test
  public void listingsArePaged() throws IOException {
    Configuration conf = cluster.conf();
    conf.setInt(StratoFileSystem.LIST_PAGE, 7);
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    try (FileSystem small = FileSystem.get(URI.create(cluster.uri()), conf)) {
      Path dir = new Path("/paged/bkt/dir");
      small.mkdirs(dir);
      List<String> want = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        String n = String.format("f%03d", i);
        want.add(n);
        if (i % 3 == 0) {
          small.mkdirs(new Path(dir, n));
        } else {
          write(small, new Path(dir, n), bytes(i, i));
        }
      }
      List<String> got = new ArrayList<>();
      RemoteIterator<FileStatus> it = small.listStatusIterator(dir);
      while (it.hasNext()) {
        got.add(it.next().getPath().getName());
      }
      assertEquals(want, got);
      assertEquals(want, names(small.listStatus(dir)));
      int files = 0;
      RemoteIterator<LocatedFileStatus> li = small.listFiles(new Path("/paged/bkt"), true);
      while (li.hasNext()) {
        LocatedFileStatus s = li.next();
        files++;
        assertEquals(s.getLen() == 0 ? 0 : 1, s.getBlockLocations().length);
      }
      assertEquals(20, files);
    }
  }

  @Test
  public void erasureCodedFileNeedsItsMembers() throws IOException {
    // strato dev has three datanodes, too few for an RS-3-2 block group: the
    // write fails saying so, and nothing is left (TestErasureCoding writes
    // erasure coded files on six); replication 1 asked for stays replicated.
    StratoFileSystem sfs = (StratoFileSystem) fs;
    sfs.mkdirs(new Path("/ecvol"));
    sfs.client().meta().mutate("create bucket", s -> s.createBucket(CreateBucketRequest.newBuilder()
        .setVolume("ecvol").setName("rs32").setErasureCoding(ErasureCoding.newBuilder()
            .setCodec(ErasureCodec.ERASURE_CODEC_RS).setData(3).setParity(2)).build()));
    IOException e = assertThrows(IOException.class, () -> {
      try (FSDataOutputStream out = fs.create(new Path("/ecvol/rs32/f"))) {
        out.write(bytes(1000, 3));
      }
    });
    assertTrue(e.getMessage(), e.getMessage().contains("rs-3-2-1024k") && e.getMessage().contains("need 5"));
    assertFalse(fs.exists(new Path("/ecvol/rs32/f")));
    Path one = new Path("/ecvol/rs32/one");
    try (FSDataOutputStream out = fs.create(one, true, 4096, (short) 1, 1 << 20)) {
      out.write(bytes(1000, 3));
    }
    try (FSDataInputStream in = fs.open(one)) {
      byte[] b = new byte[1000];
      in.readFully(0, b);
      assertArrayEquals(bytes(1000, 3), b);
    }
  }

  @Test
  public void blocksAndLocations() throws IOException {
    // A bucket with 1 MiB blocks, so a 2.5 MiB file has three.
    StratoFileSystem sfs = (StratoFileSystem) fs;
    sfs.mkdirs(new Path("/blocks"));
    sfs.client().meta().mutate("create bucket", s -> s.createBucket(CreateBucketRequest.newBuilder()
        .setVolume("blocks").setName("small").setBlockSize(1 << 20).build()));
    assertEquals(1 << 20, fs.getDefaultBlockSize(new Path("/blocks/small/x")));
    Path p = new Path("/blocks/small/f");
    byte[] data = bytes((5 << 20) / 2, 7);
    write(fs, p, data);
    FileStatus st = fs.getFileStatus(p);
    assertEquals(data.length, st.getLen());
    assertEquals(1 << 20, st.getBlockSize());
    BlockLocation[] locs = fs.getFileBlockLocations(st, 0, st.getLen());
    assertEquals(3, locs.length);
    for (int i = 0; i < 3; i++) {
      assertEquals((long) i << 20, locs[i].getOffset());
      assertEquals(3, locs[i].getHosts().length);
      assertEquals("127.0.0.1", locs[i].getHosts()[0]);
    }
    assertEquals(1, fs.getFileBlockLocations(st, (3 << 20) / 2, 10).length);
    // Reads across block boundaries: positioned, sequential, ByteBuffer.
    try (FSDataInputStream in = fs.open(p)) {
      byte[] b = new byte[1 << 20];
      in.readFully((1 << 20) - 100, b);
      assertArrayEquals(java.util.Arrays.copyOfRange(data, (1 << 20) - 100, (2 << 20) - 100), b);
      in.seek(data.length - 10);
      ByteBuffer bb = ByteBuffer.allocateDirect(100);
      assertEquals(10, in.read(bb));
      assertEquals(-1, in.read());
      assertTrue(in.hasCapability(StreamCapabilities.READBYTEBUFFER));
      in.seek(0);
      byte[] all = new byte[data.length];
      in.readFully(all);
      assertArrayEquals(data, all);
    }
  }

  @Test
  public void hsyncMakesDataVisible() throws IOException {
    Path p = new Path("/sync/bkt/f");
    byte[] data = bytes(3 << 20, 9);
    try (FSDataOutputStream out = fs.create(p, true)) {
      assertTrue(out.hasCapability(StreamCapabilities.HSYNC));
      assertTrue(out.hasCapability(StreamCapabilities.HFLUSH));
      out.write(data, 0, 1000);
      out.hsync();
      assertEquals(1000, fs.getFileStatus(p).getLen());
      try (FSDataInputStream in = fs.open(p)) {
        byte[] b = new byte[1000];
        in.readFully(b);
        assertArrayEquals(java.util.Arrays.copyOf(data, 1000), b);
      }
      out.write(data, 1000, data.length - 1000);
      out.hflush();
      assertEquals(data.length, fs.getFileStatus(p).getLen());
    }
    assertEquals(data.length, fs.getFileStatus(p).getLen());
  }

  @Test
  public void compositeCrcIsTheCrc32cOfTheBytes() throws IOException {
    // HDFS's COMPOSITE_CRC of a file is the CRC32C of its bytes, whatever its
    // block and chunk sizes: compare with one computed here, for the whole
    // file and for a prefix that ends inside a checksum window.
    assertTrue(fs.hasPathCapability(new Path("/crc/bkt"), CommonPathCapabilities.FS_CHECKSUMS));
    Path p = new Path("/crc/bkt/f");
    byte[] data = bytes(9 << 20 | 12345, 11);
    write(fs, p, data);
    FileChecksum c = fs.getFileChecksum(p);
    assertEquals("COMPOSITE-CRC32C", c.getAlgorithmName());
    assertArrayEquals(CrcUtil.intToBytes(crc32c(data, data.length)), c.getBytes());
    int prefix = (5 << 20) + 777;
    assertArrayEquals(CrcUtil.intToBytes(crc32c(data, prefix)), fs.getFileChecksum(p, prefix).getBytes());
    Path empty = new Path("/crc/bkt/empty");
    write(fs, empty, new byte[0]);
    assertArrayEquals(CrcUtil.intToBytes(0), fs.getFileChecksum(empty).getBytes());
    assertThrows(FileNotFoundException.class, () -> fs.getFileChecksum(new Path("/crc/bkt/none")));
  }

  @Test
  public void etagChangesWithEveryWriteAndKeepsThroughRename() throws IOException {
    Path p = new Path("/etags/bkt/f");
    write(fs, p, bytes(10, 1));
    String first = ((org.apache.hadoop.fs.EtagSource) fs.getFileStatus(p)).getEtag();
    write(fs, p, bytes(10, 1)); // the same bytes, written again: a new object
    String second = ((org.apache.hadoop.fs.EtagSource) fs.getFileStatus(p)).getEtag();
    assertTrue(first + " " + second, first != null && !first.equals(second));
    Path q = new Path("/etags/bkt/g");
    assertTrue(fs.rename(p, q));
    assertEquals(second, ((org.apache.hadoop.fs.EtagSource) fs.getFileStatus(q)).getEtag());
  }

  static int crc32c(byte[] b, int n) {
    CRC32C c = new CRC32C();
    c.update(b, 0, n);
    return (int) c.getValue();
  }

  @Test
  public void fileContext() throws IOException {
    // No fs.AbstractFileSystem.strato.impl needed: the jar's strato-default.xml has it.
    Configuration conf = new Configuration();
    assertEquals(StratoFs.class.getName(), conf.get("fs.AbstractFileSystem.strato.impl"));
    FileContext fc = FileContext.getFileContext(URI.create(cluster.uri()), conf);
    Path dir = new Path("/fctx/bkt/d");
    fc.mkdir(dir, null, true);
    Path f = new Path(dir, "f");
    try (FSDataOutputStream out = fc.create(f, EnumSet.of(CreateFlag.CREATE), Options.CreateOpts.createParent())) {
      out.write(bytes(100, 1));
    }
    fc.rename(f, new Path(dir, "g"));
    assertEquals(100, fc.getFileStatus(new Path(dir, "g")).getLen());
    RemoteIterator<FileStatus> it = fc.listStatus(dir);
    assertTrue(it.hasNext());
    assertEquals("g", it.next().getPath().getName());
    assertFalse(it.hasNext());
    assertTrue(fc.delete(dir, true));
  }

  @Test
  public void statistics() throws IOException {
    FileSystem.Statistics s = FileSystem.getStatistics(StratoFileSystem.SCHEME, StratoFileSystem.class);
    long w = s.getBytesWritten();
    long r = s.getBytesRead();
    Path p = new Path("/stats/bkt/f");
    write(fs, p, bytes(4321, 3));
    try (FSDataInputStream in = fs.open(p)) {
      in.readFully(new byte[4321]);
    }
    assertEquals(4321, s.getBytesWritten() - w);
    assertEquals(4321, s.getBytesRead() - r);
    // The service TokenCache keys this cluster's delegation tokens by.
    assertEquals("strato:" + cluster.metaAddress(), fs.getCanonicalServiceName());
  }
}
