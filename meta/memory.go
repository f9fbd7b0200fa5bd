// What meta holds in memory, by cache, against its bounds (Options): the
// namespace's directory and apply caches, Pebble's block cache and
// memtables, and the Raft log's entry cache. Metrics reports them.

package meta

// MemoryMetrics is about what each of meta's caches holds, and its bound,
// in bytes.
type MemoryMetrics struct {
	DirCache, DirCacheMax         int64 // readers' directory entries and bucket records
	ApplyCache, ApplyCacheMax     int64 // Apply's cache, snapshot states included
	BlockCache, BlockCacheMax     int64 // Pebble's block cache
	Memtables, MemtablesMax       int64 // Pebble's memtables (MemTableSize each; writes stall at two queued)
	RaftLogCache, RaftLogCacheMax int64 // recent Raft log entries
}

// memoryMetrics samples what the caches hold.
func (s *Server) memoryMetrics() MemoryMetrics {
	cs := s.ns.CacheStats()
	m := MemoryMetrics{DirCache: cs.DirBytes, DirCacheMax: cs.DirMax, ApplyCache: cs.ApplyBytes, ApplyCacheMax: cs.ApplyMax}
	if s.db != nil {
		pm := s.db.Metrics()
		m.BlockCache, m.Memtables = pm.BlockCache.Size, int64(pm.MemTable.Size)
	}
	m.BlockCacheMax = s.opts.CacheSize
	m.MemtablesMax = 3 * s.opts.MemTableSize
	m.RaftLogCache, m.RaftLogCacheMax = s.node.LogCacheBytes()
	return m
}
