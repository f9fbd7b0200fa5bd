package namespace

import (
	"fmt"
	"strings"

	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/proto/strato/v1"
)

// groupLocations marks the blocks of an erasure coded key (e set) as block
// groups: each pipeline's members are in member order, and the pipeline
// says so with its config (docs/ec.md). It returns ls.
func groupLocations(ls []*stratov1.BlockLocation, e *stratov1.ErasureCodingRecord) []*stratov1.BlockLocation {
	if e == nil {
		return ls
	}
	for _, l := range ls {
		if l.Pipeline != nil {
			l.Pipeline.ErasureCoding = ErasureCoding(e)
		}
	}
	return ls
}

// ecRecord validates an erasure coding config of a request and returns it
// as stored (cell size filled in), or nil when e is nil.
func ecRecord(e *stratov1.ErasureCoding) (*stratov1.ErasureCodingRecord, error) {
	if e == nil {
		return nil, nil
	}
	r := &stratov1.ErasureCodingRecord{Codec: e.GetCodec(), Data: e.GetData(), Parity: e.GetParity(), CellSize: e.GetCellSize()}
	if r.CellSize == 0 {
		r.CellSize = ec.DefaultCellSize
	}
	if _, err := ECConfig(r); err != nil {
		return nil, err
	}
	return r, nil
}

// ECConfig is the erasure code of a stored config, validated.
func ECConfig(r *stratov1.ErasureCodingRecord) (ec.Config, error) {
	c, err := ec.FromProto(r)
	if err != nil {
		return ec.Config{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return c, nil
}

// ErasureCoding is the API's view of a stored config (nil for nil).
func ErasureCoding(r *stratov1.ErasureCodingRecord) *stratov1.ErasureCoding {
	if r == nil {
		return nil
	}
	return &stratov1.ErasureCoding{Codec: r.Codec, Data: r.Data, Parity: r.Parity, CellSize: r.CellSize}
}

// keyRedundancy decides how a key is stored: an erasure coding config of
// its own wins, then a replication of its own, then the bucket's erasure
// coding, then the bucket's replication. It returns the replication
// (UNSPECIFIED for an erasure coded key) and the erasure coding (nil for a
// replicated key).
func keyRedundancy(repl stratov1.ReplicationFactor, e *stratov1.ErasureCodingRecord, bk *stratov1.BucketRecord) (stratov1.ReplicationFactor, *stratov1.ErasureCodingRecord, error) {
	switch {
	case e != nil:
		if _, err := ECConfig(e); err != nil {
			return 0, nil, err
		}
		return stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED, e, nil
	case repl != stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED:
	case bk.ErasureCoding != nil:
		return stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED, bk.ErasureCoding, nil
	default:
		repl = bk.Replication
	}
	if !validReplication(repl) {
		return 0, nil, fmt.Errorf("%w: replication %v must be ONE or THREE", ErrInvalid, repl)
	}
	return repl, nil, nil
}

// redundancyName is how a key is stored, as the CLI writes it: ONE,
// THREE or an erasure coding config.
func redundancyName(repl stratov1.ReplicationFactor, e *stratov1.ErasureCodingRecord) string {
	if e == nil {
		return strings.TrimPrefix(repl.String(), "REPLICATION_")
	}
	if c, err := ECConfig(e); err == nil {
		return c.String()
	}
	return e.String()
}
