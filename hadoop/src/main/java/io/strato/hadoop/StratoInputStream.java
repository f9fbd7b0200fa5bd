package io.strato.hadoop;

import io.strato.client.KeyReader;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Locale;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.CanUnbuffer;
import org.apache.hadoop.fs.FSExceptionMessages;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.fs.statistics.StreamStatisticNames;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsBinding;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsStore;

/**
 * The stream open() returns (inside an FSDataInputStream): seekable,
 * positioned reads (PositionedReadable through FSInputStream), ByteBuffer
 * reads, unbuffer. Every byte is checked against its checksums by the
 * KeyReader under it.
 */
final class StratoInputStream extends FSInputStream implements ByteBufferReadable, CanUnbuffer, StreamCapabilities,
    IOStatisticsSource {
  private final KeyReader r;
  private final String path;
  private final FileSystem.Statistics stats;
  private volatile boolean closed;
  private final IOStatisticsStore io = IOStatisticsBinding.iostatisticsStore()
      .withCounters(StreamStatisticNames.STREAM_READ_BYTES, StreamStatisticNames.STREAM_READ_OPERATIONS,
          StreamStatisticNames.STREAM_READ_SEEK_OPERATIONS)
      .build();

  StratoInputStream(KeyReader r, String path, FileSystem.Statistics stats) {
    this.r = r;
    this.path = path;
    this.stats = stats;
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException(path + ": " + FSExceptionMessages.STREAM_IS_CLOSED);
    }
  }

  @Override
  public synchronized void seek(long pos) throws IOException {
    checkOpen();
    if (pos < 0) {
      throw new EOFException(FSExceptionMessages.NEGATIVE_SEEK + " " + pos + ": " + path);
    }
    if (pos > r.size()) {
      throw new EOFException(FSExceptionMessages.CANNOT_SEEK_PAST_EOF + " " + pos + " (length " + r.size() + "): " + path);
    }
    io.incrementCounter(StreamStatisticNames.STREAM_READ_SEEK_OPERATIONS);
    r.seek(pos);
  }

  @Override
  public synchronized long getPos() throws IOException {
    return r.position();
  }

  @Override
  public boolean seekToNewSource(long targetPos) {
    return false;
  }

  @Override
  public synchronized int read() throws IOException {
    byte[] b = new byte[1];
    int n = read(b, 0, 1);
    return n <= 0 ? -1 : b[0] & 0xff;
  }

  @Override
  public synchronized int read(byte[] b, int off, int len) throws IOException {
    checkOpen();
    if (off < 0 || len < 0 || len > b.length - off) {
      throw new IndexOutOfBoundsException("offset " + off + ", length " + len + ", buffer " + b.length);
    }
    int n = r.read(b, off, len);
    counted(n);
    return n;
  }

  @Override
  public synchronized int read(ByteBuffer buf) throws IOException {
    checkOpen();
    int len = buf.remaining();
    if (len == 0) {
      return 0;
    }
    if (buf.hasArray()) {
      int n = read(buf.array(), buf.arrayOffset() + buf.position(), len);
      if (n > 0) {
        buf.position(buf.position() + n);
      }
      return n;
    }
    byte[] tmp = new byte[Math.min(len, 4 << 20)];
    int n = read(tmp, 0, tmp.length);
    if (n > 0) {
      buf.put(tmp, 0, n);
    }
    return n;
  }

  @Override
  public int read(long position, byte[] buffer, int offset, int length) throws IOException {
    checkOpen();
    validatePositionedReadArgs(position, buffer, offset, length);
    if (length == 0) {
      return 0;
    }
    int n = r.read(position, buffer, offset, length);
    counted(n);
    return n;
  }

  private void counted(int n) {
    io.incrementCounter(StreamStatisticNames.STREAM_READ_OPERATIONS);
    if (n > 0) {
      io.incrementCounter(StreamStatisticNames.STREAM_READ_BYTES, n);
      if (stats != null) {
        stats.incrementBytesRead(n);
      }
    }
  }

  @Override
  public IOStatistics getIOStatistics() {
    return io;
  }

  @Override
  public synchronized int available() throws IOException {
    checkOpen();
    return (int) Math.min(Integer.MAX_VALUE, Math.max(0, r.size() - r.position()));
  }

  @Override
  public synchronized long skip(long n) throws IOException {
    checkOpen();
    if (n <= 0) {
      return 0;
    }
    long to = Math.min(r.size(), r.position() + n);
    long skipped = to - r.position();
    r.seek(to);
    return skipped;
  }

  @Override
  public synchronized void unbuffer() {
    r.unbuffer();
  }

  @Override
  public boolean hasCapability(String capability) {
    switch (capability.toLowerCase(Locale.ENGLISH)) {
      case StreamCapabilities.READBYTEBUFFER:
      case StreamCapabilities.UNBUFFER:
      case StreamCapabilities.IOSTATISTICS:
        return true;
      default:
        return false;
    }
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      r.close();
    }
  }
}
