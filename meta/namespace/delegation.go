package namespace

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Delegation tokens (docs/decisions/0082-delegation-tokens.md) are token
// records ("N T <id>") with a DelegationRecord: the server (meta/delegation.go)
// makes the whole record, its identifier and its secret on the leader, and
// apply stores it like any token. Their sequence numbers come from one
// counter, "N g" → the last sequence number taken (8 bytes, big endian):
// apply refuses a record whose number is not above it, so that two
// leaders, or two issues racing on one, never hand out the same number.
// A renewal moves the expiry; a cancellation revokes the record; the
// leader purges the records of expired tokens.

const tagDelegationSeq = 'g'

var theDelegationSeqKey = []byte{prefix, tagDelegationSeq}

// DelegationTokenID is the token ID of the delegation token of a sequence
// number (never a user token's: those are 16 hex digits).
func DelegationTokenID(seq uint64) string { return fmt.Sprintf("dt%d", seq) }

// DelegationSequence is the last sequence number a delegation token took.
func (rd *Reader) DelegationSequence() (uint64, error) {
	return delegationSequence(rd.r)
}

func delegationSequence(r pebble.Reader) (uint64, error) {
	v, closer, err := r.Get(theDelegationSeqKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: delegation sequence of %d bytes", ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// prepareDelegation is the command of a delegation token's issue, renewal
// or purge, which the server prepared (meta/delegation.go), in cmd.
func prepareDelegation(cmd *stratov1.NamespaceCommand, req proto.Message) error {
	switch r := req.(type) {
	case *stratov1.TokenRecord:
		if r.GetDelegation() == nil {
			return fmt.Errorf("%w: a prepared token record must be a delegation token's", ErrInvalid)
		}
		cmd.Op = &stratov1.NamespaceCommand_IssueToken{IssueToken: r}
	case *stratov1.RenewTokenCommand:
		cmd.Op = &stratov1.NamespaceCommand_RenewToken{RenewToken: r}
	case *stratov1.PurgeTokensCommand:
		cmd.Op = &stratov1.NamespaceCommand_PurgeTokens{PurgeTokens: r}
	default:
		return fmt.Errorf("%w: %T is not a delegation token command", ErrInvalid, req)
	}
	return nil
}

// takeDelegationSequence checks rec's ID and sequence number against the
// counter and advances it.
func (a *applier) takeDelegationSequence(rec *stratov1.TokenRecord) error {
	seq := rec.Delegation.GetSequence()
	if rec.Id != DelegationTokenID(seq) {
		return fmt.Errorf("%w: delegation token %s has sequence number %d", ErrInvalid, rec.Id, seq)
	}
	last, err := delegationSequence(a.b)
	if err != nil {
		return err
	}
	if seq <= last {
		return fmt.Errorf("%w: delegation token sequence number %d (the last taken is %d)", ErrExists, seq, last)
	}
	return a.b.Set(theDelegationSeqKey, binary.BigEndian.AppendUint64(nil, seq), nil)
}

// renewToken moves a delegation token's expiry. Prepare checked the
// renewer and the max date; apply checks again what the record says.
func (a *applier) renewToken(c *stratov1.RenewTokenCommand) (proto.Message, error) {
	key := tokenKey(nil, c.GetId())
	rec := &stratov1.TokenRecord{}
	if ok, err := get(a.b, key, rec); err != nil {
		return nil, err
	} else if !ok || rec.Delegation == nil {
		return nil, fmt.Errorf("%w: delegation token %s", ErrTokenNotFound, c.GetId())
	}
	switch {
	case rec.RevokedUnixMs != 0:
		return nil, fmt.Errorf("%w: delegation token %s was cancelled", ErrPermissionDenied, c.GetId())
	case rec.ExpiresUnixMs <= a.now:
		return nil, fmt.Errorf("%w: delegation token %s expired", ErrPermissionDenied, c.GetId())
	case c.GetExpiresUnixMs() > rec.Delegation.GetMaxUnixMs() || c.GetExpiresUnixMs() <= a.now:
		return nil, fmt.Errorf("%w: delegation token %s renewed to %d, past its max date or before now", ErrInvalid, c.GetId(), c.GetExpiresUnixMs())
	}
	rec.ExpiresUnixMs = c.GetExpiresUnixMs()
	if err := put(a.b, key, rec); err != nil {
		return nil, err
	}
	return &stratov1.RenewDelegationTokenResponse{ExpiresUnixMs: rec.ExpiresUnixMs}, nil
}

// purgeTokens deletes the records of the delegation tokens named that have
// expired at the command's time.
func (a *applier) purgeTokens(c *stratov1.PurgeTokensCommand) (proto.Message, error) {
	for _, id := range c.GetIds() {
		key := tokenKey(nil, id)
		rec := &stratov1.TokenRecord{}
		if ok, err := get(a.b, key, rec); err != nil {
			return nil, err
		} else if !ok || rec.Delegation == nil || rec.ExpiresUnixMs > a.now {
			continue
		}
		if err := a.b.Delete(key, nil); err != nil {
			return nil, err
		}
	}
	return &stratov1.PurgeTokensCommand{}, nil
}

// DelegationToken is the API's view of a delegation token's record.
func DelegationToken(r *stratov1.TokenRecord) *stratov1.DelegationToken {
	d := r.GetDelegation()
	return &stratov1.DelegationToken{Id: r.GetId(), Owner: r.GetUser(), Renewer: d.GetRenewer(), RealUser: d.GetRealUser(),
		IssueUnixMs: r.GetCreatedUnixMs(), MaxUnixMs: d.GetMaxUnixMs(), ExpiresUnixMs: r.GetExpiresUnixMs(),
		Sequence: d.GetSequence(), CancelledUnixMs: r.GetRevokedUnixMs()}
}

// ListDelegationTokens lists delegation tokens in ID order.
func (rd *Reader) ListDelegationTokens(req *stratov1.ListDelegationTokensRequest) (*stratov1.ListDelegationTokensResponse, error) {
	limit := rd.limit(req.GetLimit())
	res := &stratov1.ListDelegationTokensResponse{}
	err := scan(rd.r, tableKey(nil, tagToken), "", req.GetStartAfter(), func(_, v []byte) (bool, error) {
		rec := &stratov1.TokenRecord{}
		if err := proto.Unmarshal(v, rec); err != nil {
			return false, fmt.Errorf("%w: token: %w", ErrCorrupt, err)
		}
		if rec.Delegation == nil {
			return true, nil
		}
		if len(res.Tokens) == limit {
			res.Truncated = true
			return false, nil
		}
		res.Tokens = append(res.Tokens, DelegationToken(rec))
		return true, nil
	})
	return res, err
}
