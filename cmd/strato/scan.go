package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode/scanner"
	"github.com/strato-io/strato/proto/strato/v1"
)

// scanFlags are the background scanner's flags of strato datanode and
// strato dev (datanode/scanner.Options).
type scanFlags struct {
	meta, data time.Duration
	bandwidth  string
	disable    bool
}

func (s *scanFlags) add(f *pflag.FlagSet) {
	f.DurationVar(&s.meta, "scan-meta-interval", scanner.DefaultMetaInterval, "time between metadata scans of every closed container: rows against files, no data read (0: none)")
	f.DurationVar(&s.data, "scan-data-interval", scanner.DefaultDataInterval, "time between data scans of every closed container: every byte read and checked against its checksums (0: none)")
	f.StringVar(&s.bandwidth, "scan-bandwidth", "32MiB", "cap in bytes/s on a data scan's reads, per volume (0: none)")
	f.BoolVar(&s.disable, "scan-disable", false, "run no background scans (nor those strato admin container scan asks for)")
}

// options turns the flags into scanner options: a 0 flag is "off", which
// the options spell negative (their 0 is the default).
func (s *scanFlags) options() (scanner.Options, error) {
	bw, err := bytesize.Parse(s.bandwidth)
	if err != nil || bw < 0 {
		return scanner.Options{}, usagef("--scan-bandwidth %q is not a byte count such as 32MiB", s.bandwidth)
	}
	if s.meta < 0 || s.data < 0 {
		return scanner.Options{}, usagef("--scan-meta-interval and --scan-data-interval must not be negative")
	}
	off := func(v int64) int64 {
		if v == 0 {
			return -1
		}
		return v
	}
	return scanner.Options{MetaInterval: time.Duration(off(int64(s.meta))), DataInterval: time.Duration(off(int64(s.data))),
		Bandwidth: off(bw), Disable: s.disable}, nil
}

// newContainerScanCmd is strato admin container scan.
func newContainerScanCmd(o *cliOptions) *cobra.Command {
	var metaOnly bool
	cmd := &cobra.Command{
		Use:   "scan ID",
		Short: "Ask the datanodes holding a closed container to scan their replicas now (a damaged one turns UNHEALTHY and is replaced)",
		Long: `scan asks meta to have every live datanode holding a CLOSED replica of the
container scan it next, ahead of the background scanner's periods
(docs/operations.md "Scanning"): every byte read and checked against its
checksums, or with --metadata-only the rows checked against the files. It
prints the datanodes asked; a replica found damaged shows as UNHEALTHY in
strato admin container info within a heartbeat of its scan, and meta copies
a good replica in its place.`,
		Args: exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			id, err := strconv.ParseUint(args[0], 10, 64)
			if err != nil || id == 0 {
				return usagef("%q is not a container ID (a positive number)", args[0])
			}
			resp, err := cluster(s, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.ScanContainerResponse, error) {
				return cl.ScanContainer(ctx, &stratov1.ScanContainerRequest{ContainerId: id, MetadataOnly: metaOnly})
			})
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, resp)
			}
			if len(resp.DatanodeIds) == 0 {
				_, err = fmt.Fprintf(s.out, "container %d: no live datanode holds a CLOSED replica to scan\n", id)
				return err
			}
			_, err = fmt.Fprintf(s.out, "container %d: scan queued on %s; see strato admin container info %d\n", id, strings.Join(resp.DatanodeIds, ", "), id)
			return err
		}),
	}
	cmd.Flags().BoolVar(&metaOnly, "metadata-only", false, "check the rows against the files only, without reading the data")
	return cmd
}

// scanLabel sums up a datanode's background scanner for datanode info.
func scanLabel(st *stratov1.ScanStats) string {
	switch {
	case st == nil:
		return "not reported"
	case st.GetDisabled():
		return "off"
	}
	last := "no full data pass yet"
	if ms := st.GetLastDataPassUnixMs(); ms != 0 {
		last = "last full data pass " + timeMs(ms)
	}
	return fmt.Sprintf("%d metadata and %d data scans, %s verified, %d damaged replicas found; %s",
		st.GetMetaScans(), st.GetDataScans(), bytesize.Format(st.GetBytesScanned()), st.GetCorruptions(), last)
}
