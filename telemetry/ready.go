package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/meta"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// MetaReady is a meta replica's readiness (/readyz): its consensus node
// runs and knows a leader, and, on the leader, safe mode is over. A
// follower is ready once it knows a leader: the group's safe mode is the
// leader's to leave, and the follower sends callers there.
func MetaReady(srv *meta.Server) func() error {
	return func() error {
		select {
		case <-srv.Done():
			return fmt.Errorf("the replica stopped: %w", srv.Err())
		default:
		}
		st := srv.Node().Status()
		if st.LeaderID == 0 {
			return errors.New("no meta leader known")
		}
		if st.LeaderID != st.ID {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		sm, err := srv.GetSafeMode(ctx, &stratov1.GetSafeModeRequest{})
		if err != nil {
			return err
		}
		if sm.InSafeMode {
			return fmt.Errorf("in safe mode: %d of %d datanodes healthy, %.1f%% of %.1f%% of closed containers reported",
				sm.HealthyDatanodes, sm.RequiredDatanodes, 100*sm.ReplicaFraction, 100*sm.RequiredFraction)
		}
		return nil
	}
}

// DatanodeReady is a datanode's readiness (/readyz): registered with
// meta's leader.
func DatanodeReady(dn *datanode.Datanode) func() error {
	return func() error {
		if !dn.Registered() {
			return errors.New("not registered with meta")
		}
		return nil
	}
}

// OpenAuditLog opens the audit log's destination: "-" is stderr, anything
// else a file appended to (created with mode 0600).
func OpenAuditLog(path string) (io.WriteCloser, error) {
	if path == "-" {
		return nopCloser{os.Stderr}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("telemetry: audit log: %w", err)
	}
	return f, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
