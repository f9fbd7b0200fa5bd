package netfault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// DatanodeKillOptions configure RunDatanodeKill.
type DatanodeKillOptions struct {
	// Seed fixes the victim, the moment of the kill and the writers' keys.
	Seed uint64
	// Duration is how long the writers run. Default 10s.
	Duration time.Duration
	// Dir receives data directories, logs and the writers' records.
	// Required.
	Dir string
	// Strato and Helper: see ClusterOptions. Required.
	Strato, Helper string
	// Datanodes is the number of datanode hosts. Default 4: with three,
	// a container that lost a replica would have nowhere to get it back.
	Datanodes int
	// Clients is the number of writer hosts, Workers the writers of each.
	// Defaults 2 and 2.
	Clients, Workers int
	// HealthTimeout bounds the wait, once the victim is back, for every
	// container to be whole again. Default 90s.
	HealthTimeout time.Duration
	// Logf receives progress lines. Default: none.
	Logf func(format string, args ...any)
}

func (o *DatanodeKillOptions) ensureDefaults() {
	orDefault(&o.Duration, 10*time.Second)
	orDefault(&o.Datanodes, 4)
	orDefault(&o.Clients, 2)
	orDefault(&o.Workers, 2)
	orDefault(&o.HealthTimeout, 90*time.Second)
	o.Logf = orNop(o.Logf)
}

// DatanodeKill is a seed's schedule: which datanode is killed, when.
type DatanodeKill struct {
	// Victim indexes the datanodes (host d<Victim+1>).
	Victim int
	// At is the time from the writers' start to the SIGKILL.
	At time.Duration
}

// PlanDatanodeKill draws the victim and the moment of the kill from seed:
// somewhere in the middle half of the writers' run, so that keys are closed
// both before and after it.
func PlanDatanodeKill(seed uint64, datanodes int, writers time.Duration) DatanodeKill {
	rng := rand.New(rand.NewPCG(seed, 0x646e6b696c6c)) // "dnkill"
	return DatanodeKill{
		Victim: rng.IntN(datanodes),
		At:     writers/4 + time.Duration(rng.Int64N(int64(writers/2))),
	}
}

// DatanodeKillResult is what the datanode-kill scenario found.
type DatanodeKillResult struct {
	Seed uint64
	Kill DatanodeKill
	// VictimID is the killed datanode's ID.
	VictimID string
	// Writes sums the writers' tallies; Recoveries counts the times a
	// writer moved to a new block after a pipeline failed.
	Writes     WriteTally
	Recoveries int
	// Victim is the check of the victim's own replicas, started again on
	// its data before meta could see it; Final the check of everything
	// once the cluster is whole again.
	Victim, Final *VerifyReport
	// FailedCopies are the datanodes' log lines about container copies
	// (re-replication) that failed: meta learns of such a failure only
	// when its replication timeout passes.
	FailedCopies []string
	// Crashes lists the server exits the harness did not cause.
	Crashes []string
}

// OK reports whether the scenario found nothing wrong.
func (r *DatanodeKillResult) OK() bool {
	return r.Victim != nil && r.Final != nil && len(r.Victim.Problems) == 0 && len(r.Final.Problems) == 0 &&
		r.Final.Healthy && len(r.Crashes) == 0
}

// RunDatanodeKill runs the single-datanode variant of the fault scenarios:
// writers on the client hosts write keys of one chunk, several chunks and
// several blocks, some with an hsync partway (some of those never closed),
// while one datanode is killed with SIGKILL at a moment the seed chooses;
// the writers carry on (a failed pipeline member makes a writer move to a
// new block elsewhere). Then:
//
//  1. The victim is started again on its data directory while cut off from
//     meta, and every block it holds by meta's account of an acknowledged
//     key (a closed key, or an hsynced one) is read from it alone: what a
//     PutBlock acknowledged before the kill must have survived it.
//  2. The cut is healed; the victim registers again, and meta closes what
//     the failure left open, drops the replicas that fell behind and copies
//     the containers short of replicas. Every container must be whole again
//     (see waitHealthy) within HealthTimeout.
//  3. Every acknowledged key is read back through the client, and every
//     replica meta has a report of for each of its blocks is read on its
//     own.
//
// The reports of both checks are kept in the run directory
// (verify-victim.json, verify-final.json), with the writers' records.
//
// The victim is restarted rather than left for dead: meta declares a silent
// datanode dead only after cluster.Options.DeadAfter (2 minutes, not a flag
// of strato meta), and only a dead node's replicas are copied elsewhere.
// An error means the scenario could not run to the end; its verdict is in
// the result.
func RunDatanodeKill(ctx context.Context, o DatanodeKillOptions) (*DatanodeKillResult, error) {
	o.ensureDefaults()
	kill := PlanDatanodeKill(o.Seed, o.Datanodes, o.Duration)
	res := &DatanodeKillResult{Seed: o.Seed, Kill: kill}
	if removed := RemoveStale(); len(removed) > 0 {
		o.Logf("removed namespaces left by earlier runs: %v", removed)
	}
	c, err := StartCluster(ClusterOptions{Dir: o.Dir, Strato: o.Strato, Helper: o.Helper, Datanodes: o.Datanodes, Clients: o.Clients})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	t0 := Now()
	rel := func() string { return fmt.Sprintf("%6.2fs", float64(Now()-t0)/1e9) }
	if _, err := c.WaitStable(ctx, 30*time.Second); err != nil {
		return res, err
	}
	base := WorkConfig{Meta: c.MetaAddrs, Workers: o.Workers, Duration: o.Duration, OpTimeout: 15 * time.Second, Datanodes: o.Datanodes}
	if err := c.runHelper(ctx, "c1", "dnsetup", base, 2*time.Minute); err != nil {
		return res, err
	}
	victim := c.Datanodes[kill.Victim]
	if res.VictimID, err = datanodeID(filepath.Join(o.Dir, victim.Host)); err != nil {
		return res, err
	}
	o.Logf("%s cluster up with %d datanodes; seed %d: SIGKILL %s (%s) %v into %v of writes",
		rel(), o.Datanodes, o.Seed, victim.Host, res.VictimID, kill.At, o.Duration)

	var records []string
	errc := make(chan error, len(c.Clients))
	outs := make(chan []byte, len(c.Clients))
	for i, h := range c.Clients {
		cfg := base
		cfg.Host, cfg.Seed, cfg.Out = h, o.Seed*100+uint64(i), filepath.Join(o.Dir, "records-"+h+".jsonl")
		records = append(records, cfg.Out)
		go func() {
			out, err := c.helperOutput(ctx, h, "dnwrite", cfg, o.Duration+cfg.OpTimeout+time.Minute)
			outs <- out
			errc <- err
		}()
	}
	select {
	case <-time.After(kill.At):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	if err := victim.Signal(syscall.SIGKILL); err != nil {
		return res, err
	}
	o.Logf("%s SIGKILL %s", rel(), victim.Host)
	var werr []error
	for range c.Clients {
		werr = append(werr, <-errc)
		var t WriteTally
		if err := json.Unmarshal(<-outs, &t); err == nil {
			res.Writes.add(t)
		}
	}
	if err := errors.Join(werr...); err != nil {
		return res, err
	}
	for _, h := range c.Clients {
		log, _ := os.ReadFile(filepath.Join(o.Dir, h+"-dnwrite.log"))
		res.Recoveries += strings.Count(string(log), "moving to a new block")
	}
	o.Logf("%s writers done: %s; %d pipeline recoveries", rel(), res.Writes, res.Recoveries)

	// The victim comes back cut off from meta: nothing can tell it to
	// close, delete or copy anything while its own replicas are read.
	for _, m := range c.Metas {
		if err := c.Net.Partition(victim.Host, m.Host); err != nil {
			return res, err
		}
	}
	if err := victim.Start(); err != nil {
		return res, err
	}
	vcfg := base
	vcfg.Host, vcfg.Records = "victim", records
	vcfg.Datanode = fmt.Sprintf("%s:%d", c.Net.Addr(victim.Host), DatanodePort)
	vcfg.DatanodeID = res.VictimID
	if res.Victim, err = c.verifyOutput(ctx, vcfg, filepath.Join(o.Dir, "verify-victim.json")); err != nil {
		return res, err
	}
	o.Logf("%s %s started again, cut off from meta: %s", rel(), victim.Host, res.Victim)

	if err := c.Net.Heal(); err != nil {
		return res, err
	}
	fcfg := base
	fcfg.Host, fcfg.Records, fcfg.Health = "final", records, o.HealthTimeout
	if res.Final, err = c.verifyOutput(ctx, fcfg, filepath.Join(o.Dir, "verify-final.json")); err != nil {
		return res, err
	}
	o.Logf("%s %s back in the cluster: %s", rel(), victim.Host, res.Final)
	for _, a := range res.Final.Awaited {
		o.Logf("awaited: %s", a)
	}
	if n := len(res.Final.Empty); n > 0 {
		o.Logf("%d containers no datanode holds are left unfinished by meta, e.g. %s", n, strings.Join(res.Final.Empty[:min(n, 3)], ", "))
	}
	for _, d := range c.Datanodes {
		log, _ := os.ReadFile(filepath.Join(o.Dir, d.Host+".log"))
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, "replicate container failed") {
				res.FailedCopies = append(res.FailedCopies, d.Host+": "+line)
			}
		}
	}
	for _, f := range res.FailedCopies {
		o.Logf("a copy failed: %s", f)
	}
	res.Crashes = c.Crashes()
	return res, nil
}

// verifyOutput runs the dnverify helper on the control host and keeps its
// report in path.
func (c *Cluster) verifyOutput(ctx context.Context, cfg WorkConfig, path string) (*VerifyReport, error) {
	out, err := c.helperOutput(ctx, "ctl", "dnverify", cfg, cfg.Health+3*time.Minute)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return nil, err
	}
	rep := &VerifyReport{}
	if err := json.Unmarshal(out, rep); err != nil {
		return nil, fmt.Errorf("netfault: dnverify printed %q: %w", out, err)
	}
	return rep, nil
}

// datanodeID reads the ID a datanode chose on its first start.
func datanodeID(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "datanode.id"))
	if err != nil {
		return "", fmt.Errorf("netfault: datanode ID: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
