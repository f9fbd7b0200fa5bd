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
 * <p>The two name paths differently. meta compares an older snapshot with a
 * newer one and gives CREATE and MODIFY paths as they are in the newer,
 * DELETE paths and a RENAME's source as in the older. HDFS names every
 * entry but a rename's target in the older snapshot: a created or modified
 * entry under a renamed directory has that directory's older path ("R d1 ->
 * d2", "+ d1/f"), and DistCp translates it through the rename
 * (DistCpSync.translateRenamedPath); given meta's "d2/f" it would not, and
 * given a path under a directory renamed onto another's old name it would
 * translate it wrongly. So meta's CREATE and MODIFY paths are rewritten:
 * their longest renamed ancestor is put back at its older path.
 *
 * <p>A report from the newer snapshot to the older (HDFS allows either
 * order; -rdiff asks for it) is the inverse, with the same paths: creates
 * become deletes and the reverse, renames turn around (from the newer path
 * to the older), which is what DistCp's -rdiff expects of HDFS (it
 * translates deleted paths through the turned renames, HDFS-10263). Unlike
 * HDFS, a directory is not reported modified because its children changed,
 * and the report has no "M ." line for the root (DistCp skips it).
 */
final class SnapshotDiffs {
  private SnapshotDiffs() {}

  /**
   * The report of meta's entries (from the older snapshot to the newer);
   * inverse: the report asked for goes from the newer to the older.
   */
  static SnapshotDiffReport report(String root, String from, String to, List<SnapshotDiffEntry> meta,
      boolean inverse) {
    List<SnapshotDiffEntry> renames = new ArrayList<>();
    for (SnapshotDiffEntry m : meta) {
      if (m.getType() == SnapshotDiffType.SNAPSHOT_DIFF_RENAME) {
        renames.add(m);
      }
    }
    List<DiffReportEntry> out = new ArrayList<>();
    for (SnapshotDiffEntry m : meta) {
      String p = m.getPath();
      switch (m.getType()) {
        case SNAPSHOT_DIFF_CREATE:
          out.add(new DiffReportEntry(inverse ? DiffType.DELETE : DiffType.CREATE, bytes(older(p, renames))));
          break;
        case SNAPSHOT_DIFF_DELETE:
          out.add(new DiffReportEntry(inverse ? DiffType.CREATE : DiffType.DELETE, bytes(p)));
          break;
        case SNAPSHOT_DIFF_MODIFY:
          out.add(new DiffReportEntry(DiffType.MODIFY, bytes(older(p, renames))));
          break;
        case SNAPSHOT_DIFF_RENAME:
          out.add(inverse ? new DiffReportEntry(DiffType.RENAME, bytes(m.getTarget()), bytes(p))
              : new DiffReportEntry(DiffType.RENAME, bytes(p), bytes(m.getTarget())));
          break;
        default:
          break; // a type this build does not know
      }
    }
    return new SnapshotDiffReport(root, from, to, out);
  }

  /** path (in the newer snapshot) with its longest renamed ancestor put back at its older path. */
  static String older(String path, List<SnapshotDiffEntry> renames) {
    SnapshotDiffEntry best = null;
    for (SnapshotDiffEntry r : renames) {
      String t = r.getTarget();
      if (path.startsWith(t + "/") && (best == null || t.length() > best.getTarget().length())) {
        best = r;
      }
    }
    return best == null ? path : best.getPath() + path.substring(best.getTarget().length());
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
