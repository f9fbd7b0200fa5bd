package io.strato.client;

/**
 * The inner loop of erasure coding's encode: output rows (parity cells),
 * each a sum over GF(2^8) of constant multiples of the same inputs (the
 * stripe's data cells).
 *
 * <p>Each output byte is computed in one pass, up to three inputs per pass,
 * and stored once, rather than one read-modify-write pass per input; the
 * work goes in blocks of {@value #BLOCK} bytes so that the inputs' block
 * stays in the CPU's cache while every output row reads it. A constant's
 * products are its row of a 256-byte table (MUL[c]), so a product is one
 * lookup.
 */
final class GfRows {
  /** Bytes per block: the inputs' block (d of them) stays in the L1/L2 cache across the output rows. */
  static final int BLOCK = 8 << 10;

  private GfRows() {}

  /**
   * out[r][oo[r] .. oo[r]+len) = sum over j of tables[r][j] · in[j][io[j] .. io[j]+len),
   * where tables[r][j] is the 256-byte product table of row r's j-th constant.
   */
  static void mulRows(byte[][][] tables, byte[][] in, int[] io, byte[][] out, int[] oo, int len) {
    int d = in.length;
    for (int b = 0; b < len; b += BLOCK) {
      int n = Math.min(BLOCK, len - b);
      for (int r = 0; r < out.length; r++) {
        byte[][] t = tables[r];
        byte[] o = out[r];
        int at = oo[r] + b;
        int j = Math.min(d, 3);
        set(t, in, io, j, b, o, at, n);
        for (; j < d; j += 3) {
          add(t, in, io, j, Math.min(3, d - j), b, o, at, n);
        }
      }
    }
  }

  /** o[at..at+n) = the products of the first k inputs (k 1 to 3) at block offset b. */
  private static void set(byte[][] t, byte[][] in, int[] io, int k, int b, byte[] o, int at, int n) {
    byte[] t0 = t[0];
    byte[] a = in[0];
    int ia = io[0] + b;
    if (k == 1) {
      for (int i = 0; i < n; i++) {
        o[at + i] = t0[a[ia + i] & 0xff];
      }
      return;
    }
    byte[] t1 = t[1];
    byte[] c = in[1];
    int ic = io[1] + b;
    if (k == 2) {
      for (int i = 0; i < n; i++) {
        o[at + i] = (byte) (t0[a[ia + i] & 0xff] ^ t1[c[ic + i] & 0xff]);
      }
      return;
    }
    byte[] t2 = t[2];
    byte[] e = in[2];
    int ie = io[2] + b;
    for (int i = 0; i < n; i++) {
      o[at + i] = (byte) (t0[a[ia + i] & 0xff] ^ t1[c[ic + i] & 0xff] ^ t2[e[ie + i] & 0xff]);
    }
  }

  /** o[at..at+n) ^= the products of inputs j..j+k (k 1 to 3) at block offset b. */
  private static void add(byte[][] t, byte[][] in, int[] io, int j, int k, int b, byte[] o, int at, int n) {
    byte[] t0 = t[j];
    byte[] a = in[j];
    int ia = io[j] + b;
    if (k == 1) {
      for (int i = 0; i < n; i++) {
        o[at + i] ^= t0[a[ia + i] & 0xff];
      }
      return;
    }
    byte[] t1 = t[j + 1];
    byte[] c = in[j + 1];
    int ic = io[j + 1] + b;
    if (k == 2) {
      for (int i = 0; i < n; i++) {
        o[at + i] ^= (byte) (t0[a[ia + i] & 0xff] ^ t1[c[ic + i] & 0xff]);
      }
      return;
    }
    byte[] t2 = t[j + 2];
    byte[] e = in[j + 2];
    int ie = io[j + 2] + b;
    for (int i = 0; i < n; i++) {
      o[at + i] ^= (byte) (t0[a[ia + i] & 0xff] ^ t1[c[ic + i] & 0xff] ^ t2[e[ie + i] & 0xff]);
    }
  }
}
