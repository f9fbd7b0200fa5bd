package client

// The write window (decision 0113): a writer's first OwnChunksInFlight
// chunks in flight are its own; each one beyond, up to MaxChunksInFlight,
// takes a slot of the window its client's writers share (SharedWindow)
// while it flies.

// mayFly reports whether the writer's chunks in flight are within its
// window: OwnChunksInFlight, and up to MaxChunksInFlight with a slot of
// the client's shared window for each one beyond (taken here as needed).
func (w *Writer) mayFly() bool {
	n := len(w.pending) - w.nAcked
	if n <= w.ownChunks()+w.slots {
		return true
	}
	if n <= w.c.opts.MaxChunksInFlight && w.c.takeSlot() {
		w.slots++
		return true
	}
	return false
}

// landed gives back the slots the writer's chunks in flight no longer
// need (after an acknowledgement, or none in flight).
func (w *Writer) landed() {
	if n := max(len(w.pending)-w.nAcked-w.ownChunks(), 0); w.slots > n {
		w.c.giveSlots(w.slots - n)
		w.slots = n
	}
}

// ownChunks are the chunks the writer may have in flight without slots.
func (w *Writer) ownChunks() int { return min(OwnChunksInFlight, w.c.opts.MaxChunksInFlight) }

// takeSlot takes a slot of the shared window, if one is free.
func (c *Client) takeSlot() bool {
	for {
		n := c.window.Load()
		if n <= 0 {
			return false
		}
		if c.window.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// giveSlots gives n slots back to the shared window.
func (c *Client) giveSlots(n int) {
	if n > 0 {
		c.window.Add(int64(n))
	}
}
