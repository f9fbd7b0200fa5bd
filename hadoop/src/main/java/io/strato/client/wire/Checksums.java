package io.strato.client.wire;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import java.util.zip.Checksum;

/**
 * A checksum list (docs/wire.md §3.2): one value per window of
 * bytesPerChecksum bytes of the bytes it covers, back to back in values.
 * CRC values are big-endian u32s; digests are their bytes.
 */
public final class Checksums {
  public static final byte NONE = 0;
  public static final byte CRC32 = 1;
  public static final byte CRC32C = 2;
  public static final byte SHA256 = 3;
  public static final byte MD5 = 4;

  public final byte type;
  public final int bytesPerChecksum;
  public final byte[] values;

  public Checksums(byte type, int bytesPerChecksum, byte[] values) {
    this.type = type;
    this.bytesPerChecksum = bytesPerChecksum;
    this.values = values;
  }

  public static final Checksums EMPTY_NONE = new Checksums(NONE, 0, new byte[0]);

  /** The size of one value of a type; -1 for an unknown type. */
  public static int size(byte type) {
    switch (type) {
      case NONE:
        return 0;
      case CRC32:
      case CRC32C:
        return 4;
      case SHA256:
        return 32;
      case MD5:
        return 16;
      default:
        return -1;
    }
  }

  public int count() {
    int s = size(type);
    return s <= 0 ? 0 : values.length / s;
  }

  /** Windows of bpc bytes needed to cover n bytes. */
  public static int windows(long n, int bpc) {
    return (int) ((n + bpc - 1) / bpc);
  }

  /** Computes the list of a type over b[off, off+len). */
  public static Checksums compute(byte type, int bpc, byte[] b, int off, int len) {
    if (type == NONE) {
      return EMPTY_NONE;
    }
    byte[] out = new byte[windows(len, bpc) * size(type)];
    computeInto(type, bpc, b, off, len, out, 0);
    return new Checksums(type, bpc, out);
  }

  /**
   * Computes the values of the windows of b[off, off+len) into out, the first at value index
   * first: a list filled piece by piece as its bytes arrive, while they are in the cache.
   */
  public static void computeInto(byte type, int bpc, byte[] b, int off, int len, byte[] out, int first) {
    if (type == NONE) {
      return;
    }
    int size = size(type);
    int n = windows(len, bpc);
    Checksum c = type == CRC32C ? new CRC32C() : type == CRC32 ? new CRC32() : null;
    for (int i = 0; i < n; i++) {
      int s = off + i * bpc;
      int e = Math.min(s + bpc, off + len);
      int at = (first + i) * size;
      if (c == null) {
        value(type, b, s, e - s, out, at);
        continue;
      }
      c.reset();
      c.update(b, s, e - s);
      int v = (int) c.getValue();
      out[at] = (byte) (v >>> 24);
      out[at + 1] = (byte) (v >>> 16);
      out[at + 2] = (byte) (v >>> 8);
      out[at + 3] = (byte) v;
    }
  }

  /** A digest's value (SHA-256, MD5); computeInto computes the CRCs itself. */
  private static void value(byte type, byte[] b, int off, int len, byte[] out, int at) {
    switch (type) {
      case SHA256:
      case MD5: {
        try {
          MessageDigest md = MessageDigest.getInstance(type == SHA256 ? "SHA-256" : "MD5");
          md.update(b, off, len);
          byte[] d = md.digest();
          System.arraycopy(d, 0, out, at, d.length);
        } catch (NoSuchAlgorithmException e) {
          throw new IllegalStateException(e);
        }
        return;
      }
      default:
        throw new IllegalArgumentException("checksum type " + type);
    }
  }

  /**
   * Verifies b[off, off+len) against this list (windows starting at off).
   *
   * @return -1 if every window matches, else the index of the first window that does not
   */
  public int verify(byte[] b, int off, int len) {
    return verify(ByteBuffer.wrap(b), off, len);
  }

  /**
   * Verifies b's bytes [off, off+len) (absolute indices; b's position and
   * limit are left alone) against this list, windows starting at off. A
   * direct buffer is checksummed where it lies (CRC32C and CRC32 are
   * intrinsics over its memory).
   *
   * @return -1 if every window matches, else the index of the first window that does not
   */
  public int verify(ByteBuffer b, int off, int len) {
    if (type == NONE) {
      return -1;
    }
    int size = size(type);
    int n = windows(len, bytesPerChecksum);
    if (n != count()) {
      return 0;
    }
    ByteBuffer d = b.duplicate();
    if (type == CRC32C || type == CRC32) {
      Checksum c = type == CRC32C ? new CRC32C() : new CRC32();
      for (int i = 0; i < n; i++) {
        int s = off + i * bytesPerChecksum;
        int e = Math.min(s + bytesPerChecksum, off + len);
        c.reset();
        d.limit(e).position(s);
        c.update(d);
        int v = (int) c.getValue();
        int at = i * 4;
        int want = (values[at] & 0xff) << 24 | (values[at + 1] & 0xff) << 16 | (values[at + 2] & 0xff) << 8
            | (values[at + 3] & 0xff);
        if (v != want) {
          return i;
        }
      }
      return -1;
    }
    byte[] one = new byte[size];
    for (int i = 0; i < n; i++) {
      int s = off + i * bytesPerChecksum;
      int e = Math.min(s + bytesPerChecksum, off + len);
      try {
        MessageDigest md = MessageDigest.getInstance(type == SHA256 ? "SHA-256" : "MD5");
        d.limit(e).position(s);
        md.update(d);
        System.arraycopy(md.digest(), 0, one, 0, size);
      } catch (NoSuchAlgorithmException ex) {
        throw new IllegalStateException(ex);
      }
      if (!Arrays.equals(one, 0, size, values, i * size, i * size + size)) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Checksums)) {
      return false;
    }
    Checksums c = (Checksums) o;
    return type == c.type && bytesPerChecksum == c.bytesPerChecksum && Arrays.equals(values, c.values);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(values) * 31 + type;
  }

  @Override
  public String toString() {
    return "Checksums{type=" + type + ", bpc=" + bytesPerChecksum + ", count=" + count() + "}";
  }
}
