package io.strato.hadoop;

import io.strato.proto.v1.SnapshotDiffEntry;
import io.strato.proto.v1.SnapshotDiffType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.hdfs.protocol.SnapshotDiffReport;
import org.apache.hadoop.hdfs.protocol.SnapshotDiffReport.DiffReportEntry;
import org.apache.hadoop.hdfs.protocol.SnapshotDiffReport.DiffType;

/**
 * meta's snapdiff (SnapshotDiff, paths relative to the bucket) as HDFS's
 * SnapshotDiffReport, which DistCp's -diff and -rdiff read.
 *
 * <p>The two name paths differently. meta gives CREATE and MODIFY paths as
 * they are in the later side, DELETE paths and a RENAME's source as in the
 * earlier. HDFS gives a created or modified entry under a renamed directory
 * with that directory's earlier path ("R d1 -> d2", "+ d1/f"), and DistCp
 * translates it through the rename (DistCpSync.translateRenamedPath); given
 * meta's "d2/f" it would not translate it, and given "d1/x" for a new d1's
 * child after "R d1 -> x" it would translate it wrongly. So such paths are
 * rewritten to HDFS's form: the longest renamed directory that is an
 * ancestor in the later side is replaced by its earlier path.
 *
 * <p>meta compares an older snapshot with a newer one; a report from the
 * newer to the older (HDFS allows either order, -rdiff asks for it) is the
 * inverse: creates become deletes and the reverse, renames turn around.
 * Unlike HDFS, a directory is not reported modified because its children
 * changed, and the report has no "M ." line for the root (DistCp skips it).
 */
final class SnapshotDiffs {
  private SnapshotDiffs() {}

  /** One entry: type, path in its side, target (RENAME), whether path is in the later side. */
  private record Entry(DiffType type, String path, String target, boolean later) {}

  /**
   * The report of meta's entries from older to newer; inverse: the report
   * asked for goes from newer to older.
   */
  static SnapshotDiffReport report(String root, String from, String to, List<SnapshotDiffEntry> meta,
      boolean inverse) {
    List<Entry> es = new ArrayList<>();
    List<Entry> renames = new ArrayList<>();
    for (SnapshotDiffEntry m : meta) {
      Entry e = entry(m, inverse);
      if (e == null) {
        continue;
      }
      es.add(e);
      if (e.type == DiffType.RENAME) {
        renames.add(e);
      }
    }
    List<DiffReportEntry> out = new ArrayList<>();
    for (Entry e : es) {
      String path = e.later ? earlier(e.path, renames) : e.path;
      if (e.type == DiffType.RENAME) {
        out.add(new DiffReportEntry(DiffType.RENAME, bytes(path), bytes(e.target)));
      } else {
        out.add(new DiffReportEntry(e.type, bytes(path)));
      }
    }
    return new SnapshotDiffReport(root, from, to, out);
  }

  private static Entry entry(SnapshotDiffEntry m, boolean inverse) {
    SnapshotDiffType t = m.getType();
    String p = m.getPath();
    switch (t) {
      case SNAPSHOT_DIFF_CREATE:
        return inverse ? new Entry(DiffType.DELETE, p, null, false) : new Entry(DiffType.CREATE, p, null, true);
      case SNAPSHOT_DIFF_DELETE:
        return inverse ? new Entry(DiffType.CREATE, p, null, true) : new Entry(DiffType.DELETE, p, null, false);
      case SNAPSHOT_DIFF_MODIFY:
        // meta's path is the newer side's: the later one, or (inverse) the earlier.
        return new Entry(DiffType.MODIFY, p, null, !inverse);
      case SNAPSHOT_DIFF_RENAME:
        return inverse ? new Entry(DiffType.RENAME, m.getTarget(), p, false)
            : new Entry(DiffType.RENAME, p, m.getTarget(), false);
      default:
        return null;
    }
  }

  /** path (in the later side) with its longest renamed ancestor put back at its earlier path. */
  static String earlier(String path, List<Entry> renames) {
    Entry best = null;
    for (Entry r : renames) {
      if (path.startsWith(r.target + "/") && (best == null || r.target.length() > best.target.length())) {
        best = r;
      }
    }
    return best == null ? path : best.path + path.substring(best.target.length());
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
