package io.strato.client.wire;

import io.strato.client.wire.Messages.BcsResponse;
import io.strato.client.wire.Messages.ErrorResponse;
import io.strato.client.wire.Messages.GetBlockRequest;
import io.strato.client.wire.Messages.GetBlockResponse;
import io.strato.client.wire.Messages.PingRequest;
import io.strato.client.wire.Messages.PingResponse;
import io.strato.client.wire.Messages.PutBlockRequest;
import io.strato.client.wire.Messages.ReadChunkRequest;
import io.strato.client.wire.Messages.ReadChunkResponse;
import io.strato.client.wire.Messages.WriteChunkRequest;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One data-protocol connection to a datanode (docs/wire.md §7): requests are
 * pipelined (any number in flight), responses come back in any order and are
 * matched by request ID by a reader thread. Safe for concurrent use: each
 * frame is written whole under a lock.
 *
 * <p>A connection that fails (an I/O error, a malformed response, the peer
 * closing it) fails every request in flight and is not used again; the pool
 * ({@link DataConns}) dials a new one.
 */
public final class DataConn implements Closeable {
  /**
   * A response: its typed header and payload. The payload of a READ_CHUNK
   * response is a pooled direct buffer ({@link #data}): whoever takes the
   * response gives it back with {@link #release} when done with the bytes.
   */
  public static final class Response {
    private final byte[] header;
    private byte[] payload;
    private ByteBuffer data;
    /** Where a pooled data goes back to at release (null: nowhere). */
    private final BufferPool pool;

    public Response(byte[] header, byte[] payload) {
      this.header = header;
      this.payload = payload;
      this.pool = null;
    }

    private boolean mapped;

    Response(byte[] header, ByteBuffer data, BufferPool pool) {
      this.header = header;
      this.data = data;
      this.pool = pool;
    }

    /** A payload that is a file mapping (LocalRead), unmapped at release. */
    static Response mapped(ByteBuffer map) {
      Response r = new Response(new byte[0], map, null);
      r.mapped = true;
      return r;
    }

    /** Whether the payload is a file mapping. */
    boolean isMapped() {
      return mapped;
    }

    public byte[] header() {
      return header;
    }

    /** The payload as an array (a copy, for a pooled one). */
    public synchronized byte[] payload() {
      if (payload == null) {
        ByteBuffer d = data;
        if (d == null) {
          throw new IllegalStateException("wire: response released");
        }
        byte[] b = new byte[d.limit()];
        d.get(0, b);
        payload = b;
      }
      return payload;
    }

    /** The payload as a buffer, from 0 to its limit: not to be used after {@link #release}. */
    public synchronized ByteBuffer data() {
      if (data != null) {
        return data;
      }
      if (payload == null) {
        throw new IllegalStateException("wire: response released");
      }
      return ByteBuffer.wrap(payload);
    }

    public int payloadLength() {
      ByteBuffer d = data;
      return d != null ? d.limit() : payload.length;
    }

    /** Gives a pooled payload back (once; no effect on an array one). */
    public void release() {
      ByteBuffer d;
      synchronized (this) {
        d = data;
        data = null;
      }
      if (d == null) {
        return;
      }
      if (mapped) {
        Mapped.unmap(d);
      } else if (pool != null) {
        pool.give(d);
      }
    }
  }

  private record Pending(int type, CompletableFuture<Response> future) {}

  private final String addr;
  private final Socket sock;
  /** The buffers READ_CHUNK payloads are read into (the client's, DataConns). */
  private final BufferPool pool;
  private final OutputStream out;
  /** The socket's channel (plain connections): payloads are read from it straight into direct buffers. */
  private final SocketChannel ch;
  /** Bytes read from ch and not yet consumed, between position and limit (plain connections). */
  private final ByteBuffer rbuf;
  /** The socket's stream (TLS connections). */
  private final DataInputStream in;
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private final AtomicLong nextId = new AtomicLong(1);
  private volatile IOException broken;
  private PingResponse ping;
  /** The version PING chose; every later frame carries it. */
  private volatile int version = Wire.VERSION;
  /** Tokens this connection has presented (a bounded set, oldest dropped). */
  private final Map<java.nio.ByteBuffer, Boolean> presented = java.util.Collections.synchronizedMap(
      new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<java.nio.ByteBuffer, Boolean> e) {
          return size() > 4096;
        }
      });
  // Frames wait here for the sender thread, which writes them in order: the
  // caller (a writer filling its next chunk) does not wait for the socket.
  private final java.util.concurrent.LinkedBlockingQueue<Out> sendQ = new java.util.concurrent.LinkedBlockingQueue<>();
  private static final Out STOP = new Out(0, 0, 0, null, null, 0, 0);

  /**
   * A request waiting for the sender. Its header is made by the sender
   * thread just before the frame goes out: a WRITE_CHUNK's checksums are
   * computed there, not on the writer's thread.
   */
  private static final class Out {
    final int version;
    final int type;
    final long id;
    final java.util.function.Supplier<byte[]> header;
    final byte[] payload;
    final int off;
    final int len;

    Out(int version, int type, long id, java.util.function.Supplier<byte[]> header, byte[] payload, int off,
        int len) {
      this.version = version;
      this.type = type;
      this.id = id;
      this.header = header;
      this.payload = payload;
      this.off = off;
      this.len = len;
    }

    /** Puts the frame header of this request, whose header is headerLength bytes, into b. */
    void putFrameHeader(ByteBuffer b, int headerLength) {
      Frame.putFrameHeader(b, version, type, 0, id, headerLength, len);
    }
  }

  /** Small frames are gathered here and written together; sized to hold a WRITE_CHUNK's header. */
  private static final int SEND_BUF = 256 << 10;
  /** Payloads up to this size are copied into the send buffer; larger ones are written from their array. */
  private static final int COPY_PAYLOAD = 64 << 10;

  private DataConn(String addr, Socket sock, BufferPool pool) throws IOException {
    this.addr = addr;
    this.sock = sock;
    this.pool = pool;
    this.out = new BufferedOutputStream(sock.getOutputStream(), 64 << 10);
    this.ch = sock.getChannel();
    if (ch != null) {
      this.rbuf = ByteBuffer.allocateDirect(64 << 10).flip();
      this.in = null;
    } else {
      this.rbuf = null;
      this.in = new DataInputStream(new BufferedInputStream(sock.getInputStream(), 256 << 10));
    }
  }

  /**
   * Connects to a datanode's data address (host:port) and negotiates the
   * version with PING. With ssl (not null), the connection is TLS 1.3 (docs/wire.md, §7), the
   * datanode's certificate checked against ssl's trust (the cluster CA) and
   * the address's host. READ_CHUNK payloads are read into buffers of pool.
   */
  public static DataConn dial(String addr, int connectTimeoutMs, long requestTimeoutMs, String clientId,
      javax.net.ssl.SSLContext ssl, BufferPool pool) throws IOException {
    int colon = addr.lastIndexOf(':');
    if (colon <= 0) {
      throw new IOException("wire: datanode address \"" + addr + "\" is not host:port");
    }
    String host = addr.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(addr.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IOException("wire: datanode address \"" + addr + "\" has no numeric port");
    }
    // A plain connection is a SocketChannel's (blocking): see readPayload.
    Socket s = ssl == null ? SocketChannel.open().socket() : new Socket();
    try {
      s.connect(new InetSocketAddress(host, port), connectTimeoutMs);
      s.setTcpNoDelay(true);
      s.setKeepAlive(true);
      s.setSendBufferSize(4 << 20);
      s.setReceiveBufferSize(4 << 20);
    } catch (IOException e) {
      s.close();
      throw new IOException("wire: connecting to datanode " + addr + ": " + e.getMessage(), e);
    }
    if (ssl != null) {
      s = handshake(addr, host, port, s, ssl, connectTimeoutMs);
    }
    DataConn c = new DataConn(addr, s, pool);
    Thread t = new Thread(c::readLoop, "strato-data-read-" + addr);
    t.setDaemon(true);
    t.start();
    Thread w = new Thread(c::sendLoop, "strato-data-send-" + addr);
    w.setDaemon(true);
    w.start();
    try {
      Response r = await(c.call(Wire.TYPE_PING, new PingRequest(Wire.VERSION, Wire.MAX_VERSION, clientId).header(), null, 0, 0),
          requestTimeoutMs, c);
      c.ping = PingResponse.decode(r.header());
      if (c.ping.version() < Wire.VERSION || c.ping.version() > Wire.MAX_VERSION) {
        throw new IOException("wire: datanode " + addr + " chose version " + c.ping.version() + ", this client speaks "
            + Wire.VERSION + " to " + Wire.MAX_VERSION);
      }
      c.version = c.ping.version();
    } catch (IOException e) {
      c.close();
      throw e;
    }
    return c;
  }

  /** Runs the TLS handshake over the connected socket s (closed on failure). */
  private static Socket handshake(String addr, String host, int port, Socket s, javax.net.ssl.SSLContext ssl,
      int timeoutMs) throws IOException {
    try {
      javax.net.ssl.SSLSocket t = (javax.net.ssl.SSLSocket) ssl.getSocketFactory().createSocket(s, host, port, true);
      javax.net.ssl.SSLParameters p = t.getSSLParameters();
      p.setProtocols(new String[] {"TLSv1.3"});
      p.setEndpointIdentificationAlgorithm("HTTPS");
      t.setSSLParameters(p);
      t.setUseClientMode(true);
      t.setSoTimeout(timeoutMs);
      t.startHandshake();
      t.setSoTimeout(0);
      return t;
    } catch (IOException e) {
      s.close();
      throw new IOException("wire: TLS handshake with datanode " + addr + " failed (does the client trust the cluster's CA? see fs.strato.tls.ca): " + e.getMessage(), e);
    }
  }

  public String address() {
    return addr;
  }

  /** The datanode's answer to PING. */
  public PingResponse ping() {
    return ping;
  }

  /** Whether the connection failed or was closed. */
  public boolean isBroken() {
    return broken != null;
  }

  /** Sends a request; the future completes with the response, or a WireException for an error response. */
  public CompletableFuture<Response> call(int type, byte[] header, byte[] payload, int off, int len) {
    return enqueue(type, () -> header, payload, off, len);
  }

  private CompletableFuture<Response> enqueue(int type, java.util.function.Supplier<byte[]> header, byte[] payload,
      int off, int len) {
    CompletableFuture<Response> f = new CompletableFuture<>();
    IOException b = broken;
    if (b != null) {
      f.completeExceptionally(b);
      return f;
    }
    long id = nextId.getAndIncrement();
    pending.put(id, new Pending(type, f));
    sendQ.add(new Out(type == Wire.TYPE_PING ? Wire.VERSION : version, type, id, header, payload, off,
        payload == null ? 0 : len));
    // broken may have been set between the check and the put: fail() then missed this one.
    if (broken != null && pending.remove(id) != null) {
      f.completeExceptionally(broken);
    }
    return f;
  }

  /** Writes queued frames in order, each whole; flushes when the queue runs dry. */
  private void sendLoop() {
    try {
      if (ch != null) {
        sendChannel();
        return;
      }
      while (true) {
        Out o = sendQ.take();
        if (o == STOP) {
          return;
        }
        byte[] h = o.header.get();
        ByteBuffer fh = ByteBuffer.allocate(Wire.FRAME_HEADER_LENGTH);
        o.putFrameHeader(fh, h.length);
        out.write(fh.array());
        out.write(h);
        if (o.len > 0) {
          out.write(o.payload, o.off, o.len);
        }
        if (sendQ.isEmpty()) {
          out.flush();
        }
      }
    } catch (IOException e) {
      fail(new IOException("wire: sending to datanode " + addr + ": " + e.getMessage(), e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      fail(new IOException("wire: sending to datanode " + addr + ": " + e, e));
    }
  }

  /**
   * The plain connection's sender: frame headers, request headers and small
   * payloads are gathered in a direct buffer; a large payload goes out with
   * them in one gathering write; the buffer is written when the queue runs
   * dry or it is full.
   */
  private void sendChannel() throws IOException, InterruptedException {
    ByteBuffer hb = ByteBuffer.allocateDirect(SEND_BUF);
    ByteBuffer[] two = new ByteBuffer[2];
    while (true) {
      Out o = sendQ.take();
      if (o == STOP) {
        return;
      }
      byte[] h = o.header.get();
      if (hb.remaining() < Wire.FRAME_HEADER_LENGTH + h.length) {
        writeAll(hb);
      }
      if (hb.remaining() < Wire.FRAME_HEADER_LENGTH + h.length) {
        o.putFrameHeader(hb, h.length);
        two[0] = hb.flip();
        two[1] = ByteBuffer.wrap(h);
        writeAll(two);
        hb.clear();
      } else {
        o.putFrameHeader(hb, h.length);
        hb.put(h);
      }
      if (o.len > 0) {
        if (o.len <= COPY_PAYLOAD && o.len <= hb.remaining()) {
          hb.put(o.payload, o.off, o.len);
        } else {
          two[0] = hb.flip();
          two[1] = ByteBuffer.wrap(o.payload, o.off, o.len);
          writeAll(two);
          hb.clear();
        }
      }
      if (hb.position() > 0 && (sendQ.isEmpty() || hb.remaining() < 4 << 10)) {
        writeAll(hb);
      }
    }
  }

  /** Writes b from 0 to its position, and clears it. */
  private void writeAll(ByteBuffer b) throws IOException {
    b.flip();
    while (b.hasRemaining()) {
      ch.write(b);
    }
    b.clear();
  }

  private void writeAll(ByteBuffer[] bs) throws IOException {
    ByteBuffer last = bs[bs.length - 1];
    while (last.hasRemaining()) {
      ch.write(bs);
    }
  }

  private void readLoop() {
    byte[] fh = new byte[Wire.FRAME_HEADER_LENGTH];
    try {
      while (true) {
        if (!readHead(fh)) {
          throw new EOFException("wire: datanode " + addr + " closed the connection");
        }
        Frame.Head fr = Frame.head(fh, true);
        byte[] header = new byte[fr.headerLength];
        readFully(header);
        if (fr.version != version && fr.type != Wire.TYPE_PING) {
          throw new WireException(Wire.PROTOCOL_ERROR, "response of version " + fr.version, List.of());
        }
        Pending p = pending.remove(fr.requestId);
        if (p == null) {
          skip(fr.payloadLength);
          if (fr.requestId == 0 && fr.isError()) {
            // A connection-level error: the datanode closes the connection after it.
            throw ErrorResponse.decode(header).toException();
          }
          continue; // a request given up on
        }
        if (fr.type != p.type() && !(fr.isError() && fr.type == 0)) {
          throw new WireException(Wire.PROTOCOL_ERROR,
              "response of type " + fr.type + " to a request of type " + p.type(), List.of());
        }
        if (fr.isError()) {
          p.future().completeExceptionally(ErrorResponse.decode(header).toException());
        } else if (fr.type == Wire.TYPE_READ_CHUNK) {
          ByteBuffer data = pool.take(fr.payloadLength);
          try {
            readFully(data);
          } catch (IOException | RuntimeException e) {
            pool.give(data);
            throw e;
          }
          Response r = new Response(header, data.clear().limit(fr.payloadLength), pool);
          if (!p.future().complete(r)) {
            r.release(); // given up on meanwhile
          }
        } else {
          byte[] payload = new byte[fr.payloadLength];
          readFully(payload);
          p.future().complete(new Response(header, payload));
        }
      }
    } catch (IOException e) {
      fail(e);
    } catch (RuntimeException e) {
      fail(new IOException("wire: reading from datanode " + addr + ": " + e, e));
    }
  }

  /** Reads the next frame header; false at a clean end of stream before its first byte. */
  private boolean readHead(byte[] fh) throws IOException {
    if (ch == null) {
      int first = in.read(fh, 0, 1);
      if (first < 0) {
        return false;
      }
      readFully(fh, 1, fh.length - 1);
      return true;
    }
    if (!rbuf.hasRemaining() && !refill()) {
      return false;
    }
    readFully(fh, 0, fh.length);
    return true;
  }

  /** Reads more into rbuf (empty); false at the end of the stream. */
  private boolean refill() throws IOException {
    rbuf.clear();
    int n;
    do {
      n = ch.read(rbuf);
    } while (n == 0);
    rbuf.flip();
    return n > 0;
  }

  private void readFully(byte[] b) throws IOException {
    readFully(b, 0, b.length);
  }

  private void readFully(byte[] b, int off, int len) throws IOException {
    try {
      if (ch == null) {
        in.readFully(b, off, len);
        return;
      }
      while (len > 0) {
        if (!rbuf.hasRemaining() && !refill()) {
          throw new EOFException();
        }
        int n = Math.min(len, rbuf.remaining());
        rbuf.get(b, off, n);
        off += n;
        len -= n;
      }
    } catch (EOFException e) {
      throw new EOFException("wire: connection ended mid-frame");
    }
  }

  /** Fills dst from its position to its limit: what rbuf holds, then straight from the socket. */
  private void readFully(ByteBuffer dst) throws IOException {
    if (ch == null) {
      if (dst.hasArray()) {
        readFully(dst.array(), dst.arrayOffset() + dst.position(), dst.remaining());
        dst.position(dst.limit());
        return;
      }
      byte[] tmp = new byte[Math.min(dst.remaining(), 256 << 10)];
      while (dst.hasRemaining()) {
        int n = Math.min(tmp.length, dst.remaining());
        readFully(tmp, 0, n);
        dst.put(tmp, 0, n);
      }
      return;
    }
    if (rbuf.hasRemaining()) {
      int n = Math.min(rbuf.remaining(), dst.remaining());
      int lim = rbuf.limit();
      rbuf.limit(rbuf.position() + n);
      dst.put(rbuf);
      rbuf.limit(lim);
    }
    while (dst.hasRemaining()) {
      if (ch.read(dst) < 0) {
        throw new EOFException("wire: connection ended mid-frame");
      }
    }
  }

  private void skip(int n) throws IOException {
    if (n <= 0) {
      return;
    }
    ByteBuffer b = pool.take(n);
    try {
      readFully(b);
    } finally {
      pool.give(b);
    }
  }

  private void fail(IOException e) {
    synchronized (this) {
      if (broken == null) {
        broken = e;
      }
    }
    sendQ.clear();
    sendQ.add(STOP);
    try {
      sock.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    for (Long id : pending.keySet()) {
      Pending p = pending.remove(id);
      if (p != null) {
        p.future().completeExceptionally(broken);
      }
    }
  }

  @Override
  public void close() {
    fail(new IOException("wire: connection to " + addr + " closed"));
  }

  /**
   * Waits for a response. A datanode that does not answer within timeoutMs is
   * treated as failed: the connection is closed (failing every request on it).
   */
  public static Response await(CompletableFuture<Response> f, long timeoutMs, DataConn c) throws IOException {
    try {
      return timeoutMs > 0 ? f.get(timeoutMs, TimeUnit.MILLISECONDS) : f.get();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof WireException) {
        WireException we = (WireException) cause;
        throw new WireException(we.code(), we.detail(), we.failed());
      }
      if (cause instanceof IOException) {
        throw new IOException(cause.getMessage(), cause);
      }
      throw new IOException(cause);
    } catch (TimeoutException e) {
      IOException t = new IOException("wire: datanode " + (c == null ? "?" : c.addr) + " did not answer within "
          + timeoutMs + " ms");
      if (c != null) {
        c.fail(t);
      }
      throw t;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("wire: interrupted");
    }
  }

  /** The protocol version PING chose for this connection. */
  public int version() {
    return version;
  }

  /**
   * Presents a block token (docs/wire.md §5.9) before the requests that need
   * it, once per connection: a datanode processes a connection's requests
   * concurrently, so this waits for the answer. Nothing to do without a
   * token (a cluster without block tokens) or on a version-1 connection.
   */
  public void authorize(byte[] token, long timeoutMs) throws IOException {
    if (token == null || token.length == 0 || version < Wire.VERSION_TOKEN) {
      return;
    }
    java.nio.ByteBuffer key = java.nio.ByteBuffer.wrap(token);
    if (presented.containsKey(key)) {
      return;
    }
    if (token.length > Wire.MAX_TOKEN) {
      throw new IOException("wire: a block token of " + token.length + " bytes (at most " + Wire.MAX_TOKEN + ")");
    }
    await(call(Wire.TYPE_TOKEN, new byte[0], token, 0, token.length), timeoutMs, this);
    presented.put(key, Boolean.TRUE);
  }

  // ---- Typed calls -----------------------------------------------------------

  /**
   * A WRITE_CHUNK of data[off, off+len) whose request (its checksums) the
   * connection's sender thread makes with req just before sending it: the
   * caller must leave data as it is until the response.
   */
  public CompletableFuture<Response> writeChunk(java.util.function.Supplier<WriteChunkRequest> req, byte[] data,
      int off, int len) {
    return enqueue(Wire.TYPE_WRITE_CHUNK, () -> req.get().header(), data, off, len);
  }

  /**
   * A WRITE_COMMIT of data[off, off+len): the chunk, then the block committed at its end. On a
   * connection whose PING chose a version without it (below 3), a WRITE_CHUNK and, once it is
   * acknowledged, a PUT_BLOCK with the same flags. The caller must leave data as it is until
   * the response.
   */
  public CompletableFuture<Response> writeCommit(Messages.WriteCommitRequest req, byte[] data, int off, int len) {
    if (version >= Wire.VERSION_WRITE_COMMIT) {
      return enqueue(Wire.TYPE_WRITE_COMMIT, req::header, data, off, len);
    }
    WriteChunkRequest w = new WriteChunkRequest(req.block(), req.offset(), req.length(), req.checksums(), req.followers());
    PutBlockRequest p = new PutBlockRequest(req.block(), req.offset() + req.length(), req.flags(), req.followers());
    return writeChunk(() -> w, data, off, len).thenCompose(r -> putBlock(p));
  }

  public CompletableFuture<Response> putBlock(PutBlockRequest req) {
    return call(Wire.TYPE_PUT_BLOCK, req.header(), null, 0, 0);
  }

  public CompletableFuture<Response> readChunk(ReadChunkRequest req) {
    return call(Wire.TYPE_READ_CHUNK, req.header(), null, 0, 0);
  }

  /**
   * Whether READ_LOCAL_PATHS may be asked on this connection: one (plain or
   * TLS) to a loopback address (the datanode is on this host) that chose
   * version 5 or later. The datanode decides too, from the same address.
   */
  public boolean sameHost() {
    return version >= Wire.VERSION_READ_LOCAL_PATHS && sock.getInetAddress().isLoopbackAddress();
  }

  public CompletableFuture<Response> readLocalPaths(Messages.ReadLocalPathsRequest req) {
    return call(Wire.TYPE_READ_LOCAL_PATHS, req.header(), null, 0, 0);
  }

  public static Messages.ReadLocalPathsResponse localPathsResponse(Response r) throws WireException {
    return Messages.ReadLocalPathsResponse.decode(r.header());
  }

  public CompletableFuture<Response> getBlock(GetBlockRequest req) {
    return call(Wire.TYPE_GET_BLOCK, req.header(), null, 0, 0);
  }

  public static long bcsId(Response r) throws WireException {
    return BcsResponse.decode(r.header()).bcsId();
  }

  public static ReadChunkResponse readResponse(Response r) throws WireException {
    return ReadChunkResponse.decode(r.header());
  }

  public static GetBlockResponse getBlockResponse(Response r) throws WireException {
    return GetBlockResponse.decode(r.header(), r.payload());
  }
}
