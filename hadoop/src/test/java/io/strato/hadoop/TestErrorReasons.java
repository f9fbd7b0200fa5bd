package io.strato.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import io.grpc.Status;
import io.strato.client.MetaException;
import io.strato.proto.v1.ErrorReason;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.EnumMap;
import java.util.Map;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;
import org.apache.hadoop.security.AccessControlException;
import org.junit.Test;

/**
 * Every reason meta can send (proto/strato/v1/namespace.proto, ErrorReason) becomes the
 * exception Hadoop's FileSystem specification names, or is listed among those that stay a
 * MetaException, and why: adding a reason to the proto without deciding which fails here (as
 * client/reasons_test.go and s3/reasons_test.go do for the Go client and the S3 gateway).
 */
public class TestErrorReasons {
  /** A reason meta sends with its status code (meta/status.go), and what translate makes of it. */
  private record Mapping(Status.Code code, Class<? extends IOException> exception) {}

  private static final Map<ErrorReason, Mapping> MAPPED = new EnumMap<>(ErrorReason.class);
  /** The reasons that stay a MetaException (its code and reason say what happened), with their codes. */
  private static final Map<ErrorReason, Status.Code> UNMAPPED = new EnumMap<>(ErrorReason.class);

  private static void mapped(Status.Code code, Class<? extends IOException> exception, ErrorReason... rs) {
    for (ErrorReason r : rs) {
      MAPPED.put(r, new Mapping(code, exception));
    }
  }

  private static void unmapped(Status.Code code, ErrorReason... rs) {
    for (ErrorReason r : rs) {
      UNMAPPED.put(r, code);
    }
  }

  static {
    mapped(Status.Code.NOT_FOUND, FileNotFoundException.class, ErrorReason.VOLUME_NOT_FOUND,
        ErrorReason.BUCKET_NOT_FOUND, ErrorReason.KEY_NOT_FOUND, ErrorReason.FILE_NOT_FOUND,
        ErrorReason.OPEN_KEY_NOT_FOUND, ErrorReason.PARENT_NOT_FOUND, ErrorReason.S3_KEY_NOT_FOUND);
    mapped(Status.Code.ALREADY_EXISTS, FileAlreadyExistsException.class, ErrorReason.VOLUME_EXISTS,
        ErrorReason.BUCKET_EXISTS, ErrorReason.KEY_EXISTS, ErrorReason.FILE_EXISTS, ErrorReason.DIRECTORY_EXISTS,
        ErrorReason.S3_KEY_EXISTS);
    mapped(Status.Code.FAILED_PRECONDITION, PathIsNotEmptyDirectoryException.class, ErrorReason.VOLUME_NOT_EMPTY,
        ErrorReason.BUCKET_NOT_EMPTY, ErrorReason.DIRECTORY_NOT_EMPTY);
    mapped(Status.Code.FAILED_PRECONDITION, ParentNotDirectoryException.class, ErrorReason.NOT_A_DIRECTORY);
    // Creating a file where a directory is.
    mapped(Status.Code.FAILED_PRECONDITION, FileAlreadyExistsException.class, ErrorReason.IS_A_DIRECTORY);
    mapped(Status.Code.PERMISSION_DENIED, AccessControlException.class, ErrorReason.PERMISSION_DENIED);
    // A version under S3 object lock: no one may change it (the gateway's AccessDenied).
    mapped(Status.Code.FAILED_PRECONDITION, AccessControlException.class, ErrorReason.OBJECT_LOCKED);

    // MetaClient follows the leader the error names, and retries in safe mode: what is left
    // after its retry time is meta being unavailable, which FileSystem has no exception for.
    unmapped(Status.Code.UNAVAILABLE, ErrorReason.NOT_LEADER, ErrorReason.SAFE_MODE);
    // Rules of the namespace FileSystem has no exception for (rename returns false for
    // RENAME_UNDER_SELF itself).
    unmapped(Status.Code.FAILED_PRECONDITION, ErrorReason.QUOTA_EXCEEDED, ErrorReason.WRONG_LAYOUT,
        ErrorReason.KEY_REPLACED);
    unmapped(Status.Code.INVALID_ARGUMENT, ErrorReason.RENAME_UNDER_SELF, ErrorReason.INVALID_NAME,
        ErrorReason.INVALID_BLOCKS);
    // A deferred write's token another leader gave out: the connector sends no size hint, so it
    // takes no such token, and the Go client writes the key again itself.
    unmapped(Status.Code.FAILED_PRECONDITION, ErrorReason.CREATE_TOKEN_UNKNOWN);
    // No healthy pipeline, or meta's disk under its reserve.
    unmapped(Status.Code.RESOURCE_EXHAUSTED, ErrorReason.NO_PIPELINE, ErrorReason.DISK_FULL);
    // Not reasons: none given (the code decides), and the proto's stand-in for a number this
    // build does not know.
    unmapped(Status.Code.INTERNAL, ErrorReason.ERROR_REASON_UNSPECIFIED, ErrorReason.UNRECOGNIZED);
  }

  @Test
  public void everyReasonIsMapped() {
    for (ErrorReason r : ErrorReason.values()) {
      Mapping m = MAPPED.get(r);
      Status.Code unmapped = UNMAPPED.get(r);
      assertFalse(r + " is both mapped and unmapped", m != null && unmapped != null);
      assertTrue("meta's reason " + r + " has no mapping: decide what StratoFileSystem.translate makes of it,"
          + " and add it to MAPPED or UNMAPPED", m != null || unmapped != null);
      Status.Code code = m != null ? m.code() : unmapped;
      MetaException e = new MetaException(code, r, "strato: " + r, null);
      IOException out = StratoFileSystem.translate(e, "/v/b/k");
      if (m == null) {
        assertSame(r + " stays a MetaException", e, out);
      } else {
        assertEquals(r.toString(), m.exception(), out.getClass());
        assertSame(e, out.getCause());
      }
    }
  }

  @Test
  public void reasonsByName() {
    for (ErrorReason r : ErrorReason.values()) {
      if (r != ErrorReason.UNRECOGNIZED) {
        assertEquals(r, MetaException.reasonOf(r.name()));
      }
    }
    assertEquals(ErrorReason.ERROR_REASON_UNSPECIFIED, MetaException.reasonOf(""));
    assertEquals(ErrorReason.UNRECOGNIZED, MetaException.reasonOf("A_REASON_OF_A_LATER_META"));
  }
}
