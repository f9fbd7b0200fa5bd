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
// ec). The writer gathers a batch of up to ecBatchStripes stripes laid out
// member by member: the bytes written go straight to their data member's
// buffer, cell after cell, and when the batch is full the parity cells of
// each of its stripes are computed into the parity members' buffers. Each
// member's buffer then goes to its datanode as one WRITE_CHUNK (no
// pipeline: every member holds different bytes), followed by a PUT_BLOCK
// that commits its new length. A batch never spans two groups.
//
// When a member fails, the group ends at its last committed batch (the
// members left finalise it; meta closes its container), and the batch,
// parity included, goes to a new group that avoids the failed datanode,
// as the replicated writer moves to a new block.

// ecBatchStripes is how many stripes a batch holds: with 1 MiB cells each
// member gets 4 MiB per request, the replicated writer's chunk.
const ecBatchStripes = 4

// ecState is an erasure coded writer's.
type ecState struct {
	cfg      ec.Config
	sc       *ec.StripeCoder
	groupCap int64 // data bytes of a full group: whole stripes, members of at most the block size

	batch    [][]byte // per member, up to ecBatchStripes cells (grown as written: a small key costs little)
	batchLen int64    // data bytes in the batch
	cells    [][]byte // scratch: one stripe's data cells
	parity   [][]byte // scratch: one stripe's parity cells
	lens     []int    // scratch: one stripe's cell lengths

	cur       *stratov1.BlockLocation // the group being written (last of Writer.blocks), nil before its first batch
	committed int64                   // data bytes of cur committed on every member
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
		batch: make([][]byte, cfg.Members()), cells: make([][]byte, cfg.Data), parity: make([][]byte, cfg.Parity),
		lens: make([]int, cfg.Members())}
	return s, nil
}

// batchCap is how many data bytes the batch may hold: ecBatchStripes
// stripes, or what is left of the group.
func (s *ecState) batchCap() int64 {
	room := s.groupCap
	if s.cur != nil {
		room -= s.committed
	}
	return min(ecBatchStripes*s.cfg.StripeSize(), room)
}

// grow makes member m's batch buffer hold at least n bytes, doubling it up
// to ecBatchStripes cells.
func (s *ecState) grow(m, n int) {
	b := s.batch[m]
	if len(b) >= n {
		return
	}
	nb := make([]byte, max(n, min(2*len(b), ecBatchStripes*s.cfg.CellSize)))
	copy(nb, b)
	s.batch[m] = nb
}

// ecWrite puts p into the batch, cell by cell, sending every full batch.
func (w *Writer) ecWrite(p []byte) (int, error) {
	s := w.ecs
	cell := int64(s.cfg.CellSize)
	n := 0
	for len(p) > 0 {
		limit := s.batchCap()
		pos := s.cfg.Locate(s.batchLen)
		in := pos.MemberOff % cell
		k := int(min(int64(len(p)), cell-in, limit-s.batchLen))
		s.grow(pos.Member, int(pos.MemberOff)+k)
		copy(s.batch[pos.Member][pos.MemberOff:], p[:k])
		s.batchLen += int64(k)
		p = p[k:]
		n += k
		if s.batchLen == limit {
			if err := w.ecFlush(false); err != nil {
				w.err = err
				return n, err
			}
		}
	}
	return n, nil
}

// encode computes the parity cells of the batch's stripes into the parity
// members' buffers, and returns how many bytes of the batch each member
// holds.
func (s *ecState) encode() ([]int64, error) {
	cfg, cell := s.cfg, s.cfg.CellSize
	for st := range s.cfg.Stripes(s.batchLen) {
		cfg.CellLens(s.batchLen, st, s.lens)
		off := int(st) * cell
		for k := range cfg.Data {
			s.cells[k] = nil // past the end of a short last stripe
			if s.lens[k] > 0 {
				s.cells[k] = s.batch[k][off : off+s.lens[k]]
			}
		}
		for j := range cfg.Parity {
			s.grow(cfg.Data+j, off+cell)
			s.parity[j] = s.batch[cfg.Data+j][off : off+cell]
		}
		if _, err := s.sc.Encode(s.cells, s.parity); err != nil {
			return nil, err
		}
	}
	lens := make([]int64, cfg.Members())
	for m := range lens {
		lens[m] = cfg.MemberLen(s.batchLen, m)
	}
	return lens, nil
}

// ecFlush sends the batch to the current group (starting one when there
// is none) and commits it on every member; the group ends when the batch
// fills it, or with last (the key's end). A failed member moves the batch
// to a new group.
func (w *Writer) ecFlush(last bool) error {
	s := w.ecs
	if s.batchLen == 0 {
		return nil
	}
	lens, err := s.encode()
	if err != nil {
		return err
	}
	for {
		if s.cur == nil {
			bl, err := w.allocate()
			if err != nil {
				return err
			}
			if n := len(bl.GetPipeline().GetMembers()); n != s.cfg.Members() {
				return fmt.Errorf("client: writing %s/%s/%s: meta gave a block group of %d members for %s", w.volume, w.bucket, w.key, n, s.cfg)
			}
			s.cur, s.committed = bl, 0
		}
		final := last || s.committed+s.batchLen == s.groupCap
		err := w.ecSendBatch(s.cur, s.committed, lens, final)
		if err == nil {
			s.committed += s.batchLen
			s.cur.Length, s.batchLen = s.committed, 0
			if final {
				s.cur = nil
			}
			return nil
		}
		if rerr := w.ecRecover(err); rerr != nil {
			return rerr
		}
	}
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

// ecSendBatch writes each member's part of the batch (lens[m] bytes) after
// the group's first committed data bytes, and commits it (final: the group
// is complete).
func (w *Writer) ecSendBatch(bl *stratov1.BlockLocation, committed int64, lens []int64, final bool) error {
	s := w.ecs
	return ecEach(bl, func(m int, dn *stratov1.DatanodeDetails) error {
		if lens[m] == 0 {
			return nil // past the end of a short last stripe
		}
		off := s.cfg.MemberLen(committed, m)
		data := s.batch[m][:lens[m]]
		err := w.c.data.writeChunk(w.ctx, dn.DataAddr, bl.GetToken(), &wire.WriteChunkRequest{Block: wireBlock(bl.BlockId),
			Offset: off, Checksums: checksum.Compute(w.ctype, w.bpc, data)}, data)
		if err == nil {
			_, err = w.c.data.putBlock(w.ctx, dn.DataAddr, bl.GetToken(), &wire.PutBlockRequest{Block: wireBlock(bl.BlockId),
				Length: off + lens[m], Final: final})
		}
		return err
	})
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

// ecRecover handles a failed batch: the current group ends at its last
// committed batch (finalised on the members that are left, dropped from
// the key when nothing was committed), meta closes its container, and
// later groups avoid the failed datanodes. The batch stays for the next
// group.
func (w *Writer) ecRecover(cause error) error {
	s := w.ecs
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
		"group", wireBlock(old.BlockId).String(), "committed", length, "resending", s.batchLen, "err", cause)
	s.cur, s.committed = nil, 0
	old.Length = length
	if length == 0 {
		w.blocks = w.blocks[:len(w.blocks)-1]
	} else {
		w.ecFinish(old, length, failed)
	}
	w.avoid(old, failed)
	return nil
}

// ecClose sends the last batch and ends the last group.
func (w *Writer) ecClose() error {
	s := w.ecs
	if s.batchLen > 0 {
		return w.ecFlush(true)
	}
	if s.cur != nil {
		// The group's last batch was committed without FINAL: say it now
		// (it only lets the datanodes release the block's buffers).
		w.ecFinish(s.cur, s.committed, nil)
	}
	return nil
}

// ecFinish commits group bl at n data bytes as final on every member that
// holds some and is not failed, as far as they answer.
func (w *Writer) ecFinish(bl *stratov1.BlockLocation, n int64, failed map[string]bool) {
	err := ecEach(bl, func(m int, dn *stratov1.DatanodeDetails) error {
		length := w.ecs.cfg.MemberLen(n, m)
		if length == 0 || failed[dn.Id] {
			return nil
		}
		_, err := w.c.data.putBlock(w.ctx, dn.DataAddr, bl.GetToken(), &wire.PutBlockRequest{Block: wireBlock(bl.BlockId), Length: length, Final: true})
		return err
	})
	if err != nil {
		// The members hold the committed batches either way; one that does
		// not answer now is rebuilt from the others.
		w.c.opts.Logger.Debug("client: finalising a block group", "group", wireBlock(bl.BlockId).String(), "err", err)
	}
}
