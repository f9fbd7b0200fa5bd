package cluster

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Placement: which datanodes a new pipeline is made of, which pipeline and
// container a block goes to, and where a copy or a rebuild lands. Every
// choice here is a function of the locked state and its arguments; the
// proposals that follow are alloc.go's.

// Candidate is a datanode that may join a new pipeline.
type Candidate struct {
	// ID is the datanode's.
	ID string
	// Pipelines counts the open pipelines it is in.
	Pipelines int
	// Free is its free space, in bytes.
	Free int64
	// Rack is its network location ("" is DefaultRack).
	Rack string
}

// DefaultRack is the rack of a datanode that registered without one, as in
// Hadoop's NetworkTopology.
const DefaultRack = "/default-rack"

// rackOf is a registered datanode's rack.
func rackOf(d *stratov1.DatanodeDetails) string {
	return cmp.Or(d.GetRack(), DefaultRack)
}

// ChooseMembers picks size distinct datanodes for a new pipeline: those in
// the fewest open pipelines first, then the most free space, then by ID (so
// the choice is deterministic). A datanode already in limit pipelines is not
// used.
//
// Over racks, the choice goes round-robin: the racks are taken in the
// order of their best datanode, and each in turn gives its next best, until
// size are chosen (a rack with none left is skipped). A pipeline thus spans
// as many racks as it can, up to its size: a THREE pipeline over two racks
// has two members in one and one in the other (HDFS's rule, not all three
// in one rack), over three racks one in each; an erasure coded one is spread
// evenly. With every candidate on one rack, this is the order above.
func ChooseMembers(cands []Candidate, size, limit int) ([]string, error) {
	better := func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.Pipelines, b.Pipelines), cmp.Compare(b.Free, a.Free), cmp.Compare(a.ID, b.ID))
	}
	// Each rack's best size candidates, in order: no more can be taken
	// from one rack. A pass over the candidates, without sorting them all.
	type rackBest struct{ top []Candidate }
	var racks []*rackBest
	byRack := map[string]*rackBest{}
	usable := 0
	for _, c := range cands {
		if c.Pipelines >= limit {
			continue
		}
		usable++
		r := cmp.Or(c.Rack, DefaultRack)
		rb := byRack[r]
		if rb == nil {
			rb = &rackBest{top: make([]Candidate, 0, size+1)}
			byRack[r] = rb
			racks = append(racks, rb)
		}
		pos, _ := slices.BinarySearchFunc(rb.top, c, better)
		if pos < size {
			rb.top = slices.Insert(rb.top, pos, c)
			rb.top = rb.top[:min(len(rb.top), size)]
		}
	}
	if usable < size {
		return nil, fmt.Errorf("%d healthy datanodes with room for a pipeline, need %d", usable, size)
	}
	slices.SortFunc(racks, func(a, b *rackBest) int { return better(a.top[0], b.top[0]) })
	out := make([]string, 0, size)
	for round := 0; len(out) < size; round++ {
		for _, rb := range racks {
			if round < len(rb.top) && len(out) < size {
				out = append(out, rb.top[round].ID)
			}
		}
	}
	return out, nil
}

// pipelineCandidates lists the healthy in-service datanodes not in ex,
// with how many open pipelines of redundancy r each is in.
func (s *state) pipelineCandidates(r Redundancy, ex Exclude) []Candidate {
	// The counts' map is kept between calls (under the lock): a choice
	// among thousands of datanodes would otherwise allocate it each time.
	if s.candCounts == nil {
		s.candCounts = make(map[string]int, len(s.nodes))
	}
	in := s.candCounts
	clear(in)
	for _, p := range s.pipelines {
		if p.State == stratov1.PipelineState_PIPELINE_OPEN && r.is(p) {
			for _, id := range p.Members {
				in[id]++
			}
		}
	}
	out := make([]Candidate, 0, len(s.nodes))
	for id, n := range s.nodes {
		if !n.inService() || slices.Contains(ex.Datanodes, id) {
			continue
		}
		out = append(out, Candidate{ID: id, Free: n.stats.Load().GetRemaining(), Rack: rackOf(n.details), Pipelines: in[id]})
	}
	return out
}

// openMemberSets are the member sets (memberSet) of the open pipelines
// of r.
func (s *state) openMemberSets(r Redundancy) map[string]bool {
	out := map[string]bool{}
	for _, p := range s.pipelines {
		if p.State == stratov1.PipelineState_PIPELINE_OPEN && r.is(p) {
			out[memberSet(p.Members)] = true
		}
	}
	return out
}

// memberSet names a set of datanodes whatever their order.
func memberSet(ids []string) string {
	return strings.Join(slices.Sorted(slices.Values(ids)), "\x00")
}

// nextPipelineID is the ID of the next pipeline to propose.
func (s *state) nextPipelineID() uint64 {
	var maxID uint64
	for id := range s.pipelines {
		maxID = max(maxID, id)
	}
	return maxID + 1
}

// candidatePipelines: open pipelines of the redundancy asked whose
// members are all usable and none excluded.
//
// The usable pipelines of each redundancy are kept until a pipeline, or a
// datanode's health or state, changes (s.usableGen): an allocation reads
// them without going over every pipeline and member again. The slice
// returned must not be changed.
func (s *state) candidatePipelines(r Redundancy, ex Exclude) []*stratov1.PipelineRecord {
	key := r.String()
	e, ok := s.usable[key]
	if !ok || e.gen != s.usableGen {
		e = usablePipelines{gen: s.usableGen}
		for _, p := range s.sortedPipelines() {
			if p.State == stratov1.PipelineState_PIPELINE_OPEN && r.is(p) && s.pipelineUsable(p) {
				e.pipes = append(e.pipes, p)
			}
		}
		if s.usable == nil {
			s.usable = map[string]usablePipelines{}
		}
		s.usable[key] = e
	}
	if len(ex.Pipelines) == 0 && len(ex.Datanodes) == 0 {
		return e.pipes
	}
	var out []*stratov1.PipelineRecord
	for _, p := range e.pipes {
		if !slices.Contains(ex.Pipelines, p.Id) && !slices.ContainsFunc(p.Members, func(id string) bool { return slices.Contains(ex.Datanodes, id) }) {
			out = append(out, p)
		}
	}
	return out
}

// usablePipelines are the usable open pipelines of one redundancy as of
// generation gen of state.usableGen.
type usablePipelines struct {
	gen   uint64
	pipes []*stratov1.PipelineRecord
}

// openContainers: the open containers of a pipeline that take blocks and
// are not excluded.
func (s *state) openContainers(pipeline uint64, ex Exclude) []*containerState {
	var out []*containerState
	for _, id := range s.open[pipeline] {
		if !slices.Contains(ex.Containers, id) && s.containers[id].fullAt.IsZero() {
			out = append(out, s.containers[id])
		}
	}
	return out
}

// chooseTarget picks the target of a copy or rebuild of c: a healthy
// in-service datanode that does not hold c (nor is in skip, the targets
// of c's other work in flight) and receives fewer than limit copies; the
// one on the rack with the fewest of c's copies (its CLOSED or not yet
// closed replicas on in-service datanodes, and skip), then with the most
// free space, then by ID. Over racks the copy thus goes where the rack
// rules want it (racks.go); on one rack, to the roomiest datanode. The
// target of a copy of c that failed lately is taken only when there is no
// other.
//
// Past targetScanMax datanodes the choice is made among targetSample
// datanodes drawn at random (all of them when none of those will do), as
// HDFS's and Ozone's placement policies draw theirs: reading every
// datanode for every copy made planning the copies of 100 dead datanodes
// of 10,000 (30,000 containers) take minutes. Among a sample the rack
// with the fewest copies and the most free space still win, so copies
// spread by rack and fill the emptier datanodes first.
func (s *state) chooseTarget(now time.Time, c *containerState, imports map[string]int, limit int, skip map[string]bool) string {
	t := targetChoice{c: c, imports: imports, limit: limit, skip: skip}
	if now.Before(c.copyFailedUntil) {
		t.avoid = c.copyFailed
	}
	for id, r := range c.replicas.all() {
		if s.nodes[id].inService() && r.State != stratov1.ContainerState_CONTAINER_UNHEALTHY {
			t.counts = addRack(t.counts, rackOf(s.nodes[id].details))
		}
	}
	for id := range skip {
		if n := s.nodes[id]; n != nil {
			t.counts = addRack(t.counts, rackOf(n.details))
		}
	}
	if ids := s.sortedNodeIDs(); len(ids) > targetScanMax {
		for range targetSample {
			id := ids[rand.IntN(len(ids))]
			t.consider(id, s.nodes[id])
		}
		if t.best != "" {
			return t.best
		}
		t.avoided = false
	}
	for id, n := range s.nodes {
		t.consider(id, n)
	}
	if t.best == "" && t.avoided {
		return t.avoid
	}
	return t.best
}

const (
	// targetScanMax is the most datanodes chooseTarget reads every one
	// of; past it, it draws targetSample of them.
	targetScanMax = 512
	targetSample  = 64
)

// targetChoice is chooseTarget's search: the best target so far.
type targetChoice struct {
	c       *containerState
	imports map[string]int
	limit   int
	skip    map[string]bool
	avoid   string
	counts  []rackCount // c's copies by rack
	best    string
	count   int   // best's rack's copies
	free    int64 // best's free space
	avoided bool  // avoid would have done
}

// consider weighs datanode id, n, as the target.
func (t *targetChoice) consider(id string, n *nodeState) {
	if !n.inService() || t.imports[id] >= t.limit {
		return
	}
	if has := t.c.replicas.has(id); has || t.skip[id] {
		return
	}
	if id == t.avoid {
		t.avoided = true
		return
	}
	cnt, free := countOn(t.counts, rackOf(n.details)), n.stats.Load().GetRemaining()
	if t.best == "" || cmp.Or(cmp.Compare(cnt, t.count), cmp.Compare(t.free, free), cmp.Compare(id, t.best)) < 0 {
		t.best, t.count, t.free = id, cnt, free
	}
}
