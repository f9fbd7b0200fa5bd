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
  private volatile boolean closed;

  public DataConns(int connectTimeoutMs, long requestTimeoutMs, String clientId) {
    this(connectTimeoutMs, requestTimeoutMs, clientId, null);
  }

  /** With ssl (not null), every connection is TLS (docs/wire.md, §7). */
  public DataConns(int connectTimeoutMs, long requestTimeoutMs, String clientId, javax.net.ssl.SSLContext ssl) {
    this.connectTimeoutMs = connectTimeoutMs;
    this.requestTimeoutMs = requestTimeoutMs;
    this.clientId = clientId;
    this.ssl = ssl;
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
      c = DataConn.dial(addr, connectTimeoutMs, requestTimeoutMs, clientId, ssl);
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
