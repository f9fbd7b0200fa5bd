// Package topology maps datanodes to racks on meta's side, for operators
// who keep locations centrally rather than on each datanode (--rack): a
// table file, as Hadoop's TableMapping (net.topology.table.file.name), or
// a script, as its ScriptBasedMapping (net.topology.script.file.name).
//
// A datanode is looked up by its ID, then by the host of its data
// address. What the mapping does not name keeps the rack the datanode
// gave itself.
package topology

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// A Resolver says which rack a datanode is on. It is safe for concurrent
// use.
type Resolver interface {
	// Rack returns the rack of the datanode with this ID and data host,
	// "" when the mapping does not name it.
	Rack(ctx context.Context, id, host string) (string, error)
}

// Table is a fixed mapping from datanode IDs, host names or IP addresses
// to racks.
type Table map[string]string

// ParseTable reads a table: one "name rack" pair per line, the name a
// datanode ID, host name or IP address and the rack a path such as
// /dc1/rack1; blank lines and lines starting with # are skipped.
func ParseTable(r io.Reader) (Table, error) {
	t := Table{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 2 {
			return nil, fmt.Errorf("topology: line %d: want \"name rack\", got %q", line, text)
		}
		if err := CheckRack(f[1]); err != nil {
			return nil, fmt.Errorf("topology: line %d: %w", line, err)
		}
		if prev, dup := t[f[0]]; dup && prev != f[1] {
			return nil, fmt.Errorf("topology: line %d: %s is on %s and on %s", line, f[0], prev, f[1])
		}
		t[f[0]] = f[1]
	}
	return t, sc.Err()
}

// Rack implements Resolver.
func (t Table) Rack(_ context.Context, id, host string) (string, error) {
	if r, ok := t[id]; ok {
		return r, nil
	}
	return t[host], nil
}

// CheckRack reports whether rack is a rack path: it starts with /, does
// not end with one, and has no spaces.
func CheckRack(rack string) error {
	if !strings.HasPrefix(rack, "/") || strings.HasSuffix(rack, "/") || strings.ContainsAny(rack, " \t\n") {
		return fmt.Errorf("rack %q must be a path such as /dc1/rack1", rack)
	}
	return nil
}

// Script runs a program to map a datanode to its rack, as Hadoop's
// ScriptBasedMapping: it is called with the datanode's data host as its
// one argument and prints the rack. Its answers are kept, one per host,
// so it runs once per datanode host; a host it maps to nothing, or
// "/default-rack", keeps the datanode's own rack.
type Script struct {
	path    string
	timeout time.Duration

	mu    sync.Mutex
	cache map[string]string
}

// NewScript returns a Script that runs path, each run bounded by timeout
// (0: 10 seconds).
func NewScript(path string, timeout time.Duration) *Script {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &Script{path: path, timeout: timeout, cache: map[string]string{}}
}

// Rack implements Resolver.
func (s *Script) Rack(ctx context.Context, _ string, host string) (string, error) {
	s.mu.Lock()
	rack, ok := s.cache[host]
	s.mu.Unlock()
	if ok {
		return rack, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, s.path, host)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("topology: %s %s: %w: %s", s.path, host, err, strings.TrimSpace(stderr.String()))
	}
	f := strings.Fields(out.String())
	switch {
	case len(f) == 0 || f[0] == "/default-rack":
		rack = ""
	case len(f) > 1:
		return "", fmt.Errorf("topology: %s %s printed %d racks, want one", s.path, host, len(f))
	default:
		if err := CheckRack(f[0]); err != nil {
			return "", fmt.Errorf("topology: %s %s: %w", s.path, host, err)
		}
		rack = f[0]
	}
	s.mu.Lock()
	s.cache[host] = rack
	s.mu.Unlock()
	return rack, nil
}
