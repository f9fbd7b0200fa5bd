package topology

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseTable(t *testing.T) {
	tab, err := ParseTable(strings.NewReader(`
# datanode or host, rack
dn-7        /dc1/rack7
10.0.0.1    /dc1/rack1
host-b.example /dc1/rack2
`))
	require.NoError(t, err)
	ctx := context.Background()
	for _, c := range []struct{ id, host, want string }{
		{"dn-7", "10.0.0.1", "/dc1/rack7"}, // the ID comes first
		{"dn-1", "10.0.0.1", "/dc1/rack1"},
		{"dn-2", "host-b.example", "/dc1/rack2"},
		{"dn-3", "10.0.0.3", ""}, // not named: the datanode's own
	} {
		got, err := tab.Rack(ctx, c.id, c.host)
		require.NoError(t, err)
		require.Equal(t, c.want, got, "%s at %s", c.id, c.host)
	}
	for _, bad := range []string{"dn-1", "dn-1 rack1", "dn-1 /r1 extra", "dn-1 /r1/", "dn-1 /r1\ndn-1 /r2"} {
		_, err := ParseTable(strings.NewReader(bad))
		require.Error(t, err, "%q", bad)
	}
}

func TestScript(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	script := filepath.Join(dir, "rack.sh")
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/sh
echo "$1" >> `+calls+`
case "$1" in
  10.0.0.1) echo /dc1/rack1 ;;
  10.0.0.2) echo /default-rack ;;
  10.0.0.3) echo not-a-path ;;
  10.0.0.4) exit 3 ;;
esac
`), 0o755))
	s := NewScript(script, 0)
	ctx := context.Background()
	for range 2 {
		r, err := s.Rack(ctx, "dn-1", "10.0.0.1")
		require.NoError(t, err)
		require.Equal(t, "/dc1/rack1", r)
	}
	r, err := s.Rack(ctx, "dn-2", "10.0.0.2")
	require.NoError(t, err)
	require.Empty(t, r, "/default-rack keeps the datanode's own")
	_, err = s.Rack(ctx, "dn-3", "10.0.0.3")
	require.ErrorContains(t, err, "must be a path")
	_, err = s.Rack(ctx, "dn-4", "10.0.0.4")
	require.ErrorContains(t, err, "exit status 3")
	b, err := os.ReadFile(calls)
	require.NoError(t, err)
	require.Equal(t, "10.0.0.1\n10.0.0.2\n10.0.0.3\n10.0.0.4\n", string(b), "one run per host; answers kept")
}
