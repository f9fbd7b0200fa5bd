package main

// The everyday file commands of hdfs dfs that strato fs.go does not hold:
// setrep, checksum, touchz, test, head and tail (du and count are in
// fsdu.go; put, get and cp in fstransfer.go).

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// fsDailyCmds are the commands of this file, fsdu.go and fstransfer.go
// (but put and get, which fs.go lists with the first commands).
func fsDailyCmds(o *cliOptions) []*cobra.Command {
	return []*cobra.Command{newFSCpCmd(o), newFSDuCmd(o), newFSCountCmd(o),
		newFSSetrepCmd(o), newFSChecksumCmd(o), newFSTouchzCmd(o), newFSTestCmd(o), newFSHeadCmd(o), newFSTailCmd(o)}
}

// ---- setrep --------------------------------------------------------------------

// setrepEntry is one file of setrep --json.
type setrepEntry struct {
	Path        string `json:"path"`
	Replication string `json:"replication"`
	Rewritten   bool   `json:"rewritten"` // false: it had it already
}

func newFSSetrepCmd(o *cliOptions) *cobra.Command {
	var quiet, wait, recursive bool
	cmd := &cobra.Command{
		Use:   "setrep [--quiet] REPLICATION PATH...",
		Short: "Set the replication (1, 3, or an erasure code) of a file or of every file under a directory, by writing it again",
		Long: `Set the replication of a file, or of every file under a directory, as hdfs dfs
-setrep: REPLICATION is 1 or 3 (ONE, THREE), or an erasure coding config such as
rs-6-3-1024k.

strato replicates a file's blocks through the containers they were written to,
whose replication is fixed: a file changes replication only by being written
again. setrep reads each file that does not have it yet and writes its bytes
with the new replication under the same path, replacing the file atomically
when the copy is complete (readers see the old bytes or the new, never a mix),
then sets the owner, group, permission, times and ACL it had. The file gets a
new object ID, and the bytes cross the network twice: run it near the cluster
for large trees. A file written to while setrep copies it is left as it is
(setrep fails naming it). -w and -R are accepted for hdfs's sake: a rewritten
file has all its replicas when setrep returns, and directories are always
recursive.`,
		Args: argsBetween(2, 1<<30),
		RunE: o.action(func(s *session, args []string) error {
			repl, ecc, err := client.ParseReplication(args[0])
			if err != nil {
				return usagef("%s is not a replication: 1, 3, or an erasure coding config such as rs-6-3-1024k", args[0])
			}
			name := replicas(repl) // as ls prints it
			if ecc != nil {
				name = client.Redundancy(repl, ecc)
			}
			var done []setrepEntry
			for _, arg := range args[1:] {
				p, err := client.ParsePath(arg, true)
				if err != nil {
					return err
				}
				err = eachPath(s, p.String(), true, func(st *stratov1.FileStatus) error {
					if st.IsDirectory {
						return nil
					}
					fp, err := client.ParsePath(st.Path, true)
					if err != nil {
						return err
					}
					rewritten, err := rewrite(s, fp, repl, ecc, quiet)
					if err != nil {
						return err
					}
					done = append(done, setrepEntry{Path: fp.String(), Replication: name, Rewritten: rewritten})
					if !s.json {
						_, err = fmt.Fprintf(s.out, "Replication %s set: %s\n", name, fp)
					}
					return err
				})
				if err != nil {
					return err
				}
			}
			if s.json {
				return printJSON(s.out, done)
			}
			return nil
		}),
	}
	addQuietFlag(cmd, &quiet)
	cmd.Flags().BoolVarP(&wait, "wait", "w", false, "accepted for hdfs dfs -setrep -w: setrep always returns once every replica is written")
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "accepted for hdfs dfs -setrep -R: directories are always recursive")
	return cmd
}

// rewrite writes the file p again with the replication repl (or the
// erasure code ecc) unless it has it; it reports whether it did.
func rewrite(s *session, p client.Path, repl stratov1.ReplicationFactor, ecc *stratov1.ErasureCoding, quiet bool) (bool, error) {
	r, err := s.c.Open(s.ctx, p.String())
	if err != nil {
		return false, err
	}
	defer func() { _ = r.Close() }()
	ki := r.Info()
	if client.Redundancy(ki.GetReplication(), ki.GetErasureCoding()) == client.Redundancy(repl, ecc) {
		return false, nil
	}
	w, err := s.c.Create(s.ctx, p.String(), client.CreateOptions{Overwrite: true, WriteOptions: client.WriteOptions{
		Replication: repl, ErasureCoding: ecc, SizeHint: ki.GetSize(), Permission: ki.GetPermission()}})
	if err != nil {
		return false, err
	}
	w.SetAttributes(ki.GetAttributes())
	s.transferStarted()
	bar := newProgress(s, quiet, keyBase(p.Key), ki.GetSize())
	_, err = io.Copy(w, bar.reader(r))
	if err == nil {
		// The last moment to leave alone a file someone replaced meanwhile.
		var now *stratov1.FileStatus
		if now, err = s.c.Stat(s.ctx, p.String()); err == nil && now.ObjectId != ki.GetObjectId() {
			err = fmt.Errorf("%s was written to while setrep copied it: left as it is", p)
		}
	}
	if err == nil {
		err = w.Close()
	} else {
		w.Abort()
	}
	bar.finish(err == nil)
	if err != nil {
		return false, err
	}
	return true, restoreAttributes(s, p, ki)
}

// restoreAttributes gives a rewritten file the owner, group, permission,
// times and ACL its key record had.
func restoreAttributes(s *session, p client.Path, ki *stratov1.KeyInfo) error {
	path := p.String()
	st, err := s.c.Stat(s.ctx, path)
	if err != nil {
		return err
	}
	if st.Owner != ki.GetOwner() || st.Group != ki.GetGroup() {
		if err := s.c.SetOwner(s.ctx, path, ki.GetOwner(), ki.GetGroup()); err != nil {
			return err
		}
	}
	if ki.Permission != nil && st.GetPermission() != ki.GetPermission() {
		if err := s.c.SetPermission(s.ctx, path, ki.GetPermission()); err != nil {
			return err
		}
	}
	if len(ki.GetAcls()) > 0 {
		if err := s.c.SetAcl(s.ctx, client.KeyObject(p.Volume, p.Bucket, p.Key), ki.GetAcls()); err != nil {
			return err
		}
	}
	return s.c.SetTimes(s.ctx, path, ki.GetModificationTimeUnixMs(), ki.GetAccessTimeUnixMs())
}

// ---- checksum ------------------------------------------------------------------

// checksumEntry is one file of checksum --json.
type checksumEntry struct {
	Path             string `json:"path"`
	Algorithm        string `json:"algorithm"`
	Checksum         string `json:"checksum"` // hex, as the table
	BytesPerChecksum uint32 `json:"bytesPerChecksum"`
	Length           int64  `json:"length"`
}

func newFSChecksumCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "checksum PATH...",
		Short: "Print each file's composite CRC (COMPOSITE-CRC32C, the Hadoop connector's checksum), as hdfs dfs -checksum",
		Args:  argsBetween(1, 1<<30),
		RunE: o.action(func(s *session, args []string) error {
			var all []checksumEntry
			for _, arg := range args {
				p, err := client.ParsePath(arg, true)
				if err != nil {
					return err
				}
				if st, err := s.c.Stat(s.ctx, p.String()); err != nil {
					return err
				} else if st.IsDirectory {
					return fmt.Errorf("%s is a directory", p)
				}
				fc, err := s.c.FileChecksum(s.ctx, p.String())
				if err != nil {
					return err
				}
				all = append(all, checksumEntry{Path: p.String(), Algorithm: fc.Algorithm(), Checksum: hex.EncodeToString(fc.Bytes()),
					BytesPerChecksum: fc.BytesPerChecksum, Length: fc.Length})
			}
			if s.json {
				return printJSON(s.out, all)
			}
			for _, e := range all {
				if _, err := fmt.Fprintf(s.out, "%s\t%s\t%s\n", e.Path, e.Algorithm, e.Checksum); err != nil {
					return err
				}
			}
			return nil
		}),
	}
}

// ---- touchz, test --------------------------------------------------------------

func newFSTouchzCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "touchz PATH...",
		Short: "Create empty files; an existing empty file is left as it is, a non-empty one is an error (hdfs dfs -touchz)",
		Args:  argsBetween(1, 1<<30),
		RunE: o.action(func(s *session, args []string) error {
			for _, arg := range args {
				p, err := client.ParsePath(arg, true)
				if err != nil {
					return err
				}
				st, err := statIfAny(s, p)
				switch {
				case err != nil:
					return err
				case st != nil && st.IsDirectory:
					return fmt.Errorf("%s is a directory", p)
				case st != nil && st.Length > 0:
					return fmt.Errorf("%s is not a zero-length file", p)
				case st != nil:
					continue
				}
				w, err := s.c.Create(s.ctx, p.String(), client.CreateOptions{})
				if err != nil {
					return err
				}
				if err := w.Close(); err != nil {
					return err
				}
			}
			return nil
		}),
	}
}

// errTestFalse ends `fs test` with exit code 1 and nothing on stderr.
var errTestFalse = &cliError{}

func newFSTestCmd(o *cliOptions) *cobra.Command {
	var exists, dir, file, nonEmpty, zero bool
	cmd := &cobra.Command{
		Use: "test -e|-d|-f|-s|-z PATH",
		Short: "Exit 0 if PATH exists (-e), is a directory (-d), a file (-f), is not empty (-s) or has length 0 (-z), " +
			"else 1, printing nothing (hdfs dfs -test)",
		Args: exactArgs(1),
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		n := 0
		for _, b := range []bool{exists, dir, file, nonEmpty, zero} {
			if b {
				n++
			}
		}
		if n != 1 {
			return usagef("test: give one of -e, -d, -f, -s, -z (usage: %s)", cmd.UseLine())
		}
		holds := false
		err := o.action(func(s *session, args []string) error {
			st, err := s.c.StatPath(s.ctx, args[0])
			if errors.Is(err, client.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			holds = exists || dir && st.IsDirectory || file && !st.IsDirectory || nonEmpty && st.Length > 0 || zero && st.Length == 0
			return nil
		})(cmd, args)
		if err == nil && !holds {
			return errTestFalse
		}
		return err
	}
	f := cmd.Flags()
	f.BoolVarP(&exists, "exists", "e", false, "PATH exists")
	f.BoolVarP(&dir, "directory", "d", false, "PATH is a directory")
	f.BoolVarP(&file, "file", "f", false, "PATH is a file")
	f.BoolVarP(&nonEmpty, "nonempty", "s", false, "PATH's length is not 0 (a directory's is)")
	f.BoolVarP(&zero, "zero", "z", false, "PATH's length is 0 (a directory's is)")
	return cmd
}

// ---- head, tail ----------------------------------------------------------------

// headTailBytes is what head and tail print: hdfs's 1 KiB.
const headTailBytes = 1024

func newFSHeadCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "head PATH",
		Short: "Write a file's first KiB to stdout (hdfs dfs -head)",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			return writeRange(s, args[0], func(size int64) int64 { return 0 })
		}),
	}
}

func newFSTailCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "tail PATH",
		Short: "Write a file's last KiB to stdout (hdfs dfs -tail; -f, following a file, is not offered)",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			return writeRange(s, args[0], func(size int64) int64 { return max(size-headTailBytes, 0) })
		}),
	}
}

// writeRange writes up to headTailBytes of a file, from the offset start
// gives for its size, to stdout.
func writeRange(s *session, path string, start func(size int64) int64) error {
	p, err := client.ParsePath(path, true)
	if err != nil {
		return err
	}
	r, err := openFile(s, p)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	off := start(r.Size())
	buf := make([]byte, min(headTailBytes, r.Size()-off))
	if _, err := r.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	_, err = s.out.Write(buf)
	return err
}
