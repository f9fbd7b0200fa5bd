package s3

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the gateway's Prometheus metrics: requests by operation and
// status, their latency, and the bytes of request and response bodies.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	bytesIn  prometheus.Counter
	bytesOut prometheus.Counter
}

// NewMetrics makes the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strato_s3_requests_total",
			Help: "S3 requests by operation and HTTP status."}, []string{"op", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strato_s3_request_seconds",
			Help: "S3 request latency by operation.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18)}, []string{"op"}),
		bytesIn: prometheus.NewCounter(prometheus.CounterOpts{Name: "strato_s3_received_bytes_total",
			Help: "Bytes of S3 request bodies."}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{Name: "strato_s3_sent_bytes_total",
			Help: "Bytes of S3 response bodies."}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.latency, m.bytesIn, m.bytesOut)
	}
	return m
}

func (m *Metrics) observe(op string, status int, d time.Duration, in, out int64) {
	if op == "" {
		op = "Unknown"
	}
	m.requests.WithLabelValues(op, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(op).Observe(d.Seconds())
	m.bytesIn.Add(float64(in))
	m.bytesOut.Add(float64(out))
}
