package io.strato.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.strato.client.MetaClient;
import io.strato.client.Security;
import io.strato.proto.v1.DelegationToken;
import io.strato.proto.v1.ListDelegationTokensRequest;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.PrivilegedExceptionAction;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.MiniMRClientCluster;
import org.apache.hadoop.mapred.MiniMRClientClusterFactory;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.input.TextInputFormat;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.HadoopKerberosName;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * A MapReduce job on a Kerberos-secured YARN (MiniKdc, and a
 * MiniMRYarnCluster whose resource manager, node manager and job history
 * server log in from a keytab) against a cluster whose meta requires tokens
 * (strato dev --secure), as on a secure Hadoop cluster: at submission
 * TokenCache gets a strato delegation token for the job (renewer: the
 * resource manager's principal), the resource manager renews it while the
 * job runs (meta's renew interval is shorter than the job) and cancels it
 * once the job has finished. The tasks have no strato token in their
 * configuration, only the delegation token in their credentials; the
 * submitter's own token never leaves the submitting JVM. Afterwards the
 * cancelled token is refused, and so is one that nobody renewed.
 */
public class TestDelegationTokenKerberosJob {
  /** Meta's renew interval: a token nobody renews expires this long after its issue or last renewal. */
  private static final long RENEW_INTERVAL_MS = 30_000; // YARN renews at 90% of what is left: 3 s of slack
  private static final String WAIT_KEY = "strato.test.renew-interval-ms";

  private static StratoCluster cluster;
  private static String ca;
  private static String adminToken;
  private static String yarnToken;
  private static MiniKdc kdc;
  private static File workDir;
  private static File keytab;
  private static String servicePrincipal;
  private static String userPrincipal;

  /**
   * Upper-cases each line, once the job's delegation token has outlived
   * the expiry its issue set: it is valid then only if the resource
   * manager renewed it.
   */
  public static class Upper extends Mapper<LongWritable, Text, LongWritable, Text> {
    @Override
    protected void setup(Context c) throws IOException, InterruptedException {
      if (c.getConfiguration().get(StratoFileSystem.TOKEN) != null) {
        throw new IOException("the task's configuration carries a strato token");
      }
      StratoDelegationTokenIdentifier id = null;
      for (Token<?> t : UserGroupInformation.getCurrentUser().getCredentials().getAllTokens()) {
        if (StratoDelegationTokenIdentifier.KIND.equals(t.getKind())) {
          id = identifier(t);
        }
      }
      if (id == null) {
        throw new IOException("no strato delegation token in the task's credentials");
      }
      long until = id.getIssueDate() + c.getConfiguration().getLong(WAIT_KEY, 0) + 4_000;
      while (System.currentTimeMillis() < until) {
        Thread.sleep(200);
      }
    }

    @Override
    protected void map(LongWritable k, Text v, Context c) throws IOException, InterruptedException {
      c.write(k, new Text(v.toString().toUpperCase()));
    }
  }

  static StratoDelegationTokenIdentifier identifier(Token<?> t) throws IOException {
    StratoDelegationTokenIdentifier id = new StratoDelegationTokenIdentifier();
    id.readFields(new DataInputStream(new ByteArrayInputStream(t.getIdentifier())));
    return id;
  }

  @BeforeClass
  public static void start() throws Exception {
    cluster = StratoCluster.startOwn("--secure", "--s3-addr", "", "--http", "",
        "--delegation-token-renew-interval", RENEW_INTERVAL_MS + "ms");
    Matcher m = Pattern.compile("cluster CA (\\S+)").matcher(cluster.output());
    assertTrue(cluster.output(), m.find());
    ca = m.group(1);
    Matcher t = Pattern.compile("token (strato1\\.\\S+)").matcher(cluster.output());
    assertTrue(cluster.output(), t.find());
    adminToken = t.group(1);
    // The resource manager's own strato user: the short name of its principal.
    cluster.cli("admin", "user", "create", "yarn", "--tls-ca", ca, "--token", adminToken);
    Matcher r = Pattern.compile("Token:\\s+(strato1\\.\\S+)")
        .matcher(cluster.cli("admin", "token", "issue", "--user", "yarn", "--tls-ca", ca, "--token", adminToken));
    assertTrue(r.find());
    yarnToken = r.group(1);

    workDir = Files.createTempDirectory("strato-krb").toFile();
    kdc = new MiniKdc(MiniKdc.createConf(), workDir);
    kdc.start();
    keytab = new File(workDir, "hadoop.keytab");
    kdc.createPrincipal(keytab, "yarn/localhost", "alice");
    servicePrincipal = "yarn/localhost@" + kdc.getRealm();
    userPrincipal = "alice@" + kdc.getRealm();
  }

  @AfterClass
  public static void stop() {
    UserGroupInformation.reset();
    if (kdc != null) {
      kdc.stop();
    }
    if (workDir != null) {
      FileUtil.fullyDelete(workDir);
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private static Configuration adminConf() {
    Configuration conf = new Configuration();
    conf.set(StratoFileSystem.TLS_CA, ca);
    conf.set(StratoFileSystem.TOKEN, adminToken);
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    return conf;
  }

  /** The secure YARN's configuration: Kerberos, one principal and keytab for its daemons. */
  private static Configuration secureConf() {
    Configuration conf = new Configuration();
    conf.set("hadoop.security.authentication", "kerberos");
    for (String role : new String[] {"yarn.resourcemanager", "yarn.nodemanager", "mapreduce.jobhistory"}) {
      conf.set(role + ".principal", servicePrincipal);
      conf.set(role + ".keytab", keytab.getPath());
    }
    conf.setBoolean("yarn.nodemanager.vmem-check-enabled", false);
    // A shared disk over 90% full would make the node manager unhealthy and the job wait.
    conf.setFloat("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage", 100f);
    // The resource manager cancels a finished job's tokens this long after it ends (default 30 s).
    conf.setLong("yarn.resourcemanager.delayed.delegation-token.removal-interval-ms", 1000);
    // The resource manager's strato credential, with which it renews and
    // cancels the tokens it is the renewer of (a job never sees it: the
    // job's configuration below leaves it out).
    conf.set(StratoFileSystem.TLS_CA, ca);
    conf.set(StratoFileSystem.TOKEN, yarnToken);
    return conf;
  }

  private static List<DelegationToken> listDelegationTokens() throws IOException {
    try (MetaClient meta = new MetaClient(List.of(cluster.metaAddress()), 10_000, 60_000, Security.of(ca, adminToken))) {
      return meta.admin("list delegation tokens", false,
          s -> s.listDelegationTokens(ListDelegationTokensRequest.newBuilder().build())).getTokensList();
    }
  }

  private static DelegationToken listed(long sequence) throws IOException {
    for (DelegationToken d : listDelegationTokens()) {
      if (d.getSequence() == sequence) {
        return d;
      }
    }
    return null;
  }

  /** Reads the input as a user whose only strato credential is token; the error, or null. */
  private static String readWith(Token<?> token) throws Exception {
    UserGroupInformation u = UserGroupInformation.createRemoteUser("task");
    u.addToken(token);
    Configuration conf = new Configuration();
    conf.set(StratoFileSystem.TLS_CA, ca);
    conf.setBoolean("fs.strato.impl.disable.cache", true);
    conf.setLong(StratoFileSystem.META_RETRY, 2_000);
    return u.doAs((PrivilegedExceptionAction<String>) () -> {
      try (FileSystem fs = FileSystem.newInstance(URI.create(cluster.uri()), conf)) {
        fs.open(new Path("/mrvol/bkt/in/a.txt")).close();
        return null;
      } catch (IOException e) {
        return e.toString();
      }
    });
  }

  @Test
  public void yarnObtainsRenewsAndCancelsTheJobsToken() throws Exception {
    try (FileSystem fs = FileSystem.newInstance(URI.create(cluster.uri()), adminConf())) {
      fs.mkdirs(new Path("/mrvol/bkt/in"));
      try (FSDataOutputStream o = fs.create(new Path("/mrvol/bkt/in/a.txt"))) {
        o.write("hello\nstrato\n".getBytes(StandardCharsets.UTF_8));
      }
    }
    Configuration conf = secureConf();
    UserGroupInformation.setConfiguration(conf);
    UserGroupInformation.loginUserFromKeytab(servicePrincipal, keytab.getPath());
    assertTrue(UserGroupInformation.isSecurityEnabled());
    MiniMRClientCluster mr = MiniMRClientClusterFactory.create(TestDelegationTokenKerberosJob.class, 1, conf);
    try {
      // The job's configuration: the cluster's, less the resource manager's
      // strato token; the tasks' JVMs find the KDC's krb5.conf.
      Configuration jc = new Configuration(mr.getConfig());
      jc.unset(StratoFileSystem.TOKEN);
      String krb5 = " -Djava.security.krb5.conf=" + kdc.getKrb5conf().getAbsolutePath();
      jc.set(MRJobConfig.MR_AM_COMMAND_OPTS, jc.get(MRJobConfig.MR_AM_COMMAND_OPTS, "-Xmx1024m") + krb5);
      jc.set(MRJobConfig.MAP_JAVA_OPTS, jc.get(MRJobConfig.MAP_JAVA_OPTS, "-Xmx200m") + krb5);
      jc.setLong(WAIT_KEY, RENEW_INTERVAL_MS);

      UserGroupInformation alice = UserGroupInformation.loginUserFromKeytabAndReturnUGI(userPrincipal, keytab.getPath());
      long submitted = System.currentTimeMillis();
      Job job = alice.doAs((PrivilegedExceptionAction<Job>) () -> {
        // The submitter's own strato credential, in the file system it
        // opens (FileSystem's cache hands it to TokenCache), not in job.xml.
        Configuration mine = new Configuration(jc);
        mine.set(StratoFileSystem.TOKEN, adminToken);
        FileSystem.get(URI.create(cluster.uri()), mine);
        Job j = Job.getInstance(jc, "strato-kerberos-delegation-token");
        j.setJarByClass(TestDelegationTokenKerberosJob.class);
        j.setMapperClass(Upper.class);
        j.setNumReduceTasks(0);
        j.setInputFormatClass(TextInputFormat.class);
        j.setOutputFormatClass(TextOutputFormat.class);
        j.setOutputKeyClass(LongWritable.class);
        j.setOutputValueClass(Text.class);
        TextInputFormat.addInputPath(j, new Path(cluster.uri() + "mrvol/bkt/in"));
        TextOutputFormat.setOutputPath(j, new Path(cluster.uri() + "mrvol/bkt/out"));
        j.submit();
        return j;
      });

      // TokenCache got one strato token at submission, renewable by the
      // resource manager's principal's short name.
      Token<?> dt = null;
      for (Token<?> t : job.getCredentials().getAllTokens()) {
        if (StratoDelegationTokenIdentifier.KIND.equals(t.getKind())) {
          assertTrue("two strato tokens in the job's credentials", dt == null);
          dt = t;
        }
      }
      assertNotNull("TokenCache got no strato delegation token", dt);
      StratoDelegationTokenIdentifier id = identifier(dt);
      String renewer = new HadoopKerberosName(servicePrincipal).getShortName();
      assertEquals("yarn", renewer);
      assertEquals(renewer, id.getRenewer().toString());
      assertEquals("admin", id.getOwner().toString());
      assertTrue(id.getIssueDate() >= submitted - 1000);

      // An unrenewed token of the same submitter, to be refused as expired.
      Token<?> idle;
      try (FileSystem fs = FileSystem.newInstance(URI.create(cluster.uri()), adminConf())) {
        idle = fs.getDelegationToken(servicePrincipal);
      }

      boolean ok = alice.doAs((PrivilegedExceptionAction<Boolean>) () -> job.waitForCompletion(true));
      long done = System.currentTimeMillis();
      assertTrue("the job failed", ok);
      try (FileSystem fs = FileSystem.newInstance(URI.create(cluster.uri()), adminConf())) {
        String got = new String(fs.open(new Path("/mrvol/bkt/out/part-m-00000")).readAllBytes(), StandardCharsets.UTF_8);
        assertEquals("0\tHELLO\n6\tSTRATO\n", got);
      }

      // The resource manager renewed the token while the job ran (its tasks
      // wrote past the expiry the issue set) and cancels it once the job
      // has finished.
      DelegationToken d = listed(id.getSequenceNumber());
      assertNotNull("meta does not list the job's token", d);
      assertEquals("yarn", d.getRenewer());
      assertEquals("admin", d.getOwner());
      assertTrue("not renewed: " + d, d.getExpiresUnixMs() >= d.getIssueUnixMs() + RENEW_INTERVAL_MS + 4_000);
      long deadline = System.currentTimeMillis() + 30_000;
      while (d.getCancelledUnixMs() == 0 && System.currentTimeMillis() < deadline) {
        Thread.sleep(250);
        d = listed(id.getSequenceNumber());
      }
      assertTrue("the resource manager did not cancel the job's token: " + d, d.getCancelledUnixMs() != 0);
      System.out.printf("strato delegation token %s: issued %d ms after the submission began, job done after %d ms,"
          + " expiry moved %d ms by renewals, cancelled %d ms after the job%n", d.getId(), d.getIssueUnixMs() - submitted,
          done - d.getIssueUnixMs(), d.getExpiresUnixMs() - d.getIssueUnixMs() - RENEW_INTERVAL_MS,
          d.getCancelledUnixMs() - done);

      String err = readWith(dt);
      assertNotNull("a cancelled token was taken", err);
      assertTrue(err, err.contains("cancelled"));
      err = readWith(idle);
      assertNotNull("an expired token was taken", err);
      assertTrue(err, err.contains("expired"));
    } finally {
      mr.stop();
    }
  }
}
