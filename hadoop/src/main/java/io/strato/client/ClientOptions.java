package io.strato.client;

import java.util.List;

/**
 * Options of a {@link StratoClient}; every field has its default. The
 * Hadoop connector fills them from fs.strato.* (docs/hadoop.md).
 */
public final class ClientOptions {
  /** Meta replicas' gRPC addresses (host:port). Required. */
  public List<String> meta = List.of();
  /** Size of the chunks a writer sends (default 4 MiB; at most 32 MiB). */
  public int chunkSize = 4 << 20;
  /**
   * Chunks a writer has sent and not yet seen acknowledged by every replica (default 16): the
   * first {@link #OWN_CHUNKS_IN_FLIGHT} its own, each one beyond with a slot of
   * {@link #sharedWindowBytes} while it is in flight.
   */
  public int maxChunksInFlight = 16;
  /** Chunks in flight each writer may have without a slot of the shared window. */
  public static final int OWN_CHUNKS_IN_FLIGHT = 4;
  /**
   * Bytes of the chunks in flight beyond each writer's first {@link #OWN_CHUNKS_IN_FLIGHT}, over
   * all of the client's writers, in slots of chunkSize (default 128 MiB; 0: none beyond them). A
   * chunk goes whole from hop to hop, so its round trip holds several of its disk writes' times,
   * and a writer with more chunks in flight keeps every replica's disk busy.
   */
  public long sharedWindowBytes = 128L << 20;
  /** Bytes of chunk buffers the client's writers keep for reuse between chunks and keys (default 64 MiB). */
  public long chunkPoolBytes = 64L << 20;
  /** Bound of one attempt of a meta call at one replica (default 10 s; 0: none). */
  public long metaAttemptTimeoutMs = 10_000;
  /** How long meta calls retry while meta is unavailable (default 60 s). */
  public long metaRetryMs = 60_000;
  /**
   * Spread meta reads (lookups, status, listings) over every meta replica,
   * each served linearizably by a follower (default false: all to the leader).
   */
  public boolean metaFollowerReads = false;
  /** Connect timeout of a data connection (default 5 s). */
  public int dataConnectTimeoutMs = 5_000;
  /** How long a datanode may take to answer one request before it counts as failed (default 120 s). */
  public long dataRequestTimeoutMs = 120_000;
  /** Reads kept in flight ahead of a sequential reader (default 4 pieces of chunkSize). */
  public int readAhead = 4;
  /** Bytes of read buffers (READ_CHUNK payloads, local reads) the client keeps for reuse (default 96 MiB). */
  public long readPoolBytes = io.strato.client.wire.BufferPool.DEFAULT_MAX_BYTES;
  /**
   * Read the replicas of datanodes on this host from their block files
   * (READ_LOCAL_PATHS, docs/wire.md §5.12) rather than over TCP (default
   * true; with TLS too).
   */
  public boolean localReads = true;
  /** Recorded as the owner of what the client creates (default "strato"). */
  public String owner = "strato";
  /** TLS (the cluster CA) and the token sent to meta (default: neither). */
  public Security security = Security.none();

  public void validate() {
    if (meta.isEmpty()) {
      throw new IllegalArgumentException("strato: no meta address given");
    }
    if (chunkSize <= 0 || chunkSize > 32 << 20) {
      throw new IllegalArgumentException("strato: chunk size " + chunkSize + " outside 1 byte .. 32 MiB (the data protocol's limit)");
    }
    if (readPoolBytes < 0) {
      throw new IllegalArgumentException("strato: read pool bytes must not be negative, got " + readPoolBytes);
    }
    if (chunkPoolBytes < 0) {
      throw new IllegalArgumentException("strato: chunk pool bytes must not be negative, got " + chunkPoolBytes);
    }
    if (sharedWindowBytes < 0) {
      throw new IllegalArgumentException("strato: shared window bytes must not be negative, got " + sharedWindowBytes);
    }
    if (maxChunksInFlight < 1) {
      throw new IllegalArgumentException("strato: chunks in flight must be at least 1, got " + maxChunksInFlight);
    }
  }
}
