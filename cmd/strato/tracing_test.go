package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/telemetry"
)

// TestRequestIDFlag: --request-id names a command's calls in meta's audit
// log.
func TestRequestIDFlag(t *testing.T) {
	var audit syncBuffer
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true,
		TickInterval: 50 * time.Millisecond, ConfigureMeta: func(_ int, o *meta.Options) {
			o.Raft = consensus.Options{TickInterval: 10 * time.Millisecond, ElectionTicks: 10, HeartbeatTicks: 1}
			o.UnaryInterceptors = append(o.UnaryInterceptors, telemetry.NewAudit(&audit).Unary)
		}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	h := &cliHarness{t: t, addr: c.MetaAddr()}
	h.ok("sh", "volume", "create", "vol", "--request-id", "ticket-4711")
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		if m["method"] == "NamespaceService/CreateVolume" {
			require.Equal(t, "ticket-4711", m["request_id"])
			found = true
		}
	}
	require.True(t, found, "CreateVolume in the audit log:\n%s", audit.String())
}

// TestAccessLogFlag: --access-log takes a file (appended to), "-" or "off".
func TestAccessLogFlag(t *testing.T) {
	var stdout bytes.Buffer
	w, done, err := openAccessLog("-", &stdout)
	require.NoError(t, err)
	require.Equal(t, &stdout, w)
	done()
	w, done, err = openAccessLog("off", &stdout)
	require.NoError(t, err)
	require.Nil(t, w)
	done()
	path := filepath.Join(t.TempDir(), "access.log")
	require.NoError(t, os.WriteFile(path, []byte("kept\n"), 0o600))
	w, done, err = openAccessLog(path, &stdout)
	require.NoError(t, err)
	_, err = w.Write([]byte("added\n"))
	require.NoError(t, err)
	done()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "kept\nadded\n", string(b))
	_, _, err = openAccessLog(filepath.Join(path, "no", "dir"), &stdout)
	require.ErrorContains(t, err, "--access-log")
}
