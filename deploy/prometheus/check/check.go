// Command check checks strato's Prometheus alerting rules
// (deploy/prometheus/alerts.yml) with Prometheus's own code: the rule files
// parse with its rule parser (model/rulefmt: unknown fields, bad PromQL,
// bad templates refused), and the tests of alerts_test.yml, written in the
// format of `promtool test rules`, pass when run through its rule engine
// over series recorded with promqltest's loader. Every alert must have a
// test where it fires and one where it stays silent. It is its own module
// so that Prometheus's dependencies stay out of strato's go.mod (like
// deploy/validate); `make deploy-check` runs it.
//
//	go run . -tests ../alerts_test.yml
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"go.yaml.in/yaml/v3"
)

// unitTests is a test file in promtool's format (the parts strato uses;
// any other key is refused).
type unitTests struct {
	RuleFiles          []string       `yaml:"rule_files"`
	EvaluationInterval model.Duration `yaml:"evaluation_interval"`
	Tests              []testGroup    `yaml:"tests"`
}

// testGroup is series recorded every Interval from time 0 and the alerts
// expected at some times.
type testGroup struct {
	Name           string          `yaml:"name"`
	Interval       model.Duration  `yaml:"interval"`
	InputSeries    []inputSeries   `yaml:"input_series"`
	AlertRuleTests []alertTestCase `yaml:"alert_rule_test"`
}

type inputSeries struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

// alertTestCase: at EvalTime, the alerts named Alertname that fire are
// exactly ExpAlerts (none: silent).
type alertTestCase struct {
	EvalTime  model.Duration `yaml:"eval_time"`
	Alertname string         `yaml:"alertname"`
	ExpAlerts []expAlert     `yaml:"exp_alerts"`
}

type expAlert struct {
	ExpLabels      map[string]string `yaml:"exp_labels"`
	ExpAnnotations map[string]string `yaml:"exp_annotations"`
}

var promqlParser = parser.NewParser(parser.Options{})

// parseRules parses a rule file with Prometheus's rule parser, strictly
// (unknown fields refused, metric and label names of the classic
// character set), and returns its alerts' names.
func parseRules(path string) ([]string, error) {
	groups, errs := rulefmt.ParseFile(path, false, model.LegacyValidation, promqlParser, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var alerts []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			if slices.Contains(alerts, r.Alert) {
				return nil, fmt.Errorf("%s: alert %s defined twice", path, r.Alert)
			}
			alerts = append(alerts, r.Alert)
		}
	}
	if len(alerts) == 0 {
		return nil, fmt.Errorf("%s: no alerting rule", path)
	}
	return alerts, nil
}

// loadTests reads a test file, refusing unknown keys.
func loadTests(path string) (*unitTests, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var u unitTests
	if err := dec.Decode(&u); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if u.EvaluationInterval == 0 {
		u.EvaluationInterval = model.Duration(time.Minute)
	}
	for i := range u.RuleFiles {
		if !filepath.IsAbs(u.RuleFiles[i]) {
			u.RuleFiles[i] = filepath.Join(filepath.Dir(path), u.RuleFiles[i])
		}
	}
	return &u, nil
}

// coverage checks that each alert has a test where it fires and one where
// it is silent, and that every test names an alert of the rules.
func coverage(u *unitTests, alerts []string) error {
	fires, silent := map[string]bool{}, map[string]bool{}
	var errs []error
	for _, tg := range u.Tests {
		for _, at := range tg.AlertRuleTests {
			if !slices.Contains(alerts, at.Alertname) {
				errs = append(errs, fmt.Errorf("test %q: no alert %q in the rules", tg.Name, at.Alertname))
			}
			if len(at.ExpAlerts) > 0 {
				fires[at.Alertname] = true
			} else {
				silent[at.Alertname] = true
			}
		}
	}
	for _, a := range alerts {
		if !fires[a] {
			errs = append(errs, fmt.Errorf("alert %s: no test where it fires", a))
		}
		if !silent[a] {
			errs = append(errs, fmt.Errorf("alert %s: no test where it stays silent", a))
		}
	}
	return errors.Join(errs...)
}

// firing is one alert as compared: its labels and annotations, printed.
type firing struct{ Labels, Annotations string }

func (f firing) String() string { return f.Labels + " " + f.Annotations }

// run runs one test group the way `promtool test rules` does: the rule
// files' groups evaluated every evalInterval from time 0 over the series
// loaded so far, the firing alerts compared at each eval_time with the
// evaluation at or just before it.
func run(tg testGroup, ruleFiles []string, evalInterval time.Duration) (errs []error) {
	interval := time.Duration(tg.Interval)
	if interval == 0 {
		interval = evalInterval
	}
	var load strings.Builder
	fmt.Fprintf(&load, "load %s\n", interval)
	for _, s := range tg.InputSeries {
		fmt.Fprintf(&load, "  %s %s\n", s.Series, s.Values)
	}
	suite, err := promqltest.NewLazyLoader(load.String(), promqltest.LazyLoaderOpts{
		EnableAtModifier: true, EnableNegativeOffset: true, Parser: promqlParser})
	if err != nil {
		return []error{err}
	}
	defer func() {
		if err := suite.Close(); err != nil {
			errs = append(errs, err)
		}
	}()
	suite.SubqueryInterval = evalInterval
	m := rules.NewManager(&rules.ManagerOptions{
		QueryFunc:            rules.EngineQueryFunc(suite.QueryEngine(), suite.Storage()),
		AppendableV2:         suite.Storage(),
		Context:              context.Background(),
		NotifyFunc:           func(context.Context, string, ...*rules.Alert) {},
		Logger:               slog.New(slog.DiscardHandler),
		Parser:               promqlParser,
		NameValidationScheme: model.LegacyValidation,
	})
	groupsMap, lerrs := m.LoadGroups(evalInterval, labels.EmptyLabels(), "", nil, false, ruleFiles...)
	if lerrs != nil {
		return lerrs
	}
	var groups []*rules.Group
	for _, g := range groupsMap {
		groups = append(groups, g)
		for _, r := range g.Rules() {
			if ar, ok := r.(*rules.AlertingRule); ok {
				ar.SetRestored(true)
			}
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Name() < groups[j].Name() })

	cases := slices.Clone(tg.AlertRuleTests)
	sort.SliceStable(cases, func(i, j int) bool { return cases[i].EvalTime < cases[j].EvalTime })
	if len(cases) == 0 {
		return []error{errors.New("no alert_rule_test")}
	}
	mint := time.Unix(0, 0).UTC()
	maxt := mint.Add(time.Duration(cases[len(cases)-1].EvalTime))
	next := 0
	for ts := mint; !ts.After(maxt) && next < len(cases); ts = ts.Add(evalInterval) {
		var evalErr error
		suite.WithSamplesTill(ts, func(err error) {
			if err != nil {
				evalErr = err
				return
			}
			for _, g := range groups {
				g.Eval(suite.Context(), ts)
				for _, r := range g.Rules() {
					if r.LastError() != nil {
						evalErr = errors.Join(evalErr, fmt.Errorf("rule %s at %s: %w", r.Name(), ts.Sub(mint), r.LastError()))
					}
				}
			}
		})
		if evalErr != nil {
			return append(errs, evalErr)
		}
		for next < len(cases) && time.Duration(cases[next].EvalTime) < ts.Add(evalInterval).Sub(mint) {
			if err := compare(cases[next], groups); err != nil {
				errs = append(errs, err)
			}
			next++
		}
	}
	return errs
}

// compare checks that the alerts named c.Alertname firing now are
// c.ExpAlerts.
func compare(c alertTestCase, groups []*rules.Group) error {
	var got, want []firing
	for _, g := range groups {
		for _, r := range g.Rules() {
			ar, ok := r.(*rules.AlertingRule)
			if !ok || ar.Name() != c.Alertname {
				continue
			}
			for _, a := range ar.ActiveAlerts() {
				if a.State == rules.StateFiring {
					got = append(got, firing{a.Labels.String(), a.Annotations.String()})
				}
			}
		}
	}
	for _, e := range c.ExpAlerts {
		l := labels.FromMap(e.ExpLabels)
		b := labels.NewBuilder(l)
		b.Set(labels.AlertName, c.Alertname)
		want = append(want, firing{b.Labels().String(), labels.FromMap(e.ExpAnnotations).String()})
	}
	key := func(a, b firing) int { return strings.Compare(a.String(), b.String()) }
	slices.SortFunc(got, key)
	slices.SortFunc(want, key)
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s at %s:\n  want %v\n  got  %v", c.Alertname, c.EvalTime, want, got)
	}
	return nil
}

// check parses the rule files of the test file at path, checks that the
// tests cover every alert, and runs them; it returns the number of test
// groups and every failure.
func check(path string) (int, error) {
	u, err := loadTests(path)
	if err != nil {
		return 0, err
	}
	if len(u.RuleFiles) == 0 {
		return 0, fmt.Errorf("%s: no rule_files", path)
	}
	var alerts []string
	for _, f := range u.RuleFiles {
		a, err := parseRules(f)
		if err != nil {
			return 0, err
		}
		alerts = append(alerts, a...)
	}
	errs := []error{coverage(u, alerts)}
	for _, tg := range u.Tests {
		for _, err := range run(tg, u.RuleFiles, time.Duration(u.EvaluationInterval)) {
			errs = append(errs, fmt.Errorf("test %q: %w", tg.Name, err))
		}
	}
	return len(u.Tests), errors.Join(errs...)
}
