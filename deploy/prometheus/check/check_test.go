package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testFile = "../alerts_test.yml"

// TestAlerts runs, for each alert of alerts.yml, the test groups of
// alerts_test.yml that check it (only its cases): it must fire where they
// expect it and stay silent where they expect nothing, and have both kinds
// of case.
func TestAlerts(t *testing.T) {
	u, err := loadTests(testFile)
	if err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, f := range u.RuleFiles {
		a, err := parseRules(f)
		if err != nil {
			t.Fatal(err)
		}
		alerts = append(alerts, a...)
	}
	if err := coverage(u, alerts); err != nil {
		t.Error(err)
	}
	for _, alert := range alerts {
		t.Run(alert, func(t *testing.T) {
			fires, silent := 0, 0
			for _, tg := range u.Tests {
				var cases []alertTestCase
				for _, c := range tg.AlertRuleTests {
					if c.Alertname == alert {
						cases = append(cases, c)
						if len(c.ExpAlerts) > 0 {
							fires++
						} else {
							silent++
						}
					}
				}
				if len(cases) == 0 {
					continue
				}
				tg.AlertRuleTests = cases
				for _, err := range run(tg, u.RuleFiles, time.Duration(u.EvaluationInterval)) {
					t.Errorf("test %q: %v", tg.Name, err)
				}
			}
			if fires == 0 || silent == 0 {
				t.Errorf("%d cases where it fires, %d where it is silent: want both", fires, silent)
			}
		})
	}
}

// The checker fails what it should: wrong expectations, an alert firing
// where silence is expected, a rule that does not parse, an unknown field,
// an alert without a silent case.
func TestCheckCanFail(t *testing.T) {
	rules, err := os.ReadFile("../alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(testFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		rules, tests func(string) string
		want         string
	}{
		{"wrong value", nil, func(s string) string {
			return strings.Replace(s, `"2 datanode(s) DEAD`, `"3 datanode(s) DEAD`, 1)
		}, "StratoDatanodeDead at 3m"},
		{"fires before its for", nil, func(s string) string {
			return strings.Replace(s, "eval_time: 2m # leaderless", "eval_time: 3m # leaderless", 1)
		}, "StratoMetaNoLeader at 3m"},
		{"threshold moved", func(s string) string {
			return strings.Replace(s, "> 0.05", "> 0.2", 1)
		}, nil, "StratoS3Errors at 28m"},
		{"bad PromQL", func(s string) string {
			return strings.Replace(s, "sum by (job) (strato_meta_leader) < 1", "sum by (job) (strato_meta_leader < 1", 1)
		}, nil, "unclosed left parenthesis"},
		{"unknown field", func(s string) string {
			return strings.Replace(s, "        for: 1m\n", "        for: 1m\n        fro: 1m\n", 1)
		}, nil, "fro"},
		{"no silent case", nil, func(s string) string {
			return strings.Replace(s, "      - eval_time: 1m\n        alertname: StratoVolumeFailed\n        exp_alerts: []\n", "", 1)
		}, "alert StratoVolumeFailed: no test where it stays silent"},
		{"unknown alert", nil, func(s string) string {
			return strings.Replace(s, "alertname: StratoTargetDown", "alertname: StratoTargetDwn", 1)
		}, `no alert "StratoTargetDwn"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r, ts := string(rules), string(tests)
			if c.rules != nil {
				r = c.rules(r)
			}
			if c.tests != nil {
				ts = c.tests(ts)
			}
			if r == string(rules) && ts == string(tests) {
				t.Fatal("the change matched nothing")
			}
			if err := os.WriteFile(filepath.Join(dir, "alerts.yml"), []byte(r), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "alerts_test.yml"), []byte(ts), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := check(filepath.Join(dir, "alerts_test.yml"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("check: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// Every query of the Grafana dashboard parses; a broken one is reported.
func TestDashboardQueries(t *testing.T) {
	const path = "../../grafana/dashboards/strato.json"
	n, err := checkDashboard(path)
	if err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Errorf("%d queries parsed: the dashboard has more", n)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(b), `sum by (op) (rate(strato_s3_requests_total{instance=~\"$instance\"}[$__rate_interval]))`,
		`sum by (op) (rate(strato_s3_requests_total{instance=~\"$instance\"[$__rate_interval]))`, 1)
	if broken == string(b) {
		t.Fatal("the change matched nothing")
	}
	bad := filepath.Join(t.TempDir(), "strato.json")
	if err := os.WriteFile(bad, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := checkDashboard(bad); err == nil || !strings.Contains(err.Error(), "Requests / s by operation") {
		t.Errorf("checkDashboard of a broken query: %v", err)
	}
}
