package main

// strato fs du and fs count: a subtree's bytes, its bytes on disk and its
// files and directories, added up by meta (GetContentSummary), in the
// columns and order hdfs dfs -du and -count print them.

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// usage is what a subtree holds: hdfs's ContentSummary.
type usage struct {
	Path           string `json:"path"`
	DirectoryCount int64  `json:"directoryCount"`
	FileCount      int64  `json:"fileCount"`
	Length         int64  `json:"length"`        // the files' bytes
	SpaceConsumed  int64  `json:"spaceConsumed"` // on the datanodes: every replica, parity included
}

// addHumanFlag registers -h (human sizes), as hdfs dfs has it; help is
// --help alone (cobra would take -h for it).
func addHumanFlag(cmd *cobra.Command, human *bool) {
	cmd.Flags().BoolVarP(human, "human-readable", "h", false, "sizes in binary units (1.5 MiB) instead of bytes")
	cmd.Flags().Bool("help", false, "help for "+cmd.Name())
}

// summarize adds up the subtree at st (a rooted path's status): meta
// walks it, a page per call (client.Summarize).
func summarize(s *session, st *stratov1.FileStatus) (usage, error) {
	cs, err := s.c.Summarize(s.ctx, st.Path, 0)
	if err != nil {
		return usage{Path: st.Path}, err
	}
	return usage{Path: st.Path, DirectoryCount: cs.DirectoryCount, FileCount: cs.FileCount, Length: cs.Length,
		SpaceConsumed: cs.SpaceConsumed}, nil
}

func newFSDuCmd(o *cliOptions) *cobra.Command {
	var summary, human, header bool
	cmd := &cobra.Command{
		Use: "du [-s] [-h] [-v] PATH...",
		Short: "Show the bytes and the bytes on disk (every replica, parity included) of each entry of a directory, " +
			"or with -s of PATH itself, as hdfs dfs -du",
		Args: argsBetween(1, 1<<30),
		RunE: o.action(func(s *session, args []string) error {
			var all []usage
			for _, arg := range args {
				st, err := s.c.StatPath(s.ctx, arg)
				if err != nil {
					return err
				}
				entries := []*stratov1.FileStatus{st}
				if st.IsDirectory && !summary {
					if entries, err = s.c.ListPath(s.ctx, arg); err != nil {
						return err
					}
				}
				for _, e := range entries {
					u, err := summarize(s, e)
					if err != nil {
						return err
					}
					all = append(all, u)
				}
			}
			if s.json {
				return printJSON(s.out, duJSON(all))
			}
			var head []string
			if header {
				head = []string{"SIZE", "DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS", "FULL_PATH_NAME"}
			}
			rows := make([][]string, 0, len(all))
			for _, u := range all {
				rows = append(rows, []string{sizeColumn(u.Length, human), sizeColumn(u.SpaceConsumed, human), u.Path})
			}
			return printTable(s.out, head, rows)
		}),
	}
	cmd.Flags().BoolVarP(&summary, "summary", "s", false, "one line for each PATH, its whole subtree")
	addHumanFlag(cmd, &human)
	cmd.Flags().BoolVarP(&header, "header", "v", false, "a header line naming the columns")
	return cmd
}

// duEntry is one line of du --json.
type duEntry struct {
	Path          string `json:"path"`
	Length        int64  `json:"length"`
	SpaceConsumed int64  `json:"spaceConsumed"`
}

func duJSON(all []usage) []duEntry {
	out := make([]duEntry, len(all))
	for i, u := range all {
		out[i] = duEntry{Path: u.Path, Length: u.Length, SpaceConsumed: u.SpaceConsumed}
	}
	return out
}

// countEntry is one line of count --json: the subtree and, for a volume
// or a bucket, its quotas (-1: none) and what they count.
type countEntry struct {
	usage
	Quota               int64 `json:"quota"`
	RemainingQuota      int64 `json:"remainingQuota"`
	SpaceQuota          int64 `json:"spaceQuota"`
	RemainingSpaceQuota int64 `json:"remainingSpaceQuota"`
}

// quotaOf fills a volume's or a bucket's quotas, as the Hadoop connector's
// getContentSummary does: the namespace quota against the volume's
// buckets or the bucket's keys and directories, the space quota against
// their logical bytes (strato's quotas do not count replicas). Elsewhere
// there are none.
func quotaOf(s *session, e *countEntry) error {
	e.Quota, e.RemainingQuota, e.SpaceQuota, e.RemainingSpaceQuota = -1, -1, -1, -1
	p, err := client.ParseRootedPath(e.Path)
	if err != nil {
		return err
	}
	var quota, usedNS, spaceQuota, usedBytes int64
	switch {
	case p.Volume == "" || p.Key != "":
		return nil
	case p.Bucket == "":
		v, err := s.c.GetVolume(s.ctx, p.Volume)
		if err != nil {
			return err
		}
		quota, usedNS, spaceQuota, usedBytes = v.QuotaNamespace, v.UsedNamespace, v.QuotaBytes, v.UsedBytes
	default:
		b, err := s.c.GetBucket(s.ctx, p.Volume, p.Bucket)
		if err != nil {
			return err
		}
		quota, usedNS, spaceQuota, usedBytes = b.QuotaNamespace, b.UsedNamespace, b.QuotaBytes, b.UsedBytes
	}
	if quota > 0 {
		e.Quota, e.RemainingQuota = quota, quota-usedNS
	}
	if spaceQuota > 0 {
		e.SpaceQuota, e.RemainingSpaceQuota = spaceQuota, spaceQuota-usedBytes
	}
	return nil
}

func newFSCountCmd(o *cliOptions) *cobra.Command {
	var quotas, human, header bool
	cmd := &cobra.Command{
		Use: "count [-q] [-h] [-v] PATH...",
		Short: "Count the directories, files and bytes under PATH (with -q: and its volume's or bucket's quotas), " +
			"as hdfs dfs -count",
		Args: argsBetween(1, 1<<30),
		RunE: o.action(func(s *session, args []string) error {
			var all []countEntry
			for _, arg := range args {
				st, err := s.c.StatPath(s.ctx, arg)
				if err != nil {
					return err
				}
				u, err := summarize(s, st)
				if err != nil {
					return err
				}
				e := countEntry{usage: u}
				if err := quotaOf(s, &e); err != nil {
					return err
				}
				all = append(all, e)
			}
			if s.json {
				return printJSON(s.out, all)
			}
			return printCount(s.out, all, quotas, human, header)
		}),
	}
	cmd.Flags().BoolVarP(&quotas, "quotas", "q", false, "also the quotas: QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA")
	addHumanFlag(cmd, &human)
	cmd.Flags().BoolVarP(&header, "header", "v", false, "a header line naming the columns")
	return cmd
}

// printCount prints count's lines in hdfs's fixed-width columns
// (ContentSummary.toString): [QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA]
// DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME, "none" and "inf" where there
// is no quota. Only sizes in bytes are made human by -h.
func printCount(w io.Writer, all []countEntry, quotas, human, header bool) error {
	const quotaFmt, summaryFmt = "%12s %15s %15s %15s ", "%12s %12s %18s "
	if header {
		if quotas {
			fmt.Fprintf(w, quotaFmt, "QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA")
		}
		fmt.Fprintf(w, summaryFmt+"%s\n", "DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE", "PATHNAME")
	}
	for _, e := range all {
		if quotas {
			q, qr, sq, sqr := "none", "inf", "none", "inf"
			if e.Quota >= 0 {
				q, qr = strconv.FormatInt(e.Quota, 10), strconv.FormatInt(e.RemainingQuota, 10)
			}
			if e.SpaceQuota >= 0 {
				sq, sqr = sizeColumn(e.SpaceQuota, human), sizeColumn(e.RemainingSpaceQuota, human)
			}
			fmt.Fprintf(w, quotaFmt, q, qr, sq, sqr)
		}
		if _, err := fmt.Fprintf(w, summaryFmt+"%s\n", strconv.FormatInt(e.DirectoryCount, 10),
			strconv.FormatInt(e.FileCount, 10), sizeColumn(e.Length, human), e.Path); err != nil {
			return err
		}
	}
	return nil
}
