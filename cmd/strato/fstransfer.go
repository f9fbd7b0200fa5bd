package main

// strato fs put, get and cp: one file or many, directories recursively, as
// hdfs dfs -put, -get and -cp copy them, with a progress bar on a
// terminal (progress.go).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// transfer is one put, get or cp command's settings.
type transfer struct {
	s         *session
	force     bool // replace existing files
	recursive bool // cp: copy directories
	quiet     bool // no progress bar
}

// eachSource runs fn on each source of SRC... DST with where it goes:
// into DST when it is an existing directory (intoDir), or when there are
// several (many), which needs one; else to DST itself.
func (t *transfer) eachSource(args []string, fn func(src string, to client.Path, many, intoDir bool) error) error {
	srcs, dstArg := args[:len(args)-1], args[len(args)-1]
	dst, err := client.ParsePath(dstArg, true)
	if err != nil {
		return err
	}
	dstStatus, err := statIfAny(t.s, dst)
	if err != nil {
		return err
	}
	many, intoDir := len(srcs) > 1, dstStatus != nil && dstStatus.IsDirectory
	for _, src := range srcs {
		to := dst
		switch {
		case intoDir:
			to.Key = strings.Trim(dst.Key+"/"+keyBase(src), "/")
		case many && dstStatus == nil:
			return fmt.Errorf("%s: no such directory (several sources go into a directory)", dst)
		case many:
			return fmt.Errorf("%s is not a directory (several sources go into a directory)", dst)
		}
		if err := fn(src, to, many, intoDir); err != nil {
			return err
		}
	}
	return nil
}

// statIfAny returns a path's status, nil when it does not exist.
func statIfAny(s *session, p client.Path) (*stratov1.FileStatus, error) {
	st, err := s.c.Stat(s.ctx, p.String())
	if errors.Is(err, client.ErrNotFound) {
		return nil, nil
	}
	return st, err
}

// ---- put -----------------------------------------------------------------------

func newFSPutCmd(o *cliOptions) *cobra.Command {
	t := &transfer{}
	cmd := &cobra.Command{
		Use:   "put [-f] [--quiet] LOCAL... PATH",
		Short: "Copy local files (- for stdin) and directories (recursively) to PATH, or into PATH when it is a directory",
		Args:  argsBetween(2, 1<<30),
		RunE: o.action(func(s *session, args []string) error {
			t.s = s
			return t.eachSource(args, func(src string, to client.Path, many, intoDir bool) error {
				switch {
				case src == "-" && many:
					return usagef("- (stdin) cannot be one of several sources")
				case src == "-" && intoDir:
					return usagef("%s is a directory: name the file to write from stdin", args[len(args)-1])
				}
				return t.put(src, to)
			})
		}),
	}
	cmd.Flags().BoolVarP(&t.force, "force", "f", false, "replace existing files")
	addQuietFlag(cmd, &t.quiet)
	return cmd
}

// put copies a local file or directory to p.
func (t *transfer) put(local string, p client.Path) error {
	if st, err := os.Stat(local); local != "-" && err == nil && st.IsDir() {
		return t.putDir(local, p)
	}
	src, size, closeSrc, err := openLocal(t.s, local)
	if err != nil {
		return err
	}
	defer closeSrc()
	w, err := t.s.c.Create(t.s.ctx, p.String(), client.CreateOptions{Overwrite: t.force, WriteOptions: client.WriteOptions{SizeHint: size}})
	if err != nil {
		return err
	}
	if local == "-" {
		size = -1
	}
	bar := newProgress(t.s, t.quiet, keyBase(local), size)
	err = upload(t.s, w, bar.reader(src))
	bar.finish(err == nil)
	return err
}

// putDir copies a local directory's tree to the directory p, made if
// missing.
func (t *transfer) putDir(local string, p client.Path) error {
	if p.Key != "" {
		if err := t.s.c.Mkdirs(t.s.ctx, p.String()); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(local)
	if err != nil {
		return err
	}
	for _, e := range entries {
		child := p
		child.Key = strings.Trim(p.Key+"/"+e.Name(), "/")
		if err := t.put(filepath.Join(local, e.Name()), child); err != nil {
			return err
		}
	}
	return nil
}

// ---- get -----------------------------------------------------------------------

func newFSGetCmd(o *cliOptions) *cobra.Command {
	t := &transfer{}
	cmd := &cobra.Command{
		Use:   "get [-f] [--quiet] PATH... LOCAL|-",
		Short: "Copy files and directories (recursively) to LOCAL, into it when it is a directory, or a file to stdout (-)",
		Args:  argsBetween(2, 1<<30),
		RunE: o.action(func(s *session, args []string) error {
			t.s = s
			srcs, local := args[:len(args)-1], args[len(args)-1]
			isDir := false
			if st, err := os.Stat(local); err == nil && st.IsDir() {
				isDir = true
			}
			if len(srcs) > 1 && !isDir {
				return fmt.Errorf("%s: no such local directory (several sources go into a directory)", local)
			}
			for _, src := range srcs {
				p, err := client.ParsePath(src, true)
				if err != nil {
					return err
				}
				st, err := s.c.Stat(s.ctx, p.String())
				if err != nil {
					return err
				}
				if st.IsDirectory && local == "-" {
					return errors.New(p.String() + " is a directory: it cannot go to stdout")
				}
				to := local
				if isDir {
					to = filepath.Join(local, keyBase(p.Key))
					if p.Key == "" {
						to = filepath.Join(local, p.Bucket)
					}
				}
				if err := t.get(p, st, to); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&t.force, "force", "f", false, "replace existing local files")
	addQuietFlag(cmd, &t.quiet)
	return cmd
}

// get copies the file or directory p (of status st) to the local path to.
func (t *transfer) get(p client.Path, st *stratov1.FileStatus, to string) error {
	if !st.IsDirectory {
		dst, err := localTarget(to, "", t.force)
		if err != nil {
			return err
		}
		r, err := t.s.c.Open(t.s.ctx, p.String())
		if err != nil {
			return err
		}
		defer func() { _ = r.Close() }()
		t.s.transferStarted()
		bar := newProgress(t.s, t.quiet, keyBase(p.Key), r.Size())
		if dst == "-" {
			_, err = io.Copy(bar.writer(t.s.out), r)
		} else {
			err = saveLocal(dst, func(w io.Writer) error {
				_, err := io.Copy(bar.writer(w), r)
				return err
			})
		}
		bar.finish(err == nil)
		return err
	}
	if err := os.Mkdir(to, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if lst, err := os.Stat(to); err != nil || !lst.IsDir() {
		return fmt.Errorf("%s: local file exists and is not a directory", to)
	}
	children, err := t.s.c.List(t.s.ctx, p.String())
	if err != nil {
		return err
	}
	for _, c := range children {
		cp := p
		cp.Key = c.Path
		if err := t.get(cp, c, filepath.Join(to, keyBase(c.Path))); err != nil {
			return err
		}
	}
	return nil
}

// saveLocal writes a local file through fill under a temporary name beside
// dst and renames it into place when complete, so that a failure leaves
// nothing half-written.
func saveLocal(dst string, fill func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".strato-*")
	if err != nil {
		return err
	}
	err = fill(tmp)
	if err == nil {
		// CreateTemp's 0600 would outlive the rename; a downloaded file is
		// readable like any other the user creates.
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// ---- cp ------------------------------------------------------------------------

func newFSCpCmd(o *cliOptions) *cobra.Command {
	t := &transfer{}
	cmd := &cobra.Command{
		Use:   "cp [-f] [-r] [--quiet] SRC... DST",
		Short: "Copy files (directories with -r) to DST, or into DST when it is a directory, through this client",
		Args:  argsBetween(2, 1<<30),
		RunE: o.action(func(s *session, args []string) error {
			t.s = s
			return t.eachSource(args, func(src string, to client.Path, _, _ bool) error {
				from, err := client.ParsePath(src, true)
				if err != nil {
					return err
				}
				st, err := s.c.Stat(s.ctx, from.String())
				if err != nil {
					return err
				}
				return t.cp(from, st, to)
			})
		}),
	}
	cmd.Flags().BoolVarP(&t.force, "force", "f", false, "replace existing files")
	cmd.Flags().BoolVarP(&t.recursive, "recursive", "r", false, "copy directories and their contents")
	addQuietFlag(cmd, &t.quiet)
	return cmd
}

// cp copies the file or directory from (of status st) to to.
func (t *transfer) cp(from client.Path, st *stratov1.FileStatus, to client.Path) error {
	same := from.Volume == to.Volume && from.Bucket == to.Bucket
	switch {
	case same && from.Key == to.Key:
		return fmt.Errorf("%s and %s are the same file", from, to)
	case st.IsDirectory && !t.recursive:
		return fmt.Errorf("%s is a directory (use -r to copy it and its contents)", from)
	case st.IsDirectory && same && strings.HasPrefix(to.Key+"/", from.Key+"/"):
		return fmt.Errorf("cannot copy %s into itself (%s)", from, to)
	case st.IsDirectory:
		return t.cpDir(from, to)
	}
	r, err := t.s.c.Open(t.s.ctx, from.String())
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	w, err := t.s.c.Create(t.s.ctx, to.String(), client.CreateOptions{Overwrite: t.force, WriteOptions: client.WriteOptions{SizeHint: r.Size()}})
	if err != nil {
		return err
	}
	bar := newProgress(t.s, t.quiet, keyBase(from.Key), r.Size())
	err = upload(t.s, w, bar.reader(r))
	bar.finish(err == nil)
	return err
}

// cpDir copies a directory's tree to the directory to, made if missing.
func (t *transfer) cpDir(from, to client.Path) error {
	if to.Key != "" {
		if err := t.s.c.Mkdirs(t.s.ctx, to.String()); err != nil {
			return err
		}
	}
	children, err := t.s.c.List(t.s.ctx, from.String())
	if err != nil {
		return err
	}
	for _, c := range children {
		cf, ct := from, to
		cf.Key = c.Path
		ct.Key = strings.Trim(to.Key+"/"+keyBase(c.Path), "/")
		if err := t.cp(cf, c, ct); err != nil {
			return err
		}
	}
	return nil
}
