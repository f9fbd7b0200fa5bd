package io.strato.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.security.TokenCacheAccess;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authentication.util.KerberosName;
import org.apache.hadoop.security.token.DtUtilShell;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.util.ToolRunner;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Delegation tokens through Hadoop's own machinery, against a cluster whose
 * meta requires tokens (strato dev --secure): TokenCache (what a job's
 * submission runs; TokenCacheAccess) gets one keyed by the file system's
 * canonical service, with the resource manager's principal as renewer; a fresh UGI that carries only those Credentials, with
 * no token in its configuration, writes and reads with it; Token.renew and
 * Token.cancel go to meta through the TokenRenewer Hadoop finds by the
 * token's kind; once cancelled the token is refused. Hadoop's dtutil (its
 * DtUtilShell, what `hadoop dtutil` runs) gets, prints, renews and cancels
 * one too, and prints the file `strato admin token delegation get --format
 * hadoop` writes.
 */
public class TestDelegationTokens {
  private static StratoCluster cluster;
  private static String ca;
  private static String adminToken;
  private static String rmToken;

  @BeforeClass
  public static void start() throws Exception {
    cluster = StratoCluster.startOwn("--secure", "--s3-addr", "", "--http", "");
    Matcher m = Pattern.compile("cluster CA (\\S+)").matcher(cluster.output());
    assertTrue(cluster.output(), m.find());
    ca = m.group(1);
    Matcher t = Pattern.compile("token (strato1\\.\\S+)").matcher(cluster.output());
    assertTrue(cluster.output(), t.find());
    adminToken = t.group(1);
    cli("admin", "user", "create", "rm");
    Matcher r = Pattern.compile("Token:\\s+(strato1\\.\\S+)").matcher(cli("admin", "token", "issue", "--user", "rm"));
    assertTrue(r.find());
    rmToken = r.group(1);
  }

  @AfterClass
  public static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static String cli(String... args) throws Exception {
    String[] all = new String[args.length + 4];
    System.arraycopy(args, 0, all, 0, args.length);
    all[args.length] = "--tls-ca";
    all[args.length + 1] = ca;
    all[args.length + 2] = "--token";
    all[args.length + 3] = adminToken;
    return cluster.cli(all);
  }

  /** A configuration with the CA and, unless null, a token. */
  private static Configuration conf(String token) {
    Configuration conf = new Configuration();
    conf.set("fs.defaultFS", cluster.uri());
    conf.set(StratoFileSystem.CHUNK_SIZE, "1m");
    conf.set(StratoFileSystem.META_RETRY, "3000");
    conf.set(StratoFileSystem.TLS_CA, ca);
    if (token != null) {
      conf.set(StratoFileSystem.TOKEN, token);
    }
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    return conf;
  }

  private static void writeAndRead(Configuration conf, String path) throws IOException {
    byte[] data = new byte[3 * (1 << 20) + 17];
    new Random(path.hashCode()).nextBytes(data);
    try (FileSystem fs = FileSystem.newInstance(conf)) {
      Path p = new Path(path);
      fs.mkdirs(p.getParent());
      try (FSDataOutputStream out = fs.create(p)) {
        out.write(data);
      }
      byte[] back = new byte[data.length];
      try (FSDataInputStream in = fs.open(p)) {
        in.readFully(back);
      }
      assertArrayEquals(data, back);
    }
  }

  @Test
  public void jobCredentialsRoundTrip() throws Exception {
    // A job's submission: TokenCache asks the file system of each input and
    // output path for a token, renewable by the resource manager.
    Credentials creds = new Credentials();
    Configuration submit = conf(adminToken);
    submit.set("yarn.resourcemanager.principal", "rm/host.example.com@EXAMPLE.COM");
    Path[] paths = {new Path(cluster.uri() + "dtvol/bkt/in"), new Path(cluster.uri() + "dtvol/bkt/out")};
    TokenCacheAccess.obtainTokensForNamenodes(creds, paths, submit);
    assertEquals(1, creds.numberOfTokens());
    String service;
    try (FileSystem fs = FileSystem.newInstance(submit)) {
      service = fs.getCanonicalServiceName();
      assertEquals("strato:" + cluster.metaAddress(), service);
      // Asked again, it finds the token in the credentials.
      assertEquals(0, fs.addDelegationTokens("rm", creds).length);
    }
    Token<?> token = creds.getToken(new Text(service));
    assertNotNull(token);
    assertEquals(StratoDelegationTokenIdentifier.KIND, token.getKind());
    StratoDelegationTokenIdentifier id = (StratoDelegationTokenIdentifier) token.decodeIdentifier();
    assertEquals("admin", id.getOwner().toString());
    assertEquals("rm", id.getRenewer().toString());
    assertEquals(7L * 24 * 3600 * 1000, id.getMaxDate() - id.getIssueDate());

    // A task: a fresh UGI with only the job's credentials, no token configured.
    UserGroupInformation task = UserGroupInformation.createRemoteUser("task");
    task.addCredentials(creds);
    task.doAs((java.security.PrivilegedExceptionAction<Void>) () -> {
      writeAndRead(conf(null), "/dtvol/bkt/job/part-0");
      return null;
    });

    // Renewal: the renewer only, through Hadoop's TokenRenewer.
    try {
      token.renew(conf(adminToken));
      fail("admin renewed a token whose renewer is rm");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("only its renewer (rm)"));
    }
    long exp = token.renew(conf(rmToken));
    assertTrue(exp > System.currentTimeMillis() + 23L * 3600 * 1000);
    assertTrue(exp <= id.getMaxDate());

    // Cancelled, it is refused.
    token.cancel(conf(rmToken));
    try {
      task.doAs((java.security.PrivilegedExceptionAction<Void>) () -> {
        writeAndRead(conf(null), "/dtvol/bkt/job/part-1");
        return null;
      });
      fail("a cancelled token was accepted");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("cancelled"));
    }
  }

  /**
   * A renewer principal goes through Hadoop's auth_to_local rules, as
   * HDFS's identifier maps it: here rm/HOST@EXAMPLE.COM is user yarn, which
   * meta's first component (rm) would not give.
   */
  @Test
  public void renewerThroughAuthToLocal() throws Exception {
    UserGroupInformation.isSecurityEnabled(); // Hadoop's own rules first, so that ours are not replaced
    String before = KerberosName.getRules();
    KerberosName.setRules("RULE:[2:$1@$0](rm@EXAMPLE\\.COM)s/.*/yarn/\nRULE:[2:$1]");
    try (FileSystem fs = FileSystem.newInstance(URI.create(cluster.uri()), conf(adminToken))) {
      Token<?> t = fs.getDelegationToken("rm/host.example.com@EXAMPLE.COM");
      assertEquals("yarn", ((StratoDelegationTokenIdentifier) t.decodeIdentifier()).getRenewer().toString());
      t = fs.getDelegationToken("mapred/host.example.com@EXAMPLE.COM");
      assertEquals("mapred", ((StratoDelegationTokenIdentifier) t.decodeIdentifier()).getRenewer().toString());
      t = fs.getDelegationToken("a/b/c@EXAMPLE.COM"); // no rule: meta takes the first component
      assertEquals("a", ((StratoDelegationTokenIdentifier) t.decodeIdentifier()).getRenewer().toString());
    } finally {
      KerberosName.setRules(before);
    }
  }

  /** Without authentication there is no token to get, and jobs submit as before. */
  @Test
  public void openClusterGivesNoToken() throws Exception {
    StratoCluster open = StratoCluster.get();
    Configuration conf = open.conf();
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    try (FileSystem fs = FileSystem.newInstance(conf)) {
      assertEquals("strato:" + open.metaAddress(), fs.getCanonicalServiceName());
      Credentials creds = new Credentials();
      assertEquals(0, fs.addDelegationTokens("rm", creds).length);
      assertEquals(0, creds.numberOfTokens());
    }
  }

  @Test
  public void dtutil() throws Exception {
    File dir = Files.createTempDirectory("dtutil").toFile();
    File file = new File(dir, "tokens");
    String url = cluster.uri();
    assertEquals(0, ToolRunner.run(conf(adminToken), new DtUtilShell(),
        new String[] {"get", url, "-renewer", "rm", file.getPath()}));
    Credentials creds = Credentials.readTokenStorageFile(file, new Configuration());
    assertEquals(1, creds.numberOfTokens());
    Token<?> token = creds.getAllTokens().iterator().next();
    assertEquals("strato:" + cluster.metaAddress(), token.getService().toString());
    assertEquals(0, ToolRunner.run(conf(null), new DtUtilShell(), new String[] {"print", file.getPath()}));
    assertEquals(0, ToolRunner.run(conf(rmToken), new DtUtilShell(), new String[] {"renew", "-alias", token.getService().toString(), file.getPath()}));
    assertEquals(0, ToolRunner.run(conf(rmToken), new DtUtilShell(), new String[] {"cancel", "-alias", token.getService().toString(), file.getPath()}));
    try {
      token.renew(conf(rmToken));
      fail("renewed a cancelled token");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("cancelled"));
    }

    // The CLI's Hadoop token file: Hadoop reads it, and the token works.
    File cliFile = new File(dir, "cli-tokens");
    cli("admin", "token", "delegation", "get", "--renewer", "rm", "--out", cliFile.getPath(), "--format", "hadoop");
    assertEquals(0, ToolRunner.run(conf(null), new DtUtilShell(), new String[] {"print", cliFile.getPath()}));
    Credentials cliCreds = Credentials.readTokenStorageFile(cliFile, new Configuration());
    UserGroupInformation task = UserGroupInformation.createRemoteUser("task2");
    task.addCredentials(cliCreds);
    task.doAs((java.security.PrivilegedExceptionAction<Void>) () -> {
      writeAndRead(conf(null), "/dtvol/bkt/cli/part-0");
      return null;
    });
    assertTrue(cliCreds.getAllTokens().iterator().next().renew(conf(rmToken)) > System.currentTimeMillis());
  }
}
