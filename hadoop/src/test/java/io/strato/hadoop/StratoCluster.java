package io.strato.hadoop;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

/**
 * A real strato cluster for the tests: the strato binary (system property
 * strato.bin, bin/strato built by `make hadoop`) running `strato dev`
 * (one meta and three datanodes) on free ports of 127.0.0.1, in a temporary
 * directory. One per test JVM, started on first use and stopped (SIGTERM)
 * when the JVM exits.
 */
public final class StratoCluster {
  private static StratoCluster shared;

  private final Process proc;
  private final Path dir;
  private final String metaAddr;

  private StratoCluster(Process proc, Path dir, String metaAddr) {
    this.proc = proc;
    this.dir = dir;
    this.metaAddr = metaAddr;
  }

  /** The cluster of this JVM, started on first use. */
  public static synchronized StratoCluster get() throws IOException {
    if (shared == null) {
      shared = start();
      StratoCluster c = shared;
      Runtime.getRuntime().addShutdownHook(new Thread(c::stop));
    }
    return shared;
  }

  public String metaAddress() {
    return metaAddr;
  }

  /** strato://127.0.0.1:PORT/ */
  public String uri() {
    return "strato://" + metaAddr + "/";
  }

  /** The FileSystem of this cluster (Hadoop's cached instance). */
  public FileSystem fs() throws IOException {
    return FileSystem.get(URI.create(uri()), conf());
  }

  /** A configuration whose default file system is this cluster. */
  public Configuration conf() {
    Configuration conf = new Configuration();
    conf.set("fs.defaultFS", uri());
    return conf;
  }

  public Path dir() {
    return dir;
  }

  /** Runs the strato CLI (strato ARGS --meta THIS) and returns what it printed; an exit code other than 0 throws. */
  public String cli(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("strato.bin", "../bin/strato"));
    cmd.addAll(List.of(args));
    cmd.addAll(List.of("--meta", metaAddr));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IOException(String.join(" ", cmd) + " failed: " + out);
    }
    return out;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static StratoCluster start() throws IOException {
    return start(List.of());
  }

  /**
   * A cluster of its own (not the JVM's shared one) started with strato
   * dev's extra flags (e.g. --secure); the caller stops it.
   */
  public static StratoCluster startOwn(String... flags) throws IOException {
    return start(List.of(flags));
  }

  /** What strato dev printed so far. */
  public String output() throws IOException {
    Path log = dir.resolve("dev.log");
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
  }

  /** Stops a cluster from startOwn. */
  public void close() {
    stop();
  }

  private static StratoCluster start(List<String> flags) throws IOException {
    String bin = System.getProperty("strato.bin", "../bin/strato");
    if (!Files.isExecutable(Paths.get(bin))) {
      throw new IOException("strato binary " + bin + " not found: build it first (make build, or make hadoop)");
    }
    Path dir = Files.createTempDirectory("strato-hadoop-test");
    String addr = "127.0.0.1:" + freePort();
    Path log = dir.resolve("dev.log");
    List<String> cmd = new ArrayList<>(List.of(bin, "dev", "--data", dir.resolve("data").toString(), "--meta-addr", addr));
    cmd.addAll(flags);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      String out = Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
      if (out.contains("strato dev: ready")) {
        return new StratoCluster(p, dir, addr);
      }
      if (!p.isAlive() || System.nanoTime() > deadline) {
        p.destroyForcibly();
        throw new IOException("strato dev did not start (" + (p.isAlive() ? "timeout" : "exit " + p.exitValue())
            + "); its output:\n" + out);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted");
      }
    }
  }

  void stop() {
    proc.destroy();
    try {
      if (!proc.waitFor(30, TimeUnit.SECONDS)) {
        proc.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      proc.destroyForcibly();
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
