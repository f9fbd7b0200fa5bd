package s3

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAccessCacheBytes: the cache of buckets' access counts what it holds
// exactly, never passes its bound, starts over when an entry would, and
// keeps no entry larger than the whole bound.
func TestAccessCacheBytes(t *testing.T) {
	c := accessCache{max: 4 << 10}
	now := time.Now()
	check := func() {
		t.Helper()
		var n int64
		for _, a := range c.m {
			n += a.cost
		}
		held, bound := c.held()
		require.Equal(t, n, held)
		require.LessOrEqual(t, held, bound)
	}
	for i := range 100 {
		c.put(fmt.Sprint("b", i%30), &bucketAccess{read: now, cost: 300})
		check()
	}
	require.NotNil(t, c.get("b9", now))
	c.forget("b9")
	check()
	c.put("huge", &bucketAccess{read: now, cost: 5 << 10})
	check()
	require.Nil(t, c.get("huge", now))
}
