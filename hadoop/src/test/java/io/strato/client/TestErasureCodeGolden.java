package io.strato.client;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.assertThrows;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.Test;

/**
 * The Java code against the block-group golden vectors the Go package ec
 * checks too (ec/testdata/golden.txt, ec/golden_test.go): the same layout and
 * the same parity, byte for byte; and every loss of up to p members rebuilt.
 */
public class TestErasureCodeGolden {
  static final Path GOLDEN = Paths.get("..", "ec", "testdata", "golden.txt");

  /** The vectors' data generator (ec/golden_test.go goldenBytes). */
  static byte[] goldenBytes(int n, long seed) {
    byte[] b = new byte[n];
    long x = seed;
    for (int i = 0; i < n; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      b[i] = (byte) (x >>> 56);
    }
    return b;
  }

  static String sha256(byte[] b) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
  }

  @Test
  public void generatorMatchesGo() {
    assertEquals("6c82a562cb808d10", HexFormat.of().formatHex(goldenBytes(8, 1)));
  }

  @Test
  public void goldenVectors() throws Exception {
    List<String> lines = new ArrayList<>();
    for (String l : Files.readAllLines(GOLDEN, StandardCharsets.UTF_8)) {
      if (!l.isBlank() && !l.startsWith("#")) {
        lines.add(l.trim());
      }
    }
    assertEquals("vectors in " + GOLDEN, 14, lines.size());
    // The Vector API's code (surefire runs with it) and the scalar one give the same bytes.
    assertTrue("the tests' JVM has the Vector API (pom.xml's argLine)", ErasureCode.VECTOR);
    for (boolean vector : new boolean[] {true, false}) {
      for (String l : lines) {
        String[] f = l.split(" ");
        ErasureCode p = ErasureCode.parse(f[0]);
        ErasureCode ec = new ErasureCode(p.codec, p.data, p.parity, p.cellSize, vector);
        assertEquals(vector ? "vector" : "scalar", ec.kernel());
        int n = Integer.parseInt(f[1]);
        byte[] data = goldenBytes(n, Long.parseLong(f[2]));
        byte[][] members = ec.encodeGroup(data);
        assertEquals(l, ec.members(), f.length - 3);
        for (int m = 0; m < ec.members(); m++) {
          assertEquals(ec.kernel() + " " + f[0] + " " + n + " member " + m, f[3 + m], sha256(members[m]));
        }
        rebuildsEveryLoss(ec, data, members);
      }
    }
  }

  /** Each stripe with random sets of up to p members lost: the data cells come back. */
  private static void rebuildsEveryLoss(ErasureCode ec, byte[] data, byte[][] members) {
    Random rnd = new Random(data.length);
    int[] lens = new int[ec.members()];
    for (long s = 0; s < ec.stripes(data.length); s++) {
      int len = ec.cellLens(data.length, s, lens);
      for (int trial = 0; trial < 4; trial++) {
        boolean[] present = new boolean[ec.members()];
        java.util.Arrays.fill(present, true);
        int lost = 1 + rnd.nextInt(ec.parity);
        for (int k = 0; k < lost; k++) {
          present[rnd.nextInt(ec.members())] = false;
        }
        byte[][] shards = new byte[ec.members()][];
        int[] offs = new int[ec.members()];
        for (int i = 0; i < ec.members(); i++) {
          shards[i] = new byte[len];
          if (present[i]) {
            System.arraycopy(members[i], (int) (s * ec.cellSize), shards[i], 0, lens[i]);
          }
        }
        ec.reconstructData(shards, offs, present, len);
        for (int i = 0; i < ec.data; i++) {
          if (lens[i] == 0) {
            continue;
          }
          byte[] want = java.util.Arrays.copyOfRange(data, (int) (s * ec.stripeSize() + (long) i * ec.cellSize),
              (int) (s * ec.stripeSize() + (long) i * ec.cellSize) + lens[i]);
          assertArrayEquals(ec + " stripe " + s + " member " + i, want, java.util.Arrays.copyOf(shards[i], lens[i]));
        }
      }
    }
  }

  @Test
  public void tooManyLost() {
    ErasureCode ec = ErasureCode.parse("rs-3-2-4k");
    boolean[] present = {true, false, false, false, true};
    byte[][] shards = new byte[5][4096];
    assertThrows(IllegalStateException.class, () -> ec.reconstructData(shards, new int[5], present, 4096));
  }

  @Test
  public void refusesBadConfigs() {
    assertThrows(IllegalArgumentException.class, () -> ErasureCode.parse("xor-2-2-1024k"));
    assertThrows(IllegalArgumentException.class, () -> ErasureCode.parse("rs-3-2-6k"));
    assertThrows(IllegalArgumentException.class, () -> ErasureCode.parse("rs-1-2-1024k"));
    assertEquals("rs-6-3-1024k", ErasureCode.parse("RS-6-3").toString());
  }
}
