package io.strato.client.wire;

import io.strato.client.wire.Messages.LocalExtent;
import io.strato.client.wire.Messages.LocalFile;
import io.strato.client.wire.Messages.ReadLocalPathsResponse;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;

/**
 * A local read by path (docs/wire.md §5.12): the files a READ_LOCAL_PATHS
 * response names are opened here, checked to be the datanode's (device and
 * inode numbers), and the extents read from them into a pooled direct
 * buffer and verified against their checksums, as a READ_CHUNK payload is.
 */
public final class LocalRead {
  private LocalRead() {}

  /**
   * The files are not this process's to read (another host or mount
   * namespace, another user, a file replaced): the read goes over TCP, and
   * the replica is not at fault.
   */
  public static final class NotLocalException extends IOException {
    private static final long serialVersionUID = 1L;

    NotLocalException(String m, Throwable cause) {
      super(m, cause);
    }
  }

  /**
   * Reads the response's extents. The returned response's payload
   * ({@link DataConn.Response#data}) holds them, from the block offset
   * {@link ReadLocalPathsResponse#offset}; release it when done.
   *
   * @throws NotLocalException when the files cannot be read here
   * @throws WireException CORRUPT for a file that ends before its extent, CHECKSUM_MISMATCH for bad bytes
   */
  public static DataConn.Response read(ReadLocalPathsResponse resp) throws IOException {
    List<LocalExtent> xs = resp.extents();
    LocalExtent last = xs.get(xs.size() - 1);
    long total = last.chunk().offset() + last.chunk().length() - resp.offset();
    if (total > Wire.MAX_RESPONSE_PAYLOAD) {
      throw new WireException(Wire.PROTOCOL_ERROR, "READ_LOCAL_PATHS extents of " + total + " bytes", List.of());
    }
    FileChannel[] chans = new FileChannel[resp.files().size()];
    ByteBuffer buf = BufferPool.take((int) total);
    boolean ok = false;
    try {
      for (int i = 0; i < chans.length; i++) {
        chans[i] = open(resp.files().get(i));
      }
      int pos = 0;
      for (LocalExtent x : xs) {
        int len = x.chunk().length();
        buf.limit(pos + len).position(pos);
        FileChannel ch = chans[x.file()];
        while (buf.hasRemaining()) {
          int n = ch.read(buf, x.fileOffset() + (buf.position() - pos));
          if (n < 0) {
            throw new WireException(Wire.CORRUPT, "block range [" + x.chunk().offset() + ", "
                + (x.chunk().offset() + len) + "): its file ends " + buf.remaining() + " bytes early", List.of());
          }
        }
        int bad = x.chunk().checksums().verify(buf, pos, len);
        if (bad >= 0) {
          throw new WireException(Wire.CHECKSUM_MISMATCH, "block range at " + x.chunk().offset()
              + ": checksum window " + bad + " does not match", List.of());
        }
        pos += len;
      }
      buf.clear().limit((int) total);
      ok = true;
      return new DataConn.Response(new byte[0], buf);
    } finally {
      for (FileChannel ch : chans) {
        if (ch != null) {
          ch.close();
        }
      }
      if (!ok) {
        BufferPool.give(buf);
      }
    }
  }

  /** Opens a named file read-only and checks that it is the datanode's. */
  private static FileChannel open(LocalFile f) throws NotLocalException {
    Path p = Paths.get(f.path());
    FileChannel ch;
    try {
      ch = FileChannel.open(p, StandardOpenOption.READ);
    } catch (IOException | RuntimeException e) {
      throw new NotLocalException("wire: block file " + f.path() + " not readable here: " + e, e);
    }
    try {
      Map<String, Object> a = Files.readAttributes(p, "unix:dev,ino");
      long dev = ((Number) a.get("dev")).longValue();
      long ino = ((Number) a.get("ino")).longValue();
      if (dev != f.dev() || ino != f.ino()) {
        throw new NotLocalException("wire: " + f.path() + " is device " + dev + " inode " + ino
            + ", not the datanode's " + f.dev() + " " + f.ino(), null);
      }
      return ch;
    } catch (IOException | RuntimeException e) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // nothing to lose: read-only
      }
      if (e instanceof NotLocalException) {
        throw (NotLocalException) e;
      }
      throw new NotLocalException("wire: block file " + f.path() + " not readable here: " + e, e);
    }
  }
}
