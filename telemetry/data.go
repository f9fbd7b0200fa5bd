package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strato-io/strato/wire"
)

// DataMetrics counts a datanode's data-protocol requests (docs/wire.md):
//
//	strato_datanode_requests_total{type,code}
//	strato_datanode_request_duration_seconds{type} (histogram)
//
// type is the request's frame type (WRITE_CHUNK, PUT_BLOCK, READ_CHUNK,
// ...), code OK or the error code of the answer.
type DataMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// ok and seconds cache the series of each known type (the hot path
	// makes no label lookups).
	ok      [16]prometheus.Counter
	seconds [16]prometheus.Observer
}

// NewDataMetrics makes the metrics and registers them with reg. Every
// request type appears with zero counts from the start.
func NewDataMetrics(reg prometheus.Registerer) *DataMetrics {
	m := &DataMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strato_datanode_requests_total",
			Help: "Data-protocol requests answered, by type and outcome (OK or the error code)."}, []string{"type", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strato_datanode_request_duration_seconds",
			Help:    "Time from a data-protocol request's arrival to its response (a pipeline leader's includes its followers').",
			Buckets: LatencyBuckets}, []string{"type"}),
	}
	reg.MustRegister(m.requests, m.duration)
	for t := wire.TypeWriteChunk; t.Known() && int(t) < len(m.ok); t++ {
		switch t {
		case wire.TypeImportBegin, wire.TypeImportData, wire.TypeImportCommit, wire.TypeImportAbort:
			continue // counted by the replication metrics
		}
		m.ok[t] = m.requests.WithLabelValues(t.String(), "OK")
		m.seconds[t] = m.duration.WithLabelValues(t.String())
	}
	return m
}

// Observe records one request; it is datanode.ServerOptions.Observe.
func (m *DataMetrics) Observe(t wire.Type, code wire.Code, d time.Duration) {
	if int(t) < len(m.ok) && m.ok[t] != nil {
		if code == 0 {
			m.ok[t].Inc()
		} else {
			m.requests.WithLabelValues(t.String(), code.String()).Inc()
		}
		m.seconds[t].Observe(d.Seconds())
		return
	}
	c := "OK"
	if code != 0 {
		c = code.String()
	}
	m.requests.WithLabelValues(t.String(), c).Inc()
	m.duration.WithLabelValues(t.String()).Observe(d.Seconds())
}
