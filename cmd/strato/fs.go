package main

// strato fs: the file-system view, as `hdfs dfs` shows it. Paths are
// /VOLUME/BUCKET/DIR/FILE; "/" lists the volumes and "/VOLUME" its
// buckets, as directories.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func init() { extraCommands = append(extraCommands, newFSCmd) }

func newFSCmd() *cobra.Command {
	o := &cliOptions{}
	cmd := topGroup("fs", "File-system commands on FSO buckets (like hdfs dfs)", o)
	cmd.Long = `File-system commands, as "hdfs dfs" offers them, on paths
/VOLUME/BUCKET/DIR/FILE. "/" lists the volumes and "/VOLUME" its buckets.

With --json, statuses are protobuf FileStatus records whose path is the
full /VOLUME/BUCKET/... path.`
	cmd.AddCommand(newFSLsCmd(o), newFSMkdirCmd(o), newFSPutCmd(o), newFSGetCmd(o), newFSCatCmd(o),
		newFSMvCmd(o), newFSRmCmd(o), newFSStatCmd(o), newFSChmodCmd(o), newFSChownCmd(o), newFSTouchCmd(o),
		newFSDfCmd(o), newFSExpungeCmd(o))
	cmd.AddCommand(fsDailyCmds(o)...)
	cmd.AddCommand(fsAppendCmds(o)...)
	o.addPathCompletion(cmd)
	return cmd
}

// lsRow is one line of `fs ls`, as `hdfs dfs -ls` prints it: type and
// permission, replication, owner, group, size (in bytes; human, e.g.
// "1.5 MiB", with -h), modification time, path.
func lsRow(st *stratov1.FileStatus, human bool) []string {
	owner, group := st.Owner, st.Group
	if owner == "" {
		owner = "-"
	}
	if group == "" {
		group = "-"
	}
	repl, size := replicas(st.Replication), st.Length
	if st.IsDirectory {
		repl, size = "-", 0
	}
	return []string{modeString(st), repl, owner, group, sizeColumn(size, human), timeMs(st.ModificationTimeUnixMs), st.Path}
}

// sizeColumn prints a size in bytes, or with human in binary units.
func sizeColumn(n int64, human bool) string {
	if human {
		return bytesize.Format(n)
	}
	return strconv.FormatInt(n, 10)
}

// replicas prints a replication factor as its count.
func replicas(r stratov1.ReplicationFactor) string {
	if r == stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED {
		return "-"
	}
	return strconv.Itoa(int(r))
}

// ---- Commands -------------------------------------------------------------------

func newFSLsCmd(o *cliOptions) *cobra.Command {
	var recursive, human bool
	cmd := &cobra.Command{
		Use:   "ls [-R] [-h] [PATH]",
		Short: "List a directory (default /: the volumes)",
		Args:  argsBetween(0, 1),
		RunE: o.action(func(s *session, args []string) error {
			path := "/"
			if len(args) == 1 {
				path = args[0]
			}
			entries, err := s.c.ListPath(s.ctx, path)
			if err != nil {
				return err
			}
			if recursive {
				if entries, err = listRecursive(s, entries); err != nil {
					return err
				}
			}
			if s.json {
				return printJSON(s.out, messages(entries))
			}
			rows := make([][]string, 0, len(entries))
			for _, st := range entries {
				rows = append(rows, lsRow(st, human))
			}
			// As hdfs dfs -ls: a count before a directory's entries (a
			// file lists as itself, without one).
			p, _ := client.ParseRootedPath(path)
			isFile := len(entries) == 1 && !entries[0].IsDirectory && entries[0].Path == p.String()
			if !recursive && !isFile && len(entries) > 0 {
				if _, err := s.out.Write([]byte("Found " + strconv.Itoa(len(entries)) + " items\n")); err != nil {
					return err
				}
			}
			return printTable(s.out, nil, rows)
		}),
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "list subdirectories recursively")
	addHumanFlag(cmd, &human)
	return cmd
}

// listRecursive lists each directory's entries right after it, depth
// first, as hdfs dfs -ls -R does.
func listRecursive(s *session, entries []*stratov1.FileStatus) ([]*stratov1.FileStatus, error) {
	var out []*stratov1.FileStatus
	for _, st := range entries {
		out = append(out, st)
		if !st.IsDirectory {
			continue
		}
		children, err := s.c.ListPath(s.ctx, st.Path)
		if err != nil {
			return nil, err
		}
		sub, err := listRecursive(s, children)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

func newFSMkdirCmd(o *cliOptions) *cobra.Command {
	var parents bool
	cmd := &cobra.Command{
		Use:   "mkdir [-p] PATH",
		Short: "Create a directory (with -p: and its missing parents; no error if it exists)",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := client.ParsePath(args[0], true)
			if err != nil {
				return err
			}
			if !parents {
				// The API's mkdirs is always -p: check what -p would forgive.
				if _, err := s.c.Stat(s.ctx, p.String()); err == nil {
					return errors.New("already exists")
				} else if !errors.Is(err, client.ErrNotFound) {
					return err
				}
				parent := p
				parent.Key = ""
				if i := strings.LastIndexByte(p.Key, '/'); i >= 0 {
					parent.Key = p.Key[:i]
				}
				st, err := s.c.Stat(s.ctx, parent.String())
				if errors.Is(err, client.ErrNotFound) && parent.Key != "" {
					root := p
					root.Key = ""
					if _, err := s.c.Stat(s.ctx, root.String()); err != nil {
						return err // no such bucket (or volume)
					}
					return errors.New("parent directory " + parent.String() + " not found (use -p to create it)")
				}
				if err != nil {
					return err
				}
				if !st.IsDirectory {
					return errors.New(parent.String() + " is not a directory")
				}
			}
			if p.Key == "" { // a bucket's root: exists if the bucket does
				_, err := s.c.Stat(s.ctx, p.String())
				return err
			}
			return s.c.Mkdirs(s.ctx, p.String())
		}),
	}
	cmd.Flags().BoolVarP(&parents, "parents", "p", false, "create missing parents; an existing directory is not an error")
	return cmd
}

// openFile opens a file for reading; a directory is refused by name.
func openFile(s *session, p client.Path) (*client.Reader, error) {
	st, err := s.c.Stat(s.ctx, p.String())
	if err != nil {
		return nil, err
	}
	if st.IsDirectory {
		return nil, errors.New("is a directory")
	}
	return s.c.Open(s.ctx, p.String())
}

func newFSCatCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "cat PATH",
		Short: "Write a file to stdout",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := client.ParsePath(args[0], true)
			if err != nil {
				return err
			}
			r, err := openFile(s, p)
			if err != nil {
				return err
			}
			return download(s, r, "-")
		}),
	}
}

func newFSMvCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "mv SRC DST",
		Short: "Rename a file or directory within its bucket (onto a directory: move into it)",
		Args:  exactArgs(2),
		RunE: o.action(func(s *session, args []string) error {
			return s.c.Rename(s.ctx, args[0], args[1])
		}),
	}
}

func newFSRmCmd(o *cliOptions) *cobra.Command {
	var recursive, force, skipTrash bool
	cmd := &cobra.Command{
		Use:   "rm [-r] [-f] [--skip-trash] PATH",
		Short: "Move a file, or with -r a directory, into the bucket's .Trash (or delete it: --skip-trash, no trash)",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := client.ParsePath(args[0], true)
			if err != nil {
				return err
			}
			if p.Key == "" {
				return usagef("%s is a bucket's root (use strato sh bucket delete)", p)
			}
			st, err := s.c.Stat(s.ctx, p.String())
			if err != nil {
				if force && errors.Is(err, client.ErrNotFound) {
					return nil
				}
				return err
			}
			if st.IsDirectory && !recursive {
				return errors.New("is a directory (use -r to delete it and its contents)")
			}
			if !skipTrash {
				dst, skipped, err := s.c.MoveToTrash(s.ctx, p.String())
				if err != nil {
					return fmt.Errorf("moving it to the trash: %w (--skip-trash deletes at once)", err)
				}
				if dst != "" {
					_, err = fmt.Fprintf(s.out, "Moved %s to trash at %s\n", p, dst)
					return err
				}
				if skipped == client.TrashOBS {
					fmt.Fprintf(s.cmd.ErrOrStderr(), "strato: rm %s: %s: deleted at once\n", p, skipped)
				}
			}
			return s.c.Delete(s.ctx, p.String(), recursive)
		}),
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "delete a directory and its contents")
	cmd.Flags().BoolVarP(&force, "force", "f", false, "no error if PATH does not exist")
	cmd.Flags().BoolVar(&skipTrash, "skip-trash", false, "delete at once instead of moving into the bucket's .Trash/USER/Current")
	return cmd
}

func newFSExpungeCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use: "expunge [/VOLUME/BUCKET]",
		Short: "Checkpoint the trash's Current and delete the checkpoints older than meta's trash interval, now " +
			"(hadoop fs -expunge; no bucket: every bucket, for administrators)",
		Args: cobra.MaximumNArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			var p client.Path
			if len(args) == 1 {
				var err error
				if p, err = client.ParsePath(args[0], true); err != nil {
					return err
				}
				if p.Key != "" {
					return usagef("%s: expunge takes a bucket, /VOLUME/BUCKET", p)
				}
			}
			r, err := s.c.Expunge(s.ctx, p.Volume, p.Bucket)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, r)
			}
			_, err = fmt.Fprintf(s.out, "Checkpoints made: %d, expired checkpoints deleted: %d\n", r.Checkpoints, r.Deleted)
			return err
		}),
	}
}

func newFSStatCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "stat PATH",
		Short: "Show a file's or directory's status",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			st, err := s.c.StatPath(s.ctx, args[0])
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, st)
			}
			kind := "file"
			if st.IsDirectory {
				kind = "directory"
			}
			fields := []field{{"Path", st.Path}, {"Type", kind}}
			if !st.IsDirectory {
				fields = append(fields,
					field{"Size", sizeWithBytes(st.Length)},
					field{"Replication", replicas(st.Replication)},
					field{"Block size", bytesize.Format(st.BlockSize)})
			}
			fields = append(fields,
				field{"Permission", fmt.Sprintf("%s (%04o)", modeString(st)[1:], permission(st))},
				field{"Owner", st.Owner},
				field{"Group", st.Group},
				field{"Modified", timeMs(st.ModificationTimeUnixMs)},
				field{"Accessed", timeMs(st.AccessTimeUnixMs)},
				field{"Created", timeMs(st.CreationTimeUnixMs)},
				field{"Object ID", strconv.FormatUint(st.ObjectId, 10)})
			return printFields(s.out, fields)
		}),
	}
}

func newFSDfCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "df",
		Short: "Show the cluster's raw capacity, used and remaining bytes (every replica counts), as hdfs dfs -df",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			st, err := s.c.FsStatus(s.ctx)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, st)
			}
			use := "-"
			if st.Capacity > 0 {
				use = fmt.Sprintf("%.1f%%", 100*float64(st.Used)/float64(st.Capacity))
			}
			return printFields(s.out, []field{
				{"Capacity", sizeWithBytes(st.Capacity)},
				{"Used", sizeWithBytes(st.Used)},
				{"Remaining", sizeWithBytes(st.Remaining)},
				{"Use%", use},
				{"Datanodes", strconv.Itoa(int(st.Datanodes))},
			})
		}),
	}
}
