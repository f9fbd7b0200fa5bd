package io.strato.client.wire;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

import io.strato.client.wire.Messages.BcsResponse;
import io.strato.client.wire.Messages.BlockRecord;
import io.strato.client.wire.Messages.ContainerRequest;
import io.strato.client.wire.Messages.ErrorResponse;
import io.strato.client.wire.Messages.GetBlockRequest;
import io.strato.client.wire.Messages.GetBlockResponse;
import io.strato.client.wire.Messages.ImportBeginRequest;
import io.strato.client.wire.Messages.ImportCommitResponse;
import io.strato.client.wire.Messages.ImportDataRequest;
import io.strato.client.wire.Messages.PingRequest;
import io.strato.client.wire.Messages.PingResponse;
import io.strato.client.wire.Messages.PutBlockRequest;
import io.strato.client.wire.Messages.ReadChunkRequest;
import io.strato.client.wire.Messages.ReadChunkResponse;
import io.strato.client.wire.Messages.WriteChunkRequest;
import io.strato.client.wire.Messages.WriteCommitRequest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.Test;

/**
 * Encodes the example values of docs/wire.md §8 and compares the frames with
 * wire/testdata/*.bin byte for byte, then decodes each file and compares the
 * values: the same check as the Go implementation's wire/vectors_test.go.
 */
public class WireVectorsTest {
  static final byte[] DATA = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  static final BlockId BLOCK = new BlockId(7, 42);
  static final List<String> FOLLOWERS = List.of("dn-2.example:9859", "dn-3.example:9859");
  static final Checksums SUMS = new Checksums(Checksums.CRC32C, 8,
      new byte[] {(byte) 0xac, 0x22, 0x23, 0x20, (byte) 0xc4, (byte) 0xdd, (byte) 0xe1, (byte) 0x86});
  static final ChunkRecord CHUNK = new ChunkRecord(0, 16, SUMS);

  static byte[] vector(String name) throws IOException {
    String dir = System.getProperty("strato.testdata", "../wire/testdata");
    Path p = Paths.get(dir, name);
    return Files.readAllBytes(p);
  }

  /** Encodes a response (or request) frame, compares it with the file, and returns the file decoded. */
  static Frame check(String file, Frame f) throws IOException {
    byte[] want = vector(file);
    assertArrayEquals(file, want, f.encode());
    Frame got = Frame.read(new ByteArrayInputStream(want), f.isResponse());
    assertEquals(file + " version", f.version, got.version);
    assertEquals(file + " type", f.type, got.type);
    assertEquals(file + " flags", f.flags, got.flags);
    assertEquals(file + " id", f.requestId, got.requestId);
    assertArrayEquals(file + " header", f.header, got.header);
    assertArrayEquals(file + " payload", f.payloadBytes(), got.payloadBytes());
    return got;
  }

  static Frame req(int type, long id, byte[] header, byte[] payload) {
    return new Frame(type, 0, id, header, payload);
  }

  static Frame resp(int type, long id, byte[] header, byte[] payload) {
    return new Frame(type, Wire.FLAG_RESPONSE, id, header, payload);
  }

  @Test
  public void crc32cCheckValues() {
    CRC32C c = new CRC32C();
    c.update("123456789".getBytes(StandardCharsets.US_ASCII));
    assertEquals(0xE3069283L, c.getValue());
    Checksums s = Checksums.compute(Checksums.CRC32C, 8, DATA, 0, DATA.length);
    assertEquals(SUMS, s);
    assertEquals(-1, s.verify(DATA, 0, DATA.length));
    byte[] bad = DATA.clone();
    bad[9] ^= 1;
    assertEquals(1, s.verify(bad, 0, bad.length));
  }

  @Test
  public void ping() throws IOException {
    PingRequest pr = new PingRequest(1, 1, "java-client");
    Frame f = check("ping_request.bin", req(Wire.TYPE_PING, 1, pr.header(), null));
    assertEquals(pr, PingRequest.decode(f.header));
    PingResponse ps = new PingResponse(1, 1, 1, 33554432L, "dn-1");
    f = check("ping_response.bin", resp(Wire.TYPE_PING, 1, ps.header(), null));
    assertEquals(ps, PingResponse.decode(f.header));
  }

  @Test
  public void writeChunk() throws IOException {
    WriteChunkRequest w = new WriteChunkRequest(BLOCK, 0, 16, SUMS, FOLLOWERS);
    Frame f = check("write_chunk_request.bin", req(Wire.TYPE_WRITE_CHUNK, 2, w.header(), DATA));
    assertEquals(w, WriteChunkRequest.decode(f.header));
    assertEquals(85, f.header.length);
    f = check("write_chunk_response.bin", resp(Wire.TYPE_WRITE_CHUNK, 2, new byte[0], null));
    assertEquals(0, f.header.length);
  }

  @Test
  public void putBlock() throws IOException {
    PutBlockRequest p = new PutBlockRequest(BLOCK, 16, Messages.PUT_BLOCK_FINAL | Messages.PUT_BLOCK_SYNC, FOLLOWERS);
    Frame f = check("put_block_request.bin", req(Wire.TYPE_PUT_BLOCK, 3, p.header(), null));
    assertEquals(p, PutBlockRequest.decode(f.header));
    f = check("put_block_response.bin", resp(Wire.TYPE_PUT_BLOCK, 3, new BcsResponse(9).header(), null));
    assertEquals(9, BcsResponse.decode(f.header).bcsId());
  }

  @Test
  public void writeCommit() throws IOException {
    // Version-3 frames: the first version that has WRITE_COMMIT.
    int v = Wire.VERSION_WRITE_COMMIT;
    WriteCommitRequest w = new WriteCommitRequest(BLOCK, 0, 16, SUMS, Messages.PUT_BLOCK_FINAL, FOLLOWERS);
    Frame f = check("write_commit_request.bin",
        new Frame(v, Wire.TYPE_WRITE_COMMIT, 0, 14, w.header(), DATA, 0, DATA.length));
    assertEquals(w, WriteCommitRequest.decode(f.header));
    assertEquals(86, f.header.length);
    byte[] h = new BcsResponse(9).header();
    f = check("write_commit_response.bin",
        new Frame(v, Wire.TYPE_WRITE_COMMIT, Wire.FLAG_RESPONSE, 14, h, new byte[0], 0, 0));
    assertEquals(9, BcsResponse.decode(f.header).bcsId());
  }

  @Test
  public void readChunk() throws IOException {
    ReadChunkRequest r = new ReadChunkRequest(BLOCK, 3, 6);
    Frame f = check("read_chunk_request.bin", req(Wire.TYPE_READ_CHUNK, 4, r.header(), null));
    assertEquals(r, ReadChunkRequest.decode(f.header));
    ReadChunkResponse rr = new ReadChunkResponse(0, List.of(CHUNK));
    f = check("read_chunk_response.bin", resp(Wire.TYPE_READ_CHUNK, 4, rr.header(), DATA));
    assertEquals(rr, ReadChunkResponse.decode(f.header));
    assertEquals(41, f.header.length);
  }

  @Test
  public void readLocalPaths() throws IOException {
    // Version-5 frames: the first version that has READ_LOCAL_PATHS.
    int v = Wire.VERSION_READ_LOCAL_PATHS;
    Messages.ReadLocalPathsRequest r = new Messages.ReadLocalPathsRequest(BLOCK, 3, 6);
    byte[] h = r.header();
    Frame f = check("read_local_paths_request.bin", new Frame(v, Wire.TYPE_READ_LOCAL_PATHS, 0, 16, h, new byte[0], 0, 0));
    assertEquals(r, Messages.ReadLocalPathsRequest.decode(f.header));
    Messages.ReadLocalPathsResponse rr = new Messages.ReadLocalPathsResponse(
        List.of(new Messages.LocalExtent(CHUNK, 0, 4096)),
        List.of(new Messages.LocalFile(2049, 131073, "/data/dn-1/containers/7/chunks/42.block")));
    h = rr.header();
    f = check("read_local_paths_response.bin",
        new Frame(v, Wire.TYPE_READ_LOCAL_PATHS, Wire.FLAG_RESPONSE, 16, h, new byte[0], 0, 0));
    assertEquals(rr, Messages.ReadLocalPathsResponse.decode(f.header));
    // A relative path, or a file index past the files, is refused.
    Messages.ReadLocalPathsResponse rel = new Messages.ReadLocalPathsResponse(rr.extents(),
        List.of(new Messages.LocalFile(1, 2, "data/42.block")));
    assertThrows(WireException.class, () -> Messages.ReadLocalPathsResponse.decode(rel.header()));
    Messages.ReadLocalPathsResponse past = new Messages.ReadLocalPathsResponse(
        List.of(new Messages.LocalExtent(CHUNK, 1, 0)), rr.files());
    assertThrows(WireException.class, () -> Messages.ReadLocalPathsResponse.decode(past.header()));
  }

  @Test
  public void readChunkVerifiesAndWidens() throws IOException {
    // docs/wire.md §5.4: 6 bytes at 3 come back as the whole window-aligned chunk.
    byte[] dst = new byte[6];
    Frame f = Frame.read(new ByteArrayInputStream(vector("read_chunk_response.bin")), true);
    io.strato.client.KeyReaderAccess.verify(BLOCK, 3, new DataConn.Response(f.header, f.payload), dst, 6);
    assertArrayEquals("345678".getBytes(StandardCharsets.US_ASCII), dst);
    byte[] bad = f.payload.clone();
    bad[12] ^= 0x20;
    assertThrows(IOException.class, () -> io.strato.client.KeyReaderAccess.verify(BLOCK, 3,
        new DataConn.Response(f.header, bad), new byte[6], 6));
  }

  @Test
  public void getBlock() throws IOException {
    GetBlockRequest g = new GetBlockRequest(BLOCK);
    Frame f = check("get_block_request.bin", req(Wire.TYPE_GET_BLOCK, 5, g.header(), null));
    assertEquals(g, GetBlockRequest.decode(f.header));
    GetBlockResponse gr = new GetBlockResponse(16, 9, List.of(CHUNK));
    f = check("get_block_response.bin", resp(Wire.TYPE_GET_BLOCK, 5, gr.header(), gr.payload()));
    assertEquals(gr, GetBlockResponse.decode(f.header, f.payload));
  }

  @Test
  public void closeContainer() throws IOException {
    ContainerRequest c = new ContainerRequest(7);
    Frame f = check("close_container_request.bin", req(Wire.TYPE_CLOSE_CONTAINER, 6, c.header(), null));
    assertEquals(c, ContainerRequest.decode(f.header));
    f = check("close_container_response.bin", resp(Wire.TYPE_CLOSE_CONTAINER, 6, new BcsResponse(9).header(), null));
    assertEquals(9, BcsResponse.decode(f.header).bcsId());
  }

  @Test
  public void containerImport() throws IOException {
    ImportBeginRequest b = new ImportBeginRequest(7, 1, 9, 16, List.of(new BlockRecord(42, 16, 9, List.of(CHUNK))));
    Frame f = check("import_begin_request.bin", req(Wire.TYPE_IMPORT_BEGIN, 7, b.header(), b.payload()));
    assertEquals(b, ImportBeginRequest.decode(f.header, f.payload));
    ImportBeginRequest bg = new ImportBeginRequest(7, 1, 9, 16, true, List.of(new BlockRecord(42, 16, 9, List.of(CHUNK))));
    f = check("import_begin_background_request.bin", req(Wire.TYPE_IMPORT_BEGIN, 7, bg.header(), bg.payload()));
    assertEquals(bg, ImportBeginRequest.decode(f.header, f.payload));
    check("import_begin_response.bin", resp(Wire.TYPE_IMPORT_BEGIN, 7, new byte[0], null));
    ImportDataRequest d = new ImportDataRequest(42, 0, 0);
    f = check("import_data_request.bin", req(Wire.TYPE_IMPORT_DATA, 8, d.header(), DATA));
    assertEquals(d, ImportDataRequest.decode(f.header));
    check("import_data_response.bin", resp(Wire.TYPE_IMPORT_DATA, 8, new byte[0], null));
    f = check("import_commit_request.bin", req(Wire.TYPE_IMPORT_COMMIT, 9, new ContainerRequest(7).header(), null));
    assertEquals(new ContainerRequest(7), ContainerRequest.decode(f.header));
    ImportCommitResponse cr = new ImportCommitResponse(9, 16);
    f = check("import_commit_response.bin", resp(Wire.TYPE_IMPORT_COMMIT, 9, cr.header(), null));
    assertEquals(cr, ImportCommitResponse.decode(f.header));
    f = check("import_abort_request.bin", req(Wire.TYPE_IMPORT_ABORT, 10, new ContainerRequest(7).header(), null));
    assertEquals(new ContainerRequest(7), ContainerRequest.decode(f.header));
    check("import_abort_response.bin", resp(Wire.TYPE_IMPORT_ABORT, 10, new byte[0], null));
  }

  @Test
  public void error() throws IOException {
    ErrorResponse e = new ErrorResponse(Wire.FOLLOWER_FAILED, "follower dn-3.example:9859: CHECKSUM_MISMATCH",
        List.of(new WireException.Failed("dn-3.example:9859", Wire.CHECKSUM_MISMATCH)));
    Frame f = check("error_response.bin",
        new Frame(Wire.TYPE_WRITE_CHUNK, Wire.FLAG_RESPONSE | Wire.FLAG_ERROR, 2, e.header(), null));
    assertEquals(e, ErrorResponse.decode(f.header));
    assertEquals(72, f.header.length);
  }

  @Test
  public void token() throws Exception {
    // Version-2 frames. A client never reads a token (docs/wire.md §5.9), but the layout is
    // documented: format 1, keyID, expiresUnixMs, block, ops, user, then an HMAC-SHA256 of it all
    // with the key (here key 1, the bytes 0 to 31).
    byte[] user = "alice".getBytes(StandardCharsets.UTF_8);
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(64 + user.length);
    b.put((byte) 1).putInt(1).putLong(1767225600000L).putLong(7).putLong(42).put((byte) 3)
        .putShort((short) user.length).put(user);
    byte[] key = new byte[32];
    for (int i = 0; i < key.length; i++) {
      key[i] = (byte) i;
    }
    javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
    mac.init(new javax.crypto.spec.SecretKeySpec(key, "HmacSHA256"));
    mac.update(b.array(), 0, b.position());
    b.put(mac.doFinal());
    byte[] token = b.array();
    int v = Wire.VERSION_TOKEN;
    Frame f = check("token_request.bin", new Frame(v, Wire.TYPE_TOKEN, 0, 13, new byte[0], token, 0, token.length));
    assertEquals(69, f.payloadLength);
    check("token_response.bin", new Frame(v, Wire.TYPE_TOKEN, Wire.FLAG_RESPONSE, 13, new byte[0], new byte[0], 0, 0));
  }

  @Test
  public void versionFive() throws IOException {
    // PING offering 1 to 5, in a version-1 frame as DataConn sends it; the answer choosing 5 is
    // a frame of version 5, and so is every later frame of the connection, errors too.
    int v = Wire.MAX_VERSION;
    PingRequest pr = new PingRequest(Wire.VERSION, Wire.MAX_VERSION, "java-client");
    Frame f = check("ping_request_v5.bin", req(Wire.TYPE_PING, 1, pr.header(), null));
    assertEquals(pr, PingRequest.decode(f.header));
    PingResponse ps = new PingResponse(v, 1, v, 33554432L, "dn-1");
    f = check("ping_response_v5.bin", new Frame(v, Wire.TYPE_PING, Wire.FLAG_RESPONSE, 1, ps.header(), new byte[0], 0, 0));
    assertEquals(ps, PingResponse.decode(f.header));
    ReadChunkRequest r = new ReadChunkRequest(BLOCK, 3, 6);
    f = check("read_chunk_request_v5.bin", new Frame(v, Wire.TYPE_READ_CHUNK, 0, 4, r.header(), new byte[0], 0, 0));
    assertEquals(r, ReadChunkRequest.decode(f.header));
    ErrorResponse e = new ErrorResponse(Wire.ACCESS_DENIED, "no token for READ of block 7/42 on this connection", List.of());
    f = check("error_response_v5.bin", new Frame(v, Wire.TYPE_READ_CHUNK, Wire.FLAG_RESPONSE | Wire.FLAG_ERROR, 4,
        e.header(), new byte[0], 0, 0));
    assertEquals(e, ErrorResponse.decode(f.header));
  }

  /**
   * A version-6 request carrying its context (docs/wire.md §2.3): flag CONTEXT (0x0004), then
   * the request ID (u8 length, bytes) and the caller's span (u8 length 25: trace ID, span ID,
   * trace flags) before READ_CHUNK's header. Only datanodes send such requests (this client
   * speaks up to version 5, and responses never carry a context): the frame is checked as bytes.
   */
  @Test
  public void contextRequestNotSpoken() throws IOException {
    ByteBuffer c = ByteBuffer.allocate(1 + 16 + 1 + 25);
    c.put((byte) 16).put("4A2F9C1E0B7D3856".getBytes(StandardCharsets.US_ASCII)).put((byte) 25);
    for (int i = 1; i <= 16; i++) {
      c.put((byte) i);
    }
    for (int i = 0xa1; i <= 0xa8; i++) {
      c.put((byte) i);
    }
    c.put((byte) 1);
    byte[] r = new ReadChunkRequest(BLOCK, 3, 6).header();
    byte[] h = Arrays.copyOf(c.array(), c.capacity() + r.length);
    System.arraycopy(r, 0, h, c.capacity(), r.length);
    Frame f = new Frame(6, Wire.TYPE_READ_CHUNK, 0x0004, 5, h, new byte[0], 0, 0);
    assertArrayEquals("read_chunk_request_v6_context.bin", vector("read_chunk_request_v6_context.bin"), f.encode());
  }

  /**
   * The messages this client does not speak, with their type and the first version that has
   * them: LIST_BLOCKS and IMPORT_INDEX pass between datanodes only (§5.8), and READ_LOCAL needs
   * descriptors passed over a Unix socket, which a JVM cannot receive (§5.11). Their frames are
   * checked as frames: header, type, version, and bytes that read back as they are.
   */
  static final List<Object[]> NOT_SPOKEN = List.of(
      new Object[] {"list_blocks", 11, 1},
      new Object[] {"import_index", 12, 1},
      new Object[] {"read_local", 15, 4});

  @Test
  public void framesNotSpoken() throws IOException {
    for (Object[] m : NOT_SPOKEN) {
      for (boolean response : new boolean[] {false, true}) {
        String file = m[0] + (response ? "_response.bin" : "_request.bin");
        byte[] want = vector(file);
        Frame f = Frame.read(new ByteArrayInputStream(want), response);
        assertEquals(file + " type", m[1], f.type);
        assertEquals(file + " version", m[2], f.version);
        assertEquals(file + " flags", response ? Wire.FLAG_RESPONSE : 0, f.flags);
        assertArrayEquals(file, want, f.encode());
      }
    }
  }

  @Test
  public void everyVectorIsCovered() throws IOException {
    String dir = System.getProperty("strato.testdata", "../wire/testdata");
    String[] files = Paths.get(dir).toFile().list((d, n) -> n.endsWith(".bin"));
    Arrays.sort(files);
    assertEquals("vectors in " + dir + " (add a test for a new one)", List.of(
        "close_container_request.bin", "close_container_response.bin", "error_response.bin",
        "error_response_v5.bin", "get_block_request.bin", "get_block_response.bin", "import_abort_request.bin",
        "import_abort_response.bin", "import_begin_background_request.bin", "import_begin_request.bin",
        "import_begin_response.bin",
        "import_commit_request.bin", "import_commit_response.bin", "import_data_request.bin",
        "import_data_response.bin", "import_index_request.bin", "import_index_response.bin",
        "list_blocks_request.bin", "list_blocks_response.bin", "ping_request.bin", "ping_request_v5.bin",
        "ping_response.bin", "ping_response_v5.bin", "put_block_request.bin",
        "put_block_response.bin", "read_chunk_request.bin", "read_chunk_request_v5.bin",
        "read_chunk_request_v6_context.bin", "read_chunk_response.bin",
        "read_local_paths_request.bin", "read_local_paths_response.bin", "read_local_request.bin",
        "read_local_response.bin", "token_request.bin", "token_response.bin",
        "write_chunk_request.bin", "write_chunk_response.bin", "write_commit_request.bin",
        "write_commit_response.bin"), Arrays.asList(files));
  }

  @Test
  public void rejectsMalformed() throws IOException {
    byte[] v = vector("write_chunk_request.bin");
    // Trailing bytes in a typed header.
    byte[] h = Arrays.copyOfRange(v, 24, 24 + 85);
    byte[] longer = Arrays.copyOf(h, h.length + 1);
    assertThrows(WireException.class, () -> WriteChunkRequest.decode(longer));
    // Truncated.
    assertThrows(WireException.class, () -> WriteChunkRequest.decode(Arrays.copyOf(h, 60)));
    // A checksum count that does not cover the length.
    byte[] wrongCount = h.clone();
    wrongCount[36] = 3;
    assertThrows(WireException.class, () -> ReadChunkResponse.decode(Arrays.copyOf(wrongCount, 10)));
    // Bad magic.
    byte[] magic = v.clone();
    magic[0] = 'X';
    assertThrows(WireException.class, () -> Frame.read(new ByteArrayInputStream(magic), false));
    // A request where a response is expected.
    assertThrows(WireException.class, () -> Frame.read(new ByteArrayInputStream(v), true));
    // Invalid UTF-8 in a string.
    byte[] utf = vector("ping_request.bin").clone();
    utf[utf.length - 1] = (byte) 0xff;
    assertThrows(WireException.class, () -> PingRequest.decode(Arrays.copyOfRange(utf, 24, utf.length)));
  }
}
