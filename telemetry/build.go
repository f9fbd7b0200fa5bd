package telemetry

import (
	"crypto/tls"
	"crypto/x509"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strato-io/strato/internal/buildinfo"
)

// buildInfoCollector is strato_build_info{version,commit,go_version} = 1,
// the build every server's endpoint reports (Handler registers it): a
// dashboard joins it to tell which build runs where, an alert that
// versions differ after an upgrade.
func buildInfoCollector(info buildinfo.Info) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "strato_build_info",
		Help: "1, labelled with the build's version, commit and Go toolchain.",
		ConstLabels: prometheus.Labels{
			"version": info.Version, "commit": info.Commit, "go_version": info.GoVersion,
		},
	})
	g.Set(1)
	return g
}

var certExpiryDesc = prometheus.NewDesc("strato_tls_certificate_expiry_timestamp_seconds",
	"when the TLS certificate a server presents stops being valid (its NotAfter, Unix seconds)",
	[]string{"subject"}, nil)

// RegisterCertificates registers with reg the expiry time of the first
// certificate of each configuration that has one
// (strato_tls_certificate_expiry_timestamp_seconds{subject}), so that an
// alert can warn before it lapses (deploy/prometheus/alerts.yml). nil
// configurations, and those without a certificate, add nothing.
func RegisterCertificates(reg prometheus.Registerer, cfgs ...*tls.Config) error {
	seen := map[string]float64{}
	for _, cfg := range cfgs {
		if cfg == nil || len(cfg.Certificates) == 0 || len(cfg.Certificates[0].Certificate) == 0 {
			continue
		}
		c := cfg.Certificates[0]
		leaf := c.Leaf
		if leaf == nil {
			var err error
			if leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
				return err
			}
		}
		seen[leaf.Subject.String()] = float64(leaf.NotAfter.Unix())
	}
	if len(seen) == 0 {
		return nil
	}
	return reg.Register(collectFunc(func(ch chan<- prometheus.Metric) {
		for subject, t := range seen {
			ch <- prometheus.MustNewConstMetric(certExpiryDesc, prometheus.GaugeValue, t, subject)
		}
	}))
}
