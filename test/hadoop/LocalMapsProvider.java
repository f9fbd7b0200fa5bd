package strato.hadooptest;

import java.io.IOException;
import java.net.InetSocketAddress;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.LocalJobRunner;
import org.apache.hadoop.mapreduce.protocol.ClientProtocol;
import org.apache.hadoop.mapreduce.protocol.ClientProtocolProvider;

/**
 * LocalClientProtocolProvider without its one change to the job:
 * Hadoop's provider sets mapreduce.job.maps to 1 before it starts the
 * LocalJobRunner, so a local TeraGen always has a single map task. This one
 * leaves the configuration alone; LocalJobRunner runs every split it is
 * given, one after the other. Listed in META-INF/services ahead of Hadoop's
 * jars on the classpath, it is the provider Cluster picks for
 * mapreduce.framework.name=local. TeraGen itself is untouched.
 */
public class LocalMapsProvider extends ClientProtocolProvider {
  @Override
  public ClientProtocol create(Configuration conf) throws IOException {
    if (!"local".equals(conf.get("mapreduce.framework.name", "local"))) {
      return null;
    }
    return new LocalJobRunner(conf);
  }

  @Override
  public ClientProtocol create(InetSocketAddress addr, Configuration conf) {
    return null;
  }

  @Override
  public void close(ClientProtocol clientProtocol) {
  }
}
