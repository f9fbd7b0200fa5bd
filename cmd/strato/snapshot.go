package main

// strato sh snapshot: a bucket's snapshots (Ozone's `ozone sh snapshot`,
// HDFS's createSnapshot and snapshotDiff). A snapshot's files are read at
// /VOLUME/BUCKET/.snapshot/NAME/... with strato fs and key commands.

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func newSnapshotCmd(o *cliOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Take, list, compare and delete a bucket's snapshots (read them at /VOLUME/BUCKET/.snapshot/NAME/)",
	}
	cmd.AddCommand(newSnapshotCreateCmd(o), newSnapshotListCmd(o), newSnapshotInfoCmd(o), newSnapshotDeleteCmd(o),
		newSnapshotRenameCmd(o), newSnapshotDiffCmd(o))
	return cmd
}

func snapshotRow(s *stratov1.SnapshotInfo) []string {
	return []string{s.GetName(), fmt.Sprint(s.GetId()), timeMs(s.GetCreatedUnixMs())}
}

func newSnapshotCreateCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "create /VOLUME/BUCKET [NAME]",
		Short: "Take a snapshot of a bucket, in constant time (without NAME: sYYYYMMDD-hhmmss.mmm); the bucket's owner or an administrator",
		Args:  argsBetween(1, 2),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			name := ""
			if len(args) == 2 {
				name = args[1]
			}
			info, err := s.c.CreateSnapshot(s.ctx, p.Volume, p.Bucket, name)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, info)
			}
			_, err = fmt.Fprintf(s.out, "Created snapshot %s of /%s/%s (read it at /%s/%s/.snapshot/%s/)\n",
				info.GetName(), p.Volume, p.Bucket, p.Volume, p.Bucket, info.GetName())
			return err
		}),
	}
}

func newSnapshotListCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "list /VOLUME/BUCKET",
		Short: "List a bucket's snapshots",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			snaps, err := s.c.ListSnapshots(s.ctx, p.Volume, p.Bucket)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, messages(snaps))
			}
			rows := make([][]string, 0, len(snaps))
			for _, sn := range snaps {
				rows = append(rows, snapshotRow(sn))
			}
			return printTable(s.out, []string{"NAME", "ID", "CREATED"}, rows)
		}),
	}
}

func newSnapshotInfoCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "info /VOLUME/BUCKET NAME",
		Short: "Describe a snapshot",
		Args:  exactArgs(2),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			info, err := s.c.GetSnapshot(s.ctx, p.Volume, p.Bucket, args[1])
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, info)
			}
			return printFields(s.out, []field{
				{"Name", info.GetName()}, {"Bucket", "/" + info.GetVolume() + "/" + info.GetBucket()},
				{"ID", fmt.Sprint(info.GetId())}, {"Created", timeMs(info.GetCreatedUnixMs())},
				{"Path", "/" + info.GetVolume() + "/" + info.GetBucket() + "/.snapshot/" + info.GetName()},
			})
		}),
	}
}

func newSnapshotDeleteCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "delete /VOLUME/BUCKET NAME",
		Short: "Delete a snapshot (what only it held is freed in the background); the bucket's owner or an administrator",
		Args:  exactArgs(2),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			return s.c.DeleteSnapshot(s.ctx, p.Volume, p.Bucket, args[1])
		}),
	}
}

func newSnapshotRenameCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "rename /VOLUME/BUCKET NAME NEWNAME",
		Short: "Rename a snapshot; the bucket's owner or an administrator",
		Args:  exactArgs(3),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			info, err := s.c.RenameSnapshot(s.ctx, p.Volume, p.Bucket, args[1], args[2])
			if err != nil || !s.json {
				return err
			}
			return printJSON(s.out, info)
		}),
	}
}

// diffMarks are HDFS's SnapshotDiffReport marks.
var diffMarks = map[stratov1.SnapshotDiffType]string{
	stratov1.SnapshotDiffType_SNAPSHOT_DIFF_CREATE: "+",
	stratov1.SnapshotDiffType_SNAPSHOT_DIFF_DELETE: "-",
	stratov1.SnapshotDiffType_SNAPSHOT_DIFF_MODIFY: "M",
	stratov1.SnapshotDiffType_SNAPSHOT_DIFF_RENAME: "R",
}

func newSnapshotDiffCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "diff /VOLUME/BUCKET FROM [TO]",
		Short: "List what changed from snapshot FROM to snapshot TO (without TO: to now), as hdfs snapshotDiff prints it",
		Args:  argsBetween(2, 3),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			to := ""
			if len(args) == 3 {
				to = args[2]
			}
			es, err := s.c.SnapshotDiff(s.ctx, p.Volume, p.Bucket, args[1], to)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, messages(es))
			}
			toName := "the current tree"
			if to != "" {
				toName = "snapshot " + to
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Difference between snapshot %s and %s under /%s/%s:\n", args[1], toName, p.Volume, p.Bucket)
			for _, e := range es {
				fmt.Fprintf(&b, "%s\t./%s", diffMarks[e.GetType()], e.GetPath())
				if e.GetType() == stratov1.SnapshotDiffType_SNAPSHOT_DIFF_RENAME {
					fmt.Fprintf(&b, " -> ./%s", e.GetTarget())
				}
				b.WriteByte('\n')
			}
			_, err = fmt.Fprint(s.out, b.String())
			return err
		}),
	}
}
