package io.strato.client;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads ranges of one block group of an erasure coded key (the Go
 * ec.GroupReader's twin, docs/ec.md "Reading a block group, degraded or
 * not"): from the data members holding the range while they answer, every
 * piece asked for at once; the pieces of a member that fails or is known
 * lost are rebuilt, stripe by stripe, from the rows of the cells that cover
 * them read from d other members (data members first). With more than p
 * members of a stripe lost the read fails; it never returns bytes it did not
 * read or rebuild. A member that failed once is not asked again.
 *
 * <p>For one thread at a time.
 */
final class StripedReader {
  /** Bytes a member returned, verified: data[start, ...) are the bytes asked for; release gives data back. */
  record Got(java.nio.ByteBuffer data, int start, Runnable release) {}

  /** A read of one member's block, in flight. */
  interface Pending {
    /** Waits for the bytes, verified. */
    Got take() throws IOException;

    /**
     * Waits for the bytes, verified, and copies each range [from[i],
     * from[i]+len[i]) of them (offsets in the bytes asked for) to dst at
     * dstOff[i].
     */
    default void get(byte[] dst, int[] from, int[] dstOff, int[] len) throws IOException {
      Got g = take();
      try {
        for (int i = 0; i < from.length; i++) {
          g.data().get(g.start() + from[i], dst, dstOff[i], len[i]);
        }
      } finally {
        g.release().run();
      }
    }
  }

  /** A run of the bytes read, in order: len bytes at data[start, ...), at offset at of the range asked for. */
  record Seg(long at, int len, java.nio.ByteBuffer data, int start) {}

  /** readViews' answer: the range's bytes as segments of the members' buffers, and what releases them. */
  record Views(List<Seg> segs, List<Got> gots) {
    void release() {
      for (Got g : gots) {
        g.release().run();
      }
    }
  }

  /** Asks member m for len bytes of its block at off. */
  interface Members {
    Pending ask(int m, long off, int len);
  }

  private final ErasureCode ec;
  private final long n;
  private final Members members;
  private final String[] lost;

  StripedReader(ErasureCode ec, long n, Members members) {
    this.ec = ec;
    this.n = n;
    this.members = members;
    this.lost = new String[ec.members()];
  }

  /** Makes the reader rebuild member m's cells rather than read them. */
  void markLost(int m, String why) {
    if (lost[m] == null) {
      lost[m] = why;
    }
  }

  private record Piece(int member, long memberOff, long stripe, int dstOff, int len) {}

  /** A request to a member: [off, end) of its block, the pieces it covers. */
  private static final class Ask {
    final int member;
    final long off;
    long end;
    final List<Integer> pieces = new ArrayList<>();
    Pending pending;

    Ask(int member, long off) {
      this.member = member;
      this.off = off;
      this.end = off;
    }
  }

  /** The range's pieces: one per cell it touches, in order, dst offsets from dstOff. */
  private List<Piece> pieces(long off, int dstOff, int len) throws IOException {
    if (off < 0 || off + len > n) {
      throw new IOException("strato: read [" + off + ", " + (off + len) + ") of a block group of " + n + " bytes");
    }
    List<Piece> pieces = new ArrayList<>();
    for (int pos = 0; pos < len;) {
      long at = off + pos;
      long mo = ec.memberOffset(at);
      int k = (int) Math.min(len - pos, ec.cellSize - mo % ec.cellSize);
      pieces.add(new Piece(ec.memberOf(at), mo, at / ec.stripeSize(), dstOff + pos, k));
      pos += k;
    }
    return pieces;
  }

  /**
   * The group's bytes at off as views of the members' answers, without a
   * copy, when every data member holding them answers; null when one is
   * lost or fails (it is then marked lost, and read() rebuilds its cells).
   */
  Views readViews(long off, int len) throws IOException {
    List<Piece> pieces = pieces(off, 0, len);
    for (Piece pc : pieces) {
      if (lost[pc.member] != null) {
        return null;
      }
    }
    List<Ask> asks = asks(pieces);
    List<Got> gots = new ArrayList<>();
    Got[] byPiece = new Got[pieces.size()];
    long[] from = new long[pieces.size()];
    IOException failed = null;
    for (Ask a : asks) {
      if (failed != null) {
        // Taken and given back, so that its buffer returns to the pool.
        try {
          a.pending.take().release().run();
        } catch (IOException e) {
          markLost(a.member, e.getMessage());
        }
        continue;
      }
      try {
        Got g = a.pending.take();
        gots.add(g);
        for (int i : a.pieces) {
          byPiece[i] = g;
          from[i] = pieces.get(i).memberOff - a.off;
        }
      } catch (IOException e) {
        markLost(a.member, e.getMessage());
        failed = e;
      }
    }
    Views v = new Views(new ArrayList<>(), gots);
    if (failed != null) {
      v.release();
      return null;
    }
    for (int i = 0; i < pieces.size(); i++) {
      Piece pc = pieces.get(i);
      v.segs.add(new Seg(pc.dstOff, pc.len, byPiece[i].data(), byPiece[i].start() + (int) from[i]));
    }
    return v;
  }

  /** One request per run of a member's pieces that lie end to end in its block (its cells of consecutive stripes), all sent. */
  private List<Ask> asks(List<Piece> pieces) {
    List<Ask> asks = new ArrayList<>();
    Ask[] open = new Ask[ec.members()];
    for (int i = 0; i < pieces.size(); i++) {
      Piece pc = pieces.get(i);
      if (lost[pc.member] != null) {
        continue;
      }
      Ask a = open[pc.member];
      if (a == null || a.end != pc.memberOff) {
        a = new Ask(pc.member, pc.memberOff);
        open[pc.member] = a;
        asks.add(a);
      }
      a.pieces.add(i);
      a.end += pc.len;
    }
    for (Ask a : asks) {
      a.pending = members.ask(a.member, a.off, (int) (a.end - a.off));
    }
    return asks;
  }

  /** Fills dst[dstOff, +len) with the group's bytes at off (within the group). */
  void read(long off, byte[] dst, int dstOff, int len) throws IOException {
    List<Piece> pieces = pieces(off, dstOff, len);
    List<Ask> asks = asks(pieces);
    boolean[] failed = new boolean[pieces.size()];
    for (int i = 0; i < pieces.size(); i++) {
      failed[i] = lost[pieces.get(i).member] != null;
    }
    for (Ask a : asks) {
      int k = a.pieces.size();
      int[] from = new int[k];
      int[] to = new int[k];
      int[] lens = new int[k];
      for (int j = 0; j < k; j++) {
        Piece pc = pieces.get(a.pieces.get(j));
        from[j] = (int) (pc.memberOff - a.off);
        to[j] = pc.dstOff;
        lens[j] = pc.len;
      }
      try {
        a.pending.get(dst, from, to, lens);
      } catch (IOException e) {
        for (int i : a.pieces) {
          failed[i] = true;
        }
        markLost(a.member, e.getMessage());
      }
    }
    for (int i = 0; i < pieces.size();) {
      List<Piece> missing = new ArrayList<>();
      int j = i;
      for (; j < pieces.size() && pieces.get(j).stripe == pieces.get(i).stripe; j++) {
        if (failed[j]) {
          missing.add(pieces.get(j));
        }
      }
      if (!missing.isEmpty()) {
        rebuild(pieces.get(i).stripe, missing, dst);
      }
      i = j;
    }
  }

  /**
   * Rebuilds the pieces of stripe s whose members are lost: rows [r0, r1) of
   * the stripe's cells are read from d members and decoded.
   */
  private void rebuild(long s, List<Piece> missing, byte[] dst) throws IOException {
    long base = s * ec.cellSize;
    long r0 = ec.cellSize;
    long r1 = 0;
    for (Piece pc : missing) {
      r0 = Math.min(r0, pc.memberOff - base);
      r1 = Math.max(r1, pc.memberOff - base + pc.len);
    }
    int[] lens = new int[ec.members()];
    ec.cellLens(n, s, lens);
    for (int i = 0; i < lens.length; i++) {
      lens[i] = (int) Math.min(Math.max(lens[i] - r0, 0), r1 - r0); // the rows' part of each cell
    }
    int width = lens[0];
    byte[][] rows = new byte[ec.members()][];
    boolean[] present = new boolean[ec.members()];
    while (true) {
      // Members with no bytes in these rows count as read (zeros); the
      // others are read until d are there.
      int have = 0;
      List<Integer> want = new ArrayList<>();
      for (int m = 0; m < ec.members(); m++) {
        if (lens[m] == 0 || present[m]) {
          have++;
        } else if (lost[m] == null) {
          want.add(m);
        }
      }
      if (have >= ec.data) {
        break;
      }
      if (have + want.size() < ec.data) {
        throw new IOException("strato: block group stripe " + s + " of " + ec + ": too many members lost to rebuild: "
            + lostReasons());
      }
      want = want.subList(0, ec.data - have);
      Pending[] asked = new Pending[want.size()];
      for (int i = 0; i < asked.length; i++) {
        int m = want.get(i);
        asked[i] = members.ask(m, base + r0, lens[m]);
      }
      for (int i = 0; i < asked.length; i++) {
        int m = want.get(i);
        byte[] row = new byte[width];
        try {
          asked[i].get(row, new int[] {0}, new int[] {0}, new int[] {lens[m]});
          rows[m] = row;
          present[m] = true;
        } catch (IOException e) {
          markLost(m, e.getMessage());
        }
      }
    }
    int[] offs = new int[ec.members()];
    for (int m = 0; m < ec.members(); m++) {
      if (lens[m] == 0 && !present[m]) {
        rows[m] = new byte[width];
        present[m] = true;
      } else if (!present[m]) {
        rows[m] = m < ec.data ? new byte[width] : null;
      }
    }
    try {
      ec.reconstructData(rows, offs, present, width);
    } catch (IllegalStateException e) {
      throw new IOException("strato: block group stripe " + s + ": " + e.getMessage() + ": " + lostReasons(), e);
    }
    for (Piece pc : missing) {
      int lo = (int) (pc.memberOff - base - r0);
      System.arraycopy(rows[pc.member], lo, dst, pc.dstOff, pc.len);
    }
  }

  private String lostReasons() {
    List<String> out = new ArrayList<>();
    for (int m = 0; m < lost.length; m++) {
      if (lost[m] != null) {
        out.add("member " + m + ": " + lost[m]);
      }
    }
    return String.join("; ", out);
  }
}
