package io.strato.client.wire;

import io.strato.client.wire.Codec.Dec;
import io.strato.client.wire.Codec.Enc;
import java.util.ArrayList;
import java.util.List;

/**
 * The typed headers (and structured payloads) of every message of
 * docs/wire.md §5 and §6: each record encodes itself with header() and is
 * decoded, checked, with decode(). Payload bytes (chunk data) travel beside
 * them in the Frame.
 */
public final class Messages {
  private Messages() {}

  /** PING request (§5.1). */
  public record PingRequest(int minVersion, int maxVersion, String clientId) {
    public byte[] header() {
      return new Enc().u8(minVersion).u8(maxVersion).str(clientId, Wire.MAX_ID).done();
    }

    public static PingRequest decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "PING request");
      PingRequest r = new PingRequest(d.u8("minVersion"), d.u8("maxVersion"), d.str(Wire.MAX_ID, "clientID"));
      d.finish();
      return r;
    }
  }

  /** PING response (§5.1). */
  public record PingResponse(int version, int minVersion, int maxVersion, long maxChunkLength, String serverId) {
    public byte[] header() {
      return new Enc().u8(version).u8(minVersion).u8(maxVersion).u32(maxChunkLength)
          .str(serverId, Wire.MAX_ID).done();
    }

    public static PingResponse decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "PING response");
      PingResponse r = new PingResponse(d.u8("version"), d.u8("minVersion"), d.u8("maxVersion"),
          d.u32("maxChunkLength"), d.str(Wire.MAX_ID, "serverID"));
      d.finish();
      return r;
    }
  }

  /** WRITE_CHUNK request (§5.2); the payload is the chunk's length bytes. */
  public record WriteChunkRequest(BlockId block, long offset, int length, Checksums checksums,
      List<String> followers) {
    public byte[] header() {
      return new Enc().block(block).u64(offset).u32(length).sums(checksums).followers(followers).done();
    }

    public static WriteChunkRequest decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "WRITE_CHUNK request");
      WriteChunkRequest r = new WriteChunkRequest(d.block(), d.i64("offset"), d.len32("length"),
          d.sums("checksums"), d.followers());
      d.finish();
      return r;
    }
  }

  public static final int PUT_BLOCK_FINAL = 0x01;
  public static final int PUT_BLOCK_SYNC = 0x02;

  /** PUT_BLOCK request (§5.3). */
  public record PutBlockRequest(BlockId block, long length, int flags, List<String> followers) {
    public byte[] header() {
      return new Enc().block(block).u64(length).u8(flags).followers(followers).done();
    }

    public static PutBlockRequest decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "PUT_BLOCK request");
      PutBlockRequest r = new PutBlockRequest(d.block(), d.i64("length"), d.u8("flags"), d.followers());
      d.finish();
      return r;
    }
  }

  /**
   * WRITE_COMMIT request (§5.10, version 3): WRITE_CHUNK's fields with PUT_BLOCK's
   * flags before the followers; the payload is the chunk's length bytes.
   */
  public record WriteCommitRequest(BlockId block, long offset, int length, Checksums checksums, int flags,
      List<String> followers) {
    public byte[] header() {
      return new Enc().block(block).u64(offset).u32(length).sums(checksums).u8(flags).followers(followers).done();
    }

    public static WriteCommitRequest decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "WRITE_COMMIT request");
      WriteCommitRequest r = new WriteCommitRequest(d.block(), d.i64("offset"), d.len32("length"),
          d.sums("checksums"), d.u8("flags"), d.followers());
      d.finish();
      return r;
    }
  }

  /** PUT_BLOCK, WRITE_COMMIT and CLOSE_CONTAINER responses: one bcsID. */
  public record BcsResponse(long bcsId) {
    public byte[] header() {
      return new Enc().u64(bcsId).done();
    }

    public static BcsResponse decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "bcsID response");
      BcsResponse r = new BcsResponse(d.u64("bcsID"));
      d.finish();
      return r;
    }
  }

  /** READ_CHUNK request (§5.4). */
  public record ReadChunkRequest(BlockId block, long offset, int length) {
    public byte[] header() {
      return new Enc().block(block).u64(offset).u32(length).done();
    }

    public static ReadChunkRequest decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "READ_CHUNK request");
      ReadChunkRequest r = new ReadChunkRequest(d.block(), d.i64("offset"), d.len32("length"));
      d.finish();
      return r;
    }
  }

  /** READ_CHUNK response (§5.4): the payload's block offset and the records tiling it. */
  public record ReadChunkResponse(long offset, List<ChunkRecord> chunks) {
    public byte[] header() {
      Enc e = new Enc().u64(offset).u32(chunks.size());
      chunks.forEach(e::chunk);
      return e.done();
    }

    public static ReadChunkResponse decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "READ_CHUNK response");
      long off = d.i64("offset");
      int n = d.len32("count");
      if (n < 1) {
        throw d.fail("no chunk records");
      }
      List<ChunkRecord> cs = new ArrayList<>(Math.min(n, 1024));
      for (int i = 0; i < n; i++) {
        cs.add(d.chunk("chunk record"));
      }
      d.finish();
      return new ReadChunkResponse(off, cs);
    }
  }

  /** READ_LOCAL_PATHS request (§5.12, version 5): laid out as READ_CHUNK's. */
  public record ReadLocalPathsRequest(BlockId block, long offset, int length) {
    public byte[] header() {
      return new ReadChunkRequest(block, offset, length).header();
    }

    public static ReadLocalPathsRequest decode(byte[] h) throws WireException {
      ReadChunkRequest r = ReadChunkRequest.decode(h);
      return new ReadLocalPathsRequest(r.block(), r.offset(), r.length());
    }
  }

  /** An extent of a local read (§5.11): a block range, and where it is in which file. */
  public record LocalExtent(ChunkRecord chunk, int file, long fileOffset) {}

  /** A file of a READ_LOCAL_PATHS response: its device and inode numbers, and its absolute path. */
  public record LocalFile(long dev, long ino, String path) {}

  /** READ_LOCAL_PATHS response (§5.12): extents tiling the range, and the files they are in. */
  public record ReadLocalPathsResponse(List<LocalExtent> extents, List<LocalFile> files) {
    /** The longest path a response carries. */
    public static final int MAX_PATH = 4095;
    /** The most files a response names. */
    public static final int MAX_FILES = 64;

    public byte[] header() {
      Enc e = new Enc().u8(files.size()).u32(extents.size());
      for (LocalExtent x : extents) {
        e.chunk(x.chunk()).u8(x.file()).u64(x.fileOffset());
      }
      for (LocalFile f : files) {
        e.u64(f.dev()).u64(f.ino()).str(f.path(), MAX_PATH);
      }
      return e.done();
    }

    /** Where the extents start in the block. */
    public long offset() {
      return extents.get(0).chunk().offset();
    }

    public static ReadLocalPathsResponse decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "READ_LOCAL_PATHS response");
      int nf = d.u8("fileCount");
      int n = d.len32("count");
      if (nf < 1 || nf > MAX_FILES) {
        throw d.fail(nf + " files (1.." + MAX_FILES + ")");
      }
      if (n < 1 || n > h.length / 30) {
        throw d.fail(n + " extent records");
      }
      List<LocalExtent> xs = new ArrayList<>(n);
      long end = -1;
      for (int i = 0; i < n; i++) {
        ChunkRecord c = d.chunk("extent record");
        int file = d.u8("extent file");
        long fo = d.i64("extent file offset");
        if (end >= 0 && c.offset() != end) {
          throw d.fail("extent at " + c.offset() + ", want " + end);
        }
        if (file >= nf || fo < 0 || fo > Long.MAX_VALUE - c.length()) {
          throw d.fail("extent in file " + file + " of " + nf + " at " + fo);
        }
        end = c.offset() + c.length();
        xs.add(new LocalExtent(c, file, fo));
      }
      List<LocalFile> fs = new ArrayList<>(nf);
      for (int i = 0; i < nf; i++) {
        long dev = d.u64("file dev");
        long ino = d.u64("file inode");
        String path = d.str(MAX_PATH, "file path");
        if (!path.startsWith("/") || path.indexOf('\0') >= 0) {
          throw d.fail("file path \"" + path + "\" is not absolute");
        }
        fs.add(new LocalFile(dev, ino, path));
      }
      d.finish();
      return new ReadLocalPathsResponse(xs, fs);
    }
  }

  /** GET_BLOCK request (§5.5). */
  public record GetBlockRequest(BlockId block) {
    public byte[] header() {
      return new Enc().block(block).done();
    }

    public static GetBlockRequest decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "GET_BLOCK request");
      GetBlockRequest r = new GetBlockRequest(d.block());
      d.finish();
      return r;
    }
  }

  /** GET_BLOCK response (§5.5): the typed header, and the chunk records of its payload. */
  public record GetBlockResponse(long length, long bcsId, List<ChunkRecord> chunks) {
    public byte[] header() {
      return new Enc().u64(length).u64(bcsId).u32(chunks.size()).done();
    }

    public byte[] payload() {
      Enc e = new Enc();
      chunks.forEach(e::chunk);
      return e.done();
    }

    public static GetBlockResponse decode(byte[] h, byte[] payload) throws WireException {
      Dec d = new Dec(h, "GET_BLOCK response");
      long length = d.i64("length");
      long bcs = d.u64("bcsID");
      int n = d.len32("count");
      d.finish();
      Dec p = new Dec(payload, "GET_BLOCK payload");
      List<ChunkRecord> cs = new ArrayList<>(Math.min(n, 1 << 16));
      for (int i = 0; i < n; i++) {
        cs.add(p.chunk("chunk record"));
      }
      p.finish();
      return new GetBlockResponse(length, bcs, cs);
    }
  }

  /** CLOSE_CONTAINER (§5.6), IMPORT_COMMIT and IMPORT_ABORT requests: one containerID. */
  public record ContainerRequest(long containerId) {
    public byte[] header() {
      return new Enc().u64(containerId).done();
    }

    public static ContainerRequest decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "container request");
      ContainerRequest r = new ContainerRequest(d.u64("containerID"));
      d.finish();
      return r;
    }
  }

  /** A block record of IMPORT_BEGIN's payload (§5.7). */
  public record BlockRecord(long localId, long length, long bcsId, List<ChunkRecord> chunks) {}

  /** IMPORT_BEGIN request (§5.7): its typed header and the block records of its payload. */
  public record ImportBeginRequest(long containerId, int layout, long bcsId, long totalBytes,
      boolean background, List<BlockRecord> blocks) {
    /** IMPORT_BEGIN's flag of a background copy (a balancer's move), in an optional flags byte. */
    public static final int BACKGROUND = 0x01;

    public ImportBeginRequest(long containerId, int layout, long bcsId, long totalBytes, List<BlockRecord> blocks) {
      this(containerId, layout, bcsId, totalBytes, false, blocks);
    }

    public byte[] header() {
      Enc e = new Enc().u64(containerId).u8(layout).u64(bcsId).u64(totalBytes).u32(blocks.size());
      if (background) {
        e.u8(BACKGROUND); // the flags byte is sent only when a flag is set
      }
      return e.done();
    }

    public byte[] payload() {
      Enc e = new Enc();
      for (BlockRecord b : blocks) {
        e.u64(b.localId()).u64(b.length()).u64(b.bcsId()).u32(b.chunks().size());
        b.chunks().forEach(e::chunk);
      }
      return e.done();
    }

    public static ImportBeginRequest decode(byte[] h, byte[] payload) throws WireException {
      Dec d = new Dec(h, "IMPORT_BEGIN request");
      long cid = d.u64("containerID");
      int layout = d.u8("layout");
      long bcs = d.u64("bcsID");
      long total = d.i64("totalBytes");
      int n = d.len32("blockCount");
      boolean background = false;
      if (!d.atEnd()) {
        int flags = d.u8("flags");
        if ((flags & ~BACKGROUND) != 0) {
          throw d.fail("unknown flags " + flags);
        }
        background = (flags & BACKGROUND) != 0;
      }
      d.finish();
      Dec p = new Dec(payload, "IMPORT_BEGIN payload");
      List<BlockRecord> bs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        long lid = p.u64("localID");
        long len = p.i64("length");
        long bbcs = p.u64("bcsID");
        int cn = p.len32("chunkCount");
        List<ChunkRecord> cs = new ArrayList<>();
        for (int j = 0; j < cn; j++) {
          cs.add(p.chunk("chunk record"));
        }
        bs.add(new BlockRecord(lid, len, bbcs, cs));
      }
      p.finish();
      return new ImportBeginRequest(cid, layout, bcs, total, background, bs);
    }
  }

  /** IMPORT_DATA request (§5.7); the payload is file bytes. */
  public record ImportDataRequest(long localId, long chunkOffset, long fileOffset) {
    public byte[] header() {
      return new Enc().u64(localId).u64(chunkOffset).u64(fileOffset).done();
    }

    public static ImportDataRequest decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "IMPORT_DATA request");
      ImportDataRequest r = new ImportDataRequest(d.u64("localID"), d.i64("chunkOffset"), d.i64("fileOffset"));
      d.finish();
      return r;
    }
  }

  /** IMPORT_COMMIT response (§5.7). */
  public record ImportCommitResponse(long bcsId, long bytes) {
    public byte[] header() {
      return new Enc().u64(bcsId).u64(bytes).done();
    }

    public static ImportCommitResponse decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "IMPORT_COMMIT response");
      ImportCommitResponse r = new ImportCommitResponse(d.u64("bcsID"), d.i64("bytes"));
      d.finish();
      return r;
    }
  }

  /** The error typed header (§6). */
  public record ErrorResponse(int code, String message, List<WireException.Failed> failed) {
    public byte[] header() {
      Enc e = new Enc().u16(code).str(message, 65535).u16(failed.size());
      for (WireException.Failed f : failed) {
        e.str(f.address(), Wire.MAX_ADDR).u16(f.code());
      }
      return e.done();
    }

    public static ErrorResponse decode(byte[] h) throws WireException {
      Dec d = new Dec(h, "error response");
      int code = d.u16("code");
      String msg = d.str(65535, "message");
      int n = d.u16("failedCount");
      if (n > Wire.MAX_FOLLOWERS) {
        throw d.fail(n + " failed followers over the limit");
      }
      List<WireException.Failed> fs = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        fs.add(new WireException.Failed(d.str(Wire.MAX_ADDR, "address"), d.u16("code")));
      }
      d.finish();
      return new ErrorResponse(code, msg, fs);
    }

    public WireException toException() {
      return new WireException(code, message, failed);
    }
  }
}
