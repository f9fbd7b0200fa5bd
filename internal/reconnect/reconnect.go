// Package reconnect sets how soon a gRPC connection to a server that went
// away tries again. gRPC's default backs off from 1 s by 1.6 each attempt
// up to 2 minutes, so a meta replica or a peer back after a minute's
// outage waits up to another minute before its clients and its Raft
// leader reach it: the leader cannot send it the entries (or the snapshot)
// it missed, and datanodes cannot heartbeat to a restarted meta. Every
// connection strato makes to a meta replica retries within MaxDelay
// instead.
package reconnect

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

const (
	// BaseDelay is the pause after the first failed attempt.
	BaseDelay = 100 * time.Millisecond
	// MaxDelay bounds the pause between attempts.
	MaxDelay = time.Second
	// ConnectTimeout bounds one attempt to connect (a host that drops
	// packets instead of refusing them).
	ConnectTimeout = 5 * time.Second
)

// DialOption returns the dial option that retries a lost connection with
// pauses from BaseDelay growing by 1.6 to MaxDelay, each ±20%.
func DialOption() grpc.DialOption {
	return grpc.WithConnectParams(grpc.ConnectParams{
		Backoff: backoff.Config{
			BaseDelay:  BaseDelay,
			Multiplier: 1.6,
			Jitter:     0.2,
			MaxDelay:   MaxDelay,
		},
		MinConnectTimeout: ConnectTimeout,
	})
}
