package io.strato.client.wire;

/** A chunk record (docs/wire.md §3.3): block offset, length, checksums of those bytes. */
public record ChunkRecord(long offset, int length, Checksums checksums) {}
