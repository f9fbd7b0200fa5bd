package cluster

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// TestTraces runs the scripts of testdata/*.txt: each step drives the
// Manager as meta's server and the datanodes would, and prints what
// followed (the proposals, applied through Manager.Apply into a Pebble
// database; the commands queued for datanodes; datanodes whose health or
// operational state changed), sorted so that the output is deterministic.
// `go test ./meta/cluster -run TestTraces -rewrite` regenerates the
// expected output. The commands are tracer.run's.
//
// Each script runs twice: with the replication pass in its usual steps,
// and in steps of one container each (Options.ReplicationStep), the lock
// released and the step's plan applied between them, which must decide
// exactly the same.
func TestTraces(t *testing.T) {
	for _, step := range []int{0, 1} {
		t.Run(fmt.Sprintf("step=%d", step), func(t *testing.T) {
			datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
				tr := &tracer{t: t, replStep: step}
				tr.reset(Options{})
				datadriven.RunTest(t, path, tr.run)
			})
		})
	}
}

// tracer is the state of one script: the manager, its database, the clock,
// and the datanodes as the script plays them.
type tracer struct {
	t    *testing.T
	opts Options
	db   *pebble.DB
	m    *Manager
	now  time.Time
	// disks: the replicas each datanode holds, as it last reported them;
	// registering sends them all (a full report).
	disks map[string]map[uint64]*stratov1.ContainerReplica
	// free: datanodes' free space, as they report it.
	free map[string]int64
	// killed: datanodes that no longer heartbeat on tick.
	killed map[string]bool
	// racks: the racks datanodes registered with (register rack=...);
	// none: DefaultRack.
	racks map[string]string
	// printed: the highest command ID printed; cmds: those printed, by ID.
	printed uint64
	cmds    map[uint64]*stratov1.DatanodeCommand
	// delivered: commands handed out by heartbeats during this step, and
	// to whom.
	delivered []delivery
	// seen: each datanode's health and operational state as last printed.
	seen map[string]string
	// out, proposed: the step's result lines and proposals.
	out, proposed []string
	// replStep: the managers' Options.ReplicationStep (0: the default).
	replStep int
}

func (tr *tracer) reset(opts Options) {
	db, err := pebble.Open("db", &pebble.Options{FS: vfs.NewMem(), FormatMajorVersion: pebble.FormatNewest, Logger: quietLogger{}})
	require.NoError(tr.t, err)
	tr.t.Cleanup(func() { _ = db.Close() })
	tr.opts, tr.db, tr.now = opts, db, time.Unix(1_700_000_000, 0)
	tr.disks, tr.free, tr.killed, tr.racks = map[string]map[uint64]*stratov1.ContainerReplica{}, map[string]int64{}, map[string]bool{}, map[string]string{}
	tr.cmds = map[uint64]*stratov1.DatanodeCommand{}
	tr.newManager()
}

// newManager starts a manager on the stored state, as a restart or a
// follower that becomes leader does.
func (tr *tracer) newManager() {
	o := tr.opts
	o.ReplicationStep = tr.replStep
	m, err := New(o, tr.propose)
	require.NoError(tr.t, err)
	require.NoError(tr.t, m.Load(tr.db))
	tr.m, tr.printed, tr.seen = m, 0, map[string]string{}
}

func (tr *tracer) propose(_ context.Context, cmd *stratov1.ClusterCommand) (proto.Message, error) {
	res, err := applyTo(tr.db, tr.m, cmd)
	line := "propose " + describeProposal(cmd)
	switch r := res.(type) {
	case *stratov1.ContainerRecord:
		if cmd.GetAddContainer() != nil {
			line += fmt.Sprintf(" → c%d", r.Id)
		}
	case *stratov1.IDRange:
		line += fmt.Sprintf(" → [%d, %d)", r.First, r.First+r.Count)
	}
	if err != nil {
		line += " → error: " + err.Error()
	}
	tr.proposed = append(tr.proposed, line)
	return res, err
}

func (tr *tracer) proposeAll(cmds []*stratov1.ClusterCommand) {
	for _, c := range cmds {
		_, _ = tr.propose(context.Background(), c)
	}
}

// run runs one step and returns what it printed.
func (tr *tracer) run(t *testing.T, d *datadriven.TestData) string {
	tr.t, tr.out, tr.proposed, tr.delivered = t, nil, nil, nil
	if err := tr.step(d); err != nil {
		tr.out = append(tr.out, "error: "+err.Error())
	}
	out := append(tr.out, tr.proposed...)
	out = append(out, tr.queued()...)
	out = append(out, tr.changes()...)
	if len(out) == 0 {
		return "ok\n"
	}
	return strings.Join(out, "\n") + "\n"
}

// step runs one command of the trace language:
//
//	new [stale=D] [dead=D] [settle=D] [safe-min=N] [safe-fraction=F] [container-size=N] [block-size=N]
//	    [open-per-pipeline=N] [pipelines-per-node=N] [id-batch=N] [full-delay=D] [delete-timeout=D]
//	register dn1 dn2 ... [free=N] [bare]  register with everything on their disks (a full report; bare: none)
//	heartbeat dn1 [report=(1:closed:idx=3:bcs=4:used=N, ...)] [full] [deleted=(1, ...)]
//	    [acks=(seq, ...)] [failed=(cmd ID, ...)] [free=N]
//	tick [advance=D]                      advance the clock, heartbeats from the live datanodes, Tick
//	advance D                             advance the clock only
//	kill dn1 ...                          stop heartbeating on tick (a heartbeat revives)
//	alloc one|three|rs-3-2|xor-2-1 [size=N] [count=N] [exclude-nodes=(...)] [exclude-containers=(...)] [exclude-pipelines=(...)]
//	closed-containers three|rs-3-2 [count=N] [on=(dn1, ...)]   CLOSED containers and their reported replicas (set-up: no proposals printed)
//	close-container ID [failed=dn]        a client's CloseContainer, proposed
//	mark-unhealthy ID dn
//	decommission dn | recommission dn | decommissioned dn (the server's proposal)
//	maintenance dn [end-in=D] | end-maintenance dn | in-maintenance dn (the server's proposal)
//	set-op-state dn in_service|decommissioning|decommissioned|...   (a proposal as a stale leader may make)
//	replication-work [limit=N]
//	delete-blocks                         input: one entry a line, "seq: container/local ..."
//	take-deleted
//	become-leader | reload | exit-safe-mode | safe-mode
//	datanodes | pipelines | containers [ID ...] | locations ID [stored=(dn, ...)] | summary | settling
//	op-records                            the durable operational states (C o records)
func (tr *tracer) step(d *datadriven.TestData) error {
	args := positional(d)
	switch d.Cmd {
	case "new":
		tr.reset(traceOptions(tr.t, d))
	case "register":
		for _, id := range args {
			tr.register(d, id)
		}
	case "heartbeat":
		return tr.heartbeat(d, args[0])
	case "tick":
		if dur := durationArg(tr.t, d, "advance"); dur > 0 {
			tr.now = tr.now.Add(dur)
		}
		for _, id := range slices.Sorted(maps.Keys(tr.disks)) {
			if !tr.killed[id] {
				tr.send(&stratov1.HeartbeatRequest{DatanodeId: id})
			}
		}
		tr.proposeAll(tr.m.Tick(tr.now))
	case "advance":
		dur, err := time.ParseDuration(args[0])
		require.NoError(tr.t, err)
		tr.now = tr.now.Add(dur)
	case "kill":
		for _, id := range args {
			tr.killed[id] = true
		}
	case "alloc":
		return tr.alloc(d, args[0])
	case "closed-containers":
		tr.closedContainers(d, args[0])
	case "close-container":
		cmds, err := tr.m.CloseContainer(tr.now, parseUint(tr.t, args[0]), stringArg(d, "failed"))
		tr.proposeAll(cmds)
		return err
	case "mark-unhealthy":
		return tr.m.MarkUnhealthy(parseUint(tr.t, args[0]), args[1])
	case "decommission", "recommission":
		return tr.m.Decommission(context.Background(), tr.now, args[0], d.Cmd == "recommission")
	case "maintenance":
		var end time.Time
		if dur := durationArg(tr.t, d, "end-in"); dur != 0 {
			end = tr.now.Add(dur)
		}
		return tr.m.StartMaintenance(context.Background(), tr.now, args[0], end)
	case "end-maintenance":
		return tr.m.EndMaintenance(context.Background(), tr.now, args[0])
	case "in-maintenance":
		_, _ = tr.propose(context.Background(), InMaintenance(tr.now, args[0])) // an error is the proposal's line
	case "decommissioned":
		_, _ = tr.propose(context.Background(), Decommissioned(tr.now, args[0])) // an error is the proposal's line
	case "set-op-state":
		st, ok := stratov1.NodeOpState_value["NODE_"+strings.ToUpper(args[1])]
		require.True(tr.t, ok, "unknown state %q", args[1])
		_, _ = tr.propose(context.Background(), setNodeOpState(tr.now, args[0], stratov1.NodeOpState(st)))
	case "replication-work":
		limit := tr.m.Options().ReplicationLimit
		if d.HasArg("limit") {
			d.ScanArgs(tr.t, "limit", &limit)
		}
		tr.out = append(tr.out, describeReport(tr.m.ReplicationWork(tr.now, limit)))
	case "delete-blocks":
		tr.deleteBlocks(d)
	case "take-deleted":
		tr.out = append(tr.out, fmt.Sprintf("deleted %v (in flight: %d)", tr.m.TakeDeleted(), tr.m.PendingDeletions()))
	case "become-leader":
		tr.m.BecomeLeader(tr.now)
		tr.seen = map[string]string{}
	case "reload":
		tr.newManager()
	case "exit-safe-mode":
		tr.m.ExitSafeMode()
	default:
		return tr.show(d, args)
	}
	return nil
}

// show runs the commands that print state.
func (tr *tracer) show(d *datadriven.TestData, args []string) error {
	switch d.Cmd {
	case "safe-mode":
		s := tr.m.SafeMode()
		tr.out = append(tr.out, fmt.Sprintf("in safe mode: %t; healthy datanodes %d of %d; replicas reported %.2f of %.2f",
			s.InSafeMode, s.HealthyDatanodes, s.RequiredDatanodes, s.ReplicaFraction, s.RequiredFraction))
	case "datanodes":
		if len(tr.m.Datanodes("", 0)) == 0 {
			tr.out = append(tr.out, "no datanodes")
		}
		for _, n := range tr.m.Datanodes("", 0) {
			line := fmt.Sprintf("%s %s %s containers=%d pipelines=%d", n.Details.Id,
				strings.TrimPrefix(n.Health.String(), "NODE_"), strings.TrimPrefix(n.OpState.String(), "NODE_"), n.Containers, n.Pipelines)
			if n.Details.Rack != "" {
				line += " rack=" + n.Details.Rack
			}
			tr.out = append(tr.out, line)
		}
	case "pipelines":
		for _, p := range tr.m.Pipelines() {
			tr.out = append(tr.out, fmt.Sprintf("p%d %s %s %v", p.Id, strings.TrimPrefix(p.State.String(), "PIPELINE_"),
				redundancyName(p.Replication, p.ErasureCoding), p.Members))
		}
	case "containers":
		tr.showContainers(args)
	case "locations":
		return tr.locations(d, parseUint(tr.t, args[0]))
	case "summary":
		tr.summary()
	case "settling":
		tr.out = append(tr.out, fmt.Sprintf("settling: %t", tr.m.Settling(tr.now)))
	case "op-records":
		tr.opRecords()
	default:
		return fmt.Errorf("unknown command %q", d.Cmd)
	}
	return nil
}

func traceOptions(t *testing.T, d *datadriven.TestData) Options {
	var o Options
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "stale", "dead", "settle", "full-delay", "delete-timeout", "repl-timeout":
			dur, err := time.ParseDuration(a.Vals[0])
			require.NoError(t, err)
			*map[string]*time.Duration{"stale": &o.StaleAfter, "dead": &o.DeadAfter, "settle": &o.LeaderSettle,
				"full-delay": &o.FullCloseDelay, "delete-timeout": &o.DeleteBlocksTimeout, "repl-timeout": &o.ReplicationTimeout}[a.Key] = dur
		case "safe-min":
			o.SafeModeMinDatanodes = int(parseUint(t, a.Vals[0]))
		case "safe-fraction":
			f, err := strconv.ParseFloat(a.Vals[0], 64)
			require.NoError(t, err)
			o.SafeModeReplicaFraction = f
		case "container-size":
			o.ContainerSize = parseSize(t, a.Vals[0])
		case "block-size":
			o.BlockSize = parseSize(t, a.Vals[0])
		case "open-per-pipeline":
			o.OpenContainersPerPipeline = int(parseUint(t, a.Vals[0]))
		case "pipelines-per-node":
			o.PipelinesPerNode = int(parseUint(t, a.Vals[0]))
		case "id-batch":
			o.LocalIDBatch = parseUint(t, a.Vals[0])
		default:
			t.Fatalf("new: unknown option %q", a.Key)
		}
	}
	return o
}

func (tr *tracer) register(d *datadriven.TestData, id string) {
	if tr.disks[id] == nil {
		tr.disks[id] = map[uint64]*stratov1.ContainerReplica{}
		tr.free[id] = 100 << 30
	}
	if d.HasArg("free") {
		tr.free[id] = parseSize(tr.t, stringArg(d, "free"))
	}
	if d.HasArg("rack") {
		tr.racks[id] = stringArg(d, "rack")
	}
	delete(tr.killed, id)
	req := &stratov1.RegisterRequest{
		Details: &stratov1.DatanodeDetails{Id: id, DataAddr: "127.0.0.1:1" + id[len(id)-1:], Rack: tr.racks[id]},
		Stats:   &stratov1.NodeStats{Capacity: 100 << 30, Remaining: tr.free[id]},
		Report:  tr.fullReport(id),
	}
	if d.HasArg("bare") {
		req.Report = nil // a datanode that has not scanned its volumes yet
	}
	err := tr.m.Register(tr.now, req)
	require.NoError(tr.t, err)
}

func (tr *tracer) fullReport(id string) *stratov1.ContainerReport {
	r := &stratov1.ContainerReport{Full: true}
	for _, cid := range slices.Sorted(maps.Keys(tr.disks[id])) {
		r.Replicas = append(r.Replicas, tr.disks[id][cid])
	}
	return r
}

func (tr *tracer) heartbeat(d *datadriven.TestData, id string) error {
	req := &stratov1.HeartbeatRequest{DatanodeId: id}
	delete(tr.killed, id)
	if d.HasArg("free") {
		tr.free[id] = parseSize(tr.t, stringArg(d, "free"))
		req.Stats = &stratov1.NodeStats{Capacity: 100 << 30, Remaining: tr.free[id]}
	}
	disk := tr.disks[id]
	if disk == nil {
		disk = map[uint64]*stratov1.ContainerReplica{}
	}
	if a, ok := d.Arg("report"); ok {
		req.Report = &stratov1.ContainerReport{}
		for _, v := range a.Vals {
			if v == "" {
				continue
			}
			r := parseReplica(tr.t, v)
			disk[r.ContainerId] = r
			req.Report.Replicas = append(req.Report.Replicas, r)
		}
	}
	if a, ok := d.Arg("deleted"); ok {
		if req.Report == nil {
			req.Report = &stratov1.ContainerReport{}
		}
		for _, v := range a.Vals {
			cid := parseUint(tr.t, v)
			delete(disk, cid)
			req.Report.Deleted = append(req.Report.Deleted, cid)
		}
	}
	if tr.disks[id] != nil {
		tr.disks[id] = disk
	}
	if d.HasArg("full") {
		req.Report = tr.fullReport(id)
	}
	if a, ok := d.Arg("acks"); ok {
		for _, v := range a.Vals {
			req.DeletedBlocksAcks = append(req.DeletedBlocksAcks, parseUint(tr.t, v))
		}
	}
	if a, ok := d.Arg("failed"); ok {
		for _, v := range a.Vals {
			cmdID := parseUint(tr.t, v)
			req.FailedCommands = append(req.FailedCommands, &stratov1.CommandFailure{CommandId: cmdID,
				ContainerId: commandContainer(tr.cmds[cmdID]), Reason: "trace"})
		}
	}
	resp, err := tr.send(req)
	if resp.GetReregister() {
		tr.out = append(tr.out, "reregister")
	}
	return err
}

type delivery struct {
	node string
	cmd  *stratov1.DatanodeCommand
}

// send sends a heartbeat and keeps the commands it delivered for queued.
func (tr *tracer) send(req *stratov1.HeartbeatRequest) (*stratov1.HeartbeatResponse, error) {
	resp, err := tr.m.Heartbeat(tr.now, req)
	for _, c := range resp.GetCommands() {
		tr.delivered = append(tr.delivered, delivery{req.DatanodeId, c})
	}
	return resp, err
}

func (tr *tracer) alloc(d *datadriven.TestData, name string) error {
	r := parseRedundancy(tr.t, name)
	var size int64
	if d.HasArg("size") {
		size = parseSize(tr.t, stringArg(d, "size"))
	}
	count := 1
	if d.HasArg("count") {
		d.ScanArgs(tr.t, "count", &count)
	}
	ex := Exclude{Datanodes: listArg(d, "exclude-nodes")}
	for _, v := range listArg(d, "exclude-containers") {
		ex.Containers = append(ex.Containers, parseUint(tr.t, v))
	}
	for _, v := range listArg(d, "exclude-pipelines") {
		ex.Pipelines = append(ex.Pipelines, parseUint(tr.t, v))
	}
	for range count {
		a, err := tr.m.Allocate(context.Background(), tr.now, r, size, ex)
		if err != nil {
			return err
		}
		var members []string
		for _, m := range a.Members {
			members = append(members, m.Id)
		}
		tr.out = append(tr.out, fmt.Sprintf("block c%d/%d on p%d %v", a.ContainerID, a.LocalID, a.Pipeline.Id, members))
	}
	return nil
}

// closedContainers adds CLOSED containers and reports their replicas: a
// replicated container c (counting from 0) on the registered datanodes
// c, c+1, c+2 (round robin, as the datanodes sort), an erasure coded one
// with index i+1 on on[i].
func (tr *tracer) closedContainers(d *datadriven.TestData, name string) {
	r := parseRedundancy(tr.t, name)
	count := 1
	if d.HasArg("count") {
		d.ScanArgs(tr.t, "count", &count)
	}
	on := listArg(d, "on")
	if len(on) == 0 {
		on = slices.Sorted(maps.Keys(tr.disks))
	}
	for c := range count {
		res, err := applyTo(tr.db, tr.m, &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{
			Replication: r.Replication, ErasureCoding: r.EC}}})
		require.NoError(tr.t, err)
		id := res.(*stratov1.ContainerRecord).Id
		_, err = applyTo(tr.db, tr.m, setContainerState(tr.now, id, stratov1.ContainerState_CONTAINER_CLOSED))
		require.NoError(tr.t, err)
		var holders []string
		for i := range r.Members() {
			dn, idx := on[(c+i)%len(on)], int32(0)
			if r.EC != nil {
				dn, idx = on[i], int32(i+1)
			}
			holders = append(holders, dn)
			rep := &stratov1.ContainerReplica{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: idx}
			tr.disks[dn][id] = rep
			tr.send(&stratov1.HeartbeatRequest{DatanodeId: dn, Report: &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{rep}}})
		}
		tr.out = append(tr.out, fmt.Sprintf("c%d on %v", id, holders))
	}
	tr.m.mu.Lock()
	tr.printed = tr.m.s.nextCmdID // set-up: what it queued is not the trace's
	tr.m.mu.Unlock()
	tr.delivered = nil
}

func (tr *tracer) deleteBlocks(d *datadriven.TestData) {
	var entries []*stratov1.DeletedBlocks
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		seq, blocks, ok := strings.Cut(line, ":")
		require.True(tr.t, ok, "delete-blocks: %q is not seq: container/local ...", line)
		e := &stratov1.DeletedBlocks{Seq: parseUint(tr.t, strings.TrimSpace(seq))}
		for _, b := range strings.Fields(blocks) {
			c, l, ok := strings.Cut(b, "/")
			require.True(tr.t, ok, "delete-blocks: %q is not container/local", b)
			e.Blocks = append(e.Blocks, &stratov1.BlockIDRecord{ContainerId: parseUint(tr.t, c), LocalId: parseUint(tr.t, l)})
		}
		entries = append(entries, e)
	}
	p := tr.m.DeleteBlocks(tr.now, entries)
	tr.out = append(tr.out, fmt.Sprintf("purge %v; commands %d, blocks %d; waiting %d", p.Purge, p.Commands, p.Blocks, p.Waiting))
}

func (tr *tracer) showContainers(args []string) {
	_, reps := tr.m.ListContainers(0, 0, ContainerFilter{}, true)
	for _, r := range reps {
		c := r.Container
		if len(args) > 0 && !slices.Contains(args, strconv.FormatUint(c.Id, 10)) {
			continue
		}
		missing, err := tr.m.MissingIndexes(c.Id)
		require.NoError(tr.t, err)
		require.Equal(tr.t, c.MissingIndexes, missing, "MissingIndexes and the listing agree")
		line := fmt.Sprintf("c%d %s p%d %s good=%d", c.Id, strings.TrimPrefix(c.State.String(), "CONTAINER_"), c.PipelineId,
			redundancyName(c.Replication, c.ErasureCoding), c.GoodCopies)
		if c.Problem != stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED {
			line += " " + ProblemName(c.Problem)
		}
		if len(c.MissingIndexes) > 0 {
			line += fmt.Sprintf(" missing=%v", c.MissingIndexes)
		}
		if c.AllocatedBytes > 0 {
			line += fmt.Sprintf(" allocated=%d", c.AllocatedBytes)
		}
		line += ":"
		for _, dn := range slices.Sorted(maps.Keys(r.Replicas)) {
			line += " " + dn + "=" + describeReplica(r.Replicas[dn])
		}
		tr.out = append(tr.out, line)
	}
}

func (tr *tracer) locations(d *datadriven.TestData, cid uint64) error {
	stored := listArg(d, "stored")
	if len(stored) == 0 {
		info, _, err := tr.m.Replicas(cid)
		if err != nil {
			return err
		}
		for _, p := range tr.m.Pipelines() {
			if p.Id == info.PipelineId {
				stored = p.Members
			}
		}
	}
	var in []*stratov1.DatanodeDetails
	for _, id := range stored {
		n, ok := tr.m.Node(id)
		if !ok {
			n = &stratov1.DatanodeDetails{Id: id}
		}
		in = append(in, n)
	}
	var out []string
	for _, n := range tr.m.Locations(cid, in) {
		out = append(out, n.Id)
	}
	tr.out = append(tr.out, fmt.Sprintf("%v", out))
	return nil
}

// opRecords prints the durable operational states (C o records).
func (tr *tracer) opRecords() {
	it, err := tr.db.NewIter(&pebble.IterOptions{LowerBound: nodeOpKey(""), UpperBound: []byte{keyPrefix, tagNodeOp + 1}})
	require.NoError(tr.t, err)
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		var rec stratov1.NodeOpRecord
		require.NoError(tr.t, proto.Unmarshal(it.Value(), &rec))
		line := fmt.Sprintf("C o %s: %s", it.Key()[2:], strings.TrimPrefix(rec.OpState.String(), "NODE_"))
		if rec.MaintenanceEndUnixMs != 0 {
			line += " until " + time.UnixMilli(rec.MaintenanceEndUnixMs).UTC().Format(time.TimeOnly)
		}
		tr.out = append(tr.out, line)
	}
	if len(tr.out) == 0 {
		tr.out = append(tr.out, "no records: every datanode in service")
	}
}

func (tr *tracer) summary() {
	s := tr.m.Summary()
	tr.out = append(tr.out,
		fmt.Sprintf("datanodes %d: %s; %s; capacity %d, used %d, remaining %d", s.Datanodes, counts(s.DatanodesByHealth),
			counts(s.DatanodesByOpState), s.Capacity, s.Used, s.Remaining),
		fmt.Sprintf("pipelines: %s", counts(s.PipelinesByState)),
		fmt.Sprintf("containers %d: %s; problems %s: %s", s.Containers, counts(s.ContainersByState), asOf(s.ProblemsAsOfUnixMs),
			counts(s.ContainersByProblem)),
		fmt.Sprintf("in flight: %d copies, %d deletes", s.CopiesInFlight, s.DeletesInFlight))
	for _, d := range s.Decommissioning {
		tr.out = append(tr.out, fmt.Sprintf("decommissioning %s: %d replicas, %d waiting", d.DatanodeId, d.Replicas, d.Waiting))
	}
}

// asOf says when the summary's problems were judged.
func asOf(ms int64) string {
	if ms == 0 {
		return "judged now"
	}
	return "as of the pass at " + time.UnixMilli(ms).UTC().Format(time.TimeOnly)
}

// queued lists the commands queued since the last step (or delivered in
// this one), in the order they were queued.
func (tr *tracer) queued() []string {
	all := slices.Clone(tr.delivered)
	tr.m.mu.Lock()
	for id, n := range tr.m.s.nodes {
		for _, c := range n.commands {
			all = append(all, delivery{id, c})
		}
	}
	tr.m.mu.Unlock()
	slices.SortFunc(all, func(a, b delivery) int { return cmp.Compare(a.cmd.Id, b.cmd.Id) })
	var out []string
	for _, d := range all {
		if d.cmd.Id <= tr.printed {
			continue
		}
		tr.printed = d.cmd.Id
		tr.cmds[d.cmd.Id] = d.cmd
		out = append(out, fmt.Sprintf("%s <- #%d %s", d.node, d.cmd.Id, describeCommand(d.cmd)))
	}
	return out
}

// changes lists the datanodes whose health or operational state changed
// in this step.
func (tr *tracer) changes() []string {
	var out []string
	for _, n := range tr.m.Datanodes("", 0) {
		id := n.Details.Id
		now := strings.TrimPrefix(n.Health.String(), "NODE_") + " " + strings.TrimPrefix(n.OpState.String(), "NODE_")
		if was, ok := tr.seen[id]; ok && was != now {
			out = append(out, fmt.Sprintf("%s: %s → %s", id, was, now))
		}
		tr.seen[id] = now
	}
	return out
}
