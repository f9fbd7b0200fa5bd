package client

import (
	"errors"
	"fmt"
	"sync"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// An erasure coded key is written in block groups (docs/ec.md, package
// ec): the bytes are cut into stripes of d cells, the client computes each
// stripe's p parity cells, and the d+p cells go to the group's d+p
// members at once, member m's cell straight to its datanode (no pipeline:
// each member holds different bytes). Every ecFlushStripes stripes, and at
// a group's end, a PutBlock on every member commits their lengths; the
// stripes sent since stay buffered. When a member fails, the group ends at
// its last committed stripe, meta closes its container, and the buffered
// stripes go to a new group on other datanodes, as the replicated writer
// does with a block.

// ecFlushStripes is how many stripes are sent between commits.
const ecFlushStripes = 4

// ecState is an erasure coded writer's.
type ecState struct {
	cfg      ec.Config
	sc       *ec.StripeCoder
	groupCap int64    // data bytes of a full group: whole stripes, members of at most the block size
	stripe   []byte   // the stripe being filled
	parity   [][]byte // p cell buffers
	cells    [][]byte // scratch: the cells of the stripe being sent

	cur       *stratov1.BlockLocation // the group being written (last of Writer.blocks)
	curLen    int64                   // data bytes of cur sent
	committed int64                   // data bytes of cur committed on every member
	pending   [][]byte                // stripes of cur sent since the last commit, for a resend
}

// newECState prepares the erasure coded writing of a key of config e and
// block size blockSize.
func newECState(e *stratov1.ErasureCoding, blockSize int64) (*ecState, error) {
	cfg, err := ECConfig(e)
	if err != nil {
		return nil, err
	}
	coder, err := ec.NewCoder(cfg)
	if err != nil {
		return nil, err
	}
	cells := max(blockSize/int64(cfg.CellSize), 1)
	s := &ecState{cfg: cfg, sc: coder.NewStripeCoder(), groupCap: cells * cfg.StripeSize(),
		parity: make([][]byte, cfg.Parity), cells: make([][]byte, 0, cfg.Data)}
	for i := range s.parity {
		s.parity[i] = make([]byte, cfg.CellSize)
	}
	return s, nil
}

// ecWrite buffers p and sends every full stripe.
func (w *Writer) ecWrite(p []byte) (int, error) {
	s := w.ecs
	n := 0
	for len(p) > 0 {
		if s.stripe == nil {
			s.stripe = make([]byte, 0, s.cfg.StripeSize())
		}
		k := copy(s.stripe[len(s.stripe):cap(s.stripe)], p)
		s.stripe = s.stripe[:len(s.stripe)+k]
		p = p[k:]
		n += k
		if len(s.stripe) == cap(s.stripe) {
			data := s.stripe
			s.stripe = nil
			if err := w.ecSend(data); err != nil {
				w.err = err
				return n, err
			}
		}
	}
	return n, nil
}

// ecSend sends one stripe (a short one only at the key's end) to the
// current group, starting a group when there is none or it is full.
func (w *Writer) ecSend(data []byte) error {
	s := w.ecs
	for s.cur == nil || s.curLen+int64(len(data)) > s.groupCap {
		var err error
		if s.cur != nil {
			err = w.ecCommit(true) // ends it, or moves its stripes to a new group
		} else {
			err = w.ecNextGroup()
		}
		if err != nil {
			return err
		}
	}
	if err := w.ecSendStripe(s.cur, s.curLen, data); err != nil {
		return w.ecRecover(err, data)
	}
	s.curLen += int64(len(data))
	s.pending = append(s.pending, data)
	if len(s.pending) >= ecFlushStripes {
		return w.ecCommit(false)
	}
	return nil
}

// memberErr is the failure of one member's request.
type memberErr struct {
	member *stratov1.DatanodeDetails
	err    error
}

func (e *memberErr) Error() string { return fmt.Sprintf("member %s: %v", e.member.GetId(), e.err) }
func (e *memberErr) Unwrap() error { return e.err }

// ecEach runs fn for every member of group bl at once and joins their
// errors (each a *memberErr).
func ecEach(bl *stratov1.BlockLocation, fn func(m int, dn *stratov1.DatanodeDetails) error) error {
	members := bl.GetPipeline().GetMembers()
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for m, dn := range members {
		wg.Go(func() {
			if err := fn(m, dn); err != nil {
				errs[m] = &memberErr{member: dn, err: err}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ecSendStripe writes the stripe of data starting at the group's data
// offset groupOff: its data cells and the parity cells computed from them,
// each to its member, all at once.
func (w *Writer) ecSendStripe(bl *stratov1.BlockLocation, groupOff int64, data []byte) error {
	s := w.ecs
	if n := len(bl.GetPipeline().GetMembers()); n != s.cfg.Members() {
		return fmt.Errorf("client: writing %s/%s/%s: meta gave a block group of %d members for %s", w.volume, w.bucket, w.key, n, s.cfg)
	}
	cells := s.cfg.SplitStripe(data, s.cells)
	parity, err := s.sc.Encode(cells, s.parity)
	if err != nil {
		return err
	}
	memberOff := groupOff / s.cfg.StripeSize() * int64(s.cfg.CellSize)
	return ecEach(bl, func(m int, dn *stratov1.DatanodeDetails) error {
		var cell []byte
		if m < s.cfg.Data {
			cell = cells[m]
		} else {
			cell = parity[m-s.cfg.Data]
		}
		if len(cell) == 0 {
			return nil // past the end of a short last stripe
		}
		return w.c.data.writeChunk(w.ctx, dn.DataAddr, &wire.WriteChunkRequest{Block: wireBlock(bl.BlockId),
			Offset: memberOff, Checksums: checksum.Compute(w.ctype, w.bpc, cell)}, cell)
	})
}

// ecPutBlock commits a group of n data bytes on every member that holds
// some of them (final: the group is complete).
func (w *Writer) ecPutBlock(bl *stratov1.BlockLocation, n int64, final bool, skip map[string]bool) error {
	cfg := w.ecs.cfg
	return ecEach(bl, func(m int, dn *stratov1.DatanodeDetails) error {
		length := cfg.MemberLen(n, m)
		if length == 0 || skip[dn.Id] {
			return nil
		}
		_, err := w.c.data.putBlock(w.ctx, dn.DataAddr, &wire.PutBlockRequest{Block: wireBlock(bl.BlockId), Length: length, Final: final})
		return err
	})
}

// ecCommit commits what was sent to the current group on every member
// (final: and ends the group).
func (w *Writer) ecCommit(final bool) error {
	s := w.ecs
	if s.cur == nil {
		return nil
	}
	if s.curLen == 0 {
		if final {
			w.blocks = w.blocks[:len(w.blocks)-1]
			s.cur = nil
		}
		return nil
	}
	if err := w.ecPutBlock(s.cur, s.curLen, final, nil); err != nil {
		return w.ecRecover(err, nil)
	}
	s.committed, s.cur.Length, s.pending = s.curLen, s.curLen, nil
	if final {
		s.cur, s.curLen, s.committed = nil, 0, 0
	}
	return nil
}

// ecNextGroup starts a block group.
func (w *Writer) ecNextGroup() error {
	bl, err := w.allocate()
	if err != nil {
		return err
	}
	w.ecs.cur, w.ecs.curLen, w.ecs.committed = bl, 0, 0
	return nil
}

// ecFailed names the members an error of ecEach blames: those whose
// request failed for a reason of the datanode's own (or a broken
// connection); a member that refused (its container closed) is nobody's
// fault.
func ecFailed(err error) map[string]bool {
	failed := map[string]bool{}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var me *memberErr
		if !errors.As(e, &me) {
			continue
		}
		var we *wire.Error
		if !errors.As(me.err, &we) || nodeFault(we.Code) {
			failed[me.member.Id] = true
		}
	}
	return failed
}

// ecRecover handles a failed write or commit of the current group: the
// group ends at its last committed stripe (finalised on the members that
// are left), meta closes its container, and the stripes not committed
// (and extra, the stripe whose sending failed, when not nil) go to a new
// group that avoids the failed datanodes.
func (w *Writer) ecRecover(cause error, extra []byte) error {
	s := w.ecs
	redo := s.pending
	if extra != nil {
		redo = append(redo, extra)
	}
	s.pending = nil
	if err := w.ctx.Err(); err != nil {
		return err
	}
	failed := ecFailed(cause)
	if len(failed) > 0 {
		w.failures++
	} else {
		w.closures++
	}
	if w.failures > maxRecoveries || w.closures > maxClosures {
		return fmt.Errorf("client: writing %s/%s/%s: giving up after %d datanode failures and %d closed containers: %w",
			w.volume, w.bucket, w.key, w.failures, w.closures, cause)
	}
	old, length := s.cur, s.committed
	w.c.opts.Logger.Warn("client: block group failed, moving to a new group", "key", w.key,
		"group", wireBlock(old.BlockId).String(), "committed", length, "resending", len(redo), "err", cause)
	s.cur, s.curLen, s.committed = nil, 0, 0
	old.Length = length
	if length == 0 {
		w.blocks = w.blocks[:len(w.blocks)-1]
	} else if err := w.ecPutBlock(old, length, true, failed); err != nil {
		// The members that answered before hold the committed stripes;
		// a member that does not now is rebuilt from the others.
		w.c.opts.Logger.Debug("client: finalising a block group", "group", wireBlock(old.BlockId).String(), "err", err)
	}
	w.avoid(old, failed)
	for _, d := range redo {
		if err := w.ecSend(d); err != nil {
			return err
		}
	}
	return nil
}

// ecClose sends the last, short stripe and ends the last group.
func (w *Writer) ecClose() error {
	s := w.ecs
	if len(s.stripe) > 0 {
		data := s.stripe
		s.stripe = nil
		if err := w.ecSend(data); err != nil {
			return err
		}
	}
	// A commit that fails moves the group's stripes to a new one, which
	// needs its own commit.
	for s.cur != nil {
		if err := w.ecCommit(true); err != nil {
			return err
		}
	}
	return nil
}
