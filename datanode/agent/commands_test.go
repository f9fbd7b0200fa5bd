package agent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// slowStore is a store whose container closes wait for release (a disk
// stalled in fsync: the fault injected) and whose block deletions fail for
// container 13.
type slowStore struct {
	closing chan uint64
	release chan struct{}
	deleted chan uint64
}

func (s *slowStore) Replicas() []*stratov1.ContainerReplica { return nil }
func (s *slowStore) NodeStats() *stratov1.NodeStats         { return &stratov1.NodeStats{} }
func (s *slowStore) DeleteContainer(uint64, bool) error     { return nil }
func (s *slowStore) PlaceReplica(uint64, int, int) error    { return nil }
func (s *slowStore) CloseContainer(id uint64) error {
	s.closing <- id
	<-s.release
	return nil
}
func (s *slowStore) DeleteBlocks(id uint64, localIDs []uint64) (int, int64, error) {
	s.deleted <- id
	if id == 13 {
		return 0, 0, errors.New("disk error")
	}
	return len(localIDs), 0, nil
}

// TestCommandsApartFromHeartbeats: a reply's commands run on the command
// runner, so a close stuck in the disk does not hold up the heartbeat loop
// (queue returns at once), and a deleted-blocks seq is acknowledged only
// when every command of its reply has run, and succeeded.
func TestCommandsApartFromHeartbeats(t *testing.T) {
	st := &slowStore{closing: make(chan uint64, 4), release: make(chan struct{}), deleted: make(chan uint64, 8)}
	a := &Agent{opts: Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, store: st,
		changed: map[uint64]bool{}, cmdWake: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.runCommands(ctx) }()
	defer func() { cancel(); <-done }()

	del := func(seq, container uint64) *stratov1.DatanodeCommand {
		return &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_DeleteBlocks{
			DeleteBlocks: &stratov1.DeleteBlocksCommand{Seq: seq, ContainerId: container, LocalIds: []uint64{1, 2}}}}
	}
	closeCmd := &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_CloseContainer{
		CloseContainer: &stratov1.CloseContainerCommand{ContainerId: 2}}}

	a.queue([]*stratov1.DatanodeCommand{del(9, 1), closeCmd, del(9, 3)})
	a.queue([]*stratov1.DatanodeCommand{del(10, 13), del(11, 4)})
	require.Equal(t, uint64(1), <-st.deleted)
	require.Equal(t, uint64(2), <-st.closing)
	// Seq 9's first deletion is done, the reply is not: nothing to acknowledge.
	require.Empty(t, a.deleteAcks.take())
	a.mu.Lock()
	require.True(t, a.changed[1], "container 1's deletion goes to meta with the next report")
	a.mu.Unlock()

	close(st.release)
	require.Equal(t, uint64(3), <-st.deleted)
	require.Equal(t, uint64(13), <-st.deleted)
	require.Equal(t, uint64(4), <-st.deleted)
	var acked []uint64
	require.Eventually(t, func() bool {
		acked = append(acked, a.deleteAcks.take()...)
		return len(acked) >= 2
	}, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, []uint64{9, 11}, acked, "seq 10 failed: not acknowledged")
}
