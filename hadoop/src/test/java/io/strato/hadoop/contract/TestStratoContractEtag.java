package io.strato.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractEtagTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/** Hadoop's contract tests of etags on strato. */
public class TestStratoContractEtag extends AbstractContractEtagTest {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StratoContract(conf);
  }
}
