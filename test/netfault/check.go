package netfault

import (
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// Report is the verdict on a history.
type Report struct {
	Ops, OKs, Fails, NoEffects, Unknowns int
	// Resent counts the mutations with an answer whose commit-point call
	// was sent more than once under its request ID (redirected, or
	// retried after a timeout or a lost connection): the checks hold them
	// to one effect.
	Resent int
	// Linearizable is porcupine's verdict on the group operations
	// (porcupine.Unknown when the check timed out).
	Linearizable porcupine.CheckResult
	Info         porcupine.LinearizationInfo
	CheckTime    time.Duration
	// UniqueAcked counts the acknowledged unique-name creations; each
	// must be in the final listing.
	UniqueAcked, UniquePresent int
	// Problems are the failures of the explicit checks: acknowledged
	// creations missing at the end (lost), names present that no
	// operation made or whose operation failed (applied despite the
	// error, or applied twice).
	Problems []string
}

// OK reports whether the history passed every check.
func (r *Report) OK() bool { return r.Linearizable == porcupine.Ok && len(r.Problems) == 0 }

func (r *Report) String() string {
	return fmt.Sprintf("%d ops (%d ok, %d failed, %d without effect, %d unknown; %d answered after a resend); linearizable: %s in %v; unique names: %d acknowledged, %d present; %d problems",
		r.Ops, r.OKs, r.Fails, r.NoEffects, r.Unknowns, r.Resent, r.Linearizable, r.CheckTime.Round(time.Millisecond), r.UniqueAcked, r.UniquePresent, len(r.Problems))
}

// Check checks a history: the group operations for linearizability against
// Model (porcupine, at most timeout), and the unique-name operations
// against the final listing of their directory.
func Check(ops []*Op, timeout time.Duration) *Report {
	r := &Report{Ops: len(ops)}
	var end int64
	for _, op := range ops {
		end = max(end, op.Return, op.Call)
		if op.Sends > 1 && (op.Outcome == OK || op.Outcome == Fail) {
			r.Resent++
		}
		switch op.Outcome {
		case OK:
			r.OKs++
		case Fail:
			r.Fails++
		case NoEffect:
			r.NoEffects++
		case Unknown:
			r.Unknowns++
		}
	}
	clients := map[string]int{}
	var hist []porcupine.Operation
	for _, op := range ops {
		if op.Part == "" || op.Part == "u" || op.Outcome == NoEffect {
			continue
		}
		if !mutates(op.Kind) && op.Outcome == Unknown {
			continue // a read without an answer says nothing
		}
		id, ok := clients[op.Worker]
		if !ok {
			id = len(clients)
			clients[op.Worker] = id
		}
		ret := op.Return
		if op.Outcome == Unknown {
			ret = end + 1 // still running at the end
		}
		hist = append(hist, porcupine.Operation{ClientId: id, Input: op, Call: op.Call, Output: op, Return: ret})
	}
	start := time.Now()
	r.Linearizable, r.Info = porcupine.CheckOperationsVerbose(Model, hist, timeout)
	r.CheckTime = time.Since(start)
	r.Problems = checkUnique(ops, r)
	return r
}

// checkUnique compares the unique-name operations with the final listing.
func checkUnique(ops []*Op, r *Report) []string {
	type attempt struct{ outcome, kind string }
	attempts := map[string]attempt{}
	var listing *Op
	for _, op := range ops {
		if op.Part != "u" {
			continue
		}
		if op.Kind == "ulist" {
			if op.Outcome == OK {
				listing = op
			}
			continue
		}
		attempts[op.Name] = attempt{op.Outcome, op.Kind}
		if op.Outcome == OK {
			r.UniqueAcked++
		}
	}
	if listing == nil {
		return []string{"no final listing of the unique names"}
	}
	var problems []string
	present := map[string]bool{}
	for _, n := range listing.Names {
		present[n] = true
	}
	r.UniquePresent = len(present)
	for name, a := range attempts {
		switch {
		case a.outcome == OK && !present[name]:
			problems = append(problems, fmt.Sprintf("lost: %s %s was acknowledged and is missing", a.kind, name))
		case (a.outcome == Fail || a.outcome == NoEffect) && present[name]:
			problems = append(problems, fmt.Sprintf("%s %s failed (%s) yet it exists: applied despite the error, or twice", a.kind, name, a.outcome))
		}
	}
	for _, n := range listing.Names {
		if _, ok := attempts[n]; !ok {
			problems = append(problems, fmt.Sprintf("phantom: %s exists and no operation made it", n))
		}
	}
	slices.Sort(problems)
	return problems
}

// Visualize writes porcupine's HTML view of the checked history, with the
// faults as annotations.
func Visualize(r *Report, faults []Event, path string) error {
	var ann []porcupine.Annotation
	for _, f := range faults {
		end := f.End
		if end == 0 {
			end = f.Start
		}
		ann = append(ann, porcupine.Annotation{Tag: "faults", Start: f.Start, End: end, Description: f.What, Details: f.What})
	}
	r.Info.AddAnnotations(ann)
	return porcupine.VisualizePath(Model, r.Info, path)
}
