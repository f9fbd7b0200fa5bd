package netfault

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"
)

// op builds a history entry: worker w, [call, ret] (ret 0: unknown).
func op(w string, kind, part string, a int, call, ret int64, outcome string) *Op {
	return &Op{Worker: w, Kind: kind, Part: part, A: a, Call: call, Return: ret, Outcome: outcome}
}

func with(o *Op, f func(*Op)) *Op { f(o); return o }

// TestModel: the checker accepts histories a linearizable namespace can
// produce and rejects the ones a lost, stale or doubly applied write
// produces.
func TestModel(t *testing.T) {
	put := func(w string, call, ret int64, outcome, val string) *Op {
		return with(op(w, "put", "o0", 0, call, ret, outcome), func(o *Op) { o.Val = val })
	}
	get := func(w string, call, ret int64, got string) *Op {
		if got == "" {
			return with(op(w, "get", "o0", 0, call, ret, Fail), func(o *Op) { o.Code = "NotFound" })
		}
		return with(op(w, "get", "o0", 0, call, ret, OK), func(o *Op) { o.Got = got })
	}
	create := func(w string, slot int, call, ret int64, outcome, val string, overwrite bool) *Op {
		return with(op(w, "create", "f0", slot, call, ret, outcome), func(o *Op) { o.Val, o.Overwrite = val, overwrite })
	}
	for _, tc := range []struct {
		name string
		ops  []*Op
		want porcupine.CheckResult
	}{
		{"read your write", []*Op{put("a", 0, 10, OK, "x"), get("b", 20, 30, "x")}, porcupine.Ok},
		{"concurrent read sees either", []*Op{put("a", 0, 10, OK, "x"), put("a", 20, 40, OK, "y"), get("b", 25, 30, "x")}, porcupine.Ok},
		{"stale read", []*Op{put("a", 0, 10, OK, "x"), put("a", 20, 30, OK, "y"), get("b", 40, 50, "x")}, porcupine.Illegal},
		{"lost write", []*Op{put("a", 0, 10, OK, "x"), get("b", 20, 30, "")}, porcupine.Illegal},
		{"unknown write may apply", []*Op{put("a", 0, 10, OK, "x"), put("a", 20, 0, Unknown, "y"), get("b", 40, 50, "y")}, porcupine.Ok},
		{"unknown write may not", []*Op{put("a", 0, 10, OK, "x"), put("a", 20, 0, Unknown, "y"), get("b", 40, 50, "x")}, porcupine.Ok},
		{"unknown write cannot apply before its call", []*Op{get("b", 0, 10, "y"), put("a", 20, 0, Unknown, "y")}, porcupine.Illegal},
		{"unknown write applies once", []*Op{put("a", 0, 0, Unknown, "y"), get("b", 10, 20, "y"), put("a", 30, 40, OK, "z"), get("b", 50, 60, "y")}, porcupine.Illegal},
		{"no effect", []*Op{create("a", 0, 0, 10, NoEffect, "x", false), with(op("b", "read", "f0", 0, 20, 30, Fail), func(o *Op) { o.Code = "NotFound" })}, porcupine.Ok},
		{"create without overwrite fails on an existing file", []*Op{
			create("a", 0, 0, 10, OK, "x", false),
			with(create("b", 0, 20, 30, Fail, "y", false), func(o *Op) { o.Code = "AlreadyExists" }),
		}, porcupine.Ok},
		{"create without overwrite reported existing file that was not there", []*Op{
			with(create("b", 0, 20, 30, Fail, "y", false), func(o *Op) { o.Code = "AlreadyExists" }),
		}, porcupine.Illegal},
		{"rename applied twice", []*Op{
			create("a", 0, 0, 10, OK, "x", true),
			with(op("a", "rename", "f0", 0, 20, 30, Fail), func(o *Op) { o.B, o.Code = 1, "NotFound" }),
			with(op("b", "read", "f0", 1, 40, 50, OK), func(o *Op) { o.Got = "x" }),
		}, porcupine.Illegal},
		{"rename", []*Op{
			create("a", 0, 0, 10, OK, "x", true),
			with(op("a", "rename", "f0", 0, 20, 30, OK), func(o *Op) { o.B = 1 }),
			with(op("b", "read", "f0", 1, 40, 50, OK), func(o *Op) { o.Got = "x" }),
			with(op("b", "list", "f0", 0, 60, 70, OK), func(o *Op) { o.Names = []string{"f1"} }),
			with(op("b", "stat", "f0", 1, 60, 70, OK), func(o *Op) { o.Size = 1 }),
		}, porcupine.Ok},
		{"list misses a directory", []*Op{
			op("a", "mkdir", "f0", 3, 0, 10, OK),
			with(op("b", "list", "f0", 0, 20, 30, OK), func(o *Op) { o.Names = nil }),
		}, porcupine.Illegal},
		{"stat sees a file as a directory", []*Op{
			create("a", 0, 0, 10, OK, "x", true),
			with(op("b", "stat", "f0", 0, 20, 30, OK), func(o *Op) { o.IsDir = true }),
		}, porcupine.Illegal},
		{"groups are independent", []*Op{put("a", 0, 10, OK, "x"), with(get("b", 20, 30, ""), func(o *Op) { o.Part = "o1" })}, porcupine.Ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops := append(tc.ops, &Op{Worker: "v", Kind: "ulist", Part: "u", Outcome: OK, Call: 100, Return: 110})
			r := Check(ops, 10*time.Second)
			require.Equal(t, tc.want, r.Linearizable, "%s", r)
			require.Empty(t, r.Problems)
		})
	}
}

// TestCheckUnique: the final listing must hold every acknowledged unique
// creation and nothing that failed or was never asked for.
func TestCheckUnique(t *testing.T) {
	u := func(name, outcome string) *Op {
		return &Op{Worker: "a", Kind: "umkdir", Part: "u", Name: name, Outcome: outcome, Call: 1, Return: 2}
	}
	list := func(names ...string) *Op {
		return &Op{Worker: "v", Kind: "ulist", Part: "u", Outcome: OK, Names: names, Call: 10, Return: 11}
	}
	r := Check([]*Op{u("a", OK), u("b", Unknown), u("c", Unknown), list("a", "b")}, time.Second)
	require.True(t, r.OK(), "%v", r.Problems)
	require.Equal(t, 1, r.UniqueAcked)

	r = Check([]*Op{u("a", OK), u("b", Fail), list("b", "z")}, time.Second)
	require.Equal(t, []string{
		"lost: umkdir a was acknowledged and is missing",
		"phantom: z exists and no operation made it",
		"umkdir b failed (fail) yet it exists: applied despite the error, or twice",
	}, r.Problems)
	require.False(t, r.OK())

	r = Check([]*Op{u("a", OK)}, time.Second)
	require.Equal(t, []string{"no final listing of the unique names"}, r.Problems)
}

func TestPlanIsReproducible(t *testing.T) {
	a, b := Plan(42, time.Minute), Plan(42, time.Minute)
	require.Equal(t, a, b)
	require.NotEqual(t, a, Plan(43, time.Minute))
	var total time.Duration
	kinds := map[string]bool{}
	for _, f := range a {
		total += f.Hold + f.Gap
		kinds[f.Kind] = true
		require.GreaterOrEqual(t, f.Hold, 500*time.Millisecond)
	}
	require.GreaterOrEqual(t, total, time.Minute)
	require.Greater(t, len(kinds), 3, "a minute of faults draws several kinds")
}
