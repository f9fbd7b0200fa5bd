package namespace

import (
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Deferred creates. Most files created empty and closed at once (markers,
// _SUCCESS files, NNThroughputBenchmark's creates) hold no block while
// open, so an open-key record in the replicated state would only be
// written and deleted again one Raft entry later. For a deferrable open
// with no size hint, the leader checks the create against its state and
// answers with a create token (the prepared OpenKeyCommand) instead of an
// open key; CommitKey with the token opens and commits the key in one
// entry, and Apply checks everything again then. A writer with data opens
// again with a size hint.
//
// Deferred writes. A small key written whole (an S3 PUT of a few KiB) is
// the same: its open key lives for one round trip to the datanodes. A
// deferrable open with a size hint whose command the leader marked with a
// write nonce is answered with a token that carries its one allocated
// block; the commit with that token opens and commits in one entry. A token
// with blocks would let a forger commit blocks it was never given, so the
// leader takes each such token once, from the ones it handed out (meta's
// deferredWrites), before it proposes the commit; Apply trusts what the
// leader proposed.

// DeferOpen decides whether the prepared open c (no blocks) can be
// deferred, and checks it against view as OpenKey's apply would: the parent
// directory exists, the name is not a directory, and, without overwrite,
// no file has it. It returns the reply with the create token, or nil when
// the open must be proposed (it creates parent directories, or allocates
// blocks). Refusals are as advisory as Prepare's: the caller confirms them
// after a read barrier.
//
// With a write nonce (a deferred write), c must hold exactly one block of a
// replicated key: an erasure coded key or an append is opened for real.
func (ns *Namespace) DeferOpen(view pebble.Reader, c *stratov1.OpenKeyCommand) (*stratov1.OpenKeyResponse, error) {
	write := len(c.GetWriteNonce()) > 0
	switch {
	case c.GetAppend():
		return nil, nil
	case !write && (len(c.GetBlocks()) > 0 || c.GetSizeHint() > 0):
		return nil, nil
	case write && len(c.GetBlocks()) != 1:
		return nil, nil
	}
	if err := checkWritable(c.GetKey()); err != nil {
		return nil, err
	}
	rd := ns.Reader(view)
	bk, err := rd.bucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	if write {
		if _, e, err := keyRedundancy(c.GetReplication(), c.GetErasureCoding(), bk); err != nil || e != nil {
			return nil, err
		}
	}
	if isFSO(bk) {
		rs := rd.resolver()
		defer rd.release(rs)
		parent, name := splitLast(c.GetKey())
		pid, err := rs.dir(bk.Id, parent, 0, ErrParentNotFound)
		switch {
		case err == nil:
		case c.GetRecursive() || !c.GetCreateFile():
			// The open may create the parents (or fail on a file in
			// the way): its own apply decides.
			if errors.Is(err, ErrParentNotFound) || errors.Is(err, ErrNotADirectory) {
				return nil, nil
			}
			return nil, err
		default:
			return nil, err
		}
		if _, isDir, err := rs.lookupDir(pid, name); err != nil {
			return nil, err
		} else if isDir {
			return nil, fmt.Errorf("%w: %s", ErrIsADirectory, c.GetKey())
		}
		if c.GetCreateFile() && !c.GetOverwrite() {
			if isFile, err := rs.fileExists(pid, name); err != nil {
				return nil, err
			} else if isFile {
				return nil, fmt.Errorf("%w: %s", ErrFileExists, c.GetKey())
			}
		}
	}
	token, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	if err != nil {
		return nil, err
	}
	return &stratov1.OpenKeyResponse{CreateToken: token, Replication: c.GetReplication(), ErasureCoding: ErasureCoding(c.GetErasureCoding()),
		ChecksumType: bk.ChecksumType, BytesPerChecksum: bk.BytesPerChecksum, BlockSize: bk.BlockSize,
		Blocks: BlockLocations(c.GetBlocks())}, nil
}

// IsWriteToken reports whether a create token is a deferred write's (it
// has a write nonce), rather than a deferred create's or no token at all.
func IsWriteToken(token []byte) bool {
	oc := &stratov1.OpenKeyCommand{}
	return len(token) > 0 && proto.Unmarshal(token, oc) == nil && len(oc.GetWriteNonce()) > 0
}

// PrepareRefuseWriteToken is the refusal of the commit of request id, whose
// deferred write token the leader does not hold (RefuseWriteTokenCommand).
// The refusal goes through the log rather than being answered at once: an
// earlier attempt of the same request that took the token may still be on
// its way to the log, and only log order tells which of the two counts.
// Applied first, the refusal is recorded under id and that attempt changes
// nothing; applied after it, the refusal gives the attempt's reply.
func (ns *Namespace) PrepareRefuseWriteToken(now time.Time, id *stratov1.RequestID) *stratov1.NamespaceCommand {
	return &stratov1.NamespaceCommand{NowUnixMs: now.UnixMilli(), Request: id,
		Op: &stratov1.NamespaceCommand_RefuseWriteToken{RefuseWriteToken: &stratov1.RefuseWriteTokenCommand{}}}
}

// refuseWriteToken applies a RefuseWriteTokenCommand that no attempt of its
// request preceded (Apply answers the others from the request's record):
// its reply, recorded under the request, is the refusal.
func (a *applier) refuseWriteToken(cmd *stratov1.NamespaceCommand) (proto.Message, error) {
	if cmd.GetRequest().GetClient() == "" {
		return nil, fmt.Errorf("%w: a write token's refusal without a request ID", ErrInvalid)
	}
	return &stratov1.WriteTokenRefused{}, nil
}

// createToken decodes a create token and checks it against the commit that
// carries it: same key, no blocks, not hsync.
func createToken(c *stratov1.CommitKeyCommand) (*stratov1.OpenKeyCommand, error) {
	oc := &stratov1.OpenKeyCommand{}
	if err := proto.Unmarshal(c.GetCreateToken(), oc); err != nil {
		return nil, fmt.Errorf("%w: undecodable create token: %w", ErrInvalid, err)
	}
	switch {
	case c.GetOpenId() != 0:
		return nil, fmt.Errorf("%w: a commit has an open ID or a create token, not both", ErrInvalid)
	case c.GetHsync():
		return nil, fmt.Errorf("%w: hsync of a deferred create (open it with a size hint first)", ErrInvalid)
	case len(oc.GetWriteNonce()) == 0 && (len(c.GetBlocks()) > 0 || len(oc.GetBlocks()) > 0):
		return nil, fmt.Errorf("%w: a deferred create commits no block (open it with a size hint to write)", ErrInvalid)
	case len(oc.GetWriteNonce()) > 0 && (len(oc.GetBlocks()) != 1 || oc.GetAppend()):
		return nil, fmt.Errorf("%w: a deferred write's token holds one block", ErrInvalid)
	case oc.GetVolume() != c.GetVolume() || oc.GetBucket() != c.GetBucket():
		return nil, fmt.Errorf("%w: create token for %s/%s, commit in %s/%s", ErrInvalid,
			oc.GetVolume(), oc.GetBucket(), c.GetVolume(), c.GetBucket())
	}
	return oc, nil
}
