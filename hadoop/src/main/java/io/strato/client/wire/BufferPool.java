package io.strato.client.wire;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Direct buffers for READ_CHUNK payloads, reused across responses: the data
 * connection's reader thread reads a payload from the socket straight into
 * one (no copy through a temporary buffer, no zeroed array per response),
 * the reader verifies its checksums there and copies the bytes out, then
 * gives it back. Buffers come in size classes of 1 MiB (64 KiB below that);
 * at most {@link #MAX_POOLED} bytes wait here, the rest are left to the
 * garbage collector. A buffer not given back is simply collected.
 */
public final class BufferPool {
  /** Bytes the pool keeps at most. */
  static final long MAX_POOLED = 96L << 20;

  private static final ConcurrentHashMap<Integer, ConcurrentLinkedDeque<ByteBuffer>> FREE = new ConcurrentHashMap<>();
  private static final AtomicLong POOLED = new AtomicLong();

  private BufferPool() {}

  private static int sizeClass(int n) {
    int unit = n <= (1 << 20) ? 64 << 10 : 1 << 20;
    return (int) (((long) n + unit - 1) / unit * unit);
  }

  /** A direct buffer of at least n bytes, its position 0 and limit n. */
  public static ByteBuffer take(int n) {
    int c = Math.max(sizeClass(n), 64 << 10);
    ConcurrentLinkedDeque<ByteBuffer> q = FREE.get(c);
    ByteBuffer b = q == null ? null : q.pollFirst();
    if (b != null) {
      POOLED.addAndGet(-b.capacity());
    } else {
      b = ByteBuffer.allocateDirect(c);
    }
    b.clear().limit(n);
    return b;
  }

  /** Gives a buffer from {@link #take} back; it must not be used after. */
  public static void give(ByteBuffer b) {
    if (b == null || !b.isDirect() || b.capacity() != sizeClass(b.capacity())) {
      return;
    }
    if (POOLED.addAndGet(b.capacity()) > MAX_POOLED) {
      POOLED.addAndGet(-b.capacity());
      return;
    }
    FREE.computeIfAbsent(b.capacity(), k -> new ConcurrentLinkedDeque<>()).addFirst(b);
  }
}
