package io.strato.client;

import io.strato.proto.v1.ErasureCodec;
import io.strato.proto.v1.ErasureCoding;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * An erasure coding config and its code: the Go package ec's twin (docs/ec.md,
 * "Block groups, stripes and cells" and "The codec"), byte for byte.
 *
 * <p>Layout: a block group's bytes are cut into cells of cellSize, dealt
 * round-robin to the d data members (cell k to member k mod d at offset
 * (k div d)·cell); the d cells at one offset are a stripe, and its p parity
 * cells are at that offset on the parity members. A short last stripe's cells
 * count as zero-padded to its first cell's length, which is its parity cells'
 * length; the padding is never stored.
 *
 * <p>Code: Reed-Solomon over GF(2^8) with the polynomial 0x11d; parity member
 * i (members counted from 0, i ≥ d) has the coefficient 1/(i XOR j) for data
 * member j (a Cauchy matrix: ISA-L's gf_gen_cauchy1_matrix, klauspost/reedsolomon's
 * WithCauchyMatrix, Hadoop's RSRawEncoder). XOR's one parity cell is the XOR of
 * the data cells. ec/testdata/golden.txt pins both (TestErasureCodeGolden).
 *
 * <p>Immutable and safe for concurrent use.
 */
public final class ErasureCode {
  /** The codec of a config. */
  public enum Codec {
    RS,
    XOR
  }

  public static final int DEFAULT_CELL_SIZE = 1 << 20;

  public final Codec codec;
  public final int data;
  public final int parity;
  public final int cellSize;
  /** Rows d.. of the (d+p) x d encoding matrix (the first d are the identity). */
  private final byte[][] parityRows;
  /** The product tables of parityRows' constants: parityTables[i][j] = MUL[parityRows[i][j]]. */
  private final byte[][][] parityTables;
  /** GfVector's form of parityTables, when the Vector API is used; else null. */
  private final Object vectorRows;

  /**
   * Whether the JVM has the Vector API (started with {@code --add-modules
   * jdk.incubator.vector}): parity is then computed about ten times faster
   * (GfVector), the same bytes. -Dstrato.ec.scalar=true turns it off.
   */
  public static final boolean VECTOR = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()
      && !Boolean.getBoolean("strato.ec.scalar");

  // GF(2^8) over x^8+x^4+x^3+x^2+1 (0x11d), generator 2.
  private static final byte[] EXP = new byte[512];
  private static final int[] LOG = new int[256];
  /** MUL[a][b] = a·b. */
  private static final byte[][] MUL = new byte[256][256];

  static {
    int x = 1;
    for (int i = 0; i < 255; i++) {
      EXP[i] = (byte) x;
      LOG[x] = i;
      x <<= 1;
      if ((x & 0x100) != 0) {
        x ^= 0x11d;
      }
    }
    for (int i = 255; i < 512; i++) {
      EXP[i] = EXP[i - 255];
    }
    for (int a = 1; a < 256; a++) {
      for (int b = 1; b < 256; b++) {
        MUL[a][b] = EXP[LOG[a] + LOG[b]];
      }
    }
  }

  static int mul(int a, int b) {
    return MUL[a & 0xff][b & 0xff] & 0xff;
  }

  static int inv(int a) {
    if ((a & 0xff) == 0) {
      throw new ArithmeticException("GF(2^8): 0 has no inverse");
    }
    return EXP[255 - LOG[a & 0xff]] & 0xff;
  }

  public ErasureCode(Codec codec, int data, int parity, int cellSize) {
    this(codec, data, parity, cellSize, VECTOR);
  }

  /** vector: compute parity with the Vector API (only when VECTOR). */
  ErasureCode(Codec codec, int data, int parity, int cellSize, boolean vector) {
    if (data < 2 || data > 32) {
      throw new IllegalArgumentException("erasure coding: " + data + " data members (2 to 32)");
    }
    if (codec == Codec.XOR ? parity != 1 : parity < 1 || parity > 16) {
      throw new IllegalArgumentException("erasure coding: " + parity + " parity members ("
          + (codec == Codec.XOR ? "xor has exactly 1" : "1 to 16") + ")");
    }
    if (cellSize <= 0 || cellSize % 4096 != 0 || cellSize > 16 << 20) {
      throw new IllegalArgumentException("erasure coding: cell size " + cellSize
          + " is not a multiple of 4096 up to 16 MiB");
    }
    this.codec = codec;
    this.data = data;
    this.parity = parity;
    this.cellSize = cellSize;
    this.parityRows = new byte[parity][data];
    this.parityTables = new byte[parity][data][];
    for (int i = 0; i < parity; i++) {
      for (int j = 0; j < data; j++) {
        parityRows[i][j] = (byte) (codec == Codec.XOR ? 1 : inv((data + i) ^ j));
        parityTables[i][j] = MUL[parityRows[i][j] & 0xff];
      }
    }
    this.vectorRows = vector && VECTOR ? GfVector.prepare(parityTables) : null;
  }

  /** The code of an API config (cell size 0: 1 MiB). */
  public static ErasureCode of(ErasureCoding e) {
    Codec c;
    if (e.getCodec() == ErasureCodec.ERASURE_CODEC_RS) {
      c = Codec.RS;
    } else if (e.getCodec() == ErasureCodec.ERASURE_CODEC_XOR) {
      c = Codec.XOR;
    } else {
      throw new IllegalArgumentException("erasure coding: codec " + e.getCodec() + " (RS or XOR)");
    }
    return new ErasureCode(c, e.getData(), e.getParity(), e.getCellSize() == 0 ? DEFAULT_CELL_SIZE : e.getCellSize());
  }

  /** Parses CODEC-DATA-PARITY[-CELLk] (rs-3-2-1024k), as ec.Parse does. */
  public static ErasureCode parse(String s) {
    String[] f = s.trim().toLowerCase(Locale.ROOT).split("-");
    if (f.length != 3 && f.length != 4) {
      throw new IllegalArgumentException("erasure coding: " + s + " is not CODEC-DATA-PARITY-CELL (rs-3-2-1024k)");
    }
    Codec c = switch (f[0]) {
      case "rs" -> Codec.RS;
      case "xor" -> Codec.XOR;
      default -> throw new IllegalArgumentException("erasure coding: codec " + f[0] + " (rs or xor)");
    };
    int cell = DEFAULT_CELL_SIZE;
    if (f.length == 4) {
      if (!f[3].endsWith("k")) {
        throw new IllegalArgumentException("erasure coding: cell size " + f[3] + " needs a k suffix");
      }
      cell = Integer.parseInt(f[3].substring(0, f[3].length() - 1)) * 1024;
    }
    return new ErasureCode(c, Integer.parseInt(f[1]), Integer.parseInt(f[2]), cell);
  }

  public ErasureCoding toProto() {
    return ErasureCoding.newBuilder().setCodec(codec == Codec.RS ? ErasureCodec.ERASURE_CODEC_RS
        : ErasureCodec.ERASURE_CODEC_XOR).setData(data).setParity(parity).setCellSize(cellSize).build();
  }

  /** How parity is computed: "vector" (the Vector API) or "scalar". */
  public String kernel() {
    return vectorRows != null ? "vector" : "scalar";
  }

  @Override
  public String toString() {
    return codec.name().toLowerCase(Locale.ROOT) + "-" + data + "-" + parity + "-" + (cellSize / 1024) + "k";
  }

  public int members() {
    return data + parity;
  }

  /** Data bytes of a full stripe: d cells. */
  public long stripeSize() {
    return (long) data * cellSize;
  }

  /** Stripes of a group of n data bytes (the last one possibly short). */
  public long stripes(long n) {
    return (n + stripeSize() - 1) / stripeSize();
  }

  /** Member m's block length in a group of n data bytes (a parity member's is member 0's). */
  public long memberLen(long n, int m) {
    long full = n / stripeSize();
    long rem = n % stripeSize();
    if (m >= data) {
      m = 0;
    }
    return full * cellSize + Math.min(Math.max(rem - (long) m * cellSize, 0), cellSize);
  }

  /**
   * Fills lens (d+p) with the cell lengths of stripe s of a group of n bytes
   * and returns the stripe's cell length (its first cell's, its parity's).
   */
  public int cellLens(long n, long s, int[] lens) {
    long rem = n - s * stripeSize();
    for (int i = 0; i < data; i++) {
      lens[i] = (int) Math.min(Math.max(rem - (long) i * cellSize, 0), cellSize);
    }
    for (int i = data; i < members(); i++) {
      lens[i] = lens[0];
    }
    return lens[0];
  }

  /** The data member holding group offset off. */
  public int memberOf(long off) {
    return (int) ((off / cellSize) % data);
  }

  /** Where group offset off lies in its data member's block. */
  public long memberOffset(long off) {
    long k = off / cellSize;
    return (k / data) * cellSize + off % cellSize;
  }

  /**
   * Computes the parity of one stripe: shards[0..d) are the data cells, each
   * read at offs[i] for len bytes, a null one (or one past the end of a
   * short stripe) counting as zeros; shards[d..d+p) receive len bytes at
   * offs[i].
   */
  public void encode(byte[][] shards, int[] offs, int[] dataLens, int len) {
    boolean whole = true;
    for (int j = 0; j < data; j++) {
      whole &= shards[j] != null && dataLens[j] >= len;
    }
    if (whole) {
      // Every data cell as long as the parity (all but a short last stripe): one pass per parity cell.
      byte[][] in = java.util.Arrays.copyOf(shards, data);
      int[] io = java.util.Arrays.copyOf(offs, data);
      byte[][] out = java.util.Arrays.copyOfRange(shards, data, data + parity);
      int[] oo = java.util.Arrays.copyOfRange(offs, data, data + parity);
      if (vectorRows != null) {
        GfVector.mulRows(vectorRows, in, io, out, oo, len);
      } else {
        GfRows.mulRows(parityTables, in, io, out, oo, len);
      }
      return;
    }
    for (int i = 0; i < parity; i++) {
      byte[] out = shards[data + i];
      int oo = offs[data + i];
      java.util.Arrays.fill(out, oo, oo + len, (byte) 0);
      for (int j = 0; j < data; j++) {
        int n = Math.min(dataLens[j], len);
        if (shards[j] == null || n <= 0) {
          continue;
        }
        mulAdd(parityRows[i][j] & 0xff, shards[j], offs[j], out, oo, n);
      }
    }
  }

  /** out[oo..oo+n) ^= c · in[io..io+n). */
  private static void mulAdd(int c, byte[] in, int io, byte[] out, int oo, int n) {
    if (c == 1) {
      for (int k = 0; k < n; k++) {
        out[oo + k] ^= in[io + k];
      }
      return;
    }
    byte[] t = MUL[c];
    for (int k = 0; k < n; k++) {
      out[oo + k] ^= t[in[io + k] & 0xff];
    }
  }

  /** Row r of the (d+p) x d encoding matrix. */
  private byte[] row(int r) {
    if (r >= data) {
      return parityRows[r - data];
    }
    byte[] id = new byte[data];
    id[r] = 1;
    return id;
  }

  /**
   * Rebuilds the lost data cells of one stripe, len bytes each (all cells
   * counted as zero-padded to len). present[i] says whether shards[i] holds
   * cell i at offs[i]; a lost data cell i with shards[i] non-null receives
   * its bytes there. Needs at least d present; any d give the same bytes.
   *
   * @throws IllegalStateException with fewer than d present
   */
  public void reconstructData(byte[][] shards, int[] offs, boolean[] present, int len) {
    int[] use = new int[data];
    int k = 0;
    for (int i = 0; i < members() && k < data; i++) {
      if (present[i]) {
        use[k++] = i;
      }
    }
    if (k < data) {
      throw new IllegalStateException("erasure coding: " + this + ": " + k + " cells present, need " + data);
    }
    byte[][] m = new byte[data][];
    for (int r = 0; r < data; r++) {
      m[r] = row(use[r]).clone();
    }
    byte[][] dec = invert(m);
    if (vectorRows != null) {
      rebuildVector(dec, use, shards, offs, present, len);
      return;
    }
    for (int j = 0; j < data; j++) {
      if (present[j] || shards[j] == null) {
        continue;
      }
      byte[] out = shards[j];
      java.util.Arrays.fill(out, offs[j], offs[j] + len, (byte) 0);
      for (int r = 0; r < data; r++) {
        int c = dec[j][r] & 0xff;
        if (c != 0) {
          mulAdd(c, shards[use[r]], offs[use[r]], out, offs[j], len);
        }
      }
    }
  }

  /** reconstructData's sums with the Vector API: each lost data cell from the d cells used, one pass. */
  private void rebuildVector(byte[][] dec, int[] use, byte[][] shards, int[] offs, boolean[] present, int len) {
    byte[][] in = new byte[data][];
    int[] io = new int[data];
    for (int r = 0; r < data; r++) {
      in[r] = shards[use[r]];
      io[r] = offs[use[r]];
    }
    List<Integer> lost = new ArrayList<>();
    for (int j = 0; j < data; j++) {
      if (!present[j] && shards[j] != null) {
        lost.add(j);
      }
    }
    byte[][][] tables = new byte[lost.size()][data][];
    byte[][] out = new byte[lost.size()][];
    int[] oo = new int[lost.size()];
    for (int k = 0; k < lost.size(); k++) {
      int j = lost.get(k);
      for (int r = 0; r < data; r++) {
        tables[k][r] = MUL[dec[j][r] & 0xff];
      }
      out[k] = shards[j];
      oo[k] = offs[j];
    }
    GfVector.mulRows(GfVector.prepare(tables), in, io, out, oo, len);
  }

  /** The inverse of a square matrix over GF(2^8) (Gauss-Jordan); m is destroyed. */
  static byte[][] invert(byte[][] m) {
    int n = m.length;
    byte[][] r = new byte[n][n];
    for (int i = 0; i < n; i++) {
      r[i][i] = 1;
    }
    for (int col = 0; col < n; col++) {
      int p = col;
      while (p < n && m[p][col] == 0) {
        p++;
      }
      if (p == n) {
        throw new IllegalStateException("erasure coding: singular matrix");
      }
      byte[] t = m[p];
      m[p] = m[col];
      m[col] = t;
      t = r[p];
      r[p] = r[col];
      r[col] = t;
      int iv = inv(m[col][col]);
      for (int j = 0; j < n; j++) {
        m[col][j] = (byte) mul(m[col][j], iv);
        r[col][j] = (byte) mul(r[col][j], iv);
      }
      for (int i = 0; i < n; i++) {
        int f = m[i][col] & 0xff;
        if (i == col || f == 0) {
          continue;
        }
        for (int j = 0; j < n; j++) {
          m[i][j] ^= (byte) mul(f, m[col][j]);
          r[i][j] ^= (byte) mul(f, r[col][j]);
        }
      }
    }
    return r;
  }

  /**
   * Lays a whole group's data out as its members' blocks, parity computed
   * (ec.Coder.EncodeGroup's twin, for tests and tools).
   */
  public byte[][] encodeGroup(byte[] b) {
    int[] lens = new int[members()];
    byte[][] out = new byte[members()][];
    for (int m = 0; m < members(); m++) {
      out[m] = new byte[(int) memberLen(b.length, m)];
    }
    byte[][] shards = new byte[members()][];
    int[] offs = new int[members()];
    for (long s = 0; s < stripes(b.length); s++) {
      int n = cellLens(b.length, s, lens);
      for (int i = 0; i < data; i++) {
        if (lens[i] > 0) {
          System.arraycopy(b, (int) (s * stripeSize() + (long) i * cellSize), out[i], (int) (s * cellSize), lens[i]);
        }
      }
      for (int i = 0; i < members(); i++) {
        shards[i] = out[i];
        offs[i] = (int) (s * cellSize);
      }
      encode(shards, offs, lens, n);
    }
    return out;
  }
}
