package telemetry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestS3Metrics: the gateway's series keep the names and labels that
// deploy/grafana's dashboards query.
func TestS3Metrics(t *testing.T) {
	reg := NewRegistry()
	m := NewS3Metrics(reg)
	m.Observe("PutObject", 200, 3*time.Millisecond, 100, 0)
	m.Observe("", 403, time.Millisecond, 0, 250)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	got := map[string][]map[string]string{}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[mf.GetName()] = append(got[mf.GetName()], labels)
		}
	}
	require.ElementsMatch(t, []map[string]string{{"op": "PutObject", "status": "200"}, {"op": "Unknown", "status": "403"}},
		got["strato_s3_requests_total"])
	require.ElementsMatch(t, []map[string]string{{"op": "PutObject"}, {"op": "Unknown"}}, got["strato_s3_request_seconds"])
	require.Len(t, got["strato_s3_received_bytes_total"], 1)
	require.Len(t, got["strato_s3_sent_bytes_total"], 1)
}
