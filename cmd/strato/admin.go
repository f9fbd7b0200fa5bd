package main

// strato admin: the cluster as meta sees it (datanodes, pipelines,
// containers, safe mode), through the Cluster gRPC service, as
// `ozone admin` shows it.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func init() { extraCommands = append(extraCommands, newAdminCmd) }

func newAdminCmd() *cobra.Command {
	o := &cliOptions{}
	cmd := topGroup("admin", "Inspect and operate the cluster: report, datanodes, pipelines, containers, safe mode, S3 access keys, users and tokens", o)
	cmd.AddCommand(newReportCmd(o), newDatanodeCmd(o), newTopologyCmd(o), newPipelineCmd(o), newContainerCmd(o), newSafeModeCmd(o), newMetaAdminCmd(o), newS3AdminCmd(o),
		newUserAdminCmd(o), newTokenAdminCmd(o), newCACmd(), newBalancerCmd(o))
	return cmd
}

// cluster calls the meta leader's Cluster service.
func cluster[T any](s *session, fn func(context.Context, client.ClusterStubs) (T, error)) (T, error) {
	return client.Cluster(s.ctx, s.c, fn)
}

// ---- Datanodes ------------------------------------------------------------------

func newDatanodeCmd(o *cliOptions) *cobra.Command {
	cmd := group("datanode", "List and inspect datanodes")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the datanodes registered with meta",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			dns, err := listDatanodes(s)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, messages(dns))
			}
			rows := make([][]string, 0, len(dns))
			for _, d := range dns {
				rows = append(rows, []string{d.GetDetails().GetId(), d.GetDetails().GetHostname(), d.GetDetails().GetDataAddr(),
					enumName(d.Health, "NODE_"), enumName(d.OpState, "NODE_"), rackName(d),
					bytesize.Format(d.GetStats().GetUsed()), bytesize.Format(d.GetStats().GetCapacity()), bytesize.Format(d.GetStats().GetRemaining()),
					strconv.Itoa(int(d.Containers)), strconv.Itoa(int(d.Pipelines)), timeMs(d.LastHeartbeatUnixMs)})
			}
			return printTable(s.out, []string{"ID", "HOSTNAME", "DATA ADDRESS", "HEALTH", "STATE", "RACK", "USED", "CAPACITY", "REMAINING",
				"CONTAINERS", "PIPELINES", "LAST HEARTBEAT"}, rows)
		}),
	}
	info := &cobra.Command{
		Use:   "info ID|HOSTNAME|ADDRESS",
		Short: "Show one datanode",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			d, err := findDatanode(s, args[0])
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, d)
			}
			st := d.GetStats()
			err = printFields(s.out, []field{
				{"ID", d.GetDetails().GetId()},
				{"Hostname", d.GetDetails().GetHostname()},
				{"Data address", d.GetDetails().GetDataAddr()},
				{"Rack", rackName(d)},
				{"Health", enumName(d.Health, "NODE_")},
				{"Operational state", enumName(d.OpState, "NODE_")},
				{"Last heartbeat", timeMs(d.LastHeartbeatUnixMs)},
				{"Capacity", sizeWithBytes(st.GetCapacity())},
				{"Used", sizeWithBytes(st.GetUsed())},
				{"Remaining", sizeWithBytes(st.GetRemaining())},
				{"Volumes", strconv.Itoa(int(st.GetVolumes()))},
				{"Failed volumes", strconv.Itoa(int(st.GetFailedVolumes()))},
				{"Containers", strconv.Itoa(int(d.Containers))},
				{"Pipelines", strconv.Itoa(int(d.Pipelines))},
				{"Scanner", scanLabel(st.GetScan())},
				{"Disk balancer", diskBalancerLabel(st.GetDiskBalancer())},
			})
			if err != nil || len(st.GetVolumeStats()) == 0 {
				return err
			}
			fmt.Fprintln(s.out)
			return printTable(s.out, volumeHeader, volumeRows(st.GetVolumeStats()))
		}),
	}
	// opState sends a change of operational state; with a wait state and
	// --wait, it then waits until the datanode is in it.
	opState := func(name, short string, req func(id string) (*stratov1.DecommissionDatanodeRequest, error), waitFor stratov1.NodeOpState) *cobra.Command {
		c := &cobra.Command{Use: name + " ID", Short: short, Args: exactArgs(1)}
		var wait bool
		if waitFor != stratov1.NodeOpState_NODE_OP_STATE_UNSPECIFIED {
			c.Flags().BoolVar(&wait, "wait", false, "wait until the datanode is "+enumName(waitFor, "NODE_")+", printing its progress to stderr (as long as it takes, or --timeout if given)")
		}
		c.RunE = o.action(func(s *session, args []string) error {
			r, err := req(args[0])
			if err != nil {
				return err
			}
			resp, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.DecommissionDatanodeResponse, error) {
				return cl.DecommissionDatanode(ctx, r)
			})
			if err != nil {
				return err
			}
			if wait && r.GetRecommission() {
				wait = false // maintenance --end: in service at once
			}
			if wait && resp.GetDatanode().GetOpState() != waitFor {
				if err := waitOpState(s, resp.GetDatanode().GetDetails().GetId(), waitFor); err != nil {
					return err
				}
				resp.GetDatanode().OpState = waitFor
			}
			if s.json {
				return printJSON(s.out, resp.GetDatanode())
			}
			_, err = fmt.Fprintf(s.out, "%s: %s\n", args[0], enumName(resp.GetDatanode().GetOpState(), "NODE_"))
			return err
		})
		return c
	}
	simple := func(recommission bool) func(string) (*stratov1.DecommissionDatanodeRequest, error) {
		return func(id string) (*stratov1.DecommissionDatanodeRequest, error) {
			return &stratov1.DecommissionDatanodeRequest{DatanodeId: id, Recommission: recommission}, nil
		}
	}
	var endIn time.Duration
	var end bool
	maint := opState("maintenance",
		"Put a datanode in maintenance (no copies made while it is away, beyond a minimum), or end it with --end",
		func(id string) (*stratov1.DecommissionDatanodeRequest, error) {
			r := &stratov1.DecommissionDatanodeRequest{DatanodeId: id, Maintenance: true, Recommission: end}
			switch {
			case end && endIn != 0:
				return nil, fmt.Errorf("--end and --end-in: choose one")
			case endIn < 0:
				return nil, fmt.Errorf("--end-in %v: must be positive", endIn)
			case endIn > 0:
				r.MaintenanceEndUnixMs = time.Now().Add(endIn).UnixMilli()
			}
			return r, nil
		}, stratov1.NodeOpState_NODE_IN_MAINTENANCE)
	maint.Flags().DurationVar(&endIn, "end-in", 0, "end the maintenance by itself after this long (default: when ended with --end or recommission)")
	maint.Flags().BoolVar(&end, "end", false, "end the datanode's maintenance: back in service")
	cmd.AddCommand(list, info,
		opState("decommission", "Take a datanode out of service: its containers are copied elsewhere, then it is DECOMMISSIONED", simple(false),
			stratov1.NodeOpState_NODE_DECOMMISSIONED),
		opState("recommission", "Put a datanode back in service (from decommissioning or maintenance)", simple(true),
			stratov1.NodeOpState_NODE_OP_STATE_UNSPECIFIED),
		maint, newDiskBalancerCmd(o))
	return cmd
}

// findDatanode returns the registered datanode whose ID, hostname or data
// address is name.
func findDatanode(s *session, name string) (*stratov1.DatanodeInfo, error) {
	dns, err := listDatanodes(s)
	if err != nil {
		return nil, err
	}
	for _, dn := range dns {
		if id := dn.GetDetails(); id.GetId() == name || id.GetHostname() == name || id.GetDataAddr() == name {
			return dn, nil
		}
	}
	return nil, fmt.Errorf("datanode not found: no registered datanode has ID, hostname or address %q", name)
}

// listDatanodes returns the datanodes sorted by ID, a page of them at a
// time.
func listDatanodes(s *session) ([]*stratov1.DatanodeInfo, error) {
	const page = 1000
	var dns []*stratov1.DatanodeInfo
	after := ""
	for {
		resp, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
			return cl.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{StartAfter: after, Limit: page})
		})
		if err != nil {
			return nil, err
		}
		dns = append(dns, resp.Datanodes...)
		n := len(resp.Datanodes)
		if n < page {
			break
		}
		next := resp.Datanodes[n-1].GetDetails().GetId()
		if next <= after {
			return nil, errors.New("the meta server's datanode listing did not advance")
		}
		after = next
	}
	slices.SortFunc(dns, func(a, b *stratov1.DatanodeInfo) int {
		return strings.Compare(a.GetDetails().GetId(), b.GetDetails().GetId())
	})
	return dns, nil
}

// ---- Pipelines ------------------------------------------------------------------

func newPipelineCmd(o *cliOptions) *cobra.Command {
	cmd := group("pipeline", "List and close pipelines")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the pipelines (replication groups open containers are written through)",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			resp, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ListPipelinesResponse, error) {
				return cl.ListPipelines(ctx, &stratov1.ListPipelinesRequest{})
			})
			if err != nil {
				return err
			}
			ps := resp.Pipelines
			slices.SortFunc(ps, func(a, b *stratov1.PipelineInfo) int { return cmpUint(a.Id, b.Id) })
			if s.json {
				return printJSON(s.out, messages(ps))
			}
			rows := make([][]string, 0, len(ps))
			for _, p := range ps {
				rows = append(rows, []string{strconv.FormatUint(p.Id, 10), client.Redundancy(p.Replication, p.ErasureCoding),
					enumName(p.State, "PIPELINE_"), timeMs(p.CreatedUnixMs), strings.Join(p.Members, ",")})
			}
			return printTable(s.out, []string{"ID", "REPLICATION", "STATE", "CREATED", "DATANODES (LEADER FIRST, OR IN INDEX ORDER)"}, rows)
		}),
	}
	cmd.AddCommand(list, newPipelineCloseCmd(o))
	return cmd
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ---- Containers -----------------------------------------------------------------

func newContainerCmd(o *cliOptions) *cobra.Command {
	cmd := group("container", "List and inspect containers")
	var state, problem, datanode string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the containers (meta filters them by state, problem and datanode)",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			f := &stratov1.ListContainersRequest{DatanodeId: datanode}
			if state != "" {
				v, err := parseEnum("state", state, "CONTAINER_", stratov1.ContainerState_value)
				if err != nil {
					return err
				}
				f.States = []stratov1.ContainerState{stratov1.ContainerState(v)}
			}
			if problem != "" {
				v, err := parseEnum("problem", strings.ReplaceAll(problem, "-", "_"), "CONTAINER_PROBLEM_", stratov1.ContainerProblem_value)
				if err != nil {
					return err
				}
				f.Problems = []stratov1.ContainerProblem{stratov1.ContainerProblem(v)}
			}
			cs, err := listContainers(s, f)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, messages(cs))
			}
			rows := make([][]string, 0, len(cs))
			for _, c := range cs {
				rows = append(rows, []string{strconv.FormatUint(c.Id, 10), enumName(c.State, "CONTAINER_"),
					client.Redundancy(c.Replication, c.ErasureCoding), strconv.Itoa(int(c.GoodCopies)), problemLabel(c.Problem),
					strconv.FormatUint(c.PipelineId, 10), bytesize.Format(c.AllocatedBytes), timeMs(c.CreatedUnixMs)})
			}
			return printTable(s.out, []string{"ID", "STATE", "REPLICATION", "GOOD", "PROBLEM", "PIPELINE", "ALLOCATED", "CREATED"}, rows)
		}),
	}
	list.Flags().StringVar(&state, "state", "", "list only containers in this state (OPEN, CLOSING, CLOSED, UNHEALTHY, DELETED)")
	list.Flags().StringVar(&problem, "problem", "", "list only containers with this problem (UNDER_REPLICATED, MISSING, UNHEALTHY, OVER_REPLICATED, MIS_REPLICATED)")
	list.Flags().StringVar(&datanode, "datanode", "", "list only containers with a replica on this datanode (its ID)")

	info := &cobra.Command{
		Use:   "info ID",
		Short: "Show a container and its replicas",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			id, err := strconv.ParseUint(args[0], 10, 64)
			if err != nil || id == 0 {
				return usagef("%q is not a container ID (a positive number)", args[0])
			}
			resp, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ContainerReplicasResponse, error) {
				return cl.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: id})
			})
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, resp)
			}
			c := resp.GetContainer()
			ec := c.GetErasureCoding() != nil
			fields := []field{
				{"ID", strconv.FormatUint(c.GetId(), 10)},
				{"State", enumName(c.GetState(), "CONTAINER_")},
				{"Replication", client.Redundancy(c.GetReplication(), c.GetErasureCoding())},
				{"Pipeline", strconv.FormatUint(c.GetPipelineId(), 10)},
				{"Allocated", sizeWithBytes(c.GetAllocatedBytes())},
				{"Created", timeMs(c.GetCreatedUnixMs())},
				{"Replicas", strconv.Itoa(len(resp.Replicas))},
			}
			if ec {
				// Each replica holds one index (docs/ec.md): which have no
				// good replica.
				missing := make([]string, len(c.GetMissingIndexes()))
				for i, x := range c.GetMissingIndexes() {
					missing[i] = strconv.Itoa(int(x))
				}
				if len(missing) == 0 {
					missing = []string{"none"}
				}
				fields = append(fields, field{"Missing indexes", strings.Join(missing, ",")})
			}
			if err := printFields(s.out, fields); err != nil {
				return err
			}
			if len(resp.Replicas) == 0 {
				return nil
			}
			ids := make([]string, 0, len(resp.Replicas))
			for dn := range resp.Replicas {
				ids = append(ids, dn)
			}
			slices.Sort(ids)
			header := []string{"DATANODE", "STATE", "USED", "BLOCKS", "BCSID"}
			if ec { // by index
				slices.SortStableFunc(ids, func(a, b string) int {
					return int(resp.Replicas[a].GetReplicaIndex()) - int(resp.Replicas[b].GetReplicaIndex())
				})
				header = append(header, "INDEX")
			}
			rows := make([][]string, 0, len(ids))
			for _, dn := range ids {
				r := resp.Replicas[dn]
				row := []string{dn, enumName(r.GetState(), "CONTAINER_"), bytesize.Format(r.GetUsedBytes()),
					strconv.FormatInt(r.GetBlockCount(), 10), strconv.FormatUint(r.GetBcsId(), 10)}
				if ec {
					row = append(row, strconv.Itoa(int(r.GetReplicaIndex())))
				}
				rows = append(rows, row)
			}
			if _, err := s.out.Write([]byte("\n")); err != nil {
				return err
			}
			return printTable(s.out, header, rows)
		}),
	}
	closeCmd := &cobra.Command{
		Use:   "close ID",
		Short: "Close an open container (its replicas are brought to one block commit sequence ID, then it is CLOSED)",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			id, err := strconv.ParseUint(args[0], 10, 64)
			if err != nil || id == 0 {
				return usagef("%q is not a container ID (a positive number)", args[0])
			}
			return s.c.CloseContainer(s.ctx, id, "", "admin command")
		}),
	}
	cmd.AddCommand(list, info, closeCmd, newContainerScanCmd(o), newContainerReportCmd(o))
	return cmd
}

// problemLabel is a container's problem as the CLI shows it ("-": none).
func problemLabel(p stratov1.ContainerProblem) string {
	if p == stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED {
		return "-"
	}
	return enumName(p, "CONTAINER_PROBLEM_")
}

// listContainers pages through the containers (in ID order) that match
// filter's states, problems and datanode.
func listContainers(s *session, filter *stratov1.ListContainersRequest) ([]*stratov1.ContainerInfo, error) {
	const page = 1000
	var out []*stratov1.ContainerInfo
	var after uint64
	for {
		req := proto.CloneOf(filter)
		req.StartAfter, req.Limit = after, page
		resp, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ListContainersResponse, error) {
			return cl.ListContainers(ctx, req)
		})
		if err != nil {
			return nil, err
		}
		out = append(out, resp.Containers...)
		n := len(resp.Containers)
		if n < page {
			return out, nil
		}
		next := resp.Containers[n-1].Id
		if next <= after {
			return nil, errors.New("the meta server's container listing did not advance")
		}
		after = next
	}
}

// ---- Safe mode ------------------------------------------------------------------

func newSafeModeCmd(o *cliOptions) *cobra.Command {
	cmd := group("safemode", "Show, wait for the end of, or leave safe mode (no block allocation until enough datanodes and replicas reported)")
	status := &cobra.Command{
		Use:   "status",
		Short: "Show whether meta is in safe mode, and why",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			st, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.SafeModeStatus, error) {
				return cl.GetSafeMode(ctx, &stratov1.GetSafeModeRequest{})
			})
			if err != nil {
				return err
			}
			return printSafeMode(s, st)
		}),
	}
	exit := &cobra.Command{
		Use:   "exit",
		Short: "Leave safe mode now (block allocation starts even if datanodes are missing)",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			st, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.SafeModeStatus, error) {
				return cl.ExitSafeMode(ctx, &stratov1.ExitSafeModeRequest{})
			})
			if err != nil {
				return err
			}
			return printSafeMode(s, st)
		}),
	}
	cmd.AddCommand(status, exit, newSafeModeWaitCmd(o))
	return cmd
}

func printSafeMode(s *session, st *stratov1.SafeModeStatus) error {
	if s.json {
		return printJSON(s.out, st)
	}
	state := "OFF"
	if st.InSafeMode {
		state = "ON"
	}
	return printFields(s.out, []field{
		{"Safe mode", state},
		{"Healthy datanodes", fmt.Sprintf("%d (required %d)", st.HealthyDatanodes, st.RequiredDatanodes)},
		{"Containers with a replica", fmt.Sprintf("%.1f%% (required %.1f%%)", 100*st.ReplicaFraction, 100*st.RequiredFraction)},
	})
}

// ---- Meta replicas -------------------------------------------------------------

func newMetaAdminCmd(o *cliOptions) *cobra.Command {
	cmd := group("meta", "Inspect the meta replicas and change their Raft group (one change at a time)")
	status := &cobra.Command{
		Use:   "status",
		Short: "Show every meta replica's role and Raft position (each --meta address is asked directly), and the group's members",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			var all []*stratov1.MetaStatusResponse
			rows := make([][]string, 0, len(s.addrs))
			var members []*stratov1.MetaMember
			for _, addr := range s.addrs {
				st, err := metaStatus(s.ctx, addr, s.tls, s.token)
				if err != nil {
					rows = append(rows, []string{"-", addr, "unreachable", "-", "-", "-", "-", "-"})
					continue
				}
				all = append(all, st)
				rows = append(rows, []string{strconv.FormatUint(st.Id, 10), addr, st.Role, strconv.FormatUint(st.LeaderId, 10),
					strconv.FormatUint(st.Term, 10), strconv.FormatUint(st.Commit, 10), strconv.FormatUint(st.Applied, 10),
					fmt.Sprintf("%d-%d", st.FirstIndex, st.LastIndex)})
				// The leader's view of the members (with their progress) wins.
				if members == nil || st.Role == "leader" {
					members = st.Members
				}
			}
			if s.json {
				return printJSON(s.out, messages(all))
			}
			if err := printTable(s.out, []string{"ID", "ADDRESS", "ROLE", "LEADER", "TERM", "COMMIT", "APPLIED", "LOG"}, rows); err != nil {
				return err
			}
			if len(members) == 0 {
				return nil
			}
			if _, err := fmt.Fprintln(s.out); err != nil {
				return err
			}
			return printMetaMembers(s, members)
		}),
	}
	// change is a subcommand that sends one membership change about the
	// replica named by its first argument.
	type changeFunc func(ctx context.Context, cl client.ClusterStubs, id uint64, args []string) (*stratov1.MetaMembersResponse, error)
	change := func(use, short string, nargs int, call changeFunc) *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short,
			Args:  exactArgs(nargs),
			RunE: o.action(func(s *session, args []string) error {
				id, err := parseMetaID(args[0])
				if err != nil {
					return err
				}
				return changeMeta(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.MetaMembersResponse, error) {
					return call(ctx, cl, id, args)
				})
			}),
		}
	}
	var learner bool
	add := change("add ID ADDRESS", "Add a meta replica started with --join: as a learner until it has caught up, then as a voter", 2,
		func(ctx context.Context, cl client.ClusterStubs, id uint64, args []string) (*stratov1.MetaMembersResponse, error) {
			return cl.AddMetaMember(ctx, &stratov1.AddMetaMemberRequest{Id: id, Addr: args[1], Learner: learner})
		})
	add.Long = "Add a meta replica started with `strato meta --data NEWDIR --id ID --listen ADDRESS --join`. It joins as a\n" +
		"learner (it gets the state from the leader without counting for quorum), and is promoted to voter once its\n" +
		"log has caught up, within --timeout. Run again for a replica left a learner, it resumes at the promotion."
	add.Flags().BoolVar(&learner, "learner", false, "leave the replica a learner (no vote)")
	remove := change("remove ID", "Remove a meta replica from the group (the leader hands leadership over first if it is the one removed); it stops", 1,
		func(ctx context.Context, cl client.ClusterStubs, id uint64, _ []string) (*stratov1.MetaMembersResponse, error) {
			return cl.RemoveMetaMember(ctx, &stratov1.RemoveMetaMemberRequest{Id: id})
		})
	transfer := change("transfer-leader ID", "Make another voter the meta leader", 1,
		func(ctx context.Context, cl client.ClusterStubs, id uint64, _ []string) (*stratov1.MetaMembersResponse, error) {
			return cl.TransferMetaLeader(ctx, &stratov1.TransferMetaLeaderRequest{Id: id})
		})
	cmd.AddCommand(status, add, remove, transfer, newMetaBackupCmd(o))
	return cmd
}

func parseMetaID(s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, usagef("%q is not a meta replica ID (a positive number)", s)
	}
	return id, nil
}

// changeMeta sends a membership change to the meta leader and prints the
// group it leaves.
func changeMeta(s *session, fn func(context.Context, client.ClusterStubs) (*stratov1.MetaMembersResponse, error)) error {
	resp, err := cluster(s, fn)
	if err != nil {
		return err
	}
	if s.json {
		return printJSON(s.out, resp)
	}
	if _, err := fmt.Fprintf(s.out, "Leader: %d\n", resp.GetLeaderId()); err != nil {
		return err
	}
	return printMetaMembers(s, resp.GetMembers())
}

func printMetaMembers(s *session, ms []*stratov1.MetaMember) error {
	rows := make([][]string, 0, len(ms))
	for _, m := range ms {
		// Progress is known on the leader only.
		match, active := "-", "-"
		if m.GetMatch() > 0 || m.GetActive() {
			match, active = strconv.FormatUint(m.GetMatch(), 10), strconv.FormatBool(m.GetActive())
		}
		rows = append(rows, []string{strconv.FormatUint(m.GetId(), 10), m.GetAddr(), m.GetRole(), match, active})
	}
	return printTable(s.out, []string{"MEMBER", "ADDRESS", "ROLE", "MATCH", "ACTIVE"}, rows)
}

// metaStatus asks one meta replica for its own status (no redirect to the
// leader).
func metaStatus(ctx context.Context, addr string, tlsConfig *tls.Config, token string) (*stratov1.MetaStatusResponse, error) {
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	creds := insecure.NewCredentials()
	if tlsConfig != nil {
		creds = credentials.NewTLS(tlsConfig)
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, err
	}
	defer func() { _ = cc.Close() }()
	return stratov1.NewAdminServiceClient(cc).MetaStatus(ctx, &stratov1.MetaStatusRequest{})
}

var volumeHeader = []string{"VOLUME", "STATE", "USED", "CAPACITY", "CONTAINERS", "FAILED AT", "FAILURE"}

// volumeRows lists a datanode's data directories with their health (a
// datanode of before reports no state: its volumes were all healthy).
func volumeRows(vols []*stratov1.VolumeStats) [][]string {
	rows := make([][]string, 0, len(vols))
	for _, v := range vols {
		state, failure := "HEALTHY", "-"
		if v.GetState() == stratov1.VolumeState_VOLUME_FAILED {
			state, failure = "FAILED", v.GetFailure()
		}
		rows = append(rows, []string{v.GetDir(), state, bytesize.Format(v.GetUsed()), bytesize.Format(v.GetCapacity()),
			strconv.Itoa(int(v.GetContainers())), timeMs(v.GetFailedUnixMs()), failure})
	}
	return rows
}
