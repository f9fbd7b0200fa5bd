package io.strato.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.net.URI;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.fs.Path;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Logical cluster names, as HDFS's nameservices: one job's configuration
 * names two clusters, a plain one and a secure one (TLS and tokens), by
 * strato://NAME/ with fs.strato.cluster.NAME.meta.addresses and, for the
 * secure one, its own CA and token; a file copies from one to the other,
 * and is read back from the secure one's block files (local reads with TLS).
 * The HOST:PORT form goes on working beside them, and a name without
 * settings is taken as a host.
 */
public class TestLogicalNames {
  private static StratoCluster plain;
  private static StratoCluster secure;
  private static String ca;
  private static String token;

  @BeforeClass
  public static void start() throws Exception {
    plain = StratoCluster.get();
    secure = StratoCluster.startOwn("--secure", "--s3-addr", "", "--http", "");
    Matcher m = Pattern.compile("cluster CA (\\S+)").matcher(secure.output());
    assertTrue("strato dev --secure printed no CA:\n" + secure.output(), m.find());
    ca = m.group(1);
    Matcher t = Pattern.compile("token (strato1\\.\\S+)").matcher(secure.output());
    assertTrue("strato dev --secure printed no token:\n" + secure.output(), t.find());
    token = t.group(1);
  }

  @AfterClass
  public static void stop() {
    if (secure != null) {
      secure.close();
    }
  }

  private static Configuration conf() {
    Configuration conf = new Configuration();
    conf.set("fs.strato.cluster.lake.meta.addresses", plain.metaAddress());
    conf.set("fs.strato.cluster.vault.meta.addresses", secure.metaAddress());
    conf.set("fs.strato.cluster.vault.tls.ca", ca);
    conf.set("fs.strato.cluster.vault.token", token);
    conf.set(StratoFileSystem.META_RETRY, "3000");
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    return conf;
  }

  @Test
  public void copiesBetweenTwoNamedClusters() throws Exception {
    Configuration conf = conf();
    try (FileSystem lake = FileSystem.newInstance(URI.create("strato://lake/"), conf);
        FileSystem vault = FileSystem.newInstance(URI.create("strato://vault/"), conf)) {
      assertNotSame(lake, vault);
      assertEquals(URI.create("strato://lake/"), lake.getUri());
      assertEquals("strato://vault/names/bkt/f", vault.makeQualified(new Path("/names/bkt/f")).toString());
      byte[] data = new byte[3 * (1 << 20) + 17];
      new Random(11).nextBytes(data);
      Path src = new Path("strato://lake/names/bkt/src");
      try (FSDataOutputStream out = lake.create(src)) {
        out.write(data);
      }
      Path dst = new Path("strato://vault/names/bkt/dst");
      assertTrue(FileUtil.copy(lake, src, vault, dst, false, conf));
      byte[] got = new byte[data.length];
      long local = ((StratoFileSystem) vault).client().localBytesRead();
      try (FSDataInputStream in = vault.open(dst)) {
        in.readFully(got);
      }
      assertArrayEquals(data, got);
      // With TLS the datanodes of this host still name their block files.
      assertTrue("read from the block files",
          ((StratoFileSystem) vault).client().localBytesRead() - local >= data.length);
      // The path's own scheme and name pick the file system.
      assertEquals(data.length, dst.getFileSystem(conf).getFileStatus(dst).getLen());
      assertTrue(!lake.exists(new Path("/names/bkt/dst")));
    }
  }

  @Test
  public void hostPortBesideNames() throws Exception {
    Configuration conf = conf();
    try (FileSystem fs = FileSystem.newInstance(URI.create(plain.uri()), conf)) {
      assertTrue(fs.mkdirs(new Path("/names/bkt2/d")));
      assertTrue(fs.exists(new Path("/names/bkt2/d")));
    }
  }

  @Test
  public void nameWithoutSettingsIsAHost() throws Exception {
    Configuration conf = conf();
    conf.set(StratoFileSystem.META_RETRY, "500");
    conf.set(StratoFileSystem.META_ATTEMPT_TIMEOUT, "300");
    try (FileSystem fs = FileSystem.newInstance(URI.create("strato://nosuchcluster.invalid/"), conf)) {
      fs.listStatus(new Path("/"));
      fail("a cluster name without settings reached a cluster");
    } catch (IOException expected) {
      // nosuchcluster.invalid:9860, taken as meta's address, does not resolve
      assertTrue(expected.toString(), expected.toString().contains("nosuchcluster.invalid"));
    }
  }

  @Test
  public void secureNameNeedsItsToken() throws Exception {
    Configuration conf = conf();
    conf.unset("fs.strato.cluster.vault.token");
    conf.set(StratoFileSystem.TOKEN, "strato1.not-a-token");
    try (FileSystem fs = FileSystem.newInstance(URI.create("strato://vault/"), conf)) {
      fs.listStatus(new Path("/"));
      fail("the secure cluster took a bad token");
    } catch (IOException expected) {
      // the global token is the fallback, and meta refuses it
    }
  }
}
