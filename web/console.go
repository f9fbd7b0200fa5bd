package web

import (
	"context"
	"crypto/tls"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/internal/reconnect"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure a Console.
type Options struct {
	// Meta is the gRPC address of the meta replica the console belongs to
	// (it asks it for its own status, and follows it to the leader).
	// Required.
	Meta string
	// PageSize is the default number of rows of a list page (?limit=
	// overrides it, up to 1000). Default: 100.
	PageSize int
	// Timeout bounds the meta calls of one page. Default: 10s.
	Timeout time.Duration
	// SampleInterval is how often the live charts' rates are sampled;
	// History samples are kept. Defaults: 5s, 120 (ten minutes).
	SampleInterval time.Duration
	History        int
	// Queues, when set, reports the work queues of the replica the console
	// runs beside (the operations page): they are the leader's soft state,
	// which no RPC returns yet. It returns nil when the replica does not
	// lead. Default: none (the page shows what the APIs give).
	Queues func() []Queue
	// TLS, when set, is the configuration of the console's connections to
	// meta (trusting the cluster CA). Default: plaintext.
	TLS *tls.Config
	// Login makes visitors sign in with a token of their own (a meta with
	// --auth token): the console calls meta with the visitor's token
	// (login.go). Default: false, the console calls meta as itself.
	Login bool
	// Token is presented to meta by the console's own calls: every call
	// without Login; with Login, only the background sampling of the
	// live charts (none without a token). Default: none.
	Token string
	// Logger. Default: slog.Default().
	Logger *slog.Logger
}

// Queue is one work queue of meta's leader, for the operations page.
type Queue struct {
	Name  string
	Value int64
	Help  string
}

// EnsureDefaults fills in the defaults.
func (o *Options) EnsureDefaults() {
	if o.PageSize <= 0 {
		o.PageSize = 100
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.SampleInterval <= 0 {
		o.SampleInterval = 5 * time.Second
	}
	if o.History <= 0 {
		o.History = 120
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Validate reports invalid options.
func (o *Options) Validate() error {
	if o.Meta == "" {
		return errors.New("web: no meta address given")
	}
	return nil
}

// Console is the web console; it is an http.Handler.
type Console struct {
	opts  Options
	cl    *client.Client
	pages map[string]*template.Template
	mux   *http.ServeMux
	// handler is mux behind the sign-in check (login.go).
	handler http.Handler
	rates   *sampler

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn // direct connections, for each replica's MetaStatus
}

// New returns a console of the meta replica at opts.Meta. Connections are
// made lazily.
func New(opts Options) (*Console, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	// The client presents no token of its own with Login: each call
	// carries its page's (or the sampler's) in its context.
	cl, err := client.New(client.Options{Meta: []string{opts.Meta}, TLS: opts.TLS, Token: opts.Token,
		NoToken: opts.Login || opts.Token == "", Logger: opts.Logger, Owner: "console"})
	if err != nil {
		return nil, err
	}
	c := &Console{opts: opts, cl: cl, conns: map[string]*grpc.ClientConn{}}
	if c.pages, err = parsePages(); err != nil {
		_ = cl.Close()
		return nil, err
	}
	static, _ := fs.Sub(staticFS, "static")
	m := http.NewServeMux()
	m.HandleFunc("GET /login", c.loginForm)
	m.HandleFunc("POST /login", c.login)
	m.HandleFunc("POST /logout", c.logout)
	m.HandleFunc("GET /{$}", c.page(c.overviewPage))
	m.HandleFunc("GET /datanodes", c.page(c.datanodesPage))
	m.HandleFunc("GET /datanodes/{id}", c.page(c.datanodePage))
	m.HandleFunc("GET /pipelines", c.page(c.pipelinesPage))
	m.HandleFunc("GET /containers", c.page(c.containersPage))
	m.HandleFunc("GET /containers/{id}", c.page(c.containerPage))
	m.HandleFunc("GET /ns/{path...}", c.page(c.namespacePage))
	m.HandleFunc("GET /download/{path...}", c.page(c.download))
	m.HandleFunc("GET /ops", c.page(c.opsPage))
	m.HandleFunc("GET /api/overview", c.overviewAPI)
	m.HandleFunc("GET /api/rates", c.ratesAPI)
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			c.fail(w, r, httpErrorf(http.StatusMethodNotAllowed, "the console only reads: %s is not allowed", r.Method))
			return
		}
		c.fail(w, r, httpErrorf(http.StatusNotFound, "no page at %s", r.URL.Path))
	})
	c.mux = m
	c.handler = c.withVisitor(m)
	c.rates = startSampler(c, opts.SampleInterval, opts.History)
	return c, nil
}

// page adapts a page's handler: its error is answered with the error
// page (fail).
func (c *Console) page(fn func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			c.fail(w, r, err)
		}
	}
}

// ServeHTTP serves the console.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// A bug in a page must not take meta down, nor show a trace.
		if v := recover(); v != nil {
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			c.opts.Logger.Error("web: page failed", "path", r.URL.Path, "panic", v)
			http.Error(w, "internal error (logged)", http.StatusInternalServerError)
		}
	}()
	c.handler.ServeHTTP(w, r)
}

// Close stops the sampler and closes the console's connections.
func (c *Console) Close() error {
	c.rates.stop()
	c.mu.Lock()
	var errs []error
	for a, cc := range c.conns {
		errs = append(errs, cc.Close())
		delete(c.conns, a)
	}
	c.mu.Unlock()
	errs = append(errs, c.cl.Close())
	return errors.Join(errs...)
}

// admin calls meta's leader's AdminService (reads: retried elsewhere).
func (c *Console) admin(ctx context.Context, fn func(ctx context.Context, a stratov1.AdminServiceClient) error) error {
	return c.cl.Meta().Do(client.RetrySafe(ctx), func(ctx context.Context, _ stratov1.NamespaceServiceClient, cl client.ClusterStubs) error {
		return fn(ctx, cl.AdminServiceClient)
	})
}

// ns calls meta's leader's NamespaceService (reads only).
func (c *Console) ns(ctx context.Context, fn func(ctx context.Context, n stratov1.NamespaceServiceClient) error) error {
	return c.cl.Meta().Do(client.RetrySafe(ctx), func(ctx context.Context, n stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
		return fn(ctx, n)
	})
}

// replicaStatus asks the replica at addr for its own status (not the
// leader's: MetaStatus is answered by every replica).
func (c *Console) replicaStatus(ctx context.Context, addr string) (*stratov1.MetaStatusResponse, error) {
	c.mu.Lock()
	cc := c.conns[addr]
	if cc == nil {
		var err error
		creds := insecure.NewCredentials()
		if c.opts.TLS != nil {
			creds = credentials.NewTLS(c.opts.TLS)
		}
		if cc, err = grpc.NewClient(addr, grpc.WithTransportCredentials(creds), reconnect.DialOption()); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		c.conns[addr] = cc
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if c.opts.Token != "" && !hasAuthorization(ctx) {
		ctx = metadata.AppendToOutgoingContext(ctx, authorization, "Bearer "+c.opts.Token)
	}
	return stratov1.NewAdminServiceClient(cc).MetaStatus(ctx, &stratov1.MetaStatusRequest{})
}

// httpError is a page's failure: the status it answers and why.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func httpErrorf(code int, format string, args ...any) error {
	return &httpError{code: code, msg: fmt.Sprintf(format, args...)}
}

// statusOf maps an error to its HTTP status: a meta answer by its gRPC
// code (not found, bad argument, unavailable), anything else 502 (meta
// failed us; the console itself did not).
func statusOf(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.code
	}
	switch status.Code(err) {
	case codes.NotFound:
		return http.StatusNotFound
	case codes.InvalidArgument, codes.FailedPrecondition:
		return http.StatusBadRequest
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.Unavailable, codes.ResourceExhausted:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded, codes.Canceled:
		return http.StatusGatewayTimeout
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusGatewayTimeout
	}
	return http.StatusBadGateway
}

func errorText(err error) string {
	var he *httpError
	if errors.As(err, &he) {
		return he.msg
	}
	if st, ok := status.FromError(err); ok {
		return "meta: " + st.Message()
	}
	return err.Error()
}

// fail answers a page with its error page.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := statusOf(err)
	if code >= 500 {
		c.opts.Logger.Warn("web: page failed", "path", r.URL.Path, "status", code, "err", err)
	}
	c.render(w, r, code, "error", "Error", errorPage{Status: code, StatusText: http.StatusText(code), Message: errorText(err)})
}

type errorPage struct {
	Status     int
	StatusText string
	Message    string
}

// ctx is a page's context: the request's, bounded by Options.Timeout.
func (c *Console) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), c.opts.Timeout)
}

// limit is the page size asked for (?limit=), within 1..1000.
func (c *Console) limit(r *http.Request) (int, error) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return c.opts.PageSize, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1000 {
		return 0, httpErrorf(http.StatusBadRequest, "limit %q: want a number from 1 to 1000", s)
	}
	return n, nil
}

// idPage is a list page's position and size: ?after= (the last ID of
// the previous page) and ?limit=.
func (c *Console) idPage(r *http.Request) (after uint64, limit int, err error) {
	if after, err = uintParam("after", r.URL.Query().Get("after")); err != nil {
		return 0, 0, err
	}
	limit, err = c.limit(r)
	return after, limit, err
}

// uintParam parses an unsigned ID (a container, a pipeline, a page token).
func uintParam(name, s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, httpErrorf(http.StatusBadRequest, "%s %q is not a number", name, s)
	}
	return n, nil
}
