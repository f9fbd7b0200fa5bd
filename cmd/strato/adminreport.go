package main

// strato admin report, and the waits: `admin safemode wait` and
// `admin datanode decommission|maintenance ID --wait`. The report is
// what `hdfs dfsadmin -report` and `mc admin info` show, from the leader's
// ClusterSummary, its datanode list, its safe mode and its Raft status.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// waitPoll is how often a wait asks meta again.
const waitPoll = 500 * time.Millisecond

// clusterReport is `admin report --json`: one document of the leader's
// views (protobuf JSON inside).
type clusterReport struct {
	MetaLeader rawJSON   `json:"metaLeader"` // the leader's MetaStatusResponse
	SafeMode   rawJSON   `json:"safeMode"`   // SafeModeStatus
	Summary    rawJSON   `json:"summary"`    // ClusterSummary
	Datanodes  []rawJSON `json:"datanodes"`  // DatanodeInfo, by ID
}

// reportData is what the report is made of.
type reportData struct {
	leader    *stratov1.MetaStatusResponse
	safeMode  *stratov1.SafeModeStatus
	summary   *stratov1.ClusterSummary
	datanodes []*stratov1.DatanodeInfo
}

func newReportCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "report",
		Short: "Report the cluster: meta leader, safe mode, capacity, used and remaining space in total and per datanode, containers by state and problem, copies and deletions in flight",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			d, err := gatherReport(s)
			if err != nil {
				return err
			}
			if s.json {
				return printReportJSON(s, d)
			}
			return printReport(s, d)
		}),
	}
}

// gatherReport asks the leader for everything the report shows.
func gatherReport(s *session) (*reportData, error) {
	var d reportData
	var err error
	if d.leader, err = cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.MetaStatusResponse, error) {
		return cl.MetaStatus(ctx, &stratov1.MetaStatusRequest{})
	}); err != nil {
		return nil, err
	}
	if d.safeMode, err = cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.SafeModeStatus, error) {
		return cl.GetSafeMode(ctx, &stratov1.GetSafeModeRequest{})
	}); err != nil {
		return nil, err
	}
	if d.summary, err = clusterSummary(s); err != nil {
		return nil, err
	}
	if d.datanodes, err = listDatanodes(s); err != nil {
		return nil, err
	}
	return &d, nil
}

func clusterSummary(s *session) (*stratov1.ClusterSummary, error) {
	return cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ClusterSummary, error) {
		return cl.GetClusterSummary(ctx, &stratov1.GetClusterSummaryRequest{})
	})
}

func printReportJSON(s *session, d *reportData) error {
	var r clusterReport
	var err error
	if r.MetaLeader, err = cliJSON(d.leader); err != nil {
		return err
	}
	if r.SafeMode, err = cliJSON(d.safeMode); err != nil {
		return err
	}
	if r.Summary, err = cliJSON(d.summary); err != nil {
		return err
	}
	r.Datanodes = make([]rawJSON, 0, len(d.datanodes))
	for _, dn := range d.datanodes {
		b, err := cliJSON(dn)
		if err != nil {
			return err
		}
		r.Datanodes = append(r.Datanodes, b)
	}
	return printJSON(s.out, r)
}

// leaderLabel is "ID (ADDRESS)" of the leader as it knows itself.
func leaderLabel(st *stratov1.MetaStatusResponse) string {
	addr := st.GetLeaderAddr()
	for _, m := range st.GetMembers() {
		if m.GetId() == st.GetLeaderId() && m.GetAddr() != "" {
			addr = m.GetAddr()
		}
	}
	if addr == "" {
		return strconv.FormatUint(st.GetLeaderId(), 10)
	}
	return fmt.Sprintf("%d (%s, term %d)", st.GetLeaderId(), addr, st.GetTerm())
}

// membersLabel counts the meta group's members by role, and those the
// leader heard from within an election timeout.
func membersLabel(ms []*stratov1.MetaMember) string {
	roles := map[string]int32{}
	active := 0
	for _, m := range ms {
		roles[m.GetRole()]++
		if m.GetActive() {
			active++
		}
	}
	return fmt.Sprintf("%d (%s; %d active)", len(ms), counts(roles, false), active)
}

// counts prints a map of counts in key order, "A 1, B 2" ("none" when
// empty); with all false, zero counts are left out.
func counts[V int32 | int64](m map[string]V, all bool) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] != 0 || all {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// problemsAsOf says when the summary's container problems and
// decommissioning progress were judged: by the last replication pass
// (ClusterSummary.problems_as_of_unix_ms), or as the summary was made
// when none has finished under the current leader.
func problemsAsOf(ms int64) string {
	if ms == 0 {
		return "now (no replication pass has finished under this leader)"
	}
	return "the replication pass of " + timeMs(ms)
}

// percent is part of whole in percent, one decimal ("-" of nothing).
func percent(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

func printReport(s *session, d *reportData) error {
	sum := d.summary
	safe := "OFF"
	if d.safeMode.GetInSafeMode() {
		safe = fmt.Sprintf("ON (healthy datanodes %d of %d required, containers with a replica %.1f%% of %.1f%%)",
			d.safeMode.GetHealthyDatanodes(), d.safeMode.GetRequiredDatanodes(),
			100*d.safeMode.GetReplicaFraction(), 100*d.safeMode.GetRequiredFraction())
	}
	decom := make([]string, 0, len(sum.GetDecommissioning()))
	for _, p := range sum.GetDecommissioning() {
		decom = append(decom, fmt.Sprintf("%s (%d of %d replicas waiting for copies)", p.GetDatanodeId(), p.GetWaiting(), p.GetReplicas()))
	}
	if len(decom) == 0 {
		decom = []string{"none"}
	}
	err := printFields(s.out, []field{
		{"Meta leader", leaderLabel(d.leader)},
		{"Meta members", membersLabel(d.leader.GetMembers())},
		{"Safe mode", safe},
		{"Datanodes", fmt.Sprintf("%d (%s; %s)", sum.GetDatanodes(), counts(sum.GetDatanodesByHealth(), false), counts(sum.GetDatanodesByOpState(), false))},
		{"Capacity", sizeWithBytes(sum.GetCapacity())},
		{"Used", fmt.Sprintf("%s (%s)", sizeWithBytes(sum.GetUsed()), percent(sum.GetUsed(), sum.GetCapacity()))},
		{"Remaining", fmt.Sprintf("%s (%s)", sizeWithBytes(sum.GetRemaining()), percent(sum.GetRemaining(), sum.GetCapacity()))},
		{"Pipelines", counts(sum.GetPipelinesByState(), false)},
		{"Containers", fmt.Sprintf("%d (%s)", sum.GetContainers(), counts(sum.GetContainersByState(), false))},
		{"Container problems", counts(sum.GetContainersByProblem(), true)},
		{"Problems as of", problemsAsOf(sum.GetProblemsAsOfUnixMs())},
		{"Copies in flight", strconv.Itoa(int(sum.GetCopiesInFlight()))},
		{"Deletions in flight", strconv.Itoa(int(sum.GetDeletesInFlight()))},
		{"Decommissioning", strings.Join(decom, ", ")},
	})
	if err != nil || len(d.datanodes) == 0 {
		return err
	}
	rows := make([][]string, 0, len(d.datanodes))
	for _, dn := range d.datanodes {
		st := dn.GetStats()
		rows = append(rows, []string{dn.GetDetails().GetId(), dn.GetDetails().GetHostname(), enumName(dn.Health, "NODE_"),
			enumName(dn.OpState, "NODE_"), bytesize.Format(st.GetCapacity()), bytesize.Format(st.GetUsed()),
			bytesize.Format(st.GetRemaining()), percent(st.GetUsed(), st.GetCapacity()),
			fmt.Sprintf("%d/%d", st.GetFailedVolumes(), st.GetVolumes()), strconv.Itoa(int(dn.Containers)), timeMs(dn.LastHeartbeatUnixMs)})
	}
	fmt.Fprintln(s.out)
	return printTable(s.out, []string{"ID", "HOSTNAME", "HEALTH", "STATE", "CAPACITY", "USED", "REMAINING", "USED%",
		"FAILED VOLUMES", "CONTAINERS", "LAST HEARTBEAT"}, rows)
}

// ---- Waits -----------------------------------------------------------------------

// unboundedWait lets a wait run until it ends unless --timeout was given:
// the default --timeout bounds a call, not a decommission.
func unboundedWait(s *session) {
	if f := s.cmd.Flag("timeout"); f == nil || !f.Changed {
		s.transferStarted()
	}
}

// waitLoop calls check every waitPoll until it reports done or fails,
// printing each new progress line to stderr.
func waitLoop(s *session, check func() (done bool, progress string, err error)) error {
	unboundedWait(s)
	last := ""
	t := time.NewTicker(waitPoll)
	defer t.Stop()
	for {
		done, progress, err := check()
		if err != nil && s.ctx.Err() != nil {
			// The wait's end (--timeout, an interrupt) cut a call short:
			// that is the error, not the call's.
			return fmt.Errorf("%s: %w", last, context.Cause(s.ctx))
		}
		if err != nil || done {
			return err
		}
		if progress != last {
			fmt.Fprintln(s.cmd.ErrOrStderr(), progress)
			last = progress
		}
		select {
		case <-s.ctx.Done():
			return fmt.Errorf("%s: %w", progress, context.Cause(s.ctx))
		case <-t.C:
		}
	}
}

func newSafeModeWaitCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "wait",
		Short: "Wait until meta leaves safe mode (as long as it takes, or --timeout if given)",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			var st *stratov1.SafeModeStatus
			err := waitLoop(s, func() (bool, string, error) {
				var err error
				st, err = cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.SafeModeStatus, error) {
					return cl.GetSafeMode(ctx, &stratov1.GetSafeModeRequest{})
				})
				if err != nil {
					return false, "", err
				}
				return !st.GetInSafeMode(), fmt.Sprintf("safe mode: healthy datanodes %d of %d required, containers with a replica %.1f%% of %.1f%%",
					st.GetHealthyDatanodes(), st.GetRequiredDatanodes(), 100*st.GetReplicaFraction(), 100*st.GetRequiredFraction()), nil
			})
			if err != nil {
				return err
			}
			return printSafeMode(s, st)
		}),
	}
}

// waitOpState waits until datanode id reaches want, printing its progress
// to stderr; a datanode that goes back in service has been recommissioned
// meanwhile, and the wait fails.
func waitOpState(s *session, id string, want stratov1.NodeOpState) error {
	return waitLoop(s, func() (bool, string, error) {
		dns, err := listDatanodes(s)
		if err != nil {
			return false, "", err
		}
		i := slices.IndexFunc(dns, func(d *stratov1.DatanodeInfo) bool { return d.GetDetails().GetId() == id })
		if i < 0 {
			return false, "", fmt.Errorf("datanode %s is no longer registered", id)
		}
		dn := dns[i]
		switch dn.GetOpState() {
		case want:
			return true, "", nil
		case stratov1.NodeOpState_NODE_IN_SERVICE:
			return false, "", errors.New(id + " is IN_SERVICE again (recommissioned while waiting)")
		}
		progress := fmt.Sprintf("%s: %s, %s, %d containers", id, enumName(dn.GetOpState(), "NODE_"), enumName(dn.GetHealth(), "NODE_"), dn.GetContainers())
		if dn.GetOpState() == stratov1.NodeOpState_NODE_DECOMMISSIONING {
			sum, err := clusterSummary(s)
			if err != nil {
				return false, "", err
			}
			for _, p := range sum.GetDecommissioning() {
				if p.GetDatanodeId() == id {
					progress = fmt.Sprintf("%s: DECOMMISSIONING, %d of %d replicas waiting for copies elsewhere", id, p.GetWaiting(), p.GetReplicas())
				}
			}
		}
		return false, progress, nil
	})
}
