package io.strato.hadoop;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.fs.Path;

/**
 * A path of strato's rooted view, as Ozone's ofs has it (OFSPath): "/" holds
 * the volumes, "/VOLUME" the volume's buckets, "/VOLUME/BUCKET/..." the
 * bucket's tree. depth() is 0 for the root, 1 for a volume, 2 for a bucket's
 * root, 3 and more inside a bucket.
 */
final class StratoPath {
  final String volume;
  final String bucket;
  /** The path inside the bucket, without a leading '/' ("" at depth 2 or less). */
  final String key;
  final int depth;

  private StratoPath(String volume, String bucket, String key, int depth) {
    this.volume = volume;
    this.bucket = bucket;
    this.key = key;
    this.depth = depth;
  }

  /** Parses an absolute path (the URI's path part of a qualified Path). */
  static StratoPath of(Path p) {
    String s = p.toUri().getPath();
    List<String> parts = new ArrayList<>();
    for (String c : s.split("/")) {
      if (!c.isEmpty()) {
        parts.add(c);
      }
    }
    String v = parts.size() > 0 ? parts.get(0) : "";
    String b = parts.size() > 1 ? parts.get(1) : "";
    String k = parts.size() > 2 ? String.join("/", parts.subList(2, parts.size())) : "";
    return new StratoPath(v, b, k, parts.size());
  }

  boolean sameBucket(StratoPath o) {
    return volume.equals(o.volume) && bucket.equals(o.bucket);
  }

  /** The last component of the key. */
  String name() {
    int i = key.lastIndexOf('/');
    return i < 0 ? key : key.substring(i + 1);
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("/");
    b.append(volume);
    if (depth >= 2) {
      b.append('/').append(bucket);
    }
    if (depth >= 3) {
      b.append('/').append(key);
    }
    return b.toString();
  }
}
