package client

import (
	"fmt"
	"sync"

	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/proto/strato/v1"
)

// ecCoder is an erasure coded key's coder, made on first use.
type ecCoder struct {
	once  sync.Once
	coder *ec.Coder
	err   error
}

func (r *Reader) ecCoder() (*ec.Coder, error) {
	r.ecc.once.Do(func() {
		cfg, err := ECConfig(r.key.ErasureCoding)
		if err == nil {
			r.ecc.coder, err = ec.NewCoder(cfg)
		}
		r.ecc.err = err
	})
	return r.ecc.coder, r.ecc.err
}

// readGroup reads dst from block group bl of an erasure coded key at off
// (in the group's data): from its data members, rebuilding from the
// others what a member that fails (or failed this reader before) cannot
// give. A member that returns bad data is reported to meta.
func (r *Reader) readGroup(bl *stratov1.BlockLocation, off int64, dst []byte) error {
	coder, err := r.ecCoder()
	if err != nil {
		return err
	}
	members := bl.GetPipeline().GetMembers()
	if len(members) != coder.Config().Members() {
		return fmt.Errorf("%w for %s/%s/%s: block group %s has %d members, %s needs %d", ErrCorruptRead, r.key.Volume, r.key.Bucket,
			r.key.Name, wireBlock(bl.BlockId), len(members), coder.Config(), coder.Config().Members())
	}
	gr := ec.NewGroupReader(coder, bl.Length, func(m int, off int64, dst []byte) error {
		dn := members[m]
		err := r.readReplica(dn, bl, off, dst)
		if err != nil && r.ctx.Err() == nil {
			r.mu.Lock()
			r.bad[dn.Id] = true
			r.mu.Unlock()
			if corrupt(err) {
				r.report(bl, dn, err)
			}
		}
		return err
	})
	r.mu.Lock()
	for m, dn := range members {
		if r.bad[dn.Id] {
			gr.MarkLost(m, fmt.Errorf("datanode %s failed this reader before", dn.Id))
		}
	}
	r.mu.Unlock()
	if err := gr.ReadAt(dst, off); err != nil {
		if cerr := r.ctx.Err(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("%w for %s/%s/%s block group %s at %d: %w", ErrCorruptRead, r.key.Volume, r.key.Bucket, r.key.Name,
			wireBlock(bl.BlockId), off, err)
	}
	return nil
}
