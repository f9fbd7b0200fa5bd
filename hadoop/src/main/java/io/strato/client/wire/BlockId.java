package io.strato.client.wire;

/** A block: (containerID u64, localID u64), docs/wire.md §3.1. */
public record BlockId(long containerId, long localId) {
  @Override
  public String toString() {
    return Long.toUnsignedString(containerId) + "/" + Long.toUnsignedString(localId);
  }
}
