package io.strato.hadoop;

import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.EtagSource;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * A file's or directory's status with an etag: the hex object ID meta gave
 * the file when it was written. Every write of a file (a create, an
 * overwrite) makes a new object with a new ID, never reused; a rename keeps
 * it. So the etag changes exactly when the content may have.
 */
final class StratoFileStatus extends FileStatus implements EtagSource {
  private static final long serialVersionUID = 1L;

  private final String etag;

  StratoFileStatus(long length, boolean isdir, int replication, long blocksize, long mtime, long atime,
      FsPermission perm, String owner, String group, Path path, long objectId) {
    this(length, isdir, replication, blocksize, mtime, atime, perm, owner, group, path, objectId, false);
  }

  /** erasureCoded: the file is erasure coded (isErasureCoded, as HDFS's striped files). */
  StratoFileStatus(long length, boolean isdir, int replication, long blocksize, long mtime, long atime,
      FsPermission perm, String owner, String group, Path path, long objectId, boolean erasureCoded) {
    super(length, isdir, replication, blocksize, mtime, atime, perm, owner, group, null, path,
        erasureCoded ? java.util.EnumSet.of(AttrFlags.HAS_EC) : java.util.EnumSet.noneOf(AttrFlags.class));
    this.etag = objectId == 0 ? null : Long.toHexString(objectId);
  }

  @Override
  public String getEtag() {
    return etag;
  }

  static String etagOf(FileStatus s) {
    return s instanceof EtagSource ? ((EtagSource) s).getEtag() : null;
  }

  /** A LocatedFileStatus that keeps the etag. */
  static final class Located extends LocatedFileStatus implements EtagSource {
    private static final long serialVersionUID = 1L;

    private final String etag;

    Located(FileStatus s, BlockLocation[] locations) {
      super(s, locations);
      this.etag = etagOf(s);
    }

    @Override
    public String getEtag() {
      return etag;
    }
  }
}
