package namespace

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// ConfigurePebble sets what the namespace's access pattern needs in the
// options of the database it lives in, where the caller left them unset.
// Most namespace reads are point lookups of keys that do not exist (is there
// a directory with this name? a file? a key to replace?): without Bloom
// filters each of them reads a block of every sstable level it may be in.
//
//   - Bloom filters (10 bits per key) on every level.
//   - A 256 MiB block cache (Pebble's default is 8 MiB) and 8 MiB memtables.
//     meta's server sets both from its Options (512 MiB and 32 MiB by
//     default): each flush of a small memtable started a compaction that
//     rewrote a small database's last level, and 32 MiB renamed 24% faster
//     than 8 MiB (docs/benchmarks.md, meta, 2026-11-29).
func ConfigurePebble(o *pebble.Options) {
	if o.Levels[0].FilterPolicy == nil {
		for i := range o.Levels {
			if o.Levels[i].FilterPolicy == nil {
				o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
			}
		}
	}
	if o.Cache == nil && o.CacheSize == 0 {
		o.CacheSize = 256 << 20
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 8 << 20
	}
}
