package nnbench

import "strconv"

// nameGenerator produces the balanced tree of file names that Hadoop's
// NNThroughputBenchmark uses (its FileNameGenerator): each directory holds
// at most perDir entries, directories are named <prefix>Dir<i> and files
// <prefix><n>, so that the same flags give the same namespace shape.
type nameGenerator struct {
	base    string
	perDir  int
	idx     [20]int
	count   int64
	current string
}

func newNameGenerator(base string, perDir int) *nameGenerator {
	g := &nameGenerator{base: base, perDir: perDir}
	for i := range g.idx {
		g.idx[i] = -1
	}
	return g
}

func (g *nameGenerator) nextDir(prefix string) string {
	depth := 0
	for g.idx[depth] >= 0 {
		depth++
	}
	level := depth - 1
	for ; level >= 0 && g.idx[level] == g.perDir-1; level-- {
		g.idx[level] = 0
	}
	if level < 0 {
		g.idx[depth] = 0
	} else {
		g.idx[level]++
	}
	// One allocation for the path (it is made in the timed loop: a
	// concatenation a level made as many strings as the tree is deep).
	n := len(g.base)
	for l := 0; g.idx[l] >= 0; l++ {
		n += 1 + len(prefix) + 20
	}
	b := make([]byte, 0, n)
	b = append(b, g.base...)
	for l := 0; g.idx[l] >= 0; l++ {
		b = strconv.AppendInt(append(append(b, '/'), prefix...), int64(g.idx[l]), 10)
	}
	return string(b)
}

func (g *nameGenerator) next(prefix string) string {
	if g.count%int64(g.perDir) == 0 {
		g.current = g.nextDir(prefix + "Dir")
	}
	fn := g.current + "/" + prefix + strconv.FormatInt(g.count, 10)
	g.count++
	return fn
}

// skip moves the generator past its next n names, as n calls of
// next(prefix) would, in one step a directory.
func (g *nameGenerator) skip(n int64, prefix string) {
	p := int64(g.perDir)
	for d := (g.count+n+p-1)/p - (g.count+p-1)/p; d > 0; d-- {
		g.current = g.nextDir(prefix + "Dir")
	}
	g.count += n
}
