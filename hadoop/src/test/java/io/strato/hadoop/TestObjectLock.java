package io.strato.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strato.client.MetaException;
import io.strato.proto.v1.ErrorReason;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.AccessControlException;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * S3 object lock (WORM, decision 0088) holds against the Hadoop connector:
 * meta, not the S3 gateway, refuses to destroy a locked version, so a key
 * under COMPLIANCE retention or a legal hold, put and locked with the CLI,
 * survives every FileSystem call. What changes a version's data in place
 * (append, truncate, concat as target or source) is refused with an
 * AccessControlException naming the lock; a rename is refused because the
 * bucket is versioned (0086), and onto the key answers false as HDFS does
 * for an existing file; create is refused in any OBS bucket (the connector
 * creates files in FSO buckets only). A delete makes a delete marker, as
 * S3's DELETE without a version does, and an overwrite by the CLI a new
 * version: the locked version stays, no one may delete it, and its bytes
 * read back once it is the latest again.
 */
public class TestObjectLock {
  private static final String BUCKET = "/lockvol/worm";

  private static StratoCluster cluster;
  private static FileSystem fs;

  @BeforeClass
  public static void start() throws Exception {
    cluster = StratoCluster.get();
    fs = cluster.fs();
    cluster.cli("sh", "volume", "create", "lockvol");
    cluster.cli("sh", "bucket", "create", BUCKET, "--layout", "OBS", "--object-lock");
  }

  @Test
  public void complianceRetention() throws Exception {
    Path p = new Path(BUCKET + "/retained");
    put(p, "kept until tomorrow");
    cluster.cli("sh", "key", "retention", p.toString(), "--mode", "COMPLIANCE", "--until", "+24h");
    lockedAgainstTheConnector(p, "kept until tomorrow", "COMPLIANCE retention until");
  }

  @Test
  public void legalHold() throws Exception {
    Path p = new Path(BUCKET + "/held");
    put(p, "kept while held");
    cluster.cli("sh", "key", "legalhold", p.toString(), "on");
    lockedAgainstTheConnector(p, "kept while held", "has a legal hold");
  }

  /**
   * Every FileSystem call on p, a key whose latest version holds data and is
   * locked (why is how meta words the lock), leaves that version as it was.
   */
  private static void lockedAgainstTheConnector(Path p, String data, String why) throws Exception {
    Path other = new Path(p + "-other");
    put(other, "unlocked");
    Map<String, String> locked = info(p, "");
    String version = locked.get("Version");
    assertTrue(String.valueOf(locked), version != null && !version.isEmpty());

    // Changed in place: refused by meta, OBJECT_LOCKED.
    refused(why, () -> fs.append(p).close());
    refused(why, () -> fs.truncate(p, 1));
    refused(why, () -> fs.concat(p, new Path[] {other}));
    refused(why, () -> fs.concat(other, new Path[] {p}));
    assertEquals(data, read(p));
    assertEquals("unlocked", read(other));

    // A versioned bucket's keys are not renamed (0086): away, meta refuses;
    // onto an existing file, rename answers false before asking meta.
    IOException e = assertThrows(IOException.class, () -> fs.rename(p, new Path(p + "-moved")));
    assertTrue(e.getMessage(), e.getMessage().contains("is versioned"));
    assertFalse(fs.rename(other, p));
    assertFalse(fs.exists(new Path(p + "-moved")));
    assertEquals(data, read(p));
    assertEquals("unlocked", read(other));

    // The connector creates files in FSO buckets only: a create in this
    // OBS bucket is refused, overwrite or not, before any lock is asked.
    for (boolean overwrite : new boolean[] {false, true}) {
      MetaException m = assertThrows(MetaException.class, () -> write(p, "replaced", overwrite));
      assertTrue(m.getMessage(), m.is(ErrorReason.WRONG_LAYOUT));
    }
    assertEquals(data, read(p));

    // An overwrite by the CLI (or S3's PUT) makes a new version; the
    // locked one stays, as it was, and may not be deleted, by the CLI either.
    put(p, "a new version");
    assertEquals("a new version", read(p));
    stillLocked(p, locked, why);
    // Deleting the new version makes the locked one the latest again: its bytes read back.
    cluster.cli("sh", "key", "delete", p.toString(), "--version-id", info(p, "").get("Version"));
    assertEquals(version, info(p, "").get("Version"));
    assertEquals(data, read(p));

    // A delete makes a delete marker (allowed, as S3's DeleteObject
    // without a version): the locked version stays.
    assertTrue(fs.delete(p, false));
    assertFalse(fs.exists(p));
    stillLocked(p, locked, why);
  }

  /** Version locked.get("Version") of p is still there as it was, and a delete of it is refused. */
  private static void stillLocked(Path p, Map<String, String> locked, String why) throws Exception {
    String version = locked.get("Version");
    Map<String, String> now = info(p, version);
    for (String f : new String[] {"Size", "Object ID", "Blocks", "Retention", "Legal hold"}) {
      assertEquals(f, locked.get(f), now.get(f));
    }
    IOException e = assertThrows(IOException.class,
        () -> cluster.cli("sh", "key", "delete", p.toString(), "--version-id", version));
    assertTrue(e.getMessage(), e.getMessage().contains(why));
  }

  private interface Call {
    void run() throws IOException;
  }

  /** call fails with the AccessControlException of meta's OBJECT_LOCKED, its message saying why. */
  private static void refused(String why, Call call) {
    AccessControlException e = assertThrows(AccessControlException.class, call::run);
    assertTrue(e.getMessage(), e.getMessage().contains(why));
    assertTrue(String.valueOf(e.getCause()), e.getCause() instanceof MetaException
        && ((MetaException) e.getCause()).is(ErrorReason.OBJECT_LOCKED));
  }

  /** The fields of strato sh key info (of version, or the latest for ""), without its table of blocks. */
  private static Map<String, String> info(Path p, String version) throws Exception {
    String out = version.isEmpty() ? cluster.cli("sh", "key", "info", p.toString())
        : cluster.cli("sh", "key", "info", p.toString(), "--version-id", version);
    Map<String, String> fields = new HashMap<>();
    for (String line : out.split("\n\n", 2)[0].split("\n")) {
      int i = line.indexOf(':');
      if (i > 0) {
        fields.put(line.substring(0, i), line.substring(i + 1).trim());
      }
    }
    return fields;
  }

  /** Writes s at p with strato sh key put (the connector writes no OBS keys). */
  private static void put(Path p, String s) throws Exception {
    java.nio.file.Path f = cluster.dir().resolve("put");
    Files.writeString(f, s, StandardCharsets.UTF_8);
    cluster.cli("sh", "key", "put", p.toString(), f.toString());
  }

  private static void write(Path p, String s, boolean overwrite) throws IOException {
    try (FSDataOutputStream out = fs.create(p, overwrite)) {
      out.write(s.getBytes(StandardCharsets.UTF_8));
    }
  }

  private static String read(Path p) throws IOException {
    try (FSDataInputStream in = fs.open(p)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
