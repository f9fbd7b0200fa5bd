package io.strato.hadoop;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The AbstractFileSystem of strato:// for FileContext: StratoFileSystem
 * behind Hadoop's delegate. Configure fs.AbstractFileSystem.strato.impl =
 * io.strato.hadoop.StratoFs (docs/hadoop.md).
 */
public class StratoFs extends DelegateToFileSystem {
  public StratoFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
    super(uri, new StratoFileSystem(), conf, StratoFileSystem.SCHEME, false);
  }

  @Override
  public int getUriDefaultPort() {
    return StratoFileSystem.DEFAULT_PORT;
  }

  // Hadoop's delegate leaves snapshots unsupported: FileContext's go to StratoFileSystem's.

  @Override
  public Path createSnapshot(Path path, String snapshotName) throws IOException {
    return fsImpl.createSnapshot(path, snapshotName);
  }

  @Override
  public void renameSnapshot(Path path, String snapshotOldName, String snapshotNewName) throws IOException {
    fsImpl.renameSnapshot(path, snapshotOldName, snapshotNewName);
  }

  @Override
  public void deleteSnapshot(Path path, String snapshotName) throws IOException {
    fsImpl.deleteSnapshot(path, snapshotName);
  }
}
