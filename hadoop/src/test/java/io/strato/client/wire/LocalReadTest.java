package io.strato.client.wire;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strato.client.wire.Messages.LocalExtent;
import io.strato.client.wire.Messages.LocalFile;
import io.strato.client.wire.Messages.ReadLocalPathsResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * A local read by path (docs/wire.md §5.12): the named files are read and
 * verified; a file that is not the one named (another inode, none at all)
 * is NotLocalException, not a bad replica; a short file is CORRUPT and bad
 * bytes CHECKSUM_MISMATCH. Each case is read both ways: into a buffer, and
 * through a mapping of the file (LocalRead.readMapped), verified in place.
 */
public class LocalReadTest {
  static final byte[] DATA = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  static final BufferPool POOL = new BufferPool(BufferPool.DEFAULT_MAX_BYTES);

  static LocalFile named(Path p) throws IOException {
    Map<String, Object> a = Files.readAttributes(p, "unix:dev,ino");
    return new LocalFile(((Number) a.get("dev")).longValue(), ((Number) a.get("ino")).longValue(), p.toString());
  }

  static ReadLocalPathsResponse resp(LocalFile f) {
    Checksums sums = Checksums.compute(Checksums.CRC32C, 8, DATA, 0, DATA.length);
    // Two extents in one file: [0, 8) at 4 and [8, 16) at 12 (after "head").
    Checksums a = Checksums.compute(Checksums.CRC32C, 8, DATA, 0, 8);
    Checksums b = Checksums.compute(Checksums.CRC32C, 8, DATA, 8, 8);
    assertEquals(2, sums.count());
    return new ReadLocalPathsResponse(
        List.of(new LocalExtent(new ChunkRecord(0, 8, a), 0, 4), new LocalExtent(new ChunkRecord(8, 8, b), 0, 12)),
        List.of(f));
  }

  static byte[] bytes(DataConn.Response r) {
    byte[] out = new byte[r.payloadLength()];
    r.data().get(0, out);
    r.release();
    return out;
  }

  @Test
  public void readsAndChecks() throws IOException {
    readsAndChecks(Long.MAX_VALUE);
  }

  @Test
  public void readsAndChecksMapped() throws IOException {
    readsAndChecks(0);
  }

  @Test
  public void mappedReleased() throws IOException {
    Path p = Files.createTempDirectory("localread").resolve("block");
    Files.write(p, ("head" + new String(DATA, StandardCharsets.US_ASCII)).getBytes(StandardCharsets.US_ASCII));
    DataConn.Response r = LocalRead.read(resp(named(p)), 0, POOL);
    assertTrue(r.isMapped());
    r.release();
    r.release(); // once only: a second release does nothing
    assertThrows(IllegalStateException.class, r::data);
  }

  private void readsAndChecks(long mapMin) throws IOException {
    Path dir = Files.createTempDirectory("localread");
    Path p = dir.resolve("block");
    byte[] file = ("head" + new String(DATA, StandardCharsets.US_ASCII)).getBytes(StandardCharsets.US_ASCII);
    Files.write(p, file);
    ReadLocalPathsResponse r = resp(named(p));
    assertArrayEquals(DATA, bytes(LocalRead.read(r, mapMin, POOL)));

    // Another file at the path: not the datanode's.
    Files.move(p, dir.resolve("old"), StandardCopyOption.ATOMIC_MOVE);
    Files.write(p, file);
    assertThrows(LocalRead.NotLocalException.class, () -> LocalRead.read(r, mapMin, POOL));
    // No file at all.
    Files.delete(p);
    assertThrows(LocalRead.NotLocalException.class, () -> LocalRead.read(r, mapMin, POOL));

    // The datanode's file, with a flipped byte, then short.
    Path old = dir.resolve("old");
    byte[] bad = file.clone();
    bad[14] ^= 1;
    Files.write(old, bad);
    ReadLocalPathsResponse ro = resp(named(old));
    WireException e = assertThrows(WireException.class, () -> LocalRead.read(ro, mapMin, POOL));
    assertEquals(Wire.CHECKSUM_MISMATCH, e.code());
    Files.write(old, java.util.Arrays.copyOf(file, 10));
    e = assertThrows(WireException.class, () -> LocalRead.read(ro, mapMin, POOL));
    assertEquals(Wire.CORRUPT, e.code());
  }
}
