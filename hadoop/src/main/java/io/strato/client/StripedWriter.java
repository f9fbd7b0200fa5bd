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

  private final byte[][] batch;
  private long batchLen;
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
    this.lens = new int[ec.members()];
    this.shards = new byte[ec.members()][];
    this.offs = new int[ec.members()];
  }

  /** Data bytes the batch may hold: BATCH_STRIPES stripes, or what is left of the group. */
  private long batchCap() {
    long room = groupCap - (cur != null ? committed : 0);
    return Math.min(BATCH_STRIPES * ec.stripeSize(), room);
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
   * Sends the batch to the current group (starting one when there is none)
   * and commits it on every member; the group ends when the batch fills it,
   * or with last. A failed member moves the batch to a new group.
   */
  private void flush(boolean last) throws IOException {
    if (batchLen == 0) {
      return;
    }
    long[] blens = encode();
    while (true) {
      if (cur == null) {
        cur = w.allocateGroup();
        committed = 0;
        if (cur.members.size() != ec.members()) {
          throw new IOException("strato: writing " + w.name() + ": meta gave a block group of " + cur.members.size()
              + " members for " + ec);
        }
      }
      boolean fin = last || committed + batchLen == groupCap;
      List<IOException> errs = new ArrayList<>();
      Set<String> failed = sendBatch(cur, blens, fin, errs);
      if (errs.isEmpty()) {
        committed += batchLen;
        cur.length = committed;
        batchLen = 0;
        if (fin) {
          cur = null;
        }
        return;
      }
      recover(failed, errs);
    }
  }

  /**
   * Writes each member's part of the batch after the group's committed bytes
   * and commits it; fills errs with the failures and returns the datanodes
   * they blame (a member that refused, its container closed, is nobody's
   * fault).
   */
  private Set<String> sendBatch(Blk bl, long[] blens, boolean fin, List<IOException> errs) {
    int members = ec.members();
    Set<String> failed = new HashSet<>();
    @SuppressWarnings("unchecked")
    CompletableFuture<DataConn.Response>[] fs = new CompletableFuture[members];
    DataConn[] conns = new DataConn[members];
    for (int m = 0; m < members; m++) {
      if (blens[m] == 0) {
        continue; // past the end of a short last stripe
      }
      long off = ec.memberLen(committed, m);
      int n = (int) blens[m];
      byte[] data = batch[m];
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
      long length = ec.memberLen(committed, m) + blens[m];
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
  private void recover(Set<String> failed, List<IOException> errs) throws IOException {
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
