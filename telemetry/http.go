package telemetry

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/strato-io/strato/internal/buildinfo"
)

// Registry is the Prometheus registry a server's collectors go in and its
// endpoint serves (an alias, so that only this package imports the
// Prometheus client).
type Registry = prometheus.Registry

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return prometheus.NewRegistry() }

// Endpoint is what a server's HTTP address serves.
type Endpoint struct {
	// Registry is served at /metrics, with Go's runtime and the process's
	// collectors and strato_build_info added. Required.
	Registry *Registry
	// Ready decides /readyz: nil means ready (200), an error is the
	// reason it is not (503). Default: always ready.
	Ready func() error
	// Console, when set, serves every other path (meta's web console).
	// Default: 404 for other paths.
	Console http.Handler
	// TLS, when set, makes the endpoint serve HTTPS with this
	// configuration's certificate (no client certificate is asked for).
	// Default: plain HTTP.
	TLS *tls.Config
	// Pprof serves Go's profiles at /debug/pprof/ to callers on a
	// loopback address. Default: off (404).
	Pprof bool
	// Logger. Default: slog.Default().
	Logger *slog.Logger
}

// Handler returns the endpoint's handler:
//
//	/metrics        Prometheus text format
//	/healthz        200 "ok" while the process serves (liveness)
//	/readyz         200 "ready", or 503 and why not (readiness)
//	/debug/pprof/   with Pprof, Go's profiles (go tool pprof
//	                http://ADDR/debug/pprof/profile), to loopback callers
//	anything else   the console, or 404
//
// None of them needs credentials, so none carries a secret: /metrics and
// the health checks report no flag values, and the profiles leave out
// /debug/pprof/cmdline, the process's command line. Profiles still show
// the process's memory and code paths, so they are off unless asked for,
// and then answered only to a caller on the same host (a loopback peer
// address: an operator's shell, or kubectl port-forward into the pod),
// whatever address the endpoint listens on. A loopback check serves every
// role alike, where an administrator's token could be checked by meta
// alone: datanodes and gateways do not authenticate HTTP callers.
func Handler(e Endpoint) http.Handler {
	e.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfoCollector(buildinfo.Get()))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(e.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if e.Ready != nil {
			if err := e.Ready(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = fmt.Fprintf(w, "not ready: %v\n", err)
				return
			}
		}
		_, _ = fmt.Fprintln(w, "ready")
	})
	if e.Pprof {
		mux.Handle("/debug/pprof/", loopbackOnly(http.HandlerFunc(pprof.Index)))
		mux.Handle("/debug/pprof/profile", loopbackOnly(http.HandlerFunc(pprof.Profile)))
		mux.Handle("/debug/pprof/symbol", loopbackOnly(http.HandlerFunc(pprof.Symbol)))
		mux.Handle("/debug/pprof/trace", loopbackOnly(http.HandlerFunc(pprof.Trace)))
	}
	// The command line is never served, profiles on or off: it is how
	// a secret given as a flag would leak.
	mux.Handle("/debug/pprof/cmdline", http.NotFoundHandler())
	if e.Console != nil {
		mux.Handle("/", e.Console)
	}
	return mux
}

// loopbackOnly answers 403 to a caller whose address is not a loopback
// one.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			http.Error(w, "profiles are served to loopback callers only", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Server is a running HTTP endpoint.
type Server struct {
	srv *http.Server
	lis net.Listener
}

// Serve serves h on addr until Close.
func Serve(addr string, h http.Handler, log *slog.Logger) (*Server, error) {
	return ServeTLS(addr, h, nil, log)
}

// ServeTLS is Serve over TLS with cfg's certificate (plain HTTP when cfg
// is nil). Clients are not asked for a certificate.
func ServeTLS(addr string, h http.Handler, cfg *tls.Config, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	if cfg != nil {
		cfg = cfg.Clone()
		cfg.ClientAuth = tls.NoClientCert
		cfg.NextProtos = []string{"h2", "http/1.1"}
		lis = tls.NewListener(lis, cfg)
	}
	s := &Server{lis: lis, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}}
	go func() {
		if err := s.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("http endpoint stopped", "addr", addr, "err", err)
		}
	}()
	return s, nil
}

// Addr is the address served (with the port chosen for ":0").
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Close stops serving.
func (s *Server) Close() error { return s.srv.Close() }
