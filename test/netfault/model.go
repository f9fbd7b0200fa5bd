package netfault

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// The namespace is checked group by group. A group is a directory of an
// FSO bucket with five names — three file slots f0..f2 (files only: create,
// read, stat, rename among them, delete) and two directory slots d0, d1
// (mkdir, stat, delete) — or a prefix of an OBS bucket with three keys
// k0..k2 (put, get, delete, rename). No operation spans two groups, so
// each group is a porcupine partition, checked on its own.

const (
	fsoSlots  = 5 // f0 f1 f2 d0 d1
	fileSlots = 3
	obsSlots  = 3 // k0 k1 k2
)

// SlotName is the name of slot i of a group ("f"/"o" prefix of part).
func SlotName(part string, i int) string {
	if strings.HasPrefix(part, "o") {
		return fmt.Sprintf("k%d", i)
	}
	if i < fileSlots {
		return fmt.Sprintf("f%d", i)
	}
	return fmt.Sprintf("d%d", i-fileSlots)
}

// groupState is one group: per slot "" (absent), "D" (a directory) or
// "F:" + content (a file or key).
type groupState [fsoSlots]string

// expect runs op on s: the outcome the namespace must report ("ok" or the
// gRPC code name of the failure), whether a read's results match s, and
// the state after it.
func expect(s groupState, op *Op) (want string, readOK bool, next groupState) {
	next = s
	a := s[op.A]
	file := strings.HasPrefix(a, "F:")
	switch op.Kind {
	case "create", "put":
		if file && !op.Overwrite && op.Kind == "create" {
			return "AlreadyExists", true, s
		}
		next[op.A] = "F:" + op.Val
		return "ok", true, next
	case "read", "get":
		if a == "" {
			return "NotFound", true, s
		}
		return "ok", file && op.Got == a[2:], s
	case "stat":
		if a == "" {
			return "NotFound", true, s
		}
		if a == "D" {
			return "ok", op.IsDir, s
		}
		return "ok", !op.IsDir && op.Size == int64(len(a)-2), s
	case "rename", "mv":
		if a == "" {
			return "NotFound", true, s
		}
		if s[op.B] != "" {
			return "AlreadyExists", true, s
		}
		next[op.B], next[op.A] = a, ""
		return "ok", true, next
	case "delete", "del":
		if a == "" {
			return "NotFound", true, s
		}
		next[op.A] = ""
		return "ok", true, next
	case "mkdir":
		next[op.A] = "D"
		return "ok", true, next
	case "list":
		var names []string
		for i, v := range s {
			if v != "" {
				names = append(names, SlotName(op.Part, i))
			}
		}
		sort.Strings(names)
		got := slices.Clone(op.Names)
		sort.Strings(got)
		return "ok", slices.Equal(names, got), s
	}
	return "unknown operation " + op.Kind, false, s
}

// mutates reports whether a kind may change the state.
func mutates(kind string) bool {
	switch kind {
	case "create", "put", "rename", "mv", "delete", "del", "mkdir":
		return true
	}
	return false
}

func stepGroup(state, input, _ any) (bool, any) {
	s := state.(groupState)
	op := input.(*Op)
	want, readOK, next := expect(s, op)
	switch op.Outcome {
	case NoEffect:
		return true, s
	case Unknown:
		// Linearized somewhere after its call; an unknown read says nothing.
		if want == "ok" {
			return true, next
		}
		return true, s
	case OK:
		return want == "ok" && readOK, next
	case Fail:
		return op.Code == want, s
	}
	return false, s
}

// Model is the porcupine model of one group.
var Model = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byPart := map[string][]porcupine.Operation{}
		var order []string
		for _, o := range history {
			p := o.Input.(*Op).Part
			if _, ok := byPart[p]; !ok {
				order = append(order, p)
			}
			byPart[p] = append(byPart[p], o)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, p := range order {
			out = append(out, byPart[p])
		}
		return out
	},
	Init: func() any { return groupState{} },
	Step: func(state, input, output any) (bool, any) { return stepGroup(state, input, output) },
	Equal: func(a, b any) bool {
		return a.(groupState) == b.(groupState)
	},
	DescribeOperation: func(input, _ any) string { return describeOp(input.(*Op)) },
	DescribeState: func(state any) string {
		s := state.(groupState)
		var parts []string
		for i, v := range s {
			if v != "" {
				parts = append(parts, fmt.Sprintf("slot%d=%s", i, short(v)))
			}
		}
		return "{" + strings.Join(parts, " ") + "}"
	},
}

func short(v string) string {
	if i := strings.IndexByte(v, '.'); i > 0 {
		return v[:i]
	}
	return v
}

func describeOp(op *Op) string {
	slot := SlotName(op.Part, op.A)
	var in string
	switch op.Kind {
	case "create", "put":
		in = fmt.Sprintf("%s(%s/%s, %s, overwrite=%v)", op.Kind, op.Part, slot, short(op.Val), op.Overwrite || op.Kind == "put")
	case "rename", "mv":
		in = fmt.Sprintf("%s(%s/%s → %s)", op.Kind, op.Part, slot, SlotName(op.Part, op.B))
	case "list":
		in = fmt.Sprintf("list(%s)", op.Part)
	default:
		in = fmt.Sprintf("%s(%s/%s)", op.Kind, op.Part, slot)
	}
	out := op.Outcome
	switch {
	case op.Outcome == Fail:
		out = op.Code
	case op.Outcome == OK && (op.Kind == "read" || op.Kind == "get"):
		out = short(op.Got)
	case op.Outcome == OK && op.Kind == "stat":
		out = fmt.Sprintf("dir=%v size=%d", op.IsDir, op.Size)
	case op.Outcome == OK && op.Kind == "list":
		out = "[" + strings.Join(op.Names, " ") + "]"
	}
	return in + " → " + out
}
