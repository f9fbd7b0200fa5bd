package container

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// State is a container's lifecycle state. The numeric values are not stored
// (descriptors hold the names).
type State uint8

const (
	// Open containers accept writes.
	Open State = iota + 1
	// Closing containers refuse writes and are being closed.
	Closing
	// Closed containers are immutable.
	Closed
	// Unhealthy containers failed a check; they are kept for inspection.
	Unhealthy
)

var stateNames = map[State]string{Open: "OPEN", Closing: "CLOSING", Closed: "CLOSED", Unhealthy: "UNHEALTHY"}

// String is the state's name in container reports (OPEN, CLOSING, CLOSED,
// UNHEALTHY).
func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

func parseState(s string) (State, bool) {
	for st, n := range stateNames {
		if n == s {
			return st, true
		}
	}
	return 0, false
}

// CanTransition reports whether a container may go from s to next:
// OPEN → CLOSING → CLOSED, OPEN → CLOSED, and anything → UNHEALTHY.
// Staying in the same state is allowed (operations are idempotent).
func (s State) CanTransition(next State) bool {
	switch {
	case s == next, next == Unhealthy:
		return true
	case s == Open:
		return next == Closing || next == Closed
	case s == Closing:
		return next == Closed
	}
	return false
}

// descriptor is the content of container.desc.
type descriptor struct {
	id     uint64
	layout Layout
	state  State
	// index is the replica index of an erasure coded container's replica
	// (0: a replicated container). Written only when not 0, so that the
	// descriptors of replicated containers are what they always were.
	index int
}

// MaxReplicaIndex is the highest replica index: an erasure coded
// container's block groups have at most this many members.
const MaxReplicaIndex = 255

func validIndex(i int) bool { return i >= 0 && i <= MaxReplicaIndex }

const descMagic = "strato-container v1"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (d descriptor) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nid %d\nlayout %s\nstate %s\n", descMagic, d.id, d.layout, d.state)
	if d.index != 0 {
		fmt.Fprintf(&b, "index %d\n", d.index)
	}
	fmt.Fprintf(&b, "crc %08x\n", crc32.Checksum(b.Bytes(), castagnoli))
	return b.Bytes()
}

func decodeDescriptor(p []byte) (descriptor, error) {
	i := bytes.LastIndex(p, []byte("crc "))
	if i < 0 || !bytes.HasSuffix(p, []byte("\n")) {
		return descriptor{}, fmt.Errorf("%w: descriptor has no checksum line", ErrCorrupt)
	}
	want, err := strconv.ParseUint(strings.TrimSpace(string(p[i+4:])), 16, 32)
	if err != nil || uint32(want) != crc32.Checksum(p[:i], castagnoli) {
		return descriptor{}, fmt.Errorf("%w: descriptor checksum mismatch", ErrCorrupt)
	}
	lines := strings.Split(strings.TrimSuffix(string(p[:i]), "\n"), "\n")
	if len(lines) != 4 && len(lines) != 5 || lines[0] != descMagic {
		return descriptor{}, fmt.Errorf("%w: descriptor has an unknown format", ErrCorrupt)
	}
	var d descriptor
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, " ")
		var ok bool
		switch k {
		case "id":
			d.id, err = ParseID(v)
			ok = err == nil
		case "layout":
			d.layout, err = ParseLayout(v)
			ok = err == nil
		case "state":
			d.state, ok = parseState(v)
		case "index":
			d.index, err = strconv.Atoi(v)
			ok = err == nil && validIndex(d.index) && d.index != 0
		}
		if !ok {
			return descriptor{}, fmt.Errorf("%w: descriptor line %q", ErrCorrupt, l)
		}
	}
	return d, nil
}
