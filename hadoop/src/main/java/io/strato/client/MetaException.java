package io.strato.client;

import io.grpc.Status;
import java.io.IOException;

/**
 * An error meta answered (docs/api.md, Errors): the gRPC status code and,
 * when meta said which rule failed, the ErrorReason's name.
 */
public class MetaException extends IOException {
  private static final long serialVersionUID = 1L;

  private final Status.Code code;
  private final String reason;

  public MetaException(Status.Code code, String reason, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
    this.reason = reason == null ? "" : reason;
  }

  /** The status code. */
  public Status.Code code() {
    return code;
  }

  /** The ErrorReason's name ("BUCKET_NOT_FOUND", ...), or "" when meta gave none. */
  public String reason() {
    return reason;
  }

  public boolean is(String r) {
    return reason.equals(r);
  }
}
