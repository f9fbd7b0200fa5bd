package io.strato.hadoop.contract;

import io.strato.hadoop.StratoCluster;
import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's FileSystem contract for strato: the options in
 * contract/strato.xml, against the test JVM's StratoCluster. Tests run under
 * /contract/bucket/test (a volume and a bucket of the rooted view).
 */
public class StratoContract extends AbstractFSContract {
  public static final String CONTRACT_XML = "contract/strato.xml";

  private FileSystem fs;

  public StratoContract(Configuration conf) {
    super(conf);
    addConfResource(CONTRACT_XML);
  }

  @Override
  public void init() throws IOException {
    super.init();
    StratoCluster c = StratoCluster.get();
    fs = FileSystem.get(URI.create(c.uri()), getConf());
    fs.mkdirs(getTestPath());
  }

  @Override
  public FileSystem getTestFileSystem() {
    return fs;
  }

  @Override
  public String getScheme() {
    return "strato";
  }

  @Override
  public Path getTestPath() {
    return new Path("/contract/bucket/test");
  }
}
