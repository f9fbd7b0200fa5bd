package io.strato.client;

import io.strato.client.wire.ChunkRecord;
import io.strato.client.wire.DataConn;
import io.strato.client.wire.LocalRead;
import io.strato.client.wire.Messages.ReadLocalPathsRequest;
import io.strato.client.wire.Messages.ReadLocalPathsResponse;
import io.strato.client.wire.Messages.ReadChunkRequest;
import io.strato.client.wire.Messages.ReadChunkResponse;
import io.strato.client.wire.Wire;
import io.strato.client.wire.WireException;
import io.strato.proto.v1.BlockLocation;
import io.strato.proto.v1.DatanodeDetails;
import io.strato.proto.v1.KeyInfo;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a committed key (client/reader.go's twin): positioned reads of any
 * size, and a sequential stream with read-ahead. Every byte is verified
 * against its checksums (docs/wire.md §5.4); a replica that fails or returns
 * bad data is skipped, and a bad one reported to meta, in favour of the next.
 *
 * <p>read(long, ...) is safe for concurrent use; the stream (seek, read) is not.
 */
public final class KeyReader implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(KeyReader.class);

  /** A range's bytes did not match their checksums. */
  public static final class ChecksumMismatchException extends IOException {
    private static final long serialVersionUID = 1L;

    ChecksumMismatchException(String m) {
      super(m);
    }
  }

  private final StratoClient c;
  private final KeyInfo key;
  private final List<Blk> blocks = new ArrayList<>();
  private final Set<String> bad = Collections.synchronizedSet(new HashSet<>());
  private final int piece;
  /** The key's erasure code; null for a replicated key. */
  private final ErasureCode ec;

  // The stream.
  private long pos;
  private ByteBuffer buf; // a verified response's payload (pooled: see BufferPool)
  private DataConn.Response bufResp; // whose payload buf is, released when the stream moves on
  private int bufStart; // where the buffer's bytes start in buf
  private int bufLen;
  private long bufOff = -1;
  private final Deque<Ahead> ahead = new ArrayDeque<>();
  /** An erasure coded stream's read-ahead: pieces read (and rebuilt if need be) in the background. */
  private final Deque<StripedAhead> stripedAhead = new ArrayDeque<>();
  /** Free arrays for erasure coded pieces that had to be assembled (at most readAhead + 1, each of piece bytes). */
  private final java.util.concurrent.ConcurrentLinkedQueue<byte[]> freePieces =
      new java.util.concurrent.ConcurrentLinkedQueue<>();
  private boolean closed;

  /** A read-ahead: the first replica's answer, verified when consumed. */
  private static final class Ahead {
    final long off;
    final int len;
    final Blk bl;
    final DatanodeDetails m;
    final DataConn conn;
    final CompletableFuture<DataConn.Response> f;
    /** f answers a READ_LOCAL_PATHS (else a READ_CHUNK). */
    final boolean local;

    Ahead(long off, int len, Blk bl, DatanodeDetails m, DataConn conn, CompletableFuture<DataConn.Response> f,
        boolean local) {
      this.off = off;
      this.len = len;
      this.bl = bl;
      this.m = m;
      this.conn = conn;
      this.f = f;
      this.local = local;
    }
  }

  KeyReader(StratoClient c, KeyInfo key) {
    this.c = c;
    this.key = key;
    for (BlockLocation bl : key.getBlocksList()) {
      blocks.add(new Blk(bl));
    }
    this.ec = key.hasErasureCoding() ? ErasureCode.of(key.getErasureCoding()) : null;
    this.piece = ec == null ? c.opts.chunkSize : stripedPiece(ec, c.opts.chunkSize);
  }

  public long size() {
    return key.getSize();
  }

  public KeyInfo info() {
    return key;
  }

  // ---- Positioned reads --------------------------------------------------------

  /**
   * Reads up to len bytes at off into dst; fewer only at the end of the key.
   *
   * @return bytes read, -1 at or past the end
   */
  public int read(long off, byte[] dst, int dstOff, int len) throws IOException {
    if (off < 0) {
      throw new EOFException("strato: negative offset " + off);
    }
    if (off >= key.getSize()) {
      return len == 0 ? 0 : -1;
    }
    int want = (int) Math.min(len, key.getSize() - off);
    readRange(off, dst, dstOff, want);
    return want;
  }

  /** Fills dst[dstOff, +len) from the key at off (within the key), piece by piece. */
  private void readRange(long off, byte[] dst, int dstOff, int len) throws IOException {
    if (ec != null) {
      readStriped(off, dst, dstOff, len);
      return;
    }
    // Pieces of up to a chunk, within one block; up to readAhead of them are
    // asked of their first replica at once, then verified in order (a piece
    // whose replica failed is read again from the others).
    Deque<Ahead> inFlight = new ArrayDeque<>();
    int asked = 0;
    int done = 0;
    try {
    while (done < len) {
      while (asked < len && (inFlight.size() < Math.max(1, c.opts.readAhead) || asked == done)) {
        long at = off + asked;
        Blk bl = blockAt(at);
        long inBlock = at - bl.offset;
        int n = (int) Math.min(Math.min(len - asked, bl.length - inBlock), piece);
        inFlight.addLast(ask(bl, at, n));
        asked += n;
      }
      Ahead a = inFlight.pollFirst();
      readBlock(a.bl, a.off - a.bl.offset, dst, dstOff + done, a.len, a.m == null ? null : a);
      done += a.len;
    }
    } finally {
      for (Ahead a : inFlight) {
        drop(a);
      }
    }
  }

  // ---- Erasure coded keys ----------------------------------------------------

  /**
   * A piece of an erasure coded stream: its bytes as segments of the
   * members' answers (no copy; views released when the stream moves past
   * the piece), or, when a member had to be rebuilt, one segment of an
   * array the piece was assembled in.
   */
  private record StripedPiece(long off, int len, List<StripedReader.Seg> segs, StripedReader.Views views, byte[] array) {}

  /** A piece of an erasure coded stream being read ahead. */
  private record StripedAhead(long off, int len, CompletableFuture<StripedPiece> f) {}

  /** Runs erasure coded read-aheads (each a blocking read of a piece's cells, in parallel). */
  private static final java.util.concurrent.ExecutorService STRIPED_AHEAD =
      java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "strato-ec-read-ahead");
        t.setDaemon(true);
        return t;
      });

  /** The piece of the stream the buffer is in (erasure coded keys). */
  private StripedPiece curPiece;

  /** The stream's next piece of an erasure coded key, from the read-ahead when it is there; then more asked for. */
  private void fillStriped() throws IOException {
    if (curPiece == null || pos < curPiece.off || pos >= curPiece.off + curPiece.len) {
      releaseBuf();
      StripedAhead head = stripedAhead.peekFirst();
      if (head != null && head.off == pos) {
        stripedAhead.pollFirst();
        try {
          curPiece = head.f.join();
        } catch (java.util.concurrent.CompletionException e) {
          throw e.getCause() instanceof IOException ? (IOException) e.getCause() : new IOException(e.getCause());
        }
      } else {
        dropStripedAhead();
        curPiece = stripedPiece(pos, pieceLen(pos));
      }
      StripedAhead last = stripedAhead.peekLast();
      long next = last != null ? last.off + last.len : curPiece.off + curPiece.len;
      while (stripedAhead.size() < c.opts.readAhead && next < key.getSize()) {
        long at = next;
        int k = pieceLen(at);
        stripedAhead.addLast(new StripedAhead(at, k, CompletableFuture.supplyAsync(() -> {
          try {
            return stripedPiece(at, k);
          } catch (IOException e) {
            throw new java.util.concurrent.CompletionException(e);
          }
        }, STRIPED_AHEAD)));
        next += k;
      }
    }
    // The segment holding the position becomes the buffer.
    for (StripedReader.Seg sg : curPiece.segs) {
      long at = curPiece.off + sg.at();
      if (pos >= at && pos < at + sg.len()) {
        buf = sg.data();
        bufStart = sg.start();
        bufOff = at;
        bufLen = sg.len();
        return;
      }
    }
    throw new IllegalStateException("strato: " + name() + ": piece at " + curPiece.off + " has no byte " + pos);
  }

  /**
   * Reads a piece of an erasure coded key: as views of the data members'
   * answers when they all answer, else into an array (rebuilding what it
   * must).
   */
  private StripedPiece stripedPiece(long off, int len) throws IOException {
    Blk bl = blockAt(off); // pieceLen keeps a piece within its group
    StripedReader gr = groupReader(bl);
    long in = off - bl.offset;
    try {
      StripedReader.Views v = gr.readViews(in, len);
      if (v != null) {
        return new StripedPiece(off, len, v.segs(), v, null);
      }
      // A member is lost (now marked so): the same reader rebuilds its cells.
      byte[] b = takePiece();
      gr.read(in, b, 0, len);
      return new StripedPiece(off, len, List.of(new StripedReader.Seg(0, len, ByteBuffer.wrap(b), 0)), null, b);
    } catch (IOException e) {
      throw new IOException("strato: cannot read " + name() + " block group " + bl.id + " at " + in + ": "
          + e.getMessage(), e);
    }
  }

  /** Gives a piece's buffers back. */
  private void releasePiece(StripedPiece p) {
    if (p.views != null) {
      p.views.release();
    }
    if (p.array != null && freePieces.size() < c.opts.readAhead + 1) {
      freePieces.add(p.array);
    }
  }

  /** A buffer for a piece of an erasure coded stream: a free one, else a new one (zeroed by the JVM, so reused). */
  private byte[] takePiece() {
    byte[] b = freePieces.poll();
    return b != null ? b : new byte[piece];
  }

  private void dropStripedAhead() {
    for (StripedAhead a : stripedAhead) {
      // A piece read ahead gives its buffers back when it comes.
      a.f.whenComplete((p, e) -> {
        if (p != null) {
          releasePiece(p);
        }
      });
    }
    stripedAhead.clear();
  }

  /**
   * Fills dst from an erasure coded key at off, group by group, a few stripes
   * at a time (StripedReader: the data members, every piece at once; a member
   * that fails, or failed this reader before, is rebuilt from the others).
   * Members are read from their block files when local (as replicated blocks are).
   */
  private void readStriped(long off, byte[] dst, int dstOff, int len) throws IOException {
    long window = Math.max(ec.stripeSize() * 2, piece);
    int done = 0;
    while (done < len) {
      long at = off + done;
      Blk bl = blockAt(at);
      long inGroup = at - bl.offset;
      int n = (int) Math.min(Math.min(len - done, bl.length - inGroup), window);
      StripedReader gr = groupReader(bl);
      try {
        gr.read(inGroup, dst, dstOff + done, n);
      } catch (IOException e) {
        throw new IOException("strato: cannot read " + name() + " block group " + bl.id + " at " + inGroup + ": "
            + e.getMessage(), e);
      }
      done += n;
    }
  }

  /** A reader of block group bl; the members of datanodes that failed this reader count as lost. */
  private StripedReader groupReader(Blk bl) throws IOException {
    if (bl.members.size() != ec.members()) {
      throw new IOException("strato: " + name() + ": block group " + bl.id + " has " + bl.members.size()
          + " members, " + ec + " needs " + ec.members());
    }
    StripedReader gr = new StripedReader(ec, bl.length, (m, moff, mlen) -> askMember(bl, m, moff, mlen));
    for (int m = 0; m < bl.members.size(); m++) {
      if (bad.contains(bl.members.get(m).getId())) {
        gr.markLost(m, "datanode " + bl.members.get(m).getId() + " failed this reader before");
      }
    }
    return gr;
  }

  /**
   * A read of member m's block of group bl, verified when taken: from the
   * block file when the datanode serves this process local reads (as a
   * replicated block's), else a READ_CHUNK. A failure marks the datanode bad.
   */
  private StripedReader.Pending askMember(Blk bl, int m, long off, int len) {
    DatanodeDetails dn = bl.members.get(m);
    DataConn conn;
    CompletableFuture<DataConn.Response> f;
    boolean local = false;
    try {
      conn = c.data.get(dn.getDataAddr(), bl.token);
      local = c.data.readLocally(conn);
      f = send(conn, bl, off, len, local);
    } catch (IOException e) {
      conn = null;
      f = CompletableFuture.failedFuture(e);
    }
    DataConn cn = conn;
    CompletableFuture<DataConn.Response> fut = f;
    boolean loc = local;
    return () -> {
      try {
        View v = loc ? local(dn, off, len, fut, cn) : null;
        if (v == null) {
          // Over TCP: not local, or the local read cannot be done here.
          v = remote(bl, off, len, loc ? send(cn, bl, off, len, false) : fut, cn);
        }
        DataConn.Response r = v.resp();
        return new StripedReader.Got(r.data(), v.off(), r::release);
      } catch (IOException e) {
        if (e instanceof WireException && ((WireException) e).code() == Wire.ACCESS_DENIED) {
          throw new IOException("strato: reading " + name() + ": datanode " + dn.getId() + " refused the block token: "
              + e.getMessage(), e);
        }
        bad.add(dn.getId());
        boolean corrupt = e instanceof ChecksumMismatchException || (e instanceof WireException
            && (((WireException) e).code() == Wire.CORRUPT || ((WireException) e).code() == Wire.CHECKSUM_MISMATCH));
        if (corrupt) {
          report(bl, dn, e);
        }
        throw new IOException("datanode " + dn.getId() + ": " + e.getMessage(), e);
      }
    };
  }

  /** Gives up on a read-ahead: its response, when it comes, goes back to the pool. */
  private static void drop(Ahead a) {
    if (a.f != null) {
      a.f.whenComplete((r, e) -> {
        if (r != null) {
          r.release();
        }
      });
    }
  }

  /**
   * Asks the block's first replica for [at, at+n) of the key: the paths of
   * its files when it is on this host, else the bytes (READ_CHUNK).
   */
  private Ahead ask(Blk bl, long at, int n) {
    List<DatanodeDetails> order = order(bl);
    if (order.isEmpty()) {
      return new Ahead(at, n, bl, null, null, null, false);
    }
    DatanodeDetails m = order.get(0);
    CompletableFuture<DataConn.Response> f;
    DataConn conn = null;
    boolean local = false;
    try {
      conn = c.data.get(m.getDataAddr(), bl.token);
      local = c.data.readLocally(conn);
      f = send(conn, bl, at - bl.offset, n, local);
    } catch (IOException e) {
      f = CompletableFuture.failedFuture(e);
    }
    return new Ahead(at, n, bl, m, conn, f, local);
  }

  private static CompletableFuture<DataConn.Response> send(DataConn conn, Blk bl, long off, int n, boolean local) {
    return local ? conn.readLocalPaths(new ReadLocalPathsRequest(bl.id, off, n))
        : conn.readChunk(new ReadChunkRequest(bl.id, off, n));
  }

  private Blk blockAt(long off) throws IOException {
    int lo = 0;
    int hi = blocks.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      Blk b = blocks.get(mid);
      if (off < b.offset) {
        hi = mid - 1;
      } else if (off >= b.offset + b.length) {
        lo = mid + 1;
      } else {
        return b;
      }
    }
    throw new IOException("strato: " + name() + ": no block holds offset " + off + " (size " + key.getSize() + ")");
  }

  private String name() {
    return "/" + key.getVolume() + "/" + key.getBucket() + "/" + key.getName();
  }

  /** Replicas in the order to try them: those not known bad first. */
  private List<DatanodeDetails> order(Blk bl) {
    List<DatanodeDetails> out = new ArrayList<>(bl.members.size());
    for (DatanodeDetails m : bl.members) {
      if (!bad.contains(m.getId())) {
        out.add(m);
      }
    }
    for (DatanodeDetails m : bl.members) {
      if (bad.contains(m.getId())) {
        out.add(m);
      }
    }
    return out;
  }

  /**
   * Reads dst from a block at off from the first replica that returns good
   * data; first, if given, is a response of one replica already in flight.
   */
  private View readBlock(Blk bl, long off, byte[] dst, int dstOff, int len, Ahead first) throws IOException {
    List<String> errs = new ArrayList<>();
    List<DatanodeDetails> order = order(bl);
    if (first != null) {
      order.remove(first.m);
      order.add(0, first.m);
    }
    if (order.isEmpty()) {
      throw new IOException("strato: " + name() + ": block " + bl.id + " has no replica locations");
    }
    for (DatanodeDetails m : order) {
      try {
        View v = null;
        if (first != null && m == first.m) {
          v = first.local ? local(m, off, len, first.f, first.conn) : remote(bl, off, len, first.f, first.conn);
        } else {
          DataConn conn = c.data.get(m.getDataAddr(), bl.token);
          if (c.data.readLocally(conn)) {
            v = local(m, off, len, send(conn, bl, off, len, true), conn);
          }
        }
        if (v == null) {
          // Over TCP: the replica is not local, or its local read cannot be done here.
          DataConn conn = c.data.get(m.getDataAddr(), bl.token);
          v = remote(bl, off, len, send(conn, bl, off, len, false), conn);
        }
        if (dst == null) {
          return v;
        }
        v.resp().data().get(v.off(), dst, dstOff, len);
        v.resp().release();
        return null;
      } catch (IOException e) {
        if (e instanceof WireException && ((WireException) e).code() == Wire.ACCESS_DENIED) {
          // Another replica would say the same: the token is the problem.
          throw new IOException("strato: reading " + name() + ": datanode " + m.getId() + " refused the block token: "
              + e.getMessage(), e);
        }
        errs.add("datanode " + m.getId() + ": " + e.getMessage());
        bad.add(m.getId());
        boolean corrupt = e instanceof ChecksumMismatchException || (e instanceof WireException
            && (((WireException) e).code() == Wire.CORRUPT || ((WireException) e).code() == Wire.CHECKSUM_MISMATCH));
        if (corrupt) {
          report(bl, m, e);
        }
      }
    }
    throw new IOException("strato: no good replica for " + name() + " block " + bl.id + " at " + off + ": "
        + String.join("; ", errs));
  }

  /** Bytes of a response: the payload, and where the bytes asked for start in it. */
  record View(DataConn.Response resp, int off) {}

  /** A READ_CHUNK's answer, verified. */
  private View remote(Blk bl, long off, int len, CompletableFuture<DataConn.Response> f, DataConn conn)
      throws IOException {
    DataConn.Response r = DataConn.await(f, c.data.requestTimeoutMs(), conn);
    try {
      return new View(r, verified(bl, off, r, len));
    } catch (IOException | RuntimeException e) {
      r.release();
      throw e;
    }
  }

  /**
   * A READ_LOCAL_PATHS's answer: the range read from the files it names and
   * verified; null when the read cannot be done here (the datanode does not
   * serve it to this client, the files are not this process's to read, a
   * range in too many files), so that it goes over TCP to the same replica.
   */
  private View local(DatanodeDetails m, long off, int len, CompletableFuture<DataConn.Response> f, DataConn conn)
      throws IOException {
    DataConn.Response r;
    try {
      r = DataConn.await(f, c.data.requestTimeoutMs(), conn);
    } catch (WireException e) {
      if (e.code() == Wire.UNSUPPORTED_TYPE) {
        c.data.noLocalReads(m.getDataAddr());
        return null;
      }
      if (e.code() == Wire.TOO_LARGE) {
        return null;
      }
      throw e;
    }
    ReadLocalPathsResponse paths = DataConn.localPathsResponse(r);
    DataConn.Response data;
    try {
      data = LocalRead.read(paths, c.data.pool());
    } catch (LocalRead.NotLocalException e) {
      LOG.debug("strato: datanode {} read over TCP: {}", m.getId(), e.getMessage());
      c.data.noLocalReads(m.getDataAddr());
      return null;
    }
    long start = off - paths.offset();
    if (start < 0 || start + len > data.payloadLength()) {
      data.release();
      throw new WireException(Wire.PROTOCOL_ERROR, "READ_LOCAL_PATHS covers [" + paths.offset() + ", "
          + (paths.offset() + data.payloadLength()) + "), asked [" + off + ", " + (off + len) + ")", List.of());
    }
    c.localBytes.addAndGet(len);
    return new View(data, (int) start);
  }

  static void verify(Blk bl, long off, DataConn.Response r, byte[] dst, int dstOff, int len) throws IOException {
    r.data().get(verified(bl, off, r, len), dst, dstOff, len);
  }

  /**
   * Checks a READ_CHUNK response against its checksums; returns where the
   * len bytes asked for at block offset off start in its payload.
   */
  static int verified(Blk bl, long off, DataConn.Response r, int len) throws IOException {
    ReadChunkResponse resp = DataConn.readResponse(r);
    ByteBuffer payload = r.data();
    int pos = 0;
    for (ChunkRecord ch : resp.chunks()) {
      long end = (long) pos + ch.length();
      if (end > payload.limit() || ch.offset() != resp.offset() + pos) {
        throw new WireException(Wire.PROTOCOL_ERROR, "READ_CHUNK records do not tile the payload", List.of());
      }
      int badWindow = ch.checksums().verify(payload, pos, ch.length());
      if (badWindow >= 0) {
        throw new ChecksumMismatchException("strato: block " + bl.id + " at " + ch.offset() + ": checksum window "
            + badWindow + " does not match");
      }
      pos = (int) end;
    }
    long start = off - resp.offset();
    if (start < 0 || start + len > pos) {
      throw new WireException(Wire.PROTOCOL_ERROR, "reply covers [" + resp.offset() + ", " + (resp.offset() + pos)
          + "), asked [" + off + ", " + (off + len) + ")", List.of());
    }
    return (int) start;
  }

  private void report(Blk bl, DatanodeDetails m, IOException cause) {
    LOG.warn("strato: bad replica of {} block {} on {}: {}", name(), bl.id, m.getId(), cause.getMessage());
    try {
      c.reportReplica(bl.id.containerId(), bl.id.localId(), m.getId(), String.valueOf(cause.getMessage()));
    } catch (IOException e) {
      LOG.warn("strato: reporting a bad replica failed: {}", e.toString());
    }
  }

  // ---- Stored checksums --------------------------------------------------------

  /** One checksum window as the datanodes store it: key offset, length, type and value. */
  public record Window(long offset, int length, byte type, byte[] value) {}

  /**
   * The stored checksum windows of the key, in order, as GET_BLOCK returns
   * them (docs/wire.md §5.5) from the first replica that answers. They tile
   * the key's bytes; the last window of each chunk may be short.
   */
  public List<Window> windows() throws IOException {
    List<Window> out = new ArrayList<>();
    for (Blk bl : blocks) {
      List<ChunkRecord> chunks = null;
      List<String> errs = new ArrayList<>();
      for (DatanodeDetails m : order(bl)) {
        try {
          DataConn conn = c.data.get(m.getDataAddr(), bl.token);
          chunks = DataConn.getBlockResponse(DataConn.await(conn.getBlock(
              new io.strato.client.wire.Messages.GetBlockRequest(bl.id)), c.data.requestTimeoutMs(), conn)).chunks();
          break;
        } catch (IOException e) {
          errs.add("datanode " + m.getId() + ": " + e.getMessage());
        }
      }
      if (chunks == null) {
        throw new IOException("strato: no replica of " + name() + " block " + bl.id + " answered GET_BLOCK: "
            + String.join("; ", errs));
      }
      for (ChunkRecord ch : chunks) {
        io.strato.client.wire.Checksums s = ch.checksums();
        int size = io.strato.client.wire.Checksums.size(s.type);
        for (int i = 0; i < s.count(); i++) {
          long wo = ch.offset() + (long) i * s.bytesPerChecksum;
          if (wo >= bl.length) {
            break;
          }
          int wl = (int) Math.min(s.bytesPerChecksum, ch.offset() + ch.length() - wo);
          byte[] v = java.util.Arrays.copyOfRange(s.values, i * size, i * size + size);
          out.add(new Window(bl.offset + wo, wl, s.type, v));
        }
        if (s.type == io.strato.client.wire.Checksums.NONE) {
          out.add(new Window(bl.offset + ch.offset(), ch.length(), s.type, new byte[0]));
        }
      }
    }
    return out;
  }

  // ---- The stream --------------------------------------------------------------

  public long position() {
    return pos;
  }

  public void seek(long p) throws IOException {
    if (p < 0) {
      throw new EOFException("strato: seek to negative offset " + p);
    }
    pos = p;
  }

  /** Bytes left in the buffer at the position (without blocking). */
  public int buffered() {
    if (buf == null || pos < bufOff || pos >= bufOff + bufLen) {
      return 0;
    }
    return (int) (bufOff + bufLen - pos);
  }

  /** Reads from the position, reading ahead. Returns -1 at the end. */
  public int read(byte[] dst, int off, int len) throws IOException {
    if (closed) {
      throw new IOException("strato: " + name() + ": stream closed");
    }
    if (len == 0) {
      return 0;
    }
    if (pos >= key.getSize()) {
      return -1;
    }
    if (buffered() == 0) {
      fill();
    }
    int n = Math.min(len, buffered());
    buf.get(bufStart + (int) (pos - bufOff), dst, off, n);
    pos += n;
    return n;
  }

  /** The piece of the stream starting at off: up to a chunk, within one block. */
  private int pieceLen(long off) throws IOException {
    Blk bl = blockAt(off);
    long end = bl.offset + bl.length;
    if (ec != null) {
      // Pieces of an erasure coded stream end on multiples of the piece in their group (whole stripes).
      end = Math.min(end, bl.offset + ((off - bl.offset) / piece + 1) * piece);
    }
    return (int) Math.min(piece, end - off);
  }

  /**
   * The piece of an erasure coded stream: whole stripes, at least a chunk,
   * so that each data member is asked for its cells of those stripes in one
   * request of about chunk / d bytes or more; a chunk when two chunks would
   * not hold a stripe (a wide code or big cells).
   */
  static int stripedPiece(ErasureCode ec, int chunk) {
    long stripes = (chunk + ec.stripeSize() - 1) / ec.stripeSize();
    long p = stripes * ec.stripeSize();
    return p <= 2L * chunk ? (int) p : chunk;
  }

  private void fill() throws IOException {
    if (ec != null) {
      fillStriped();
      return;
    }
    Ahead head = ahead.peekFirst();
    if (head != null && head.off == pos) {
      ahead.pollFirst();
      load(head.off, head.len, head);
    } else {
      dropAhead();
      int n = pieceLen(pos);
      load(pos, n, null);
    }
    long next = bufOff + bufLen;
    Ahead last = ahead.peekLast();
    if (last != null) {
      next = last.off + last.len;
    }
    while (ahead.size() < c.opts.readAhead && next < key.getSize()) {
      int n = pieceLen(next);
      Ahead a = ask(blockAt(next), next, n);
      if (a.m == null) {
        break;
      }
      ahead.addLast(a);
      next += n;
    }
  }

  private void load(long off, int n, Ahead first) throws IOException {
    Blk bl = first != null ? first.bl : blockAt(off);
    releaseBuf();
    bufOff = off;
    // The verified payload is the buffer: no copy.
    View v = readBlock(bl, off - bl.offset, null, 0, n, first);
    bufResp = v.resp();
    buf = bufResp.data();
    bufStart = v.off();
    bufLen = n;
  }

  private void releaseBuf() {
    if (bufResp != null) {
      bufResp.release();
    }
    if (curPiece != null) {
      releasePiece(curPiece);
      curPiece = null;
    }
    bufResp = null;
    buf = null;
    bufLen = 0;
    bufOff = -1;
  }

  private void dropAhead() {
    dropStripedAhead();
    for (Ahead a : ahead) {
      drop(a); // their responses go back to the pool when they come
    }
    ahead.clear();
  }

  /** Drops the buffers and read-ahead (CanUnbuffer); the next read loads afresh. */
  public void unbuffer() {
    dropAhead();
    releaseBuf();
  }

  @Override
  public void close() {
    closed = true;
    unbuffer();
  }
}
