package client

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// fly appends a chunk in flight to w (as send does) and reports whether w
// may go on without waiting for an acknowledgement.
func fly(w *Writer) bool {
	w.pending = append(w.pending, &chunkSend{data: make([]byte, 1), done: make(chan error, 1)})
	return w.mayFly()
}

// ack acknowledges w's oldest chunk in flight, as the datanode would.
func ack(t *testing.T, w *Writer) {
	t.Helper()
	w.pending[w.nAcked].done <- nil
	require.NoError(t, w.waitNext())
}

// A writer's chunks in flight beyond its own four take slots of the
// client's shared window while they fly, up to MaxChunksInFlight: one
// writer alone takes what it may, a second gets its own four and then
// what the first gives back as its chunks are acknowledged, and every slot
// is back once nothing flies.
func TestSharedWindow(t *testing.T) {
	c := &Client{opts: Options{ChunkSize: 1 << 20, MaxChunksInFlight: 10, SharedWindow: 8 << 20}}
	c.window.Store(8)
	a, b := &Writer{c: c}, &Writer{c: c}
	held := func() int64 { return c.window.Load() + int64(a.slots+b.slots) }

	for i := 1; i <= 10; i++ {
		ok := fly(a)
		require.True(t, ok, "chunk %d of a", i)
	}
	ok := fly(a)
	require.False(t, ok, "an 11th chunk past MaxChunksInFlight")
	require.Equal(t, 6, a.slots)
	require.EqualValues(t, 2, c.window.Load())

	for i := 1; i <= 6; i++ {
		ok := fly(b)
		require.True(t, ok, "chunk %d of b", i)
	}
	ok = fly(b)
	require.False(t, ok, "b's 7th chunk: the window is taken")
	require.Equal(t, 2, b.slots)
	require.EqualValues(t, 8, held())

	// a's acknowledgements give back the slots its chunks no longer need.
	for a.nAcked < 3 {
		ack(t, a)
		require.EqualValues(t, 8, held())
	}
	require.Equal(t, 4, a.slots, "a has 8 in flight: 4 its own")
	require.EqualValues(t, 2, c.window.Load())
	require.True(t, b.mayFly(), "b's 7th chunk takes a slot a gave back")
	require.Equal(t, 3, b.slots)
	require.EqualValues(t, 8, held())

	for a.nAcked < len(a.pending) {
		ack(t, a)
	}
	for b.nAcked < len(b.pending) {
		ack(t, b)
	}
	require.Zero(t, a.slots)
	require.Zero(t, b.slots)
	require.EqualValues(t, 8, c.window.Load(), "every slot back")

	// Without a shared window a writer has its own four.
	c.window.Store(0)
	w := &Writer{c: c}
	for i := 1; i <= 4; i++ {
		ok := fly(w)
		require.True(t, ok)
	}
	ok = fly(w)
	require.False(t, ok)
}
