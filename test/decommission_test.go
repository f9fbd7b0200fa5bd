package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecommissionSurvivesMetaFailover: three meta replicas and four
// datanodes as processes. A datanode is decommissioned while holding data
// whose copies are slowed down; the meta leader is killed mid-way; the
// new leader finishes the decommission (the datanode ends DECOMMISSIONED,
// every file reads back). After the whole cluster restarts the datanode
// is still DECOMMISSIONED, and takes no new writes.
func TestDecommissionSurvivesMetaFailover(t *testing.T) {
	root := t.TempDir()
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	var peers []string
	for i, a := range addrs {
		peers = append(peers, fmt.Sprintf("%d=%s", i+1, a))
	}
	metaList := strings.Join(addrs, ",")
	var metas []*proc
	for i, a := range addrs {
		// A short StaleAfter is a short settle period for a new leader.
		metas = append(metas, startMeta(t, filepath.Join(root, fmt.Sprint("meta", i+1)), a,
			"--id", fmt.Sprint(i+1), "--peers", strings.Join(peers, ","), "--stale-after", "2s", "--dead-after", "2m"))
	}
	var dns []*proc
	for i := range 4 {
		// Copies pushed at 1 MiB/s: the decommission outlasts the
		// leader's kill.
		dns = append(dns, startDatanode(t, filepath.Join(root, fmt.Sprint("dn", i)), metaList,
			"--heartbeat-interval", "200ms", "--replication-bandwidth", fmt.Sprint(1<<20)))
	}
	all := append(append([]*proc{}, metas...), dns...)
	waitReady(t, metaList, all...)

	// Every datanode holds some of the files' replicas (three of four).
	files := putFiles(t, root, metaList, 6, 512<<10)
	readAll := func() {
		t.Helper()
		for name, data := range files {
			getFile(t, root, metaList, name, data)
		}
	}

	idb, err := os.ReadFile(filepath.Join(root, "dn0", "datanode.id"))
	require.NoError(t, err)
	id := strings.TrimSpace(string(idb))
	out, err := cli(metaList, "admin", "datanode", "decommission", id)
	require.NoError(t, err, out)
	require.Equal(t, "DECOMMISSIONING", opStateOf(t, metaList, id))

	// Mid-way: kill the leader.
	leader := metaLeader(t, metaList)
	killAll(metas[leader])
	t.Logf("killed meta %d, the leader, with %s decommissioning", leader+1, id)
	if !assert.Eventually(t, func() bool { return opStateOf(t, metaList, id) == "DECOMMISSIONED" }, 2*time.Minute, 500*time.Millisecond,
		"the new leader finishes the decommission") {
		for _, args := range [][]string{{"admin", "datanode", "list"}, {"admin", "container", "list"}} {
			out, _ := cli(metaList, args...)
			t.Logf("%v:\n%s", args, out)
		}
		ids, _ := cli(metaList, "admin", "container", "list", "--json")
		t.Logf("containers: %s", ids)
		t.FailNow()
	}
	readAll()

	// The whole cluster restarts: the datanode stays DECOMMISSIONED.
	for _, p := range all {
		if p.running() {
			p.stop()
		}
	}
	for _, p := range all {
		p.start()
	}
	require.Eventually(t, func() bool { return opStateOf(t, metaList, id) == "DECOMMISSIONED" }, time.Minute, 200*time.Millisecond)
	// ...and stays so once the leader has settled and written again.
	waitReady(t, metaList, all...)
	out, err = cli(metaList, "fs", "put", filepath.Join(root, "in0"), "/vol/bkt/after")
	require.NoError(t, err, out)
	out, err = cli(metaList, "sh", "key", "info", "/vol/bkt/after", "--json")
	require.NoError(t, err, out)
	require.Contains(t, out, "dn-", "the key's block locations")
	require.NotContains(t, out, id, "a decommissioned datanode takes no writes")
	require.Equal(t, "DECOMMISSIONED", opStateOf(t, metaList, id))
	readAll()
}

// opStateOf is datanode id's operational state as `strato admin datanode
// list` shows it ("" when it is not listed or meta does not answer).
func opStateOf(t *testing.T, metas, id string) string {
	out, err := cli(metas, "admin", "datanode", "list")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[0] == id {
			return f[4]
		}
	}
	return ""
}

// metaLeader is the index in metas (comma-separated) of the replica that
// leads.
func metaLeader(t *testing.T, metas string) int {
	var leader int
	require.Eventually(t, func() bool {
		for i, a := range strings.Split(metas, ",") {
			out, err := cli(a, "admin", "meta", "status")
			if err != nil {
				continue
			}
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) > 2 && f[1] == a && f[2] == "leader" {
					leader = i
					return true
				}
			}
		}
		return false
	}, 30*time.Second, 100*time.Millisecond)
	return leader
}
