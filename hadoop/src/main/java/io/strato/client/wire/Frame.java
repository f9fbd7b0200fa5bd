package io.strato.client.wire;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * One frame (docs/wire.md §2): the 24-byte frame header, a typed header and a
 * payload. The payload of a frame read here is a byte array of its own; one
 * to send may be a slice of a larger array (payloadOffset, payloadLength).
 */
public final class Frame {
  public final int version;
  public final int type;
  public final int flags;
  public final long requestId;
  public final byte[] header;
  public final byte[] payload;
  public final int payloadOffset;
  public final int payloadLength;

  public Frame(int version, int type, int flags, long requestId, byte[] header, byte[] payload,
      int payloadOffset, int payloadLength) {
    this.version = version;
    this.type = type;
    this.flags = flags;
    this.requestId = requestId;
    this.header = header;
    this.payload = payload;
    this.payloadOffset = payloadOffset;
    this.payloadLength = payloadLength;
  }

  public Frame(int type, int flags, long requestId, byte[] header, byte[] payload) {
    this(Wire.VERSION, type, flags, requestId, header, payload == null ? new byte[0] : payload, 0,
        payload == null ? 0 : payload.length);
  }

  public boolean isResponse() {
    return (flags & Wire.FLAG_RESPONSE) != 0;
  }

  public boolean isError() {
    return (flags & Wire.FLAG_ERROR) != 0;
  }

  /** The payload bytes as an array of exactly payloadLength bytes. */
  public byte[] payloadBytes() {
    if (payloadOffset == 0 && payloadLength == payload.length) {
      return payload;
    }
    byte[] b = new byte[payloadLength];
    System.arraycopy(payload, payloadOffset, b, 0, payloadLength);
    return b;
  }

  /** The 24-byte frame header. */
  public byte[] frameHeader() {
    ByteBuffer b = ByteBuffer.allocate(Wire.FRAME_HEADER_LENGTH);
    putFrameHeader(b, version, type, flags, requestId, header.length, payloadLength);
    return b.array();
  }

  /** Puts a 24-byte frame header into b at its position. */
  public static void putFrameHeader(ByteBuffer b, int version, int type, int flags, long requestId,
      int headerLength, int payloadLength) {
    b.putInt(Wire.MAGIC).put((byte) version).put((byte) type).putShort((short) flags).putLong(requestId)
        .putInt(headerLength).putInt(payloadLength);
  }

  /** The whole frame as one array. */
  public byte[] encode() {
    byte[] out = new byte[Wire.FRAME_HEADER_LENGTH + header.length + payloadLength];
    System.arraycopy(frameHeader(), 0, out, 0, Wire.FRAME_HEADER_LENGTH);
    System.arraycopy(header, 0, out, Wire.FRAME_HEADER_LENGTH, header.length);
    System.arraycopy(payload, payloadOffset, out, Wire.FRAME_HEADER_LENGTH + header.length, payloadLength);
    return out;
  }

  /**
   * Reads one frame, checking the frame header (magic, flags, lengths within
   * the limits of its direction) before allocating anything.
   *
   * @param responses whether the frame must be a response (a client reads only responses)
   * @return the frame, or null at a clean end of stream before its first byte
   */
  public static Frame read(InputStream in, boolean responses) throws IOException {
    DataInputStream d = in instanceof DataInputStream ? (DataInputStream) in : new DataInputStream(in);
    byte[] fh = new byte[Wire.FRAME_HEADER_LENGTH];
    int first = d.read(fh, 0, 1);
    if (first < 0) {
      return null;
    }
    d.readFully(fh, 1, fh.length - 1);
    Head hd = head(fh, responses);
    long hlen = hd.headerLength;
    long plen = hd.payloadLength;
    int version = hd.version;
    int type = hd.type;
    int flags = hd.flags;
    long id = hd.requestId;
    byte[] h = new byte[(int) hlen];
    byte[] p = new byte[(int) plen];
    try {
      d.readFully(h);
      d.readFully(p);
    } catch (EOFException e) {
      throw new EOFException("wire: connection ended mid-frame");
    }
    return new Frame(version, type, flags, id, h, p, 0, p.length);
  }

  /** A frame header, checked (see {@link #head}). */
  public static final class Head {
    public final int version;
    public final int type;
    public final int flags;
    public final long requestId;
    public final int headerLength;
    public final int payloadLength;

    Head(int version, int type, int flags, long requestId, int headerLength, int payloadLength) {
      this.version = version;
      this.type = type;
      this.flags = flags;
      this.requestId = requestId;
      this.headerLength = headerLength;
      this.payloadLength = payloadLength;
    }

    public boolean isError() {
      return (flags & Wire.FLAG_ERROR) != 0;
    }
  }

  /**
   * Decodes and checks a 24-byte frame header (magic, flags, lengths within
   * the limits of its direction) before anything is allocated for the rest.
   */
  public static Head head(byte[] fh, boolean responses) throws WireException {
    ByteBuffer b = ByteBuffer.wrap(fh);
    int magic = b.getInt();
    int version = b.get() & 0xff;
    int type = b.get() & 0xff;
    int flags = b.getShort() & 0xffff;
    long id = b.getLong();
    long hlen = b.getInt() & 0xffffffffL;
    long plen = b.getInt() & 0xffffffffL;
    if (magic != Wire.MAGIC) {
      throw protocol("bad magic 0x" + Integer.toHexString(magic));
    }
    if ((flags & ~(Wire.FLAG_RESPONSE | Wire.FLAG_ERROR)) != 0) {
      throw protocol("reserved flag bits set: 0x" + Integer.toHexString(flags));
    }
    if ((flags & Wire.FLAG_ERROR) != 0 && (flags & Wire.FLAG_RESPONSE) == 0) {
      throw protocol("ERROR without RESPONSE");
    }
    boolean isResponse = (flags & Wire.FLAG_RESPONSE) != 0;
    if (responses != isResponse) {
      throw protocol(isResponse ? "a response where a request was expected" : "a request sent to a client");
    }
    if (hlen > Wire.MAX_HEADER) {
      throw protocol("headerLength " + hlen + " over " + Wire.MAX_HEADER);
    }
    long maxPayload = isResponse ? Wire.MAX_RESPONSE_PAYLOAD : Wire.MAX_REQUEST_PAYLOAD;
    if (plen > maxPayload) {
      throw protocol("payloadLength " + plen + " over " + maxPayload);
    }
    if ((flags & Wire.FLAG_ERROR) != 0 && plen != 0) {
      throw protocol("error frame with a payload");
    }
    return new Head(version, type, flags, id, (int) hlen, (int) plen);
  }

  private static WireException protocol(String msg) {
    return new WireException(Wire.PROTOCOL_ERROR, "received " + msg, List.of());
  }
}
