package io.strato.client;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * GfRows' loop with the JDK's Vector API (the jdk.incubator.vector module):
 * a product by a constant c is two table lookups of 16 entries, c times the
 * low nibble and c times the high nibble, done for a whole vector of bytes
 * by one byte shuffle each (the split-table method of ISA-L and of
 * klauspost/reedsolomon). About ten times the scalar loop's speed.
 *
 * <p>Only loaded when the JVM runs with {@code --add-modules
 * jdk.incubator.vector} (ErasureCode checks first); without it the scalar
 * loop runs, with the same bytes.
 */
final class GfVector {
  private static final VectorSpecies<Byte> S = ByteVector.SPECIES_PREFERRED;

  private GfVector() {}

  /** The nibble tables of a row's constants: lo[j], hi[j], each the 16 products repeated to the vector's length. */
  static final class Row {
    final ByteVector[] lo;
    final ByteVector[] hi;
    final byte[][] mul;

    Row(byte[][] mul) {
      this.mul = mul;
      lo = new ByteVector[mul.length];
      hi = new ByteVector[mul.length];
      for (int j = 0; j < mul.length; j++) {
        byte[] l = new byte[S.length()];
        byte[] h = new byte[S.length()];
        for (int i = 0; i < l.length; i++) {
          l[i] = mul[j][i & 15];
          h[i] = mul[j][(i & 15) << 4];
        }
        lo[j] = ByteVector.fromArray(S, l, 0);
        hi[j] = ByteVector.fromArray(S, h, 0);
      }
    }
  }

  /** Prepares rows of product tables (tables[r][j] = MUL[c]) for mulRows (a Row[]; Object keeps callers free of the module's types). */
  static Object prepare(byte[][][] tables) {
    Row[] rows = new Row[tables.length];
    for (int r = 0; r < tables.length; r++) {
      rows[r] = new Row(tables[r]);
    }
    return rows;
  }

  /** As GfRows.mulRows, with prepare's rows. */
  static void mulRows(Object prepared, byte[][] in, int[] io, byte[][] out, int[] oo, int len) {
    Row[] rows = (Row[]) prepared;
    int step = S.length();
    int whole = len - len % step;
    ByteVector low = ByteVector.broadcast(S, (byte) 0x0f);
    for (int r = 0; r < rows.length; r++) {
      Row row = rows[r];
      byte[] o = out[r];
      int at = oo[r];
      for (int i = 0; i < whole; i += step) {
        ByteVector acc = ByteVector.zero(S);
        for (int j = 0; j < in.length; j++) {
          ByteVector x = ByteVector.fromArray(S, in[j], io[j] + i);
          ByteVector l = x.and(low);
          ByteVector h = x.lanewise(VectorOperators.LSHR, 4).and(low);
          acc = acc.lanewise(VectorOperators.XOR, row.lo[j].rearrange(l.toShuffle()))
              .lanewise(VectorOperators.XOR, row.hi[j].rearrange(h.toShuffle()));
        }
        acc.intoArray(o, at + i);
      }
      for (int i = whole; i < len; i++) {
        int v = 0;
        for (int j = 0; j < in.length; j++) {
          v ^= row.mul[j][in[j][io[j] + i] & 0xff];
        }
        o[at + i] = (byte) v;
      }
    }
  }
}
