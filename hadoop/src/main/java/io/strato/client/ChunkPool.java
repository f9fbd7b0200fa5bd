package io.strato.client;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The chunk buffers of one client's writers, reused from one key to the next:
 * a writer fills a buffer of chunkSize bytes, sends it, and gives it back once
 * a commit covers it, and the next chunk of any writer of the client takes it.
 * A 4 MiB array is a humongous object to the JVM's G1 collector, so a new one
 * per chunk costs collections as well as zeroing. At most maxBytes wait here
 * (ClientOptions.chunkPoolBytes); a buffer given back beyond that, or never
 * given back, is left to the garbage collector.
 */
final class ChunkPool {
  private final int size;
  private final long maxBytes;
  private final ConcurrentLinkedDeque<byte[]> free = new ConcurrentLinkedDeque<>();
  private final AtomicLong pooled = new AtomicLong();
  private final AtomicLong allocated = new AtomicLong();

  ChunkPool(int size, long maxBytes) {
    this.size = size;
    this.maxBytes = maxBytes;
  }

  /** A buffer of size bytes, its contents undefined. */
  byte[] take() {
    byte[] b = free.pollFirst();
    if (b != null) {
      pooled.addAndGet(-b.length);
      return b;
    }
    allocated.incrementAndGet();
    return new byte[size];
  }

  /** Gives back a buffer from take; the caller must not use it after. */
  void give(byte[] b) {
    if (b == null || b.length != size) {
      return;
    }
    if (pooled.addAndGet(b.length) > maxBytes) {
      pooled.addAndGet(-b.length);
      return;
    }
    free.addFirst(b);
  }

  /** Bytes waiting in the pool. */
  long pooledBytes() {
    return pooled.get();
  }

  /** Buffers take has allocated because the pool was empty. */
  long allocated() {
    return allocated.get();
  }
}
