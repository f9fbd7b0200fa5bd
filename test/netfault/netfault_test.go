package netfault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/test/procs"
)

var strato string

func TestMain(m *testing.M) {
	Main() // a client process: runs its mode and exits
	dir, err := os.MkdirTemp("", "strato-netfault-bin-")
	if err != nil {
		panic(err)
	}
	if strato, err = procs.Build(dir, "../../cmd/strato"); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// requireNetns skips the test on a machine without root or ip netns,
// unless STRATO_REQUIRE_NETNS=1 (CI) makes that a failure.
func requireNetns(t *testing.T) {
	if err := Available(); err != nil {
		if os.Getenv("STRATO_REQUIRE_NETNS") == "1" {
			t.Fatalf("STRATO_REQUIRE_NETNS=1 but %v", err)
		}
		t.Skipf("skipping the multi-host fault test: %v (run as root with iproute2)", err)
	}
}

// runDir is a directory for one run's data, logs and histories; it is
// kept, and its path printed, when the test fails.
func runDir(t *testing.T, name string) string {
	dir, err := os.MkdirTemp("", "strato-netfault-"+name+"-")
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("STRATO_NETFAULT_KEEP") == "1" {
			t.Logf("run directory kept: %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

func helper(t *testing.T) string {
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

// seedFromEnv returns $STRATO_NETFAULT_SEED, or a random seed.
func seedFromEnv(t *testing.T) uint64 {
	if s := os.Getenv("STRATO_NETFAULT_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "STRATO_NETFAULT_SEED")
		return seed
	}
	return rand.Uint64() % 1_000_000
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	if s := os.Getenv(name); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, name)
		return d
	}
	return def
}

func runScenario(t *testing.T, seed uint64, d time.Duration) *ScenarioResult {
	dir := runDir(t, fmt.Sprint("seed", seed))
	res, err := RunScenario(t.Context(), ScenarioOptions{Seed: seed, Duration: d, Dir: dir, Strato: strato, Helper: helper(t), Logf: t.Logf})
	rerun := fmt.Sprintf("rerun with: STRATO_NETFAULT_SEED=%d go test ./test/netfault -run TestFaultScenario -v", seed)
	require.NoError(t, err, "seed %d did not run to the end; %s", seed, rerun)
	for _, c := range res.Crashes {
		t.Errorf("seed %d: %s", seed, c)
	}
	for _, p := range res.Report.Problems {
		t.Errorf("seed %d: %s", seed, p)
	}
	if res.Report.Linearizable != porcupine.Ok {
		t.Errorf("seed %d: history not linearizable (%s); porcupine's view: %s; %s", seed, res.Report.Linearizable, res.Visualization, rerun)
	}
	return res
}

// TestFaultScenario runs one seeded scenario (random unless
// STRATO_NETFAULT_SEED is set) of STRATO_NETFAULT_DURATION (default 25s):
// three meta replicas, three datanodes and two client hosts, faults
// drawn from the seed, then the history's check.
func TestFaultScenario(t *testing.T) {
	requireNetns(t)
	seed := seedFromEnv(t)
	t.Logf("seed %d", seed)
	res := runScenario(t, seed, envDuration(t, "STRATO_NETFAULT_DURATION", 25*time.Second))
	require.NotEmpty(t, res.Faults, "no fault was injected")
	require.Positive(t, res.Report.OKs, "no operation succeeded")
	require.Positive(t, res.FollowerReads, "the history holds reads served by followers")

	// The check is not vacuous: the same history with one read changed,
	// or one acknowledged unique creation dropped from the final listing,
	// fails it.
	acked := map[string]bool{}
	for _, op := range res.History {
		if op.Part == "u" && op.Outcome == OK {
			acked[op.Name] = true
		}
	}
	tampered := make([]*Op, len(res.History))
	changed, dropped := false, false
	for i, op := range res.History {
		c := *op
		switch {
		case !changed && c.Outcome == OK && (c.Kind == "read" || c.Kind == "get"):
			c.Got, changed = "tampered", true
		case c.Kind == "ulist":
			c.Names = slices.DeleteFunc(slices.Clone(c.Names), func(n string) bool {
				drop := !dropped && acked[n]
				dropped = dropped || drop
				return drop
			})
		}
		tampered[i] = &c
	}
	require.True(t, changed && dropped, "the history has a successful read and unique names")
	bad := Check(tampered, time.Minute)
	require.Equal(t, porcupine.Illegal, bad.Linearizable, "a tampered read passed: %s", bad)
	require.NotEmpty(t, bad.Problems, "a dropped unique name passed")
}

func runDatanodeKill(t *testing.T, seed uint64) *DatanodeKillResult {
	dir := runDir(t, fmt.Sprint("dnkill-seed", seed))
	res, err := RunDatanodeKill(t.Context(), DatanodeKillOptions{Seed: seed, Dir: dir, Strato: strato, Helper: helper(t), Logf: t.Logf,
		Duration: envDuration(t, "STRATO_DNKILL_DURATION", 10*time.Second)})
	rerun := fmt.Sprintf("rerun with: STRATO_NETFAULT_SEED=%d go test ./test/netfault -run TestDatanodeKill -v", seed)
	require.NoError(t, err, "seed %d did not run to the end; %s", seed, rerun)
	for _, c := range res.Crashes {
		t.Errorf("seed %d: %s", seed, c)
	}
	for _, v := range []*VerifyReport{res.Victim, res.Final} {
		for _, p := range v.Problems {
			t.Errorf("seed %d: %s", seed, p)
		}
	}
	if !res.OK() {
		t.Errorf("seed %d: SIGKILL of datanode d%d (%s) %v into the writes; %s", seed, res.Kill.Victim+1, res.VictimID, res.Kill.At, rerun)
	}
	return res
}

// TestDatanodeKill runs the single-datanode variant of the fault scenarios
// for one seed (random unless STRATO_NETFAULT_SEED is set): four datanodes,
// writers on two client hosts, one datanode killed with SIGKILL mid-write
// and started again. No acknowledged key or hsynced prefix may be lost, on
// the killed datanode's own replicas as on the cluster, and every container
// must be whole again within 90s. The writers run for
// $STRATO_DNKILL_DURATION (default 10s). See RunDatanodeKill.
func TestDatanodeKill(t *testing.T) {
	requireNetns(t)
	seed := seedFromEnv(t)
	t.Logf("seed %d", seed)
	res := runDatanodeKill(t, seed)
	// The scenario is not vacuous: keys of every kind were acknowledged,
	// and the victim held some of them.
	require.Positive(t, res.Writes.Closed, "no key was closed")
	require.Positive(t, res.Writes.Open, "no hsynced key was left open")
	require.Positive(t, res.Victim.ReplicaReads, "the killed datanode held no acknowledged block")
}

// TestSoak runs scenarios back to back for $STRATO_SOAK_DURATION (make
// soak); it is skipped when that is not set. Each scenario lasts
// $STRATO_NETFAULT_DURATION (default 60s); after every
// $STRATO_SOAK_DNKILL_EVERY-th (default 3; 0: never) the datanode-kill
// scenario runs with the same seed. A summary goes to $STRATO_SOAK_REPORT
// when set.
func TestSoak(t *testing.T) {
	total := envDuration(t, "STRATO_SOAK_DURATION", 0)
	if total == 0 {
		t.Skip("set STRATO_SOAK_DURATION (make soak) to run the soak")
	}
	requireNetns(t)
	each := envDuration(t, "STRATO_NETFAULT_DURATION", 60*time.Second)
	dnEvery := 3
	if v := os.Getenv("STRATO_SOAK_DNKILL_EVERY"); v != "" {
		var err error
		dnEvery, err = strconv.Atoi(v)
		require.NoError(t, err, "STRATO_SOAK_DNKILL_EVERY")
	}
	seed := seedFromEnv(t)
	start := time.Now()
	var lines []string
	var scenarios, dnkills, ops, unknown, faults, keys int
	for n := 0; time.Since(start) < total; n++ {
		s := seed + uint64(n)
		var res *ScenarioResult
		ok := t.Run(fmt.Sprint("seed", s), func(t *testing.T) { res = runScenario(t, s, each) })
		scenarios++
		if res != nil && res.Report != nil {
			ops += res.Report.Ops
			unknown += res.Report.Unknowns
			faults += len(res.Faults)
			lines = append(lines, fmt.Sprintf("seed %d: %d faults; %s; ok=%v", s, len(res.Faults), res.Report, ok))
		} else {
			lines = append(lines, fmt.Sprintf("seed %d: did not finish", s))
		}
		if dnEvery <= 0 || n%dnEvery != dnEvery-1 || time.Since(start) >= total {
			continue
		}
		var dres *DatanodeKillResult
		ok = t.Run(fmt.Sprint("dnkill-seed", s), func(t *testing.T) { dres = runDatanodeKill(t, s) })
		dnkills++
		if dres != nil {
			keys += dres.Writes.Closed + dres.Writes.Open
			lines = append(lines, fmt.Sprintf("datanode kill, seed %d: SIGKILL d%d %v into the writes; %s; victim: %s; cluster: %s; ok=%v",
				s, dres.Kill.Victim+1, dres.Kill.At.Round(time.Millisecond), dres.Writes, dres.Victim, dres.Final, ok))
		} else {
			lines = append(lines, fmt.Sprintf("datanode kill, seed %d: did not finish", s))
		}
	}
	summary := fmt.Sprintf("soak of %v: %d scenarios, %d faults, %d operations (%d unknown); %d datanode kills, %d acknowledged keys\n%s\n",
		time.Since(start).Round(time.Second), scenarios, faults, ops, unknown, dnkills, keys, strings.Join(lines, "\n"))
	t.Log(summary)
	if p := os.Getenv("STRATO_SOAK_REPORT"); p != "" {
		require.NoError(t, os.WriteFile(p, []byte(summary), 0o644))
	}
}

// TestFailover measures the failover time over $STRATO_FAILOVER_KILLS
// leader kills (make failover); it is skipped when that is not set.
func TestFailover(t *testing.T) {
	kills, _ := strconv.Atoi(os.Getenv("STRATO_FAILOVER_KILLS"))
	if kills <= 0 {
		t.Skip("set STRATO_FAILOVER_KILLS (make failover) to measure failover")
	}
	requireNetns(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Minute)
	defer cancel()
	res, err := MeasureFailover(ctx, FailoverOptions{Kills: kills, Dir: runDir(t, "failover"), Strato: strato, Helper: helper(t), Logf: t.Logf})
	require.NoError(t, err)
	mm, mx := Summary(res.Meta)
	km, kx := Summary(res.Key)
	t.Logf("failover over %d leader kills: directory create median %v max %v; key put median %v max %v",
		len(res.Meta), mm.Round(time.Millisecond), mx.Round(time.Millisecond), km.Round(time.Millisecond), kx.Round(time.Millisecond))
}

// TestPausedLeaderRefusesNothingStale: a leader paused (SIGSTOP) while the
// others elect a successor and create a volume, then resumed with a
// CreateBucket in that volume waiting in its socket, must not answer "volume
// not found" from its stale state: either it learns it was deposed first
// and says NotLeader, or it checks with the group before refusing.
func TestPausedLeaderRefusesNothingStale(t *testing.T) {
	requireNetns(t)
	c, err := StartCluster(ClusterOptions{Dir: runDir(t, "stale"), Strato: strato, Helper: helper(t), Clients: 1})
	require.NoError(t, err)
	defer c.Close()
	ctx := t.Context()
	for trial := range 2 {
		leader, err := c.WaitStable(ctx, 30*time.Second)
		require.NoError(t, err)
		old := c.Metas[leader]
		vol := fmt.Sprintf("vol%d", trial)
		outc := make(chan string, 1)
		start := time.Now()
		go func() {
			out, err := c.helperOutput(ctx, "c1", "createbucket", WorkConfig{Meta: []string{c.MetaAddrs[leader]}, Volume: vol, Bucket: "bkt", Delay: 8 * time.Second}, time.Minute)
			if err != nil {
				out = []byte(err.Error())
			}
			outc <- string(out)
		}()
		time.Sleep(500 * time.Millisecond)
		require.NoError(t, old.Signal(syscall.SIGSTOP))
		require.Eventually(t, func() bool { l, _ := c.Leader(ctx); return l >= 0 && l != leader }, 20*time.Second, 100*time.Millisecond)
		require.NoError(t, c.runHelper(ctx, "c1", "createvolume", WorkConfig{Meta: c.MetaAddrs, Volume: vol}, time.Minute))
		require.Less(t, time.Since(start), 8*time.Second, "the successor took too long: the request would not wait in the paused replica's socket")
		time.Sleep(time.Until(start.Add(9 * time.Second)))
		require.NoError(t, old.Signal(syscall.SIGCONT))
		out := <-outc
		t.Logf("trial %d: %s answered %s", trial, old.Host, strings.TrimSpace(out))
		require.False(t, strings.HasPrefix(out, "NotFound"), "trial %d: the resumed former leader refused from its stale state: %s", trial, out)
	}
}
