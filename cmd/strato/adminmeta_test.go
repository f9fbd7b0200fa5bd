package main

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/meta/consensus"
)

// TestAdminMetaMembership drives the meta group's membership through the
// CLI and the Cluster RPCs: a replica started with Join is added (learner,
// then voter), a second change is refused while an addition waits for its
// learner, leadership moves, the first replica is removed and stops, and
// bad requests get one clear line and the CLI's exit codes.
func TestAdminMetaMembership(t *testing.T) {
	c := metaCluster(t)
	i, err := c.StartNewMeta() // replica 2, waiting to be added
	require.NoError(t, err)
	m1, m2 := c.MetaServer(0), c.MetaServer(i)
	addr1, addr2 := c.MetaAddrs()[0], c.MetaAddrs()[i]
	h := &cliHarness{t: t, addr: addr1 + "," + addr2}

	out := h.ok("admin", "meta", "add", "2", addr2)
	require.Contains(t, out, "Leader: 1\n")
	require.Regexp(t, `\n2 +`+addr2+` +voter `, out)
	require.Eventually(t, func() bool { return len(m2.Node().Status().Voters) == 2 }, 5*time.Second, 10*time.Millisecond,
		"the new replica applies its own promotion")
	// Adding it again is a no-op; at another address it is refused.
	h.ok("admin", "meta", "add", "2", addr2)
	require.Contains(t, h.fail(1, "admin", "meta", "add", "2", "127.0.0.1:1"), "2 is already a member")

	// Replica 3 is never started: its addition waits (until --timeout) for
	// it to catch up, and meanwhile any other change is refused.
	lis3, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr3 := lis3.Addr().String()
	require.NoError(t, lis3.Close())
	adding := make(chan result, 1)
	go func() { adding <- h.run("admin", "meta", "add", "3", addr3, "--timeout", "3s") }()
	require.Eventually(t, func() bool { return len(m1.Node().Status().Learners) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Contains(t, h.fail(1, "admin", "meta", "transfer-leader", "2"), "a membership change is in progress (adding 3 at "+addr3)
	r := <-adding
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "timed out after 3s")
	status := h.ok("admin", "meta", "status")
	require.Regexp(t, `\n3 +`+addr3+` +learner `, status)
	// The server ends the addition when its deadline passes, up to a tick
	// after the CLI gave up; until then a change is "in progress".
	var removed result
	require.Eventually(t, func() bool {
		removed = h.run("admin", "meta", "remove", "3")
		return !strings.Contains(removed.stderr, "a membership change is in progress")
	}, 5*time.Second, 50*time.Millisecond)
	require.Equal(t, 0, removed.code, removed.stderr)

	// Leadership moves to 2, then 1 is removed (the CLI reaches 1 first and
	// follows its hint to the leader); 1 stops by itself.
	require.Contains(t, h.ok("admin", "meta", "transfer-leader", "2"), "Leader: 2\n")
	require.True(t, m2.Node().IsLeader())
	out = h.ok("admin", "meta", "remove", "1")
	require.NotContains(t, out, addr1)
	select {
	case <-m1.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the removed replica did not stop")
	}
	require.ErrorIs(t, m1.Err(), consensus.ErrRemoved)
	st := h.ok("admin", "meta", "status")
	require.Regexp(t, `\n2 +`+addr2+` +voter `, st)
	require.Equal(t, 1, strings.Count(st, "voter"), st)

	// Bad requests.
	require.Contains(t, h.fail(1, "admin", "meta", "remove", "9"), "9 is not a member")
	require.Contains(t, h.fail(1, "admin", "meta", "remove", "2"), "2 is the last voter")
	require.Contains(t, h.fail(1, "admin", "meta", "add", "1", addr1), "1 was removed from the group")
	require.Contains(t, h.fail(2, "admin", "meta", "add", "x", addr1), `"x" is not a meta replica ID`)
	h.fail(2, "admin", "meta", "transfer-leader")
}
