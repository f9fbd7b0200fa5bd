package netfault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
)

// ModeEnv selects what the helper binary does (see Main); ConfigEnv
// carries its WorkConfig as JSON.
const (
	ModeEnv   = "STRATO_NETFAULT_MODE"
	ConfigEnv = "STRATO_NETFAULT_CONFIG"
)

// The namespace the workload uses.
const (
	volume    = "vol"
	fsoBucket = "fso"
	obsBucket = "obs"
)

// WorkConfig configures a client process.
type WorkConfig struct {
	Meta []string `json:"meta"`
	// Host names the client host; workers are Host/i/epoch.
	Host    string `json:"host"`
	Seed    uint64 `json:"seed"`
	Workers int    `json:"workers"`
	// Groups is the number of FSO groups and of OBS groups.
	Groups    int           `json:"groups"`
	Duration  time.Duration `json:"duration"`
	OpTimeout time.Duration `json:"op_timeout"`
	// Out is the history file (JSON lines).
	Out string `json:"out"`
	// Volume and Bucket name what the "createvolume" and "createbucket"
	// modes create.
	Volume string `json:"volume,omitempty"`
	Bucket string `json:"bucket,omitempty"`
	// Delay is how long "createbucket" waits between connecting and
	// sending.
	Delay time.Duration `json:"delay,omitempty"`
	// The datanode-kill modes (dnwork.go): Datanodes is the cluster's
	// number of datanodes; Records the writers' record files dnverify
	// checks; Datanode and DatanodeID the one datanode whose replicas it
	// reads alone (none: all of them); Health how long it waits for every
	// container to be whole (0: it does not).
	Datanodes  int           `json:"datanodes,omitempty"`
	Records    []string      `json:"records,omitempty"`
	Datanode   string        `json:"datanode,omitempty"`
	DatanodeID string        `json:"datanode_id,omitempty"`
	Health     time.Duration `json:"health,omitempty"`
	// FollowerReads turns the client's follower reads on
	// (client.Options.FollowerReads): its reads go to every replica in
	// turn. The "work" mode then prints how many a replica other than the
	// leader served (followerReadsLine).
	FollowerReads bool `json:"follower_reads,omitempty"`
}

// followerReadsLine is what a "work" client with follower reads prints:
// the reads served by a replica other than the presumed leader, and those
// that fell back to the leader.
const followerReadsLine = "follower-reads served=%d fallbacks=%d\n"

// Main runs the helper mode named by $STRATO_NETFAULT_MODE and exits; it
// returns at once when the variable is not set. A test's TestMain calls it
// first, so that the test binary doubles as the client processes.
func Main() {
	mode := os.Getenv(ModeEnv)
	if mode == "" {
		return
	}
	err := runMode(mode)
	if err != nil {
		fmt.Fprintln(os.Stderr, "netfault", mode+":", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runMode(mode string) error {
	if mode == "status" {
		return printStatus(strings.Split(os.Getenv("STRATO_NETFAULT_META"), ","))
	}
	var cfg WorkConfig
	if err := json.Unmarshal([]byte(os.Getenv(ConfigEnv)), &cfg); err != nil {
		return fmt.Errorf("bad %s: %w", ConfigEnv, err)
	}
	if mode == "createbucket" {
		return createBucketAt(cfg)
	}
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = 4 * time.Second
	}
	c, err := client.New(client.Options{Meta: cfg.Meta, ChunkSize: 64 << 10, FollowerReads: cfg.FollowerReads,
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(countSends)},
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	switch mode {
	case "setup":
		return setup(ctx, c, cfg)
	case "createvolume":
		return retry(ctx, "create volume", func(ctx context.Context) error {
			_, err := c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: cfg.Volume})
			return ignoreExists(err)
		})
	case "dnsetup", "dnwrite", "dnverify":
		return runDatanodeKillMode(ctx, c, mode, cfg)
	case "work", "verify", "writer":
		rec, err := NewRecorder(cfg.Out)
		if err != nil {
			return err
		}
		var runErr error
		switch mode {
		case "work":
			runWorkers(ctx, c, cfg, rec)
			if cfg.FollowerReads {
				served, fallbacks := c.Meta().FollowerReadStats()
				fmt.Printf(followerReadsLine, served, fallbacks)
			}
		case "verify":
			runErr = verify(ctx, c, cfg, rec)
		case "writer":
			runWriters(ctx, c, cfg, rec)
		}
		return errors.Join(runErr, rec.Close())
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// printStatus prints every replica's MetaStatus as JSON (ReplicaStatus).
func printStatus(addrs []string) error {
	out := make([]ReplicaStatus, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Go(func() {
			out[i].Addr = a
			cc, err := grpc.NewClient(a, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				out[i].Err = err.Error()
				return
			}
			defer func() { _ = cc.Close() }()
			ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
			defer cancel()
			st, err := stratov1.NewAdminServiceClient(cc).MetaStatus(ctx, &stratov1.MetaStatusRequest{})
			if err != nil {
				out[i].Err = err.Error()
				return
			}
			out[i] = ReplicaStatus{Addr: a, ID: st.Id, Role: st.Role, Leader: st.LeaderId, Term: st.Term, Commit: st.Commit, Applied: st.Applied}
		})
	}
	wg.Wait()
	return json.NewEncoder(os.Stdout).Encode(out)
}

// commitPoints are the Namespace calls whose apply is an operation's
// effect (a create's is its CommitKey).
var commitPoints = map[string]bool{
	stratov1.NamespaceService_CommitKey_FullMethodName:       true,
	stratov1.NamespaceService_CreateDirectory_FullMethodName: true,
	stratov1.NamespaceService_Rename_FullMethodName:          true,
	stratov1.NamespaceService_RenameKey_FullMethodName:       true,
	stratov1.NamespaceService_Delete_FullMethodName:          true,
	stratov1.NamespaceService_DeleteKey_FullMethodName:       true,
}

type sendsKey struct{}

// countSends counts the sends of an operation's commit-point call (the
// first and every resend under the same request ID) in the counter its
// context carries.
func countSends(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if n, ok := ctx.Value(sendsKey{}).(*atomic.Int32); ok && commitPoints[method] {
		n.Add(1)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// createBucketAt connects to the single replica cfg.Meta[0], waits
// cfg.Delay, sends one CreateBucket (no redirect, no retry) and prints the
// gRPC code of the answer. Connected first, the request is in the
// replica's socket even if the replica is paused when it is sent.
func createBucketAt(cfg WorkConfig) error {
	cc, err := grpc.NewClient(cfg.Meta[0], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer func() { _ = cc.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Delay+20*time.Second)
	defer cancel()
	if _, err := stratov1.NewAdminServiceClient(cc).MetaStatus(ctx, &stratov1.MetaStatusRequest{}); err != nil {
		return err
	}
	time.Sleep(cfg.Delay)
	_, err = stratov1.NewNamespaceServiceClient(cc).CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: cfg.Volume, Name: cfg.Bucket})
	fmt.Printf("%s %v\n", status.Code(err), err)
	return nil
}

// retry runs fn until it succeeds or a minute passes.
func retry(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	deadline := time.Now().Add(time.Minute)
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := fn(cctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func ignoreExists(err error) error {
	if errors.Is(client.Classify(err), client.ErrExists) {
		return nil
	}
	return err
}

func fsoGroup(g int) string { return fmt.Sprintf("/%s/%s/g%d", volume, fsoBucket, g) }

// setup makes the volume, the two buckets and the group directories, and
// writes a key to each bucket (so the datanodes are registered and
// pipelines exist).
func setup(ctx context.Context, c *client.Client, cfg WorkConfig) error {
	steps := []struct {
		what string
		fn   func(ctx context.Context) error
	}{
		{"volume", func(ctx context.Context) error {
			_, err := c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: volume})
			return ignoreExists(err)
		}},
		{"fso bucket", func(ctx context.Context) error {
			_, err := c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: volume, Name: fsoBucket, Layout: stratov1.BucketLayout_LAYOUT_FSO})
			return ignoreExists(err)
		}},
		{"obs bucket", func(ctx context.Context) error {
			_, err := c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: volume, Name: obsBucket, Layout: stratov1.BucketLayout_LAYOUT_OBS})
			return ignoreExists(err)
		}},
	}
	for g := range cfg.Groups {
		steps = append(steps, struct {
			what string
			fn   func(ctx context.Context) error
		}{fmt.Sprintf("group %d", g), func(ctx context.Context) error { return c.Mkdirs(ctx, fsoGroup(g)) }})
	}
	for _, d := range []string{"u", "w"} {
		steps = append(steps, struct {
			what string
			fn   func(ctx context.Context) error
		}{"dir " + d, func(ctx context.Context) error { return c.Mkdirs(ctx, fmt.Sprintf("/%s/%s/%s", volume, fsoBucket, d)) }})
	}
	steps = append(steps, struct {
		what string
		fn   func(ctx context.Context) error
	}{"probe writes", func(ctx context.Context) error {
		if err := writeAll(c.Create(ctx, fmt.Sprintf("/%s/%s/probe", volume, fsoBucket), client.CreateOptions{Overwrite: true, WriteOptions: client.WriteOptions{SizeHint: 5}}))("probe"); err != nil {
			return err
		}
		return writeAll(c.CreateKey(ctx, volume, obsBucket, "probe", client.WriteOptions{SizeHint: 5}))("probe")
	}})
	for _, s := range steps {
		if err := retry(ctx, s.what, s.fn); err != nil {
			return err
		}
	}
	return nil
}

// writeAll returns a function that writes data with w and closes it.
func writeAll(w *client.Writer, err error) func(data string) error {
	return func(data string) error {
		if err != nil {
			return err
		}
		if _, err := io.WriteString(w, data); err != nil {
			_ = w.Close()
			return err
		}
		return w.Close()
	}
}

// worker issues one sequence of operations.
type worker struct {
	c     *client.Client
	cfg   WorkConfig
	rec   *Recorder
	rng   *rand.Rand
	id    int
	epoch int
	seq   int
}

func (w *worker) name() string { return fmt.Sprintf("%s/%d/%d", w.cfg.Host, w.id, w.epoch) }

func runWorkers(ctx context.Context, c *client.Client, cfg WorkConfig, rec *Recorder) {
	deadline := time.Now().Add(cfg.Duration)
	var wg sync.WaitGroup
	for i := range cfg.Workers {
		w := &worker{c: c, cfg: cfg, rec: rec, id: i, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)))}
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) {
				op := w.next()
				w.do(ctx, op)
				if op.Outcome == Unknown {
					w.epoch++
				}
			}
		})
	}
	wg.Wait()
}

// next draws an operation: 45% on an FSO group, 35% on an OBS group, 20%
// a unique name.
func (w *worker) next() *Op {
	w.seq++
	op := &Op{Worker: w.name(), NoHint: w.rng.IntN(2) == 0}
	val := func() string {
		return fmt.Sprintf("%s#%d.%s", w.name(), w.seq, strings.Repeat("x", w.rng.IntN(200)))
	}
	r := w.rng.IntN(100)
	g := w.rng.IntN(w.cfg.Groups)
	switch {
	case r < 45:
		op.Part = fmt.Sprintf("f%d", g)
		k := w.rng.IntN(100)
		switch {
		case k < 25:
			op.Kind, op.A, op.Val, op.Overwrite = "create", w.rng.IntN(fileSlots), val(), w.rng.IntN(2) == 0
		case k < 38:
			op.Kind, op.A = "read", w.rng.IntN(fileSlots)
		case k < 50:
			op.Kind, op.A = "stat", w.rng.IntN(fsoSlots)
		case k < 65:
			op.Kind, op.A = "rename", w.rng.IntN(fileSlots)
			op.B = (op.A + 1 + w.rng.IntN(fileSlots-1)) % fileSlots
		case k < 77:
			op.Kind, op.A = "delete", w.rng.IntN(fsoSlots)
		case k < 88:
			op.Kind, op.A = "mkdir", fileSlots+w.rng.IntN(fsoSlots-fileSlots)
		default:
			op.Kind = "list"
		}
	case r < 80:
		op.Part = fmt.Sprintf("o%d", g)
		k := w.rng.IntN(100)
		switch {
		case k < 35:
			op.Kind, op.A, op.Val = "put", w.rng.IntN(obsSlots), val()
		case k < 70:
			op.Kind, op.A = "get", w.rng.IntN(obsSlots)
		case k < 85:
			op.Kind, op.A = "del", w.rng.IntN(obsSlots)
		default:
			op.Kind, op.A = "mv", w.rng.IntN(obsSlots)
			op.B = (op.A + 1 + w.rng.IntN(obsSlots-1)) % obsSlots
		}
	default:
		op.Part = "u"
		op.Name = fmt.Sprintf("%s-%d-%d", w.cfg.Host, w.id, w.seq)
		if w.rng.IntN(2) == 0 {
			op.Kind = "umkdir"
		} else {
			op.Kind, op.Val = "ucreate", val()
		}
	}
	return op
}

// sizeHint is the size hint a create or put passes: with one, meta
// allocates the first block with the open key; without, the writer asks for
// it (AllocateBlock) when its data is ready.
func sizeHint(op *Op) int64 {
	if op.NoHint {
		return 0
	}
	return int64(len(op.Val))
}

// slotPath is the FSO path or OBS key of a slot.
func slotPath(part string, slot int) string {
	if strings.HasPrefix(part, "o") {
		return "g" + part[1:] + "/" + SlotName(part, slot)
	}
	return fsoGroup(atoi(part[1:])) + "/" + SlotName(part, slot)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// mutationOutcome classifies the error of a mutation: a status that
// describes the namespace is a definite failure; anything else (timeouts,
// lost connections) leaves the outcome unknown.
func mutationOutcome(err error) (string, string) {
	if err == nil {
		return OK, ""
	}
	err = client.Classify(err) // the stubs' errors too
	for _, d := range definite {
		if errors.Is(err, d.err) {
			return Fail, d.name
		}
	}
	return Unknown, ""
}

// definite are the client's errors that describe the namespace, by the
// names the model gives its answers.
var definite = []struct {
	err  error
	name string
}{
	{client.ErrNotFound, "NotFound"},
	{client.ErrExists, "AlreadyExists"},
	{client.ErrNotEmpty, "FailedPrecondition"},
	{client.ErrQuota, "FailedPrecondition"},
	{client.ErrPrecondition, "FailedPrecondition"},
	{client.ErrInvalid, "InvalidArgument"},
}

// readOutcome classifies a read's error: not found is an answer; any other
// error says nothing.
func readOutcome(err error) (string, string) {
	if err == nil {
		return OK, ""
	}
	if errors.Is(client.Classify(err), client.ErrNotFound) {
		return Fail, "NotFound"
	}
	return NoEffect, ""
}

// write creates a key or file with op.Val: errors before the commit (open,
// data) cannot have made it visible.
func (w *worker) write(ctx context.Context, op *Op, open func(ctx context.Context) (*client.Writer, error)) (string, string, error) {
	wr, err := open(ctx)
	if err != nil {
		if o, code := mutationOutcome(err); o == Fail {
			return o, code, err
		}
		return NoEffect, "", err
	}
	if _, err := io.WriteString(wr, op.Val); err != nil {
		_ = wr.Close()
		return NoEffect, "", err
	}
	err = wr.Close()
	o, code := mutationOutcome(err)
	return o, code, err
}

// do runs op and records it.
func (w *worker) do(ctx context.Context, op *Op) {
	c := w.c
	var sends atomic.Int32
	octx, cancel := context.WithTimeout(context.WithValue(ctx, sendsKey{}, &sends), w.cfg.OpTimeout)
	defer cancel()
	p := slotPath(op.Part, op.A)
	var err error
	op.Call = Now()
	switch op.Kind {
	case "create", "ucreate":
		if op.Kind == "ucreate" {
			p = fmt.Sprintf("/%s/%s/u/%s", volume, fsoBucket, op.Name)
		}
		op.Outcome, op.Code, err = w.write(octx, op, func(ctx context.Context) (*client.Writer, error) {
			return c.Create(ctx, p, client.CreateOptions{Overwrite: op.Overwrite, WriteOptions: client.WriteOptions{SizeHint: sizeHint(op)}})
		})
	case "put":
		op.Outcome, op.Code, err = w.write(octx, op, func(ctx context.Context) (*client.Writer, error) {
			return c.CreateKey(ctx, volume, obsBucket, p, client.WriteOptions{SizeHint: sizeHint(op)})
		})
	case "read", "get":
		var r *client.Reader
		if op.Kind == "read" {
			r, err = c.Open(octx, p)
		} else {
			r, err = c.OpenKey(octx, volume, obsBucket, p)
		}
		if err == nil {
			var data []byte
			data, err = io.ReadAll(r)
			_ = r.Close()
			op.Got = string(data)
		}
		op.Outcome, op.Code = readOutcome(err)
	case "stat":
		var st *stratov1.FileStatus
		st, err = c.Stat(octx, p)
		if err == nil {
			op.IsDir, op.Size = st.IsDirectory, st.Length
		}
		op.Outcome, op.Code = readOutcome(err)
	case "list":
		var sts []*stratov1.FileStatus
		sts, err = c.List(octx, fsoGroup(atoi(op.Part[1:])))
		for _, st := range sts {
			op.Names = append(op.Names, path.Base(st.Path))
		}
		op.Outcome, op.Code = readOutcome(err)
	case "rename":
		err = c.Rename(octx, p, slotPath(op.Part, op.B))
		op.Outcome, op.Code = mutationOutcome(err)
	case "mv":
		err = c.RenameKey(octx, volume, obsBucket, p, slotPath(op.Part, op.B))
		op.Outcome, op.Code = mutationOutcome(err)
	case "delete":
		err = c.Delete(octx, p, false)
		op.Outcome, op.Code = mutationOutcome(err)
	case "del":
		err = c.DeleteKey(octx, volume, obsBucket, p)
		op.Outcome, op.Code = mutationOutcome(err)
	case "mkdir", "umkdir":
		if op.Kind == "umkdir" {
			p = fmt.Sprintf("/%s/%s/u/%s", volume, fsoBucket, op.Name)
		}
		err = c.Mkdirs(octx, p)
		op.Outcome, op.Code = mutationOutcome(err)
	default:
		err = fmt.Errorf("unknown operation %q", op.Kind)
		op.Outcome = NoEffect
	}
	op.Sends = int(sends.Load())
	if op.Outcome == Unknown && op.Sends == 0 {
		// The call that makes the effect was never sent (e.g. a create
		// that found no pipeline for its block before its commit).
		op.Outcome = NoEffect
	}
	if op.Outcome != Unknown {
		op.Return = Now()
	}
	if err != nil {
		op.Err = err.Error()
	}
	if rerr := w.rec.Add(op, false); rerr != nil {
		fmt.Fprintln(os.Stderr, "netfault: recording:", rerr)
	}
}

// verify checks that the cluster takes writes again once the faults are
// over, then reads the whole state: every slot of every group, each
// group's listing, and the unique names.
func verify(ctx context.Context, c *client.Client, cfg WorkConfig, rec *Recorder) error {
	// Liveness: once healed, the cluster takes writes again (a file and a
	// key, which need block allocation: meta out of safe mode, pipelines).
	if err := retry(ctx, "writing after the faults healed", func(ctx context.Context) error {
		if err := writeAll(c.Create(ctx, fmt.Sprintf("/%s/%s/healed", volume, fsoBucket), client.CreateOptions{Overwrite: true, WriteOptions: client.WriteOptions{SizeHint: 6}}))("healed"); err != nil {
			return err
		}
		return writeAll(c.CreateKey(ctx, volume, obsBucket, "healed", client.WriteOptions{SizeHint: 6}))("healed")
	}); err != nil {
		return err
	}
	w := &worker{c: c, cfg: cfg, rec: rec, id: 999}
	cfg.OpTimeout = 20 * time.Second
	w.cfg = cfg
	for g := range cfg.Groups {
		part := fmt.Sprintf("f%d", g)
		w.do(ctx, &Op{Worker: w.name(), Kind: "list", Part: part})
		for s := range fsoSlots {
			kind := "stat"
			if s < fileSlots {
				kind = "read"
			}
			w.do(ctx, &Op{Worker: w.name(), Kind: kind, Part: part, A: s})
		}
		for s := range obsSlots {
			w.do(ctx, &Op{Worker: w.name(), Kind: "get", Part: fmt.Sprintf("o%d", g), A: s})
		}
	}
	op := &Op{Worker: w.name(), Kind: "ulist", Part: "u", Call: Now()}
	sts, err := c.List(ctx, fmt.Sprintf("/%s/%s/u", volume, fsoBucket))
	op.Return = Now()
	if err != nil {
		op.Outcome, op.Err = NoEffect, err.Error()
	} else {
		op.Outcome = OK
		for _, st := range sts {
			op.Names = append(op.Names, path.Base(st.Path))
		}
	}
	return errors.Join(err, rec.Add(op, true))
}

// runWriters runs cfg.Workers writers of each kind until told to stop:
// "wmeta" creates a directory (meta only), "wkey" puts a small OBS key
// (meta and the datanodes). Each operation is recorded (and flushed) as it
// ends.
func runWriters(ctx context.Context, c *client.Client, cfg WorkConfig, rec *Recorder) {
	var wg sync.WaitGroup
	var seq atomic.Int64
	for i := range 2 * cfg.Workers {
		kind := "wmeta"
		if i%2 == 1 {
			kind = "wkey"
		}
		wg.Go(func() {
			for ctx.Err() == nil {
				n := seq.Add(1)
				op := &Op{Worker: fmt.Sprintf("%s/%d/0", cfg.Host, i), Kind: kind, Name: fmt.Sprintf("w%d", n)}
				octx, cancel := context.WithTimeout(ctx, cfg.OpTimeout)
				op.Call = Now()
				var err error
				if kind == "wmeta" {
					err = c.Mkdirs(octx, fmt.Sprintf("/%s/%s/w/%s", volume, fsoBucket, op.Name))
				} else {
					err = writeAll(c.CreateKey(octx, volume, obsBucket, "w/"+op.Name, client.WriteOptions{SizeHint: 8}))("12345678")
				}
				cancel()
				op.Return = Now()
				op.Outcome, op.Code = mutationOutcome(err)
				if err != nil {
					op.Err = err.Error()
					time.Sleep(5 * time.Millisecond)
				}
				_ = rec.Add(op, true)
			}
		})
	}
	wg.Wait()
}
