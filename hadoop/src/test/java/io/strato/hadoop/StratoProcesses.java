package io.strato.hadoop;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A strato cluster of separate processes on 127.0.0.1, for the fault tests:
 * three meta replicas (one Raft group) and four datanodes, each a `strato
 * meta` or `strato datanode` of the binary under test, so that one can be
 * killed (SIGKILL) and started again on the same flags and data.
 */
public final class StratoProcesses implements AutoCloseable {
  /** One process: its command line, data and log. */
  public final class Node {
    final String name;
    final List<String> cmd;
    final Path log;
    Process proc;

    Node(String name, List<String> cmd) {
      this.name = name;
      this.cmd = cmd;
      this.log = dir.resolve(name + ".log");
    }

    public void start() throws IOException {
      proc = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    }

    /** SIGKILL, and wait for the process to be gone. */
    public void kill() throws InterruptedException {
      proc.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
    }

    void stop() {
      if (proc == null) {
        return;
      }
      proc.destroy();
      try {
        if (!proc.waitFor(20, TimeUnit.SECONDS)) {
          proc.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        proc.destroyForcibly();
      }
    }

    public boolean alive() {
      return proc != null && proc.isAlive();
    }

    public String output() throws IOException {
      return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    }
  }

  private final Path dir;
  public final List<Node> metas = new ArrayList<>();
  public final List<String> metaAddrs = new ArrayList<>();
  public final List<Node> datanodes = new ArrayList<>();
  /** Each datanode's data directory, in the order of datanodes. */
  public final List<Path> datanodeDirs = new ArrayList<>();

  public StratoProcesses(int metaReplicas, int datanodeCount) throws IOException {
    String bin = System.getProperty("strato.bin", "../bin/strato");
    if (!new File(bin).canExecute()) {
      throw new IOException("strato binary " + bin + " not found: build it first (make build, or make hadoop)");
    }
    dir = Files.createTempDirectory("strato-hadoop-procs");
    List<String> peers = new ArrayList<>();
    for (int i = 1; i <= metaReplicas; i++) {
      String a = "127.0.0.1:" + StratoCluster.freePort();
      metaAddrs.add(a);
      peers.add(i + "=" + a);
    }
    for (int i = 1; i <= metaReplicas; i++) {
      List<String> cmd = new ArrayList<>(List.of(bin, "meta", "--auth", "none", "--data", dir.resolve("meta" + i).toString(),
          "--listen", metaAddrs.get(i - 1), "--id", Integer.toString(i),
          // a killed datanode is started again before meta would re-replicate its containers
          "--dead-after", "10m"));
      if (metaReplicas > 1) {
        cmd.add("--peers");
        cmd.add(String.join(",", peers));
      }
      metas.add(new Node("meta" + i, cmd));
    }
    for (int i = 1; i <= datanodeCount; i++) {
      Path d = dir.resolve("dn" + i);
      datanodeDirs.add(d);
      datanodes.add(new Node("dn" + i, List.of(bin, "datanode", "--data", d.toString(),
          "--meta", String.join(",", metaAddrs), "--listen", "127.0.0.1:" + StratoCluster.freePort(),
          "--heartbeat-interval", "1s")));
    }
    try {
      for (Node n : metas) {
        n.start();
      }
      for (Node n : datanodes) {
        n.start();
      }
    } catch (IOException e) {
      close();
      throw e;
    }
  }

  /**
   * Waits until meta lists n datanodes as HEALTHY (strato admin datanode
   * list): a cluster that takes writes may still be waiting for its last
   * datanodes to register.
   */
  public void waitHealthyDatanodes(int n, long timeoutMs) throws IOException, InterruptedException {
    String bin = System.getProperty("strato.bin", "../bin/strato");
    long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    String last = "";
    while (System.nanoTime() < deadline) {
      Process p = new ProcessBuilder(bin, "admin", "datanode", "list", "--meta", metaList(), "--timeout", "5s")
          .redirectErrorStream(true).start();
      last = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor(20, TimeUnit.SECONDS);
      long healthy = last.lines().filter(l -> l.contains(" HEALTHY ")).count();
      if (healthy >= n) {
        return;
      }
      Thread.sleep(300);
    }
    throw new IOException(n + " datanodes not healthy in time; meta lists:\n" + last + "\n" + logs());
  }

  /** strato://FIRST_META/ (the configuration should list every meta: metaList()). */
  public String uri() {
    return "strato://" + metaAddrs.get(0) + "/";
  }

  public String metaList() {
    return String.join(",", metaAddrs);
  }

  public Node metaAt(String addr) {
    return metas.get(metaAddrs.indexOf(addr));
  }

  /** The datanode whose datanode.id holds id, or -1. */
  public int datanodeIndex(String id) throws IOException {
    for (int i = 0; i < datanodeDirs.size(); i++) {
      Path f = datanodeDirs.get(i).resolve("datanode.id");
      if (Files.exists(f) && Files.readString(f, StandardCharsets.UTF_8).trim().equals(id)) {
        return i;
      }
    }
    return -1;
  }

  public String logs() throws IOException {
    StringBuilder b = new StringBuilder();
    for (Node n : metas) {
      b.append("--- ").append(n.name).append('\n').append(tail(n.output()));
    }
    for (Node n : datanodes) {
      b.append("--- ").append(n.name).append('\n').append(tail(n.output()));
    }
    return b.toString();
  }

  private static String tail(String s) {
    return s.length() > 3000 ? s.substring(s.length() - 3000) : s;
  }

  @Override
  public void close() {
    for (Node n : datanodes) {
      n.stop();
    }
    for (Node n : metas) {
      n.stop();
    }
    if (System.getenv("STRATO_KEEP_TEST_DIR") == null) {
      try (Stream<Path> s = Files.walk(dir)) {
        s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      } catch (IOException ignored) {
        // best effort
      }
    }
  }
}
