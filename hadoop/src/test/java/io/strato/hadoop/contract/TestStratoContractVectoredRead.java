package io.strato.hadoop.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractVectoredReadTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/** Hadoop's contract tests of vectored reads on strato (heap and direct buffers). */
public class TestStratoContractVectoredRead extends AbstractContractVectoredReadTest {
  public TestStratoContractVectoredRead(String bufferType) {
    super(bufferType);
  }

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StratoContract(conf);
  }
}
