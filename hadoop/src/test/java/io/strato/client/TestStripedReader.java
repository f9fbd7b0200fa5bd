package io.strato.client;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

/**
 * StripedReader against groups held in memory (ErasureCode.encodeGroup), as
 * the Go TestGroupReaderDegraded: random configs, groups and ranges, up to
 * p+1 members dead (found by failed reads, or marked up front). The bytes read
 * are the group's, or the read fails when more than p are dead; while every
 * member answers no parity member is read.
 */
public class TestStripedReader {
  private static StripedReader reader(ErasureCode ec, byte[][] members, long n, Set<Integer> dead,
      AtomicInteger parityReads) {
    return new StripedReader(ec, n, (m, off, len) -> () -> {
      if (dead.contains(m)) {
        throw new IOException("member " + m + " is dead");
      }
      if (m >= ec.data) {
        parityReads.incrementAndGet();
      }
      assertTrue("read past member " + m + "'s block", off + len <= members[m].length);
      // Exactly the bytes asked for: a view past them would fail its get.
      return new StripedReader.Got(java.nio.ByteBuffer.wrap(java.util.Arrays.copyOfRange(members[m], (int) off,
          (int) off + len)), 0, () -> { });
    });
  }

  @Test
  public void degraded() throws Exception {
    Random rnd = new Random(42);
    String[] configs = {"rs-3-2-4k", "rs-6-3-4k", "rs-10-4-4k", "xor-2-1-4k"};
    for (int trial = 0; trial < 200; trial++) {
      ErasureCode ec = ErasureCode.parse(configs[trial % configs.length]);
      int n = 1 + rnd.nextInt((int) (ec.stripeSize() * 4));
      byte[] data = new byte[n];
      rnd.nextBytes(data);
      byte[][] members = ec.encodeGroup(data);
      Set<Integer> dead = new HashSet<>();
      int lose = rnd.nextInt(ec.parity + 2);
      while (dead.size() < lose) {
        dead.add(rnd.nextInt(ec.members()));
      }
      AtomicInteger parityReads = new AtomicInteger();
      StripedReader r = reader(ec, members, n, dead, parityReads);
      if (rnd.nextBoolean()) {
        for (int m : dead) {
          r.markLost(m, "known dead");
        }
      }
      int off = rnd.nextInt(n);
      int len = 1 + rnd.nextInt(n - off);
      byte[] got = new byte[len + 3];
      try {
        r.read(off, got, 3, len);
        assertArrayEquals(ec + " n=" + n + " dead=" + dead + " [" + off + ", +" + len + ")",
            Arrays.copyOfRange(data, off, off + len), Arrays.copyOfRange(got, 3, 3 + len));
      } catch (IOException e) {
        if (dead.size() <= ec.parity) {
          throw new AssertionError(ec + " n=" + n + " dead=" + dead + ": " + e.getMessage(), e);
        }
        assertTrue(e.getMessage(), e.getMessage().contains("too many members lost"));
        continue;
      }
      if (dead.isEmpty()) {
        assertEquals(0, parityReads.get());
      }
      // Views without a copy: the range's bytes in order when no member holding them is dead, else null.
      StripedReader v = reader(ec, members, n, dead, new AtomicInteger());
      StripedReader.Views views = v.readViews(off, len);
      boolean touchesDead = false;
      for (long at = off; at < off + len; at += ec.cellSize - ec.memberOffset(at) % ec.cellSize) {
        touchesDead |= dead.contains(ec.memberOf(at));
      }
      assertEquals(ec + " n=" + n + " dead=" + dead + " [" + off + ", +" + len + ") views", touchesDead, views == null);
      if (views != null) {
        byte[] joined = new byte[len];
        long want = 0;
        for (StripedReader.Seg sg : views.segs()) {
          assertEquals("segments in order", want, sg.at());
          sg.data().get(sg.start(), joined, (int) sg.at(), sg.len());
          want += sg.len();
        }
        assertEquals(len, want);
        assertArrayEquals(Arrays.copyOfRange(data, off, off + len), joined);
        views.release();
      }
    }
  }

  @Test
  public void tooManyNeverWrong() throws Exception {
    ErasureCode ec = ErasureCode.parse("rs-3-2-4k");
    byte[] data = new byte[5 * 12288 + 17];
    new Random(1).nextBytes(data);
    byte[][] members = ec.encodeGroup(data);
    StripedReader r = reader(ec, members, data.length, Set.of(0, 3, 4), new AtomicInteger());
    try {
      r.read(0, new byte[data.length], 0, data.length);
      fail("read with three of five members dead");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("too many members lost"));
    }
  }
}
