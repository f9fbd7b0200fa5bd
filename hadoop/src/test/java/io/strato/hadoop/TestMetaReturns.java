package io.strato.hadoop;

import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.Test;

/**
 * A meta replica back from an outage is reached at once (decision 0111):
 * while it is down, a call waiting on it tries it again about once a
 * second, not at gRPC's backoff (1 s growing by 1.6 up to 2 minutes), and
 * completes soon after meta returns.
 */
public class TestMetaReturns {
  @Test
  public void triesAgainAtLeastOnceASecond() throws Exception {
    try (StratoProcesses cluster = new StratoProcesses(1, 0)) {
      Configuration conf = new Configuration();
      conf.set(StratoFileSystem.META_ADDRESSES, cluster.metaList());
      conf.setLong(StratoFileSystem.META_ATTEMPT_TIMEOUT, 2000);
      conf.setLong(StratoFileSystem.META_RETRY, 120_000);
      conf.setBoolean("fs.strato.impl.disable.cache", true);
      try (FileSystem fs = FileSystem.get(URI.create(cluster.uri()), conf)) {
        Path bucket = new Path("/returns/bucket");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
          try {
            fs.mkdirs(bucket);
            break;
          } catch (IOException e) {
            if (System.nanoTime() > deadline) {
              throw new IOException("meta not ready: " + e + "\n" + cluster.logs(), e);
            }
            Thread.sleep(200);
          }
        }

        StratoProcesses.Node meta = cluster.metas.get(0);
        meta.kill();
        // In meta's place, a listener that accepts each connection and
        // closes it at once, counting them.
        String addr = cluster.metaAddrs.get(0);
        int port = Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
        AtomicInteger attempts = new AtomicInteger();
        ServerSocket standIn = new ServerSocket();
        standIn.setReuseAddress(true);
        standIn.bind(new InetSocketAddress("127.0.0.1", port));
        Thread acceptor = new Thread(() -> {
          while (true) {
            try (Socket s = standIn.accept()) {
              attempts.incrementAndGet();
            } catch (IOException e) {
              return; // closed
            }
          }
        });
        acceptor.start();

        CompletableFuture<FileStatus> call = CompletableFuture.supplyAsync(() -> {
          try {
            return fs.getFileStatus(bucket);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
        Thread.sleep(8000);
        int seen = attempts.get();
        standIn.close();
        acceptor.join();
        meta.start();
        FileStatus st = call.get(60, TimeUnit.SECONDS);
        assertTrue(st.isDirectory());
        // gRPC's backoff alone makes at most five in 8 s; the connector's
        // pause (50 ms doubling to 1 s) about twelve.
        assertTrue("connections tried in 8 s while meta was down: " + seen + " (at least 8 expected)", seen >= 8);
      }
    }
  }
}
