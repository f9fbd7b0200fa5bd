package telemetry

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// With Pprof the profiles answer loopback callers and refuse others;
// without it they are not served; the command line never is.
func TestPprofLoopbackOnly(t *testing.T) {
	for _, on := range []bool{true, false} {
		h := Handler(Endpoint{Registry: prometheus.NewRegistry(), Pprof: on})
		for _, c := range []struct {
			remote, path string
			want         int
		}{
			{"127.0.0.1:5000", "/debug/pprof/goroutine?debug=1", http.StatusOK},
			{"[::1]:5000", "/debug/pprof/", http.StatusOK},
			{"10.1.2.3:5000", "/debug/pprof/goroutine?debug=1", http.StatusForbidden},
			{"10.1.2.3:5000", "/debug/pprof/profile?seconds=1", http.StatusForbidden},
			{"192.168.0.9:5000", "/debug/pprof/trace?seconds=1", http.StatusForbidden},
			{"127.0.0.1:5000", "/debug/pprof/cmdline", http.StatusNotFound},
			{"10.1.2.3:5000", "/metrics", http.StatusOK},
			{"10.1.2.3:5000", "/healthz", http.StatusOK},
		} {
			want := c.want
			if !on && c.path != "/metrics" && c.path != "/healthz" {
				want = http.StatusNotFound
			}
			req := httptest.NewRequest(http.MethodGet, c.path, nil)
			req.RemoteAddr = c.remote
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, want, rec.Code, "pprof %v: %s from %s: %s", on, c.path, c.remote, rec.Body)
		}
	}
}
