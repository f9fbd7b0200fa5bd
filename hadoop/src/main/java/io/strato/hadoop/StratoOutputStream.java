package io.strato.hadoop;

import io.strato.client.KeyWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Locale;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.Syncable;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.fs.statistics.StreamStatisticNames;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsBinding;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsStore;

/**
 * The stream create() returns (inside an FSDataOutputStream): a KeyWriter.
 * hflush publishes what was written to new readers; hsync also fsyncs every
 * replica; close commits the file. On an erasure coded file hflush and hsync
 * do nothing (HDFS's striped streams' rule) and hasCapability says so.
 */
final class StratoOutputStream extends OutputStream implements Syncable, StreamCapabilities, IOStatisticsSource {
  private final KeyWriter w;
  private final String path;
  private boolean closed;
  private final IOStatisticsStore stats = IOStatisticsBinding.iostatisticsStore()
      .withCounters(StreamStatisticNames.STREAM_WRITE_BYTES).build();
  // The counter itself: a write of 100 bytes should not cost a map lookup.
  private final java.util.concurrent.atomic.AtomicLong writeBytes =
      stats.getCounterReference(StreamStatisticNames.STREAM_WRITE_BYTES);

  StratoOutputStream(KeyWriter w, String path) {
    this.w = w;
    this.path = path;
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException(path + ": stream is closed");
    }
  }

  @Override
  public void write(int b) throws IOException {
    checkOpen();
    w.write(b);
    writeBytes.incrementAndGet();
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    checkOpen();
    w.write(b, off, len);
    writeBytes.addAndGet(len);
  }

  @Override
  public IOStatistics getIOStatistics() {
    return stats;
  }

  @Override
  public void flush() throws IOException {
    if (!closed) {
      w.flush();
    }
  }

  @Override
  public void hflush() throws IOException {
    checkOpen();
    if (w.erasureCoded()) {
      unsynced("hflush");
      return;
    }
    w.hflush();
  }

  @Override
  public void hsync() throws IOException {
    checkOpen();
    if (w.erasureCoded()) {
      unsynced("hsync");
      return;
    }
    w.hsync();
  }

  private boolean warned;

  /**
   * hflush and hsync of an erasure coded file do nothing, as on HDFS's
   * striped streams: parity covers whole stripes, so the bytes become
   * visible and durable at close (docs/ec.md). The stream says so through
   * hasCapability, which callers that need either (HBase's WAL) ask first;
   * Parquet's writer and others call hflush without asking, and must not
   * fail. Logged once per stream.
   */
  private void unsynced(String op) {
    if (!warned) {
      warned = true;
      LOG.debug("strato: {} of erasure coded {} does nothing: it becomes visible and durable at close", op, path);
    }
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(StratoOutputStream.class);

  @Override
  public boolean hasCapability(String capability) {
    switch (capability.toLowerCase(Locale.ENGLISH)) {
      case StreamCapabilities.HFLUSH:
      case StreamCapabilities.HSYNC:
        // An erasure coded file has neither (docs/ec.md), as HDFS's striped streams.
        return !w.erasureCoded();
      case StreamCapabilities.IOSTATISTICS:
        return true;
      default:
        return false;
    }
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    w.close();
  }
}
