package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestLifecycleRoundsOnMetaClock: on meta's clock, keys written at
// midnight with a one-day rule stay until the next midnight and go after
// it; a round over more keys than a tick deletes (LifecycleOpsPerTick)
// spreads over ticks; keys outside the rule's prefix stay; the counters
// say what was done.
func TestLifecycleRoundsOnMetaClock(t *testing.T) {
	clock := fakeClock()
	c, cl := startLifecycleMeta(t, minicluster.Options{Clock: clock}, 5*time.Second, 0)
	ctx := t.Context()
	const n = 300
	put := func(k string) { putEmptyKey(t, cl, k) }
	for i := range n {
		put(fmt.Sprintf("tmp/%04d", i))
	}
	put("keep")
	_, err := cl.UpdateBucket(ctx, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", Lifecycle: &stratov1.Lifecycle{
		Rules: []*stratov1.LifecycleRule{{Id: "tmp", Enabled: true, Prefix: "tmp/", ExpirationDays: 1}}}})
	require.NoError(t, err)
	count := func() int {
		total := 0
		for after := ""; ; {
			resp, err := cl.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "vol", Bucket: "obs", Prefix: "tmp/", StartAfter: after})
			require.NoError(t, err)
			total += len(resp.GetKeys())
			if !resp.GetTruncated() {
				return total
			}
			after = resp.GetNextStartAfter()
		}
	}

	// Rounds five seconds apart, for a day less ten seconds: nothing is due.
	for range 24*6 - 1 {
		clock.Advance(10 * time.Minute)
		time.Sleep(2 * time.Millisecond)
	}
	clock.Advance(10*time.Minute - 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	require.Equal(t, n, count())
	st := c.Meta().LifecycleStats()
	require.Positive(t, st.Rounds)
	require.Zero(t, st.Expired)

	// Past midnight, a round deletes them, a bounded batch a tick (the
	// ticker's period is a second: one tick an advance).
	var batches []int
	for left, i := n, 0; left > 0; i++ {
		require.Less(t, i, 200, "keys left: %d", left)
		clock.Advance(time.Second)
		// The tick is over when the count stops moving.
		now := count()
		for stable := 0; stable < 10; time.Sleep(20 * time.Millisecond) {
			if c := count(); c != now {
				now, stable = c, 0
				continue
			}
			stable++
		}
		if now != left {
			batches = append(batches, left-now)
		}
		left = now
	}
	t.Logf("deleted per tick: %v", batches)
	require.Greater(t, len(batches), 1, "the round spread over ticks")
	for _, b := range batches {
		require.LessOrEqual(t, b, meta.DefaultLifecycleOpsPerTick, "LifecycleOpsPerTick")
	}
	_, err = cl.Stat(ctx, "/vol/obs/keep")
	require.NoError(t, err)
	require.Equal(t, uint64(n), c.Meta().LifecycleStats().Expired)
}

// TestLifecycleAcrossLeaderChange: the meta leader is stopped in the
// middle of a lifecycle round that expires the current version of 600
// keys of a versioned bucket; the new leader's rounds finish the work,
// and every key ends with exactly one delete marker over its version:
// nothing missed, nothing expired twice (DeleteKey's if_object_id). A
// tick deletes at most 16, so the round lasts some 38 ticks (about 2 s)
// and the leader is stopped inside it however slow the test's polling.
func TestLifecycleAcrossLeaderChange(t *testing.T) {
	c, cl := startLifecycleMeta(t, minicluster.Options{MetaReplicas: 3, TickInterval: 50 * time.Millisecond}, 100*time.Millisecond, 16)
	ctx := t.Context()
	_, err := cl.UpdateBucket(ctx, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", Versioning: stratov1.BucketVersioning_VERSIONING_ENABLED})
	require.NoError(t, err)
	const n = 600
	for i := range n {
		putEmptyKey(t, cl, fmt.Sprintf("k%04d", i))
	}
	_, err = cl.UpdateBucket(ctx, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", Lifecycle: &stratov1.Lifecycle{
		Rules: []*stratov1.LifecycleRule{{Id: "all", Enabled: true, ExpirationDateUnixMs: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()}}}})
	require.NoError(t, err)

	leader := func() int {
		for i := range 3 {
			if m := c.MetaServer(i); m != nil && m.Metrics().Leader {
				return i
			}
		}
		return -1
	}
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		require.Less(t, time.Since(start), 20*time.Second, "no round began")
		if l := leader(); l >= 0 && c.MetaServer(l).LifecycleStats().Expired >= 50 {
			done := c.MetaServer(l).LifecycleStats().Expired
			require.NoError(t, c.StopMeta(l))
			t.Logf("leader %d stopped after %d expiries", l, done)
			require.Less(t, done, uint64(n), "stopped within the round")
			break
		}
	}

	versions := func() map[string][]*stratov1.KeyInfo {
		out := map[string][]*stratov1.KeyInfo{}
		req := &stratov1.ListKeyVersionsRequest{Volume: "vol", Bucket: "obs"}
		for {
			resp, err := cl.ListKeyVersions(ctx, req)
			require.NoError(t, err)
			for _, v := range resp.GetVersions() {
				out[v.GetName()] = append(out[v.GetName()], v)
			}
			if !resp.GetTruncated() {
				return out
			}
			req.KeyMarker, req.VersionIdMarker = resp.GetNextKeyMarker(), resp.GetNextVersionIdMarker()
		}
	}
	var all map[string][]*stratov1.KeyInfo
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		require.Less(t, time.Since(start), 60*time.Second, "the new leader did not finish the expiries")
		all = versions()
		done := 0
		for _, vs := range all {
			if vs[0].GetDeleteMarker() {
				done++
			}
		}
		if done == n {
			break
		}
	}
	time.Sleep(500 * time.Millisecond) // more rounds: none may expire again
	all = versions()
	require.Len(t, all, n)
	for k, vs := range all {
		require.Len(t, vs, 2, "%s: one marker over its version, no second", k)
		require.True(t, vs[0].GetDeleteMarker() && vs[0].GetIsLatest(), k)
		require.False(t, vs[1].GetDeleteMarker(), k)
	}
}

// startLifecycleMeta starts meta alone (o's replicas, clock and tick),
// lifecycle rounds every interval deleting at most opsPerTick a tick (0:
// the default), with the OBS bucket /vol/obs.
func startLifecycleMeta(t *testing.T, o minicluster.Options, interval time.Duration, opsPerTick int) (*minicluster.Cluster, *client.Client) {
	t.Helper()
	o.Dir, o.MetaOnly = t.TempDir(), true
	o.ConfigureMeta = func(_ int, mo *meta.Options) { mo.LifecycleInterval, mo.LifecycleOpsPerTick = interval, opsPerTick }
	c, err := minicluster.Start(t.Context(), o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	cl, err := client.New(client.Options{Meta: c.MetaAddrs()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	_, err = cl.CreateVolume(t.Context(), &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(t.Context(), &stratov1.CreateBucketRequest{Volume: "vol", Name: "obs", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)
	return c, cl
}

// putEmptyKey writes an empty key of /vol/obs.
func putEmptyKey(t *testing.T, cl *client.Client, key string) {
	t.Helper()
	w, err := cl.CreateKey(t.Context(), "vol", "obs", key, client.WriteOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Close())
}
