package telemetry

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestAuditLeavesSecretsOut: a request field marked debug_redact (an S3
// key's secret) never reaches the audit log; its other fields do.
func TestAuditLeavesSecretsOut(t *testing.T) {
	var out bytes.Buffer
	a := NewAudit(&out)
	req := &stratov1.CreateS3KeyRequest{User: "alice", AccessKey: "alice-key", Secret: "do-not-log-me"}
	_, err := a.Unary(context.Background(), req, &grpc.UnaryServerInfo{FullMethod: "/strato.v1.AdminService/CreateS3Key"},
		func(context.Context, any) (any, error) {
			return &stratov1.CreateS3KeyResponse{Secret: "do-not-log-me"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	line := out.String()
	if strings.Contains(line, "do-not-log-me") || !strings.Contains(line, `"access_key":"alice-key"`) || !strings.Contains(line, `"user":"alice"`) {
		t.Fatalf("audit line: %s", line)
	}
}

// Reads are not audited: Get*, List*, Lookup*, MetaStatus,
// ContainerReplicas, WhoAmI.
func TestIsMutation(t *testing.T) {
	for m, want := range map[string]bool{
		"/strato.v1.NamespaceService/CreateVolume":  true,
		"/strato.v1.NamespaceService/SetPermission": true,
		"/strato.v1.AdminService/IssueToken":        true,
		"/strato.v1.NamespaceService/GetFileStatus": false,
		"/strato.v1.NamespaceService/ListStatus":    false,
		"/strato.v1.NamespaceService/LookupKey":     false,
		"/strato.v1.AdminService/MetaStatus":        false,
		"/strato.v1.AdminService/ContainerReplicas": false,
		"/strato.v1.AdminService/WhoAmI":            false,
		"/strato.v1.DatanodeService/Heartbeat":      false,
	} {
		require.Equal(t, want, IsMutation(m), m)
	}
}
