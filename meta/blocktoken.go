// Block tokens (docs/security.md "Block tokens", docs/wire.md §5.9): with
// Options.Auth "token", meta signs, for each block it hands to a client, a
// short-lived token naming the block, the operations allowed and the user;
// datanodes verify it with the keys meta sends them in every Register and
// Heartbeat reply. Keys are made by the leader and replicated through Raft
// (MetaCommand.block_token_key), so that every replica signs with keys the
// datanodes know; a key is kept until every token it may have signed has
// expired.

package meta

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/strato-io/strato/meta/consensus"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// Defaults of Options.BlockTokenKeyInterval and BlockTokenLifetime: HDFS's
// key update interval and dfs.block.access.token.lifetime.
const (
	DefaultBlockTokenKeyInterval = 10 * time.Hour
	DefaultBlockTokenLifetime    = 10 * time.Hour
)

// Key layout: every key starts with 'B' (the namespace's start with 'N',
// the cluster state's with 'C', consensus's with 0x00).
const (
	blockTokenPrefix = 'B'
	tagBlockTokenKey = 'k' // B k <id:4> → BlockTokenKeyCommand
)

func blockTokenKeyKey(id uint32) []byte {
	k := []byte{blockTokenPrefix, tagBlockTokenKey, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(k[2:], id)
	return k
}

// blockTokenKeys are the replica's keys, in memory (the database holds
// them too), in increasing ID order.
type blockTokenKeys struct {
	mu   sync.RWMutex
	keys []*stratov1.BlockTokenKeyCommand
}

// load reads the keys from the database (at Open, and after a snapshot).
func (k *blockTokenKeys) load(db pebble.Reader) error {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{blockTokenPrefix, tagBlockTokenKey},
		UpperBound: []byte{blockTokenPrefix, tagBlockTokenKey + 1}})
	if err != nil {
		return err
	}
	var keys []*stratov1.BlockTokenKeyCommand
	for it.First(); it.Valid(); it.Next() {
		var c stratov1.BlockTokenKeyCommand
		if err := proto.Unmarshal(it.Value(), &c); err != nil {
			_ = it.Close()
			return fmt.Errorf("meta: block token key %x: %w", it.Key(), err)
		}
		keys = append(keys, &c)
	}
	if err := it.Close(); err != nil {
		return err
	}
	k.mu.Lock()
	k.keys = keys
	k.mu.Unlock()
	return nil
}

// apply stores a new key and drops the keys expired at the command's time.
// Deterministic: it reads nothing but the command and the replica's keys,
// which every replica has the same.
func (k *blockTokenKeys) apply(c *stratov1.BlockTokenKeyCommand, b *pebble.Batch) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if n := len(k.keys); n > 0 && c.Id <= k.keys[n-1].Id {
		return nil // a leader's retry, or two leaders racing: the first wins
	}
	data, err := proto.Marshal(c)
	if err != nil {
		return err
	}
	if err := b.Set(blockTokenKeyKey(c.Id), data, nil); err != nil {
		return err
	}
	kept := k.keys[:0:0]
	for _, old := range k.keys {
		if old.ExpiresUnixMs <= c.NowUnixMs {
			if err := b.Delete(blockTokenKeyKey(old.Id), nil); err != nil {
				return err
			}
			continue
		}
		kept = append(kept, old)
	}
	k.keys = append(kept, c)
	return nil
}

// active returns the key to sign with at now: the newest one made at
// least lead ago (the datanodes have had time to learn it from a
// heartbeat), else the newest (the first key of a cluster, which the
// datanodes get when they register), or nil.
func (k *blockTokenKeys) active(now time.Time, lead time.Duration) *stratov1.BlockTokenKeyCommand {
	k.mu.RLock()
	defer k.mu.RUnlock()
	for i := len(k.keys) - 1; i >= 0; i-- {
		if now.Sub(time.UnixMilli(k.keys[i].CreatedUnixMs)) >= lead {
			return k.keys[i]
		}
	}
	if len(k.keys) == 0 {
		return nil
	}
	return k.keys[len(k.keys)-1]
}

// newest returns the newest key, or nil.
func (k *blockTokenKeys) newest() *stratov1.BlockTokenKeyCommand {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if len(k.keys) == 0 {
		return nil
	}
	return k.keys[len(k.keys)-1]
}

// valid returns the keys not expired at now, for the datanodes.
func (k *blockTokenKeys) valid(now time.Time) []*stratov1.BlockTokenKey {
	k.mu.RLock()
	defer k.mu.RUnlock()
	out := make([]*stratov1.BlockTokenKey, 0, len(k.keys))
	for _, c := range k.keys {
		if c.ExpiresUnixMs > now.UnixMilli() {
			out = append(out, &stratov1.BlockTokenKey{Id: c.Id, Secret: c.Secret, ExpiresUnixMs: c.ExpiresUnixMs})
		}
	}
	return out
}

// blockTokenKeyLead is how long before it signs anything a key is made
// (and sent to the datanodes in their heartbeats): half the rotation
// interval, at most a minute.
func (s *Server) blockTokenKeyLead() time.Duration {
	return min(s.opts.BlockTokenKeyInterval/2, time.Minute)
}

// blockTokensOn reports whether meta issues block tokens.
func (s *Server) blockTokensOn() bool { return s.opts.Auth == AuthToken }

// blockTokenKeysFor is what a Register or Heartbeat reply tells a
// datanode: whether tokens are required, and the valid keys.
func (s *Server) blockTokenKeysFor() *stratov1.BlockTokenKeys {
	if !s.blockTokensOn() {
		return &stratov1.BlockTokenKeys{}
	}
	return &stratov1.BlockTokenKeys{Required: true, Keys: s.btKeys.valid(s.now())}
}

// errNoBlockTokenKey: the leader has no key to sign with yet.
var errNoBlockTokenKey = errors.New("meta: no block token key yet")

// rotateBlockTokenKey makes a new key when there is none or the newest is
// older than Options.BlockTokenKeyInterval less the lead (leader only; from
// the background tick, and before the first token is signed): the key
// signs from the lead on, once the datanodes know it.
func (s *Server) rotateBlockTokenKey(ctx context.Context) error {
	if !s.blockTokensOn() {
		return nil
	}
	now := s.now()
	cur := s.btKeys.newest()
	if cur != nil && now.Sub(time.UnixMilli(cur.CreatedUnixMs)) < s.opts.BlockTokenKeyInterval-s.blockTokenKeyLead() {
		return nil
	}
	s.btRotateMu.Lock()
	defer s.btRotateMu.Unlock()
	if n := s.btKeys.newest(); n != cur {
		return nil // another caller made one meanwhile
	}
	secret := make([]byte, wire.TokenKeyLen)
	_, _ = rand.Read(secret)
	id := uint32(1)
	if cur != nil {
		id = cur.Id + 1
	}
	c := &stratov1.BlockTokenKeyCommand{Id: id, Secret: secret, CreatedUnixMs: now.UnixMilli(),
		ExpiresUnixMs: now.Add(s.opts.BlockTokenKeyInterval + s.opts.BlockTokenLifetime).UnixMilli(), NowUnixMs: now.UnixMilli()}
	// It signs from created + lead to about created + interval (when the
	// next key becomes active), and its tokens live at most the lifetime:
	// expires covers them all.
	if _, err := s.propose(ctx, &stratov1.MetaCommand{Op: &stratov1.MetaCommand_BlockTokenKey{BlockTokenKey: c}}); err != nil {
		return fmt.Errorf("meta: new block token key: %w", err)
	}
	s.opts.Logger.Info("meta: new block token key", "key_id", id) // never the secret
	return nil
}

// signBlockToken signs a token of ops on block (localID 0: the whole
// container) for user with the newest key, making one first if needed.
func (s *Server) signBlockToken(ctx context.Context, block wire.BlockID, ops wire.Ops, user string) ([]byte, error) {
	lead := s.blockTokenKeyLead()
	k := s.btKeys.active(s.now(), lead)
	switch {
	case k == nil && !s.node.IsLeader():
		// Keys are made by the leader: a follower serving a read without
		// one sends the caller there.
		id, addr := s.node.Leader()
		return nil, &consensus.NotLeaderError{LeaderID: id, LeaderAddr: addr}
	case k == nil:
		if err := s.rotateBlockTokenKey(ctx); err != nil {
			return nil, err
		}
		if k = s.btKeys.active(s.now(), lead); k == nil {
			return nil, errNoBlockTokenKey
		}
	case s.node.IsLeader() && s.now().Sub(time.UnixMilli(k.CreatedUnixMs)) >= s.opts.BlockTokenKeyInterval+s.opts.BlockTokenLifetime/2:
		// The key is so old (the tick could not rotate) that its tokens
		// would be short-lived: try for a new one (which signs once its
		// lead has passed), and sign with what there is meanwhile.
		_ = s.rotateBlockTokenKey(ctx)
	}
	exp := min(s.now().Add(s.opts.BlockTokenLifetime).UnixMilli(), k.ExpiresUnixMs)
	if id := caller(ctx); id != nil && id.Delegation {
		// A block token outlives no delegation token it was got with.
		exp = min(exp, id.TokenExpires.UnixMilli())
	}
	t := wire.BlockToken{KeyID: k.Id, ExpiresUnixMs: exp, Block: block, Ops: ops, User: user}
	return t.Sign(k.Secret), nil
}

// writeMethods are the NamespaceService methods that hand out blocks to
// write: their BlockLocations get READ|WRITE tokens, every other one's
// READ.
var writeMethods = map[string]bool{"OpenKey": true, "CreateFile": true, "AllocateBlock": true, "AppendFile": true}

// blockTokenInterceptor fills in BlockLocation.token in every
// NamespaceService response that carries BlockLocations. It runs inside
// the authentication interceptor (the caller's identity is known).
func (s *Server) blockTokenInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if err != nil || !strings.HasPrefix(info.FullMethod, namespacePrefix) {
		return resp, err
	}
	m, ok := resp.(proto.Message)
	if !ok || !mayHoldBlocks(m.ProtoReflect().Descriptor()) || !hasBlocks(m.ProtoReflect()) {
		return resp, nil
	}
	ops := wire.OpRead
	if writeMethods[strings.TrimPrefix(info.FullMethod, namespacePrefix)] {
		ops |= wire.OpWrite
	}
	var user string
	if id := IdentityFromContext(ctx); id != nil {
		user = id.User
	}
	// The response may be shared (a cache, a recorded reply): sign a copy.
	m = proto.Clone(m)
	var serr error
	walkBlocks(m.ProtoReflect(), func(bl *stratov1.BlockLocation) {
		if serr != nil || bl.GetBlockId() == nil {
			return
		}
		b := wire.BlockID{ContainerID: bl.GetBlockId().GetContainerId(), LocalID: bl.GetBlockId().GetLocalId()}
		bl.Token, serr = s.signBlockToken(ctx, b, ops, user)
	})
	if serr != nil {
		return nil, toStatus(serr)
	}
	return m, nil
}

var blockLocationName = (&stratov1.BlockLocation{}).ProtoReflect().Descriptor().FullName()

// holdsBlocks caches mayHoldBlocks by message type.
var holdsBlocks sync.Map // protoreflect.FullName → bool

// mayHoldBlocks reports whether a message of type d can hold a
// BlockLocation, at any depth.
func mayHoldBlocks(d protoreflect.MessageDescriptor) bool {
	if v, ok := holdsBlocks.Load(d.FullName()); ok {
		return v.(bool)
	}
	v := searchBlocks(d, map[protoreflect.FullName]bool{})
	holdsBlocks.Store(d.FullName(), v)
	return v
}

func searchBlocks(d protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if d.FullName() == blockLocationName {
		return true
	}
	if seen[d.FullName()] {
		return false
	}
	seen[d.FullName()] = true
	fs := d.Fields()
	for i := range fs.Len() {
		f := fs.Get(i)
		if f.IsMap() {
			f = f.MapValue()
		}
		if md := f.Message(); md != nil && searchBlocks(md, seen) {
			return true
		}
	}
	return false
}

// hasBlocks reports whether m holds a BlockLocation.
func hasBlocks(m protoreflect.Message) bool {
	found := false
	walk(m, func(protoreflect.Message) { found = true })
	return found
}

// walkBlocks calls f for every BlockLocation in m.
func walkBlocks(m protoreflect.Message, f func(*stratov1.BlockLocation)) {
	walk(m, func(bm protoreflect.Message) { f(bm.Interface().(*stratov1.BlockLocation)) })
}

func walk(m protoreflect.Message, f func(protoreflect.Message)) {
	if m.Descriptor().FullName() == blockLocationName {
		f(m)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if md := fd.MapValue().Message(); md != nil && mayHoldBlocks(md) {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					walk(mv.Message(), f)
					return true
				})
			}
		case fd.Message() == nil || !mayHoldBlocks(fd.Message()):
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				walk(l.Get(i).Message(), f)
			}
		default:
			walk(v.Message(), f)
		}
		return true
	})
}

// signCommands gives the datanode commands that copy or rebuild a
// container the container token the datanode presents to the other
// datanodes: WRITE for a copy's target, READ for a rebuild's sources.
// Commands are cloned, not changed: the cluster manager may keep them.
func (s *Server) signCommands(ctx context.Context, datanode string, cmds []*stratov1.DatanodeCommand) ([]*stratov1.DatanodeCommand, error) {
	if !s.blockTokensOn() {
		return cmds, nil
	}
	cmds = slices.Clone(cmds)
	for i, c := range cmds {
		var (
			id  uint64
			ops wire.Ops
		)
		switch op := c.Cmd.(type) {
		case *stratov1.DatanodeCommand_ReplicateContainer:
			id, ops = op.ReplicateContainer.GetContainerId(), wire.OpWrite
		case *stratov1.DatanodeCommand_ReconstructEcContainer:
			id, ops = op.ReconstructEcContainer.GetContainerId(), wire.OpRead
		default:
			continue
		}
		tok, err := s.signBlockToken(ctx, wire.BlockID{ContainerID: id}, ops, "datanode "+datanode)
		if err != nil {
			return nil, err
		}
		c = proto.Clone(c).(*stratov1.DatanodeCommand)
		switch op := c.Cmd.(type) {
		case *stratov1.DatanodeCommand_ReplicateContainer:
			op.ReplicateContainer.Token = tok
		case *stratov1.DatanodeCommand_ReconstructEcContainer:
			op.ReconstructEcContainer.Token = tok
		}
		cmds[i] = c
	}
	return cmds, nil
}
