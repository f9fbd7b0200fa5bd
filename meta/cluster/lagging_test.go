package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

func TestLaggingReplicas(t *testing.T) {
	const (
		open      = stratov1.ContainerState_CONTAINER_OPEN
		closing   = stratov1.ContainerState_CONTAINER_CLOSING
		closed    = stratov1.ContainerState_CONTAINER_CLOSED
		unhealthy = stratov1.ContainerState_CONTAINER_UNHEALTHY
	)
	type rep struct {
		state stratov1.ContainerState
		bcs   uint64
	}
	for _, tc := range []struct {
		name string
		reps map[string]rep
		want []string
	}{
		{"none", map[string]rep{}, nil},
		{"all equal", map[string]rep{"a": {closed, 7}, "b": {closed, 7}, "c": {closed, 7}}, nil},
		{"one behind", map[string]rep{"a": {closed, 7}, "b": {closed, 5}, "c": {closed, 7}}, []string{"b"}},
		{"two behind, by different amounts", map[string]rep{"a": {closed, 9}, "b": {closed, 5}, "c": {closed, 8}}, []string{"b", "c"}},
		{"still closing is not judged", map[string]rep{"a": {closed, 7}, "b": {closing, 2}, "c": {open, 1}}, nil},
		{"unhealthy is not judged and does not set the mark", map[string]rep{"a": {closed, 3}, "b": {unhealthy, 9}}, nil},
		{"a lone closed replica is the reference", map[string]rep{"a": {closed, 3}}, nil},
		{"empty containers", map[string]rep{"a": {closed, 0}, "b": {closed, 0}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reps replicaSet
			for id, r := range tc.reps {
				reps.put(replica{node: id, State: r.state, BcsId: r.bcs})
			}
			require.Equal(t, tc.want, laggingReplicas(reps))
		})
	}
}
