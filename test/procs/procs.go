// Package procs runs strato server processes for tests, as an operator
// runs them: built once from the source (Build), started, stopped with
// SIGTERM, killed with SIGKILL, paused with SIGSTOP and started again with
// the same arguments on the same data directory, each start's output
// appended to one log file. The process tests of package test and the
// multi-host scenarios of test/netfault (which start the command in a
// host's network namespace) share it.
package procs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Build builds the strato command (pkg: its package directory, e.g.
// "../cmd/strato" from a test) into dir and returns the binary's path.
func Build(dir, pkg string) (string, error) {
	bin := filepath.Join(dir, "strato")
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building strato: %w\n%s", err, out)
	}
	return bin, nil
}

// Now reads CLOCK_MONOTONIC in nanoseconds. Every process on the machine
// reads the same clock, so times logged by different processes (and the
// start marks in a Proc's log) compare.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

// Proc is one server process. Set the exported fields, then Start.
type Proc struct {
	// Name says which process it is in logs and errors.
	Name string
	// Host is where it runs (test/netfault's host name; "" on this one).
	Host string
	// Bin and Args are the command. Env is added to the environment.
	Bin  string
	Args []string
	Env  []string
	// Log is the file every start's output is appended to, after a line
	// "==== start NAME (t=NANOSECONDS)" of Now.
	Log string
	// Command makes the command to start (default exec.Command; test/
	// netfault runs it in a host's namespace).
	Command func(bin string, args ...string) *exec.Cmd

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed once cmd has exited
	state   *os.ProcessState
	killed  bool // by the harness: an exit then is expected
	paused  bool
	crashes []string
}

// Start starts the process (again, after it exited).
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("procs: %s is already running", p.Name)
	}
	logf, err := os.OpenFile(p.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "==== start %s (t=%d)\n", p.Name, Now())
	command := p.Command
	if command == nil {
		command = exec.Command
	}
	cmd := command(p.Bin, p.Args...)
	cmd.Env = append(cmd.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return err
	}
	done := make(chan struct{})
	p.cmd, p.done, p.state, p.killed, p.paused = cmd, done, nil, false, false
	go func() {
		err := cmd.Wait()
		_ = logf.Close()
		p.mu.Lock()
		if !p.killed {
			p.crashes = append(p.crashes, fmt.Sprintf("%s exited by itself: %v (log %s)", p.Name, err, p.Log))
		}
		p.cmd, p.state = nil, cmd.ProcessState
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// Running reports whether the process is up (paused or not).
// Pid is the running process's ID (0 when it does not run).
func (p *Proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

// Paused reports whether the process is stopped by SIGSTOP.
func (p *Proc) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && p.paused
}

// State is how the process last exited (nil while it runs or before it
// ever ran).
func (p *Proc) State() *os.ProcessState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Signal sends sig: SIGKILL waits for the exit; SIGKILL and SIGTERM make
// the exit expected (not a crash); SIGSTOP and SIGCONT mark the process
// paused or not.
func (p *Proc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	if cmd == nil {
		p.mu.Unlock()
		return fmt.Errorf("procs: %s is not running", p.Name)
	}
	switch sig {
	case syscall.SIGKILL, syscall.SIGTERM:
		p.killed = true
	case syscall.SIGSTOP:
		p.paused = true
	case syscall.SIGCONT:
		p.paused = false
	}
	p.mu.Unlock()
	if err := cmd.Process.Signal(sig); err != nil {
		return err
	}
	if sig == syscall.SIGKILL {
		<-done
	}
	return nil
}

// Stop stops the process as an operator does: SIGTERM, then waits up to
// timeout for it to exit; an exit that is not 0, or none in time, is an
// error.
func (p *Proc) Stop(timeout time.Duration) error {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-done:
	case <-time.After(timeout):
		return fmt.Errorf("procs: %s did not stop within %v of SIGTERM", p.Name, timeout)
	}
	if st := p.State(); !st.Success() {
		return fmt.Errorf("procs: %s exits 0 on SIGTERM, not %v", p.Name, st)
	}
	return nil
}

// Kill kills the process if it runs and waits for it to exit.
func (p *Proc) Kill() {
	if p.Running() {
		_ = p.Signal(syscall.SIGKILL)
	}
}

// Crashes lists the exits the harness did not cause.
func (p *Proc) Crashes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.crashes...)
}

// KillAll sends SIGKILL to every process that runs, all at once, then
// waits for them all.
func KillAll(ps ...*Proc) {
	var dones []chan struct{}
	for _, p := range ps {
		p.mu.Lock()
		cmd, done := p.cmd, p.done
		if cmd != nil {
			p.killed = true
		}
		p.mu.Unlock()
		if cmd != nil {
			_ = cmd.Process.Signal(syscall.SIGKILL) // an exit under way ends too
			dones = append(dones, done)
		}
	}
	for _, d := range dones {
		<-d
	}
}
