package main

// strato admin topology: the datanodes by rack, as `ozone admin
// printTopology` shows them.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bytesize"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// defaultRack is the rack of a datanode that registered without one (as
// meta/cluster.DefaultRack; the CLI links no meta code).
const defaultRack = "/default-rack"

// rackName is a datanode's rack, as placement sees it.
func rackName(d *stratov1.DatanodeInfo) string {
	return cmp.Or(d.GetDetails().GetRack(), defaultRack)
}

// topologyRack is one rack of `admin topology --json`.
type topologyRack struct {
	Rack      string            `json:"rack"`
	Datanodes []json.RawMessage `json:"datanodes"`
}

func newTopologyCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "topology",
		Short: "Show the datanodes by rack: health, state, used and capacity",
		Args:  exactArgs(0),
		RunE: o.action(func(s *session, _ []string) error {
			dns, err := listDatanodes(s)
			if err != nil {
				return err
			}
			var racks []string
			byRack := map[string][]*stratov1.DatanodeInfo{}
			for _, d := range dns {
				r := rackName(d)
				if byRack[r] == nil {
					racks = append(racks, r)
				}
				byRack[r] = append(byRack[r], d)
			}
			slices.Sort(racks)
			if s.json {
				out := []topologyRack{}
				for _, r := range racks {
					tr := topologyRack{Rack: r, Datanodes: []json.RawMessage{}}
					for _, d := range byRack[r] {
						raw, err := cliJSON(d)
						if err != nil {
							return err
						}
						tr.Datanodes = append(tr.Datanodes, raw)
					}
					out = append(out, tr)
				}
				return printJSON(s.out, out)
			}
			if len(racks) == 0 {
				_, err := fmt.Fprintln(s.out, "no datanodes")
				return err
			}
			var b strings.Builder
			for _, r := range racks {
				fmt.Fprintf(&b, "%s (%d datanodes)\n", r, len(byRack[r]))
				rows := make([][]string, 0, len(byRack[r]))
				for _, d := range byRack[r] {
					rows = append(rows, []string{"  " + d.GetDetails().GetId(), d.GetDetails().GetHostname(), d.GetDetails().GetDataAddr(),
						enumName(d.Health, "NODE_"), enumName(d.OpState, "NODE_"),
						bytesize.Format(d.GetStats().GetUsed()) + " of " + bytesize.Format(d.GetStats().GetCapacity())})
				}
				if err := printTable(&b, nil, rows); err != nil {
					return err
				}
			}
			_, err = fmt.Fprint(s.out, b.String())
			return err
		}),
	}
}
