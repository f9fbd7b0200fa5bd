package main

// appendToFile, truncate, concat and recoverLease: hdfs dfs's
// -appendToFile, -truncate and -concat, and hdfs debug recoverLease.

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/client"
)

// fsAppendCmds are the commands of this file.
func fsAppendCmds(o *cliOptions) []*cobra.Command {
	return []*cobra.Command{newFSAppendToFileCmd(o), newFSTruncateCmd(o), newFSConcatCmd(o), newFSRecoverLeaseCmd(o)}
}

// appendEntry is appendToFile's --json.
type appendEntry struct {
	Path     string `json:"path"`
	Offset   int64  `json:"offset"`   // where the appended bytes start
	Appended int64  `json:"appended"` // bytes appended
	Length   int64  `json:"length"`   // the file's length after
}

type countingWriter struct {
	w *client.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newFSAppendToFileCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "appendToFile LOCAL... PATH",
		Short: "Append local files (- for stdin) to the file PATH, created if missing (hdfs dfs -appendToFile)",
		Long: `Append the local files, in order, to the file PATH (- reads stdin), as hdfs dfs
-appendToFile: a file that does not exist is created. The bytes go in new blocks
after the file's last one; readers see the file's old length until the append is
closed. A file another writer holds open is refused (exit 1): recoverLease
closes a file whose writer died.`,
		Args: argsBetween(2, 1<<30),
		RunE: o.action(func(s *session, args []string) error {
			p, err := client.ParsePath(args[len(args)-1], true)
			if err != nil {
				return err
			}
			w, err := s.c.Append(s.ctx, p.String(), client.WriteOptions{})
			if errors.Is(err, client.ErrNotFound) {
				w, err = s.c.Create(s.ctx, p.String(), client.CreateOptions{})
			}
			if err != nil {
				return err
			}
			cw := &countingWriter{w: w}
			s.transferStarted()
			for _, local := range args[:len(args)-1] {
				src, _, closeSrc, err := openLocal(s, local)
				if err != nil {
					w.Abort()
					return err
				}
				_, err = io.Copy(cw, src)
				closeSrc()
				if err != nil {
					w.Abort()
					return err
				}
			}
			if err := w.Close(); err != nil {
				return err
			}
			e := appendEntry{Path: p.String(), Offset: w.AppendOffset(), Appended: cw.n, Length: w.AppendOffset() + cw.n}
			if s.json {
				return printJSON(s.out, e)
			}
			return nil
		}),
	}
}

// truncateEntry is one file of truncate --json.
type truncateEntry struct {
	Path   string `json:"path"`
	Length int64  `json:"length"`
	Done   bool   `json:"done"`
}

func newFSTruncateCmd(o *cliOptions) *cobra.Command {
	var wait bool
	cmd := &cobra.Command{
		Use:   "truncate [-w] LENGTH PATH...",
		Short: "Cut files to LENGTH bytes (hdfs dfs -truncate)",
		Long: `Cut each file to LENGTH bytes (at most its length), as hdfs dfs -truncate.
strato truncates at once, on a block boundary or inside a block: the blocks past
LENGTH are freed and the block it falls in ends there, and the bytes past it are
never read again (an append writes new blocks). -w, which waits for HDFS's block
recovery, is accepted and has nothing to wait for. A snapshot taken before keeps
the file as it was.`,
		Args: argsBetween(2, 1<<30),
		RunE: o.action(func(s *session, args []string) error {
			n, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || n < 0 {
				return usagef("%s is not a length: a number of bytes, 0 or more", args[0])
			}
			var all []truncateEntry
			for _, arg := range args[1:] {
				p, err := client.ParsePath(arg, true)
				if err != nil {
					return err
				}
				done, err := s.c.Truncate(s.ctx, p.String(), n)
				if err != nil {
					return err
				}
				all = append(all, truncateEntry{Path: p.String(), Length: n, Done: done})
			}
			if s.json {
				return printJSON(s.out, all)
			}
			for _, e := range all {
				if _, err := fmt.Fprintf(s.out, "Truncated %s to length: %d\n", e.Path, e.Length); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&wait, "wait", "w", false, "wait for block recovery (strato needs none)")
	return cmd
}

func newFSConcatCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "concat TARGET SRC...",
		Short: "Move the blocks of the files SRC, in order, to the end of TARGET and remove them (hdfs dfs -concat)",
		Long: `Append the files SRC, in order, to the file TARGET and remove them, in one
metadata operation that copies no data, as hdfs dfs -concat. Every file is in
TARGET's bucket, closed, with TARGET's replication and checksums; a source a
snapshot holds is refused.`,
		Args: argsBetween(2, 1<<30),
		RunE: o.action(func(s *session, args []string) error {
			n, err := s.c.Concat(s.ctx, args[0], args[1:])
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, map[string]any{"path": args[0], "length": n})
			}
			return nil
		}),
	}
}

// recoverEntry is recoverLease's --json.
type recoverEntry struct {
	Path   string `json:"path"`
	Closed bool   `json:"closed"`
	Length int64  `json:"length"`
}

func newFSRecoverLeaseCmd(o *cliOptions) *cobra.Command {
	var retries int
	cmd := &cobra.Command{
		Use:   "recoverLease PATH",
		Short: "Close a file its writer left open, at its last hsynced length (hdfs debug recoverLease)",
		Long: `Close a file left open by a writer that died, as hdfs debug recoverLease
-path PATH: the file ends at the length its last hsync (or hflush) published, and
the old writer can no longer hsync or close it. A closed file is left as it is.
strato recovers at once; --retries is accepted for hdfs's sake.`,
		Args: argsBetween(1, 1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := client.ParsePath(args[0], true)
			if err != nil {
				return err
			}
			closed, n, err := s.c.RecoverLease(s.ctx, p.String())
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, recoverEntry{Path: p.String(), Closed: closed, Length: n})
			}
			_, err = fmt.Fprintf(s.out, "recoverLease SUCCEEDED on %s (length %d)\n", p, n)
			return err
		}),
	}
	cmd.Flags().IntVar(&retries, "retries", 1, "attempts (strato recovers at once)")
	return cmd
}
