package io.strato.client;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import io.strato.client.wire.BlockId;
import io.strato.client.wire.Checksums;
import io.strato.client.wire.ChunkRecord;
import io.strato.client.wire.Frame;
import io.strato.client.wire.Messages;
import io.strato.client.wire.Wire;
import io.strato.client.wire.WireException;
import io.strato.proto.v1.AllocateBlockRequest;
import io.strato.proto.v1.AllocateBlockResponse;
import io.strato.proto.v1.BlockID;
import io.strato.proto.v1.BlockLocation;
import io.strato.proto.v1.ChecksumType;
import io.strato.proto.v1.CloseContainerRequest;
import io.strato.proto.v1.CloseContainerResponse;
import io.strato.proto.v1.CommitKeyRequest;
import io.strato.proto.v1.CommitKeyResponse;
import io.strato.proto.v1.CreateFileRequest;
import io.strato.proto.v1.DatanodeDetails;
import io.strato.proto.v1.ErrorReason;
import io.strato.proto.v1.ExcludeList;
import io.strato.proto.v1.KeyInfo;
import io.strato.proto.v1.LookupKeyRequest;
import io.strato.proto.v1.LookupKeyResponse;
import io.strato.proto.v1.NamespaceServiceGrpc;
import io.strato.proto.v1.OpenKeyResponse;
import io.strato.proto.v1.Pipeline;
import io.strato.proto.v1.ReplicationFactor;
import io.strato.proto.v1.ReportReplicaRequest;
import io.strato.proto.v1.ReportReplicaResponse;
import java.io.BufferedInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameters;

/**
 * The writer and reader scenarios of client/testdata/scenarios (their README says the format),
 * which the Go client's TestScenarios (client/scenario_test.go) runs too: a scripted meta (a
 * gRPC server) and scripted datanodes (the data protocol) on 127.0.0.1, driven by this client's
 * KeyWriter and KeyReader, and the requests each received compared with what the file expects:
 * the steps' outcomes and meta's calls in order, each datanode's requests in any order.
 */
@RunWith(Parameterized.class)
public class TestScenarios {
  @Parameters(name = "{0}")
  public static Collection<Object[]> files() {
    File dir = new File(System.getProperty("strato.scenarios", "../client/testdata/scenarios"));
    String[] names = dir.list((d, n) -> n.endsWith(".txt"));
    assertTrue("no scenarios in " + dir, names != null && names.length > 0);
    Arrays.sort(names);
    List<Object[]> out = new ArrayList<>();
    for (String n : names) {
      out.add(new Object[] {n.substring(0, n.length() - 4), new File(dir, n)});
    }
    return out;
  }

  private final File file;

  public TestScenarios(String name, File file) {
    this.file = file;
  }

  static final String ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

  /** The key's bytes [off, off+n): the alphabet repeated, so that a chunk shows where in the key it is. */
  static byte[] keyBytes(long off, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) ALPHABET.charAt((int) ((off + i) % ALPHABET.length()));
    }
    return b;
  }

  @Test
  public void run() throws Exception {
    Scenario sc = Scenario.parse(file);
    List<String> got = sc.run();
    assertEquals("the outcome (steps and meta's calls in order, then each datanode's requests sorted); this client's:\n"
        + String.join("\n", got), sc.canon(sc.expect), sc.canon(got));
  }

  // ---- The format ------------------------------------------------------------------

  record Dn(String name, int version, boolean down) {}

  /** A block meta gives: members leader first, and the block token (or "") it gives with it. */
  record Blk(BlockId id, long pipeline, long length, long offset, List<String> members, String token) {
    /** An allocate or block line's block, its datanode names and token=T option from words. */
    static Blk of(BlockId id, long pipeline, long length, long offset, List<String> words) {
      List<String> members = new ArrayList<>();
      String token = "";
      for (String w : words) {
        if (w.startsWith("token=")) {
          token = w.substring(6);
        } else {
          members.add(w);
        }
      }
      return new Blk(id, pipeline, length, offset, members, token);
    }
  }

  /** An "on" line: how a datanode answers the requests it matches (block null, at -1: any). */
  record Rule(String dn, String type, String block, long at, List<String> action) {}

  static final class Scenario {
    int chunk = 8;
    int bpc = 4;
    long blockSize = 1024;
    final List<Dn> datanodes = new ArrayList<>();
    final List<Blk> allocs = new ArrayList<>();
    final List<Blk> blocks = new ArrayList<>();
    final List<Rule> rules = new ArrayList<>();
    final List<List<String>> steps = new ArrayList<>();
    final List<String> expect = new ArrayList<>();

    static Scenario parse(File f) throws IOException {
      Scenario sc = new Scenario();
      String text = Files.readString(f.toPath(), StandardCharsets.UTF_8);
      int cut = text.indexOf("----\n");
      assertTrue(f + ": no ---- line", cut >= 0);
      for (String l : text.substring(cut + 5).split("\n")) {
        l = l.trim();
        if (!l.isEmpty() && !l.startsWith("#")) {
          sc.expect.add(l);
        }
      }
      long keyOff = 0;
      for (String line : text.substring(0, cut).split("\n")) {
        int hash = line.indexOf('#');
        if (hash >= 0) {
          line = line.substring(0, hash);
        }
        List<String> w = fields(line);
        if (w.isEmpty()) {
          continue;
        }
        switch (w.get(0)) {
          case "chunk":
            sc.chunk = Integer.parseInt(w.get(1));
            break;
          case "checksum":
            sc.bpc = Integer.parseInt(w.get(1));
            break;
          case "block-size":
            sc.blockSize = Long.parseLong(w.get(1));
            break;
          case "datanode": {
            int version = Wire.MAX_VERSION;
            boolean down = false;
            for (String o : w.subList(2, w.size())) {
              if (o.equals("down")) {
                down = true;
              } else if (o.startsWith("version=")) {
                version = Integer.parseInt(o.substring(8));
              } else {
                throw new IllegalArgumentException(f + ": unknown datanode option " + o);
              }
            }
            sc.datanodes.add(new Dn(w.get(1), version, down));
            break;
          }
          case "allocate":
            sc.allocs.add(Blk.of(block(w.get(1)), Long.parseLong(w.get(2).substring(1)), 0, 0,
                w.subList(3, w.size())));
            break;
          case "block": {
            long len = Long.parseLong(w.get(2));
            sc.blocks.add(Blk.of(block(w.get(1)), 0, len, keyOff, w.subList(3, w.size())));
            keyOff += len;
            break;
          }
          case "on": {
            int colon = line.indexOf(':');
            List<String> h = fields(line.substring(0, colon));
            sc.rules.add(new Rule(h.get(1), h.get(2), h.size() > 3 ? h.get(3) : null,
                h.size() > 4 ? Long.parseLong(h.get(4)) : -1, fields(line.substring(colon + 1))));
            break;
          }
          case "write":
          case "hflush":
          case "hsync":
          case "close":
          case "read":
            sc.steps.add(w);
            break;
          default:
            throw new IllegalArgumentException(f + ": unknown directive " + w.get(0));
        }
      }
      return sc;
    }

    static List<String> fields(String s) {
      List<String> out = new ArrayList<>();
      for (String w : s.trim().split("\\s+")) {
        if (!w.isEmpty()) {
          out.add(w);
        }
      }
      return out;
    }

    static BlockId block(String s) {
      int slash = s.indexOf('/');
      return new BlockId(Long.parseLong(s.substring(0, slash)), Long.parseLong(s.substring(slash + 1)));
    }

    boolean isDatanode(String who) {
      return datanodes.stream().anyMatch(d -> d.name().equals(who));
    }

    /** The lines with the steps and meta's calls in order, then every datanode's sorted. */
    String canon(List<String> lines) {
      List<String> ordered = new ArrayList<>();
      List<String> dn = new ArrayList<>();
      for (String l : lines) {
        int i = l.indexOf(": ");
        (i > 0 && isDatanode(l.substring(0, i)) ? dn : ordered).add(l);
      }
      Collections.sort(dn);
      ordered.addAll(dn);
      return String.join("\n", ordered);
    }

    // ---- The run -------------------------------------------------------------------

    final List<String> metaTrace = Collections.synchronizedList(new ArrayList<>());
    final Map<String, List<String>> dnTrace = new HashMap<>();
    final Map<String, String> addrs = new HashMap<>();
    final Map<String, String> names = new HashMap<>();

    List<String> run() throws Exception {
      List<FakeDatanode> dns = new ArrayList<>();
      for (Dn d : datanodes) {
        ServerSocket ss = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        String addr = "127.0.0.1:" + ss.getLocalPort();
        addrs.put(d.name(), addr);
        names.put(addr, d.name());
        dnTrace.put(d.name(), Collections.synchronizedList(new ArrayList<>()));
        if (d.down()) {
          ss.close(); // nothing listens there now: connections are refused
          continue;
        }
        FakeDatanode fd = new FakeDatanode(this, d, ss);
        dns.add(fd);
        fd.start();
      }
      Server meta = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
          .addService(new FakeMeta(this)).build().start();
      List<String> out = new ArrayList<>();
      ClientOptions opts = new ClientOptions();
      opts.meta = List.of("127.0.0.1:" + meta.getPort());
      opts.localReads = false;
      opts.metaRetryMs = 2_000;
      opts.dataConnectTimeoutMs = 2_000;
      opts.dataRequestTimeoutMs = 20_000;
      boolean reads = steps.stream().anyMatch(s -> s.get(0).equals("read"));
      // The Go client's ReadAt asks up to 4 MiB of a block at once; a KeyReader, pieces of
      // chunkSize: the same reads.
      opts.chunkSize = reads ? 4 << 20 : chunk;
      opts.maxChunksInFlight = ClientOptions.OWN_CHUNKS_IN_FLIGHT; // what the scripts expect (README.md)
      try (StratoClient c = new StratoClient(opts)) {
        KeyWriter w = null;
        KeyReader r = null;
        long written = 0;
        boolean closed = false;
        for (List<String> st : steps) {
          String outcome = "ok";
          try {
            switch (st.get(0)) {
              case "read": {
                if (r == null) {
                  r = c.open("vol", "bkt", "key");
                }
                long off = Long.parseLong(st.get(1));
                int n = Integer.parseInt(st.get(2));
                byte[] buf = new byte[n];
                int got = r.read(off, buf, 0, n);
                if (got != n || !Arrays.equals(buf, keyBytes(off, n))) {
                  throw new IOException("read " + new String(buf, StandardCharsets.US_ASCII));
                }
                break;
              }
              default:
                if (w == null) {
                  w = c.create("vol", "bkt", "key", false, false, ReplicationFactor.REPLICATION_UNSPECIFIED,
                      "strato", -1);
                }
                switch (st.get(0)) {
                  case "write": {
                    int n = Integer.parseInt(st.get(1));
                    w.write(keyBytes(written, n));
                    written += n;
                    break;
                  }
                  case "hflush":
                    w.hflush();
                    break;
                  case "hsync":
                    w.hsync();
                    break;
                  default:
                    closed = true;
                    w.close();
                }
            }
          } catch (IOException e) {
            outcome = "error";
          }
          out.add(String.join(" ", st) + ": " + outcome);
        }
        if (w != null && !closed) {
          w.abort();
        }
      } finally {
        meta.shutdownNow();
        for (FakeDatanode d : dns) {
          d.stop();
        }
      }
      synchronized (metaTrace) {
        for (String l : metaTrace) {
          out.add("meta: " + l);
        }
      }
      for (Dn d : datanodes) {
        List<String> t = dnTrace.get(d.name());
        synchronized (t) {
          for (String l : t) {
            out.add(d.name() + ": " + l);
          }
        }
      }
      return out;
    }

    String name(String addr) {
      return names.getOrDefault(addr, addr);
    }

    String addr(String name) {
      return addrs.getOrDefault(name, name);
    }

    BlockLocation location(Blk bl) {
      Pipeline.Builder p = Pipeline.newBuilder().setId(bl.pipeline());
      for (String m : bl.members()) {
        p.addMembers(DatanodeDetails.newBuilder().setId(m).setDataAddr(addr(m)));
      }
      return BlockLocation.newBuilder()
          .setBlockId(BlockID.newBuilder().setContainerId(bl.id().containerId()).setLocalId(bl.id().localId()))
          .setOffset(bl.offset()).setLength(bl.length()).setPipeline(p)
          .setToken(com.google.protobuf.ByteString.copyFromUtf8(bl.token())).build();
    }
  }

  // ---- Meta ----------------------------------------------------------------------------

  /** Answers a writer's and a reader's calls from the script. */
  static final class FakeMeta extends NamespaceServiceGrpc.NamespaceServiceImplBase {
    private final Scenario sc;
    private int next;

    FakeMeta(Scenario sc) {
      this.sc = sc;
    }

    private static <T> void reply(StreamObserver<T> o, T v) {
      o.onNext(v);
      o.onCompleted();
    }

    @Override
    public void createFile(CreateFileRequest req, StreamObserver<OpenKeyResponse> o) {
      sc.metaTrace.add("CreateFile");
      reply(o, OpenKeyResponse.newBuilder().setOpenId(1).setChecksumType(ChecksumType.CHECKSUM_CRC32C)
          .setBytesPerChecksum(sc.bpc).setBlockSize(sc.blockSize).build());
    }

    private static <T> String sortedJoin(List<T> vs, Function<T, String> str) {
      TreeSet<String> s = new TreeSet<>();
      vs.forEach(v -> s.add(str.apply(v)));
      return String.join(",", s);
    }

    @Override
    public synchronized void allocateBlock(AllocateBlockRequest req, StreamObserver<AllocateBlockResponse> o) {
      ExcludeList ex = req.getExclude();
      List<String> parts = new ArrayList<>();
      if (ex.getDatanodesCount() > 0) {
        parts.add("datanodes=" + sortedJoin(ex.getDatanodesList(), s -> s));
      }
      if (ex.getContainersCount() > 0) {
        parts.add("containers=" + sortedJoin(ex.getContainersList(), c -> Long.toUnsignedString(c)));
      }
      if (ex.getPipelinesCount() > 0) {
        parts.add("pipelines=" + sortedJoin(ex.getPipelinesList(), p -> "p" + Long.toUnsignedString(p)));
      }
      sc.metaTrace.add("AllocateBlock" + (parts.isEmpty() ? "" : " excluding " + String.join(" ", parts)));
      if (next >= sc.allocs.size()) {
        o.onError(StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
            .setCode(Code.RESOURCE_EXHAUSTED_VALUE).setMessage("cluster: no pipeline")
            .addDetails(Any.pack(ErrorInfo.newBuilder().setReason(ErrorReason.NO_PIPELINE.name())
                .setDomain("strato.v1").build())).build()));
        return;
      }
      reply(o, AllocateBlockResponse.newBuilder().setBlock(sc.location(sc.allocs.get(next++))).build());
    }

    @Override
    public void closeContainer(CloseContainerRequest req, StreamObserver<CloseContainerResponse> o) {
      sc.metaTrace.add("CloseContainer " + Long.toUnsignedString(req.getContainerId())
          + (req.getFailedDatanode().isEmpty() ? "" : " failed=" + req.getFailedDatanode()));
      reply(o, CloseContainerResponse.getDefaultInstance());
    }

    @Override
    public void commitKey(CommitKeyRequest req, StreamObserver<CommitKeyResponse> o) {
      StringBuilder b = new StringBuilder("CommitKey");
      for (BlockLocation bl : req.getBlocksList()) {
        b.append(' ').append(bl.getBlockId().getContainerId()).append('/').append(bl.getBlockId().getLocalId())
            .append('=').append(bl.getLength());
      }
      if (req.getHsync()) {
        b.append(" hsync");
      }
      sc.metaTrace.add(b.toString());
      reply(o, CommitKeyResponse.getDefaultInstance());
    }

    @Override
    public void lookupKey(LookupKeyRequest req, StreamObserver<LookupKeyResponse> o) {
      sc.metaTrace.add("LookupKey");
      KeyInfo.Builder ki = KeyInfo.newBuilder().setVolume("vol").setBucket("bkt").setName("key").setObjectId(1)
          .setChecksumType(ChecksumType.CHECKSUM_CRC32C).setBytesPerChecksum(sc.bpc);
      long size = 0;
      for (Blk bl : sc.blocks) {
        ki.addBlocks(sc.location(bl));
        size += bl.length();
      }
      reply(o, LookupKeyResponse.newBuilder().setKey(ki.setSize(size)).build());
    }

    @Override
    public void reportReplica(ReportReplicaRequest req, StreamObserver<ReportReplicaResponse> o) {
      sc.metaTrace.add("ReportReplica " + req.getContainerId() + "/" + req.getLocalId() + " " + req.getDatanodeId());
      reply(o, ReportReplicaResponse.getDefaultInstance());
    }
  }

  // ---- Datanodes -----------------------------------------------------------------------

  /**
   * Answers the data protocol from the script: with success, or as an "on" line says. It stores
   * nothing: a reader is served the key's bytes of the blocks the script says it holds. Each
   * connection's requests are answered in the order they come.
   */
  static final class FakeDatanode {
    private final Scenario sc;
    private final Dn dn;
    private final ServerSocket ss;
    private final List<Socket> conns = Collections.synchronizedList(new ArrayList<>());

    FakeDatanode(Scenario sc, Dn dn, ServerSocket ss) {
      this.sc = sc;
      this.dn = dn;
      this.ss = ss;
    }

    void start() {
      Thread t = new Thread(() -> {
        while (true) {
          Socket s;
          try {
            s = ss.accept();
          } catch (IOException e) {
            return;
          }
          conns.add(s);
          Thread h = new Thread(() -> handle(s), "scenario-" + dn.name());
          h.setDaemon(true);
          h.start();
        }
      }, "scenario-accept-" + dn.name());
      t.setDaemon(true);
      t.start();
    }

    void stop() throws IOException {
      ss.close();
      synchronized (conns) {
        for (Socket s : conns) {
          s.close();
        }
      }
    }

    private void handle(Socket s) {
      int version = Wire.VERSION;
      try (s; InputStream in = new BufferedInputStream(s.getInputStream()); OutputStream out = s.getOutputStream()) {
        while (true) {
          Frame f = Frame.read(in, false);
          if (f == null) {
            return;
          }
          sc.dnTrace.get(dn.name()).add(render(f));
          List<String> action = action(f);
          Frame resp;
          if (!action.isEmpty() && action.get(0).equals("close")) {
            return;
          } else if (!action.isEmpty() && action.get(0).equals("error")) {
            resp = error(version, f, scriptedError(action));
          } else if (f.type == Wire.TYPE_PING) {
            Messages.PingRequest p = Messages.PingRequest.decode(f.header);
            version = Math.min(p.maxVersion(), dn.version()); // the answer is of the version chosen
            resp = new Frame(version, f.type, Wire.FLAG_RESPONSE, f.requestId, new Messages.PingResponse(version,
                Wire.VERSION, dn.version(), Wire.MAX_CHUNK, dn.name()).header(), new byte[0], 0, 0);
          } else {
            resp = answer(version, f, action);
          }
          out.write(resp.encode());
          out.flush();
        }
      } catch (IOException e) {
        // the client went away
      }
    }

    private static Frame error(int version, Frame f, Messages.ErrorResponse e) {
      return new Frame(version, f.type, Wire.FLAG_RESPONSE | Wire.FLAG_ERROR, f.requestId, e.header(), new byte[0], 0, 0);
    }

    private static Frame ok(int version, Frame f, byte[] header, byte[] payload) {
      return new Frame(version, f.type, Wire.FLAG_RESPONSE, f.requestId, header, payload, 0, payload.length);
    }

    /** Where a request is: its block, and a chunk's or a read's offset or a PUT_BLOCK's length (-1: none). */
    private record At(BlockId block, long at) {}

    /** Where f is, for the "on" lines; null for a request of no block. */
    private static At at(Frame f) throws WireException {
      switch (f.type) {
        case Wire.TYPE_WRITE_CHUNK: {
          Messages.WriteChunkRequest m = Messages.WriteChunkRequest.decode(f.header);
          return new At(m.block(), m.offset());
        }
        case Wire.TYPE_WRITE_COMMIT: {
          Messages.WriteCommitRequest m = Messages.WriteCommitRequest.decode(f.header);
          return new At(m.block(), m.offset());
        }
        case Wire.TYPE_PUT_BLOCK: {
          Messages.PutBlockRequest m = Messages.PutBlockRequest.decode(f.header);
          return new At(m.block(), m.length());
        }
        case Wire.TYPE_READ_CHUNK: {
          Messages.ReadChunkRequest m = Messages.ReadChunkRequest.decode(f.header);
          return new At(m.block(), m.offset());
        }
        case Wire.TYPE_GET_BLOCK:
          return new At(Messages.GetBlockRequest.decode(f.header).block(), -1);
        default:
          return null;
      }
    }

    /** The first "on" line matching f, if any. */
    private List<String> action(Frame f) throws WireException {
      At at = at(f);
      for (Rule r : sc.rules) {
        if (!r.dn().equals(dn.name()) || !r.type().equals(typeName(f.type))) {
          continue;
        }
        if (r.block() != null && (at == null || !r.block().equals(blockName(at.block())))) {
          continue;
        }
        if (r.at() >= 0 && (at == null || r.at() != at.at())) {
          continue;
        }
        return r.action();
      }
      return List.of();
    }

    private Messages.ErrorResponse scriptedError(List<String> action) {
      List<WireException.Failed> failed = new ArrayList<>();
      for (String f : action.subList(2, action.size())) {
        int eq = f.indexOf('=');
        failed.add(new WireException.Failed(sc.addr(f.substring(0, eq)), code(f.substring(eq + 1))));
      }
      return new Messages.ErrorResponse(code(action.get(1)), "scripted " + action.get(1), failed);
    }

    private static int code(String name) {
      for (int c = 1; Wire.knownCode(c); c++) {
        if (Wire.codeName(c).equals(name)) {
          return c;
        }
      }
      throw new IllegalArgumentException("no error code " + name);
    }

    /** The successful answer to f (a READ_CHUNK's as action says). */
    private Frame answer(int version, Frame f, List<String> action) throws WireException {
      switch (f.type) {
        case Wire.TYPE_TOKEN:
        case Wire.TYPE_WRITE_CHUNK:
          return ok(version, f, new byte[0], new byte[0]);
        case Wire.TYPE_PUT_BLOCK:
        case Wire.TYPE_WRITE_COMMIT:
          return ok(version, f, new Messages.BcsResponse(1).header(), new byte[0]);
        case Wire.TYPE_READ_CHUNK:
          return read(version, f, Messages.ReadChunkRequest.decode(f.header), action);
        default:
          return error(version, f, new Messages.ErrorResponse(Wire.UNSUPPORTED_TYPE, "not scripted", List.of()));
      }
    }

    /**
     * Answers a READ_CHUNK from the key's bytes, widened to checksum windows (docs/wire.md §5.4),
     * with one record per stored chunk.
     */
    private Frame read(int version, Frame f, Messages.ReadChunkRequest m, List<String> action) {
      Blk bl = null;
      for (Blk b : sc.blocks) {
        if (b.id().equals(m.block()) && b.members().contains(dn.name())) {
          bl = b;
        }
      }
      if (bl == null) {
        return error(version, f, new Messages.ErrorResponse(Wire.BLOCK_NOT_FOUND, "no block " + blockName(m.block()),
            List.of()));
      }
      long bpc = sc.bpc;
      long chunk = sc.chunk;
      long start = m.offset() - m.offset() % chunk % bpc;
      long last = m.offset() + m.length() - 1;
      long first = last - last % chunk; // the stored chunk holding the last byte
      long end = Math.min(Math.min(first + (last - first) / bpc * bpc + bpc, first + chunk), bl.length());
      if (!action.isEmpty() && action.get(0).equals("short")) {
        end -= bpc;
      }
      List<ChunkRecord> records = new ArrayList<>();
      for (long off = start; off < end; ) {
        long n = Math.min(end, off - off % chunk + chunk) - off;
        byte[] data = keyBytes(bl.offset() + off, (int) n);
        records.add(new ChunkRecord(off, (int) n, Checksums.compute(Checksums.CRC32C, (int) bpc, data, 0, data.length)));
        off += n;
      }
      byte[] payload = keyBytes(bl.offset() + start, (int) (end - start));
      if (!action.isEmpty() && action.get(0).equals("corrupt")) {
        payload[0] ^= 1;
      }
      return ok(version, f, new Messages.ReadChunkResponse(start, records).header(), payload);
    }

    /** How the trace shows a request. */
    private String render(Frame f) throws WireException {
      byte[] p = f.payloadBytes();
      switch (f.type) {
        case Wire.TYPE_PING:
          // Not the versions offered: this client's (1-5) and the Go client's (1-6) differ.
          return "PING";
        case Wire.TYPE_TOKEN:
          return "TOKEN " + quote(p);
        case Wire.TYPE_WRITE_CHUNK: {
          Messages.WriteChunkRequest m = Messages.WriteChunkRequest.decode(f.header);
          return "WRITE_CHUNK " + blockName(m.block()) + " " + m.offset() + "+" + p.length + " " + quote(p)
              + sums(m.checksums(), p) + followers(m.followers());
        }
        case Wire.TYPE_WRITE_COMMIT: {
          Messages.WriteCommitRequest m = Messages.WriteCommitRequest.decode(f.header);
          return "WRITE_COMMIT " + blockName(m.block()) + " " + m.offset() + "+" + p.length + " " + quote(p)
              + flags(m.flags()) + sums(m.checksums(), p) + followers(m.followers());
        }
        case Wire.TYPE_PUT_BLOCK: {
          Messages.PutBlockRequest m = Messages.PutBlockRequest.decode(f.header);
          return "PUT_BLOCK " + blockName(m.block()) + " " + m.length() + flags(m.flags()) + followers(m.followers());
        }
        case Wire.TYPE_READ_CHUNK: {
          Messages.ReadChunkRequest m = Messages.ReadChunkRequest.decode(f.header);
          return "READ_CHUNK " + blockName(m.block()) + " " + m.offset() + "+" + m.length();
        }
        default:
          return typeName(f.type);
      }
    }

    private String followers(List<String> addrs) {
      if (addrs.isEmpty()) {
        return "";
      }
      List<String> n = new ArrayList<>();
      addrs.forEach(a -> n.add(sc.name(a)));
      return " followers=" + String.join(",", n);
    }

    private static String flags(int flags) {
      return ((flags & Messages.PUT_BLOCK_FINAL) != 0 ? " final" : "")
          + ((flags & Messages.PUT_BLOCK_SYNC) != 0 ? " sync" : "");
    }

    private static String sums(Checksums c, byte[] p) {
      return c.verify(p, 0, p.length) < 0 ? "" : " bad-checksums";
    }

    private static String quote(byte[] p) {
      return "\"" + new String(p, StandardCharsets.US_ASCII) + "\"";
    }
  }

  static String blockName(BlockId b) {
    return b.toString();
  }

  private static final String[] TYPE_NAMES = {
    "NONE", "PING", "WRITE_CHUNK", "PUT_BLOCK", "READ_CHUNK", "GET_BLOCK", "CLOSE_CONTAINER", "IMPORT_BEGIN",
    "IMPORT_DATA", "IMPORT_COMMIT", "IMPORT_ABORT", "LIST_BLOCKS", "IMPORT_INDEX", "TOKEN", "WRITE_COMMIT",
    "READ_LOCAL", "READ_LOCAL_PATHS",
  };

  static String typeName(int type) {
    return type < TYPE_NAMES.length ? TYPE_NAMES[type] : "TYPE_" + type;
  }
}
