package client

import (
	"errors"
	"fmt"
	"strings"

	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/proto/strato/v1"
)

// ErrErasureCoded: what was asked is not done on erasure coded keys
// (Hflush and Hsync: parity covers whole stripes; docs/ec.md).
var ErrErasureCoded = errors.New("client: not done on erasure coded keys")

// ParseReplication reads how a bucket or key is to be stored: ONE or THREE
// (also 1 and 3), or an erasure coding config such as rs-6-3-1024k
// (ec.Parse). Exactly one of the results is set.
func ParseReplication(s string) (stratov1.ReplicationFactor, *stratov1.ErasureCoding, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "ONE", "1", "REPLICATION_ONE":
		return stratov1.ReplicationFactor_REPLICATION_ONE, nil, nil
	case "THREE", "3", "REPLICATION_THREE":
		return stratov1.ReplicationFactor_REPLICATION_THREE, nil, nil
	}
	c, err := ec.Parse(s)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: replication %q is not ONE, THREE or an erasure coding config "+
			"(rs-3-2-1024k, rs-6-3-1024k, rs-10-4-1024k, xor-2-1-1024k): %w", ErrInvalid, s, err)
	}
	return 0, ErasureCoding(c), nil
}

// ErasureCoding is the API's form of an erasure coding config
// (ec.ToProto).
func ErasureCoding(c ec.Config) *stratov1.ErasureCoding { return ec.ToProto(c) }

// ECConfig is the erasure code of an API config (ec.FromProto; cell size
// 0: 1 MiB); an invalid one is ErrInvalid.
func ECConfig(e *stratov1.ErasureCoding) (ec.Config, error) {
	c, err := ec.FromProto(e)
	if err != nil {
		return ec.Config{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return c, nil
}

// Redundancy says how a bucket or key is stored: "THREE", "ONE", or its
// erasure coding config (rs-6-3-1024k).
func Redundancy(repl stratov1.ReplicationFactor, e *stratov1.ErasureCoding) string {
	if e != nil {
		if c, err := ECConfig(e); err == nil {
			return c.String()
		}
		return fmt.Sprintf("invalid erasure coding %v", e)
	}
	return strings.TrimPrefix(repl.String(), "REPLICATION_")
}
