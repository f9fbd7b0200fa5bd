package datanode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/strato-io/strato/wire"
)

// replicate runs a pipelined request: local on this datanode and remote on
// every follower, all at once (a star: the leader sends to each follower
// itself, so a follower's latency adds to nobody else's). It returns nil
// only if every replica succeeded; otherwise an *wire.Error that names the
// failed followers (docs/wire.md §6): the leader's own code if it failed,
// FOLLOWER_FAILED otherwise.
func (s *Server) replicate(ctx context.Context, followers []string, local func() error, remote func(context.Context, *wire.Conn) error) error {
	errs := make([]error, len(followers))
	var wg sync.WaitGroup
	for i, addr := range followers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.forward(ctx, addr, remote)
		}()
	}
	lerr := local()
	wg.Wait()

	var (
		failed []wire.FailedNode
		why    []string
	)
	for i, err := range errs {
		if err == nil {
			continue
		}
		s.m.forwardErrors.Add(1)
		code := wire.CodeOf(err)
		if code == 0 {
			code = wire.CodeUnavailable // unreachable, broken connection, timeout
		}
		failed = append(failed, wire.FailedNode{Addr: followers[i], Code: code})
		why = append(why, fmt.Sprintf("follower %s: %v", followers[i], err))
	}
	if lerr != nil {
		e := toWire(lerr)
		if len(failed) > 0 {
			e = &wire.Error{Code: e.Code, Message: e.Message + "; " + strings.Join(why, "; "), Failed: failed}
		}
		return e
	}
	if len(failed) > 0 {
		return &wire.Error{Code: wire.CodeFollowerFailed, Message: strings.Join(why, "; "), Failed: failed}
	}
	return nil
}

// forward sends one request to a follower over a pooled connection. A
// pooled connection that turns out broken (the follower restarted, or
// closed it as idle) is retried once on a fresh one: every request type is
// idempotent.
func (s *Server) forward(ctx context.Context, addr string, remote func(context.Context, *wire.Conn) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ForwardTimeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		s.m.forwarded.Add(1)
		c, err := s.pool.Get(ctx, addr)
		if err == nil {
			err = remote(ctx, c)
		}
		if err == nil || attempt > 0 || !errors.Is(err, wire.ErrConnClosed) || ctx.Err() != nil {
			return err
		}
	}
}
