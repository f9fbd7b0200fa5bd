package io.strato.client;

import io.grpc.Status;
import io.strato.proto.v1.ErrorReason;
import java.io.IOException;

/**
 * An error meta answered (docs/api.md, Errors): the gRPC status code and,
 * when meta said which rule failed, the ErrorReason.
 */
public class MetaException extends IOException {
  private static final long serialVersionUID = 1L;

  private final Status.Code code;
  private final ErrorReason reason;

  public MetaException(Status.Code code, ErrorReason reason, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
    this.reason = reason == null ? ErrorReason.ERROR_REASON_UNSPECIFIED : reason;
  }

  /** The status code. */
  public Status.Code code() {
    return code;
  }

  /**
   * The reason meta gave: ERROR_REASON_UNSPECIFIED when it gave none, UNRECOGNIZED for one
   * this client does not know (then the status code alone tells what happened).
   */
  public ErrorReason reason() {
    return reason;
  }

  public boolean is(ErrorReason r) {
    return reason == r;
  }

  /** The reason of the name meta's ErrorInfo carries ("" for none). */
  public static ErrorReason reasonOf(String name) {
    if (name == null || name.isEmpty()) {
      return ErrorReason.ERROR_REASON_UNSPECIFIED;
    }
    try {
      return ErrorReason.valueOf(name);
    } catch (IllegalArgumentException e) {
      return ErrorReason.UNRECOGNIZED;
    }
  }
}
