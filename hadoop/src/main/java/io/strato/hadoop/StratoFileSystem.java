package io.strato.hadoop;

import io.grpc.Status;
import io.strato.client.ClientOptions;
import io.strato.client.KeyReader;
import io.strato.client.KeyWriter;
import io.strato.client.wire.Checksums;
import io.strato.client.MetaException;
import io.strato.client.Security;
import io.strato.client.StratoClient;
import io.strato.proto.v1.BlockLocation;
import io.strato.proto.v1.BucketInfo;
import io.strato.proto.v1.BucketLayout;
import io.strato.proto.v1.DatanodeDetails;
import io.strato.proto.v1.ErrorReason;
import io.strato.proto.v1.KeyInfo;
import io.strato.proto.v1.ListBucketsResponse;
import io.strato.proto.v1.ListStatusResponse;
import io.strato.proto.v1.ListVolumesResponse;
import io.strato.proto.v1.ReplicationFactor;
import io.strato.proto.v1.SnapshotInfo;
import io.strato.proto.v1.TrashPolicy;
import io.strato.proto.v1.VolumeInfo;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;
import org.apache.hadoop.HadoopIllegalArgumentException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonPathCapabilities;
import org.apache.hadoop.fs.CompositeCrcFileChecksum;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsServerDefaults;
import org.apache.hadoop.fs.FsStatus;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathFilter;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;
import org.apache.hadoop.fs.QuotaUsage;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.impl.PathCapabilitiesSupport;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsBinding;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.util.CrcUtil;
import org.apache.hadoop.util.DataChecksum;
import org.apache.hadoop.util.Progressable;

/**
 * Hadoop's FileSystem for strato:// (docs/hadoop.md). URIs are
 * strato://HOST:PORT/VOLUME/BUCKET/PATH, where HOST:PORT is a meta replica
 * (fs.strato.meta.addresses lists the replicas of an HA group), or
 * strato://NAME/VOLUME/BUCKET/PATH, where NAME is a logical cluster
 * (fs.strato.cluster.NAME.meta.addresses, and its TLS and token). The view is
 * rooted like Ozone's ofs: "/" lists the volumes, "/VOLUME" its buckets,
 * below that the tree of an FSO bucket, with atomic O(1) renames and
 * deletes of directories. mkdirs creates missing volumes and buckets.
 */
public class StratoFileSystem extends FileSystem implements LeaseRecoverable, IOStatisticsSource {
  public static final String SCHEME = "strato";
  public static final int DEFAULT_PORT = 9860;

  /** Meta replicas, host:port, comma-separated (default: the URI's authority). */
  public static final String META_ADDRESSES = "fs.strato.meta.addresses";
  /**
   * The prefix of a logical cluster's settings: strato://NAME/ uses
   * fs.strato.cluster.NAME.meta.addresses (and .tls.ca, .token), as HDFS's
   * hdfs://NAMESERVICE/ uses dfs.ha.namenodes.NAMESERVICE.
   */
  public static final String CLUSTER_PREFIX = "fs.strato.cluster.";
  public static final String CHUNK_SIZE = "fs.strato.chunk.size";
  public static final String CHUNKS_IN_FLIGHT = "fs.strato.chunks.in-flight";
  public static final String SHARED_WINDOW = "fs.strato.write.shared.window";
  public static final String CHUNK_POOL = "fs.strato.chunk.pool.size";
  public static final String READ_AHEAD = "fs.strato.read.ahead";
  public static final String READ_POOL = "fs.strato.read.pool.size";
  /** Read the replicas of datanodes on this host from their block files (default true). */
  public static final String READ_LOCAL = "fs.strato.read.local";
  public static final String LIST_PAGE = "fs.strato.list.page.size";
  public static final String BLOCK_SIZE = "fs.strato.block.size";
  public static final String META_ATTEMPT_TIMEOUT = "fs.strato.meta.attempt.timeout.ms";
  public static final String META_RETRY = "fs.strato.meta.retry.ms";
  /** Spread meta reads over every replica (follower reads; default false). */
  public static final String META_FOLLOWER_READS = "fs.strato.meta.follower-reads";
  public static final String DATA_TIMEOUT = "fs.strato.data.timeout.ms";
  /** The cluster CA (PEM) that meta's and the datanodes' certificates chain to; unset: plain TCP. */
  public static final String TLS_CA = "fs.strato.tls.ca";
  /**
   * The token sent to meta (read with Configuration.getPassword, so a Hadoop
   * credential provider can hold it); unset: a delegation token of this
   * file system's service in the current user's credentials (a job's task),
   * then $STRATO_TOKEN, then the file `strato login` writes.
   */
  public static final String TOKEN = "fs.strato.token";

  static final long DEFAULT_BLOCK_SIZE = 256L << 20;

  static {
    // fs.AbstractFileSystem.strato.impl for FileContext, as HDFS adds hdfs-default.xml.
    Configuration.addDefaultResource("strato-default.xml");
  }

  private URI uri;
  private String service;
  private Path workingDir;
  private StratoClient client;
  private String user;
  private int pageSize;
  private long defaultBlockSize;

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    setConf(conf);
    String authority = name.getAuthority();
    String cluster = logicalName(authority, conf);
    List<String> addrs = new ArrayList<>();
    for (String a : conf.getTrimmedStrings(cluster == null ? META_ADDRESSES : clusterKey(cluster, "meta.addresses"))) {
      addrs.add(withPort(a));
    }
    if (addrs.isEmpty()) {
      if (authority == null || authority.isEmpty()) {
        throw new IOException("strato: " + name + " names no meta address: use strato://HOST:PORT/ or set "
            + META_ADDRESSES);
      }
      addrs.add(withPort(authority));
    }
    this.uri = URI.create(SCHEME + "://" + (authority == null ? "" : authority) + "/");
    ClientOptions o = new ClientOptions();
    o.meta = addrs;
    o.chunkSize = (int) conf.getLongBytes(CHUNK_SIZE, o.chunkSize);
    o.maxChunksInFlight = conf.getInt(CHUNKS_IN_FLIGHT, o.maxChunksInFlight);
    o.sharedWindowBytes = conf.getLongBytes(SHARED_WINDOW, o.sharedWindowBytes);
    o.chunkPoolBytes = conf.getLongBytes(CHUNK_POOL, o.chunkPoolBytes);
    o.readAhead = conf.getInt(READ_AHEAD, o.readAhead);
    o.readPoolBytes = conf.getLongBytes(READ_POOL, o.readPoolBytes);
    o.localReads = conf.getBoolean(READ_LOCAL, o.localReads);
    o.metaAttemptTimeoutMs = conf.getLong(META_ATTEMPT_TIMEOUT, o.metaAttemptTimeoutMs);
    o.metaRetryMs = conf.getLong(META_RETRY, o.metaRetryMs);
    o.metaFollowerReads = conf.getBoolean(META_FOLLOWER_READS, o.metaFollowerReads);
    o.dataRequestTimeoutMs = conf.getLong(DATA_TIMEOUT, o.dataRequestTimeoutMs);
    this.user = UserGroupInformation.getCurrentUser().getShortUserName();
    o.owner = user;
    this.service = DelegationTokens.service(cluster, addrs);
    o.security = cluster == null ? security(conf) : security(conf, cluster);
    if (!tokenConfigured(conf, cluster)) {
      // A job's task: the delegation token of this cluster that the job's
      // credentials carry (TokenCache) beats $STRATO_TOKEN and the login file.
      String dt = DelegationTokens.fromCredentials(UserGroupInformation.getCurrentUser().getCredentials(), service);
      if (dt != null) {
        o.security = Security.of(o.security.caPath(), dt);
      }
    }
    try {
      this.client = new StratoClient(o);
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
    this.pageSize = conf.getInt(LIST_PAGE, 1000);
    this.defaultBlockSize = conf.getLongBytes(BLOCK_SIZE, DEFAULT_BLOCK_SIZE);
    this.workingDir = getHomeDirectory();
  }

  /** TLS and the token from fs.strato.tls.ca and fs.strato.token, or their environment variables. */
  static Security security(Configuration conf) throws IOException {
    String ca = conf.getTrimmed(TLS_CA, System.getenv().getOrDefault(Security.TLS_CA_ENV, ""));
    char[] t = conf.getPassword(TOKEN);
    return Security.of(ca, Security.findToken(t == null ? "" : new String(t), System.getenv()));
  }

  /**
   * TLS and the token of the logical cluster name: fs.strato.cluster.NAME.tls.ca
   * and fs.strato.cluster.NAME.token, each falling back to the setting of
   * every cluster (fs.strato.tls.ca, fs.strato.token, then the environment).
   */
  static Security security(Configuration conf, String name) throws IOException {
    String ca = conf.getTrimmed(clusterKey(name, "tls.ca"),
        conf.getTrimmed(TLS_CA, System.getenv().getOrDefault(Security.TLS_CA_ENV, "")));
    char[] t = conf.getPassword(clusterKey(name, "token"));
    if (t == null) {
      t = conf.getPassword(TOKEN);
    }
    return Security.of(ca, Security.findToken(t == null ? "" : new String(t), System.getenv()));
  }

  /** Whether conf sets a token for the cluster (fs.strato.cluster.NAME.token or fs.strato.token). */
  static boolean tokenConfigured(Configuration conf, String cluster) throws IOException {
    return (cluster != null && conf.getPassword(clusterKey(cluster, "token")) != null) || conf.getPassword(TOKEN) != null;
  }

  /** fs.strato.cluster.NAME.KEY: the settings of logical cluster NAME. */
  static String clusterKey(String name, String key) {
    return CLUSTER_PREFIX + name + "." + key;
  }

  /**
   * The logical cluster the URI's authority names (HDFS's nameservices):
   * one whose fs.strato.cluster.NAME.meta.addresses is set; null for an
   * authority that is a meta address (HOST or HOST:PORT) or none.
   */
  static String logicalName(String authority, Configuration conf) {
    if (authority == null || authority.isEmpty() || authority.contains(":")) {
      return null;
    }
    return conf.getTrimmedStrings(clusterKey(authority, "meta.addresses")).length > 0 ? authority : null;
  }

  private static String withPort(String a) {
    return a.lastIndexOf(':') > a.lastIndexOf(']') ? a : a + ":" + DEFAULT_PORT;
  }

  /** The client under this file system (for tools and tests). */
  public StratoClient client() {
    return client;
  }

  /**
   * The client's gauges: chunk_pool_bytes (chunk buffers waiting for the next
   * writer), chunk_pool_max_bytes (fs.strato.chunk.pool.size), and the counter
   * chunk_buffers_allocated (buffers allocated because the pool was empty);
   * read_pool_bytes and read_pool_max_bytes (fs.strato.read.pool.size), the
   * same for the buffers reads land in; write_window_bytes (the bytes of the
   * shared window's slots the writers hold) and write_window_max_bytes
   * (fs.strato.write.shared.window).
   */
  @Override
  public IOStatistics getIOStatistics() {
    return IOStatisticsBinding.dynamicIOStatistics()
        .withLongFunctionGauge("chunk_pool_bytes", k -> client.chunkPoolBytes())
        .withLongFunctionGauge("chunk_pool_max_bytes", k -> client.options().chunkPoolBytes)
        .withLongFunctionCounter("chunk_buffers_allocated", k -> client.chunkBuffersAllocated())
        .withLongFunctionGauge("read_pool_bytes", k -> client.readPoolBytes())
        .withLongFunctionGauge("read_pool_max_bytes", k -> client.options().readPoolBytes)
        .withLongFunctionGauge("write_window_bytes", k -> client.sharedWindowBytes())
        .withLongFunctionGauge("write_window_max_bytes", k -> client.options().sharedWindowBytes)
        .build();
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }

  @Override
  public URI getUri() {
    return uri;
  }

  @Override
  protected int getDefaultPort() {
    return DEFAULT_PORT;
  }

  /**
   * The service of this cluster's delegation tokens, by which TokenCache
   * and the job's credentials key them: strato:CLUSTER for a logical
   * cluster, strato:HOST:PORT[,HOST:PORT...] (the meta addresses) otherwise.
   */
  @Override
  public String getCanonicalServiceName() {
    return service;
  }

  /**
   * A delegation token of meta that acts as the caller and that renewer
   * (a user, or a principal whose short name is one) may renew; null on a
   * cluster without authentication. FileSystem.addDelegationTokens (and so
   * TokenCache) calls it. The caller must present its own token, not a
   * delegation token.
   */
  @Override
  public Token<StratoDelegationTokenIdentifier> getDelegationToken(String renewer) throws IOException {
    return DelegationTokens.get(client.meta(), renewer, service);
  }

  @Override
  public Path getWorkingDirectory() {
    return workingDir;
  }

  @Override
  public void setWorkingDirectory(Path dir) {
    workingDir = makeQualified(dir);
  }

  @Override
  public long getDefaultBlockSize() {
    return defaultBlockSize;
  }

  @Override
  public long getDefaultBlockSize(Path f) {
    StratoPath p = loc(f);
    if (p.depth >= 2) {
      try {
        long bs = client.getBucket(p.volume, p.bucket).getBlockSize();
        if (bs > 0) {
          return bs;
        }
      } catch (IOException e) {
        // the default
      }
    }
    return defaultBlockSize;
  }

  @Override
  public short getDefaultReplication() {
    return 3;
  }

  /**
   * The server's defaults, with meta's trash interval (in minutes, at least 1
   * when on): Hadoop's shell moves what -rm removes into getTrashRoot when it
   * is on, as on HDFS, whatever the client's fs.trash.interval. A path in an
   * OBS bucket, which keeps no trash, gets 0 (the client's setting decides).
   */
  @Override
  public FsServerDefaults getServerDefaults(Path p) throws IOException {
    long trashMinutes = 0;
    long ms = trashPolicy().getIntervalMs();
    StratoPath sp = loc(p);
    if (ms > 0 && !(sp.depth >= 2 && isObs(sp))) {
      trashMinutes = Math.max(1, ms / 60_000);
    }
    return new FsServerDefaults(getDefaultBlockSize(p), 16 << 10, 64 << 10, getDefaultReplication(),
        getConf().getInt("io.file.buffer.size", 4096), false, trashMinutes, DataChecksum.Type.CRC32C);
  }

  @Override
  public FsServerDefaults getServerDefaults() throws IOException {
    return getServerDefaults(new Path("/"));
  }

  // ---- Trash (docs/operations.md "Trash") ----------------------------------------

  /** The directory at a bucket's root that holds its trash, one directory per user. */
  public static final String TRASH_DIR = ".Trash";

  private volatile String trashUser;

  /** Meta's trash policy; a meta that predates the trash has it off. */
  private TrashPolicy trashPolicy() throws IOException {
    try {
      TrashPolicy p = client.getTrashPolicy();
      trashUser = p.getUser().isEmpty() ? user : p.getUser();
      return p;
    } catch (MetaException e) {
      if (e.code() == Status.Code.UNIMPLEMENTED) {
        return TrashPolicy.getDefaultInstance();
      }
      throw e;
    }
  }

  /** The user whose trash this client's removals go to: its token's, or without authentication its UGI user. */
  private String trashUser() {
    String u = trashUser;
    if (u == null) {
      try {
        trashPolicy();
        u = trashUser;
      } catch (IOException e) {
        u = null;
      }
    }
    return u == null ? user : u;
  }

  private boolean isObs(StratoPath p) throws IOException {
    return client.getBucket(p.volume, p.bucket).getLayout() == BucketLayout.LAYOUT_OBS;
  }

  /**
   * /VOLUME/BUCKET/.Trash/USER of the path's bucket (as Ozone's ofs): a move
   * there is a rename within the bucket. Above a bucket, Hadoop's default.
   */
  @Override
  public Path getTrashRoot(Path path) {
    StratoPath p = loc(path == null ? new Path("/") : path);
    if (p.depth < 2) {
      return super.getTrashRoot(path);
    }
    return qualify("/" + p.volume + "/" + p.bucket + "/" + TRASH_DIR + "/" + trashUser());
  }

  /**
   * The trash roots of every FSO bucket: this user's, or with allUsers
   * every user's (for hadoop fs -expunge).
   */
  @Override
  public Collection<FileStatus> getTrashRoots(boolean allUsers) {
    List<FileStatus> out = new ArrayList<>();
    String me = trashUser();
    try {
      String afterVolume = "";
      while (true) {
        ListVolumesResponse vs = client.listVolumes(afterVolume, pageSize);
        for (VolumeInfo v : vs.getVolumesList()) {
          afterVolume = v.getName();
          String afterBucket = "";
          while (true) {
            ListBucketsResponse bs = client.listBuckets(v.getName(), afterBucket, pageSize);
            for (BucketInfo b : bs.getBucketsList()) {
              afterBucket = b.getName();
              if (b.getLayout() != BucketLayout.LAYOUT_OBS) {
                addTrashRoots(out, new Path(qualify("/" + v.getName() + "/" + b.getName()), TRASH_DIR), allUsers, me);
              }
            }
            if (!bs.getTruncated() || bs.getBucketsCount() == 0) {
              break;
            }
          }
        }
        if (!vs.getTruncated() || vs.getVolumesCount() == 0) {
          break;
        }
      }
    } catch (IOException e) {
      LOG_TRASH.warn("strato: listing the trash roots: {}", e.toString());
    }
    return out;
  }

  private void addTrashRoots(List<FileStatus> out, Path trash, boolean allUsers, String me) throws IOException {
    try {
      if (allUsers) {
        for (FileStatus st : listStatus(trash)) {
          if (st.isDirectory()) {
            out.add(st);
          }
        }
      } else {
        FileStatus st = getFileStatus(new Path(trash, me));
        if (st.isDirectory()) {
          out.add(st);
        }
      }
    } catch (FileNotFoundException e) {
      // no trash in this bucket
    }
  }

  private static final org.slf4j.Logger LOG_TRASH = org.slf4j.LoggerFactory.getLogger(StratoFileSystem.class);

  private StratoPath loc(Path f) {
    return StratoPath.of(makeQualified(f));
  }

  private Path qualify(String path) {
    return makeQualified(new Path(path.isEmpty() ? "/" : path));
  }

  // ---- Errors ------------------------------------------------------------------

  /** Meta's errors as the exceptions Hadoop's FileSystem specification names. */
  static IOException translate(IOException e, Object path) {
    if (!(e instanceof MetaException)) {
      return e;
    }
    MetaException m = (MetaException) e;
    String msg = path + ": " + e.getMessage();
    IOException out;
    switch (m.reason()) {
      case DIRECTORY_NOT_EMPTY:
      case VOLUME_NOT_EMPTY:
      case BUCKET_NOT_EMPTY:
        out = new PathIsNotEmptyDirectoryException(msg);
        break;
      case NOT_A_DIRECTORY:
        out = new ParentNotDirectoryException(msg);
        break;
      case IS_A_DIRECTORY:
        out = new FileAlreadyExistsException(msg);
        break;
      case OBJECT_LOCKED:
        // A locked version (S3 object lock, decision 0088) may not change:
        // a right nobody has, as HDFS refuses a read-only snapshot with an
        // AccessControlException and the S3 gateway answers AccessDenied.
        out = new AccessControlException(msg);
        break;
      default:
        if (m.code() == Status.Code.NOT_FOUND) {
          out = new FileNotFoundException(msg);
        } else if (m.code() == Status.Code.ALREADY_EXISTS) {
          out = new FileAlreadyExistsException(msg);
        } else if (m.code() == Status.Code.PERMISSION_DENIED || m.code() == Status.Code.UNAUTHENTICATED) {
          out = new AccessControlException(msg);
        } else {
          return e;
        }
    }
    out.initCause(e);
    return out;
  }

  /** Not found, or a path under a file (which cannot exist either). */
  private static boolean notFound(IOException e) {
    return e instanceof MetaException && (((MetaException) e).code() == Status.Code.NOT_FOUND
        || ((MetaException) e).is(ErrorReason.NOT_A_DIRECTORY));
  }

  // ---- Status ------------------------------------------------------------------

  private static short replication(ReplicationFactor r) {
    return (short) (r == ReplicationFactor.REPLICATION_ONE ? 1 : 3);
  }

  /** Meta's defaults, for a record written before permissions, and for "/" and volumes, which have none. */
  private static final short DIR_PERMISSION = 0755;
  private static final short FILE_PERMISSION = 0644;

  private static FsPermission permission(boolean has, int stored, boolean dir) {
    return new FsPermission(has ? (short) stored : dir ? DIR_PERMISSION : FILE_PERMISSION);
  }

  private String ownerOr(String owner) {
    return owner == null || owner.isEmpty() ? user : owner;
  }

  /** "/" or a volume: an owner and times, no permission or group of their own. */
  private FileStatus dirStatus(Path p, String owner, long mtime) {
    return new FileStatus(0, true, 0, 0, mtime, 0, new FsPermission(DIR_PERMISSION), ownerOr(owner), "", p);
  }

  /** A bucket: its root directory's permission, owner, group and times. */
  private FileStatus bucketStatus(Path p, BucketInfo b) {
    return new StratoFileStatus(0, true, 0, 0, b.getModificationTimeUnixMs(), b.getAccessTimeUnixMs(),
        permission(b.hasPermission(), b.getPermission(), true), ownerOr(b.getOwner()), b.getGroup(), p, 0);
  }

  private FileStatus toStatus(io.strato.proto.v1.FileStatus s, Path p) {
    String o = ownerOr(s.getOwner());
    long mtime = s.getModificationTimeUnixMs();
    long atime = s.getAccessTimeUnixMs();
    FsPermission perm = permission(s.hasPermission(), s.getPermission(), s.getIsDirectory());
    if (s.getIsDirectory()) {
      return new StratoFileStatus(0, true, 0, 0, mtime, atime, perm, o, s.getGroup(), p, 0);
    }
    long bs = s.getBlockSize() > 0 ? s.getBlockSize() : defaultBlockSize;
    // An erasure coded file's replication is 1, as HDFS gives its striped files.
    boolean ec = s.hasErasureCoding();
    return new StratoFileStatus(s.getLength(), false, ec ? 1 : replication(s.getReplication()), bs, mtime, atime, perm,
        o, s.getGroup(), p, s.getObjectId(), ec);
  }

  private Path childPath(StratoPath parent, String statusPath) {
    // statusPath is relative to the bucket
    return qualify("/" + parent.volume + "/" + parent.bucket + "/" + statusPath);
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    statistics.incrementReadOps(1);
    Path q = makeQualified(f);
    StratoPath p = StratoPath.of(q);
    try {
      switch (p.depth) {
        case 0:
          return dirStatus(q, user, 0);
        case 1: {
          VolumeInfo v = client.getVolume(p.volume);
          return dirStatus(q, v.getOwner(), v.getModificationTimeUnixMs());
        }
        case 2:
          return bucketStatus(q, client.getBucket(p.volume, p.bucket));
        default: {
          FileStatus st = toStatus(client.getFileStatus(p.volume, p.bucket, p.key, false), q);
          String snap = snapshotRootName(p);
          if (snap != null) {
            // meta shows a snapshot's root with its bucket root's times now; the
            // listing of .snapshot, and HDFS, with the time the snapshot was taken
            // (DistCp's -diff compares them to order FROM and TO).
            long t = client.getSnapshot(p.volume, p.bucket, snap).getCreatedUnixMs();
            st = new StratoFileStatus(0, true, 0, 0, t, st.getAccessTime(), st.getPermission(), st.getOwner(),
                st.getGroup(), q, 0);
          }
          return st;
        }
      }
    } catch (IOException e) {
      throw statusError(e, q);
    }
  }

  /** NAME when p is a snapshot's root, /VOLUME/BUCKET/.snapshot/NAME; else null. */
  private static String snapshotRootName(StratoPath p) {
    String prefix = SNAPSHOT_DIR + "/";
    if (p.depth != 4 || !p.key.startsWith(prefix)) {
      return null;
    }
    return p.key.substring(prefix.length());
  }

  /** A failed look-up of q: FileNotFoundException when there is nothing at q, else translated. */
  private static IOException statusError(IOException e, Path q) {
    if (notFound(e)) {
      FileNotFoundException fnf = new FileNotFoundException("No such file or directory: " + q);
      fnf.initCause(e);
      return fnf;
    }
    return translate(e, q);
  }

  // ---- Listing -----------------------------------------------------------------

  /** Pages through a directory of the rooted view, pageSize entries per call to meta. */
  private final class Lister implements RemoteIterator<FileStatus> {
    private final Path dir;
    private final StratoPath p;
    private List<FileStatus> page = new ArrayList<>();
    private int i;
    private String after = "";
    private boolean more = true;

    Lister(Path dir) throws IOException {
      this.dir = dir;
      this.p = StratoPath.of(dir);
      fetch();
      if (page.isEmpty() && p.depth >= 1) {
        getFileStatus(dir); // a missing directory is FileNotFoundException, not an empty list
      }
    }

    private void fetch() throws IOException {
      statistics.incrementLargeReadOps(1);
      page = new ArrayList<>();
      i = 0;
      try {
        switch (p.depth) {
          case 0: {
            ListVolumesResponse r = client.listVolumes(after, pageSize);
            for (VolumeInfo v : r.getVolumesList()) {
              page.add(dirStatus(qualify("/" + v.getName()), v.getOwner(), v.getModificationTimeUnixMs()));
              after = v.getName();
            }
            more = r.getTruncated() && r.getVolumesCount() > 0;
            break;
          }
          case 1: {
            ListBucketsResponse r = client.listBuckets(p.volume, after, pageSize);
            for (BucketInfo b : r.getBucketsList()) {
              page.add(bucketStatus(qualify("/" + p.volume + "/" + b.getName()), b));
              after = b.getName();
            }
            more = r.getTruncated() && r.getBucketsCount() > 0;
            break;
          }
          default: {
            ListStatusResponse r = client.listStatus(p.volume, p.bucket, p.key, after, pageSize);
            for (io.strato.proto.v1.FileStatus s : r.getStatusesList()) {
              page.add(toStatus(s, childPath(p, s.getPath())));
              String sp = s.getPath();
              after = sp.substring(sp.lastIndexOf('/') + 1);
            }
            more = r.getTruncated() && r.getStatusesCount() > 0;
          }
        }
      } catch (IOException e) {
        throw statusError(e, dir);
      }
    }

    @Override
    public boolean hasNext() throws IOException {
      while (i >= page.size() && more) {
        fetch();
      }
      return i < page.size();
    }

    @Override
    public FileStatus next() throws IOException {
      if (!hasNext()) {
        throw new NoSuchElementException("no more entries in " + dir);
      }
      return page.get(i++);
    }
  }

  @Override
  public RemoteIterator<FileStatus> listStatusIterator(Path f) throws IOException {
    Path q = makeQualified(f);
    StratoPath p = StratoPath.of(q);
    if (p.depth >= 3) {
      FileStatus st = getFileStatus(q);
      if (st.isFile()) {
        return singleton(st);
      }
    }
    return new Lister(q);
  }

  private static <T> RemoteIterator<T> singleton(T t) {
    return new RemoteIterator<T>() {
      private boolean done;

      @Override
      public boolean hasNext() {
        return !done;
      }

      @Override
      public T next() {
        if (done) {
          throw new NoSuchElementException();
        }
        done = true;
        return t;
      }
    };
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    List<FileStatus> out = new ArrayList<>();
    RemoteIterator<FileStatus> it = listStatusIterator(f);
    while (it.hasNext()) {
      out.add(it.next());
    }
    return out.toArray(new FileStatus[0]);
  }

  @Override
  protected RemoteIterator<LocatedFileStatus> listLocatedStatus(Path f, PathFilter filter) throws IOException {
    RemoteIterator<FileStatus> it = listStatusIterator(f);
    return new RemoteIterator<LocatedFileStatus>() {
      private LocatedFileStatus next;

      @Override
      public boolean hasNext() throws IOException {
        while (next == null && it.hasNext()) {
          FileStatus s = it.next();
          if (!filter.accept(s.getPath())) {
            continue;
          }
          next = new StratoFileStatus.Located(s, s.isFile() ? getFileBlockLocations(s, 0, s.getLen()) : null);
        }
        return next != null;
      }

      @Override
      public LocatedFileStatus next() throws IOException {
        if (!hasNext()) {
          throw new NoSuchElementException("no more entries in " + f);
        }
        LocatedFileStatus s = next;
        next = null;
        return s;
      }
    };
  }

  @Override
  public org.apache.hadoop.fs.BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len)
      throws IOException {
    if (file == null) {
      return null;
    }
    if (start < 0 || len < 0) {
      throw new IllegalArgumentException("strato: negative start or length (" + start + ", " + len + ")");
    }
    if (file.isDirectory() || file.getLen() <= start) {
      return new org.apache.hadoop.fs.BlockLocation[0];
    }
    Path q = makeQualified(file.getPath());
    StratoPath p = StratoPath.of(q);
    statistics.incrementReadOps(1);
    KeyInfo k;
    try {
      k = client.getFileStatus(p.volume, p.bucket, p.key, true).getKey();
    } catch (IOException e) {
      throw translate(e, q);
    }
    List<org.apache.hadoop.fs.BlockLocation> out = new ArrayList<>();
    long end = start + len;
    for (BlockLocation bl : k.getBlocksList()) {
      long bs = bl.getOffset();
      long be = bs + bl.getLength();
      if (be <= start || bs >= end && !(len == 0 && bs == start)) {
        continue;
      }
      List<String> names = new ArrayList<>();
      List<String> hosts = new ArrayList<>();
      for (DatanodeDetails m : bl.getPipeline().getMembersList()) {
        names.add(m.getDataAddr());
        String h = m.getHostname();
        if (h.isEmpty()) {
          int c = m.getDataAddr().lastIndexOf(':');
          h = c > 0 ? m.getDataAddr().substring(0, c) : m.getDataAddr();
        }
        hosts.add(h);
      }
      out.add(new org.apache.hadoop.fs.BlockLocation(names.toArray(new String[0]), hosts.toArray(new String[0]),
          bs, bl.getLength()));
    }
    return out.toArray(new org.apache.hadoop.fs.BlockLocation[0]);
  }

  // ---- Directories -------------------------------------------------------------

  private void ensureVolume(String v) throws IOException {
    try {
      client.getVolume(v);
    } catch (IOException e) {
      if (!notFound(e)) {
        throw e;
      }
      try {
        client.createVolume(v, user);
      } catch (MetaException ce) {
        if (ce.code() != Status.Code.ALREADY_EXISTS) {
          throw ce;
        }
      }
    }
  }

  /** A missing bucket is created, its root with permission (negative: meta's default, 0755). */
  private void ensureBucket(String v, String b, int permission) throws IOException {
    try {
      client.getBucket(v, b);
    } catch (IOException e) {
      if (!notFound(e)) {
        throw e;
      }
      ensureVolume(v);
      try {
        client.createBucket(v, b, user, permission);
      } catch (MetaException ce) {
        if (ce.code() != Status.Code.ALREADY_EXISTS) {
          throw ce;
        }
      }
    }
  }

  /**
   * permission with the umask of fs.permissions.umask-mode applied, as
   * HDFS's client applies it (meta stores what it is given); null: def.
   */
  private int masked(FsPermission permission, FsPermission def) {
    FsPermission p = permission == null ? def : permission;
    return p.applyUMask(FsPermission.getUMask(getConf())).toShort() & 07777;
  }

  /**
   * mkdir -p; a missing volume or bucket on the way is created. The
   * directory (or a bucket's root) gets permission less the umask, and the
   * parents made on the way that with u+wx (as on HDFS); volumes have none.
   */
  @Override
  public boolean mkdirs(Path f, FsPermission permission) throws IOException {
    statistics.incrementWriteOps(1);
    Path q = makeQualified(f);
    StratoPath p = StratoPath.of(q);
    try {
      if (p.depth == 0) {
        return true;
      }
      if (p.depth == 1) {
        ensureVolume(p.volume);
        return true;
      }
      writable(p, q);
      int perm = masked(permission, FsPermission.getDirDefault());
      ensureBucket(p.volume, p.bucket, p.depth == 2 ? perm : -1);
      if (p.depth > 2) {
        client.createDirectory(p.volume, p.bucket, p.key, user, perm);
      }
      return true;
    } catch (IOException e) {
      if (e instanceof MetaException && ((MetaException) e).code() == Status.Code.ALREADY_EXISTS) {
        // a file on the way, or at the path itself
        FileStatus st = getFileStatusOrNull(q);
        if (st != null && st.isFile()) {
          throw (IOException) new FileAlreadyExistsException("mkdirs: " + q + " is a file").initCause(e);
        }
        throw (IOException) new ParentNotDirectoryException("mkdirs: a parent of " + q + " is a file").initCause(e);
      }
      throw translate(e, q);
    }
  }

  private FileStatus getFileStatusOrNull(Path q) throws IOException {
    try {
      return getFileStatus(q);
    } catch (FileNotFoundException e) {
      return null;
    }
  }

  // ---- Files -------------------------------------------------------------------

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    statistics.incrementReadOps(1);
    Path q = makeQualified(f);
    StratoPath p = StratoPath.of(q);
    if (p.depth < 3) {
      throw new FileNotFoundException(q + " is a directory");
    }
    try {
      return new FSDataInputStream(new StratoInputStream(client.open(p.volume, p.bucket, p.key), q.toString(),
          statistics));
    } catch (IOException e) {
      if (e instanceof MetaException) {
        MetaException m = (MetaException) e;
        if (m.code() == Status.Code.NOT_FOUND || m.is(ErrorReason.IS_A_DIRECTORY) || m.is(ErrorReason.NOT_A_DIRECTORY)) {
          FileStatus st = m.code() == Status.Code.NOT_FOUND ? null : getFileStatusOrNull(q);
          FileNotFoundException fnf = new FileNotFoundException(
              (st != null && st.isDirectory() ? "Is a directory: " : "No such file: ") + q);
          fnf.initCause(e);
          throw fnf;
        }
      }
      throw translate(e, q);
    }
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
      short replication, long blockSize, Progressable progress) throws IOException {
    return create(f, overwrite, true, replication, permission);
  }

  @Override
  public FSDataOutputStream createNonRecursive(Path f, FsPermission permission, EnumSet<CreateFlag> flags,
      int bufferSize, short replication, long blockSize, Progressable progress) throws IOException {
    if (flags.contains(CreateFlag.APPEND)) {
      try {
        return append(f, bufferSize, progress);
      } catch (FileNotFoundException e) {
        if (!flags.contains(CreateFlag.CREATE)) {
          throw e;
        }
      }
    }
    return create(f, flags.contains(CreateFlag.OVERWRITE), false, replication, permission);
  }

  /** The file gets permission less the umask (null: 0666 less the umask, as on HDFS). */
  private FSDataOutputStream create(Path f, boolean overwrite, boolean recursive, short replication,
      FsPermission permission) throws IOException {
    statistics.incrementWriteOps(1);
    Path q = makeQualified(f);
    StratoPath p = StratoPath.of(q);
    if (p.depth < 3) {
      throw new FileAlreadyExistsException("strato: cannot create a file at " + q
          + ": the root, a volume or a bucket is a directory (files live at /VOLUME/BUCKET/PATH)");
    }
    writable(p, q);
    ReplicationFactor rf = replication == 1 ? ReplicationFactor.REPLICATION_ONE
        : ReplicationFactor.REPLICATION_UNSPECIFIED;
    int perm = masked(permission, FsPermission.getFileDefault());
    KeyWriter w;
    try {
      try {
        w = client.create(p.volume, p.bucket, p.key, overwrite, recursive, rf, user, perm);
      } catch (MetaException e) {
        // A missing volume or bucket is created on the way, as mkdirs does.
        if (!recursive || !(e.is(ErrorReason.BUCKET_NOT_FOUND) || e.is(ErrorReason.VOLUME_NOT_FOUND))) {
          throw e;
        }
        ensureBucket(p.volume, p.bucket, -1);
        w = client.create(p.volume, p.bucket, p.key, overwrite, recursive, rf, user, perm);
      }
    } catch (IOException e) {
      if (e instanceof MetaException) {
        MetaException m = (MetaException) e;
        if (m.is(ErrorReason.PARENT_NOT_FOUND) || m.is(ErrorReason.BUCKET_NOT_FOUND) || m.is(ErrorReason.VOLUME_NOT_FOUND)) {
          throw (IOException) new FileNotFoundException("Parent directory of " + q + " does not exist").initCause(e);
        }
        if (m.is(ErrorReason.DIRECTORY_EXISTS) || m.is(ErrorReason.IS_A_DIRECTORY)) {
          throw (IOException) new FileAlreadyExistsException(q + " is a directory").initCause(e);
        }
        if (m.code() == Status.Code.ALREADY_EXISTS && !m.is(ErrorReason.FILE_EXISTS) && !m.is(ErrorReason.KEY_EXISTS)) {
          // a file where a parent directory should be
          throw (IOException) new ParentNotDirectoryException("a parent of " + q + " is a file").initCause(e);
        }
      }
      throw translate(e, q);
    }
    return new FSDataOutputStream(new StratoOutputStream(w, q.toString()), statistics);
  }

  /**
   * Hadoop's append: the stream writes new blocks after the file's last one
   * (its position starts at the file's length); hflush and hsync publish the
   * new length, close commits it. One writer at a time: a file another
   * writer holds open is an IOException (recoverLease closes a file whose
   * writer died). Erasure coded files are refused.
   */
  @Override
  public FSDataOutputStream append(Path f, int bufferSize, Progressable progress) throws IOException {
    statistics.incrementWriteOps(1);
    Path q = makeQualified(f);
    StratoPath p = fileOf(q);
    writable(p, q);
    KeyWriter w;
    try {
      w = client.append(p.volume, p.bucket, p.key);
    } catch (IOException e) {
      throw fileError(e, q);
    }
    return new FSDataOutputStream(new StratoOutputStream(w, q.toString()), statistics, w.appendOffset());
  }

  /**
   * Hadoop's truncate: at once, on a block boundary or inside a block, so
   * always true (no block recovery to wait for); the bytes past newLength are
   * never read again. A snapshot taken before keeps the file as it was.
   */
  @Override
  public boolean truncate(Path f, long newLength) throws IOException {
    statistics.incrementWriteOps(1);
    Path q = makeQualified(f);
    StratoPath p = fileOf(q);
    writable(p, q);
    if (newLength < 0) {
      throw new HadoopIllegalArgumentException("strato: truncate " + q + " to a negative length " + newLength);
    }
    try {
      return client.truncate(p.volume, p.bucket, p.key, newLength);
    } catch (IOException e) {
      if (e instanceof MetaException && ((MetaException) e).code() == Status.Code.INVALID_ARGUMENT) {
        throw (HadoopIllegalArgumentException) new HadoopIllegalArgumentException(q + ": " + e.getMessage()).initCause(e);
      }
      throw fileError(e, q);
    }
  }

  /**
   * Hadoop's concat: the blocks of the closed files srcs, in order, move to
   * the end of the closed file trg and srcs are removed, in one metadata
   * operation that copies no data. All in trg's bucket, with its replication.
   */
  @Override
  public void concat(Path trg, Path[] psrcs) throws IOException {
    statistics.incrementWriteOps(1);
    Path q = makeQualified(trg);
    StratoPath t = fileOf(q);
    writable(t, q);
    if (psrcs.length == 0) {
      throw new HadoopIllegalArgumentException("strato: concat into " + q + " without sources");
    }
    List<String> srcs = new ArrayList<>(psrcs.length);
    for (Path s : psrcs) {
      Path qs = makeQualified(s);
      StratoPath sp = fileOf(qs);
      if (!sp.volume.equals(t.volume) || !sp.bucket.equals(t.bucket)) {
        throw new IOException("strato: concat: " + qs + " is not in the bucket of " + q);
      }
      writable(sp, qs);
      srcs.add(sp.key);
    }
    try {
      client.concat(t.volume, t.bucket, t.key, srcs);
    } catch (IOException e) {
      throw fileError(e, q);
    }
  }

  /**
   * HDFS's recoverLease (LeaseRecoverable): closes a file its writer left
   * open at the length its last hsync or hflush published; that writer can
   * no longer hsync or close it. True once the file is closed, which is at
   * once (a closed file is left as it is).
   */
  @Override
  public boolean recoverLease(Path f) throws IOException {
    Path q = makeQualified(f);
    StratoPath p = fileOf(q);
    writable(p, q);
    try {
      return client.recoverLease(p.volume, p.bucket, p.key).getClosed();
    } catch (IOException e) {
      throw fileError(e, q);
    }
  }

  /** HDFS's isFileClosed (LeaseRecoverable): whether no writer holds the file open. */
  @Override
  public boolean isFileClosed(Path f) throws IOException {
    Path q = makeQualified(f);
    StratoPath p = fileOf(q);
    try {
      return client.isFileClosed(p.volume, p.bucket, p.key);
    } catch (IOException e) {
      throw fileError(e, q);
    }
  }

  /** The path of a file: the root, a volume and a bucket are not files. */
  private StratoPath fileOf(Path q) throws IOException {
    StratoPath p = StratoPath.of(q);
    if (p.depth < 3) {
      getFileStatus(q); // FileNotFoundException when it is not there
      throw new FileNotFoundException("Path is not a file: " + q);
    }
    return p;
  }

  /** An error about a file, as HDFS words the missing file and the directory. */
  private static IOException fileError(IOException e, Path q) {
    if (e instanceof MetaException) {
      MetaException m = (MetaException) e;
      if (m.code() == Status.Code.NOT_FOUND || m.is(ErrorReason.NOT_A_DIRECTORY)) {
        return (IOException) new FileNotFoundException("File does not exist: " + q + " (" + e.getMessage() + ")").initCause(e);
      }
      if (m.is(ErrorReason.IS_A_DIRECTORY)) {
        return (IOException) new FileNotFoundException("Path is not a file: " + q).initCause(e);
      }
    }
    return translate(e, q);
  }

  // ---- Rename and delete -------------------------------------------------------

  /**
   * Hadoop's rename (filesystem.md): a file or directory moves atomically
   * within its bucket; onto an existing directory it moves into it. The
   * answers HDFS gives to the edge cases: false when the source is missing,
   * the destination exists as a file, its parent is missing or a file, or a
   * directory would move under itself. Renames across buckets, and of
   * volumes and buckets, are not supported (an IOException).
   */
  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    statistics.incrementWriteOps(1);
    Path qs = makeQualified(src);
    Path qd = makeQualified(dst);
    StratoPath s = StratoPath.of(qs);
    StratoPath d = StratoPath.of(qd);
    writable(s, qs);
    writable(d, qd);
    if (s.depth < 3) {
      if (getFileStatusOrNull(qs) == null) {
        return false;
      }
      throw new IOException("strato: cannot rename " + qs + ": volumes and buckets are not renamed");
    }
    if (d.depth < 2 || !s.sameBucket(d)) {
      throw new IOException("strato: cannot rename " + qs + " to " + qd + ": a rename stays within one bucket");
    }
    FileStatus ss = getFileStatusOrNull(qs);
    if (ss == null) {
      return false;
    }
    String target = d.key;
    FileStatus ds = getFileStatusOrNull(qd);
    if (ds != null) {
      if (ds.isFile()) {
        return qs.equals(qd); // a file onto itself: nothing to do
      }
      target = d.key.isEmpty() ? s.name() : d.key + "/" + s.name();
      if (target.equals(s.key)) {
        return true; // into its own parent: nothing to do
      }
      if (getFileStatusOrNull(childPath(d, target)) != null) {
        return false;
      }
    } else {
      Path parent = qd.getParent();
      FileStatus ps = parent == null ? null : getFileStatusOrNull(parent);
      if (ps == null || !ps.isDirectory()) {
        return false;
      }
    }
    if (ss.isDirectory() && (target.equals(s.key) || target.startsWith(s.key + "/"))) {
      return false; // under itself
    }
    try {
      client.rename(s.volume, s.bucket, s.key, target);
      return true;
    } catch (IOException e) {
      if (e instanceof MetaException) {
        MetaException m = (MetaException) e;
        if (m.code() == Status.Code.NOT_FOUND || m.code() == Status.Code.ALREADY_EXISTS
            || m.is(ErrorReason.RENAME_UNDER_SELF) || m.is(ErrorReason.NOT_A_DIRECTORY)) {
          return false;
        }
      }
      throw translate(e, qs);
    }
  }

  @Override
  public boolean delete(Path f, boolean recursive) throws IOException {
    statistics.incrementWriteOps(1);
    Path q = makeQualified(f);
    StratoPath p = StratoPath.of(q);
    writable(p, q);
    try {
      switch (p.depth) {
        case 0:
          return false; // the root is never deleted
        case 1:
          if (recursive) {
            for (FileStatus b : listStatus(q)) {
              delete(b.getPath(), true);
            }
          }
          client.deleteVolume(p.volume);
          return true;
        case 2:
          if (recursive) {
            for (FileStatus c : listStatus(q)) {
              StratoPath cp = StratoPath.of(c.getPath());
              client.delete(cp.volume, cp.bucket, cp.key, true);
            }
          }
          deleteBucket(p, q, recursive);
          return true;
        default:
          client.delete(p.volume, p.bucket, p.key, recursive);
          return true;
      }
    } catch (FileNotFoundException e) {
      return false;
    } catch (IOException e) {
      if (notFound(e)) {
        return false;
      }
      throw translate(e, q);
    }
  }

  // ---- Permissions, owners, times, replication, space ----------------------------

  /** A call of meta on a path in a bucket. */
  private interface BucketCall {
    void run(StratoPath p) throws IOException;
  }

  /**
   * Runs setPermission's, setOwner's or setTimes's call on f, a bucket (its
   * root directory) or something in one. "/" and volumes have no
   * permission, group or times of their own, and a volume's owner is given
   * when it is created: refused with an IOException (FileNotFoundException
   * for a missing volume).
   */
  private void setAttribute(Path f, String what, BucketCall call) throws IOException {
    statistics.incrementWriteOps(1);
    Path q = makeQualified(f);
    StratoPath p = StratoPath.of(q);
    if (p.depth < 2) {
      getFileStatus(q);
      throw new IOException("strato: cannot " + what + " " + q + ": " + (p.depth == 0 ? "/" : "a volume")
          + " has no permission, group or times of its own, nor a settable owner; buckets (/VOLUME/BUCKET) and"
          + " everything in them have");
    }
    writable(p, q);
    try {
      call.run(p);
    } catch (IOException e) {
      throw translate(e, q);
    }
  }

  /**
   * Stores the permission (the 9 rwx bits and the sticky bit) of a file, a
   * directory or a bucket's root. Meta stores it and shows it in every
   * status and listing; it enforces ACLs, not permissions
   * (docs/security.md).
   */
  @Override
  public void setPermission(Path f, FsPermission permission) throws IOException {
    setAttribute(f, "set the permission of",
        p -> client.setPermission(p.volume, p.bucket, p.key, permission.toShort() & 07777));
  }

  /**
   * Sets the owner, the group or both (null or "" leaves one unchanged, and
   * one must be given, as on HDFS) of a file, a directory or a bucket's
   * root. Changing an owner needs an administrator when meta authenticates
   * (AccessControlException otherwise).
   */
  @Override
  public void setOwner(Path f, String username, String groupname) throws IOException {
    String owner = username == null ? "" : username;
    String group = groupname == null ? "" : groupname;
    if (owner.isEmpty() && group.isEmpty()) {
      throw new IOException("strato: setOwner of " + makeQualified(f) + " names neither an owner nor a group");
    }
    setAttribute(f, "set the owner of", p -> client.setOwner(p.volume, p.bucket, p.key, owner, group));
  }

  /**
   * Sets the modification and access times (Unix milliseconds; -1 leaves
   * one unchanged) of a file, a directory or a bucket's root. A later write
   * of the file sets both to the time of its commit.
   */
  @Override
  public void setTimes(Path f, long mtime, long atime) throws IOException {
    setAttribute(f, "set the times of", p -> client.setTimes(p.volume, p.bucket, p.key, mtime, atime));
  }

  /**
   * A written file keeps the replication it was created with: its blocks
   * live in containers of pipelines of that many datanodes (ONE or THREE),
   * and strato does not copy a file's blocks into containers of another
   * factor. So: true when the file already has the replication asked for;
   * false for a directory, a bucket, a volume or "/" (as HDFS answers for
   * directories); FileNotFoundException when nothing is there; otherwise an
   * IOException that says the file's replication and how to get another
   * (write a copy), or for an erasure coded file that its code is kept. (An
   * IOException, not UnsupportedOperationException: FsShell's -setrep and
   * distcp -pr report it as the path's error.)
   */
  @Override
  public boolean setReplication(Path f, short replication) throws IOException {
    statistics.incrementWriteOps(1);
    Path q = makeQualified(f);
    StratoPath p = StratoPath.of(q);
    if (p.depth < 3) {
      getFileStatus(q);
      return false;
    }
    io.strato.proto.v1.FileStatus s;
    try {
      s = client.getFileStatus(p.volume, p.bucket, p.key, true);
    } catch (IOException e) {
      throw statusError(e, q);
    }
    if (s.getIsDirectory()) {
      return false;
    }
    if (s.getKey().hasErasureCoding()) {
      throw new IOException("strato: cannot set the replication of " + q
          + ": it is erasure coded, and a written file keeps its erasure coding");
    }
    short current = replication(s.getReplication());
    if (replication == current) {
      return true;
    }
    throw new IOException("strato: cannot change the replication of " + q + " from " + current
        + " to " + replication + ": a written file keeps the replication it was created with (its blocks live in"
        + " containers of " + current + "-datanode pipelines); strato stores replication 1 or 3, chosen at create"
        + " (1: ONE, anything else: the bucket's): write a copy of the file with the replication wanted");
  }

  // ---- Quotas ----------------------------------------------------------------------

  /**
   * The quotas and usage of a bucket or a volume as strato records them
   * ({@code strato sh bucket setquota}): {count, namespace quota, bytes,
   * quota of bytes}, a quota Hadoop's -1 when there is none; null for "/"
   * and for a path below a bucket, which have no quota of their own. A
   * bucket's namespace counts its keys and directories (not its root), a
   * volume's its buckets; bytes are logical (one copy of each), the bytes
   * strato's quotas limit, where HDFS counts every replica.
   */
  private long[] quotaOf(Path q) throws IOException {
    StratoPath p = StratoPath.of(q);
    try {
      switch (p.depth) {
        case 1: {
          VolumeInfo v = client.getVolume(p.volume);
          return new long[] {v.getUsedNamespace(), orNone(v.getQuotaNamespace()), v.getUsedBytes(), orNone(v.getQuotaBytes())};
        }
        case 2: {
          BucketInfo b = client.getBucket(p.volume, p.bucket);
          return new long[] {b.getUsedNamespace(), orNone(b.getQuotaNamespace()), b.getUsedBytes(), orNone(b.getQuotaBytes())};
        }
        default:
          return null;
      }
    } catch (IOException e) {
      throw statusError(e, q);
    }
  }

  private static long orNone(long quota) {
    return quota > 0 ? quota : -1;
  }

  /**
   * A bucket's or a volume's quotas and usage (hadoop fs -count -u); for
   * "/" and paths below a bucket, Hadoop's default (the subtree counted, no
   * quota). See quotaOf for what strato counts.
   */
  @Override
  public QuotaUsage getQuotaUsage(Path f) throws IOException {
    statistics.incrementReadOps(1);
    Path q = makeQualified(f);
    long[] u = quotaOf(q);
    if (u == null) {
      return super.getQuotaUsage(q);
    }
    return new QuotaUsage.Builder().fileAndDirectoryCount(u[0]).quota(u[1])
        .spaceConsumed(u[2]).spaceQuota(u[3]).build();
  }

  /**
   * Hadoop's content summary (the subtree counted), with a bucket's or a
   * volume's quotas and bytes used (hadoop fs -count -q).
   */
  @Override
  public ContentSummary getContentSummary(Path f) throws IOException {
    statistics.incrementReadOps(1);
    Path q = makeQualified(f);
    long[] s = summaryOf(q);
    long[] u = quotaOf(q);
    ContentSummary.Builder b = new ContentSummary.Builder().directoryCount(s[0]).fileCount(s[1]).length(s[2]);
    if (u == null) {
      return b.spaceConsumed(s[3]).build();
    }
    return b.quota(u[1]).spaceConsumed(u[2]).spaceQuota(u[3]).build();
  }

  /**
   * {directories, files, bytes, bytes on the datanodes} of the subtree at q:
   * meta adds up a bucket or a path in one (GetContentSummary, a page of
   * entries per call); a volume counts as a directory of its buckets, "/" as
   * one of its volumes.
   */
  private long[] summaryOf(Path q) throws IOException {
    StratoPath p = StratoPath.of(q);
    long[] sum = new long[] {1, 0, 0, 0};
    try {
      switch (p.depth) {
        case 0:
          for (String after = ""; ; ) {
            ListVolumesResponse r = client.listVolumes(after, pageSize);
            for (VolumeInfo v : r.getVolumesList()) {
              addTo(sum, summaryOf(new Path(q, v.getName())));
              after = v.getName();
            }
            if (!r.getTruncated() || r.getVolumesCount() == 0) {
              return sum;
            }
          }
        case 1:
          client.getVolume(p.volume);
          for (String after = ""; ; ) {
            ListBucketsResponse r = client.listBuckets(p.volume, after, pageSize);
            for (BucketInfo b : r.getBucketsList()) {
              addTo(sum, client.contentSummary(p.volume, b.getName(), ""));
              after = b.getName();
            }
            if (!r.getTruncated() || r.getBucketsCount() == 0) {
              return sum;
            }
          }
        default:
          return client.contentSummary(p.volume, p.bucket, p.key);
      }
    } catch (IOException e) {
      throw statusError(e, q);
    }
  }

  private static void addTo(long[] sum, long[] s) {
    for (int i = 0; i < sum.length; i++) {
      sum[i] += s[i];
    }
  }

  /**
   * The cluster's raw capacity, used and remaining bytes, as HDFS's: the
   * sums of the storage reports of the datanodes that are not dead, every
   * replica counted (a file of replication 3 uses three times its length).
   * The path does not matter: every bucket shares the datanodes.
   */
  @Override
  public FsStatus getStatus(Path p) throws IOException {
    statistics.incrementReadOps(1);
    try {
      io.strato.proto.v1.FsStatus s = client.getFsStatus();
      return new FsStatus(s.getCapacity(), s.getUsed(), s.getRemaining());
    } catch (IOException e) {
      throw translate(e, p == null ? uri : makeQualified(p));
    }
  }

  // ---- Checksums -------------------------------------------------------------------

  @Override
  public FileChecksum getFileChecksum(Path f) throws IOException {
    return getFileChecksum(f, Long.MAX_VALUE);
  }

  /**
   * The file's composite CRC (HDFS's COMPOSITE_CRC, dfs.checksum.combine.mode):
   * the CRC32C (or CRC32) of the file's first length bytes, composed from the
   * window checksums the datanodes store, so it does not depend on block or
   * window sizes and equals HDFS's for the same bytes. A file written with
   * another checksum type (NONE, SHA256, MD5) has none: null.
   */
  @Override
  public FileChecksum getFileChecksum(Path f, long length) throws IOException {
    statistics.incrementReadOps(1);
    Path q = makeQualified(f);
    StratoPath p = StratoPath.of(q);
    if (p.depth < 3) {
      throw new FileNotFoundException(q + " is a directory");
    }
    if (length < 0) {
      throw new IllegalArgumentException("strato: negative length " + length);
    }
    try (KeyReader r = client.open(p.volume, p.bucket, p.key)) {
      long end = Math.min(length, r.size());
      if (r.info().hasErasureCoding()) {
        return stripedChecksum(r, end);
      }
      DataChecksum.Type type = null;
      int bpc = 0;
      Integer crc = null;
      for (KeyReader.Window w : r.windows()) {
        if (w.offset() >= end) {
          break;
        }
        DataChecksum.Type t = w.type() == Checksums.CRC32C ? DataChecksum.Type.CRC32C
            : w.type() == Checksums.CRC32 ? DataChecksum.Type.CRC32 : null;
        if (t == null || type != null && t != type) {
          return null;
        }
        type = t;
        bpc = Math.max(bpc, w.length());
        int v;
        int len = w.length();
        if (w.offset() + len <= end) {
          v = ByteBuffer.wrap(w.value()).getInt();
        } else {
          // The window straddles the end: its bytes up to the end, read and checked.
          len = (int) (end - w.offset());
          byte[] b = new byte[len];
          r.read(w.offset(), b, 0, len);
          java.util.zip.Checksum c = t == DataChecksum.Type.CRC32C ? new java.util.zip.CRC32C()
              : new java.util.zip.CRC32();
          c.update(b, 0, len);
          v = (int) c.getValue();
        }
        crc = crc == null ? v : CrcUtil.compose(crc, v, len, t == DataChecksum.Type.CRC32C ? CrcUtil.CASTAGNOLI_POLYNOMIAL : CrcUtil.GZIP_POLYNOMIAL);
      }
      if (type == null) {
        type = DataChecksum.Type.CRC32C; // an empty file: the CRC of no bytes
        bpc = 16 << 10;
      }
      return new CompositeCrcFileChecksum(crc == null ? 0 : crc, type, bpc);
    } catch (IOException e) {
      throw translate(e, q);
    }
  }

  /**
   * An erasure coded file's composite CRC, as the Go client computes it
   * (client/filechecksum.go): its members' stored windows cover their blocks,
   * not the file's bytes, so the CRC is of the bytes, read and verified. The
   * same value as a replicated file of the same bytes.
   */
  private static FileChecksum stripedChecksum(KeyReader r, long end) throws IOException {
    io.strato.proto.v1.ChecksumType ct = r.info().getChecksumType();
    DataChecksum.Type t = ct == io.strato.proto.v1.ChecksumType.CHECKSUM_CRC32 ? DataChecksum.Type.CRC32
        : ct == io.strato.proto.v1.ChecksumType.CHECKSUM_CRC32C
            || ct == io.strato.proto.v1.ChecksumType.CHECKSUM_TYPE_UNSPECIFIED ? DataChecksum.Type.CRC32C : null;
    if (t == null) {
      return null;
    }
    int bpc = r.info().getBytesPerChecksum() > 0 ? r.info().getBytesPerChecksum() : 16 << 10;
    java.util.zip.Checksum c = t == DataChecksum.Type.CRC32C ? new java.util.zip.CRC32C() : new java.util.zip.CRC32();
    byte[] b = new byte[4 << 20];
    for (long off = 0; off < end;) {
      int n = (int) Math.min(b.length, end - off);
      r.read(off, b, 0, n);
      c.update(b, 0, n);
      off += n;
    }
    return new CompositeCrcFileChecksum((int) c.getValue(), t, bpc);
  }

  /**
   * Deletes a bucket. A recursive delete of its directories is O(1): their
   * entries are reclaimed in the background and the bucket counts them until
   * then, so DeleteBucket answers BUCKET_NOT_EMPTY for a while after its
   * listing went empty; that is waited out (up to fs.strato.meta.retry.ms).
   */
  private void deleteBucket(StratoPath p, Path q, boolean recursive) throws IOException {
    long deadline = System.nanoTime() + getConf().getLong(META_RETRY, 60_000) * 1_000_000;
    long backoff = 50;
    while (true) {
      try {
        client.deleteBucket(p.volume, p.bucket);
        return;
      } catch (MetaException e) {
        if (!recursive || !e.is(ErrorReason.BUCKET_NOT_EMPTY) || System.nanoTime() > deadline
            || listStatusIterator(q).hasNext()) {
          throw e;
        }
      }
      try {
        Thread.sleep(backoff);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("strato: delete of " + q + " interrupted");
      }
      backoff = Math.min(2 * backoff, 1000);
    }
  }

  // ---- Snapshots (docs/hadoop.md "Snapshots") --------------------------------------

  /** The directory at a bucket's root under which its snapshots are read. */
  public static final String SNAPSHOT_DIR = ".snapshot";

  /**
   * The bucket whose root q is, for a snapshot call: strato snapshots whole
   * buckets, so any other path is refused as HDFS refuses a directory that
   * is not snapshottable (FileNotFoundException when nothing is there).
   */
  private StratoPath snapshotRoot(Path q, String what) throws IOException {
    StratoPath p = StratoPath.of(q);
    if (p.depth != 2) {
      getFileStatus(q);
      throw new IOException("strato: cannot " + what + " " + q + ": not a snapshottable directory; strato takes"
          + " snapshots of whole buckets (/VOLUME/BUCKET)");
    }
    return p;
  }

  private Path snapshotPath(StratoPath p, String name) {
    return qualify("/" + p.volume + "/" + p.bucket + "/" + SNAPSHOT_DIR + "/" + name);
  }

  /**
   * Takes a snapshot of a bucket (path: its root) in O(1), named
   * snapshotName or, when null, by meta (sYYYYMMDD-hhmmss.mmm, as HDFS
   * names them). Returns where it is read: /VOLUME/BUCKET/.snapshot/NAME.
   */
  @Override
  public Path createSnapshot(Path path, String snapshotName) throws IOException {
    statistics.incrementWriteOps(1);
    Path q = makeQualified(path);
    StratoPath p = snapshotRoot(q, "create a snapshot of");
    try {
      SnapshotInfo s = client.createSnapshot(p.volume, p.bucket, orEmpty(snapshotName));
      return snapshotPath(p, s.getName());
    } catch (IOException e) {
      throw translate(e, q);
    }
  }

  /** Renames a snapshot of a bucket (path: its root). */
  @Override
  public void renameSnapshot(Path path, String snapshotOldName, String snapshotNewName) throws IOException {
    statistics.incrementWriteOps(1);
    Path q = makeQualified(path);
    StratoPath p = snapshotRoot(q, "rename a snapshot of");
    try {
      client.renameSnapshot(p.volume, p.bucket, orEmpty(snapshotOldName), orEmpty(snapshotNewName));
    } catch (IOException e) {
      throw translate(e, snapshotPath(p, snapshotOldName));
    }
  }

  /** Deletes a snapshot of a bucket (path: its root); meta frees what only it held in the background. */
  @Override
  public void deleteSnapshot(Path path, String snapshotName) throws IOException {
    statistics.incrementWriteOps(1);
    Path q = makeQualified(path);
    StratoPath p = snapshotRoot(q, "delete a snapshot of");
    try {
      client.deleteSnapshot(p.volume, p.bucket, orEmpty(snapshotName));
    } catch (IOException e) {
      throw translate(e, snapshotPath(p, snapshotName));
    }
  }

  /** The snapshots of a bucket (path: its root), by name, as meta describes them. */
  public List<SnapshotInfo> listSnapshots(Path path) throws IOException {
    statistics.incrementReadOps(1);
    Path q = makeQualified(path);
    StratoPath p = snapshotRoot(q, "list the snapshots of");
    try {
      return client.listSnapshots(p.volume, p.bucket);
    } catch (IOException e) {
      throw translate(e, q);
    }
  }

  /**
   * What changed in a bucket (snapshotDir: its root) from snapshot
   * fromSnapshot to toSnapshot, as HDFS's DistributedFileSystem reports it
   * (DistCp's -diff and -rdiff find this method by its name and
   * signature): "" or "." is the bucket now, and either side may be the
   * older. Paths are relative to the bucket; see SnapshotDiffs for how
   * they follow HDFS's. Needs hadoop-hdfs-client on the classpath (every
   * Hadoop install and hadoop-client-api have it).
   */
  public org.apache.hadoop.hdfs.protocol.SnapshotDiffReport getSnapshotDiffReport(Path snapshotDir,
      String fromSnapshot, String toSnapshot) throws IOException {
    statistics.incrementReadOps(1);
    Path q = makeQualified(snapshotDir);
    StratoPath p = snapshotRoot(q, "compare snapshots of");
    String from = current(fromSnapshot) ? "" : fromSnapshot;
    String to = current(toSnapshot) ? "" : toSnapshot;
    String root = q.toUri().getPath();
    try {
      if (from.equals(to)) {
        if (!from.isEmpty()) {
          client.getSnapshot(p.volume, p.bucket, from); // a missing one is an error, as on HDFS
        }
        return SnapshotDiffs.report(root, fromSnapshot, toSnapshot, List.of(), false);
      }
      boolean inverse = from.isEmpty()
          || !to.isEmpty() && client.getSnapshot(p.volume, p.bucket, from).getId()
              > client.getSnapshot(p.volume, p.bucket, to).getId();
      List<io.strato.proto.v1.SnapshotDiffEntry> es = inverse
          ? client.snapshotDiff(p.volume, p.bucket, to, from)
          : client.snapshotDiff(p.volume, p.bucket, from, to);
      return SnapshotDiffs.report(root, fromSnapshot, toSnapshot, es, inverse);
    } catch (IOException e) {
      throw translate(e, q);
    }
  }

  /** null as "" (meta refuses an empty name where one is needed). */
  private static String orEmpty(String s) {
    return s == null ? "" : s;
  }

  private static boolean current(String snapshot) {
    return snapshot == null || snapshot.isEmpty() || snapshot.equals(".");
  }

  /**
   * Refuses a change under a bucket's .snapshot, which is read-only, as
   * HDFS does (SnapshotAccessControlException is an AccessControlException);
   * meta refuses it too.
   */
  private static void writable(StratoPath p, Path q) throws AccessControlException {
    if (p.depth >= 3 && (p.key.equals(SNAPSHOT_DIR) || p.key.startsWith(SNAPSHOT_DIR + "/"))) {
      throw new AccessControlException("strato: " + q + " is read-only: a bucket's snapshots cannot be changed");
    }
  }

  // ---- Capabilities --------------------------------------------------------------

  @Override
  public boolean hasPathCapability(Path path, String capability) throws IOException {
    switch (PathCapabilitiesSupport.validatePathCapabilityArgs(makeQualified(path), capability).toLowerCase(Locale.ENGLISH)) {
      case CommonPathCapabilities.FS_ACLS:
      case CommonPathCapabilities.FS_XATTRS:
      case CommonPathCapabilities.FS_STORAGEPOLICY:
      case CommonPathCapabilities.FS_PATHHANDLES:
      case CommonPathCapabilities.FS_MULTIPART_UPLOADER:
      case CommonPathCapabilities.FS_SYMLINKS:
        return false;
      case CommonPathCapabilities.ETAGS_AVAILABLE:
      case CommonPathCapabilities.ETAGS_PRESERVED_IN_RENAME:
      case CommonPathCapabilities.FS_CHECKSUMS:
      case CommonPathCapabilities.FS_PERMISSIONS:
      case CommonPathCapabilities.FS_APPEND:
      case CommonPathCapabilities.FS_CONCAT:
      case CommonPathCapabilities.FS_TRUNCATE:
      case CommonPathCapabilities.LEASE_RECOVERABLE:
        return true;
      case CommonPathCapabilities.FS_SNAPSHOTS:
        // createSnapshot and getSnapshotDiffReport, of buckets: in a bucket, not above one.
        return StratoPath.of(makeQualified(path)).depth >= 2;
      default:
        return super.hasPathCapability(path, capability);
    }
  }

  @Override
  public void close() throws IOException {
    try {
      super.close();
    } finally {
      if (client != null) {
        client.close();
      }
    }
  }

  @Override
  public String toString() {
    return "StratoFileSystem{uri=" + uri + ", meta=" + (client == null ? "[]" : client.meta().addresses())
        + ", user=" + user + "}";
  }
}
