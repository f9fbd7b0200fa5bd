package io.strato.client.wire;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Direct buffers for READ_CHUNK payloads and local reads, reused across
 * responses: a data connection's reader thread reads a payload from the
 * socket straight into one (no copy through a temporary buffer, no zeroed
 * array per response), the reader verifies its checksums there and copies
 * the bytes out, then gives it back. Buffers come in size classes of 1 MiB
 * (64 KiB below that); at most maxBytes wait here (ClientOptions.readPoolBytes),
 * the rest are left to the garbage collector. A buffer not given back is
 * simply collected. One pool serves a client's connections (DataConns).
 */
public final class BufferPool {
  /** Bytes a pool keeps at most unless told otherwise. */
  public static final long DEFAULT_MAX_BYTES = 96L << 20;

  private final long maxBytes;
  private final ConcurrentHashMap<Integer, ConcurrentLinkedDeque<ByteBuffer>> free = new ConcurrentHashMap<>();
  private final AtomicLong pooled = new AtomicLong();

  public BufferPool(long maxBytes) {
    this.maxBytes = maxBytes;
  }

  private static int sizeClass(int n) {
    int unit = n <= (1 << 20) ? 64 << 10 : 1 << 20;
    return (int) (((long) n + unit - 1) / unit * unit);
  }

  /** A direct buffer of at least n bytes, its position 0 and limit n. */
  public ByteBuffer take(int n) {
    int c = Math.max(sizeClass(n), 64 << 10);
    ConcurrentLinkedDeque<ByteBuffer> q = free.get(c);
    ByteBuffer b = q == null ? null : q.pollFirst();
    if (b != null) {
      pooled.addAndGet(-b.capacity());
    } else {
      b = ByteBuffer.allocateDirect(c);
    }
    b.clear().limit(n);
    return b;
  }

  /** Gives a buffer from {@link #take} back; it must not be used after. */
  public void give(ByteBuffer b) {
    if (b == null || !b.isDirect() || b.capacity() != sizeClass(b.capacity())) {
      return;
    }
    if (pooled.addAndGet(b.capacity()) > maxBytes) {
      pooled.addAndGet(-b.capacity());
      return;
    }
    free.computeIfAbsent(b.capacity(), k -> new ConcurrentLinkedDeque<>()).addFirst(b);
  }

  /** Bytes waiting in the pool. */
  public long pooledBytes() {
    return pooled.get();
  }

  public long maxBytes() {
    return maxBytes;
  }
}
