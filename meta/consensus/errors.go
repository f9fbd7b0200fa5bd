package consensus

import (
	"errors"
	"fmt"
)

var (
	// ErrNotLeader classifies errors returned by a node that is not the leader:
	// the operation was not performed, retry it against the leader
	// (see NotLeaderError for its address).
	ErrNotLeader = errors.New("consensus: not the leader")
	// ErrProposalDropped means the command was not and will never be applied
	// (leadership changed before it committed, or raft refused it): retrying
	// is safe.
	ErrProposalDropped = errors.New("consensus: proposal dropped")
	// ErrResultUnknown means the command may or may not have been applied:
	// this node replaced its state with a snapshot before learning the
	// outcome. Commands should be idempotent or checked before a retry.
	ErrResultUnknown = errors.New("consensus: proposal outcome unknown")
	// ErrClosed is returned by a closed node.
	ErrClosed = errors.New("consensus: node closed")
	// ErrInvalidOptions classifies Options.Validate failures.
	ErrInvalidOptions = errors.New("consensus: invalid options")
	// ErrStorage classifies a failure of the node's disk or DB (e.g. a
	// failed fsync): the node stops, since what it acknowledged next could
	// not be trusted to be durable.
	ErrStorage = errors.New("consensus: storage failure")
	// ErrCorrupt classifies on-disk state that cannot be decoded or is
	// inconsistent.
	ErrCorrupt = errors.New("consensus: corruption")
	// ErrChangeInProgress is returned for a membership change (or leadership
	// transfer) asked for while another one is not finished: retry once it
	// is.
	ErrChangeInProgress = errors.New("consensus: a membership change is in progress")
	// ErrInvalidMember classifies a membership change that does not fit the
	// group (adding a member twice, removing a non-member or the last voter).
	ErrInvalidMember = errors.New("consensus: invalid membership change")
	// ErrTransferFailed means leadership did not move to the node asked for.
	ErrTransferFailed = errors.New("consensus: leadership transfer failed")
	// ErrReadTimeout means a follower's read point (Node.FollowerRead) was
	// not granted by the leader and applied here within
	// Options.FollowerReadTimeout: the follower is cut off from the leader
	// or far behind it. The read was not served; the error also wraps a
	// *NotLeaderError naming the leader, where to send it instead.
	ErrReadTimeout = errors.New("consensus: follower read timed out")
	// ErrRemoved means this node was removed from its group: it stopped, and
	// its directory cannot serve again (a replica that comes back starts
	// from an empty directory and joins). errors.Is(err, ErrClosed) holds
	// for the errors of a removed node's calls.
	ErrRemoved = errors.New("consensus: node removed from the group")
)

// NotLeaderError is returned by Propose and ReadBarrier on a node that is not
// the leader. LeaderID is 0 and LeaderAddr empty when no leader is known.
// errors.Is(err, ErrNotLeader) holds.
type NotLeaderError struct {
	LeaderID   uint64
	LeaderAddr string
}

func (e *NotLeaderError) Error() string {
	if e.LeaderID == 0 {
		return "consensus: not the leader (leader unknown)"
	}
	return fmt.Sprintf("consensus: not the leader (leader is %d at %s)", e.LeaderID, e.LeaderAddr)
}

// Is makes errors.Is(err, ErrNotLeader) true.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }

// Retryable reports whether err means the operation was certainly not
// performed and may be sent again (to the leader named by a NotLeaderError,
// if any).
func Retryable(err error) bool {
	return errors.Is(err, ErrNotLeader) || errors.Is(err, ErrProposalDropped)
}
