package meta

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/certs"
	"github.com/strato-io/strato/proto/strato/v1"
)

// serverTLS returns the server options: opts, and with cfg the TLS
// credentials and the stream interceptor, and the unary interceptor (nil
// without cfg), that let only peers with a certificate of the cluster's CA
// call the services of nodes (DatanodeService, and RaftService between
// replicas).
//
// The handshake only requests a client certificate: a certificate of
// another CA, refused by the handshake, would leave its datanode with a
// broken connection and no reason; verified per call, it gets an
// Unauthenticated status that says why.
func serverTLS(cfg *tls.Config, opts ...grpc.ServerOption) ([]grpc.ServerOption, grpc.UnaryServerInterceptor) {
	if cfg == nil {
		return opts, nil
	}
	cfg = cfg.Clone()
	cfg.ClientAuth = tls.RequestClientCert
	pool := cfg.ClientCAs
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if err := nodeOnly(ctx, pool, info.FullMethod); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
	return append(opts,
		grpc.Creds(credentials.NewTLS(cfg)),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := nodeOnly(ss.Context(), pool, info.FullMethod); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	), unary
}

// Prefixes of the methods only nodes may call.
var nodeServices = []string{
	"/" + stratov1.DatanodeService_ServiceDesc.ServiceName + "/",
	"/" + stratov1.RaftService_ServiceDesc.ServiceName + "/",
}

// nodeOnly refuses a call to a node service from a peer without a
// certificate of the cluster's CA.
func nodeOnly(ctx context.Context, pool *x509.CertPool, method string) error {
	node := false
	for _, p := range nodeServices {
		node = node || strings.HasPrefix(method, p)
	}
	if !node {
		return nil
	}
	p, ok := peer.FromContext(ctx)
	if !ok {
		return status.Error(codes.Unauthenticated, "meta: no peer information")
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return status.Error(codes.Unauthenticated, "meta: node services need TLS")
	}
	if err := certs.Verified(pool, info.State); err != nil {
		return status.Errorf(codes.Unauthenticated, "meta: %s refused: a node needs a certificate signed by the cluster CA: %v", method, err)
	}
	return nil
}
