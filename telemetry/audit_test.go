package telemetry

import (
	"bytes"
	"context"
	"strings"
	"testing"

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
