package io.strato.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;
import io.strato.proto.v1.ErrorReason;
import io.grpc.stub.AbstractStub;
import io.strato.proto.v1.AdminServiceGrpc;
import io.strato.proto.v1.AdminServiceGrpc.AdminServiceBlockingStub;
import io.strato.proto.v1.NamespaceServiceGrpc;
import io.strato.proto.v1.NamespaceServiceGrpc.NamespaceServiceBlockingStub;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A connection to a meta group (one replica or three) that follows its
 * leader, as the Go client's MetaConn does (docs/api.md, Conventions):
 *
 * <ul>
 *   <li>calls go to the replica believed to lead; a NOT_LEADER answer names
 *       the leader (the ErrorInfo's metadata "leader"), and the call goes
 *       there;
 *   <li>every mutation carries a request ID (gRPC metadata strato-client and
 *       strato-request), the same on each retry, so meta applies it once:
 *       an attempt that gets no answer within the attempt timeout, or fails
 *       UNAVAILABLE, is sent again, to the next replica;
 *   <li>while meta answers UNAVAILABLE (an election, a restart, safe mode)
 *       calls are retried for up to retryMs;
 *   <li>when no replica has ever answered and every one refuses the
 *       connection, a call fails after 3 s with that refusal;
 *   <li>with follower reads on ({@link #setFollowerReads}), reads go to the
 *       replicas in turn, each asked to serve the read itself (gRPC metadata
 *       strato-follower-read: 1; meta makes it linearizable with a ReadIndex
 *       through the leader), and to the leader when a replica cannot.
 * </ul>
 *
 * Safe for concurrent use.
 */
public final class MetaClient implements Closeable {
  /** How long calls keep trying when every replica refuses and none has ever answered. */
  static final long REFUSED_TIMEOUT_MS = 3000;

  static final Metadata.Key<String> CLIENT_KEY = Metadata.Key.of("strato-client", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> REQUEST_KEY = Metadata.Key.of("strato-request", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> AUTHORIZATION_KEY = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> FOLLOWER_READ_KEY = Metadata.Key.of("strato-follower-read", Metadata.ASCII_STRING_MARSHALLER);
  /** How long a replica that could not serve a follower read is left out. */
  static final long FOLLOWER_AVOID_MS = 3000;

  private static final String DOMAIN = "strato.v1";

  private final List<String> addrs;
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final long attemptTimeoutMs;
  private final long retryMs;
  private final Security security;
  private final String clientId;
  private final AtomicLong seq = new AtomicLong();
  private volatile String leader;
  private volatile boolean answered;
  private volatile boolean followerReads;
  private final AtomicLong nextReader = new AtomicLong();
  private final Map<String, Long> avoid = new ConcurrentHashMap<>();
  private final AtomicLong followerServed = new AtomicLong();
  private final AtomicLong followerFallbacks = new AtomicLong();

  /**
   * @param addrs the meta replicas' gRPC addresses (host:port)
   * @param attemptTimeoutMs bound of one attempt at one replica (0: none)
   * @param retryMs how long a call retries while meta is unavailable
   */
  public MetaClient(List<String> addrs, long attemptTimeoutMs, long retryMs) {
    this(addrs, attemptTimeoutMs, retryMs, Security.none());
  }

  /**
   * As above, with TLS to meta when security has a CA, and security's token
   * (if any) sent with every call as "authorization: Bearer TOKEN".
   */
  public MetaClient(List<String> addrs, long attemptTimeoutMs, long retryMs, Security security) {
    if (addrs.isEmpty()) {
      throw new IllegalArgumentException("strato: no meta address given");
    }
    for (String a : addrs) {
      if (a.lastIndexOf(':') <= 0) {
        throw new IllegalArgumentException("strato: meta address \"" + a + "\" is not host:port");
      }
    }
    this.addrs = new CopyOnWriteArrayList<>(addrs);
    this.attemptTimeoutMs = attemptTimeoutMs;
    this.retryMs = retryMs;
    this.security = security;
    byte[] id = new byte[12];
    new SecureRandom().nextBytes(id);
    this.clientId = HexFormat.of().formatHex(id);
    this.leader = addrs.get(0);
    // Build the channel and start connecting now, in the background (the
    // event loop's threads): the first call (a file's open, typically) then
    // finds the connection made, or on its way, instead of dialing it.
    try {
      channel(leader).getState(true);
    } catch (RuntimeException e) {
      // the first call dials again, and reports what fails
    }
  }

  /** The client's ID, sent as strato-client with every mutation. */
  public String clientId() {
    return clientId;
  }

  /** The replica believed to lead (the last one that answered a call). */
  public String leader() {
    return leader;
  }

  public List<String> addresses() {
    return List.copyOf(addrs);
  }

  private ManagedChannel channel(String addr) {
    return channels.computeIfAbsent(addr, a -> {
      NettyChannelBuilder b = builder(a)
          .directExecutor()
          .maxInboundMessageSize(256 << 20)
          .keepAliveTime(30, TimeUnit.SECONDS);
      if (security.tls()) {
        b.sslContext(security.grpcSslContext()).useTransportSecurity();
      } else {
        b.usePlaintext();
      }
      return b.build();
    });
  }

  /**
   * The channel builder for host:port: an IP address is dialed as it is (no
   * name resolver, whose DNS and JNDI machinery a JVM would otherwise load
   * and run before its first call); a name goes through gRPC's resolver.
   */
  static NettyChannelBuilder builder(String addr) {
    int colon = addr.lastIndexOf(':');
    String host = addr.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    if (isIpLiteral(host)) {
      try {
        int port = Integer.parseInt(addr.substring(colon + 1));
        return NettyChannelBuilder.forAddress(new java.net.InetSocketAddress(
            java.net.InetAddress.getByName(host), port)).overrideAuthority(addr);
      } catch (NumberFormatException | java.net.UnknownHostException e) {
        // not host:port after all: the resolver reports it
      }
    }
    return NettyChannelBuilder.forTarget(addr);
  }

  /** Whether host is an IPv4 or IPv6 address rather than a name. */
  public static boolean isIpLiteral(String host) {
    if (host.indexOf(':') >= 0) {
      return true; // IPv6
    }
    return host.matches("\\d{1,3}(\\.\\d{1,3}){3}");
  }

  /**
   * Spread the reads of {@link #read} over every replica (default off;
   * fs.strato.meta.follower-reads): each is served by the replica it goes
   * to, linearizably (it sees every write acknowledged before it, this
   * client's included); a replica that cannot serve it (cut off, too slow,
   * run with --follower-reads=false) is left out for a few seconds and the
   * read goes to the leader. Writes go to the leader.
   */
  public void setFollowerReads(boolean on) {
    this.followerReads = on;
  }

  /** Reads a replica other than the leader served (follower reads). */
  public long followerReadsServed() {
    return followerServed.get();
  }

  /** Follower reads that fell back to the leader. */
  public long followerReadFallbacks() {
    return followerFallbacks.get();
  }

  /**
   * A read of the Namespace service that a follower may serve (lookups,
   * status, listings): retried anywhere, no request ID; with follower reads,
   * first at the next replica in turn.
   */
  public <T> T read(String what, Function<NamespaceServiceBlockingStub, T> fn) throws IOException {
    if (followerReads && addrs.size() > 1) {
      String addr = nextReader();
      if (addr != null && !addr.equals(leader)) {
        try {
          T out = fn.apply(followerStub(addr));
          followerServed.incrementAndGet();
          return out;
        } catch (StatusRuntimeException e) {
          Status.Code code = e.getStatus().getCode();
          if (code != Status.Code.UNAVAILABLE && code != Status.Code.DEADLINE_EXCEEDED && code != Status.Code.CANCELLED) {
            ErrorInfo info = errorInfo(e);
            throw toException(what, e, code, info == null ? "" : info.getReason());
          }
          avoid.put(addr, System.nanoTime() + FOLLOWER_AVOID_MS * 1_000_000);
          followerFallbacks.incrementAndGet();
        }
      }
    }
    return call(what, false, fn);
  }

  /** A read only the leader serves (its soft state, or its options): never spread. */
  public <T> T leaderRead(String what, Function<NamespaceServiceBlockingStub, T> fn) throws IOException {
    return call(what, false, fn);
  }

  /** The replica the next follower read goes to, skipping those left out; null if all are. */
  private String nextReader() {
    long now = System.nanoTime();
    for (int i = 0; i < addrs.size(); i++) {
      String a = addrs.get((int) Math.floorMod(nextReader.getAndIncrement(), (long) addrs.size()));
      Long until = avoid.get(a);
      if (until == null || now - until > 0) {
        return a;
      }
    }
    return null;
  }

  /** A stub at addr asking for a follower read, with half the attempt timeout (the leader has the rest). */
  private NamespaceServiceBlockingStub followerStub(String addr) {
    Metadata md = new Metadata();
    md.put(FOLLOWER_READ_KEY, "1");
    if (!security.token().isEmpty()) {
      md.put(AUTHORIZATION_KEY, "Bearer " + security.token());
    }
    NamespaceServiceBlockingStub stub = NamespaceServiceGrpc.newBlockingStub(channel(addr))
        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
    if (attemptTimeoutMs > 0) {
      stub = stub.withDeadlineAfter(Math.max(attemptTimeoutMs / 2, 1), TimeUnit.MILLISECONDS);
    }
    return stub;
  }

  /** A mutation: one request ID for all its attempts, so meta applies it once. */
  public <T> T mutate(String what, Function<NamespaceServiceBlockingStub, T> fn) throws IOException {
    return call(what, true, fn);
  }

  /**
   * A call to meta's AdminService (delegation tokens): retried as a read, or
   * with one request ID for all attempts when it is a mutation.
   */
  public <T> T admin(String what, boolean mutation, Function<AdminServiceBlockingStub, T> fn) throws IOException {
    return call(what, mutation, AdminServiceGrpc::newBlockingStub, fn);
  }

  private <T> T call(String what, boolean mutation, Function<NamespaceServiceBlockingStub, T> fn)
      throws IOException {
    return call(what, mutation, NamespaceServiceGrpc::newBlockingStub, fn);
  }

  private <S extends AbstractStub<S>, T> T call(String what, boolean mutation, Function<io.grpc.Channel, S> stubOf,
      Function<S, T> fn) throws IOException {
    Metadata md = null;
    if (mutation || !security.token().isEmpty()) {
      md = new Metadata();
    }
    if (!security.token().isEmpty()) {
      md.put(AUTHORIZATION_KEY, "Bearer " + security.token());
    }
    if (mutation) {
      md.put(CLIENT_KEY, clientId);
      md.put(REQUEST_KEY, Long.toString(seq.incrementAndGet()));
    }
    long start = System.nanoTime();
    long backoff = 50;
    int hops = 0;
    String addr = leader;
    while (true) {
      S stub = stubOf.apply(channel(addr));
      if (md != null) {
        stub = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
      }
      if (attemptTimeoutMs > 0) {
        stub = stub.withDeadlineAfter(attemptTimeoutMs, TimeUnit.MILLISECONDS);
      }
      StatusRuntimeException err;
      try {
        T out = fn.apply(stub);
        answered = true;
        leader = addr;
        return out;
      } catch (StatusRuntimeException e) {
        err = e;
      }
      Status.Code code = err.getStatus().getCode();
      ErrorInfo info = errorInfo(err);
      String reason = info == null ? "" : info.getReason();
      ErrorReason why = MetaException.reasonOf(reason);
      long elapsedMs = (System.nanoTime() - start) / 1_000_000;
      boolean refused = code == Status.Code.UNAVAILABLE && isRefused(err);
      Throwable handshake = tlsFailure(err);
      if (handshake != null) {
        // Retrying cannot help: the client does not trust meta (or meta
        // does not speak TLS, or speaks it and the client does not).
        throw new MetaException(code, null, "strato: " + what + ": TLS with meta at " + addr + " failed ("
            + (security.tls() ? "does the client trust the cluster's CA? see fs.strato.tls.ca" : "meta requires TLS? see fs.strato.tls.ca")
            + "): " + handshake, err);
      }
      if (!refused) {
        answered = true;
      }
      if (why == ErrorReason.NOT_LEADER) {
        String hint = info.getMetadataOrDefault("leader", "");
        if (!hint.isEmpty() && !hint.equals(addr) && hops++ < 2 * addrs.size() + 2) {
          if (!addrs.contains(hint)) {
            addrs.add(hint);
          }
          addr = hint;
          leader = hint;
          continue;
        }
        // No leader known (an election): wait and try the next replica.
      } else if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED) {
        // Not performed (refused), performed once at most (a request ID), a
        // read, or safe mode: all safe to send again.
        if (code == Status.Code.UNAVAILABLE) {
          // A replica that could not be reached is tried again on the next
          // call to it, not after gRPC's backoff (up to 2 minutes after a
          // long outage; decision 0111). The loop's own pause bounds the
          // attempts to one a second.
          channel(addr).resetConnectBackoff();
        }
        if (refused && !answered && elapsedMs >= REFUSED_TIMEOUT_MS) {
          throw new MetaException(Status.Code.UNAVAILABLE, null,
              "strato: no meta replica answered at " + String.join(",", addrs) + " within "
                  + REFUSED_TIMEOUT_MS + " ms: " + err.getStatus().getDescription(), err);
        }
      } else {
        throw toException(what, err, code, reason);
      }
      if (elapsedMs >= retryMs) {
        throw toException(what + " (meta unavailable for " + elapsedMs + " ms)", err, code, reason);
      }
      if (why != ErrorReason.SAFE_MODE) {
        addr = next(addr);
      }
      hops = 0;
      try {
        Thread.sleep(backoff);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("strato: " + what + " interrupted");
      }
      backoff = Math.min(2 * backoff, 1000);
    }
  }

  /** The TLS handshake failure in e's causes, or null. */
  private static Throwable tlsFailure(StatusRuntimeException e) {
    for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
      if (t instanceof javax.net.ssl.SSLException) {
        return t;
      }
    }
    return null;
  }

  private String next(String addr) {
    int i = addrs.indexOf(addr);
    return addrs.get((i + 1) % addrs.size());
  }

  private static boolean isRefused(StatusRuntimeException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String m = t.getMessage();
      if (m != null && m.toLowerCase().contains("connection refused")) {
        return true;
      }
    }
    return false;
  }

  static ErrorInfo errorInfo(StatusRuntimeException e) {
    com.google.rpc.Status st = StatusProto.fromThrowable(e);
    if (st == null) {
      return null;
    }
    for (Any d : st.getDetailsList()) {
      if (d.is(ErrorInfo.class)) {
        try {
          ErrorInfo info = d.unpack(ErrorInfo.class);
          if (info.getDomain().equals(DOMAIN)) {
            return info;
          }
        } catch (InvalidProtocolBufferException ignored) {
          // not ours
        }
      }
    }
    return null;
  }

  private static MetaException toException(String what, StatusRuntimeException e, Status.Code code, String reason) {
    String desc = e.getStatus().getDescription();
    return new MetaException(code, MetaException.reasonOf(reason), "strato: " + what + ": " + code
        + (reason.isEmpty() ? "" : " " + reason) + (desc == null ? "" : ": " + desc), e);
  }

  @Override
  public void close() {
    for (ManagedChannel c : channels.values()) {
      c.shutdown();
    }
    for (ManagedChannel c : channels.values()) {
      try {
        if (!c.awaitTermination(2, TimeUnit.SECONDS)) {
          c.shutdownNow();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        c.shutdownNow();
      }
    }
    channels.clear();
  }
}
