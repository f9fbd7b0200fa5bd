package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/meta/backup"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// newMetaBackupCmd is `strato admin meta backup DIR`.
func newMetaBackupCmd(o *cliOptions) *cobra.Command {
	var (
		quiet bool
		rate  string
	)
	cmd := &cobra.Command{
		Use:   "backup DIR",
		Short: "Copy one meta replica's state into DIR (online: the replica goes on serving), for `strato meta --restore`",
		Long: "Ask the meta replica at the first --meta address (leader or follower) for a consistent copy of its state at\n" +
			"one applied Raft index, and write it into DIR (new, or empty): state.kv, the pairs, and manifest.json, what they\n" +
			"are (cluster ID, applied index and term, members, replica, time, version). Progress goes to standard error.\n" +
			"See docs/operations.md, Backup and restore.",
		Args: exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			var bps int64
			if rate != "" {
				var err error
				if bps, err = bytesize.Parse(rate); err != nil || bps < 0 {
					return usagef("--rate %q: a size per second, e.g. 50MiB", rate)
				}
			}
			m, err := metaBackup(s, s.addrs[0], args[0], uint64(bps), quiet)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, m)
			}
			return printFields(s.out, []field{
				{"Backup", args[0]},
				{"Cluster", m.ClusterID},
				{"Replica", fmt.Sprintf("%d (%s)", m.ReplicaID, m.ReplicaAddr)},
				{"Applied index", fmt.Sprintf("%d (term %d)", m.AppliedIndex, m.AppliedTerm)},
				{"Pairs", fmt.Sprintf("%d (%s)", m.Pairs, bytesize.Format(int64(m.Bytes)))},
				{"Taken at", m.Created.Format(time.RFC3339)},
			})
		}),
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress on standard error")
	cmd.Flags().StringVar(&rate, "rate", "", "cap on the backup's rate, e.g. 50MiB (a second's worth of keys and values), to bound its cost to the replica (default: none)")
	return cmd
}

// metaBackup streams a backup from the replica at addr into dir.
func metaBackup(s *session, addr, dir string, bps uint64, quiet bool) (backup.Manifest, error) {
	ctx := s.ctx
	if s.token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+s.token)
	}
	creds := insecure.NewCredentials()
	if s.tls != nil {
		creds = credentials.NewTLS(s.tls)
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return backup.Manifest{}, err
	}
	defer func() { _ = cc.Close() }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := stratov1.NewAdminServiceClient(cc).BackupMeta(ctx, &stratov1.BackupMetaRequest{BytesPerSecond: bps})
	if err != nil {
		return backup.Manifest{}, err
	}
	first, err := stream.Recv()
	if err != nil {
		return backup.Manifest{}, err
	}
	s.transferStarted()
	pm := first.GetManifest()
	if pm == nil {
		return backup.Manifest{}, errors.New("the replica's backup stream has no manifest")
	}
	w, err := backup.Create(vfs.Default, dir)
	if err != nil {
		return backup.Manifest{}, err
	}
	ok := false
	defer func() {
		if !ok {
			w.Abort()
		}
	}()
	m := backup.Manifest{ClusterID: pm.GetClusterId(), AppliedIndex: pm.GetAppliedIndex(), AppliedTerm: pm.GetAppliedTerm(),
		GroupID: pm.GetGroupId(), ReplicaID: pm.GetReplicaId(), ReplicaAddr: addr,
		Created: time.UnixMilli(pm.GetCreatedUnixMs()).UTC(), Version: version}
	for _, mem := range pm.GetMembers() {
		m.Members = append(m.Members, backup.Member{ID: mem.GetId(), Addr: mem.GetAddr(), Role: mem.GetRole()})
	}
	progress := s.cmd.ErrOrStderr()
	if quiet {
		progress = io.Discard
	}
	start := time.Now()
	last := start
	for c := first; ; {
		for i, k := range c.GetKeys() {
			if i >= len(c.GetValues()) {
				return m, errors.New("the replica's backup stream has a key without a value")
			}
			if err := w.Add(k, c.GetValues()[i]); err != nil {
				return m, err
			}
		}
		if now := time.Now(); now.Sub(last) >= time.Second {
			last = now
			_, _ = fmt.Fprintf(progress, "backup: %d pairs, %s, %s\n", w.Pairs(), bytesize.Format(int64(w.Bytes())),
				now.Sub(start).Round(time.Second))
		}
		if c.GetLast() {
			if c.GetTotalPairs() != w.Pairs() || c.GetTotalBytes() != w.Bytes() {
				return m, fmt.Errorf("the replica sent %d pairs (%d bytes) and received were %d (%d)",
					c.GetTotalPairs(), c.GetTotalBytes(), w.Pairs(), w.Bytes())
			}
			break
		}
		if c, err = stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return m, errors.New("the replica's backup stream ended early")
			}
			return m, err
		}
	}
	if m, err = w.Finish(m); err != nil {
		return m, err
	}
	ok = true
	if !quiet && time.Since(start) >= time.Second {
		_, _ = fmt.Fprintf(progress, "backup: done, %d pairs, %s in %s\n", w.Pairs(), bytesize.Format(int64(w.Bytes())),
			time.Since(start).Round(time.Millisecond))
	}
	return m, nil
}
