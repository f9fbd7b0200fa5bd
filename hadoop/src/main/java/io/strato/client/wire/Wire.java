package io.strato.client.wire;

/**
 * Constants of strato's data protocol, versions 1 to 5 (docs/wire.md): the
 * frame header, the message types, the limits and the error codes.
 */
public final class Wire {
  private Wire() {}

  /** "STRW", the first four bytes of every frame. */
  public static final int MAGIC = 0x53545257;
  /** Version 1: the frames before a PING chose another, and what PING itself carries. */
  public static final byte VERSION = 1;
  /**
   * The highest version this implementation speaks (5: READ_LOCAL_PATHS; 4: READ_LOCAL, which
   * it never sends; 3: WRITE_COMMIT; 2: block tokens, TOKEN).
   */
  public static final byte MAX_VERSION = 5;
  public static final int FRAME_HEADER_LENGTH = 24;

  public static final short FLAG_RESPONSE = 0x0001;
  public static final short FLAG_ERROR = 0x0002;

  public static final int TYPE_PING = 1;
  public static final int TYPE_WRITE_CHUNK = 2;
  public static final int TYPE_PUT_BLOCK = 3;
  public static final int TYPE_READ_CHUNK = 4;
  public static final int TYPE_GET_BLOCK = 5;
  public static final int TYPE_CLOSE_CONTAINER = 6;
  public static final int TYPE_IMPORT_BEGIN = 7;
  public static final int TYPE_IMPORT_DATA = 8;
  public static final int TYPE_IMPORT_COMMIT = 9;
  public static final int TYPE_IMPORT_ABORT = 10;
  /** Version 2: presents a block token (§5.9). */
  public static final int TYPE_TOKEN = 13;
  /** The first version with TOKEN. */
  public static final byte VERSION_TOKEN = 2;
  /** Version 3: a block's last chunk and its commit in one request (§5.10). */
  public static final int TYPE_WRITE_COMMIT = 14;
  /** The first version with WRITE_COMMIT. */
  public static final byte VERSION_WRITE_COMMIT = 3;
  /** Version 5: the paths of a block's files, for a reader on the datanode's host (§5.12). */
  public static final int TYPE_READ_LOCAL_PATHS = 16;
  /** The first version with READ_LOCAL_PATHS. */
  public static final byte VERSION_READ_LOCAL_PATHS = 5;
  /** The largest token a TOKEN may carry. */
  public static final int MAX_TOKEN = 1024;

  public static final int MAX_HEADER = 1 << 20;
  public static final int MAX_REQUEST_PAYLOAD = 32 << 20;
  public static final int MAX_RESPONSE_PAYLOAD = 64 << 20;
  public static final int MAX_CHUNK = 32 << 20;
  public static final int MAX_READ = 32 << 20;
  public static final int MAX_BYTES_PER_CHECKSUM = 16 << 20;
  public static final int MAX_FOLLOWERS = 15;
  public static final int MAX_ADDR = 255;
  public static final int MAX_ID = 255;

  // Error codes (§6). The numbers are the protocol's.
  public static final int INVALID_ARGUMENT = 1;
  public static final int UNSUPPORTED_VERSION = 2;
  public static final int UNSUPPORTED_TYPE = 3;
  public static final int PROTOCOL_ERROR = 4;
  public static final int TOO_LARGE = 5;
  public static final int CONTAINER_NOT_FOUND = 6;
  public static final int BLOCK_NOT_FOUND = 7;
  public static final int CONTAINER_NOT_OPEN = 8;
  public static final int BAD_STATE = 9;
  public static final int CHECKSUM_MISMATCH = 10;
  public static final int OVERWRITE = 11;
  public static final int INCOMPLETE = 12;
  public static final int NO_SPACE = 13;
  public static final int IO_ERROR = 14;
  public static final int CORRUPT = 15;
  public static final int FOLLOWER_FAILED = 16;
  public static final int UNAVAILABLE = 17;
  public static final int INTERNAL = 18;
  public static final int CONTAINER_EXISTS = 19;
  public static final int ACCESS_DENIED = 20;

  private static final String[] CODE_NAMES = {
    null, "INVALID_ARGUMENT", "UNSUPPORTED_VERSION", "UNSUPPORTED_TYPE", "PROTOCOL_ERROR",
    "TOO_LARGE", "CONTAINER_NOT_FOUND", "BLOCK_NOT_FOUND", "CONTAINER_NOT_OPEN", "BAD_STATE",
    "CHECKSUM_MISMATCH", "OVERWRITE", "INCOMPLETE", "NO_SPACE", "IO_ERROR", "CORRUPT",
    "FOLLOWER_FAILED", "UNAVAILABLE", "INTERNAL", "CONTAINER_EXISTS", "ACCESS_DENIED",
  };

  /** The name docs/wire.md gives a code, or CODE_n for one this client does not know. */
  public static String codeName(int code) {
    if (code > 0 && code < CODE_NAMES.length) {
      return CODE_NAMES[code];
    }
    return "CODE_" + code;
  }

  public static boolean knownCode(int code) {
    return code > 0 && code < CODE_NAMES.length;
  }

  /**
   * Whether a code says something about the datanode rather than the
   * request (docs/wire.md, pipeline errors): such a node is excluded from
   * later blocks. A code this client does not know counts as IO_ERROR.
   */
  public static boolean nodeFault(int code) {
    switch (code) {
      case UNAVAILABLE:
      case IO_ERROR:
      case NO_SPACE:
      case CORRUPT:
      case INTERNAL:
        return true;
      default:
        return !knownCode(code);
    }
  }
}
