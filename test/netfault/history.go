package netfault

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/strato-io/strato/test/procs"
)

// Now reads CLOCK_MONOTONIC in nanoseconds (procs.Now): every process on
// the machine reads the same clock, so the client processes' operation
// times and the test's fault times are comparable.
func Now() int64 { return procs.Now() }

// Outcome of an operation, as its client saw it.
const (
	// OK: the operation succeeded; its result fields are set.
	OK = "ok"
	// Fail: the operation failed with a definite error (Code) that says
	// something about the state (not found, already exists, ...).
	Fail = "fail"
	// NoEffect: the operation failed at a step that cannot have changed
	// the namespace (e.g. opening a key or writing its data, before the
	// commit); it tells nothing about the state.
	NoEffect = "noeffect"
	// Unknown: the operation may or may not have taken effect (a timeout, a
	// lost connection). It is checked as if still running at the end.
	Unknown = "unknown"
)

// Op is one client operation with its outcome: a line of the history.
type Op struct {
	// Worker names the client sequence that issued it: host/worker/epoch.
	// A worker starts a new epoch after an operation of unknown outcome,
	// so that each sequence has at most one operation without a return.
	Worker string `json:"w"`
	Kind   string `json:"k"`
	// Part is the group the operation touches (a porcupine partition), or
	// "u" for the unique-name operations, "" for none.
	Part string `json:"p,omitempty"`
	// A and B are slot indexes in the group (B: a rename's target); Name
	// is the unique name of a "u" operation.
	A    int    `json:"a"`
	B    int    `json:"b,omitempty"`
	Name string `json:"n,omitempty"`
	// Val is the content a create or put writes.
	Val       string `json:"v,omitempty"`
	Overwrite bool   `json:"o,omitempty"`
	// NoHint: a create or put without a size hint (its block is allocated
	// by AllocateBlock, not with the open key).
	NoHint bool  `json:"nh,omitempty"`
	Call   int64 `json:"call"`
	Return int64 `json:"ret"` // 0 when Unknown

	Outcome string `json:"out"`
	// Sends counts the sends of the call that makes the operation's effect
	// (CommitKey, CreateDirectory, Rename, Delete, ...): more than one is
	// a retry under the same request ID, which meta must apply once.
	Sends int    `json:"sends,omitempty"`
	Code  string `json:"code,omitempty"` // the gRPC code of a Fail
	Err   string `json:"err,omitempty"`
	// Results of reads.
	Got   string   `json:"got,omitempty"`   // content read
	IsDir bool     `json:"dir,omitempty"`   // stat
	Size  int64    `json:"size,omitempty"`  // stat
	Names []string `json:"names,omitempty"` // list
}

// Recorder appends operations to a JSON-lines file; it is safe for
// concurrent use, and each line is written when its operation ends.
type Recorder struct {
	mu sync.Mutex
	f  *os.File
	w  *bufio.Writer
}

// NewRecorder creates path.
func NewRecorder(path string) (*Recorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &Recorder{f: f, w: bufio.NewWriter(f)}, nil
}

// Add writes op; flush pushes it to the file at once (a reader tails it).
func (r *Recorder) Add(op *Op, flush bool) error {
	b, err := json.Marshal(op)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.w.Write(append(b, '\n')); err != nil {
		return err
	}
	if flush {
		return r.w.Flush()
	}
	return nil
}

// Close flushes and closes the file.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.w.Flush(), r.f.Sync(), r.f.Close())
}

// ReadHistory reads the operations of JSON-lines files.
func ReadHistory(paths ...string) ([]*Op, error) {
	var ops []*Op
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(f)
		for {
			op := &Op{}
			if err := dec.Decode(op); err == io.EOF {
				break
			} else if err != nil {
				_ = f.Close()
				return nil, fmt.Errorf("netfault: %s: %w", p, err)
			}
			ops = append(ops, op)
		}
		_ = f.Close()
	}
	return ops, nil
}
