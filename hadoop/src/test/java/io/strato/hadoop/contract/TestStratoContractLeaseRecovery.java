package io.strato.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractLeaseRecoveryTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/** Hadoop's contract tests of LeaseRecoverable (recoverLease, isFileClosed) on strato. */
public class TestStratoContractLeaseRecovery extends AbstractContractLeaseRecoveryTest {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StratoContract(conf);
  }
}
