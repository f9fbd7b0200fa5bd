package io.strato.client.wire;

import java.io.Closeable;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One pipelined connection per datanode address, dialed on first use and
 * again after it broke. Safe for concurrent use.
 */
public final class DataConns implements Closeable {
  private final Map<String, DataConn> conns = new ConcurrentHashMap<>();
  private final Map<String, Object> locks = new ConcurrentHashMap<>();
  private final int connectTimeoutMs;
  private final long requestTimeoutMs;
  private final String clientId;
  private final javax.net.ssl.SSLContext ssl;
  /** Local reads are tried (READ_LOCAL_PATHS); addresses where they failed rest in noLocal. */
  private final boolean localReads;
  /** Addresses not to try local reads on again before the time (ms) given. */
  private final Map<String, Long> noLocal = new ConcurrentHashMap<>();
  private volatile boolean closed;
  /** The buffers of READ_CHUNK payloads and local reads, shared by the connections. */
  private final BufferPool pool;

  /** How long an address whose local read failed is read over TCP only. */
  static final long NO_LOCAL_MS = 30_000;

  /**
   * With ssl (not null), every connection is TLS (docs/wire.md, §7); with
   * localReads, replicas on this host are read from their files (with TLS
   * too: the datanode that names them has shown its certificate). At most
   * readPoolBytes of read buffers wait for reuse.
   */
  public DataConns(int connectTimeoutMs, long requestTimeoutMs, String clientId, javax.net.ssl.SSLContext ssl,
      boolean localReads, long readPoolBytes) {
    this.connectTimeoutMs = connectTimeoutMs;
    this.requestTimeoutMs = requestTimeoutMs;
    this.clientId = clientId;
    this.ssl = ssl;
    this.localReads = localReads;
    this.pool = new BufferPool(readPoolBytes);
  }

  /** The read buffers of this client's connections and local reads. */
  public BufferPool pool() {
    return pool;
  }

  /** Whether to ask c (a connection of this pool) for a local read. */
  public boolean readLocally(DataConn c) {
    if (!localReads || !c.sameHost()) {
      return false;
    }
    Long until = noLocal.get(c.address());
    if (until == null) {
      return true;
    }
    if (System.currentTimeMillis() < until) {
      return false;
    }
    noLocal.remove(c.address(), until);
    return true;
  }

  /** Reads at addr go over TCP for a while: a local read there failed for a reason of this host's. */
  public void noLocalReads(String addr) {
    noLocal.put(addr, System.currentTimeMillis() + NO_LOCAL_MS);
  }

  public long requestTimeoutMs() {
    return requestTimeoutMs;
  }

  /**
   * The connection to addr, on which token (a block token, or empty) has
   * been presented: what every request for a block goes through.
   */
  public DataConn get(String addr, byte[] token) throws IOException {
    DataConn c = get(addr);
    c.authorize(token, requestTimeoutMs);
    return c;
  }

  public DataConn get(String addr) throws IOException {
    if (closed) {
      throw new IOException("strato: client closed");
    }
    DataConn c = conns.get(addr);
    if (c != null && !c.isBroken()) {
      return c;
    }
    synchronized (locks.computeIfAbsent(addr, a -> new Object())) {
      c = conns.get(addr);
      if (c != null && !c.isBroken()) {
        return c;
      }
      c = DataConn.dial(addr, connectTimeoutMs, requestTimeoutMs, clientId, ssl, pool);
      conns.put(addr, c);
      if (closed) {
        c.close();
        throw new IOException("strato: client closed");
      }
      return c;
    }
  }

  @Override
  public void close() {
    closed = true;
    for (DataConn c : conns.values()) {
      c.close();
    }
    conns.clear();
  }
}
