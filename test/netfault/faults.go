package netfault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"
)

// Fault kinds.
const (
	KillLeader     = "kill-leader"     // SIGKILL the leader, start it again after Hold
	KillFollower   = "kill-follower"   // the same for a follower
	PauseLeader    = "pause-leader"    // SIGSTOP the leader for Hold, then SIGCONT
	PauseFollower  = "pause-follower"  // the same for a follower
	IsolateLeader  = "isolate-leader"  // cut the leader from both followers
	CutLeaderPeer  = "cut-leader-peer" // cut the leader from one follower
	CutClientMeta  = "cut-client-meta" // cut a client host from one meta replica
	PauseDatanode  = "pause-datanode"  // SIGSTOP a datanode for Hold (at most 2s)
	faultKindCount = 8
)

var faultKinds = [faultKindCount]string{KillLeader, KillFollower, PauseLeader, PauseFollower, IsolateLeader, CutLeaderPeer, CutClientMeta, PauseDatanode}

// Fault is one step of a schedule: a fault held for Hold, then healed, then
// Gap of calm. Pick chooses among the candidates (which follower, which
// client) when the step runs.
type Fault struct {
	Kind string
	Hold time.Duration
	Gap  time.Duration
	Pick int
}

func (f Fault) String() string {
	return fmt.Sprintf("%s hold=%v gap=%v pick=%d", f.Kind, f.Hold, f.Gap, f.Pick)
}

// Plan draws a schedule of faults from seed, long enough to fill total.
// The same seed gives the same schedule (which process is the leader when
// a step runs depends on the run).
func Plan(seed uint64, total time.Duration) []Fault {
	rng := rand.New(rand.NewPCG(seed, 0x6e6574666175)) // "netfau"
	var out []Fault
	for t := time.Duration(0); t < total; {
		f := Fault{
			Kind: faultKinds[rng.IntN(faultKindCount)],
			Hold: time.Duration(500+rng.IntN(3500)) * time.Millisecond,
			Gap:  time.Duration(300+rng.IntN(1700)) * time.Millisecond,
			Pick: rng.IntN(1 << 20),
		}
		if f.Kind == PauseDatanode {
			f.Hold = min(f.Hold, 2*time.Second)
		}
		out = append(out, f)
		t += f.Hold + f.Gap
	}
	return out
}

// Event is a fault as it happened, in Now's clock.
type Event struct {
	Start, End int64
	What       string
}

// Inject runs one fault to its end (the fault, Hold, the heal); it does not
// wait out the Gap.
func (c *Cluster) Inject(ctx context.Context, f Fault) (Event, error) {
	leader, _ := c.Leader(ctx)
	note := ""
	if leader < 0 {
		leader = f.Pick % 3
		note = " (no leader known)"
	}
	follower := (leader + 1 + f.Pick%2) % 3
	host := func(i int) string { return fmt.Sprintf("m%d", i+1) }
	ev := Event{Start: Now()}
	var heal func() error
	var err error
	switch f.Kind {
	case KillLeader, KillFollower:
		p := c.Metas[leader]
		if f.Kind == KillFollower {
			p = c.Metas[follower]
		}
		ev.What = fmt.Sprintf("%s: SIGKILL %s", f.Kind, p.Host)
		err = p.Signal(syscall.SIGKILL)
		heal = p.Start
	case PauseLeader, PauseFollower, PauseDatanode:
		p := c.Metas[leader]
		switch f.Kind {
		case PauseFollower:
			p = c.Metas[follower]
		case PauseDatanode:
			p = c.Datanodes[f.Pick%len(c.Datanodes)]
		}
		ev.What = fmt.Sprintf("%s: SIGSTOP %s", f.Kind, p.Host)
		err = p.Signal(syscall.SIGSTOP)
		heal = func() error { return p.Signal(syscall.SIGCONT) }
	case IsolateLeader:
		ev.What = fmt.Sprintf("%s: cut %s from %s and %s", f.Kind, host(leader), host((leader+1)%3), host((leader+2)%3))
		err = errors.Join(c.Net.Partition(host(leader), host((leader+1)%3)), c.Net.Partition(host(leader), host((leader+2)%3)))
		heal = c.Net.Heal
	case CutLeaderPeer:
		ev.What = fmt.Sprintf("%s: cut %s from %s", f.Kind, host(leader), host(follower))
		err = c.Net.Partition(host(leader), host(follower))
		heal = c.Net.Heal
	case CutClientMeta:
		cl := c.Clients[f.Pick%len(c.Clients)]
		m := host((f.Pick / len(c.Clients)) % 3)
		ev.What = fmt.Sprintf("%s: cut %s from %s", f.Kind, cl, m)
		err = c.Net.Partition(cl, m)
		heal = c.Net.Heal
	default:
		return ev, fmt.Errorf("netfault: unknown fault %q", f.Kind)
	}
	ev.What += note
	if err != nil {
		return ev, err
	}
	select {
	case <-ctx.Done():
	case <-time.After(f.Hold):
	}
	err = heal()
	ev.End = Now()
	return ev, err
}

// HealAll removes every cut, resumes paused processes and starts stopped
// ones.
func (c *Cluster) HealAll() error {
	errs := []error{c.Net.Heal()}
	for _, p := range c.Procs() {
		switch {
		case p.Paused():
			errs = append(errs, p.Signal(syscall.SIGCONT))
		case !p.Running():
			errs = append(errs, p.Start())
		}
	}
	return errors.Join(errs...)
}
