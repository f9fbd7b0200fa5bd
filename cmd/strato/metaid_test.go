package main

import "testing"

// TestPeerOfHost: a meta replica without --id takes the key of the one
// peer its host name names (a StatefulSet pod's name in its stable DNS
// name), and none when no peer or several do.
func TestPeerOfHost(t *testing.T) {
	peers := map[uint64]string{
		1: "strato-meta-0.strato-meta:9860",
		2: "strato-meta-1.strato-meta.strato.svc.cluster.local:9860",
		3: "strato-meta-2:9860",
	}
	for _, c := range []struct {
		host string
		id   uint64
		ok   bool
	}{
		{"strato-meta-0", 1, true},
		{"strato-meta-1", 2, true},
		{"strato-meta-2", 3, true},
		{"strato-meta", 0, false},
		{"strato-meta-3", 0, false},
		{"", 0, false},
	} {
		id, ok := peerOfHost(peers, c.host)
		if id != c.id || ok != c.ok {
			t.Errorf("peerOfHost(%q) = %d, %v; want %d, %v", c.host, id, ok, c.id, c.ok)
		}
	}
	same := map[uint64]string{1: "127.0.0.1:9860", 2: "127.0.0.1:9960"}
	if id, ok := peerOfHost(same, "127.0.0.1"); ok {
		t.Errorf("two peers on one host: got %d, want none", id)
	}
	// An --id given anywhere wins; none found keeps the default.
	if id := idOf(5, "env STRATO_META_ID", peers); id != 5 {
		t.Errorf("idOf with --id 5 from the environment = %d", id)
	}
	if id := idOf(1, "default", same); id != 1 {
		t.Errorf("idOf without a peer of this host = %d, want the default 1", id)
	}
}
