package main

// strato fs chmod, chown and touch: permissions, owners, groups and times,
// as hdfs dfs -chmod, -chown and -touch set them. Meta stores permissions
// and enforces none.

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// permission is a status's permission, or, from a meta that predates
// permissions, the default it would report.
func permission(st *stratov1.FileStatus) uint32 {
	switch {
	case st.Permission != nil:
		return st.GetPermission()
	case st.IsDirectory:
		return 0o755
	}
	return 0o644
}

// modeString is ls -l's "drwxr-xr-x": the type, then rwx for owner, group
// and others, with setuid and setgid as s/S and the sticky bit as t/T.
func modeString(st *stratov1.FileStatus) string {
	p := permission(st)
	b := []byte("-rwxrwxrwx")
	if st.IsDirectory {
		b[0] = 'd'
	}
	for i := 0; i < 9; i++ {
		if p&(1<<(8-i)) == 0 {
			b[i+1] = '-'
		}
	}
	special := func(i int, bit uint32, set, setNoExec byte) {
		if p&bit != 0 {
			if b[i] == 'x' {
				b[i] = set
			} else {
				b[i] = setNoExec
			}
		}
	}
	special(3, 0o4000, 's', 'S')
	special(6, 0o2000, 's', 'S')
	special(9, 0o1000, 't', 'T')
	return string(b)
}

// parseMode applies MODE to perm: octal (755, 1777), or symbolic as chmod
// takes it ([ugoa]*[+-=][rwxXst]*, comma-separated: u+x,go-w).
func parseMode(mode string, perm uint32, isDir bool) (uint32, error) {
	if n, err := strconv.ParseUint(mode, 8, 32); err == nil {
		if n > 0o7777 {
			return 0, usagef("mode %s: at most 7777", mode)
		}
		return uint32(n), nil
	}
	for _, clause := range strings.Split(mode, ",") {
		i := strings.IndexAny(clause, "+-=")
		if i < 0 {
			return 0, usagef("mode %q: neither octal nor [ugoa][+-=][rwxXst]", mode)
		}
		var who uint32
		for _, c := range clause[:i] {
			switch c {
			case 'u':
				who |= 0o4700
			case 'g':
				who |= 0o2070
			case 'o':
				who |= 0o1007
			case 'a':
				who |= 0o7777
			default:
				return 0, usagef("mode %q: who %q is not u, g, o or a", mode, c)
			}
		}
		if who == 0 {
			who = 0o7777
		}
		var what uint32
		for _, c := range clause[i+1:] {
			switch c {
			case 'r':
				what |= 0o444
			case 'w':
				what |= 0o222
			case 'x':
				what |= 0o111
			case 'X':
				if isDir || perm&0o111 != 0 {
					what |= 0o111
				}
			case 's':
				what |= 0o6000
			case 't':
				what |= 0o1000
			default:
				return 0, usagef("mode %q: permission %q is not r, w, x, X, s or t", mode, c)
			}
		}
		bits := who & what
		switch clause[i] {
		case '+':
			perm |= bits
		case '-':
			perm &^= bits
		case '=':
			perm = perm&^who | bits
		}
	}
	return perm, nil
}

// eachPath runs fn on path and, with recursive, on everything under it.
func eachPath(s *session, path string, recursive bool, fn func(st *stratov1.FileStatus) error) error {
	st, err := s.c.StatPath(s.ctx, path)
	if err != nil {
		return err
	}
	if err := fn(st); err != nil {
		return err
	}
	if !recursive || !st.IsDirectory {
		return nil
	}
	entries, err := s.c.ListPath(s.ctx, st.Path)
	if err != nil {
		return err
	}
	all, err := listRecursive(s, entries)
	if err != nil {
		return err
	}
	for _, e := range all {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// inBucket refuses what has no permission of its own: "/" and volumes.
func inBucket(path string) error {
	p, err := client.ParseRootedPath(path)
	if err != nil {
		return err
	}
	if p.Bucket == "" {
		return usagef("%s is not in a bucket (volumes and / have no permissions of their own)", p)
	}
	return nil
}

func newFSChmodCmd(o *cliOptions) *cobra.Command {
	var recursive bool
	cmd := &cobra.Command{
		Use:   "chmod [-R] MODE PATH",
		Short: "Set the permission of a file, a directory or a bucket's root (octal, or symbolic as u+x,go-w)",
		Long: `Set the permission of a file, a directory or a bucket's root (/VOLUME/BUCKET),
as hdfs dfs -chmod: MODE is octal (755, 1777) or symbolic ([ugoa][+-=][rwxXst],
comma-separated). Meta stores permissions and enforces none.`,
		Args: exactArgs(2),
		RunE: o.action(func(s *session, args []string) error {
			if err := inBucket(args[1]); err != nil {
				return err
			}
			return eachPath(s, args[1], recursive, func(st *stratov1.FileStatus) error {
				perm, err := parseMode(args[0], permission(st), st.IsDirectory)
				if err != nil {
					return err
				}
				return s.c.SetPermission(s.ctx, st.Path, perm)
			})
		}),
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "also everything under a directory")
	return cmd
}

func newFSChownCmd(o *cliOptions) *cobra.Command {
	var recursive bool
	cmd := &cobra.Command{
		Use:   "chown [-R] [OWNER][:GROUP] PATH",
		Short: "Set the owner and/or group of a file, a directory or a bucket's root",
		Args:  exactArgs(2),
		RunE: o.action(func(s *session, args []string) error {
			owner, group, _ := strings.Cut(args[0], ":")
			if owner == "" && group == "" {
				return usagef("chown %q: give an owner, :group, or owner:group", args[0])
			}
			if err := inBucket(args[1]); err != nil {
				return err
			}
			return eachPath(s, args[1], recursive, func(st *stratov1.FileStatus) error {
				return s.c.SetOwner(s.ctx, st.Path, owner, group)
			})
		}),
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "also everything under a directory")
	return cmd
}

func newFSTouchCmd(o *cliOptions) *cobra.Command {
	var access, modification, noCreate bool
	var at string
	cmd := &cobra.Command{
		Use:   "touch [-a] [-m] [-c] [-t TIME] PATH",
		Short: "Set the times of a file, a directory or a bucket's root to now or TIME; a missing PATH becomes an empty file",
		Long: `Set the modification and access times of a file, a directory or a bucket's
root (/VOLUME/BUCKET), as hdfs dfs -touch: to now, or to TIME (RFC 3339:
2026-01-02T15:04:05Z). -a sets only the access time, -m only the
modification time. A missing PATH becomes an empty file, unless -c.`,
		Args: exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			t := time.Now()
			if at != "" {
				var err error
				if t, err = time.Parse(time.RFC3339, at); err != nil {
					return usagef("-t %q: not an RFC 3339 time (2026-01-02T15:04:05Z)", at)
				}
			}
			// -1 leaves a time as it is (Hadoop's setTimes); neither flag,
			// or both, sets both.
			mtime, atime := t.UnixMilli(), t.UnixMilli()
			if access && !modification {
				mtime = -1
			}
			if modification && !access {
				atime = -1
			}
			if err := inBucket(args[0]); err != nil {
				return err
			}
			st, err := s.c.StatPath(s.ctx, args[0])
			switch {
			case errors.Is(err, client.ErrNotFound) && noCreate:
				return nil
			case errors.Is(err, client.ErrNotFound):
				w, err := s.c.Create(s.ctx, args[0], client.CreateOptions{})
				if err != nil {
					return err
				}
				if err := w.Close(); err != nil {
					return err
				}
				return s.c.SetTimes(s.ctx, args[0], mtime, atime)
			case err != nil:
				return err
			}
			return s.c.SetTimes(s.ctx, st.Path, mtime, atime)
		}),
	}
	cmd.Flags().BoolVarP(&access, "access", "a", false, "set only the access time")
	cmd.Flags().BoolVarP(&modification, "modification", "m", false, "set only the modification time")
	cmd.Flags().BoolVarP(&noCreate, "no-create", "c", false, "do not create a missing file")
	cmd.Flags().StringVarP(&at, "time", "t", "", "the time to set (RFC 3339) instead of now")
	return cmd
}
