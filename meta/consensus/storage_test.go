package consensus

import (
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// TestLogCacheBytesBounded: the in-memory log cache keeps its count of
// bytes exact and stays within LogCacheBytes (the newest entry always
// cached), whatever appends, truncations and compactions do.
func TestLogCacheBytesBounded(t *testing.T) {
	s := &logStore{cacheMax: defaultCacheEntries, cacheMaxBytes: 10 << 10, snaps: map[uint64]pinnedSnapshot{}}
	check := func() {
		t.Helper()
		if got := costOf(s.cache); got != s.cacheBytes {
			t.Fatalf("cacheBytes %d, entries cost %d", s.cacheBytes, got)
		}
		if s.cacheBytes > s.cacheMaxBytes && len(s.cache) > 1 {
			t.Fatalf("cache holds %d bytes in %d entries, over %d", s.cacheBytes, len(s.cache), s.cacheMaxBytes)
		}
	}
	next := uint64(1)
	add := func(n, size int) {
		var ents []*pb.Entry
		for range n {
			ents = append(ents, &pb.Entry{Index: proto.Uint64(next), Term: proto.Uint64(1), Data: make([]byte, size)})
			next++
		}
		s.commitEntries(ents)
		check()
	}
	add(5, 100)
	add(50, 1000) // past the bound: the oldest go
	if len(s.cache) == 0 || s.cache[len(s.cache)-1].GetIndex() != next-1 {
		t.Fatal("the newest entries stay cached")
	}
	add(1, 64<<10) // one entry larger than the bound stays, alone
	if len(s.cache) != 1 {
		t.Fatalf("%d entries cached", len(s.cache))
	}
	add(3, 10)
	next -= 2 // a new leader's entries replace the last two
	add(2, 20)
	s.commitCompaction(next-3, 1)
	check()
	s.commitCompaction(next, 1)
	check()
	if len(s.cache) != 0 {
		t.Fatal("a compaction past the cache empties it")
	}
}
