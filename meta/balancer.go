// AdminService's container balancer calls (meta/cluster balancer.go).

package meta

import (
	"context"

	"github.com/strato-io/strato/meta/cluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// StartBalancer starts the container balancer with the request's
// parameters (zero: the defaults).
func (s *Server) StartBalancer(ctx context.Context, req *stratov1.StartBalancerRequest) (*stratov1.BalancerStatus, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	p := cluster.BalancerParams{Threshold: req.GetThreshold(), MaxSizePerIteration: req.GetMaxSizePerIteration(), Bandwidth: req.GetBandwidth(),
		NoYield: req.GetNoYield()}
	if err := s.cl.StartBalancer(ctx, s.now(), p); err != nil {
		return nil, toStatus(err)
	}
	st := s.cl.BalancerStatus()
	s.opts.Logger.Info("balancer started", "threshold", st.Threshold, "max_size_per_iteration", st.MaxSizePerIteration,
		"bandwidth", st.Bandwidth, "no_yield", st.NoYield, "spread", st.SpreadBefore)
	return st, nil
}

// StopBalancer stops the container balancer; the moves under way finish.
func (s *Server) StopBalancer(ctx context.Context, _ *stratov1.StopBalancerRequest) (*stratov1.BalancerStatus, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	if err := s.cl.StopBalancer(ctx, s.now()); err != nil {
		return nil, toStatus(err)
	}
	s.opts.Logger.Info("balancer stopped by an administrator")
	return s.cl.BalancerStatus(), nil
}

// GetBalancerStatus is the balancer's state and progress as the leader
// sees it.
func (s *Server) GetBalancerStatus(ctx context.Context, _ *stratov1.GetBalancerStatusRequest) (*stratov1.BalancerStatus, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	if err := s.readBarrier(ctx); err != nil {
		return nil, err
	}
	return s.cl.BalancerStatus(), nil
}
