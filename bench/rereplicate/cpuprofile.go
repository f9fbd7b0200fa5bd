package rereplicate

import (
	"bytes"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/google/pprof/profile"

	"github.com/strato-io/strato/datanode/replication"
)

// labelProfile is a CPU profile of this process taken while a benchmark
// measures, read back per pprof label: the datanodes of an in-process
// cluster run their replication under replication.ProfileLabels, so the
// cost of one datanode's pushes (the source side, sendfile's kernel time
// included) is told apart from its imports and from everything else.
type labelProfile struct {
	buf     bytes.Buffer
	on      bool
	stopped bool
}

// startLabelProfile starts the profiler; if it cannot (a profile is
// already running), stop returns no figures.
func startLabelProfile() *labelProfile {
	p := &labelProfile{}
	p.on = pprof.StartCPUProfile(&p.buf) == nil
	return p
}

// CPU is CPU time by replication role and datanode.
type CPU struct {
	// Push and Import are CPU seconds per datanode ID spent sending and
	// receiving containers; Other is the rest of the process.
	Push, Import map[string]float64
	Other        float64
}

// Total returns the seconds of role (replication.RolePush or RoleImport)
// over every datanode.
func (c CPU) Total(role string) float64 {
	m := c.Push
	if role == replication.RoleImport {
		m = c.Import
	}
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

// stop stops the profiler and sums its samples by label; with save set,
// the profile is also written there (for go tool pprof).
func (p *labelProfile) stop(save string) (CPU, error) {
	cpu := CPU{Push: map[string]float64{}, Import: map[string]float64{}}
	if p.stopped {
		return cpu, nil
	}
	p.stopped = true
	if !p.on {
		return cpu, fmt.Errorf("bench: the CPU profiler was busy")
	}
	pprof.StopCPUProfile()
	if save != "" {
		if err := os.WriteFile(save, p.buf.Bytes(), 0o644); err != nil {
			return cpu, err
		}
	}
	prof, err := profile.Parse(&p.buf)
	if err != nil {
		return cpu, fmt.Errorf("bench: read the CPU profile: %w", err)
	}
	idx := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		return cpu, fmt.Errorf("bench: the CPU profile has no cpu/nanoseconds samples")
	}
	for _, s := range prof.Sample {
		sec := float64(s.Value[idx]) / 1e9
		id, role := first(s.Label[replication.LabelDatanode]), first(s.Label[replication.LabelRole])
		switch role {
		case replication.RolePush:
			cpu.Push[id] += sec
		case replication.RoleImport:
			cpu.Import[id] += sec
		default:
			cpu.Other += sec
		}
	}
	return cpu, nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
