package io.strato.client;

import io.strato.client.wire.DataConns;
import io.strato.proto.v1.AppendFileRequest;
import io.strato.proto.v1.BucketInfo;
import io.strato.proto.v1.ConcatRequest;
import io.strato.proto.v1.IsFileClosedRequest;
import io.strato.proto.v1.RecoverLeaseRequest;
import io.strato.proto.v1.RecoverLeaseResponse;
import io.strato.proto.v1.TruncateRequest;
import io.strato.proto.v1.CloseContainerRequest;
import io.strato.proto.v1.CreateBucketRequest;
import io.strato.proto.v1.CreateDirectoryRequest;
import io.strato.proto.v1.CreateFileRequest;
import io.strato.proto.v1.CreateSnapshotRequest;
import io.strato.proto.v1.CreateVolumeRequest;
import io.strato.proto.v1.DeleteBucketRequest;
import io.strato.proto.v1.DeleteRequest;
import io.strato.proto.v1.DeleteSnapshotRequest;
import io.strato.proto.v1.DeleteVolumeRequest;
import io.strato.proto.v1.FileStatus;
import io.strato.proto.v1.FsStatus;
import io.strato.proto.v1.GetBucketRequest;
import io.strato.proto.v1.GetContentSummaryRequest;
import io.strato.proto.v1.GetContentSummaryResponse;
import io.strato.proto.v1.GetFileStatusRequest;
import io.strato.proto.v1.GetFsStatusRequest;
import io.strato.proto.v1.GetSnapshotRequest;
import io.strato.proto.v1.GetTrashPolicyRequest;
import io.strato.proto.v1.GetVolumeRequest;
import io.strato.proto.v1.KeyInfo;
import io.strato.proto.v1.ListBucketsRequest;
import io.strato.proto.v1.ListBucketsResponse;
import io.strato.proto.v1.ListSnapshotsRequest;
import io.strato.proto.v1.ListSnapshotsResponse;
import io.strato.proto.v1.ListStatusRequest;
import io.strato.proto.v1.ListStatusResponse;
import io.strato.proto.v1.ListVolumesRequest;
import io.strato.proto.v1.ListVolumesResponse;
import io.strato.proto.v1.LookupKeyRequest;
import io.strato.proto.v1.OpenKeyResponse;
import io.strato.proto.v1.RenameRequest;
import io.strato.proto.v1.RenameSnapshotRequest;
import io.strato.proto.v1.ReplicationFactor;
import io.strato.proto.v1.ReportReplicaRequest;
import io.strato.proto.v1.SetOwnerRequest;
import io.strato.proto.v1.SetPermissionRequest;
import io.strato.proto.v1.SetTimesRequest;
import io.strato.proto.v1.SnapshotDiffEntry;
import io.strato.proto.v1.SnapshotDiffRequest;
import io.strato.proto.v1.SnapshotDiffResponse;
import io.strato.proto.v1.SnapshotInfo;
import io.strato.proto.v1.TrashPolicy;
import io.strato.proto.v1.VolumeInfo;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * strato's Java client: the namespace through meta's gRPC API (docs/api.md)
 * and key data through the datanodes' data protocol (docs/wire.md). It is
 * the Java twin of the Go package client, and what the Hadoop connector is
 * built on. Paths are (volume, bucket, path-in-bucket). Safe for concurrent
 * use; a KeyWriter or KeyReader is for one thread.
 */
public final class StratoClient implements Closeable {
  final ClientOptions opts;
  final MetaClient meta;
  final DataConns data;
  /** Bytes read from block files on this host (local reads), not over TCP. */
  final AtomicLong localBytes = new AtomicLong();
  /** The writers' chunk buffers, reused between chunks and keys. */
  final ChunkPool chunks;
  /** The shared window's free slots (ClientOptions.sharedWindowBytes). */
  private final AtomicLong window = new AtomicLong();

  public StratoClient(ClientOptions opts) {
    opts.validate();
    this.opts = opts;
    this.meta = new MetaClient(opts.meta, opts.metaAttemptTimeoutMs, opts.metaRetryMs, opts.security);
    this.meta.setFollowerReads(opts.metaFollowerReads);
    this.data = new DataConns(opts.dataConnectTimeoutMs, opts.dataRequestTimeoutMs, "strato-java-" + meta.clientId(),
        opts.security.sslContext(), opts.localReads, opts.readPoolBytes);
    this.chunks = new ChunkPool(opts.chunkSize, opts.chunkPoolBytes);
    this.window.set(opts.sharedWindowBytes / opts.chunkSize);
  }

  /** Bytes of the shared window's slots the client's writers hold (ClientOptions.sharedWindowBytes). */
  public long sharedWindowBytes() {
    return (opts.sharedWindowBytes / opts.chunkSize - window.get()) * opts.chunkSize;
  }

  /** Takes a slot of the shared window, if one is free. */
  boolean takeSlot() {
    for (;;) {
      long n = window.get();
      if (n <= 0) {
        return false;
      }
      if (window.compareAndSet(n, n - 1)) {
        return true;
      }
    }
  }

  /** Gives n slots back to the shared window. */
  void giveSlots(int n) {
    if (n > 0) {
      window.addAndGet(n);
    }
  }

  /** Bytes this client has read from the block files of datanodes on its host (local reads). */
  public long localBytesRead() {
    return localBytes.get();
  }

  /** Bytes of chunk buffers waiting for the client's next writer (at most ClientOptions.chunkPoolBytes). */
  public long chunkPoolBytes() {
    return chunks.pooledBytes();
  }

  /** Bytes of read buffers waiting for the client's next response (at most ClientOptions.readPoolBytes). */
  public long readPoolBytes() {
    return data.pool().pooledBytes();
  }

  /** Chunk buffers the client's writers have allocated because none waited in the pool. */
  public long chunkBuffersAllocated() {
    return chunks.allocated();
  }

  public ClientOptions options() {
    return opts;
  }

  public MetaClient meta() {
    return meta;
  }

  @Override
  public void close() {
    data.close();
    meta.close();
  }

  // ---- Volumes and buckets ---------------------------------------------------

  public VolumeInfo getVolume(String name) throws IOException {
    return meta.read("get volume " + name, s -> s.getVolume(GetVolumeRequest.newBuilder().setName(name).build()));
  }

  public ListVolumesResponse listVolumes(String startAfter, int limit) throws IOException {
    return meta.read("list volumes", s -> s.listVolumes(
        ListVolumesRequest.newBuilder().setStartAfter(startAfter).setLimit(limit).build()));
  }

  public VolumeInfo createVolume(String name, String owner) throws IOException {
    return meta.mutate("create volume " + name, s -> s.createVolume(
        CreateVolumeRequest.newBuilder().setName(name).setOwner(owner).build())).getVolume();
  }

  public void deleteVolume(String name) throws IOException {
    meta.mutate("delete volume " + name, s -> s.deleteVolume(DeleteVolumeRequest.newBuilder().setName(name).build()));
  }

  public BucketInfo getBucket(String volume, String name) throws IOException {
    return meta.read("get bucket " + volume + "/" + name, s -> s.getBucket(
        GetBucketRequest.newBuilder().setVolume(volume).setName(name).build()));
  }

  public ListBucketsResponse listBuckets(String volume, String startAfter, int limit) throws IOException {
    return meta.read("list buckets of " + volume, s -> s.listBuckets(
        ListBucketsRequest.newBuilder().setVolume(volume).setStartAfter(startAfter).setLimit(limit).build()));
  }

  /** A bucket whose root directory has permission (at most 07777; negative: meta's default, 0755). */
  public BucketInfo createBucket(String volume, String name, String owner, int permission) throws IOException {
    CreateBucketRequest.Builder b = CreateBucketRequest.newBuilder().setVolume(volume).setName(name).setOwner(owner);
    if (permission >= 0) {
      b.setPermission(permission);
    }
    return meta.mutate("create bucket " + volume + "/" + name, s -> s.createBucket(b.build())).getBucket();
  }

  public void deleteBucket(String volume, String name) throws IOException {
    meta.mutate("delete bucket " + volume + "/" + name, s -> s.deleteBucket(
        DeleteBucketRequest.newBuilder().setVolume(volume).setName(name).build()));
  }

  // ---- Files and directories (FSO) -------------------------------------------

  public FileStatus getFileStatus(String volume, String bucket, String path, boolean withBlocks) throws IOException {
    return meta.read("stat /" + volume + "/" + bucket + "/" + path, s -> s.getFileStatus(
        GetFileStatusRequest.newBuilder().setVolume(volume).setBucket(bucket).setPath(path)
            .setWithBlocks(withBlocks).build())).getStatus();
  }

  /**
   * The subtree at path of a bucket ("": the bucket), added up by meta a
   * page at a time (GetContentSummary): {directories, files, bytes, bytes on
   * the datanodes}. A directory counts itself.
   */
  public long[] contentSummary(String volume, String bucket, String path) throws IOException {
    long[] sum = new long[4];
    com.google.protobuf.ByteString cursor = com.google.protobuf.ByteString.EMPTY;
    do {
      GetContentSummaryRequest req = GetContentSummaryRequest.newBuilder().setVolume(volume).setBucket(bucket)
          .setPath(path).setCursor(cursor).build();
      GetContentSummaryResponse r = meta.read("summarize /" + volume + "/" + bucket + "/" + path,
          s -> s.getContentSummary(req));
      sum[0] += r.getDirectoryCount();
      sum[1] += r.getFileCount();
      sum[2] += r.getLength();
      sum[3] += r.getSpaceConsumed();
      cursor = r.getCursor();
    } while (!cursor.isEmpty());
    return sum;
  }

  public ListStatusResponse listStatus(String volume, String bucket, String path, String startAfter, int limit)
      throws IOException {
    return meta.read("list /" + volume + "/" + bucket + "/" + path, s -> s.listStatus(
        ListStatusRequest.newBuilder().setVolume(volume).setBucket(bucket).setPath(path)
            .setStartAfter(startAfter).setLimit(limit).build()));
  }

  /**
   * mkdir -p of a directory with permission (at most 07777, the caller's
   * umask applied; negative: meta's default, 0755); the parents it makes
   * get it with u+wx. Returns how many directories were created.
   */
  public int createDirectory(String volume, String bucket, String path, String owner, int permission)
      throws IOException {
    CreateDirectoryRequest.Builder b = CreateDirectoryRequest.newBuilder().setVolume(volume).setBucket(bucket)
        .setPath(path).setOwner(owner);
    if (permission >= 0) {
      b.setPermission(permission);
    }
    return meta.mutate("mkdirs /" + volume + "/" + bucket + "/" + path, s -> s.createDirectory(b.build())).getCreated();
  }

  /**
   * Sets the POSIX permission (at most 07777) of a file, a directory or a
   * bucket's root (path ""). Meta stores it; it enforces ACLs, not
   * permissions (docs/security.md).
   */
  public void setPermission(String volume, String bucket, String path, int permission) throws IOException {
    meta.mutate("chmod " + Integer.toOctalString(permission) + " /" + volume + "/" + bucket + "/" + path,
        s -> s.setPermission(SetPermissionRequest.newBuilder().setVolume(volume).setBucket(bucket).setPath(path)
            .setPermission(permission).build()));
  }

  /** Sets the owner, the group or both ("" leaves one unchanged) of a file, a directory or a bucket's root. */
  public void setOwner(String volume, String bucket, String path, String owner, String group) throws IOException {
    meta.mutate("chown " + owner + ":" + group + " /" + volume + "/" + bucket + "/" + path,
        s -> s.setOwner(SetOwnerRequest.newBuilder().setVolume(volume).setBucket(bucket).setPath(path)
            .setOwner(owner).setGroup(group).build()));
  }

  /**
   * Sets the modification and access times (Unix milliseconds; -1 leaves
   * one unchanged, as Hadoop's setTimes) of a file, a directory or a
   * bucket's root.
   */
  public void setTimes(String volume, String bucket, String path, long mtimeMs, long atimeMs) throws IOException {
    meta.mutate("set times of /" + volume + "/" + bucket + "/" + path,
        s -> s.setTimes(SetTimesRequest.newBuilder().setVolume(volume).setBucket(bucket).setPath(path)
            .setModificationTimeUnixMs(mtimeMs).setAccessTimeUnixMs(atimeMs).build()));
  }

  /** The cluster's raw capacity, used and remaining bytes (every replica counts). */
  public FsStatus getFsStatus() throws IOException {
    return meta.leaderRead("get the file system's status", s -> s.getFsStatus(GetFsStatusRequest.getDefaultInstance()));
  }

  /**
   * Meta's trash policy (interval 0: the trash is off) and the user meta
   * takes this client for ("" without authentication).
   */
  public TrashPolicy getTrashPolicy() throws IOException {
    return meta.leaderRead("get the trash policy", s -> s.getTrashPolicy(GetTrashPolicyRequest.getDefaultInstance()));
  }

  public void rename(String volume, String bucket, String src, String dst) throws IOException {
    meta.mutate("rename /" + volume + "/" + bucket + "/" + src + " to " + dst, s -> s.rename(
        RenameRequest.newBuilder().setVolume(volume).setBucket(bucket).setSrc(src).setDst(dst).build()));
  }

  public void delete(String volume, String bucket, String path, boolean recursive) throws IOException {
    meta.mutate("delete /" + volume + "/" + bucket + "/" + path, s -> s.delete(
        DeleteRequest.newBuilder().setVolume(volume).setBucket(bucket).setPath(path)
            .setRecursive(recursive).build()));
  }

  // ---- Snapshots (proto/strato/v1/snapshot.proto) ---------------------------------
  // A snapshot's files are read through the reads above at .snapshot/NAME/PATH.

  /** Takes a snapshot of a bucket; name "" lets meta name it (sYYYYMMDD-hhmmss.mmm). */
  public SnapshotInfo createSnapshot(String volume, String bucket, String name) throws IOException {
    return meta.mutate("create snapshot " + name + " of /" + volume + "/" + bucket, s -> s.createSnapshot(
        CreateSnapshotRequest.newBuilder().setVolume(volume).setBucket(bucket).setName(name).build())).getSnapshot();
  }

  /** Deletes a snapshot; what only it held is freed in the background. */
  public void deleteSnapshot(String volume, String bucket, String name) throws IOException {
    meta.mutate("delete snapshot " + name + " of /" + volume + "/" + bucket, s -> s.deleteSnapshot(
        DeleteSnapshotRequest.newBuilder().setVolume(volume).setBucket(bucket).setName(name).build()));
  }

  public SnapshotInfo renameSnapshot(String volume, String bucket, String name, String newName) throws IOException {
    return meta.mutate("rename snapshot " + name + " of /" + volume + "/" + bucket + " to " + newName,
        s -> s.renameSnapshot(RenameSnapshotRequest.newBuilder().setVolume(volume).setBucket(bucket).setName(name)
            .setNewName(newName).build())).getSnapshot();
  }

  public SnapshotInfo getSnapshot(String volume, String bucket, String name) throws IOException {
    return meta.read("get snapshot " + name + " of /" + volume + "/" + bucket, s -> s.getSnapshot(
        GetSnapshotRequest.newBuilder().setVolume(volume).setBucket(bucket).setName(name).build()));
  }

  /** Every snapshot of a bucket, by name. */
  public List<SnapshotInfo> listSnapshots(String volume, String bucket) throws IOException {
    List<SnapshotInfo> out = new ArrayList<>();
    String after = "";
    while (true) {
      String a = after;
      ListSnapshotsResponse r = meta.read("list snapshots of /" + volume + "/" + bucket, s -> s.listSnapshots(
          ListSnapshotsRequest.newBuilder().setVolume(volume).setBucket(bucket).setStartAfter(a).build()));
      out.addAll(r.getSnapshotsList());
      if (!r.getTruncated() || r.getSnapshotsCount() == 0) {
        return out;
      }
      after = out.get(out.size() - 1).getName();
    }
  }

  /**
   * What changed in a bucket from snapshot from to snapshot to ("": the
   * bucket now), every page, sorted by path; paths relative to the bucket.
   */
  public List<SnapshotDiffEntry> snapshotDiff(String volume, String bucket, String from, String to)
      throws IOException {
    List<SnapshotDiffEntry> out = new ArrayList<>();
    String token = "";
    while (true) {
      String t = token;
      SnapshotDiffResponse r = meta.read("snapshot diff of /" + volume + "/" + bucket + " from " + from
          + (to.isEmpty() ? " to now" : " to " + to), s -> s.snapshotDiff(SnapshotDiffRequest.newBuilder()
              .setVolume(volume).setBucket(bucket).setFrom(from).setTo(to).setToken(t).build()));
      out.addAll(r.getEntriesList());
      token = r.getNextToken();
      if (token.isEmpty()) {
        return out;
      }
    }
  }

  public KeyInfo lookupKey(String volume, String bucket, String key) throws IOException {
    return meta.read("lookup /" + volume + "/" + bucket + "/" + key, s -> s.lookupKey(
        LookupKeyRequest.newBuilder().setVolume(volume).setBucket(bucket).setKey(key).build())).getKey();
  }

  /**
   * Starts writing a file with Hadoop's create semantics (the parent must be
   * a directory or, with recursive, be creatable; an existing file is an
   * error unless overwrite). The file is visible once the writer is closed
   * (or after its first hflush/hsync). permission: the file's (at most
   * 07777, the caller's umask applied; negative: meta's default, 0644).
   */
  public KeyWriter create(String volume, String bucket, String path, boolean overwrite, boolean recursive,
      ReplicationFactor replication, String owner, int permission) throws IOException {
    String name = "/" + volume + "/" + bucket + "/" + path;
    CreateFileRequest.Builder req = CreateFileRequest.newBuilder().setVolume(volume).setBucket(bucket).setPath(path)
        .setOverwrite(overwrite).setRecursive(recursive).setReplication(replication).setOwner(owner);
    if (permission >= 0) {
      req.setPermission(permission);
    }
    KeyWriter.Opener open = sizeHint -> meta.mutate("create " + name, s -> s.createFile(
        req.clone().setSizeHint(Math.max(sizeHint, 0)).setDeferrable(sizeHint < 0).build()));
    OpenKeyResponse resp = open.open(-1);
    return new KeyWriter(this, volume, bucket, path, resp, open);
  }

  /**
   * Opens a closed file to write at its end (Hadoop's append): the writer
   * writes new blocks after the file's last one and commits them as after
   * create; meta keeps the file's blocks first. One writer at a time: a file
   * another writer holds is a MetaException of FAILED_PRECONDITION.
   */
  public KeyWriter append(String volume, String bucket, String path) throws IOException {
    String name = "/" + volume + "/" + bucket + "/" + path;
    KeyWriter.Opener open = sizeHint -> meta.mutate("append to " + name, s -> s.appendFile(
        AppendFileRequest.newBuilder().setVolume(volume).setBucket(bucket).setPath(path)
            .setSizeHint(Math.max(sizeHint, 0)).build()));
    OpenKeyResponse resp = open.open(0);
    if (resp.hasErasureCoding()) {
      throw new IOException(name + " is erasure coded: append is not supported on erasure coded files"
          + " (its last stripe's parity would change); write a new file");
    }
    return new KeyWriter(this, volume, bucket, path, resp, open);
  }

  /** Cuts a closed file to length bytes, at once: always true (no block recovery). */
  public boolean truncate(String volume, String bucket, String path, long length) throws IOException {
    return meta.mutate("truncate /" + volume + "/" + bucket + "/" + path + " to " + length, s -> s.truncate(
        TruncateRequest.newBuilder().setVolume(volume).setBucket(bucket).setPath(path).setNewLength(length).build()))
        .getDone();
  }

  /** Moves the blocks of the closed files sources to the end of target and removes them; the new length. */
  public long concat(String volume, String bucket, String target, List<String> sources) throws IOException {
    return meta.mutate("concat into /" + volume + "/" + bucket + "/" + target, s -> s.concat(
        ConcatRequest.newBuilder().setVolume(volume).setBucket(bucket).setTarget(target).addAllSources(sources).build()))
        .getLength();
  }

  /** Closes a file its writer left open, at its last hsynced length; true once closed (at once). */
  public RecoverLeaseResponse recoverLease(String volume, String bucket, String path) throws IOException {
    return meta.mutate("recover the lease of /" + volume + "/" + bucket + "/" + path, s -> s.recoverLease(
        RecoverLeaseRequest.newBuilder().setVolume(volume).setBucket(bucket).setPath(path).build()));
  }

  /** Whether no writer holds the file open. */
  public boolean isFileClosed(String volume, String bucket, String path) throws IOException {
    return meta.read("is /" + volume + "/" + bucket + "/" + path + " closed", s -> s.isFileClosed(
        IsFileClosedRequest.newBuilder().setVolume(volume).setBucket(bucket).setPath(path).build())).getClosed();
  }

  /** Opens a committed file or key for reading. */
  public KeyReader open(String volume, String bucket, String key) throws IOException {
    return new KeyReader(this, lookupKey(volume, bucket, key));
  }

  // ---- The data path's reports ----------------------------------------------

  void closeContainer(long containerId, String failedDatanode, String reason) throws IOException {
    meta.mutate("close container " + Long.toUnsignedString(containerId), s -> s.closeContainer(
        CloseContainerRequest.newBuilder().setContainerId(containerId).setFailedDatanode(failedDatanode)
            .setReason(reason).build()));
  }

  void reportReplica(long containerId, long localId, String datanodeId, String reason) throws IOException {
    meta.mutate("report replica", s -> s.reportReplica(ReportReplicaRequest.newBuilder()
        .setContainerId(containerId).setLocalId(localId).setDatanodeId(datanodeId).setReason(reason).build()));
  }
}
