package meta

import (
	"time"
)

type server struct{ clock interface{ Now() time.Time } }

func (s *server) expire() time.Time {
	return time.Now().Add(time.Hour) // line 10: the wall clock
}

func wait() {
	go func() { time.Sleep(time.Second) }() // line 14: in a closure too
}

// A local named time is not the package.
func shadowed(time interface{ Now() int }) int { return time.Now() }

func fine(s *server) time.Time { return s.clock.Now() }
