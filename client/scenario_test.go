package client_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// The writer and reader scenarios of testdata/scenarios (README.md there
// says the format), which the Java connector's TestScenarios runs too:
// a scripted meta and scripted datanodes on 127.0.0.1, and the client's
// requests to them compared with what the file expects.

var update = flag.Bool("update", false, "rewrite the expected outcome of testdata/scenarios from what the client did")

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			sc, err := parseScenario(f)
			require.NoError(t, err)
			got := sc.run(t)
			if *update {
				require.NoError(t, os.WriteFile(f, []byte(sc.script+"----\n"+strings.Join(got, "\n")+"\n"), 0o644))
				return
			}
			sc.requireSameTrace(t, sc.expect, got)
		})
	}
}

// keyBytes are the key's bytes [off, off+n): the alphabet repeated, so that
// a chunk shows where in the key it is.
func keyBytes(off int64, n int) []byte {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[(off+int64(i))%int64(len(alphabet))]
	}
	return b
}

// ---- The format -----------------------------------------------------------------

type scenario struct {
	script    string // the file up to "----"
	expect    []string
	chunk     int
	bpc       int
	blockSize int64
	datanodes []*scriptedDN
	allocs    []*scriptedBlock
	blocks    []*scriptedBlock // the key's, for a reader
	rules     []rule
	steps     [][]string
}

type scriptedDN struct {
	name    string
	version uint8
	down    bool
}

type scriptedBlock struct {
	id       wire.BlockID
	pipeline uint64
	length   int64
	offset   int64 // in the key
	members  []string
	token    string // the block token meta gives with it
}

// blockMembers splits an allocate or block line's datanode names from its
// token=T option.
func blockMembers(words []string) (members []string, token string) {
	for _, w := range words {
		if t, ok := strings.CutPrefix(w, "token="); ok {
			token = t
		} else {
			members = append(members, w)
		}
	}
	return members, token
}

// rule is an "on" line: how a datanode answers the requests it matches.
type rule struct {
	dn     string
	typ    string
	block  string // "" matches any
	at     int64  // -1 matches any
	action []string
}

func parseScenario(path string) (*scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := string(b)
	script, expect, ok := strings.Cut(text, "----\n")
	if !ok {
		return nil, fmt.Errorf("%s: no ---- line", path)
	}
	sc := &scenario{script: script, chunk: 8, bpc: 4, blockSize: 1024}
	for _, l := range strings.Split(expect, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			sc.expect = append(sc.expect, l)
		}
	}
	var keyOff int64
	for n, line := range strings.Split(script, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", path, n+1, fmt.Sprintf(format, args...))
		}
		num := func(s string) int64 {
			v, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil && err == nil {
				err = fail("%q is not a number", s)
			}
			return v
		}
		switch f[0] {
		case "chunk":
			sc.chunk = int(num(f[1]))
		case "checksum":
			sc.bpc = int(num(f[1]))
		case "block-size":
			sc.blockSize = num(f[1])
		case "datanode":
			dn := &scriptedDN{name: f[1], version: wire.MaxVersion}
			for _, o := range f[2:] {
				switch {
				case o == "down":
					dn.down = true
				case strings.HasPrefix(o, "version="):
					dn.version = uint8(num(strings.TrimPrefix(o, "version=")))
				default:
					return nil, fail("unknown datanode option %q", o)
				}
			}
			sc.datanodes = append(sc.datanodes, dn)
		case "allocate":
			if len(f) < 4 || !strings.HasPrefix(f[2], "p") {
				return nil, fail("want: allocate BLOCK pN NAME...")
			}
			members, token := blockMembers(f[3:])
			sc.allocs = append(sc.allocs, &scriptedBlock{id: parseBlock(f[1], num), pipeline: uint64(num(f[2][1:])), members: members, token: token})
		case "block":
			if len(f) < 4 {
				return nil, fail("want: block BLOCK LENGTH NAME...")
			}
			members, token := blockMembers(f[3:])
			bl := &scriptedBlock{id: parseBlock(f[1], num), length: num(f[2]), offset: keyOff, members: members, token: token}
			keyOff += bl.length
			sc.blocks = append(sc.blocks, bl)
		case "on":
			head, action, ok := strings.Cut(line, ":")
			hf := strings.Fields(head)
			if !ok || len(hf) < 3 || len(strings.Fields(action)) == 0 {
				return nil, fail("want: on NAME TYPE [BLOCK [AT]]: ACTION")
			}
			r := rule{dn: hf[1], typ: hf[2], at: -1, action: strings.Fields(action)}
			if len(hf) > 3 {
				r.block = hf[3]
			}
			if len(hf) > 4 {
				r.at = num(hf[4])
			}
			sc.rules = append(sc.rules, r)
		case "write", "hflush", "hsync", "close", "read":
			sc.steps = append(sc.steps, f)
		default:
			return nil, fail("unknown directive %q", f[0])
		}
		if err != nil {
			return nil, err
		}
	}
	return sc, nil
}

func parseBlock(s string, num func(string) int64) wire.BlockID {
	c, l, _ := strings.Cut(s, "/")
	return wire.BlockID{ContainerID: uint64(num(c)), LocalID: uint64(num(l))}
}

func blockName(b wire.BlockID) string { return fmt.Sprintf("%d/%d", b.ContainerID, b.LocalID) }

// requireSameTrace compares the outcome lines: steps and meta's calls in
// order, each datanode's requests in any order.
func (sc *scenario) requireSameTrace(t *testing.T, want, got []string) {
	t.Helper()
	canon := func(lines []string) string {
		var ordered, dn []string
		for _, l := range lines {
			who, _, _ := strings.Cut(l, ": ")
			if slices.ContainsFunc(sc.datanodes, func(d *scriptedDN) bool { return d.name == who }) {
				dn = append(dn, l)
			} else {
				ordered = append(ordered, l)
			}
		}
		slices.Sort(dn)
		return strings.Join(append(ordered, dn...), "\n")
	}
	require.Equal(t, canon(want), canon(got),
		"the outcome (steps and meta's calls in order, then each datanode's requests sorted); the client's:\n%s", strings.Join(got, "\n"))
}

// ---- The run -----------------------------------------------------------------------

// trace collects what meta and the datanodes were sent.
type trace struct {
	mu    sync.Mutex
	meta  []string
	dn    map[string][]string
	names map[string]string // data address to datanode name
}

func (tr *trace) add(who, line string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if who == "meta" {
		tr.meta = append(tr.meta, line)
	} else {
		tr.dn[who] = append(tr.dn[who], line)
	}
}

func (tr *trace) name(addr string) string {
	if n, ok := tr.names[addr]; ok {
		return n
	}
	return addr
}

func (sc *scenario) run(t *testing.T) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tr := &trace{dn: map[string][]string{}, names: map[string]string{}}
	addrs := map[string]string{}
	// A down datanode's port is closed once every listener of the scenario
	// is bound, so that none of them is given it again.
	var down []net.Listener
	defer func() {
		for _, l := range down {
			_ = l.Close()
		}
	}()
	for _, dn := range sc.datanodes {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addrs[dn.name] = l.Addr().String()
		tr.names[l.Addr().String()] = dn.name
		if dn.down {
			down = append(down, l)
			continue
		}
		d := &fakeDatanode{sc: sc, dn: dn, tr: tr, l: l}
		go d.serve()
		t.Cleanup(d.stop)
	}
	meta := &fakeMeta{sc: sc, tr: tr, addrs: addrs}
	ml, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	for _, l := range down {
		require.NoError(t, l.Close()) // nothing listens there now: connections are refused
	}
	down = nil
	srv := grpc.NewServer()
	stratov1.RegisterNamespaceServiceServer(srv, meta)
	go func() { _ = srv.Serve(ml) }()
	defer srv.Stop()

	c, err := client.New(client.Options{Meta: []string{ml.Addr().String()}, ChunkSize: sc.chunk, NoToken: true,
		MaxChunksInFlight: client.OwnChunksInFlight, // what the scripts expect (README.md)
		DisableLocalReads: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	defer c.Close()

	var out []string
	var w *client.Writer
	var r *client.Reader
	var written int64
	for _, st := range sc.steps {
		var err error
		switch st[0] {
		case "write", "hflush", "hsync", "close":
			if w == nil {
				if w, err = c.Create(ctx, "/vol/bkt/key", client.CreateOptions{}); err != nil {
					break
				}
			}
			switch st[0] {
			case "write":
				n, _ := strconv.Atoi(st[1])
				_, err = w.Write(keyBytes(written, n))
				written += int64(n)
			case "hflush":
				err = w.Hflush()
			case "hsync":
				err = w.Hsync()
			case "close":
				err = w.Close()
			}
		case "read":
			if r == nil {
				if r, err = c.OpenKey(ctx, "vol", "bkt", "key"); err != nil {
					break
				}
			}
			off, _ := strconv.ParseInt(st[1], 10, 64)
			n, _ := strconv.Atoi(st[2])
			buf := make([]byte, n)
			if _, err = r.ReadAt(buf, off); err == nil && string(buf) != string(keyBytes(off, n)) {
				err = fmt.Errorf("read %q, want %q", buf, keyBytes(off, n))
			}
		}
		outcome := "ok"
		if err != nil {
			outcome = "error"
			t.Logf("%s: %v", strings.Join(st, " "), err)
		}
		out = append(out, strings.Join(st, " ")+": "+outcome)
	}
	if w != nil && !slices.ContainsFunc(sc.steps, func(s []string) bool { return s[0] == "close" }) {
		w.Abort()
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, l := range tr.meta {
		out = append(out, "meta: "+l)
	}
	for _, dn := range sc.datanodes {
		lines := tr.dn[dn.name]
		slices.SortStableFunc(lines, func(a, b string) int { return cmpRequests(a, b) })
		for _, l := range lines {
			out = append(out, dn.name+": "+l)
		}
	}
	return out
}

// cmpRequests orders a datanode's requests as they read best (they are
// compared as sets): PINGs first, then by block, by where in the block they
// end, and a block's chunks before its commit there.
func cmpRequests(a, b string) int {
	key := func(l string) (string, int64, bool) {
		f := strings.Fields(l)
		if len(f) < 3 {
			return "", 0, false
		}
		pos, n, _ := strings.Cut(f[2], "+")
		p, _ := strconv.ParseInt(pos, 10, 64)
		k, _ := strconv.ParseInt(n, 10, 64)
		return f[1], p + k, f[0] == "PUT_BLOCK"
	}
	ba, ea, ca := key(a)
	bb, eb, cb := key(b)
	if c := strings.Compare(ba, bb); c != 0 {
		return c
	}
	if ea != eb {
		return int(ea - eb)
	}
	switch {
	case ca && !cb:
		return 1
	case cb && !ca:
		return -1
	}
	return 0
}

// ---- Meta ----------------------------------------------------------------------------

// fakeMeta answers a writer's and a reader's calls from the script.
type fakeMeta struct {
	stratov1.UnimplementedNamespaceServiceServer
	sc    *scenario
	tr    *trace
	addrs map[string]string
	mu    sync.Mutex
	next  int // of sc.allocs
}

func (m *fakeMeta) location(bl *scriptedBlock) *stratov1.BlockLocation {
	p := &stratov1.Pipeline{Id: bl.pipeline}
	for _, name := range bl.members {
		p.Members = append(p.Members, &stratov1.DatanodeDetails{Id: name, DataAddr: m.addrs[name]})
	}
	return &stratov1.BlockLocation{BlockId: &stratov1.BlockID{ContainerId: bl.id.ContainerID, LocalId: bl.id.LocalID},
		Offset: bl.offset, Length: bl.length, Pipeline: p, Token: []byte(bl.token)}
}

func (m *fakeMeta) CreateFile(context.Context, *stratov1.CreateFileRequest) (*stratov1.OpenKeyResponse, error) {
	m.tr.add("meta", "CreateFile")
	return &stratov1.OpenKeyResponse{OpenId: 1, ChecksumType: stratov1.ChecksumType_CHECKSUM_CRC32C,
		BytesPerChecksum: int32(m.sc.bpc), BlockSize: m.sc.blockSize}, nil
}

func (m *fakeMeta) AllocateBlock(_ context.Context, req *stratov1.AllocateBlockRequest) (*stratov1.AllocateBlockResponse, error) {
	ex := req.GetExclude()
	line := "AllocateBlock"
	var parts []string
	if len(ex.GetDatanodes()) > 0 {
		parts = append(parts, "datanodes="+sortedJoin(ex.GetDatanodes(), func(s string) string { return s }))
	}
	if len(ex.GetContainers()) > 0 {
		parts = append(parts, "containers="+sortedJoin(ex.GetContainers(), func(c uint64) string { return strconv.FormatUint(c, 10) }))
	}
	if len(ex.GetPipelines()) > 0 {
		parts = append(parts, "pipelines="+sortedJoin(ex.GetPipelines(), func(p uint64) string { return "p" + strconv.FormatUint(p, 10) }))
	}
	if len(parts) > 0 {
		line += " excluding " + strings.Join(parts, " ")
	}
	m.tr.add("meta", line)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next >= len(m.sc.allocs) {
		st, _ := status.New(codes.ResourceExhausted, "cluster: no pipeline").WithDetails(&errdetails.ErrorInfo{
			Reason: stratov1.ErrorReason_NO_PIPELINE.String(), Domain: "strato.v1"})
		return nil, st.Err()
	}
	bl := m.sc.allocs[m.next]
	m.next++
	return &stratov1.AllocateBlockResponse{Block: m.location(bl)}, nil
}

// sortedJoin joins the distinct values of vs, sorted, with commas.
func sortedJoin[T any](vs []T, str func(T) string) string {
	var s []string
	for _, v := range vs {
		s = append(s, str(v))
	}
	slices.Sort(s)
	return strings.Join(slices.Compact(s), ",")
}

func (m *fakeMeta) CloseContainer(_ context.Context, req *stratov1.CloseContainerRequest) (*stratov1.CloseContainerResponse, error) {
	line := fmt.Sprintf("CloseContainer %d", req.GetContainerId())
	if req.GetFailedDatanode() != "" {
		line += " failed=" + req.GetFailedDatanode()
	}
	m.tr.add("meta", line)
	return &stratov1.CloseContainerResponse{}, nil
}

func (m *fakeMeta) CommitKey(_ context.Context, req *stratov1.CommitKeyRequest) (*stratov1.CommitKeyResponse, error) {
	line := "CommitKey"
	for _, bl := range req.GetBlocks() {
		line += fmt.Sprintf(" %d/%d=%d", bl.GetBlockId().GetContainerId(), bl.GetBlockId().GetLocalId(), bl.GetLength())
	}
	if req.GetHsync() {
		line += " hsync"
	}
	m.tr.add("meta", line)
	return &stratov1.CommitKeyResponse{}, nil
}

func (m *fakeMeta) LookupKey(context.Context, *stratov1.LookupKeyRequest) (*stratov1.LookupKeyResponse, error) {
	m.tr.add("meta", "LookupKey")
	ki := &stratov1.KeyInfo{Volume: "vol", Bucket: "bkt", Name: "key", ObjectId: 1,
		ChecksumType: stratov1.ChecksumType_CHECKSUM_CRC32C, BytesPerChecksum: int32(m.sc.bpc)}
	for _, bl := range m.sc.blocks {
		ki.Blocks = append(ki.Blocks, m.location(bl))
		ki.Size += bl.length
	}
	return &stratov1.LookupKeyResponse{Key: ki}, nil
}

func (m *fakeMeta) ReportReplica(_ context.Context, req *stratov1.ReportReplicaRequest) (*stratov1.ReportReplicaResponse, error) {
	m.tr.add("meta", fmt.Sprintf("ReportReplica %d/%d %s", req.GetContainerId(), req.GetLocalId(), req.GetDatanodeId()))
	return &stratov1.ReportReplicaResponse{}, nil
}

// ---- Datanodes -----------------------------------------------------------------------

// fakeDatanode answers the data protocol from the script: with success,
// or as an "on" line says. It stores nothing: a reader is served the key's
// bytes of the blocks the script says it holds.
type fakeDatanode struct {
	sc    *scenario
	dn    *scriptedDN
	tr    *trace
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (d *fakeDatanode) stop() {
	_ = d.l.Close()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		_ = c.Close()
	}
}

func (d *fakeDatanode) serve() {
	for {
		c, err := d.l.Accept()
		if err != nil {
			return
		}
		d.mu.Lock()
		d.conns = append(d.conns, c)
		d.mu.Unlock()
		go d.handle(c)
	}
}

// handle answers one connection's requests in the order they come.
func (d *fakeDatanode) handle(c net.Conn) {
	defer c.Close()
	ctx := context.Background()
	r, w := wire.NewRequestReader(bufio.NewReader(c)), wire.NewWriter(c, 0)
	for {
		h, m, err := r.Next()
		if err != nil {
			return
		}
		payload := make([]byte, r.Remaining())
		if err := r.ReadPayload(payload); err != nil {
			return
		}
		d.tr.add(d.dn.name, d.render(m, payload))
		action := d.action(m)
		switch {
		case len(action) == 0:
		case action[0] == "close":
			return
		case action[0] == "error":
			if err := w.WriteError(ctx, h.Type, h.RequestID, d.scriptedError(action)); err != nil {
				return
			}
			continue
		}
		resp, out := d.answer(m, action)
		if p, ok := m.(*wire.PingRequest); ok {
			w.SetVersion(min(p.MaxVersion, d.dn.version)) // the answer is of the version chosen
		}
		if err := w.WriteMessage(ctx, h.RequestID, resp, out); err != nil {
			return
		}
	}
}

// blockAt is the position an "on" line's AT matches: a chunk's or a read's
// offset, a PUT_BLOCK's length.
func blockAt(m wire.Message) (wire.BlockID, int64, bool) {
	switch m := m.(type) {
	case *wire.WriteChunkRequest:
		return m.Block, m.Offset, true
	case *wire.WriteCommitRequest:
		return m.Block, m.Offset, true
	case *wire.PutBlockRequest:
		return m.Block, m.Length, true
	case *wire.ReadChunkRequest:
		return m.Block, m.Offset, true
	case *wire.GetBlockRequest:
		return m.Block, -1, true
	}
	return wire.BlockID{}, -1, false
}

// action is the first "on" line matching m, if any.
func (d *fakeDatanode) action(m wire.Message) []string {
	block, at, hasBlock := blockAt(m)
	for _, r := range d.sc.rules {
		if r.dn != d.dn.name || r.typ != m.Type().String() {
			continue
		}
		if r.block != "" && (!hasBlock || r.block != blockName(block)) {
			continue
		}
		if r.at >= 0 && r.at != at {
			continue
		}
		return r.action
	}
	return nil
}

func (d *fakeDatanode) scriptedError(action []string) *wire.Error {
	e := &wire.Error{Code: codeNamed(action[1]), Message: "scripted " + action[1]}
	for _, f := range action[2:] {
		name, code, _ := strings.Cut(f, "=")
		addr := name
		for a, n := range d.tr.names {
			if n == name {
				addr = a
			}
		}
		e.Failed = append(e.Failed, wire.FailedNode{Addr: addr, Code: codeNamed(code)})
	}
	return e
}

func codeNamed(name string) wire.Code {
	for c := wire.Code(1); c.Known(); c++ {
		if c.String() == name {
			return c
		}
	}
	panic("no error code " + name)
}

// answer is the successful answer to m (a READ_CHUNK's as action says).
func (d *fakeDatanode) answer(m wire.Message, action []string) (wire.Message, []byte) {
	switch m := m.(type) {
	case *wire.PingRequest:
		return &wire.PingResponse{Version: min(m.MaxVersion, d.dn.version), MinVersion: wire.MinVersion,
			MaxVersion: d.dn.version, MaxChunkLen: wire.MaxChunkLen, ServerID: d.dn.name}, nil
	case *wire.TokenRequest:
		return &wire.TokenResponse{}, nil
	case *wire.WriteChunkRequest:
		return &wire.WriteChunkResponse{}, nil
	case *wire.PutBlockRequest:
		return &wire.PutBlockResponse{BCSID: 1}, nil
	case *wire.WriteCommitRequest:
		return &wire.WriteCommitResponse{BCSID: 1}, nil
	case *wire.ReadChunkRequest:
		return d.read(m, action)
	}
	return &wire.Error{Code: wire.CodeUnsupportedType, Message: "not scripted"}, nil
}

// read answers a READ_CHUNK from the key's bytes, widened to checksum
// windows (docs/wire.md §5.4), with one record per stored chunk.
func (d *fakeDatanode) read(m *wire.ReadChunkRequest, action []string) (wire.Message, []byte) {
	var bl *scriptedBlock
	for _, b := range d.sc.blocks {
		if b.id == m.Block && slices.Contains(b.members, d.dn.name) {
			bl = b
		}
	}
	if bl == nil {
		return &wire.Error{Code: wire.CodeBlockNotFound, Message: "no block " + blockName(m.Block)}, nil
	}
	bpc, chunk := int64(d.sc.bpc), int64(d.sc.chunk)
	start := m.Offset - m.Offset%chunk%bpc
	last := m.Offset + int64(m.Length) - 1
	first := last - last%chunk // the stored chunk holding the last byte
	end := min(first+(last-first)/bpc*bpc+bpc, first+chunk, bl.length)
	if len(action) > 0 && action[0] == "short" {
		end -= bpc
	}
	resp := &wire.ReadChunkResponse{Offset: start}
	for off := start; off < end; {
		n := min(end, off-off%chunk+chunk) - off
		data := keyBytes(bl.offset+off, int(n))
		resp.Chunks = append(resp.Chunks, wire.Chunk{Offset: off, Length: uint32(n),
			Checksums: checksum.Compute(checksum.CRC32C, uint32(bpc), data)})
		off += n
	}
	payload := keyBytes(bl.offset+start, int(end-start))
	if len(action) > 0 && action[0] == "corrupt" {
		payload[0] ^= 1
	}
	return resp, payload
}

// render is how the trace shows a request.
func (d *fakeDatanode) render(m wire.Message, payload []byte) string {
	followers := func(f []string) string {
		if len(f) == 0 {
			return ""
		}
		var names []string
		for _, a := range f {
			names = append(names, d.tr.name(a))
		}
		return " followers=" + strings.Join(names, ",")
	}
	flags := func(final, sync bool) string {
		s := ""
		if final {
			s += " final"
		}
		if sync {
			s += " sync"
		}
		return s
	}
	sums := func(c checksum.Data) string {
		if checksum.Verify(c, 0, payload) != nil {
			return " bad-checksums"
		}
		return ""
	}
	switch m := m.(type) {
	case *wire.PingRequest:
		// Not the versions offered: the Go client's (1-6) and the Java
		// connector's (1-5) differ, and the scenarios are both's.
		return "PING"
	case *wire.TokenRequest:
		return fmt.Sprintf("TOKEN %q", payload)
	case *wire.WriteChunkRequest:
		return fmt.Sprintf("WRITE_CHUNK %s %d+%d %q%s%s", blockName(m.Block), m.Offset, len(payload), payload,
			sums(m.Checksums), followers(m.Followers))
	case *wire.WriteCommitRequest:
		return fmt.Sprintf("WRITE_COMMIT %s %d+%d %q%s%s%s", blockName(m.Block), m.Offset, len(payload), payload,
			flags(m.Final, m.Sync), sums(m.Checksums), followers(m.Followers))
	case *wire.PutBlockRequest:
		return fmt.Sprintf("PUT_BLOCK %s %d%s%s", blockName(m.Block), m.Length, flags(m.Final, m.Sync), followers(m.Followers))
	case *wire.ReadChunkRequest:
		return fmt.Sprintf("READ_CHUNK %s %d+%d", blockName(m.Block), m.Offset, m.Length)
	}
	return m.Type().String()
}
