package io.strato.client.wire;

import java.io.ByteArrayOutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Big-endian encoding and checked decoding of the protocol's fields (docs/wire.md §1, §3). */
final class Codec {
  private Codec() {}

  /** A growable big-endian writer. */
  static final class Enc {
    private final ByteArrayOutputStream b = new ByteArrayOutputStream(64);

    Enc u8(int v) {
      b.write(v);
      return this;
    }

    Enc u16(int v) {
      b.write(v >>> 8);
      b.write(v);
      return this;
    }

    Enc u32(long v) {
      u16((int) (v >>> 16));
      return u16((int) v);
    }

    Enc u64(long v) {
      u32(v >>> 32);
      return u32(v);
    }

    Enc bytes(byte[] v) {
      b.write(v, 0, v.length);
      return this;
    }

    Enc str(String s, int max) {
      byte[] v = s.getBytes(StandardCharsets.UTF_8);
      if (v.length > max) {
        throw new IllegalArgumentException("string of " + v.length + " bytes over its limit of " + max);
      }
      u16(v.length);
      return bytes(v);
    }

    Enc block(BlockId id) {
      return u64(id.containerId()).u64(id.localId());
    }

    Enc sums(Checksums s) {
      u8(s.type).u32(s.bytesPerChecksum).u32(s.count());
      return bytes(s.values);
    }

    Enc chunk(ChunkRecord c) {
      u64(c.offset()).u32(c.length());
      return sums(c.checksums());
    }

    Enc followers(List<String> f) {
      if (f.size() > Wire.MAX_FOLLOWERS) {
        throw new IllegalArgumentException(f.size() + " followers over the limit of " + Wire.MAX_FOLLOWERS);
      }
      u16(f.size());
      for (String a : f) {
        str(a, Wire.MAX_ADDR);
      }
      return this;
    }

    byte[] done() {
      return b.toByteArray();
    }
  }

  /** A checked reader of one typed header (or payload): every error is a PROTOCOL_ERROR. */
  static final class Dec {
    private final ByteBuffer b;
    private final String what;

    Dec(byte[] bytes, String what) {
      this.b = ByteBuffer.wrap(bytes);
      this.what = what;
    }

    WireException fail(String msg) {
      return new WireException(Wire.PROTOCOL_ERROR, what + ": " + msg, List.of());
    }

    private void need(int n, String field) throws WireException {
      if (b.remaining() < n) {
        throw fail(field + ": " + n + " bytes needed, " + b.remaining() + " left");
      }
    }

    int u8(String field) throws WireException {
      need(1, field);
      return b.get() & 0xff;
    }

    int u16(String field) throws WireException {
      need(2, field);
      return b.getShort() & 0xffff;
    }

    long u32(String field) throws WireException {
      need(4, field);
      return b.getInt() & 0xffffffffL;
    }

    /** A u32 used as a length: must fit an int. */
    int len32(String field) throws WireException {
      long v = u32(field);
      if (v > Integer.MAX_VALUE) {
        throw fail(field + " " + v + " too large");
      }
      return (int) v;
    }

    long u64(String field) throws WireException {
      need(8, field);
      return b.getLong();
    }

    long i64(String field) throws WireException {
      return u64(field);
    }

    byte[] bytes(int n, String field) throws WireException {
      need(n, field);
      byte[] v = new byte[n];
      b.get(v);
      return v;
    }

    String str(int max, String field) throws WireException {
      int n = u16(field);
      if (n > max) {
        throw fail(field + ": " + n + " bytes over its limit of " + max);
      }
      byte[] v = bytes(n, field);
      try {
        CharBuffer cb = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(v));
        return cb.toString();
      } catch (CharacterCodingException e) {
        throw fail(field + ": invalid UTF-8");
      }
    }

    BlockId block() throws WireException {
      long c = u64("containerID");
      long l = u64("localID");
      if (c == 0) {
        throw fail("containerID 0");
      }
      return new BlockId(c, l);
    }

    Checksums sums(String field) throws WireException {
      byte t = (byte) u8(field + " type");
      int bpc = len32(field + " bytesPerChecksum");
      int n = len32(field + " count");
      int size = Checksums.size(t);
      if (size < 0) {
        throw fail(field + ": unknown checksum type " + t);
      }
      if (t == Checksums.NONE) {
        if (bpc != 0 || n != 0) {
          throw fail(field + ": type NONE with bytesPerChecksum " + bpc + " and " + n + " values");
        }
        return Checksums.EMPTY_NONE;
      }
      if (bpc == 0 || bpc > Wire.MAX_BYTES_PER_CHECKSUM) {
        throw fail(field + ": bytesPerChecksum " + bpc + " out of range");
      }
      if ((long) n * size > b.remaining()) {
        throw fail(field + ": " + n + " values do not fit");
      }
      return new Checksums(t, bpc, bytes(n * size, field + " values"));
    }

    /** A chunk record whose checksums cover it exactly. */
    ChunkRecord chunk(String field) throws WireException {
      long off = i64(field + " offset");
      int len = len32(field + " length");
      Checksums s = sums(field);
      if (off < 0 || len == 0 || off > Long.MAX_VALUE - len) {
        throw fail(field + ": range [" + off + ", +" + len + ") invalid");
      }
      if (s.type != Checksums.NONE && s.count() != Checksums.windows(len, s.bytesPerChecksum)) {
        throw fail(field + " at " + off + ": " + len + " bytes need "
            + Checksums.windows(len, s.bytesPerChecksum) + " checksums, got " + s.count());
      }
      return new ChunkRecord(off, len, s);
    }

    List<String> followers() throws WireException {
      int n = u16("followerCount");
      if (n > Wire.MAX_FOLLOWERS) {
        throw fail(n + " followers over the limit of " + Wire.MAX_FOLLOWERS);
      }
      List<String> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        String a = str(Wire.MAX_ADDR, "follower address");
        if (a.isEmpty() || a.lastIndexOf(':') <= 0 || out.contains(a)) {
          throw fail("follower address \"" + a + "\" invalid or repeated");
        }
        out.add(a);
      }
      return out;
    }

    boolean atEnd() {
      return !b.hasRemaining();
    }

    void finish() throws WireException {
      if (b.hasRemaining()) {
        throw fail(b.remaining() + " trailing bytes");
      }
    }
  }

  static WireException underflow(String what, BufferUnderflowException e) {
    return new WireException(Wire.PROTOCOL_ERROR, what + ": truncated", List.of());
  }
}
