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

  /** Ranges from this size up in one file are mapped rather than read (readMapped). */
  static final long MAP_MIN = 256 << 10;

  /**
   * Reads the response's extents. The returned response's payload
   * ({@link DataConn.Response#data}) holds them, from the block offset
   * {@link ReadLocalPathsResponse#offset}; release it when done.
   *
   * @throws NotLocalException when the files cannot be read here
   * @throws WireException CORRUPT for a file that ends before its extent, CHECKSUM_MISMATCH for bad bytes
   */
  public static DataConn.Response read(ReadLocalPathsResponse resp, BufferPool pool) throws IOException {
    return read(resp, MAP_MIN, pool);
  }

  /** {@link #read}, mapping ranges of mapMin bytes and more. */
  static DataConn.Response read(ReadLocalPathsResponse resp, long mapMin, BufferPool pool) throws IOException {
    List<LocalExtent> xs = resp.extents();
    LocalExtent last = xs.get(xs.size() - 1);
    long total = last.chunk().offset() + last.chunk().length() - resp.offset();
    if (total > Wire.MAX_RESPONSE_PAYLOAD) {
      throw new WireException(Wire.PROTOCOL_ERROR, "READ_LOCAL_PATHS extents of " + total + " bytes", List.of());
    }
    if (resp.files().size() == 1 && total >= mapMin && contiguous(xs) && Mapped.available()) {
      return readMapped(resp, xs, total);
    }
    FileChannel[] chans = new FileChannel[resp.files().size()];
    ByteBuffer buf = pool.take((int) total);
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
        verify(x, buf, pos);
        pos += len;
      }
      buf.clear().limit((int) total);
      ok = true;
      return new DataConn.Response(new byte[0], buf, pool);
    } finally {
      for (FileChannel ch : chans) {
        if (ch != null) {
          ch.close();
        }
      }
      if (!ok) {
        pool.give(buf);
      }
    }
  }

  /**
   * The response's range when it lies in one file: the file is mapped, and
   * the extents are verified where they lie, in the page cache. Against
   * reading into a buffer first, each byte is brought from memory once
   * less; the reader copies the verified bytes out of the mapping.
   */
  private static DataConn.Response readMapped(ReadLocalPathsResponse resp, List<LocalExtent> xs, long total)
      throws IOException {
    long from = xs.get(0).fileOffset();
    ByteBuffer map;
    try (FileChannel ch = open(resp.files().get(0))) {
      // A mapping past the file's end would fault when read: a short file
      // is a bad replica, as for a read.
      long size = ch.size();
      if (size < from + total) {
        LocalExtent x = xs.get(0);
        throw new WireException(Wire.CORRUPT, "block range [" + x.chunk().offset() + ", "
            + (x.chunk().offset() + total) + "): its file ends " + (from + total - size) + " bytes early", List.of());
      }
      map = ch.map(FileChannel.MapMode.READ_ONLY, from, total);
    }
    boolean ok = false;
    try {
      int pos = 0;
      for (LocalExtent x : xs) {
        verify(x, map, pos);
        pos += x.chunk().length();
      }
      map.clear().limit((int) total);
      ok = true;
      return DataConn.Response.mapped(map);
    } finally {
      if (!ok) {
        Mapped.unmap(map);
      }
    }
  }

  /** Checks extent x's bytes, at pos of b, against its checksums. */
  private static void verify(LocalExtent x, ByteBuffer b, int pos) throws WireException {
    int bad = x.chunk().checksums().verify(b, pos, x.chunk().length());
    if (bad >= 0) {
      throw new WireException(Wire.CHECKSUM_MISMATCH, "block range at " + x.chunk().offset()
          + ": checksum window " + bad + " does not match", List.of());
    }
  }

  /** Whether the extents follow each other in their file (as a FILE_PER_BLOCK block's do). */
  private static boolean contiguous(List<LocalExtent> xs) {
    for (int i = 1; i < xs.size(); i++) {
      LocalExtent p = xs.get(i - 1);
      LocalExtent x = xs.get(i);
      if (x.file() != p.file() || x.fileOffset() != p.fileOffset() + p.chunk().length()) {
        return false;
      }
    }
    return true;
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
