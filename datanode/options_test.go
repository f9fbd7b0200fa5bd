package datanode

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOptionsRack(t *testing.T) {
	o := (&Options{Dirs: []string{"d"}, Meta: []string{"m"}}).EnsureDefaults()
	require.Equal(t, DefaultRack, o.Rack)
	require.NoError(t, o.Validate())
	for _, ok := range []string{"/rack1", "/dc1/rack1"} {
		o.Rack = ok
		require.NoError(t, o.Validate(), ok)
	}
	for _, bad := range []string{"rack1", "/rack1/", "/rack 1"} {
		o.Rack = bad
		require.ErrorContains(t, o.Validate(), "must be a path", bad)
	}
}
