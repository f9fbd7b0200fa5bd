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
)

// Endpoint is what a server's HTTP address serves.
type Endpoint struct {
	// Registry is served at /metrics, with Go's runtime and the process's
	// collectors added. Required.
	Registry *prometheus.Registry
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
	// Logger. Default: slog.Default().
	Logger *slog.Logger
}

// Handler returns the endpoint's handler:
//
//	/metrics        Prometheus text format
//	/healthz        200 "ok" while the process serves (liveness)
//	/readyz         200 "ready", or 503 and why not (readiness)
//	/debug/pprof/   Go's profiles (go tool pprof http://ADDR/debug/pprof/profile)
//	anything else   the console, or 404
func Handler(e Endpoint) http.Handler {
	e.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
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
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	if e.Console != nil {
		mux.Handle("/", e.Console)
	}
	return mux
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
