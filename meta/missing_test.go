package meta

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Containers with no good replica are reported once each, with their IDs,
// when they become so, and once when they have a replica again.
func TestReportMissingOncePerContainer(t *testing.T) {
	var buf bytes.Buffer
	s := &Server{opts: Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))}}
	lines := func() []string {
		out := strings.Split(strings.TrimSpace(buf.String()), "\n")
		buf.Reset()
		if len(out) == 1 && out[0] == "" {
			return nil
		}
		return out
	}
	s.reportMissing([]uint64{7, 9})
	l := lines()
	require.Len(t, l, 1)
	require.Contains(t, l[0], "level=ERROR")
	require.Contains(t, l[0], "containers=\"[7 9]\"")
	s.reportMissing([]uint64{7, 9})
	require.Empty(t, lines(), "nothing new: no new line")
	s.reportMissing([]uint64{9, 11})
	l = lines()
	require.Len(t, l, 2)
	require.Contains(t, l[0], "containers=[11]")
	require.Contains(t, l[1], "level=INFO")
	require.Contains(t, l[1], "containers=[7]")
	s.reportMissing(nil)
	l = lines()
	require.Len(t, l, 1)
	require.Contains(t, l[0], "containers=\"[9 11]\"")
}
