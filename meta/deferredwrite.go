// Deferred writes: the create tokens of small keys written whole, which the
// leader hands out instead of recording open keys (namespace.DeferOpen).
//
// A key of one chunk (an S3 PUT of a few KiB) used to cost two Raft
// entries, each fsynced before its answer: the open, recording the open
// key and its block, and the commit. With a deferred write the leader
// allocates the block, records nothing, and answers with a token that
// carries the prepared open; the commit with the token opens and commits
// the key in one entry. What the leader keeps instead is here: each token
// it gave out, until the commit takes it (once) or it expires. The table
// is in the leader's memory only, bounded in bytes (Options
// .DeferredWriteMemory); when it is full, opens are recorded as before.
//
// What a token's loss costs:
//   - A commit with a write token this leader does not hold (another leader gave
//     it out, it expired, it was taken already) is refused with
//     CREATE_TOKEN_UNKNOWN. The refusal is a Raft entry recorded under the
//     commit's request ID, so that an earlier attempt of the same request
//     still on its way to the log changes nothing once it gets there (an
//     attempt applied before the refusal gives its reply instead). The
//     client writes the key again through an ordinary open; nothing was
//     committed.
//   - An expired token's blocks are freed (DiscardBlocksCommand): the
//     datanodes delete what the abandoned writer left, as they do for an
//     open key that expires.
//   - A token taken by a commit whose outcome is unknown (the leader lost
//     its leadership during the proposal) is not put back: the key may be
//     committed with its block, and freeing that block would lose it. Those
//     blocks, and those of tokens held by a leader that stopped or was
//     deposed, are left on the datanodes unreferenced: space, never data.

package meta

import (
	"container/list"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/strato-io/strato/meta/namespace"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Defaults of Options.DeferredWriteMemory and DeferredWriteTTL.
const (
	DefaultDeferredWriteMemory = 16 << 20
	DefaultDeferredWriteTTL    = 10 * time.Minute
)

// ErrCreateTokenUnknown: a deferred write's create token this leader does
// not hold.
var ErrCreateTokenUnknown = fmt.Errorf("%w: this leader holds no such deferred write (another leader gave it out, it expired, "+
	"or it was committed or refused already): open the key and write it again", namespace.ErrFailedPrecondition)

// pendingEntryOverhead is what an entry costs besides its token, about:
// the map entry, the list element, the entry and its block records.
const pendingEntryOverhead = 320

// pendingWrite is one token handed out. The table is keyed by the token
// itself: its nonce makes it unique, and a commit's token is looked up as
// it came, without decoding it.
type pendingWrite struct {
	token    string
	blocks   []*stratov1.BlockRecord
	deadline time.Time
	el       *list.Element
}

func (p *pendingWrite) size() int64 { return int64(len(p.token)) + pendingEntryOverhead }

// deferredWrites is the leader's table of tokens handed out, oldest first.
type deferredWrites struct {
	limit int64 // bytes; <= 0: no deferred writes
	ttl   time.Duration

	mu      sync.Mutex
	bytes   int64
	byToken map[string]*pendingWrite
	order   list.List // *pendingWrite, by deadline

	issued, taken, refused, returned, expired, discarded uint64
}

func newDeferredWrites(limit int64, ttl time.Duration) *deferredWrites {
	return &deferredWrites{limit: limit, ttl: ttl, byToken: map[string]*pendingWrite{}}
}

// DeferredWriteMetrics is about the deferred writes of this replica (as
// leader).
type DeferredWriteMetrics struct {
	Pending         int    // tokens handed out, not yet committed or expired
	Bytes, MaxBytes int64  // what they take in memory, about, and its bound
	Issued          uint64 // tokens handed out
	Committed       uint64 // taken by a commit
	Refused         uint64 // commits refused: CREATE_TOKEN_UNKNOWN
	Returned        uint64 // taken by a commit that Apply refused, and put back
	Expired         uint64 // never committed within the TTL
	Discarded       uint64 // blocks of expired tokens freed
}

func (d *deferredWrites) metrics() DeferredWriteMetrics {
	d.mu.Lock()
	defer d.mu.Unlock()
	return DeferredWriteMetrics{Pending: len(d.byToken), Bytes: d.bytes, MaxBytes: max(d.limit, 0), Issued: d.issued,
		Committed: d.taken, Refused: d.refused, Returned: d.returned, Expired: d.expired, Discarded: d.discarded}
}

// nonce returns a fresh write nonce when the table has room for one more
// token (nil: open for real).
func (d *deferredWrites) nonce() []byte {
	if d.limit <= 0 {
		return nil
	}
	d.mu.Lock()
	full := d.bytes >= d.limit // over it by one entry at most
	d.mu.Unlock()
	if full {
		return nil
	}
	n := make([]byte, 16)
	if _, err := rand.Read(n); err != nil {
		return nil
	}
	return n
}

// add records a token handed out at now.
func (d *deferredWrites) add(token []byte, blocks []*stratov1.BlockRecord, now time.Time) {
	p := &pendingWrite{token: string(token), blocks: blocks, deadline: now.Add(d.ttl)}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.insert(p)
	d.issued++
}

// insert adds p in deadline order: at the back, or, for a token put back,
// after the last one due before it.
func (d *deferredWrites) insert(p *pendingWrite) {
	at := d.order.Back()
	for at != nil && at.Value.(*pendingWrite).deadline.After(p.deadline) {
		at = at.Prev()
	}
	if at == nil {
		p.el = d.order.PushFront(p)
	} else {
		p.el = d.order.InsertAfter(p, at)
	}
	d.byToken[p.token] = p
	d.bytes += p.size()
}

func (d *deferredWrites) remove(p *pendingWrite) {
	d.order.Remove(p.el)
	delete(d.byToken, p.token)
	d.bytes -= p.size()
}

// take removes token if this leader holds it (nil otherwise).
func (d *deferredWrites) take(token []byte) *pendingWrite {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.byToken[string(token)]
	if p == nil {
		return nil
	}
	d.remove(p)
	d.taken++
	return p
}

// refuse counts a commit refused for a write token this leader does not
// hold.
func (d *deferredWrites) refuse() {
	d.mu.Lock()
	d.refused++
	d.mu.Unlock()
}

// putBack returns a token whose commit Apply refused (a precondition, a
// quota, an object lock): nothing holds its block, and it expires as if
// never taken. The writer may still commit it again.
func (d *deferredWrites) putBack(p *pendingWrite) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.byToken[p.token]; ok {
		return
	}
	d.insert(p)
	d.taken--
	d.returned++
}

// due removes the tokens past their deadline at now (at most limit) and
// returns their blocks.
func (d *deferredWrites) due(now time.Time, limit int) []*stratov1.BlockRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	var blocks []*stratov1.BlockRecord
	for n := 0; n < limit; n++ {
		front := d.order.Front()
		if front == nil {
			break
		}
		p := front.Value.(*pendingWrite)
		if p.deadline.After(now) {
			break
		}
		d.remove(p)
		d.expired++
		blocks = append(blocks, p.blocks...)
	}
	return blocks
}

// sweepDeferredWrites frees the blocks of the tokens that expired (leader
// only, every tick).
func (s *Server) sweepDeferredWrites(ctx context.Context) error {
	now := s.now()
	blocks := s.dw.due(now, s.opts.ReclaimBatch)
	if len(blocks) == 0 {
		return nil
	}
	if _, err := s.proposeNamespace(ctx, s.ns.PrepareDiscard(now, blocks)); err != nil {
		// Not proposed (or not known to be): those blocks stay on the
		// datanodes unreferenced rather than risk anything else.
		return fmt.Errorf("freeing the blocks of %d abandoned writes: %w", len(blocks), err)
	}
	s.dw.mu.Lock()
	s.dw.discarded += uint64(len(blocks))
	s.dw.mu.Unlock()
	return nil
}

// deferWrite marks an open about to be deferred as a deferred write when
// it allocated a block and the table has room (false: a deferred create
// or an ordinary open).
func (s *Server) deferWrite(oc *stratov1.OpenKeyCommand) bool {
	if len(oc.GetBlocks()) != 1 || oc.GetAppend() {
		return false
	}
	oc.WriteNonce = s.dw.nonce()
	return oc.WriteNonce != nil
}

// takeWriteToken takes the deferred write token a commit carries, if it
// carries one, and refuses (ErrCreateTokenUnknown) a write token this
// leader does not hold; a deferred create's token passes. With a request
// ID the refusal is decided in log order (namespace.PrepareRefuseWriteToken):
// an attempt of the same request that took the token (on this leader or
// an earlier one) may not be applied yet, and a refusal answered before it
// is would have the writer commit the key a second time. A retry of a
// commit applied before the refusal gets that commit's reply (prev).
func (s *Server) takeWriteToken(ctx context.Context, req any, rid *stratov1.RequestID) (p *pendingWrite, prev any, err error) {
	cr, ok := req.(*stratov1.CommitKeyRequest)
	if !ok || len(cr.GetCreateToken()) == 0 {
		return nil, nil, nil
	}
	if p = s.dw.take(cr.GetCreateToken()); p != nil {
		return p, nil, nil
	}
	if !namespace.IsWriteToken(cr.GetCreateToken()) {
		return nil, nil, nil // a deferred create's: Apply checks it
	}
	s.dw.refuse()
	if rid == nil {
		return nil, nil, ErrCreateTokenUnknown
	}
	res, err := s.proposeNamespace(ctx, s.ns.PrepareRefuseWriteToken(s.now(), rid))
	if err != nil {
		return nil, nil, err
	}
	if refused(res) {
		return nil, nil, ErrCreateTokenUnknown
	}
	return nil, res, nil
}

// refused reports whether a reply is a request's recorded refusal of its
// write token (WriteTokenRefused): its answer is ErrCreateTokenUnknown.
func refused(reply any) bool {
	_, ok := reply.(*stratov1.WriteTokenRefused)
	return ok
}

// returnWriteToken puts a taken token back when Apply refused its commit
// (err is the namespace's: nothing was applied). Any other failure leaves
// it taken: the commit may have been applied.
func (s *Server) returnWriteToken(p *pendingWrite, err error) {
	if p != nil && err != nil && namespace.Class(err) != nil && !errors.Is(err, context.Canceled) {
		s.dw.putBack(p)
	}
}
