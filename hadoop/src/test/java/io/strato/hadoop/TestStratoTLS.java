package io.strato.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The connector on a secure cluster (strato dev --secure: TLS, tokens and
 * block tokens): with the cluster's CA (fs.strato.tls.ca) and a token
 * (fs.strato.token) it writes and reads through TLS to meta and to the
 * datanodes, presenting meta's block tokens; without the CA, or with
 * another cluster's CA, it fails with an error that names the setting,
 * instead of retrying; without a token meta refuses it.
 */
public class TestStratoTLS {
  private static StratoCluster cluster;
  private static String ca;
  private static String token;

  @BeforeClass
  public static void start() throws Exception {
    cluster = StratoCluster.startOwn("--secure", "--s3-addr", "", "--http", "");
    Matcher m = Pattern.compile("cluster CA (\\S+)").matcher(cluster.output());
    assertTrue("strato dev --secure printed no CA:\n" + cluster.output(), m.find());
    ca = m.group(1);
    Matcher t = Pattern.compile("token (strato1\\.\\S+)").matcher(cluster.output());
    assertTrue("strato dev --secure printed no token:\n" + cluster.output(), t.find());
    token = t.group(1);
  }

  @AfterClass
  public static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static Configuration conf(String caPath) {
    return conf(caPath, token);
  }

  private static Configuration conf(String caPath, String tok) {
    Configuration conf = new Configuration();
    conf.set("fs.defaultFS", cluster.uri());
    conf.set(StratoFileSystem.CHUNK_SIZE, "1m");
    conf.set(StratoFileSystem.META_RETRY, "3000");
    if (caPath != null) {
      conf.set(StratoFileSystem.TLS_CA, caPath);
    }
    conf.set(StratoFileSystem.TOKEN, tok);
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    return conf;
  }

  @Test
  public void writesAndReadsOverTLS() throws Exception {
    try (FileSystem fs = FileSystem.newInstance(conf(ca))) {
      assertTrue(fs.mkdirs(new Path("/tls/bkt/dir")));
      byte[] data = new byte[5 * (1 << 20) + 12345];
      new Random(7).nextBytes(data);
      Path p = new Path("/tls/bkt/dir/f");
      try (FSDataOutputStream out = fs.create(p)) {
        out.write(data);
        out.hsync();
        out.write(data, 0, 100);
      }
      assertEquals(data.length + 100, fs.getFileStatus(p).getLen());
      byte[] back = new byte[data.length];
      try (FSDataInputStream in = fs.open(p)) {
        in.readFully(0, back);
        assertArrayEquals(data, back);
        byte[] tail = new byte[100];
        in.readFully(data.length, tail);
        assertArrayEquals(java.util.Arrays.copyOf(data, 100), tail);
      }
    }
  }

  @Test
  public void withoutATokenIsRefused() throws Exception {
    try (FileSystem fs = FileSystem.newInstance(conf(ca, "strato1.0000000000000000.not-a-token"))) {
      fs.listStatus(new Path("/"));
      fail("a client without a valid token listed a cluster that authenticates");
    } catch (org.apache.hadoop.security.AccessControlException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("UNAUTHENTICATED"));
    }
  }

  @Test
  public void withoutTheCAFails() throws Exception {
    long start = System.nanoTime();
    try (FileSystem fs = FileSystem.newInstance(conf(null))) {
      fs.listStatus(new Path("/"));
      fail("a plaintext client listed a TLS cluster");
    } catch (IOException e) {
      // refused: meta speaks TLS only
    }
    assertTrue("took " + elapsedS(start) + " s", elapsedS(start) < 30);
  }

  @Test
  public void withAnotherCAFailsAtOnce() throws Exception {
    java.nio.file.Path other = Files.createTempDirectory("strato-other-ca");
    String bin = System.getProperty("strato.bin", "../bin/strato");
    Process p = new ProcessBuilder(bin, "admin", "ca", "init", "--dir", other.resolve("ca").toString())
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(out, p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0);
    long start = System.nanoTime();
    try (FileSystem fs = FileSystem.newInstance(conf(other.resolve("ca").resolve("ca.crt").toString()))) {
      fs.listStatus(new Path("/"));
      fail("a client that trusts another CA listed the cluster");
    } catch (IOException e) {
      assertTrue(e.toString(), e.getMessage().contains("fs.strato.tls.ca"));
    }
    // No retrying: a certificate the client cannot trust stays so.
    assertTrue("took " + elapsedS(start) + " s", elapsedS(start) < 2.5);
  }

  private static double elapsedS(long start) {
    return (System.nanoTime() - start) / 1e9;
  }
}
