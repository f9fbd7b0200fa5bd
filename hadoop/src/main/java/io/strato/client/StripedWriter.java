package io.strato.client;

import io.strato.client.wire.Checksums;
import io.strato.client.wire.DataConn;
import io.strato.client.wire.Messages;
import io.strato.client.wire.Messages.PutBlockRequest;
import io.strato.client.wire.Messages.WriteChunkRequest;
import io.strato.client.wire.Wire;
import io.strato.client.wire.WireException;
import io.strato.proto.v1.DatanodeDetails;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes an erasure coded key in block groups, as the Go client's writer does
 * (client/ecwriter.go, docs/ec.md "Writing and reading erasure coded keys"):
 * a batch of up to {@value #BATCH_STRIPES} stripes is gathered member by
 * member (the bytes written go straight to their data member's buffer, cell
 * after cell); when it is full the parity cells of each stripe are computed
 * into the parity members' buffers, and every member's part goes to its
 * datanode as one WRITE_CHUNK with its checksums (no followers: each member
 * holds different bytes), then a PUT_BLOCK commits the member's new length,
 * all members at once. A group holds whole stripes while each member's
 * block stays within the block size; a batch never spans two groups.
 *
 * <p>One batch is sent in the background (a thread of its own waits for
 * its members' answers) while the next one fills and its parity is
 * computed, so the writer computes while the datanodes store; the next
 * batch goes out once the one before is committed on every member. The
 * writer holds two batches' buffers: 2 x BATCH_STRIPES x (d+p) cells.
 *
 * <p>When a member fails, the group ends at its last committed batch
 * (finalised on the members left, dropped when nothing was committed), meta
 * closes its container, and the batch, parity included, goes to a new group
 * that avoids the failed datanode, its container and its pipeline.
 *
 * <p>There is no hflush or hsync: parity covers whole stripes (docs/ec.md).
 * Not safe for concurrent use.
 */
final class StripedWriter {
  private static final Logger LOG = LoggerFactory.getLogger(StripedWriter.class);

  /** Stripes per batch: with 1 MiB cells each member gets 4 MiB per request, the replicated writer's chunk. */
  static final int BATCH_STRIPES = 4;

  private final KeyWriter w;
  private final StratoClient c;
  private final ErasureCode ec;
  private final long groupCap;
  private final byte ctype;
  private final int bpc;

  /** The batch being filled; spare is the other buffer set, free when no batch is in flight. */
  private byte[][] batch;
  private byte[][] spare;
  private long batchLen;
  /** The batch being sent, at most one: the next one fills (and its parity is computed) meanwhile. */
  private InFlight inFlight;
  private final int[] lens;
  private final byte[][] shards;
  private final int[] offs;

  private Blk cur;
  private long committed;
  private int failures;
  private int closures;
  private int denials;

  StripedWriter(KeyWriter w, StratoClient c, ErasureCode ec, long blockSize, byte ctype, int bpc) {
    this.w = w;
    this.c = c;
    this.ec = ec;
    this.groupCap = Math.max(blockSize / ec.cellSize, 1) * ec.stripeSize();
    this.ctype = ctype;
    this.bpc = bpc;
    this.batch = new byte[ec.members()][0];
    this.spare = new byte[ec.members()][0];
    this.lens = new int[ec.members()];
    this.shards = new byte[ec.members()][];
    this.offs = new int[ec.members()];
  }

  /** A batch sent in the background: where it goes, its buffers, and what became of it. */
  private record InFlight(Blk bl, long at, byte[][] bufs, long len, long[] blens, boolean fin, boolean last,
      CompletableFuture<Outcome> f) {}

  /** A batch's sending: the errors (none: committed on every member) and the datanodes blamed. */
  private record Outcome(List<IOException> errs, Set<String> failed) {}

  /** Sends batches in the background, one per writer at a time. */
  private static final ExecutorService SENDERS = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "strato-ec-write");
    t.setDaemon(true);
    return t;
  });

  /** Data bytes the batch may hold: BATCH_STRIPES stripes, or what is left of the group after the batch in flight. */
  private long batchCap() {
    long used;
    if (inFlight != null) {
      used = inFlight.fin ? 0 : inFlight.at + inFlight.len;
    } else {
      used = cur != null ? committed : 0;
    }
    return Math.min(BATCH_STRIPES * ec.stripeSize(), groupCap - used);
  }

  /** Makes member m's buffer hold n bytes or more, doubling up to a batch's cells. */
  private void grow(int m, int n) {
    byte[] b = batch[m];
    if (b.length >= n) {
      return;
    }
    byte[] nb = new byte[Math.max(n, Math.min(2 * b.length, BATCH_STRIPES * ec.cellSize))];
    System.arraycopy(b, 0, nb, 0, b.length);
    batch[m] = nb;
  }

  void write(byte[] p, int off, int len) throws IOException {
    while (len > 0) {
      long limit = batchCap();
      int m = ec.memberOf(batchLen);
      long mo = ec.memberOffset(batchLen);
      int k = (int) Math.min(Math.min(len, ec.cellSize - mo % ec.cellSize), limit - batchLen);
      grow(m, (int) mo + k);
      System.arraycopy(p, off, batch[m], (int) mo, k);
      batchLen += k;
      off += k;
      len -= k;
      if (batchLen == limit) {
        flush(false);
      }
    }
  }

  /** Computes the parity of the batch's stripes; returns each member's bytes in the batch. */
  private long[] encode() {
    for (long st = 0; st < ec.stripes(batchLen); st++) {
      int n = ec.cellLens(batchLen, st, lens);
      int off = (int) (st * ec.cellSize);
      for (int i = 0; i < ec.members(); i++) {
        if (i >= ec.data) {
          grow(i, off + ec.cellSize);
        }
        shards[i] = batch[i];
        offs[i] = off;
      }
      ec.encode(shards, offs, lens, n);
    }
    long[] out = new long[ec.members()];
    for (int m = 0; m < out.length; m++) {
      out[m] = ec.memberLen(batchLen, m);
    }
    return out;
  }

  /**
   * Computes the batch's parity and sends it in the background, once the
   * batch before it is committed; with last, waits for it too.
   */
  private void flush(boolean last) throws IOException {
    if (batchLen == 0) {
      return;
    }
    long[] blens = encode();
    settle();
    if (cur != null && committed + batchLen > groupCap) {
      // The batch before moved to a new group (a member failed) and left less room than this one was cut for.
      finish(cur, committed, Set.of());
      cur = null;
    }
    startGroup();
    boolean fin = last || committed + batchLen == groupCap;
    Blk bl = cur;
    long at = committed;
    byte[][] bufs = batch;
    long len = batchLen;
    inFlight = new InFlight(bl, at, bufs, len, blens, fin, last, CompletableFuture.supplyAsync(() -> {
      List<IOException> errs = new ArrayList<>();
      Set<String> failed = sendBatch(bl, at, bufs, blens, fin, errs);
      return new Outcome(errs, failed);
    }, SENDERS));
    batch = spare;
    spare = null;
    batchLen = 0;
    if (last) {
      settle();
    }
  }

  /** Starts a group when there is none. */
  private void startGroup() throws IOException {
    if (cur != null) {
      return;
    }
    cur = w.allocateGroup();
    committed = 0;
    if (cur.members.size() != ec.members()) {
      throw new IOException("strato: writing " + w.name() + ": meta gave a block group of " + cur.members.size()
          + " members for " + ec);
    }
  }

  /**
   * Waits for the batch in flight: committed, the group moves on; failed, the
   * batch goes to new groups here until one takes it.
   */
  private void settle() throws IOException {
    InFlight fl = inFlight;
    if (fl == null) {
      return;
    }
    Outcome o;
    try {
      o = fl.f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("strato: writing " + w.name() + ": interrupted");
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IOException("strato: writing " + w.name() + ": " + e.getCause(), e.getCause());
    }
    inFlight = null;
    spare = fl.bufs;
    if (o.errs.isEmpty()) {
      committedBatch(fl.len, fl.fin);
      return;
    }
    recover(o.failed, o.errs, fl.len);
    while (true) {
      startGroup();
      boolean fin = fl.last || committed + fl.len == groupCap;
      List<IOException> errs = new ArrayList<>();
      Set<String> failed = sendBatch(cur, committed, fl.bufs, fl.blens, fin, errs);
      if (errs.isEmpty()) {
        committedBatch(fl.len, fin);
        return;
      }
      recover(failed, errs, fl.len);
    }
  }

  /** A batch of len bytes is committed on every member of the current group; with fin the group is done. */
  private void committedBatch(long len, boolean fin) {
    committed += len;
    cur.length = committed;
    if (fin) {
      cur = null;
    }
  }

  /**
   * Writes each member's part of the batch after the group's committed bytes
   * and commits it; fills errs with the failures and returns the datanodes
   * they blame (a member that refused, its container closed, is nobody's
   * fault).
   */
  private Set<String> sendBatch(Blk bl, long at, byte[][] bufs, long[] blens, boolean fin, List<IOException> errs) {
    int members = ec.members();
    Set<String> failed = new HashSet<>();
    @SuppressWarnings("unchecked")
    CompletableFuture<DataConn.Response>[] fs = new CompletableFuture[members];
    DataConn[] conns = new DataConn[members];
    for (int m = 0; m < members; m++) {
      if (blens[m] == 0) {
        continue; // past the end of a short last stripe
      }
      long off = ec.memberLen(at, m);
      int n = (int) blens[m];
      byte[] data = bufs[m];
      try {
        conns[m] = c.data.get(bl.members.get(m).getDataAddr(), bl.token);
        fs[m] = conns[m].writeChunk(() -> new WriteChunkRequest(bl.id, off, n, Checksums.compute(ctype, bpc, data, 0, n),
            List.of()), data, 0, n);
      } catch (IOException e) {
        fs[m] = CompletableFuture.failedFuture(e);
      }
    }
    awaitEach(bl, fs, conns, errs, failed);
    for (int m = 0; m < members; m++) {
      if (fs[m] == null) {
        continue;
      }
      if (failed.contains(bl.members.get(m).getId()) || !errs.isEmpty()) {
        fs[m] = null;
        continue;
      }
      long length = ec.memberLen(at, m) + blens[m];
      fs[m] = conns[m].putBlock(new PutBlockRequest(bl.id, length, fin ? Messages.PUT_BLOCK_FINAL : 0, List.of()));
    }
    awaitEach(bl, fs, conns, errs, failed);
    return failed;
  }

  private void awaitEach(Blk bl, CompletableFuture<DataConn.Response>[] fs, DataConn[] conns, List<IOException> errs,
      Set<String> failed) {
    for (int m = 0; m < fs.length; m++) {
      if (fs[m] == null) {
        continue;
      }
      try {
        DataConn.await(fs[m], c.data.requestTimeoutMs(), conns[m]).release();
      } catch (IOException e) {
        DatanodeDetails dn = bl.members.get(m);
        errs.add(new IOException("member " + m + " (datanode " + dn.getId() + "): " + e.getMessage(), e));
        if (!(e instanceof WireException) || Wire.nodeFault(((WireException) e).code())) {
          failed.add(dn.getId());
        }
      }
    }
  }

  /**
   * Handles a failed batch: the group ends at its last committed batch, meta
   * closes its container, later groups avoid the failed datanodes. The batch
   * stays for the next group.
   */
  private void recover(Set<String> failed, List<IOException> errs, long batchLen) throws IOException {
    IOException cause = errs.get(0);
    for (IOException e : errs) {
      if (e.getCause() instanceof WireException && ((WireException) e.getCause()).code() == Wire.ACCESS_DENIED) {
        // As the replicated writer: a new group brings a new token; more denials will not pass.
        if (++denials > KeyWriter.MAX_DENIALS) {
          throw new IOException("strato: writing " + w.name() + ": " + e.getMessage(), e);
        }
        break;
      }
    }
    if (!failed.isEmpty()) {
      failures++;
    } else {
      closures++;
    }
    if (failures > KeyWriter.MAX_RECOVERIES || closures > KeyWriter.MAX_CLOSURES) {
      throw new IOException("strato: writing " + w.name() + ": giving up after " + failures
          + " datanode failures and " + closures + " closed containers: " + cause.getMessage(), cause);
    }
    Blk old = cur;
    long length = committed;
    LOG.warn("strato: block group failed, moving to a new group: key {} group {} committed {} resending {}: {}",
        w.name(), old.id, length, batchLen, cause.toString());
    cur = null;
    committed = 0;
    old.length = length;
    if (length == 0) {
      w.dropLastBlock();
    } else {
      finish(old, length, failed);
    }
    w.avoid(old, failed);
  }

  /** Sends the last batch and ends the last group. */
  void close() throws IOException {
    if (batchLen > 0) {
      flush(true);
      return;
    }
    settle();
    if (cur != null) {
      // The group's last batch was committed without FINAL: say it now.
      finish(cur, committed, Set.of());
      cur = null;
    }
  }

  /** Commits group bl at n data bytes as final on every member that holds some and is not failed. */
  private void finish(Blk bl, long n, Set<String> failed) {
    for (int m = 0; m < ec.members(); m++) {
      DatanodeDetails dn = bl.members.get(m);
      long length = ec.memberLen(n, m);
      if (length == 0 || failed.contains(dn.getId())) {
        continue;
      }
      try {
        DataConn conn = c.data.get(dn.getDataAddr(), bl.token);
        DataConn.await(conn.putBlock(new PutBlockRequest(bl.id, length, Messages.PUT_BLOCK_FINAL, List.of())),
            c.data.requestTimeoutMs(), conn).release();
      } catch (IOException e) {
        // The member holds the committed batches either way; one that does not answer now is rebuilt from the others.
        LOG.debug("strato: finalising block group {} on {}: {}", bl.id, dn.getId(), e.toString());
      }
    }
  }
}
