package io.strato.client;

import com.google.protobuf.ByteString;
import io.strato.client.wire.BlockId;
import io.strato.client.wire.Checksums;
import io.strato.client.wire.DataConn;
import io.strato.client.wire.Messages;
import io.strato.client.wire.Messages.PutBlockRequest;
import io.strato.client.wire.Messages.WriteChunkRequest;
import io.strato.client.wire.Messages.WriteCommitRequest;
import io.strato.client.wire.Wire;
import io.strato.client.wire.WireException;
import io.strato.proto.v1.AllocateBlockRequest;
import io.strato.proto.v1.BlockLocation;
import io.strato.proto.v1.ChecksumType;
import io.strato.proto.v1.CommitKeyRequest;
import io.strato.proto.v1.DatanodeDetails;
import io.strato.proto.v1.ExcludeList;
import io.strato.proto.v1.KeyInfo;
import io.strato.proto.v1.OpenKeyResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one key, as the Go client's Writer does (client/writer.go): full
 * chunks go to the block's pipeline leader with the other replicas as
 * followers (docs/wire.md §5.2), several in flight; every {@value #FLUSH_CHUNKS}
 * acknowledged chunks a PUT_BLOCK commits the block's length on every
 * replica, and a chunk stays buffered until committed. When a write or a
 * commit fails, the writer has meta close the container (and the pipeline,
 * when a datanode failed), ends the block at its committed length, continues
 * in a new block allocated without the failed datanode, and sends every
 * uncommitted chunk again. hflush publishes the length in meta; hsync also
 * fsyncs every replica; close commits the key. An erasure coded key is
 * written in block groups by a StripedWriter instead (no hflush or hsync).
 *
 * <p>Not safe for concurrent use.
 */
public final class KeyWriter extends OutputStream {
  private static final Logger LOG = LoggerFactory.getLogger(KeyWriter.class);

  /** Acknowledged chunks that trigger a PUT_BLOCK (Ozone's stream buffer flush size). */
  static final int FLUSH_CHUNKS = 4;
  static final int MAX_RECOVERIES = 8;
  static final int MAX_CLOSURES = 64;
  /** Recoveries from a datanode's ACCESS_DENIED (block tokens). */
  static final int MAX_DENIALS = 2;

  /** Opens (or re-opens) the key; sizeHint -1 asks for a deferrable open. */
  @FunctionalInterface
  interface Opener {
    OpenKeyResponse open(long sizeHint) throws IOException;
  }

  private static final class ChunkSend {
    final long off;
    final byte[] data;
    final int len;
    final Checksums sums;
    CompletableFuture<DataConn.Response> f;
    DataConn conn;
    IOException res;
    boolean got;

    ChunkSend(long off, byte[] data, int len, Checksums sums) {
      this.off = off;
      this.data = data;
      this.len = len;
      this.sums = sums;
    }

    IOException await(long timeoutMs) {
      if (!got) {
        try {
          DataConn.await(f, timeoutMs, conn);
        } catch (IOException e) {
          res = e;
        }
        got = true;
      }
      return res;
    }
  }

  private final StratoClient c;
  private final String volume;
  private final String bucket;
  private final String key;
  private final Opener reopen;
  private long openId;
  private ByteString token;
  private final byte ctype;
  private final int bpc;
  private final long blockSize;
  private final int chunkSize;

  private final Deque<BlockLocation> spare = new ArrayDeque<>();
  private final List<Blk> blocks = new ArrayList<>();
  private Blk cur;
  private long curLen;
  private long committed;
  private byte[] buf;
  private int bufLen;
  /** The checksums of buf's windows, computed as they fill (sumFilled): bufSummed bytes so far. */
  private byte[] bufSums;
  private int bufSummed;
  private final List<ChunkSend> pending = new ArrayList<>();
  private int nAcked;
  /** The shared window's slots this writer holds: never more than its chunks in flight beyond its own. */
  private int slots;
  /** The PUT_BLOCK committing acknowledged chunks of cur up to commitLen, while in flight; null otherwise. */
  private CompletableFuture<DataConn.Response> commitF;
  private DataConn commitConn;
  private long commitLen;
  private final List<Blk> unsynced = new ArrayList<>();
  private final ExcludeList.Builder exclude = ExcludeList.newBuilder();
  private int failures;
  private int closures;
  private int denials;
  private IOException err;
  private boolean closed;
  private long written;
  private final long appendOffset;
  /** The erasure coded key's writer; null for a replicated key. */
  private final StripedWriter striped;

  KeyWriter(StratoClient c, String volume, String bucket, String key, OpenKeyResponse resp, Opener reopen) {
    this.c = c;
    this.volume = volume;
    this.bucket = bucket;
    this.key = key;
    this.reopen = reopen;
    this.openId = resp.getOpenId();
    this.token = resp.getCreateToken().isEmpty() ? null : resp.getCreateToken();
    this.ctype = wireChecksumType(resp.getChecksumType());
    this.bpc = resp.getBytesPerChecksum() > 0 ? resp.getBytesPerChecksum() : 16 << 10;
    this.blockSize = resp.getBlockSize() > 0 ? resp.getBlockSize() : 256L << 20;
    this.chunkSize = c.opts.chunkSize;
    this.spare.addAll(resp.getBlocksList());
    this.appendOffset = resp.getAppendOffset();
    this.striped = resp.hasErasureCoding() ? new StripedWriter(this, c, ErasureCode.of(resp.getErasureCoding()),
        blockSize, ctype, bpc) : null;
    // An append's first hsync fsyncs the file's blocks too: it promises
    // every byte before it, and the file's writers may have closed it
    // without one (a synced PUT_BLOCK of a held block writes nothing).
    for (io.strato.proto.v1.BlockLocation bl : resp.getBaseBlocksList()) {
      if (bl.getLength() > 0) {
        unsynced.add(new Blk(bl));
      }
    }
  }

  /** The file's length when append opened it: where this writer's bytes start (0 after create). */
  public long appendOffset() {
    return appendOffset;
  }

  /** The data protocol's checksum type for the API's (docs/api.md vs docs/wire.md §3.2). */
  static byte wireChecksumType(ChecksumType t) {
    switch (t) {
      case CHECKSUM_NONE:
        return Checksums.NONE;
      case CHECKSUM_CRC32:
        return Checksums.CRC32;
      case CHECKSUM_SHA256:
        return Checksums.SHA256;
      case CHECKSUM_MD5:
        return Checksums.MD5;
      default:
        return Checksums.CRC32C;
    }
  }

  String name() {
    return "/" + volume + "/" + bucket + "/" + key;
  }

  /** Whether the key is erasure coded (written in block groups, without hflush or hsync). */
  public boolean erasureCoded() {
    return striped != null;
  }

  /** The block size meta gave the key. */
  public long blockSize() {
    return blockSize;
  }

  /** Bytes accepted by write so far. */
  public long written() {
    return written;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] p, int off, int len) throws IOException {
    check();
    if (striped != null) {
      try {
        striped.write(p, off, len);
      } catch (IOException e) {
        err = e;
        throw e;
      }
      written += len;
      return;
    }
    while (len > 0) {
      if (buf == null) {
        buf = c.chunks.take();
        bufLen = 0;
        bufSummed = 0;
      }
      int limit = chunkLimit();
      int k = Math.min(limit - bufLen, len);
      System.arraycopy(p, off, buf, bufLen, k);
      bufLen += k;
      off += k;
      len -= k;
      written += k;
      sumFilled();
      if (bufLen == limit) {
        sendBuf();
      }
    }
  }

  private void check() throws IOException {
    if (closed) {
      throw new IOException("strato: " + name() + ": stream closed");
    }
    if (err != null) {
      throw err;
    }
  }

  /** The size at which the chunk being filled is sent: a chunk, or what is left of the current block. */
  private int chunkLimit() {
    long left = blockSize;
    if (cur != null && curLen < blockSize) {
      left = blockSize - curLen;
    }
    return (int) Math.min(chunkSize, left);
  }

  /**
   * Computes the checksums of the windows of buf filled since the last call. The bytes were just
   * copied in and are still in the CPU's cache; summed when the 4 MiB chunk is sent, they would be
   * read from memory again.
   */
  private void sumFilled() {
    sumTo(bufLen - bufLen % bpc);
  }

  /** Computes the checksums of buf's windows up to byte to (a window boundary, or bufLen). */
  private void sumTo(int to) {
    if (ctype == Checksums.NONE || to <= bufSummed) {
      return;
    }
    if (bufSums == null) {
      bufSums = new byte[Checksums.windows(chunkSize, bpc) * Checksums.size(ctype)];
    }
    Checksums.computeInto(ctype, bpc, buf, bufSummed, to - bufSummed, bufSums, bufSummed / bpc);
    bufSummed = to;
  }

  /** The checksums of buf's bytes, its last window included: the list its chunk is sent with. */
  private Checksums bufChecksums() {
    if (ctype == Checksums.NONE) {
      return Checksums.EMPTY_NONE;
    }
    sumTo(bufLen);
    return new Checksums(ctype, bpc, Arrays.copyOf(bufSums, Checksums.windows(bufLen, bpc) * Checksums.size(ctype)));
  }

  private void sendBuf() throws IOException {
    if (buf == null || bufLen == 0) {
      return;
    }
    Checksums sums = bufChecksums();
    byte[] d = buf;
    int n = bufLen;
    buf = null;
    bufLen = 0;
    try {
      send(d, n, sums);
    } catch (IOException e) {
      err = e;
      throw e;
    }
  }

  /**
   * Sends the buffered end of the file. When everything sent to the current block before it is
   * committed (always for a file of one chunk), the chunk and the block's final commit travel as
   * one WRITE_COMMIT (docs/wire.md §5.10): one round trip through the pipeline instead of two.
   * Otherwise, or after a failure (recover resends it to a new block), commitBlock commits it.
   */
  private void sendLast() throws IOException {
    if (buf == null || bufLen == 0) {
      return;
    }
    if (!pending.isEmpty() || commitF != null || (cur != null && curLen + bufLen > blockSize)) {
      sendBuf();
      return;
    }
    Checksums sums = bufChecksums();
    byte[] d = buf;
    int n = bufLen;
    buf = null;
    bufLen = 0;
    try {
      if (cur == null) {
        nextBlock();
      }
      Blk bl = cur;
      ChunkSend cs = new ChunkSend(curLen, d, n, sums);
      curLen += n;
      try {
        cs.conn = c.data.get(bl.leader(), bl.token);
        cs.f = cs.conn.writeCommit(new WriteCommitRequest(bl.id, cs.off, n, sums,
            Messages.PUT_BLOCK_FINAL, bl.followers()), d, 0, n);
      } catch (IOException e) {
        cs.f = CompletableFuture.failedFuture(e);
      }
      IOException e = cs.await(c.data.requestTimeoutMs());
      if (e == null) {
        c.chunks.give(d);
        blockCommitted(true, false);
        return;
      }
      pending.add(cs);
      recover(e);
    } catch (IOException e) {
      err = e;
      throw e;
    }
  }

  /**
   * Sends one chunk to the current block (starting one if needed), keeping its chunks in flight
   * within its window (mayFly).
   */
  private void send(byte[] data, int len, Checksums sums) throws IOException {
    if (cur == null || curLen + len > blockSize) {
      nextBlock();
    }
    ChunkSend cs = new ChunkSend(curLen, data, len, sums);
    curLen += len;
    pending.add(cs);
    transmit(cur, cs);
    while (!mayFly()) {
      waitNext();
      // The commit runs while later chunks go on: the writer waits for it only when
      // twice FLUSH_CHUNKS acknowledged chunks are still uncommitted.
      pollCommit(nAcked >= 2 * FLUSH_CHUNKS);
      if (commitF == null && nAcked >= FLUSH_CHUNKS) {
        commitAcked();
      }
    }
    pollCommit(false);
  }

  /**
   * Whether the chunks in flight are within the writer's window: its own
   * ClientOptions.OWN_CHUNKS_IN_FLIGHT, and up to maxChunksInFlight with a slot of the client's
   * shared window for each one beyond (taken here as needed).
   */
  private boolean mayFly() {
    int n = pending.size() - nAcked;
    if (n <= ownChunks() + slots) {
      return true;
    }
    if (n <= c.opts.maxChunksInFlight && c.takeSlot()) {
      slots++;
      return true;
    }
    return false;
  }

  /** The chunks the writer may have in flight without slots. */
  private int ownChunks() {
    return Math.min(ClientOptions.OWN_CHUNKS_IN_FLIGHT, c.opts.maxChunksInFlight);
  }

  /** Gives back the slots the chunks in flight no longer need. */
  private void landed() {
    int n = Math.max(pending.size() - nAcked - ownChunks(), 0);
    if (slots > n) {
      c.giveSlots(slots - n);
      slots = n;
    }
  }

  private void transmit(Blk bl, ChunkSend cs) {
    try {
      cs.conn = c.data.get(bl.leader(), bl.token);
      BlockId id = bl.id;
      long off = cs.off;
      int len = cs.len;
      byte[] data = cs.data;
      List<String> followers = bl.followers();
      Checksums sums = cs.sums;
      cs.f = cs.conn.writeChunk(() -> new WriteChunkRequest(id, off, len, sums, followers), data, 0, len);
    } catch (IOException e) {
      cs.f = CompletableFuture.failedFuture(e);
    }
  }

  /** Waits for the oldest unacknowledged chunk, recovering from a pipeline failure. */
  private void waitNext() throws IOException {
    IOException e = pending.get(nAcked).await(c.data.requestTimeoutMs());
    if (e != null) {
      recover(e);
      return;
    }
    nAcked++;
    landed();
  }

  private void waitAll() throws IOException {
    while (nAcked < pending.size()) {
      waitNext();
    }
  }

  /** Starts the PUT_BLOCK that commits the acknowledged chunks; pollCommit takes its answer. */
  private void commitAcked() {
    ChunkSend last = pending.get(nAcked - 1);
    commitLen = last.off + last.len;
    try {
      commitConn = c.data.get(cur.leader(), cur.token);
      commitF = commitConn.putBlock(new PutBlockRequest(cur.id, commitLen, 0, cur.followers()));
    } catch (IOException e) {
      commitConn = null;
      commitF = CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Takes the answer to the commit in flight, if any (waiting for it when
   * block is set, or when it is there already): releases the chunks it
   * covers, or recovers when it failed.
   */
  private void pollCommit(boolean block) throws IOException {
    if (commitF == null || (!block && !commitF.isDone())) {
      return;
    }
    IOException e = takeCommit();
    if (e != null) {
      recover(e);
    }
  }

  /**
   * Waits for the commit in flight and forgets it: releases the chunks it
   * covers, or returns its failure.
   */
  private IOException takeCommit() {
    CompletableFuture<DataConn.Response> f = commitF;
    commitF = null;
    try {
      DataConn.await(f, c.data.requestTimeoutMs(), commitConn);
    } catch (IOException e) {
      return e;
    }
    released(commitLen);
    return null;
  }

  /** Drops the pending chunks a commit of length covers. */
  private void released(long length) {
    committed = length;
    cur.length = length;
    int k = 0;
    while (k < nAcked && pending.get(k).off + pending.get(k).len <= length) {
      c.chunks.give(pending.get(k).data);
      k++;
    }
    pending.subList(0, k).clear();
    nAcked -= k;
  }

  private void putBlock(long length, boolean fin, boolean sync) throws IOException {
    int flags = (fin ? Messages.PUT_BLOCK_FINAL : 0) | (sync ? Messages.PUT_BLOCK_SYNC : 0);
    DataConn conn = c.data.get(cur.leader(), cur.token);
    DataConn.await(conn.putBlock(new PutBlockRequest(cur.id, length, flags, cur.followers())),
        c.data.requestTimeoutMs(), conn);
  }

  /**
   * Handles a failed write or commit of the current block: ends it at its
   * committed length and sends every uncommitted chunk again to a new block.
   */
  private void recover(IOException cause) throws IOException {
    if (commitF != null) {
      // The commit in flight: what it committed need not be sent again.
      IOException e = takeCommit();
      if (e != null) {
        LOG.debug("strato: the commit of {} at {} failed too: {}", name(), commitLen, e.toString());
      }
    }
    for (ChunkSend cs : pending) {
      IOException e = cs.await(c.data.requestTimeoutMs());
      if (e != null && e != cause) {
        LOG.debug("strato: a pending chunk of {} at {} failed too: {}", name(), cs.off, e.toString());
      }
    }
    List<ChunkSend> redo = new ArrayList<>(pending);
    pending.clear();
    nAcked = 0;
    landed();
    Set<String> failed = failedNodes(cur, cause);
    if (!failed.isEmpty()) {
      failures++;
    } else {
      closures++;
    }
    if (cause instanceof WireException && ((WireException) cause).code() == Wire.ACCESS_DENIED
        && ++denials > MAX_DENIALS) {
      // The block's token expired, or a datanode restarted and has not heard from meta yet: a
      // new block brings a new token. Anything more is not going to pass.
      throw new IOException("strato: writing " + name() + ": " + cause.getMessage(), cause);
    }
    if (failures > MAX_RECOVERIES || closures > MAX_CLOSURES) {
      throw new IOException("strato: writing " + name() + ": giving up after " + failures
          + " datanode failures and " + closures + " closed containers: " + cause.getMessage(), cause);
    }
    LOG.warn("strato: pipeline failed, moving to a new block: key {} block {} committed {} resending {}: {}",
        name(), cur.id, committed, redo.size(), cause.toString());
    seal(failed);
    for (ChunkSend cs : redo) {
      send(cs.data, cs.len, cs.sums);
    }
  }

  /**
   * The datanodes of bl's pipeline that err blames (docs/wire.md, pipeline
   * errors): followers listed with a code about the node itself, or the
   * leader for its own such error or a broken connection. A replica refusing
   * the request (its container closed) is nobody's fault.
   */
  static Set<String> failedNodes(Blk bl, IOException err) {
    Set<String> failed = new HashSet<>();
    if (!(err instanceof WireException)) {
      if (!bl.members.isEmpty()) {
        failed.add(bl.members.get(0).getId());
      }
      return failed;
    }
    WireException we = (WireException) err;
    if (we.code() == Wire.PROTOCOL_ERROR && we.failed().isEmpty()) {
      // A malformed response: the connection to the leader is not to be trusted.
      if (!bl.members.isEmpty()) {
        failed.add(bl.members.get(0).getId());
      }
      return failed;
    }
    for (WireException.Failed f : we.failed()) {
      if (!Wire.nodeFault(f.code())) {
        continue;
      }
      for (DatanodeDetails m : bl.members) {
        if (m.getDataAddr().equals(f.address())) {
          failed.add(m.getId());
        }
      }
    }
    if (we.code() != Wire.FOLLOWER_FAILED && Wire.nodeFault(we.code()) && !bl.members.isEmpty()) {
      failed.add(bl.members.get(0).getId());
    }
    return failed;
  }

  /**
   * Ends the current block at its committed length (dropped from the key if
   * 0), finalising and fsyncing it on the surviving replicas; meta closes the
   * container, and later blocks avoid it, its pipeline and the failed datanodes.
   */
  private void seal(Set<String> failed) {
    Blk old = cur;
    long length = committed;
    cur = null;
    curLen = 0;
    committed = 0;
    old.length = length;
    if (length == 0) {
      blocks.remove(blocks.size() - 1);
    } else {
      syncOnEach(old, length, failed);
    }
    avoid(old, failed);
  }

  /**
   * Has meta close old's container, and later blocks avoid it, its pipeline
   * (when a datanode failed) and the failed datanodes.
   */
  void avoid(Blk old, Set<String> failed) {
    String failedId = "";
    for (String id : failed) {
      failedId = id;
      exclude.addDatanodes(id);
    }
    exclude.addContainers(old.id.containerId());
    if (!failed.isEmpty()) {
      exclude.addPipelines(old.pipelineId);
    }
    try {
      c.closeContainer(old.id.containerId(), failedId, "client write failed");
    } catch (IOException e) {
      LOG.warn("strato: asking meta to close container {} failed: {}", Long.toUnsignedString(old.id.containerId()),
          e.toString());
    }
  }

  private void openNow(long sizeHint) throws IOException {
    if (token == null) {
      return;
    }
    OpenKeyResponse resp;
    try {
      resp = reopen.open(sizeHint);
    } catch (IOException e) {
      throw rethrow("open", e);
    }
    openId = resp.getOpenId();
    token = null;
    spare.clear();
    spare.addAll(resp.getBlocksList());
  }

  private IOException rethrow(String step, IOException e) {
    if (e instanceof MetaException) {
      MetaException me = (MetaException) e;
      return new MetaException(me.code(), me.reason(), "strato: writing " + name() + ": " + step + ": "
          + e.getMessage(), e);
    }
    return new IOException("strato: writing " + name() + ": " + step + ": " + e.getMessage(), e);
  }

  /** Ends the current block and starts the next one. */
  private void nextBlock() throws IOException {
    if (cur != null) {
      commitBlock(true, false);
    }
    cur = allocateGroup();
    curLen = 0;
    committed = 0;
  }

  /**
   * The next block (or block group) of the key, of length 0, appended to its
   * blocks: a spare one meta gave at open, or a new one avoiding the failed.
   */
  Blk allocateGroup() throws IOException {
    openNow(blockSize);
    BlockLocation bl = null;
    while (!spare.isEmpty() && bl == null) {
      BlockLocation s = spare.pop();
      if (usable(s)) {
        bl = s;
      }
    }
    if (bl == null) {
      try {
        bl = c.meta.mutate("allocate a block for " + name(), s -> s.allocateBlock(AllocateBlockRequest.newBuilder()
            .setVolume(volume).setBucket(bucket).setKey(key).setOpenId(openId).setExclude(exclude.build())
            .setSizeHint(blockSize).build())).getBlock();
      } catch (IOException e) {
        throw rethrow("allocate a block", e);
      }
    }
    Blk b = new Blk(bl);
    b.length = 0;
    blocks.add(b);
    return b;
  }

  /** Drops the last block from the key (a group that failed before anything was committed). */
  void dropLastBlock() {
    blocks.remove(blocks.size() - 1);
  }

  private boolean usable(BlockLocation bl) {
    if (exclude.getContainersList().contains(bl.getBlockId().getContainerId())) {
      return false;
    }
    for (DatanodeDetails m : bl.getPipeline().getMembersList()) {
      if (exclude.getDatanodesList().contains(m.getId())) {
        return false;
      }
    }
    return true;
  }

  /**
   * Waits until every chunk sent is acknowledged and commits the current
   * block's length on every replica, moving to a new block as often as
   * failures require.
   */
  private void commitBlock(boolean fin, boolean sync) throws IOException {
    while (true) {
      pollCommit(true);
      waitAll();
      if (commitF != null) {
        continue; // a recovery in waitAll resent chunks and committed some
      }
      if (cur == null) {
        return;
      }
      if (curLen == 0) {
        if (fin) {
          blocks.remove(blocks.size() - 1);
          cur = null;
        }
        return;
      }
      if (committed == curLen && !fin && !sync) {
        return;
      }
      try {
        putBlock(curLen, fin, sync);
      } catch (IOException e) {
        recover(e);
        continue;
      }
      blockCommitted(fin, sync);
      return;
    }
  }

  /** Records that every replica committed the current block at curLen (fin: it ends; sync: fsynced too). */
  private void blockCommitted(boolean fin, boolean sync) {
    released(curLen);
    if (fin && !sync) {
      unsynced.add(cur);
    }
    if (fin) {
      cur = null;
      curLen = 0;
      committed = 0;
    }
  }

  private void flush(boolean sync) throws IOException {
    check();
    try {
      sendBuf();
      commitBlock(false, sync);
      if (sync) {
        syncEnded();
      }
      commit(true);
    } catch (IOException e) {
      err = e;
      throw e;
    }
  }

  /**
   * Fsyncs the blocks ended since the last hsync (ended at their full size
   * without an fsync): the pipeline together, or each replica alone; a
   * block counts as synced when at least one replica did.
   */
  private void syncEnded() throws IOException {
    while (!unsynced.isEmpty()) {
      Blk bl = unsynced.get(0);
      try {
        DataConn conn = c.data.get(bl.leader(), bl.token);
        DataConn.await(conn.putBlock(new PutBlockRequest(bl.id, bl.length,
            Messages.PUT_BLOCK_FINAL | Messages.PUT_BLOCK_SYNC, bl.followers())), c.data.requestTimeoutMs(), conn);
      } catch (IOException e) {
        if (syncOnEach(bl, bl.length, Set.of()) == 0) {
          throw new IOException("strato: writing " + name() + ": hsync: no replica of block " + bl.id
              + " synced it: " + e.getMessage(), e);
        }
      }
      unsynced.remove(0);
    }
  }

  /**
   * Finalises and fsyncs bl on each replica alone; returns how many have it durable at length (a
   * replica whose container is closing or closed answers too when it holds the block at length).
   */
  private int syncOnEach(Blk bl, long length, Set<String> failed) {
    int synced = 0;
    for (DatanodeDetails m : bl.members) {
      if (failed.contains(m.getId())) {
        continue;
      }
      try {
        DataConn conn = c.data.get(m.getDataAddr(), bl.token);
        DataConn.await(conn.putBlock(new PutBlockRequest(bl.id, length,
            Messages.PUT_BLOCK_FINAL | Messages.PUT_BLOCK_SYNC, List.of())), c.data.requestTimeoutMs(), conn);
        synced++;
      } catch (IOException e) {
        LOG.debug("strato: finalising block {} on {}: {}", bl.id, m.getId(), e.toString());
      }
    }
    return synced;
  }

  /** Makes what was written reach every replica and become visible to new readers. */
  public void hflush() throws IOException {
    refuseIfStriped("hflush");
    flush(false);
  }

  /** hflush, and every replica fsyncs the data first. */
  public void hsync() throws IOException {
    refuseIfStriped("hsync");
    flush(true);
  }

  /**
   * An erasure coded key has no hflush or hsync (docs/ec.md: parity covers
   * whole stripes), as the Go client's: UnsupportedOperationException, which
   * Hadoop's Syncable contract names for a stream that cannot.
   */
  private void refuseIfStriped(String op) {
    if (striped != null) {
      throw new UnsupportedOperationException("strato: " + name() + " is erasure coded: " + op
          + " is not supported on erasure coded files (it becomes visible at close; write logs with replication)");
    }
  }

  /** Java's flush: nothing (data moves in chunks; hflush publishes it). */
  @Override
  public void flush() throws IOException {
    if (err != null) {
      throw failedEarlier();
    }
  }

  /**
   * The sticky error, for a call after the one that failed: a new exception
   * with it as the cause (try-with-resources adds close's exception to the
   * write's as suppressed, and an exception cannot suppress itself).
   */
  private IOException failedEarlier() {
    return new IOException("strato: " + name() + ": the write failed earlier: " + err.getMessage(), err);
  }

  /** Sends what is buffered, commits the last block and commits the key. */
  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    if (err != null) {
      release();
      throw failedEarlier();
    }
    try {
      if (striped != null) {
        striped.close();
      } else {
        sendLast();
        commitBlock(true, false);
      }
      commit(false);
    } catch (IOException e) {
      err = e;
      throw e;
    } finally {
      release();
    }
  }

  /** Ends the writer without committing: nothing written becomes visible. */
  public void abort() {
    if (closed) {
      return;
    }
    closed = true;
    err = new IOException("strato: " + name() + ": stream aborted");
    release();
  }

  private void release() {
    if (commitF != null) {
      try {
        DataConn.await(commitF, c.data.requestTimeoutMs(), commitConn);
      } catch (IOException ignored) {
        // the writer is done either way
      }
      commitF = null;
    }
    c.chunks.give(buf); // never sent
    buf = null;
    for (ChunkSend cs : pending) {
      cs.await(c.data.requestTimeoutMs()); // may time out with the bytes still going out: not given back
    }
    pending.clear();
    nAcked = 0;
    landed();
  }

  /** Publishes the blocks in meta: for good, or (hsync) keeping the key open. */
  private void commit(boolean hsync) throws IOException {
    if (hsync) {
      openNow(0);
    }
    CommitKeyRequest.Builder req = CommitKeyRequest.newBuilder().setVolume(volume).setBucket(bucket).setKey(key)
        .setOpenId(openId).setHsync(hsync);
    for (Blk b : blocks) {
      req.addBlocks(b.toLocation());
    }
    if (token != null) {
      req.setCreateToken(token);
    }
    CommitKeyRequest r = req.build();
    try {
      c.meta.mutate("commit " + name(), s -> s.commitKey(r));
    } catch (MetaException e) {
      // A final commit whose first attempt went through and whose reply was
      // lost finds the open key gone: check that the key is ours.
      if (!hsync && openId != 0 && e.code() == io.grpc.Status.Code.NOT_FOUND) {
        try {
          KeyInfo ki = c.lookupKey(volume, bucket, key);
          if (ki.getObjectId() == openId) {
            return;
          }
        } catch (IOException ignored) {
          // the original error says more
        }
      }
      throw rethrow("commit", e);
    }
  }

  /** The ID of the block being written, or null (for tests). */
  BlockId currentBlock() {
    return cur == null ? null : cur.id;
  }
}
