package io.strato.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.PrivilegedExceptionAction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.MiniMRClientCluster;
import org.apache.hadoop.mapred.MiniMRClientClusterFactory;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.input.TextInputFormat;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * A MapReduce job on YARN (MiniMRYarnCluster: a resource manager and a node
 * manager whose tasks are JVMs of their own) against a cluster whose meta
 * requires tokens (strato dev --secure), with no token in the job's
 * configuration: the delegation token `strato admin token delegation get
 * --format hadoop` wrote reaches the tasks through the job's credentials
 * (mapreduce.job.credentials.binary, as on a Hadoop cluster without Kerberos,
 * where YARN fetches no token itself), and the tasks read and write strato
 * with it; cancelled, it is refused.
 */
public class TestDelegationTokenJob {
  private static StratoCluster cluster;
  private static String ca;
  private static String adminToken;

  /** Upper-cases each line. */
  public static class Upper extends Mapper<LongWritable, Text, LongWritable, Text> {
    @Override
    protected void map(LongWritable k, Text v, Context c) throws IOException, InterruptedException {
      c.write(k, new Text(v.toString().toUpperCase()));
    }
  }

  @BeforeClass
  public static void start() throws Exception {
    cluster = StratoCluster.startOwn("--secure", "--s3-addr", "", "--http", "");
    Matcher m = Pattern.compile("cluster CA (\\S+)").matcher(cluster.output());
    assertTrue(cluster.output(), m.find());
    ca = m.group(1);
    Matcher t = Pattern.compile("token (strato1\\.\\S+)").matcher(cluster.output());
    assertTrue(cluster.output(), t.find());
    adminToken = t.group(1);
  }

  @AfterClass
  public static void stop() {
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

  /** Runs the job as a submitter whose credentials are those of the token file. */
  private static boolean runJob(Configuration jc, File tokens, String out) throws Exception {
    UserGroupInformation submitter = UserGroupInformation.createRemoteUser(
        UserGroupInformation.getCurrentUser().getShortUserName());
    submitter.addCredentials(Credentials.readTokenStorageFile(tokens, jc));
    return submitter.doAs((PrivilegedExceptionAction<Boolean>) () -> {
      Job job = Job.getInstance(jc, "strato-delegation-token");
      job.setJarByClass(TestDelegationTokenJob.class);
      job.setMapperClass(Upper.class);
      job.setNumReduceTasks(0);
      job.setInputFormatClass(TextInputFormat.class);
      job.setOutputFormatClass(TextOutputFormat.class);
      job.setOutputKeyClass(LongWritable.class);
      job.setOutputValueClass(Text.class);
      TextInputFormat.addInputPath(job, new Path(cluster.uri() + "mrvol/bkt/in"));
      TextOutputFormat.setOutputPath(job, new Path(cluster.uri() + out));
      return job.waitForCompletion(true);
    });
  }

  @Test
  public void jobReadsAndWritesWithTheToken() throws Exception {
    File dir = Files.createTempDirectory("strato-mr").toFile();
    File tokens = new File(dir, "tokens.bin");
    cluster.cli("admin", "token", "delegation", "get", "--out", tokens.getPath(), "--format", "hadoop",
        "--tls-ca", ca, "--token", adminToken);
    try (FileSystem fs = FileSystem.newInstance(URI.create(cluster.uri()), adminConf())) {
      fs.mkdirs(new Path("/mrvol/bkt/in"));
      try (FSDataOutputStream o = fs.create(new Path("/mrvol/bkt/in/a.txt"))) {
        o.write("hello\nstrato\n".getBytes(StandardCharsets.UTF_8));
      }
    }
    Configuration conf = new Configuration();
    conf.setBoolean("yarn.nodemanager.vmem-check-enabled", false);
    // A shared disk over 90% full would make the node manager unhealthy and the job wait.
    conf.setFloat("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage", 100f);
    MiniMRClientCluster mr = MiniMRClientClusterFactory.create(TestDelegationTokenJob.class, 1, conf);
    try {
      Configuration jc = new Configuration(mr.getConfig());
      jc.set(StratoFileSystem.TLS_CA, ca); // and no token: the job's credentials carry it
      jc.set("mapreduce.job.credentials.binary", tokens.getPath());
      assertTrue("the job failed", runJob(jc, tokens, "mrvol/bkt/out"));
      try (FileSystem fs = FileSystem.newInstance(URI.create(cluster.uri()), adminConf())) {
        String got = new String(fs.open(new Path("/mrvol/bkt/out/part-m-00000")).readAllBytes(), StandardCharsets.UTF_8);
        assertEquals("0\tHELLO\n6\tSTRATO\n", got);
      }

      // Cancelled, the token is refused: the next job cannot start.
      Credentials creds = Credentials.readTokenStorageFile(tokens, jc);
      creds.getAllTokens().iterator().next().cancel(adminConf());
      try {
        runJob(jc, tokens, "mrvol/bkt/out2");
        fail("a job ran with a cancelled token");
      } catch (IOException e) {
        assertTrue(e.toString(), e.toString().contains("cancelled"));
      }
    } finally {
      mr.stop();
    }
  }
}
