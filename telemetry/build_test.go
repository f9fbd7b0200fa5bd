package telemetry

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/certs"
	"github.com/strato-io/strato/internal/buildinfo"
)

// Every endpoint serves strato_build_info with the running build's labels.
func TestBuildInfoServed(t *testing.T) {
	h := Handler(Endpoint{Registry: prometheus.NewRegistry()})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	info := buildinfo.Get()
	want := `strato_build_info{commit="` + info.Commit + `",go_version="` + info.GoVersion + `",version="` + info.Version + `"} 1`
	require.Contains(t, rec.Body.String(), want)
}

// A server's certificate's NotAfter is served; configurations without a
// certificate add nothing.
func TestCertificateExpiry(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, certs.InitCA(dir))
	require.NoError(t, certs.Issue(dir, dir, "meta1", nil))
	cfg, err := certs.ServerConfig(filepath.Join(dir, "meta1.crt"), filepath.Join(dir, "meta1.key"), filepath.Join(dir, "ca.crt"))
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
	require.NoError(t, err)

	reg := prometheus.NewRegistry()
	require.NoError(t, RegisterCertificates(reg, nil, cfg))
	rec := httptest.NewRecorder()
	Handler(Endpoint{Registry: reg}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	var line string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "strato_tls_certificate_expiry_timestamp_seconds{") {
			line = l
		}
	}
	require.NotEmpty(t, line, body)
	require.Contains(t, line, `subject="`+leaf.Subject.String()+`"`)
	v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
	require.NoError(t, err)
	require.Equal(t, float64(leaf.NotAfter.Unix()), v)

	empty := prometheus.NewRegistry()
	require.NoError(t, RegisterCertificates(empty, nil))
	mfs, err := empty.Gather()
	require.NoError(t, err)
	require.Empty(t, mfs)
}
