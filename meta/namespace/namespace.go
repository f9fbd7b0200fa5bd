package namespace

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/proto/strato/v1"
)

// Options configure a Namespace. The zero value is usable after
// EnsureDefaults.
type Options struct {
	// OpenKeyTTL is how long a key may stay open (uncommitted) before the
	// expiry command removes it and frees its blocks. Default 7 days
	// (Ozone's ozone.om.open.key.expire.threshold).
	OpenKeyTTL time.Duration
	// DefaultReplication applies to buckets created without one. Default THREE.
	DefaultReplication stratov1.ReplicationFactor
	// DefaultBlockSize applies to buckets created without one. Default 256 MiB.
	DefaultBlockSize int64
	// DefaultListLimit is the page size of list calls that give none. Default 1000.
	DefaultListLimit int
	// MaxListLimit caps the page size of list calls. Default 10000.
	MaxListLimit int
	// DirCacheEntries bounds each of the two caches of directory entries
	// ((parent ID, name) → directory ID) used by path resolution: the
	// readers' and Apply's. Default 1<<18; negative disables them.
	DirCacheEntries int
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.OpenKeyTTL == 0 {
		o.OpenKeyTTL = 7 * 24 * time.Hour
	}
	if o.DefaultReplication == stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED {
		o.DefaultReplication = stratov1.ReplicationFactor_REPLICATION_THREE
	}
	if o.DefaultBlockSize == 0 {
		o.DefaultBlockSize = 256 << 20
	}
	if o.DefaultListLimit == 0 {
		o.DefaultListLimit = 1000
	}
	if o.MaxListLimit == 0 {
		o.MaxListLimit = 10000
	}
	if o.DirCacheEntries == 0 {
		o.DirCacheEntries = 1 << 18
	}
	return o
}

// Validate reports an invalid option.
func (o *Options) Validate() error {
	switch {
	case o.OpenKeyTTL <= 0:
		return fmt.Errorf("namespace: OpenKeyTTL %v must be positive", o.OpenKeyTTL)
	case !validReplication(o.DefaultReplication):
		return fmt.Errorf("namespace: DefaultReplication %v must be ONE or THREE", o.DefaultReplication)
	case o.DefaultBlockSize <= 0:
		return fmt.Errorf("namespace: DefaultBlockSize %d must be positive", o.DefaultBlockSize)
	case o.DefaultListLimit <= 0 || o.MaxListLimit < o.DefaultListLimit:
		return fmt.Errorf("namespace: list limits %d/%d: need 0 < DefaultListLimit <= MaxListLimit", o.DefaultListLimit, o.MaxListLimit)
	}
	return nil
}

// BlockAllocator allocates blocks for keys being written. meta/cluster
// implements it in production.
type BlockAllocator interface {
	// AllocateBlock returns a new block of replication repl, or, when e
	// is set, a block group of that erasure code (its pipeline's members
	// in member order) (the location with its pipeline, length 0),
	// avoiding everything in exclude (may be nil). sizeHint is the number
	// of bytes the writer expects to put in it.
	AllocateBlock(ctx context.Context, repl stratov1.ReplicationFactor, e *stratov1.ErasureCodingRecord, sizeHint int64, exclude *stratov1.ExcludeList) (*stratov1.BlockRecord, error)
}

// PrepareEnv is what Prepare takes from the leader: its clock, its block
// allocator and its source of secrets. (Object IDs are not here: apply
// assigns them, see doc.go.)
type PrepareEnv struct {
	Now       time.Time
	Allocator BlockAllocator
	// Rand generates S3 access keys and secrets (crypto/rand's Reader in
	// production). nil: CreateS3Key must name both.
	Rand io.Reader
}

// Namespace prepares and applies namespace commands and serves reads. See
// doc.go for its concurrency rules.
type Namespace struct {
	opts   Options
	cache  *dirCache   // readers'
	acache *applyCache // Apply's (one goroutine)
}

// New returns a Namespace with the given options (defaults filled in).
func New(opts Options) (*Namespace, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ns := &Namespace{opts: opts}
	if opts.DirCacheEntries > 0 {
		ns.cache = newDirCache(opts.DirCacheEntries)
		ns.acache = newApplyCache(opts.DirCacheEntries)
	}
	return ns, nil
}

// Options returns the options in use.
func (ns *Namespace) Options() Options { return ns.opts }

func validReplication(r stratov1.ReplicationFactor) bool {
	return r == stratov1.ReplicationFactor_REPLICATION_ONE || r == stratov1.ReplicationFactor_REPLICATION_THREE
}

func validChecksum(t stratov1.ChecksumType) bool {
	return t >= stratov1.ChecksumType_CHECKSUM_NONE && t <= stratov1.ChecksumType_CHECKSUM_MD5 &&
		checksum.Type(t-1).Valid()
}

// ChecksumType converts a bucket's or key's checksum type to checksum.Type
// (CHECKSUM_TYPE_UNSPECIFIED is the default type).
func ChecksumType(t stratov1.ChecksumType) checksum.Type {
	if t == stratov1.ChecksumType_CHECKSUM_TYPE_UNSPECIFIED {
		return checksum.DefaultType
	}
	return checksum.Type(t - 1)
}
