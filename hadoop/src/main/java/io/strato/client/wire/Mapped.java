package io.strato.client.wire;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;

/**
 * Unmapping a file mapping when the reader is done with it, not when the
 * garbage collector gets to it: a mapping of a block file pins the file's
 * pages in the process and its address space until then, and a reader maps
 * one per piece it reads. The JDK unmaps on demand only through
 * {@code sun.misc.Unsafe.invokeCleaner} (module jdk.unsupported); where that
 * is not reachable, ranges are read into buffers instead of mapped.
 */
final class Mapped {
  private Mapped() {}

  private static final Object UNSAFE;
  private static final Method INVOKE_CLEANER;

  static {
    Object u = null;
    Method m = null;
    try {
      Class<?> c = Class.forName("sun.misc.Unsafe");
      Field f = c.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      u = f.get(null);
      m = c.getMethod("invokeCleaner", ByteBuffer.class);
    } catch (ReflectiveOperationException | RuntimeException e) {
      u = null;
      m = null;
    }
    UNSAFE = u;
    INVOKE_CLEANER = m;
  }

  /** Whether mappings can be unmapped on demand. */
  static boolean available() {
    return INVOKE_CLEANER != null;
  }

  /** Unmaps a mapping made by FileChannel.map; it must not be used after. */
  static void unmap(ByteBuffer b) {
    try {
      INVOKE_CLEANER.invoke(UNSAFE, b);
    } catch (ReflectiveOperationException | RuntimeException e) {
      // left to the garbage collector
    }
  }
}
