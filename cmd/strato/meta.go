package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/strato-io/strato/meta"
)

func init() { extraCommands = append(extraCommands, newMetaCmd) }

func newMetaCmd() *cobra.Command {
	var (
		o        meta.Options
		peers    string
		httpAddr string
	)
	cmd := &cobra.Command{
		Use:   "meta --data DIR [--listen 127.0.0.1:9860] [--id N --peers 1=ADDR,2=ADDR,3=ADDR]",
		Short: "Run the metadata service (namespace and cluster state on Raft)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if peers != "" {
				p, err := parsePeers(peers)
				if err != nil {
					return err
				}
				o.Peers = p
			}
			o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
			srv, err := meta.Open(o)
			if err != nil {
				return err
			}
			lis, err := net.Listen("tcp", o.Listen)
			if err != nil {
				_ = srv.Close()
				return err
			}
			o.Logger.Info("meta serving", "listen", lis.Addr().String(), "id", srv.ID(), "data", o.Dir)
			reg := prometheus.NewRegistry()
			metaMetrics(reg, srv)
			stopMetrics, err := serveMetrics(httpAddr, reg, o.Logger)
			if err != nil {
				_ = srv.Close()
				return err
			}
			defer stopMetrics()
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(lis) }()
			select {
			case <-cmd.Context().Done():
				o.Logger.Info("meta shutting down")
				return srv.Close()
			case err := <-errc:
				_ = srv.Close()
				return err
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "data", "", "data directory (required)")
	f.StringVar(&o.Listen, "listen", "127.0.0.1:9860", "gRPC address (clients, datanodes and Raft peers)")
	f.StringVar(&httpAddr, "http", "", "address of the HTTP endpoint serving /metrics (Prometheus), e.g. 127.0.0.1:9861 (default: none)")
	f.Uint64Var(&o.ID, "id", 1, "this replica's Raft ID (a key of --peers)")
	f.StringVar(&peers, "peers", "", "Raft group: id=host:port,... (default: this replica alone)")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

// parsePeers parses "1=host:port,2=host:port".
func parsePeers(s string) (map[uint64]string, error) {
	out := map[uint64]string{}
	for _, part := range strings.Split(s, ",") {
		id, addr, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.ParseUint(id, 10, 64)
		if !ok || err != nil || n == 0 || addr == "" {
			return nil, fmt.Errorf("--peers: %q is not id=host:port with a positive id", part)
		}
		if _, dup := out[n]; dup {
			return nil, fmt.Errorf("--peers: id %d listed twice", n)
		}
		out[n] = addr
	}
	return out, nil
}
