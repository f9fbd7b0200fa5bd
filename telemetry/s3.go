package telemetry

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// S3Metrics counts the S3 gateway's requests (docs/s3.md):
//
//	strato_s3_requests_total{op,status}
//	strato_s3_request_seconds{op} (histogram)
//	strato_s3_received_bytes_total
//	strato_s3_sent_bytes_total
//
// op is the S3 operation (GetObject, PutObject, ...; Unknown for a request
// that named none), status the HTTP status of the answer; the bytes are
// those of request and response bodies.
type S3Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	bytesIn  prometheus.Counter
	bytesOut prometheus.Counter
}

// NewS3Metrics makes the metrics and registers them with reg.
func NewS3Metrics(reg prometheus.Registerer) *S3Metrics {
	m := &S3Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strato_s3_requests_total",
			Help: "S3 requests by operation and HTTP status."}, []string{"op", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strato_s3_request_seconds",
			Help: "S3 request latency by operation.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18)}, []string{"op"}),
		bytesIn: prometheus.NewCounter(prometheus.CounterOpts{Name: "strato_s3_received_bytes_total",
			Help: "Bytes of S3 request bodies."}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{Name: "strato_s3_sent_bytes_total",
			Help: "Bytes of S3 response bodies."}),
	}
	reg.MustRegister(m.requests, m.latency, m.bytesIn, m.bytesOut)
	return m
}

// Observe records one request: its operation, HTTP status, latency and the
// bytes of its request and response bodies; it is s3.Options.Observe.
func (m *S3Metrics) Observe(op string, status int, d time.Duration, in, out int64) {
	if op == "" {
		op = "Unknown"
	}
	m.requests.WithLabelValues(op, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(op).Observe(d.Seconds())
	m.bytesIn.Add(float64(in))
	m.bytesOut.Add(float64(out))
}

// RegisterS3Cache reports a gateway's cache of bucket policies and public
// grants (s3.Gateway.AccessCacheBytes) as strato_s3_access_cache_bytes and
// strato_s3_access_cache_max_bytes.
func RegisterS3Cache(reg prometheus.Registerer, held func() (int64, int64)) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "strato_s3_access_cache_bytes",
			Help: "the gateway's cache of bucket policies and public grants, about"},
			func() float64 { n, _ := held(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "strato_s3_access_cache_max_bytes",
			Help: "its bound"}, func() float64 { _, m := held(); return float64(m) }))
}
