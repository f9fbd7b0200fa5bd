package io.strato.client.wire;

import java.io.IOException;
import java.util.List;

/**
 * An error response of the data protocol (docs/wire.md §6), or a malformed
 * frame this client received (code PROTOCOL_ERROR, with no response behind it).
 */
public class WireException extends IOException {
  private static final long serialVersionUID = 1L;

  /** A follower named in an error's failed list, with its own code. */
  public record Failed(String address, int code) {
    @Override
    public String toString() {
      return address + ": " + Wire.codeName(code);
    }
  }

  private final int code;
  private final String detail;
  private final List<Failed> failed;

  public WireException(int code, String detail, List<Failed> failed) {
    super(Wire.codeName(code) + (detail.isEmpty() ? "" : ": " + detail)
        + (failed.isEmpty() ? "" : " (failed " + failed + ")"));
    this.code = code;
    this.detail = detail;
    this.failed = List.copyOf(failed);
  }

  public int code() {
    return code;
  }

  public String detail() {
    return detail;
  }

  public List<Failed> failed() {
    return failed;
  }
}
